//! Programs of several functions: [`Module`] extracts staged functions that
//! call each other into one C (or CUDA) unit.
//!
//! A function is declared first ([`Module::declare`]), which gives a
//! [`Func`] handle that bodies can call, itself included, and defined
//! after ([`Module::define`]). A *keyed* family ([`Module::declare_keyed`])
//! is specialised on a first-stage key: `f.at(k).call(x)` calls the member
//! for `k`, a function of its own (`f_k` in C), extracted once per key.
//!
//! Extraction starts from the exported functions (every plain function
//! defined, and the keyed members [`Module::export`] names) and extracts
//! each function a staged call asks for, until none is missing: one
//! extraction per function, each as [`Builder::extract`] does it, with the
//! builder's options (`restrict`, slices, bounds checks) applied to every
//! function. Functions no exported one reaches are left out.

mod extracted;

pub use extracted::{CompiledModule, ExtractedModule};

use crate::builder::Builder;
use crate::error::Error;
use crate::ir::{Function, SrcLoc, VarId};
use crate::pipeline;
use crate::stage::dyn_val::{caller, Arg};
use crate::stage::func::{
    take_active, with_active, Body, Func, Instance, Key, Keyed, Plain, Registry, Signature,
};
use crate::trace::context::{Level, Scope};
use crate::Result;
use std::any::Any;
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};

/// Default for [`Module::max_functions`].
pub const DEFAULT_MAX_FUNCTIONS: usize = 10_000;

/// Several staged functions extracted together into one module: staged
/// calls between them, staged recursion, and functions specialised on
/// first-stage keys.
///
/// ```
/// #[augur::staged]
/// fn main() -> augur::Result<()> {
///     use augur::{Builder, Dyn, Func};
///
///     let mut m = Builder::new().module();
///     // `fib` calls itself: a recursive C function.
///     let fib: Func<fn(i64) -> i64> = m.declare("fib");
///     m.define(fib, move |n: Dyn<i64>| {
///         let r = Dyn::new(n);
///         if n.ge(2).is_true() {
///             r.set(fib.call(n - 1) + fib.call(n - 2));
///         }
///         r
///     });
///     // `power` is specialised on its exponent: `power_3` calls `power_2` ...
///     let power = m.declare_keyed::<u32, fn(f64) -> f64>("power");
///     m.define_keyed(power, move |k: u32, x: Dyn<f64>| {
///         if k == 0 {
///             Dyn::new(1.0)
///         } else {
///             x * power.at(k - 1).call(x)
///         }
///     });
///     m.export(power.at(3));
///
///     let ex = m.extract().unwrap();
///     assert!(ex.c_code().contains("power_2(arg0)"));
///     assert_eq!(ex.interpret(fib, &[10i64.into()]).unwrap(), 55i64.into());
///     let lib = ex.compile().unwrap();
///     // SAFETY: `fib` is `int64_t fib(int64_t)` and `power_3` `double power_3(double)`.
///     unsafe {
///         assert_eq!(lib.get(fib).unwrap()(20), 6765);
///         assert_eq!(lib.get(power.at(3)).unwrap()(1.5), 3.375);
///     }
///     Ok(())
/// }
/// ```
pub struct Module<'a> {
    builder: Builder,
    registry: Registry,
    /// Per family, its body once defined.
    bodies: Vec<Option<Definition<'a>>>,
    /// Instances to extract whatever calls them, in the order exported.
    exported: Vec<usize>,
    /// The first misuse of the module's API, reported by `extract`.
    error: Option<Error>,
}

/// A body, type-erased: runs on the key (an `&K`) and the parameters.
type Invoke<'a> = Box<dyn Fn(&dyn Any, &[VarId], u32) -> Option<Arg> + 'a>;

struct Definition<'a> {
    loc: SrcLoc,
    invoke: Invoke<'a>,
}

impl std::fmt::Debug for Module<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self
            .registry
            .funcs
            .iter()
            .map(|f| f.name.as_str())
            .collect();
        f.debug_struct("Module").field("functions", &names).finish()
    }
}

/// Module ids tell handles of different modules apart.
fn next_id() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

impl<'a> Module<'a> {
    /// An empty module whose functions are extracted with `builder`'s
    /// settings ([`Builder::module`] does the same).
    pub fn new(builder: Builder) -> Module<'a> {
        Module {
            builder,
            registry: Registry::new(next_id(), DEFAULT_MAX_FUNCTIONS),
            bodies: Vec::new(),
            exported: Vec::new(),
            error: None,
        }
    }

    /// How many functions the module may have (default
    /// [`DEFAULT_MAX_FUNCTIONS`]): a keyed family whose calls never repeat
    /// a key stops with [`Error::Limit`] at the call past it.
    pub fn max_functions(mut self, n: usize) -> Self {
        self.registry.max_functions = n;
        self
    }

    /// Declares a plain function `name` of signature `S` (a Rust function
    /// type: `fn(i64, *mut f32) -> i64`). Its body comes with
    /// [`define`](Module::define); calls to it may come first, from any
    /// body, its own included. A name that is not a free C identifier is
    /// reported by [`extract`](Module::extract).
    #[track_caller]
    pub fn declare<S: Signature>(&mut self, name: &str) -> Func<S> {
        self.declare_keyed::<(), S>(name)
    }

    /// Declares a family `name` of functions of signature `S` specialised
    /// on keys of type `K`: `f.at(k)` is the one for `k`, named `name_k` in
    /// C (the key's `Debug` text, made an identifier).
    #[track_caller]
    pub fn declare_keyed<K: Key, S: Signature>(&mut self, name: &str) -> Func<S, K> {
        let loc = caller();
        match self.registry.declare::<K>(name, S::params(), S::ret(), loc) {
            Ok(index) => {
                self.bodies.push(None);
                Func::new(self.registry.id, index)
            }
            Err(e) => {
                self.fail(e);
                // No family: `extract` reports the error above first.
                Func::new(self.registry.id, usize::MAX)
            }
        }
    }

    /// Gives the plain function `f` its body, a closure of its signature
    /// (`|x: Dyn<i64>| ...`), and exports it.
    #[track_caller]
    pub fn define<S: Signature>(&mut self, f: Func<S>, body: impl Body<S, (), Plain> + 'a) {
        let loc = caller();
        let invoke: Invoke<'a> = Box::new(move |_, params, gen| body.invoke((), params, gen));
        if self.set_body(f.module, f.index, Definition { loc, invoke }) {
            self.export_at(f.at(()), loc);
        }
    }

    /// Gives the keyed family `f` its body, a closure taking the key and
    /// then the parameters (`|k: u32, x: Dyn<f64>| ...`). Nothing of it is
    /// exported until [`export`](Module::export) names a key.
    #[track_caller]
    pub fn define_keyed<S: Signature, K: Key>(
        &mut self,
        f: Func<S, K>,
        body: impl Body<S, K, Keyed> + 'a,
    ) {
        let loc = caller();
        let invoke: Invoke<'a> = Box::new(move |key, params, gen| {
            let key = key
                .downcast_ref::<K>()
                .expect("an instance's key has its family's type");
            body.invoke(key.clone(), params, gen)
        });
        self.set_body(f.module, f.index, Definition { loc, invoke });
    }

    /// Exports the member of a keyed family at a key: it is extracted (with
    /// what it calls) and can be looked up in the extracted and compiled
    /// module.
    #[track_caller]
    pub fn export<S, K: Key>(&mut self, f: Instance<S, K>) {
        self.export_at(f, caller());
    }

    fn export_at<S, K: Key>(&mut self, f: Instance<S, K>, loc: SrcLoc) {
        if !self.owns(f.func.module, loc) {
            return;
        }
        match self.registry.instance(f.func.index, &f.key, None) {
            Ok(i) if !self.exported.contains(&i) => self.exported.push(i),
            Ok(_) => {}
            Err(e) => self.fail(e),
        }
    }

    /// Records `def` as family `index`'s body; false (and an error for
    /// `extract`) when the handle is foreign or the family has a body.
    fn set_body(&mut self, module: u64, index: usize, def: Definition<'a>) -> bool {
        if !self.owns(module, def.loc) {
            return false;
        }
        let Some(slot) = self.bodies.get_mut(index) else {
            // A family whose declaration failed.
            return false;
        };
        if let Some(first) = slot {
            let message = format!(
                "`{}` is defined twice (first at {})",
                self.registry.funcs[index].name, first.loc
            );
            self.fail(Error::Misuse {
                message,
                location: Some(def.loc),
            });
            return false;
        }
        *slot = Some(def);
        true
    }

    /// True if a handle of module `module` belongs to this one.
    fn owns(&mut self, module: u64, loc: SrcLoc) -> bool {
        if module == self.registry.id {
            return true;
        }
        self.fail(Error::Misuse {
            message: "a Func of another module was given to this one (a Func belongs to the \
                      Module that declared it)"
                .into(),
            location: Some(loc),
        });
        false
    }

    fn fail(&mut self, e: Error) {
        self.error.get_or_insert(e);
    }

    /// Extracts every exported function and every function they call,
    /// directly or not: one C module. On error (the first misuse of this
    /// module's API, or a function's extraction error) the thread is ready
    /// for the next extraction.
    #[track_caller]
    pub fn extract(mut self) -> Result<ExtractedModule> {
        let loc = caller();
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        if self.exported.is_empty() {
            return Err(Error::Misuse {
                message: "the module exports no function: define a plain function, or \
                          export a member of a keyed one (Module::export)"
                    .into(),
                location: None,
            });
        }
        // The module's scope holds the registry while its functions are
        // extracted; an error or a panic anywhere clears it.
        let scope = Scope::enter(Level::Module, loc)?;
        std::mem::replace(&mut self.registry, Registry::new(0, 0)).activate();
        let mut parts = Vec::new();
        // Instances are extracted in the order they were asked for; each
        // extraction may ask for more.
        while let Some(part) = self.extract_next(parts.len())? {
            parts.push(part);
        }
        let registry = take_active();
        drop(scope);
        check_calls(&parts)?;
        check_restrict(&parts)?;
        let keep = reachable(&registry, &self.exported, &parts);
        Ok(ExtractedModule::new(registry, parts, keep))
    }

    /// Extracts instance `i` of the active registry, if there is one.
    fn extract_next(&self, i: usize) -> Result<Option<Part>> {
        let Some((family, name, key, wanted_at)) = with_active(|r| {
            r.instances
                .get(i)
                .map(|x| (x.func, x.name.clone(), x.key.clone(), x.wanted_at))
        }) else {
            return Ok(None);
        };
        let (params, ret, declared, family_name) = with_active(|r| {
            let f = &r.funcs[family];
            (f.params.clone(), f.ret, f.declared, f.name.clone())
        });
        let Some(def) = &self.bodies[family] else {
            return Err(Error::Misuse {
                message: format!(
                    "`{family_name}` (declared at {declared}) is called but never defined \
                     (Module::define or Module::define_keyed)"
                ),
                location: wanted_at,
            });
        };
        let invoke = |params: &[VarId], gen: u32| (def.invoke)(&*key, params, gen);
        let (trace, config) = self
            .builder
            .trace_with(&name, params, ret, def.loc, &invoke)?;
        Ok(Some(Part {
            part: pipeline::finish(trace, &config, self.builder.options(), def.loc)?,
            family,
        }))
    }
}

/// One extracted function of a module.
#[derive(Clone, Debug)]
pub(crate) struct Part {
    pub(crate) part: pipeline::Part,
    /// Its family's index.
    pub(crate) family: usize,
}

/// Every call of a module function (an extern of its name) must use its
/// signature: a user extern of the same name but another signature would
/// link to the wrong function.
fn check_calls(parts: &[Part]) -> Result<()> {
    let by_name: HashMap<&str, &Function> = parts
        .iter()
        .map(|p| (p.part.func.name.as_str(), &p.part.func))
        .collect();
    for p in parts {
        for (_, d) in p.part.func.externs.iter() {
            let Some(g) = by_name.get(d.name.as_str()) else {
                continue;
            };
            let params: Vec<_> = g.params.iter().map(|&v| g.vars[v].ty).collect();
            if params != d.params || g.ret != d.ret || d.variadic || d.header.is_some() {
                return Err(Error::Misuse {
                    message: format!(
                        "`{}` calls an extern `{}`, which is also a function of this module \
                         with another signature ({})",
                        p.part.func.name,
                        d.name,
                        crate::codegen::c::writer::prototype(&crate::ir::ExternDecl {
                            name: g.name.clone(),
                            params,
                            ret: g.ret,
                            variadic: false,
                            header: None,
                            indirect: false,
                        })
                    ),
                    location: None,
                });
            }
        }
    }
    Ok(())
}

/// Which instances the exported ones reach through calls (by index).
fn reachable(registry: &Registry, exported: &[usize], parts: &[Part]) -> Vec<bool> {
    let index: HashMap<&str, usize> = registry.names().enumerate().map(|(i, n)| (n, i)).collect();
    let mut keep = vec![false; parts.len()];
    let mut work: VecDeque<usize> = exported.iter().copied().collect();
    while let Some(i) = work.pop_front() {
        if std::mem::replace(&mut keep[i], true) {
            continue;
        }
        for (_, d) in parts[i].part.func.externs.iter() {
            if let Some(&j) = index.get(d.name.as_str()) {
                work.push_back(j);
            }
        }
    }
    keep
}

/// A module function that passes one pointer variable as two of another
/// module function's `restrict` parameters breaks the promise
/// [`Builder::restrict`] makes for calls between them: refused, naming the
/// call, rather than compiled into undefined behaviour. (Two different
/// pointers into one buffer cannot be told apart here; the promise covers
/// them too.)
fn check_restrict(parts: &[Part]) -> Result<()> {
    use crate::ir::{Expr, ExprId, Stmt};
    let by_name: HashMap<&str, &Function> = parts
        .iter()
        .filter(|p| !p.part.func.restrict.is_empty())
        .map(|p| (p.part.func.name.as_str(), &p.part.func))
        .collect();
    if by_name.is_empty() {
        return Ok(());
    }
    type Call = (ExprId, Vec<ExprId>, Option<SrcLoc>);
    fn walk(f: &Function, e: ExprId, loc: Option<SrcLoc>, found: &mut Vec<Call>) {
        if let Expr::Call(_, args) = &f.exprs[e].kind {
            found.push((e, args.clone(), loc));
        }
        f.for_each_child(e, |c| walk(f, c, loc, found));
    }
    for p in parts {
        let f = &p.part.func;
        let mut calls = Vec::new();
        let mut stmts: Vec<&Stmt> = f.body.iter().collect();
        while let Some(s) = stmts.pop() {
            crate::ir::each_own_expr(s, &mut |e| walk(f, e, s.loc, &mut calls));
            for b in s.kind.blocks() {
                stmts.extend(b.iter());
            }
        }
        for (call, args, loc) in calls {
            let Expr::Call(fid, _) = &f.exprs[call].kind else {
                continue;
            };
            let Some(g) = by_name.get(f.externs[*fid].name.as_str()) else {
                continue;
            };
            let var = |i: usize| match args.get(i).map(|&a| &f.exprs[a].kind) {
                Some(Expr::Var(v)) => Some(*v),
                _ => None,
            };
            let restricted: Vec<usize> = (g.params.iter().enumerate())
                .filter(|(_, p)| g.restrict.contains(p))
                .map(|(i, _)| i)
                .collect();
            for (k, &i) in restricted.iter().enumerate() {
                for &j in &restricted[k + 1..] {
                    if let (Some(a), Some(b)) = (var(i), var(j)) {
                        if a == b {
                            return Err(Error::Misuse {
                                message: format!(
                                    "`{}` passes `{}` as parameters {i} and {j} of `{}`, which \
                                     are restrict (Builder::restrict): they would alias",
                                    f.name,
                                    f.var_name(a),
                                    g.name
                                ),
                                location: loc,
                            });
                        }
                    }
                }
            }
        }
    }
    Ok(())
}
