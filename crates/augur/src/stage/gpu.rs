//! First-stage GPU kernels: [`launch`] and [`grid_sync`].
//!
//! A kernel is written as ordinary staged code that runs once per GPU thread;
//! [`launch`] emits it as a loop nest over blocks and threads, marked with the
//! [`KERNEL_ANNOTATION`]. The C backend prints that nest as plain loops; the
//! CUDA backend ([`codegen::cuda`](crate::codegen::cuda)) turns it into a
//! `__global__` function and a launch, and its CPU simulation runs the nest
//! phase by phase (a [`grid_sync`] ends a phase). The loop nest is the
//! kernel's meaning: each backend keeps it.

use super::dyn_val::{annotate, Dyn};
use super::extern_fn::ExternFn;

/// The annotation that marks a launch's outer loop (over blocks).
pub const KERNEL_ANNOTATION: &str = "augur.cuda.kernel";

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
/// by value); the body must not assign variables declared outside it, return,
/// or leave the launch with `break`. The launch is a loop nest in the IR:
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
/// let cuda = augur::codegen::cuda::write_cuda(f.ir(), "").unwrap();
/// assert!(cuda.contains("__global__ void double_all_k0("));
/// assert!(cuda.contains("double_all_k0<<<2, 4>>>("));
/// ```
#[track_caller]
pub fn launch(grid: u32, block: u32, mut body: impl FnMut(Dyn<i32>, Dyn<i32>)) {
    annotate(KERNEL_ANNOTATION);
    // The body runs again while the engine audits the loops (as any dyn
    // loop body does), hence `FnMut`.
    let bid = Dyn::named("bid", 0i32);
    while bid.lt(grid as i32).is_true() {
        let tid = Dyn::named("tid", 0i32);
        while tid.lt(block as i32).is_true() {
            body(bid, tid);
            tid.set(tid + 1);
        }
        bid.set(bid + 1);
    }
}

/// A grid-wide barrier: every thread of the launch reaches it before any goes
/// on. Only inside [`launch`]; the kernel is then launched cooperatively.
#[track_caller]
pub fn grid_sync() {
    SYNC.call();
}
