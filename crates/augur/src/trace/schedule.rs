//! Which run comes next: attempts (each starts exploration over), the
//! order of jobs (exploration first, then check runs, then the deferred
//! prophecy joins that start the next attempt), and the limits checked
//! before every run (runs, attempts, memory, a value carried across turns).

use super::decisions::PathId;
use super::engine::Engine;
use super::graph::Node;
use super::jobs::{Check, Job};
use crate::error::Error;
use crate::ir::{Arena, SrcLoc, VarData, VarKind};

/// Runs an extraction may take once a loop audit found a turn reading a
/// `Dyn` value the turn before computed (`Engine::carried`), before it
/// stops with `Error::CarriedValue`. A plain Rust loop of that shape (the
/// same audit failure) unrolls correctly well within this; a dyn loop never
/// ends, and each of its turns costs runs that replay all turns before it,
/// so the general run limit would take hours.
const CARRIED_RUNS: u64 = 1000;

impl Engine {
    /// Discards all exploration (keeps `never_close`) and schedules the first run.
    pub fn start_attempt(&mut self) {
        if self.attempts > 0 {
            self.stats.runs_per_attempt.push(self.stats.runs);
        }
        self.attempts += 1;
        self.cells.start_attempt(self.attempts);
        self.adaptive = Default::default();
        self.func = crate::ir::Function::new(self.name.clone(), self.ret);
        for (i, ty) in self.param_types.iter().enumerate() {
            let v = self.func.vars.push(VarData {
                ty: *ty,
                kind: VarKind::Param(i as u32),
                hint: None,
                name: None,
                addr_taken: false,
                loc: None,
            });
            self.func.params.push(v);
        }
        self.nodes = Arena::new();
        self.entry = None;
        self.memo.clear();
        self.memo_next.clear();
        self.checks.clear();
        self.batching = Default::default();
        self.worklist.clear();
        self.extern_ids.clear();
        self.var_place.clear();
        self.var_def.clear();
        self.assigned.clear();
        // The counters describe the final attempt; totals are kept apart.
        self.stats.runs = 0;
        self.stats.check_runs = 0;
        self.stats.loop_check_runs = 0;
        self.stats.link_check_runs = 0;
        self.stats.memo_hits = 0;
        self.stats.back_edges = 0;
        self.stats.loop_audits = 0;
        self.tree.clear();
        self.worklist.push(Job::explore(PathId::ROOT));
    }

    /// True when the attempt limit allows another attempt.
    pub fn may_restart(&self) -> Result<(), Error> {
        if self.attempts >= self.config.max_attempts {
            return Err(Error::Limit {
                what: format!("{} attempts (restarts)", self.config.max_attempts),
                location: None,
            });
        }
        Ok(())
    }

    /// Begins the next scheduled run; `None` when exploration is complete.
    pub fn next_run(&mut self, gen: u32) -> Result<bool, Error> {
        self.settle_batch();
        let job = loop {
            if self.attempt_done() {
                self.worklist.clear();
            }
            if let Some(job) = self.worklist.pop() {
                break job;
            }
            // Check runs audit this attempt's code; with joins pending the
            // code is discarded anyway (the final attempt runs its own).
            if !self.cells.has_pending() {
                if let Some(job) = self.next_check() {
                    break job;
                }
            }
            // The sweep is done: joins it deferred start the next attempt.
            if !self.cells.settle() {
                if self.link_batch_verdict()? {
                    // A difference only the batched link check saw: the
                    // links it passed are forbidden; explore again.
                    self.may_restart()?;
                    self.start_attempt();
                    continue;
                }
                self.loop_batch_verdict()?;
                return Ok(false);
            }
            self.prophecy_restart()?;
            self.may_restart()?;
            self.start_attempt();
        };
        self.check_memory(None)?;
        if self.config.panic_before_run == Some(self.stats.total_runs) {
            panic!(
                "augur engine: injected internal panic before run {}",
                self.stats.total_runs
            );
        }
        if self.stats.total_runs >= CARRIED_RUNS {
            if let Some(&(loop_at, used, computed)) = self.carried.first() {
                return Err(Error::CarriedValue {
                    loop_at,
                    used,
                    computed,
                    runs: self.stats.total_runs,
                });
            }
        }
        if self.stats.operations >= self.config.max_work {
            return Err(Error::Limit {
                what: format!(
                    "{} operations performed by the closure's runs (Builder::max_work; {} \
                     runs){}",
                    self.config.max_work,
                    self.stats.total_runs,
                    crate::error::plain_loop_hint(&self.plain_loops)
                ),
                location: None,
            });
        }
        if self.stats.total_runs >= self.config.max_runs {
            return Err(Error::Limit {
                what: format!(
                    "{} runs of the closure{}",
                    self.config.max_runs,
                    crate::error::plain_loop_hint(&self.plain_loops)
                ),
                location: None,
            });
        }
        if let Some(check) = &job.check {
            // The run starts in `Mode::Check` (see `Run::new`).
            self.stats.check_runs += 1;
            match check {
                Check::Loop(..) => self.stats.loop_check_runs += 1,
                Check::Batch(b) => {
                    if b.is_loops() {
                        self.stats.loop_check_runs += 1;
                    } else {
                        self.stats.link_check_runs += 1;
                    }
                    self.start_batch();
                }
                Check::Link(..) => self.stats.link_check_runs += 1,
            }
        } else {
            self.stats.runs += 1;
        }
        self.stats.total_runs += 1;
        self.stats.operations += self.run.ops;
        self.gen = gen;
        self.detached = None;
        self.run.reset(job, &self.tree);
        Ok(true)
    }
}

impl Engine {
    /// What the extraction holds, estimated from the counts of what grows
    /// with it: nodes (with their memo entries), decision paths, scheduled
    /// jobs, variables, the current run's path.
    pub(super) fn memory_estimate(&self) -> usize {
        use std::mem::size_of;
        self.nodes.len() * (size_of::<Node>() + 48)
            + self.tree.len() * 8
            + (self.worklist.len() + self.checks.len()) * size_of::<Job>()
            + self.func.vars.len() * size_of::<VarData>()
            + self.run.path.len() * 16
    }

    /// An error once the estimate passes the budget.
    pub(super) fn check_memory(&self, location: Option<SrcLoc>) -> Result<(), Error> {
        let used = self.memory_estimate();
        if used <= self.config.max_memory {
            return Ok(());
        }
        Err(Error::Limit {
            what: format!(
                "a memory budget of {} MiB (Builder::max_memory; about {} MiB held: {} \
                 operations, {} decisions, {} jobs){}",
                self.config.max_memory >> 20,
                used >> 20,
                self.nodes.len(),
                self.tree.len(),
                self.worklist.len() + self.checks.len(),
                crate::error::plain_loop_hint(&self.plain_loops)
            ),
            location,
        })
    }
}
