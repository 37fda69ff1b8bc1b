//! `augur::resumable`: machines over first-stage keys whose points are
//! recorded once. Each shape is compared with the same loop in plain Rust
//! (C and the interpreter, through `check`); a machine of `n` points
//! extracts in work linear in `n`.

use augur::{resumable, Builder, Dyn, Extracted, Static};

fn pairs() -> Vec<(i64, i64)> {
    vec![
        (0, 0),
        (1, 5),
        (7, -3),
        (-4, 12),
        (100, 3),
        (5, 5),
        (-9, -9),
    ]
}

use crate::resumable_shapes::Native;

/// Extracts `f` twice (the same C both times), then on every input runs
/// the C, the JIT and the interpreter and compares each with `plain`
/// (`resumable_shapes::check_with`). State machines may jump anywhere, so
/// gotos are allowed.
#[track_caller]
fn check<F>(
    name: &str,
    f: F,
    plain: fn(i64, i64) -> i64,
    inputs: &[(i64, i64)],
) -> Extracted<Native>
where
    F: Fn(Dyn<i64>, Dyn<i64>) -> Dyn<i64> + Clone,
{
    crate::resumable_shapes::check_with(Builder::new(), name, f, &plain, inputs)
}

/// A tuple key; both sides of a decision rejoin inside a member; the next
/// point depends on a dyn decision.
#[augur::staged]
fn tuple_keys(x: Dyn<i64>, y: Dyn<i64>) -> Dyn<i64> {
    let acc = Dyn::named("acc", y);
    resumable((0u8, 0u8), |(s, c)| {
        if c == 6 {
            return None;
        }
        if x.gt(i64::from(s)).is_true() {
            acc.set(acc + i64::from(s));
        } else {
            acc.set(acc - 1);
        }
        acc.set(acc * 2 + x);
        if (acc % 3).eq(0).is_true() {
            Some(((s + 1) % 3, c + 1))
        } else {
            Some(((s + 2) % 3, c + 1))
        }
    });
    acc
}

fn tuple_keys_plain(x: i64, y: i64) -> i64 {
    let (mut acc, mut at) = (y, Some((0u8, 0u8)));
    while let Some((s, c)) = at {
        if c == 6 {
            break;
        }
        if x > i64::from(s) {
            acc = acc.wrapping_add(i64::from(s));
        } else {
            acc = acc.wrapping_sub(1);
        }
        acc = acc.wrapping_mul(2).wrapping_add(x);
        at = Some(if acc % 3 == 0 {
            ((s + 1) % 3, c + 1)
        } else {
            ((s + 2) % 3, c + 1)
        });
    }
    acc
}

#[test]
#[augur::staged]
fn tuple_keys_and_joins_inside_members_are_exact() {
    let ex = check(
        "tuple_keys",
        |x: Dyn<i64>, y: Dyn<i64>| tuple_keys(x, y),
        tuple_keys_plain,
        &pairs(),
    );
    // 3 states × 6 counts at most, then 3 exits' worth of one exit.
    assert!(ex.stats().points <= 3 * 7 + 1, "{}", ex.stats());
}

/// Jumps back to points recorded before make loops: state 0 tests the
/// bound, 1 and 2 are the body, with a dyn choice between them.
#[augur::staged]
fn counting(n: Dyn<i64>, m: Dyn<i64>) -> Dyn<i64> {
    let i = Dyn::named("i", 0i64);
    let sum = Dyn::named("sum", 0i64);
    resumable(0u32, |s| match s {
        0 if i.lt(n).is_true() => Some(1),
        0 => None,
        1 => {
            sum.set(sum + i);
            i.set(i + 1);
            if (i % 2).eq(0).is_true() {
                Some(2)
            } else {
                Some(0)
            }
        }
        _ => {
            sum.set(sum + m);
            Some(0)
        }
    });
    sum
}

fn counting_plain(n: i64, m: i64) -> i64 {
    let (mut i, mut sum) = (0i64, 0i64);
    while i < n {
        sum = sum.wrapping_add(i);
        i += 1;
        if i % 2 == 0 {
            sum = sum.wrapping_add(m);
        }
    }
    sum
}

#[test]
#[augur::staged]
fn jumps_to_recorded_points_are_loops() {
    let ex = check(
        "counting",
        |n: Dyn<i64>, m: Dyn<i64>| counting(n, m),
        counting_plain,
        &pairs(),
    );
    assert_eq!(ex.stats().points, 4, "{}", ex.stats());
    let code = ex.c_code();
    assert!(code.contains("while") && !code.contains("goto"), "{code}");
}

/// Two machines one after the other, left from several points each, with
/// dyn decisions after each: the second is reached through the first's
/// exit, and runs in it start there.
#[augur::staged]
fn in_sequence(x: Dyn<i64>, y: Dyn<i64>) -> Dyn<i64> {
    let a = Dyn::named("a", x);
    for round in 0..2i64 {
        resumable(0u8, |s| {
            a.set(a + i64::from(s) * (round + 1));
            if s == 4 {
                return None;
            }
            if a.gt(y).is_true() {
                return None;
            }
            Some(s + 1)
        });
        if (a % 2).eq(0).is_true() {
            a.set(a / 2);
        } else {
            a.set(a * 3 + 1);
        }
    }
    a
}

fn in_sequence_plain(x: i64, y: i64) -> i64 {
    let mut a = x;
    for round in 0..2i64 {
        let mut s = 0u8;
        loop {
            a = a.wrapping_add(i64::from(s) * (round + 1));
            if s == 4 || a > y {
                break;
            }
            s += 1;
        }
        a = if a % 2 == 0 {
            a / 2
        } else {
            a.wrapping_mul(3).wrapping_add(1)
        };
    }
    a
}

#[test]
#[augur::staged]
fn machines_in_sequence_share_the_code_after_them() {
    let ex = check(
        "in_sequence",
        |x: Dyn<i64>, y: Dyn<i64>| in_sequence(x, y),
        in_sequence_plain,
        &pairs(),
    );
    // Each machine: 5 points and one exit; the code after each exit is
    // recorded once.
    assert_eq!(ex.stats().points, 12, "{}", ex.stats());
}

/// A machine inside a dyn loop, and one inside both arms of a dyn `if`.
#[augur::staged]
fn around(n: Dyn<i64>, y: Dyn<i64>) -> Dyn<i64> {
    let k = Dyn::named("k", 0i64);
    let t = Dyn::named("t", 0i64);
    while k.lt(n).is_true() {
        resumable(1u8, |s| {
            t.set(t + i64::from(s));
            (s < 3).then_some(s + 1)
        });
        k.set(k + 1);
    }
    if y.gt(0).is_true() {
        resumable(0u8, |s| {
            t.set(t * 2);
            (t.gt(1000).is_true() || s == 2)
                .then_some(s + 1)
                .filter(|&s| s < 3)
        });
    } else {
        resumable(0u8, |s| {
            t.set(t - 3);
            (s < 1).then_some(s + 1)
        });
    }
    t
}

fn around_plain(n: i64, y: i64) -> i64 {
    let (mut k, mut t) = (0i64, 0i64);
    while k < n {
        for s in 1..=3 {
            t += s;
        }
        k += 1;
    }
    if y > 0 {
        let mut s = 0u8;
        loop {
            t = t.wrapping_mul(2);
            let go = t > 1000 || s == 2;
            match go.then_some(s + 1).filter(|&s| s < 3) {
                Some(next) => s = next,
                None => break,
            }
        }
    } else {
        for _ in 0..2 {
            t -= 3;
        }
    }
    t
}

#[test]
#[augur::staged]
fn machines_inside_dyn_loops_and_branches_are_exact() {
    let inputs: Vec<(i64, i64)> = vec![(0, 0), (1, 1), (3, -2), (40, 5), (200, 1), (2, 0)];
    check(
        "around",
        |n: Dyn<i64>, y: Dyn<i64>| around(n, y),
        around_plain,
        &inputs,
    );
}

/// A machine inside a point of another, and a machine that returns at
/// once.
#[augur::staged]
fn nested(x: Dyn<i64>, y: Dyn<i64>) -> Dyn<i64> {
    let r = Dyn::named("r", 0i64);
    resumable(0u8, |_| None);
    resumable(0u8, |outer| {
        resumable(0u8, |inner| {
            r.set(r + x * i64::from(inner + 1));
            if r.gt(y).is_true() {
                None
            } else {
                (inner < 2).then_some(inner + 1)
            }
        });
        r.set(r - i64::from(outer));
        (outer < 3).then_some(outer + 1)
    });
    r
}

fn nested_plain(x: i64, y: i64) -> i64 {
    let mut r = 0i64;
    for outer in 0..4u8 {
        for inner in 0..3u8 {
            r = r.wrapping_add(x.wrapping_mul(i64::from(inner + 1)));
            if r > y {
                break;
            }
        }
        r -= i64::from(outer);
    }
    r
}

#[test]
#[augur::staged]
fn nested_and_empty_machines_are_exact() {
    check(
        "nested",
        |x: Dyn<i64>, y: Dyn<i64>| nested(x, y),
        nested_plain,
        &pairs(),
    );
}

/// A chain of `n` states, each with a dyn decision that skips ahead: over
/// points, every run starts at the state it explores; over a `Static`,
/// each replays all states before it.
#[augur::staged]
fn chain(n: usize, points: bool, x: Dyn<i64>) -> Dyn<i64> {
    let acc = Dyn::named("acc", 0i64);
    let step = |s: usize| {
        acc.set(acc + x);
        if (acc % 7).eq(3).is_true() {
            acc.set(acc * 2);
        }
        (s + 1 < n).then_some(s + 1)
    };
    if points {
        resumable(0usize, step);
    } else {
        let mut s = Static::new(0usize);
        while let Some(next) = step(*s) {
            s.set(next);
        }
    }
    acc
}

#[test]
#[augur::staged]
fn extraction_over_points_is_linear_in_the_points() {
    let work = |n: usize, points: bool| {
        let f = Builder::new()
            .extract("chain", move |x: Dyn<i64>| chain(n, points, x))
            .unwrap_or_else(|e| panic!("chain {n}: {e}"));
        f.stats().operations
    };
    let (small, large) = (work(100, true), work(400, true));
    // Four times the points, about four times the work (not sixteen).
    assert!(large < small * 5, "over points: {small} then {large}");
    let plain = work(400, false);
    assert!(large * 20 < plain, "points {large}, static {plain}");
}

/// State tags see, changed inside a body through a shared reference (a
/// DSL's `Seen`), would make a point depend on the path to it: a clear
/// error at the machine, and the thread extracts again afterwards.
#[test]
#[augur::staged]
fn state_tags_see_changed_inside_a_body_is_an_error() {
    let e = Builder::new()
        .extract("seen", |x: Dyn<i64>| {
            let mode = augur::dsl::Seen::new(0u8);
            let acc = Dyn::named("acc", x);
            resumable(0u8, |s| {
                if x.gt(0).is_true() {
                    mode.set(1);
                }
                acc.set(acc + i64::from(mode.get()));
                (s < 2).then_some(s + 1)
            });
            acc
        })
        .map(|_| ())
        .expect_err("a Seen changed inside a body");
    let text = e.to_string();
    assert!(
        text.contains("changed inside a resumable body") && text.contains("resumable.rs"),
        "{text}"
    );
    let again = Builder::new().extract("after", |x: Dyn<i64>| x + 1);
    assert!(again.is_ok());
}

/// A machine that cycles through its points with no dyn decision loops
/// forever, as its plain loop does: an error, unless the builder allows
/// infinite loops.
#[test]
#[augur::staged]
fn a_cycle_without_a_decision_is_an_error_unless_allowed() {
    let spin = |x: Dyn<i64>| {
        let acc = Dyn::named("acc", x);
        resumable(0u8, |s| {
            acc.set(acc + 1);
            Some((s + 1) % 3)
        });
        acc
    };
    let e = Builder::new()
        .extract("spin", spin)
        .map(|_| ())
        .expect_err("loops forever");
    assert!(e.to_string().contains("loop forever"), "{e}");
    let ex = Builder::new()
        .allow_infinite_loops(true)
        .extract("spin", spin)
        .expect("allowed");
    assert!(ex.c_code().contains("while (true)"), "{}", ex.c_code());
}

/// A run that ends at a point recorded before goes on as the next run
/// where that one starts in the same machine (`Builder::chain_runs`): the
/// same runs, counts and code as fresh runs, in every shape above.
#[test]
#[augur::staged]
fn chained_runs_give_the_runs_and_code_of_fresh_runs() {
    type Shape = fn(Dyn<i64>, Dyn<i64>) -> Dyn<i64>;
    let shapes: [(&str, Shape); 5] = [
        ("tuple_keys", tuple_keys),
        ("counting", counting),
        ("in_sequence", in_sequence),
        ("around", around),
        ("nested", nested),
    ];
    let mut chained = 0;
    for (name, shape) in shapes {
        let extract = |b: Builder| {
            b.extract(name, move |x: Dyn<i64>, y: Dyn<i64>| shape(x, y))
                .unwrap()
        };
        let (on, off) = (
            extract(Builder::new()),
            extract(Builder::new().chain_runs(false)),
        );
        assert_eq!(on.c_code(), off.c_code(), "{name}: the code differs");
        let (a, b) = (on.stats(), off.stats());
        let counts = |s: &augur::Stats| (crate::resumable_shapes::run_counts(s), s.nodes);
        assert_eq!(counts(a), counts(b), "{name}: {a}\nagainst {b}");
        assert_eq!(b.chained_runs, 0, "{name}: chained with chain_runs(false)");
        chained += a.chained_runs;
    }
    // `AUGUR_CHAIN_CHECK=1` runs every run fresh (to compare each with the
    // state chaining would have given it).
    if std::env::var_os("AUGUR_CHAIN_CHECK").is_none() {
        assert!(chained > 0, "no run was chained");
    }
}
