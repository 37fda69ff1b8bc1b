//! Device operations in the IR: what the backends ask of a function about
//! its [intrinsics](Intrinsic) (barriers, shared memory, atomics): which
//! it uses and where, and whether its launches can run as plain loop
//! nests.

use crate::ir::{each_expr, Block, Expr, ExprId, Function, Intrinsic, SrcLoc, Stmt, StmtKind};

/// Every intrinsic node `f` holds, with its type (nodes the passes left
/// unreached included, as extern declarations outlive their calls): what
/// the C-like backends define helpers for.
pub(crate) fn intrinsics(f: &Function) -> impl Iterator<Item = (Intrinsic, &crate::ir::Type)> {
    f.exprs.iter().filter_map(|(_, d)| match d.kind {
        Expr::Intrinsic(i, _) => Some((i, &d.ty)),
        _ => None,
    })
}

/// The first intrinsic in `b` that `wanted` accepts, with its statement's
/// location.
pub(crate) fn find_intrinsic(
    f: &Function,
    b: &[Stmt],
    wanted: impl Fn(Intrinsic) -> bool + Copy,
) -> Option<(Intrinsic, Option<SrcLoc>)> {
    for s in b {
        let mut found = None;
        each_expr(s, &mut |e| {
            if found.is_none() {
                found = under(f, e, wanted);
            }
        });
        if let Some(i) = found {
            return Some((i, s.loc));
        }
    }
    None
}

/// The first intrinsic under `e` that `wanted` accepts.
fn under(f: &Function, e: ExprId, wanted: impl Fn(Intrinsic) -> bool + Copy) -> Option<Intrinsic> {
    if let Expr::Intrinsic(i, _) = f.exprs[e].kind {
        if wanted(i) {
            return Some(i);
        }
    }
    let mut found = None;
    f.for_each_child(e, |c| {
        if found.is_none() {
            found = under(f, c, wanted);
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
    let Some((op, loc)) = block_level_launch(f, &f.body) else {
        return Ok(());
    };
    Err(crate::Error::Kernel {
        message: format!(
            "a kernel of `{}` calls {}, which a loop nest on the CPU cannot run (it runs \
             each thread to the end, one after another): build its CPU simulation \
             (`ex.simulated()?.compile()`; augur-einsum's `compile_simulated`) or its CUDA \
             (`ex.cuda_code(prelude)`)",
            f.name,
            op.user_name()
        ),
        location: loc,
    })
}

/// The first launch in `b` whose body meets at a barrier or asks for
/// shared memory: the intrinsic and the launch's location.
fn block_level_launch(f: &Function, b: &Block) -> Option<(Intrinsic, Option<SrcLoc>)> {
    for s in b {
        match &s.kind {
            StmtKind::Launch(l) => {
                if let Some((op, _)) = find_intrinsic(f, &l.body, Intrinsic::is_block_level) {
                    return Some((op, s.loc));
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
