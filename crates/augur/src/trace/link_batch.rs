//! Batched link checks: one check run for the memo links an attempt made.
//!
//! Every memo link is owed a check run (see `schedule_link_check` in
//! `audit.rs`): it replays the path that made the link, then takes the
//! other side at every decision past it and compares everything to the end
//! of the closure with the recorded code. Each such run replays its whole
//! path, so `n` sequential ifs cost `n` runs of `n` ifs each: half of the
//! first stage's work in BuildIt's sample18 shape.
//!
//! Past its link a link's check takes, at each branch, the side the linking
//! run did not take (the recorded second side), whatever came before. One
//! run from the top of the closure that takes that side at *every* branch
//! therefore does, past each link it passes, exactly what that link's own
//! check does: the same choices, the same comparisons to the end. Only the
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
use super::graph::NodeId;
use super::run::{Check, Cursor, Job, Mode};
use super::tag::{FastMap, Tag};
use crate::ir::SrcLoc;
use crate::Error;
use std::rc::Rc;

/// The links one batched check run covers.
#[derive(Debug)]
pub(super) struct LinkBatch {
    /// Each link's own check, to run if the batch does not cover it.
    links: Vec<Job>,
    /// The edge each link attached to shared code, to its link's index.
    edges: FastMap<(NodeId, u8), usize>,
}

/// This attempt's link batching.
#[derive(Default)]
pub(super) struct LinkBatches {
    /// The links were batched once this attempt.
    tried: bool,
    /// The batched run in progress.
    run: Option<Rc<LinkBatch>>,
    /// Links of that run's batch passed so far, in the order passed.
    passed: Vec<usize>,
    /// After a batched run saw a difference: where, and the memo keys of
    /// the links it passed before it, until a link's own check explains it.
    suspects: Option<(SrcLoc, Vec<(Tag, u32)>)>,
}

impl LinkBatches {
    /// Forgets the attempt's batching (a new attempt starts).
    pub(super) fn clear(&mut self) {
        *self = LinkBatches::default();
    }
}

/// The key of the edge a run moves along from `cursor` to the next node.
fn edge(cursor: Cursor) -> Option<(NodeId, u8)> {
    match cursor {
        Cursor::Root => None,
        Cursor::Side(n, d) => Some((n, u8::from(d))),
        Cursor::After(n) => Some((n, 2)),
    }
}

impl Engine {
    /// A batched run for this attempt's link checks the first time there
    /// are two or more of them (`None`: no batch now).
    pub(super) fn link_batch(&mut self) -> Option<Job> {
        let links = self.checks.iter().filter(|j| is_link(j)).count();
        if self.link_batches.tried || links < 2 {
            return None;
        }
        self.link_batches.tried = true;
        let mut batch = LinkBatch {
            links: Vec::new(),
            edges: FastMap::default(),
        };
        let mut others = Vec::new();
        for job in std::mem::take(&mut self.checks) {
            let attach = match &job.check {
                Some(Check::Link(_, _, attach)) => edge(*attach),
                _ => None,
            };
            match attach {
                Some(e) if !batch.edges.contains_key(&e) => {
                    batch.edges.insert(e, batch.links.len());
                    batch.links.push(job);
                }
                _ => others.push(job),
            }
        }
        self.checks = others;
        if batch.links.len() < 2 {
            self.checks.append(&mut batch.links);
            return None;
        }
        Some(Job {
            decisions: PathId::ROOT,
            no_link_until: 0,
            check: Some(Check::LinkBatch(Rc::new(batch))),
        })
    }

    /// The batched run starts.
    pub(super) fn start_link_batch(&mut self, batch: Rc<LinkBatch>) {
        self.link_batches.run = Some(batch);
        self.link_batches.passed.clear();
    }

    /// A check run moves from its cursor to the next node: for a batched
    /// link run, note the link it passes, if any.
    pub(super) fn note_link_edge(&mut self) {
        let lb = &mut self.link_batches;
        let (Some(batch), Some(e)) = (&lb.run, edge(self.run.cursor)) else {
            return;
        };
        if let Some(&i) = batch.edges.get(&e) {
            lb.passed.push(i);
        }
    }

    /// After a batched run that saw no difference: links it did not pass
    /// get their own check runs.
    pub(super) fn settle_link_batch(&mut self) {
        let Some(batch) = self.link_batches.run.take() else {
            return;
        };
        if !matches!(self.run.mode, Mode::Check(_)) {
            return;
        }
        let mut covered = vec![false; batch.links.len()];
        for &i in &self.link_batches.passed {
            covered[i] = true;
        }
        for (job, covered) in batch.links.iter().zip(covered) {
            if !covered {
                self.checks.push(job.clone());
            }
        }
    }

    /// The batched run saw the first stage differ at `at`: check each link
    /// on its own, and remember the links passed before the difference in
    /// case none of them fails. The first link passed is checked first: up
    /// to it, the batched run followed the path its linking run took (the
    /// only recorded way there, with no link before it), and past it both
    /// take the same sides, so its own check is the same run and fails the
    /// same way.
    pub(super) fn link_batch_failed(&mut self, at: SrcLoc) {
        let Some(batch) = self.link_batches.run.take() else {
            return;
        };
        let passed = std::mem::take(&mut self.link_batches.passed);
        let key = |i: usize| match &batch.links[i].check {
            Some(Check::Link(key, occ, _)) => Some((*key, *occ)),
            _ => None,
        };
        let keys = passed.iter().filter_map(|&i| key(i)).collect();
        self.link_batches.suspects.get_or_insert((at, keys));
        // `checks` is a stack: the links not passed go first, then the
        // passed ones from the last to the first.
        let mut first_pass = vec![None; batch.links.len()];
        for (at, &i) in passed.iter().enumerate() {
            first_pass[i].get_or_insert(at);
        }
        let mut order: Vec<usize> = (0..batch.links.len()).collect();
        // Not passed (`None`) first, then by first pass, latest first.
        order.sort_by_key(|&i| first_pass[i].map(std::cmp::Reverse));
        for i in order {
            self.checks.push(batch.links[i].clone());
        }
    }

    /// Every check passed one by one, but the batched run saw a difference:
    /// forbid the links it passed before it (`Ok(true)`: start the attempt
    /// over), or, if it passed none, stop with an error.
    pub(super) fn link_batch_verdict(&mut self) -> Result<bool, Error> {
        let Some((at, keys)) = self.link_batches.suspects.take() else {
            return Ok(false);
        };
        if keys.is_empty() {
            return Err(Error::CheckFailed {
                location: at,
                loops: Vec::new(),
            });
        }
        self.no_link.extend(keys);
        self.stats.link_audit_failures += 1;
        Ok(true)
    }
}

fn is_link(j: &Job) -> bool {
    matches!(j.check, Some(Check::Link(..)))
}
