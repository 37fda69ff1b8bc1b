//! Kernels with grid syncs whose control flow around a block barrier
//! depends on the block (each block walks its own tiles, between grid
//! syncs).
//!
//! Such a kernel cannot run each phase over all blocks (the blocks take
//! their loops a different number of times), nor block after block (a
//! grid sync waits for every block). It runs in two levels: the stretches
//! between grid syncs one after another, with the control flow around grid
//! syncs (the same on every block and thread) on the host; and within a
//! stretch, block after block, each block's phases between block barriers
//! in turn, as a kernel without grid syncs runs. Values a thread keeps
//! across barriers of either kind live in its slot (`memory.rs`).

use super::{counted, declared_and_assigned, header_vars, kernel_error, Phases};
use crate::codegen::cuda::kernel::find_intrinsic;
use crate::error::Error;
use crate::ir::{Annotation, Block, Function, Intrinsic, Stmt, StmtKind, VarId};
use std::collections::BTreeSet;

/// True if `s` calls the grid barrier at any depth.
pub(super) fn has_grid_sync(f: &Function, s: &Stmt) -> bool {
    find_intrinsic(f, std::slice::from_ref(s), |i| i == Intrinsic::GridSync).is_some()
}

impl Phases {
    /// The grid level: statements around grid syncs, and the stretches
    /// between them, each run block by block.
    pub(super) fn build_grid(
        &mut self,
        f: &mut Function,
        b: Block,
        needs: &BTreeSet<VarId>,
    ) -> Result<Block, Error> {
        let hoist = self.hoisting(f, &b, needs, true);
        let (mut out, mut stretch) = (Vec::new(), Vec::new());
        for (st, hoist) in b.into_iter().zip(hoist) {
            let sync = super::is_sync(f, &st) && has_grid_sync(f, &st);
            if sync {
                self.flush_grid(f, &mut stretch, &mut out)?;
            } else if has_grid_sync(f, &st) || super::escapes(&st) {
                self.flush_grid(f, &mut stretch, &mut out)?;
                let control = self.control_grid(f, st, needs)?;
                out.push(control);
            } else if hoist {
                self.flush_grid(f, &mut stretch, &mut out)?;
                out.push(st);
            } else {
                stretch.push(st);
            }
        }
        self.flush_grid(f, &mut stretch, &mut out)?;
        Ok(out)
    }

    /// Control flow around grid syncs: once, on the host.
    fn control_grid(
        &mut self,
        f: &mut Function,
        mut st: Stmt,
        needs: &BTreeSet<VarId>,
    ) -> Result<Stmt, Error> {
        let v = self.grid_variance.as_ref();
        if !v
            .expect("a grid level has its variance")
            .control_uniform(f, &st)
        {
            return Err(crate::codegen::cuda::uniform::divergent_barrier(
                st.loc.or(self.loc),
            ));
        }
        let mut inner = needs.clone();
        if matches!(st.kind, StmtKind::While { .. } | StmtKind::For { .. }) {
            inner.extend(header_vars(f, &st));
        }
        for blk in st.kind.blocks_mut() {
            *blk = self.build_grid(f, std::mem::take(blk), &inner)?;
        }
        Ok(st)
    }

    /// A stretch between grid syncs: block after block, each its phases.
    fn flush_grid(
        &mut self,
        f: &mut Function,
        stretch: &mut Block,
        out: &mut Block,
    ) -> Result<(), Error> {
        if stretch.is_empty() {
            return Ok(());
        }
        let part = std::mem::take(stretch);
        // What the rest of the kernel also uses stays per thread (a value
        // one block computes once lives only in its loop over blocks).
        let here = occurrences(f, &part);
        self.per_thread = here
            .iter()
            .filter(|(v, n)| self.occurrences.get(v).is_some_and(|all| all > n))
            .map(|(&v, _)| v)
            .collect();
        let inner = self.build(f, part, &BTreeSet::new());
        self.per_thread.clear();
        let inner = inner?;
        let mut blocks = counted(f, self.bid, self.grid, inner, self.loc);
        let what = format!(
            "stretch {} between grid syncs: each iteration a block, its phases in turn",
            self.grid_phases
        );
        self.grid_phases += 1;
        blocks.annotations = vec![Annotation::Comment(what), Annotation::Threads];
        out.push(blocks);
        Ok(())
    }

    /// A value a block computes once for its phases (a tile's bounds) lives
    /// in that stretch's loop over blocks: used after a grid sync it would
    /// be gone.
    pub(super) fn check_block_values(&self, f: &Function, built: &Block) -> Result<(), Error> {
        let stretches = stretch_loops(f, built, self.bid);
        for s in &stretches {
            let StmtKind::For { body, .. } = &s.kind else {
                continue;
            };
            let top: Vec<Stmt> = body
                .iter()
                .filter(|t| matches!(t.kind, StmtKind::Decl { .. }))
                .cloned()
                .collect();
            let (declared, _) = declared_and_assigned(f, &top);
            let mut elsewhere = BTreeSet::new();
            uses_outside(f, built, s, &mut elsewhere);
            if let Some(&v) = declared.iter().find(|v| elsewhere.contains(v)) {
                return Err(kernel_error(
                    f.vars[v].loc.or(self.loc),
                    format!(
                        "`{}` is computed once per block for the control flow around a block \
                         barrier and used again after a grid sync: the CPU simulation runs the \
                         stretches between grid syncs block by block and keeps no per-block \
                         values across them; recompute it after the grid sync",
                        f.var_name(v)
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// The loops over blocks of the stretches between grid syncs, in order.
fn stretch_loops<'a>(f: &Function, b: &'a Block, bid: VarId) -> Vec<&'a Stmt> {
    let mut out = Vec::new();
    for s in b {
        if super::is_phase(f, s, bid) {
            out.push(s);
        } else {
            for inner in s.kind.blocks() {
                out.extend(stretch_loops(f, inner, bid));
            }
        }
    }
    out
}

/// The variables `b` uses outside statement `skip` (at any depth).
fn uses_outside(f: &Function, b: &Block, skip: &Stmt, out: &mut BTreeSet<VarId>) {
    for s in b {
        if std::ptr::eq(s, skip) {
            continue;
        }
        let mut own = Vec::new();
        crate::codegen::cuda::kernel::each_own_expr(s, &mut |e| own.push(e));
        for e in own {
            f.for_each_var(e, &mut |v| {
                out.insert(v);
            });
        }
        for inner in s.kind.blocks() {
            uses_outside(f, inner, skip, out);
        }
    }
}

/// How often each variable occurs in `b`: in expressions (a `for`'s
/// header included) and declarations.
pub(super) fn occurrences(f: &Function, b: &[Stmt]) -> std::collections::BTreeMap<VarId, usize> {
    fn walk(f: &Function, b: &[Stmt], out: &mut std::collections::BTreeMap<VarId, usize>) {
        for s in b {
            if let StmtKind::Decl { var, .. } = s.kind {
                *out.entry(var).or_default() += 1;
            }
            let mut roots = Vec::new();
            crate::codegen::cuda::kernel::each_own_expr(s, &mut |e| roots.push(e));
            for e in roots {
                f.for_each_var(e, &mut |v| *out.entry(v).or_default() += 1);
            }
            for inner in s.kind.blocks() {
                walk(f, inner, out);
            }
        }
    }
    let mut out = std::collections::BTreeMap::new();
    walk(f, b, &mut out);
    out
}
