//! Which Rust types have second-stage (C) counterparts.

use crate::ir::{Const, Scalar, Type};

/// A C `char`, for strings handed to C functions such as `printf`.
///
/// `Dyn<*const CChar>` prints as `const char *`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[repr(transparent)]
pub struct CChar(pub i8);

/// A Rust type that a [`Dyn`](crate::Dyn) can hold: it names a C type.
///
/// Implemented for `bool`, the integer types `i8`–`i64`, `u8`–`u64`, `f32`,
/// `f64`, [`CChar`], raw pointers `*mut T` / `*const T`, fixed arrays
/// `[T; N]` and unsized arrays `[T]` (as parameters: C `T a[]`).
pub trait CType: 'static {
    /// The IR type.
    fn ty() -> Type;
}

/// A `CType` that has a value in Rust: a literal of it can appear in staged
/// code, and it can cross the boundary to compiled code.
pub trait CScalar: CType + Copy {
    /// The constant for `self`.
    fn to_const(self) -> Const;
}

/// Types that can be parameters or results of an extracted function, with
/// the Rust type the compiled C function takes or returns for them.
pub trait Native: CType {
    /// The ABI type (`i32` for `i32`, `*mut f32` for `*mut f32` and `[f32]`).
    type Abi: Copy;
}

macro_rules! scalar {
    ($($t:ty => $s:ident, $c:expr);* $(;)?) => {$(
        impl CType for $t {
            fn ty() -> Type {
                Type::Scalar(Scalar::$s)
            }
        }
        impl CScalar for $t {
            #[allow(clippy::redundant_closure_call)]
            fn to_const(self) -> Const {
                ($c)(self)
            }
        }
        impl Native for $t {
            type Abi = $t;
        }
    )*};
}

scalar! {
    bool => Bool, Const::Bool;
    i8 => I8, |v: i8| Const::Int(v as i64);
    i16 => I16, |v: i16| Const::Int(v as i64);
    i32 => I32, |v: i32| Const::Int(v as i64);
    i64 => I64, Const::Int;
    u8 => U8, |v: u8| Const::Int(v as i64);
    u16 => U16, |v: u16| Const::Int(v as i64);
    u32 => U32, |v: u32| Const::Int(v as i64);
    u64 => U64, |v: u64| Const::Int(v as i64);
    f32 => F32, Const::F32;
    f64 => F64, Const::F64;
    CChar => Char, |v: CChar| Const::Int(v.0 as i64);
}

impl<T: CType + ?Sized> CType for *mut T {
    fn ty() -> Type {
        Type::ptr(T::ty())
    }
}

impl<T: CType + ?Sized> CType for *const T {
    fn ty() -> Type {
        Type::cptr(T::ty())
    }
}

impl<T: CType> Native for *mut T {
    type Abi = *mut T;
}

impl<T: CType> Native for *const T {
    type Abi = *const T;
}

impl<T: CType, const N: usize> CType for [T; N] {
    fn ty() -> Type {
        Type::array(T::ty(), Some(N as u64))
    }
}

impl<T: CType> CType for [T] {
    fn ty() -> Type {
        Type::array(T::ty(), None)
    }
}

/// An unsized array parameter is a pointer to its first element in C.
impl<T: CType> Native for [T] {
    type Abi = *mut T;
}

/// Integer types: what shifts, remainders and bit operators accept.
pub trait CInt: CScalar {}
macro_rules! ints { ($($t:ty),*) => {$(impl CInt for $t {})*}; }
ints!(i8, i16, i32, i64, u8, u16, u32, u64);

/// Numeric types: what arithmetic accepts.
pub trait CNum: CScalar {}
macro_rules! nums { ($($t:ty),*) => {$(impl CNum for $t {})*}; }
nums!(i8, i16, i32, i64, u8, u16, u32, u64, f32, f64);

/// Signed numeric types: what unary minus accepts.
pub trait CSigned: CNum {}
macro_rules! signed { ($($t:ty),*) => {$(impl CSigned for $t {})*}; }
signed!(i8, i16, i32, i64, f32, f64);
