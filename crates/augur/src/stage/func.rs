//! Staged functions: handles to the functions of a [`Module`](crate::Module),
//! and staged calls between them.
//!
//! A [`Func`] names a family of second-stage functions of one signature;
//! its first-stage *key* (`()` for a plain function) picks one member, an
//! [`Instance`]. A staged call `f.at(k).call(x)` does not run `f`'s body:
//! it generates a C call of the function specialised on `k` and asks the
//! module to extract that function too (once per key, whatever the number
//! of calls). So a body that calls its own family with the same key gives a
//! recursive C function, and one that calls it with a smaller key unrolls
//! the recursion into one function per key.
//!
//! The module being extracted lives in a thread-local while
//! [`Module::extract`](crate::Module::extract) runs (as the engine does
//! while one function is extracted); calls reach it from there.

use super::ctype::Native;
use super::dyn_val::{caller, Arg, Dyn, IntoArg};
use super::extern_fn::{emit_call, CallRet};
use super::signature::StagedRet;
use crate::error::Error;
use crate::ir::{ExternSig, SrcLoc, Type, VarId};
use crate::trace::context::{self, Level};
use crate::trace::driver::throw;
use crate::trace::recorder::Ctl;
use std::any::Any;
use std::collections::{HashMap, HashSet};
use std::fmt::Debug;
use std::hash::Hash;
use std::marker::PhantomData;
use std::rc::Rc;

/// What a staged function family is specialised on: a first-stage value
/// that can be compared, hashed and printed (its `Debug` text names the
/// specialised C function: `power.at(3)` is `power_3`).
pub trait Key: Clone + Eq + Hash + Debug + 'static {}
impl<T: Clone + Eq + Hash + Debug + 'static> Key for T {}

/// The signature of a staged function, written as a Rust function type:
/// `fn(i64, *mut f32) -> i64`, or `fn(i32)` for one returning nothing.
/// Parameters are [`Native`] types; the result `R` is one too, or `()`.
pub trait Signature: Copy + 'static {
    /// The type of the compiled function: `unsafe extern "C" fn(A1, …) -> R`.
    type Native: Copy;
    /// Parameter types.
    fn params() -> Vec<Type>;
    /// Return type.
    fn ret() -> Type;
}

/// A family of staged functions of signature `S`, specialised on keys of
/// type `K` (`()`: one plain function). Made by
/// [`Module::declare`](crate::Module::declare) or
/// [`Module::declare_keyed`](crate::Module::declare_keyed); copy it into the
/// bodies that call it.
pub struct Func<S, K = ()> {
    pub(crate) module: u64,
    pub(crate) index: usize,
    _s: PhantomData<fn() -> (S, K)>,
}

impl<S, K> Clone for Func<S, K> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<S, K> Copy for Func<S, K> {}

impl<S, K> std::fmt::Debug for Func<S, K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Func({}#{})", self.module, self.index)
    }
}

impl<S, K> Func<S, K> {
    pub(crate) fn new(module: u64, index: usize) -> Self {
        Func {
            module,
            index,
            _s: PhantomData,
        }
    }

    /// The member of the family specialised on `key`.
    pub fn at(&self, key: K) -> Instance<S, K> {
        Instance { func: *self, key }
    }
}

/// One function of a [`Func`] family: the family and a key.
#[derive(Clone, Debug)]
pub struct Instance<S, K = ()> {
    pub(crate) func: Func<S, K>,
    pub(crate) key: K,
}

/// Something that names one function of a module: a plain [`Func`], or an
/// [`Instance`] of a keyed one. Extracted and compiled modules look
/// functions up by it.
pub trait Handle<S> {
    /// The module the handle belongs to.
    #[doc(hidden)]
    fn module_id(&self) -> u64;
    /// The family's index in its module.
    #[doc(hidden)]
    fn family(&self) -> usize;
    /// The key's `Debug` text.
    #[doc(hidden)]
    fn key_text(&self) -> String;
}

impl<S> Handle<S> for Func<S, ()> {
    fn module_id(&self) -> u64 {
        self.module
    }
    fn family(&self) -> usize {
        self.index
    }
    fn key_text(&self) -> String {
        format!("{:?}", ())
    }
}

impl<S, K: Key> Handle<S> for Instance<S, K> {
    fn module_id(&self) -> u64 {
        self.func.module
    }
    fn family(&self) -> usize {
        self.func.index
    }
    fn key_text(&self) -> String {
        format!("{:?}", self.key)
    }
}

impl<S, K: Key> Instance<S, K> {
    /// The C name of the function, registering it with the module being
    /// extracted (which extracts it later); throws on misuse.
    #[track_caller]
    pub(crate) fn resolve(&self) -> String {
        let loc = caller();
        let r = with_registry(|a| match a {
            Some(reg) if reg.id == self.func.module => reg
                .instance(self.func.index, &self.key, Some(loc))
                .map(|i| reg.instances[i].name.clone()),
            Some(_) => Err(Error::Misuse {
                message: "a staged function of another module was called (a Func belongs \
                          to the Module that declared it)"
                    .into(),
                location: Some(loc),
            }),
            None => Err(Error::Misuse {
                message: "a staged function was called outside Module::extract (only the \
                          bodies of a module's functions can call them)"
                    .into(),
                location: Some(loc),
            }),
        });
        r.unwrap_or_else(|e| throw(Ctl::fail(e)))
    }
}

/// Marks closures without a key parameter ([`Module::define`](crate::Module::define)).
pub struct Plain;
/// Marks closures whose first parameter is the key
/// ([`Module::define_keyed`](crate::Module::define_keyed)).
pub struct Keyed;

/// A closure that can be the body of a function of signature `S` and key
/// type `K`: `Fn(Dyn<A1>, …) -> R` ([`Plain`]) or `Fn(K, Dyn<A1>, …) -> R`
/// ([`Keyed`]), where `R` is `Dyn<T>` or `()`.
pub trait Body<S, K, M> {
    /// Runs the body on the parameters' variables.
    #[doc(hidden)]
    fn invoke(&self, key: K, params: &[VarId], gen: u32) -> Option<Arg>;
}

macro_rules! arity {
    ($($a:ident $x:ident $i:tt),*) => {
        impl<R, $($a),*> Signature for fn($($a),*) -> R
        where
            R: CallRet + 'static,
            R::Out: StagedRet,
            $($a: Native,)*
        {
            type Native = unsafe extern "C" fn($(<$a as Native>::Abi),*)
                -> <R::Out as StagedRet>::Abi;
            fn params() -> Vec<Type> {
                vec![$(<$a as crate::stage::ctype::CType>::ty()),*]
            }
            fn ret() -> Type {
                R::ty()
            }
        }

        impl<F, R, $($a),*> Body<fn($($a),*) -> R, (), Plain> for F
        where
            F: Fn($(Dyn<$a>),*) -> R::Out,
            R: CallRet,
            R::Out: StagedRet,
            $($a: Native,)*
        {
            #[allow(unused_variables)]
            fn invoke(&self, _key: (), params: &[VarId], gen: u32) -> Option<Arg> {
                (self)($(Dyn::<$a>::from_var(params[$i], gen)),*).into_ret()
            }
        }

        impl<F, K, R, $($a),*> Body<fn($($a),*) -> R, K, Keyed> for F
        where
            F: Fn(K, $(Dyn<$a>),*) -> R::Out,
            R: CallRet,
            R::Out: StagedRet,
            $($a: Native,)*
        {
            #[allow(unused_variables)]
            fn invoke(&self, key: K, params: &[VarId], gen: u32) -> Option<Arg> {
                (self)(key, $(Dyn::<$a>::from_var(params[$i], gen)),*).into_ret()
            }
        }

        impl<K: Key, R, $($a),*> Instance<fn($($a),*) -> R, K>
        where
            R: CallRet + 'static,
            R::Out: StagedRet,
            $($a: Native,)*
        {
            /// Calls the function specialised on this key: generates the
            /// call, and the function itself once per module.
            #[track_caller]
            #[allow(clippy::too_many_arguments)]
            pub fn call(&self, $($x: impl IntoArg<$a>),*) -> R::Out {
                let name = self.resolve();
                let params = [$(<$a as crate::stage::ctype::CType>::ty()),*];
                let sig = ExternSig {
                    name: &name,
                    params: &params,
                    ret: R::ty(),
                    variadic: false,
                    header: None,
                    indirect: false,
                };
                emit_call::<R>(sig, [$($x.into_arg()),*])
            }
        }

        impl<R, $($a),*> Func<fn($($a),*) -> R, ()>
        where
            R: CallRet + 'static,
            R::Out: StagedRet,
            $($a: Native,)*
        {
            /// Calls the (plain) function: generates the call.
            #[track_caller]
            #[allow(clippy::too_many_arguments)]
            pub fn call(&self, $($x: impl IntoArg<$a>),*) -> R::Out {
                self.at(()).call($($x),*)
            }
        }
    };
}

arity!();
arity!(A1 a1 0);
arity!(A1 a1 0, A2 a2 1);
arity!(A1 a1 0, A2 a2 1, A3 a3 2);
arity!(A1 a1 0, A2 a2 1, A3 a3 2, A4 a4 3);
arity!(A1 a1 0, A2 a2 1, A3 a3 2, A4 a4 3, A5 a5 4);
arity!(A1 a1 0, A2 a2 1, A3 a3 2, A4 a4 3, A5 a5 4, A6 a6 5);
arity!(A1 a1 0, A2 a2 1, A3 a3 2, A4 a4 3, A5 a5 4, A6 a6 5, A7 a7 6);
arity!(A1 a1 0, A2 a2 1, A3 a3 2, A4 a4 3, A5 a5 4, A6 a6 5, A7 a7 6, A8 a8 7);

// ----- the registry -----

/// A module's functions: the declared families and the specialised
/// functions asked for so far, each with its C name.
#[doc(hidden)]
#[derive(Debug)]
pub struct Registry {
    pub(crate) id: u64,
    pub(crate) funcs: Vec<FuncEntry>,
    pub(crate) instances: Vec<InstanceEntry>,
    /// Every C name taken: declared families and specialisations.
    names: HashSet<String>,
    /// How many functions a module may have (see `Module::max_functions`).
    pub(crate) max_functions: usize,
}

/// A declared family.
#[derive(Debug)]
pub(crate) struct FuncEntry {
    pub(crate) name: String,
    pub(crate) params: Vec<Type>,
    pub(crate) ret: Type,
    pub(crate) declared: SrcLoc,
    /// `HashMap<K, usize>`: key to instance index.
    keys: Box<dyn Any>,
    /// The key type is `()`: the one instance has the family's name.
    plain: bool,
}

/// One function to extract: a family and a key.
#[derive(Debug)]
pub(crate) struct InstanceEntry {
    pub(crate) func: usize,
    /// The key, a `K`.
    pub(crate) key: Rc<dyn Any>,
    /// The key's `Debug` text.
    pub(crate) key_text: String,
    pub(crate) name: String,
    /// The first call that asked for it (`None`: exported).
    pub(crate) wanted_at: Option<SrcLoc>,
}

impl Registry {
    pub(crate) fn new(id: u64, max_functions: usize) -> Registry {
        Registry {
            id,
            funcs: Vec::new(),
            instances: Vec::new(),
            names: HashSet::new(),
            max_functions,
        }
    }

    /// Adds a family named `name` (checked to be a free C name).
    pub(crate) fn declare<K: Key>(
        &mut self,
        name: &str,
        params: Vec<Type>,
        ret: Type,
        loc: SrcLoc,
    ) -> Result<usize, Error> {
        crate::builder::check_name(name, loc)?;
        if self.names.contains(name) {
            let what = match self.funcs.iter().find(|f| f.name == name) {
                Some(f) => format!("the function declared at {}", f.declared),
                None => "a specialised function of this module".to_string(),
            };
            return Err(Error::Misuse {
                message: format!("`{name}` already names {what}"),
                location: Some(loc),
            });
        }
        self.names.insert(name.to_string());
        self.funcs.push(FuncEntry {
            name: name.to_string(),
            params,
            ret,
            declared: loc,
            keys: Box::new(HashMap::<K, usize>::new()),
            plain: std::any::TypeId::of::<K>() == std::any::TypeId::of::<()>(),
        });
        Ok(self.funcs.len() - 1)
    }

    /// The instance of family `func` at `key`, if asked for already.
    pub(crate) fn find<K: Key>(&self, func: usize, key: &K) -> Option<usize> {
        let table = self
            .funcs
            .get(func)?
            .keys
            .downcast_ref::<HashMap<K, usize>>()?;
        table.get(key).copied()
    }

    /// The instance of family `func` at `key`, added (and named) when new.
    pub(crate) fn instance<K: Key>(
        &mut self,
        func: usize,
        key: &K,
        wanted_at: Option<SrcLoc>,
    ) -> Result<usize, Error> {
        if let Some(i) = self.find(func, key) {
            return Ok(i);
        }
        let Some(family) = self.funcs.get(func) else {
            return Err(Error::Misuse {
                message: "a staged function whose declaration failed was used".into(),
                location: wanted_at,
            });
        };
        if self.instances.len() >= self.max_functions {
            return Err(Error::Limit {
                what: format!(
                    "the module already has {} functions and `{}` at {key:?} would be one more \
                     (a key that never repeats, such as a counter that grows with each \
                     call?); Module::max_functions raises the limit",
                    self.instances.len(),
                    family.name
                ),
                location: wanted_at,
            });
        }
        let key_text = format!("{key:?}");
        let name = if family.plain {
            family.name.clone()
        } else {
            let name = fresh_name(&self.names, &family.name, &key_text);
            self.names.insert(name.clone());
            name
        };
        self.instances.push(InstanceEntry {
            func,
            key: Rc::new(key.clone()),
            key_text,
            name,
            wanted_at,
        });
        let i = self.instances.len() - 1;
        self.funcs[func]
            .keys
            .downcast_mut::<HashMap<K, usize>>()
            .expect("a family's key table has its key type")
            .insert(key.clone(), i);
        Ok(i)
    }

    /// The C names of all functions, by instance.
    pub(crate) fn names(&self) -> impl Iterator<Item = &str> {
        self.instances.iter().map(|i| i.name.as_str())
    }

    /// Makes this the registry that staged calls on this thread reach
    /// while the module's scope is open (see `trace/context.rs`).
    pub(crate) fn activate(self) {
        with_registry(|a| *a = Some(self));
    }
}

/// The C name for `family` at a key printed as `key`: the family's name and
/// the key's letters and digits (`power_3`, `walk_Node_2`), made unique
/// with a counter.
fn fresh_name(taken: &HashSet<String>, family: &str, key: &str) -> String {
    let mut text = String::new();
    for c in key.chars() {
        match c {
            c if c.is_ascii_alphanumeric() => text.push(c),
            '-' => text.push('m'),
            _ if !text.ends_with('_') => text.push('_'),
            _ => {}
        }
    }
    let text: String = text.trim_matches('_').chars().take(40).collect();
    let base = if text.is_empty() {
        family.to_string()
    } else {
        format!("{family}_{}", text.trim_end_matches('_'))
    };
    let free =
        |n: &str| !taken.contains(n) && !crate::codegen::c::keywords::is_reserved(n) && n != family;
    if free(&base) {
        return base;
    }
    (2..)
        .map(|n| format!("{base}_{n}"))
        .find(|n| free(n))
        .expect("some counter is free")
}

/// The registry of the module being extracted: a value of the module
/// scope of the thread's extraction context, cleared when the scope ends.
#[derive(Default)]
struct Active(Option<Registry>);

/// Runs `f` on the registry of the module being extracted, if any.
fn with_registry<R>(f: impl FnOnce(&mut Option<Registry>) -> R) -> R {
    context::with(|c| c.local::<Active, R>(Level::Module, |a| f(&mut a.0)))
}

/// Ends the module's extraction, handing back its registry.
pub(crate) fn take_active() -> Registry {
    with_registry(Option::take).expect("the registry stays active while the module extracts")
}

/// Runs `f` on the active registry.
pub(crate) fn with_active<R>(f: impl FnOnce(&mut Registry) -> R) -> R {
    with_registry(|a| f(a.as_mut().expect("a module is being extracted")))
}

#[cfg(test)]
mod tests {
    use super::fresh_name;
    use std::collections::HashSet;

    #[test]
    fn names_are_identifiers_made_unique() {
        let mut taken = HashSet::new();
        assert_eq!(fresh_name(&taken, "power", "3"), "power_3");
        assert_eq!(fresh_name(&taken, "power", "-3"), "power_m3");
        assert_eq!(fresh_name(&taken, "walk", "(2, true)"), "walk_2_true");
        assert_eq!(fresh_name(&taken, "walk", "Leaf { x: 1 }"), "walk_Leaf_x_1");
        assert_eq!(fresh_name(&taken, "f", "\"\""), "f_2");
        taken.insert("power_3".to_string());
        assert_eq!(fresh_name(&taken, "power", "3"), "power_3_2");
        // A family named like a C library function never gets its name.
        assert_eq!(fresh_name(&taken, "str", "len"), "str_len");
    }
}
