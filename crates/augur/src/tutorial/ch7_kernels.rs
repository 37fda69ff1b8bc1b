//! # 7. GPU kernels
//!
//! A GPU kernel is staged code that runs once per GPU thread.
//! [`gpu::launch(grid, block, body)`](crate::stage::gpu::launch) stages
//! `body(bid, tid)` once, with the block and thread index as `Dyn<i32>`
//! values, and the same extracted function then becomes three programs:
//!
//! * CUDA ([`Extracted::cuda_code`](crate::Extracted::cuda_code)): a
//!   `__global__` kernel, its launcher and the host function;
//! * the CPU simulation ([`Extracted::simulated`](crate::Extracted::simulated)):
//!   plain C (or IR for the JIT and the interpreter) that runs the threads
//!   one after another, in an order the kernel's barriers allow;
//! * for kernels without barriers or shared memory, the launch as a loop
//!   nest, which `compile` and `interpret` run directly.
//!
//! ```
//! #[augur::staged]
//! fn main() -> augur::Result<()> {
//!     use augur::{stage::gpu, Builder, Dyn};
//!
//!     let ex = Builder::new()
//!         .extract("saxpy", |a: Dyn<f32>, x: Dyn<*mut f32>, y: Dyn<*mut f32>| {
//!             gpu::launch(2, 4, |bid, tid| {
//!                 let i = bid * 4 + tid;
//!                 y.at(i).set(a * x.at(i) + y.at(i));
//!             });
//!         })?;
//!     let cuda = ex.cuda_code("")?;
//!     assert!(cuda.contains("__global__ void saxpy_k0("));
//!     assert!(cuda.contains("saxpy_k0<<<2, 4>>>("));
//!
//!     let (mut x, mut y) = ([1.0f32; 8], [2.0f32; 8]);
//!     let f = ex.compile()?;
//!     // SAFETY: both buffers hold the 8 floats the launch touches.
//!     unsafe { f.get()(3.0, x.as_mut_ptr(), y.as_mut_ptr()) };
//!     assert_eq!(y, [5.0; 8]);
//!     Ok(())
//! }
//! ```
//!
//! A kernel reads host values (`a`, the pointers) as parameters, and
//! writes memory, never host variables. First-stage values work as
//! everywhere: a plain Rust loop in the body unrolls, a `Static` decides
//! what each thread's code is.
//!
//! # Shared memory and block barriers
//!
//! The threads of a block share [`gpu::shared`](crate::stage::gpu::shared)
//! memory, and wait for each other at
//! [`gpu::sync_threads`](crate::stage::gpu::sync_threads). A block sums
//! its part of `x` by halving: each step adds the upper half of the partial
//! sums to the lower half, and every thread waits before the next. The
//! halving is a plain Rust loop, so each step is its own code:
//!
//! ```
//! #[augur::staged]
//! fn main() -> augur::Result<()> {
//!     use augur::exec::Interpreter;
//!     use augur::{stage::gpu, Builder, Dyn};
//!
//!     const BLOCK: i32 = 8;
//!     let ex = Builder::new().extract("block_sums", |x: Dyn<*mut i32>, sums: Dyn<*mut i32>| {
//!         gpu::launch(3, BLOCK as u32, |bid, tid| {
//!             let part = gpu::shared::<i32>(BLOCK as u32);
//!             part.at(tid).set(x.at(bid * BLOCK + tid));
//!             gpu::sync_threads();
//!             let mut half = BLOCK / 2;
//!             while half > 0 {
//!                 if tid.lt(half).is_true() {
//!                     part.at(tid).set(part.at(tid) + part.at(tid + half));
//!                 }
//!                 gpu::sync_threads();
//!                 half /= 2;
//!             }
//!             if tid.eq(0).is_true() {
//!                 sums.at(bid).set(part.at(0));
//!             }
//!         });
//!     })?;
//!     // CUDA gets the shared memory with the launch: 8 ints a block.
//!     assert!(ex.cuda_code("")?.contains("block_sums_k0<<<3, 8, 32>>>("));
//!
//!     // The simulation runs each block's phases between barriers in turn. In
//!     // the interpreter, every thread's memory accesses are checked against
//!     // the others' of the same phase.
//!     let sim = ex.simulated()?;
//!     let mut it = Interpreter::new();
//!     let x: Vec<i32> = (1..=24).collect();
//!     let (xp, sp) = (it.memory_mut().alloc_slice(&x), it.memory_mut().alloc_slice(&[0i32; 3]));
//!     sim.interpret_in(&mut it, &[xp, sp])?;
//!     assert_eq!(it.memory().read_slice::<i32>(sp, 3)?, [36, 100, 164]);
//!     Ok(())
//! }
//! ```
//!
//! A value a thread computes before a barrier and uses after it (an
//! accumulator, an index) needs nothing special: the simulation keeps it
//! per thread. Control flow around a barrier must be the same for every
//! thread of the block (in CUDA too: a barrier some threads skip hangs the
//! GPU); it may depend on the block, as a loop over each block's tiles
//! does. [`gpu::grid_sync`](crate::stage::gpu::grid_sync) waits for the
//! whole grid (the kernel is then launched cooperatively).
//!
//! # Atomics
//!
//! Threads that add to the same element use
//! [`gpu::atomic_add`](crate::stage::gpu::atomic_add): `atomicAdd` in
//! CUDA, an atomic instruction in C and in the JIT. Without it, the
//! interpreter reports the race:
//!
//! ```
//! #[augur::staged]
//! fn main() -> augur::Result<()> {
//!     use augur::exec::Interpreter;
//!     use augur::{stage::gpu, Builder, Dyn};
//!
//!     let count = |atomic: bool| {
//!         Builder::new().extract("count", move |x: Dyn<*mut i32>, bins: Dyn<*mut i32>| {
//!             gpu::launch(2, 4, |bid, tid| {
//!                 let bin = bins.at(x.at(bid * 4 + tid));
//!                 if atomic {
//!                     gpu::atomic_add(bin.addr(), 1);
//!                 } else {
//!                     bin.set(bin + 1);
//!                 }
//!             });
//!         })
//!     };
//!     let run = |atomic: bool| -> augur::Result<Vec<i32>> {
//!         let mut it = Interpreter::new();
//!         let x = it.memory_mut().alloc_slice(&[0, 1, 1, 2, 0, 0, 1, 2]);
//!         let bins = it.memory_mut().alloc_slice(&[0i32; 3]);
//!         count(atomic)?.interpret_in(&mut it, &[x, bins])?;
//!         it.memory().read_slice(bins, 3)
//!     };
//!     assert_eq!(run(true)?, [3, 3, 2]);
//!     assert!(run(false).unwrap_err().to_string().contains("data race"));
//!     Ok(())
//! }
//! ```
//!
//! # What is checked where
//!
//! * Staging: shared memory past 48 KiB a kernel, and `shared` outside a
//!   launch, are errors at their line.
//! * The CUDA writer and the simulation: a barrier under control flow the
//!   threads that meet there may take differently; a kernel that assigns a
//!   host variable, returns, or calls a host function.
//! * `compile` and `interpret` of the launch as a loop nest: a kernel with
//!   barriers or shared memory is an error that names the simulation.
//! * The interpreter, running the simulation: races between threads (the
//!   threads of one phase of a block, and of different blocks), reads of
//!   shared memory no thread has written.
//!
//! [`augur_einsum`](https://docs.rs/augur-einsum)'s `run_on_gpu` is built
//! on all this: its matrix products stage tiles of both operands in shared
//! memory between two barriers, the kernel GPU libraries start from.
//!
//! The complete program is `crates/augur/examples/tutorial_7_kernels.rs`:
//! a tiled matrix product, checked against plain Rust in the simulation
//! (C, and the interpreter's race check), with its CUDA printed.
