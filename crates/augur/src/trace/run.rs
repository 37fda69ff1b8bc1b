//! The state of one run: its decisions, where it attaches, what it has
//! seen (for loop detection), its `Static` values and salt.

use super::graph::NodeId;
use super::tag::{FastMap, Tag};
use crate::ir::SrcLoc;

/// A scheduled run: the decisions that lead to its unexplored side.
pub(super) struct Job {
    pub(super) decisions: Vec<bool>,
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

pub(super) enum Mode {
    CatchUp,
    Record,
    Verify(Box<Verify>),
}

/// State of the run in progress.
pub(super) struct Run {
    pub(super) prefix: Vec<bool>,
    pub(super) pos: usize,
    pub(super) decisions: Vec<bool>,
    pub(super) mode: Mode,
    pub(super) cursor: Cursor,
    pub(super) seen: FastMap<Tag, Seen>,
    pub(super) never_counts: FastMap<Tag, u32>,
    pub(super) salt: u64,
    pub(super) path: Vec<(NodeId, Option<bool>)>,
    pub(super) site_visits: FastMap<SrcLoc, u64>,
    pub(super) pending_annotations: Vec<String>,
    pub(super) statics: Vec<Option<u64>>,
    pub(super) statics_hash: Option<u64>,
}

impl Run {
    pub(super) fn new(prefix: Vec<bool>) -> Run {
        Run {
            prefix,
            pos: 0,
            decisions: Vec::new(),
            mode: Mode::CatchUp,
            cursor: Cursor::Root,
            seen: FastMap::default(),
            never_counts: FastMap::default(),
            salt: 0,
            path: Vec::new(),
            site_visits: FastMap::default(),
            pending_annotations: Vec::new(),
            statics: Vec::new(),
            statics_hash: Some(0),
        }
    }

    pub(super) fn decision_count(&self) -> u32 {
        self.decisions.len() as u32
    }
}
