//! Dyn loops: while loops, nesting three deep, break/continue, ifs inside,
//! early return from a loop, annotations.

use crate::common;

use augur::Dyn;
use common::{assert_contains, check, Buf};

/// Sums `0..n` with a dyn while loop; `n <= 0` never enters it.
#[test]
#[augur::staged]
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
#[augur::staged]
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
#[augur::staged]
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
#[augur::staged]
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
#[augur::staged]
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
#[augur::staged]
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
#[augur::staged]
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
#[augur::staged]
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

/// Annotations: a pragma before a loop and a plain comment appear in the C.
#[test]
#[augur::staged]
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

/// `i < n && p[i] != 0` as a loop condition: the load is guarded, so the
/// interpreter never reads past `n`.
#[test]
#[augur::staged]
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
#[augur::staged]
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
#[augur::staged]
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
#[augur::staged]
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
#[augur::staged]
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
