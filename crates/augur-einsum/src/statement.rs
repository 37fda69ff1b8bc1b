//! Einsum statements: checking shapes, then generating the loops.
//!
//! `L[l...] op R` loops over the left side's indices; indices of `R` that are
//! not on the left are reduced over (summed for `=` and `+=`, multiplied for
//! `*=`). `=` stores the result, `+=` adds it to the left side, `*=`
//! multiplies the left side by it. On the CPU the loops are plain (the
//! outermost one `omp parallel for` when asked); inside `run_on_gpu` the
//! left side's first index is spread over blocks and the second over
//! threads (one index: over all threads), as in the paper, and statements
//! after the first wait at a grid sync.

use crate::blocked::{self, Layout};
use crate::context::{check_kernel_owner, Thread};
use crate::elem::Elem;
use crate::error::{Dim, ShapeError};
use crate::index::{dedup, Index};
use crate::schedule::{Schedule, AUTO_PARALLEL_MIN_WORK};
use crate::tensor::Access;
use crate::term::Term;
use augur::stage::gpu;
use augur::{dsl, Dyn};
use std::panic::Location;

/// Which statement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Op {
    Assign,
    Add,
    Mul,
}

impl Op {
    fn text(self) -> &'static str {
        match self {
            Op::Assign => "=",
            Op::Add => "+=",
            Op::Mul => "*=",
        }
    }
}

impl<E: Elem> Access<E> {
    /// `L[...] = R`: stores `R`, summed over the indices only `R` has.
    #[track_caller]
    pub fn set(&self, rhs: impl Into<Term<E>>) {
        statement(self, Op::Assign, rhs.into(), Location::caller());
    }

    /// `L[...] += R`: adds `R` (summed over the indices only `R` has).
    #[track_caller]
    pub fn add_to(&self, rhs: impl Into<Term<E>>) {
        statement(self, Op::Add, rhs.into(), Location::caller());
    }

    /// `L[...] *= R`: multiplies by `R` (multiplied over the indices only
    /// `R` has).
    #[track_caller]
    pub fn mul_by(&self, rhs: impl Into<Term<E>>) {
        statement(self, Op::Mul, rhs.into(), Location::caller());
    }
}

impl<E: Elem, R: Into<Term<E>>> std::ops::AddAssign<R> for Access<E> {
    #[track_caller]
    fn add_assign(&mut self, rhs: R) {
        statement(self, Op::Add, rhs.into(), Location::caller());
    }
}

impl<E: Elem, R: Into<Term<E>>> std::ops::MulAssign<R> for Access<E> {
    #[track_caller]
    fn mul_assign(&mut self, rhs: R) {
        statement(self, Op::Mul, rhs.into(), Location::caller());
    }
}

/// How a reduction folds one more value in.
pub(crate) type Combine<E> = fn(Dyn<E>, Dyn<E>) -> Dyn<E>;

/// Loop variables of the indices bound so far.
pub(crate) type Env = Vec<(Index, Dyn<i32>)>;

/// A checked statement, ready to generate.
pub(crate) struct Plan<'a, E: Elem> {
    pub lhs: &'a Access<E>,
    pub op: Op,
    pub rhs: Term<E>,
    /// The left side's indices (deduplicated), then the reduced ones.
    pub lhs_indices: Vec<Index>,
    pub reduced: Vec<Index>,
    ranges: Vec<(Index, usize)>,
    pub loc: &'static Location<'static>,
}

#[track_caller]
fn statement<E: Elem>(lhs: &Access<E>, op: Op, rhs: Term<E>, loc: &'static Location<'static>) {
    let plan = match check(lhs, op, rhs, loc) {
        Ok(p) => p,
        Err(e) => dsl::fail(e, loc),
    };
    let Some(ctx) = lhs.tensor.state.ctx.upgrade() else {
        panic!("einsum: a tensor used after its Einsum was dropped, at {loc}")
    };
    if ctx.finished.get() {
        panic!("einsum: a statement after Einsum::finish (its buffers are freed), at {loc}");
    }
    check_kernel_owner(&ctx, lhs.tensor.name(), loc);
    match ctx.thread.get() {
        None => {
            let (openmp, schedule) = (ctx.config.openmp, ctx.schedule.get());
            let vector_bytes = ctx.config.vector_bytes;
            drop(ctx);
            // Resident tensors come back to the host before the loops.
            for a in plan.rhs.accesses() {
                a.tensor.state.host_access(false);
            }
            plan.lhs.tensor.state.host_access(true);
            plan.cpu(openmp, schedule, vector_bytes)
        }
        Some(t) => {
            let (blocks, threads) = (ctx.config.blocks, ctx.config.threads);
            // The paper's loops under `Schedule::Naive`; otherwise a
            // product through shared memory (`gpu_tiles.rs`), a reduction
            // along rows by lanes (`gpu_rows.rs`), or the paper's loops.
            let naive = ctx.schedule.get() == Schedule::Naive;
            drop(ctx);
            let laid_out =
                |p: &Plan<E>| p.gpu_tiled(t, blocks, threads) || p.gpu_rows(t, blocks, threads);
            if naive || !laid_out(&plan) {
                plan.gpu(t, blocks, threads);
            }
            if plan.lhs_indices.len() == plan.lhs.indices.len() {
                // Distinct indices on the left: every element was written.
                plan.lhs.tensor.mark_fully_written();
            }
            // Every statement ends at a barrier, so the next one sees all of
            // its results; the barrier after a kernel's last statement is
            // dropped by the CUDA backend. (A barrier before every statement
            // but the first would need a count, which would make a dyn loop
            // around statements differ on its first turn.)
            gpu::grid_sync();
        }
    }
}

fn describe<E: Elem>(lhs: &Access<E>, op: Op) -> String {
    format!(
        "{}{} {} ...",
        lhs.tensor.name(),
        brackets(&lhs.indices),
        op.text()
    )
}

fn brackets(indices: &[Index]) -> String {
    indices.iter().map(|i| format!("[{}]", i.name)).collect()
}

/// Binds every index to one range and finds the reduced ones.
fn check<'a, E: Elem>(
    lhs: &'a Access<E>,
    op: Op,
    rhs: Term<E>,
    loc: &'static Location<'static>,
) -> Result<Plan<'a, E>, ShapeError> {
    // Where each index got its range (dimension, tensor name), made into
    // data only for an error: a statement is checked on every run.
    let mut ranges: Vec<(Index, usize, (usize, &str))> = Vec::new();
    let accesses = std::iter::once(lhs).chain(rhs.accesses());
    let dim = |(dimension, tensor): (usize, &str), extent| Dim {
        tensor: tensor.to_string(),
        dimension,
        extent,
    };
    for a in accesses {
        for (d, (&i, &n)) in a.indices.iter().zip(a.tensor.shape()).enumerate() {
            match ranges.iter().find(|(j, _, _)| *j == i) {
                Some(&(_, m, there)) if m != n => {
                    return Err(ShapeError::Extents {
                        statement: describe(lhs, op),
                        index: i.name,
                        first: dim(there, m),
                        second: dim((d, a.tensor.name()), n),
                    })
                }
                Some(_) => {}
                None => ranges.push((i, n, (d, a.tensor.name()))),
            }
        }
    }
    let ranges: Vec<(Index, usize)> = ranges.into_iter().map(|(i, n, _)| (i, n)).collect();
    let lhs_indices = dedup(lhs.indices.iter().copied());
    let rhs_indices = rhs.indices();
    if let Some(i) = rhs_indices
        .iter()
        .find(|i| !ranges.iter().any(|(j, _)| j == *i))
    {
        return Err(ShapeError::Unbound {
            statement: describe(lhs, op),
            index: i.name,
        });
    }
    for a in rhs.accesses() {
        if a.tensor.same(&lhs.tensor) && a.indices != lhs.indices {
            return Err(ShapeError::Overwritten {
                statement: describe(lhs, op),
                read: format!("{}{}", a.tensor.name(), brackets(&a.indices)),
                written: format!("{}{}", lhs.tensor.name(), brackets(&lhs.indices)),
            });
        }
    }
    let reduced = rhs_indices
        .into_iter()
        .filter(|i| !lhs_indices.contains(i))
        .collect();
    Ok(Plan {
        lhs,
        op,
        rhs,
        lhs_indices,
        reduced,
        ranges,
        loc,
    })
}

impl<E: Elem> Plan<'_, E> {
    pub(crate) fn range(&self, i: Index) -> usize {
        self.ranges
            .iter()
            .find(|(j, _)| *j == i)
            .expect("checked")
            .1
    }

    /// `for (i = start; i < range(i); i += step) body(i)` as a dyn loop.
    pub(crate) fn dyn_loop(
        &self,
        i: Index,
        start: Dyn<i32>,
        step: i32,
        mut body: impl FnMut(Dyn<i32>),
    ) {
        let n = self.range(i);
        // The last `i + step` must not overflow `int32_t` (undefined in C).
        if n as i64 + step as i64 > i32::MAX as i64 {
            let error = ShapeError::TooLong {
                index: i.name,
                extent: n,
                step,
            };
            dsl::fail(error, self.loc);
        }
        let v = Dyn::named(i.name, start);
        while v.lt(n as i32).is_true() {
            body(v);
            v.set(v + step);
        }
    }

    /// The loops `schedule` lays out: blocked, or plain loops over the left
    /// side's indices, then the element.
    fn cpu(&self, openmp: bool, schedule: Schedule, vector_bytes: usize) {
        if let Some(layout) = Layout::of(self) {
            let shape = layout.shape(self, vector_bytes);
            if let Some(b) = schedule.resolve::<E>(shape) {
                let small = schedule == Schedule::Auto && shape.work < AUTO_PARALLEL_MIN_WORK;
                return blocked::generate(self, &layout, b, openmp && !small);
            }
        }
        if openmp && !self.lhs_indices.is_empty() {
            augur::annotate("pragma: omp parallel for");
        }
        self.loops(&self.lhs_indices, &mut Vec::new(), &mut |env| {
            self.element(env)
        });
    }

    /// The paper's GPU loops: first index over blocks, second over threads
    /// (or one index over all threads), the rest plain.
    fn gpu(&self, t: Thread, blocks: u32, threads: u32) {
        let l = &self.lhs_indices;
        let mut env = Vec::new();
        match l.len() {
            0 => {
                let first = t.bid.eq(0) & t.tid.eq(0);
                if first.is_true() {
                    self.element(&mut env);
                }
            }
            1 => {
                let start = t.bid * threads as i32 + t.tid;
                let step = (blocks * threads) as i32;
                self.dyn_loop(l[0], start, step, |v| {
                    env.push((l[0], v));
                    self.element(&mut env);
                    env.pop();
                });
            }
            _ => {
                self.dyn_loop(l[0], t.bid, blocks as i32, |v0| {
                    env.push((l[0], v0));
                    self.dyn_loop(l[1], t.tid, threads as i32, |v1| {
                        env.push((l[1], v1));
                        self.loops(&l[2..], &mut env, &mut |env| self.element(env));
                        env.pop();
                    });
                    env.pop();
                });
            }
        }
    }

    /// Nested loops from 0 over `indices`, calling `inner` with all bound.
    pub(crate) fn loops(&self, indices: &[Index], env: &mut Env, inner: &mut dyn FnMut(&mut Env)) {
        let Some((&first, rest)) = indices.split_first() else {
            inner(env);
            return;
        };
        self.dyn_loop(first, Dyn::lit(0), 1, |v| {
            env.push((first, v));
            self.loops(rest, env, inner);
            env.pop();
        });
    }

    /// One element of the left side.
    fn element(&self, env: &mut Env) {
        let value = if self.reduced.is_empty() {
            self.value(&self.rhs, env)
        } else {
            let (start, combine) = self.combine();
            let acc = Dyn::named("acc", start);
            self.loops(&self.reduced, env, &mut |env| {
                acc.set(combine(acc, self.value(&self.rhs, env)));
            });
            acc
        };
        let value = match self.op {
            Op::Assign => value,
            Op::Add => self.read(self.lhs, env) + value,
            Op::Mul => self.read(self.lhs, env) * value,
        };
        let place = self
            .lhs
            .tensor
            .write_buffer(self.loc)
            .at(flat(self.lhs, env));
        place.set(value);
    }

    pub(crate) fn read(&self, a: &Access<E>, env: &Env) -> Dyn<E> {
        a.tensor.read_buffer(a.loc).at(flat(a, env))
    }

    pub(crate) fn value(&self, t: &Term<E>, env: &Env) -> Dyn<E> {
        value_with(t, env, &|a, env| self.read(a, env))
    }

    /// The reduction's start and how it folds one more value in.
    pub(crate) fn combine(&self) -> (E, Combine<E>) {
        match self.op {
            Op::Mul => (E::one(), |a, b| a * b),
            Op::Assign | Op::Add => (E::zero(), |a, b| a + b),
        }
    }
}

/// The value of `t` with the indices in `env`, reading accesses with `read`.
pub(crate) fn value_with<E: Elem>(
    t: &Term<E>,
    env: &Env,
    read: &dyn Fn(&Access<E>, &Env) -> Dyn<E>,
) -> Dyn<E> {
    let v = |t: &Term<E>| value_with(t, env, read);
    match t {
        Term::Access(a) => read(a, env),
        Term::Const(c) => Dyn::lit(*c),
        Term::Value(v) => *v,
        Term::Index(i) => E::from_index(lookup(env, *i)),
        Term::Sum(a, b) => v(a) + v(b),
        Term::Diff(a, b) => v(a) - v(b),
        Term::Product(a, b) => v(a) * v(b),
        Term::Neg(a) => -v(a),
    }
}

pub(crate) fn lookup(env: &Env, i: Index) -> Dyn<i32> {
    env.iter()
        .rev()
        .find(|(j, _)| *j == i)
        .expect("every index is bound")
        .1
}

/// The row-major element number of an access.
pub(crate) fn flat<E: Elem>(a: &Access<E>, env: &Env) -> Dyn<i32> {
    let shape = a.tensor.shape();
    let mut acc: Option<Dyn<i32>> = None;
    for (d, &i) in a.indices.iter().enumerate() {
        let stride: usize = shape[d + 1..].iter().product();
        let v = lookup(env, i);
        let term = if stride == 1 { v } else { v * stride as i32 };
        acc = Some(match acc {
            None => term,
            Some(a) => a + term,
        });
    }
    acc.unwrap_or_else(|| Dyn::lit(0))
}
