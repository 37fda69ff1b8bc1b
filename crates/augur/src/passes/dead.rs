//! Dead code removal: declarations and assignments of variables nobody
//! reads. Calls in removed code are kept as statements of their own.

use super::effects::{count_reads, read_counts};
use crate::ir::{Block, Expr, ExprId, Function, Stmt, StmtKind, VarId, VarKind};

/// Removes dead variables until none is left.
pub fn run(f: &mut Function) {
    run_counted(f, &mut read_counts(f));
}

/// [`run`] with `counts`, the function's [`read_counts`], kept equal to
/// them: a removed statement's reads are taken off as it goes (those of
/// the calls it keeps stay), and each block is swept from its last
/// statement to its first, so a chain of values that only feed each other
/// goes in one sweep from its end. The sweeps go on until one removes
/// nothing (what is removed does not depend on the order: a variable once
/// unread stays unread).
pub fn run_counted(f: &mut Function, counts: &mut [u32]) {
    loop {
        let mut body = std::mem::take(&mut f.body);
        let changed = block(f, &mut body, counts);
        f.body = body;
        if !changed {
            break;
        }
    }
    debug_assert_eq!(counts, &read_counts(f)[..], "dead code's counts");
}

/// True if `v` is read nowhere and nothing else can see it.
fn is_dead(f: &Function, counts: &[u32], v: VarId) -> bool {
    counts[v.0 as usize] == 0
        && !f.vars[v].addr_taken
        && !matches!(f.vars[v].kind, VarKind::Param(_))
}

fn block(f: &Function, b: &mut Block, counts: &mut [u32]) -> bool {
    let mut changed = false;
    // The statements removed, last first, with the calls each keeps.
    let mut gone: Vec<(usize, Vec<ExprId>)> = Vec::new();
    for (i, s) in b.iter_mut().enumerate().rev() {
        match &mut s.kind {
            StmtKind::If { then_, else_, .. } => {
                changed |= block(f, else_, counts);
                changed |= block(f, then_, counts);
            }
            StmtKind::While { body, .. }
            | StmtKind::For { body, .. }
            | StmtKind::Launch(crate::ir::Launch { body, .. }) => {
                changed |= block(f, body, counts);
            }
            _ => {
                let Some(init) = dead_value(f, s, counts) else {
                    continue;
                };
                let mut calls = Vec::new();
                if let Some(x) = init {
                    collect_calls(f, x, &mut calls);
                    count_reads(f, x, counts, false);
                    for &c in &calls {
                        count_reads(f, c, counts, true);
                    }
                }
                gone.push((i, calls));
            }
        }
    }
    // Most blocks lose nothing: only those that do are built anew.
    if gone.is_empty() {
        return changed;
    }
    let mut out = Vec::with_capacity(b.len());
    let mut gone = gone.into_iter().rev().peekable();
    for (i, mut s) in std::mem::take(b).into_iter().enumerate() {
        let Some((_, calls)) = gone.next_if(|(k, _)| *k == i) else {
            out.push(s);
            continue;
        };
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
fn dead_value(f: &Function, s: &Stmt, counts: &[u32]) -> Option<Option<ExprId>> {
    match &s.kind {
        StmtKind::Decl { var, init } if is_dead(f, counts, *var) => Some(*init),
        StmtKind::Assign { place, value } => match f.exprs[*place].kind {
            Expr::Var(v) if is_dead(f, counts, v) => Some(Some(*value)),
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
