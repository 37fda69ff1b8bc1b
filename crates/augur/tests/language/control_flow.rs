//! Dyn branches: if/else chains, nesting, `&&`/`||` between decisions,
//! early returns, helpers called from several places.

use crate::common;

use augur::Dyn;
use common::{assert_contains, check, count};

const INPUTS: [(i32, i32); 8] = [
    (0, 0),
    (-1, 1),
    (1, -1),
    (5, 5),
    (9, 10),
    (10, 9),
    (i32::MIN, i32::MAX),
    (i32::MAX, i32::MIN),
];

/// An if / else-if / else chain of four outcomes.
#[test]
#[augur::staged]
fn if_else_chain() {
    let ex = check(
        "classify",
        |x: Dyn<i32>| {
            let r = Dyn::new(0);
            if x.lt(0).is_true() {
                r.set(-1);
            } else if x.eq(0).is_true() {
                r.set(0);
            } else if x.lt(10).is_true() {
                r.set(1);
            } else {
                r.set(2);
            }
            r
        },
        |&mut (x,): &mut (i32,)| match x {
            ..=-1 => -1,
            0 => 0,
            1..=9 => 1,
            _ => 2,
        },
        &[(i32::MIN,), (-1,), (0,), (1,), (9,), (10,), (i32::MAX,)],
    );
    assert_eq!(count(&ex.c_code(), "if ("), 3, "{}", ex.c_code());
}

/// Ifs nested three deep on two parameters.
#[test]
#[augur::staged]
fn nested_ifs() {
    check(
        "nested",
        |x: Dyn<i32>, y: Dyn<i32>| {
            let r = Dyn::new(0);
            if x.ge(0).is_true() {
                if y.ge(0).is_true() {
                    if x.gt(y).is_true() {
                        r.set(1);
                    } else {
                        r.set(2);
                    }
                } else {
                    r.set(3);
                }
            } else if y.ge(0).is_true() {
                r.set(4);
            } else {
                r.set(5);
            }
            r
        },
        |&mut (x, y): &mut (i32, i32)| match (x >= 0, y >= 0) {
            (true, true) if x > y => 1,
            (true, true) => 2,
            (true, false) => 3,
            (false, true) => 4,
            (false, false) => 5,
        },
        &INPUTS,
    );
}

/// An if without else, then code after it that both paths share.
#[test]
#[augur::staged]
fn if_without_else_joins() {
    let ex = check(
        "join",
        |x: Dyn<i32>| {
            let r = Dyn::new(x);
            if x.lt(0).is_true() {
                r.set(0 - x);
            }
            r.set(r * 2 + 1);
            r
        },
        |&mut (x,): &mut (i32,)| x.wrapping_abs().wrapping_mul(2).wrapping_add(1),
        &[(0,), (-3,), (3,), (i32::MIN,), (100,)],
    );
    // The shared tail is emitted once, after the if.
    assert_eq!(count(&ex.c_code(), "* 2 + 1"), 1, "{}", ex.c_code());
}

/// `&&` between two `is_true()` decisions short-circuits in the first
/// stage and gives nested branches.
#[test]
#[augur::staged]
fn and_between_decisions() {
    check(
        "and",
        |x: Dyn<i32>, y: Dyn<i32>| {
            let r = Dyn::new(0);
            if x.gt(0).is_true() && y.gt(0).is_true() {
                r.set(r + 1);
            }
            if !x.lt(y).is_true() && y.ne(1).is_true() {
                r.set(r + 100);
            }
            r
        },
        |&mut (x, y): &mut (i32, i32)| {
            let mut r = 0;
            if x > 0 && y > 0 {
                r += 1;
            }
            if x >= y && y != 1 {
                r += 100;
            }
            r
        },
        &INPUTS,
    );
}

/// `||` between two `is_true()` decisions: the shared then-block is
/// reached from two decisions.
#[test]
#[augur::staged]
fn or_between_decisions() {
    check(
        "or",
        |x: Dyn<i32>, y: Dyn<i32>| {
            let r = Dyn::new(0);
            if x.eq(0).is_true() || y.eq(0).is_true() {
                r.set(r + 10);
            }
            r
        },
        |&mut (x, y): &mut (i32, i32)| if x == 0 || y == 0 { 10 } else { 0 },
        &INPUTS,
    );
}

/// `return` from inside a dyn if ends the generated function there.
#[test]
#[augur::staged]
fn early_return_from_if() {
    check(
        "early",
        |x: Dyn<i32>, y: Dyn<i32>| {
            if x.lt(0).is_true() {
                return y;
            }
            let r = Dyn::new(x);
            if y.lt(0).is_true() {
                return r - y;
            }
            r + y
        },
        |&mut (x, y): &mut (i32, i32)| {
            if x < 0 {
                y
            } else if y < 0 {
                x.wrapping_sub(y)
            } else {
                x.wrapping_add(y)
            }
        },
        &INPUTS,
    );
}

/// A helper with a dyn branch, called from two places, gives two distinct
/// branches in the C (its operations are tagged by call path).
#[test]
#[augur::staged]
fn helper_called_twice() {
    #[augur::staged]
    fn clamp_add(acc: Dyn<i32>, v: Dyn<i32>, limit: i32) {
        if (acc + v).gt(limit).is_true() {
            acc.set(limit);
        } else {
            acc.set(acc + v);
        }
    }
    let ex = check(
        "helper",
        |x: Dyn<i32>, y: Dyn<i32>| {
            let acc = Dyn::new(0);
            clamp_add(acc, x, 100);
            clamp_add(acc, y, 150);
            acc
        },
        |&mut (x, y): &mut (i32, i32)| {
            let a = if x > 100 { 100 } else { x };
            if a + y > 150 {
                150
            } else {
                a + y
            }
        },
        &[(0, 0), (50, 50), (120, 10), (120, 40), (-5, 200), (100, 50)],
    );
    let code = ex.c_code();
    assert_eq!(count(&code, "if ("), 2, "{code}");
    assert_contains(&code, &["> 100", "> 150"]);
}

/// A `Dyn<bool>` parameter drives a branch directly.
#[test]
#[augur::staged]
fn bool_parameter_branch() {
    check(
        "flag",
        |b: Dyn<bool>, x: Dyn<f64>| {
            let r = Dyn::new(x);
            if b.is_true() {
                r.set(r * 2.0);
            } else {
                r.set(-r);
            }
            r
        },
        |&mut (b, x): &mut (bool, f64)| if b { x * 2.0 } else { -x },
        &[
            (true, 1.5),
            (false, 1.5),
            (true, -0.0),
            (false, 0.0),
            (true, 1e308),
        ],
    );
}

/// A void function: only its effect through a pointer is visible.
#[test]
#[augur::staged]
fn void_function_with_branches() {
    use common::Buf;
    check(
        "store_sign",
        |p: Dyn<*mut i32>, x: Dyn<i32>| {
            if x.lt(0).is_true() {
                p.deref().set(-1);
            } else if x.gt(0).is_true() {
                p.deref().set(1);
            }
        },
        |(p, x): &mut (Buf<i32>, i32)| {
            if *x < 0 {
                p.0[0] = -1;
            } else if *x > 0 {
                p.0[0] = 1;
            }
        },
        &[
            (Buf(vec![7]), 0),
            (Buf(vec![7]), -4),
            (Buf(vec![7]), 4),
            (Buf(vec![0]), i32::MIN),
            (Buf(vec![0]), i32::MAX),
        ],
    );
}

/// Negated and else-side float conditions stay correct for NaN: the
/// negation of `x < y` is not `x >= y`.
#[test]
#[augur::staged]
fn negated_float_conditions_with_nan() {
    check(
        "nan_not",
        |x: Dyn<f64>, y: Dyn<f64>| {
            let r = Dyn::new(0);
            if !x.lt(y).is_true() {
                r.set(r + 1);
            }
            if x.le(y).is_true() {
            } else {
                r.set(r + 10);
            }
            if !x.eq(y).is_true() {
                r.set(r + 100);
            }
            r
        },
        |&mut (x, y): &mut (f64, f64)| {
            (1 - (x < y) as i32) + (1 - (x <= y) as i32) * 10 + (x != y) as i32 * 100
        },
        &[
            (f64::NAN, 1.0),
            (1.0, f64::NAN),
            (0.0, 1.0),
            (1.0, 0.0),
            (2.0, 2.0),
        ],
    );
}

/// A dyn loop in each arm of a dyn if.
#[test]
#[augur::staged]
fn loops_in_both_arms() {
    check(
        "arms",
        |n: Dyn<i32>, m: Dyn<i32>, t: Dyn<i32>| {
            let s = Dyn::new(0);
            let i = Dyn::new(0);
            if t.gt(3).is_true() {
                while i.lt(n).is_true() {
                    s.set(s + i);
                    i.set(i + 1);
                }
            } else {
                while i.lt(m).is_true() {
                    s.set(s - i);
                    i.set(i + 2);
                }
            }
            s * 10 + i
        },
        |&mut (n, m, t): &mut (i32, i32, i32)| {
            let (mut s, mut i) = (0, 0);
            if t > 3 {
                while i < n {
                    s += i;
                    i += 1;
                }
            } else {
                while i < m {
                    s -= i;
                    i += 2;
                }
            }
            s * 10 + i
        },
        &IN3,
    );
}

const IN3: [(i32, i32, i32); 7] = [
    (0, 0, 0),
    (1, 1, 1),
    (3, 4, 5),
    (5, 3, 7),
    (10, 10, 30),
    (-1, 5, 2),
    (6, 6, 0),
];

/// A while condition computed by a block with a dyn branch in it.
#[test]
#[augur::staged]
fn loop_condition_with_a_branch() {
    check(
        "cond_branch",
        |n: Dyn<i32>, m: Dyn<i32>, t: Dyn<i32>| {
            let s = Dyn::new(0);
            let i = Dyn::new(0);
            while {
                let c = Dyn::new(false);
                if (i & 1).eq(0).is_true() {
                    c.set(i.lt(n));
                } else {
                    c.set(i.lt(m));
                }
                c
            }
            .is_true()
            {
                s.set(s + t);
                i.set(i + 1);
            }
            s * 100 + i
        },
        |&mut (n, m, t): &mut (i32, i32, i32)| {
            let (mut s, mut i) = (0, 0);
            while if i & 1 == 0 { i < n } else { i < m } {
                s += t;
                i += 1;
            }
            s * 100 + i
        },
        &IN3,
    );
}

/// A loop left by its condition, by `break` and by `return`: the two exits
/// to the code after the loop must share it, the return stays inside.
#[test]
#[augur::staged]
fn loop_with_break_and_return() {
    check(
        "brk_ret",
        |n: Dyn<i32>, m: Dyn<i32>| {
            let i = Dyn::new(0);
            while i.lt(n).is_true() {
                i.set(i + 1);
                if i.eq(m).is_true() {
                    break;
                }
                if i.eq(7).is_true() {
                    return i * 2;
                }
            }
            i
        },
        |&mut (n, m): &mut (i32, i32)| {
            let mut i = 0;
            while i < n {
                i += 1;
                if i == m {
                    break;
                }
                if i == 7 {
                    return i * 2;
                }
            }
            i
        },
        &INPUTS[..6],
    );
}

/// `break 'outer` from an inner dyn loop leaves both loops.
#[test]
#[augur::staged]
fn labeled_break_out_of_two_loops() {
    check(
        "labeled_break",
        |n: Dyn<i32>, m: Dyn<i32>, t: Dyn<i32>| {
            let s = Dyn::new(0);
            let i = Dyn::new(0);
            'outer: while i.lt(n).is_true() {
                i.set(i + 1);
                let j = Dyn::new(0);
                while j.lt(m).is_true() {
                    j.set(j + 1);
                    if (i + j).gt(t).is_true() {
                        break 'outer;
                    }
                    s.set(s + 1);
                }
                s.set(s + 1000);
            }
            s
        },
        |&mut (n, m, t): &mut (i32, i32, i32)| {
            let mut s = 0;
            'outer: for i in 1..=n {
                for j in 1..=m {
                    if i + j > t {
                        break 'outer;
                    }
                    s += 1;
                }
                s += 1000;
            }
            s
        },
        &IN3,
    );
}

/// `continue 'outer` from an inner dyn loop.
#[test]
#[augur::staged]
fn labeled_continue() {
    check(
        "labeled_continue",
        |n: Dyn<i32>, m: Dyn<i32>, t: Dyn<i32>| {
            let s = Dyn::new(0);
            let i = Dyn::new(0);
            'outer: while i.lt(n).is_true() {
                i.set(i + 1);
                let j = Dyn::new(0);
                while j.lt(m).is_true() {
                    j.set(j + 1);
                    if (i + j).gt(t).is_true() {
                        continue 'outer;
                    }
                    s.set(s + 1);
                }
                s.set(s + 1000);
            }
            s
        },
        |&mut (n, m, t): &mut (i32, i32, i32)| {
            let mut s = 0;
            'outer: for i in 1..=n {
                for j in 1..=m {
                    if i + j > t {
                        continue 'outer;
                    }
                    s += 1;
                }
                s += 1000;
            }
            s
        },
        &IN3,
    );
}
