//! The engine's side of prophecies and histories: where a cell is created
//! (its identity), and what a violated requirement does to the run.

use super::engine::{Ctl, Engine};
use super::jobs::Adaptive;
use crate::error::Error;
use crate::ir::SrcLoc;
use crate::prophecy::store::{CellId, Verdict};
use crate::prophecy::{CellKind, Lattice, ProphecyMode};

/// Joins shown per cell in the error of a prophecy that never settles.
const HISTORY_SHOWN: usize = 8;

impl Engine {
    /// Identifies this extraction to the prophecy handles it makes.
    pub(super) fn extraction(&self) -> u64 {
        self.extraction
    }

    /// The cell created at the current program point.
    ///
    /// Its identity is the creation point's key plus the number of
    /// creations at that key with no oracle decision in between: a plain
    /// loop making one prophecy per tensor makes several, while the turns
    /// of a dyn loop (a decision between each) share one.
    pub(super) fn cell_open<L: Lattice>(
        &mut self,
        kind: CellKind,
        initial: L,
        name: Option<String>,
        loc: SrcLoc,
    ) -> Result<CellId, Ctl> {
        let key = self.point_key();
        let calls = self.run.oracle_calls;
        let streak = self
            .run
            .cell_streaks
            .entry(key)
            .or_insert((calls, u32::MAX));
        streak.1 = if streak.0 == calls {
            streak.1.wrapping_add(1)
        } else {
            0
        };
        streak.0 = calls;
        let occurrence = streak.1;
        let check = self.detached.is_none();
        let (id, verdict) = self
            .cells
            .open((key, occurrence), kind, initial, name, loc, check)
            .map_err(Ctl::fail)?;
        self.on_verdict(verdict)?;
        Ok(id)
    }

    /// Reads a cell (operations of a run that already ended do not count
    /// as reads).
    pub(super) fn cell_get<L: Lattice>(&mut self, id: CellId) -> L {
        let mark = self.detached.is_none();
        self.cells.get(id, mark)
    }

    /// Requires (or records) `v` of cell `id`.
    pub(super) fn cell_require<L: Lattice>(
        &mut self,
        id: CellId,
        v: L,
        loc: SrcLoc,
    ) -> Result<(), Ctl> {
        if self.detached.is_some() {
            return Ok(());
        }
        let verdict = self.cells.require(id, v, loc).map_err(Ctl::fail)?;
        self.on_verdict(verdict)
    }

    fn on_verdict(&mut self, verdict: Verdict) -> Result<(), Ctl> {
        match verdict {
            Verdict::Satisfied | Verdict::Joined | Verdict::Deferred => Ok(()),
            Verdict::Restart => match self.prophecy_restart() {
                Ok(()) => Err(Ctl::Restart),
                Err(e) => Err(Ctl::fail(e)),
            },
        }
    }

    /// Counts a restart for prophecies; past the limit, the error lists
    /// every cell's history.
    pub(super) fn prophecy_restart(&mut self) -> Result<(), Error> {
        self.stats.prophecy_restarts += 1;
        if self.stats.prophecy_restarts <= self.config.max_prophecy_restarts {
            return Ok(());
        }
        Err(Error::ProphecyNotSettled {
            restarts: self.config.max_prophecy_restarts,
            history: self.cells.explanation(true).abridged(HISTORY_SHOWN),
        })
    }

    /// Adaptive mode: true when the attempt has joins pending and has gone
    /// as many runs without a new violation as it took before the run that
    /// found the first (so an attempt whose first run finds violations
    /// ends with that run).
    pub(super) fn attempt_done(&mut self) -> bool {
        if self.config.prophecy_mode != ProphecyMode::Adaptive {
            return false;
        }
        let runs = self.stats.runs + self.stats.check_runs;
        let seen = self.cells.deferred();
        let a = &mut self.schedule.adaptive;
        if seen == 0 {
            *a = Adaptive::default();
            return false;
        }
        if seen != a.seen {
            if a.seen == 0 {
                a.patience = runs.saturating_sub(1);
            }
            a.seen = seen;
            a.last_new = runs;
        }
        runs - a.last_new >= a.patience
    }

    /// A run failed while collect mode had joins waiting: the stale
    /// predictions may be why, so the failure starts the next attempt
    /// instead. Returns the error when it is the extraction's to report.
    pub(crate) fn retry_with_pending(&mut self, e: Error) -> Result<(), Error> {
        let retry = self.config.prophecy_mode != ProphecyMode::Paper
            && self.cells.has_pending()
            && !matches!(
                e,
                Error::Lattice { .. } | Error::ProphecyNotSettled { .. } | Error::Internal { .. }
            );
        if !retry {
            return Err(e);
        }
        self.cells.settle();
        self.prophecy_restart()?;
        self.may_restart()?;
        self.start_attempt();
        Ok(())
    }
}
