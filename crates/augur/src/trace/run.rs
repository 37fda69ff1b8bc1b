//! The state of one run: its decisions, where it attaches, what it has
//! seen (for loop detection), its `Static` values and salt.

use super::decisions::{DecisionTree, PathId, Start};
use super::frames::Frames;
use super::graph::{Cursor, NodeId};
use super::jobs::{Check, Job, Visits};
use super::tag::{FastMap, FastSet, Tag};
use crate::ir::SrcLoc;

/// The latest occurrence of a key in the current run.
#[derive(Clone, Copy)]
pub(super) struct Seen {
    pub(super) path_idx: usize,
    pub(super) decisions: u32,
    pub(super) count: u32,
}

/// A loop candidate being checked.
pub(super) struct Verify {
    pub(super) cycle: Vec<(NodeId, Option<bool>)>,
    pub(super) pos: usize,
    pub(super) rounds: u32,
    pub(super) attach: Cursor,
    pub(super) head: NodeId,
    pub(super) last_decision: Option<bool>,
}

/// A memoization link being checked: the run goes on along the linked
/// code, which must repeat what the first stage does now.
pub(super) struct LinkCheck {
    /// The node the run would link to.
    pub(super) target: NodeId,
    /// The node the next operation must match (`None`: unexplored, accept).
    pub(super) expected: Option<NodeId>,
    pub(super) attach: Cursor,
    pub(super) steps: u32,
    /// The run's decisions at the link point (to run it again on failure).
    pub(super) decisions: PathId,
    pub(super) last_decision: Option<bool>,
}

/// A check run's state: what it checks and how far it has compared.
pub(super) struct CheckRun {
    /// What a mismatch would disprove.
    pub(super) check: Check,
    /// Operations compared past the run's decisions.
    pub(super) ops: u64,
    /// The member labels the run jumped to past its decisions since it
    /// last entered or left a resumable machine (see
    /// `Engine::check_goes_around`).
    pub(super) labels: FastSet<NodeId>,
}

/// What the run in progress does with each operation. Each mode's state
/// lives in its own type, so no mode reads another's fields.
pub(super) enum Mode {
    /// Replays the job's decisions, comparing each operation with the
    /// recorded node; past them, the run records.
    CatchUp,
    /// Tags each operation and records it as a node (or links, or closes a
    /// loop).
    Record,
    /// A check run: replays its decisions, then compares with recorded code
    /// to the end of the closure; it never records.
    Check(Box<CheckRun>),
    /// Follows a loop candidate's cycle again before closing it.
    Verify(Box<Verify>),
    /// Follows linked code before the link is made.
    CheckLink(Box<LinkCheck>),
}

/// State of the run in progress.
pub(super) struct Run {
    /// The job's decisions, and the path after each.
    pub(super) prefix: Vec<bool>,
    pub(super) prefix_ids: Vec<PathId>,
    pub(super) pos: usize,
    /// Where the replay jumps into resumable machines (see
    /// `decisions.rs`), and how many of them it has made.
    pub(super) starts: Vec<Start>,
    pub(super) started: usize,
    /// The resumable machines the run is in, innermost last: each one's
    /// instance and the member running now (see `points.rs`).
    pub(super) points: Vec<(NodeId, u32)>,
    /// The path of the decisions taken so far (stale in a check run past
    /// its prefix, which schedules nothing).
    pub(super) at: PathId,
    /// Decisions taken so far.
    pub(super) count: u32,
    pub(super) mode: Mode,
    pub(super) cursor: Cursor,
    pub(super) seen: FastMap<Tag, Seen>,
    /// Entries of `path` indexed in `seen` (see `Engine::sync_seen`), and
    /// the decisions among them.
    pub(super) seen_upto: usize,
    pub(super) seen_decisions: u32,
    pub(super) never_counts: FastMap<Tag, u32>,
    pub(super) salt: u64,
    /// The launch or parallel-loop nodes the run entered the bodies it is
    /// in by, innermost last (see `Engine::op_key`).
    pub(super) regions: Vec<NodeId>,
    pub(super) path: Vec<(NodeId, Option<bool>)>,
    pub(super) site_visits: FastMap<SrcLoc, u64>,
    pub(super) pending_annotations: Vec<crate::ir::Annotation>,
    /// Per slot: the value's hash while it lives, and where it was made
    /// (a `Static::new`, a tracked `let`), for errors that name the state
    /// that changes.
    pub(super) statics: Vec<(Option<u64>, Option<&'static std::panic::Location<'static>>)>,
    /// The statics when a decision site reached its last allowed visit in
    /// this run (see `Engine::count_site`).
    pub(super) statics_at_limit: Option<(SrcLoc, Vec<Option<u64>>)>,
    /// The hash of the live statics, kept up to date as they change (see
    /// [`static_term`]).
    pub(super) statics_hash: u64,
    /// Operations performed so far in this run.
    pub(super) ops: u64,
    /// See [`Job::no_link_until`].
    pub(super) no_link_until: u64,
    /// Oracle decisions reached in any mode (verify and link checks too).
    pub(super) oracle_calls: u64,
    /// Per prophecy creation point: `oracle_calls` at its latest creation
    /// and how many creations in a row had no decision in between.
    pub(super) cell_streaks: FastMap<Tag, (u64, u32)>,
    /// Visits of each branch node along the code a check run or a link
    /// check follows past its decisions (see `audit::follow`). A run holds
    /// at most one such comparison: a link check ends the run.
    pub(super) visits: Visits,
    /// The `#[augur::staged]` bodies running now (see `frames.rs`).
    pub(super) frames: Frames,
    /// The job's decision path (see `chain.rs`).
    pub(super) job: PathId,
    /// Every operation so far was replayed or recorded (no loop candidate
    /// followed, no link checked): what the run holds is what a replay of
    /// its decisions would (see `chain.rs`).
    pub(super) pure: bool,
}

impl Run {
    pub(super) fn new(job: Job, tree: &DecisionTree) -> Run {
        let mut run = Run {
            prefix: Vec::new(),
            prefix_ids: Vec::new(),
            pos: 0,
            starts: Vec::new(),
            started: 0,
            points: Vec::new(),
            at: PathId::ROOT,
            count: 0,
            mode: Mode::CatchUp,
            cursor: Cursor::Root,
            seen: FastMap::default(),
            seen_upto: 0,
            seen_decisions: 0,
            never_counts: FastMap::default(),
            salt: 0,
            regions: Vec::new(),
            path: Vec::new(),
            site_visits: FastMap::default(),
            pending_annotations: Vec::new(),
            statics: Vec::new(),
            statics_at_limit: None,
            statics_hash: 0,
            ops: 0,
            no_link_until: 0,
            oracle_calls: 0,
            cell_streaks: FastMap::default(),
            visits: Visits::default(),
            frames: Frames::default(),
            job: PathId::ROOT,
            pure: true,
        };
        run.reset(job, tree);
        run
    }

    /// Starts `job` in this run's place, keeping the allocations of its
    /// tables (a run per job makes them the engine's most frequent
    /// allocations otherwise).
    pub(super) fn reset(&mut self, job: Job, tree: &DecisionTree) {
        let (ds, ids, starts) = (&mut self.prefix, &mut self.prefix_ids, &mut self.starts);
        tree.unfold_into(job.decisions, ds, ids, starts);
        self.pos = 0;
        self.started = 0;
        self.points.clear();
        self.at = PathId::ROOT;
        self.count = 0;
        self.mode = match job.check {
            Some(check) => Mode::Check(Box::new(CheckRun {
                check,
                ops: 0,
                labels: FastSet::default(),
            })),
            None => Mode::CatchUp,
        };
        self.cursor = Cursor::Root;
        self.seen.clear();
        self.seen_upto = 0;
        self.seen_decisions = 0;
        self.never_counts.clear();
        self.salt = 0;
        self.regions.clear();
        self.path.clear();
        self.site_visits.clear();
        self.pending_annotations.clear();
        self.statics.clear();
        self.statics_at_limit = None;
        self.statics_hash = 0;
        self.ops = 0;
        self.no_link_until = job.no_link_until;
        self.oracle_calls = 0;
        self.cell_streaks.clear();
        self.visits.clear();
        self.frames.reset();
        self.job = job.decisions;
        self.pure = true;
    }

    /// The next of the job's decisions, replayed (`None`: past them).
    pub(super) fn replay_decision(&mut self) -> Option<bool> {
        let d = *self.prefix.get(self.pos)?;
        self.at = self.prefix_ids[self.pos];
        self.pos += 1;
        Some(d)
    }

    pub(super) fn decision_count(&self) -> u32 {
        self.count
    }
}

/// The part of the statics' hash that the static in slot `slot` holding
/// a value hashing to `value` adds: the hash is the XOR of the live
/// slots' terms, so registering, changing and dropping a static each
/// update it in a few instructions, however many are live (tags are
/// taken at every operation a run records, and the attribute registers
/// and drops statics as often).
#[inline]
pub(super) fn static_term(slot: usize, value: u64) -> u64 {
    use super::tag::mix;
    mix(mix(slot as u64, 0x5eed_57a7_1c5a_u64), value)
}
