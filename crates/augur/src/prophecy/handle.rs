//! The handles DSL authors hold: [`Prophecy`] and [`History`].

use super::store::CellId;
use super::CellKind;
use super::Lattice;
use crate::error::Error;
use crate::ir::SrcLoc;
use crate::stage::dyn_val::caller;
use crate::trace::driver::{self, with};
use std::fmt;
use std::marker::PhantomData;

/// A prediction about the future of the first stage, checked later.
///
/// `Prophecy::new(initial)` makes (or, on later runs, finds again) the
/// prophecy of this creation point: the call path and `Static` state where
/// it is created, plus how many were created there in a row. [`get`]
/// reads the prediction; [`require`] is the precondition: when the
/// prediction does not satisfy the requirement, it joins the requirement in
/// and the extraction starts over with the new prediction (all exploration
/// is discarded; prophecy values are kept). When no requirement is violated
/// any more, every prediction the generated code used holds on every path.
///
/// The handle is a small `Copy` value: keep it in your DSL's structures.
///
/// ```
/// #[augur::staged]
/// fn main() -> augur::Result<()> {
///     use augur::prophecy::Prophecy;
///     use augur::{Builder, Dyn};
///
///     // How big must the scratch buffer be? Only the code after it knows.
///     let f = Builder::new()
///         .extract("scratch", |n: Dyn<i32>| {
///             let size = Prophecy::named("scratch size", augur::prophecy::Max(0));
///             let scratch = Dyn::new(size.get().0); // allocation size, predicted
///             let r = Dyn::new(n);
///             if n.gt(10).is_true() {
///                 size.require(augur::prophecy::Max(64));
///                 r.set(r + 1);
///             } else {
///                 size.require(augur::prophecy::Max(16));
///             }
///             r + scratch
///         })
///         .unwrap();
///     assert_eq!(f.interpret(&[0.into()]).unwrap(), 64.into());
///     assert_eq!(f.stats().prophecy_restarts, 1);
///     println!("{}", f.explain());
///     Ok(())
/// }
/// ```
///
/// [`get`]: Prophecy::get
/// [`require`]: Prophecy::require
pub struct Prophecy<L> {
    cell: CellRef,
    _lattice: PhantomData<fn() -> L>,
}

/// A path-insensitive fact about the past: the join of everything
/// [`record`](History::record)ed on any path of the extraction.
///
/// A [`Static`](crate::Static) is part of every tag, so a flag set inside a
/// dyn loop makes the loop's later turns different program points and peels
/// its first turn. A `History` is not part of any tag: a loop that records
/// a fact keeps its shape, and a read after the loop sees the fact. The
/// value a read returns is the join over every path, past and future, and
/// it is the same for every read of one attempt: a record that would change
/// a value that was already read starts the extraction over, like a
/// violated prophecy. A record before any read costs nothing.
///
/// ```
/// #[augur::staged]
/// fn main() -> augur::Result<()> {
///     use augur::prophecy::History;
///     use augur::{Builder, Dyn};
///
///     let f = Builder::new()
///         .extract("count_up", |n: Dyn<i32>| {
///             let wrote = History::named("loop wrote", false);
///             let i = Dyn::new(0);
///             while i.lt(n).is_true() {
///                 wrote.record(true); // inside a dyn loop: no peeling
///                 i.set(i + 1);
///             }
///             if wrote.get() { i * 2 } else { i }
///         })
///         .unwrap();
///     assert_eq!(f.c_code().matches("while").count(), 1);
///     assert_eq!(f.interpret(&[3.into()]).unwrap(), 6.into());
///     Ok(())
/// }
/// ```
pub struct History<L> {
    cell: CellRef,
    _lattice: PhantomData<fn() -> L>,
}

/// The cell a handle names, in the extraction that made it.
#[derive(Clone, Copy, PartialEq, Eq)]
struct CellRef {
    id: CellId,
    extraction: u64,
    created: SrcLoc,
}

impl CellRef {
    fn open<L: Lattice>(kind: CellKind, initial: L, name: Option<String>, loc: SrcLoc) -> CellRef {
        if !driver::in_extraction() {
            driver::throw(crate::trace::recorder::Ctl::fail(outside(
                kind, "created", loc,
            )));
        }
        with(|e| {
            let id = e.cell_open(kind, initial, name, loc)?;
            Ok(CellRef {
                id,
                extraction: e.extraction(),
                created: loc,
            })
        })
    }

    /// Checks that the handle belongs to the extraction in progress.
    fn check(&self, kind: CellKind, what: &str, loc: SrcLoc) {
        let err = match driver::extraction_id() {
            None => outside(kind, what, loc),
            Some(x) if x == self.extraction => return,
            Some(_) => Error::Misuse {
                message: format!(
                    "a {} created at {} in another extraction is {what} here \
                     (handles live for one extraction)",
                    kind_name(kind),
                    self.created
                ),
                location: Some(loc),
            },
        };
        driver::throw(crate::trace::recorder::Ctl::fail(err))
    }

    fn get<L: Lattice>(&self, kind: CellKind, loc: SrcLoc) -> L {
        self.check(kind, "read", loc);
        with(|e| Ok(e.cell_get::<L>(self.id)))
    }

    fn require<L: Lattice>(&self, kind: CellKind, v: L, loc: SrcLoc) {
        self.check(kind, "required", loc);
        with(|e| e.cell_require(self.id, v, loc))
    }
}

fn kind_name(kind: CellKind) -> &'static str {
    match kind {
        CellKind::Prophecy => "Prophecy",
        CellKind::History => "History",
    }
}

fn outside(kind: CellKind, what: &str, loc: SrcLoc) -> Error {
    Error::Misuse {
        message: format!(
            "a {} was {what} outside an extraction (prophecies and histories live \
             inside Builder::extract)",
            kind_name(kind)
        ),
        location: Some(loc),
    }
}

impl<L: Lattice> Prophecy<L> {
    /// The prophecy created here, with `initial` as its first prediction
    /// (usually the lattice's bottom: "nothing will be required").
    #[track_caller]
    pub fn new(initial: L) -> Prophecy<L> {
        Self::make(None, initial, caller())
    }

    /// [`new`](Prophecy::new) with a name for [`explain`](crate::Extracted::explain)
    /// and error reports ("tensor B read on the GPU").
    #[track_caller]
    pub fn named(name: impl Into<String>, initial: L) -> Prophecy<L> {
        Self::make(Some(name.into()), initial, caller())
    }

    fn make(name: Option<String>, initial: L, loc: SrcLoc) -> Prophecy<L> {
        Prophecy {
            cell: CellRef::open(CellKind::Prophecy, initial, name, loc),
            _lattice: PhantomData,
        }
    }

    /// The prediction. Within one attempt every read returns the same value.
    #[track_caller]
    pub fn get(&self) -> L {
        self.cell.get(CellKind::Prophecy, caller())
    }

    /// The precondition: the prediction must satisfy `required`. If it does
    /// not, `required` is joined in and the extraction starts over (in
    /// [`ProphecyMode::Collect`](super::ProphecyMode::Collect), once the
    /// current sweep of runs is done). Make your DSL's functions
    /// `#[track_caller]` so that [`explain`](crate::Extracted::explain)
    /// names the user's line.
    #[track_caller]
    pub fn require(&self, required: L) {
        self.cell.require(CellKind::Prophecy, required, caller())
    }
}

impl<L: Lattice> History<L> {
    /// The history created here, starting at `initial` (usually bottom).
    #[track_caller]
    pub fn new(initial: L) -> History<L> {
        Self::make(None, initial, caller())
    }

    /// [`new`](History::new) with a name for reports.
    #[track_caller]
    pub fn named(name: impl Into<String>, initial: L) -> History<L> {
        Self::make(Some(name.into()), initial, caller())
    }

    fn make(name: Option<String>, initial: L, loc: SrcLoc) -> History<L> {
        History {
            cell: CellRef::open(CellKind::History, initial, name, loc),
            _lattice: PhantomData,
        }
    }

    /// Joins `fact` in: from now on (and, after a restart if the value was
    /// already read, everywhere) reads see it.
    #[track_caller]
    pub fn record(&self, fact: L) {
        self.cell.require(CellKind::History, fact, caller())
    }

    /// The join of every fact recorded on any path of the extraction.
    #[track_caller]
    pub fn get(&self) -> L {
        self.cell.get(CellKind::History, caller())
    }
}

macro_rules! handle_traits {
    ($t:ident) => {
        impl<L> Clone for $t<L> {
            fn clone(&self) -> Self {
                *self
            }
        }
        impl<L> Copy for $t<L> {}
        impl<L> PartialEq for $t<L> {
            fn eq(&self, other: &Self) -> bool {
                self.cell == other.cell
            }
        }
        impl<L> Eq for $t<L> {}
        impl<L> fmt::Debug for $t<L> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(
                    f,
                    "{}#{} (created at {})",
                    stringify!($t),
                    self.cell.id,
                    self.cell.created
                )
            }
        }
    };
}

handle_traits!(Prophecy);
handle_traits!(History);
