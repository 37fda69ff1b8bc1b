//! The CPU simulation of GPU launches: plain C that runs each kernel as
//! loop nests over its threads, one stretch between barriers at a time.
//!
//! A kernel whose threads meet at barriers (a block's `sync_threads`, the
//! grid's `grid_sync`) cannot run thread after thread as written: thread 0
//! would pass the barrier before thread 1 reached it. [`simulate`] runs
//! every thread through the code up to the first barrier, then every
//! thread through the next stretch (a *phase*), and so on: an order the
//! barriers allow.
//!
//! * Without grid syncs, blocks never wait for each other: the blocks run
//!   one after another, each its phases in turn, and control flow around
//!   block barriers, which must be the same on every thread of a block (in
//!   CUDA too: a barrier some threads skip hangs), runs once per block.
//! * With grid syncs, each phase runs over all blocks and the control flow
//!   around barriers runs once, on the host; where control flow around a
//!   block barrier depends on the block, `grid.rs` runs the stretches
//!   between grid syncs one after another, each block by block.
//!
//! Uniform values that control flow needs are computed outside the phases
//! (`uniform.rs`). A value computed per thread and used after a barrier (an
//! accumulator) is kept in a host buffer with a slot per thread between
//! phases ([`Phases::replicate`]); shared memory is a host buffer with a
//! stretch per block ([`shared_buffer`]). Both are allocated before the
//! launch and freed after it (`memory.rs`).

use super::kernel::{
    captured, find_intrinsic, find_sync, is_sync, kernel_error, outside_launch, rewrite_launches,
    shared_area, shared_bytes, strip_tail_syncs, Nest,
};
use super::uniform::divergent_control;
use super::uniform::Variance;
use crate::error::Error;
use crate::ir::{
    verify, Annotation, BinOp, Block, Const, Expr, Function, Intrinsic, Scalar, SrcLoc, Stmt,
    StmtKind, Type, VarId,
};
use memory::{shared_buffer, Around};

mod grid;
mod memory;
use std::collections::BTreeSet;

/// `f` with every launch replaced by its phases as loop nests: C that any C
/// compiler builds and the interpreter runs, with the kernels' meaning.
pub fn simulate(f: &Function) -> Result<Function, Error> {
    let mut out = f.clone();
    let body = std::mem::take(&mut out.body);
    out.body = sim_block(&mut out, body)?;
    // Each launch's barriers became its phases' bounds, and its shared
    // memory a buffer: any left are outside a launch.
    if let Some((op, loc)) = find_intrinsic(&out, &out.body, Intrinsic::is_block_level) {
        return Err(outside_launch(op, loc));
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
    let mut around = Around::default();
    shared_buffer(f, &mut body, n, &mut around);
    // Without a grid sync, blocks never wait for each other: each block
    // runs its phases in turn, and control flow that depends only on the
    // block (a loop over the block's tiles) runs once per block.
    // With grid syncs, each phase runs over all blocks; but where control
    // flow around a block barrier depends on the block, each stretch
    // between grid syncs runs block by block (`grid.rs`).
    let grid_sync = find_intrinsic(f, &body, |i| i == Intrinsic::GridSync).is_some();
    let on_grid = Variance::of(f, &body, &[bid, tid]);
    let nested = grid_sync && divergent_control(f, &body, &|_| &on_grid).is_some();
    let grid_wide = grid_sync && !nested;
    let seeds = if grid_wide { vec![bid, tid] } else { vec![tid] };
    let mut p = Phases {
        variance: Variance::of(f, &body, &seeds),
        grid_variance: nested.then_some(on_grid),
        grid_phases: 0,
        occurrences: grid::occurrences(f, &body),
        per_thread: BTreeSet::new(),
        bid,
        tid,
        grid_wide,
        hoisted: BTreeSet::new(),
        grid: n.grid,
        block: n.block,
        count: 0,
        phase_vars: Vec::new(),
        loc: n.loc,
    };
    let mut built = if nested {
        let built = p.build_grid(f, body, &BTreeSet::new())?;
        p.check_block_values(f, &built)?;
        built
    } else {
        p.build(f, body, &BTreeSet::new())?
    };
    let carried = p.check_scopes(f, &built)?;
    if !carried.is_empty() {
        p.replicate(f, &mut built, &carried, &mut around)?;
    }
    let mut out = around.before;
    if p.count > 0 {
        out.extend([decl(bid), decl(tid)]);
    }
    if grid_wide || nested || p.count == 0 {
        out.extend(built);
    } else {
        let mut blocks = counted(f, bid, n.grid, built, n.loc);
        let what = "each iteration a block: its phases in turn".to_string();
        blocks.annotations = vec![Annotation::Comment(what), Annotation::Threads];
        out.push(blocks);
    }
    out.extend(around.after);
    Ok(out)
}

struct Phases {
    variance: Variance,
    /// For a kernel with grid syncs run block by block between them: what
    /// is the same on every block (see `grid.rs`).
    grid_variance: Option<Variance>,
    /// Stretches between grid syncs emitted so far.
    grid_phases: usize,
    /// How often each variable occurs in the kernel body (for `grid.rs`).
    occurrences: std::collections::BTreeMap<VarId, usize>,
    /// Variables the stretch being built shares with the rest of the
    /// kernel: kept per thread, not computed once per block (`grid.rs`).
    per_thread: BTreeSet<VarId>,
    bid: VarId,
    tid: VarId,
    /// The kernel meets at grid syncs: each phase loops over all blocks
    /// (else over one block's threads, inside a loop over blocks).
    grid_wide: bool,
    /// Variables the statements hoisted so far declare or assign.
    hoisted: BTreeSet<VarId>,
    /// The launch's blocks and threads per block: each phase's loop bounds.
    grid: u32,
    block: u32,
    count: usize,
    /// Per phase: the variables it declares and those it assigns.
    phase_vars: Vec<(BTreeSet<VarId>, BTreeSet<VarId>)>,
    loc: Option<SrcLoc>,
}

impl Phases {
    /// `needs`: variables the host control flow around `b` reads after it
    /// (an enclosing loop's condition, its next turn).
    fn build(
        &mut self,
        f: &mut Function,
        b: Block,
        needs: &BTreeSet<VarId>,
    ) -> Result<Block, Error> {
        let hoist = self.hoisting(f, &b, needs, false);
        let mut out = Vec::new();
        let mut group = Vec::new();
        for (st, hoist) in b.into_iter().zip(hoist) {
            if is_sync(f, &st) {
                self.flush(f, &mut group, &mut out);
            } else if host_control(f, &st) {
                self.flush(f, &mut group, &mut out);
                let control = self.control(f, st, needs)?;
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
    /// `grid_level`: which statements run once for the whole grid, around
    /// grid syncs (`grid.rs`), rather than once per phase's host code.
    fn hoisting(
        &mut self,
        f: &Function,
        b: &Block,
        needs: &BTreeSet<VarId>,
        grid_level: bool,
    ) -> Vec<bool> {
        let has_sync: Vec<bool> = b
            .iter()
            .map(|s| match grid_level {
                true => grid::has_grid_sync(f, s) || escapes(s),
                false => host_control(f, s),
            })
            .collect();
        let variance = match (&self.grid_variance, grid_level) {
            (Some(v), true) => v,
            _ => &self.variance,
        };
        let hostable: Vec<bool> = b.iter().map(|s| variance.hostable(f, s)).collect();
        let mut hoist = vec![false; b.len()];
        for k in 0..b.len() {
            if has_sync[k] || !hostable[k] {
                continue;
            }
            let (declared, assigned) = declared_and_assigned(f, &b[k..=k]);
            let changed: Vec<VarId> = declared.iter().chain(&assigned).copied().collect();
            let shared = |v: &VarId| self.per_thread.contains(v);
            if !grid_level && changed.iter().any(shared) {
                // Used after a grid sync too: per thread, not per block,
                // unless control flow around barriers here reads it
                // (`check_block_values` then says it cannot be kept).
                let control = control_reads(f, &b[k + 1..]);
                let read = |v: &VarId| needs.contains(v) || control.contains(v);
                if !changed.iter().any(read) {
                    continue;
                }
            }
            // What host code holds stays with the host: a later uniform
            // update of a hoisted variable is host work too.
            let mut wanted = |v: &VarId| needs.contains(v) || self.hoisted.contains(v);
            hoist[k] = match (k + 1..b.len()).find(|&m| has_sync[m]) {
                // After the last barrier: still host work if the control
                // flow around reads it (`t += 1` before a loop's test).
                None => changed.iter().any(&mut wanted),
                Some(m) => {
                    let later = uses(f, &b[m..]);
                    changed.iter().any(|v| later.contains(v) || wanted(v))
                }
            };
            if hoist[k] {
                self.hoisted.extend(changed);
            }
        }
        hoist
    }

    /// Control flow with barriers inside, or that jumps out of itself,
    /// runs on the host: every thread must take it alike.
    fn control(
        &mut self,
        f: &mut Function,
        mut st: Stmt,
        needs: &BTreeSet<VarId>,
    ) -> Result<Stmt, Error> {
        let uniform = self.variance.control_uniform(f, &st);
        if !uniform && self.grid_wide {
            // `captured` checked that CUDA can run it: the condition
            // depends on the block, around a block barrier.
            return Err(kernel_error(
                st.loc.or(self.loc),
                "the CPU simulation runs a kernel with grid syncs phase by phase over all \
                 blocks, so control flow around a block barrier in it must be the same on \
                 every block (this condition depends on the block; CUDA allows it): put \
                 such a loop in a kernel without grid syncs"
                    .to_string(),
            ));
        }
        if !uniform {
            return Err(super::uniform::divergent_barrier(st.loc.or(self.loc)));
        }
        // A loop's body runs again after itself: what its test (and a
        // `for`'s step) reads is needed after each turn.
        let mut inner = needs.clone();
        if matches!(st.kind, StmtKind::While { .. } | StmtKind::For { .. }) {
            inner.extend(header_vars(f, &st));
        }
        for blk in st.kind.blocks_mut() {
            *blk = self.build(f, std::mem::take(blk), &inner)?;
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
        let what = format!("phase {} of the launch", self.count);
        self.count += 1;
        if !self.grid_wide {
            inner_loop.annotations = vec![Annotation::Comment(what), Annotation::Threads];
            out.push(inner_loop);
            return;
        }
        inner_loop.annotations = vec![Annotation::Threads];
        let mut outer_loop = counted(f, self.bid, self.grid, vec![inner_loop], self.loc);
        outer_loop.annotations = vec![Annotation::Comment(what), Annotation::Threads];
        out.push(outer_loop);
    }

    /// The per-thread values used outside the phase that declares them (they
    /// are kept per thread across barriers: see [`Phases::replicate`]); and
    /// a phase must not assign what the host computes once.
    fn check_scopes(&self, f: &Function, built: &Block) -> Result<BTreeSet<VarId>, Error> {
        let mut used_elsewhere: Vec<BTreeSet<VarId>> = vec![BTreeSet::new(); self.count];
        let mut host_vars = BTreeSet::new();
        collect_uses(
            f,
            self.phase_var(),
            built,
            None,
            &mut 0,
            &mut used_elsewhere,
            &mut host_vars,
        );
        let mut carried = BTreeSet::new();
        for (i, (declared, assigned)) in self.phase_vars.iter().enumerate() {
            carried.extend(declared.intersection(&used_elsewhere[i]).copied());
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
        Ok(carried)
    }
}

impl Phases {
    /// The index a phase's loop assigns (its outermost loop's).
    fn phase_var(&self) -> VarId {
        if self.grid_wide {
            self.bid
        } else {
            self.tid
        }
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
    index: VarId,
    b: &Block,
    phase: Option<usize>,
    next: &mut usize,
    outside: &mut [BTreeSet<VarId>],
    host_vars: &mut BTreeSet<VarId>,
) {
    for s in b {
        let here = if phase.is_none() && is_phase(f, s, index) {
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
            // The statement's own declarations and assignments: those in
            // its blocks are visited below (phases among them are not host
            // work).
            let own: Vec<Stmt> = match &s.kind {
                StmtKind::Decl { .. } | StmtKind::Assign { .. } => vec![s.clone()],
                StmtKind::For { init, step, .. } => vec![(**init).clone(), (**step).clone()],
                _ => Vec::new(),
            };
            let (d, a) = declared_and_assigned(f, &own);
            host_vars.extend(d);
            host_vars.extend(a);
        }
        for blk in s.kind.blocks() {
            collect_uses(f, index, blk, here, next, outside, host_vars);
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

/// True for a phase's outermost loop: the only code that assigns `index`
/// (the block index for grid-wide phases, else the thread index).
fn is_phase(f: &Function, s: &Stmt, index: VarId) -> bool {
    let StmtKind::For { init, .. } = &s.kind else {
        return false;
    };
    matches!(&init.kind, StmtKind::Assign { place, .. } if f.exprs[*place].kind == Expr::Var(index))
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

/// The variables a statement's own header reads or writes: an `if`'s or a
/// loop's condition, a `for`'s initialiser and step.
fn header_vars(f: &Function, s: &Stmt) -> BTreeSet<VarId> {
    let mut out = BTreeSet::new();
    super::kernel::each_own_expr(s, &mut |e| {
        f.for_each_var(e, &mut |v| {
            out.insert(v);
        })
    });
    out
}

/// True if `s` runs as control flow around the phases, on the host: it
/// has barriers inside, or it jumps out of itself ([`escapes`]).
fn host_control(f: &Function, s: &Stmt) -> bool {
    find_sync(f, std::slice::from_ref(s)).is_some() || escapes(s)
}

/// True if control can leave `s` other than by falling through its end: a
/// `break` or `continue` of a loop around it, a `return`, a `goto` to a
/// label outside it. Inside a phase (a loop over threads) or a stretch
/// between grid syncs (a loop over blocks) such a jump would leave that
/// loop instead of its own, so it runs where the loop it leaves runs, on
/// the host, and every thread must take it alike (a rotated loop's test
/// at its bottom: `if (tile >= n) break;`).
fn escapes(s: &Stmt) -> bool {
    fn labels(b: &[Stmt], out: &mut BTreeSet<crate::ir::LabelId>) {
        for s in b {
            if let StmtKind::Label(l) = s.kind {
                out.insert(l);
            }
            for inner in s.kind.blocks() {
                labels(inner, out);
            }
        }
    }
    fn jumps(b: &[Stmt], loops: u32, inside: &BTreeSet<crate::ir::LabelId>) -> bool {
        b.iter().any(|s| match &s.kind {
            StmtKind::Break | StmtKind::Continue => loops == 0,
            StmtKind::Return(_) => true,
            StmtKind::Goto(l) => !inside.contains(l),
            StmtKind::While { .. } | StmtKind::For { .. } => {
                s.kind.blocks().any(|inner| jumps(inner, loops + 1, inside))
            }
            k => k.blocks().any(|inner| jumps(inner, loops, inside)),
        })
    }
    let mut inside = BTreeSet::new();
    let one = std::slice::from_ref(s);
    labels(one, &mut inside);
    jumps(one, 0, &inside)
}

/// The variables the headers of the statements of `b` that run on the host
/// ([`host_control`]) read, at any depth: what control flow around barriers
/// needs.
fn control_reads(f: &Function, b: &[Stmt]) -> BTreeSet<VarId> {
    let mut out = BTreeSet::new();
    for s in b {
        if s.kind.blocks().next().is_some() && host_control(f, s) {
            out.extend(header_vars(f, s));
            for inner in s.kind.blocks() {
                out.extend(control_reads(f, inner));
            }
        }
    }
    out
}
