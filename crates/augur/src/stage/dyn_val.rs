//! `Dyn<T>`: a second-stage value.

use super::ctype::{CScalar, CType};
use crate::error::Error;
use crate::ir::{SrcLoc, Type, VarId};
use crate::trace::driver::{self, with};
pub use crate::trace::recorder::Arg;
use crate::trace::recorder::Ctl;
use crate::trace::recorder::Recorder;
use crate::trace::recorder::{OpExpr, Operand, Place};
use std::fmt;
use std::marker::PhantomData;
use std::panic::Location;

/// A second-stage value of C type `T`: a handle to a variable of the
/// generated code.
///
/// Operators on `Dyn` values do not compute anything now: they add code to
/// the generated function. Each result denotes the value *at the point it was
/// computed*, like any Rust value:
///
/// ```
/// #[augur::staged]
/// fn main() -> augur::Result<()> {
///     use augur::{Builder, Dyn};
///     let f = Builder::new()
///         .extract("f", |x: Dyn<i32>| {
///             let y = Dyn::new(0);
///             let e = x + 1; // the value of x + 1 now
///             x.set(5);
///             y.set(e); // old x + 1, not 6
///             y
///         })
///         .unwrap();
///     assert_eq!(f.interpret(&[10.into()]).unwrap(), 11.into());
///     Ok(())
/// }
/// ```
///
/// Handles are `Copy`. A handle made by [`Dyn::new`] (or a parameter) names
/// a *variable*: all copies see later assignments. A handle made by an
/// operator names a *value*: it cannot be assigned. Handles live only inside
/// the run of the closure that made them; using one elsewhere is an error.
pub struct Dyn<T: ?Sized> {
    pub(crate) var: VarId,
    pub(crate) gen: u32,
    _t: PhantomData<fn() -> *const T>,
}

impl<T: ?Sized> Clone for Dyn<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T: ?Sized> Copy for Dyn<T> {}

/// A `Dyn` hashes to nothing. What is first-stage about a `Dyn` is where
/// it is, not which variable it names: in a `Vec<Dyn<T>>` that
/// `#[augur::staged]` tracks, the length is the state that decides what
/// the program generates, and the variables are compared where they are
/// used (the engine compares operations with their operands).
///
/// ```
/// #[augur::staged]
/// fn main() -> augur::Result<()> {
///     use std::hash::{BuildHasher, RandomState};
/// #     augur::Builder::new().extract("f", |x: augur::Dyn<i32>| {
///     let s = RandomState::new();
///     assert_eq!(s.hash_one(x), s.hash_one(x + 1));
/// #     x }).unwrap();
///     Ok(())
/// }
/// ```
impl<T: ?Sized> std::hash::Hash for Dyn<T> {
    fn hash<H: std::hash::Hasher>(&self, _: &mut H) {}
}

impl<T: ?Sized> fmt::Debug for Dyn<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Dyn({})", self.var)
    }
}

/// Values usable where a `Dyn<T>` operand is expected: `Dyn<T>` itself and
/// literals of `T`.
pub trait IntoArg<T: ?Sized> {
    /// The operand.
    fn into_arg(self) -> Arg;
}

impl<T: ?Sized> IntoArg<T> for Dyn<T> {
    fn into_arg(self) -> Arg {
        Arg::Var(self.var, self.gen)
    }
}

impl<T: CScalar> IntoArg<T> for T {
    fn into_arg(self) -> Arg {
        Arg::Const(crate::trace::recorder::Operand::constant(
            self.to_const(),
            T::ty(),
        ))
    }
}

/// A type-erased operand for variadic calls (`printf`).
#[derive(Clone, Debug)]
pub struct AnyArg(pub(crate) Arg);

impl<T: ?Sized> From<Dyn<T>> for AnyArg {
    fn from(d: Dyn<T>) -> Self {
        AnyArg(d.into_arg())
    }
}

macro_rules! any_arg_from {
    ($($t:ty),*) => {$(
        impl From<$t> for AnyArg {
            fn from(v: $t) -> Self {
                AnyArg(IntoArg::<$t>::into_arg(v))
            }
        }
    )*};
}
any_arg_from!(bool, i8, i16, i32, i64, u8, u16, u32, u64, f32, f64);

#[track_caller]
pub(crate) fn caller() -> SrcLoc {
    SrcLoc::from_location(Location::caller())
}

impl<T: ?Sized> Dyn<T> {
    pub(crate) fn from_var(var: VarId, gen: u32) -> Dyn<T> {
        Dyn {
            var,
            gen,
            _t: PhantomData,
        }
    }

    pub(crate) fn arg(self) -> Arg {
        Arg::Var(self.var, self.gen)
    }

    /// True if both handles name the same variable or value of the same
    /// run: a first-stage question about the handles, not a comparison of
    /// values (that is [`eq`](Dyn::eq), which generates code). A DSL uses
    /// it to recognise a buffer it has seen before.
    ///
    /// ```
    /// #[augur::staged]
    /// fn main() -> augur::Result<()> {
    ///     use augur::{Builder, Dyn};
    ///     Builder::new()
    ///         .extract("same", |x: Dyn<i32>| {
    ///             let y = x;
    ///             assert!(x.same_handle(y));
    ///             assert!(!x.same_handle(x + 0));
    ///             x
    ///         })
    ///         .unwrap();
    ///     Ok(())
    /// }
    /// ```
    pub fn same_handle(self, other: Dyn<T>) -> bool {
        self.var == other.var && self.gen == other.gen
    }
}

/// Makes a `Dyn<R>` for an operation computed by `build`.
#[track_caller]
pub(crate) fn compute<R: CType + ?Sized>(
    build: impl FnOnce(&mut Recorder<'_>, SrcLoc) -> Result<OpExpr, Ctl>,
) -> Dyn<R> {
    let loc = caller();
    with(|e| {
        let expr = build(e, loc)?;
        let v = e.compute(R::ty(), expr, loc)?;
        Ok(Dyn::from_var(v, e.generation()))
    })
}

impl<T: CType + ?Sized> Dyn<T> {
    /// Declares a new variable initialised with `init`.
    #[track_caller]
    pub fn new(init: impl IntoArg<T>) -> Dyn<T> {
        Self::declare(None, Some(init.into_arg()), caller())
    }

    /// Declares a new variable with a name for the generated code.
    #[track_caller]
    pub fn named(name: &str, init: impl IntoArg<T>) -> Dyn<T> {
        Self::declare(Some(name.to_string()), Some(init.into_arg()), caller())
    }

    /// Declares a variable without a value (arrays, or variables every path
    /// assigns before reading).
    #[track_caller]
    pub fn uninit() -> Dyn<T> {
        Self::declare(None, None, caller())
    }

    /// `uninit` with a name.
    #[track_caller]
    pub fn uninit_named(name: &str) -> Dyn<T> {
        Self::declare(Some(name.to_string()), None, caller())
    }

    #[track_caller]
    fn declare(hint: Option<String>, init: Option<Arg>, loc: SrcLoc) -> Dyn<T> {
        with(|e| {
            let init = init.map(|a| e.operand(a, loc)).transpose()?;
            let v = e.declare(T::ty(), init, hint, loc)?;
            Ok(Dyn::from_var(v, e.generation()))
        })
    }

    /// A constant as a value: `Dyn::lit(3)`.
    #[track_caller]
    pub fn lit(v: T) -> Dyn<T>
    where
        T: CScalar,
    {
        let a = v.into_arg();
        compute(move |e, loc| Ok(OpExpr::Use(e.operand(a, loc)?)))
    }

    /// Assigns `v` to this variable (or to the memory this value was loaded
    /// from, for the results of [`at`](Dyn::at) and [`deref`](Dyn::deref)).
    #[track_caller]
    pub fn set(&self, v: impl IntoArg<T>) {
        let loc = caller();
        let a = v.into_arg();
        let (var, gen) = (self.var, self.gen);
        with(|e| {
            let place = e.place_of(var, gen, loc)?;
            let value = e.operand(a, loc)?;
            e.assign(place, value, loc)?;
            Ok(())
        })
    }

    /// Gives this variable a name in the generated code (parameters too).
    #[track_caller]
    pub fn name(self, name: &str) -> Self {
        let loc = caller();
        with(|e| e.name_var(self.var, self.gen, name, loc));
        self
    }

    /// Converts to another scalar type (C cast, Rust `as` for in-range values).
    #[track_caller]
    pub fn cast<U: CScalar>(self) -> Dyn<U> {
        let a = self.arg();
        compute(move |e, loc| Ok(OpExpr::Cast(e.operand(a, loc)?)))
    }

    /// Reinterprets a pointer as a pointer of another type (C pointer cast).
    #[track_caller]
    pub fn cast_ptr<U: CType + ?Sized>(self) -> Dyn<U> {
        let a = self.arg();
        compute(move |e, loc| Ok(OpExpr::Cast(e.operand(a, loc)?)))
    }

    /// The address of this variable, or of the element this value was
    /// loaded from: `&x`, `&a[i]`.
    #[track_caller]
    pub fn addr(self) -> Dyn<*mut T> {
        let (var, gen) = (self.var, self.gen);
        compute(move |e, loc| {
            let place = e.place_of(var, gen, loc)?;
            Ok(e.address_of(place))
        })
    }

    /// Field `index` of this struct, of type `F`: what the field methods
    /// of `#[derive(augur::Staged)]` call (`p.x()`). It assigns back to the
    /// field ([`set`](Dyn::set)) when the struct is a variable or was
    /// loaded from memory.
    #[doc(hidden)]
    #[track_caller]
    pub fn __field<F: CType>(self, index: u32) -> Dyn<F> {
        let (var, gen) = (self.var, self.gen);
        let loc = caller();
        with(|e| {
            let v = e.field(var, gen, index, F::ty(), loc)?;
            Ok(Dyn::from_var(v, e.generation()))
        })
    }

    /// A value chosen by a dyn branch: a variable declared before the
    /// branch and assigned on each side, so code after the join can share
    /// it. Prefer this to `let v = if c.is_true() { a } else { b };`, whose
    /// two values are different temporaries (each path then gets its own
    /// copy of the code that uses `v`).
    ///
    /// ```
    /// #[augur::staged]
    /// fn main() -> augur::Result<()> {
    ///     use augur::{Builder, Dyn};
    ///     let f = Builder::new()
    ///         .extract("pick", |x: Dyn<i32>| {
    ///             let v = Dyn::if_else(x.gt(0), || x + 1, || x - 1);
    ///             v * 2
    ///         })
    ///         .unwrap();
    ///     assert_eq!(f.interpret(&[3.into()]).unwrap(), 8.into());
    ///     assert_eq!(f.interpret(&[(-3).into()]).unwrap(), (-8).into());
    ///     Ok(())
    /// }
    /// ```
    #[track_caller]
    pub fn if_else(
        cond: Dyn<bool>,
        then: impl FnOnce() -> Dyn<T>,
        otherwise: impl FnOnce() -> Dyn<T>,
    ) -> Dyn<T> {
        let loc = caller();
        let v = Self::declare(None, None, loc);
        let c = cond.arg();
        // The decision is the caller's line, not this function's.
        let taken = with(|e| {
            let c = e.operand(c, loc)?;
            e.decide(c, loc)
        });
        if taken {
            v.set(then());
        } else {
            v.set(otherwise());
        }
        v
    }

    /// `c ? a : b`, choosing in the second stage without a branch.
    #[track_caller]
    pub fn select(c: impl IntoArg<bool>, a: impl IntoArg<T>, b: impl IntoArg<T>) -> Dyn<T> {
        let (c, a, b) = (c.into_arg(), a.into_arg(), b.into_arg());
        compute(move |e, loc| {
            Ok(OpExpr::Select(
                e.operand(c, loc)?,
                e.operand(a, loc)?,
                e.operand(b, loc)?,
            ))
        })
    }
}

/// Loads `base[index]` (or `*ptr`) into a value that remembers its place.
#[track_caller]
fn load<T: CType + ?Sized>(
    place: impl FnOnce(&Recorder<'_>, SrcLoc) -> Result<Place, Ctl>,
) -> Dyn<T> {
    let loc = caller();
    with(|e| {
        if matches!(T::ty(), Type::Array { .. }) {
            return Err(Ctl::fail(Error::Misuse {
                message: "arrays of arrays are not supported: index a flat array".into(),
                location: Some(loc),
            }));
        }
        let p = place(e, loc)?;
        let v = e.load(T::ty(), p, loc)?;
        Ok(Dyn::from_var(v, e.generation()))
    })
}

impl<T: CType + ?Sized> Dyn<T> {
    /// The current value: for a value loaded from memory, a fresh load of
    /// its place (so `v += 1; v += 1` on `p.at(0)` adds 2); else `self`.
    #[track_caller]
    pub(crate) fn current(self) -> Dyn<T> {
        let loc = caller();
        let (var, gen) = (self.var, self.gen);
        with(|e| {
            Ok(match e.reload(var, gen, loc)? {
                Some(v) => Dyn::from_var(v, e.generation()),
                None => self,
            })
        })
    }
}

/// Integer types usable as an index.
pub trait IntoIndex {
    /// The operand.
    fn into_index(self) -> Arg;
    /// The operand as an `int64_t` (a cast where it is of another type).
    #[doc(hidden)]
    #[track_caller]
    fn into_i64(self) -> Arg;
}
macro_rules! index_types {
    ($($t:ty),*) => {$(
        impl IntoIndex for $t {
            fn into_index(self) -> Arg {
                IntoArg::<$t>::into_arg(self)
            }
            fn into_i64(self) -> Arg {
                IntoArg::<i64>::into_arg(self as i64)
            }
        }
        impl IntoIndex for Dyn<$t> {
            fn into_index(self) -> Arg {
                self.arg()
            }
            #[track_caller]
            fn into_i64(self) -> Arg {
                if <$t as CType>::ty() == <i64 as CType>::ty() {
                    self.arg()
                } else {
                    self.cast::<i64>().arg()
                }
            }
        }
    )*};
}
index_types!(i8, i16, i32, i64, u8, u16, u32, u64);

impl IntoIndex for usize {
    fn into_index(self) -> Arg {
        IntoArg::<i64>::into_arg(self as i64)
    }
    fn into_i64(self) -> Arg {
        IntoArg::<i64>::into_arg(self as i64)
    }
}

macro_rules! indexable {
    ($($(#[$m:meta])* [$($g:tt)*] $self_ty:ty => $elem:ty;)*) => {$(
        impl<$($g)*> Dyn<$self_ty> {
            $(#[$m])*
            #[track_caller]
            pub fn at(self, index: impl IntoIndex) -> Dyn<$elem> {
                let (b, i) = (self.arg(), index.into_index());
                load(move |e, loc| Ok(Place::Index(e.operand(b, loc)?, e.operand(i, loc)?)))
            }
        }
    )*};
}

indexable! {
    /// `p[i]`: a value that [`set`](Dyn::set) stores back to `p[i]`.
    [T: CType] *mut T => T;
    /// `p[i]` (read only in C; `set` is the caller's responsibility).
    [T: CType] *const T => T;
    /// `a[i]` on a fixed array.
    [T: CType, const N: usize] [T; N] => T;
    /// `a[i]` on an unsized array parameter.
    [T: CType] [T] => T;
}

impl<T: CType> Dyn<*mut T> {
    /// `*p`: a value that [`set`](Dyn::set) stores back through `p`.
    #[track_caller]
    pub fn deref(self) -> Dyn<T> {
        let p = self.arg();
        load(move |e, loc| Ok(Place::Deref(e.operand(p, loc)?)))
    }

    /// The null pointer.
    #[track_caller]
    pub fn null() -> Dyn<*mut T> {
        compute(|_, _| {
            Ok(OpExpr::Use(Operand::constant(
                crate::ir::Const::Null,
                <*mut T as CType>::ty(),
            )))
        })
    }
}

impl<T: CType> Dyn<*const T> {
    /// `*p`.
    #[track_caller]
    pub fn deref(self) -> Dyn<T> {
        let p = self.arg();
        load(move |e, loc| Ok(Place::Deref(e.operand(p, loc)?)))
    }
}

/// What both kinds of pointer have: arithmetic, the distance between two
/// of them and the test for null.
macro_rules! pointer_ops {
    ($($p:ident),*) => {$(
        impl<T: CType> Dyn<*$p T> {
            /// `p + i` (pointer arithmetic in elements).
            #[track_caller]
            pub fn offset(self, i: impl IntoIndex) -> Dyn<*$p T> {
                let (p, i) = (self.arg(), i.into_index());
                compute(move |e, loc| {
                    Ok(OpExpr::Binary(
                        crate::ir::BinOp::Add,
                        e.operand(p, loc)?,
                        e.operand(i, loc)?,
                    ))
                })
            }

            /// `p - origin`, in elements (C's pointer difference): both
            /// must point into one allocation, which the interpreter
            /// checks.
            ///
            /// ```
            /// #[augur::staged]
            /// fn main() -> augur::Result<()> {
            ///     use augur::{libc, Builder, Dyn};
            ///     // Where byte `c` first appears in `s[..n]`, or -1.
            ///     let f = Builder::new()
            ///         .extract("index", |s: Dyn<*const u8>, c: Dyn<i32>, n: Dyn<u64>| {
            ///             let p = libc::MEMCHR.call(s, c, n);
            ///             let at = Dyn::new(-1i64);
            ///             if !p.is_null().is_true() {
            ///                 at.set(p.offset_from(s));
            ///             }
            ///             at
            ///         })
            ///         .unwrap();
            ///     let mut it = augur::Interpreter::new();
            ///     let s = it.memory_mut().alloc_slice(b"staged");
            ///     let find = |it: &mut augur::Interpreter, c: u8| {
            ///         f.interpret_in(it, &[s, (c as i32).into(), 6u64.into()])
            ///     };
            ///     assert_eq!(find(&mut it, b'g')?, 3i64.into());
            ///     assert_eq!(find(&mut it, b'x')?, (-1i64).into());
            ///     Ok(())
            /// }
            /// ```
            #[track_caller]
            pub fn offset_from(self, origin: Dyn<*$p T>) -> Dyn<i64> {
                let (p, q) = (self.arg(), origin.arg());
                compute(move |e, loc| {
                    Ok(OpExpr::Binary(
                        crate::ir::BinOp::Sub,
                        e.operand(p, loc)?,
                        e.operand(q, loc)?,
                    ))
                })
            }

            /// `p == NULL`.
            #[track_caller]
            pub fn is_null(self) -> Dyn<bool> {
                let p = self.arg();
                compute(move |e, loc| {
                    let null = Operand::constant(crate::ir::Const::Null, <*$p T as CType>::ty());
                    Ok(OpExpr::Binary(crate::ir::BinOp::Eq, e.operand(p, loc)?, null))
                })
            }
        }
    )*};
}
pointer_ops!(mut, const);

impl Dyn<*const super::ctype::CChar> {
    /// A C string literal.
    #[track_caller]
    pub fn str(s: &str) -> Dyn<*const super::ctype::CChar> {
        let c = crate::ir::Const::Str(s.to_string());
        compute(move |_, _| {
            Ok(OpExpr::Use(Operand::constant(
                c,
                <*const super::ctype::CChar as CType>::ty(),
            )))
        })
    }
}

impl Dyn<bool> {
    /// Branches on this condition: asks the decision oracle. Extraction runs
    /// the closure once for each answer, so both sides of the `if` (or the
    /// body and the exit of a `while`) end up in the generated code.
    ///
    /// ```
    /// #[augur::staged]
    /// fn main() -> augur::Result<()> {
    ///     use augur::{Builder, Dyn};
    ///     let f = Builder::new()
    ///         .extract("absolute", |x: Dyn<i32>| {
    ///             let r = Dyn::new(x);
    ///             if x.lt(0).is_true() {
    ///                 r.set(-x);
    ///             }
    ///             r
    ///         })
    ///         .unwrap();
    ///     assert_eq!(f.interpret(&[(-4).into()]).unwrap(), 4.into());
    ///     Ok(())
    /// }
    /// ```
    #[track_caller]
    pub fn is_true(self) -> bool {
        let loc = caller();
        let a = self.arg();
        with(|e| {
            let c = e.operand(a, loc)?;
            e.decide(c, loc)
        })
    }
}

/// Attaches an annotation to the next operation: `"pragma: omp parallel for"`
/// prints `_Pragma("omp parallel for")` before it, anything else a comment.
#[track_caller]
pub fn annotate(text: impl Into<String>) {
    let t = text.into();
    with(|e| {
        e.annotate(&t);
        Ok(())
    })
}

/// True while an extraction is running on this thread.
pub fn in_extraction() -> bool {
    driver::current_gen().is_some()
}

/// How `std::any::type_name` begins for a `Dyn` (see `staged::value`).
pub(crate) const TYPE_PREFIX: &str = concat!(module_path!(), "::Dyn<");
