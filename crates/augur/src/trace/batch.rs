//! Batched loop checks: one check run for the loops an attempt closed.
//!
//! Every closed loop is owed a check run (see `schedule_loop_check` in
//! `audit.rs`): its turns are made again with the other sides of their
//! decisions, and everything to the end of the closure is compared with
//! the recorded code. A DSL program closes many loops (an einsum kernel one
//! per index), and each check run replays the closure to its end: without
//! batching they were about half of the first stage's work.
//!
//! One batched run starts at the top of the closure and, at every loop of
//! the batch it reaches, does what that loop's own check does: it makes
//! [`LOOP_CHECK_TURNS`] turns, the first taking the recorded side of each
//! decision of the turn and the later ones the other side, then leaves.
//! Decisions outside the batch's loops take the first recorded side, then
//! the other. A loop the run did not take through its turns and out (it
//! lies on a side the run did not take, or the run stopped first) gets its
//! own check run afterwards, as before.
//!
//! A difference seen by the batched run cannot be laid on one loop: every
//! loop of the batch then gets its own check run, and the first that fails
//! is blamed as usual. If none fails, the difference shows only on the
//! batched path (state one loop's turns change, read only where another
//! loop's turns lead): generated code would be wrong there, so the
//! extraction stops with [`Error::CheckFailed`].

use super::audit::LOOP_CHECK_TURNS;
use super::decisions::PathId;
use super::engine::Engine;
use super::graph::NodeId;
use super::run::{Check, Job, Mode};
use super::tag::FastMap;
use crate::ir::SrcLoc;
use crate::Error;
use std::rc::Rc;

/// The loops one batched check run covers.
#[derive(Debug)]
pub(super) struct Batch {
    /// Each loop's own check, to run if the batch does not cover it.
    loops: Vec<Job>,
    /// The head decision of each loop: its index and the side that stays.
    heads: FastMap<NodeId, (usize, bool)>,
    /// The other decisions of the loops' turns, with the side taken.
    turns: FastMap<NodeId, bool>,
}

/// A difference the batched run saw: where, and the batch's loops.
#[derive(Debug, Clone)]
pub(super) struct Mismatch {
    at: SrcLoc,
    loops: Vec<SrcLoc>,
}

impl Engine {
    /// The next check run: a batch of the attempt's loop checks the first
    /// time there are two or more, then a batch of its link checks likewise
    /// (`link_batch.rs`), else the next check as scheduled.
    pub(super) fn next_check(&mut self) -> Option<Job> {
        let loops = self.checks.iter().filter(|j| is_loop(j)).count();
        if self.batch_tried || loops < 2 {
            return self.link_batch().or_else(|| self.checks.pop());
        }
        self.batch_tried = true;
        let mut batch = Batch {
            loops: Vec::new(),
            heads: FastMap::default(),
            turns: FastMap::default(),
        };
        // Loops closed at one head (a plain Rust loop closes one per side
        // of its branch) need their own runs: one run stays on one side.
        let mut alone = Vec::new();
        for job in std::mem::take(&mut self.checks) {
            let Some(Check::Loop(_, taken)) = &job.check else {
                alone.push(job);
                continue;
            };
            let (head, stay) = taken[0];
            if batch.heads.contains_key(&head) {
                alone.push(job);
                continue;
            }
            batch.heads.insert(head, (batch.loops.len(), stay));
            for &(n, side) in &taken[1..] {
                batch.turns.entry(n).or_insert(side);
            }
            batch.loops.push(job);
        }
        self.checks = alone;
        if batch.loops.len() < 2 {
            self.checks.append(&mut batch.loops);
            return self.link_batch().or_else(|| self.checks.pop());
        }
        Some(Job {
            decisions: PathId::ROOT,
            no_link_until: 0,
            check: Some(Check::Batch(Rc::new(batch))),
        })
    }

    /// The side a batched run wants at branch `n` on its `visits`-th visit
    /// (`recorded_first`: the branch's first side was recorded).
    pub(super) fn batch_choice(
        batch: &Batch,
        n: NodeId,
        visits: u32,
        recorded_first: bool,
    ) -> bool {
        if let Some(&(_, stay)) = batch.heads.get(&n) {
            return stay == (visits <= LOOP_CHECK_TURNS);
        }
        if let Some(&side) = batch.turns.get(&n) {
            return if visits == 1 { side } else { !side };
        }
        (visits == 1) == recorded_first
    }

    /// After a batched run that saw no difference: loops it did not take
    /// through their turns and out get their own check runs.
    pub(super) fn settle_batch(&mut self) {
        let Some(batch) = self.batch_run.take() else {
            return;
        };
        if !matches!(self.run.mode, Mode::Check(_)) {
            return;
        }
        let visits = &self.run.visits;
        let left = |head: &NodeId| visits.get(*head) > LOOP_CHECK_TURNS;
        let mut unchecked: Vec<usize> = batch
            .heads
            .iter()
            .filter(|(head, _)| !left(head))
            .map(|(_, &(i, _))| i)
            .collect();
        // In the order they were scheduled, whatever the map's order.
        unchecked.sort_unstable();
        for i in unchecked {
            self.checks.push(batch.loops[i].clone());
        }
    }

    /// The batched run saw the first stage differ at `at`: check each loop
    /// on its own; remember the difference in case none of them fails.
    pub(super) fn batch_failed(&mut self, at: SrcLoc) {
        let Some(batch) = self.batch_run.take() else {
            return;
        };
        let loops = batch
            .loops
            .iter()
            .filter_map(|j| match &j.check {
                Some(Check::Loop(_, taken)) => Some(self.nodes[taken[0].0].loc),
                _ => None,
            })
            .collect();
        self.batch_mismatch.get_or_insert(Mismatch { at, loops });
        for job in &batch.loops {
            self.checks.push(job.clone());
        }
    }

    /// All checks passed one by one: a difference only the batched run saw
    /// is still wrong code on its path.
    pub(super) fn batch_verdict(&mut self) -> Result<(), Error> {
        match self.batch_mismatch.take() {
            Some(m) => Err(Error::CheckFailed {
                location: m.at,
                loops: m.loops,
            }),
            None => Ok(()),
        }
    }
}

fn is_loop(j: &Job) -> bool {
    matches!(j.check, Some(Check::Loop(..)))
}
