//! Parallel loops: [`parallel_for`], [`parallel`] with [`Reducer`]s.
//!
//! A parallel loop's body is staged once, like a kernel's, as the body of a
//! `for` loop over `lo..hi` whose iterations may run at once
//! ([`ir::parallel`](crate::ir::parallel) has the rules). C runs it with
//! OpenMP (the unit is compiled with `-fopenmp`, and stays loaded when
//! dropped and reloaded), the JIT on threads (rayon's pool:
//! `RAYON_NUM_THREADS` sets how many), the interpreter one iteration after
//! another with its data-race check. What an iteration computes goes to
//! memory at its own index, or into a [`Reducer`]: a sum, product, minimum,
//! maximum, or bitwise or logical fold, combined across threads.
//!
//! What the body may not do is an [`Error::Parallel`]
//! at the user's line, never code that races: assign a variable declared
//! outside it (other than through a reducer listed for the loop), use a
//! value made in it after it, or read a reducer's value inside it. Two
//! iterations touching the same memory, one writing, is a data race that
//! the interpreter reports.
//!
//! Plain Rust state the body changes stays changed after the loop (the body
//! runs once in the first stage), as for [`gpu::launch`](crate::stage::gpu::launch).
//!
//! ```
//! #[augur::staged]
//! fn main() -> augur::Result<()> {
//!     use augur::{parallel, Builder, Dyn, Reducer};
//!     // Sum and maximum of the positive elements, in parallel.
//!     let f = Builder::new()
//!         .extract("stats", |x: Dyn<*mut f64>, n: Dyn<i64>, out: Dyn<*mut f64>| {
//!             let sum = Reducer::sum(0.0);
//!             let max = Reducer::max(f64::NEG_INFINITY);
//!             parallel(0, n).reduce(&sum).reduce(&max).run(|i| {
//!                 let v = x.at(i);
//!                 if v.gt(0.0).is_true() {
//!                     sum.add(v);
//!                     max.add(v);
//!                 }
//!             });
//!             out.at(0).set(sum.value());
//!             out.at(1).set(max.value());
//!         })
//!         .unwrap();
//!     assert!(f.c_code().contains("omp parallel for reduction(+:"));
//!     let mut interp = augur::Interpreter::new();
//!     let x = interp.memory_mut().alloc_slice(&[1.0f64, -2.0, 5.0, 0.5]);
//!     let out = interp.memory_mut().alloc_slice(&[0.0f64; 2]);
//!     f.interpret_in(&mut interp, &[x, 4i64.into(), out]).unwrap();
//!     assert_eq!(interp.memory().read_slice::<f64>(out, 2).unwrap(), [6.5, 5.0]);
//!     Ok(())
//! }
//! ```

use super::ctype::{CInt, CNum, CScalar};
use super::dyn_val::{caller, compute, Arg, Dyn, IntoArg, IntoIndex};
use crate::error::Error;
use crate::ir::VarId;
use crate::ir::{BinOp, ReduceOp, Reduction, SrcLoc, Type};
use crate::trace::driver::with;
use crate::trace::recorder::{Ctl, OpExpr, Operand, Place};
use std::marker::PhantomData;

/// A value the iterations of a parallel loop combine: `Reducer::sum(0)`
/// starts at 0, each [`add`](Reducer::add) in an iteration adds to it, and
/// after the loop [`value`](Reducer::value) is the start combined with
/// every value added, whichever threads added them.
///
/// A reducer is a variable of the function being staged, declared where the
/// reducer is made. Listed with [`Parallel::reduce`], each thread combines
/// into a partial of its own, and the partials are combined into the
/// variable when the loop ends. Outside a parallel loop, `add` updates the
/// variable at once, in order.
///
/// Integer sums and products wrap, as the operators do. Float sums and
/// products are rounded in an order that depends on how the iterations are
/// split among threads (as in OpenMP); the interpreter adds in index order.
/// Float minimum and maximum ignore NaN values added.
pub struct Reducer<T: CScalar> {
    var: Dyn<T>,
    op: ReduceOp,
    loc: SrcLoc,
    /// A reduction of the user's: its identity and how two values combine.
    custom: Option<(T, Combine<T>)>,
}

/// How a [`Reducer::custom`] combines two values: staged code over `Dyn`s.
pub type Combine<T> = fn(Dyn<T>, Dyn<T>) -> Dyn<T>;

/// The chunks a loop with custom reducers is split into: a constant, so
/// that their values are combined in the same order on every backend and
/// thread count.
pub const CUSTOM_CHUNKS: i64 = 64;

impl<T: CScalar> Clone for Reducer<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T: CScalar> Copy for Reducer<T> {}

/// A reducer hashes as the handle it is (its variable and operation), so
/// first-stage state that holds one is in tags under `#[augur::staged]`.
impl<T: CScalar> std::hash::Hash for Reducer<T> {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.var.hash(h);
        self.op.hash(h);
        self.custom.map(|(_, f)| f as usize).hash(h);
    }
}

/// The chunk accumulators custom reducers add to while a chunk of their
/// loop is staged: (reducer variable, accumulator variable, its run's
/// generation), so that a run that ended inside a chunk leaves nothing the
/// next run would use.
#[derive(Default)]
struct Targets(Vec<(VarId, VarId, u32)>);

fn targets<R>(f: impl FnOnce(&mut Vec<(VarId, VarId, u32)>) -> R) -> R {
    crate::trace::context::with(|c| {
        c.local::<Targets, R>(crate::trace::context::Level::Extraction, |t| f(&mut t.0))
    })
}

impl<T: CScalar> Reducer<T> {
    #[track_caller]
    fn declare(op: ReduceOp, init: impl IntoArg<T>) -> Reducer<T> {
        Reducer {
            var: Dyn::named(op.name(), init),
            op,
            loc: caller(),
            custom: None,
        }
    }

    /// A reduction of your own: `combine(acc, v)` folds each value added
    /// into `acc`, starting from `init`. `combine` must be associative with
    /// `identity` as its identity (`combine(identity, v) == v`); it need
    /// not commute, since values are combined in index order: a loop with
    /// custom reducers runs as [`CUSTOM_CHUNKS`] chunks of consecutive
    /// indices (in parallel, each from `identity`), whose results are then
    /// combined in chunk order, the same on every backend and thread count.
    /// `combine` is staged code like any other.
    ///
    /// ```
    /// #[augur::staged]
    /// fn main() -> augur::Result<()> {
    ///     use augur::{parallel, Builder, Dyn, Reducer};
    ///     // The last positive element: associative, not commutative.
    ///     fn later(a: Dyn<i32>, b: Dyn<i32>) -> Dyn<i32> {
    ///         Dyn::select(b.gt(0), b, a)
    ///     }
    ///     let f = Builder::new().extract("last", |x: Dyn<*mut i32>, n: Dyn<i64>| {
    ///         let last = Reducer::custom(-1, 0, later);
    ///         parallel(0, n).reduce(&last).run(|i| last.add(x.at(i)));
    ///         last.value()
    ///     })?;
    ///     let mut x = [3, -1, 7, 0, -5, 2, -8];
    ///     // SAFETY: `last` reads the n values of x.
    ///     assert_eq!(unsafe { f.compile()?.get()(x.as_mut_ptr(), 7) }, 2);
    ///     Ok(())
    /// }
    /// ```
    #[track_caller]
    pub fn custom(init: impl IntoArg<T>, identity: T, combine: Combine<T>) -> Reducer<T> {
        Reducer {
            var: Dyn::named("reduced", init),
            op: ReduceOp::Sum,
            loc: caller(),
            custom: Some((identity, combine)),
        }
    }

    /// How the values combine (`None` for a [`custom`](Reducer::custom) one).
    pub fn op(&self) -> Option<ReduceOp> {
        self.custom.is_none().then_some(self.op)
    }

    /// The variable `add` updates now: a chunk's accumulator while a chunk
    /// of a loop that lists this custom reducer is staged, else its own.
    fn target(&self) -> Dyn<T> {
        let var = self.var.var;
        let generation = with(|e| Ok(e.generation()));
        let acc = targets(|t| {
            (t.iter().rev())
                .find(|&&(v, _, g)| v == var && g == generation)
                .map(|&(_, a, g)| (a, g))
        });
        acc.map_or(self.var, |(a, g)| Dyn::from_var(a, g))
    }

    /// Combines `v` into the reduction: in a loop that lists this reducer,
    /// into its thread's partial; anywhere else, into the variable itself.
    #[track_caller]
    pub fn add(&self, v: impl IntoArg<T>) {
        if let Some((_, combine)) = self.custom {
            let target = self.target();
            let x = v.into_arg();
            let v = compute::<T>(move |e, loc| Ok(OpExpr::Use(e.operand(x, loc)?)));
            target.set(combine(target, v));
            return;
        }
        let (acc, x, op) = (self.var.arg(), v.into_arg(), self.op);
        let ty = <T as super::ctype::CType>::ty();
        let var = self.var;
        with(|e| {
            let loc = caller();
            let (acc, x) = (e.operand(acc, loc)?, e.operand(x, loc)?);
            let value = match op {
                ReduceOp::Min | ReduceOp::Max => {
                    let cmp = if op == ReduceOp::Min {
                        BinOp::Lt
                    } else {
                        BinOp::Gt
                    };
                    let bool_ty = Type::Scalar(crate::ir::Scalar::Bool);
                    let better =
                        e.compute(bool_ty, OpExpr::Binary(cmp, x.clone(), acc.clone()), loc)?;
                    let select = OpExpr::Select(Operand::Var(better), x, acc);
                    e.compute(ty, select, loc)?
                }
                _ => e.compute(ty, OpExpr::Binary(bin_op(op), acc, x), loc)?,
            };
            let place = e.place_of(var.var, var.gen, loc)?;
            e.assign(place, Operand::Var(value), loc)
        })
    }

    /// The reduction's value: its start combined with every value added so
    /// far. Inside a loop that lists it there is no such value yet (only
    /// this thread's partial): an [`Error::Parallel`] there.
    #[track_caller]
    pub fn value(&self) -> Dyn<T> {
        let loc = caller();
        let var = self.var.var;
        let in_chunk = self.custom.is_some() && !self.target().same_handle(self.var);
        with(
            |e| match e.open_reduction(var).or(in_chunk.then_some(loc)) {
                Some(at) => Err(Ctl::fail(Error::Parallel {
                    message: format!(
                        "the value of the `{}` reducer made at {} is read inside the body of the \
                     parallel loop at {at} that combines it: there each thread has only its \
                     partial. Read it after the loop",
                        self.op.name(),
                        self.loc
                    ),
                    location: Some(loc),
                })),
                None => Ok(()),
            },
        );
        let a = self.var.arg();
        compute(move |e, loc| Ok(OpExpr::Use(e.operand(a, loc)?)))
    }
}

fn bin_op(op: ReduceOp) -> BinOp {
    match op {
        ReduceOp::Sum => BinOp::Add,
        ReduceOp::Product => BinOp::Mul,
        ReduceOp::BitAnd => BinOp::BitAnd,
        ReduceOp::BitOr => BinOp::BitOr,
        ReduceOp::BitXor => BinOp::BitXor,
        ReduceOp::And => BinOp::And,
        ReduceOp::Or => BinOp::Or,
        ReduceOp::Min | ReduceOp::Max => unreachable!("a select"),
    }
}

impl<T: CNum> Reducer<T> {
    /// The sum of `init` and every value added.
    #[track_caller]
    pub fn sum(init: impl IntoArg<T>) -> Reducer<T> {
        Self::declare(ReduceOp::Sum, init)
    }

    /// The product of `init` and every value added.
    #[track_caller]
    pub fn product(init: impl IntoArg<T>) -> Reducer<T> {
        Self::declare(ReduceOp::Product, init)
    }

    /// The least of `init` and every value added.
    #[track_caller]
    pub fn min(init: impl IntoArg<T>) -> Reducer<T> {
        Self::declare(ReduceOp::Min, init)
    }

    /// The greatest of `init` and every value added.
    #[track_caller]
    pub fn max(init: impl IntoArg<T>) -> Reducer<T> {
        Self::declare(ReduceOp::Max, init)
    }
}

impl<T: CInt> Reducer<T> {
    /// `init & v & ...` of every value added.
    #[track_caller]
    pub fn bit_and(init: impl IntoArg<T>) -> Reducer<T> {
        Self::declare(ReduceOp::BitAnd, init)
    }

    /// `init | v | ...` of every value added.
    #[track_caller]
    pub fn bit_or(init: impl IntoArg<T>) -> Reducer<T> {
        Self::declare(ReduceOp::BitOr, init)
    }

    /// `init ^ v ^ ...` of every value added.
    #[track_caller]
    pub fn bit_xor(init: impl IntoArg<T>) -> Reducer<T> {
        Self::declare(ReduceOp::BitXor, init)
    }
}

impl Reducer<bool> {
    /// True if `init` and every value added are.
    #[track_caller]
    pub fn all(init: impl IntoArg<bool>) -> Reducer<bool> {
        Self::declare(ReduceOp::And, init)
    }

    /// True if `init` or any value added is.
    #[track_caller]
    pub fn any(init: impl IntoArg<bool>) -> Reducer<bool> {
        Self::declare(ReduceOp::Or, init)
    }
}

/// A parallel loop over `lo..hi` being set up: list its reducers with
/// [`reduce`](Parallel::reduce), then stage its body with [`run`](Parallel::run).
#[must_use = "a parallel loop does nothing until `run`"]
pub struct Parallel {
    lo: Arg,
    hi: Arg,
    reductions: Vec<(VarId, u32, ReduceOp, SrcLoc)>,
    customs: Vec<Box<dyn Chunked>>,
    _not_send: PhantomData<*const ()>,
}

/// A custom reducer's part in a chunked loop (see [`Reducer::custom`]).
trait Chunked {
    /// Before the loop: the chunks' results' memory.
    fn prepare(&mut self);
    /// A chunk starts: its accumulator, from the identity, takes the adds.
    fn open(&self);
    /// Chunk `k` ends: its accumulator goes to its slot.
    fn close(&self, k: Dyn<i64>);
    /// After the loop: the chunks' results combined in order.
    fn finish(&self);
}

struct Slot<T: CScalar> {
    r: Reducer<T>,
    parts: Option<Dyn<*mut T>>,
}

impl<T: CScalar> Chunked for Slot<T> {
    fn prepare(&mut self) {
        let parts = Dyn::<[T; CUSTOM_CHUNKS as usize]>::uninit_named("chunks");
        self.parts = Some(parts.at(0usize).addr());
    }

    fn open(&self) {
        let (identity, _) = self.r.custom.expect("a custom reducer");
        let acc = Dyn::<T>::named("acc", identity);
        let var = self.r.var.var;
        targets(|t| t.push((var, acc.var, acc.gen)));
    }

    fn close(&self, k: Dyn<i64>) {
        let acc = self.r.target();
        self.parts.expect("prepared").at(k).set(acc);
        let var = self.r.var.var;
        targets(|t| {
            if let Some(i) = t.iter().rposition(|&(v, _, _)| v == var) {
                t.remove(i);
            }
        });
    }

    fn finish(&self) {
        let (_, combine) = self.r.custom.expect("a custom reducer");
        let parts = self.parts.expect("prepared");
        let target = self.r.target();
        in_order(0i64.into_i64(), CUSTOM_CHUNKS.into_i64(), &mut |k| {
            target.set(combine(target, parts.at(k)));
        });
    }
}

/// Stages `body(i)` once as the body of a loop over `lo..hi` that runs in
/// order (a plain `for`).
#[track_caller]
fn in_order(lo: Arg, hi: Arg, body: &mut dyn FnMut(Dyn<i64>)) {
    let loc = caller();
    with(|e| {
        let (lo, hi) = (e.operand(lo, loc)?, e.operand(hi, loc)?);
        e.parallel(Some((lo, hi, Vec::new(), true)), loc)
    });
    body(Dyn::<i64>::uninit_named("i"));
    with(|e| e.parallel(None, loc));
}

/// A parallel loop over `lo..hi` (integers of any type, or literals; the
/// index is an `i64`).
#[track_caller]
pub fn parallel(lo: impl IntoIndex, hi: impl IntoIndex) -> Parallel {
    Parallel {
        lo: lo.into_i64(),
        hi: hi.into_i64(),
        reductions: Vec::new(),
        customs: Vec::new(),
        _not_send: PhantomData,
    }
}

/// Runs `body(i)` for every `i` in `lo..hi`, iterations possibly at once:
/// `parallel(lo, hi).run(body)`.
///
/// ```
/// #[augur::staged]
/// fn main() -> augur::Result<()> {
///     use augur::{parallel_for, Builder, Dyn};
///     let f = Builder::new()
///         .extract("square_all", |x: Dyn<*mut i32>, n: Dyn<i32>| {
///             parallel_for(0, n, |i| x.at(i).set(x.at(i) * x.at(i)));
///         })
///         .unwrap();
///     let mut interp = augur::Interpreter::new();
///     let x = interp.memory_mut().alloc_slice(&[1, 2, 3]);
///     f.interpret_in(&mut interp, &[x, 3.into()]).unwrap();
///     assert_eq!(interp.memory().read_slice::<i32>(x, 3).unwrap(), [1, 4, 9]);
///     Ok(())
/// }
/// ```
#[track_caller]
pub fn parallel_for(lo: impl IntoIndex, hi: impl IntoIndex, body: impl FnMut(Dyn<i64>)) {
    parallel(lo, hi).run(body)
}

impl Parallel {
    /// Combines `r` across the iterations (see [`Reducer`]).
    #[track_caller]
    pub fn reduce<T: CScalar>(mut self, r: &Reducer<T>) -> Parallel {
        match r.custom {
            Some(_) => self.customs.push(Box::new(Slot { r: *r, parts: None })),
            None => self.reductions.push((r.var.var, r.var.gen, r.op, caller())),
        }
        self
    }

    /// Stages `body(i)` once, as the body of the loop.
    #[track_caller]
    pub fn run(mut self, mut body: impl FnMut(Dyn<i64>)) {
        if !self.customs.is_empty() {
            return self.run_chunked(&mut body);
        }
        let loc = caller();
        with(|e| {
            let lo = e.operand(self.lo, loc)?;
            let hi = e.operand(self.hi, loc)?;
            let reductions = listed(e, self.reductions)?;
            e.parallel(Some((lo, hi, reductions, false)), loc)
        });
        let i = Dyn::<i64>::uninit_named("i");
        body(i);
        with(|e| e.parallel(None, loc));
    }

    /// A loop with custom reducers: [`CUSTOM_CHUNKS`] chunks of consecutive
    /// indices in parallel (the built-in reductions listed on it), each
    /// running its indices in order into its own accumulators, then the
    /// chunks' results combined in order.
    #[track_caller]
    fn run_chunked(&mut self, body: &mut dyn FnMut(Dyn<i64>)) {
        let mut customs = std::mem::take(&mut self.customs);
        for c in &mut customs {
            c.prepare();
        }
        let value = |a: Arg| compute::<i64>(move |e, loc| Ok(OpExpr::Use(e.operand(a, loc)?)));
        let (lo, hi) = (value(self.lo.clone()), value(self.hi.clone()));
        let n = Dyn::select((hi - lo).gt(0i64), hi - lo, 0i64);
        // The user's body is called from here, as `run` calls it, not from
        // a closure of ours: the paths through it join after it.
        let loc = caller();
        let reductions = std::mem::take(&mut self.reductions);
        with(|e| {
            let reductions = listed(e, reductions)?;
            let (lo, hi) = (
                e.operand(0i64.into_i64(), loc)?,
                e.operand(CUSTOM_CHUNKS.into_i64(), loc)?,
            );
            e.parallel(Some((lo, hi, reductions, false)), loc)
        });
        let k = Dyn::<i64>::uninit_named("chunk");
        for c in &customs {
            c.open();
        }
        let from = lo + n * k / CUSTOM_CHUNKS;
        let to = lo + n * (k + 1i64) / CUSTOM_CHUNKS;
        with(|e| {
            let (from, to) = (e.operand(from.arg(), loc)?, e.operand(to.arg(), loc)?);
            e.parallel(Some((from, to, Vec::new(), true)), loc)
        });
        body(Dyn::<i64>::uninit_named("i"));
        with(|e| e.parallel(None, loc));
        for c in &customs {
            c.close(k);
        }
        with(|e| e.parallel(None, loc));
        for c in &customs {
            c.finish();
        }
    }
}

/// The reductions of the reducers listed, each checked against the run.
fn listed(
    e: &mut crate::trace::recorder::Recorder<'_>,
    list: Vec<(VarId, u32, ReduceOp, SrcLoc)>,
) -> Result<Vec<Reduction>, Ctl> {
    let mut reductions: Vec<Reduction> = Vec::with_capacity(list.len());
    for (var, gen, op, at) in list {
        let var = match e.place_of(var, gen, at)? {
            Place::Var(v) => v,
            _ => return Err(misuse("a reducer that is not a variable", at)),
        };
        if reductions.iter().any(|r| r.var == var) {
            return Err(misuse("a reducer listed twice for one parallel loop", at));
        }
        reductions.push(Reduction { var, op });
    }
    Ok(reductions)
}

fn misuse(what: &str, at: SrcLoc) -> Ctl {
    Ctl::fail(Error::Misuse {
        message: what.to_string(),
        location: Some(at),
    })
}
