//! Named extern C functions with typed calls.

use super::ctype::CType;
use super::dyn_val::{caller, AnyArg, Arg, Dyn, IntoArg};
use crate::error::Error;
use crate::ir::{ExternSig, Type};
use crate::trace::driver::with;
use crate::trace::recorder::OpExpr;
use std::marker::PhantomData;

/// An extern C function of Rust signature `F` (a `fn(A, B) -> R` type):
/// the generated code calls it by name.
///
/// ```
/// #[augur::staged]
/// fn main() -> augur::Result<()> {
///     use augur::{Builder, Dyn, ExternFn};
///     const ABS: ExternFn<fn(i32) -> i32> = ExternFn::new("abs").header("stdlib.h");
///     let f = Builder::new().extract("f", |x: Dyn<i32>| ABS.call(x) + 1).unwrap();
///     assert!(f.c_code().contains("abs(arg0) + 1"));
///     Ok(())
/// }
/// ```
///
/// Functions with a `header` are declared by that header; the others get a
/// prototype in the generated C, and their code must be supplied when
/// compiling ([`CompileOptions::extra_c`](crate::exec::compile::CompileOptions)) or
/// registered with the interpreter.
pub struct ExternFn<F> {
    name: &'static str,
    header: Option<&'static str>,
    variadic: bool,
    _f: PhantomData<F>,
}

impl<F> Clone for ExternFn<F> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<F> Copy for ExternFn<F> {}

impl<F> ExternFn<F> {
    /// A function the generated C declares with a prototype.
    pub const fn new(name: &'static str) -> Self {
        ExternFn {
            name,
            header: None,
            variadic: false,
            _f: PhantomData,
        }
    }

    /// Declared by `#include <header>` instead of a prototype.
    pub const fn header(mut self, header: &'static str) -> Self {
        self.header = Some(header);
        self
    }

    /// Takes extra arguments after the fixed ones (use [`call_with`](ExternFn::call_with)).
    pub const fn variadic(mut self) -> Self {
        self.variadic = true;
        self
    }

    /// The C name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The header that declares it, if any.
    pub fn header_name(&self) -> Option<&'static str> {
        self.header
    }

    fn sig<'a>(&self, params: &'a [Type], ret: Type) -> ExternSig<'a> {
        ExternSig {
            name: self.name,
            params,
            ret,
            variadic: self.variadic,
            header: self.header,
            indirect: false,
        }
    }
}

/// Return types of extern calls: `()` gives nothing, `T` a `Dyn<T>`.
pub trait CallRet {
    /// What the call returns in the first stage.
    type Out;
    /// The C return type.
    fn ty() -> Type;
    /// Builds the result from the defined temporary (none for `void`).
    fn wrap(var: Option<crate::ir::VarId>, gen: u32) -> Self::Out;
}

impl CallRet for () {
    type Out = ();
    fn ty() -> Type {
        Type::Void
    }
    fn wrap(_: Option<crate::ir::VarId>, _: u32) {}
}

impl<T: CType> CallRet for T {
    type Out = Dyn<T>;
    fn ty() -> Type {
        T::ty()
    }
    fn wrap(var: Option<crate::ir::VarId>, gen: u32) -> Dyn<T> {
        Dyn::from_var(var.expect("a non-void call defines a value"), gen)
    }
}

/// The id of extern `sig` in the function being extracted; a misuse (two
/// signatures for one name) is reported at `loc`.
pub(crate) fn declare(
    e: &mut crate::trace::recorder::Recorder<'_>,
    sig: &ExternSig<'_>,
    loc: crate::ir::SrcLoc,
) -> Result<crate::ir::FuncId, crate::trace::recorder::Ctl> {
    e.extern_fn(sig).map_err(|err| match err {
        Error::Misuse { message, .. } => crate::trace::recorder::Ctl::fail(Error::Misuse {
            message,
            location: Some(loc),
        }),
        other => crate::trace::recorder::Ctl::fail(other),
    })
}

/// Emits a call of `sig` with `args` at the caller's line: an extern, or a
/// staged function of the module being extracted.
#[track_caller]
pub(crate) fn emit_call<R: CallRet>(
    sig: ExternSig<'_>,
    args: impl IntoIterator<Item = Arg>,
) -> R::Out {
    let loc = caller();
    with(|e| {
        let id = declare(e, &sig, loc)?;
        emit::<R>(e, args, loc, |ops| OpExpr::Call(id, ops))
    })
}

/// Emits intrinsic `op` applied to `args` at the caller's line, with type
/// `R` (which its signature gives for the arguments' types).
#[track_caller]
pub(crate) fn emit_intrinsic<R: CallRet>(
    op: crate::ir::Intrinsic,
    args: impl IntoIterator<Item = Arg>,
) -> R::Out {
    let loc = caller();
    with(|e| emit::<R>(e, args, loc, |ops| OpExpr::Intrinsic(op, ops)))
}

/// Records `make(operands)` of type `R`: evaluated for its effect when `R`
/// is `()`, into a new temporary otherwise.
fn emit<R: CallRet>(
    e: &mut crate::trace::recorder::Recorder<'_>,
    args: impl IntoIterator<Item = Arg>,
    loc: crate::ir::SrcLoc,
    make: impl FnOnce(Vec<crate::trace::graph::Operand>) -> OpExpr,
) -> Result<R::Out, crate::trace::recorder::Ctl> {
    let ops = args
        .into_iter()
        .map(|a| e.operand(a, loc))
        .collect::<Result<Vec<_>, _>>()?;
    let expr = make(ops);
    let ty = R::ty();
    let var = if ty == Type::Void {
        e.eval(expr, loc)?;
        None
    } else {
        Some(e.compute(ty, expr, loc)?)
    };
    Ok(R::wrap(var, e.generation()))
}

macro_rules! arity {
    ($($a:ident $x:ident),*) => {
        impl<R: CallRet, $($a: CType),*> ExternFn<fn($($a),*) -> R> {
            /// Calls the function with typed arguments (`Dyn` values or literals).
            #[track_caller]
            #[allow(clippy::too_many_arguments)]
            pub fn call(&self, $($x: impl IntoArg<$a>),*) -> R::Out {
                let params = [$($a::ty()),*];
                emit_call::<R>(self.sig(&params, R::ty()), [$($x.into_arg()),*])
            }

            /// Calls with any arguments: the fixed ones must match in number;
            /// variadic functions take more (`printf`).
            #[track_caller]
            pub fn call_with(&self, args: &[AnyArg]) -> R::Out {
                let fixed = <[&str]>::len(&[$(stringify!($a)),*]);
                let ok = args.len() == fixed || (self.variadic && args.len() > fixed);
                if !ok {
                    let loc = caller();
                    crate::trace::driver::throw(crate::trace::recorder::Ctl::fail(Error::Misuse {
                        message: format!(
                            "`{}` takes {fixed} argument(s), given {}",
                            self.name,
                            args.len()
                        ),
                        location: Some(loc),
                    }));
                }
                let params = [$($a::ty()),*];
                emit_call::<R>(self.sig(&params, R::ty()), args.iter().map(|a| a.0.clone()))
            }
        }
    };
}

arity!();
arity!(A1 a1);
arity!(A1 a1, A2 a2);
arity!(A1 a1, A2 a2, A3 a3);
arity!(A1 a1, A2 a2, A3 a3, A4 a4);
arity!(A1 a1, A2 a2, A3 a3, A4 a4, A5 a5);
arity!(A1 a1, A2 a2, A3 a3, A4 a4, A5 a5, A6 a6);
arity!(A1 a1, A2 a2, A3 a3, A4 a4, A5 a5, A6 a6, A7 a7);
arity!(A1 a1, A2 a2, A3 a3, A4 a4, A5 a5, A6 a6, A7 a7, A8 a8);
