//! Turns recorded operations into IR statements and expressions.

use super::cfg::Cond;
use crate::ir::{Arena, BinOp, Const, Expr, ExprId, Function, Scalar, Stmt, StmtKind, Type, VarId};
use crate::trace::graph::{Node, NodeId, Op, OpExpr, Operand, Place};

/// The IR expression for an operand (a fresh node per use).
pub fn operand(f: &mut Function, o: &Operand) -> ExprId {
    match o {
        Operand::Var(v) => {
            let ty = f.vars[*v].ty;
            f.expr(Expr::Var(*v), ty)
        }
        Operand::Scalar(..) | Operand::Const(_) => {
            let (c, ty) = o.as_const().expect("a constant");
            f.expr(Expr::Const(c), ty)
        }
    }
}

/// The IR expression for a place.
pub fn place(f: &mut Function, p: &Place) -> ExprId {
    match p {
        Place::Var(v) => operand(f, &Operand::Var(*v)),
        Place::Index(b, i) => {
            let b = operand(f, b);
            let i = operand(f, i);
            let ty = element(f.ty(b));
            f.expr(Expr::Index(b, i), ty)
        }
        Place::Deref(p) => {
            let p = operand(f, p);
            let ty = element(f.ty(p));
            f.expr(Expr::Deref(p), ty)
        }
        Place::Field(p, i) => {
            let p = operand(f, p);
            let st = element(f.ty(p));
            let d = f.expr(Expr::Deref(p), st);
            let ty = match st {
                Type::Struct(s) => s.fields[*i as usize].1,
                _ => Type::Void,
            };
            f.expr(Expr::Field(d, *i), ty)
        }
    }
}

fn element(t: &Type) -> Type {
    t.element().cloned().unwrap_or(Type::Void)
}

/// The IR expression computed by a `Let` of type `ty`.
pub fn op_expr(f: &mut Function, e: &OpExpr, ty: &Type) -> ExprId {
    let kind = match e {
        OpExpr::Use(o) => return operand(f, o),
        OpExpr::Load(p) => return place(f, p),
        OpExpr::Unary(op, a) => Expr::Unary(*op, operand(f, a)),
        OpExpr::Binary(op, a, b) => {
            let a = operand(f, a);
            Expr::Binary(*op, a, operand(f, b))
        }
        OpExpr::Cast(a) => Expr::Cast(operand(f, a)),
        OpExpr::AddrOf(p) => Expr::AddrOf(place(f, p)),
        OpExpr::Call(id, args) => Expr::Call(*id, args.iter().map(|a| operand(f, a)).collect()),
        OpExpr::FuncAddr(id) => Expr::FuncAddr(*id),
        OpExpr::Intrinsic(i, args) => {
            Expr::Intrinsic(*i, args.iter().map(|a| operand(f, a)).collect())
        }
        OpExpr::Select(c, a, b) => {
            let c = operand(f, c);
            let a = operand(f, a);
            Expr::Select(c, a, operand(f, b))
        }
    };
    f.expr(kind, *ty)
}

/// The statement for a straight-line node.
pub fn stmt(f: &mut Function, n: &Node) -> Stmt {
    let kind = match &n.op {
        Op::Let { ty, expr } => StmtKind::Decl {
            var: n.def.expect("let defines a variable"),
            init: Some(op_expr(f, expr, ty)),
        },
        Op::Decl { init, .. } => StmtKind::Decl {
            var: n.def.expect("decl defines a variable"),
            init: init.as_ref().map(|o| operand(f, o)),
        },
        Op::Assign { place: p, value } => {
            let p = place(f, p);
            StmtKind::Assign {
                place: p,
                value: operand(f, value),
            }
        }
        Op::Eval(e) => StmtKind::Eval(op_expr(f, e, &Type::Void)),
        Op::Return(v) => StmtKind::Return(v.as_ref().map(|o| operand(f, o))),
        Op::Branch(c) => StmtKind::Eval(operand(f, c)),
        // Markers that `launches` folds into one statement.
        &Op::Launch { grid, block } => StmtKind::Launch(crate::ir::Launch {
            grid,
            block,
            bid: super::launches::OPEN,
            tid: super::launches::OPEN,
            body: Vec::new(),
        }),
        Op::LaunchEnd => StmtKind::Label(super::launches::END),
        // `cfg::make_blocks` leaves points out of every block.
        Op::Point(_) => unreachable!("a resumable point in a block"),
        Op::Parallel {
            lo,
            hi,
            reductions,
            sequential,
        } => {
            let (lo, hi) = (operand(f, lo), operand(f, hi));
            let mut annotations = n.annotations.clone();
            if !sequential {
                annotations.push(crate::ir::Annotation::Parallel(reductions.clone()));
            }
            return Stmt {
                kind: super::parallel::open(lo, hi),
                annotations,
                loc: Some(n.loc),
            };
        }
        Op::ParallelEnd => StmtKind::Label(super::parallel::END),
    };
    Stmt {
        kind,
        annotations: n.annotations.clone(),
        loc: Some(n.loc),
    }
}

/// The condition of a block's branch, short-circuit operators included.
pub fn cond(f: &mut Function, nodes: &Arena<NodeId, Node>, c: &Cond) -> ExprId {
    match c {
        Cond::Node(n) => match &nodes[*n].op {
            Op::Branch(c) => operand(f, c),
            _ => f.expr(Expr::Const(Const::Bool(true)), Type::Scalar(Scalar::Bool)),
        },
        Cond::And(a, lets, b) | Cond::Or(a, lets, b) => {
            let op = if matches!(c, Cond::And(..)) {
                BinOp::And
            } else {
                BinOp::Or
            };
            let a = cond(f, nodes, a);
            let b = cond(f, nodes, b);
            // The absorbed lets are pure and read only here: fold them in.
            let mut defs = std::collections::HashMap::new();
            for &n in lets {
                if let (Op::Let { ty, expr }, Some(v)) = (&nodes[n].op, nodes[n].def) {
                    let e = op_expr(f, expr, ty);
                    substitute(f, e, &defs);
                    defs.insert(v, e);
                }
            }
            substitute(f, b, &defs);
            f.expr(Expr::Binary(op, a, b), Type::Scalar(Scalar::Bool))
        }
    }
}

/// Replaces reads of the variables in `defs` under `e` by (copies of) their
/// defining expressions.
fn substitute(f: &mut Function, e: ExprId, defs: &std::collections::HashMap<VarId, ExprId>) {
    if let Expr::Var(v) = f.exprs[e].kind {
        if let Some(&d) = defs.get(&v) {
            let copy = f.deep_copy(d);
            f.exprs[e] = f.exprs[copy].clone();
        }
        return;
    }
    let mut children = Vec::new();
    f.for_each_child(e, |c| children.push(c));
    for c in children {
        substitute(f, c, defs);
    }
}
