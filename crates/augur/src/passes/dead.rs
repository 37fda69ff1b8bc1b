//! Dead code removal: declarations and assignments of variables nobody
//! reads. Calls in removed code are kept as statements of their own.

use super::effects::read_counts;
use crate::ir::{Block, Expr, ExprId, Function, Stmt, StmtKind, VarKind};

/// Removes dead variables until none is left.
pub fn run(f: &mut Function) {
    loop {
        let counts = read_counts(f);
        let dead = |f: &Function, v: crate::ir::VarId| {
            counts[v.0 as usize] == 0
                && !f.vars[v].addr_taken
                && !matches!(f.vars[v].kind, VarKind::Param(_))
        };
        let mut body = std::mem::take(&mut f.body);
        let changed = block(f, &mut body, &dead);
        f.body = body;
        if !changed {
            return;
        }
    }
}

fn block(
    f: &mut Function,
    b: &mut Block,
    dead: &impl Fn(&Function, crate::ir::VarId) -> bool,
) -> bool {
    let mut changed = false;
    let mut removes = false;
    for s in b.iter_mut() {
        match &mut s.kind {
            StmtKind::If { then_, else_, .. } => {
                changed |= block(f, then_, dead);
                changed |= block(f, else_, dead);
            }
            StmtKind::While { body, .. }
            | StmtKind::For { body, .. }
            | StmtKind::Launch(crate::ir::Launch { body, .. }) => {
                changed |= block(f, body, dead);
            }
            _ => removes |= dead_value(f, s, dead).is_some(),
        }
    }
    // Most blocks lose nothing: only those that do are built anew.
    if !removes {
        return changed;
    }
    let mut out = Vec::with_capacity(b.len());
    for mut s in std::mem::take(b) {
        let Some(init) = dead_value(f, &s, dead) else {
            out.push(s);
            continue;
        };
        let mut calls = Vec::new();
        if let Some(x) = init {
            collect_calls(f, x, &mut calls);
        }
        for c in calls {
            let mut e = Stmt::new(StmtKind::Eval(c));
            e.loc = s.loc;
            e.annotations = std::mem::take(&mut s.annotations);
            out.push(e);
        }
    }
    *b = out;
    true
}

/// If `s` declares or assigns a dead variable: the value it computes
/// (`Some(None)`: a declaration without one).
fn dead_value(
    f: &Function,
    s: &Stmt,
    dead: &impl Fn(&Function, crate::ir::VarId) -> bool,
) -> Option<Option<ExprId>> {
    match &s.kind {
        StmtKind::Decl { var, init } if dead(f, *var) => Some(*init),
        StmtKind::Assign { place, value } => match f.exprs[*place].kind {
            Expr::Var(v) if dead(f, v) => Some(Some(*value)),
            _ => None,
        },
        _ => None,
    }
}

/// Calls and intrinsics in `x`, innermost first (C evaluates arguments
/// before the call).
fn collect_calls(f: &Function, x: ExprId, out: &mut Vec<ExprId>) {
    if matches!(f.exprs[x].kind, Expr::Call(..) | Expr::Intrinsic(..)) {
        out.push(x);
        return;
    }
    f.for_each_child(x, |c| collect_calls(f, c, out));
}
