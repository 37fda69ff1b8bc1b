//! Control-flow cleanup on the structured tree: drops `continue` at the end
//! of loop bodies, turns `if (c) {} else {B}` into `if (!c) {B}`, hoists
//! the rest after an `if` whose branch jumps away, makes `while (true) {
//! if (c) break; ... }` a `while (!c)`, and recovers `for` loops from
//! `init; while (cond) { ...; step; }`.

use super::effects::all_exprs;
use crate::ir::{Block, Const, Expr, ExprId, Function, Stmt, StmtKind, Type, UnOp};

/// Runs all cleanups.
pub fn run(f: &mut Function) {
    let mut body = std::mem::take(&mut f.body);
    block(f, &mut body, false);
    if f.ret == Type::Void && matches!(body.last().map(|s| &s.kind), Some(StmtKind::Return(None))) {
        body.pop();
    }
    f.body = body;
    let mut body = std::mem::take(&mut f.body);
    recover_for(f, &mut body);
    f.body = body;
}

fn ends_in_jump(b: &Block) -> bool {
    matches!(
        b.last().map(|s| &s.kind),
        Some(StmtKind::Break | StmtKind::Continue | StmtKind::Return(_) | StmtKind::Goto(_))
    )
}

fn block(f: &mut Function, b: &mut Block, loop_tail: bool) {
    let mut out: Block = Vec::with_capacity(b.len());
    let n = b.len();
    for (i, mut s) in std::mem::take(b).into_iter().enumerate() {
        let last = i + 1 == n;
        match &mut s.kind {
            StmtKind::If { then_, else_, .. } => {
                block(f, then_, loop_tail && last);
                block(f, else_, loop_tail && last);
            }
            StmtKind::While { body, .. } | StmtKind::For { body, .. } => block(f, body, true),
            StmtKind::Launch(l) => block(f, &mut l.body, false),
            _ => {}
        }
        if let StmtKind::While { cond, body } = &mut s.kind {
            loop_condition(f, cond, body);
        }
        if let StmtKind::If { cond, then_, else_ } = &mut s.kind {
            // Both sides empty and nothing to evaluate: nothing to decide.
            let empty = then_.is_empty() && else_.is_empty();
            if empty && s.annotations.is_empty() && !f.has_call(*cond) {
                continue;
            }
            if then_.is_empty() && !else_.is_empty() {
                *cond = negate(f, *cond);
                std::mem::swap(then_, else_);
            }
            if !else_.is_empty() && ends_in_jump(then_) {
                let rest = std::mem::take(else_);
                out.push(s);
                out.extend(rest);
                continue;
            }
            if !else_.is_empty() && ends_in_jump(else_) && !ends_in_jump(then_) {
                *cond = negate(f, *cond);
                std::mem::swap(then_, else_);
                let rest = std::mem::take(else_);
                out.push(s);
                out.extend(rest);
                continue;
            }
        }
        out.push(s);
    }
    if loop_tail && matches!(out.last().map(|s| &s.kind), Some(StmtKind::Continue)) {
        out.pop();
    }
    *b = out;
}

/// `while (true) { if (c) break; rest }` → `while (!c) { rest }`.
fn loop_condition(f: &mut Function, cond: &mut ExprId, body: &mut Block) {
    let is_true = matches!(f.exprs[*cond].kind, Expr::Const(Const::Bool(true)));
    if !is_true {
        return;
    }
    let Some(first) = body.first() else { return };
    let StmtKind::If {
        cond: c,
        then_,
        else_,
    } = &first.kind
    else {
        return;
    };
    let only_break = matches!(then_.as_slice(), [s] if s.kind == StmtKind::Break);
    if !only_break || !else_.is_empty() || !first.annotations.is_empty() {
        return;
    }
    *cond = negate(f, *c);
    body.remove(0);
}

/// `!c`, simplified: `!!c` → `c`, `!(a < b)` → `a >= b` on integers.
pub fn negate(f: &mut Function, c: ExprId) -> ExprId {
    match f.exprs[c].kind.clone() {
        Expr::Unary(UnOp::Not, inner) => inner,
        Expr::Const(Const::Bool(b)) => {
            f.exprs[c].kind = Expr::Const(Const::Bool(!b));
            c
        }
        Expr::Binary(op, a, b) if op.is_comparison() && !is_float(f.ty(a)) => {
            let neg = op.negated_comparison().expect("a comparison");
            f.exprs[c].kind = Expr::Binary(neg, a, b);
            c
        }
        _ => {
            let ty = *f.ty(c);
            f.expr(Expr::Unary(UnOp::Not, c), ty)
        }
    }
}

fn is_float(t: &Type) -> bool {
    t.as_scalar().is_some_and(|s| s.is_float())
}

/// `T i = a; while (c(i)) { body; i = s(i); }` → `for (T i = a; c; i = s) { body }`
/// when `body` has no `continue` of its own and `i` is not used after.
fn recover_for(f: &mut Function, b: &mut Block) {
    for s in b.iter_mut() {
        for inner in s.kind.blocks_mut() {
            recover_for(f, inner);
        }
    }
    let mut i = 0;
    while i + 1 < b.len() {
        if let Some(var) = for_candidate(f, &b[i], &b[i + 1]) {
            let used_after = b[i + 2..].iter().any(|s| mentions(f, s, var));
            if !used_after {
                let init = b.remove(i);
                let w = b.remove(i);
                let StmtKind::While { cond, mut body } = w.kind else {
                    unreachable!("checked by for_candidate")
                };
                let step = body.pop().expect("checked by for_candidate");
                let mut st = Stmt::new(StmtKind::For {
                    init: Box::new(init.clone()),
                    cond,
                    step: Box::new(step),
                    body,
                });
                st.annotations = [init.annotations, w.annotations].concat();
                st.loc = init.loc;
                b.insert(i, st);
            }
        }
        i += 1;
    }
}

fn for_candidate(f: &Function, init: &Stmt, w: &Stmt) -> Option<crate::ir::VarId> {
    let var = match &init.kind {
        StmtKind::Decl { var, init: Some(_) } => *var,
        _ => return None,
    };
    let StmtKind::While { cond, body } = &w.kind else {
        return None;
    };
    let StmtKind::Assign { place, value } = &body.last()?.kind else {
        return None;
    };
    let steps_var = matches!(f.exprs[*place].kind, Expr::Var(v) if v == var);
    let cond_reads = expr_mentions(f, *cond, var);
    let step_reads = expr_mentions(f, *value, var);
    let simple_step = !f.has_call(*value) && !reads_body_local(f, *value, body);
    (steps_var && cond_reads && step_reads && simple_step && !has_continue(body)).then_some(var)
}

/// The step runs outside the body's scope: it may not read the body's locals.
fn reads_body_local(f: &Function, x: ExprId, body: &Block) -> bool {
    body.iter().any(|s| match s.kind {
        StmtKind::Decl { var, .. } => expr_mentions(f, x, var),
        _ => false,
    })
}

fn has_continue(b: &Block) -> bool {
    b.iter().any(|s| match &s.kind {
        StmtKind::Continue => true,
        StmtKind::If { then_, else_, .. } => has_continue(then_) || has_continue(else_),
        _ => false, // inner loops own their continues
    })
}

fn expr_mentions(f: &Function, x: ExprId, var: crate::ir::VarId) -> bool {
    let mut found = false;
    f.for_each_var(x, &mut |v| found |= v == var);
    found
}

fn mentions(f: &Function, s: &Stmt, var: crate::ir::VarId) -> bool {
    let mut found = false;
    all_exprs(s, &mut |x, _| found |= expr_mentions(f, x, var));
    found
}
