//! Operators on `Dyn` values: arithmetic, bitwise, logical, comparisons and
//! compound assignment, with literals on either side.

use super::ctype::{CInt, CNum, CScalar, CSigned, CType};
use super::dyn_val::{compute, Arg, Dyn, IntoArg};
use crate::ir::{BinOp, Const, Scalar, Type, UnOp};
use crate::trace::recorder::{OpExpr, Operand};
use std::ops::*;

#[track_caller]
fn binary<R: CType>(op: BinOp, a: Arg, b: Arg) -> Dyn<R> {
    compute(move |e, loc| Ok(OpExpr::Binary(op, e.operand(a, loc)?, e.operand(b, loc)?)))
}

#[track_caller]
fn unary<R: CType>(op: UnOp, a: Arg) -> Dyn<R> {
    compute(move |e, loc| Ok(OpExpr::Unary(op, e.operand(a, loc)?)))
}

/// Bitwise operators on `bool` are the logical ones in C (`&&`, `||`).
fn logical_for<T: CType>(op: BinOp) -> BinOp {
    match (T::ty(), op) {
        (Type::Scalar(Scalar::Bool), BinOp::BitAnd) => BinOp::And,
        (Type::Scalar(Scalar::Bool), BinOp::BitOr) => BinOp::Or,
        _ => op,
    }
}

/// Types that take the bit operators: integers and `bool`.
pub trait CBits: CScalar {}
impl<T: CInt> CBits for T {}
impl CBits for bool {}

macro_rules! binops {
    ($bound:ident: $($trait:ident $method:ident $assign_trait:ident $assign:ident => $op:ident),* $(,)?) => {$(
        impl<T: $bound> $trait<Dyn<T>> for Dyn<T> {
            type Output = Dyn<T>;
            #[track_caller]
            fn $method(self, rhs: Dyn<T>) -> Dyn<T> {
                binary(logical_for::<T>(BinOp::$op), self.arg(), rhs.arg())
            }
        }
        impl<T: $bound> $trait<T> for Dyn<T> {
            type Output = Dyn<T>;
            #[track_caller]
            fn $method(self, rhs: T) -> Dyn<T> {
                binary(logical_for::<T>(BinOp::$op), self.arg(), rhs.into_arg())
            }
        }
        impl<T: $bound, R: IntoArg<T>> $assign_trait<R> for Dyn<T> {
            /// Assigns `self op rhs` to the variable `self` names.
            #[track_caller]
            fn $assign(&mut self, rhs: R) {
                let now = self.current();
                let v: Dyn<T> = binary(logical_for::<T>(BinOp::$op), now.arg(), rhs.into_arg());
                self.set(v);
            }
        }
    )*};
}

binops!(CNum:
    Add add AddAssign add_assign => Add,
    Sub sub SubAssign sub_assign => Sub,
    Mul mul MulAssign mul_assign => Mul,
    Div div DivAssign div_assign => Div,
    Rem rem RemAssign rem_assign => Rem,
);
binops!(CBits:
    BitAnd bitand BitAndAssign bitand_assign => BitAnd,
    BitOr bitor BitOrAssign bitor_assign => BitOr,
    BitXor bitxor BitXorAssign bitxor_assign => BitXor,
);
// Shifts take a count of any integer type, as Rust's do, and mean what
// Rust's mean with overflow checks off (`wrapping_shl`, `wrapping_shr`):
// the count is masked to the width of the value shifted (`x << 33` on an
// `i32` is `x << 1`, `x >> -1` on a `u64` is `x >> 63`), so no count is
// out of range for C, the JIT or the interpreter. A count known at the
// first stage is masked there; a `Dyn` one by an `&` in the code, which C
// compilers fold into the shift instruction.

/// The width in bits of the integer type `T`.
fn width<T: CInt>() -> i64 {
    match T::ty() {
        Type::Scalar(s) => s.size() as i64 * 8,
        other => unreachable!("an integer type, not {other:?}"),
    }
}

/// The literal count `c` of a shift of a `T`, masked to `T`'s width.
fn literal_count<T: CInt, U: CInt>(c: U) -> Arg {
    let Const::Int(v) = c.to_const() else {
        unreachable!("an integer constant");
    };
    Arg::Const(Operand::constant(
        Const::Int(v & (width::<T>() - 1)),
        U::ty(),
    ))
}

/// The count `c` of a shift of a `T`, masked to `T`'s width.
#[track_caller]
fn dyn_count<T: CInt, U: CInt>(c: Dyn<U>) -> Arg {
    let mask = Arg::Const(Operand::constant(Const::Int(width::<T>() - 1), U::ty()));
    binary::<U>(BinOp::BitAnd, c.arg(), mask).arg()
}

macro_rules! shifts {
    ($($trait:ident $method:ident $assign_trait:ident $assign:ident => $op:ident),* $(,)?) => {$(
        impl<T: CInt, U: CInt> $trait<Dyn<U>> for Dyn<T> {
            type Output = Dyn<T>;
            #[track_caller]
            fn $method(self, rhs: Dyn<U>) -> Dyn<T> {
                binary(BinOp::$op, self.arg(), dyn_count::<T, U>(rhs))
            }
        }
        impl<T: CInt, U: CInt> $trait<U> for Dyn<T> {
            type Output = Dyn<T>;
            #[track_caller]
            fn $method(self, rhs: U) -> Dyn<T> {
                binary(BinOp::$op, self.arg(), literal_count::<T, U>(rhs))
            }
        }
        impl<T: CInt, U: CInt> $assign_trait<Dyn<U>> for Dyn<T> {
            /// Assigns `self op rhs` to the variable `self` names.
            #[track_caller]
            fn $assign(&mut self, rhs: Dyn<U>) {
                let now = self.current();
                let v: Dyn<T> = binary(BinOp::$op, now.arg(), dyn_count::<T, U>(rhs));
                self.set(v);
            }
        }
        impl<T: CInt, U: CInt> $assign_trait<U> for Dyn<T> {
            /// Assigns `self op rhs` to the variable `self` names.
            #[track_caller]
            fn $assign(&mut self, rhs: U) {
                let now = self.current();
                let v: Dyn<T> = binary(BinOp::$op, now.arg(), literal_count::<T, U>(rhs));
                self.set(v);
            }
        }
    )*};
}

shifts!(
    Shl shl ShlAssign shl_assign => Shl,
    Shr shr ShrAssign shr_assign => Shr,
);

/// Literal on the left: `2 * x`.
macro_rules! literal_left {
    ($($t:ty),*) => {$(
        literal_left!(@ops $t: Add add Add, Sub sub Sub, Mul mul Mul, Div div Div, Rem rem Rem);
    )*};
    (@ops $t:ty: $($trait:ident $method:ident $op:ident),*) => {$(
        impl $trait<Dyn<$t>> for $t {
            type Output = Dyn<$t>;
            #[track_caller]
            fn $method(self, rhs: Dyn<$t>) -> Dyn<$t> {
                binary(BinOp::$op, IntoArg::<$t>::into_arg(self), rhs.arg())
            }
        }
    )*};
}
literal_left!(i8, i16, i32, i64, u8, u16, u32, u64, f32, f64);

macro_rules! literal_left_bits {
    ($($t:ty),*) => {$(
        literal_left!(@ops $t: BitAnd bitand BitAnd, BitOr bitor BitOr, BitXor bitxor BitXor);
        literal_left_shifts!($t: Shl shl Shl, Shr shr Shr);
    )*};
}

/// A literal shifted by a `Dyn` count of any integer type: `1u64 << k`.
macro_rules! literal_left_shifts {
    ($t:ty: $($trait:ident $method:ident $op:ident),*) => {$(
        impl<U: CInt> $trait<Dyn<U>> for $t {
            type Output = Dyn<$t>;
            #[track_caller]
            fn $method(self, rhs: Dyn<U>) -> Dyn<$t> {
                binary(BinOp::$op, IntoArg::<$t>::into_arg(self), dyn_count::<$t, U>(rhs))
            }
        }
    )*};
}
literal_left_bits!(i8, i16, i32, i64, u8, u16, u32, u64);

impl<T: CSigned> Neg for Dyn<T> {
    type Output = Dyn<T>;
    #[track_caller]
    fn neg(self) -> Dyn<T> {
        unary(UnOp::Neg, self.arg())
    }
}

impl<T: CBits> Not for Dyn<T> {
    type Output = Dyn<T>;
    /// `!b` on `bool`, `~x` on integers.
    #[track_caller]
    fn not(self) -> Dyn<T> {
        let op = if T::ty() == Type::Scalar(Scalar::Bool) {
            UnOp::Not
        } else {
            UnOp::BitNot
        };
        unary(op, self.arg())
    }
}

/// Comparisons are methods because Rust's comparison traits must return `bool`.
#[allow(clippy::should_implement_trait)]
impl<T: CScalar> Dyn<T> {
    /// `self < rhs`.
    #[track_caller]
    pub fn lt(self, rhs: impl IntoArg<T>) -> Dyn<bool> {
        binary(BinOp::Lt, self.arg(), rhs.into_arg())
    }
    /// `self <= rhs`.
    #[track_caller]
    pub fn le(self, rhs: impl IntoArg<T>) -> Dyn<bool> {
        binary(BinOp::Le, self.arg(), rhs.into_arg())
    }
    /// `self > rhs`.
    #[track_caller]
    pub fn gt(self, rhs: impl IntoArg<T>) -> Dyn<bool> {
        binary(BinOp::Gt, self.arg(), rhs.into_arg())
    }
    /// `self >= rhs`.
    #[track_caller]
    pub fn ge(self, rhs: impl IntoArg<T>) -> Dyn<bool> {
        binary(BinOp::Ge, self.arg(), rhs.into_arg())
    }
    /// `self == rhs`.
    #[track_caller]
    pub fn eq(self, rhs: impl IntoArg<T>) -> Dyn<bool> {
        binary(BinOp::Eq, self.arg(), rhs.into_arg())
    }
    /// `self != rhs`.
    #[track_caller]
    pub fn ne(self, rhs: impl IntoArg<T>) -> Dyn<bool> {
        binary(BinOp::Ne, self.arg(), rhs.into_arg())
    }
}

impl Dyn<bool> {
    /// `self && rhs` (both sides are computed; C short-circuits harmlessly).
    #[track_caller]
    pub fn and(self, rhs: impl IntoArg<bool>) -> Dyn<bool> {
        binary(BinOp::And, self.arg(), rhs.into_arg())
    }
    /// `self || rhs`.
    #[track_caller]
    pub fn or(self, rhs: impl IntoArg<bool>) -> Dyn<bool> {
        binary(BinOp::Or, self.arg(), rhs.into_arg())
    }
}
