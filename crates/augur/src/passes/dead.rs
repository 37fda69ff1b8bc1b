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
    let mut out = Vec::with_capacity(b.len());
    for mut s in std::mem::take(b) {
        let value = match &mut s.kind {
            StmtKind::Decl { var, init } if dead(f, *var) => Some(*init),
            StmtKind::Assign { place, value } => match f.exprs[*place].kind {
                Expr::Var(v) if dead(f, v) => Some(Some(*value)),
                _ => None,
            },
            StmtKind::If { then_, else_, .. } => {
                changed |= block(f, then_, dead);
                changed |= block(f, else_, dead);
                None
            }
            StmtKind::While { body, .. }
            | StmtKind::For { body, .. }
            | StmtKind::Launch(crate::ir::Launch { body, .. }) => {
                changed |= block(f, body, dead);
                None
            }
            _ => None,
        };
        match value {
            None => out.push(s),
            Some(init) => {
                changed = true;
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
        }
    }
    *b = out;
    changed
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
