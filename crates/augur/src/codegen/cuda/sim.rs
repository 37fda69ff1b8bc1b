//! The CPU simulation of GPU launches: plain C that runs each kernel as
//! loop nests over its threads, one stretch between barriers at a time.
//!
//! A kernel whose threads meet at barriers (a block's `sync_threads`, the
//! grid's `grid_sync`) cannot run thread after thread as written: thread 0
//! would pass the barrier before thread 1 reached it. [`simulate`] runs
//! every thread of every block through the code up to the first barrier,
//! then every thread through the next stretch, and so on: an order both
//! barriers allow. Control flow around barriers must be the same on every
//! thread (in CUDA too: a barrier some threads skip hangs), so it runs once,
//! on the host, as do the uniform values it needs (`uniform.rs`). A value
//! computed per thread and used after a barrier (an accumulator) is kept in
//! a host buffer with a slot per thread between phases
//! ([`Phases::replicate`]); shared memory is a host buffer with a stretch
//! per block ([`shared_buffer`]). Both are allocated before the launch and
//! freed after it.

use super::kernel::{
    captured, find_device_call, find_sync, is_barrier, is_sync, kernel_error, outside_launch,
    rewrite_launches, shared_area, shared_bytes, strip_tail_syncs, Nest,
};
use super::uniform::Variance;
use crate::error::Error;
use crate::ir::{
    verify, Annotation, BinOp, Block, Const, Expr, Function, Scalar, SrcLoc, Stmt, StmtKind, Type,
    VarId,
};
use crate::stage::gpu::SHARED;
use std::collections::BTreeSet;

/// `f` with every launch replaced by its phases as loop nests: C that any C
/// compiler builds and the interpreter runs, with the kernels' meaning.
pub fn simulate(f: &Function) -> Result<Function, Error> {
    let mut out = f.clone();
    let body = std::mem::take(&mut out.body);
    out.body = sim_block(&mut out, body)?;
    // Each launch's barriers became its phases' bounds, and its shared
    // memory a buffer: any left are outside a launch.
    let device_only = |n: &str| is_barrier(n) || n == SHARED;
    if let Some((name, loc)) = find_device_call(&out, &out.body, device_only) {
        return Err(outside_launch(name, loc));
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
    let grid_wide = find_device_call(f, &body, |n| n == crate::stage::gpu::GRID_SYNC).is_some();
    let seeds = if grid_wide { vec![bid, tid] } else { vec![tid] };
    let mut p = Phases {
        variance: Variance::of(f, &body, &seeds),
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
    let mut built = p.build(f, body, &BTreeSet::new())?;
    let carried = p.check_scopes(f, &built)?;
    if !carried.is_empty() {
        p.replicate(f, &mut built, &carried, &mut around)?;
    }
    let mut out = around.before;
    if p.count > 0 {
        out.extend([decl(bid), decl(tid)]);
    }
    if grid_wide || p.count == 0 {
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

/// Host statements a launch's phases need around them: buffers allocated
/// before (shared memory, per-thread values kept across barriers) and
/// freed after.
#[derive(Default)]
struct Around {
    before: Block,
    after: Block,
}

impl Around {
    /// A host buffer of `bytes` bytes for pointer variable `var` (of the
    /// type its `malloc` result is cast to), freed after the launch.
    fn buffer(&mut self, f: &mut Function, var: VarId, bytes: u64, loc: Option<SrcLoc>) {
        let u8p = Type::ptr(Type::Scalar(Scalar::U8));
        let malloc = libc(f, "malloc", vec![Type::Scalar(Scalar::U64)], u8p);
        let size = f.expr(
            Expr::Const(Const::Int(bytes as i64)),
            Type::Scalar(Scalar::U64),
        );
        let call = f.expr(Expr::Call(malloc, vec![size]), u8p);
        let ty = f.vars[var].ty;
        let init = f.expr(Expr::Cast(call), ty);
        self.before.push(Stmt {
            loc,
            ..Stmt::new(StmtKind::Decl {
                var,
                init: Some(init),
            })
        });
        let free = libc(f, "free", vec![u8p], Type::Void);
        let v = f.expr(Expr::Var(var), ty);
        let arg = f.expr(Expr::Cast(v), u8p);
        let call = f.expr(Expr::Call(free, vec![arg]), Type::Void);
        self.after.push(Stmt::new(StmtKind::Eval(call)));
    }
}

/// The `<stdlib.h>` function `name`, declared in `f` once.
fn libc(f: &mut Function, name: &str, params: Vec<Type>, ret: Type) -> crate::ir::FuncId {
    if let Some((id, _)) = f
        .externs
        .iter()
        .find(|(_, d)| d.name == name && !d.indirect)
    {
        return id;
    }
    f.externs.push(crate::ir::ExternDecl {
        name: name.into(),
        params,
        ret,
        variadic: false,
        header: Some("stdlib.h".into()),
        indirect: false,
    })
}

/// A new host variable of type `ty`, named after `hint`.
fn host_var(f: &mut Function, ty: Type, hint: &str, loc: Option<SrcLoc>) -> VarId {
    f.vars.push(crate::ir::VarData {
        ty,
        kind: crate::ir::VarKind::Local,
        hint: Some(hint.into()),
        name: None,
        addr_taken: false,
        loc,
    })
}

/// Gives the launch's blocks their shared memory: one host buffer with a
/// stretch per block, and each `augur_shared(offset, bytes)` of the body
/// becomes the address `offset` bytes into the stretch of block `bid`.
fn shared_buffer(f: &mut Function, body: &mut Block, n: &Nest, around: &mut Around) {
    let per_block = shared_bytes(f, body);
    if per_block == 0 {
        return;
    }
    let u8p = Type::ptr(Type::Scalar(Scalar::U8));
    let buf = host_var(f, u8p, "shared", n.loc);
    around.buffer(
        f,
        buf,
        u64::from(per_block) * u64::from(n.grid.max(1)),
        n.loc,
    );
    let mut roots = Vec::new();
    for s in body.iter() {
        super::kernel::each_expr(s, &mut |e| roots.push(e));
    }
    for e in roots {
        point_into(f, e, buf, n.bid, per_block);
    }
}

/// Rewrites the shared-memory calls under `e` (see [`shared_buffer`]).
fn point_into(f: &mut Function, e: crate::ir::ExprId, buf: VarId, bid: VarId, per_block: u32) {
    if let Some((offset, _)) = shared_area(f, e) {
        let ty = f.exprs[e].ty;
        let int = Type::Scalar(Scalar::I64);
        let b = f.expr(Expr::Var(bid), f.vars[bid].ty);
        let b = f.expr(Expr::Cast(b), int);
        let stride = f.expr(Expr::Const(Const::Int(i64::from(per_block))), int);
        let start = f.expr(Expr::Binary(BinOp::Mul, b, stride), int);
        let off = f.expr(Expr::Const(Const::Int(i64::from(offset))), int);
        let at = f.expr(Expr::Binary(BinOp::Add, start, off), int);
        let base = f.expr(Expr::Var(buf), f.vars[buf].ty);
        let byte = f.expr(Expr::Index(base, at), Type::Scalar(Scalar::U8));
        f.exprs[e].kind = Expr::AddrOf(byte);
        f.exprs[e].ty = ty;
        return;
    }
    let mut children = Vec::new();
    f.for_each_child(e, |c| children.push(c));
    for c in children {
        point_into(f, c, buf, bid, per_block);
    }
}

struct Phases {
    variance: Variance,
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
        let hoist = self.hoisting(f, &b, needs);
        let mut out = Vec::new();
        let mut group = Vec::new();
        for (st, hoist) in b.into_iter().zip(hoist) {
            if is_sync(f, &st) {
                self.flush(f, &mut group, &mut out);
            } else if find_sync(f, std::slice::from_ref(&st)).is_some() {
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
    fn hoisting(&mut self, f: &Function, b: &Block, needs: &BTreeSet<VarId>) -> Vec<bool> {
        let has_sync: Vec<bool> = b
            .iter()
            .map(|s| find_sync(f, std::slice::from_ref(s)).is_some())
            .collect();
        let mut hoist = vec![false; b.len()];
        for k in 0..b.len() {
            if has_sync[k] || !self.variance.hostable(f, &b[k]) {
                continue;
            }
            let (declared, assigned) = declared_and_assigned(f, &b[k..=k]);
            let changed: Vec<VarId> = declared.iter().chain(&assigned).copied().collect();
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

    /// Control flow with barriers inside runs on the host: every thread
    /// must take it alike.
    fn control(
        &mut self,
        f: &mut Function,
        mut st: Stmt,
        needs: &BTreeSet<VarId>,
    ) -> Result<Stmt, Error> {
        let v = &self.variance;
        let uniform = match &st.kind {
            StmtKind::If { cond, .. } | StmtKind::While { cond, .. } => v.cond_uniform(f, *cond),
            StmtKind::For {
                init, cond, step, ..
            } => v.hostable(f, init) && v.cond_uniform(f, *cond) && v.hostable(f, step),
            _ => false,
        };
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
        // A loop's body runs again after itself: what its test and its next
        // turn read is needed after each turn.
        let mut inner = needs.clone();
        if matches!(st.kind, StmtKind::While { .. } | StmtKind::For { .. }) {
            inner.extend(uses(f, std::slice::from_ref(&st)));
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

    /// Keeps per-thread values across barriers. A value a thread computes
    /// in one phase and uses in a later one (an accumulator around a loop
    /// of barriers, an index) lives in a host buffer with a slot per
    /// thread: the declaring phase stores it there at its end, and each
    /// later phase that uses it starts by loading the thread's slot into a
    /// variable of its own (and stores it back if it changes it).
    fn replicate(
        &self,
        f: &mut Function,
        built: &mut Block,
        carried: &BTreeSet<VarId>,
        around: &mut Around,
    ) -> Result<(), Error> {
        let threads = u64::from(self.grid.max(1)) * u64::from(self.block.max(1));
        let mut slots = Vec::new();
        for &v in carried {
            let (ty, loc) = (f.vars[v].ty, f.vars[v].loc.or(self.loc));
            let size = ty.size().filter(|_| !f.vars[v].addr_taken);
            let Some(size) = size else {
                return Err(kernel_error(
                    loc,
                    format!(
                        "`{}`, computed per thread, is used after a barrier and its address is \
                         taken (or its size unknown): the CPU simulation keeps such values per \
                         thread by copying them; keep it in memory instead",
                        f.var_name(v)
                    ),
                ));
            };
            let name = format!("{}_per_thread", f.var_name(v));
            let slot = host_var(f, Type::ptr(ty), &name, loc);
            around.buffer(f, slot, size * threads, loc);
            slots.push((v, slot));
        }
        self.replicate_in(f, built, &mut 0, &slots)
    }

    fn replicate_in(
        &self,
        f: &mut Function,
        b: &mut Block,
        next: &mut usize,
        slots: &[(VarId, VarId)],
    ) -> Result<(), Error> {
        for s in b.iter_mut() {
            if is_phase(f, s, self.phase_var()) {
                let i = *next;
                *next += 1;
                let StmtKind::For { body, .. } = &mut s.kind else {
                    unreachable!("a phase is a loop")
                };
                let thread = if self.grid_wide {
                    match body.first_mut().map(|t| &mut t.kind) {
                        Some(StmtKind::For { body, .. }) => body,
                        _ => unreachable!("a grid-wide phase's block loop holds its thread loop"),
                    }
                } else {
                    body
                };
                self.carry(f, thread, i, slots)?;
                continue;
            }
            for blk in s.kind.blocks_mut() {
                self.replicate_in(f, blk, next, slots)?;
            }
        }
        Ok(())
    }

    /// Loads and stores the carried values phase `i` (whose per-thread body
    /// is `thread`) uses.
    fn carry(
        &self,
        f: &mut Function,
        thread: &mut Block,
        i: usize,
        slots: &[(VarId, VarId)],
    ) -> Result<(), Error> {
        let (declared, assigned) = &self.phase_vars[i];
        let used = uses(f, thread);
        let (mut pre, mut post) = (Vec::new(), Vec::new());
        for &(v, slot) in slots {
            if declared.contains(&v) {
                let top = thread
                    .iter()
                    .any(|s| matches!(s.kind, StmtKind::Decl { var, .. } if var == v));
                if !top {
                    return Err(Error::Internal {
                        message: format!(
                            "the CPU simulation found `{}` used outside the nested block of \
                             its phase that declares it",
                            f.var_name(v)
                        ),
                    });
                }
                post.push(self.store(f, slot, v));
            } else if used.contains(&v) {
                let mut data = f.vars[v].clone();
                data.kind = crate::ir::VarKind::Local;
                data.hint = Some(f.var_name(v));
                data.name = None;
                let local = f.vars.push(data);
                for s in thread.iter_mut() {
                    rename(f, s, v, local);
                }
                let at = self.thread_slot(f, slot);
                pre.push(Stmt::new(StmtKind::Decl {
                    var: local,
                    init: Some(at),
                }));
                if assigned.contains(&v) {
                    post.push(self.store(f, slot, local));
                }
            }
        }
        thread.splice(0..0, pre);
        thread.extend(post);
        Ok(())
    }

    /// `slot[bid * block + tid]`.
    fn thread_slot(&self, f: &mut Function, slot: VarId) -> crate::ir::ExprId {
        let int = Type::Scalar(Scalar::I64);
        let cast = |f: &mut Function, v: VarId| {
            let e = f.expr(Expr::Var(v), f.vars[v].ty);
            f.expr(Expr::Cast(e), int)
        };
        let (b, t) = (cast(f, self.bid), cast(f, self.tid));
        let n = f.expr(Expr::Const(Const::Int(i64::from(self.block))), int);
        let start = f.expr(Expr::Binary(BinOp::Mul, b, n), int);
        let i = f.expr(Expr::Binary(BinOp::Add, start, t), int);
        let base = f.expr(Expr::Var(slot), f.vars[slot].ty);
        let Type::Ptr { to, .. } = f.vars[slot].ty else {
            unreachable!("a slot buffer is a pointer")
        };
        f.expr(Expr::Index(base, i), *to)
    }

    /// `slot[bid * block + tid] = v;`
    fn store(&self, f: &mut Function, slot: VarId, v: VarId) -> Stmt {
        let place = self.thread_slot(f, slot);
        let value = f.expr(Expr::Var(v), f.vars[v].ty);
        Stmt::new(StmtKind::Assign { place, value })
    }
}

/// Renames variable `from` to `to` in `s` (its expressions are its own).
fn rename(f: &mut Function, s: &mut Stmt, from: VarId, to: VarId) {
    fn expr(f: &mut Function, e: crate::ir::ExprId, from: VarId, to: VarId) {
        if f.exprs[e].kind == Expr::Var(from) {
            f.exprs[e].kind = Expr::Var(to);
            return;
        }
        let mut children = Vec::new();
        f.for_each_child(e, |c| children.push(c));
        for c in children {
            expr(f, c, from, to);
        }
    }
    let mut roots = Vec::new();
    super::kernel::each_own_expr(s, &mut |e| roots.push(e));
    for e in roots {
        expr(f, e, from, to);
    }
    // (`each_own_expr` covers a `for` header's statements.)
    for b in s.kind.blocks_mut() {
        for s in b.iter_mut() {
            rename(f, s, from, to);
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
