//! The state of one run: its decisions, where it attaches, what it has
//! seen (for loop detection), its `Static` values and salt.

use super::decisions::{DecisionTree, PathId};
use super::graph::NodeId;
use super::tag::{FastMap, Tag};
use crate::ir::SrcLoc;

/// A scheduled run: the decisions that lead to its unexplored side.
#[derive(Clone, Debug)]
pub(super) struct Job {
    pub(super) decisions: PathId,
    /// Memoization stays off until the run has performed this many
    /// operations (set when a link audit failed there).
    pub(super) no_link_until: u64,
    /// For a check run: what a mismatch would disprove.
    pub(super) check: Option<Check>,
}

impl Job {
    /// A job exploring the unexplored side its decisions lead to.
    pub(super) fn explore(decisions: PathId) -> Job {
        Job {
            decisions,
            no_link_until: 0,
            check: None,
        }
    }
}

/// A check run replays a path that the shared code it follows was never
/// recorded on, comparing every operation with the recorded code to the
/// end of the closure. Past its decisions it takes, at each recorded
/// branch, the side the path that made the shared code did *not* take
/// (see `Engine::check_choice`), so one check run covers the other sides.
#[derive(Clone, Debug)]
pub(super) enum Check {
    /// A loop was closed at the head with this base tag; the cycle took
    /// these decisions (the first is the loop's own).
    Loop(Tag, std::rc::Rc<[(NodeId, bool)]>),
    /// A run linked to recorded code under this memo key, attaching it
    /// where this cursor stood.
    Link(Tag, u32, Cursor),
    /// Several loops' checks in one run from the top (see `batch.rs`).
    Batch(std::rc::Rc<super::batch::Batch>),
    /// Several links' checks in one run from the top (see `link_batch.rs`).
    LinkBatch(std::rc::Rc<super::link_batch::LinkBatch>),
}

/// Where the next node attaches.
#[derive(Clone, Copy, Debug)]
pub(super) enum Cursor {
    Root,
    After(NodeId),
    Side(NodeId, bool),
}

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
    /// The launch node the run entered the kernel body it is in by (see
    /// `Engine::op_key`).
    pub(super) launch: Option<NodeId>,
    pub(super) path: Vec<(NodeId, Option<bool>)>,
    pub(super) site_visits: FastMap<SrcLoc, u64>,
    pub(super) pending_annotations: Vec<crate::ir::Annotation>,
    pub(super) statics: Vec<Option<u64>>,
    pub(super) statics_hash: Option<u64>,
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
}

impl Run {
    pub(super) fn new(job: Job, tree: &DecisionTree) -> Run {
        let mut run = Run {
            prefix: Vec::new(),
            prefix_ids: Vec::new(),
            pos: 0,
            at: PathId::ROOT,
            count: 0,
            mode: Mode::CatchUp,
            cursor: Cursor::Root,
            seen: FastMap::default(),
            seen_upto: 0,
            seen_decisions: 0,
            never_counts: FastMap::default(),
            salt: 0,
            launch: None,
            path: Vec::new(),
            site_visits: FastMap::default(),
            pending_annotations: Vec::new(),
            statics: Vec::new(),
            statics_hash: Some(0),
            ops: 0,
            no_link_until: 0,
            oracle_calls: 0,
            cell_streaks: FastMap::default(),
            visits: Visits::default(),
        };
        run.reset(job, tree);
        run
    }

    /// Starts `job` in this run's place, keeping the allocations of its
    /// tables (a run per job makes them the engine's most frequent
    /// allocations otherwise).
    pub(super) fn reset(&mut self, job: Job, tree: &DecisionTree) {
        tree.unfold_into(job.decisions, &mut self.prefix, &mut self.prefix_ids);
        self.pos = 0;
        self.at = PathId::ROOT;
        self.count = 0;
        self.mode = match job.check {
            Some(check) => Mode::Check(Box::new(CheckRun { check, ops: 0 })),
            None => Mode::CatchUp,
        };
        self.cursor = Cursor::Root;
        self.seen.clear();
        self.seen_upto = 0;
        self.seen_decisions = 0;
        self.never_counts.clear();
        self.salt = 0;
        self.launch = None;
        self.path.clear();
        self.site_visits.clear();
        self.pending_annotations.clear();
        self.statics.clear();
        self.statics_hash = Some(0);
        self.ops = 0;
        self.no_link_until = job.no_link_until;
        self.oracle_calls = 0;
        self.cell_streaks.clear();
        self.visits.clear();
    }

    pub(super) fn decision_count(&self) -> u32 {
        self.count
    }
}

/// Visit counts per node, cleared in constant time: each count is stamped
/// with the epoch it was made in, and clearing starts a new epoch. A check
/// run counts a visit at every branch it passes, so a hash map here (grown
/// anew each run) cost more than the comparison it serves.
#[derive(Default)]
pub(super) struct Visits {
    epoch: u32,
    counts: Vec<(u32, u32)>,
}

impl Visits {
    /// Forgets every count.
    pub(super) fn clear(&mut self) {
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            // After 2^32 clears an old stamp could look current.
            self.counts.clear();
            self.epoch = 1;
        }
    }

    /// Counts a visit of `n`; returns its visits so far, this one included.
    pub(super) fn bump(&mut self, n: NodeId) -> u32 {
        let i = n.0 as usize;
        if i >= self.counts.len() {
            self.counts.resize(i + 1, (0, 0));
        }
        let slot = &mut self.counts[i];
        if slot.0 != self.epoch {
            *slot = (self.epoch, 0);
        }
        slot.1 += 1;
        slot.1
    }

    /// The visits of `n` counted since the last clear.
    pub(super) fn get(&self, n: NodeId) -> u32 {
        match self.counts.get(n.0 as usize) {
            Some(&(epoch, count)) if epoch == self.epoch => count,
            _ => 0,
        }
    }
}
