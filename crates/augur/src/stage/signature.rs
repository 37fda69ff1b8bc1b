//! Closures that can be extracted: 0 to 8 `Dyn` parameters, returning
//! `()` or a `Dyn` value.

use super::ctype::Native;
use super::dyn_val::{Arg, Dyn};
use crate::ir::{Type, VarId};

/// What a staged closure returns.
pub trait StagedRet {
    /// The ABI type of the compiled function's result.
    type Abi;
    /// The C return type.
    fn ty() -> Type;
    /// The returned operand (`None` for `()`).
    fn into_ret(self) -> Option<Arg>;
}

impl StagedRet for () {
    type Abi = ();
    fn ty() -> Type {
        Type::Void
    }
    fn into_ret(self) -> Option<Arg> {
        None
    }
}

impl<T: Native> StagedRet for Dyn<T> {
    type Abi = T::Abi;
    fn ty() -> Type {
        T::ty()
    }
    fn into_ret(self) -> Option<Arg> {
        Some(self.arg())
    }
}

/// A closure `Fn(Dyn<A1>, …, Dyn<An>) -> R` that [`Builder::extract`](crate::Builder::extract)
/// accepts. `Marker` only tells the arities apart.
pub trait StagedFn<Marker> {
    /// The type of the compiled function: `unsafe extern "C" fn(A1, …) -> R`.
    type Native: Copy;
    /// Parameter types.
    fn params() -> Vec<Type>;
    /// Return type.
    fn ret() -> Type;
    /// Runs the closure on the parameters' variables.
    fn invoke(&self, params: &[VarId], gen: u32) -> Option<Arg>;
}

macro_rules! staged_fn {
    ($($a:ident $i:tt),*) => {
        impl<F, R, $($a),*> StagedFn<(R, $(Dyn<$a>,)*)> for F
        where
            F: Fn($(Dyn<$a>),*) -> R,
            R: StagedRet,
            $($a: Native + ?Sized,)*
        {
            type Native = unsafe extern "C" fn($(<$a as Native>::Abi),*) -> R::Abi;
            fn params() -> Vec<Type> {
                vec![$(<$a as crate::stage::ctype::CType>::ty()),*]
            }
            fn ret() -> Type {
                R::ty()
            }
            #[allow(unused_variables)]
            fn invoke(&self, params: &[VarId], gen: u32) -> Option<Arg> {
                (self)($(Dyn::<$a>::from_var(params[$i], gen)),*).into_ret()
            }
        }
    };
}

staged_fn!();
staged_fn!(A1 0);
staged_fn!(A1 0, A2 1);
staged_fn!(A1 0, A2 1, A3 2);
staged_fn!(A1 0, A2 1, A3 2, A4 3);
staged_fn!(A1 0, A2 1, A3 2, A4 3, A5 4);
staged_fn!(A1 0, A2 1, A3 2, A4 3, A5 4, A6 5);
staged_fn!(A1 0, A2 1, A3 2, A4 3, A5 4, A6 5, A7 6);
staged_fn!(A1 0, A2 1, A3 2, A4 3, A5 4, A6 5, A7 6, A8 7);
