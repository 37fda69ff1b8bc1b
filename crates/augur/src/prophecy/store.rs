//! The values of an extraction's prophecies and histories: they outlive
//! runs and attempts, and decide when an attempt must start over.
//!
//! Every cell is read and joined through here. The rule that keeps the
//! generated code right: within one attempt, every read of a cell returns
//! the same value. A join that would change a value somebody already read
//! therefore starts the attempt over (at once in [`ProphecyMode::Paper`],
//! at the end of the sweep in [`ProphecyMode::Collect`]); a join of a value
//! nobody read yet in this attempt takes effect at once, with no restart.

use super::explain::{CellKind, CellReport, Explanation, JoinEvent};
use super::{Lattice, ProphecyMode};
use crate::error::Error;
use crate::ir::{Arena, SrcLoc};
use crate::trace::tag::{FastMap, Tag};
use std::any::Any;
use std::fmt::Debug;

crate::ir::entity!(
    /// Handle of a cell in the [`Store`].
    CellId,
    "c"
);

/// A lattice value with its type erased (the store applies deferred joins
/// without knowing the type).
trait AnyLattice: Any + Debug {
    fn clone_dyn(&self) -> Box<dyn AnyLattice>;
    fn as_any(&self) -> &dyn Any;
    fn as_any_mut(&mut self) -> &mut dyn Any;
}

impl<L: Lattice> AnyLattice for L {
    fn clone_dyn(&self) -> Box<dyn AnyLattice> {
        Box::new(self.clone())
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

/// One prophecy or history.
struct Cell {
    kind: CellKind,
    name: Option<String>,
    created: SrcLoc,
    type_name: &'static str,
    initial: String,
    value: Box<dyn AnyLattice>,
    /// Collect and adaptive modes: the join of requirements that changed a
    /// value already read in this attempt; becomes the value when the
    /// attempt ends.
    pending: Option<Box<dyn AnyLattice>>,
    /// Read in the current attempt.
    read: bool,
    joins: Vec<JoinEvent>,
    /// Distinct requirement sites of the current attempt.
    sites: Vec<SrcLoc>,
    /// The latest attempt that created (or found again) this cell.
    opened: u32,
}

/// What a requirement did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The value already satisfied it.
    Satisfied,
    /// The value changed, but nobody had read it in this attempt.
    Joined,
    /// The value changed after it was read: start over now.
    Restart,
    /// Collect and adaptive modes: the change waits for the end of the attempt.
    Deferred,
}

/// All cells of one extraction, found by creation tag and occurrence.
pub struct Store {
    cells: Arena<CellId, Cell>,
    by_key: FastMap<(Tag, u32), CellId>,
    mode: ProphecyMode,
    attempt: u32,
    /// Deferred joins in the current attempt.
    deferred: u64,
}

impl Store {
    /// An empty store.
    pub fn new(mode: ProphecyMode) -> Store {
        Store {
            cells: Arena::new(),
            by_key: FastMap::default(),
            mode,
            attempt: 1,
            deferred: 0,
        }
    }

    /// The cell created at `key`, creating it with `initial` on first use.
    /// A later creation with an initial value the cell does not satisfy
    /// requires that value (the verdict says what that did), unless `check`
    /// is off (the run already ended).
    pub fn open<L: Lattice>(
        &mut self,
        key: (Tag, u32),
        kind: CellKind,
        initial: L,
        name: Option<String>,
        loc: SrcLoc,
        check: bool,
    ) -> Result<(CellId, Verdict), Error> {
        if let Some(&id) = self.by_key.get(&key) {
            let attempt = self.attempt;
            let cell = &mut self.cells[id];
            cell.opened = attempt;
            if cell.kind != kind || cell.value.as_any().downcast_ref::<L>().is_none() {
                return Err(Error::Misuse {
                    message: format!(
                        "the {:?} created at {} is created here again as a {kind:?} of {} \
                         (one creation point, one type)",
                        cell.kind,
                        cell.created,
                        std::any::type_name::<L>()
                    ),
                    location: Some(loc),
                });
            }
            if !check {
                return Ok((id, Verdict::Satisfied));
            }
            let verdict = self.join(id, initial, loc, false)?;
            return Ok((id, verdict));
        }
        let id = self.cells.push(Cell {
            kind,
            name,
            created: loc,
            type_name: std::any::type_name::<L>(),
            initial: format!("{initial:?}"),
            value: Box::new(initial),
            pending: None,
            read: false,
            joins: Vec::new(),
            sites: Vec::new(),
            opened: self.attempt,
        });
        self.by_key.insert(key, id);
        Ok((id, Verdict::Satisfied))
    }

    /// The current value; with `mark`, the cell counts as read.
    pub fn get<L: Lattice>(&mut self, id: CellId, mark: bool) -> L {
        let cell = &mut self.cells[id];
        cell.read |= mark;
        value_of::<L>(&*cell.value).clone()
    }

    /// Requires `required` of cell `id` at `loc`.
    pub fn require<L: Lattice>(
        &mut self,
        id: CellId,
        required: L,
        loc: SrcLoc,
    ) -> Result<Verdict, Error> {
        self.join(id, required, loc, true)
    }

    /// Joins `required` into cell `id` as the mode and the cell's reads
    /// allow; `site`: count `loc` as a requirement site for reports.
    fn join<L: Lattice>(
        &mut self,
        id: CellId,
        required: L,
        loc: SrcLoc,
        site: bool,
    ) -> Result<Verdict, Error> {
        let (mode, attempt) = (self.mode, self.attempt);
        let cell = &mut self.cells[id];
        if site && !cell.sites.contains(&loc) {
            cell.sites.push(loc);
        }
        if value_of::<L>(&*cell.value).satisfies(&required) {
            return Ok(Verdict::Satisfied);
        }
        let unread = !cell.read && (cell.kind == CellKind::History || mode != ProphecyMode::Paper);
        let (target, verdict) = if unread {
            (&mut cell.value, Verdict::Joined)
        } else if mode == ProphecyMode::Paper {
            (&mut cell.value, Verdict::Restart)
        } else {
            let pending = cell.pending.get_or_insert_with(|| cell.value.clone_dyn());
            (pending, Verdict::Deferred)
        };
        let target = target
            .as_any_mut()
            .downcast_mut::<L>()
            .expect("type checked at creation");
        if target.satisfies(&required) {
            // Already deferred by an earlier requirement of this sweep.
            return Ok(Verdict::Satisfied);
        }
        let old = target.clone();
        target.join(&required);
        if !target.satisfies(&required) || !target.satisfies(&old) {
            return Err(Error::Lattice {
                message: format!(
                    "{} is not a lattice: joining {required:?} into {old:?} gave {target:?}, \
                     which does not satisfy both (a join must only go up)",
                    cell.type_name
                ),
                location: Some(loc),
            });
        }
        cell.joins.push(JoinEvent {
            attempt,
            location: loc,
            required: format!("{required:?}"),
            value: format!("{target:?}"),
            deferred: verdict == Verdict::Deferred,
        });
        if verdict == Verdict::Deferred {
            self.deferred += 1;
        }
        Ok(verdict)
    }

    /// Ends a sweep: deferred joins become the values. True if any did.
    pub fn settle(&mut self) -> bool {
        let mut changed = false;
        for cell in self.cells.values_mut() {
            if let Some(p) = cell.pending.take() {
                cell.value = p;
                changed = true;
            }
        }
        changed
    }

    /// True when a deferred join waits for the end of the sweep.
    pub fn has_pending(&self) -> bool {
        self.cells.values().any(|c| c.pending.is_some())
    }

    /// Joins deferred in the current attempt so far.
    pub fn deferred(&self) -> u64 {
        self.deferred
    }

    /// A new attempt: nobody has read anything yet.
    pub fn start_attempt(&mut self, attempt: u32) {
        self.attempt = attempt;
        self.deferred = 0;
        for cell in self.cells.values_mut() {
            cell.read = false;
            cell.sites.clear();
        }
    }

    /// The report of the cells, in creation order: those the current
    /// attempt used, or with `all`, also those only earlier attempts made
    /// (a creation point that moved: a plain loop found later salts it).
    pub fn explanation(&self, all: bool) -> Explanation {
        Explanation {
            cells: self
                .cells
                .values()
                .filter(|c| all || c.opened == self.attempt)
                .map(|c| CellReport {
                    kind: c.kind,
                    name: c.name.clone(),
                    created: c.created,
                    type_name: c.type_name,
                    initial: c.initial.clone(),
                    value: format!("{:?}", c.value),
                    joins: c.joins.clone(),
                    sites: c.sites.clone(),
                })
                .collect(),
        }
    }

    /// Number of cells the current attempt used.
    pub fn used(&self) -> usize {
        self.cells
            .values()
            .filter(|c| c.opened == self.attempt)
            .count()
    }
}

fn value_of<L: Lattice>(v: &dyn AnyLattice) -> &L {
    v.as_any()
        .downcast_ref::<L>()
        .expect("type checked at creation")
}
