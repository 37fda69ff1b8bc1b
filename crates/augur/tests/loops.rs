//! Dyn loops: while loops, nesting three deep, break/continue, ifs inside,
//! early return from a loop, annotations.

mod common;

use augur::{Builder, Dyn};
use common::{assert_contains, check, count, Buf};

/// Sums `0..n` with a dyn while loop; `n <= 0` never enters it.
#[test]
fn sum_to_n() {
    let ex = check(
        "sum",
        |n: Dyn<i64>| {
            let s = Dyn::new(0i64);
            let i = Dyn::new(0i64);
            while i.lt(n).is_true() {
                s.set(s + i);
                i.set(i + 1);
            }
            s
        },
        |&mut (n,): &mut (i64,)| (0..n).sum::<i64>(),
        &[(0,), (-5,), (1,), (2,), (100,), (1000,)],
    );
    let code = ex.c_code();
    assert!(code.contains("while (") || code.contains("for ("), "{code}");
    assert_eq!(ex.stats().back_edges, 1);
}

/// Three nested dyn loops with the counters all used in the body.
#[test]
fn nested_three_deep() {
    check(
        "nest3",
        |a: Dyn<i32>, b: Dyn<i32>, c: Dyn<i32>| {
            let s = Dyn::new(0);
            let i = Dyn::new(0);
            while i.lt(a).is_true() {
                let j = Dyn::new(0);
                while j.lt(b).is_true() {
                    let k = Dyn::new(0);
                    while k.lt(c).is_true() {
                        s.set(s + i * 100 + j * 10 + k);
                        k.set(k + 1);
                    }
                    j.set(j + 1);
                }
                i.set(i + 1);
            }
            s
        },
        |&mut (a, b, c): &mut (i32, i32, i32)| {
            let mut s = 0;
            for i in 0..a {
                for j in 0..b {
                    for k in 0..c {
                        s += i * 100 + j * 10 + k;
                    }
                }
            }
            s
        },
        &[
            (0, 0, 0),
            (1, 1, 1),
            (2, 3, 4),
            (3, 0, 5),
            (5, 5, 5),
            (-1, 3, 3),
        ],
    );
}

/// `break` and `continue` inside a dyn loop.
#[test]
fn break_and_continue() {
    check(
        "brk",
        |n: Dyn<i32>, limit: Dyn<i32>| {
            let s = Dyn::new(0);
            let mut i = Dyn::new(0);
            while i.lt(n).is_true() {
                i += 1;
                if (i % 3).eq(0).is_true() {
                    continue;
                }
                if s.gt(limit).is_true() {
                    break;
                }
                s.set(s + i);
            }
            s * 1000 + i
        },
        |&mut (n, limit): &mut (i32, i32)| {
            let (mut s, mut i) = (0, 0);
            while i < n {
                i += 1;
                if i % 3 == 0 {
                    continue;
                }
                if s > limit {
                    break;
                }
                s += i;
            }
            s * 1000 + i
        },
        &[(0, 0), (10, 1000), (10, 5), (100, 50), (7, -1), (30, 30)],
    );
}

/// A loop whose body is an if/else chain, with a nested loop in one arm.
#[test]
fn loop_with_ifs_and_inner_loop() {
    check(
        "mix",
        |n: Dyn<u32>| {
            let s = Dyn::new(0u32);
            let i = Dyn::new(0u32);
            while i.lt(n).is_true() {
                if (i & 1).eq(0).is_true() {
                    s.set(s + i);
                } else if (i % 5).eq(0).is_true() {
                    let j = Dyn::new(0u32);
                    while j.lt(i).is_true() {
                        s.set(s ^ j);
                        j.set(j + 1);
                    }
                } else {
                    s.set(s * 3);
                }
                i.set(i + 1);
            }
            s
        },
        |&mut (n,): &mut (u32,)| {
            let mut s = 0u32;
            for i in 0..n {
                if i & 1 == 0 {
                    s = s.wrapping_add(i);
                } else if i % 5 == 0 {
                    for j in 0..i {
                        s ^= j;
                    }
                } else {
                    s = s.wrapping_mul(3);
                }
            }
            s
        },
        &[(0,), (1,), (6,), (11,), (40,)],
    );
}

/// `return x;` from inside a dyn if inside a dyn loop.
#[test]
fn early_return_from_loop() {
    check(
        "isqrt_up",
        |x: Dyn<i64>| {
            let i = Dyn::new(0i64);
            while i.lt(100_000).is_true() {
                if (i * i).ge(x).is_true() {
                    return i;
                }
                i.set(i + 1);
            }
            Dyn::lit(-1i64)
        },
        |&mut (x,): &mut (i64,)| (0..100_000).find(|i| i * i >= x).unwrap_or(-1),
        &[(0,), (-7,), (1,), (15,), (16,), (17,), (1 << 40,)],
    );
}

/// A loop-and-a-half: the exit test in the middle of the body.
#[test]
fn exit_in_the_middle() {
    check(
        "collatz",
        |x: Dyn<u64>| {
            let steps = Dyn::new(0u32);
            let v = Dyn::new(x);
            loop {
                if v.le(1).is_true() {
                    break;
                }
                if (v & 1).eq(0).is_true() {
                    v.set(v / 2);
                } else {
                    v.set(v * 3 + 1);
                }
                steps.set(steps + 1);
            }
            steps
        },
        |&mut (x,): &mut (u64,)| {
            let (mut v, mut steps) = (x, 0u32);
            while v > 1 {
                v = if v % 2 == 0 { v / 2 } else { v * 3 + 1 };
                steps += 1;
            }
            steps
        },
        &[(0,), (1,), (2,), (7,), (27,), (97,)],
    );
}

/// Euclid's gcd: a loop over two variables with a swap.
#[test]
fn gcd() {
    check(
        "gcd",
        |a: Dyn<u64>, b: Dyn<u64>| {
            let x = Dyn::new(a);
            let y = Dyn::new(b);
            while y.ne(0).is_true() {
                let t = Dyn::new(x % y);
                x.set(y);
                y.set(t);
            }
            x
        },
        |&mut (mut a, mut b): &mut (u64, u64)| {
            while b != 0 {
                (a, b) = (b, a % b);
            }
            a
        },
        &[
            (0, 0),
            (0, 5),
            (12, 18),
            (17, 5),
            (u64::MAX, 6),
            (1 << 40, 1 << 20),
        ],
    );
}

/// Break out of the inner of two loops only.
#[test]
fn break_inner_only() {
    check(
        "inner_break",
        |n: Dyn<i32>| {
            let s = Dyn::new(0);
            let i = Dyn::new(0);
            while i.lt(n).is_true() {
                let j = Dyn::new(0);
                while j.lt(n).is_true() {
                    if j.gt(i).is_true() {
                        break;
                    }
                    s.set(s + 1);
                    j.set(j + 1);
                }
                i.set(i + 1);
            }
            s
        },
        |&mut (n,): &mut (i32,)| (0..n).map(|i| (i + 1).min(n)).sum::<i32>(),
        &[(0,), (1,), (2,), (5,), (20,), (-3,)],
    );
}

/// A plain Rust `for` over constants inside a dyn loop is straight-line
/// code: it is unrolled in the body.
#[test]
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

/// Annotations: a pragma before a loop and a plain comment appear in the C.
#[test]
fn annotations() {
    let ex = check(
        "annotated",
        |n: Dyn<i32>| {
            let s = Dyn::new(0);
            augur::annotate("pragma: GCC unroll 4");
            let i = Dyn::new(0);
            while i.lt(n).is_true() {
                s.set(s + i);
                i.set(i + 1);
            }
            augur::annotate("the sum is ready");
            s * 2
        },
        |&mut (n,): &mut (i32,)| (0..n).sum::<i32>() * 2,
        &[(0,), (1,), (4,), (50,), (-1,)],
    );
    assert_contains(
        &ex.c_code(),
        &["_Pragma(\"GCC unroll 4\")", "the sum is ready"],
    );
}

/// Two sequential loops over the same counter variable.
#[test]
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
#[test]
fn state_from_one_loop_read_in_a_later_loops_second_turn() {
    let r = Builder::new().extract("carried_across_loops", |n: Dyn<i32>| {
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

/// `i < n && p[i] != 0` as a loop condition: the load is guarded, so the
/// interpreter never reads past `n`.
#[test]
fn guarded_condition() {
    check(
        "len_until_zero",
        |p: Dyn<*mut u8>, n: Dyn<i32>| {
            let i = Dyn::new(0);
            while i.lt(n).and(p.at(i).ne(0)).is_true() {
                i.set(i + 1);
            }
            i
        },
        |(p, n): &mut (Buf<u8>, i32)| {
            p.0[..*n as usize].iter().take_while(|c| **c != 0).count() as i32
        },
        &[
            (Buf(vec![1, 2, 3]), 3),
            (Buf(vec![]), 0),
            (Buf(vec![1, 0, 3]), 3),
            (Buf(vec![0]), 1),
            (Buf(vec![5, 5]), 2),
        ],
    );
}

/// A loop controlled by a `Dyn<bool>` variable set at the end of the body.
#[test]
fn flag_controlled_loop() {
    check(
        "flag_loop",
        |x: Dyn<u32>| {
            let done = Dyn::new(false);
            let v = Dyn::new(x);
            let steps = Dyn::new(0);
            while (!done).is_true() {
                v.set(v / 3);
                steps.set(steps + 1);
                done.set(v.eq(0));
            }
            steps
        },
        |&mut (x,): &mut (u32,)| {
            let (mut v, mut s) = (x, 0);
            loop {
                v /= 3;
                s += 1;
                if v == 0 {
                    break s;
                }
            }
        },
        &[(0,), (1,), (3,), (100,), (u32::MAX,)],
    );
}

/// `return` from the inner of two nested dyn loops.
#[test]
fn return_from_nested_loops() {
    check(
        "ret_nested",
        |n: Dyn<i32>, m: Dyn<i32>, t: Dyn<i32>| {
            let i = Dyn::new(0);
            while i.lt(n).is_true() {
                let j = Dyn::new(0);
                while j.lt(m).is_true() {
                    if (i * j).eq(t).is_true() {
                        return i * 100 + j;
                    }
                    j.set(j + 1);
                }
                i.set(i + 1);
            }
            Dyn::lit(-1)
        },
        |&mut (n, m, t): &mut (i32, i32, i32)| {
            for i in 0..n {
                for j in 0..m {
                    if i * j == t {
                        return i * 100 + j;
                    }
                }
            }
            -1
        },
        &[
            (0, 0, 0),
            (1, 1, 1),
            (3, 4, 5),
            (5, 3, 8),
            (10, 10, 30),
            (6, 6, 0),
        ],
    );
}

/// `continue` and `break` in an inner loop, `continue` in the outer one.
#[test]
fn continue_in_both_loops() {
    check(
        "cont2",
        |n: Dyn<i32>, m: Dyn<i32>, t: Dyn<i32>| {
            let s = Dyn::new(0);
            let i = Dyn::new(0);
            while i.lt(n).is_true() {
                let j = Dyn::new(0);
                while j.lt(m).is_true() {
                    j.set(j + 1);
                    if ((i + j) % 3).eq(0).is_true() {
                        continue;
                    }
                    if j.gt(t).is_true() {
                        break;
                    } else {
                        s.set(s + j);
                    }
                }
                i.set(i + 1);
                if s.gt(100).is_true() {
                    continue;
                }
                s.set(s + 1);
            }
            s
        },
        |&mut (n, m, t): &mut (i32, i32, i32)| {
            let (mut s, mut i) = (0, 0);
            while i < n {
                let mut j = 0;
                while j < m {
                    j += 1;
                    if (i + j) % 3 == 0 {
                        continue;
                    }
                    if j > t {
                        break;
                    }
                    s += j;
                }
                i += 1;
                if s > 100 {
                    continue;
                }
                s += 1;
            }
            s
        },
        &[
            (0, 0, 0),
            (1, 1, 1),
            (3, 4, 5),
            (5, 3, 7),
            (10, 10, 30),
            (6, 6, 0),
        ],
    );
}

/// A float loop whose condition is false for NaN from the start, with a
/// negated exit test in the middle.
#[test]
fn float_loop_with_nan() {
    check(
        "fsteps",
        |x: Dyn<f64>, y: Dyn<f64>| {
            let r = Dyn::new(0);
            let v = Dyn::new(x);
            loop {
                if !v.lt(y).is_true() {
                    break;
                }
                v.set(v + 1.0);
                r.set(r + 1);
            }
            r
        },
        |&mut (x, y): &mut (f64, f64)| {
            let (mut v, mut r) = (x, 0);
            while v < y {
                v += 1.0;
                r += 1;
            }
            r
        },
        &[
            (f64::NAN, 1.0),
            (0.0, 1.0),
            (1.0, 0.0),
            (1.0, f64::NAN),
            (0.5, 20.0),
        ],
    );
}

/// A plain Rust loop of more identical turns than the loop audit checks
/// (30 > 16) around a dyn branch: the check run that follows the closed
/// loop to the end of the closure sees the first stage leave it, so the
/// loop is unrolled, not taken for a dyn loop.
#[test]
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
#[test]
#[allow(clippy::if_same_then_else)] // the two calls are the point
fn a_batched_check_that_fails_blames_the_loop_that_carries_state() {
    fn bump(acc: Dyn<i64>) {
        acc.set(acc + 1);
    }
    let top = line!();
    let r = Builder::new().extract("blame", |n: Dyn<i64>| {
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
    // The second `while`, ten lines below `top`.
    let second_loop = format!("loops.rs:{}:", top + 10);
    assert!(text.contains(&second_loop), "{second_loop} in {text}");
}
