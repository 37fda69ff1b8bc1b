//! Types in the C: `i64` literals (in shifts, constant products and
//! variadic calls), 64-bit extremes, f32 NaN and infinity, narrow integer
//! arithmetic and casts, negative pointer offsets, casts to `bool` and
//! pointers to constant pointers must mean in C what they mean in Rust.
//!
//! Probes that expose engine bugs are `#[ignore = "engine bug: ..."]` with a
//! comment saying how the engine goes wrong; the others cover ground the
//! rest of the suite does not.

use crate::common;
use crate::probe_harness;

use augur::exec::compile::CompileOptions;
use augur::{Dyn, ExternFn, Value};
use common::{Buf, Check};
use probe_harness::diff;

/// An `i64` literal on the left of a shift.
// Mechanism: ir/display.rs:35-41 `write_const` prints `i64` constants that
// fit in `int` without a suffix, so their C type is `int`. Most operators
// convert to the other operand's `int64_t`, but the type of a shift is the
// type of its left operand: `(1 << arg0) + (3 << arg0)` is computed in 32
// bits (C gives 0 for n = 31, 4 for n = 32; the interpreter is right).
// Fix: print `i64` constants as `INT64_C(v)` (and `u64` as `UINT64_C(v)`),
// or cast them: `(int64_t)1`.
#[test]
#[augur::staged]
fn types_i64_literal_left_shift() {
    let o = diff(
        &Check::default(),
        "lit_shl",
        |n: Dyn<i64>| (1i64 << n) + (Dyn::lit(3i64) << n),
        |&mut (n,): &mut (i64,)| (1i64 << n) + (3i64 << n),
        &[(0,), (1,), (31,), (32,), (40,), (62,)],
    );
    println!("{}", o.code);
    o.assert_ok();
}

/// Products of `i64` constants that fit in `int` but whose product does not.
// Same mechanism as `types_i64_literal_left_shift`: `Dyn::lit(3_000_000i64) * 1000`
// prints `3000000 * 1000`, an `int` product: gcc rejects it with
// -Werror=overflow (with other flags it would silently wrap to -1294967296).
#[test]
#[augur::staged]
fn types_i64_constant_product() {
    let o = diff(
        &Check::default(),
        "lit_mul",
        |x: Dyn<i64>| {
            let big = Dyn::lit(3_000_000i64) * 1000;
            big + x
        },
        |&mut (x,): &mut (i64,)| 3_000_000_000i64 + x,
        &[(0,), (1,), (-1,), (100,), (i64::MAX - 3_000_000_000,)],
    );
    println!("{}", o.code);
    o.assert_ok();
}

/// Integer extremes of the 64-bit types as constants, in arithmetic and
/// comparisons.
#[test]
#[augur::staged]
fn types_64_bit_extremes() {
    let o = diff(
        &Check::default(),
        "extremes",
        |x: Dyn<u64>, y: Dyn<i64>| {
            let r = Dyn::new(0u64);
            if x.eq(u64::MAX).is_true() {
                r.set(r + 1);
            }
            if y.eq(i64::MIN).is_true() {
                r.set(r + 2);
            }
            if y.lt(i64::MIN + 1).is_true() {
                r.set(r + 4);
            }
            if x.gt(u64::MAX - 1).is_true() {
                r.set(r + 8);
            }
            if (y - i64::MAX).lt(0).is_true() {
                r.set(r + 16);
            }
            r + (x ^ u64::MAX) + (y ^ i64::MIN).cast::<u64>()
        },
        |&mut (x, y): &mut (u64, i64)| {
            let mut r = 0u64;
            if x == u64::MAX {
                r += 1;
            }
            if y == i64::MIN {
                r += 2;
            }
            if y < i64::MIN + 1 {
                r += 4;
            }
            if x > u64::MAX - 1 {
                r += 8;
            }
            if y.wrapping_sub(i64::MAX) < 0 {
                r += 16;
            }
            r.wrapping_add(x ^ u64::MAX)
                .wrapping_add((y ^ i64::MIN) as u64)
        },
        &[
            (0, 0),
            (u64::MAX, i64::MIN),
            (u64::MAX - 1, i64::MAX),
            (1, -1),
            (1 << 63, i64::MIN + 1),
        ],
    );
    o.assert_ok_no_goto();
}

/// f32 NaN and infinity constants in arithmetic and comparisons.
#[test]
#[augur::staged]
fn types_f32_special_constants() {
    let o = diff(
        &Check::default(),
        "f32_special",
        |x: Dyn<f32>| {
            let r = Dyn::new(0i32);
            if x.lt(f32::INFINITY).is_true() {
                r.set(r + 1);
            }
            if x.eq(f32::NAN).is_true() {
                r.set(r + 2);
            }
            if (x + f32::NEG_INFINITY).lt(0.0f32).is_true() {
                r.set(r + 4);
            }
            if x.ne(x).is_true() {
                r.set(r + 8);
            }
            r
        },
        |&mut (x,): &mut (f32,)| {
            let mut r = 0;
            if x < f32::INFINITY {
                r += 1;
            }
            #[allow(invalid_nan_comparisons)]
            if x == f32::NAN {
                r += 2;
            }
            if x + f32::NEG_INFINITY < 0.0 {
                r += 4;
            }
            #[allow(clippy::eq_op)]
            if x != x {
                r += 8;
            }
            r
        },
        &[
            (0.0,),
            (f32::NAN,),
            (f32::INFINITY,),
            (f32::NEG_INFINITY,),
            (-1.5,),
        ],
    );
    o.assert_ok_no_goto();
}

/// Narrow types: comparisons after arithmetic, shifts, sign changes.
#[test]
#[augur::staged]
fn types_narrow_arithmetic_and_casts() {
    let o = diff(
        &Check::default(),
        "narrow",
        |a: Dyn<i8>, b: Dyn<u16>| {
            let r = Dyn::new(0i32);
            if (a * a).lt(0).is_true() {
                r.set(r + 1);
            }
            if (b * b).lt(100).is_true() {
                r.set(r + 2);
            }
            if (a >> 1).lt(a).is_true() {
                r.set(r + 4);
            }
            if (b << 8).eq(0).is_true() {
                r.set(r + 8);
            }
            if (!a).cast::<u8>().gt(127).is_true() {
                r.set(r + 16);
            }
            if (-a).eq(a).is_true() {
                r.set(r + 32);
            }
            r * 1000 + a.cast::<u16>().cast::<i32>() + b.cast::<i8>().cast::<i32>()
        },
        |&mut (a, b): &mut (i8, u16)| {
            let mut r = 0i32;
            if a.wrapping_mul(a) < 0 {
                r += 1;
            }
            if b.wrapping_mul(b) < 100 {
                r += 2;
            }
            if (a >> 1) < a {
                r += 4;
            }
            if b.wrapping_shl(8) == 0 {
                r += 8;
            }
            if (!a) as u8 > 127 {
                r += 16;
            }
            if a.wrapping_neg() == a {
                r += 32;
            }
            r * 1000 + (a as u16) as i32 + (b as i8) as i32
        },
        &[
            (0, 0),
            (-128, 256),
            (127, 65535),
            (-1, 255),
            (16, 10),
            (-3, 32768),
            (12, 9),
        ],
    );
    o.assert_ok_no_goto();
}

/// Pointer offsets with negative indices.
#[test]
#[augur::staged]
fn types_negative_pointer_offsets() {
    let o = diff(
        &Check::default(),
        "neg_offsets",
        |p: Dyn<*mut i32>, k: Dyn<i32>| {
            let end = p.offset(4);
            let a = end.at(-1);
            let b = end.offset(-4).deref();
            let c = end.at(k);
            end.offset(k).deref().set(a + b);
            a * 10000 + b * 100 + c
        },
        |(p, k): &mut (Buf<i32>, i32)| {
            let a = p.0[3];
            let b = p.0[0];
            let c = p.0[(4 + *k) as usize];
            p.0[(4 + *k) as usize] = a + b;
            a * 10000 + b * 100 + c
        },
        &[
            (Buf(vec![1, 2, 3, 4]), -1),
            (Buf(vec![1, 2, 3, 4]), -4),
            (Buf(vec![9, 8, 7, 6]), -2),
            (Buf(vec![0, 0, 0, 5]), -3),
            (Buf(vec![-1, -2, -3, -4]), -1),
        ],
    );
    o.assert_ok_no_goto();
}

/// `cast::<bool>` of an integer: C's `(bool)2` is `true`.
#[test]
#[augur::staged]
fn types_int_to_bool_cast() {
    let o = diff(
        &Check::default(),
        "to_bool",
        |x: Dyn<i32>| Dyn::select(x.cast::<bool>(), 1, 0),
        |&mut (x,): &mut (i32,)| (x != 0) as i32,
        &[(0,), (1,), (2,), (-1,), (256,)],
    );
    o.assert_ok_no_goto();
}

/// An `i64` literal passed to a variadic extern: C passes it as `int`.
/// (With `printf("%ld", ...)` gcc catches it: `-Werror=format` rejects
/// the C, even for `5000000000ll`, whose type is `long long`, not the
/// `long` of `int64_t`.)
// Same mechanism as `types_i64_literal_left_shift`: `rv_sum(2, -5, arg0)`
// passes `-5` as an `int`; `va_arg(ap, int64_t)` reads garbage high bits.
// With `printf("%ld", ...)` the C does not compile (-Werror=format), also for
// big constants (`5000000000ll` is `long long`, `int64_t` is `long`).
#[test]
#[augur::staged]
fn types_i64_literal_vararg() {
    const SUM: ExternFn<fn(i32) -> i64> = ExternFn::new("rv_sum").variadic();
    let check = Check {
        opts: CompileOptions {
            extra_c: vec!["#include <stdint.h>\n#include <stdarg.h>\n\
                 int64_t rv_sum(int32_t n, ...) { va_list ap; va_start(ap, n); int64_t s = 0;\n\
                 for (int32_t i = 0; i < n; i++) { s += va_arg(ap, int64_t); }\n\
                 va_end(ap); return s; }\n"
                .to_string()],
            ..CompileOptions::default()
        },
        setup: |it| {
            it.register("rv_sum", |_, a| {
                Ok(Value::I64(a[1..].iter().map(|v| v.as_i64().unwrap()).sum()))
            })
        },
        ..Check::default()
    };
    let o = diff(
        &check,
        "vararg_i64",
        |x: Dyn<i64>| SUM.call_with(&[2.into(), (-5i64).into(), x.into()]),
        |&mut (x,): &mut (i64,)| x.wrapping_sub(5),
        &[(0,), (1,), (-1,), (100,), (i64::MIN + 5,)],
    );
    println!("{}", o.code);
    o.assert_ok();
}

/// Pointers to constant pointers: the `const` of `*const *mut T` qualifies
/// the inner pointer (`T *const *`), not the `T` it points to; both
/// levels const is `const T *const *`.
#[test]
#[augur::staged]
fn types_pointers_to_const_pointers() {
    let ex = augur::Builder::new()
        .extract(
            "sum_rows",
            |a: Dyn<*const *const f64>, b: Dyn<*const *mut f64>, c: Dyn<*mut *const f64>| {
                b.at(0).at(0).set(a.at(0).at(1) + c.at(1).at(0));
                a.at(1).at(0) + b.at(0).at(1)
            },
        )
        .unwrap();
    let c = ex.c_code();
    assert!(
        c.contains(
            "double sum_rows(const double *const *arg0, double *const *arg1, const double **arg2)"
        ),
        "{c}"
    );
    let (r0, r1) = ([1.0f64, 2.0], [3.0f64, 4.0]);
    let rows = [r0.as_ptr(), r1.as_ptr()];
    let mut m0 = [0.0f64, 5.0];
    let out = [m0.as_mut_ptr()];
    let f = ex.compile().unwrap();
    // SAFETY: each pointer points to two rows of two doubles (one for `b`).
    let s = unsafe { f.get()(rows.as_ptr(), out.as_ptr(), rows.as_ptr() as *mut _) };
    assert_eq!((s, m0[0]), (8.0, 5.0));
}
