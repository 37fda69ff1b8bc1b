//! Batched check runs: one check run for the loops an attempt closed, one
//! for the memo links it made, each covering what the members' own check
//! runs would do, with one mechanism for both ([`Batch`], `BatchKind`).
//!
//! **Loops.**
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
//!
//! **Links.**
//! Every memo link is owed a check run (see `schedule_link_check` in
//! `audit.rs`): it replays the path that made the link, then takes the
//! other side at every decision past it and compares everything to the end
//! of the closure with the recorded code (or until it goes around a
//! machine: `Engine::check_goes_around` in `audit.rs`). Each such run
//! replays its whole path, so `n` sequential ifs cost `n` runs of `n` ifs
//! each: half of the first stage's work in BuildIt's sample18 shape.
//!
//! Past its link a link's check takes, at each branch, the side the linking
//! run did not take (the recorded second side), whatever came before. One
//! run from the top of the closure that takes that side at *every* branch
//! therefore does, past each link it passes, exactly what that link's own
//! check does: the same choices, the same comparisons to the end (where the
//! batched run stops going around a machine at a member it jumped to before
//! the link, the link's own check would go on from its first jump there
//! and do what the batched run did from that member on). Only the
//! way in differs (the batched run reaches the link along second sides, the
//! link's own check along the linking run's path). A link is covered when
//! the batched run passes along its edge (the side or statement the linking
//! run attached to the shared code); the links it does not pass get their
//! own check runs afterwards, as before.
//!
//! A difference the batched run sees cannot be laid on one link: every link
//! of the batch then gets its own check run, and the first that fails is
//! blamed as usual (the link is forbidden and the attempt starts over). If
//! none fails, the difference shows only on the batched path, where the
//! shared code would be wrong: the links the run passed before the
//! difference are forbidden and the attempt starts over, so that path gets
//! its own code. A difference before any link is wrong code no link
//! explains (a loop's state that the loop checks did not reach): the
//! extraction stops with [`Error::CheckFailed`].

use super::decisions::PathId;
use super::engine::Engine;
use super::jobs::{edge, Batch, BatchKind, Check, Job, Mismatch, LOOP_CHECK_TURNS};
use super::run::Mode;
use crate::ir::SrcLoc;
use crate::Error;
use std::rc::Rc;

impl Engine {
    /// The next check run: a batch of the attempt's loop checks the first
    /// time there are two or more, then a batch of its link checks likewise,
    /// else the next check as scheduled.
    pub(super) fn next_check(&mut self) -> Option<Job> {
        self.batch(true)
            .or_else(|| self.batch(false))
            .or_else(|| self.schedule.checks.pop())
    }

    /// A batched run of the attempt's loop (`loops`) or link checks, the
    /// first time there are two or more of them (`None`: no batch now).
    fn batch(&mut self, loops: bool) -> Option<Job> {
        let of_kind = self
            .schedule
            .checks
            .iter()
            .filter(|j| match j.check {
                Some(Check::Loop(..)) => loops,
                Some(Check::Link(..)) => !loops,
                _ => false,
            })
            .count();
        let b = &mut self.schedule.batching;
        let tried = if loops {
            &mut b.loops_tried
        } else {
            &mut b.links_tried
        };
        if *tried || of_kind < 2 {
            return None;
        }
        *tried = true;
        let mut batch = Batch::new(loops);
        // Members the batch cannot take (two loops closed at one head: a
        // plain Rust loop closes one per side of its branch, and one run
        // stays on one side; two links at one edge) keep their own runs.
        let mut others = Vec::new();
        for job in std::mem::take(&mut self.schedule.checks) {
            if batch.admit(&job) {
                batch.members.push(job);
            } else {
                others.push(job);
            }
        }
        self.schedule.checks = others;
        if batch.members.len() < 2 {
            self.schedule.checks.append(&mut batch.members);
            return None;
        }
        Some(Job {
            decisions: PathId::ROOT,
            no_link_until: 0,
            check: Some(Check::Batch(Rc::new(batch))),
            replay: 0,
            site: None,
        })
    }

    /// A batched run starts.
    pub(super) fn start_batch(&mut self) {
        self.schedule.batching.active = true;
        self.schedule.batching.passed.clear();
    }

    /// A check run moves from its cursor to the next node: for a batched
    /// link run, note the link it passes, if any.
    pub(super) fn note_link_edge(&mut self, check: &Check) {
        let Check::Batch(b) = check else { return };
        let (BatchKind::Links { edges }, Some(e)) = (&b.kind, edge(self.run.cursor)) else {
            return;
        };
        if let Some(&i) = edges.get(&e) {
            self.schedule.batching.passed.push(i);
        }
    }

    /// After a batched run that saw no difference: members it did not
    /// cover get their own check runs, in the order they were scheduled.
    /// A loop is covered when the run took it through its turns and out,
    /// a link when the run passed along its edge.
    pub(super) fn settle_batch(&mut self) {
        if !std::mem::take(&mut self.schedule.batching.active) {
            return;
        }
        let Mode::Check(c) = &self.run.mode else {
            return;
        };
        let Check::Batch(b) = &c.check else {
            return;
        };
        let b = b.clone();
        let mut covered = vec![false; b.members.len()];
        match &b.kind {
            BatchKind::Loops { heads, .. } => {
                for (head, &(i, _)) in heads {
                    covered[i] = self.run.visits.get(*head) > LOOP_CHECK_TURNS;
                }
            }
            BatchKind::Links { .. } => {
                for &i in &self.schedule.batching.passed {
                    covered[i] = true;
                }
            }
        }
        for (job, covered) in b.members.iter().zip(covered) {
            if !covered {
                self.schedule.checks.push(job.clone());
            }
        }
    }

    /// The batched run `b` saw the first stage differ at `at`: check each
    /// member on its own, and remember the difference in case none of
    /// them fails.
    ///
    /// Links passed before the difference are the suspects, and the first
    /// passed is checked first: up to it, the batched run followed the
    /// path its linking run took (the only recorded way there, with no
    /// link before it), and past it both take the same sides, so its own
    /// check is the same run and fails the same way.
    pub(super) fn batch_failed(&mut self, b: &Batch, at: SrcLoc) {
        if !std::mem::take(&mut self.schedule.batching.active) {
            return;
        }
        match &b.kind {
            BatchKind::Loops { .. } => {
                let loops = b
                    .members
                    .iter()
                    .filter_map(|j| match &j.check {
                        Some(Check::Loop(_, taken)) => Some(self.graph.nodes[taken[0].0].loc),
                        _ => None,
                    })
                    .collect();
                self.schedule
                    .batching
                    .loop_mismatch
                    .get_or_insert(Mismatch { at, loops });
                for job in &b.members {
                    self.schedule.checks.push(job.clone());
                }
            }
            BatchKind::Links { .. } => {
                let passed = std::mem::take(&mut self.schedule.batching.passed);
                let key = |i: usize| match &b.members[i].check {
                    Some(Check::Link(key, occ, _)) => Some((*key, *occ)),
                    _ => None,
                };
                let keys = passed.iter().filter_map(|&i| key(i)).collect();
                self.schedule
                    .batching
                    .link_suspects
                    .get_or_insert((at, keys));
                // `checks` is a stack: the links not passed go first, then
                // the passed ones from the last to the first.
                let mut first_pass = vec![None; b.members.len()];
                for (at, &i) in passed.iter().enumerate() {
                    first_pass[i].get_or_insert(at);
                }
                let mut order: Vec<usize> = (0..b.members.len()).collect();
                // Not passed (`None`) first, then by first pass, latest first.
                order.sort_by_key(|&i| first_pass[i].map(std::cmp::Reverse));
                for i in order {
                    self.schedule.checks.push(b.members[i].clone());
                }
            }
        }
    }

    /// Every check passed one by one, but a batched link run saw a
    /// difference: forbid the links it passed before it (`Ok(true)`: start
    /// the attempt over), or, if it passed none, stop with an error.
    pub(super) fn link_batch_verdict(&mut self) -> Result<bool, Error> {
        let Some((at, keys)) = self.schedule.batching.link_suspects.take() else {
            return Ok(false);
        };
        if keys.is_empty() {
            return Err(Error::CheckFailed {
                location: at,
                loops: Vec::new(),
            });
        }
        self.learned.no_link.extend(keys);
        self.stats.link_audit_failures += 1;
        Ok(true)
    }

    /// All checks passed one by one: a difference only a batched loop run
    /// saw is still wrong code on its path.
    pub(super) fn loop_batch_verdict(&mut self) -> Result<(), Error> {
        match self.schedule.batching.loop_mismatch.take() {
            Some(m) => Err(Error::CheckFailed {
                location: m.at,
                loops: m.loops,
            }),
            None => Ok(()),
        }
    }
}
