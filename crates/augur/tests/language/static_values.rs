//! First-stage state: `augur::range` and `Static` counters unroll, static
//! exponents specialise, recursion over a static depth, configuration
//! captured by the closure.

use crate::common;

use augur::{range, Dyn, Static};
use common::{assert_lacks, check, count};

/// `range(0..4)` around a dyn branch unrolls into four ifs.
#[test]
#[augur::staged]
fn range_unrolls_with_branches() {
    let ex = check(
        "steps",
        |x: Dyn<i32>| {
            let r = Dyn::new(0);
            for k in range(0..4) {
                if x.gt(k * 10).is_true() {
                    r.set(r + k + 1);
                }
            }
            r
        },
        |&mut (x,): &mut (i32,)| (0..4).filter(|k| x > k * 10).map(|k| k + 1).sum::<i32>(),
        &[(i32::MIN,), (0,), (1,), (11,), (25,), (31,), (i32::MAX,)],
    );
    let code = ex.c_code();
    assert_eq!(count(&code, "if ("), 4, "{code}");
    assert_lacks(&code, &["while (", "for ("]);
}

/// A `Static` counter in a plain `while` around straight-line code.
#[test]
#[augur::staged]
fn static_counter_unrolls() {
    let ex = check(
        "quad",
        |x: Dyn<i64>| {
            let r = Dyn::new(x);
            let mut s = Static::new(0u8);
            while *s < 5 {
                if (r & 1).eq(1).is_true() {
                    r.set(r * 3 + 1);
                } else {
                    r.set(r / 2);
                }
                s += 1;
            }
            r
        },
        |&mut (x,): &mut (i64,)| {
            let mut r = x;
            for _ in 0..5 {
                r = if r & 1 == 1 {
                    r.wrapping_mul(3) + 1
                } else {
                    r / 2
                };
            }
            r
        },
        &[(0,), (1,), (7,), (-9,), (1 << 50,), (27,)],
    );
    assert_eq!(count(&ex.c_code(), "if ("), 5, "{}", ex.c_code());
}

/// `x^e` by repeated squaring over a static exponent: straight-line
/// multiplications, a different program for each exponent.
#[augur::staged]
fn power(x: Dyn<i64>, exp: u32) -> Dyn<i64> {
    let r = Dyn::new(1i64);
    let b = Dyn::new(x);
    let mut e = Static::new(exp);
    while *e > 0 {
        if *e & 1 == 1 {
            r.set(r * b);
        }
        e.set(*e >> 1);
        if *e > 0 {
            b.set(b * b);
        }
    }
    r
}

#[test]
#[augur::staged]
fn power_with_static_exponent() {
    for exp in [0u32, 1, 2, 7, 13, 16, 63] {
        let ex = check(
            &format!("pow{exp}"),
            move |x: Dyn<i64>| power(x, exp),
            move |&mut (x,): &mut (i64,)| x.wrapping_pow(exp),
            &[(0,), (1,), (-1,), (2,), (3,), (-7,), (i64::MAX,)],
        );
        let code = ex.c_code();
        assert_lacks(&code, &["if (", "while (", "for ("]);
        // Squarings plus multiplications into r: at most 2 * log2(e) + 1.
        let muls = count(&code, " * ");
        assert!(muls <= 2 * (32 - exp.leading_zeros()) as usize, "{code}");
    }
}

/// Recursion whose depth is a `Static`: each level is a distinct program
/// point with its own branch.
#[test]
#[augur::staged]
fn recursion_over_static_depth() {
    #[augur::staged]
    fn walk(x: Dyn<i32>, depth: &Static<u32>) -> Dyn<i32> {
        if **depth == 0 {
            return x;
        }
        let r = Dyn::new(0);
        let next = Static::new(**depth - 1);
        if (x & (1 << **depth)).ne(0).is_true() {
            r.set(walk(x + **depth as i32, &next));
        } else {
            r.set(walk(x * 2, &next));
        }
        r
    }
    #[augur::staged]
    fn reference(x: i32, depth: u32) -> i32 {
        if depth == 0 {
            x
        } else if x & (1 << depth) != 0 {
            reference(x.wrapping_add(depth as i32), depth - 1)
        } else {
            reference(x.wrapping_mul(2), depth - 1)
        }
    }
    let ex = check(
        "walk",
        |x: Dyn<i32>| walk(x, &Static::new(4)),
        |&mut (x,): &mut (i32,)| reference(x, 4),
        &[(0,), (1,), (-1,), (0b10110,), (31,), (i32::MAX,)],
    );
    // A full binary tree of depth 4: 15 branches.
    assert_eq!(count(&ex.c_code(), "if ("), 15, "{}", ex.c_code());
}

/// A dyn loop whose `Static` state repeats at every head closes.
#[test]
#[augur::staged]
fn dyn_loop_with_repeating_static_state() {
    let ex = check(
        "phases",
        |n: Dyn<i32>| {
            let s = Dyn::new(0);
            let i = Dyn::new(0);
            while i.lt(n).is_true() {
                let mut phase = Static::new(0u8);
                while *phase < 3 {
                    s.set(s * 2 + *phase as i32);
                    phase += 1;
                }
                s.set(s % 10007);
                i.set(i + 1);
            }
            s
        },
        |&mut (n,): &mut (i32,)| {
            let mut s = 0;
            for _ in 0..n {
                for p in 0..3 {
                    s = s * 2 + p;
                }
                s %= 10007;
            }
            s
        },
        &[(0,), (1,), (2,), (50,), (-4,)],
    );
    assert_eq!(ex.stats().back_edges, 1);
}

/// `range` around a dyn loop: three distinct loops.
#[test]
#[augur::staged]
fn range_around_dyn_loop() {
    let ex = check(
        "three_loops",
        |n: Dyn<u32>| {
            let s = Dyn::new(0u32);
            for k in range(1u32..4) {
                let i = Dyn::new(0u32);
                while i.lt(n).is_true() {
                    s.set(s + i * k);
                    i.set(i + 1);
                }
            }
            s
        },
        |&mut (n,): &mut (u32,)| (1..4).map(|k| (0..n).map(|i| i * k).sum::<u32>()).sum(),
        &[(0,), (1,), (2,), (10,), (1000,)],
    );
    assert_eq!(ex.stats().back_edges, 3);
}

/// `range` inside a dyn loop, with branches: the body is unrolled, the
/// loop stays a loop.
#[test]
#[augur::staged]
fn range_inside_dyn_loop() {
    check(
        "digits",
        |x: Dyn<u32>| {
            let v = Dyn::new(x);
            let s = Dyn::new(0u32);
            while v.ne(0).is_true() {
                for k in range(0u32..2) {
                    if (v % 10).gt(k * 4).is_true() {
                        s.set(s + 1);
                    }
                }
                v.set(v / 10);
            }
            s
        },
        |&mut (x,): &mut (u32,)| {
            let (mut v, mut s) = (x, 0);
            while v != 0 {
                s += (v % 10 > 0) as u32 + (v % 10 > 4) as u32;
                v /= 10;
            }
            s
        },
        &[(0,), (5,), (90,), (123456789,), (u32::MAX,)],
    );
}

/// A captured first-stage configuration specialises the program.
#[test]
#[augur::staged]
fn captured_configuration() {
    for (scale, clamp) in [(1, false), (3, true), (-2, true)] {
        let ex = check(
            &format!("cfg_{}_{clamp}", scale + 10),
            move |x: Dyn<i32>| {
                let r = Dyn::new(x * scale);
                if clamp && r.gt(100).is_true() {
                    r.set(100);
                }
                r
            },
            move |&mut (x,): &mut (i32,)| {
                let r = x.wrapping_mul(scale);
                if clamp && r > 100 {
                    100
                } else {
                    r
                }
            },
            &[(0,), (1,), (-50,), (50,), (1000,)],
        );
        assert_eq!(ex.c_code().contains("if ("), clamp, "{}", ex.c_code());
    }
}

/// `Static` values compare, update and read like plain values.
#[test]
#[augur::staged]
fn static_api() {
    check(
        "static_api",
        |x: Dyn<i32>| {
            let mut s = Static::new(2i32);
            s *= 3;
            s -= 1;
            s.update(|v| *v += 10);
            let t = s.clone();
            assert!(s == 15 && s > 14 && t.get() == 15);
            s.set(0);
            x + *t + s.get()
        },
        |&mut (x,): &mut (i32,)| x.wrapping_add(15),
        &[(0,), (1,), (-15,), (i32::MAX,), (7,)],
    );
}

/// A `Static` set once inside the inner of two nested dyn loops whose inner
/// counter is declared in the outer body: the outer loop's second turn
/// declares the counter anew (the flag changed, so it is another program
/// point) and reaches the inner head with the same tag but another
/// variable. That is a peeled turn, not a plain Rust loop: the loops must
/// still close.
#[test]
#[augur::staged]
fn static_set_once_in_an_inner_dyn_loop() {
    check(
        "flag_in_inner_loop",
        |n: Dyn<i32>| {
            let mut written = Static::new(false);
            let s = Dyn::new(0);
            let i = Dyn::new(0);
            while i.lt(n).is_true() {
                let j = Dyn::new(0);
                while j.lt(n).is_true() {
                    written.set(true);
                    s.set(s + j);
                    j.set(j + 1);
                }
                i.set(i + 1);
            }
            s
        },
        |&mut (n,): &mut (i32,)| n.max(0) * (0..n.max(0)).sum::<i32>(),
        &[(0,), (1,), (2,), (3,), (7,)],
    );
}

/// Two values of one type whose `Hash` input differs only by a leading
/// zero (`A(1, 0)` writes 0, 1, 0; `B(0)` writes 1, 0): tags must tell
/// them apart, or the run with `B(0)` links to the code `A(1, 0)` recorded
/// and the side of the later branch the link check does not follow is the
/// other state's.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Mode {
    A(u32, u32),
    B(u32),
}

#[augur::staged]
fn mode_after_join(x: Dyn<i32>) -> Dyn<i32> {
    let mut m = Static::new(Mode::B(0));
    if x.gt(0).is_true() {
        m.set(Mode::A(1, 0));
    }
    let r = Dyn::new(0);
    if x.gt(5).is_true() {
        r.set(1);
    } else {
        match m.get() {
            Mode::A(..) => r.set(10),
            Mode::B(_) => r.set(20),
        }
    }
    r
}

fn mode_after_join_rust(x: i32) -> i32 {
    match (x > 0, x > 5) {
        (_, true) => 1,
        (true, false) => 10,
        (false, false) => 20,
    }
}

/// Links taken without a link check, so that equal tags alone decide.
fn unaudited() -> common::Check {
    common::Check {
        builder: augur::Builder::new().link_audit_ops(0),
        ..common::Check::default()
    }
}

#[test]
fn statics_whose_hash_input_differs_by_a_leading_zero_stay_apart() {
    unaudited().run(
        "mode",
        mode_after_join,
        |a: &mut (i32,)| mode_after_join_rust(a.0),
        &[(-3,), (0,), (1,), (5,), (6,), (100,)],
    );
}

/// The same two states in a plain local under `#[augur::staged]`.
#[augur::staged]
fn plain_mode_after_join(x: Dyn<i32>) -> Dyn<i32> {
    let mut m = Mode::B(0);
    if x.gt(0).is_true() {
        m = Mode::A(1, 0);
    }
    let r = Dyn::new(0);
    if x.gt(5).is_true() {
        r.set(1);
    } else {
        match m {
            Mode::A(..) => r.set(10),
            Mode::B(_) => r.set(20),
        }
    }
    r
}

#[test]
fn plain_locals_whose_hash_input_differs_by_a_leading_zero_stay_apart() {
    unaudited().run(
        "plain_mode",
        plain_mode_after_join,
        |a: &mut (i32,)| mode_after_join_rust(a.0),
        &[(-3,), (0,), (1,), (5,), (6,), (100,)],
    );
}
