//! The engine's side of second-stage values, behind the recording API
//! (`recorder.rs`): operands checked against the run, declarations,
//! temporaries, loads and the places behind them, names, addresses.
//!
//! After a run has ended (see `Engine::detached`), every method accepts any
//! handle and records nothing, so destructors that run during the unwind
//! stay harmless.

use super::engine::{Ctl, Engine};
use super::graph::{Op, OpExpr, Operand, Place};
use super::recorder::Arg;
use crate::ir::{SrcLoc, Type, VarId, VarKind};
use crate::Error;

impl Engine {
    /// The generation of the current run: handles made now carry it.
    pub(super) fn generation(&self) -> u32 {
        self.gen
    }

    /// Validates an argument against the current run.
    pub(super) fn operand(&self, a: Arg, loc: SrcLoc) -> Result<Operand, Ctl> {
        match a {
            Arg::Const(o) => Ok(o),
            Arg::Var(v, g) => Ok(Operand::Var(self.var_of(v, g, loc)?)),
        }
    }

    /// The variable of a handle, if the handle belongs to the current run.
    pub(super) fn var_of(&self, v: VarId, gen: u32, loc: SrcLoc) -> Result<VarId, Ctl> {
        if self.detached.is_some() {
            return Ok(v);
        }
        if gen == self.gen && v.0 < self.out.func.vars.len() as u32 {
            Ok(v)
        } else {
            Err(stale(loc))
        }
    }

    /// Declares a variable of type `ty`; returns it.
    pub(super) fn declare(
        &mut self,
        ty: Type,
        init: Option<Operand>,
        hint: Option<String>,
        loc: SrcLoc,
    ) -> Result<VarId, Ctl> {
        storable(&ty, loc)?;
        let v = self.op(Op::Decl { ty, init, hint }, loc)?;
        v.ok_or_else(|| super::engine::internal("a declaration defined no variable"))
    }

    /// Records the start of a kernel launch of `grid` blocks of `block`
    /// threads (`Some`), or the end of the innermost one's body (`None`).
    pub(super) fn launch(&mut self, shape: Option<(u32, u32)>, loc: SrcLoc) -> Result<(), Ctl> {
        let op = match shape {
            Some((grid, block)) => Op::Launch { grid, block },
            None => Op::LaunchEnd,
        };
        self.op(op, loc).map(drop)
    }

    /// Records the start of a parallel loop over `lo..hi` combining
    /// `reductions` (`Some`), or the end of the innermost one's body (`None`).
    pub(super) fn parallel(
        &mut self,
        start: Option<(Operand, Operand, Vec<crate::ir::Reduction>, bool)>,
        loc: SrcLoc,
    ) -> Result<(), Ctl> {
        let op = match start {
            Some((lo, hi, reductions, sequential)) => Op::Parallel {
                lo,
                hi,
                reductions,
                sequential,
            },
            None => Op::ParallelEnd,
        };
        self.op(op, loc).map(drop)
    }

    /// The line of the innermost open parallel loop that has `var` as a
    /// reduction, if the run is in the body of one.
    pub(super) fn open_reduction(&self, var: VarId) -> Option<SrcLoc> {
        self.run.regions.iter().rev().find_map(|&n| {
            let node = &self.graph.nodes[n];
            match &node.op {
                Op::Parallel { reductions, .. } if reductions.iter().any(|r| r.var == var) => {
                    Some(node.loc)
                }
                _ => None,
            }
        })
    }

    /// Records `ty t = expr` and returns `t`.
    pub(super) fn let_(&mut self, ty: Type, expr: OpExpr, loc: SrcLoc) -> Result<VarId, Ctl> {
        storable(&ty, loc)?;
        let v = self.op(Op::Let { ty, expr }, loc)?;
        v.ok_or_else(|| super::engine::internal("a let defined no variable"))
    }

    /// The place a handle stands for, for assignment: its variable, or the
    /// memory a loaded value came from.
    pub(super) fn place_of(&self, v: VarId, gen: u32, loc: SrcLoc) -> Result<Place, Ctl> {
        if self.detached.is_some() {
            return Ok(Place::Var(v));
        }
        let v = self.var_of(v, gen, loc)?;
        match self.out.func.vars[v].kind {
            VarKind::Local | VarKind::Param(_) => Ok(Place::Var(v)),
            VarKind::Temp => match self.out.var_place.get(&v) {
                Some(p) => Ok(p.clone()),
                None => Err(Ctl::fail(Error::Misuse {
                    message: "cannot assign to a computed value; declare a variable with \
                              Dyn::new and assign that"
                        .into(),
                    location: Some(loc),
                })),
            },
        }
    }

    /// Field `index` (of type `ty`) of the struct handle `v`: a load of
    /// `(&s)->field` that, like a load from memory, assigns back there when
    /// `s` is a variable or was loaded from memory. A field of a computed
    /// struct value (a call's result) can be read, not assigned: the value
    /// keeps its value.
    pub(super) fn field(
        &mut self,
        v: VarId,
        gen: u32,
        index: u32,
        ty: Type,
        loc: SrcLoc,
    ) -> Result<VarId, Ctl> {
        if self.detached.is_some() {
            return self.let_(ty, OpExpr::Use(Operand::Var(v)), loc);
        }
        let v = self.var_of(v, gen, loc)?;
        let st = self.out.func.vars[v].ty;
        let (place, writable) = match (
            self.out.var_place.get(&v).cloned(),
            self.out.func.vars[v].kind,
        ) {
            (Some(p), _) => (p, true),
            (None, VarKind::Local | VarKind::Param(_)) => (Place::Var(v), true),
            (None, VarKind::Temp) => (Place::Var(v), false),
        };
        let addr = self.address_of(place);
        let ptr = self.let_(Type::ptr(st), addr, loc)?;
        let field = Place::Field(Operand::Var(ptr), index);
        let f = self.let_(ty, OpExpr::Load(field.clone()), loc)?;
        if writable {
            self.out.var_place.insert(f, field);
        }
        Ok(f)
    }

    /// `&place`, marking a variable whose address is taken.
    pub(super) fn address_of(&mut self, place: Place) -> OpExpr {
        if let (Place::Var(v), None) = (&place, &self.detached) {
            self.out.func.vars[*v].addr_taken = true;
        }
        OpExpr::AddrOf(place)
    }

    /// Names a handle's variable in the generated code (a first name wins).
    pub(super) fn name_var(
        &mut self,
        v: VarId,
        gen: u32,
        name: &str,
        loc: SrcLoc,
    ) -> Result<(), Ctl> {
        let v = self.var_of(v, gen, loc)?;
        if let Some(d) = self.out.func.vars.get_mut(v).filter(|d| d.hint.is_none()) {
            d.hint = Some(name.to_string());
        }
        Ok(())
    }

    /// Loads `place` into a temporary of type `ty` that remembers the
    /// place, so a later `set` stores to it. A variable index or pointer in
    /// the place is copied first: the store goes where the value was loaded
    /// from even if that variable changes in between.
    pub(super) fn load(&mut self, ty: Type, place: Place, loc: SrcLoc) -> Result<VarId, Ctl> {
        let p = self.snapshot_place(place, loc)?;
        let v = self.let_(ty, OpExpr::Load(p.clone()), loc)?;
        self.out.var_place.insert(v, p);
        Ok(v)
    }

    /// For a value loaded from memory, a fresh load of its place (so
    /// `v += 1; v += 1` on `p.at(0)` adds 2); `None` for any other value.
    pub(super) fn reload(&mut self, v: VarId, gen: u32, loc: SrcLoc) -> Result<Option<VarId>, Ctl> {
        let Some(p) = self.out.var_place.get(&v).cloned() else {
            return Ok(None);
        };
        if gen != self.gen {
            return Err(stale(loc));
        }
        let Some(ty) = self.out.func.vars.get(v).map(|d| d.ty) else {
            return Ok(None);
        };
        let fresh = self.let_(ty, OpExpr::Load(p.clone()), loc)?;
        self.out.var_place.insert(fresh, p);
        Ok(Some(fresh))
    }

    fn snapshot_place(&mut self, p: Place, loc: SrcLoc) -> Result<Place, Ctl> {
        Ok(match p {
            Place::Index(b, i) => Place::Index(self.snapshot(b, loc)?, self.snapshot(i, loc)?),
            Place::Deref(q) => Place::Deref(self.snapshot(q, loc)?),
            Place::Field(q, i) => Place::Field(self.snapshot(q, loc)?, i),
            other => other,
        })
    }

    fn snapshot(&mut self, o: Operand, loc: SrcLoc) -> Result<Operand, Ctl> {
        let Operand::Var(v) = o else { return Ok(o) };
        if self.detached.is_some() {
            return Ok(o);
        }
        let d = &self.out.func.vars[v];
        let mutable = matches!(d.kind, VarKind::Local | VarKind::Param(_));
        if !mutable || matches!(d.ty, Type::Array { .. }) {
            return Ok(o);
        }
        let ty = d.ty;
        Ok(Operand::Var(self.let_(ty, OpExpr::Use(o), loc)?))
    }
}

fn stale(loc: SrcLoc) -> Ctl {
    Ctl::fail(Error::Misuse {
        message: "a Dyn value was used outside the run that made it (from another \
                  extraction, or kept from an earlier run in state outside the closure)"
            .into(),
        location: Some(loc),
    })
}

/// A value of an opaque type (or an array of them) cannot exist in C: it
/// has no size. Pointers to one can.
fn storable(ty: &Type, loc: SrcLoc) -> Result<(), Ctl> {
    match ty {
        Type::Opaque(o) => Err(Ctl::fail(Error::Misuse {
            message: format!(
                "a value of the opaque type `{}`: C knows it only by name, so it exists only \
                 behind pointers (declare or load a pointer to it instead)",
                o.name
            ),
            location: Some(loc),
        })),
        Type::Array { of, .. } => storable(of, loc),
        _ => Ok(()),
    }
}
