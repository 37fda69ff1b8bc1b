//! # augur-einsum: tensors that move exactly what GPU kernels need
//!
//! A tensor DSL built on [`augur`]: einsum statements over tensors with
//! first-stage shapes generate C loops (optionally OpenMP), or, inside
//! [`Einsum::run_on_gpu`], CUDA kernels. Which tensors to move to and from
//! the GPU is decided by prophecies and a history, inside the library: the
//! program only says what to compute.
//!
//! ```
//! use augur::{Builder, Dyn};
//! use augur_einsum::{compile_simulated, Config, Einsum, Movement};
//!
//! // C = A B for 2x3 and 3x2 matrices; A, B, C in caller buffers.
//! let ex = Builder::new()
//!     .extract("matmul", |a: Dyn<*mut f32>, b: Dyn<*mut f32>, c: Dyn<*mut f32>| {
//!         let ein = Einsum::new(Config::with(Movement::Prophecy));
//!         let (i, j, k) = (ein.index("i"), ein.index("j"), ein.index("k"));
//!         let a = ein.tensor_on::<f32>("A", [2, 3], a);
//!         let b = ein.tensor_on::<f32>("B", [3, 2], b);
//!         let c = ein.tensor_on::<f32>("C", [2, 2], c);
//!         ein.run_on_gpu(|| c.at([i, j]).set(a.at([i, k]) * b.at([k, j])));
//!         ein.finish();
//!     })
//!     .unwrap();
//! let p = compile_simulated(&ex).unwrap();
//! let (mut a, mut b, mut c) = ([1f32, 2., 3., 4., 5., 6.], [1f32, 0., 0., 1., 1., 1.], [0f32; 4]);
//! // SAFETY: the buffers hold 6, 6 and 4 floats, as the shapes say.
//! unsafe { (p.get())(a.as_mut_ptr(), b.as_mut_ptr(), c.as_mut_ptr()) };
//! assert_eq!(c, [4., 5., 10., 11.]);
//! // A and B went in, C came out: (6 + 6 + 4) floats.
//! assert_eq!(p.counters().unwrap().moved(), 64);
//! ```
//!
//! ## Statements
//!
//! `T.at([i, j])` is `T[i][j]`. `L.set(R)` is `L = R`, `L.add_to(R)` (or
//! `L += R`) is `L += R`, `L.mul_by(R)` (or `L *= R`) is `L *= R`. `R` is a
//! sum, difference or product of accesses, constants, `Dyn` values and
//! index values. Indices of `R` that `L` lacks are reduced over: summed for
//! `=` and `+=`, multiplied for `*=` (so `C[i][j] = A[i][k] * B[k][j]` is a
//! matrix product). Each index takes the extent of the dimensions it
//! indexes; disagreeing extents, a wrong number of indices, an index that
//! indexes nothing, and a right side that reads the left tensor at other
//! positions are errors naming the statement's line.
//!
//! ## Data movement ([`Movement`])
//!
//! * `CopyAll`: every tensor has a device buffer, all are copied in before
//!   and out after every kernel.
//! * `Unified`: tensors live in CUDA unified memory; nothing is copied by
//!   the program.
//! * `Prophecy`: each tensor's `needs_gpu` prophecy decides its device
//!   buffer; before each kernel, each tensor's `gpu_read` prophecy decides
//!   whether to copy it in; reads inside the kernel require it. Writes
//!   record `gpu_written`, a history, which decides the copy out. The
//!   history is path-insensitive, so kernel loops keep their shape.
//!
//! ## Running
//!
//! [`compile_cpu`] (plain or OpenMP), [`compile_simulated`] (the GPU
//! program on the CPU with byte counts), [`cuda_source`] (compile with
//! nvcc). [`programs`] holds the paper's benchmark programs.

//!
//! ## Results
//!
//! **Bytes moved per turn** of the paper's benchmark programs at 1024
//! (`cargo bench -p augur-einsum --bench einsum`; counted by the simulated
//! runtime and, identically, by the CUDA runtime on a GPU):
//!
//! | program | copy all | unified | prophecy |
//! |---|---:|---:|---:|
//! | matmul `z = x y` | 50,331,648 | 0 (on demand) | 12,582,912 (x, y in; z out) |
//! | matmul `z += x y` | 50,331,648 | 0 | 16,777,216 (z in too) |
//! | matvec `z = x y` | 16,809,984 | 0 | 4,202,496 |
//!
//! **First stage** (same bench, release, 2-core x86-64; runs include check
//! runs): matmul with prophecies 52 runs in 4 attempts, 1.7 ms (BuildIt:
//! 113 + 7 runs, ~40 ms); copy-all 36 runs, 1.2 ms (BuildIt: 25 runs, ~8 ms);
//! matvec with prophecies 40 runs, 1.3 ms (BuildIt: 89 + 7, ~27 ms).
//!
//! **On a GPU** (H100 80GB HBM3, driver 580; µs, minimum of 10 turns; timed
//! region as in the paper's listing: copies in, kernel, copies out, and the
//! host copy of the result; `examples/gpu_tables.rs`; paper: V100):
//!
//! | matmul | copy all | unified | prophecy | paper: copy all | unified | prophecy |
//! |---:|---:|---:|---:|---:|---:|---:|
//! | 64 | 150 | 82 | **45** | 149 | 239 | 43 |
//! | 128 | 263 | 100 | **73** | 284 | 269 | 94 |
//! | 256 | 638 | 321 | **195** | 840 | 615 | 248 |
//! | 512 | 2,097 | 818 | **703** | 3,053 | 1,647 | 1,059 |
//! | 1024 | 8,156 | **3,236** | 3,418 | 9,863 | 6,343 | 4,244 |
//! | 2048 | 39,456 | **17,846** | 22,734 | 46,552 | 32,395 | 26,803 |
//! | 4096 | 319,520 | **252,230** | 261,640 | 380,378 | 316,443 | 307,830 |
//!
//! | matvec | copy all | unified | prophecy | paper: copy all | unified | prophecy |
//! |---:|---:|---:|---:|---:|---:|---:|
//! | 64 | 106 | 46 | **32** | 112 | 79 | 35 |
//! | 128 | 144 | 58 | **40** | 173 | 132 | 60 |
//! | 256 | 258 | 101 | **82** | 362 | 237 | 129 |
//! | 512 | 670 | 340 | **241** | 1,199 | 621 | 468 |
//! | 1024 | 1,946 | 909 | **675** | 3,061 | 1,356 | 1,054 |
//! | 2048 | 6,764 | 1,841 | **1,745** | 9,647 | 3,564 | 2,854 |
//! | 4096 | 23,280 | **5,748** | 6,966 | 34,341 | 9,754 | 9,199 |
//!
//! Prophecy beats copy-all everywhere (2.3–4.6× at small sizes) and unified
//! memory up to 512 (matmul) and 2048 (matvec). Above that, the H100's
//! page migration wins the *timed* region: unified memory moves `x` and `y`
//! back to the host page by page when the host rewrites them, which the
//! listing's timer does not cover, while the explicit copies are inside it.
//! Every result was checked against a host reference (sizes up to 256) and
//! the byte counts equal the table above. Raw data: `results/h100.csv`.
//!
//! **Size**: 1,077 lines of Rust without blank and comment lines (924
//! without the 153-line runtime, which BuildIt's listing leaves to a
//! separate header), of which 32 deal with prophecies or the history; the
//! paper's C++ DSL: 608 and 25. The difference is mostly what the listing
//! lacks: three element types and operator impls for Rust (term.rs), shape
//! errors, rank-0 tensors, OpenMP, `+=`/`*=` that accumulate, and freeing.

#![warn(missing_docs)]

mod context;
mod elem;
pub mod gpu_bench;
mod index;
mod program;
pub mod programs;
mod runtime;
mod statement;
mod tensor;
mod term;

pub use context::{Config, Einsum, Movement};
pub use elem::Elem;
pub use index::Index;
pub use program::{compile_cpu, compile_simulated, cuda_source, options, simulated_c, Program};
pub use runtime::{cuda_prelude, sim_c, Counters};
pub use tensor::Tensor;
pub use term::{Access, Term};
