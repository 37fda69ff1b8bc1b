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
//! // Code that runs while augur stages (the closure handed to `extract`)
//! // is written in a `#[augur::staged]` function.
//! #[augur::staged]
//! fn matmul_on_the_gpu() {
//!     // C = A B for 2x3 and 3x2 matrices; A, B, C in caller buffers.
//!     let ex = Builder::new()
//!         .extract("matmul", |a: Dyn<*mut f32>, b: Dyn<*mut f32>, c: Dyn<*mut f32>| {
//!             let ein = Einsum::new(Config::with(Movement::Prophecy));
//!             let (i, j, k) = (ein.index("i"), ein.index("j"), ein.index("k"));
//!             let a = ein.tensor_on::<f32>("A", [2, 3], a);
//!             let b = ein.tensor_on::<f32>("B", [3, 2], b);
//!             let c = ein.tensor_on::<f32>("C", [2, 2], c);
//!             ein.run_on_gpu(|| einsum!(c[i, j] = a[i, k] * b[k, j]));
//!             ein.finish();
//!         })
//!         .unwrap();
//!     let p = compile_simulated(&ex).unwrap();
//!     let (mut a, mut b, mut c) = ([1f32, 2., 3., 4., 5., 6.], [1f32, 0., 0., 1., 1., 1.], [0f32; 4]);
//!     // SAFETY: the buffers hold 6, 6 and 4 floats, as the shapes say.
//!     unsafe { (p.get())(a.as_mut_ptr(), b.as_mut_ptr(), c.as_mut_ptr()) };
//!     assert_eq!(c, [4., 5., 10., 11.]);
//!     // A and B went in, C came out: (6 + 6 + 4) floats.
//!     assert_eq!(p.counters().unwrap().moved(), 64);
//! }
//! # matmul_on_the_gpu();
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
//! positions are errors naming the statement's line: `augur::Error::Dsl`,
//! whose `dsl_error::<`[`ShapeError`]`>()` says which, as data.
//!
//! The DSL's per-extraction state (configuration, the tensor registry, the
//! tensor count that tags see) is an `augur::dsl::State`, shared by every
//! tensor.
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
//!   path through the kernel tracks, in state tags see (`augur::dsl::Seen`),
//!   whether it overwrote the tensor completely, and where it did not, requires the prophecy
//!   `gpu_partial` (the paper's scheme loses the other elements).
//! * `Prophecy` with [`Config::resident`] (beyond the paper): tensors stay
//!   on the device between kernels. Per tensor, two facts in state tags see
//!   (`Seen`) say which copies are current: a kernel's write makes the
//!   device's the only current one; an einsum statement on the CPU (or
//!   [`Tensor::host`]) copies it out first, and a CPU write makes the
//!   device's stale; a kernel copies in only a stale device copy;
//!   [`Einsum::finish`] copies out what a caller's buffer has not seen.
//!   Code after a dyn `if` or around a dyn loop is generated per
//!   combination of the facts, so each path moves the fewest bytes (a dyn
//!   loop of kernels copies in on its first turn only).
//!
//! ## Schedules ([`Schedule`])
//!
//! A CPU statement's loops are laid out by its schedule ([`Config::schedule`],
//! or [`Einsum::with_schedule`] for some statements):
//!
//! * [`Schedule::naive`]: the paper's loops, one per index (the paper's
//!   tables use it).
//! * [`Schedule::Blocked`]: the layout of BLIS and OpenBLAS kernels, from a
//!   [`Blocking`]: register tiles of `rows` × `cols` scalar accumulators
//!   (vector registers once the C compiler is done), the reduction tiled
//!   for the caches, its operands packed into contiguous slivers per tile,
//!   OpenMP over row tiles. Every extent is first-stage, so remainder tiles
//!   are generated exactly, with no bounds checked at run time.
//! * [`Schedule::Auto`] (the default): blocked for products of at least
//!   [`AUTO_MIN_WORK`] innermost steps (matmul-like, with register tiles
//!   shaped for [`Config::vector_bytes`], or matvec-like with partial sums
//!   across a vector), the paper's loops otherwise.
//!
//! Inside [`Einsum::run_on_gpu`], matrix products go through shared-memory
//! tiles under every schedule but [`Schedule::naive`]; other statements
//! keep the paper's block × thread mapping. [`tune()`] stages a program
//! under [`Schedule::candidates`], times each and keeps the fastest, cached
//! per program and machine. Einsum programs compile with `-O3
//! -march=native -ffp-contract=fast -fopenmp-simd` ([`options`]).
//!
//! ## Running
//!
//! [`compile_cpu`] (plain or OpenMP), [`compile_simulated`] (the GPU
//! program on the CPU with byte counts), [`cuda_source`] (compile with
//! nvcc), [`SimInterpreter`] (either, in augur's interpreter: no compiler,
//! every access bounds-checked, every buffer accounted for).
//!
//! The paper's matmul and matvec benchmarks under each strategy (bytes moved,
//! first-stage runs, times on a GPU beside the paper's) are measured by the
//! `augur` command: `cargo run --release -p augur-cli -- bench einsum`
//! (`first-stage`, `gpu`, `paper`).

#![warn(missing_docs)]

mod blocked;
mod context;
pub mod dist;
mod elem;
mod error;
mod fuse;
mod gpu_rows;
mod gpu_tiles;
mod index;
mod interp;
mod macros;
mod plan;
mod program;
mod runtime;
mod runtime_jit;
mod schedule;
mod statement;
mod tensor;
mod term;
mod tile;
mod tune;
pub mod tutorial;

pub use context::{Chosen, Config, Einsum, Movement};
pub use elem::Elem;
pub use error::{Dim, ShapeError};
pub use index::Index;
pub use interp::SimInterpreter;
pub use program::{
    compile_cpu, compile_cpu_with, compile_simulated, compile_simulated_with, cuda_source, options,
    simulated_c, Program,
};
pub use runtime::{cuda_prelude, sim_c, Counters};
pub use schedule::{
    default_threads, native_vector_bytes, Blocking, Schedule, Shape, AUTO_LARGE_WORK,
    AUTO_MIN_WORK, AUTO_PARALLEL_MIN_WORK,
};
pub use tensor::{Access, Tensor};
pub use term::Term;
pub use tune::{tune, Tuned, RETIME_MARGIN, RETIME_ROUNDS};
