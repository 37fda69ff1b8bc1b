//! `DynValue`: a second-stage value whose type is first-stage data.
//!
//! A DSL whose types come from its input (a query over a schema, a
//! program in a typed language) knows each value's type only while it
//! runs, not when it is compiled. A [`DynValue`] is one of the typed
//! `Dyn<T>`, tagged with its [`ScalarType`]; every operation dispatches on
//! the tag at the first stage and then does exactly what the typed `Dyn`
//! operation does, so the generated code is the same as typed code's.
//! [`DynPtr`] is the same for pointers: memory whose element type is
//! first-stage data.

use crate::dsl;
use crate::stage::ctype::CScalar;
use crate::stage::dyn_val::{AnyArg, Arg, Dyn, IntoArg, IntoIndex};
use std::panic::Location;

/// Runs `$body` with `$T` the Rust type of the [`ScalarType`] `$ty`, if it
/// is one of the listed ones; else `$else`.
macro_rules! on_type {
    ($ty:expr; $($v:ident $t:ty),*; $T:ident => $body:expr; $o:ident => $else:expr) => {
        match $ty {
            $(ScalarType::$v => {
                #[allow(dead_code)]
                type $T = $t;
                $body
            })*
            #[allow(unreachable_patterns)]
            $o => $else,
        }
    };
}

/// [`on_type`] over every type.
macro_rules! any_type {
    ($ty:expr, $T:ident => $body:expr) => {
        on_type!($ty; Bool bool, I8 i8, I16 i16, I32 i32, I64 i64, U8 u8, U16 u16, U32 u32,
            U64 u64, F32 f32, F64 f64; $T => $body; _t => unreachable!("every type is listed"))
    };
}

/// [`on_type`] over the numeric types.
macro_rules! num_type {
    ($ty:expr, $T:ident => $body:expr, $o:ident => $else:expr) => {
        on_type!($ty; I8 i8, I16 i16, I32 i32, I64 i64, U8 u8, U16 u16, U32 u32, U64 u64,
            F32 f32, F64 f64; $T => $body; $o => $else)
    };
}

/// [`on_type`] over the integer types.
macro_rules! int_type {
    ($ty:expr, $T:ident => $body:expr, $o:ident => $else:expr) => {
        on_type!($ty; I8 i8, I16 i16, I32 i32, I64 i64, U8 u8, U16 u16, U32 u32, U64 u64;
            $T => $body; $o => $else)
    };
}

mod ops;
mod ptr;
mod scalar_type;

pub use ptr::DynPtr;
pub use scalar_type::{DynScalar, Lit, ScalarType, TypeError};

/// A second-stage scalar whose type is first-stage data: a `Dyn<T>` for
/// one of the [`DynScalar`] types, tagged with its [`ScalarType`].
///
/// A DSL whose types come from its input (a query's schema, a typed
/// program) holds its values as `DynValue`s. Every operation looks at the
/// types at the first stage, then does what the operation on the typed
/// `Dyn<T>` does: the generated code is exactly typed code's, and a
/// type error ends the extraction with a [`TypeError`] at the user's line.
///
/// ```
/// #[augur::staged]
/// fn main() -> augur::Result<()> {
///     use augur::{Builder, Dyn, DynValue, ScalarType};
///
///     // The type of the accumulator is first-stage data.
///     let acc_ty = ScalarType::I64;
///     let f = Builder::new().extract("twice_plus", |x: Dyn<i32>| {
///         let x = DynValue::from(x).cast(acc_ty);
///         let acc = DynValue::new_var(acc_ty, 1); // the literal takes i64
///         acc.set(acc + x * 2);
///         assert_eq!(acc.ty(), ScalarType::I64);
///         acc.expect::<i64>() // back to a typed Dyn
///     })?;
///     assert!(f.c_code().contains("(int64_t)arg0 * 2"), "{}", f.c_code());
///     assert_eq!(f.interpret(&[20.into()])?, 41i64.into());
///     Ok(())
/// }
/// ```
///
/// # Type rules
///
/// Rust's, decided at the first stage:
///
/// * The two operands of an operator or comparison have one type: there is
///   no implicit conversion or promotion (`i32 + i64` is an error, so is
///   `u8 < i32`). [`cast`](DynValue::cast) converts explicitly.
/// * `+ - * /` take the numeric types; `%` the integers (C has no `%` on
///   floats); `& | ^ !` the integers and `bool` (on `bool` they are the
///   logical `&&`, `||`, `!=`, `!`); `<< >>` an integer shifted by a count
///   of any integer type, masked to its width as typed shifts are; unary
///   `-` the signed integers and the floats.
/// * `eq ne lt le gt ge` take any two operands of one type and give a
///   `bool` value.
/// * Every operation means what it means on `Dyn<T>`: integers wrap at
///   their width, division by zero is undefined (the interpreter reports
///   it), `cast` is a C cast (Rust's `as` for values in range).
/// * `cast` converts between any two numeric types, and from `bool` to a
///   number (`true` is 1); it does not convert a number to `bool`: compare
///   it (`x.ne(0)`).
/// * [`set`](DynValue::set), [`DynPtr::store`] and [`new_var`](DynValue::new_var)
///   take a value of the variable's, element's or declared type.
///
/// # Literals
///
/// A Rust literal on either side of an operator, or given where a value
/// is expected, takes the type of the other operand when that type holds
/// it exactly, as an unsuffixed literal takes its type from Rust code
/// around it: an integer literal any integer type whose range holds it
/// and any float type that represents it exactly (`x * 2` on an `f64`), a
/// float literal either float type (rounded as `as f32` rounds), `true` and
/// `false` only `bool`. Its value counts, not its suffix. `300` for a `u8`
/// or `0.5` for an `i32` is a [`TypeError::Literal`]. The code is typed
/// code's with the literal of that type (`x * 2.0`).
///
/// # Errors
///
/// A type error ends the extraction: `extract` returns
/// [`Error::Dsl`](crate::Error::Dsl) at the line of the operation, whose
/// [`dsl_error`](crate::Error::dsl_error) is the [`TypeError`] naming the
/// operation and both types. A DSL that reports its own errors checks
/// [`ty`](DynValue::ty) first; `Dyn::<T>::try_from(v)` converts without
/// failing.
///
/// `DynValue` is `Copy` and hashes to its type (its `Dyn` hashes to
/// nothing): under `#[augur::staged]`, a local `DynValue` puts its type in
/// the program point, as first-stage state.
#[derive(Clone, Copy, Debug, Hash)]
pub enum DynValue {
    /// A `bool` value.
    Bool(Dyn<bool>),
    /// An `i8` value.
    I8(Dyn<i8>),
    /// An `i16` value.
    I16(Dyn<i16>),
    /// An `i32` value.
    I32(Dyn<i32>),
    /// An `i64` value.
    I64(Dyn<i64>),
    /// A `u8` value.
    U8(Dyn<u8>),
    /// A `u16` value.
    U16(Dyn<u16>),
    /// A `u32` value.
    U32(Dyn<u32>),
    /// A `u64` value.
    U64(Dyn<u64>),
    /// An `f32` value.
    F32(Dyn<f32>),
    /// An `f64` value.
    F64(Dyn<f64>),
}

/// Ends the extraction with `e` at the user's line.
#[track_caller]
pub(crate) fn fail(e: TypeError) -> ! {
    dsl::fail(e, Location::caller())
}

/// What can stand where a [`DynValue`] operand is expected: a `DynValue`,
/// a typed `Dyn<T>`, or a Rust literal of a [`DynScalar`] type (which
/// takes the other operand's type, see [literals](DynValue#literals)).
pub trait DynOperand {
    /// The operand.
    #[doc(hidden)]
    fn operand(self) -> Rhs;
}

/// An operand: a value, or a literal whose type is not decided yet.
#[doc(hidden)]
#[derive(Clone, Copy, Debug)]
pub enum Rhs {
    Value(DynValue),
    Lit(Lit),
}

impl Rhs {
    /// The value's type, or the literal's own Rust type.
    pub(crate) fn ty(self) -> ScalarType {
        match self {
            Rhs::Value(v) => v.ty(),
            Rhs::Lit(l) => l.ty(),
        }
    }
}

impl DynOperand for DynValue {
    fn operand(self) -> Rhs {
        Rhs::Value(self)
    }
}

impl<T: DynScalar> DynOperand for Dyn<T> {
    fn operand(self) -> Rhs {
        Rhs::Value(T::wrap(self))
    }
}

impl<T: DynScalar> DynOperand for T {
    fn operand(self) -> Rhs {
        Rhs::Lit(self.lit())
    }
}

/// An operand resolved to type `T`: what typed code would have written.
#[derive(Clone, Copy)]
pub(crate) enum Side<T: 'static> {
    Dyn(Dyn<T>),
    Lit(T),
}

impl<T: CScalar> IntoArg<T> for Side<T> {
    fn into_arg(self) -> Arg {
        match self {
            Side::Dyn(d) => d.into_arg(),
            Side::Lit(v) => v.into_arg(),
        }
    }
}

/// `r` as a `T`; a value of another type is `mismatch()`.
#[track_caller]
fn resolve<T: DynScalar>(
    op: &'static str,
    r: Rhs,
    mismatch: impl FnOnce() -> TypeError,
) -> Side<T> {
    match r {
        Rhs::Value(v) => match T::unwrap(v) {
            Some(d) => Side::Dyn(d),
            None => fail(mismatch()),
        },
        Rhs::Lit(l) => match l.to_type(T::TYPE).and_then(T::from_lit) {
            Some(v) => Side::Lit(v),
            None => fail(TypeError::Literal {
                op,
                ty: T::TYPE,
                literal: l.to_string(),
            }),
        },
    }
}

/// `r` as an operand of `op` next to one of type `T` (`a` and `b` are the
/// operands in order, for the message).
#[track_caller]
pub(crate) fn operand<T: DynScalar>(op: &'static str, r: Rhs, a: Rhs, b: Rhs) -> Side<T> {
    resolve(op, r, || TypeError::Mismatch {
        op,
        left: a.ty(),
        right: b.ty(),
    })
}

/// `r` where `op` needs a `T`.
#[track_caller]
pub(crate) fn wanted<T: DynScalar>(op: &'static str, r: Rhs) -> Side<T> {
    resolve(op, r, || TypeError::Expected {
        op,
        wanted: T::TYPE,
        found: r.ty(),
    })
}

/// The typed handle of `v`, whose type the caller dispatched on.
pub(crate) fn this<T: DynScalar>(v: DynValue) -> Dyn<T> {
    T::unwrap(v).expect("dispatched on the value's own type")
}

/// The type two operands share: the first value's (a literal takes it).
pub(crate) fn lead(a: Rhs, b: Rhs) -> ScalarType {
    match (a, b) {
        (Rhs::Value(v), _) | (_, Rhs::Value(v)) => v.ty(),
        (Rhs::Lit(l), _) => l.ty(),
    }
}

impl DynValue {
    /// The type, at the first stage.
    pub fn ty(self) -> ScalarType {
        match self {
            DynValue::Bool(_) => ScalarType::Bool,
            DynValue::I8(_) => ScalarType::I8,
            DynValue::I16(_) => ScalarType::I16,
            DynValue::I32(_) => ScalarType::I32,
            DynValue::I64(_) => ScalarType::I64,
            DynValue::U8(_) => ScalarType::U8,
            DynValue::U16(_) => ScalarType::U16,
            DynValue::U32(_) => ScalarType::U32,
            DynValue::U64(_) => ScalarType::U64,
            DynValue::F32(_) => ScalarType::F32,
            DynValue::F64(_) => ScalarType::F64,
        }
    }

    /// Declares a variable of type `ty` initialised with `init` (a value of
    /// type `ty`, or a literal it holds): `Dyn::<T>::new(init)`.
    ///
    /// ```
    /// #[augur::staged]
    /// fn main() -> augur::Result<()> {
    ///     use augur::{Builder, Dyn, DynValue, ScalarType};
    ///     let f = Builder::new().extract("f", |x: Dyn<f64>| {
    ///         let sum = DynValue::named("sum", ScalarType::F64, 0); // 0 is 0.0 here
    ///         sum.set(sum + x);
    ///         sum.set(sum + x);
    ///         sum.expect::<f64>()
    ///     })?;
    ///     assert!(f.c_code().contains("double sum = 0.0;"), "{}", f.c_code());
    ///     assert_eq!(f.interpret(&[1.5.into()])?, 3.0.into());
    ///     Ok(())
    /// }
    /// ```
    #[track_caller]
    pub fn new_var(ty: ScalarType, init: impl DynOperand) -> DynValue {
        let init = init.operand();
        any_type!(ty, T => DynValue::from(Dyn::<T>::new(wanted::<T>("new_var", init))))
    }

    /// [`new_var`](DynValue::new_var) with a name for the generated code:
    /// `Dyn::<T>::named(name, init)`.
    #[track_caller]
    pub fn named(name: &str, ty: ScalarType, init: impl DynOperand) -> DynValue {
        let init = init.operand();
        any_type!(ty, T => DynValue::from(Dyn::<T>::named(name, wanted::<T>("named", init))))
    }

    /// A variable of type `ty` without a value: `Dyn::<T>::uninit()`.
    #[track_caller]
    pub fn uninit(ty: ScalarType) -> DynValue {
        any_type!(ty, T => DynValue::from(Dyn::<T>::uninit()))
    }

    /// The constant `v` as a value of type `ty` (`v` a literal `ty` holds,
    /// see [literals](DynValue#literals)): `Dyn::<T>::lit(v)`.
    ///
    /// ```
    /// #[augur::staged]
    /// fn main() -> augur::Result<()> {
    ///     use augur::{Builder, Dyn, DynValue, ScalarType};
    ///     let f = Builder::new().extract("f", |_x: Dyn<i32>| {
    ///         DynValue::lit(ScalarType::U8, 200).expect::<u8>()
    ///     })?;
    ///     assert_eq!(f.interpret(&[0.into()])?, 200u8.into());
    ///     Ok(())
    /// }
    /// ```
    #[track_caller]
    pub fn lit(ty: ScalarType, v: impl DynScalar) -> DynValue {
        let v = v.operand();
        any_type!(ty, T => match wanted::<T>("lit", v) {
            Side::Lit(v) => DynValue::from(Dyn::<T>::lit(v)),
            Side::Dyn(d) => DynValue::from(d),
        })
    }

    /// Assigns `v` (a value of this one's type, or a literal it holds) to
    /// this variable, or to the memory this value was loaded from:
    /// [`Dyn::set`].
    #[track_caller]
    pub fn set(&self, v: impl DynOperand) {
        let v = v.operand();
        let me = *self;
        any_type!(me.ty(), T => this::<T>(me).set(wanted::<T>("set", v)))
    }

    /// Names this variable in the generated code: [`Dyn::name`].
    #[track_caller]
    pub fn name(self, name: &str) -> DynValue {
        any_type!(self.ty(), T => DynValue::from(this::<T>(self).name(name)))
    }

    /// Converts to `ty`: `x.cast::<T>()`, a C cast. Numbers convert to
    /// each other and `bool` to numbers; a number to `bool` is a
    /// [`TypeError::Unsupported`] (compare it instead: `x.ne(0)`).
    ///
    /// ```
    /// #[augur::staged]
    /// fn main() -> augur::Result<()> {
    ///     use augur::{Builder, Dyn, DynValue, ScalarType};
    ///     let f = Builder::new().extract("f", |x: Dyn<f64>| {
    ///         let v = DynValue::from(x).cast(ScalarType::I32);
    ///         (v + 1).expect::<i32>()
    ///     })?;
    ///     assert!(f.c_code().contains("(int32_t)arg0 + 1"), "{}", f.c_code());
    ///     assert_eq!(f.interpret(&[2.75.into()])?, 3.into());
    ///     Ok(())
    /// }
    /// ```
    #[track_caller]
    pub fn cast(self, ty: ScalarType) -> DynValue {
        if ty == ScalarType::Bool && self.ty() != ScalarType::Bool {
            fail(TypeError::Unsupported {
                op: "cast to bool",
                ty: self.ty(),
                takes: "bool (compare a number with zero instead: `x.ne(0)`)",
            });
        }
        any_type!(self.ty(), S => {
            let x = this::<S>(self);
            any_type!(ty, T => DynValue::from(x.cast::<T>()))
        })
    }

    /// `a` and `b` converted to the type of C's usual arithmetic
    /// conversions ([`ScalarType::usual_arithmetic`]), for a DSL whose
    /// language promotes as C does; a value already of that type is
    /// returned as it is (no code). `DynValue`'s own operators promote
    /// nothing.
    ///
    /// ```
    /// #[augur::staged]
    /// fn main() -> augur::Result<()> {
    ///     use augur::{Builder, Dyn, DynValue, ScalarType};
    ///     let f = Builder::new().extract("mixed", |i: Dyn<i32>, x: Dyn<f32>| {
    ///         let (a, b) = DynValue::promote(i.into(), x.into());
    ///         assert_eq!((a.ty(), b.ty()), (ScalarType::F32, ScalarType::F32));
    ///         (a * b).expect::<f32>()
    ///     })?;
    ///     assert!(f.c_code().contains("(float)arg0 * arg1"), "{}", f.c_code());
    ///     Ok(())
    /// }
    /// ```
    #[track_caller]
    pub fn promote(a: DynValue, b: DynValue) -> (DynValue, DynValue) {
        let t = a.ty().usual_arithmetic(b.ty());
        // No closure: a cast is at the caller's line.
        let a = if a.ty() == t { a } else { a.cast(t) };
        let b = if b.ty() == t { b } else { b.cast(t) };
        (a, b)
    }

    /// `c ? a : b` without a branch: [`Dyn::select`]. `c` is a `bool`
    /// value; `a` and `b` have one type (a literal takes the other's).
    ///
    /// ```
    /// #[augur::staged]
    /// fn main() -> augur::Result<()> {
    ///     use augur::{Builder, Dyn, DynValue};
    ///     let f = Builder::new().extract("clamp0", |x: Dyn<i64>| {
    ///         let x = DynValue::from(x);
    ///         DynValue::select(x.lt(0), 0, x).expect::<i64>()
    ///     })?;
    ///     assert_eq!(f.interpret(&[(-5i64).into()])?, 0i64.into());
    ///     assert_eq!(f.interpret(&[7i64.into()])?, 7i64.into());
    ///     Ok(())
    /// }
    /// ```
    #[track_caller]
    pub fn select(c: impl DynOperand, a: impl DynOperand, b: impl DynOperand) -> DynValue {
        let (c, a, b) = (c.operand(), a.operand(), b.operand());
        let c = wanted::<bool>("select", c);
        any_type!(lead(a, b), T => DynValue::from(Dyn::<T>::select(
            c,
            operand::<T>("select", a, a, b),
            operand::<T>("select", b, a, b),
        )))
    }

    /// Branches on this `bool` value: [`Dyn::is_true`], the decision
    /// oracle. Any other type is a [`TypeError::Unsupported`].
    ///
    /// ```
    /// #[augur::staged]
    /// fn main() -> augur::Result<()> {
    ///     use augur::{Builder, Dyn, DynValue};
    ///     let f = Builder::new().extract("magnitude", |x: Dyn<f32>| {
    ///         let r = DynValue::new_var(augur::ScalarType::F32, x);
    ///         if r.lt(0).is_true() {
    ///             r.set(-r);
    ///         }
    ///         r.expect::<f32>()
    ///     })?;
    ///     assert_eq!(f.interpret(&[(-2.5f32).into()])?, 2.5f32.into());
    ///     Ok(())
    /// }
    /// ```
    #[track_caller]
    pub fn is_true(self) -> bool {
        match self {
            DynValue::Bool(b) => b.is_true(),
            other => fail(TypeError::Unsupported {
                op: "is_true",
                ty: other.ty(),
                takes: "bool (compare the value: `x.ne(0)`)",
            }),
        }
    }

    /// The typed `Dyn<T>`; a value of another type is a
    /// [`TypeError::Expected`] at the caller's line (`Dyn::<T>::try_from`
    /// gives it as a `Result` instead).
    ///
    /// ```
    /// #[augur::staged]
    /// fn main() {
    ///     use augur::{Builder, Dyn, DynValue, TypeError};
    ///     let err = Builder::new()
    ///         .extract("f", |x: Dyn<i32>| DynValue::from(x).expect::<i64>())
    ///         .unwrap_err();
    ///     assert!(matches!(err.dsl_error::<TypeError>(), Some(TypeError::Expected { .. })));
    ///     assert!(err.to_string().starts_with("`expect` needs a i64 value, not a i32 one"));
    /// }
    /// ```
    #[track_caller]
    pub fn expect<T: DynScalar>(self) -> Dyn<T> {
        match T::unwrap(self) {
            Some(d) => d,
            None => fail(TypeError::Expected {
                op: "expect",
                wanted: T::TYPE,
                found: self.ty(),
            }),
        }
    }
}

/// A `DynValue` as a `printf` argument.
impl From<DynValue> for AnyArg {
    fn from(v: DynValue) -> AnyArg {
        any_type!(v.ty(), T => AnyArg::from(this::<T>(v)))
    }
}

/// An integer `DynValue` indexes memory (`p.at(i)`, [`DynPtr::load`]);
/// any other type is a [`TypeError::Unsupported`] at the indexing line.
impl IntoIndex for DynValue {
    #[track_caller]
    fn into_index(self) -> Arg {
        int_type!(self.ty(), T => this::<T>(self).into_index(), t => fail(TypeError::Unsupported {
            op: "index",
            ty: t,
            takes: "integers",
        }))
    }

    #[track_caller]
    fn into_i64(self) -> Arg {
        int_type!(self.ty(), T => this::<T>(self).into_i64(), t => fail(TypeError::Unsupported {
            op: "index",
            ty: t,
            takes: "integers",
        }))
    }
}
