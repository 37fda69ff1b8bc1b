//! Operators and casts on values, with the semantics of C compiled with
//! `-fwrapv` on x86-64/aarch64: integers wrap at their type's width, and
//! the operations whose result C leaves undefined (shift counts out of
//! range, division by zero, `INT_MIN / -1`, out-of-range float-to-int
//! conversion) are errors instead of garbage.
//!
//! Types narrower than `int` are promoted to `int` first, as in C; the
//! result is truncated back to the operand type (the IR gives every
//! arithmetic node its operand type). So `(int8_t)-128 / -1` is `-128`,
//! and an `int8_t` may be shifted by up to 31.

use super::memory::{base_of, offset_of, ptr_add};
use super::value::Value;
use crate::ir::{BinOp, Scalar, Type, UnOp};
use crate::{Error, Result};
use std::cmp::Ordering;

fn err<T>(message: String) -> Result<T> {
    Err(Error::Interp { message })
}

/// Integers that arithmetic is computed in (narrower types are promoted).
trait Arith: Copy + Eq + Ord + std::ops::BitAnd<Output = Self> {
    const ZERO: Self;
    fn wadd(self, o: Self) -> Self;
    fn wsub(self, o: Self) -> Self;
    fn wmul(self, o: Self) -> Self;
    /// `None` on overflow (`MIN / -1`).
    fn cdiv(self, o: Self) -> Option<Self>;
    fn crem(self, o: Self) -> Option<Self>;
    fn or(self, o: Self) -> Self;
    fn xor(self, o: Self) -> Self;
}

macro_rules! arith {
    ($($t:ty),*) => {$(
        impl Arith for $t {
            const ZERO: Self = 0;
            fn wadd(self, o: Self) -> Self { self.wrapping_add(o) }
            fn wsub(self, o: Self) -> Self { self.wrapping_sub(o) }
            fn wmul(self, o: Self) -> Self { self.wrapping_mul(o) }
            fn cdiv(self, o: Self) -> Option<Self> { self.checked_div(o) }
            fn crem(self, o: Self) -> Option<Self> { self.checked_rem(o) }
            fn or(self, o: Self) -> Self { self | o }
            fn xor(self, o: Self) -> Self { self ^ o }
        }
    )*};
}
arith!(i32, i64, u32, u64);

/// `x op y` for a non-comparison, non-shift operator.
fn arith<T: Arith>(op: BinOp, x: T, y: T) -> Result<T> {
    if matches!(op, BinOp::Div | BinOp::Rem) && y == T::ZERO {
        return err(format!(
            "{} by zero",
            if op == BinOp::Div {
                "division"
            } else {
                "remainder"
            }
        ));
    }
    let r = match op {
        BinOp::Add => Some(x.wadd(y)),
        BinOp::Sub => Some(x.wsub(y)),
        BinOp::Mul => Some(x.wmul(y)),
        BinOp::Div => x.cdiv(y),
        BinOp::Rem => x.crem(y),
        BinOp::BitAnd => Some(x & y),
        BinOp::BitOr => Some(x.or(y)),
        BinOp::BitXor => Some(x.xor(y)),
        _ => return err(format!("operator {op} is not defined on integers")),
    };
    r.map_or_else(
        || err(format!("overflow in {op}: the minimum value divided by -1")),
        Ok,
    )
}

fn float_arith<T>(op: BinOp, x: T, y: T) -> Result<T>
where
    T: std::ops::Add<Output = T>
        + std::ops::Sub<Output = T>
        + std::ops::Mul<Output = T>
        + std::ops::Div<Output = T>,
{
    Ok(match op {
        BinOp::Add => x + y,
        BinOp::Sub => x - y,
        BinOp::Mul => x * y,
        BinOp::Div => x / y,
        _ => {
            return err(format!(
                "operator {op} is not defined on floating-point values"
            ))
        }
    })
}

/// The order of two values of the same variant (`None` for NaN, for
/// different variants, and for `Void`). Pointers order by allocation, then
/// by signed offset.
fn compare(a: Value, b: Value) -> Option<Ordering> {
    use Value::*;
    match (a, b) {
        (Bool(x), Bool(y)) => x.partial_cmp(&y),
        (Char(x), Char(y)) | (I8(x), I8(y)) => x.partial_cmp(&y),
        (I16(x), I16(y)) => x.partial_cmp(&y),
        (I32(x), I32(y)) => x.partial_cmp(&y),
        (I64(x), I64(y)) => x.partial_cmp(&y),
        (U8(x), U8(y)) => x.partial_cmp(&y),
        (U16(x), U16(y)) => x.partial_cmp(&y),
        (U32(x), U32(y)) => x.partial_cmp(&y),
        (U64(x), U64(y)) => x.partial_cmp(&y),
        (F32(x), F32(y)) => x.partial_cmp(&y),
        (F64(x), F64(y)) => x.partial_cmp(&y),
        (Ptr(x), Ptr(y)) => (base_of(x), offset_of(x)).partial_cmp(&(base_of(y), offset_of(y))),
        _ => None,
    }
}

fn same_variant(a: Value, b: Value) -> bool {
    std::mem::discriminant(&a) == std::mem::discriminant(&b)
}

fn mismatch<T>(op: BinOp, a: Value, b: Value) -> Result<T> {
    err(format!(
        "operands of {op} have types {} and {}, which do not match",
        a.ty(),
        b.ty()
    ))
}

/// `a op b` for non-pointer operands.
pub(super) fn binary(op: BinOp, a: Value, b: Value) -> Result<Value> {
    use Value::*;
    if matches!(op, BinOp::Shl | BinOp::Shr) {
        return shift(op, a, b);
    }
    if !same_variant(a, b) {
        return mismatch(op, a, b);
    }
    if op.is_comparison() {
        return Ok(Bool(comparison(op, compare(a, b))));
    }
    // Narrow types: promoted to int, computed, truncated back.
    let narrow = |x: i64, y: i64| arith(op, x as i32, y as i32).map(|r| r as i64);
    Ok(match (a, b) {
        (Bool(x), Bool(y)) => Bool(match op {
            BinOp::And | BinOp::BitAnd => x & y,
            BinOp::Or | BinOp::BitOr => x | y,
            BinOp::BitXor => x ^ y,
            _ => return err(format!("operator {op} is not defined on bool")),
        }),
        (I32(x), I32(y)) => I32(arith(op, x, y)?),
        (I64(x), I64(y)) => I64(arith(op, x, y)?),
        (U32(x), U32(y)) => U32(arith(op, x, y)?),
        (U64(x), U64(y)) => U64(arith(op, x, y)?),
        (F32(x), F32(y)) => F32(float_arith(op, x, y)?),
        (F64(x), F64(y)) => F64(float_arith(op, x, y)?),
        (Void, _) | (Ptr(_), _) => return err(format!("operator {op} on {a} and {b}")),
        _ => {
            let s = a.scalar().expect("a narrow integer");
            let r = narrow(a.as_i64().expect("int"), b.as_i64().expect("int"))?;
            Value::int_of(s, r).expect("an integer type")
        }
    })
}

fn comparison(op: BinOp, ord: Option<Ordering>) -> bool {
    match op {
        BinOp::Eq => ord == Some(Ordering::Equal),
        BinOp::Ne => ord != Some(Ordering::Equal),
        BinOp::Lt => ord == Some(Ordering::Less),
        BinOp::Le => matches!(ord, Some(Ordering::Less | Ordering::Equal)),
        BinOp::Gt => ord == Some(Ordering::Greater),
        BinOp::Ge => matches!(ord, Some(Ordering::Greater | Ordering::Equal)),
        _ => unreachable!("not a comparison"),
    }
}

/// `a << b` / `a >> b`: `>>` is arithmetic for signed types; a count that
/// is negative or at least the (promoted) width is an error, as in C.
fn shift(op: BinOp, a: Value, b: Value) -> Result<Value> {
    let (Some(s), Some(count)) = (a.scalar(), b.as_i64()) else {
        return mismatch(op, a, b);
    };
    if !s.is_int() || !b.is_int() {
        return mismatch(op, a, b);
    }
    let width = if s.size() == 8 { 64 } else { 32 };
    if !(0..width).contains(&count) {
        return err(format!(
            "shift of {} by {b}: the count must be in 0..{width}",
            a.ty()
        ));
    }
    let c = count as u32;
    let left = op == BinOp::Shl;
    let x = a.as_i64().expect("an integer");
    let r = match s {
        Scalar::U32 if left => ((x as u32) << c) as i64,
        Scalar::U32 => ((x as u32) >> c) as i64,
        Scalar::U64 if left => ((x as u64) << c) as i64,
        Scalar::U64 => ((x as u64) >> c) as i64,
        Scalar::I64 if left => x << c,
        Scalar::I64 => x >> c,
        // int and the types promoted to it (a promoted unsigned narrow value
        // is non-negative, so the arithmetic shift is the logical one).
        _ if left => ((x as i32) << c) as i64,
        _ => ((x as i32) >> c) as i64,
    };
    Ok(Value::int_of(s, r).expect("an integer type"))
}

/// Pointer arithmetic and comparison; `elem` is the size of what the
/// pointer operand points to, `result` the node's type (for `p - q`).
pub(super) fn ptr_binary(op: BinOp, a: Value, b: Value, elem: u64, result: &Type) -> Result<Value> {
    use Value::Ptr;
    let scaled = |i: Value, neg: bool| -> Result<i64> {
        let i = i.as_i64().expect("an integer");
        let i = if neg { i.wrapping_neg() } else { i };
        i.checked_mul(elem as i64).ok_or_else(|| Error::Interp {
            message: format!("pointer offset {i} overflows"),
        })
    };
    match (op, a, b) {
        (_, Ptr(_), Ptr(_)) if op.is_comparison() => Ok(Value::Bool(comparison(op, compare(a, b)))),
        (BinOp::Add, Ptr(p), i) | (BinOp::Add, i, Ptr(p)) if i.is_int() => {
            Ok(Ptr(ptr_add(p, scaled(i, false)?)?))
        }
        (BinOp::Sub, Ptr(p), i) if i.is_int() => Ok(Ptr(ptr_add(p, scaled(i, true)?)?)),
        (BinOp::Sub, Ptr(p), Ptr(q)) => {
            if base_of(p) != base_of(q) {
                return err(format!(
                    "subtraction of pointers {p:#x} and {q:#x} into different allocations"
                ));
            }
            let bytes = offset_of(p) - offset_of(q);
            let n = bytes / (elem.max(1) as i64);
            match result.as_scalar().and_then(|s| Value::int_of(s, n)) {
                Some(v) => Ok(v),
                None => err(format!("pointer difference typed {result}")),
            }
        }
        _ => mismatch(op, a, b),
    }
}

/// `op x`.
pub(super) fn unary(op: UnOp, x: Value) -> Result<Value> {
    use Value::*;
    Ok(match (op, x) {
        (UnOp::Not, Bool(b)) => Bool(!b),
        (UnOp::Neg, F32(v)) => F32(-v),
        (UnOp::Neg, F64(v)) => F64(-v),
        (UnOp::Neg, v) if v.is_int() => {
            let s = v.scalar().expect("an integer");
            Value::int_of(s, v.as_i64().expect("int").wrapping_neg()).expect("an integer type")
        }
        (UnOp::BitNot, v) if v.is_int() => {
            let s = v.scalar().expect("an integer");
            Value::int_of(s, !v.as_i64().expect("int")).expect("an integer type")
        }
        _ => return err(format!("operator {op:?} is not defined on {}", x.ty())),
    })
}

/// True when a condition value holds: `bool`, or (as in C) a non-zero
/// number or non-null pointer.
pub(super) fn truthy(v: Value) -> Result<bool> {
    match v {
        Value::Bool(b) => Ok(b),
        Value::Ptr(p) => Ok(p != 0),
        Value::F32(f) => Ok(f != 0.0),
        Value::F64(f) => Ok(f != 0.0),
        Value::Void => err("a void value used as a condition".into()),
        v => Ok(v.as_i64() != Some(0)),
    }
}

/// `(to) v` with C's conversion rules.
pub(super) fn cast(v: Value, to: &Type) -> Result<Value> {
    match to {
        Type::Void => Ok(Value::Void),
        Type::Scalar(s) => cast_scalar(v, *s),
        Type::Ptr { .. } | Type::FnPtr(_) => match v {
            Value::Ptr(p) => Ok(Value::Ptr(p)),
            v if v.is_int() => Ok(Value::Ptr(v.as_u64().expect("an integer"))),
            _ => err(format!("cast of {} to {to}", v.ty())),
        },
        Type::Array { .. } | Type::Opaque(_) | Type::Struct(_) => {
            err(format!("cast to the type {to}"))
        }
    }
}

fn cast_scalar(v: Value, s: Scalar) -> Result<Value> {
    if s == Scalar::Bool {
        return truthy(v).map(Value::Bool);
    }
    let float = |f: f64| match s {
        Scalar::F32 => Ok(Value::F32(f as f32)),
        Scalar::F64 => Ok(Value::F64(f)),
        _ => float_to_int(f, s),
    };
    match v {
        Value::F32(f) if s == Scalar::F32 => Ok(Value::F32(f)),
        Value::F32(f) => float(f as f64),
        Value::F64(f) => float(f),
        // Two's-complement bits keep their meaning only at 64 bits: the
        // encoding lives in the high half.
        Value::Ptr(p) if matches!(s, Scalar::I64 | Scalar::U64) => {
            Ok(Value::int_of(s, p as i64).expect("an integer type"))
        }
        Value::Ptr(_) => err(format!(
            "cast of a pointer to {}, which cannot hold it",
            s.rust_name()
        )),
        Value::Void => err("cast of a void value".into()),
        v => {
            let bits = v.as_i64().expect("an integer or bool");
            let unsigned = v
                .scalar()
                .is_some_and(|t| t != Scalar::Bool && !t.is_signed());
            match s {
                Scalar::F32 if unsigned => Ok(Value::F32(bits as u64 as f32)),
                Scalar::F64 if unsigned => Ok(Value::F64(bits as u64 as f64)),
                Scalar::F32 => Ok(Value::F32(bits as f32)),
                Scalar::F64 => Ok(Value::F64(bits as f64)),
                _ => Ok(Value::int_of(s, bits).expect("an integer type")),
            }
        }
    }
}

/// Float to integer: truncates toward zero; a result the type cannot hold
/// (or NaN) is an error, as C leaves it undefined.
fn float_to_int(f: f64, s: Scalar) -> Result<Value> {
    let t = f.trunc();
    let bits = s.size() as i32 * 8;
    let (lo, hi) = if s.is_signed() {
        (-(2f64.powi(bits - 1)), 2f64.powi(bits - 1))
    } else {
        (0.0, 2f64.powi(bits))
    };
    // `hi` is exclusive and exactly representable, `lo` inclusive.
    if !(t >= lo && t < hi) {
        return err(format!(
            "conversion of {f:?} to {} is out of range",
            s.rust_name()
        ));
    }
    let bits = if s.is_signed() {
        t as i64
    } else {
        t as u64 as i64
    };
    Ok(Value::int_of(s, bits).expect("an integer type"))
}
