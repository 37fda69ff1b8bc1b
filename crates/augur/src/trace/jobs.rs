//! What the scheduler keeps, as data: scheduled runs ([`Job`]) and what a
//! check run checks ([`Check`]), the batches of loop and link checks, the
//! visit counts a check run takes its sides by, adaptive mode's count of
//! an attempt's violations, all of an attempt's runs ([`Schedule`]), and
//! what audits learned across attempts ([`Learned`]). A leaf: the behaviour that reads and writes
//! these lives in `schedule.rs`, `audit.rs` and `batch.rs`, on the engine.

use super::decisions::{DecisionTree, PathId};
use super::graph::{Cursor, Node, NodeId, Succ};
use super::tag::{FastMap, FastSet, Tag};
use crate::ir::{Arena, SrcLoc};
use std::rc::Rc;

/// A scheduled run: the decisions that lead to its unexplored side.
#[derive(Clone, Debug)]
pub(super) struct Job {
    pub(super) decisions: PathId,
    /// Memoization stays off for the run's operations before this one (set
    /// when a link audit failed at it: the link that failed starts earlier,
    /// and the operation that differed may link to other code, such as
    /// where two paths that tags could not tell apart join again).
    pub(super) no_link_until: u64,
    /// For a check run: what a mismatch would disprove.
    pub(super) check: Option<Check>,
    /// For an exploration: the operations the run that scheduled it had
    /// performed at its decision, which this one replays first; and the
    /// decision's line (see `Schedule::pending_replay`).
    pub(super) replay: u64,
    pub(super) site: Option<SrcLoc>,
}

impl Job {
    /// A job exploring the unexplored side its decisions lead to.
    pub(super) fn explore(decisions: PathId) -> Job {
        Job {
            decisions,
            no_link_until: 0,
            check: None,
            replay: 0,
            site: None,
        }
    }
}

/// A check run replays a path that the shared code it follows was never
/// recorded on, comparing every operation with the recorded code to the
/// end of the closure (a link's, until it goes around a machine: see
/// `Engine::check_goes_around`). Past its decisions it takes, at each recorded
/// branch, the side the path that made the shared code did *not* take
/// (see [`check_choice`]), so one check run covers the other sides.
#[derive(Clone, Debug)]
pub(super) enum Check {
    /// A loop was closed at the head with this base tag; the cycle took
    /// these decisions (the first is the loop's own).
    Loop(Tag, Rc<[(NodeId, bool)]>),
    /// A run linked to recorded code under this memo key, attaching it
    /// where this cursor stood.
    Link(Tag, u32, Cursor),
    /// Several loops' or links' checks in one run from the top (see
    /// `batch.rs`).
    Batch(Rc<Batch>),
}

impl Check {
    /// True where the side the check takes at a branch past its decisions
    /// depends on the branch alone (a link's, or a batch of links'), not
    /// on how often the run has been there (a loop's).
    pub(super) fn sides_by_branch(&self) -> bool {
        match self {
            Check::Loop(..) => false,
            Check::Link(..) => true,
            Check::Batch(b) => !b.is_loops(),
        }
    }
}

/// Check runs of one kind done as one run from the top of the closure
/// (see `batch.rs`).
#[derive(Debug)]
pub(super) struct Batch {
    /// Each member's own check, to run if the batch does not cover it.
    pub(super) members: Vec<Job>,
    pub(super) kind: BatchKind,
}

/// What a batched run needs to know of its members.
#[derive(Debug)]
pub(super) enum BatchKind {
    /// Closed loops: the head decision of each (its member and the side
    /// that stays), and the other decisions of their turns with the side
    /// taken.
    Loops {
        heads: FastMap<NodeId, (usize, bool)>,
        turns: FastMap<NodeId, bool>,
    },
    /// Memo links: the edge each attached to shared code, to its member.
    Links { edges: FastMap<(NodeId, u8), usize> },
}

impl Batch {
    /// An empty batch of loop checks (`loops`) or link checks.
    pub(super) fn new(loops: bool) -> Batch {
        let kind = if loops {
            BatchKind::Loops {
                heads: FastMap::default(),
                turns: FastMap::default(),
            }
        } else {
            BatchKind::Links {
                edges: FastMap::default(),
            }
        };
        Batch {
            members: Vec::new(),
            kind,
        }
    }

    /// Takes `job` as the next member if it is a check of this batch's
    /// kind that no member covers already (a loop closed at the same head,
    /// a link attached at the same edge); false otherwise.
    pub(super) fn admit(&mut self, job: &Job) -> bool {
        let i = self.members.len();
        match (&mut self.kind, &job.check) {
            (BatchKind::Loops { heads, turns }, Some(Check::Loop(_, taken))) => {
                let (head, stay) = taken[0];
                if heads.contains_key(&head) {
                    return false;
                }
                heads.insert(head, (i, stay));
                for &(n, side) in &taken[1..] {
                    turns.entry(n).or_insert(side);
                }
                true
            }
            (BatchKind::Links { edges }, Some(Check::Link(_, _, attach))) => match edge(*attach) {
                Some(e) if !edges.contains_key(&e) => {
                    edges.insert(e, i);
                    true
                }
                _ => false,
            },
            _ => false,
        }
    }

    /// The side a batched run wants at branch `n` on its `visits`-th visit
    /// (`recorded_first`, `recorded_second`: which sides were recorded).
    pub(super) fn choice(
        &self,
        n: NodeId,
        visits: u32,
        recorded_first: bool,
        recorded_second: bool,
    ) -> bool {
        match &self.kind {
            BatchKind::Loops { heads, turns } => {
                if let Some(&(_, stay)) = heads.get(&n) {
                    return stay == (visits <= LOOP_CHECK_TURNS);
                }
                if let Some(&side) = turns.get(&n) {
                    return if visits == 1 { side } else { !side };
                }
                (visits == 1) == recorded_first
            }
            // The linking runs took first sides: take the others.
            BatchKind::Links { .. } => !recorded_second,
        }
    }

    /// True for a batch of loop checks.
    pub(super) fn is_loops(&self) -> bool {
        matches!(self.kind, BatchKind::Loops { .. })
    }
}

/// A difference a batched loop run saw: where, and the batch's loops.
#[derive(Debug, Clone)]
pub(super) struct Mismatch {
    pub(super) at: SrcLoc,
    pub(super) loops: Vec<SrcLoc>,
}

/// This attempt's batching (see `batch.rs`).
#[derive(Default)]
pub(super) struct Batching {
    /// The loop checks were batched once this attempt.
    pub(super) loops_tried: bool,
    /// The link checks were.
    pub(super) links_tried: bool,
    /// A batched run is in progress (its batch is in its `Check::Batch`).
    pub(super) active: bool,
    /// Members of a link batch passed so far, in the order passed.
    pub(super) passed: Vec<usize>,
    /// A difference a batched loop run saw, until a loop's own check
    /// explains it.
    pub(super) loop_mismatch: Option<Mismatch>,
    /// After a batched link run saw a difference: where, and the memo keys
    /// of the links it passed before it, until a link's own check explains
    /// it.
    pub(super) link_suspects: Option<(SrcLoc, Vec<(Tag, u32)>)>,
}

/// The key of the edge a run moves along from `cursor` to the next node.
pub(super) fn edge(cursor: Cursor) -> Option<(NodeId, u8)> {
    match cursor {
        Cursor::Root => None,
        Cursor::Side(n, d) => Some((n, u8::from(d))),
        Cursor::After(n) => Some((n, 2)),
    }
}

/// Adaptive mode's view of the current attempt's violations.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Adaptive {
    /// Deferred joins seen so far.
    pub(super) seen: u64,
    /// Runs of the attempt when the latest new one was seen.
    pub(super) last_new: u64,
    /// Runs the attempt took before the run that found the first one.
    pub(super) patience: u64,
}

/// Turns a loop's check run makes before it leaves the loop: the first
/// (replayed) and two with the other sides. The recorded exit is the one
/// after no turn; leaving after an odd number of turns also shows plain
/// state that a turn flips (a parity flag) as well as state that grows.
pub(super) const LOOP_CHECK_TURNS: u32 = 3;

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

/// The side a check run takes at branch `n` past its decisions (`None`:
/// that side was never recorded, so there is nothing to compare).
pub(super) fn check_choice(
    check: &Check,
    visits: &mut Visits,
    nodes: &Arena<NodeId, Node>,
    n: NodeId,
) -> Option<bool> {
    let visits = visits.bump(n);
    let first_visit = visits == 1;
    let (t, e) = match nodes[n].succ {
        Succ::Branch(t, e) => (t, e),
        _ => return None,
    };
    let want = match check {
        Check::Loop(_, taken) => match taken.iter().position(|&(m, _)| m == n) {
            // The loop's own decision: stay until the run has made
            // `LOOP_CHECK_TURNS` turns in all, then leave.
            Some(0) => taken[0].1 == (visits < LOOP_CHECK_TURNS),
            // The turn's other decisions: the side the turn did not take.
            Some(i) => !taken[i].1,
            // Outside the turn: the first recorded side, then the other.
            None => first_visit == t.is_some(),
        },
        Check::Batch(b) => b.choice(n, visits, t.is_some(), e.is_some()),
        // The linking run took first sides: take the others.
        Check::Link(..) => e.is_none(),
    };
    let side = if want { t } else { e };
    side.map(|_| want)
}

/// The runs left to an attempt, and the attempts so far.
#[derive(Default)]
pub(super) struct Schedule {
    /// Exploration jobs, run first (last pushed, first run).
    pub(super) worklist: Vec<Job>,
    /// The operations the worklist's jobs replay before their decisions,
    /// together: work the attempt will do at least (see
    /// `Engine::projected_work`).
    pub(super) pending_replay: u64,
    /// The decision paths of the attempt's jobs.
    pub(super) tree: DecisionTree,
    /// Check runs, run when exploration is done.
    pub(super) checks: Vec<Job>,
    /// This attempt's batched check runs (see `batch.rs`).
    pub(super) batching: Batching,
    /// Adaptive mode's count of the attempt's violations.
    pub(super) adaptive: Adaptive,
    /// Attempts begun.
    pub(super) attempts: u32,
}

impl Schedule {
    /// Forgets the attempt's runs (not the count of attempts) and
    /// schedules exploration from the root.
    pub(super) fn reset(&mut self) {
        *self = Schedule {
            attempts: self.attempts,
            ..Schedule::default()
        };
        self.worklist.push(Job::explore(PathId::ROOT));
    }
}

/// What loop and link audits found out: kept across attempts, so that an
/// attempt started over does not try again what failed.
#[derive(Default)]
pub(super) struct Learned {
    /// Tags of plain Rust loops: never closed into a loop.
    pub(super) never_close: FastSet<Tag>,
    /// Where the plain Rust loops behind `never_close` are, in the order
    /// they were found (for errors).
    pub(super) plain_loops: Vec<SrcLoc>,
    /// Memo keys a check run proved unsafe to link to.
    pub(super) no_link: FastSet<(Tag, u32)>,
    /// Loops whose audit failed because a turn read a `Dyn` value the turn
    /// before computed, in the order found: the loop's decision, where the
    /// value is read, where it was computed. See `Error::CarriedValue`.
    pub(super) carried: Vec<(SrcLoc, SrcLoc, SrcLoc)>,
    /// The first point where code was not shared because the plain Rust
    /// state there is out of view (see `frames.rs`), and why.
    pub(super) hidden: Option<(SrcLoc, super::frames::Hidden)>,
    /// A decision watched once the work limit comes in sight (see
    /// `Engine::projected_work`).
    pub(super) watch: Option<Watch>,
}

/// The first-stage state seen at each visit of one decision site, across
/// runs, for a work-limit error to name the state that differs (an
/// interpreter's program counter).
pub(super) struct Watch {
    pub(super) site: SrcLoc,
    /// The slots' hashes at the last visit.
    pub(super) last: Option<Vec<Option<u64>>>,
    /// Where the state that differed between visits was made, in order found.
    pub(super) changing: Vec<SrcLoc>,
    /// Runs started since the certain bound passed the limit.
    pub(super) runs_past: u32,
}
