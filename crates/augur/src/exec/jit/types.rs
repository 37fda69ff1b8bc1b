//! IR types as Cranelift types and C ABI parameters.

use super::jit_error;
use crate::ir::{Scalar, Type};
use crate::Result;
use cranelift_codegen::ir::{self, types, AbiParam};

/// Pointers are 64-bit (the IR's `Type::size` says so).
pub(super) const PTR: ir::Type = types::I64;

/// The Cranelift type of a scalar: `bool` is an `i8` holding 0 or 1, as in
/// C's ABI; signedness lives in the operations, not the type.
pub(super) fn scalar(s: Scalar) -> ir::Type {
    match s {
        Scalar::Bool | Scalar::Char | Scalar::I8 | Scalar::U8 => types::I8,
        Scalar::I16 | Scalar::U16 => types::I16,
        Scalar::I32 | Scalar::U32 => types::I32,
        Scalar::I64 | Scalar::U64 => types::I64,
        Scalar::F32 => types::F32,
        Scalar::F64 => types::F64,
    }
}

/// The Cranelift type of a value of `t`: arrays are their address (they
/// decay to a pointer wherever C uses them as values).
pub(super) fn value(t: &Type) -> Result<ir::Type> {
    match t {
        Type::Scalar(s) => Ok(scalar(*s)),
        Type::Ptr { .. } | Type::Array { .. } | Type::FnPtr(_) => Ok(PTR),
        Type::Void | Type::Opaque(_) => Err(jit_error(&format!("a value of type {t}"))),
        // Struct values are handled by address where the IR has them; what
        // reaches here is one passed or returned by value, whose C ABI
        // (fields classified into registers) the JIT does not lower.
        Type::Struct(s) => Err(jit_error(&format!(
            "`struct {}` passed or returned by value (the C ABI's struct passing is not \
             lowered by the JIT; compile with Backend::C, or pass a pointer)",
            s.name
        ))),
    }
}

/// `t` as a parameter or result of a C function: narrow integers are
/// extended to 32 bits by the caller (`bool` and unsigned ones with zeros),
/// as gcc and clang expect on x86-64 and aarch64.
pub(super) fn abi(t: &Type) -> Result<AbiParam> {
    let p = AbiParam::new(value(t)?);
    Ok(match t.as_scalar() {
        Some(s) if s.size() < 4 && is_signed(t) => p.sext(),
        Some(s) if s.size() < 4 => p.uext(),
        _ => p,
    })
}

/// True for the signed integer types (C `char` is signed here, as in the
/// interpreter and gcc on x86-64).
pub(super) fn is_signed(t: &Type) -> bool {
    t.as_scalar().is_some_and(Scalar::is_signed)
}

/// True for `f32` and `f64`.
pub(super) fn is_float(t: &Type) -> bool {
    t.as_scalar().is_some_and(Scalar::is_float)
}

/// True for the integer types narrower than C's `int`, which C promotes
/// to `int` before any arithmetic.
pub(super) fn is_narrow(t: &Type) -> bool {
    t.as_scalar()
        .is_some_and(|s| s != Scalar::Bool && !s.is_float() && s.size() < 4)
}

/// Bytes that one step of a pointer or array of type `t` moves (`void`
/// counts 1, as in GNU C and the interpreter).
pub(super) fn elem_size(t: &Type) -> Result<u64> {
    match t.element() {
        Some(Type::Void) => Ok(1),
        Some(e) => e
            .size()
            .ok_or_else(|| jit_error(&format!("pointer arithmetic on {t}"))),
        None => Err(jit_error(&format!(
            "pointer arithmetic on the non-pointer type {t}"
        ))),
    }
}

/// The alignment, in bytes, of storage for `t` (arrays: their element's).
pub(super) fn align(t: &Type) -> u32 {
    t.align().unwrap_or(8) as u32
}
