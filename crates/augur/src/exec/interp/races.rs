//! The data-race check of `omp parallel for` loops and GPU launches.
//!
//! The interpreter runs such a loop's iterations one after another, as a
//! single thread would, so a result that depends on how threads interleave
//! would pass unnoticed. Instead, while the loop runs, every byte of memory
//! an iteration touches is logged with the iteration that touched it, and a
//! byte that one iteration writes and another reads or writes is an error:
//! under OpenMP those two iterations may run at once on different threads.
//!
//! Memory that an iteration made itself (a `malloc`, or a local declared in
//! the loop body, which each thread has on its own stack) is private to it
//! and not logged. Variables held outside memory are the evaluator's part:
//! an assignment to one declared outside the loop is a race on the shared
//! variable ([`Races::epoch`] tells the evaluator which are inside).

use crate::{Error, Result};
use std::collections::{HashMap, HashSet};

/// No iteration (in [`Touch`]).
const NONE: u32 = u32::MAX;

/// The iterations that touched one byte: the last writer and up to two
/// distinct readers (two are enough to name one that is not the current
/// iteration); [`NONE`] where there is none.
#[derive(Clone, Copy)]
struct Touch {
    writer: u32,
    readers: [u32; 2],
}

const UNTOUCHED: Touch = Touch {
    writer: NONE,
    readers: [NONE; 2],
};

/// What runs at once: the iterations of an `omp parallel for` loop, or a
/// GPU launch's threads.
#[derive(Clone, Copy, PartialEq)]
pub(super) enum Kind {
    OpenMp,
    /// A loop of `augur::parallel_for`.
    Parallel,
    Gpu,
}

impl Kind {
    /// The region, in messages.
    pub(super) fn region(self) -> &'static str {
        match self {
            Kind::OpenMp => "an `omp parallel for` loop",
            Kind::Parallel => "a parallel loop",
            Kind::Gpu => "a GPU kernel",
        }
    }

    /// One of what runs at once, in messages.
    pub(super) fn unit(self) -> &'static str {
        match self {
            Kind::OpenMp | Kind::Parallel => "iteration",
            Kind::Gpu => "thread",
        }
    }
}

/// The log of one running `omp parallel for` loop or GPU launch.
pub(super) struct Races {
    kind: Kind,
    /// The current iteration, numbered from 0.
    iteration: u32,
    /// Each iteration's name in messages (its loop variable's value).
    names: Vec<String>,
    /// Numbers every iteration of every checked loop apart (never 0), so
    /// that a declaration stamped with it is known to be this iteration's.
    epoch: u32,
    /// Allocations the current iteration made or revived.
    private: HashSet<usize>,
    /// Per allocation touched, its bytes (dense: most accesses hit
    /// buffers that the loop walks through).
    bytes: HashMap<usize, Vec<Touch>>,
    /// Per iteration: the loop iteration (a GPU block) it belongs to, and
    /// which of that iteration's inner thread loops (its phases, between
    /// block barriers; 0 for the block's own code) it is in.
    groups: Vec<(u32, u32)>,
    /// The running outer iteration, its epoch, and the inner thread loops
    /// it has started so far.
    outer: u32,
    outer_epoch: u32,
    phases: u32,
    /// The latest epoch handed out (the running one may be an earlier
    /// one: an outer iteration's, again after its inner loop).
    last: u32,
}

impl Races {
    /// A log for a loop whose iterations get epochs after `last_epoch`.
    pub(super) fn new(last_epoch: u32, kind: Kind) -> Races {
        Races {
            kind,
            iteration: 0,
            names: Vec::new(),
            epoch: last_epoch,
            private: HashSet::new(),
            bytes: HashMap::new(),
            groups: Vec::new(),
            outer: 0,
            outer_epoch: last_epoch,
            phases: 0,
            last: last_epoch,
        }
    }

    /// Starts the next iteration, called `name` in messages.
    pub(super) fn next_iteration(&mut self, name: String) {
        self.outer = self.names.len() as u32;
        self.phases = 0;
        self.start(name, 0);
        self.outer_epoch = self.epoch;
    }

    fn start(&mut self, name: String, phase: u32) {
        self.iteration = self.names.len() as u32;
        self.names.push(name);
        self.groups.push((self.outer, phase));
        self.last = self.last.checked_add(1).unwrap_or(1);
        self.epoch = self.last;
        self.private.clear();
    }

    /// The running inner loop of threads ended: the outer iteration's own
    /// code (the block's) runs on.
    pub(super) fn end_inner(&mut self) {
        self.iteration = self.outer;
        self.epoch = self.outer_epoch;
        self.private.clear();
    }

    /// The latest epoch this log handed out.
    pub(super) fn last_epoch(&self) -> u32 {
        self.last
    }

    /// An inner loop of threads starts in the running iteration (a phase
    /// of one block, between block barriers): returns the iteration's name.
    pub(super) fn start_inner(&mut self) -> String {
        self.phases += 1;
        self.names[self.outer as usize].clone()
    }

    /// Starts the next thread of the running inner loop, called `name`.
    pub(super) fn next_inner_iteration(&mut self, name: String) {
        self.start(name, self.phases);
    }

    /// What runs at once.
    pub(super) fn kind(&self) -> Kind {
        self.kind
    }

    /// Iterations started so far.
    pub(super) fn iterations(&self) -> usize {
        self.names.len()
    }

    /// The current iteration's name.
    pub(super) fn current_name(&self) -> &str {
        &self.names[self.iteration as usize]
    }

    /// The current iteration's epoch.
    pub(super) fn epoch(&self) -> u32 {
        self.epoch
    }

    /// Allocation `id` was made or revived by the current iteration.
    pub(super) fn made(&mut self, id: usize) {
        self.private.insert(id);
    }

    /// Logs a read (`write` false) or write of `n` bytes at `off` of
    /// allocation `id` (`what` describes it); fails on a race.
    /// `size` is the allocation's size.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn touch(
        &mut self,
        id: usize,
        size: usize,
        off: usize,
        n: usize,
        write: bool,
        what: impl Fn() -> String,
    ) -> Result<()> {
        if self.private.contains(&id) {
            return Ok(());
        }
        let me = self.iteration;
        let bytes = self
            .bytes
            .entry(id)
            .or_insert_with(|| vec![UNTOUCHED; size]);
        // Iteration `other` ran before this one with a block barrier
        // between: same block, another phase.
        let groups = &self.groups;
        let ordered = |other: u32| {
            let (mine, theirs) = (groups[me as usize], groups[other as usize]);
            mine.0 == theirs.0 && mine.1 != theirs.1
        };
        let concurrent = |other: u32| other != me && other != NONE && !ordered(other);
        for (b, t) in bytes[off..off + n].iter_mut().enumerate() {
            let other_writer = Some(t.writer).filter(|&w| concurrent(w));
            let other_reader = t.readers.into_iter().find(|&r| concurrent(r));
            let clash = match (write, other_writer, other_reader) {
                (_, Some(w), _) => Some((w, "writes")),
                (true, None, Some(r)) => Some((r, "reads")),
                _ => None,
            };
            if let Some((other, does)) = clash {
                return Err(self.race(off + b, write, other, does, &what()));
            }
            if write {
                t.writer = me;
            } else if let Some(free) = t.readers.iter_mut().find(|r| !concurrent(**r)) {
                // A slot that is free, mine, or a reader ordered before me.
                *free = me;
            }
        }
        Ok(())
    }

    #[cold]
    fn race(&self, byte: usize, write: bool, other: u32, does: &str, what: &str) -> Error {
        let me = &self.names[self.iteration as usize];
        let other = self.names.get(other as usize).map_or("another", |s| s);
        let verb = if write { "writes" } else { "reads" };
        let (region, unit) = (self.kind.region(), self.kind.unit());
        Error::Interp {
            message: format!(
                "data race in {region}: {unit} {me} {verb} byte {byte} of {what}, which \
                 {unit} {other} {does}; the two may run at once"
            ),
        }
    }
}
