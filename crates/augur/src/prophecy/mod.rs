//! Prophecy variables and path-insensitive histories: first-stage values
//! that carry facts about the future and about every path.
//!
//! # The idea
//!
//! A staged program often has to decide *now* what only later code knows:
//! copy a tensor to the GPU before a kernel, because the kernel will read
//! it; fuse a ReLU into a convolution, because every operation after it is
//! a ReLU with one threshold. A [`Prophecy`] guesses (its initial value),
//! the later code checks the guess with [`Prophecy::require`], and a wrong
//! guess is corrected and the first stage re-executed until every guess
//! holds. No intermediate representation is analysed: the analysis is the
//! first stage itself, run again.
//!
//! ```
//! #[augur::staged]
//! fn main() -> augur::Result<()> {
//!     use augur::prophecy::Prophecy;
//!     use augur::{Builder, Dyn};
//!
//!     let f = Builder::new()
//!         .extract("f", |x: Dyn<i32>| {
//!             let needs_copy = Prophecy::named("x copied", false);
//!             let copy = Dyn::new(0);
//!             if needs_copy.get() {
//!                 copy.set(x); // generated only if some later code reads it
//!             }
//!             let r = Dyn::new(1);
//!             if x.gt(0).is_true() {
//!                 needs_copy.require(true); // this path reads the copy
//!                 r.set(copy);
//!             }
//!             r
//!         })
//!         .unwrap();
//!     assert_eq!(f.interpret(&[5.into()]).unwrap(), 5.into());
//!     assert!(f.c_code().contains("= arg0;"));
//!     assert!(f.explain().to_string().contains("`x copied`"));
//!     Ok(())
//! }
//! ```
//!
//! # Values, identity, lifetime
//!
//! Values live in a [`Lattice`]: requirements only ever raise them, which
//! is what makes the re-execution end. A cell is identified by its
//! creation point (the call path and `Static` state where `new` runs, plus
//! how many were created there since the last dyn decision), so a
//! prophecy made in a helper called from two places is two prophecies, one
//! made in a plain loop over tensors is one per tensor, and one made in a
//! dyn loop's body is one for all turns (the join over the turns, as the
//! paper's per-label analysis has it). Values persist across the runs and
//! restarts of one extraction and are gone after it.
//!
//! # When the first stage starts over
//!
//! Within one attempt every read of a cell returns the same value, so
//! prophecy values need not be part of tags. A requirement that raises a
//! value somebody read in this attempt therefore starts a new attempt:
//! exploration is discarded, cell values are kept. [`ProphecyMode`] says
//! when: at once (the paper's Algorithm 3) or after the sweep, with every
//! violation of the sweep joined in. A raise of a value nobody read yet
//! (a history recorded before it is read) needs no new attempt.
//!
//! # Histories
//!
//! A [`History`] is the same cell used the other way round: facts are
//! [`record`](History::record)ed first and read later, and the value read is
//! the join over *every* path. Unlike a [`Static`](crate::Static) it is not
//! part of tags, so recording a fact inside a dyn loop does not peel the
//! loop.
//!
//! # Termination and reports
//!
//! Each join is checked against the lattice laws; a lattice that keeps
//! growing stops after [`Builder::max_prophecy_restarts`](crate::Builder::max_prophecy_restarts)
//! with an error listing every cell's history. [`Extracted::explain`](crate::Extracted::explain)
//! says, for each cell, its final value and the lines whose requirements
//! made it so.

mod builtin;
mod explain;
mod handle;
mod lattice;
pub(crate) mod store;

pub use builtin::{Flat, Max, Set};
pub use explain::{CellKind, CellReport, Explanation, JoinEvent};
pub use handle::{History, Prophecy};
pub use lattice::{check_laws, Lattice};

/// When a violated requirement starts the extraction over.
///
/// Every mode gives the same code when what a program requires does not
/// shrink as predictions grow (the usual case: DSLs read predictions to
/// choose *how* to generate code). Otherwise the modes that continue after
/// a violation may join requirements that only a stale prediction reached;
/// that can make predictions larger, never wrong: the final attempt
/// re-checks every requirement. In those modes a run that fails while
/// joins are pending (the stale prediction may be why) starts the next
/// attempt instead of failing the extraction.
///
/// Measured by `cargo bench -p augur-cli --bench prophecy` (runs to settle `k`
/// prophecies): paper mode is quadratic when violations sit on paths that
/// exploration reaches late, collect mode when each violation can only be
/// found once the previous one is fixed; adaptive mode follows the better
/// of the two.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ProphecyMode {
    /// At the first violation, as the paper's Algorithm 3 does. `k`
    /// prophecies violated one after another take `k` restarts.
    Paper,
    /// Finish the sweep of runs, join every violation seen, then start
    /// over. Independent violations settle in one restart.
    Collect,
    /// After the first violation, keep exploring while new violations keep
    /// turning up: the attempt ends once it has gone as many runs without
    /// a new one as it took to find the first (the default). Costs at most
    /// about twice paper mode's runs per attempt, and settles independent
    /// violations in one restart like collect mode.
    #[default]
    Adaptive,
}
