//! First-stage GPU kernels: [`launch`]; inside a kernel, the barriers
//! [`sync_threads`] (a block) and [`grid_sync`] (the grid), [`shared`]
//! memory (per block) and atomic read-modify-writes ([`atomic_add`]).
//!
//! A kernel is written as ordinary staged code that runs once per GPU thread;
//! [`launch`] stages it once, as the body of a launch statement
//! ([`StmtKind::Launch`](crate::ir::StmtKind::Launch)) with its grid, block
//! and indices. The C backend and the interpreter run a launch as the loop
//! nest over blocks and threads; the CUDA backend
//! ([`codegen::cuda`](crate::codegen::cuda)) turns it into a `__global__`
//! function and a launch, and its CPU simulation runs the nest phase by
//! phase (a [`grid_sync`] ends a phase).

use super::ctype::CScalar;
use super::dyn_val::{caller, Dyn, IntoArg};
use super::extern_fn::emit_intrinsic;
use crate::ir::Intrinsic;
pub use crate::ir::MAX_SHARED_BYTES;
use crate::trace::context::{self, Level};
use crate::trace::driver::with;

/// Bytes of shared memory the launch being staged has handed out: a value
/// of the thread's extraction context, so a run or extraction that ends
/// anywhere leaves nothing behind.
#[derive(Default)]
struct SharedUsed(u32);

fn shared_used<R>(f: impl FnOnce(&mut u32) -> R) -> R {
    context::with(|c| c.local::<SharedUsed, R>(Level::Extraction, |u| f(&mut u.0)))
}

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
/// #[augur::staged]
/// fn main() -> augur::Result<()> {
///     use augur::{stage::gpu, Builder, Dyn};
///     let f = Builder::new()
///         .extract("double_all", |x: Dyn<*mut f32>| {
///             gpu::launch(2, 4, |bid, tid| {
///                 let i = bid * 4 + tid;
///                 x.at(i).set(x.at(i) * 2.0f32);
///             });
///         })
///         .unwrap();
///     assert!(f.c_code().contains("for ("));
///     // The interpreter runs the launch as its loop nest: every thread.
///     let mut interp = augur::exec::Interpreter::new();
///     let x = interp.memory_mut().alloc_slice(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]);
///     f.interpret_in(&mut interp, &[x]).unwrap();
///     let doubled: Vec<f32> = interp.memory().read_slice(x, 8).unwrap();
///     assert_eq!(doubled, [2.0, 4.0, 6.0, 8.0, 10.0, 12.0, 14.0, 16.0]);
///     let cuda = augur::codegen::cuda::write_cuda(f.ir(), "").unwrap();
///     assert!(cuda.contains("__global__ void double_all_k0("));
///     assert!(cuda.contains("double_all_k0<<<2, 4>>>("));
///     Ok(())
/// }
/// ```
#[track_caller]
pub fn launch(grid: u32, block: u32, mut body: impl FnMut(Dyn<i32>, Dyn<i32>)) {
    let loc = caller();
    shared_used(|u| *u = 0);
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
    emit_intrinsic::<()>(Intrinsic::GridSync, []);
}

/// A block-wide barrier (CUDA's `__syncthreads()`): every thread of the
/// block reaches it, and sees what the others wrote to [`shared`] or global
/// memory before it, before any goes on. Only inside [`launch`], and only
/// where every thread of the block reaches it (not under a condition that
/// depends on the thread: `Error::Kernel` at the barrier).
#[track_caller]
pub fn sync_threads() {
    emit_intrinsic::<()>(Intrinsic::SyncThreads, []);
}

/// `n` elements of memory shared by the threads of a block (CUDA's
/// `__shared__`), uninitialised; each block has its own. Only inside
/// [`launch`]. Threads write and read it between [`sync_threads`]
/// barriers; the CPU simulation gives each block its own buffer and the
/// interpreter checks that no two threads touch the same element between
/// two barriers where one of them writes.
///
/// A kernel uses at most [`MAX_SHARED_BYTES`]; more is an `Error::Kernel`
/// at the call.
///
/// ```
/// #[augur::staged]
/// fn main() -> augur::Result<()> {
///     use augur::{stage::gpu, Builder, Dyn};
///     // Each block of 4 threads reverses its stretch of `x` through shared memory.
///     let f = Builder::new()
///         .extract("reverse4", |x: Dyn<*mut i32>| {
///             gpu::launch(2, 4, |bid, tid| {
///                 let tile = gpu::shared::<i32>(4);
///                 tile.at(tid).set(x.at(bid * 4 + tid));
///                 gpu::sync_threads();
///                 x.at(bid * 4 + tid).set(tile.at(3 - tid));
///             });
///         })
///         .unwrap();
///     let sim = f.simulated().unwrap();
///     let mut interp = augur::exec::Interpreter::new();
///     let x = interp.memory_mut().alloc_slice(&[1, 2, 3, 4, 5, 6, 7, 8]);
///     sim.interpret_in(&mut interp, &[x]).unwrap();
///     assert_eq!(interp.memory().read_slice::<i32>(x, 8).unwrap(), [4, 3, 2, 1, 8, 7, 6, 5]);
///     let cuda = f.cuda_code("").unwrap();
///     assert!(cuda.contains("reverse4_k0<<<2, 4, 16>>>("), "{cuda}");
///     Ok(())
/// }
/// ```
#[track_caller]
pub fn shared<T: CScalar>(n: u32) -> Dyn<*mut T> {
    let (size, align) = (
        std::mem::size_of::<T>() as u32,
        std::mem::align_of::<T>() as u32,
    );
    let offset = shared_used(|u| *u).next_multiple_of(align);
    let end = n
        .checked_mul(size)
        .and_then(|b| b.checked_add(offset))
        .filter(|&end| end <= MAX_SHARED_BYTES);
    let Some(end) = end else {
        crate::trace::driver::throw(crate::trace::recorder::Ctl::fail(crate::Error::Kernel {
            message: format!(
                "{n} elements of {} bytes take the block's shared memory past {} bytes \
                 (already used: {offset}), CUDA's limit for a kernel",
                size, MAX_SHARED_BYTES
            ),
            location: Some(caller()),
        }));
    };
    shared_used(|u| *u = end);
    let area = [
        IntoArg::<u32>::into_arg(offset),
        IntoArg::<u32>::into_arg(n * size),
    ];
    emit_intrinsic::<*mut u8>(Intrinsic::Shared, area).cast_ptr::<*mut T>()
}

/// Element types of [`atomic_add`]: what CUDA's `atomicAdd` takes.
pub trait Atomic: CScalar {}

impl Atomic for i32 {}
impl Atomic for u32 {}
impl Atomic for i64 {}
impl Atomic for u64 {}
impl Atomic for f32 {}
impl Atomic for f64 {}

/// Adds `v` to `*p` as one indivisible step (CUDA's `atomicAdd`) and gives
/// the value `*p` held before. Threads of a kernel may add to the same
/// element at once (a histogram, a sum over blocks); the interpreter's race
/// check lets atomic updates of one element pass, and reports any other
/// access to it from another thread. On the CPU the threads run one after
/// another, so the sum is exact for integers; float sums depend on the
/// order on a GPU.
///
/// ```
/// #[augur::staged]
/// fn main() -> augur::Result<()> {
///     use augur::{stage::gpu, Builder, Dyn};
///     let f = Builder::new()
///         .extract("histogram", |x: Dyn<*mut i32>, bins: Dyn<*mut i32>| {
///             gpu::launch(2, 8, |bid, tid| {
///                 gpu::atomic_add(bins.at(x.at(bid * 8 + tid)).addr(), 1);
///             });
///         })
///         .unwrap();
///     let mut interp = augur::exec::Interpreter::new();
///     let x = interp.memory_mut().alloc_slice(&[0, 1, 1, 2, 2, 2, 3, 3, 3, 3, 0, 0, 1, 2, 3, 3]);
///     let bins = interp.memory_mut().alloc_slice(&[0i32; 4]);
///     f.simulated().unwrap().interpret_in(&mut interp, &[x, bins]).unwrap();
///     assert_eq!(interp.memory().read_slice::<i32>(bins, 4).unwrap(), [3, 3, 4, 6]);
///     Ok(())
/// }
/// ```
#[track_caller]
pub fn atomic_add<T: Atomic>(p: Dyn<*mut T>, v: impl IntoArg<T>) -> Dyn<T> {
    emit_intrinsic::<T>(Intrinsic::AtomicAdd, [p.into_arg(), v.into_arg()])
}
