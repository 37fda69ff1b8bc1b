//! Loads and stores forwarded within a block: a value stored to or loaded
//! from `base[i + k]` is reused by later loads of that element until
//! something may have changed it.
//!
//! Cranelift eliminates a load only after a store to the very same
//! address, and takes any other store as a possible write of it. Code
//! staged from an interpreter is made of exactly such sequences: cells at
//! small offsets from one pointer (`t[p + 1] = t[p + 1] + t[p + 2];
//! t[p + 2] = 0; ...`), each read again after stores to its neighbours.
//! Two elements `base[i + k1]` and `base[i + k2]` of one type, with the
//! same base and index variables and `k1 != k2`, are different elements,
//! so a store to one leaves the other known. What this knows:
//!
//! * places `base[k]`, `base[i + k]`, `base[i - k]` and `*base`, with `base`
//!   and `i` variables held in registers (no store can change them) and
//!   scalar or pointer elements;
//! * a store to such a place forgets the places that may overlap it (any
//!   other base, index or element type) and remembers its value; any
//!   other write to memory (through another form of place, a call, an
//!   intrinsic, a struct copy, a variable in a stack slot) forgets all;
//! * a register variable assigned a copy of another (`uint8_t *v1 = t;`)
//!   or another plus a constant (`int64_t v0 = p + 3;`) stands for it in
//!   places, so `v1[v0]` is `t[p + 3]`; assigning either forgets that;
//! * assigning `base` or `i` forgets the places that name it;
//! * everything is forgotten when the block being built changes, so a
//!   value is only reused where it was computed on every path.
//!
//! As in C, a data race is undefined: a parallel loop's body may keep
//! what it read, as gcc does.

use super::lower::{Home, Lower};
use super::types;
use crate::ir::{BinOp, Const, EntityId, Expr, ExprId, Type, VarId};
use crate::Result;
use cranelift_codegen::ir::{self, InstBuilder, MemFlags};

/// An element the cache knows: `base[index + k]` of type `ty`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct Place {
    base: VarId,
    index: Option<VarId>,
    k: i64,
    ty: Type,
}

impl Place {
    /// True unless the two are certainly different elements.
    fn may_overlap(&self, other: &Place) -> bool {
        !(self.base == other.base
            && self.index == other.index
            && self.ty == other.ty
            && self.k != other.k)
    }

    fn names(&self, v: VarId) -> bool {
        self.base == v || self.index == Some(v)
    }
}

/// What the block being built knows of memory.
#[derive(Default)]
pub(super) struct Known {
    block: Option<ir::Block>,
    values: Vec<(Place, ir::Value)>,
    /// `(v, w, k)`: variable `v` holds `w + k` (`k = 0` for pointers).
    sums: Vec<(VarId, VarId, i64)>,
}

/// Places a block keeps at most (a search is linear).
const MAX_KNOWN: usize = 32;

impl Known {
    /// Forgets what memory holds (another write to it).
    pub(super) fn clear(&mut self) {
        self.values.clear();
    }

    /// Forgets everything (another block).
    pub(super) fn leave(&mut self) {
        self.values.clear();
        self.sums.clear();
    }

    /// Variable `v` changed.
    pub(super) fn assigned(&mut self, v: VarId) {
        self.values.retain(|(p, _)| !p.names(v));
        self.sums.retain(|&(a, b, _)| a != v && b != v);
    }

    /// What `v` stands for: `w + k`.
    fn resolve(&self, v: VarId) -> (VarId, i64) {
        match self.sums.iter().find(|s| s.0 == v) {
            Some(&(_, w, k)) => (w, k),
            None => (v, 0),
        }
    }

    fn at(&mut self, block: Option<ir::Block>) {
        if self.block != block {
            self.block = block;
            self.leave();
        }
    }

    fn find(&self, place: &Place) -> Option<ir::Value> {
        self.values
            .iter()
            .find(|(p, _)| p == place)
            .map(|&(_, v)| v)
    }

    fn remember(&mut self, place: Place, x: ir::Value) {
        if self.values.len() >= MAX_KNOWN {
            self.values.remove(0);
        }
        self.values.push((place, x));
    }
}

impl Lower<'_, '_> {
    /// The place `e` denotes in the cache's terms, if it is one it knows.
    fn known_place(&self, e: ExprId) -> Option<Place> {
        let f = self.f;
        let ty = *f.ty(e);
        if !matches!(ty, Type::Scalar(_) | Type::Ptr { .. }) {
            return None;
        }
        let reg = |x: ExprId| match f.exprs[x].kind {
            Expr::Var(v) if matches!(self.homes[v.index()], Home::Reg(_)) => Some(v),
            _ => None,
        };
        // A base stands for what it copies; an index for its sum.
        let base_of = |x: ExprId| match self.known.resolve(reg(x)?) {
            (w, 0) => Some(w),
            _ => None,
        };
        let index_of = |x: ExprId, k: i64| {
            let (w, j) = self.known.resolve(reg(x)?);
            Some((Some(w), j.checked_add(k)?))
        };
        let small = |c: &Const| match c {
            Const::Int(k) if k.unsigned_abs() < 1 << 30 => Some(*k),
            _ => None,
        };
        let (base, (index, k)) = match &f.exprs[e].kind {
            Expr::Deref(p) => (base_of(*p)?, (None, 0)),
            Expr::Index(b, i) => {
                let base = base_of(*b)?;
                if !matches!(f.ty(*b), Type::Ptr { .. }) {
                    return None;
                }
                if types::value(f.ty(*i)).ok()?.bits() != 64 {
                    // A narrower index could wrap between two elements.
                    return None;
                }
                match &f.exprs[*i].kind {
                    Expr::Var(_) => (base, index_of(*i, 0)?),
                    Expr::Const(c) => (base, (None, small(c)?)),
                    Expr::Binary(op @ (BinOp::Add | BinOp::Sub), a, c) => {
                        let Expr::Const(c) = &f.exprs[*c].kind else {
                            return None;
                        };
                        let k = small(c)?;
                        (base, index_of(*a, if *op == BinOp::Add { k } else { -k })?)
                    }
                    _ => return None,
                }
            }
            _ => return None,
        };
        Some(Place { base, index, k, ty })
    }

    /// Variable `v` (in a register) was just assigned `e`: what it now
    /// stands for in places.
    pub(super) fn defined(&mut self, v: VarId, e: ExprId) {
        let block = self.b.current_block();
        self.known.at(block);
        let f = self.f;
        let reg = |x: ExprId| match f.exprs[x].kind {
            Expr::Var(w) if matches!(self.homes[w.index()], Home::Reg(_)) && w != v => Some(w),
            _ => None,
        };
        let wide = |t: &Type| match t {
            Type::Ptr { .. } => true,
            Type::Scalar(s) => s.is_int() && s.size() == 8,
            _ => false,
        };
        if f.ty(e) != &f.vars[v].ty || !wide(&f.vars[v].ty) {
            return;
        }
        let sum = match &f.exprs[e].kind {
            Expr::Var(_) => reg(e).map(|w| (w, 0)),
            Expr::Binary(op @ (BinOp::Add | BinOp::Sub), a, c)
                if matches!(f.vars[v].ty, Type::Scalar(_)) =>
            {
                match (&f.exprs[*c].kind, reg(*a)) {
                    (Expr::Const(Const::Int(k)), Some(w)) if k.unsigned_abs() < 1 << 30 => {
                        Some((w, if *op == BinOp::Add { *k } else { -*k }))
                    }
                    _ => None,
                }
            }
            _ => None,
        };
        if let Some((w, k)) = sum {
            let (w, j) = self.known.resolve(w);
            self.known.sums.push((v, w, j + k));
        }
    }

    /// The value at place `e` (a scalar or pointer element), reusing one
    /// the block knows.
    pub(super) fn load_place(&mut self, e: ExprId, ty: ir::Type) -> Result<ir::Value> {
        let block = self.b.current_block();
        self.known.at(block);
        let place = self.known_place(e);
        if let Some(x) = place.as_ref().and_then(|p| self.known.find(p)) {
            return Ok(x);
        }
        let addr = self.place_addr(e)?;
        let x = self.b.ins().load(ty, MemFlags::new(), addr, 0);
        if let Some(p) = place {
            self.known.remember(p, x);
        }
        Ok(x)
    }

    /// Stores `x` (of the place's type) at place `e`.
    pub(super) fn store_place(&mut self, e: ExprId, x: ir::Value) -> Result<()> {
        let addr = self.place_addr(e)?;
        self.b.ins().store(MemFlags::new(), x, addr, 0);
        let block = self.b.current_block();
        self.known.at(block);
        match self.known_place(e) {
            Some(p) => {
                self.known.values.retain(|(q, _)| !q.may_overlap(&p));
                self.known.remember(p, x);
            }
            None => self.known.clear(),
        }
        Ok(())
    }
}
