//! Device operations in the IR: the helpers a GPU kernel calls (the block
//! and grid barriers, shared memory, atomic adds) are calls of externs
//! declared in the pseudo-header [`DEVICE_HEADER`], which no backend
//! includes: each defines or lowers them itself (the C writer, the CUDA
//! writer, the CPU simulation, the JIT's symbols, the interpreter's
//! builtins). This module names them and answers what the backends ask of
//! a function: which device helpers it calls and where, and whether its
//! launches can run as plain loop nests.

use crate::ir::{each_expr, Block, Expr, ExprId, ExternDecl, Function, SrcLoc, Stmt, StmtKind};

/// The C name of the grid-wide barrier. The CUDA backend defines it as
/// `cooperative_groups::this_grid().sync()` and launches kernels that call
/// it cooperatively; the CPU simulation splits kernels at it.
pub const GRID_SYNC: &str = "augur_grid_sync";

/// The pseudo-header of the device helpers (never included: each backend
/// defines them itself).
pub const DEVICE_HEADER: &str = "augur/device.h";

/// The C name of the block-wide barrier: CUDA's `__syncthreads()`.
pub const SYNC_THREADS: &str = "augur_sync_threads";

/// The C name of a block's shared memory: `augur_shared(offset, bytes)` is
/// the address `offset` bytes into the block's shared memory, of which the
/// kernel uses `offset + bytes` at most (both constants).
pub const SHARED: &str = "augur_shared";

/// Shared memory a block may use: CUDA's limit without opting in per kernel.
pub const MAX_SHARED_BYTES: u32 = 48 * 1024;

/// The prefix of the atomic helpers' C names.
pub const ATOMIC_ADD_PREFIX: &str = "augur_atomic_add_";

/// True if `name` is a barrier: [`GRID_SYNC`] or [`SYNC_THREADS`].
pub(crate) fn is_barrier(name: &str) -> bool {
    name == GRID_SYNC || name == SYNC_THREADS
}

/// The first call in `b` of a device helper whose name `wanted` accepts:
/// its name and location.
pub(crate) fn find_device_call(
    f: &Function,
    b: &[Stmt],
    wanted: impl Fn(&str) -> bool + Copy,
) -> Option<(String, Option<SrcLoc>)> {
    for s in b {
        let mut found = None;
        each_expr(s, &mut |e| {
            if found.is_none() {
                found = calls(f, e, wanted);
            }
        });
        if let Some(name) = found {
            return Some((name, s.loc));
        }
    }
    None
}

/// The staging function behind device helper `c_name`, for messages
/// (`augur_sync_threads` is `gpu::sync_threads`).
pub(crate) fn user_name(c_name: &str) -> String {
    match c_name.strip_prefix(ATOMIC_ADD_PREFIX) {
        Some(_) => "gpu::atomic_add".to_string(),
        None => format!("gpu::{}", c_name.strip_prefix("augur_").unwrap_or(c_name)),
    }
}

/// True if `d` is the device helper `name`.
pub(crate) fn is_device_fn(d: &ExternDecl, name: &str) -> bool {
    d.name == name && d.header.as_deref() == Some(DEVICE_HEADER)
}

/// The name of the first device helper under `e` that `wanted` accepts.
fn calls(f: &Function, e: ExprId, wanted: impl Fn(&str) -> bool + Copy) -> Option<String> {
    if let Expr::Call(fid, _) = &f.exprs[e].kind {
        let d = &f.externs[*fid];
        if d.header.as_deref() == Some(DEVICE_HEADER) && wanted(&d.name) {
            return Some(d.name.clone());
        }
    }
    let mut found = None;
    f.for_each_child(e, |c| {
        if found.is_none() {
            found = calls(f, c, wanted);
        }
    });
    found
}

/// Fails when `f` has a kernel that meets at a barrier or uses shared
/// memory: a loop nest on the CPU (what
/// [`compile`](crate::Extracted::compile) and the interpreter make of a
/// launch) runs each thread to the end before the next starts, so no
/// barrier could hold, and has no memory per block. The error names the
/// ways to run such a program.
pub(crate) fn runs_as_loop_nest(f: &Function) -> crate::Result<()> {
    let Some((name, loc)) = block_level_launch(f, &f.body) else {
        return Ok(());
    };
    Err(crate::Error::Kernel {
        message: format!(
            "a kernel of `{}` calls {}, which a loop nest on the CPU cannot run (it runs \
             each thread to the end, one after another): build its CPU simulation \
             (`ex.simulated()?.compile()`; augur-einsum's `compile_simulated`) or its CUDA \
             (`ex.cuda_code(prelude)`)",
            f.name,
            user_name(&name)
        ),
        location: loc,
    })
}

/// The first launch in `b` whose body calls a barrier or asks for shared
/// memory: the helper's name and the launch's location.
fn block_level_launch(f: &Function, b: &Block) -> Option<(String, Option<SrcLoc>)> {
    let block_level = |n: &str| n == GRID_SYNC || n == SYNC_THREADS || n == SHARED;
    for s in b {
        match &s.kind {
            StmtKind::Launch(l) => {
                if let Some((name, _)) = find_device_call(f, &l.body, block_level) {
                    return Some((name, s.loc));
                }
            }
            k => {
                if let Some(found) = k.blocks().find_map(|b| block_level_launch(f, b)) {
                    return Some(found);
                }
            }
        }
    }
    None
}
