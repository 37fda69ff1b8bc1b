//! Parallel loops: a `for` loop whose iterations may run at once.
//!
//! [`augur::parallel_for`](crate::parallel_for) stages a loop
//! `for (int64_t i = lo; i < hi; i = i + 1) { body }` marked with
//! [`Annotation::Parallel`]. The mark is a permission, not a change of
//! meaning: the loop computes what it computes run in order, and a backend
//! may run its iterations at once because the rules below make every order,
//! and every split among threads, give the same result (up to the rounding
//! of float sums and products, which depends on the split, as in OpenMP):
//!
//! 1. the loop's header is `for (int64_t i = lo; i < hi; i = i + 1)`, `hi`
//!    a variable the body does not assign (so `lo` and `hi` are read once,
//!    before the first iteration, on every backend);
//! 2. no `break`, `return` or `goto` leaves the body (a `continue` ends its
//!    iteration);
//! 3. the body assigns no variable declared outside it but its
//!    [reductions](Reduction), and reads each reduction only to update it
//!    (`r = r op e`, checked where the loop is staged); variables declared in
//!    the body are each iteration's own;
//! 4. memory two iterations touch, one of them writing, is a data race: the
//!    interpreter's race check reports it.
//!
//! C prints `_Pragma("omp parallel for reduction(op: r)")` before the loop
//! (and compiles the unit with OpenMP), the JIT runs chunks of the range on
//! threads and combines their partial reductions in chunk order, and the
//! interpreter runs the iterations one after another with the race check.
//! A parallel loop inside another runs in order inside each iteration of the
//! outer one.

use super::{
    Annotation, BinOp, Block, Const, Expr, ExprId, Function, Scalar, Stmt, StmtKind, Type, VarId,
};

/// How a reduction combines its values (OpenMP's reduction identifiers).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    /// `+`: integers wrap, as `+` does.
    Sum,
    /// `*`.
    Product,
    /// The least value (floats: NaN values are ignored, as `x < r` is false for them).
    Min,
    /// The greatest value (floats: NaN values are ignored).
    Max,
    /// `&` of integers.
    BitAnd,
    /// `|` of integers.
    BitOr,
    /// `^` of integers.
    BitXor,
    /// `&&` of `bool`s.
    And,
    /// `||` of `bool`s.
    Or,
}

impl ReduceOp {
    /// Every operation.
    pub const ALL: [ReduceOp; 9] = [
        ReduceOp::Sum,
        ReduceOp::Product,
        ReduceOp::Min,
        ReduceOp::Max,
        ReduceOp::BitAnd,
        ReduceOp::BitOr,
        ReduceOp::BitXor,
        ReduceOp::And,
        ReduceOp::Or,
    ];

    /// The name the IR text form gives it.
    pub fn name(self) -> &'static str {
        match self {
            ReduceOp::Sum => "sum",
            ReduceOp::Product => "product",
            ReduceOp::Min => "min",
            ReduceOp::Max => "max",
            ReduceOp::BitAnd => "bitand",
            ReduceOp::BitOr => "bitor",
            ReduceOp::BitXor => "bitxor",
            ReduceOp::And => "and",
            ReduceOp::Or => "or",
        }
    }

    /// The operation named `name` in the text form.
    pub fn from_name(name: &str) -> Option<ReduceOp> {
        ReduceOp::ALL.into_iter().find(|op| op.name() == name)
    }

    /// OpenMP's reduction identifier.
    pub fn openmp(self) -> &'static str {
        match self {
            ReduceOp::Sum => "+",
            ReduceOp::Product => "*",
            ReduceOp::Min => "min",
            ReduceOp::Max => "max",
            ReduceOp::BitAnd => "&",
            ReduceOp::BitOr => "|",
            ReduceOp::BitXor => "^",
            ReduceOp::And => "&&",
            ReduceOp::Or => "||",
        }
    }

    /// True if the operation applies to values of scalar type `s`.
    pub fn applies_to(self, s: Scalar) -> bool {
        let number = !matches!(s, Scalar::Bool | Scalar::Char);
        let int = number && !s.is_float();
        match self {
            ReduceOp::Sum | ReduceOp::Product | ReduceOp::Min | ReduceOp::Max => number,
            ReduceOp::BitAnd | ReduceOp::BitOr | ReduceOp::BitXor => int,
            ReduceOp::And | ReduceOp::Or => s == Scalar::Bool,
        }
    }

    /// The value that changes nothing when combined (each thread's partial
    /// starts from it), of type `s`.
    pub fn identity(self, s: Scalar) -> Const {
        let (min, max) = int_range(s);
        match (self, s.is_float()) {
            (ReduceOp::Sum | ReduceOp::BitOr | ReduceOp::BitXor, false) => Const::Int(0),
            (ReduceOp::Product, false) => Const::Int(1),
            (ReduceOp::BitAnd, _) if s.is_signed() => Const::Int(-1),
            (ReduceOp::BitAnd, _) => Const::Int(max),
            (ReduceOp::Min, false) => Const::Int(max),
            (ReduceOp::Max, false) => Const::Int(min),
            (ReduceOp::Sum, true) => float(s, 0.0),
            (ReduceOp::Product, true) => float(s, 1.0),
            (ReduceOp::Min, true) => float(s, f64::INFINITY),
            (ReduceOp::Max, true) => float(s, f64::NEG_INFINITY),
            (ReduceOp::And, _) => Const::Bool(true),
            (ReduceOp::Or, _) => Const::Bool(false),
            (ReduceOp::BitOr | ReduceOp::BitXor, true) => Const::Int(0),
        }
    }

    /// `acc op x` as an expression of type `ty` (both operands are read
    /// once each, but for min and max, whose `x` is read twice: operands
    /// are variables or constants).
    pub fn combine(self, f: &mut Function, acc: ExprId, x: ExprId, ty: Type) -> ExprId {
        use super::BinOp;
        let bin = |f: &mut Function, op| f.expr(Expr::Binary(op, acc, x), ty);
        match self {
            ReduceOp::Sum => bin(f, BinOp::Add),
            ReduceOp::Product => bin(f, BinOp::Mul),
            ReduceOp::BitAnd => bin(f, BinOp::BitAnd),
            ReduceOp::BitOr => bin(f, BinOp::BitOr),
            ReduceOp::BitXor => bin(f, BinOp::BitXor),
            ReduceOp::And => bin(f, BinOp::And),
            ReduceOp::Or => bin(f, BinOp::Or),
            ReduceOp::Min | ReduceOp::Max => {
                let op = if self == ReduceOp::Min {
                    BinOp::Lt
                } else {
                    BinOp::Gt
                };
                let x2 = f.deep_copy(x);
                let acc2 = f.deep_copy(acc);
                let better = f.expr(Expr::Binary(op, x, acc), Type::Scalar(Scalar::Bool));
                f.expr(Expr::Select(better, x2, acc2), ty)
            }
        }
    }
}

fn float(s: Scalar, x: f64) -> Const {
    if s == Scalar::F32 {
        Const::F32(x as f32)
    } else {
        Const::F64(x)
    }
}

/// The least and greatest values of integer type `s`, as `i64` bit patterns
/// (`u64::MAX` is `-1`).
fn int_range(s: Scalar) -> (i64, i64) {
    match s {
        Scalar::I8 => (i8::MIN as i64, i8::MAX as i64),
        Scalar::I16 => (i16::MIN as i64, i16::MAX as i64),
        Scalar::I32 => (i32::MIN as i64, i32::MAX as i64),
        Scalar::U8 | Scalar::Char => (0, u8::MAX as i64),
        Scalar::U16 => (0, u16::MAX as i64),
        Scalar::U32 => (0, u32::MAX as i64),
        Scalar::U64 => (0, -1),
        _ => (i64::MIN, i64::MAX),
    }
}

/// One reduction of a parallel loop: variable `var`, declared before the
/// loop, ends as its value before the loop combined with every value the
/// iterations added.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Reduction {
    /// The variable (a scalar declared outside the loop).
    pub var: VarId,
    /// How values combine.
    pub op: ReduceOp,
}

/// A parallel loop's parts, read off its `for` statement.
#[derive(Clone, Copy, Debug)]
pub struct ParallelLoop<'a> {
    /// The loop index (an `int64_t` the header declares).
    pub index: VarId,
    /// The first index.
    pub lo: ExprId,
    /// The end of the range (a variable, rule 1).
    pub hi: VarId,
    /// The reductions.
    pub reductions: &'a [Reduction],
    /// The body.
    pub body: &'a super::Block,
}

/// The reductions of `s` when it is a parallel loop.
pub fn reductions(s: &Stmt) -> Option<&[Reduction]> {
    s.annotations.iter().find_map(|a| match a {
        Annotation::Parallel(r) => Some(r.as_slice()),
        _ => None,
    })
}

/// The parts of parallel loop `s` of `f`; `Err` says which rule its header
/// breaks, `Ok(None)` means `s` is not a parallel loop.
pub fn parts<'a>(f: &Function, s: &'a Stmt) -> Result<Option<ParallelLoop<'a>>, String> {
    let Some(reductions) = reductions(s) else {
        return Ok(None);
    };
    let StmtKind::For {
        init,
        cond,
        step,
        body,
    } = &s.kind
    else {
        return Err("a parallel mark on a statement that is not a `for` loop".into());
    };
    let i64t = Type::Scalar(Scalar::I64);
    let (index, lo) = match init.kind {
        StmtKind::Decl {
            var,
            init: Some(lo),
        } if f.vars.get(var).map(|d| d.ty) == Some(i64t) => (var, lo),
        _ => return Err("a parallel loop's header does not declare an int64_t index".into()),
    };
    let is_var = |e: ExprId, v: VarId| matches!(f.exprs[e].kind, Expr::Var(w) if w == v);
    let hi = match f.exprs[*cond].kind {
        Expr::Binary(super::BinOp::Lt, a, b) if is_var(a, index) => match f.exprs[b].kind {
            Expr::Var(hi) => hi,
            _ => return Err("a parallel loop's bound is not a variable".into()),
        },
        _ => return Err("a parallel loop's condition is not `i < hi`".into()),
    };
    let steps = match step.kind {
        StmtKind::Assign { place, value } if is_var(place, index) => {
            matches!(f.exprs[value].kind, Expr::Binary(super::BinOp::Add, a, b)
                if is_var(a, index) && matches!(f.exprs[b].kind, Expr::Const(Const::Int(1))))
        }
        _ => false,
    };
    if !steps {
        return Err("a parallel loop's step is not `i = i + 1`".into());
    }
    Ok(Some(ParallelLoop {
        index,
        lo,
        hi,
        reductions,
        body,
    }))
}

/// Every variable a statement in `b` assigns as a whole (`v = ..`), and
/// where, nested blocks included.
pub fn assigned_vars(f: &Function, b: &[Stmt], out: &mut Vec<(VarId, Option<super::SrcLoc>)>) {
    for s in b {
        match &s.kind {
            StmtKind::Assign { place, .. } => {
                if let Expr::Var(v) = f.exprs[*place].kind {
                    out.push((v, s.loc));
                }
            }
            StmtKind::For { step, .. } => {
                if let StmtKind::Assign { place, .. } = step.kind {
                    if let Expr::Var(v) = f.exprs[place].kind {
                        out.push((v, s.loc));
                    }
                }
            }
            _ => {}
        }
        for inner in s.kind.blocks() {
            assigned_vars(f, inner, out);
        }
    }
}

/// Every variable a statement in `b` declares (a `for` header's included).
pub fn declared_vars(b: &[Stmt], out: &mut Vec<VarId>) {
    for s in b {
        match &s.kind {
            StmtKind::Decl { var, .. } => out.push(*var),
            StmtKind::For { init, .. } => declared_vars(std::slice::from_ref(init), out),
            StmtKind::Launch(l) => out.extend([l.bid, l.tid]),
            _ => {}
        }
        for inner in s.kind.blocks() {
            declared_vars(inner, out);
        }
    }
}

/// Calls `each` on every parallel loop in `b`, outer loops first.
pub fn each_loop<'a>(b: &'a [Stmt], each: &mut impl FnMut(&'a Stmt)) {
    for s in b {
        if reductions(s).is_some() {
            each(s);
        }
        for inner in s.kind.blocks() {
            each_loop(inner, each);
        }
    }
}

/// True if `f` has a parallel loop (C compiles it with OpenMP).
pub fn has_loops(f: &Function) -> bool {
    let mut any = false;
    each_loop(&f.body, &mut |_| any = true);
    any
}

/// True if a parallel loop of `f` takes the `min` or `max` of floats (C
/// declares its identity, an infinity, with `<math.h>`).
pub fn has_float_extremum(f: &Function) -> bool {
    let mut any = false;
    each_loop(&f.body, &mut |s| {
        any |= reductions(s).unwrap_or(&[]).iter().any(|r| {
            matches!(r.op, ReduceOp::Min | ReduceOp::Max)
                && f.vars[r.var].ty.as_scalar().is_some_and(|s| s.is_float())
        })
    });
    any
}

/// Checks rules 1–3 of parallel loop `s` (the IR's invariant 9).
pub fn verify(f: &Function, s: &Stmt) -> Result<(), String> {
    let p = parts(f, s)?.expect("called on a parallel loop");
    let mut inside = vec![p.index];
    declared_vars(p.body, &mut inside);
    for r in p.reductions {
        let applies = f.vars[r.var]
            .ty
            .as_scalar()
            .is_some_and(|s| r.op.applies_to(s));
        if !applies || inside.contains(&r.var) {
            return Err(format!(
                "parallel loop reduction `{} {}` is not a scalar of a fitting type declared \
                 outside the loop",
                r.op.name(),
                f.var_name(r.var)
            ));
        }
    }
    let mut assigned = Vec::new();
    assigned_vars(f, p.body, &mut assigned);
    for (v, _) in assigned {
        let reduction = p.reductions.iter().any(|r| r.var == v);
        if v == p.hi || !(reduction || inside.contains(&v)) {
            return Err(format!(
                "a parallel loop's body assigns `{}`, declared outside it",
                f.var_name(v)
            ));
        }
    }
    leaves(p.body, 0)
}

/// `Err` if a `break` (outside an inner loop) or a `return` leaves `b`.
fn leaves(b: &[Stmt], loops: usize) -> Result<(), String> {
    for s in b {
        match &s.kind {
            StmtKind::Break if loops == 0 => {
                return Err("a `break` leaves a parallel loop's body".into())
            }
            StmtKind::Return(_) => return Err("a `return` inside a parallel loop's body".into()),
            _ => {}
        }
        let inner = loops + usize::from(s.kind.is_loop());
        for block in s.kind.blocks() {
            leaves(block, inner)?;
        }
    }
    Ok(())
}

/// `for (int64_t index = lo; index < end; index = index + 1) body`: the
/// header [`parts`] reads (rule 1), made in one place for every loop of
/// this shape (parallel loops, and the JIT's chunk and combining loops).
pub fn counted_for(
    f: &mut Function,
    index: VarId,
    lo: ExprId,
    end: ExprId,
    body: Block,
) -> StmtKind {
    let i64t = Type::Scalar(Scalar::I64);
    let var = |f: &mut Function| f.expr(Expr::Var(index), i64t);
    let i = var(f);
    let cond = f.expr(Expr::Binary(BinOp::Lt, i, end), Type::Scalar(Scalar::Bool));
    let (place, again) = (var(f), var(f));
    let one = f.expr(Expr::Const(Const::Int(1)), i64t);
    let next = f.expr(Expr::Binary(BinOp::Add, again, one), i64t);
    StmtKind::For {
        init: Box::new(Stmt::new(StmtKind::Decl {
            var: index,
            init: Some(lo),
        })),
        cond,
        step: Box::new(Stmt::new(StmtKind::Assign { place, value: next })),
        body,
    }
}
