//! `ScalarType`: a second-stage scalar type as first-stage data, the Rust
//! types that stand for each one (`DynScalar`), literals, and the errors
//! of dynamically typed values (`TypeError`).

use super::{DynPtr, DynValue};
use crate::ir::{Scalar, Type};
use crate::stage::ctype::CScalar;
use crate::stage::dyn_val::Dyn;
use std::fmt;

/// The type of a [`DynValue`]: one of the scalar types a `Dyn` can hold,
/// as a first-stage value that a DSL reads from its schema, compares,
/// stores in tables and matches on.
///
/// ```
/// use augur::ScalarType;
///
/// let schema = [ScalarType::I32, ScalarType::F64, ScalarType::Bool];
/// assert!(schema[0].is_int() && schema[0].is_signed());
/// assert!(schema[1].is_float() && schema[1].is_numeric());
/// assert!(!schema[2].is_numeric());
/// assert_eq!(schema[1].to_string(), "f64");
/// assert_eq!(ScalarType::of::<u16>(), ScalarType::U16);
/// assert_eq!(ScalarType::U64.c_name(), "uint64_t");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ScalarType {
    /// `bool`.
    Bool,
    /// `i8`.
    I8,
    /// `i16`.
    I16,
    /// `i32`.
    I32,
    /// `i64`.
    I64,
    /// `u8`.
    U8,
    /// `u16`.
    U16,
    /// `u32`.
    U32,
    /// `u64`.
    U64,
    /// `f32`.
    F32,
    /// `f64`.
    F64,
}

impl ScalarType {
    /// Every type, in declaration order.
    pub const ALL: [ScalarType; 11] = [
        ScalarType::Bool,
        ScalarType::I8,
        ScalarType::I16,
        ScalarType::I32,
        ScalarType::I64,
        ScalarType::U8,
        ScalarType::U16,
        ScalarType::U32,
        ScalarType::U64,
        ScalarType::F32,
        ScalarType::F64,
    ];

    /// The type of the Rust scalar `T`.
    pub fn of<T: DynScalar>() -> ScalarType {
        T::TYPE
    }

    /// The IR's scalar.
    pub fn scalar(self) -> Scalar {
        match self {
            ScalarType::Bool => Scalar::Bool,
            ScalarType::I8 => Scalar::I8,
            ScalarType::I16 => Scalar::I16,
            ScalarType::I32 => Scalar::I32,
            ScalarType::I64 => Scalar::I64,
            ScalarType::U8 => Scalar::U8,
            ScalarType::U16 => Scalar::U16,
            ScalarType::U32 => Scalar::U32,
            ScalarType::U64 => Scalar::U64,
            ScalarType::F32 => Scalar::F32,
            ScalarType::F64 => Scalar::F64,
        }
    }

    /// The type of an IR scalar; `None` for `Char`, which is for strings.
    pub fn from_scalar(s: Scalar) -> Option<ScalarType> {
        ScalarType::ALL.into_iter().find(|t| t.scalar() == s)
    }

    /// The IR type.
    pub fn ir_type(self) -> Type {
        Type::Scalar(self.scalar())
    }

    /// True for the integer types (not `bool`).
    pub fn is_int(self) -> bool {
        self.scalar().is_int()
    }

    /// True for the signed integers.
    pub fn is_signed(self) -> bool {
        self.scalar().is_signed()
    }

    /// True for `f32` and `f64`.
    pub fn is_float(self) -> bool {
        self.scalar().is_float()
    }

    /// True for everything but `bool`: what arithmetic takes.
    pub fn is_numeric(self) -> bool {
        self != ScalarType::Bool
    }

    /// Size in bytes.
    pub fn size(self) -> u64 {
        self.scalar().size()
    }

    /// The Rust spelling (`i32`), which `Display` writes.
    pub fn rust_name(self) -> &'static str {
        self.scalar().rust_name()
    }

    /// The C spelling (`int32_t`).
    pub fn c_name(self) -> &'static str {
        self.scalar().c_name()
    }

    /// The type C's *usual arithmetic conversions* give `self` and
    /// `other` (C11 6.3.1.8), for a DSL that opts into C's promotions
    /// ([`DynValue::promote`]): a `double` makes both `double`, else a
    /// `float` both `float`; else both are promoted (`bool` and the 8- and
    /// 16-bit integers to `int32_t`), and of two integer types the wider
    /// wins, the unsigned one at equal width.
    ///
    /// ```
    /// use augur::ScalarType::*;
    /// assert_eq!(I32.usual_arithmetic(F32), F32);
    /// assert_eq!(U8.usual_arithmetic(I16), I32);
    /// assert_eq!(I32.usual_arithmetic(U32), U32);
    /// assert_eq!(U32.usual_arithmetic(I64), I64);
    /// assert_eq!(I64.usual_arithmetic(U64), U64);
    /// ```
    pub fn usual_arithmetic(self, other: ScalarType) -> ScalarType {
        use ScalarType::*;
        let promoted = |t: ScalarType| {
            if t.is_float() || t.size() >= 4 {
                t
            } else {
                I32
            }
        };
        match (promoted(self), promoted(other)) {
            (F64, _) | (_, F64) => F64,
            (F32, _) | (_, F32) => F32,
            (a, b) if a == b => a,
            (a, b) if a.size() != b.size() => {
                if a.size() > b.size() {
                    a
                } else {
                    b
                }
            }
            // One width, one signed and one unsigned: the unsigned one.
            (a, b) => {
                if a.is_signed() {
                    b
                } else {
                    a
                }
            }
        }
    }
}

impl fmt::Display for ScalarType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.rust_name())
    }
}

impl From<ScalarType> for Scalar {
    fn from(t: ScalarType) -> Scalar {
        t.scalar()
    }
}

/// A first-stage value of one of the scalar types, as Rust code wrote it:
/// the literal operand of a [`DynValue`] operation.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Lit {
    Bool(bool),
    I8(i8),
    I16(i16),
    I32(i32),
    I64(i64),
    U8(u8),
    U16(u16),
    U32(u32),
    U64(u64),
    F32(f32),
    F64(f64),
}

/// What a literal is, by kind.
enum Kind {
    Bool(bool),
    Int(i128),
    Float(f64),
}

impl Lit {
    /// Its Rust type.
    pub(crate) fn ty(self) -> ScalarType {
        match self {
            Lit::Bool(_) => ScalarType::Bool,
            Lit::I8(_) => ScalarType::I8,
            Lit::I16(_) => ScalarType::I16,
            Lit::I32(_) => ScalarType::I32,
            Lit::I64(_) => ScalarType::I64,
            Lit::U8(_) => ScalarType::U8,
            Lit::U16(_) => ScalarType::U16,
            Lit::U32(_) => ScalarType::U32,
            Lit::U64(_) => ScalarType::U64,
            Lit::F32(_) => ScalarType::F32,
            Lit::F64(_) => ScalarType::F64,
        }
    }

    fn kind(self) -> Kind {
        match self {
            Lit::Bool(b) => Kind::Bool(b),
            Lit::I8(v) => Kind::Int(v.into()),
            Lit::I16(v) => Kind::Int(v.into()),
            Lit::I32(v) => Kind::Int(v.into()),
            Lit::I64(v) => Kind::Int(v.into()),
            Lit::U8(v) => Kind::Int(v.into()),
            Lit::U16(v) => Kind::Int(v.into()),
            Lit::U32(v) => Kind::Int(v.into()),
            Lit::U64(v) => Kind::Int(v.into()),
            Lit::F32(v) => Kind::Float(v.into()),
            Lit::F64(v) => Kind::Float(v),
        }
    }

    /// The literal as a value of type `ty`, by the rules of
    /// [`DynValue`](DynValue#literals): `None` where `ty` does not hold it.
    pub(crate) fn to_type(self, ty: ScalarType) -> Option<Lit> {
        macro_rules! int {
            ($v:expr, $($t:ident $r:ty),*) => {
                match ty {
                    $(ScalarType::$t => <$r>::try_from($v).ok().map(Lit::$t),)*
                    // Exact in the float type: its 24 or 53 bits hold it.
                    ScalarType::F32 => Some(Lit::F32($v as f32)).filter(|_| $v as f32 as i128 == $v),
                    ScalarType::F64 => Some(Lit::F64($v as f64)).filter(|_| $v as f64 as i128 == $v),
                    ScalarType::Bool => None,
                }
            };
        }
        match self.kind() {
            Kind::Bool(b) => (ty == ScalarType::Bool).then_some(Lit::Bool(b)),
            Kind::Int(v) => {
                int!(v, I8 i8, I16 i16, I32 i32, I64 i64, U8 u8, U16 u16, U32 u32, U64 u64)
            }
            Kind::Float(v) => match ty {
                ScalarType::F32 => Some(Lit::F32(v as f32)),
                ScalarType::F64 => Some(Lit::F64(v)),
                _ => None,
            },
        }
    }
}

impl fmt::Display for Lit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (*self, self.kind()) {
            (_, Kind::Bool(b)) => write!(f, "{b}"),
            (_, Kind::Int(v)) => write!(f, "{v}{}", self.ty()),
            (Lit::F32(v), _) => write!(f, "{v:?}f32"),
            (_, Kind::Float(v)) => write!(f, "{v:?}f64"),
        }
    }
}

mod sealed {
    pub trait Sealed {}
}

/// The Rust scalars a [`DynValue`] can hold: `bool`, `i8`–`i64`,
/// `u8`–`u64`, `f32`, `f64`. Sealed: its methods are augur's.
pub trait DynScalar: CScalar + sealed::Sealed {
    /// Its [`ScalarType`].
    const TYPE: ScalarType;
    /// `Some` for a `DynValue` of this type.
    #[doc(hidden)]
    fn unwrap(v: DynValue) -> Option<Dyn<Self>>;
    /// The `DynValue` of a `Dyn` of this type.
    #[doc(hidden)]
    fn wrap(v: Dyn<Self>) -> DynValue;
    /// `Some` for a `DynPtr` to this type.
    #[doc(hidden)]
    fn unwrap_ptr(p: DynPtr) -> Option<Dyn<*mut Self>>;
    /// The `DynPtr` of a pointer to this type.
    #[doc(hidden)]
    fn wrap_ptr(p: Dyn<*mut Self>) -> DynPtr;
    /// The literal.
    #[doc(hidden)]
    fn lit(self) -> Lit;
    /// `Some` for a literal of this type.
    #[doc(hidden)]
    fn from_lit(l: Lit) -> Option<Self>;
}

macro_rules! dyn_scalar {
    ($($t:ty => $v:ident),* $(,)?) => {$(
        impl sealed::Sealed for $t {}
        impl DynScalar for $t {
            const TYPE: ScalarType = ScalarType::$v;
            fn unwrap(v: DynValue) -> Option<Dyn<$t>> {
                match v {
                    DynValue::$v(d) => Some(d),
                    _ => None,
                }
            }
            fn wrap(v: Dyn<$t>) -> DynValue {
                DynValue::$v(v)
            }
            fn unwrap_ptr(p: DynPtr) -> Option<Dyn<*mut $t>> {
                match p {
                    DynPtr::$v(d) => Some(d),
                    _ => None,
                }
            }
            fn wrap_ptr(p: Dyn<*mut $t>) -> DynPtr {
                DynPtr::$v(p)
            }
            fn lit(self) -> Lit {
                Lit::$v(self)
            }
            fn from_lit(l: Lit) -> Option<$t> {
                match l {
                    Lit::$v(v) => Some(v),
                    _ => None,
                }
            }
        }
        impl From<Dyn<$t>> for DynValue {
            fn from(v: Dyn<$t>) -> DynValue {
                DynValue::$v(v)
            }
        }
        impl TryFrom<DynValue> for Dyn<$t> {
            type Error = TypeError;
            /// The typed `Dyn`, or [`TypeError::Expected`] (nothing fails:
            /// the caller decides what a mismatch is).
            fn try_from(v: DynValue) -> Result<Dyn<$t>, TypeError> {
                <$t as DynScalar>::unwrap(v).ok_or(TypeError::Expected {
                    op: "try_into",
                    wanted: ScalarType::$v,
                    found: v.ty(),
                })
            }
        }
        impl From<Dyn<*mut $t>> for DynPtr {
            fn from(p: Dyn<*mut $t>) -> DynPtr {
                DynPtr::$v(p)
            }
        }
        impl TryFrom<DynPtr> for Dyn<*mut $t> {
            type Error = TypeError;
            /// The typed pointer, or [`TypeError::Expected`].
            fn try_from(p: DynPtr) -> Result<Dyn<*mut $t>, TypeError> {
                <$t as DynScalar>::unwrap_ptr(p).ok_or(TypeError::Expected {
                    op: "try_into",
                    wanted: ScalarType::$v,
                    found: p.elem(),
                })
            }
        }
    )*};
}

dyn_scalar! {
    bool => Bool, i8 => I8, i16 => I16, i32 => I32, i64 => I64,
    u8 => U8, u16 => U16, u32 => U32, u64 => U64, f32 => F32, f64 => F64,
}

/// Why a [`DynValue`] operation does not type: what
/// [`Error::dsl_error`](crate::Error::dsl_error) gives back from the
/// [`Error::Dsl`](crate::Error::Dsl) that ends the extraction, whose
/// location is the user's line.
///
/// ```
/// #[augur::staged]
/// fn main() {
///     use augur::{Builder, Dyn, DynValue, ScalarType, TypeError};
///     let err = Builder::new()
///         .extract("f", |a: Dyn<i32>, b: Dyn<f64>| {
///             let sum = DynValue::from(a) + DynValue::from(b);
///             sum.expect::<f64>()
///         })
///         .unwrap_err();
///     assert_eq!(
///         err.dsl_error::<TypeError>(),
///         Some(&TypeError::Mismatch { op: "+", left: ScalarType::I32, right: ScalarType::F64 })
///     );
///     assert!(err.to_string().starts_with("`+` on mismatched types i32 and f64"), "{err}");
/// }
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TypeError {
    /// The two operands of `op` have different types (`i32 + f64`):
    /// nothing converts implicitly.
    Mismatch {
        /// The operator or method (`+`, `lt`, `select`).
        op: &'static str,
        /// The left operand's type.
        left: ScalarType,
        /// The right operand's type.
        right: ScalarType,
    },
    /// `op` needs a value of type `wanted` and was given a `found`: an
    /// assignment, a store, a declaration, [`DynValue::expect`].
    Expected {
        /// The operation.
        op: &'static str,
        /// The type it needs.
        wanted: ScalarType,
        /// The type it was given.
        found: ScalarType,
    },
    /// `op` is not defined on `ty` (`&` on `f64`, `-` on `u32`,
    /// `is_true` on `i32`).
    Unsupported {
        /// The operation.
        op: &'static str,
        /// The operand's type.
        ty: ScalarType,
        /// The types `op` takes.
        takes: &'static str,
    },
    /// A Rust literal that the other operand's type `ty` does not hold
    /// (`300` for a `u8`, `0.5` for an `i32`, `1` for a `bool`).
    Literal {
        /// The operation.
        op: &'static str,
        /// The type the literal would have to take.
        ty: ScalarType,
        /// The literal and its Rust type (`300i32`).
        literal: String,
    },
}

impl fmt::Display for TypeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TypeError::Mismatch { op, left, right } => write!(
                f,
                "`{op}` on mismatched types {left} and {right}: a DynValue converts nothing \
                 implicitly (cast one side, `.cast(ScalarType::{right:?})` or \
                 `.cast(ScalarType::{left:?})`)"
            ),
            TypeError::Expected { op, wanted, found } => {
                write!(f, "`{op}` needs a {wanted} value, not a {found} one")
            }
            TypeError::Unsupported { op, ty, takes } => {
                write!(f, "`{op}` is not defined on {ty}: it takes {takes}")
            }
            TypeError::Literal { op, ty, literal } => write!(
                f,
                "`{op}` on a {ty} value: the literal {literal} is not a {ty} (an integer \
                 literal takes an integer type that holds it or a float type that holds it \
                 exactly, a float literal a float type, `true`/`false` bool)"
            ),
        }
    }
}

impl std::error::Error for TypeError {}
