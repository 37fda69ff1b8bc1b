//! The CPU simulation of GPU launches: plain C that runs each kernel as its
//! loop nest, one phase at a time.
//!
//! A kernel whose threads meet at grid syncs cannot run thread after thread
//! as written: thread 0 would pass the barrier before thread 1 reached it.
//! [`simulate`] splits the body at its top-level syncs into phases and runs
//! every thread through phase 0, then every thread through phase 1, and so
//! on: exactly the orders a barrier allows. Threads keep no private values
//! across a barrier here (a value declared before a sync and used after it
//! is an [`Error::Kernel`]); the kernels DSLs emit compute each phase from
//! memory.

use super::kernel::{find_sync, is_sync, kernel_error, nest, rewrite_launches};
use crate::error::Error;
use crate::ir::{verify, Block, Const, Expr, Function, Stmt, StmtKind, VarId};

/// `f` with every launch replaced by its phases as loop nests: C that any C
/// compiler builds and the interpreter runs, with the kernels' meaning.
pub fn simulate(f: &Function) -> Result<Function, Error> {
    let mut out = f.clone();
    let body = std::mem::take(&mut out.body);
    out.body = sim_block(&mut out, body)?;
    verify::verify(&out).map_err(|e| Error::Internal {
        message: format!("the CPU simulation broke `{}`: {e}", f.name),
    })?;
    Ok(out)
}

fn sim_block(f: &mut Function, b: Block) -> Result<Block, Error> {
    rewrite_launches(f, b, &mut phases)
}

/// `bid`, `tid` declared once, then one loop nest per phase.
fn phases(f: &mut Function, s: &Stmt) -> Result<Block, Error> {
    let (bid, tid, parts, outer, inner) = {
        let n = nest(f, s)?;
        let parts = split_phases(f, n.body, s)?;
        (n.bid, n.tid, parts, n.outer.clone(), n.inner.clone())
    };
    let several = parts.len() > 1;
    let mut out = vec![decl(bid), decl(tid)];
    for (i, part) in parts.into_iter().enumerate() {
        let inner_loop = counted(f, &inner, tid, part);
        let mut outer_loop = counted(f, &outer, bid, vec![inner_loop]);
        if several {
            outer_loop.annotations = vec![format!("augur.cuda.kernel phase {i}")];
        }
        out.push(outer_loop);
    }
    check_phases(f, &out, s)?;
    Ok(out)
}

/// The body split at its top-level grid syncs; empty phases dropped.
fn split_phases(f: &Function, body: &Block, s: &Stmt) -> Result<Vec<Block>, Error> {
    let mut parts = vec![Vec::new()];
    for st in body {
        if is_sync(f, st) {
            parts.push(Vec::new());
        } else if let Some(loc) = find_sync(f, std::slice::from_ref(st)) {
            return Err(kernel_error(
                loc.or(s.loc),
                "grid_sync inside control flow of the kernel: the CPU simulation \
                 splits kernels only at top-level syncs"
                    .to_string(),
            ));
        } else {
            parts
                .last_mut()
                .expect("one part at least")
                .push(st.clone());
        }
    }
    parts.retain(|p| !p.is_empty());
    Ok(parts)
}

/// A value declared in one phase and used in a later one is out of scope.
fn check_phases(f: &Function, phases: &Block, s: &Stmt) -> Result<(), Error> {
    let mut probe = f.clone();
    probe.body = phases.clone();
    // Host variables the kernel reads are declared outside: make them
    // parameters of the probe so only the phases' own scoping is checked.
    for v in outside_vars(f, phases) {
        let n = probe.params.len() as u32;
        probe.vars[v].kind = crate::ir::VarKind::Param(n);
        probe.params.push(v);
    }
    match verify::verify(&probe) {
        Ok(()) => Ok(()),
        Err(e) => Err(kernel_error(
            s.loc,
            format!(
                "a value computed before a grid_sync is used after it; the CPU \
                 simulation runs each phase for all threads in turn ({e})"
            ),
        )),
    }
}

/// Variables used in `b` and declared nowhere in it.
fn outside_vars(f: &Function, b: &Block) -> Vec<VarId> {
    let mut used = std::collections::BTreeSet::new();
    let mut declared = std::collections::BTreeSet::new();
    fn walk(
        f: &Function,
        b: &Block,
        used: &mut std::collections::BTreeSet<VarId>,
        declared: &mut std::collections::BTreeSet<VarId>,
    ) {
        for s in b {
            if let StmtKind::Decl { var, .. } = s.kind {
                declared.insert(var);
            }
            if let StmtKind::For { init, .. } = &s.kind {
                if let StmtKind::Decl { var, .. } = init.kind {
                    declared.insert(var);
                }
            }
            super::kernel::each_expr(s, &mut |e| {
                f.for_each_var(e, &mut |v| {
                    used.insert(v);
                })
            });
            for blk in s.kind.blocks() {
                walk(f, blk, used, declared);
            }
        }
    }
    walk(f, b, &mut used, &mut declared);
    used.difference(&declared).copied().collect()
}

fn decl(v: VarId) -> Stmt {
    Stmt::new(StmtKind::Decl { var: v, init: None })
}

/// A copy of the counted loop `like` over `var` (declared outside), with `body`.
fn counted(f: &mut Function, like: &Stmt, var: VarId, body: Block) -> Stmt {
    let StmtKind::For { cond, step, .. } = &like.kind else {
        unreachable!("nest() checked the launch loops")
    };
    let (cond, step) = (*cond, step.clone());
    let ty = f.vars[var].ty.clone();
    let place = f.expr(Expr::Var(var), ty.clone());
    let zero = f.expr(Expr::Const(Const::Int(0)), ty);
    let init = Stmt::new(StmtKind::Assign { place, value: zero });
    let cond = f.deep_copy(cond);
    let step = copy_stmt(f, &step);
    Stmt {
        kind: StmtKind::For {
            init: Box::new(init),
            cond,
            step: Box::new(step),
            body,
        },
        annotations: Vec::new(),
        loc: like.loc,
    }
}

/// A copy of a simple statement with fresh expression nodes.
fn copy_stmt(f: &mut Function, s: &Stmt) -> Stmt {
    let kind = match &s.kind {
        StmtKind::Assign { place, value } => StmtKind::Assign {
            place: f.deep_copy(*place),
            value: f.deep_copy(*value),
        },
        other => other.clone(),
    };
    Stmt {
        kind,
        annotations: s.annotations.clone(),
        loc: s.loc,
    }
}
