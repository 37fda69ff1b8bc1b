//! The CPU simulation of GPU launches: plain C that runs each kernel as
//! loop nests over its threads, one stretch between barriers at a time.
//!
//! A kernel whose threads meet at grid syncs cannot run thread after thread
//! as written: thread 0 would pass the barrier before thread 1 reached it.
//! [`simulate`] runs every thread through the code up to the first barrier,
//! then every thread through the next stretch, and so on: an order a
//! barrier allows. Control flow around barriers must be the same on every
//! thread (in CUDA too: a barrier some threads skip hangs), so it runs once,
//! on the host, as do the uniform values it needs (`uniform.rs`); a value
//! computed per thread and used after a barrier is an [`Error::Kernel`].

use super::kernel::{
    captured, find_sync, is_sync, kernel_error, rewrite_launches, strip_tail_syncs, Nest,
};
use super::uniform::Variance;
use crate::error::Error;
use crate::ir::{
    verify, Annotation, BinOp, Block, Const, Expr, Function, Scalar, SrcLoc, Stmt, StmtKind, Type,
    VarId,
};
use std::collections::BTreeSet;

/// `f` with every launch replaced by its phases as loop nests: C that any C
/// compiler builds and the interpreter runs, with the kernels' meaning.
pub fn simulate(f: &Function) -> Result<Function, Error> {
    let mut out = f.clone();
    let body = std::mem::take(&mut out.body);
    out.body = sim_block(&mut out, body)?;
    // Each launch's barriers became its phases' bounds: any left are outside.
    if let Some(loc) = find_sync(&out, &out.body) {
        return Err(kernel_error(
            loc,
            "grid_sync outside a GPU launch".to_string(),
        ));
    }
    verify::verify(&out).map_err(|e| Error::Internal {
        message: format!("the CPU simulation broke `{}`: {e}", f.name),
    })?;
    Ok(out)
}

fn sim_block(f: &mut Function, b: Block) -> Result<Block, Error> {
    rewrite_launches(f, b, &mut phases)
}

/// The launch as host code: uniform statements and the control flow around
/// barriers run once, each stretch between barriers runs as a loop nest
/// over all threads (a phase).
fn phases(f: &mut Function, n: &Nest) -> Result<Block, Error> {
    // The same checks as the CUDA backend: what simulates also compiles.
    captured(f, n)?;
    let (bid, tid) = (n.bid, n.tid);
    let mut body = n.body.clone();
    strip_tail_syncs(f, &mut body);
    let mut p = Phases {
        variance: Variance::of(f, &body, bid, tid),
        bid,
        tid,
        grid: n.grid,
        block: n.block,
        count: 0,
        phase_vars: Vec::new(),
        loc: n.loc,
    };
    let built = p.build(f, body)?;
    p.check_scopes(f, &built)?;
    if p.count == 0 {
        return Ok(built);
    }
    let mut out = vec![decl(bid), decl(tid)];
    out.extend(built);
    Ok(out)
}

struct Phases {
    variance: Variance,
    bid: VarId,
    tid: VarId,
    /// The launch's blocks and threads per block: each phase's loop bounds.
    grid: u32,
    block: u32,
    count: usize,
    /// Per phase: the variables it declares and those it assigns.
    phase_vars: Vec<(BTreeSet<VarId>, BTreeSet<VarId>)>,
    loc: Option<SrcLoc>,
}

impl Phases {
    fn build(&mut self, f: &mut Function, b: Block) -> Result<Block, Error> {
        let hoist = self.to_hoist(f, &b);
        let mut out = Vec::new();
        let mut group = Vec::new();
        for (st, hoist) in b.into_iter().zip(hoist) {
            if is_sync(f, &st) {
                self.flush(f, &mut group, &mut out);
            } else if find_sync(f, std::slice::from_ref(&st)).is_some() {
                self.flush(f, &mut group, &mut out);
                let control = self.control(f, st)?;
                out.push(control);
            } else if hoist {
                self.flush(f, &mut group, &mut out);
                out.push(st);
            } else {
                group.push(st);
            }
        }
        self.flush(f, &mut group, &mut out);
        Ok(out)
    }

    /// Which statements of `b` run once on the host: uniform ones whose
    /// variables are needed past the next barrier (by later stretches, or
    /// by the control flow around barriers). The others stay with their
    /// stretch, so a kernel without barriers is one loop nest.
    fn to_hoist(&self, f: &Function, b: &Block) -> Vec<bool> {
        let has_sync: Vec<bool> = b
            .iter()
            .map(|s| find_sync(f, std::slice::from_ref(s)).is_some())
            .collect();
        (0..b.len())
            .map(|k| {
                if has_sync[k] || !self.variance.hostable(f, &b[k]) {
                    return false;
                }
                let Some(m) = (k + 1..b.len()).find(|&m| has_sync[m]) else {
                    return false;
                };
                let (declared, assigned) = declared_and_assigned(f, &b[k..=k]);
                let later = uses(f, &b[m..]);
                declared.iter().chain(&assigned).any(|v| later.contains(v))
            })
            .collect()
    }

    /// Control flow with barriers inside runs on the host: every thread
    /// must take it alike.
    fn control(&mut self, f: &mut Function, mut st: Stmt) -> Result<Stmt, Error> {
        let v = &self.variance;
        let uniform = match &st.kind {
            StmtKind::If { cond, .. } | StmtKind::While { cond, .. } => v.cond_uniform(f, *cond),
            StmtKind::For {
                init, cond, step, ..
            } => v.hostable(f, init) && v.cond_uniform(f, *cond) && v.hostable(f, step),
            _ => false,
        };
        if !uniform {
            return Err(kernel_error(
                st.loc.or(self.loc),
                "grid_sync under control flow that threads may take differently (its \
                 condition depends on the thread, or on values computed per thread): \
                 some threads would wait at a barrier others never reach"
                    .to_string(),
            ));
        }
        for blk in st.kind.blocks_mut() {
            *blk = self.build(f, std::mem::take(blk))?;
        }
        Ok(st)
    }

    /// Emits the statements gathered since the last barrier as a phase.
    fn flush(&mut self, f: &mut Function, group: &mut Block, out: &mut Block) {
        if group.is_empty() {
            return;
        }
        let part = std::mem::take(group);
        self.phase_vars.push(declared_and_assigned(f, &part));
        let mut inner_loop = counted(f, self.tid, self.block, part, self.loc);
        inner_loop.annotations = vec![Annotation::Threads];
        let mut outer_loop = counted(f, self.bid, self.grid, vec![inner_loop], self.loc);
        let what = format!("phase {} of the launch", self.count);
        outer_loop.annotations = vec![Annotation::Comment(what), Annotation::Threads];
        self.count += 1;
        out.push(outer_loop);
    }

    /// Per-thread values must not outlive their phase, and a phase must not
    /// assign what the host computes once.
    fn check_scopes(&self, f: &Function, built: &Block) -> Result<(), Error> {
        let mut used_elsewhere: Vec<BTreeSet<VarId>> = vec![BTreeSet::new(); self.count];
        let mut host_vars = BTreeSet::new();
        collect_uses(
            f,
            self.bid,
            built,
            None,
            &mut 0,
            &mut used_elsewhere,
            &mut host_vars,
        );
        for (i, (declared, assigned)) in self.phase_vars.iter().enumerate() {
            if let Some(&v) = declared.iter().find(|v| used_elsewhere[i].contains(v)) {
                return Err(kernel_error(
                    f.vars[v].loc.or(self.loc),
                    format!(
                        "`{}`, computed per thread, is used after a grid_sync: the CPU \
                         simulation runs each stretch between barriers for all threads in \
                         turn; recompute it after the barrier or keep it in memory",
                        f.var_name(v)
                    ),
                ));
            }
            if let Some(&v) = assigned
                .iter()
                .find(|v| !declared.contains(v) && host_vars.contains(v))
            {
                return Err(kernel_error(
                    f.vars[v].loc.or(self.loc),
                    format!(
                        "`{}` is the same on every thread but is assigned among per-thread \
                         work (under a condition that depends on the thread or next to \
                         memory writes): the CPU simulation cannot run that once per thread",
                        f.var_name(v)
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// The variables `b` declares and those it assigns (at any depth).
fn declared_and_assigned(f: &Function, b: &[Stmt]) -> (BTreeSet<VarId>, BTreeSet<VarId>) {
    let (mut d, mut a) = (BTreeSet::new(), BTreeSet::new());
    fn walk(f: &Function, b: &[Stmt], d: &mut BTreeSet<VarId>, a: &mut BTreeSet<VarId>) {
        for s in b {
            let mut each = |s: &Stmt| match &s.kind {
                StmtKind::Decl { var, .. } => {
                    d.insert(*var);
                }
                StmtKind::Assign { place, .. } => {
                    if let Expr::Var(v) = f.exprs[*place].kind {
                        a.insert(v);
                    }
                }
                _ => {}
            };
            each(s);
            if let StmtKind::For { init, step, .. } = &s.kind {
                each(init);
                each(step);
            }
            for blk in s.kind.blocks() {
                walk(f, blk, d, a);
            }
        }
    }
    walk(f, b, &mut d, &mut a);
    (d, a)
}

/// Walks the built host code: for each phase, the variables used outside
/// it; and the variables the host statements declare or assign.
fn collect_uses(
    f: &Function,
    bid: VarId,
    b: &Block,
    phase: Option<usize>,
    next: &mut usize,
    outside: &mut [BTreeSet<VarId>],
    host_vars: &mut BTreeSet<VarId>,
) {
    for s in b {
        let here = if phase.is_none() && is_phase(f, s, bid) {
            let p = *next;
            *next += 1;
            Some(p)
        } else {
            phase
        };
        let mut uses = BTreeSet::new();
        super::kernel::each_own_expr(s, &mut |e| {
            f.for_each_var(e, &mut |v| {
                uses.insert(v);
            })
        });
        for (i, set) in outside.iter_mut().enumerate() {
            if here != Some(i) {
                set.extend(uses.iter().copied());
            }
        }
        if here.is_none() {
            let (d, a) = declared_and_assigned(f, std::slice::from_ref(s));
            host_vars.extend(d);
            host_vars.extend(a);
        }
        for blk in s.kind.blocks() {
            collect_uses(f, bid, blk, here, next, outside, host_vars);
        }
    }
}

/// Every variable the statements of `b` read or write, at any depth.
fn uses(f: &Function, b: &[Stmt]) -> BTreeSet<VarId> {
    let mut out = BTreeSet::new();
    for s in b {
        super::kernel::each_expr(s, &mut |e| {
            f.for_each_var(e, &mut |v| {
                out.insert(v);
            })
        });
        if let StmtKind::Decl { var, .. } = s.kind {
            out.insert(var);
        }
    }
    out
}

/// True for a phase's outer loop: the only host code that assigns the
/// launch's block index.
fn is_phase(f: &Function, s: &Stmt, bid: VarId) -> bool {
    let StmtKind::For { init, .. } = &s.kind else {
        return false;
    };
    matches!(&init.kind, StmtKind::Assign { place, .. } if f.exprs[*place].kind == Expr::Var(bid))
}

fn decl(v: VarId) -> Stmt {
    Stmt::new(StmtKind::Decl { var: v, init: None })
}

/// `for (var = 0; var < n; var = var + 1) body`, `var` declared outside.
fn counted(f: &mut Function, var: VarId, n: u32, body: Block, loc: Option<SrcLoc>) -> Stmt {
    let ty = f.vars[var].ty;
    let var_expr = |f: &mut Function| f.expr(Expr::Var(var), ty);
    let int = |f: &mut Function, k: i64| f.expr(Expr::Const(Const::Int(k)), ty);
    let (place, zero) = (var_expr(f), int(f, 0));
    let init = Stmt::new(StmtKind::Assign { place, value: zero });
    let (v, bound) = (var_expr(f), int(f, i64::from(n)));
    let cond = f.expr(
        Expr::Binary(BinOp::Lt, v, bound),
        Type::Scalar(Scalar::Bool),
    );
    let (v, one) = (var_expr(f), int(f, 1));
    let next = f.expr(Expr::Binary(BinOp::Add, v, one), ty);
    let place = var_expr(f);
    let step = Stmt::new(StmtKind::Assign { place, value: next });
    Stmt {
        kind: StmtKind::For {
            init: Box::new(init),
            cond,
            step: Box::new(step),
            body,
        },
        annotations: Vec::new(),
        loc,
    }
}
