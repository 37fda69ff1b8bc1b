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
//! use augur_einsum::{compile_simulated, einsum, Config, Einsum, Movement};
//!
//! // C = A B for 2x3 and 3x2 matrices; A, B, C in caller buffers.
//! let ex = Builder::new()
//!     .extract("matmul", |a: Dyn<*mut f32>, b: Dyn<*mut f32>, c: Dyn<*mut f32>| {
//!         let ein = Einsum::new(Config::with(Movement::Prophecy));
//!         let (i, j, k) = (ein.index("i"), ein.index("j"), ein.index("k"));
//!         let a = ein.tensor_on::<f32>("A", [2, 3], a);
//!         let b = ein.tensor_on::<f32>("B", [3, 2], b);
//!         let c = ein.tensor_on::<f32>("C", [2, 2], c);
//!         ein.run_on_gpu(|| einsum!(c[i, j] = a[i, k] * b[k, j]));
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
//! [`einsum!`] writes statements as in the paper: `einsum!(C[i, j] = A[i, k] * B[k, j])`.
//! Without the macro, `T.at([i, j])` is `T[i][j]`. `L.set(R)` is `L = R`, `L.add_to(R)` is
//! `L += R`, `L.mul_by(R)` is `L *= R` (the operators `+=` and `*=` work on
//! an access bound with `let mut`). `R` is a
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
//!   history is path-insensitive, so kernel loops keep their shape. Since
//!   the whole tensor is copied out, a tensor the kernel writes only in
//!   part (`S[i][i] = ...`) or only on some paths is copied in first: each
//!   path through the kernel tracks in a `Static` whether it overwrote the
//!   tensor completely, and where it did not, requires the prophecy
//!   `gpu_partial` (the paper's scheme loses the other elements).
//!
//! ## Running
//!
//! [`compile_cpu`] (plain or OpenMP), [`compile_simulated`] (the GPU
//! program on the CPU with byte counts), [`cuda_source`] (compile with
//! nvcc), [`SimInterpreter`] (either, in augur's interpreter: no compiler,
//! every access bounds-checked, every buffer accounted for). [`programs`] holds the paper's benchmark programs.

//!
//! ## Results
//!
//! **Bytes moved per turn** of the paper's benchmark programs at 1024
//! (`cargo run --release -p augur-cli -- bench einsum`; counted by the
//! simulated runtime and, identically, by the CUDA runtime on a GPU):
//!
//! | program | copy all | unified | prophecy |
//! |---|---:|---:|---:|
//! | matmul `z = x y` | 50,331,648 | 0 (on demand) | 12,582,912 (x, y in; z out) |
//! | matmul `z += x y` | 50,331,648 | 0 | 16,777,216 (z in too) |
//! | matvec `z = x y` | 16,809,984 | 0 | 4,202,496 |
//!
//! **First stage** (`cargo run --release -p augur-cli -- bench first-stage`,
//! 2-core x86-64; runs include check runs): matmul with prophecies 32 runs
//! in 4 attempts, 1.4 ms (BuildIt: 113 + 7 runs, 38 ms); in the paper's
//! restart-at-once mode 48 runs in 7 attempts, 1.9 ms; copy-all 15 runs,
//! 0.84 ms (BuildIt: 25 runs, 9.2 ms); matvec with prophecies 25 runs,
//! 1.1 ms (BuildIt: 89 + 7, 27 ms).
//!
//! **On a GPU** (H100 80GB HBM3, driver 580; µs, minimum of 10 turns; timed
//! region as in the paper's listing: copies in, kernel, copies out, and the
//! host copy of the result; one run; `examples/gpu_tables.rs`; paper: V100):
//!
//! | matmul | copy all | unified | prophecy | paper: copy all | unified | prophecy |
//! |---:|---:|---:|---:|---:|---:|---:|
//! | 64 | 148 | 134 | **46** | 149 | 239 | 43 |
//! | 128 | 268 | 139 | **76** | 284 | 269 | 94 |
//! | 256 | 621 | 495 | **204** | 840 | 615 | 248 |
//! | 512 | 2,092 | 1,090 | **752** | 3,053 | 1,647 | 1,059 |
//! | 1024 | 8,670 | 4,518 | **3,986** | 9,863 | 6,343 | 4,244 |
//! | 2048 | 40,139 | 21,990 | **21,972** | 46,552 | 32,395 | 26,803 |
//! | 4096 | 317,604 | 274,204 | **266,894** | 380,378 | 316,443 | 307,830 |
//!
//! | matvec | copy all | unified | prophecy | paper: copy all | unified | prophecy |
//! |---:|---:|---:|---:|---:|---:|---:|
//! | 64 | 113 | 85 | **35** | 112 | 79 | 35 |
//! | 128 | 145 | 101 | **43** | 173 | 132 | 60 |
//! | 256 | 345 | 137 | **84** | 362 | 237 | 129 |
//! | 512 | 950 | 356 | **239** | 1,199 | 621 | 468 |
//! | 1024 | 2,276 | 789 | **594** | 3,061 | 1,356 | 1,054 |
//! | 2048 | 6,486 | 2,011 | **1,648** | 9,647 | 3,564 | 2,854 |
//! | 4096 | 26,388 | **5,815** | 7,431 | 34,341 | 9,754 | 9,199 |
//!
//! As in the paper, prophecy is fastest at every size but one (matvec at
//! 4096, where the H100's page migration wins by 22%; on the V100 prophecy
//! won by 6%): 3.2× faster than copy-all and 2.9× faster than unified
//! memory for 64×64 matmul, and the gap narrows as computation grows.
//! Between three runs of the whole program single cells moved by up to
//! ±15% (matvec 4096 prophecy: 8,598, 9,508 and 7,431 µs), so close cells
//! (matmul 2048) are ties. Every result was checked against a host
//! reference (sizes up to 256) and the byte counts equal the table above.
//! Raw data: `results/h100.csv`; `examples/gpu_check.rs` compares every
//! output element of multi-statement (cooperative), looping (barriers in a
//! dyn loop), transposing, batched, diagonal-writing and rank-0 kernels
//! with the CPU version, under all three strategies, on the GPU (all
//! equal).
//!
//! **Size** (lines without blanks and comments): the DSL is 1,231 lines
//! (1,076 without the 155-line runtime, which BuildIt's listing leaves to a
//! separate header), of which 58 deal with prophecies or the history; the
//! paper's C++ DSL: 608 and 25. The paper's 25 lines do not keep tensors
//! that a kernel writes only in part (or on some paths) intact; the 26
//! lines that do (`gpu_may_write`, `gpu_partial`, `gpu_full`) are most of
//! the difference. The rest is what the listing lacks: three element types
//! and operator impls for Rust (`term.rs`), the `einsum!` macro, shape and
//! misuse errors, rank-0 tensors, OpenMP, `+=`/`*=` that accumulate,
//! freeing. The interpreter runtime adds 112 lines, the benchmark programs
//! 168, the GPU experiment 174.

#![warn(missing_docs)]

mod context;
mod elem;
pub mod gpu_bench;
mod index;
mod interp;
mod macros;
mod program;
pub mod programs;
mod runtime;
mod statement;
mod tensor;
mod term;

pub use context::{Config, Einsum, Movement};
pub use elem::Elem;
pub use index::Index;
pub use interp::SimInterpreter;
pub use program::{compile_cpu, compile_simulated, cuda_source, options, simulated_c, Program};
pub use runtime::{cuda_prelude, sim_c, Counters};
pub use tensor::Tensor;
pub use term::{Access, Term};
