//! The recording API: the one way `stage/`, `prophecy/` and `augur::dsl`
//! reach the engine, as Cranelift's `FunctionBuilder` is to its IR.
//!
//! [`driver::with`](super::driver::with) hands a [`Recorder`] for the run
//! in progress; its methods are everything a first stage can do: declare
//! variables and compute values (expressions over operands, `OpExpr`),
//! assign places, evaluate calls for their effect, load from memory and
//! name the places loads came from, ask the decision oracle, mark a
//! kernel launch, keep `Static` values in the program point, and open,
//! read and require prophecy cells. It never takes a raw trace operation:
//! what becomes a node of the graph, and how a run records, replays or
//! compares it, stays inside `trace/`.
//!
//! A `Dyn` handle is a variable and the generation of the run that made
//! it; [`Recorder::operand`] checks a handle against the run. After a run
//! has ended every method accepts any handle and records nothing, so
//! destructors that run while the run unwinds stay harmless.

use super::engine::Engine;
use super::graph::Op;
/// The vocabulary of recording: operands, places and expressions (the
/// trace's A-normal form), and how a run ends early.
pub(crate) use super::{
    engine::Ctl,
    graph::{OpExpr, Operand, Place},
};
use crate::error::Error;
use crate::ir::{ExternSig, FuncId, SrcLoc, Type, VarId};
use crate::prophecy::store::CellId;
use crate::prophecy::{CellKind, Lattice};

/// An operand not yet validated: a handle (checked against the current run)
/// or a constant.
#[derive(Clone, Debug)]
pub enum Arg {
    #[doc(hidden)]
    Var(VarId, u32),
    #[doc(hidden)]
    Const(Operand),
}

/// The engine as the first stage sees it while a run is in progress.
pub(crate) struct Recorder<'e> {
    engine: &'e mut Engine,
}

impl<'e> Recorder<'e> {
    pub(super) fn new(engine: &'e mut Engine) -> Recorder<'e> {
        Recorder { engine }
    }

    // ----- operands and variables -----

    /// The generation of the current run: handles made now carry it.
    #[inline]
    pub(crate) fn generation(&self) -> u32 {
        self.engine.generation()
    }

    /// Validates an argument against the current run.
    #[inline]
    pub(crate) fn operand(&self, a: Arg, loc: SrcLoc) -> Result<Operand, Ctl> {
        self.engine.operand(a, loc)
    }

    /// Declares a variable of type `ty`, initialised with `init` if given,
    /// named `hint` in the generated code if given.
    #[inline]
    pub(crate) fn declare(
        &mut self,
        ty: Type,
        init: Option<Operand>,
        hint: Option<String>,
        loc: SrcLoc,
    ) -> Result<VarId, Ctl> {
        self.engine.declare(ty, init, hint, loc)
    }

    /// Computes `expr` into a new temporary of type `ty`.
    #[inline]
    pub(crate) fn compute(&mut self, ty: Type, expr: OpExpr, loc: SrcLoc) -> Result<VarId, Ctl> {
        self.engine.let_(ty, expr, loc)
    }

    /// Names a handle's variable in the generated code (a first name wins).
    #[inline]
    pub(crate) fn name_var(
        &mut self,
        v: VarId,
        gen: u32,
        name: &str,
        loc: SrcLoc,
    ) -> Result<(), Ctl> {
        self.engine.name_var(v, gen, name, loc)
    }

    // ----- places and memory -----

    /// The place a handle stands for, for assignment: its variable, or the
    /// memory a loaded value came from.
    #[inline]
    pub(crate) fn place_of(&self, v: VarId, gen: u32, loc: SrcLoc) -> Result<Place, Ctl> {
        self.engine.place_of(v, gen, loc)
    }

    /// `place = value`.
    #[inline]
    pub(crate) fn assign(&mut self, place: Place, value: Operand, loc: SrcLoc) -> Result<(), Ctl> {
        self.engine.op(Op::Assign { place, value }, loc).map(drop)
    }

    /// Loads `place` into a temporary of type `ty` that remembers the
    /// place, so a later assignment to it stores there.
    #[inline]
    pub(crate) fn load(&mut self, ty: Type, place: Place, loc: SrcLoc) -> Result<VarId, Ctl> {
        self.engine.load(ty, place, loc)
    }

    /// For a value loaded from memory, a fresh load of its place; `None`
    /// for any other value.
    #[inline]
    pub(crate) fn reload(&mut self, v: VarId, gen: u32, loc: SrcLoc) -> Result<Option<VarId>, Ctl> {
        self.engine.reload(v, gen, loc)
    }

    /// Field `index` (of type `ty`) of the struct handle `v` (see
    /// `Engine::field`).
    #[inline]
    pub(crate) fn field(
        &mut self,
        v: VarId,
        gen: u32,
        index: u32,
        ty: Type,
        loc: SrcLoc,
    ) -> Result<VarId, Ctl> {
        self.engine.field(v, gen, index, ty, loc)
    }

    /// The expression `&place`, marking a variable whose address is taken.
    #[inline]
    pub(crate) fn address_of(&mut self, place: Place) -> OpExpr {
        self.engine.address_of(place)
    }

    // ----- calls -----

    /// The id of an extern, declaring it on first use.
    #[inline]
    pub(crate) fn extern_fn(&mut self, sig: &ExternSig<'_>) -> Result<FuncId, Error> {
        self.engine.extern_fn(sig)
    }

    /// Evaluates `call` (an `OpExpr::Call`) for its effect: a `void` call,
    /// or one whose result is not used.
    #[inline]
    pub(crate) fn eval(&mut self, call: OpExpr, loc: SrcLoc) -> Result<(), Ctl> {
        self.engine.op(Op::Eval(call), loc).map(drop)
    }

    // ----- control -----

    /// Asks the decision oracle about `cond`.
    #[inline]
    pub(crate) fn decide(&mut self, cond: Operand, loc: SrcLoc) -> Result<bool, Ctl> {
        self.engine.decide(cond, loc)
    }

    /// Marks the start of a kernel launch of `grid` blocks of `block`
    /// threads (`Some`), or the end of the innermost one's body (`None`).
    #[inline]
    pub(crate) fn launch(&mut self, shape: Option<(u32, u32)>, loc: SrcLoc) -> Result<(), Ctl> {
        self.engine.launch(shape, loc)
    }

    /// Marks the start of a parallel loop over `lo..hi` combining
    /// `reductions` (`Some`), or the end of the innermost one's body (`None`).
    #[inline]
    pub(crate) fn parallel(
        &mut self,
        start: Option<(Operand, Operand, Vec<crate::ir::Reduction>, bool)>,
        loc: SrcLoc,
    ) -> Result<(), Ctl> {
        self.engine.parallel(start, loc)
    }

    /// The line of the innermost open parallel loop that has `var` as a
    /// reduction, if the run is in the body of one.
    #[inline]
    pub(crate) fn open_reduction(&self, var: VarId) -> Option<SrcLoc> {
        self.engine.open_reduction(var)
    }

    /// Queues an annotation (`pragma: ...`, `note: ...`) for the next
    /// operation.
    #[inline]
    pub(crate) fn annotate(&mut self, text: &str) {
        self.engine.annotate(text)
    }

    // ----- resumable points -----

    /// A resumable machine starts at key `start`: the member the run
    /// starts in, and (`Some`) the key a replayed run jumps to instead
    /// (see `points.rs`).
    #[inline]
    pub(crate) fn point_enter(
        &mut self,
        start: super::points::Target<'_>,
        loc: SrcLoc,
    ) -> Result<(u32, Option<super::points::PointKey>), Ctl> {
        self.engine.point_enter(start, loc)
    }

    /// The innermost machine's body returned: go on at `to`.
    #[inline]
    pub(crate) fn point_goto(
        &mut self,
        to: super::points::Target<'_>,
        loc: SrcLoc,
    ) -> Result<super::points::Goto, Ctl> {
        self.engine.point_goto(to, loc)
    }

    // ----- first-stage state in program points -----

    /// Registers a `Static` with the hash of its value; returns its slot.
    #[inline]
    pub(crate) fn static_register(
        &mut self,
        hash: u64,
        at: Option<&'static std::panic::Location<'static>>,
    ) -> u32 {
        self.engine.static_register(hash, at)
    }

    /// Records a new value hash for a `Static`.
    #[inline]
    pub(crate) fn static_update(&mut self, slot: u32, hash: u64) {
        self.engine.static_update(slot, hash)
    }

    /// Forgets a dropped `Static`.
    #[inline]
    pub(crate) fn static_drop(&mut self, slot: u32) {
        self.engine.static_drop(slot)
    }

    /// A `#[augur::staged]` body starts (see `frames.rs`): `caller` is
    /// where it was called from (`None` for a closure). Returns the depth
    /// to end it at, and whether it is counted.
    #[inline]
    pub(crate) fn frame_enter(
        &mut self,
        region: &'static super::frames::Region,
        caller: Option<SrcLoc>,
    ) -> (u32, bool) {
        let run = &mut self.engine.run;
        let decided = run.decision_count() > 0;
        let state = run.statics_hash;
        run.frames.enter(region, caller, decided, || state)
    }

    /// A tracked local owned at `depth` cannot be read for `why` (`on`),
    /// or can again.
    #[inline]
    pub(crate) fn poisoned(&mut self, depth: u32, why: super::frames::Hidden, on: bool) {
        self.engine.run.frames.poisoned(depth, why, on)
    }

    /// A borrow of a tracked local ended.
    #[inline]
    pub(crate) fn poisoned_any_borrow(&mut self) {
        let anywhere = super::frames::Hidden::Borrowed(SrcLoc {
            file: "",
            line: 0,
            col: 0,
        });
        self.engine.run.frames.poisoned(0, anywhere, false)
    }

    /// The depth that owns what the innermost activation's code starts now.
    #[inline]
    pub(crate) fn depth(&self) -> u32 {
        self.engine.run.frames.depth()
    }

    /// Registers a tracked local of the innermost activation's code with
    /// the hash of its value; returns its slot and the depth that owns it
    /// (see `Frames::track`).
    #[inline]
    pub(crate) fn track(
        &mut self,
        hash: u64,
        at: &'static std::panic::Location<'static>,
    ) -> (u32, u32) {
        let slot = self.engine.static_register(hash, Some(at));
        (slot, self.engine.run.frames.track(slot))
    }

    /// The tracked local owned at `depth` in `slot` went out of scope.
    #[inline]
    pub(crate) fn untrack(&mut self, depth: u32, slot: u32) {
        if self.engine.run.frames.untrack(depth, slot) {
            self.engine.static_drop(slot);
        }
    }

    /// What a bound value that cannot be hashed stands for: the live
    /// `Static`s' state, which determines it when its initialiser decided
    /// nothing, and what the `decided` decisions since `mark` tell of it
    /// (see `Frames::sides_since`).
    pub(crate) fn stand_in(&mut self, mark: u32, decided: u32) -> u64 {
        let h = self.engine.statics_hash();
        match decided {
            0 => h,
            n => super::tag::mix(h, self.engine.run.frames.sides_since(mark, n)),
        }
    }

    /// Holds a value the innermost activation's code handed to a call (or
    /// matched) after `decided` decisions since `mark`, by `hash` or, if
    /// `None`, by what stands for it (see `stage::staged::arg`).
    pub(crate) fn hold(&mut self, mark: u32, decided: u32, hash: Option<u64>) {
        let h = match hash {
            Some(h) => h,
            None => self.stand_in(mark, decided),
        };
        let slot = self.engine.static_register(h, None);
        self.engine.run.frames.hold(mark, slot);
        super::context::HOLDING.set(true);
    }

    /// Releases what the innermost activation's code held since `mark`.
    pub(crate) fn release(&mut self, mark: u32) {
        while let Some(slot) = self.engine.run.frames.release(Some(mark)) {
            self.engine.static_drop(slot);
        }
        let holding = self.engine.run.frames.holding();
        super::context::HOLDING.set(holding);
    }

    /// The body entered at `depth` ended, returning a value hashing to
    /// `value` (`None`: unknown); `decided`: the decision counts when it
    /// began and now, if it decided.
    #[inline]
    pub(crate) fn frame_exit(
        &mut self,
        depth: u32,
        value: Option<u64>,
        decided: Option<(u32, u32)>,
    ) {
        let frames = &mut self.engine.run.frames;
        frames.exit(depth, value, decided);
        // So are the tracked locals whose blocks it left without ending
        // them (a `return`, a `?`, a caught panic).
        while let Some(slot) = self.engine.run.frames.swept() {
            self.engine.static_drop(slot);
        }
        // What the ended activations' code held is released with them.
        let mut released = false;
        while let Some(slot) = self.engine.run.frames.release(None) {
            self.engine.static_drop(slot);
            released = true;
        }
        if released {
            let holding = self.engine.run.frames.holding();
            super::context::HOLDING.set(holding);
        }
    }

    /// A macro the attribute cannot rewrite expands at `at` and runs now;
    /// returns the depth to end it at ([`Recorder::frame_exit`]).
    pub(crate) fn macro_enter(&mut self, at: SrcLoc) -> u32 {
        self.engine.run.frames.enter_macro(at)
    }

    // ----- prophecy cells -----

    /// Identifies this extraction to the prophecy handles it makes.
    #[inline]
    pub(crate) fn extraction(&self) -> u64 {
        self.engine.extraction()
    }

    /// The cell created at the current program point.
    #[inline]
    pub(crate) fn cell_open<L: Lattice>(
        &mut self,
        kind: CellKind,
        initial: L,
        name: Option<String>,
        loc: SrcLoc,
    ) -> Result<CellId, Ctl> {
        self.engine.cell_open(kind, initial, name, loc)
    }

    /// Reads a cell.
    #[inline]
    pub(crate) fn cell_get<L: Lattice>(&mut self, id: CellId) -> L {
        self.engine.cell_get(id)
    }

    /// Requires (or records) `v` of cell `id`.
    #[inline]
    pub(crate) fn cell_require<L: Lattice>(
        &mut self,
        id: CellId,
        v: L,
        loc: SrcLoc,
    ) -> Result<(), Ctl> {
        self.engine.cell_require(id, v, loc)
    }
}
