//! Which values of a kernel are the same on every thread.
//!
//! A variable is *thread-variant* when its value may differ between the
//! threads of a launch (or of a block, for kernels without grid syncs,
//! whose blocks the simulation runs one after another): `tid` (and `bid`),
//! anything computed from them, from
//! memory (other threads may have written it) or by a call, and anything
//! assigned under control flow that depends on such values. The rest is
//! *uniform*: every thread computes the same value, so the CPU simulation
//! may compute it once, outside the threads, and use it across barriers.

use crate::ir::device::find_intrinsic;
use crate::ir::{Block, Expr, ExprId, Function, Intrinsic, Stmt, StmtKind, VarId};
use std::collections::BTreeSet;

/// The thread-variant variables of one kernel body.
pub(crate) struct Variance {
    variant: BTreeSet<VarId>,
}

impl Variance {
    /// The least fixpoint of the rules above over `body`, starting from the
    /// `seeds` (`tid`, and `bid` where uniform must mean the same on every
    /// block too).
    pub fn of(f: &Function, body: &Block, seeds: &[VarId]) -> Variance {
        let mut v = Variance {
            variant: seeds.iter().copied().collect(),
        };
        loop {
            let before = v.variant.len();
            v.block(f, body, false);
            if v.variant.len() == before {
                return v;
            }
        }
    }

    fn block(&mut self, f: &Function, b: &Block, under_variant: bool) {
        for s in b {
            self.stmt(f, s, under_variant);
        }
    }

    fn stmt(&mut self, f: &Function, s: &Stmt, under: bool) {
        match &s.kind {
            StmtKind::Decl { var, init }
                if under || init.is_some_and(|e| !self.expr_uniform(f, e)) =>
            {
                self.variant.insert(*var);
            }
            StmtKind::Assign { place, value } => {
                if let Expr::Var(v) = f.exprs[*place].kind {
                    if under || !self.expr_uniform(f, *value) {
                        self.variant.insert(v);
                    }
                }
            }
            StmtKind::If { cond, then_, else_ } => {
                let u = under || !self.expr_uniform(f, *cond);
                self.block(f, then_, u);
                self.block(f, else_, u);
            }
            StmtKind::While { cond, body } => {
                let u = under || !self.expr_uniform(f, *cond);
                self.block(f, body, u);
            }
            StmtKind::For {
                init,
                cond,
                step,
                body,
            } => {
                self.stmt(f, init, under);
                let u = under || !self.expr_uniform(f, *cond);
                self.stmt(f, step, u);
                self.block(f, body, u);
            }
            _ => {}
        }
    }

    /// Reads no variant variable, no memory, calls nothing.
    pub fn expr_uniform(&self, f: &Function, e: ExprId) -> bool {
        match &f.exprs[e].kind {
            Expr::Var(v) => return !self.variant.contains(v),
            Expr::Index(..) | Expr::Deref(_) | Expr::Call(..) | Expr::Intrinsic(..) => {
                return false
            }
            _ => {}
        }
        let mut all = true;
        f.for_each_child(e, |c| all &= self.expr_uniform(f, c));
        all
    }

    /// A condition every thread evaluates alike right after a barrier:
    /// like [`expr_uniform`](Variance::expr_uniform), but memory reads are
    /// allowed (nobody writes between the barrier and the test).
    pub fn cond_uniform(&self, f: &Function, e: ExprId) -> bool {
        match &f.exprs[e].kind {
            Expr::Var(v) => return !self.variant.contains(v),
            Expr::Call(..) | Expr::Intrinsic(..) => return false,
            _ => {}
        }
        let mut all = true;
        f.for_each_child(e, |c| all &= self.cond_uniform(f, c));
        all
    }

    /// A statement the simulation may run once for all threads: it writes
    /// only uniform variables, from uniform values, and no memory.
    /// True if every thread takes the control flow of `s` (an `if` or a
    /// loop) alike: its condition, and a `for`'s initialiser and step, are
    /// uniform. Other statements have none.
    pub fn control_uniform(&self, f: &Function, s: &Stmt) -> bool {
        match &s.kind {
            StmtKind::If { cond, .. } | StmtKind::While { cond, .. } => self.cond_uniform(f, *cond),
            StmtKind::For {
                init, cond, step, ..
            } => self.hostable(f, init) && self.cond_uniform(f, *cond) && self.hostable(f, step),
            _ => true,
        }
    }

    pub fn hostable(&self, f: &Function, s: &Stmt) -> bool {
        match &s.kind {
            StmtKind::Decl { var, init } => {
                !self.variant.contains(var) && init.is_none_or(|e| self.expr_uniform(f, e))
            }
            StmtKind::Assign { place, value } => match f.exprs[*place].kind {
                Expr::Var(v) => !self.variant.contains(&v) && self.expr_uniform(f, *value),
                _ => false,
            },
            StmtKind::If { cond, then_, else_ } => {
                self.expr_uniform(f, *cond) && self.all(f, then_) && self.all(f, else_)
            }
            StmtKind::While { cond, body } => self.expr_uniform(f, *cond) && self.all(f, body),
            StmtKind::For {
                init,
                cond,
                step,
                body,
            } => {
                self.hostable(f, init)
                    && self.expr_uniform(f, *cond)
                    && self.hostable(f, step)
                    && self.all(f, body)
            }
            _ => false,
        }
    }

    fn all(&self, f: &Function, b: &Block) -> bool {
        b.iter().all(|s| self.hostable(f, s))
    }
}

/// Checks that every barrier of a kernel body is reached by all the threads
/// that must meet there: control flow around a block barrier may depend on
/// the block but not on the thread, control flow around a grid sync on
/// neither. (A barrier some threads skip hangs the GPU.)
pub(crate) fn check_barriers(
    f: &Function,
    body: &Block,
    bid: VarId,
    tid: VarId,
    loc: Option<crate::ir::SrcLoc>,
) -> Result<(), crate::Error> {
    if find_intrinsic(f, body, Intrinsic::is_barrier).is_none() {
        return Ok(());
    }
    let grid = Variance::of(f, body, &[bid, tid]);
    let block = Variance::of(f, body, &[tid]);
    let pick = |s: &Stmt| {
        let grid_sync = |i| i == Intrinsic::GridSync;
        if find_intrinsic(f, std::slice::from_ref(s), grid_sync).is_some() {
            &grid
        } else {
            &block
        }
    };
    match divergent_control(f, body, &pick) {
        Some(s) => Err(divergent_barrier(s.loc.or(loc))),
        None => Ok(()),
    }
}

/// The first statement of `b` (at any depth) with a barrier inside whose
/// control flow is not uniform under the variance `pick` gives for it.
pub(crate) fn divergent_control<'a, 'v>(
    f: &Function,
    b: &'a Block,
    pick: &dyn Fn(&Stmt) -> &'v Variance,
) -> Option<&'a Stmt> {
    for s in b {
        let one = std::slice::from_ref(s);
        if find_intrinsic(f, one, Intrinsic::is_barrier).is_none()
            || s.kind.blocks().next().is_none()
        {
            continue;
        }
        if !pick(s).control_uniform(f, s) {
            return Some(s);
        }
        if let Some(found) = s
            .kind
            .blocks()
            .find_map(|inner| divergent_control(f, inner, pick))
        {
            return Some(found);
        }
    }
    None
}

/// A barrier under control flow the threads that meet there may take
/// differently.
pub(crate) fn divergent_barrier(loc: Option<crate::ir::SrcLoc>) -> crate::Error {
    crate::Error::Kernel {
        message: "a barrier under control flow that threads may take differently (a block \
                  barrier, gpu::sync_threads, under a condition that depends on the thread or \
                  on values computed per thread; a grid sync, gpu::grid_sync, under one that \
                  depends on the block or the thread): some threads would wait at a barrier \
                  others never reach"
            .to_string(),
        location: loc,
    }
}
