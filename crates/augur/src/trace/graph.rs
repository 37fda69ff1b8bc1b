//! The trace graph: what the runs of one extraction recorded.
//!
//! Every first-stage operation becomes one [`Node`], keyed by its tag. Runs
//! link nodes into a graph: straight-line successors, the two sides of a
//! branch, back-edges that close loops and links to nodes another run
//! already recorded (memoization). The graph is the input of structuring.

use super::tag::{FastMap, FastSet, Tag};
use crate::ir::{Arena, BinOp, Const, FuncId, Intrinsic, Scalar, SrcLoc, Type, UnOp, VarId};

crate::ir::entity!(
    /// Handle of a node in the trace graph.
    NodeId,
    "n"
);

/// The graph one attempt records, with the indexes recording needs.
#[derive(Default)]
pub struct Graph {
    pub(super) nodes: Arena<NodeId, Node>,
    /// First node.
    pub(super) entry: Option<NodeId>,
    /// First node recorded per (key, occurrence); more in `memo_next`.
    memo: FastMap<(Tag, u32), NodeId>,
    /// Further nodes with the same key (different operations: rare).
    memo_next: FastMap<NodeId, NodeId>,
    /// The node that defines each variable.
    pub(super) var_def: FastMap<VarId, NodeId>,
    /// Variables some recorded operation assigns (see `decides_anew`).
    pub(super) assigned: FastSet<VarId>,
    /// Resumable machines and their members (see `points.rs`).
    pub(super) points: super::points::Points,
}

impl Graph {
    /// The first node recorded under `key` that `ok` accepts.
    pub(super) fn memo_find(&self, key: (Tag, u32), ok: impl Fn(NodeId) -> bool) -> Option<NodeId> {
        let mut cur = self.memo.get(&key).copied();
        while let Some(n) = cur {
            if ok(n) {
                return Some(n);
            }
            cur = self.memo_next.get(&n).copied();
        }
        None
    }

    /// Records node `n` under `key`, after those recorded before.
    pub(super) fn memo_insert(&mut self, key: (Tag, u32), n: NodeId) {
        if let Some(first) = self.memo.insert(key, n) {
            self.memo_next.insert(n, first);
        }
    }
}

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
    #[inline(always)]
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
    /// `ptr->field`: field `u32` of the struct `ptr` points to.
    Field(Operand, u32),
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
    /// The address of an extern function.
    FuncAddr(FuncId),
    /// An operation of the IR's own (a barrier, shared memory, an atomic).
    Intrinsic(Intrinsic, Vec<Operand>),
    Select(Operand, Operand, Operand),
}

/// One first-stage operation. Operations that define a variable (`Let`,
/// `Decl`) do not name it: the node's [`Node::def`] does, so that a replay
/// can compare operations before it knows the variable.
#[derive(Clone, Debug, Eq)]
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
    /// A parallel loop over `lo..hi` begins: the `Decl` of its index
    /// follows, then the body, which ends at the matching
    /// [`Op::ParallelEnd`]; structuring makes the stretch one `for` loop
    /// marked [`Annotation::Parallel`](crate::ir::Annotation::Parallel).
    Parallel {
        lo: Operand,
        hi: Operand,
        reductions: Vec<crate::ir::Reduction>,
        /// A loop whose iterations run in order: structuring makes it a
        /// plain `for` (the custom reductions' chunks run one).
        sequential: bool,
    },
    /// The innermost open parallel loop's body ends.
    ParallelEnd,
    /// A resumable point (`augur::resumable`): where the member whose
    /// key hashes to this value begins, or (`points::EXIT`) where its
    /// machine returns. It does nothing; other members' code jumps here.
    Point(u64),
}

impl Op {
    /// True if dropping the operation frees memory: a boxed constant, a
    /// call's arguments or a declaration's name. Equal operations agree on
    /// it, since it depends only on their variants.
    pub fn owns_heap(&self) -> bool {
        fn operand(o: &Operand) -> bool {
            matches!(o, Operand::Const(_))
        }
        fn place(p: &Place) -> bool {
            match p {
                Place::Var(_) => false,
                Place::Index(a, b) => operand(a) || operand(b),
                Place::Deref(a) | Place::Field(a, _) => operand(a),
            }
        }
        fn expr(e: &OpExpr) -> bool {
            match e {
                OpExpr::Use(a) | OpExpr::Unary(_, a) | OpExpr::Cast(a) => operand(a),
                OpExpr::Binary(_, a, b) => operand(a) || operand(b),
                OpExpr::Load(p) | OpExpr::AddrOf(p) => place(p),
                OpExpr::Call(..) | OpExpr::Intrinsic(..) => true,
                OpExpr::FuncAddr(_) => false,
                OpExpr::Select(a, b, c) => operand(a) || operand(b) || operand(c),
            }
        }
        match self {
            Op::Let { expr: e, .. } | Op::Eval(e) => expr(e),
            Op::Decl { init, hint, .. } => hint.is_some() || init.as_ref().is_some_and(operand),
            Op::Assign { place: p, value } => place(p) || operand(value),
            Op::Branch(a) => operand(a),
            Op::Return(a) => a.as_ref().is_some_and(operand),
            Op::Launch { .. } | Op::LaunchEnd | Op::ParallelEnd | Op::Point(_) => false,
            Op::Parallel { .. } => true,
        }
    }

    /// Disposes of an operation found equal to a recorded one whose
    /// [`owns_heap`](Op::owns_heap) is `recorded_owns_heap`. Replay builds,
    /// compares and discards an operation for every step; when the recorded
    /// twin owns no heap memory neither does this one, and its drop glue (a
    /// match over every variant and operand: 7% of the instructions of
    /// replaying 128 unrolled ifs) has nothing to do.
    #[inline(always)]
    pub fn release_as(self, recorded_owns_heap: bool) {
        if recorded_owns_heap {
            drop(self);
        } else {
            std::mem::forget(self);
        }
    }
}

/// As derived, but inlined (as for [`OpExpr`]): replay compares every
/// operation it builds with its recorded node.
impl PartialEq for Op {
    #[inline(always)]
    fn eq(&self, other: &Op) -> bool {
        use Op::*;
        match (self, other) {
            (Let { ty: s, expr: a }, Let { ty: t, expr: b }) => s == t && a == b,
            (Branch(a), Branch(b)) => a == b,
            (Assign { place: p, value: a }, Assign { place: q, value: b }) => a == b && p == q,
            (Eval(a), Eval(b)) => a == b,
            (
                Decl {
                    ty: s,
                    init: a,
                    hint: h,
                },
                Decl {
                    ty: t,
                    init: b,
                    hint: k,
                },
            ) => s == t && a == b && h == k,
            (Return(a), Return(b)) => a == b,
            (Launch { grid: g, block: b }, Launch { grid: h, block: c }) => g == h && b == c,
            (LaunchEnd, LaunchEnd) | (ParallelEnd, ParallelEnd) => true,
            (Point(a), Point(b)) => a == b,
            (
                Parallel {
                    lo: a,
                    hi: b,
                    reductions: r,
                    sequential: s,
                },
                Parallel {
                    lo: c,
                    hi: d,
                    reductions: q,
                    sequential: t,
                },
            ) => a == c && b == d && r == q && s == t,
            _ => false,
        }
    }
}

/// As derived, but inlined: every replayed operation is compared with its
/// recorded node (2% fewer instructions replaying 128 unrolled ifs).
impl PartialEq for OpExpr {
    #[inline(always)]
    fn eq(&self, other: &OpExpr) -> bool {
        use OpExpr::*;
        match (self, other) {
            (Use(a), Use(b)) | (Cast(a), Cast(b)) => a == b,
            (Unary(u, a), Unary(v, b)) => u == v && a == b,
            (Binary(o, a, b), Binary(p, c, d)) => o == p && a == c && b == d,
            (Load(a), Load(b)) | (AddrOf(a), AddrOf(b)) => a == b,
            (Call(f, a), Call(g, b)) => f == g && a == b,
            (Intrinsic(i, a), Intrinsic(j, b)) => i == j && a == b,
            (FuncAddr(f), FuncAddr(g)) => f == g,
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
    /// `op.owns_heap()`, kept so that a replayed operation equal to this
    /// one is released without running its drop glue (see
    /// [`Op::release_as`]).
    pub owns_heap: bool,
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

/// How an operation mentions a variable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// Its value is read: an operand, or a `Load` of the variable itself.
    Read,
    /// It is the place an `Assign` writes.
    Write,
    /// Its address is taken: the place of an `AddrOf`.
    Address,
}

/// The one walk over the variables an operation mentions, in operand order
/// (a place before the value assigned to it). It is written once and
/// instantiated twice, over shared and over mutable references: the match
/// arms bind by reference either way.
macro_rules! walk_vars {
    ($walk:ident $(, $m:tt)?) => {
        fn $walk<F: FnMut(&$($m)? VarId, Access)>(op: &$($m)? Op, f: &mut F) {
            fn operand<F: FnMut(&$($m)? VarId, Access)>(o: &$($m)? Operand, f: &mut F) {
                if let Operand::Var(v) = o {
                    f(v, Access::Read)
                }
            }
            fn place<F: FnMut(&$($m)? VarId, Access)>(p: &$($m)? Place, whole: Access, f: &mut F) {
                match p {
                    Place::Var(v) => f(v, whole),
                    Place::Index(b, i) => {
                        operand(b, f);
                        operand(i, f)
                    }
                    Place::Deref(q) | Place::Field(q, _) => operand(q, f),
                }
            }
            fn expr<F: FnMut(&$($m)? VarId, Access)>(e: &$($m)? OpExpr, f: &mut F) {
                match e {
                    OpExpr::Use(a) | OpExpr::Unary(_, a) | OpExpr::Cast(a) => operand(a, f),
                    OpExpr::Binary(_, a, b) => {
                        operand(a, f);
                        operand(b, f)
                    }
                    OpExpr::Load(p) => place(p, Access::Read, f),
                    OpExpr::AddrOf(p) => place(p, Access::Address, f),
                    OpExpr::Call(_, args) | OpExpr::Intrinsic(_, args) => {
                        for a in args {
                            operand(a, f)
                        }
                    }
                    OpExpr::FuncAddr(_) => {}
                    OpExpr::Select(c, a, b) => {
                        operand(c, f);
                        operand(a, f);
                        operand(b, f)
                    }
                }
            }
            match op {
                Op::Let { expr: e, .. } | Op::Eval(e) => expr(e, f),
                Op::Decl { init: o, .. } | Op::Return(o) => {
                    if let Some(o) = o {
                        operand(o, f)
                    }
                }
                Op::Assign { place: p, value } => {
                    place(p, Access::Write, f);
                    operand(value, f)
                }
                Op::Branch(c) => operand(c, f),
                Op::Parallel {
                    lo, hi, reductions, ..
                } => {
                    operand(lo, f);
                    operand(hi, f);
                    for r in reductions {
                        f(&$($m)? r.var, Access::Read)
                    }
                }
                Op::Launch { .. } | Op::LaunchEnd | Op::ParallelEnd | Op::Point(_) => {}
            }
        }
    };
}
walk_vars!(walk);
walk_vars!(walk_mut, mut);

impl Op {
    /// Calls `f` with every variable the operation mentions and how it
    /// mentions it, in operand order (a place before the value assigned to
    /// it).
    pub fn for_each_var(&self, mut f: impl FnMut(VarId, Access)) {
        walk(self, &mut |v, access| f(*v, access))
    }

    /// The operation with every variable `v` replaced by `f(v)`, in
    /// operand order.
    pub fn map_vars(&self, mut f: impl FnMut(VarId) -> VarId) -> Op {
        let mut op = self.clone();
        walk_mut(&mut op, &mut |v, _| *v = f(*v));
        op
    }

    /// The variable the operation assigns as a whole (`v = ..`), if any.
    pub fn assigned_var(&self) -> Option<VarId> {
        match self {
            Op::Assign {
                place: Place::Var(v),
                ..
            } => Some(*v),
            _ => None,
        }
    }

    /// The variables the operation mentions, in operand order.
    pub fn vars(&self) -> Vec<VarId> {
        let mut vars = Vec::new();
        self.for_each_var(|v, _| vars.push(v));
        vars
    }

    /// Where `self` and `other` are one operation on other variables: the
    /// pairs of variables in the same position that differ (`self`'s first),
    /// in operand order. `None` where they differ in more than variables.
    pub fn renamed_vars(&self, other: &Op) -> Option<Vec<(VarId, VarId)>> {
        // Equal shapes: the same operation with every variable one.
        let shape = |op: &Op| op.map_vars(|_| VarId(0));
        if shape(self) != shape(other) {
            return None;
        }
        let pairs = self.vars().into_iter().zip(other.vars());
        Some(pairs.filter(|(a, b)| a != b).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_walk_gives_each_variable_in_operand_order_with_its_access() {
        let v = |i| Operand::Var(VarId(i));
        let i32_ = Type::Scalar(Scalar::I32);
        let accesses = |op: &Op| {
            let mut seen = Vec::new();
            op.for_each_var(|x, a| seen.push((x.0, a)));
            seen
        };
        use Access::*;
        let assign = Op::Assign {
            place: Place::Var(VarId(1)),
            value: v(2),
        };
        assert_eq!(accesses(&assign), [(1, Write), (2, Read)]);
        let store = Op::Assign {
            place: Place::Index(v(1), v(2)),
            value: v(3),
        };
        assert_eq!(accesses(&store), [(1, Read), (2, Read), (3, Read)]);
        assert_eq!(assign.assigned_var(), Some(VarId(1)));
        assert_eq!(store.assigned_var(), None);
        let load = Op::Let {
            ty: i32_,
            expr: OpExpr::Load(Place::Var(VarId(4))),
        };
        assert_eq!(accesses(&load), [(4, Read)]);
        let addr = Op::Eval(OpExpr::AddrOf(Place::Var(VarId(5))));
        assert_eq!(accesses(&addr), [(5, Address)]);
        let call = Op::Eval(OpExpr::Call(FuncId(0), vec![v(6), v(7)]));
        assert_eq!(call.vars(), [VarId(6), VarId(7)]);
        let launch = Op::Launch { grid: 2, block: 3 };
        assert!(launch.vars().is_empty());
        // Mapping visits the same variables in the same order.
        let mut order = Vec::new();
        let moved = store.map_vars(|x| {
            order.push(x);
            VarId(x.0 + 10)
        });
        assert_eq!(order, store.vars());
        assert_eq!(moved.vars(), [VarId(11), VarId(12), VarId(13)]);
        assert_eq!(
            store.renamed_vars(&moved),
            Some(vec![
                (VarId(1), VarId(11)),
                (VarId(2), VarId(12)),
                (VarId(3), VarId(13))
            ])
        );
        assert_eq!(store.renamed_vars(&store), Some(Vec::new()));
        assert_eq!(store.renamed_vars(&assign), None);
    }

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

/// Where the next node attaches.
#[derive(Clone, Copy, Debug)]
pub(super) enum Cursor {
    Root,
    After(NodeId),
    Side(NodeId, bool),
}
