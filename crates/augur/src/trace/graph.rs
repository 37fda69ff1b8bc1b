//! The trace graph: what the runs of one extraction recorded.
//!
//! Every first-stage operation becomes one [`Node`], keyed by its tag. Runs
//! link nodes into a graph: straight-line successors, the two sides of a
//! branch, back-edges that close loops and links to nodes another run
//! already recorded (memoization). The graph is the input of structuring.

use super::tag::Tag;
use crate::ir::{BinOp, Const, FuncId, SrcLoc, Type, UnOp, VarId};

crate::ir::entity!(
    /// Handle of a node in the trace graph.
    NodeId,
    "n"
);

/// An operand of an operation: a variable or a constant.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Operand {
    /// A variable's current value.
    Var(VarId),
    /// A constant of the given type.
    Const(Const, Type),
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
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
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
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
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
    pub annotations: Vec<String>,
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
