//! Path-insensitive histories: facts recorded anywhere, read as the join
//! over every path, without entering tags (so dyn loops keep their shape).
//! Every program is compiled and run, interpreted, and compared with Rust.

use crate::common;

use augur::prophecy::{History, Set};
use augur::{Builder, Dyn, ProphecyMode, Static};
use common::{check, Check};

/// Loops in generated C.
#[augur::staged]
fn loops(code: &str) -> usize {
    code.matches("while (").count() + code.matches("for (").count()
}

/// A dyn loop that records "the loop body ran" keeps its shape, and the
/// code after the loop knows the fact.
#[test]
#[augur::staged]
fn a_dyn_loop_recording_a_fact_keeps_its_shape() {
    let ex = check(
        "history_loop",
        |n: Dyn<i32>| {
            let wrote = History::named("wrote", false);
            let s = Dyn::new(0);
            let i = Dyn::new(0);
            while i.lt(n).is_true() {
                s.set(s + i * 7);
                wrote.record(true);
                i.set(i + 1);
            }
            if wrote.get() {
                s.set(s + 1000);
            }
            s
        },
        |&mut (n,): &mut (i32,)| (0..n).map(|i| i * 7).sum::<i32>() + 1000,
        &[(0,), (1,), (2,), (5,), (-3,)],
    );
    let code = ex.c_code();
    assert_eq!(loops(&code), 1, "{code}");
    assert_eq!(
        code.matches("* 7").count(),
        1,
        "the body once, not peeled:\n{code}"
    );
    assert_eq!(
        ex.stats().prophecy_restarts,
        0,
        "recorded before read: no restart"
    );
    assert_eq!(ex.explain().find("wrote").unwrap().value, "true");
}

/// The same program with a `Static` flag (BuildIt's `static_var` history):
/// the flag is part of the tags, so the first turn (flag false) and the
/// later turns (flag true) are different program points and the first turn
/// is peeled. This is what breaks the paper's einsum listing, and why
/// `History` exists.
#[test]
#[augur::staged]
fn a_static_flag_in_the_same_loop_peels_it() {
    let ex = check(
        "static_loop",
        |n: Dyn<i32>| {
            let mut wrote = Static::new(false);
            let s = Dyn::new(0);
            let i = Dyn::new(0);
            while i.lt(n).is_true() {
                s.set(s + i * 7);
                wrote.set(true);
                i.set(i + 1);
            }
            if *wrote {
                s.set(s + 1000);
            }
            s
        },
        // Path-sensitive: only the paths through the loop body know.
        |&mut (n,): &mut (i32,)| {
            let s = (0..n).map(|i| i * 7).sum::<i32>();
            if n > 0 {
                s + 1000
            } else {
                s
            }
        },
        &[(0,), (1,), (2,), (5,), (-3,)],
    );
    assert!(
        ex.c_code().matches("* 7").count() > 1,
        "peeled:\n{}",
        ex.c_code()
    );
}

/// Recorded on one side of a branch only: every path after the join sees
/// it (the join over all paths, not the facts of the path taken).
#[test]
#[augur::staged]
fn a_fact_from_one_branch_is_seen_on_every_path() {
    check(
        "one_branch",
        |x: Dyn<i32>| {
            let neg = History::new(false);
            let r = Dyn::new(x);
            if x.lt(0).is_true() {
                neg.record(true);
                r.set(0 - x);
            }
            if neg.get() {
                r.set(r + 1);
            }
            r
        },
        |&mut (x,): &mut (i32,)| x.wrapping_abs() + 1,
        &[(0,), (1,), (-1,), (-50,), (7,)],
    );
}

/// Read before it is recorded (the record is in a later loop): the value
/// read must already be the final one, so the extraction starts over once.
#[test]
#[augur::staged]
fn a_read_before_a_later_record_restarts() {
    for mode in [
        ProphecyMode::Paper,
        ProphecyMode::Collect,
        ProphecyMode::Adaptive,
    ] {
        let ex = Check {
            builder: Builder::new().prophecy_mode(mode),
            ..Check::default()
        }
        .run(
            "read_first",
            |n: Dyn<i32>| {
                let touched = History::named("touched", false);
                let base = Dyn::new(if touched.get() { 10 } else { 0 });
                let i = Dyn::new(0);
                while i.lt(n).is_true() {
                    touched.record(true);
                    base.set(base + 1);
                    i.set(i + 1);
                }
                base
            },
            |&mut (n,): &mut (i32,)| 10 + n.max(0),
            &[(0,), (1,), (3,), (-1,), (9,)],
        );
        assert_eq!(ex.stats().prophecy_restarts, 1);
        assert_eq!(loops(&ex.c_code()), 1);
    }
}

/// Nested dyn loops record which of them ran into one set; both loops keep
/// their shape and the code after them knows the whole set.
#[test]
#[augur::staged]
fn nested_loops_record_into_one_set() {
    let ex = check(
        "nested_set",
        |n: Dyn<i32>, m: Dyn<i32>| {
            let ran = History::named("ran", Set::<u8>::new());
            let s = Dyn::new(0);
            let i = Dyn::new(0);
            while i.lt(n).is_true() {
                ran.record(Set::of([1]));
                let j = Dyn::new(0);
                while j.lt(m).is_true() {
                    ran.record(Set::of([2]));
                    s.set(s + i * j);
                    j.set(j + 1);
                }
                i.set(i + 1);
            }
            for k in ran.get().iter() {
                s.set(s + i32::from(*k) * 100);
            }
            s
        },
        |&mut (n, m): &mut (i32, i32)| {
            let s: i32 = (0..n).flat_map(|i| (0..m).map(move |j| i * j)).sum();
            s + 300
        },
        &[(0, 0), (1, 1), (2, 3), (4, 0), (3, 5)],
    );
    assert_eq!(loops(&ex.c_code()), 2, "{}", ex.c_code());
    assert_eq!(ex.explain().find("ran").unwrap().value, "{1, 2}");
}

/// One history per call of a "kernel" helper (as `run_on_gpu` makes one per
/// kernel): the two calls record different facts.
#[augur::staged]
fn kernel(x: Dyn<i32>, writes: bool) -> Dyn<i32> {
    let written = History::named("kernel wrote", false);
    let r = Dyn::new(x);
    if writes && x.gt(0).is_true() {
        written.record(true);
        r.set(r * 2);
    }
    if written.get() {
        r.set(r + 1);
    }
    r
}

#[test]
#[augur::staged]
fn each_call_site_has_its_own_history() {
    let ex = check(
        "kernels",
        |x: Dyn<i32>| kernel(x, true) * 1000 + kernel(x, false),
        |&mut (x,): &mut (i32,)| {
            let a = if x > 0 { x * 2 } else { x } + 1;
            a * 1000 + x
        },
        &[(0,), (1,), (-2,), (5,), (100,)],
    );
    let values: Vec<&str> = ex
        .explain()
        .cells
        .iter()
        .map(|c| c.value.as_str())
        .collect();
    assert_eq!(values, ["true", "false"]);
}
