//! Operators on `Dyn` values: arithmetic, bitwise, logical, comparisons and
//! compound assignment, with literals on either side.

use super::ctype::{CInt, CNum, CScalar, CSigned, CType};
use super::dyn_val::{compute, Arg, Dyn, IntoArg};
use crate::ir::{BinOp, Scalar, Type, UnOp};
use crate::trace::recorder::OpExpr;
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
binops!(CInt:
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
        literal_left!(@ops $t: BitAnd bitand BitAnd, BitOr bitor BitOr, BitXor bitxor BitXor, Shl shl Shl, Shr shr Shr);
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
