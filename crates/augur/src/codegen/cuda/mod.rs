//! The CUDA backend and its CPU simulation.
//!
//! First-stage code marks kernels with [`stage::gpu::launch`](crate::stage::gpu::launch):
//! a loop nest over blocks and threads whose body runs once per GPU thread.
//! From one extracted function this module makes:
//!
//! * [`write_cuda`]: a CUDA unit. Each launch becomes a `__global__` kernel
//!   (its parameters are the host values the body reads, by value), a
//!   launcher (`<<<grid, block>>>`, or `cudaLaunchCooperativeKernel` when
//!   the body calls [`grid_sync`](crate::stage::gpu::grid_sync)), and a call
//!   of the launcher where the launch was.
//! * [`simulate`]: the same program as plain C for the CPU, each launch run
//!   as its loop nest, split into phases at grid syncs. DSLs pair it with a
//!   runtime whose "device" is host memory and whose copies count bytes, so
//!   results and data movement are checked without a GPU.
//! * [`split`]: the kernels and the host function as IR, for other backends.
//!
//! Check generated CUDA without a GPU with [`exec::cuda`](crate::exec::cuda)
//! (nvcc `--ptx`).

mod kernel;
mod sim;
mod uniform;
mod writer;

pub use kernel::{split, Kernel, Split};
pub use sim::simulate;
pub use writer::{write_cuda, write_cuda_module, write_cuda_module_with, write_cuda_with};
