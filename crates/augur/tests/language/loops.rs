//! Closing dyn loops: which Rust loops become C loops and which are
//! unrolled (plain Rust loops around dyn code), loops whose `Static` state
//! cycles with a period, the check runs that verify a closed loop (batched
//! over sequential loops, then one per loop to blame the one that carries
//! state), and the state a loop cannot carry (plain values and rebound
//! handles whose turns never repeat, loop-carried temporaries): reported
//! as errors naming the loop.
//!
//! The review probes among them (the `loop_*` tests) compare the compiled C
//! and the interpreter with plain Rust, or expect an error; probes that
//! expose engine bugs are `#[ignore = "engine bug: ..."]` with a comment
//! saying how the engine goes wrong.

use crate::common;
use crate::probe_harness;

use augur::{Builder, Dyn, Error, Static};
use common::{check, count, Buf, Check};
use probe_harness::diff;

/// A plain Rust `for` over constants inside a dyn loop is straight-line
/// code: it is unrolled in the body.
#[test]
#[augur::staged]
fn plain_loop_inside_dyn_loop() {
    let ex = check(
        "unrolled_body",
        |n: Dyn<i32>| {
            let r = Dyn::new(1);
            let i = Dyn::new(0);
            while i.lt(n).is_true() {
                for _ in 0..3 {
                    r.set(r * 2 % 1_000_003);
                }
                i.set(i + 1);
            }
            r
        },
        |&mut (n,): &mut (i32,)| (0..n.max(0) * 3).fold(1, |r, _| r * 2 % 1_000_003),
        &[(0,), (1,), (2,), (10,), (100,)],
    );
    assert_eq!(count(&ex.c_code(), "% 1000003"), 3, "{}", ex.c_code());
}

/// Two sequential loops over the same counter variable.
#[test]
#[augur::staged]
fn sequential_loops() {
    let ex = check(
        "two_loops",
        |n: Dyn<i32>| {
            let s = Dyn::new(0);
            let i = Dyn::new(0);
            while i.lt(n).is_true() {
                s.set(s + 2);
                i.set(i + 1);
            }
            while i.gt(0).is_true() {
                s.set(s - 1);
                i.set(i - 1);
            }
            s
        },
        |&mut (n,): &mut (i32,)| n.max(0),
        &[(0,), (1,), (5,), (-5,), (77,)],
    );
    assert_eq!(ex.stats().back_edges, 2);
    // One batched check run covers both loops.
    assert_eq!(ex.stats().loop_check_runs, 1, "{:?}", ex.stats());
}

/// Plain state that the first loop's turns change (`count`) decides code
/// only the second loop's second turn reaches. Each loop's own check run
/// agrees (the first leaves the second loop after one turn; the second
/// starts after the first loop made none), so this used to give a `while`
/// without the `+ 100`; the batched check run turns both loops and sees
/// the difference: a clear error naming both loops.
/// Unannotated and trusted (`Builder::trust_unannotated`): the mechanism for
/// state the engine cannot see (annotated, `count` is tracked: a clear error).
#[test]
fn state_from_one_loop_read_in_a_later_loops_second_turn() {
    let r =
        Builder::new()
            .trust_unannotated(true)
            .extract("carried_across_loops", |n: Dyn<i32>| {
                let s = Dyn::new(0);
                let i = Dyn::new(0);
                let mut count = 0;
                while i.lt(n).is_true() {
                    i.set(i + 1);
                    count += 1;
                }
                let j = Dyn::new(0);
                let mut turn = 0;
                while j.lt(n).is_true() {
                    j.set(j + 1);
                    if turn == 1 && count >= 2 {
                        s.set(s + 100);
                    }
                    turn += 1;
                }
                s
            });
    let Err(e) = r else {
        panic!("an error, not code without the + 100")
    };
    assert!(
        matches!(e, augur::Error::CheckFailed { ref loops, .. } if loops.len() == 2),
        "{e:?}"
    );
    let text = e.to_string();
    assert!(text.contains("loops.rs"), "{text}");
    assert!(text.contains("Static"), "{text}");
}

/// A plain Rust loop of more identical turns than the loop audit checks
/// (30 > 16) around a dyn branch: the check run that follows the closed
/// loop to the end of the closure sees the first stage leave it, so the
/// loop is unrolled, not taken for a dyn loop.
#[test]
#[augur::staged]
fn plain_loop_longer_than_the_audit_is_unrolled() {
    let ex = Builder::new()
        .extract("plain30", |x: Dyn<i32>| {
            let r = Dyn::new(0);
            for _ in 0..30 {
                if x.gt(r).is_true() {
                    r.set(r + 1);
                }
            }
            r
        })
        .unwrap();
    for x in [-3, 0, 7, 29, 30, 100] {
        let want = x.clamp(0, 30);
        assert_eq!(ex.interpret(&[x.into()]).unwrap(), want.into(), "x = {x}");
    }
    assert_eq!(ex.stats().back_edges, 0, "{}", ex.c_code());
}

/// A plain Rust loop longer than the audit whose only decision is its own
/// dyn exit on a value no turn changes: every turn repeats the one before,
/// as a dyn loop's would, but as a dyn loop it could leave only in its
/// first turn or never. It used to be closed into `while (1) { if (x < 5)
/// return s; s = s + 1; }`, which never ends for `x >= 5` where the first
/// stage returns `s + 100` after 30 turns. A loop none of whose decisions
/// can change from turn to turn is now unrolled.
#[test]
#[augur::staged]
fn plain_loop_around_an_invariant_dyn_exit_is_unrolled() {
    common::check(
        "invariant_exit",
        |x: Dyn<i32>| {
            let s = Dyn::new(0);
            for _ in 0..30 {
                if x.lt(5).is_true() {
                    return s;
                }
                s.set(s + 1);
            }
            s + 100
        },
        |&mut (x,): &mut (i32,)| if x < 5 { 0 } else { 130 },
        &[(-3,), (0,), (4,), (5,), (7,), (100,)],
    );
}

/// The same operation from two call sites, alternating with a plain flag
/// the loop flips: the turns emit the same code (the audit compares
/// operations, not call paths), but the flag decides what follows the loop.
/// Leaving after an odd number of turns must multiply by 10, so the shared
/// loop cannot be compiled as if the flag stayed put: the loop's check run,
/// which leaves after three turns, sees it. The outcome is exact code or a
/// clear error (today: the loop's turns are kept apart, and the error names
/// the loop and `#[augur::staged]`), never one loop for both parities (the
/// check run used to leave after two turns, and the code lost the `* 10`).
#[test]
#[allow(clippy::if_same_then_else)] // the two calls are the point
fn same_operation_from_alternating_call_sites() {
    #[augur::staged]
    fn bump(acc: Dyn<i64>) {
        acc.set(acc + 1);
    }
    let f = |n: Dyn<i64>| {
        let acc = Dyn::new(0i64);
        let i = Dyn::new(0i64);
        let mut flip = false;
        while i.lt(n).is_true() {
            if flip {
                bump(acc);
            } else {
                bump(acc);
            }
            flip = !flip;
            i.set(i + 1);
        }
        if flip {
            acc.set(acc * 10);
        }
        acc
    };
    let reference = |&mut (n,): &mut (i64,)| {
        let turns = n.max(0);
        if turns % 2 == 1 {
            turns * 10
        } else {
            turns
        }
    };
    match Builder::new().extract("alternating", f) {
        Ok(_) => {
            common::check(
                "alternating",
                f,
                reference,
                &[(0,), (1,), (2,), (3,), (8,), (9,)],
            );
        }
        Err(e) => {
            let text = e.to_string();
            assert!(
                text.contains("loops.rs"),
                "the error names the loop: {text}"
            );
        }
    }
}

/// A batched check run that sees a difference cannot tell which loop
/// carries the state: each loop then gets its own check run, and the one
/// whose turns flip a flag read after it is blamed by name, as when it is
/// the only loop (`same_operation_from_alternating_call_sites`), not the
/// innocent loop before it.
/// Unannotated and trusted (`Builder::trust_unannotated`): the mechanism for
/// state the engine cannot see (annotated, `flip` is tracked and the code exact).
#[test]
#[allow(clippy::if_same_then_else)] // the two calls are the point
fn a_batched_check_that_fails_blames_the_loop_that_carries_state() {
    #[augur::staged]
    fn bump(acc: Dyn<i64>) {
        acc.set(acc + 1);
    }
    let top = line!();
    let r = Builder::new()
        .trust_unannotated(true)
        .extract("blame", |n: Dyn<i64>| {
            let acc = Dyn::new(0i64);
            let j = Dyn::new(0i64);
            while j.lt(n).is_true() {
                acc.set(acc + 2);
                j.set(j + 1);
            }
            let i = Dyn::new(0i64);
            let mut flip = false;
            while i.lt(n).is_true() {
                if flip {
                    bump(acc);
                } else {
                    bump(acc);
                }
                flip = !flip;
                i.set(i + 1);
            }
            if flip {
                acc.set(acc * 10);
            }
            acc
        });
    let Err(e) = r else {
        panic!("an error, not code for one parity")
    };
    assert!(
        !matches!(e, augur::Error::CheckFailed { .. }),
        "a loop's own check explains the difference: {e}"
    );
    let text = e.to_string();
    // The second `while`, twelve lines below `top`.
    let second_loop = format!("loops.rs:{}:", top + 12);
    assert!(text.contains(&second_loop), "{second_loop} in {text}");
}

/// A Rust variable rebound to a value computed in each turn of a dyn loop
/// and read after it: the loop's state changes every turn, which C cannot
/// express without a variable, so extraction reports it instead of
/// returning the first turn's value (a check run replays the second turn's
/// exit and sees it differ).
#[test]
#[augur::staged]
fn loop_rebound_handle_used_after_loop() {
    never_closes(
        Builder::new().max_loop_iterations(200),
        "last_value",
        |n: Dyn<i32>| {
            let i = Dyn::new(0);
            let mut last = Dyn::lit(-1);
            while i.lt(n).is_true() {
                last = i * 3;
                i.set(i + 1);
            }
            last
        },
    );
}

/// The same in audit mode.
#[test]
#[augur::staged]
fn loop_rebound_handle_used_after_loop_audit() {
    let b = Builder::new().max_loop_iterations(200).audit();
    never_closes(b, "last_value", |n: Dyn<i32>| {
        let i = Dyn::new(0);
        let mut last = Dyn::lit(-1);
        while i.lt(n).is_true() {
            last = i * 3;
            i.set(i + 1);
        }
        last
    });
}

/// A plain counter incremented in a dyn loop and read after it: reported,
/// not silently 0.
#[test]
#[augur::staged]
fn loop_plain_counter_used_after_loop() {
    never_closes(
        Builder::new().max_loop_iterations(200),
        "plain_count",
        |n: Dyn<i32>| {
            let i = Dyn::new(0);
            let mut k = 0;
            while i.lt(n).is_true() {
                i.set(i + 1);
                k += 1;
            }
            i * 100 + k
        },
    );
}

/// A plain flag set on one side of a dyn branch inside a dyn loop and read
/// on the other side in a later turn: a check run takes the other side in
/// the second turn and sees the flag's effect, so the loop is not closed on
/// first-turn code. The flag never changes back, so the loop's state does not
/// repeat: reported.
/// Unannotated and trusted (`Builder::trust_unannotated`): the mechanism for state
/// the engine cannot see (annotated, the flag is tracked and the code exact).
#[test]
fn loop_plain_flag_set_on_untaken_side() {
    never_closes(
        Builder::new()
            .trust_unannotated(true)
            .max_loop_iterations(200),
        "plain_flag",
        |p: Dyn<*mut i32>, n: Dyn<i32>| {
            let i = Dyn::new(0);
            let r = Dyn::new(0);
            let mut seen_negative = false;
            while i.lt(n).is_true() {
                if p.at(i).lt(0).is_true() {
                    seen_negative = true;
                } else if seen_negative {
                    r.set(r + 1);
                } else {
                    r.set(r + 100);
                }
                i.set(i + 1);
            }
            r
        },
    );
}

#[augur::staged]
fn never_closes<M, F: augur::stage::signature::StagedFn<M>>(b: Builder, name: &str, f: F) {
    match b.extract(name, f) {
        Err(augur::Error::LoopNeverCloses { location, .. }) => {
            assert_eq!(location.file, file!());
        }
        Err(other) => panic!("expected LoopNeverCloses, got {other}"),
        Ok(ex) => panic!("expected LoopNeverCloses, got code:\n{}", ex.c_code()),
    }
}

/// A `Static` toggle flipping each iteration: period two, the loop closes
/// after two turns with both bodies in it.
#[test]
#[augur::staged]
fn loop_static_toggle_period_two() {
    let o = diff(
        &Check::default(),
        "toggle",
        |n: Dyn<i32>| {
            let i = Dyn::new(0);
            let r = Dyn::new(0);
            let mut odd = Static::new(false);
            while i.lt(n).is_true() {
                if *odd {
                    r.set(r * 2);
                } else {
                    r.set(r + 3);
                }
                odd.set(!*odd);
                i.set(i + 1);
            }
            r
        },
        |&mut (n,): &mut (i32,)| {
            let mut r = 0i32;
            for i in 0..n {
                r = if i % 2 == 1 {
                    r.wrapping_mul(2)
                } else {
                    r.wrapping_add(3)
                };
            }
            r
        },
        &[(0,), (1,), (2,), (3,), (10,), (-1,)],
    );
    println!("{}", o.code);
    o.assert_ok_no_goto();
}

/// A `Static` cycling with period three and a dyn branch inside each body.
#[test]
#[augur::staged]
fn loop_static_period_three_with_branches() {
    let o = diff(
        &Check::default(),
        "period3",
        |p: Dyn<*mut i32>, n: Dyn<i32>| {
            let i = Dyn::new(0);
            let r = Dyn::new(0);
            let mut phase = Static::new(0u8);
            while i.lt(n).is_true() {
                let x = p.at(i);
                if x.gt(0).is_true() {
                    r.set(r + x * (*phase as i32 + 1));
                } else {
                    r.set(r - 1);
                }
                phase.set((*phase + 1) % 3);
                i.set(i + 1);
            }
            r
        },
        |(p, n): &mut (Buf<i32>, i32)| {
            let mut r = 0;
            for (i, &x) in p.0[..*n as usize].iter().enumerate() {
                if x > 0 {
                    r += x * (i as i32 % 3 + 1);
                } else {
                    r -= 1;
                }
            }
            r
        },
        &[
            (Buf(vec![]), 0),
            (Buf(vec![1, 2, 3, 4, 5, 6, 7]), 7),
            (Buf(vec![-1, 2, -3, 4]), 4),
            (Buf(vec![5, 5]), 2),
            (Buf(vec![0, 0, 9]), 3),
        ],
    );
    o.assert_ok_no_goto();
}

/// A `Static` toggle whose value is used after the loop: the exits under
/// each phase lead to different code.
#[test]
#[augur::staged]
fn loop_static_toggle_used_after_loop() {
    let o = diff(
        &Check::default(),
        "toggle_after",
        |n: Dyn<i32>| {
            let i = Dyn::new(0);
            let r = Dyn::new(0);
            let mut odd = Static::new(false);
            while i.lt(n).is_true() {
                r.set(r + 1);
                odd.set(!*odd);
                i.set(i + 1);
            }
            let bonus = if *odd { 1000 } else { 2000 };
            r + bonus
        },
        |&mut (n,): &mut (i32,)| {
            let c = n.max(0);
            c + if c % 2 == 1 { 1000 } else { 2000 }
        },
        &[(0,), (1,), (2,), (3,), (10,), (-1,)],
    );
    println!("{}", o.code);
    o.assert_ok_no_goto();
}

/// A loop-carried temporary (a plain variable rebound to a new value and
/// read in the next turn) is an error that names the loop and says what is
/// carried (`Error::CarriedValue`).
#[test]
// Rebinding the Rust variable (not `+=`, which would assign the Dyn) is the point.
#[allow(clippy::assign_op_pattern)]
#[augur::staged]
fn loop_carried_temporary_is_an_error() {
    let err = Builder::new()
        .extract("carried", |n: Dyn<i32>| {
            let i = Dyn::new(0);
            let mut acc = Dyn::lit(0);
            while i.lt(n).is_true() {
                acc = acc + i;
                i.set(i + 1);
            }
            acc
        })
        .unwrap_err();
    assert!(matches!(err, Error::CarriedValue { .. }), "{err:?}: {err}");
    assert!(err.to_string().contains(file!()), "{err}");
    // The builder works after the error.
    let ok = Builder::new().extract("fine", |x: Dyn<i32>| x * 2).unwrap();
    assert_eq!(ok.interpret(&[3.into()]).unwrap(), 6.into());
}

/// Two dyn loops staged from one line (the turns of a plain `for`) inside
/// an outer dyn loop, without `#[augur::staged]`: the plain loop's salt
/// keeps the outer loop from closing, and every run replays more of its
/// turns than the last. The run limit took hours to reach (minutes without
/// a word before this limit); the work limit stops it with an error that
/// names the loop's first operation and the fixes. (Trusted: unannotated,
/// the engine would stop at the first unshared points instead.)
#[test]
fn runs_that_grow_without_end_stop_at_the_work_limit() {
    let first_op_line = line!() + 10;
    let err = Builder::new()
        .trust_unannotated(true)
        .max_work(3_000_000)
        .extract("copy_pairs", |a: Dyn<*mut f32>, buf: Dyn<*mut f32>| {
            let end = Dyn::named("end", Dyn::lit(0i32) + 512);
            let t = Dyn::named("t", Dyn::lit(0i32));
            while t.lt(end).is_true() {
                // (black_box: an unrolled loop would stage from two lines)
                for x in 0..std::hint::black_box(2) {
                    let base = Dyn::named("base", t * 4);
                    let q = Dyn::named("q", 0i32);
                    while q.lt(256).is_true() {
                        let val = a.at(t + q + x);
                        buf.at(base + q * 2 + x).set(val);
                        q.set(q + 1);
                    }
                }
                t.set(t + 256);
            }
        })
        .unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, Error::Limit { .. }), "{text}");
    assert!(text.contains("Builder::max_work"), "{text}");
    assert!(
        text.contains(&format!("loops.rs:{first_op_line}")),
        "{text}"
    );
}

/// Under the opt-out that trusts plain state, the loop checks are what
/// stands between plain state carried by a loop and wrong code: the
/// extraction is exact on every input here, or stops with an error. `got`
/// is the extraction of a closure over `args`, `want` plain Rust.
fn exact_or_refused<F: Copy>(
    name: &str,
    got: augur::Result<augur::Extracted<F>>,
    want: impl Fn(&[i32]) -> i32,
    inputs: &[Vec<i32>],
) {
    let Ok(f) = got else { return };
    for args in inputs {
        let values: Vec<augur::Value> = args.iter().map(|&x| x.into()).collect();
        let v = f.interpret(&values).unwrap();
        assert_eq!(
            v,
            want(args).into(),
            "{name} on {args:?}: silently wrong code"
        );
    }
}

/// Two loops on the second side of a dyn `if`, the first counting its
/// turns in a plain local read after both on a later `if`'s first side.
/// (A batched check that reached those loops on second sides and kept
/// taking second sides after them never compared the read.)
#[test]
fn loops_on_a_second_side_carrying_a_plain_count_are_exact_or_refused() {
    let got = Builder::new().trust_unannotated(true).extract(
        "second_side",
        |x: Dyn<i32>, n: Dyn<i32>, y: Dyn<i32>| {
            let s = Dyn::new(0);
            let i = Dyn::new(0);
            let mut k = 0;
            if x.gt(0).is_true() {
                while i.lt(n).is_true() {
                    s.set(s + 1);
                    i.set(i + 1);
                }
            } else {
                while i.lt(n).is_true() {
                    s.set(s + 2);
                    i.set(i + 1);
                    k += 1;
                }
                let j = Dyn::new(0);
                while j.lt(n).is_true() {
                    s.set(s + 3);
                    j.set(j + 1);
                }
                if y.gt(0).is_true() {
                    s.set(s + 1000);
                    if k >= 2 {
                        s.set(s + 100);
                    }
                } else {
                    s.set(s + 7);
                }
            }
            s
        },
    );
    let want = |a: &[i32]| {
        let (x, t, y) = (a[0], a[1].max(0), a[2]);
        if x > 0 {
            t
        } else {
            5 * t
                + if y > 0 {
                    1000 + if t >= 2 { 100 } else { 0 }
                } else {
                    7
                }
        }
    };
    let mut inputs = Vec::new();
    for x in [-1, 1] {
        for n in [-1, 0, 1, 2, 3, 5] {
            for y in [-1, 1] {
                inputs.push(vec![x, n, y]);
            }
        }
    }
    exact_or_refused("second_side", got, want, &inputs);
}

/// Nested loops whose outer body ends with the inner loop (the back-edge
/// leaves from the inner loop's exit), the outer counting its turns in a
/// plain local read after a second such nest. (A loop check that took the
/// inner loop's decision for the outer loop's own made one outer turn.)
#[test]
fn an_outer_loop_ending_with_an_inner_loop_carrying_a_plain_count_is_exact_or_refused() {
    let got =
        Builder::new()
            .trust_unannotated(true)
            .extract("nests", |n: Dyn<i32>, y: Dyn<i32>| {
                let s = Dyn::new(0);
                let i = Dyn::new(0);
                let mut k = 0;
                while i.lt(n).is_true() {
                    i.set(i + 1);
                    k += 1;
                    let j = Dyn::new(0);
                    while j.lt(i).is_true() {
                        s.set(s + 1);
                        j.set(j + 1);
                    }
                }
                let i2 = Dyn::new(0);
                while i2.lt(n).is_true() {
                    i2.set(i2 + 1);
                    let j = Dyn::new(0);
                    while j.lt(2).is_true() {
                        s.set(s + 10);
                        j.set(j + 1);
                    }
                }
                if y.gt(0).is_true() {
                    s.set(s + 1000);
                    if k >= 2 {
                        s.set(s + 100);
                    }
                } else {
                    s.set(s + 7);
                }
                s
            });
    let want = |a: &[i32]| {
        let (t, y) = (a[0].max(0), a[1]);
        t * (t + 1) / 2
            + 20 * t
            + if y > 0 {
                1000 + if t >= 2 { 100 } else { 0 }
            } else {
                7
            }
    };
    let inputs: Vec<Vec<i32>> = [-1, 0, 1, 2, 3, 5]
        .iter()
        .flat_map(|&n| [vec![n, -1], vec![n, 1]])
        .collect();
    exact_or_refused("nests", got, want, &inputs);
}
