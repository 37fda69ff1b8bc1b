//! Which loops are vectorized, and what the vector code must check at run
//! time: the analysis half of [`vector`](super).

use crate::ir::{BinOp, Block, Const, Expr, ExprId, Function, Scalar, Stmt, StmtKind, Type};
use crate::ir::{UnOp, VarId};
use std::collections::HashSet;

/// Most pairs of accesses whose address ranges are compared before the
/// vector loop runs; a loop needing more stays scalar.
const MAX_PAIRS: usize = 32;

/// One access to memory in the loop body: `base[i + offset]`.
pub(in crate::exec::jit) struct Access {
    pub base: VarId,
    /// The invariant part of the index (`None`: the index is `i`).
    pub offset: Option<ExprId>,
    pub store: bool,
    /// Bytes per element.
    pub size: u64,
}

/// A loop the vector code can run: `for (..; i < bound; i = i + 1)` whose
/// body is straight-line element-wise code.
pub(in crate::exec::jit) struct Plan {
    /// The induction variable (a signed 32- or 64-bit integer).
    pub var: VarId,
    pub bound: ExprId,
    /// Elements per vector (128 bits of them).
    pub lanes: u32,
    /// The variables the body declares: each holds one vector.
    pub locals: HashSet<VarId>,
    /// Pairs of accesses (numbers into `accesses`) to different base
    /// pointers, one a store, whose ranges must not overlap.
    pub pairs: Vec<(usize, usize)>,
    pub accesses: Vec<Access>,
    /// Expressions in the body with one value through the loop: computed
    /// as one value, then copied into every lane.
    pub invariants: HashSet<ExprId>,
}

/// The plan for `for (init; cond; step) body`, or `None` where the loop
/// is not of the shape the vector code keeps exact. `reg(v)`: `v` lives
/// in a register (its address is never taken, it is not a local array).
pub(in crate::exec::jit) fn plan(
    f: &Function,
    cond: ExprId,
    step: &Stmt,
    body: &Block,
    reg: &dyn Fn(VarId) -> bool,
) -> Option<Plan> {
    let var = induction(f, step).filter(|&i| reg(i))?;
    let Expr::Binary(BinOp::Lt, lhs, bound) = f.exprs[cond].kind else {
        return None;
    };
    if f.exprs[lhs].kind != Expr::Var(var) || f.ty(bound) != &f.vars[var].ty {
        return None;
    }
    let declared = body
        .iter()
        .filter_map(|s| match s.kind {
            StmtKind::Decl { var, .. } => Some(var),
            _ => None,
        })
        .collect();
    let mut p = Planner {
        f,
        var,
        reg,
        lanes: None,
        declared,
        locals: HashSet::new(),
        accesses: Vec::new(),
        invariants: HashSet::new(),
    };
    if !p.invariant(bound) {
        return None;
    }
    for s in body {
        p.stmt(s)?;
    }
    let pairs = p.pairs()?;
    Some(Plan {
        var,
        bound,
        lanes: p.lanes?,
        locals: p.locals,
        pairs,
        accesses: p.accesses,
        invariants: p.invariants,
    })
}

/// `i` of a step `i = i + 1`, `i` a signed 32- or 64-bit integer.
fn induction(f: &Function, step: &Stmt) -> Option<VarId> {
    let StmtKind::Assign { place, value } = step.kind else {
        return None;
    };
    let Expr::Var(i) = f.exprs[place].kind else {
        return None;
    };
    let Expr::Binary(BinOp::Add, a, one) = f.exprs[value].kind else {
        return None;
    };
    let signed = matches!(f.vars[i].ty, Type::Scalar(Scalar::I32 | Scalar::I64));
    let one = matches!(f.exprs[one].kind, Expr::Const(Const::Int(1)));
    (signed && one && f.exprs[a].kind == Expr::Var(i)).then_some(i)
}

struct Planner<'a> {
    f: &'a Function,
    var: VarId,
    reg: &'a dyn Fn(VarId) -> bool,
    lanes: Option<u32>,
    /// Every variable the body declares.
    declared: HashSet<VarId>,
    /// Those declared so far (in statement order).
    locals: HashSet<VarId>,
    accesses: Vec<Access>,
    invariants: HashSet<ExprId>,
}

impl Planner<'_> {
    fn stmt(&mut self, s: &Stmt) -> Option<()> {
        match &s.kind {
            StmtKind::Decl { var, init } => {
                let ty = self.f.vars[*var].ty;
                if !(self.reg)(*var) || !(lane_type(&ty) || ty == BOOL) {
                    return None;
                }
                if let Some(e) = init {
                    self.value(*e, &ty)?;
                }
                self.locals.insert(*var);
            }
            StmtKind::Assign { place, value } => {
                let ty = *self.f.ty(*place);
                match self.f.exprs[*place].kind {
                    Expr::Var(v) if self.locals.contains(&v) => {}
                    Expr::Index(..) if lane_type(&ty) => self.access(*place, true)?,
                    _ => return None,
                }
                self.value(*value, &ty)?;
            }
            _ => return None,
        }
        Some(())
    }

    /// Checks that `e`, of type `ty`, has a vector form.
    fn value(&mut self, e: ExprId, ty: &Type) -> Option<()> {
        let f = self.f;
        if f.ty(e) != ty {
            return None;
        }
        if *ty == BOOL {
            return self.mask(e);
        }
        self.lanes_of(ty)?;
        if self.invariant(e) {
            self.invariants.insert(e);
            return Some(());
        }
        match f.exprs[e].kind {
            Expr::Var(v) if self.locals.contains(&v) => Some(()),
            Expr::Index(..) => self.access(e, false),
            Expr::Unary(UnOp::Neg, a) => self.value(a, ty),
            Expr::Unary(UnOp::BitNot, a) if !is_float(ty) => self.value(a, ty),
            Expr::Binary(op, a, b) if arithmetic(op, ty) => {
                self.value(a, ty)?;
                self.value(b, ty)
            }
            Expr::Select(c, a, b) => {
                // The arms run on every lane: neither may read memory.
                (self.pure(a) && self.pure(b)).then_some(())?;
                self.mask(c)?;
                self.value(a, ty)?;
                self.value(b, ty)
            }
            _ => None,
        }
    }

    /// Checks that the `bool` `e` has a vector form: a lane mask.
    fn mask(&mut self, e: ExprId) -> Option<()> {
        let f = self.f;
        match f.exprs[e].kind {
            Expr::Var(v) if self.locals.contains(&v) => Some(()),
            Expr::Unary(UnOp::Not, a) if f.ty(a) == &BOOL => self.mask(a),
            Expr::Binary(BinOp::And | BinOp::Or, a, b) => {
                (self.pure(a) && self.pure(b)).then_some(())?;
                self.mask(a)?;
                self.mask(b)
            }
            Expr::Binary(op, a, b) if op.is_comparison() => {
                let ty = *f.ty(a);
                (lane_type(&ty) && f.ty(b) == &ty).then_some(())?;
                self.value(a, &ty)?;
                self.value(b, &ty)
            }
            _ => None,
        }
    }

    /// Checks the place `base[index]`; records the access.
    fn access(&mut self, e: ExprId, store: bool) -> Option<()> {
        let f = self.f;
        let Expr::Index(base, index) = f.exprs[e].kind else {
            return None;
        };
        let ty = *f.ty(e);
        self.lanes_of(&ty)?;
        let Expr::Var(base) = f.exprs[base].kind else {
            return None;
        };
        let pointer = matches!(f.vars[base].ty, Type::Ptr { .. } | Type::Array { .. });
        if !pointer || !self.invariant_var(base) || f.ty(index) != &f.vars[self.var].ty {
            return None;
        }
        let is_i = |x: ExprId| f.exprs[x].kind == Expr::Var(self.var);
        let offset = match f.exprs[index].kind {
            _ if is_i(index) => None,
            Expr::Binary(BinOp::Add, a, b) if is_i(a) && self.invariant(b) => Some(b),
            Expr::Binary(BinOp::Add, a, b) if is_i(b) && self.invariant(a) => Some(a),
            _ => return None,
        };
        let size = ty.size()?;
        self.accesses.push(Access {
            base,
            offset,
            store,
            size,
        });
        Some(())
    }

    /// All vector values have `lanes` elements: `ty`'s size decides it.
    fn lanes_of(&mut self, ty: &Type) -> Option<()> {
        if !lane_type(ty) {
            return None;
        }
        let lanes = 16 / ty.size()? as u32;
        match self.lanes {
            Some(l) if l != lanes => None,
            _ => {
                self.lanes = Some(lanes);
                Some(())
            }
        }
    }

    /// True if `v` keeps its value through the loop: it lives in a
    /// register and is neither the induction variable nor set in the body.
    fn invariant_var(&self, v: VarId) -> bool {
        (self.reg)(v) && v != self.var && !self.declared.contains(&v)
    }

    /// True if `e` has one value through the loop and computing it cannot
    /// fault: constants and invariant variables under operators that
    /// neither trap nor read memory.
    fn invariant(&self, e: ExprId) -> bool {
        let f = self.f;
        let here = match &f.exprs[e].kind {
            Expr::Var(v) => self.invariant_var(*v),
            Expr::Const(c) => !matches!(c, Const::Str(_)),
            Expr::FuncAddr(_) => false,
            Expr::Binary(BinOp::Div | BinOp::Rem, ..) => is_float(f.ty(e)),
            Expr::Unary(..) | Expr::Binary(..) | Expr::Cast(_) | Expr::Select(..) => true,
            Expr::Index(..)
            | Expr::Deref(_)
            | Expr::AddrOf(_)
            | Expr::Call(..)
            | Expr::Intrinsic(..)
            | Expr::Field(..) => false,
        };
        let mut ok = here;
        f.for_each_child(e, |c| ok = ok && self.invariant(c));
        ok
    }

    /// True if `e` reads no memory and calls nothing.
    fn pure(&self, e: ExprId) -> bool {
        let here = !matches!(
            self.f.exprs[e].kind,
            Expr::Index(..)
                | Expr::Deref(_)
                | Expr::Call(..)
                | Expr::Intrinsic(..)
                | Expr::Field(..)
        );
        let mut ok = here;
        self.f.for_each_child(e, |c| ok = ok && self.pure(c));
        ok
    }

    /// The pairs of accesses to check for overlap before the vector loop:
    /// a store and an access through another pointer. Through one pointer
    /// that is stored to, every access must use the same index (lanes
    /// then read and write the elements their own iterations would).
    fn pairs(&self) -> Option<Vec<(usize, usize)>> {
        let acc = &self.accesses;
        let mut pairs = Vec::new();
        for (s, a) in acc.iter().enumerate().filter(|(_, a)| a.store) {
            for (o, b) in acc.iter().enumerate() {
                if b.base == a.base {
                    if !self.same_offset(a.offset, b.offset) || b.size != a.size {
                        return None;
                    }
                } else if !(b.store && o < s) {
                    pairs.push((s, o));
                }
            }
        }
        (pairs.len() <= MAX_PAIRS).then_some(pairs)
    }

    fn same_offset(&self, a: Option<ExprId>, b: Option<ExprId>) -> bool {
        match (a, b) {
            (None, None) => true,
            (Some(a), Some(b)) => same_expr(self.f, a, b),
            _ => false,
        }
    }
}

const BOOL: Type = Type::Scalar(Scalar::Bool);

/// Element types of 128-bit vectors: 32- and 64-bit integers and floats.
fn lane_type(t: &Type) -> bool {
    matches!(
        t,
        Type::Scalar(
            Scalar::I32 | Scalar::U32 | Scalar::I64 | Scalar::U64 | Scalar::F32 | Scalar::F64
        )
    )
}

fn is_float(t: &Type) -> bool {
    t.as_scalar().is_some_and(Scalar::is_float)
}

/// Operators computed lane by lane exactly as on one value (no integer
/// division, which traps, and no shifts, whose counts C bounds).
fn arithmetic(op: BinOp, ty: &Type) -> bool {
    match op {
        BinOp::Add | BinOp::Sub | BinOp::Mul => true,
        BinOp::Div => is_float(ty),
        BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor => !is_float(ty),
        _ => false,
    }
}

/// True if `a` and `b` are the same expression tree.
fn same_expr(f: &Function, a: ExprId, b: ExprId) -> bool {
    let (x, y) = (&f.exprs[a], &f.exprs[b]);
    if x.ty != y.ty {
        return false;
    }
    match (&x.kind, &y.kind) {
        (Expr::Var(u), Expr::Var(v)) => u == v,
        (Expr::Const(c), Expr::Const(d)) => c == d,
        (Expr::Unary(o, p), Expr::Unary(q, r)) => o == q && same_expr(f, *p, *r),
        (Expr::Cast(p), Expr::Cast(r)) => same_expr(f, *p, *r),
        (Expr::Binary(o, p, q), Expr::Binary(r, s, t)) => {
            o == r && same_expr(f, *p, *s) && same_expr(f, *q, *t)
        }
        (Expr::Select(p, q, r), Expr::Select(s, t, u)) => {
            same_expr(f, *p, *s) && same_expr(f, *q, *t) && same_expr(f, *r, *u)
        }
        _ => false,
    }
}
