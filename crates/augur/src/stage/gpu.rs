//! First-stage GPU kernels: [`launch`] and [`grid_sync`].
//!
//! A kernel is written as ordinary staged code that runs once per GPU thread;
//! [`launch`] stages it once, as the body of a launch statement
//! ([`StmtKind::Launch`]) with its grid, block
//! and indices. The C backend and the interpreter run a launch as the loop
//! nest over blocks and threads; the CUDA backend
//! ([`codegen::cuda`](crate::codegen::cuda)) turns it into a `__global__`
//! function and a launch, and its CPU simulation runs the nest phase by
//! phase (a [`grid_sync`] ends a phase).

use super::dyn_val::{caller, Dyn};
use super::extern_fn::ExternFn;
use crate::ir::{Block, Expr, ExprId, Function, SrcLoc, StmtKind};
use crate::trace::driver::with;

/// The C name of the grid-wide barrier. The CUDA backend defines it as
/// `cooperative_groups::this_grid().sync()` and launches kernels that call
/// it cooperatively; the CPU simulation splits kernels at it.
pub const GRID_SYNC: &str = "augur_grid_sync";

/// The pseudo-header of the device helpers (never included: each backend
/// defines them itself).
pub const DEVICE_HEADER: &str = "augur/device.h";

const SYNC: ExternFn<fn()> = ExternFn::new(GRID_SYNC).header(DEVICE_HEADER);

/// Emits a kernel launch of `grid` blocks of `block` threads: `body(bid, tid)`
/// is staged once and runs on every thread.
///
/// Everything the body reads from outside becomes a kernel parameter (passed
/// by value); the body must not assign variables declared outside it. It
/// is staged once, like straight-line code, so plain Rust state it changes
/// stays changed after the launch. First-stage state it changes (a
/// `Static`) must end the same on every path through the body: what
/// follows the launch cannot depend on the path each thread took
/// (`Error::Kernel` says so at the launch).
///
/// ```
/// use augur::{stage::gpu, Builder, Dyn};
/// let f = Builder::new()
///     .extract("double_all", |x: Dyn<*mut f32>| {
///         gpu::launch(2, 4, |bid, tid| {
///             let i = bid * 4 + tid;
///             x.at(i).set(x.at(i) * 2.0f32);
///         });
///     })
///     .unwrap();
/// assert!(f.c_code().contains("for ("));
/// // The interpreter runs the launch as its loop nest: every thread.
/// let mut interp = augur::exec::Interpreter::new();
/// let x = interp.memory_mut().alloc_slice(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]);
/// f.interpret_in(&mut interp, &[x]).unwrap();
/// let doubled: Vec<f32> = interp.memory().read_slice(x, 8).unwrap();
/// assert_eq!(doubled, [2.0, 4.0, 6.0, 8.0, 10.0, 12.0, 14.0, 16.0]);
/// let cuda = augur::codegen::cuda::write_cuda(f.ir(), "").unwrap();
/// assert!(cuda.contains("__global__ void double_all_k0("));
/// assert!(cuda.contains("double_all_k0<<<2, 4>>>("));
/// ```
#[track_caller]
pub fn launch(grid: u32, block: u32, mut body: impl FnMut(Dyn<i32>, Dyn<i32>)) {
    let loc = caller();
    with(|e| e.launch(Some((grid, block)), loc));
    let bid = Dyn::uninit_named("bid");
    let tid = Dyn::uninit_named("tid");
    body(bid, tid);
    with(|e| e.launch(None, loc));
}

/// A grid-wide barrier: every thread of the launch reaches it before any goes
/// on. Only inside [`launch`]; the kernel is then launched cooperatively.
#[track_caller]
pub fn grid_sync() {
    SYNC.call();
}

/// Fails when `f` has a kernel that synchronises the grid: a loop nest on
/// the CPU (what [`compile`](crate::Extracted::compile) and the
/// interpreter make of a launch) runs each thread to the end before the
/// next starts, so no barrier could hold. The error names the ways to run
/// such a program.
pub(crate) fn runs_as_loop_nest(f: &Function) -> crate::Result<()> {
    let Some(loc) = grid_sync_launch(f, &f.body) else {
        return Ok(());
    };
    Err(crate::Error::Kernel {
        message: format!(
            "`{}` synchronises the grid in this kernel ({GRID_SYNC}), which a loop nest on \
             the CPU cannot run: build its CPU simulation (`ex.simulated()?.compile()`; \
             augur-einsum's `compile_simulated`) or its CUDA (`ex.cuda_code(prelude)`)",
            f.name
        ),
        location: loc,
    })
}

/// The location of the first launch in `b` whose body calls the grid
/// barrier (`Some(None)` for one without a location).
fn grid_sync_launch(f: &Function, b: &Block) -> Option<Option<SrcLoc>> {
    for s in b {
        match &s.kind {
            StmtKind::Launch(l) if calls_grid_sync(f, &l.body) => return Some(s.loc),
            k => {
                if let Some(found) = k.blocks().find_map(|b| grid_sync_launch(f, b)) {
                    return Some(found);
                }
            }
        }
    }
    None
}

fn calls_grid_sync(f: &Function, b: &Block) -> bool {
    let is_sync = |e: ExprId| match f.exprs[e].kind {
        Expr::Call(func, _) => f.externs[func].name == GRID_SYNC,
        _ => false,
    };
    b.iter().any(|s| match &s.kind {
        StmtKind::Eval(e) => is_sync(*e),
        k => k.blocks().any(|b| calls_grid_sync(f, b)),
    })
}
