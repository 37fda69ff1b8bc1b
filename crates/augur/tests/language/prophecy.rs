//! Prophecy variables: identity, persistence, restarts in both modes, and
//! the code they make. Every program is compiled and run, interpreted, and
//! compared with plain Rust; both modes must give byte-identical C.

use crate::common;

use augur::prophecy::{Flat, Max, Prophecy, Set};
use augur::{Builder, Dyn, ProphecyMode, Static};
use common::{assert_contains, check_modes, ByMode};

#[augur::staged]
fn builder(mode: ProphecyMode) -> Builder {
    Builder::new().prophecy_mode(mode)
}

/// A requirement before any read: the value is joined in place, so the
/// code already uses it; paper mode restarts anyway, as Algorithm 3 does.
#[test]
#[augur::staged]
fn require_then_read_gives_the_required_value() {
    let ByMode {
        paper,
        adaptive: collect,
        ..
    } = check_modes(
        "req_read",
        |x: Dyn<i32>| {
            let p = Prophecy::new(Max(0));
            p.require(Max(7));
            p.require(Max(3));
            let k = Dyn::new(p.get().0);
            x + k
        },
        |&mut (x,): &mut (i32,)| x + 7,
        &[(0,), (1,), (-7,), (100,), (i32::MIN + 10,)],
    );
    assert_contains(&collect.c_code(), &["7"]);
    assert_eq!(collect.stats().prophecy_restarts, 0);
    assert_eq!(paper.stats().prophecy_restarts, 1);
}

/// The classic order: read a prediction, require it later on one path.
#[test]
#[augur::staged]
fn read_then_require_restarts_and_uses_the_new_value() {
    let ByMode {
        paper,
        adaptive: collect,
        ..
    } = check_modes(
        "read_req",
        |x: Dyn<i32>| {
            let doubled = Prophecy::named("doubled", false);
            let twice = Dyn::new(0);
            if doubled.get() {
                twice.set(x * 2);
            }
            let r = Dyn::new(x);
            if x.gt(10).is_true() {
                doubled.require(true);
                r.set(twice);
            }
            r
        },
        |&mut (x,): &mut (i32,)| if x > 10 { x.wrapping_mul(2) } else { x },
        &[(0,), (10,), (11,), (-5,), (1000,)],
    );
    for ex in [&paper, &collect] {
        assert_eq!(ex.stats().prophecy_restarts, 1);
        assert_eq!(ex.stats().attempts, 2);
        assert_eq!(ex.stats().runs_per_attempt.len(), 2);
        assert_eq!(ex.explain().find("doubled").unwrap().value, "true");
    }
}

/// A prophecy made in a dyn loop's body is one prophecy for all turns: the
/// loop stays one loop, and a requirement reached on some turns only (a
/// dyn branch inside) still raises it for the whole loop.
#[test]
#[augur::staged]
fn prophecy_in_a_dyn_loop_is_shared_by_all_turns() {
    let ByMode {
        adaptive: collect, ..
    } = check_modes(
        "loop_shared",
        |n: Dyn<i32>| {
            let s = Dyn::new(0);
            let i = Dyn::new(0);
            while i.lt(n).is_true() {
                let big = Prophecy::named("big", false);
                if big.get() {
                    s.set(s + 100);
                }
                if i.eq(3).is_true() {
                    big.require(true);
                }
                s.set(s + i);
                i.set(i + 1);
            }
            s
        },
        |&mut (n,): &mut (i32,)| (0..n).map(|i| i + 100).sum::<i32>(),
        &[(0,), (1,), (3,), (4,), (10,)],
    );
    let code = collect.c_code();
    assert_eq!(
        code.matches("while").count() + code.matches("for (").count(),
        1
    );
    assert_eq!(collect.stats().prophecies, 1);
    assert_eq!(collect.stats().prophecy_restarts, 1);
}

/// A prophecy created before a loop and required inside it.
#[test]
#[augur::staged]
fn prophecy_before_a_loop_required_inside() {
    check_modes(
        "before_loop",
        |n: Dyn<i32>| {
            let width = Prophecy::named("width", Max(1));
            let w = Dyn::new(width.get().0);
            let i = Dyn::new(0);
            while i.lt(n).is_true() {
                if i.gt(2).is_true() {
                    width.require(Max(8));
                } else {
                    width.require(Max(4));
                }
                i.set(i + 1);
            }
            w * n
        },
        |&mut (n,): &mut (i32,)| 8 * n,
        &[(0,), (1,), (3,), (5,), (-2,)],
    );
}

/// The helper's prophecy depends on where it is called from: two call
/// sites, two prophecies with their own values.
#[augur::staged]
fn scaled(x: Dyn<i32>, need: bool) -> Dyn<i32> {
    let p = Prophecy::named("scale", false);
    let r = Dyn::new(x);
    if p.get() {
        r.set(r * 3);
    }
    if need {
        p.require(true);
    }
    r
}

#[test]
#[augur::staged]
fn helper_called_twice_has_two_prophecies() {
    let ByMode {
        adaptive: collect, ..
    } = check_modes(
        "helper_twice",
        |x: Dyn<i32>| {
            let a = scaled(x, true);
            let b = scaled(x + 1, false);
            a * 10 + b
        },
        |&mut (x,): &mut (i32,)| (x * 3) * 10 + (x + 1),
        &[(0,), (1,), (-4,), (7,), (1000,)],
    );
    let ex = collect.explain();
    let values: Vec<&str> = ex.cells.iter().map(|c| c.value.as_str()).collect();
    assert_eq!(values, ["true", "false"]);
}

/// One prophecy per item of a plain Rust loop (no dyn decision between
/// the creations), as the paper's `run_on_gpu` makes one per tensor.
#[test]
#[augur::staged]
fn plain_loop_makes_one_prophecy_per_item() {
    let ByMode { adaptive, .. } = check_modes(
        "per_item",
        |x: Dyn<i32>| {
            let ps: Vec<Prophecy<bool>> = (0..4).map(|_| Prophecy::new(false)).collect();
            let acc = Dyn::new(0);
            for (k, p) in ps.iter().enumerate() {
                if p.get() {
                    acc.set(acc + (k as i32 + 1));
                }
            }
            // Items 1 and 3 are needed, on different paths.
            if x.gt(0).is_true() {
                ps[1].require(true);
            } else {
                ps[3].require(true);
            }
            acc + x
        },
        |&mut (x,): &mut (i32,)| 2 + 4 + x,
        &[(0,), (1,), (-4,), (7,), (99,)],
    );
    let values: Vec<String> = adaptive
        .explain()
        .cells
        .iter()
        .map(|c| c.value.clone())
        .collect();
    assert_eq!(values, ["false", "true", "false", "true"]);
    // Adaptive mode ends the attempt with the first run, which found one
    // violation; the other is on the path explored next.
    assert_eq!(adaptive.stats().prophecy_restarts, 2);
}

/// Prophecies created inside dyn branches, required in nested branches.
#[test]
#[augur::staged]
fn prophecies_nested_in_branches() {
    check_modes(
        "nested",
        |x: Dyn<i32>, y: Dyn<i32>| {
            let r = Dyn::new(0);
            if x.gt(0).is_true() {
                let p = Prophecy::named("outer", Set::<u8>::new());
                let seen = p.get();
                for item in &seen {
                    r.set(r + i32::from(*item));
                }
                if y.gt(0).is_true() {
                    p.require(Set::of([1]));
                    if y.gt(10).is_true() {
                        p.require(Set::of([20]));
                    }
                } else {
                    p.require(Set::of([300u16 as u8]));
                }
            } else {
                let q = Prophecy::named("inner", Flat::Unknown);
                if let Flat::Exactly(v) = q.get() {
                    r.set(v);
                }
                q.require(Flat::Exactly(5));
            }
            r
        },
        |&mut (x, _y): &mut (i32, i32)| if x > 0 { 1 + 20 + 44 } else { 5 },
        &[(0, 0), (1, 1), (1, 11), (1, -1), (-3, 20), (5, 5)],
    );
}

/// Prophecies inside a `Static`-counted loop: one per iteration (the
/// counter is part of the creation point), each with its own value.
#[test]
#[augur::staged]
fn prophecies_in_a_static_loop() {
    check_modes(
        "static_loop",
        |x: Dyn<i32>| {
            let r = Dyn::new(0);
            let mut k = Static::new(0);
            while *k < 3 {
                let p = Prophecy::new(Max(0));
                r.set(r + p.get().0);
                if x.gt(*k).is_true() {
                    p.require(Max(*k * 10 + 1));
                }
                k += 1;
            }
            r
        },
        |&mut (_x,): &mut (i32,)| 1 + 11 + 21,
        &[(0,), (1,), (2,), (3,), (-1,)],
    );
}

/// Collect and adaptive modes: `k` independent violations settle in one
/// restart; paper mode takes one restart per violation.
#[test]
#[augur::staged]
fn collect_mode_settles_independent_violations_at_once() {
    let program = |x: Dyn<i32>| {
        let ps: Vec<Prophecy<bool>> = (0..8).map(|_| Prophecy::new(false)).collect();
        let r = Dyn::new(x);
        for p in &ps {
            if p.get() {
                r.set(r + 1);
            }
            if x.gt(0).is_true() {
                r.set(r * 2);
            }
            p.require(true);
        }
        r
    };
    let paper = builder(ProphecyMode::Paper).extract("k8", program).unwrap();
    let collect = builder(ProphecyMode::Collect)
        .extract("k8", program)
        .unwrap();
    assert_eq!(paper.c_code(), collect.c_code());
    assert_eq!(paper.stats().prophecy_restarts, 8);
    assert_eq!(collect.stats().prophecy_restarts, 1);
    // The plain loop around a dyn branch costs one restart of its own.
    let s = collect.stats();
    assert_eq!(s.attempts, 1 + s.loop_restarts + s.prophecy_restarts);
    // Control-flow runs per attempt, then check runs: together all runs.
    let per_attempt = &collect.stats().runs_per_attempt;
    assert_eq!(per_attempt.last(), Some(&collect.stats().runs));
    assert!(per_attempt.iter().sum::<u64>() <= collect.stats().total_runs);
    for x in [-2, 0, 1, 3, 5] {
        let mut want = x;
        for _ in 0..8 {
            want += 1;
            if x > 0 {
                want *= 2;
            }
        }
        assert_eq!(collect.interpret(&[x.into()]).unwrap(), want.into());
    }
}

/// A stale prediction can make the first stage fail (an assertion that
/// only holds once the prophecy is right); collect mode takes that as the
/// reason to restart with its pending joins, not as the result.
#[test]
#[augur::staged]
fn collect_mode_retries_a_run_that_failed_under_a_stale_prediction() {
    for mode in [
        ProphecyMode::Paper,
        ProphecyMode::Collect,
        ProphecyMode::Adaptive,
    ] {
        let ex = builder(mode)
            .extract("stale", |x: Dyn<i32>| {
                let p = Prophecy::new(false);
                let _ = p.get();
                p.require(true);
                assert!(p.get(), "the prophecy holds once required");
                x + 1
            })
            .unwrap();
        assert_eq!(ex.interpret(&[1.into()]).unwrap(), 2.into());
    }
    // A genuine failure is still reported, in the attempt with nothing pending.
    let err = builder(ProphecyMode::Adaptive)
        .extract("genuine", |x: Dyn<i32>| {
            let p = Prophecy::new(false);
            let _ = p.get();
            p.require(true);
            if x.lt(0).is_true() {
                panic!("always fails");
            }
            x
        })
        .unwrap_err();
    assert!(err.to_string().contains("always fails"), "{err}");
}

/// `explain` names the line of each requirement that raised a value, and
/// the final value.
#[test]
#[augur::staged]
fn explain_names_the_requiring_lines() {
    let line_a = line!() + 10;
    let line_b = line!() + 12;
    let ex = Builder::new()
        .extract("explained", |x: Dyn<i32>| {
            let p = Prophecy::named("threshold", Flat::Unknown);
            let r = Dyn::new(x);
            if matches!(p.get(), Flat::Exactly(_)) {
                r.set(r + 1);
            }
            if x.gt(0).is_true() {
                p.require(Flat::Exactly(1));
            } else {
                r.set(r - 1);
                p.require(Flat::Exactly(2));
            }
            r
        })
        .unwrap();
    let text = ex.explain().to_string();
    let report = ex.explain().find("threshold").unwrap();
    assert_eq!(report.value, "Conflict");
    let lines: Vec<u32> = report.joins.iter().map(|j| j.location.line).collect();
    assert!(lines.contains(&line_a) && lines.contains(&line_b), "{text}");
    assert!(text.contains("prophecy `threshold` (Flat<i32>"), "{text}");
    assert!(text.contains(&format!("prophecy.rs:{line_a}")), "{text}");
}

/// A requirement decided by plain Rust state (`needs`) that differs between
/// two paths, far after they join: right after 40 operations, or far down
/// the `else` side of a later dyn `if` (`on_other_side`). Returns
/// `r + saved`, where `saved` is `x` once the prophecy settled on true.
#[augur::staged]
fn far_requirement(
    mode: ProphecyMode,
    on_other_side: bool,
) -> augur::Extracted<unsafe extern "C" fn(i32) -> i32> {
    builder(mode)
        .extract("far_require", move |x: Dyn<i32>| {
            let p = Prophecy::named("x saved", false);
            let saved = Dyn::new(0);
            if p.get() {
                saved.set(x);
            }
            let mut needs = false;
            let r = Dyn::new(0);
            if x.gt(0).is_true() {
                r.set(1);
            } else {
                r.set(2);
                needs = true;
            }
            let far = |r: Dyn<i32>| {
                for _ in 0..80 {
                    r.set(r + 1);
                }
            };
            if on_other_side {
                if x.lt(-100).is_true() {
                    r.set(r * 2);
                } else {
                    far(r);
                    if needs {
                        p.require(true);
                    }
                }
            } else {
                far(r);
                if needs {
                    p.require(true);
                }
            }
            r + saved
        })
        .unwrap()
}

#[augur::staged]
fn check_far_requirement(on_other_side: bool) {
    for mode in [ProphecyMode::Paper, ProphecyMode::Adaptive] {
        let ex = far_requirement(mode, on_other_side);
        let c = ex.c_code();
        for x in [-500, -5, 0, 3] {
            let r = if x > 0 { 1 } else { 2 };
            let want = if on_other_side && x < -100 {
                2 * r
            } else {
                r + 80
            } + x;
            assert_eq!(
                ex.interpret(&[x.into()]).unwrap(),
                want.into(),
                "{mode:?}, x = {x}:\n{c}"
            );
        }
    }
}

/// A requirement that plain state decides 80 operations after a join: the
/// second path links to the first one's code only after following it to
/// the end of the closure, running its own requirement on the way.
#[test]
#[augur::staged]
fn requirement_far_after_a_join_is_run() {
    check_far_requirement(false);
}

/// The same requirement on the side of a later dyn `if` that the linking
/// run does not take: the link's check run takes the other sides, to the
/// end of the closure.
#[test]
#[augur::staged]
fn requirement_on_the_other_side_after_a_join_is_run() {
    check_far_requirement(true);
}
