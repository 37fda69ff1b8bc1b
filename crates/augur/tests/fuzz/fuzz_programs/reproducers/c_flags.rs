//! Valid C that the default compile flags used to reject (warnings made
//! errors by `-Werror`).

use crate::common;
use augur::Dyn;

/// `-Wall -Werror` (the default compile flags) used to turn GCC's
/// `-Wtautological-compare` into errors: `if (arg0 == arg0)` and
/// `if ((arg0 | 8) == 0)` are valid C (and valid staged code). The default
/// flags now keep that warning off.
#[test]
#[augur::staged]
fn c_accepts_tautological_compare() {
    common::check(
        "self_compare",
        |a: Dyn<i32>| {
            let x = Dyn::new(0);
            if a.eq(a).is_true() {
                x.set(1);
            }
            x
        },
        |_: &mut (i32,)| 1,
        &[(0,), (1,), (-1,), (7,), (i32::MIN,)],
    );
    common::check(
        "or_compare",
        |a: Dyn<i32>| {
            let x = Dyn::new(0);
            if (a | 8).eq(0).is_true() {
                x.set(1);
            }
            x
        },
        |_: &mut (i32,)| 0,
        &[(0,), (1,), (-1,), (7,), (i32::MIN,)],
    );
}

/// Constant arithmetic that wraps (`2147483647 + 5`, which `-fwrapv`
/// defines) used to be rejected by `-Werror=overflow`; the C writer keeps
/// such sums valid now.
#[test]
#[augur::staged]
fn c_accepts_constant_overflow() {
    common::check(
        "const_wrap",
        |a: Dyn<i32>| {
            let x = Dyn::new(a);
            x.set(Dyn::lit(i32::MAX) + 5);
            x
        },
        |_: &mut (i32,)| i32::MAX.wrapping_add(5),
        &[(0,), (1,), (-1,), (7,), (i32::MIN,)],
    );
}

/// Found by this test: `INT_MIN * (-1 | x)`, which gcc folds to a constant
/// product that wraps, was rejected by `-Werror=overflow`; `-fwrapv`
/// defines it, and the default flags keep that warning off.
#[test]
#[augur::staged]
fn c_accepts_constant_products_that_wrap() {
    common::check(
        "wrap_mul",
        |a: Dyn<i32>| {
            let x = Dyn::new(a);
            x.set(Dyn::lit(i32::MIN) * (Dyn::lit(-1) | a));
            x
        },
        |_: &mut (i32,)| i32::MIN.wrapping_mul(-1),
        &[(0,), (1,), (-1,), (7,), (i32::MIN,)],
    );
}
