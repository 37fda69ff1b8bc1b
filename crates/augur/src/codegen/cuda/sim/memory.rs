//! Where the CPU simulation keeps what a GPU keeps on chip: each block's
//! shared memory (a host buffer with a stretch per block) and the values a
//! thread holds across barriers (a host buffer with a slot per thread),
//! both allocated before a launch and freed after it.

use super::{is_phase, kernel_error, shared_area, shared_bytes, uses, Nest, Phases};
use crate::error::Error;
use crate::ir::{BinOp, Block, Const, Expr, Function, Scalar, SrcLoc, Stmt, StmtKind, Type, VarId};
use std::collections::BTreeSet;

/// Host statements a launch's phases need around them: buffers allocated
/// before (shared memory, per-thread values kept across barriers) and
/// freed after.
#[derive(Default)]
pub(super) struct Around {
    pub(super) before: Block,
    pub(super) after: Block,
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
pub(super) fn shared_buffer(f: &mut Function, body: &mut Block, n: &Nest, around: &mut Around) {
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
        crate::codegen::cuda::kernel::each_expr(s, &mut |e| roots.push(e));
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

impl Phases {
    /// Keeps per-thread values across barriers. A value a thread computes
    /// in one phase and uses in a later one (an accumulator around a loop
    /// of barriers, an index) lives in a host buffer with a slot per
    /// thread: the declaring phase stores it there at its end, and each
    /// later phase that uses it starts by loading the thread's slot into a
    /// variable of its own (and stores it back if it changes it).
    pub(super) fn replicate(
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
    crate::codegen::cuda::kernel::each_own_expr(s, &mut |e| roots.push(e));
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
