//! The sound rule (`trace/frames.rs`): without `trust_unannotated`, the
//! engine shares code only where every live frame is a body
//! `#[augur::staged]` rewrote, called from one; elsewhere it unrolls
//! exactly or stops with `Error::Unannotated`, naming the line to annotate.

use crate::common::Check;
use augur::{Builder, Dyn, Error};

fn sound() -> Builder {
    Builder::new().trust_unannotated(false)
}

/// The first shape: a plain loop of 18 turns around a dyn `return`,
/// unannotated. Trusted, the engine closes it into a `while` that loses the
/// `x * 2` after it; sound, it unrolls exactly.
fn early_return(x: Dyn<i32>) -> Dyn<i32> {
    for _ in 0..18 {
        if x.gt(5).is_true() {
            return x;
        }
        x.set(x + 1);
    }
    x * 2
}

fn early_return_rust(x: i32) -> i32 {
    let mut x = x;
    for _ in 0..18 {
        if x > 5 {
            return x;
        }
        x += 1;
    }
    x * 2
}

#[test]
fn an_unannotated_plain_loop_unrolls_exactly() {
    let check = Check {
        builder: sound(),
        ..Check::default()
    };
    let inputs = [(-100,), (-13,), (-12,), (0,), (6,), (100,)];
    let ex = check.run(
        "early",
        early_return,
        |a: &mut (i32,)| early_return_rust(a.0),
        &inputs,
    );
    assert_eq!(ex.stats().back_edges, 0);
    assert!(ex.stats().unshared > 0);
    // Trusted, the same program is the documented wrong code.
    let trusted = Builder::new()
        .trust_unannotated(true)
        .extract("early", early_return)
        .unwrap();
    let wrong = trusted.interpret(&[(-100i32).into()]).unwrap();
    assert_ne!(wrong, early_return_rust(-100).into());
}

fn dyn_loop(n: Dyn<i32>) -> Dyn<i32> {
    let i = Dyn::new(0);
    while i.lt(n).is_true() {
        i.set(i + 1);
    }
    i
}

#[test]
fn an_unannotated_dyn_loop_is_an_error_naming_the_fix() {
    let err = sound().extract("loop", dyn_loop).unwrap_err();
    let Error::Unannotated { location, fix, .. } = &err else {
        panic!("{err:?}");
    };
    assert_eq!(location.file, file!());
    assert!(fix.contains("closure handed to extract"), "{fix}");
    let text = err.to_string();
    assert!(text.contains("Builder::trust_unannotated"), "{text}");
}

#[test]
#[augur::staged]
fn an_annotated_dyn_loop_closes() {
    let ex = sound()
        .extract("loop", |n: Dyn<i32>| {
            let i = Dyn::new(0);
            while i.lt(n).is_true() {
                i.set(i + 1);
            }
            i
        })
        .unwrap();
    assert_eq!(ex.stats().back_edges, 1);
    assert_eq!(ex.stats().unshared, 0);
    assert_eq!(ex.interpret(&[7.into()]).unwrap(), 7.into());
}

/// Called from covered code, but not covered itself: its plain state is
/// out of view, so its loop does not close, and the error names its line.
fn uncovered_helper(n: Dyn<i32>) -> Dyn<i32> {
    let i = Dyn::new(0);
    while i.lt(n).is_true() {
        i.set(i + 2);
    }
    i
}

#[test]
#[augur::staged]
fn a_loop_in_an_unannotated_helper_is_an_error_naming_its_line() {
    let err = sound()
        .extract("helper", |n: Dyn<i32>| uncovered_helper(n) + 1)
        .unwrap_err();
    let Error::Unannotated { at, fix, .. } = &err else {
        panic!("{err:?}");
    };
    assert_eq!(at.file, file!());
    assert!(fix.contains(&format!("{}:{}", at.file, at.line)), "{fix}");
    assert!(fix.contains("does not cover"), "{fix}");
}

/// Covered, but called from a frame that is not: the plain loop in
/// `uncovered_driver` keeps state the engine cannot see, even though every
/// operation is in covered code. `#[inline(always)]` puts the driver into
/// its caller's machine frame; the rule reads caller lines, not frames.
#[augur::staged]
fn covered_step(x: Dyn<i32>) {
    if x.gt(5).is_true() {
        x.set(x - 1);
    } else {
        x.set(x + 2);
    }
}

#[inline(always)]
fn uncovered_driver(x: Dyn<i32>) {
    for _ in 0..40 {
        covered_step(x);
    }
}

#[test]
#[augur::staged]
fn a_covered_function_called_from_uncovered_code_is_not_covered() {
    let caller_line = line!() + 4;
    let err = sound()
        .extract("driver", |x: Dyn<i32>| {
            let y = Dyn::new(x);
            uncovered_driver(y);
            y
        })
        .unwrap_err();
    let Error::Unannotated { fix, .. } = &err else {
        panic!("{err:?}");
    };
    // The call inside `uncovered_driver`, not the covered line above.
    assert!(!fix.contains(&format!(":{caller_line}:")), "{fix}");
    assert!(fix.contains("is called from"), "{fix}");
    // Annotated, the same driver extracts exactly.
    #[augur::staged]
    fn covered_driver(x: Dyn<i32>) {
        for _ in 0..40 {
            covered_step(x);
        }
    }
    let ex = sound()
        .extract("driver", |x: Dyn<i32>| {
            let y = Dyn::new(x);
            covered_driver(y);
            y
        })
        .unwrap();
    let rust = |mut x: i32| {
        for _ in 0..40 {
            x = if x > 5 { x - 1 } else { x + 2 };
        }
        x
    };
    for x in [-50, 0, 5, 6, 90] {
        assert_eq!(
            ex.interpret(&[x.into()]).unwrap(),
            rust(x).into(),
            "x = {x}"
        );
    }
}

/// `#[track_caller]` functions keep their statements (their callers' lines
/// are what their author wants reported): one calling another is covered.
struct Counter {
    n: Dyn<i32>,
}

#[augur::staged]
impl Counter {
    #[track_caller]
    fn inner(&self, k: i32) -> Dyn<i32> {
        self.n + k
    }

    #[track_caller]
    fn outer(&self, k: i32) -> Dyn<i32> {
        let i = Dyn::new(0);
        while i.lt(self.n).is_true() {
            i.set(self.inner(k) + i);
        }
        i
    }
}

#[test]
#[augur::staged]
fn track_caller_functions_calling_each_other_are_covered() {
    let ex = sound()
        .extract("tc", |n: Dyn<i32>| {
            let c = Counter { n };
            c.outer(1)
        })
        .unwrap();
    assert_eq!(ex.stats().back_edges, 1);
}

/// An annotated function handed on as a `fn` pointer: `#[track_caller]`
/// through a pointer reports the function's own definition as its caller,
/// which the engine takes as "caller unknown", as for a closure.
#[augur::staged]
fn counted_loop(n: Dyn<i32>) -> Dyn<i32> {
    let i = Dyn::new(0);
    while i.lt(n).is_true() {
        i.set(i + 1);
    }
    i
}

#[test]
#[augur::staged]
fn an_annotated_function_called_through_a_pointer_is_covered() {
    let f: fn(Dyn<i32>) -> Dyn<i32> = counted_loop;
    let ex = sound().extract("ptr", move |n: Dyn<i32>| f(n) + 1).unwrap();
    assert_eq!(ex.stats().back_edges, 1);
    let ex = sound().extract("direct", counted_loop).unwrap();
    assert_eq!(ex.stats().back_edges, 1);
}

/// Checks `ex` against `rust` on `inputs`.
fn exact<S: Copy>(ex: &augur::Extracted<S>, rust: impl Fn(i32) -> i32, inputs: &[i32]) {
    for &x in inputs {
        assert_eq!(
            ex.interpret(&[x.into()]).unwrap(),
            rust(x).into(),
            "x = {x}"
        );
    }
}

const INPUTS: [i32; 6] = [-100, -13, -12, 0, 6, 100];

/// The first shape through a closure an adapter calls: 18 calls
/// that perform the same operations, and a dyn exit. Uncounted, the calls
/// look like the turns of a dyn loop, which closes and loses the bound.
#[test]
#[augur::staged]
fn a_named_closure_handed_to_an_adapter_is_counted() {
    let ex = sound()
        .extract("named", |x: Dyn<i32>| {
            let step = |_: i32| {
                if x.gt(5).is_true() {
                    return true;
                }
                x.set(x + 1);
                false
            };
            if (0..18).any(step) {
                x + 0
            } else {
                x * 2
            }
        })
        .unwrap();
    exact(&ex, early_return_rust, &INPUTS);
}

/// `true` if `f` does within `n` calls, from a loop the attribute does not
/// cover (kept a loop: an unrolled one calls from a distinct line each turn).
#[inline(never)]
fn any_of_n(n: u32, f: &mut dyn FnMut() -> bool) -> bool {
    for _ in 0..std::hint::black_box(n) {
        if f() {
            return true;
        }
    }
    false
}

#[test]
#[augur::staged]
fn a_closure_an_unannotated_helper_calls_repeatedly_is_counted() {
    let ex = sound()
        .extract("helper", |x: Dyn<i32>| {
            let hit = any_of_n(18, &mut || {
                if x.gt(5).is_true() {
                    return true;
                }
                x.set(x + 1);
                false
            });
            if hit {
                x + 0
            } else {
                x * 2
            }
        })
        .unwrap();
    exact(&ex, early_return_rust, &INPUTS);
}

/// The adapter decides on what the closure returns: the count of the
/// `true`s decides the code after it. The adapter's count is out of view,
/// so each call's tags carry what the calls before it decided: code grows
/// with the paths (2^8 here), not with the counts.
#[test]
#[augur::staged]
fn an_adapter_that_decides_on_what_the_closure_returns_is_exact() {
    let ex = sound()
        .extract("count", |x: Dyn<i32>| {
            let n = (0..8)
                .filter(|_| {
                    let big = x.gt(5).is_true();
                    x.set(x + 1);
                    big
                })
                .count() as i32;
            x * n
        })
        .unwrap();
    let rust = |x: i32| {
        let mut x = x;
        let mut n = 0;
        for _ in 0..8 {
            n += i32::from(x > 5);
            x += 1;
        }
        x * n
    };
    exact(&ex, rust, &[-100, 0, 1, 2, 3, 4, 5, 6, 100]);
}

/// Expands to a plain `for` the attribute cannot see.
macro_rules! eighteen_times {
    ($body:block) => {
        for _ in 0..18 $body
    };
}

/// A macro's expansion is not rewritten: its own code is not covered, so
/// the plain loop in it unrolls (exact) instead of closing into a `while`.
#[test]
#[augur::staged]
fn a_macro_expanding_to_a_plain_loop_is_exact() {
    let ex = sound()
        .extract("macro", |x: Dyn<i32>| {
            eighteen_times!({
                if x.gt(5).is_true() {
                    return x + 0;
                }
                x.set(x + 1);
            });
            x * 2
        })
        .unwrap();
    exact(&ex, early_return_rust, &INPUTS);
    assert!(ex.stats().unshared > 0);
}

/// A closure that evidently returns `()` hands its caller nothing to decide
/// on: its calls are counted, but what they decided is not in the tags of
/// the next, so 20 calls with a dyn `if` each join after every call.
#[test]
#[augur::staged]
fn a_for_each_with_a_dyn_if_stays_linear() {
    let ex = sound()
        .extract("for_each", |x: Dyn<i32>| {
            let acc = Dyn::new(0);
            (0..20).for_each(|k| {
                if x.gt(k).is_true() {
                    acc.set(acc + k);
                }
            });
            acc + 0
        })
        .unwrap();
    exact(&ex, |x| (0..20).filter(|&k| x > k).sum(), &INPUTS);
    assert!(ex.stats().runs < 200, "{} runs", ex.stats().runs);
}

/// A plain helper with a value chosen by its argument: what it returns
/// comes out of the caller's decision.
#[augur::staged]
fn pick(b: bool) -> i32 {
    if b {
        1
    } else {
        2
    }
}

/// A non-`Hash` value chosen the same way.
#[augur::staged]
fn weight(b: bool) -> f64 {
    if b {
        1.0
    } else {
        2.0
    }
}

/// Every combination of three signs.
fn signs() -> Vec<(i32, i32, i32)> {
    let mut v = Vec::new();
    for a in [-1, 1] {
        for b in [-1, 1] {
            for c in [-1, 1] {
                v.push((a, b, c));
            }
        }
    }
    v
}

/// `c + 100` where `a > 0`, `b <= 0` and `c > 0`; else `c`.
fn one_combination(x: &mut (i32, i32, i32)) -> i32 {
    if x.0 > 0 && x.1 <= 0 && x.2 > 0 {
        x.2 + 100
    } else {
        x.2
    }
}

/// Immutable locals whose values come out of decisions through a call:
/// nothing after them tells the paths apart but the locals, read together
/// only on a later side. They are tracked (a decision was taken in their
/// initialisers); before, both joins were shared and the code lost `a`'s
/// decision (C gave 101 for (-1, -1, 1), where Rust gives 1).
#[augur::staged]
fn decided_through_calls(a: Dyn<i32>, b: Dyn<i32>, c: Dyn<i32>) -> Dyn<i32> {
    let k = pick(a.gt(0).is_true());
    let m = pick(b.gt(0).is_true());
    let r = Dyn::new(c);
    if c.gt(0).is_true() && k * 10 + m == 12 {
        r.set(r + 100);
    }
    r
}

#[test]
fn immutable_locals_bound_from_decisions_through_calls_are_exact() {
    let inputs = signs();
    Check::default().run("calls", decided_through_calls, one_combination, &inputs);
}

/// The same with a bool bound from `is_true()`, a tuple pattern and a
/// non-`Hash` value (stood for by the decisions its initialiser took).
#[augur::staged]
fn decided_in_other_bindings(a: Dyn<i32>, b: Dyn<i32>, c: Dyn<i32>) -> Dyn<i32> {
    let x = a.gt(0).is_true();
    let (w, _) = (weight(b.gt(0).is_true()), 0);
    let r = Dyn::new(c);
    if c.gt(0).is_true() && x && w > 1.5 {
        r.set(r + 100);
    }
    r
}

#[test]
fn bools_tuples_and_non_hash_values_bound_from_decisions_are_exact() {
    let inputs = signs();
    Check::default().run(
        "bindings",
        decided_in_other_bindings,
        one_combination,
        &inputs,
    );
}

/// Values taken out of tracked locals that are then reset: after the
/// reset the locals no longer tell the paths apart, the values still do.
#[augur::staged]
fn taken_then_reset(a: Dyn<i32>, b: Dyn<i32>, c: Dyn<i32>) -> Dyn<i32> {
    let mut o: Option<i32> = None;
    let mut s = 0;
    if a.gt(0).is_true() {
        o = Some(1);
    }
    if b.gt(0).is_true() {
        s += 10;
    }
    let p = o.take();
    let k = s * 2;
    s = 0;
    let r = Dyn::new(c + s);
    if c.gt(0).is_true() && p.is_some() && k == 0 {
        r.set(r + 100);
    }
    r
}

#[test]
fn values_derived_from_locals_that_are_reset_are_exact() {
    let inputs = signs();
    Check::default().run("taken", taken_then_reset, one_combination, &inputs);
}

/// A helper that decides inside and returns the value it chose.
#[augur::staged]
fn choose_inside(x: Dyn<i32>) -> i32 {
    if x.gt(0).is_true() {
        1
    } else {
        2
    }
}

/// The value comes out of the callee's decision; the `let` is tracked by
/// the value's hash where its type is evident (here: annotated).
#[augur::staged]
fn decided_inside_calls(a: Dyn<i32>, b: Dyn<i32>, c: Dyn<i32>) -> Dyn<i32> {
    let k: i32 = choose_inside(a);
    let m: i32 = choose_inside(b);
    let r = Dyn::new(c);
    if c.gt(0).is_true() && k * 10 + m == 12 {
        r.set(r + 100);
    }
    r
}

#[test]
fn values_a_callee_decided_bound_with_their_type_are_exact() {
    let inputs = signs();
    Check::default().run("inside", decided_inside_calls, one_combination, &inputs);
}

/// The same without the annotation: the type is not evident at the `let`,
/// and the callee, which decided, hands the value it returns to it.
#[augur::staged]
fn decided_inside_calls_inferred(a: Dyn<i32>, b: Dyn<i32>, c: Dyn<i32>) -> Dyn<i32> {
    let k = choose_inside(a);
    let m = choose_inside(b);
    let r = Dyn::new(c);
    if c.gt(0).is_true() && k * 10 + m == 12 {
        r.set(r + 100);
    }
    r
}

#[test]
fn values_a_callee_decided_bound_without_their_type_are_exact() {
    let inputs = signs();
    Check::default().run(
        "inferred",
        decided_inside_calls_inferred,
        one_combination,
        &inputs,
    );
}

/// `combine(k, m, c)`: `c + 100` where `c > 0` and `k * 10 + m == 12`.
#[augur::staged]
fn combine(k: i32, m: i32, c: Dyn<i32>) -> Dyn<i32> {
    let r = Dyn::new(c);
    if c.gt(0).is_true() && k * 10 + m == 12 {
        r.set(r + 100);
    }
    r
}

/// Values out of decisions handed straight to a function: held while it
/// runs (before, `combine`'s join was shared and C gave 101 for
/// (-1, -1, 1), where Rust gives 1).
#[augur::staged]
fn decided_as_arguments(a: Dyn<i32>, b: Dyn<i32>, c: Dyn<i32>) -> Dyn<i32> {
    combine(pick(a.gt(0).is_true()), pick(b.gt(0).is_true()), c)
}

/// A value out of a decision, as a method's receiver.
#[derive(Clone, Copy)]
struct K(i32);

#[augur::staged]
impl K {
    fn with(self, m: K, c: Dyn<i32>) -> Dyn<i32> {
        combine(self.0, m.0, c)
    }
}

#[augur::staged]
fn kk(b: bool) -> K {
    K(pick(b))
}

#[augur::staged]
fn decided_receiver(a: Dyn<i32>, b: Dyn<i32>, c: Dyn<i32>) -> Dyn<i32> {
    kk(a.gt(0).is_true()).with(kk(b.gt(0).is_true()), c)
}

#[test]
fn values_out_of_decisions_handed_to_calls_are_exact() {
    let inputs = signs();
    Check::default().run("args", decided_as_arguments, one_combination, &inputs);
    Check::default().run("receiver", decided_receiver, one_combination, &inputs);
}

/// Values out of decisions bound by a `match` arm, an `if let`, a `while
/// let` and a `for` pattern: held while the construct runs.
#[augur::staged]
#[allow(clippy::match_single_binding)] // the arm's binding is the point
fn decided_in_arms(a: Dyn<i32>, b: Dyn<i32>, c: Dyn<i32>) -> Dyn<i32> {
    match pick(a.gt(0).is_true()) {
        k => {
            if let Some(m) = Some(pick(b.gt(0).is_true())) {
                combine(k, m, c)
            } else {
                Dyn::new(c)
            }
        }
    }
}

#[augur::staged]
fn decided_in_loops(a: Dyn<i32>, b: Dyn<i32>, c: Dyn<i32>) -> Dyn<i32> {
    let r = Dyn::new(c);
    for k in [pick(a.gt(0).is_true())] {
        let mut once = Some(());
        while let Some(m) = once.take().map(|_| pick(b.gt(0).is_true())) {
            r.set(combine(k, m, c));
        }
    }
    r
}

#[test]
fn values_out_of_decisions_matched_are_exact() {
    let inputs = signs();
    Check::default().run("arms", decided_in_arms, one_combination, &inputs);
    Check::default().run("loops", decided_in_loops, one_combination, &inputs);
}

/// A pair chosen by a decision inside the function that returns it.
#[derive(Clone, Copy)]
struct Picked {
    k: i32,
}

#[augur::staged]
fn picked(b: bool) -> Picked {
    Picked { k: pick(b) }
}

/// A field of a call's value matched: the call's value is held while the
/// `match` runs (before, `combine`'s join was shared and C gave 101 for
/// (-1, -1, 1), where Rust gives 1).
#[augur::staged]
#[allow(clippy::match_single_binding)] // the arm's binding is the point
fn decided_field_in_arms(a: Dyn<i32>, b: Dyn<i32>, c: Dyn<i32>) -> Dyn<i32> {
    match picked(a.gt(0).is_true()).k {
        k => match (picked(b.gt(0).is_true())).k {
            m => combine(k, m, c),
        },
    }
}

#[test]
fn fields_of_values_out_of_decisions_matched_are_exact() {
    let inputs = signs();
    Check::default().run(
        "field_arms",
        decided_field_in_arms,
        one_combination,
        &inputs,
    );
}

/// Not `Hash`.
struct W(f64);

#[augur::staged]
fn choose_w(x: Dyn<i32>) -> W {
    if x.gt(0).is_true() {
        W(1.0)
    } else {
        W(2.0)
    }
}

/// Values of a type the attribute cannot hash, chosen inside a callee and
/// bound without a type, or bound to an `if`: stood for by the sides the
/// callee's (the `let`'s) code took.
#[augur::staged]
fn decided_non_hash(a: Dyn<i32>, b: Dyn<i32>, c: Dyn<i32>) -> Dyn<i32> {
    let k = choose_w(a);
    let m = if b.gt(0).is_true() { W(1.0) } else { W(2.0) };
    combine(k.0 as i32, m.0 as i32, c)
}

#[test]
fn non_hash_values_chosen_by_decisions_are_exact() {
    let inputs = signs();
    Check::default().run("non_hash", decided_non_hash, one_combination, &inputs);
}

/// A value of a type the attribute cannot hash, chosen by the decisions
/// of a closure the function that returns it called.
#[augur::staged]
fn counted_w(a: Dyn<i32>, b: Dyn<i32>) -> W {
    let mut n = 0;
    [a, b].iter().for_each(|v| {
        if v.gt(0).is_true() {
            n += 1;
        }
    });
    W(f64::from(n))
}

/// The same with the closure the caller's, handed to the function.
#[augur::staged]
fn counted_with(xs: [Dyn<i32>; 2], positive: impl Fn(Dyn<i32>) -> bool) -> W {
    let mut n = 0;
    for v in xs {
        if positive(v) {
            n += 1;
        }
    }
    W(f64::from(n))
}

/// `c + 100` where `n` is 2, `c > 0` and `d <= 0`: a difference in `n`
/// shows on one combination of the later sides only, which neither the
/// linking run nor its check run takes.
#[augur::staged]
fn on_one_side(n: i32, c: Dyn<i32>, d: Dyn<i32>) -> Dyn<i32> {
    let r = Dyn::new(c);
    if c.gt(0).is_true() {
        if d.gt(0).is_true() {
            r.set(r + 1);
        } else if n == 2 {
            r.set(r + 100);
        }
    }
    r
}

/// The sides a closure took stand for `w` (what `counted_w` returned).
#[augur::staged]
fn decided_in_a_callee_closure(a: Dyn<i32>, b: Dyn<i32>, c: Dyn<i32>, d: Dyn<i32>) -> Dyn<i32> {
    let w = counted_w(a, b);
    on_one_side(w.0 as i32, c, d)
}

#[augur::staged]
fn decided_in_a_handed_closure(a: Dyn<i32>, b: Dyn<i32>, c: Dyn<i32>, d: Dyn<i32>) -> Dyn<i32> {
    let w = counted_with([a, b], |v| v.gt(0).is_true());
    on_one_side(w.0 as i32, c, d)
}

fn on_one_side_rust(x: &mut (i32, i32, i32, i32)) -> i32 {
    let n = i32::from(x.0 > 0) + i32::from(x.1 > 0);
    match (x.2 > 0, x.3 > 0) {
        (true, true) => x.2 + 1,
        (true, false) if n == 2 => x.2 + 100,
        _ => x.2,
    }
}

#[test]
fn non_hash_values_chosen_in_a_callee_closure_are_exact() {
    let mut inputs = Vec::new();
    for (a, b, c) in signs() {
        inputs.extend([(a, b, c, -1), (a, b, c, 1)]);
    }
    let check = Check::default();
    check.run(
        "callee_closure",
        decided_in_a_callee_closure,
        on_one_side_rust,
        &inputs,
    );
    check.run(
        "handed_closure",
        decided_in_a_handed_closure,
        on_one_side_rust,
        &inputs,
    );
}

/// Plain state in a field changed through `&mut self` on one side of a
/// decision, read after the join.
#[derive(Hash)]
struct Phase {
    phase: i32,
}

#[augur::staged]
impl Phase {
    fn run(&mut self, a: Dyn<i32>, c: Dyn<i32>, d: Dyn<i32>) -> Dyn<i32> {
        if a.gt(0).is_true() {
            self.phase += 1;
        }
        self.on_one_side(c, d)
    }

    fn on_one_side(&self, c: Dyn<i32>, d: Dyn<i32>) -> Dyn<i32> {
        on_one_side(self.phase, c, d)
    }
}

#[augur::staged]
fn changed_through_mut_self(a: Dyn<i32>, c: Dyn<i32>, d: Dyn<i32>) -> Dyn<i32> {
    let mut p = Phase { phase: 1 };
    p.run(a, c, d)
}

/// The same through a `&mut` parameter.
#[augur::staged]
fn run_phase(p: &mut Phase, a: Dyn<i32>, c: Dyn<i32>, d: Dyn<i32>) -> Dyn<i32> {
    if a.gt(0).is_true() {
        p.phase += 1;
    }
    on_one_side(p.phase, c, d)
}

#[augur::staged]
fn changed_through_a_mut_reference(a: Dyn<i32>, c: Dyn<i32>, d: Dyn<i32>) -> Dyn<i32> {
    let mut p = Phase { phase: 1 };
    run_phase(&mut p, a, c, d)
}

/// The same in a `mut` parameter.
#[augur::staged]
fn run_count(mut n: i32, a: Dyn<i32>, c: Dyn<i32>, d: Dyn<i32>) -> Dyn<i32> {
    if a.gt(0).is_true() {
        n += 1;
    }
    on_one_side(n, c, d)
}

#[augur::staged]
fn changed_in_a_mut_parameter(a: Dyn<i32>, c: Dyn<i32>, d: Dyn<i32>) -> Dyn<i32> {
    run_count(1, a, c, d)
}

/// The same through a `&mut i32`, assigned through `*`, and handed on
/// with `&mut *`.
#[augur::staged]
fn run_counter(n: &mut i32, a: Dyn<i32>, c: Dyn<i32>, d: Dyn<i32>) -> Dyn<i32> {
    if a.gt(0).is_true() {
        *n += 1;
    }
    let r = on_one_side(*n, c, d);
    if a.gt(0).is_true() {
        add_one(&mut *n);
    }
    on_one_side(*n - 1, c, d) + r - r
}

fn add_one(n: &mut i32) {
    *n += 1;
}

#[augur::staged]
fn changed_through_a_deref(a: Dyn<i32>, c: Dyn<i32>, d: Dyn<i32>) -> Dyn<i32> {
    let mut n = 1;
    run_counter(&mut n, a, c, d)
}

#[test]
fn state_changed_in_place_through_parameters_is_exact() {
    let inputs: Vec<(i32, i32, i32)> = signs();
    let reference = |x: &mut (i32, i32, i32)| on_one_side_rust(&mut (x.0, 1, x.1, x.2));
    Check::default().run("mut_self", changed_through_mut_self, reference, &inputs);
    Check::default().run(
        "mut_ref",
        changed_through_a_mut_reference,
        reference,
        &inputs,
    );
    Check::default().run("mut_param", changed_in_a_mut_parameter, reference, &inputs);
    Check::default().run("deref", changed_through_a_deref, reference, &inputs);
}

/// A `let mut` of a type the attribute cannot hash, changed on the sides
/// of decisions: no code is shared after the change while it lives.
#[augur::staged]
fn changed_non_hash(a: Dyn<i32>, b: Dyn<i32>, c: Dyn<i32>) -> Dyn<i32> {
    let mut w = W(0.0);
    if a.gt(0).is_true() {
        w.0 += 10.0;
    }
    if b.gt(0).is_true() {
        w.0 += 1.0;
    }
    let r = Dyn::new(c);
    if c.gt(0).is_true() && w.0 == 10.0 {
        r.set(r + 100);
    }
    r
}

/// The same changed in every turn of a dyn loop: the loop cannot close,
/// and the error names the `let` and the fixes.
const LOOPED_W: u32 = line!() + 4;
#[augur::staged]
fn changed_non_hash_in_a_loop(n: Dyn<i32>) -> Dyn<i32> {
    let i = Dyn::new(0);
    let mut w = W(0.0);
    while i.lt(n).is_true() {
        w.0 += 1.0;
        i.set(i + 1);
    }
    i + w.0 as i32
}

#[test]
fn a_changed_let_mut_the_attribute_cannot_hash_is_exact_or_a_clear_error() {
    let inputs = signs();
    Check::default().run("changed", changed_non_hash, one_combination, &inputs);
    let line = LOOPED_W;
    let err = sound()
        .extract("looped", changed_non_hash_in_a_loop)
        .unwrap_err();
    let Error::Unannotated { fix, .. } = &err else {
        panic!("{err:?}");
    };
    assert!(fix.contains(&format!("{}:{line}:", file!())), "{fix}");
    assert!(
        fix.contains("derive `Hash`") && fix.contains("dsl::Visible"),
        "{fix}"
    );
}

/// A copy of a `Static` that is then reset.
#[augur::staged]
fn copied_from_static(a: Dyn<i32>, b: Dyn<i32>, c: Dyn<i32>) -> Dyn<i32> {
    let mut st = augur::Static::new(0);
    if a.gt(0).is_true() {
        st.set(1);
    }
    let k = st.get();
    st.set(0);
    if b.gt(0).is_true() {
        st.set(5);
    }
    let m = st.get() + 2;
    st.set(0);
    combine(k, m, c)
}

#[test]
fn copies_of_a_static_that_changes_later_are_exact() {
    let inputs = signs();
    Check::default().run("static_copy", copied_from_static, one_combination, &inputs);
}

/// A value of a type the attribute cannot hash (`let` sees it by the sides
/// its function's own code took).
#[derive(Clone, Copy)]
struct Scale(i32);

#[augur::staged]
fn boom() {
    panic!("caught inside the first stage")
}

/// Plain code that catches a staged function's panic: `boom`'s body ends
/// without `Frame::finish`, so its activation stays on the engine's stack
/// until `scale_after_panic`'s ends.
fn survive_boom() -> bool {
    std::panic::catch_unwind(boom).is_ok()
}

#[augur::staged]
fn scale_after_panic(x: Dyn<i32>) -> Scale {
    let _ = survive_boom();
    if x.gt(0).is_true() {
        Scale(1)
    } else {
        Scale(2)
    }
}

#[augur::staged]
fn decided_after_a_caught_panic(a: Dyn<i32>, b: Dyn<i32>, c: Dyn<i32>) -> Dyn<i32> {
    let k = scale_after_panic(a);
    let m = scale_after_panic(b);
    combine(k.0, m.0, c)
}

/// A panic caught inside the first stage leaves the activations it ended
/// unknown to the engine, whose decisions would then be told at the wrong
/// depth (`k` and `m` stood for alike on both sides): the engine shares no
/// code for the rest of such a run (`Hidden::Panicked`), so the code is
/// exact.
#[test]
fn a_panic_caught_inside_the_first_stage_shares_no_code_after_it() {
    let check = Check {
        builder: Builder::new().link_audit_ops(0),
        ..Check::default()
    };
    let inputs = signs();
    check.run(
        "caught",
        decided_after_a_caught_panic,
        one_combination,
        &inputs,
    );
}

/// Plain state threaded through a function that decides: a slot filled
/// before the loop, emptied on one side of a dyn branch in the callee.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
struct SlotState {
    slot: Option<i32>,
    map: std::collections::BTreeMap<i32, i32>,
}

#[augur::staged]
fn slot_step(a: Dyn<i32>, st: SlotState) -> SlotState {
    let mut st = st;
    if a.eq(0).is_true() {
        st.map.insert(0, 0);
    } else {
        st.slot.take();
    }
    st
}

#[augur::staged]
fn slot_through_a_call(a: Dyn<i32>) -> Dyn<i32> {
    let mut st = SlotState::default();
    st.slot.replace(0);
    let c = Dyn::new(0);
    while c.lt(1).is_true() {
        c.set(c + 1);
        st = slot_step(a, st);
    }
    let r = Dyn::new(a);
    if st.slot.is_some() {
        r.set(r + 10);
    }
    r
}

/// The fuzzer's seed 9079527, written as plain staged Rust: the state
/// repeats after one turn on either side. With FxHash for values, the
/// state after the slot was emptied (`None` with `{0: 0}`) hashed as the
/// one before the loop (`Some(0)` with `{}`), the loop's check found other
/// operations at a head whose tag repeated, and extraction stopped with
/// `LoopNeverCloses`.
#[test]
fn a_slot_emptied_in_a_called_function_in_a_dyn_loop_closes() {
    let inputs = [(-1,), (0,), (1,), (2,), (5,)];
    let reference = |x: &mut (i32,)| x.0 + 10 * i32::from(x.0 == 0);
    Check::default().run("slot", slot_through_a_call, reference, &inputs);
}
