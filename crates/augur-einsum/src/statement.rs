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

use crate::blocked;
use crate::context::{check_kernel_owner, Chosen, Thread};
use crate::elem::Elem;
use crate::error::{Dim, ShapeError};
use crate::fuse;
use crate::index::{dedup, Index};
use crate::plan::{Layout, Op, Plan, Target};
use crate::schedule::{Schedule, AUTO_PARALLEL_MIN_WORK};
use crate::tensor::Access;
use crate::term::Term;
use augur::dsl;
use augur::stage::gpu;
use std::panic::Location;

impl<E: Elem> Access<E> {
    /// `L[...] = R`: stores `R`, summed over the indices only `R` has.
    #[track_caller]
    #[augur::staged]
    pub fn set(&self, rhs: impl Into<Term<E>>) {
        statement(self, Op::Assign, rhs.into(), Location::caller());
    }

    /// `L[...] += R`: adds `R` (summed over the indices only `R` has).
    #[track_caller]
    #[augur::staged]
    pub fn add_to(&self, rhs: impl Into<Term<E>>) {
        statement(self, Op::Add, rhs.into(), Location::caller());
    }

    /// `L[...] *= R`: multiplies by `R` (multiplied over the indices only
    /// `R` has).
    #[track_caller]
    #[augur::staged]
    pub fn mul_by(&self, rhs: impl Into<Term<E>>) {
        statement(self, Op::Mul, rhs.into(), Location::caller());
    }
}

impl<E: Elem, R: Into<Term<E>>> std::ops::AddAssign<R> for Access<E> {
    #[track_caller]
    #[augur::staged]
    fn add_assign(&mut self, rhs: R) {
        statement(self, Op::Add, rhs.into(), Location::caller());
    }
}

impl<E: Elem, R: Into<Term<E>>> std::ops::MulAssign<R> for Access<E> {
    #[track_caller]
    #[augur::staged]
    fn mul_assign(&mut self, rhs: R) {
        statement(self, Op::Mul, rhs.into(), Location::caller());
    }
}

#[track_caller]
#[augur::staged]
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
    let distributed = std::iter::once(plan.lhs)
        .chain(plan.rhs.accesses())
        .any(|a| a.tensor.state.split.is_some());
    if distributed {
        if ctx.thread.get().is_some() {
            panic!(
                "einsum: a statement over distributed tensors inside run_on_gpu:                  distributed statements run on the CPU of each rank, at {loc}"
            );
        }
        let world = ctx
            .world
            .get()
            .expect("distributed tensors are made by a World");
        drop(ctx);
        return crate::dist::stage::statement(&plan, world);
    }
    match ctx.thread.get() {
        None => {
            let target = Target::of(&ctx.config, ctx.schedule.get());
            drop(ctx);
            // Resident tensors come back to the host before the loops.
            for a in plan.rhs.accesses() {
                a.tensor.state.host_access(false);
            }
            plan.lhs.tensor.state.host_access(true);
            plan.cpu(target)
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

/// One rank's part of a distributed statement: `lhs op rhs` over local
/// views, on the CPU with the instance's schedule.
#[augur::staged]
pub(crate) fn local<E: Elem>(
    lhs: &Access<E>,
    op: Op,
    rhs: Term<E>,
    loc: &'static Location<'static>,
) {
    let plan = match check(lhs, op, rhs, loc) {
        Ok(p) => p,
        Err(e) => dsl::fail(e, loc),
    };
    let Some(ctx) = lhs.tensor.state.ctx.upgrade() else {
        panic!("einsum: a tensor used after its Einsum was dropped, at {loc}")
    };
    let target = Target::of(&ctx.config, ctx.schedule.get());
    drop(ctx);
    plan.cpu(target)
}

pub(crate) fn describe<E: Elem>(lhs: &Access<E>, op: Op) -> String {
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
    /// The loops `schedule` lays out: blocked, or plain loops over the left
    /// side's indices, then the element.
    #[augur::staged]
    fn cpu(&self, target: Target) {
        // The paper's loops keep one loop per index.
        if target.schedule != Schedule::Naive {
            if let Some(fused) = fuse::fuse(self) {
                return fused.plan(self.loc, self.op).unfused_cpu(target);
            }
        }
        self.unfused_cpu(target)
    }

    /// [`Plan::cpu`] after fusion.
    #[augur::staged]
    fn unfused_cpu(&self, target: Target) {
        let (openmp, schedule) = (target.openmp, target.schedule);
        if let Some(layout) = Layout::for_cpu(self) {
            let shape = layout.shape(self, target.vector_bytes);
            if let Some(b) = schedule.resolve::<E>(shape) {
                let small = schedule == Schedule::Auto && shape.work < AUTO_PARALLEL_MIN_WORK;
                let parallel = (openmp && !small).then_some(target.threads);
                let index = blocked::parallel_index(self, &layout, parallel);
                self.report(Schedule::Blocked(b), index);
                return blocked::generate(self, &layout, b, parallel);
            }
        }
        let first = self.lhs_indices.first().copied();
        self.report(Schedule::Naive, first.filter(|_| openmp));
        if openmp && !self.lhs_indices.is_empty() {
            augur::annotate("pragma: omp parallel for");
        }
        self.loops(&self.lhs_indices, &mut Vec::new(), &mut |env| {
            self.element(env)
        });
    }

    /// Records how the statement is generated ([`Einsum::chosen`](crate::Einsum::chosen)),
    /// once per line and statement.
    fn report(&self, schedule: Schedule, parallel: Option<Index>) {
        let Some(ctx) = self.lhs.tensor.state.ctx.upgrade() else {
            return;
        };
        let chosen = Chosen {
            statement: describe(self.lhs, self.op),
            location: self.loc.to_string(),
            schedule,
            fused: (self.ranges.iter())
                .filter(|(i, _)| fuse::is_fused(*i))
                .map(|(i, _)| i.name.to_string())
                .collect(),
            parallel: parallel.map(|i| i.name.to_string()),
        };
        let mut all = ctx.chosen.borrow_mut();
        if !all.contains(&chosen) {
            all.push(chosen);
        }
    }

    /// The paper's GPU loops: first index over blocks, second over threads
    /// (or one index over all threads), the rest plain.
    #[augur::staged]
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
}
