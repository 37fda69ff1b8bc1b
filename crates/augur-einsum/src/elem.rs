//! Element types of tensors.

use augur::stage::ctype::{CNum, CSigned};
use augur::{CScalar, Dyn};

/// A tensor element: a C number type the second stage computes with.
///
/// Implemented for `f32`, `f64`, `i32` and `i64`.
pub trait Elem: CNum + CSigned + CScalar + Copy + PartialEq + std::fmt::Debug + 'static {
    /// The C spelling, for messages.
    const C_NAME: &'static str;
    /// `0`, the start of a sum.
    fn zero() -> Self;
    /// `1`, the start of a product.
    fn one() -> Self;
    /// An index value (`i` in `A[i] = i`) as an element.
    ///
    /// `#[track_caller]`: the cast reports the caller's line, which lies in
    /// the `#[augur::staged]` code that generates the statement (a trait's
    /// provided method cannot carry the attribute; this one holds no plain
    /// state).
    #[track_caller]
    fn from_index(i: Dyn<i32>) -> Dyn<Self> {
        i.cast::<Self>()
    }
}

macro_rules! elem {
    ($($t:ty => $c:literal, $z:expr, $o:expr);* $(;)?) => {$(
        impl Elem for $t {
            const C_NAME: &'static str = $c;
            fn zero() -> Self { $z }
            fn one() -> Self { $o }
        }
    )*};
}

elem!(
    f32 => "float", 0.0, 1.0;
    f64 => "double", 0.0, 1.0;
    i32 => "int32_t", 0, 1;
    i64 => "int64_t", 0, 1;
);
