//! Random parallel loops against a Rust model: reductions of every kind and
//! several types, branches on the data, dyn loops inside the body, stores
//! at the iteration's own index, and parallel loops nested in the body.
//!
//! `Reducer::custom` (the last nonzero value, which does not commute) runs
//! chunked, its chunks combined in order.
//!
//! Every case runs in the interpreter (which checks races and that no
//! value of the body is shared) and under the JIT (on threads); compiled C
//! (OpenMP) one case in three. Float reductions add small integers, so
//! their sums are exact in any order.
//!
//! `AUGUR_PAR_CASES` (default 60, 25 in debug builds) and `AUGUR_PAR_SEED`
//! run more.

use crate::fuzz_env;
use augur::exec::{Backend, CompileOptions, Interpreter};
use augur::{parallel, Builder, Dyn, Reducer};
use augur_rng::Rng;

/// The reductions a program may take, each over its own type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Red {
    SumI64,
    ProductI32,
    MinI64,
    MaxI64,
    XorU32,
    OrU32,
    SumF64,
    MaxF64,
    Any,
    All,
    /// `Reducer::custom`: the last nonzero value (not commutative).
    LastI64,
}

const REDS: [Red; 11] = [
    Red::SumI64,
    Red::ProductI32,
    Red::MinI64,
    Red::MaxI64,
    Red::XorU32,
    Red::OrU32,
    Red::SumF64,
    Red::MaxF64,
    Red::Any,
    Red::All,
    Red::LastI64,
];

#[derive(Clone, Debug, Hash)]
enum Step {
    /// Adds `v * a + b` (or `v % a == b` for `bool`s) to reduction `r`.
    Add(usize, i64, i64),
    /// `if (v % m == k) { .. } else { .. }`.
    If(i64, i64, Vec<Step>, Vec<Step>),
    /// `y[i] = v * a` (the outer index: each iteration its own slot).
    Store(i64),
    /// `t = v; while (t > k) t -= k; v = t` for the steps after it.
    Wrap(i64, Vec<Step>),
    /// A parallel loop over `j` in `0..n` with `v = v + j * 3`; every
    /// reduction listed on it too.
    Inner(i64, Vec<Step>),
}

#[derive(Clone, Debug, Hash)]
struct Program {
    reds: Vec<Red>,
    body: Vec<Step>,
    n: i64,
}

fn steps(rng: &mut Rng, reds: usize, depth: u32, nested: bool) -> Vec<Step> {
    let len = 1 + rng.below(3);
    (0..len)
        .map(|_| match rng.below(if depth == 0 { 2 } else { 6 }) {
            0 | 1 => Step::Add(
                rng.below(reds as u64) as usize,
                1 + rng.below(5) as i64,
                rng.below(7) as i64,
            ),
            2 => {
                let m = 2 + rng.below(4) as i64;
                let k = rng.below(m as u64) as i64;
                let then_ = steps(rng, reds, depth - 1, nested);
                let else_ = if rng.chance(50) {
                    steps(rng, reds, depth - 1, nested)
                } else {
                    Vec::new()
                };
                Step::If(m, k, then_, else_)
            }
            3 if !nested => Step::Store(1 + rng.below(4) as i64),
            4 => Step::Wrap(
                50 + rng.below(200) as i64,
                steps(rng, reds, depth - 1, nested),
            ),
            5 if !nested => Step::Inner(1 + rng.below(5) as i64, steps(rng, reds, depth - 1, true)),
            _ => Step::Add(rng.below(reds as u64) as usize, 1, 0),
        })
        .collect()
}

fn program(rng: &mut Rng) -> Program {
    let reds: Vec<Red> = (0..1 + rng.below(4)).map(|_| rng.pick(&REDS)).collect();
    let body = steps(rng, reds.len(), 3, false);
    Program {
        reds,
        body,
        n: rng.below(300) as i64,
    }
}

/// Each reduction's start (an `i64`: floats are integers here, `bool`s 0
/// or 1).
fn start(r: Red) -> i64 {
    match r {
        Red::SumI64 | Red::SumF64 => 3,
        Red::ProductI32 => 1,
        Red::MinI64 => 1 << 40,
        Red::MaxI64 | Red::MaxF64 => -(1 << 40),
        Red::XorU32 | Red::OrU32 => 5,
        Red::Any => 0,
        Red::All => 1,
        Red::LastI64 => -1,
    }
}

fn model_add(r: Red, acc: &mut i64, v: i64, a: i64, b: i64) {
    let x = v * a + b;
    *acc = match r {
        Red::SumI64 | Red::SumF64 => *acc + x,
        Red::ProductI32 => (*acc as i32).wrapping_mul((x % 3 + 1) as i32) as i64,
        Red::MinI64 => (*acc).min(x),
        Red::MaxI64 | Red::MaxF64 => (*acc).max(x),
        Red::XorU32 => (*acc as u32 ^ x as u32) as i64,
        Red::OrU32 => (*acc as u32 | (x as u32 & 0xff)) as i64,
        Red::Any => (*acc != 0 || v % a == b % a) as i64,
        Red::All => (*acc != 0 && v % a != b % a) as i64,
        Red::LastI64 if x % 7 != 0 => x % 7,
        Red::LastI64 => *acc,
    };
}

fn model_steps(p: &Program, s: &[Step], v: i64, i: usize, acc: &mut [i64], y: &mut [i64]) {
    let mut v = v;
    for step in s {
        match step {
            Step::Add(r, a, b) => model_add(p.reds[*r], &mut acc[*r], v, *a, *b),
            Step::If(m, k, t, e) => {
                let branch = if v % m == *k { t } else { e };
                model_steps(p, branch, v, i, acc, y);
            }
            Step::Store(a) => y[i] = v * a,
            Step::Wrap(k, rest) => {
                let mut t = v;
                while t > *k {
                    t -= k;
                }
                v = t;
                model_steps(p, rest, v, i, acc, y);
            }
            Step::Inner(n, body) => {
                for j in 0..*n {
                    model_steps(p, body, v + j * 3, i, acc, y);
                }
            }
        }
    }
}

fn model(p: &Program, x: &[i64]) -> (Vec<i64>, Vec<i64>) {
    let mut acc: Vec<i64> = p.reds.iter().map(|&r| start(r)).collect();
    let mut y = vec![0i64; x.len()];
    for (i, &v) in x.iter().enumerate() {
        model_steps(p, &p.body, v, i, &mut acc, &mut y);
    }
    (acc, y)
}

/// One reducer of each kind the program takes.
#[derive(Clone, Copy, Hash)]
enum R {
    I64(Reducer<i64>),
    I32(Reducer<i32>),
    U32(Reducer<u32>),
    F64(Reducer<f64>),
    Bool(Reducer<bool>),
}

fn make(r: Red) -> R {
    let s = start(r);
    match r {
        Red::SumI64 => R::I64(Reducer::sum(s)),
        Red::MinI64 => R::I64(Reducer::min(s)),
        Red::MaxI64 => R::I64(Reducer::max(s)),
        Red::ProductI32 => R::I32(Reducer::product(s as i32)),
        Red::XorU32 => R::U32(Reducer::bit_xor(s as u32)),
        Red::OrU32 => R::U32(Reducer::bit_or(s as u32)),
        Red::SumF64 => R::F64(Reducer::sum(s as f64)),
        Red::MaxF64 => R::F64(Reducer::max(s as f64)),
        Red::Any => R::Bool(Reducer::any(s != 0)),
        Red::All => R::Bool(Reducer::all(s != 0)),
        Red::LastI64 => R::I64(Reducer::custom(s, 0, last_nonzero)),
    }
}

fn listed(mut par: augur::Parallel, rs: &[R]) -> augur::Parallel {
    for r in rs {
        par = match r {
            R::I64(r) => par.reduce(r),
            R::I32(r) => par.reduce(r),
            R::U32(r) => par.reduce(r),
            R::F64(r) => par.reduce(r),
            R::Bool(r) => par.reduce(r),
        };
    }
    par
}

fn last_nonzero(a: Dyn<i64>, b: Dyn<i64>) -> Dyn<i64> {
    Dyn::select(b.ne(0i64), b, a)
}

#[augur::staged]
fn stage_add(red: Red, r: R, v: Dyn<i64>, a: i64, b: i64) {
    let x = v * a + b;
    match r {
        R::I64(r) if red == Red::LastI64 => r.add(x % 7),
        R::I64(r) => r.add(x),
        R::I32(r) => r.add((x % 3 + 1).cast::<i32>()),
        R::U32(r) if red == Red::OrU32 => r.add(x.cast::<u32>() & 0xffu32),
        R::U32(r) => r.add(x.cast::<u32>()),
        R::F64(r) => r.add(x.cast::<f64>()),
        R::Bool(r) if red == Red::Any => r.add((v % a).eq(b % a)),
        R::Bool(r) => r.add((v % a).ne(b % a)),
    }
}

#[augur::staged]
fn stage_steps(p: &Program, s: &[Step], v: Dyn<i64>, i: Dyn<i64>, rs: &[R], y: Dyn<*mut i64>) {
    let mut v = v;
    for step in s {
        match step {
            Step::Add(r, a, b) => stage_add(p.reds[*r], rs[*r], v, *a, *b),
            Step::If(m, k, t, e) => {
                if (v % *m).eq(*k).is_true() {
                    stage_steps(p, t, v, i, rs, y);
                } else {
                    stage_steps(p, e, v, i, rs, y);
                }
            }
            Step::Store(a) => y.at(i).set(v * *a),
            Step::Wrap(k, rest) => {
                let t = Dyn::new(v);
                while t.gt(*k).is_true() {
                    t.set(t - *k);
                }
                v = t + 0;
                stage_steps(p, rest, v, i, rs, y);
            }
            Step::Inner(n, body) => {
                listed(parallel(0, *n), rs).run(|j| {
                    stage_steps(p, body, v + j * 3, i, rs, y);
                });
            }
        }
    }
}

#[augur::staged]
fn stage(p: &Program) -> augur::Extracted<unsafe extern "C" fn(*mut i64, i64, *mut i64, *mut i64)> {
    let q = p.clone();
    Builder::new()
        .extract(
            "par",
            move |x: Dyn<*mut i64>, n: Dyn<i64>, y: Dyn<*mut i64>, out: Dyn<*mut i64>| {
                let rs: Vec<R> = q.reds.iter().map(|&r| make(r)).collect();
                listed(parallel(0, n), &rs).run(|i| {
                    stage_steps(&q, &q.body, x.at(i), i, &rs, y);
                });
                for (k, r) in rs.iter().enumerate() {
                    let v = match r {
                        R::I64(r) => r.value(),
                        R::I32(r) => r.value().cast::<i64>(),
                        R::U32(r) => r.value().cast::<i64>(),
                        R::F64(r) => r.value().cast::<i64>(),
                        R::Bool(r) => r.value().cast::<i64>(),
                    };
                    out.at(k).set(v);
                }
            },
        )
        .unwrap_or_else(|e| panic!("extracting {p:?}: {e}"))
}

#[test]
fn random_parallel_loops_run_as_their_rust_model() {
    let count = fuzz_env::cases("AUGUR_PAR_CASES");
    let seed = fuzz_env::seed("AUGUR_PAR_SEED", 0x9a7a_11e1);
    let jit = CompileOptions::default().with_backend(Backend::Jit);
    // Random programs compute values nothing uses, which gcc warns of.
    let mut c = CompileOptions::default().with_backend(Backend::C);
    c.flags.retain(|f| f != "-Werror");
    for case in 0..count {
        let mut rng = Rng(seed.wrapping_add(case));
        let p = program(&mut rng);
        let what = format!(
            "case {case} (AUGUR_PAR_SEED={} AUGUR_PAR_CASES=1): {p:?}",
            seed + case
        );
        let x: Vec<i64> = (0..p.n).map(|_| rng.below(1000) as i64).collect();
        let (want, want_y) = model(&p, &x);
        let ex = stage(&p);
        let nred = p.reds.len();
        let mut interp = Interpreter::new();
        let m = interp.memory_mut();
        let (xp, yp, op) = (
            m.alloc_slice(&x),
            m.alloc_slice(&vec![0i64; x.len()]),
            m.alloc_slice(&vec![0i64; nred]),
        );
        ex.interpret_in(&mut interp, &[xp, p.n.into(), yp, op])
            .unwrap_or_else(|e| panic!("interpreting {what}: {e}\n{}", ex.c_code()));
        let got = interp.memory().read_slice::<i64>(op, nred).unwrap();
        let got_y = interp.memory().read_slice::<i64>(yp, x.len()).unwrap();
        assert_eq!(
            (&got, &got_y),
            (&want, &want_y),
            "interpreter, {what}\n{}",
            ex.c_code()
        );
        let mut backends = vec![("JIT", &jit)];
        if case % 3 == 0 {
            backends.push(("C", &c));
        }
        for (name, opts) in backends {
            let f = ex
                .compile_with(opts)
                .unwrap_or_else(|e| panic!("{name}, {what}: {e}\n{}", ex.c_code()));
            let (mut xs, mut y, mut out) = (x.clone(), vec![0i64; x.len()], vec![0i64; nred]);
            // SAFETY: `par` reads n of x, writes n of y and nred of out.
            unsafe { f.get()(xs.as_mut_ptr(), p.n, y.as_mut_ptr(), out.as_mut_ptr()) };
            assert_eq!(
                (&out, &y),
                (&want, &want_y),
                "{name}, {what}\n{}",
                ex.c_code()
            );
        }
    }
}

/// Found by this suite at 400 cases (`AUGUR_PAR_CASES=400`), shrunk by
/// hand: it stopped with a spurious `Error::Parallel` ("ends in different
/// first-stage states"), never wrong code. The two arms of the dyn `if`
/// call `stage_steps` with different slices, which the compiler merges into
/// one call site, so both arms' stores get one tag: the else arm links to
/// the then arm's code, the link check finds that they differ (the then arm
/// adds after its store), and the run again with no link up to there
/// refused a link at the operation that differed too, the body's end: so
/// the else arm recorded a second end, which folding refuses. That
/// operation may link now, and the arms join at the end.
#[test]
fn arms_that_differ_only_after_a_shared_store_stay_one_body() {
    use Step::*;
    let p = Program {
        reds: vec![Red::SumI64],
        body: vec![If(4, 3, vec![Store(4), Add(0, 1, 1)], vec![Store(4)])],
        n: 5,
    };
    let x: Vec<i64> = (0..p.n).map(|i| i * 37 % 100).collect();
    let (want, want_y) = model(&p, &x);
    let ex = stage(&p);
    let f = ex
        .compile_with(&CompileOptions::default().with_backend(Backend::Jit))
        .unwrap();
    let (mut xs, mut y, mut out) = (x.clone(), vec![0i64; x.len()], vec![0i64; 1]);
    // SAFETY: `par` reads n of x, writes n of y and one of out.
    unsafe { f.get()(xs.as_mut_ptr(), p.n, y.as_mut_ptr(), out.as_mut_ptr()) };
    assert_eq!((out, y), (want, want_y));
}
