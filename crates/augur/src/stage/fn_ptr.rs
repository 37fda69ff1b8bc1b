//! Function pointers: the address of a staged function or an extern as a
//! `Dyn` value, stored, passed and called through.
//!
//! `Dyn<FnPtr<fn(A) -> R>>` is a C `R (*)(A)`. It is made by
//! [`Func::addr`], [`Instance::addr`] or [`ExternFn::addr`], comes in as a
//! parameter (the compiled function then takes a Rust `unsafe extern "C"
//! fn`), or is loaded from memory; [`Dyn::call`](Dyn#method.call) calls
//! through it. Calling through null, or through a pointer that is not a
//! function's, is an interpreter error.

use super::ctype::{CType, Native};
use super::dyn_val::{compute, Dyn, IntoArg};
use super::extern_fn::{declare, emit_call, CallRet, ExternFn};
use super::func::{Func, Instance, Key, Signature};
use super::signature::StagedRet;
use crate::ir::{ExternSig, Type};
use crate::trace::recorder::{OpExpr, Operand};
use std::marker::PhantomData;

/// The second-stage type of a pointer to functions of signature `S` (a
/// Rust function type, as for [`Func`]): `Dyn<FnPtr<fn(f64) -> f64>>` is a
/// C `double (*)(double)`. Only a type: no value of it exists in Rust.
///
/// ```
/// #[augur::staged]
/// fn main() -> augur::Result<()> {
///     use augur::{Builder, Dyn, FnPtr, Func};
///
///     let mut m = Builder::new().module();
///     let twice: Func<fn(f64) -> f64> = m.declare("twice");
///     let apply: Func<fn(FnPtr<fn(f64) -> f64>, f64) -> f64> = m.declare("apply");
///     let run: Func<fn(f64) -> f64> = m.declare("run");
///     m.define(twice, |x: Dyn<f64>| x * 2.0);
///     m.define(apply, |f: Dyn<FnPtr<fn(f64) -> f64>>, x: Dyn<f64>| f.call(x) + 1.0);
///     m.define(run, move |x: Dyn<f64>| apply.call(twice.addr(), x));
///     let ex = m.extract().unwrap();
///     assert!(ex.c_code().contains("double apply(double (*arg0)(double), double arg1)"));
///     assert_eq!(ex.interpret(run, &[4.0.into()]).unwrap(), 9.0.into());
///     Ok(())
/// }
/// ```
pub struct FnPtr<S>(PhantomData<S>);

impl<S: Signature> CType for FnPtr<S> {
    fn ty() -> Type {
        Type::fn_ptr(S::params(), S::ret())
    }
}

/// A compiled function takes (or returns) the Rust function pointer.
impl<S: Signature> Native for FnPtr<S> {
    type Abi = S::Native;
}

/// `&name`: the address of extern or module function `name`.
#[track_caller]
fn addr_of<S: Signature>(name: &str, header: Option<&str>) -> Dyn<FnPtr<S>> {
    let params = S::params();
    let sig = ExternSig {
        name,
        params: &params,
        ret: S::ret(),
        variadic: false,
        header,
        indirect: false,
    };
    compute(|e, loc| Ok(OpExpr::FuncAddr(declare(e, &sig, loc)?)))
}

impl<S: Signature> Func<S, ()> {
    /// The function's address (and the function itself, extracted with
    /// the module).
    #[track_caller]
    pub fn addr(&self) -> Dyn<FnPtr<S>> {
        self.at(()).addr()
    }
}

impl<S: Signature, K: Key> Instance<S, K> {
    /// The address of the function specialised on this key (extracted
    /// with the module, as for a call).
    #[track_caller]
    pub fn addr(&self) -> Dyn<FnPtr<S>> {
        let name = self.resolve();
        addr_of::<S>(&name, None)
    }
}

impl<S: Signature> ExternFn<S> {
    /// The extern's address (`&abs`): its C name as a value.
    #[track_caller]
    pub fn addr(&self) -> Dyn<FnPtr<S>> {
        addr_of::<S>(self.name(), self.header_name())
    }
}

impl<S: Signature> Dyn<FnPtr<S>> {
    /// The null function pointer (calling through it is an error the
    /// interpreter reports, and undefined behaviour in C).
    #[track_caller]
    pub fn null_fn() -> Dyn<FnPtr<S>> {
        compute(|_, _| {
            Ok(OpExpr::Use(Operand::constant(
                crate::ir::Const::Null,
                <FnPtr<S> as CType>::ty(),
            )))
        })
    }
}

macro_rules! arity {
    ($($a:ident $x:ident),*) => {
        impl<R, $($a),*> Dyn<FnPtr<fn($($a),*) -> R>>
        where
            R: CallRet + 'static,
            R::Out: StagedRet,
            $($a: Native,)*
        {
            /// Calls the function this pointer points to.
            #[track_caller]
            #[allow(clippy::too_many_arguments)]
            pub fn call(self, $($x: impl IntoArg<$a>),*) -> R::Out {
                let ptr = <FnPtr<fn($($a),*) -> R> as CType>::ty();
                let decl = crate::ir::ExternDecl::indirect(ptr).expect("a function pointer type");
                let sig = ExternSig {
                    name: &decl.name,
                    params: &decl.params,
                    ret: decl.ret,
                    variadic: false,
                    header: None,
                    indirect: true,
                };
                emit_call::<R>(sig, [self.into_arg(), $($x.into_arg()),*])
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
