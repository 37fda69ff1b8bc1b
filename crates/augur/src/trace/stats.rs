//! Counters every extraction keeps; part of the public result.

use super::tag::Tagger;
use std::fmt;
use std::time::Duration;

/// What an extraction did and how long it took.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Stats {
    /// Executions of the closure in the final attempt (control-flow runs).
    pub runs: u64,
    /// Check runs in the final attempt: replays of later loop turns and of
    /// other sides after memoization links, comparing with recorded code.
    pub check_runs: u64,
    /// Of `check_runs`: those that ran closed loops' later turns (with the
    /// other sides) and left them: one batched run for the loops of an
    /// attempt, and one per loop it did not cover.
    pub loop_check_runs: u64,
    /// Of `check_runs`: those that took the other sides after a
    /// memoization link.
    pub link_check_runs: u64,
    /// Executions of the closure over all attempts, check runs included.
    pub total_runs: u64,
    /// Staging operations performed over all runs, replayed and recorded
    /// alike (each run re-executes the closure from its start, so this is
    /// the first stage's whole work).
    pub operations: u64,
    /// Attempts started over because a loop candidate proved to be a plain
    /// Rust loop (its head is then never closed again).
    pub loop_restarts: u64,
    /// Attempts started over because a prophecy was violated (or a history
    /// changed after it was read).
    pub prophecy_restarts: u64,
    /// Attempts (1 + all restarts).
    pub attempts: u64,
    /// Control-flow runs of each attempt, in order (the last is `runs`).
    pub runs_per_attempt: Vec<u64>,
    /// Prophecies and histories the final attempt used.
    pub prophecies: u64,
    /// Runs ended by linking to code another run recorded.
    pub memo_hits: u64,
    /// Loops closed.
    pub back_edges: u64,
    /// Resumable points recorded (`augur::resumable`): one per key a
    /// machine reached, and one per machine left.
    pub points: u64,
    /// Runs ended by a jump to a resumable point recorded before.
    pub point_jumps: u64,
    /// Runs that went on from the run before them inside a resumable
    /// machine, without leaving it (`Config::chain_runs`; counted in the
    /// runs too).
    pub chained_runs: u64,
    /// Loop candidates checked by re-running their cycle.
    pub loop_audits: u64,
    /// Memoization links that proved wrong when checked (first-stage state
    /// that tags do not see differed between two paths); those paths got
    /// code of their own.
    pub link_audit_failures: u64,
    /// Points where code was not shared (no loop closed, no link made)
    /// because plain Rust state there is out of view: code
    /// `#[augur::staged]` does not cover (see `Builder::trust_unannotated`).
    pub unshared: u64,
    /// Operations recorded in the final trace graph.
    pub nodes: u64,
    /// Statements in the generated function.
    pub statements: u64,
    /// Tags taken by the frame-pointer walk.
    pub tags_frame_pointer: u64,
    /// Tags taken by the unwinder.
    pub tags_unwinder: u64,
    /// The tagger the builder asked for.
    pub tagger: Tagger,
    /// `goto`s the structurer had to emit (0 for code from structured Rust).
    pub gotos: u64,
    /// Time running the closure (all runs, all attempts).
    pub time_trace: Duration,
    /// Time structuring the graph into statements.
    pub time_structure: Duration,
    /// Time in the IR passes.
    pub time_passes: Duration,
}

impl Stats {
    /// Executions of the closure in attempts that were started over
    /// (`total_runs` less the final attempt's runs and check runs).
    pub fn discarded_runs(&self) -> u64 {
        self.total_runs - self.runs - self.check_runs
    }

    /// Which tagger actually produced the tags: `"frame-pointer"`,
    /// `"unwinder"`, or `"mixed"` when some frames lacked frame pointers.
    pub fn tagger_used(&self) -> &'static str {
        match (self.tags_frame_pointer, self.tags_unwinder) {
            (_, 0) => "frame-pointer",
            (0, _) => "unwinder",
            _ => "mixed",
        }
    }

    /// Total first-stage time.
    pub fn total_time(&self) -> Duration {
        self.time_trace + self.time_structure + self.time_passes
    }
}

impl fmt::Display for Stats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "runs {} (check runs {}: loops {}, links {}; total {}, attempts {}, loop restarts {}, \
             prophecy restarts {}), operations {}, memo hits {}, \
             loops {}, audits {}, points {} (jumps {}, chained runs {}), nodes {}, statements {}, tags {} ({}), \
             time trace {:?} structure {:?} passes {:?}",
            self.runs,
            self.check_runs,
            self.loop_check_runs,
            self.link_check_runs,
            self.total_runs,
            self.attempts,
            self.loop_restarts,
            self.prophecy_restarts,
            self.operations,
            self.memo_hits,
            self.back_edges,
            self.loop_audits,
            self.points,
            self.point_jumps,
            self.chained_runs,
            self.nodes,
            self.statements,
            self.tags_frame_pointer + self.tags_unwinder,
            self.tagger_used(),
            self.time_trace,
            self.time_structure,
            self.time_passes
        )
    }
}
