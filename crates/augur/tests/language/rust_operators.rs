//! Integer operators on `Dyn`s mean what Rust's mean, checked against Rust
//! itself, table by table, on C, the JIT and the interpreter:
//!
//! * a shift takes a count of any integer type, `Dyn` or literal, and masks
//!   it to the width of the value shifted: Rust's meaning with overflow
//!   checks off (release builds), which `wrapping_shl` and `wrapping_shr`
//!   compute in any build;
//! * `+ - *`, `-x` and the bit operators wrap at the type's width (Rust's
//!   release meaning, `wrapping_add` ...);
//! * `/` and `%` where Rust gives a value give the same one. Where Rust
//!   panics (a zero divisor, `MIN / -1`), the interpreter reports an error,
//!   but for `MIN / -1` on 8- and 16-bit types, which C computes in `int`
//!   and wraps (`wrapping_div`).

use crate::common::{Buf, Check};
use augur::exec::{Backend, CompileOptions};
use augur::{Builder, Dyn};

/// One check on C, one on the JIT.
fn backends() -> [Check; 2] {
    let jit = CompileOptions::default().with_backend(Backend::Jit);
    [
        Check::default(),
        Check {
            opts: jit,
            ..Check::default()
        },
    ]
}

/// Values at a type's edges and in between.
fn edges<T: Copy>(min: T, max: T, from: impl Fn(i64) -> T) -> Vec<T> {
    let mut v = vec![min, max];
    v.extend([-1, 0, 1, 2, 3, 0x5a, -0x5b, 0x5a5a_5a5a_5a5a_5a5a].map(&from));
    v
}

/// Shift counts around every width, negative and huge ones included, as
/// `from` converts them (wrapping).
fn counts<U: Copy>(from: impl Fn(i64) -> U) -> Vec<U> {
    [
        0,
        1,
        5,
        7,
        8,
        9,
        15,
        16,
        17,
        31,
        32,
        33,
        63,
        64,
        65,
        100,
        255,
        256 + 3,
        -1,
        -8,
        -64,
    ]
    .map(from)
    .to_vec()
}

macro_rules! shift_case {
    ($t:ident, $u:ident) => {{
        let f = |x: Dyn<$t>, c: Dyn<$u>, out: Dyn<*mut $t>| {
            out.at(0).set(x << c);
            out.at(1).set(x >> c);
            let y = Dyn::new(x);
            let mut z = y;
            z <<= c;
            out.at(2).set(z);
            z >>= c;
            out.at(3).set(z);
            out.at(4).set(x << (70i64 as $u));
            out.at(5).set(x >> (-3i64 as $u));
            out.at(6).set((5 as $t) << c);
            out.at(7).set((-100i64 as $t) >> c);
        };
        // `as u32` keeps the low bits the mask reads.
        let rust = |(x, c, out): &mut ($t, $u, Buf<$t>)| {
            let (x, s) = (*x, *c as u32);
            let z = x.wrapping_shl(s);
            out.0 = vec![
                x.wrapping_shl(s),
                x.wrapping_shr(s),
                z,
                z.wrapping_shr(s),
                x.wrapping_shl(70i64 as $u as u32),
                x.wrapping_shr(-3i64 as $u as u32),
                (5 as $t).wrapping_shl(s),
                (-100i64 as $t).wrapping_shr(s),
            ];
        };
        let mut inputs = Vec::new();
        for x in edges($t::MIN, $t::MAX, |v| v as $t) {
            for c in counts(|v| v as $u) {
                inputs.push((x, c, Buf(vec![0 as $t; 8])));
            }
        }
        let name = concat!("shift_", stringify!($t), "_by_", stringify!($u));
        for check in backends() {
            check.run(name, f, rust, &inputs);
        }
    }};
}

macro_rules! shifts_of {
    ($($t:ident),*) => {$(
        shift_case!($t, i8);
        shift_case!($t, i16);
        shift_case!($t, i32);
        shift_case!($t, i64);
        shift_case!($t, u8);
        shift_case!($t, u16);
        shift_case!($t, u32);
        shift_case!($t, u64);
    )*};
}

#[test]
fn shifts_by_a_count_of_every_integer_type_are_rusts() {
    shifts_of!(i8, i16, i32, i64, u8, u16, u32, u64);
}

macro_rules! arithmetic_case {
    ($t:ident) => {{
        let f = |a: Dyn<$t>, b: Dyn<$t>, out: Dyn<*mut $t>| {
            out.at(0).set(a + b);
            out.at(1).set(a - b);
            out.at(2).set(a * b);
            out.at(3).set(a & b);
            out.at(4).set(a | b);
            out.at(5).set(a ^ b);
            out.at(6).set(!a);
            out.at(7).set(a + (100 as $t));
            out.at(8).set((3 as $t) * a - b);
            let acc = Dyn::new(a);
            let mut acc2 = acc;
            acc2 *= b;
            acc2 -= (7 as $t);
            out.at(9).set(acc2);
        };
        let rust = |(a, b, out): &mut ($t, $t, Buf<$t>)| {
            let (a, b) = (*a, *b);
            out.0 = vec![
                a.wrapping_add(b),
                a.wrapping_sub(b),
                a.wrapping_mul(b),
                a & b,
                a | b,
                a ^ b,
                !a,
                a.wrapping_add(100 as $t),
                (3 as $t).wrapping_mul(a).wrapping_sub(b),
                a.wrapping_mul(b).wrapping_sub(7 as $t),
            ];
        };
        let values = edges($t::MIN, $t::MAX, |v| v as $t);
        let mut inputs = Vec::new();
        for &a in &values {
            for &b in &values {
                inputs.push((a, b, Buf(vec![0 as $t; 10])));
            }
        }
        for check in backends() {
            check.run(concat!("arith_", stringify!($t)), f, rust, &inputs);
        }
        division_case!($t, values);
    }};
}

/// `/` and `%` where Rust gives a value; where it panics, what the
/// interpreter says (see the module docs).
macro_rules! division_case {
    ($t:ident, $values:expr) => {{
        let f = |a: Dyn<$t>, b: Dyn<$t>, out: Dyn<*mut $t>| {
            out.at(0).set(a / b);
            out.at(1).set(a % b);
        };
        let rust = |(a, b, out): &mut ($t, $t, Buf<$t>)| {
            out.0 = vec![*a / *b, *a % *b];
        };
        let mut inputs = Vec::new();
        let mut panics = Vec::new();
        for &a in &$values {
            for &b in &$values {
                match (a.checked_div(b), a.checked_rem(b)) {
                    (Some(_), Some(_)) => inputs.push((a, b, Buf(vec![0 as $t; 2]))),
                    _ => panics.push((a, b)),
                }
            }
        }
        for check in backends() {
            check.run(concat!("div_", stringify!($t)), f, rust, &inputs);
        }
        let div = Builder::new()
            .extract(
                concat!("div1_", stringify!($t)),
                |a: Dyn<$t>, b: Dyn<$t>| a / b,
            )
            .unwrap();
        let narrow = std::mem::size_of::<$t>() < 4;
        for (a, b) in panics {
            let got = div.interpret(&[a.into(), b.into()]);
            if b == 0 || !narrow {
                assert!(got.is_err(), "{a} / {b}: {got:?}");
            } else {
                assert_eq!(got.unwrap(), a.wrapping_div(b).into(), "{a} / {b}");
            }
        }
    }};
}

#[test]
fn arithmetic_on_every_integer_type_is_rusts() {
    arithmetic_case!(i8);
    arithmetic_case!(i16);
    arithmetic_case!(i32);
    arithmetic_case!(i64);
    arithmetic_case!(u8);
    arithmetic_case!(u16);
    arithmetic_case!(u32);
    arithmetic_case!(u64);
}

macro_rules! negation_case {
    ($t:ident) => {{
        let f = |a: Dyn<$t>| -a;
        for check in backends() {
            let inputs: Vec<($t,)> = edges($t::MIN, $t::MAX, |v| v as $t)
                .into_iter()
                .map(|a| (a,))
                .collect();
            check.run(
                concat!("neg_", stringify!($t)),
                f,
                |a: &mut ($t,)| a.0.wrapping_neg(),
                &inputs,
            );
        }
    }};
}

#[test]
fn negation_wraps_as_rusts() {
    negation_case!(i8);
    negation_case!(i16);
    negation_case!(i32);
    negation_case!(i64);
}
