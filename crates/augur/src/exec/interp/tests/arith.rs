//! Integer and float arithmetic, shifts, comparisons and casts.

use super::*;
use BinOp::*;
use Value as V;

#[test]
fn integer_arithmetic_wraps_at_the_type_width() {
    assert_eq!(binop(Add, V::I8(100), V::I8(100)).unwrap(), V::I8(-56));
    assert_eq!(binop(Mul, V::I8(-128), V::I8(-1)).unwrap(), V::I8(-128));
    assert_eq!(
        binop(Add, V::I32(i32::MAX), V::I32(1)).unwrap(),
        V::I32(i32::MIN)
    );
    assert_eq!(binop(Mul, V::I32(65536), V::I32(65536)).unwrap(), V::I32(0));
    assert_eq!(binop(Sub, V::U64(0), V::U64(1)).unwrap(), V::U64(u64::MAX));
    assert_eq!(
        binop(Mul, V::U64(u64::MAX), V::U64(3)).unwrap(),
        V::U64(u64::MAX - 2)
    );
    assert_eq!(
        binop(Sub, V::U32(3), V::U32(5)).unwrap(),
        V::U32(u32::MAX - 1)
    );
    assert_eq!(
        binop(BitXor, V::U8(0xf0), V::U8(0xff)).unwrap(),
        V::U8(0x0f)
    );
}

#[test]
fn division_truncates_toward_zero() {
    assert_eq!(binop(Div, V::I32(-7), V::I32(2)).unwrap(), V::I32(-3));
    assert_eq!(binop(Rem, V::I32(-7), V::I32(2)).unwrap(), V::I32(-1));
    assert_eq!(
        binop(Div, V::U32(u32::MAX), V::U32(2)).unwrap(),
        V::U32(u32::MAX / 2)
    );
    // Promoted to int in C, so no overflow: the result truncates back.
    assert_eq!(binop(Div, V::I8(-128), V::I8(-1)).unwrap(), V::I8(-128));
    assert_eq!(binop(Rem, V::I16(i16::MIN), V::I16(-1)).unwrap(), V::I16(0));
}

#[test]
fn division_errors() {
    assert!(fails(binop(Div, V::I32(1), V::I32(0))).contains("division by zero"));
    assert!(fails(binop(Rem, V::U64(1), V::U64(0))).contains("remainder by zero"));
    assert!(fails(binop(Div, V::I8(1), V::I8(0))).contains("division by zero"));
    assert!(fails(binop(Div, V::I32(i32::MIN), V::I32(-1))).contains("overflow"));
    assert!(fails(binop(Rem, V::I64(i64::MIN), V::I64(-1))).contains("overflow"));
    // Floats follow IEEE.
    assert_eq!(
        binop(Div, V::F64(1.0), V::F64(0.0)).unwrap(),
        V::F64(f64::INFINITY)
    );
}

#[test]
fn shifts() {
    assert_eq!(binop(Shl, V::I32(1), V::I32(31)).unwrap(), V::I32(i32::MIN));
    assert_eq!(binop(Shr, V::I32(-8), V::I32(1)).unwrap(), V::I32(-4));
    assert_eq!(
        binop(Shr, V::U32(0x8000_0000), V::I32(31)).unwrap(),
        V::U32(1)
    );
    assert_eq!(binop(Shl, V::U64(1), V::U32(63)).unwrap(), V::U64(1 << 63));
    assert_eq!(binop(Shr, V::I64(-1), V::I64(63)).unwrap(), V::I64(-1));
    // Narrow types are promoted to int: shifting by up to 31 is defined.
    assert_eq!(binop(Shl, V::I8(1), V::I32(8)).unwrap(), V::I8(0));
    assert_eq!(binop(Shr, V::I8(-128), V::I32(12)).unwrap(), V::I8(-1));
    assert_eq!(binop(Shr, V::U8(200), V::I32(1)).unwrap(), V::U8(100));
    assert!(fails(binop(Shl, V::I32(1), V::I32(32))).contains("0..32"));
    assert!(fails(binop(Shr, V::I64(1), V::I64(64))).contains("0..64"));
    assert!(fails(binop(Shl, V::I32(1), V::I32(-1))).contains("shift"));
    assert!(fails(binop(Shl, V::I8(1), V::I32(32))).contains("0..32"));
}

#[test]
fn comparisons() {
    assert_eq!(binop(Lt, V::I32(-1), V::I32(0)).unwrap(), V::Bool(true));
    assert_eq!(
        binop(Lt, V::U32(u32::MAX), V::U32(0)).unwrap(),
        V::Bool(false)
    );
    assert_eq!(
        binop(Eq, V::F64(f64::NAN), V::F64(f64::NAN)).unwrap(),
        V::Bool(false)
    );
    assert_eq!(
        binop(Ne, V::F64(f64::NAN), V::F64(f64::NAN)).unwrap(),
        V::Bool(true)
    );
    assert_eq!(binop(Eq, V::F32(0.0), V::F32(-0.0)).unwrap(), V::Bool(true));
    assert_eq!(binop(Ge, V::Char(-1), V::Char(1)).unwrap(), V::Bool(false));
    assert!(fails(binop(Add, V::I32(1), V::I64(1))).contains("do not match"));
}

#[test]
fn unary_operators() {
    let run_un = |op, x: Value| {
        let mut b = B::new(x.ty());
        let p = b.param("a", x.ty());
        let e = b.v(p);
        let e = b.un(op, e);
        let f = b.build(vec![ret(e)]);
        run(&f, &[x])
    };
    assert_eq!(
        run_un(UnOp::Neg, V::I32(i32::MIN)).unwrap(),
        V::I32(i32::MIN)
    );
    assert_eq!(run_un(UnOp::Neg, V::U32(1)).unwrap(), V::U32(u32::MAX));
    assert_eq!(run_un(UnOp::BitNot, V::U8(1)).unwrap(), V::U8(0xfe));
    assert_eq!(run_un(UnOp::Not, V::Bool(false)).unwrap(), V::Bool(true));
    assert!(run_un(UnOp::Neg, V::F64(0.0))
        .unwrap()
        .same_bits(&V::F64(-0.0)));
}

#[test]
fn casts() {
    assert_eq!(cast(V::F64(-2.7), I32).unwrap(), V::I32(-2));
    assert_eq!(cast(V::F64(-0.9), U32).unwrap(), V::U32(0));
    assert_eq!(cast(V::F32(1e10), I64).unwrap(), V::I64(10_000_000_000));
    assert!(fails(cast(V::F64(3e9), I32)).contains("out of range"));
    assert!(fails(cast(V::F64(f64::NAN), I64)).contains("out of range"));
    assert!(fails(cast(V::F64(-1.0), U64)).contains("out of range"));
    assert!(fails(cast(V::F64(128.0), I8)).contains("out of range"));
    assert_eq!(cast(V::I32(-1), U32).unwrap(), V::U32(u32::MAX));
    assert_eq!(cast(V::I32(-1), U64).unwrap(), V::U64(u64::MAX));
    assert_eq!(
        cast(V::U32(u32::MAX), I64).unwrap(),
        V::I64(u32::MAX as i64)
    );
    assert_eq!(cast(V::I64(0x1_0000_0180), I8).unwrap(), V::I8(-128));
    assert_eq!(
        cast(V::U64(u64::MAX), F64).unwrap(),
        V::F64(u64::MAX as f64)
    );
    assert_eq!(cast(V::I32(-3), F32).unwrap(), V::F32(-3.0));
    assert_eq!(cast(V::Bool(true), I32).unwrap(), V::I32(1));
    assert_eq!(cast(V::I32(-5), BOOL).unwrap(), V::Bool(true));
    assert_eq!(cast(V::F64(0.1), F32).unwrap(), V::F32(0.1));
    assert_eq!(cast(V::I8(-1), CHAR).unwrap(), V::Char(-1));
    assert_eq!(
        cast(V::Ptr(0x5_0000_0004), U64).unwrap(),
        V::U64(0x5_0000_0004)
    );
    assert_eq!(
        cast(V::U64(0x5_0000_0004), ptr(I32)).unwrap(),
        V::Ptr(0x5_0000_0004)
    );
    assert!(fails(cast(V::Ptr(0x5_0000_0004), I32)).contains("cannot hold"));
}

#[test]
fn values() {
    assert_eq!(Value::from(3i32), V::I32(3));
    assert_eq!(Value::from(2.5f32).ty(), F32);
    assert_eq!(V::U64(u64::MAX).as_i64(), Some(-1));
    assert_eq!(V::Char(-1).as_u64(), Some(u64::MAX));
    assert_eq!(V::F32(1.5).as_f64(), Some(1.5));
    assert_eq!(V::I32(1).as_f64(), None);
    assert!(V::F64(f64::NAN) != V::F64(f64::NAN));
    assert!(V::F64(f64::NAN).same_bits(&V::F64(f64::NAN)));
    assert!(!V::F64(0.0).same_bits(&V::F64(-0.0)));
    assert_eq!(V::F64(0.0), V::F64(-0.0));
    assert_ne!(V::I32(1), V::I64(1));
    assert_eq!(V::Ptr(0).to_string(), "NULL");
    assert_eq!(V::I8(-3).to_string(), "-3");
}

#[test]
fn select_evaluates_only_the_chosen_arm() {
    // d != 0 ? n / d : 0, with d == 0.
    let mut b = B::new(I32);
    let (n, d) = (b.param("n", I32), b.param("d", I32));
    let (dv, zero) = (b.v(d), b.i32(0));
    let c = b.bin(Ne, dv, zero);
    let (nv, dv) = (b.v(n), b.v(d));
    let q = b.bin(Div, nv, dv);
    let zero = b.i32(0);
    let e = b.select(c, q, zero);
    let f = b.build(vec![ret(e)]);
    assert_eq!(run(&f, &[V::I32(7), V::I32(0)]).unwrap(), V::I32(0));
    assert_eq!(run(&f, &[V::I32(7), V::I32(2)]).unwrap(), V::I32(3));
}

#[test]
fn logical_operators() {
    assert_eq!(
        binop(And, V::Bool(true), V::Bool(false)).unwrap(),
        V::Bool(false)
    );
    assert_eq!(
        binop(Or, V::Bool(false), V::Bool(true)).unwrap(),
        V::Bool(true)
    );
    assert_eq!(
        binop(BitAnd, V::Bool(true), V::Bool(true)).unwrap(),
        V::Bool(true)
    );
}
