//! The expression zoo: every operator on every scalar type, literals on
//! either side, unary operators, casts and `Dyn::select`.

use crate::common;

use augur::Dyn;
use common::{assert_contains, check};

/// Integer operators on one type: `+ - * & | ^ !` and shifts, with a
/// literal on either side; the reference wraps like `-fwrapv` C.
macro_rules! int_zoo {
    ($name:ident, $t:ty, $inputs:expr) => {
        #[test]
        fn $name() {
            check(
                stringify!($name),
                |x: Dyn<$t>, y: Dyn<$t>| {
                    let a = (x + y) * x - y * 3;
                    let b = (x & y) | (x ^ 5) | (3 & y);
                    let c = !x ^ (y | 9);
                    let d = (x << 2) ^ (y >> 1) ^ ((1 as $t) << (y & 3));
                    a ^ b ^ c ^ d ^ (7 - x) ^ (2 * y)
                },
                |&mut (x, y): &mut ($t, $t)| {
                    let a = x
                        .wrapping_add(y)
                        .wrapping_mul(x)
                        .wrapping_sub(y.wrapping_mul(3));
                    let b = (x & y) | (x ^ 5) | (3 & y);
                    let c = !x ^ (y | 9);
                    let d = x.wrapping_shl(2) ^ (y >> 1) ^ ((1 as $t) << (y & 3));
                    a ^ b ^ c ^ d ^ (7 as $t).wrapping_sub(x) ^ (2 as $t).wrapping_mul(y)
                },
                &$inputs,
            );
        }
    };
}

int_zoo!(
    zoo_i8,
    i8,
    [(0, 0), (1, -1), (-128, 127), (127, 1), (-7, 3), (45, -100)]
);
int_zoo!(
    zoo_i16,
    i16,
    [(0, 0), (-1, 1), (i16::MIN, i16::MAX), (300, -2), (1234, 77)]
);
int_zoo!(
    zoo_i32,
    i32,
    [
        (0, 0),
        (-1, 1),
        (i32::MIN, i32::MAX),
        (65536, 3),
        (-99999, 12345)
    ]
);
int_zoo!(
    zoo_i64,
    i64,
    [
        (0, 0),
        (-1, 1),
        (i64::MIN, i64::MAX),
        (1 << 40, -3),
        (-5, 9)
    ]
);
int_zoo!(
    zoo_u8,
    u8,
    [(0, 0), (1, 255), (255, 255), (128, 2), (17, 200)]
);
int_zoo!(
    zoo_u16,
    u16,
    [(0, 0), (1, u16::MAX), (u16::MAX, 2), (40000, 300), (7, 8)]
);
int_zoo!(
    zoo_u32,
    u32,
    [
        (0, 0),
        (1, u32::MAX),
        (u32::MAX, u32::MAX),
        (1 << 31, 5),
        (99, 3)
    ]
);
int_zoo!(
    zoo_u64,
    u64,
    [
        (0, 0),
        (1, u64::MAX),
        (u64::MAX, 2),
        (1 << 63, 11),
        (12, 13)
    ]
);

/// Division and remainder truncate toward zero, on signed and unsigned
/// types, with literals on both sides.
#[test]
#[augur::staged]
fn division_and_remainder() {
    check(
        "divrem",
        |x: Dyn<i32>, y: Dyn<i32>| x / y + x % y * 1000 + 100 / y - (x % 7) + 1000 % y,
        |&mut (x, y): &mut (i32, i32)| x / y + x % y * 1000 + 100 / y - (x % 7) + 1000 % y,
        &[
            (7, 2),
            (-7, 2),
            (7, -2),
            (-7, -2),
            (0, 5),
            (1 << 20, 3),
            (-1, 1),
        ],
    );
    check(
        "udivrem",
        |x: Dyn<u64>, y: Dyn<u64>| x / y * 10 + x % y + 77 / y,
        |&mut (x, y): &mut (u64, u64)| (x / y).wrapping_mul(10) + x % y + 77 / y,
        &[(7, 2), (u64::MAX, 3), (0, 1), (5, 9), (1 << 63, 1 << 62)],
    );
}

/// `i8` division by -1 of -128 wraps back to -128 (promotion to int).
#[test]
#[augur::staged]
fn narrow_division_wraps() {
    check(
        "div8",
        |x: Dyn<i8>, y: Dyn<i8>| x / y + x % y,
        |&mut (x, y): &mut (i8, i8)| x.wrapping_div(y).wrapping_add(x.wrapping_rem(y)),
        &[(-128, -1), (127, -1), (-7, 2), (0, 3), (100, 7)],
    );
}

/// Narrow results wrap at their own width even when the C compiler would
/// promote them: `(x + y) < z` on `u8` compares the wrapped sum.
#[test]
#[augur::staged]
fn narrow_arithmetic_wraps_before_comparison() {
    check(
        "wrap8",
        |x: Dyn<u8>, y: Dyn<u8>, z: Dyn<u8>| Dyn::select((x + y).lt(z), 1i32, 0i32),
        |&mut (x, y, z): &mut (u8, u8, u8)| (x.wrapping_add(y) < z) as i32,
        &[
            (200, 100, 50),
            (1, 2, 4),
            (255, 1, 1),
            (0, 0, 0),
            (128, 128, 1),
        ],
    );
}

/// A narrow shifted value keeps only its own bits: `(x << 4) >> 4` on
/// `u16` clears the top nibble.
#[test]
#[augur::staged]
fn narrow_shift_truncates() {
    check(
        "shift16",
        |x: Dyn<u16>| (x << 4) >> 4,
        |&mut (x,): &mut (u16,)| (x << 4) >> 4,
        &[(0,), (0xffff,), (0x1234,), (0xf000,), (1,)],
    );
}

/// Comparisons on every operator produce one bit each.
#[test]
#[augur::staged]
fn comparisons() {
    check(
        "cmp",
        |x: Dyn<i64>, y: Dyn<i64>| {
            let bit = |c: Dyn<bool>, k: i32| Dyn::select(c, k, 0);
            bit(x.lt(y), 1)
                | bit(x.le(y), 2)
                | bit(x.gt(y), 4)
                | bit(x.ge(y), 8)
                | bit(x.eq(y), 16)
                | bit(x.ne(y), 32)
                | bit(x.lt(0), 64)
                | bit(x.eq(i64::MIN), 128)
        },
        |&mut (x, y): &mut (i64, i64)| {
            (x < y) as i32
                + (x <= y) as i32 * 2
                + (x > y) as i32 * 4
                + (x >= y) as i32 * 8
                + (x == y) as i32 * 16
                + (x != y) as i32 * 32
                + (x < 0) as i32 * 64
                + (x == i64::MIN) as i32 * 128
        },
        &[
            (0, 0),
            (-1, 1),
            (1, -1),
            (i64::MIN, i64::MAX),
            (i64::MAX, i64::MAX),
        ],
    );
}

/// Unsigned comparisons are unsigned: `u32::MAX > 1`.
#[test]
#[augur::staged]
fn unsigned_comparisons() {
    check(
        "ucmp",
        |x: Dyn<u32>, y: Dyn<u32>| Dyn::select(x.gt(y), x - y, y - x),
        |&mut (x, y): &mut (u32, u32)| x.abs_diff(y),
        &[(u32::MAX, 1), (1, u32::MAX), (0, 0), (1 << 31, 0), (5, 6)],
    );
}

/// `f64` arithmetic, unary minus, literals on the left.
#[test]
#[augur::staged]
fn floats_f64() {
    check(
        "f64ops",
        |x: Dyn<f64>, y: Dyn<f64>| -(x * y) + 1.5 - x / 4.0 + 2.0 / y - (0.1 + x) * 3.0,
        |&mut (x, y): &mut (f64, f64)| -(x * y) + 1.5 - x / 4.0 + 2.0 / y - (0.1 + x) * 3.0,
        &[
            (0.0, 1.0),
            (-1.5, 2.25),
            (1e300, 1e-300),
            (-0.0, -3.0),
            (3.7, 1e10),
        ],
    );
}

/// `f32` arithmetic keeps single precision (0.1f32 is not 0.1).
#[test]
#[augur::staged]
fn floats_f32() {
    check(
        "f32ops",
        |x: Dyn<f32>, y: Dyn<f32>| (x + 0.1) * y - 1.0 / (y * y + 1.0) + -x,
        |&mut (x, y): &mut (f32, f32)| (x + 0.1) * y - 1.0 / (y * y + 1.0) + -x,
        &[
            (0.0, 0.0),
            (1.0, 3.0),
            (-2.5, 0.3),
            (1e20, 1e-20),
            (16777216.0, 1.0),
        ],
    );
}

/// Float comparisons, including `-0.0 == 0.0`.
#[test]
#[augur::staged]
fn float_comparisons() {
    check(
        "fcmp",
        |x: Dyn<f32>, y: Dyn<f32>| {
            Dyn::select(x.lt(y), 1, 0)
                + Dyn::select(x.eq(y), 10, 0)
                + Dyn::select(x.ge(0.5), 100, 0)
        },
        |&mut (x, y): &mut (f32, f32)| {
            (x < y) as i32 + (x == y) as i32 * 10 + (x >= 0.5) as i32 * 100
        },
        &[
            (0.0, -0.0),
            (1.0, 2.0),
            (2.0, 1.0),
            (0.5, 0.5),
            (-1e30, 1e30),
        ],
    );
}

/// `bool` operators: `& | ^ !`, `and`/`or`, comparisons of bools.
#[test]
#[augur::staged]
fn booleans() {
    check(
        "bools",
        |a: Dyn<bool>, b: Dyn<bool>| {
            let c = (a & !b) | (b ^ true);
            let d = a.and(b).or(!a & false);
            (c ^ d) | a.eq(b) & (a.ne(c) | true)
        },
        |&mut (a, b): &mut (bool, bool)| {
            let c = (a & !b) | (b ^ true);
            let d = a && b;
            (c ^ d) | ((a == b) & ((a != c) | true))
        },
        &[
            (false, false),
            (false, true),
            (true, false),
            (true, true),
            (true, true),
        ],
    );
}

/// Unary minus on signed types wraps at the minimum; `!` is `~` on ints.
#[test]
#[augur::staged]
fn unary_operators() {
    check(
        "unary",
        |x: Dyn<i16>, y: Dyn<i64>| (-x).cast::<i64>() + -y + (!x).cast::<i64>() * 1000,
        |&mut (x, y): &mut (i16, i64)| {
            (x.wrapping_neg() as i64).wrapping_add(y.wrapping_neg()) + (!x as i64) * 1000
        },
        &[
            (0, 0),
            (i16::MIN, 1),
            (i16::MAX, i64::MIN),
            (-5, -6),
            (7, 8),
        ],
    );
}

/// Unary minus and `~` on `i32` and `i64` wrap at the minimum.
#[test]
#[augur::staged]
fn unary_operators_wide() {
    check(
        "unary_wide",
        |x: Dyn<i32>, y: Dyn<i64>| (-x).cast::<i64>() + -y + (!x).cast::<i64>() * 1000,
        |&mut (x, y): &mut (i32, i64)| {
            (x.wrapping_neg() as i64).wrapping_add(y.wrapping_neg()) + (!x as i64) * 1000
        },
        &[
            (0, 0),
            (i32::MIN, 1),
            (i32::MAX, i64::MIN),
            (-5, -6),
            (7, 8),
        ],
    );
}

/// Casts: truncation, sign and zero extension, int/float, bool to int.
#[test]
#[augur::staged]
fn casts() {
    check(
        "casts",
        |x: Dyn<i32>, f: Dyn<f64>| {
            let a = x.cast::<u8>().cast::<i64>();
            let b = x.cast::<i8>().cast::<i64>() * 1000;
            let c = x.cast::<u64>().cast::<u32>().cast::<i64>() * 7;
            let d = f.cast::<i32>().cast::<i64>();
            let e = x.cast::<f32>().cast::<f64>().cast::<i64>();
            let g = x.gt(0).cast::<i64>() * 3;
            let h = x.cast::<i8>().cast::<u64>().cast::<i64>();
            a + b + c + d + e + g + h + f.cast::<f32>().cast::<i64>()
        },
        |&mut (x, f): &mut (i32, f64)| {
            let a = x as u8 as i64;
            let b = x as i8 as i64 * 1000;
            let c = x as u64 as u32 as i64 * 7;
            let d = f as i32 as i64;
            let e = x as f32 as f64 as i64;
            let g = (x > 0) as i64 * 3;
            let h = x as i8 as u64 as i64;
            a + b + c + d + e + g + h + (f as f32) as i64
        },
        &[
            (0, 0.0),
            (-1, -1.9),
            (300, 2.5),
            (i32::MIN, 1e9),
            (16777217, -7.99),
            (i32::MAX, 0.5),
        ],
    );
}

/// `Dyn::select` with variables and literals in each position.
#[test]
#[augur::staged]
fn select() {
    check(
        "sel",
        |x: Dyn<i32>, y: Dyn<i32>| {
            let m = Dyn::select(x.gt(y), x, y);
            let k = Dyn::select(x.lt(0), -1, 1);
            let t = Dyn::select(true, m, 0);
            m * 100 + k + Dyn::select(y.eq(3), 7, y) + t
        },
        |&mut (x, y): &mut (i32, i32)| {
            let m = x.max(y);
            m * 100 + if x < 0 { -1 } else { 1 } + if y == 3 { 7 } else { y } + m
        },
        &[(0, 0), (1, 3), (-5, 2), (9, -9), (3, 3)],
    );
}

/// Compound assignment operators on a declared variable.
#[test]
#[augur::staged]
fn compound_assignment() {
    check(
        "compound",
        |x: Dyn<i32>, y: Dyn<i32>| {
            let mut r = Dyn::new(x);
            r += y;
            r *= 3;
            r -= x;
            r /= 2;
            r %= 1000;
            r <<= 2;
            r >>= 1;
            r &= 0xfff;
            r |= y & 1;
            r ^= 0x55;
            r
        },
        |&mut (x, y): &mut (i32, i32)| {
            let mut r = x.wrapping_add(y);
            r = r.wrapping_mul(3);
            r = r.wrapping_sub(x);
            r /= 2;
            r %= 1000;
            r <<= 2;
            r >>= 1;
            r &= 0xfff;
            r |= y & 1;
            r ^= 0x55;
            r
        },
        &[(0, 0), (1, 2), (-100, 7), (12345, -678), (1 << 28, 1 << 28)],
    );
}

/// `Dyn::lit` and `Dyn::named` give constants and named variables.
#[test]
#[augur::staged]
fn literals_and_names() {
    let ex = check(
        "lits",
        |x: Dyn<u32>| {
            let acc = Dyn::named("acc", Dyn::lit(40u32));
            acc.set(acc + x);
            acc + 0xffff_ffff
        },
        |&mut (x,): &mut (u32,)| 40u32.wrapping_add(x).wrapping_add(0xffff_ffff),
        &[(0,), (1,), (2,), (u32::MAX,), (1000,)],
    );
    assert_contains(&ex.c_code(), &["uint32_t acc", "4294967295u"]);
}

/// A parameter named with `.name("x")` is called `x` in the C.
#[test]
#[augur::staged]
fn named_parameter() {
    let ex = check(
        "named",
        |x: Dyn<i32>, y: Dyn<i32>| {
            let x = x.name("x");
            let y = y.name("count");
            x * 2 + y
        },
        |&mut (x, y): &mut (i32, i32)| x.wrapping_mul(2).wrapping_add(y),
        &[(0, 0), (1, 1), (-1, 5), (i32::MAX, 1), (100, -100)],
    );
    assert_contains(
        &ex.c_code(),
        &["int32_t x", "int32_t count", "x * 2 + count"],
    );
}

/// Infinities, NaN, subnormals and extreme constants print as valid C
/// (`INFINITY`, `NAN`, `5e-324`) and keep their values.
#[test]
#[augur::staged]
fn special_float_constants() {
    let ex = check(
        "special",
        |x: Dyn<f64>, y: Dyn<f32>| {
            Dyn::select(x.gt(1e300), f64::INFINITY, x)
                + Dyn::select(x.lt(-1e300), f64::NEG_INFINITY, 0.0)
                + y.cast::<f64>() * 1e-320
                + (y * f32::MIN_POSITIVE).cast::<f64>()
                + f64::MAX * 0.5
                + 5e-324
        },
        |&mut (x, y): &mut (f64, f32)| {
            (if x > 1e300 { f64::INFINITY } else { x })
                + (if x < -1e300 { f64::NEG_INFINITY } else { 0.0 })
                + y as f64 * 1e-320
                + (y * f32::MIN_POSITIVE) as f64
                + f64::MAX * 0.5
                + 5e-324
        },
        &[
            (0.0, 0.0),
            (f64::MAX, 1.0),
            (f64::MIN, -1.0),
            (1.0, f32::MAX),
            (-0.0, 1e-40),
        ],
    );
    assert_contains(&ex.c_code(), &["#include <math.h>", "INFINITY", "5e-324"]);
    check(
        "nan_const",
        |x: Dyn<f32>| Dyn::select(x.ne(x), 1.0f32, f32::NAN),
        |&mut (x,): &mut (f32,)| if x.is_nan() { 1.0 } else { f32::NAN },
        &[(0.0,), (f32::NAN,), (1.0,), (f32::INFINITY,), (-1.0,)],
    );
}

/// `u64` and `f64` conversions near 2^53 and 2^63, and 64-bit shifts by 63.
#[test]
#[augur::staged]
fn wide_unsigned_float_casts() {
    check(
        "wide_casts",
        |x: Dyn<u64>, f: Dyn<f64>| {
            x.cast::<f64>().cast::<u64>()
                ^ f.cast::<u64>()
                ^ x.cast::<f32>().cast::<f64>().cast::<u64>()
                ^ (x >> 63)
                ^ (x << 63)
        },
        |&mut (x, f): &mut (u64, f64)| {
            (x as f64 as u64) ^ (f as u64) ^ (x as f32 as f64 as u64) ^ (x >> 63) ^ (x << 63)
        },
        &[
            (0, 0.0),
            (u64::MAX >> 1, 9.3e18),
            (1 << 63, 1.8e19),
            (12345, 0.5),
            ((1 << 53) + 1, 9007199254740993.0),
            (u64::MAX >> 2, 1e19),
        ],
    );
}

/// Narrow types shift as Rust's do: the count is masked to the type's
/// width (`u8 << 9` is `u8 << 1`, `i8 >> 9` is `i8 >> 1`).
#[test]
#[augur::staged]
fn narrow_shift_past_width() {
    check(
        "nshift",
        |x: Dyn<u8>, y: Dyn<i8>| {
            (x << 9).cast::<i32>()
                + (y >> 9).cast::<i32>() * 10
                + (x >> 7).cast::<i32>() * 100
                + (y << 7).cast::<i32>() * 1000
        },
        |&mut (x, y): &mut (u8, i8)| {
            x.wrapping_shl(9) as i32
                + y.wrapping_shr(9) as i32 * 10
                + (x >> 7) as i32 * 100
                + (y << 7) as i32 * 1000
        },
        &[(0, 0), (255, -1), (128, -128), (1, 1), (77, 127)],
    );
}

/// Variable names that are C keywords, clash with a called extern, repeat
/// or are not identifiers are renamed; a function may be named like a
/// generated variable.
#[test]
#[augur::staged]
fn reserved_and_clashing_names() {
    let ex = check(
        "names",
        |x: Dyn<i32>| {
            let a = Dyn::named("int", x);
            let b = Dyn::named("abs", a + 1);
            let c = Dyn::named("my var!", b);
            let d = Dyn::named("x", c);
            let e = Dyn::named("x", d);
            augur::libc::ABS.call(e) + a + b + c
        },
        |&mut (x,): &mut (i32,)| (x + 1).abs() + x + 2 * (x + 1),
        &[(0,), (1,), (-5,), (7,), (-100,)],
    );
    assert_contains(&ex.c_code(), &["abs(", "int32_t x ="]);
    common::assert_lacks(&ex.c_code(), &["int32_t int ", "int32_t abs ", "my var!"]);
    check(
        "var0",
        |x: Dyn<i32>| {
            let v = Dyn::new(x);
            v.set(v * 2);
            v + 1
        },
        |&mut (x,): &mut (i32,)| 2 * x + 1,
        &[(0,), (1,), (-5,), (7,), (100,)],
    );
}
