//! Reductions along rows on the GPU: a warp of lanes per row, reading the
//! row side by side.
//!
//! `z[i] (=|+=|*=) Σ_k f(i, k)` inside `run_on_gpu`, where `k` is the
//! innermost (stride 1) index of the accesses (a matrix-vector product, a
//! row sum), under any schedule but [`Schedule::Naive`]: each block takes
//! `threads / 32` rows at a time, one per group of 32 lanes (a warp). Lane
//! `l` folds `f(i, l)`, `f(i, l + 32)`, ... in order, so a warp's 32 reads
//! of a turn are one contiguous stretch of the row, where the paper's
//! loop (a thread per row) reads 32 rows apart. The lanes' partial results
//! meet in shared memory, in a tree of five steps between block barriers.
//!
//! The order of the sum is not the paper's loop's: results are the same
//! when the sums are exact (small integers), as with any parallel
//! reduction, and may differ in the last bits otherwise.
//!
//! [`Schedule::Naive`]: crate::Schedule::Naive

use crate::context::Thread;
use crate::elem::Elem;
use crate::plan::{flat, Layout, Op, Plan};
use augur::stage::gpu;
use augur::Dyn;

/// Lanes per row: a warp.
const LANES: u32 = 32;

impl<E: Elem> Plan<'_, E> {
    /// Stages the statement as rows of lanes if it reduces along its
    /// innermost index into one left index and the block has a multiple of
    /// 32 threads; false (nothing staged) otherwise.
    #[augur::staged]
    pub(crate) fn gpu_rows(&self, t: Thread, blocks: u32, threads: u32) -> bool {
        let Some(lay) = Layout::of(self) else {
            return false;
        };
        let (Some(i), &[k]) = (lay.row, &self.reduced[..]) else {
            return false;
        };
        let reads_lhs = (self.rhs.accesses().iter()).any(|a| a.tensor.same(&self.lhs.tensor));
        let one_row = self.lhs_indices == [i] && self.lhs.indices == [i];
        if !lay.lanes || lay.vector != k || !one_row || reads_lhs {
            return false;
        }
        if threads < LANES || threads % LANES != 0 {
            return false;
        }
        let rows = (threads / LANES) as i32;
        let (n, nk) = (self.range(i) as i32, self.range(k) as i32);
        let part = gpu::shared::<E>(threads);
        let lane = t.tid % LANES as i32;
        let (start, combine) = self.combine();
        // Block-uniform, so the block barriers inside are reached by all.
        let first = Dyn::named("rows", t.bid * rows);
        while first.lt(n).is_true() {
            let row = Dyn::named("row", first + t.tid / LANES as i32);
            let acc = Dyn::named("acc", start);
            if row.lt(n).is_true() {
                let q = Dyn::named("q", lane);
                while q.lt(nk).is_true() {
                    let env = vec![(i, row), (k, q)];
                    acc.set(combine(acc, self.value(&self.rhs, &env)));
                    q.set(q + LANES as i32);
                }
            }
            part.at(t.tid).set(acc);
            gpu::sync_threads();
            // Tags must tell the steps apart: each has a dyn branch.
            for step in augur::range(0..LANES.trailing_zeros()) {
                let half = (LANES >> (step + 1)) as i32;
                if lane.lt(half).is_true() {
                    let mine = part.at(t.tid);
                    mine.set(combine(mine, part.at(t.tid + half)));
                }
                gpu::sync_threads();
            }
            if (lane.eq(0) & row.lt(n)).is_true() {
                let env = vec![(i, row)];
                let sum = part.at(t.tid);
                let value = match self.op {
                    Op::Assign => sum,
                    Op::Add => self.read(self.lhs, &env) + sum,
                    Op::Mul => self.read(self.lhs, &env) * sum,
                };
                let place = self.lhs.tensor.write_buffer(self.loc);
                place.at(flat(self.lhs, &env)).set(value);
            }
            first.set(first + blocks as i32 * rows);
        }
        true
    }
}
