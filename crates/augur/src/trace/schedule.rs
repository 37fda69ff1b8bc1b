//! Which run comes next: attempts (each starts exploration over), the
//! order of jobs (exploration first, then check runs, then the deferred
//! prophecy joins that start the next attempt), and the limits checked
//! before every run (runs, attempts, memory, a value carried across turns).

use super::engine::Engine;
use super::graph::{Graph, Node};
use super::jobs::{Check, Job};
use crate::error::Error;
use crate::ir::{SrcLoc, VarData};

/// Runs an extraction may take once a loop audit found a turn reading a
/// `Dyn` value the turn before computed (`Learned::carried`), before it
/// stops with `Error::CarriedValue`. A plain Rust loop of that shape (the
/// same audit failure) unrolls correctly well within this; a dyn loop never
/// ends, and each of its turns costs runs that replay all turns before it,
/// so the general run limit would take hours.
const CARRIED_RUNS: u64 = 1000;

/// Runs allowed past a certain work-limit bound while the watched decision
/// has not yet shown the state its runs differ in.
const WATCH_RUNS: u32 = 16;

/// What the work limit's errors suggest: the usual cause is a loop over
/// first-stage state with an exit per state.
const QUADRATIC_HINT: &str = ". If a dyn decision is reached again and again after ever longer \
     replays (a loop over first-stage state with an exit per state, such as an interpreter's \
     program counter in a `Static`, whose work grows with the square of its length), write it \
     over resumable points (augur::resumable, tutorial chapter 10): each run then starts at \
     the point it explores";

impl Engine {
    /// Discards all exploration (keeps what audits `Learned`) and schedules the first run.
    pub fn start_attempt(&mut self) {
        if self.schedule.attempts > 0 {
            self.stats.runs_per_attempt.push(self.stats.runs);
        }
        self.schedule.attempts += 1;
        self.cells.start_attempt(self.schedule.attempts);
        self.out = self.out.fresh();
        self.graph = Graph::default();
        self.schedule.reset();
        // The counters describe the final attempt; totals are kept apart.
        self.stats.runs = 0;
        self.stats.check_runs = 0;
        self.stats.loop_check_runs = 0;
        self.stats.link_check_runs = 0;
        self.stats.memo_hits = 0;
        self.stats.back_edges = 0;
        self.stats.point_jumps = 0;
        self.stats.loop_audits = 0;
    }

    /// True when the attempt limit allows another attempt.
    pub fn may_restart(&self) -> Result<(), Error> {
        if self.schedule.attempts >= self.config.max_attempts {
            return Err(Error::Limit {
                what: format!("{} attempts (restarts)", self.config.max_attempts),
                location: None,
            });
        }
        Ok(())
    }

    /// Begins the next scheduled run; `None` when exploration is complete.
    pub fn next_run(&mut self, gen: u32) -> Result<bool, Error> {
        // A run that went on as the next one found it over a limit.
        if let Some(e) = self.chain.refused.take() {
            return Err(e);
        }
        self.chain.entry = None;
        self.settle_batch();
        let job = loop {
            if self.attempt_done() {
                self.schedule.worklist.clear();
                self.schedule.pending_replay = 0;
            }
            if let Some(job) = self.schedule.worklist.pop() {
                self.schedule.pending_replay -= job.replay;
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
        self.admit(&job)?;
        self.count_run(&job);
        self.gen = gen;
        self.detached = None;
        self.run.reset(job, &self.schedule.tree);
        Ok(true)
    }

    /// The limits checked before every run, `job` the one about to start.
    pub(super) fn admit(&mut self, job: &Job) -> Result<(), Error> {
        self.check_memory(None)?;
        if self.config.panic_before_run == Some(self.stats.total_runs) {
            panic!(
                "augur engine: injected internal panic before run {}",
                self.stats.total_runs
            );
        }
        if self.stats.total_runs >= CARRIED_RUNS {
            if let Some(&(loop_at, used, computed)) = self.learned.carried.first() {
                return Err(Error::CarriedValue {
                    loop_at,
                    used,
                    computed,
                    runs: self.stats.total_runs,
                });
            }
        }
        self.projected_work(job.site)?;
        if self.stats.operations >= self.config.max_work {
            return Err(Error::Limit {
                what: format!(
                    "{} operations performed by the closure's runs (Builder::max_work; {} \
                     runs){}{}{}",
                    self.config.max_work,
                    self.stats.total_runs,
                    self.watched_state(),
                    crate::error::plain_loop_hint(&self.learned.plain_loops),
                    QUADRATIC_HINT
                ),
                location: job.site,
            });
        }
        if self.stats.total_runs >= self.config.max_runs {
            return Err(Error::Limit {
                what: format!(
                    "{} runs of the closure{}",
                    self.config.max_runs,
                    crate::error::plain_loop_hint(&self.learned.plain_loops)
                ),
                location: None,
            });
        }
        Ok(())
    }

    /// Counts the run of `job` about to start, and the operations of the
    /// one before it.
    pub(super) fn count_run(&mut self, job: &Job) {
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
    }
}

impl Engine {
    /// Stops early when the work limit is certain to be reached: the runs
    /// still scheduled must at least replay what came before their
    /// decisions, and that alone passes the limit. This is the shape of a
    /// loop over first-stage state with an exit per state (an
    /// interpreter's program counter in a `Static`): each exit is explored
    /// by a run that replays everything before it, so the work grows with
    /// the square of the program, and resumable points are the fix.
    /// `site`: the decision of the job about to run.
    fn projected_work(&mut self, site: Option<SrcLoc>) -> Result<(), Error> {
        let at_least = self.stats.operations + self.schedule.pending_replay;
        let done = self.stats.operations >= self.config.max_work;
        if done || self.cells.has_pending() {
            // At the limit already (the limit's own error), or joins
            // pending (the attempt's runs may be discarded).
            return Ok(());
        }
        // The costliest job is found only in sight of the limit: a scan of
        // the worklist before every run grows with the square of the runs.
        fn costliest(worklist: &[super::jobs::Job]) -> Option<&super::jobs::Job> {
            worklist.iter().max_by_key(|j| j.replay)
        }
        // In sight of the limit: watch the costliest decision, so that the
        // error can name the state its runs differ in.
        if at_least >= self.config.max_work / 2 && self.learned.watch.is_none() {
            let location = costliest(&self.schedule.worklist)
                .and_then(|j| j.site)
                .or(site);
            if let Some(site) = location {
                self.learned.watch = Some(super::jobs::Watch {
                    site,
                    last: None,
                    changing: Vec::new(),
                    runs_past: 0,
                });
            }
        }
        if at_least < self.config.max_work {
            return Ok(());
        }
        // Certain to pass it: a few more runs (bounded) to see the watched
        // decision's state differ, then the error.
        if let Some(w) = self.learned.watch.as_mut() {
            if w.changing.is_empty() && w.runs_past < WATCH_RUNS {
                w.runs_past += 1;
                return Ok(());
            }
        }
        let costliest = costliest(&self.schedule.worklist);
        let location = costliest.and_then(|j| j.site).or(site);
        Err(Error::Limit {
            what: format!(
                "{} operations (Builder::max_work), certain to be passed: {} runs are still \
                 to explore decisions, and replaying what comes before their decisions \
                 alone takes {} more operations, {} of them before the decision named here{}{}{}",
                self.config.max_work,
                self.schedule.worklist.len(),
                self.schedule.pending_replay,
                costliest.map_or(0, |j| j.replay),
                self.watched_state(),
                crate::error::plain_loop_hint(&self.learned.plain_loops),
                QUADRATIC_HINT
            ),
            location,
        })
    }

    /// `; its runs reach it with the first-stage state made at L differing`
    /// when the watched decision saw that.
    fn watched_state(&self) -> String {
        match &self.learned.watch {
            Some(w) if !w.changing.is_empty() => {
                let at: Vec<String> = w.changing.iter().map(|l| l.to_string()).collect();
                format!(
                    "; the runs reach the decision at {} with the first-stage state made at {} \
                     differing",
                    w.site,
                    at.join(" and at ")
                )
            }
            _ => String::new(),
        }
    }

    /// What the extraction holds, estimated from the counts of what grows
    /// with it: nodes (with their memo entries), decision paths, scheduled
    /// jobs, variables, the current run's path.
    pub(super) fn memory_estimate(&self) -> usize {
        use std::mem::size_of;
        self.graph.nodes.len() * (size_of::<Node>() + 48)
            + self.schedule.tree.len() * 8
            + (self.schedule.worklist.len() + self.schedule.checks.len()) * size_of::<Job>()
            + self.out.func.vars.len() * size_of::<VarData>()
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
                self.graph.nodes.len(),
                self.schedule.tree.len(),
                self.schedule.worklist.len() + self.schedule.checks.len(),
                crate::error::plain_loop_hint(&self.learned.plain_loops)
            ),
            location,
        })
    }
}
