//! The trace graph: what the runs of one extraction recorded.
//!
//! Every first-stage operation becomes one [`Node`], keyed by its tag. Runs
//! link nodes into a graph: straight-line successors, the two sides of a
//! branch, back-edges that close loops and links to nodes another run
//! already recorded (memoization). The graph is the input of structuring.

use super::tag::Tag;
use crate::ir::{BinOp, Const, FuncId, Scalar, SrcLoc, Type, UnOp, VarId};

crate::ir::entity!(
    /// Handle of a node in the trace graph.
    NodeId,
    "n"
);

/// An operand of an operation: a variable or a constant. Scalar constants
/// are held inline and others boxed, so that an operation stays small: the
/// engine builds, moves and compares one for every operation it replays.
/// Build constants with [`Operand::constant`], which picks the one form of
/// each constant.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Operand {
    /// A variable's current value.
    Var(VarId),
    /// A scalar constant: `Const::Int`'s value, a float's bits or 0/1 for
    /// `bool`, with its type.
    Scalar(u64, Scalar),
    /// Any other constant (a string, null, a constant of pointer type).
    Const(Box<(Const, Type)>),
}

impl Operand {
    /// The constant `c` of type `ty`.
    #[inline]
    pub fn constant(c: Const, ty: Type) -> Operand {
        let bits = match (&c, ty) {
            (Const::Int(i), Type::Scalar(s)) if s.is_int() => Some((*i as u64, s)),
            (Const::F32(x), Type::Scalar(s @ Scalar::F32)) => Some((u64::from(x.to_bits()), s)),
            (Const::F64(x), Type::Scalar(s @ Scalar::F64)) => Some((x.to_bits(), s)),
            (Const::Bool(b), Type::Scalar(s @ Scalar::Bool)) => Some((u64::from(*b), s)),
            _ => None,
        };
        match bits {
            Some((b, s)) => Operand::Scalar(b, s),
            None => Operand::Const(Box::new((c, ty))),
        }
    }

    /// The constant and its type, if this is one.
    pub fn as_const(&self) -> Option<(Const, Type)> {
        match self {
            Operand::Var(_) => None,
            Operand::Scalar(b, s) => {
                let c = match s {
                    Scalar::Bool => Const::Bool(*b != 0),
                    Scalar::F32 => Const::F32(f32::from_bits(*b as u32)),
                    Scalar::F64 => Const::F64(f64::from_bits(*b)),
                    _ => Const::Int(*b as i64),
                };
                Some((c, Type::Scalar(*s)))
            }
            Operand::Const(c) => Some((c.0.clone(), c.1)),
        }
    }
}

/// A memory or variable location.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Place {
    /// A variable.
    Var(VarId),
    /// `base[index]`.
    Index(Operand, Operand),
    /// `*ptr`.
    Deref(Operand),
}

/// The value computed by a `Let`.
#[derive(Clone, Debug, Eq)]
pub enum OpExpr {
    /// A copy of an operand (constants bound to a temporary).
    Use(Operand),
    Unary(UnOp, Operand),
    Binary(BinOp, Operand, Operand),
    Cast(Operand),
    Load(Place),
    AddrOf(Place),
    Call(FuncId, Vec<Operand>),
    Select(Operand, Operand, Operand),
}

/// One first-stage operation. Operations that define a variable (`Let`,
/// `Decl`) do not name it: the node's [`Node::def`] does, so that a replay
/// can compare operations before it knows the variable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Op {
    /// A temporary holding `expr`, of type `ty`.
    Let { ty: Type, expr: OpExpr },
    /// A user variable, optionally initialised.
    Decl {
        ty: Type,
        init: Option<Operand>,
        hint: Option<String>,
    },
    /// `place = value`.
    Assign { place: Place, value: Operand },
    /// A call for its effects.
    Eval(OpExpr),
    /// A decision of the oracle on `cond`.
    Branch(Operand),
    /// The closure returned.
    Return(Option<Operand>),
    /// A GPU kernel launch of `grid` blocks of `block` threads begins. Two
    /// `Decl`s of its indices (block, then thread) follow, then the body,
    /// which ends at the matching [`Op::LaunchEnd`]: structuring makes the
    /// stretch one [`StmtKind::Launch`](crate::ir::StmtKind::Launch).
    Launch { grid: u32, block: u32 },
    /// The innermost open launch's body ends.
    LaunchEnd,
}

/// As derived, but inlined: every replayed operation is compared with its
/// recorded node (2% fewer instructions replaying 128 unrolled ifs).
impl PartialEq for OpExpr {
    #[inline]
    fn eq(&self, other: &OpExpr) -> bool {
        use OpExpr::*;
        match (self, other) {
            (Use(a), Use(b)) | (Cast(a), Cast(b)) => a == b,
            (Unary(u, a), Unary(v, b)) => u == v && a == b,
            (Binary(o, a, b), Binary(p, c, d)) => o == p && a == c && b == d,
            (Load(a), Load(b)) | (AddrOf(a), AddrOf(b)) => a == b,
            (Call(f, a), Call(g, b)) => f == g && a == b,
            (Select(a, b, c), Select(d, e, f)) => a == d && b == e && c == f,
            _ => false,
        }
    }
}

/// Where control goes after a node.
#[derive(Clone, Debug, Default)]
pub enum Succ {
    /// Not explored yet (or, for `Return`, nothing).
    #[default]
    Open,
    /// The next operation.
    Next(NodeId),
    /// The two sides of a branch; `None` while unexplored.
    Branch(Option<NodeId>, Option<NodeId>),
}

/// A recorded operation.
#[derive(Clone, Debug)]
pub struct Node {
    /// The operation.
    pub op: Op,
    /// The variable it defines, if any.
    pub def: Option<VarId>,
    /// User annotations attached to it.
    pub annotations: Vec<crate::ir::Annotation>,
    /// The user's line.
    pub loc: SrcLoc,
    /// Program point without the plain-loop salt (for `never_close`).
    pub base: Tag,
    /// Program point: the memoization key together with `occ`.
    pub key: Tag,
    /// How many times `key` occurred earlier in the recording run.
    pub occ: u32,
    /// Successors.
    pub succ: Succ,
}

impl Node {
    /// The successors that exist, in order (then before else).
    pub fn successors(&self) -> impl Iterator<Item = NodeId> + '_ {
        let (a, b) = match &self.succ {
            Succ::Open => (None, None),
            Succ::Next(n) => (Some(*n), None),
            Succ::Branch(t, e) => (*t, *e),
        };
        a.into_iter().chain(b)
    }
}

/// `op` with every variable `v` replaced by `f(v)`, in operand order.
pub fn map_vars(op: &Op, f: &mut impl FnMut(VarId) -> VarId) -> Op {
    fn operand(o: &Operand, f: &mut impl FnMut(VarId) -> VarId) -> Operand {
        match o {
            Operand::Var(x) => Operand::Var(f(*x)),
            c => c.clone(),
        }
    }
    fn place(p: &Place, f: &mut impl FnMut(VarId) -> VarId) -> Place {
        match p {
            Place::Var(x) => Place::Var(f(*x)),
            Place::Index(a, b) => Place::Index(operand(a, f), operand(b, f)),
            Place::Deref(a) => Place::Deref(operand(a, f)),
        }
    }
    fn expr(e: &OpExpr, f: &mut impl FnMut(VarId) -> VarId) -> OpExpr {
        match e {
            OpExpr::Use(a) => OpExpr::Use(operand(a, f)),
            OpExpr::Unary(u, a) => OpExpr::Unary(*u, operand(a, f)),
            OpExpr::Binary(b, x, y) => OpExpr::Binary(*b, operand(x, f), operand(y, f)),
            OpExpr::Cast(a) => OpExpr::Cast(operand(a, f)),
            OpExpr::Load(p) => OpExpr::Load(place(p, f)),
            OpExpr::AddrOf(p) => OpExpr::AddrOf(place(p, f)),
            OpExpr::Call(g, args) => OpExpr::Call(*g, args.iter().map(|a| operand(a, f)).collect()),
            OpExpr::Select(c, x, y) => OpExpr::Select(operand(c, f), operand(x, f), operand(y, f)),
        }
    }
    match op {
        Op::Let { ty, expr: e } => Op::Let {
            ty: *ty,
            expr: expr(e, f),
        },
        Op::Decl { ty, init, hint } => Op::Decl {
            ty: *ty,
            init: init.as_ref().map(|o| operand(o, f)),
            hint: hint.clone(),
        },
        Op::Assign { place: p, value } => Op::Assign {
            place: place(p, f),
            value: operand(value, f),
        },
        Op::Eval(e) => Op::Eval(expr(e, f)),
        Op::Branch(c) => Op::Branch(operand(c, f)),
        Op::Return(r) => Op::Return(r.as_ref().map(|o| operand(o, f))),
        Op::Launch { .. } | Op::LaunchEnd => op.clone(),
    }
}

/// The variables `op` uses, in operand order.
pub fn vars_of(op: &Op) -> Vec<VarId> {
    let mut vars = Vec::new();
    map_vars(op, &mut |v| {
        vars.push(v);
        v
    });
    vars
}

/// `op` with every variable replaced by the same one: its shape.
pub fn erase_vars(op: &Op) -> Op {
    map_vars(op, &mut |_| VarId(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constants_have_one_form_and_come_back_unchanged() {
        let s = |s| Type::Scalar(s);
        let cases = [
            (Const::Int(-5), s(Scalar::I32)),
            (Const::Int(i64::MIN), s(Scalar::I64)),
            (Const::Int(-1), s(Scalar::U64)),
            (Const::Int(65), s(Scalar::Char)),
            (Const::F32(-0.0), s(Scalar::F32)),
            (Const::F32(f32::NAN), s(Scalar::F32)),
            (Const::F64(1.5), s(Scalar::F64)),
            (Const::Bool(true), s(Scalar::Bool)),
            (Const::Null, Type::ptr(s(Scalar::F32))),
            (Const::Int(0), Type::ptr(s(Scalar::U8))),
            (Const::Str("%d\n".into()), Type::cptr(s(Scalar::Char))),
        ];
        for (c, ty) in cases.iter().cloned() {
            let o = Operand::constant(c.clone(), ty);
            assert_eq!(o.as_const(), Some((c.clone(), ty)), "{c:?} {ty}");
            assert_eq!(o, Operand::constant(c.clone(), ty));
            let inline = matches!(o, Operand::Scalar(..));
            assert_eq!(inline, matches!(ty, Type::Scalar(_)), "{c:?} {ty}");
        }
        // Compared as code: bitwise for floats, types apart.
        let f = |x: f32| Operand::constant(Const::F32(x), s(Scalar::F32));
        assert_ne!(f(0.0), f(-0.0));
        assert_eq!(f(f32::NAN), f(f32::NAN));
        let one = |t| Operand::constant(Const::Int(1), s(t));
        assert_ne!(one(Scalar::I32), one(Scalar::U32));
        assert_eq!(std::mem::size_of::<Operand>(), 16);
    }
}
