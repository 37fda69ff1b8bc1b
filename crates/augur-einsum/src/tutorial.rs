//! # Tutorial: einsum from one core to many ranks
//!
//! This chapter follows one statement, tensor-times-matrix
//! `Y[i][j][r] = X[i][j][k] U[k][r]`, from the cores of one machine to MPI
//! ranks. Its runnable twin prints what each step generates and checks
//! every result against plain Rust:
//!
//! ```sh
//! cargo run --release -p augur-einsum --example tutorial_ranks
//! ```
//!
//! ## On the cores of one machine
//!
//! A statement says what to compute; [`Schedule::Auto`](crate::Schedule)
//! decides the loops from the first-stage extents. Here it first *fuses*
//! `i` and `j`, which every access uses side by side, so the statement is
//! one product of `I·J` rows; then lays it out in register tiles with
//! packed operands, and spreads row tiles over
//! [`Config::cpu_threads`](crate::Config) threads in equal shares.
//! [`Einsum::chosen`](crate::Einsum::chosen) says what it did:
//!
//! ```
//! use augur::{Builder, Dyn};
//! use augur_einsum::{einsum, Config, Einsum, Schedule};
//!
//! #[augur::staged]
//! fn chosen() {
//!     let seen = std::cell::RefCell::new(Vec::new());
//!     Builder::new()
//!         .extract("ttm", |xp: Dyn<*mut f64>, up: Dyn<*mut f64>, yp: Dyn<*mut f64>| {
//!             let ein = Einsum::new(Config { openmp: true, ..Config::cpu() });
//!             let (i, j, k, r) = (ein.index("i"), ein.index("j"), ein.index("k"), ein.index("r"));
//!             let x = ein.tensor_on::<f64>("X", [48, 40, 64], xp);
//!             let u = ein.tensor_on::<f64>("U", [64, 32], up);
//!             let y = ein.tensor_on::<f64>("Y", [48, 40, 32], yp);
//!             einsum!(y[i, j, r] = x[i, j, k] * u[k, r]);
//!             *seen.borrow_mut() = ein.chosen();
//!             ein.finish();
//!         })
//!         .unwrap();
//!     let c = &seen.borrow()[0];
//!     assert_eq!(c.fused, ["ij"]);
//!     assert!(matches!(c.schedule, Schedule::Blocked(_)));
//!     // Printed: `Y[ij][r] = ... at src/...: 8x24/k512/m40/pack, fused ij, parallel over ij`.
//!     assert!(c.to_string().contains("parallel over ij"));
//! }
//! # chosen();
//! ```
//!
//! A batch of products (`C[n][i][j] = A[n][i][k] B[n][k][j]`) whose count
//! suits the threads runs each product on one thread instead; a statement
//! without a reduction (a transpose, an outer product) is tiled too. When
//! the defaults are not the fastest on your machine,
//! [`tune`](crate::tune()) stages the program under a few schedules, checks
//! that each computes what the first did, times them (again, in turn, when
//! they are close) and caches the winner per program and machine.
//! `augur bench kernels` sets the defaults beside NumPy's fastest call on
//! each of these shapes.
//!
//! ## On ranks
//!
//! [`Einsum::distribute`](crate::Einsum::distribute) makes a
//! [`World`](crate::dist::World) of `P` ranks; its tensors are split in a
//! [`Layout`](crate::dist::Layout). The statement is the same; what
//! changes is that each rank computes the part of `Y` it holds, and
//! receives what that part reads from other ranks. Which blocks those are
//! is decided at the first stage, by prophecy: one
//! [`Prophecy<bool>`](augur::prophecy::Prophecy) per possible message, a
//! first attempt sends nothing, and each read of a block a rank does not
//! hold corrects its prophecy, until every prediction holds. The program
//! then sends exactly what some rank reads.
//!
//! That rule is *owner computes*. When every input splits a reduced index
//! the same way, a second plan is made, *partial sums*: each rank reduces
//! over the slice of it that it holds, for every block of the left side
//! that slice reaches, sends each owner its partial block (one more
//! prophecy each: "the owner adds it"), and owners add what they receive
//! in rank order, so the sums are the same on every run. The first stage
//! keeps whichever plan sends less, and
//! [`World::plans`](crate::dist::World::plans) says which and how many
//! bytes each rank sends. `C[i][j] = A[i][l] B[j][l]` with all three in 2D
//! blocks takes partial sums, as ScaLAPACK's `pdgemm` does; the example
//! below keeps owner computes (its partial sums would move parts of `X`
//! and `Y`, far more than half of `U`).
//!
//! With `X`, `Y` and `U` all split by blocks of rows on two ranks, rank 0
//! holds the first half of `X`'s `i` and of `U`'s `k`. Its rows of `Y`
//! read all of `U`, so each rank sends its half of `U` to the other, and
//! nothing of `X`: `K/2 · R` elements each way. Without MPI installed,
//! [`compile_ranks`](crate::dist::compile_ranks) and
//! [`run_ranks`](crate::dist::run_ranks) run the ranks as threads of one
//! process and count the bytes:
//!
//! ```
//! use augur::{Builder, Dyn};
//! use augur_einsum::dist::{self, Grid, Layout};
//! use augur_einsum::{einsum, Config, Einsum};
//!
//! #[augur::staged]
//! fn two_ranks() {
//!     let (ni, nj, nk, nr) = (6, 4, 8, 3);
//!     let ex = Builder::new()
//!         .extract("ttm", |xp: Dyn<*mut f64>, up: Dyn<*mut f64>, yp: Dyn<*mut f64>| {
//!             let ein = Einsum::new(Config::cpu());
//!             let world = ein.distribute(2);
//!             let (i, j, k, r) = (ein.index("i"), ein.index("j"), ein.index("k"), ein.index("r"));
//!             let x = world.tensor_with::<f64>("X", [ni, nj, nk], Layout::BlockRows, xp);
//!             let u = world.tensor_with::<f64>("U", [nk, nr], Layout::BlockRows, up);
//!             let y = world.tensor_with::<f64>("Y", [ni, nj, nr], Layout::BlockRows, yp);
//!             einsum!(y[i, j, r] = x[i, j, k] * u[k, r]);
//!             ein.finish();
//!         })
//!         .unwrap();
//!     let program = dist::compile_ranks(&ex).unwrap();
//!     let grid = Grid::for_ranks(2);
//!     let x: Vec<f64> = (0..ni * nj * nk).map(|e| (e % 7) as f64).collect();
//!     let u: Vec<f64> = (0..nk * nr).map(|e| (e % 5) as f64).collect();
//!     let mut locals: Vec<[Vec<f64>; 3]> = (0..2)
//!         .map(|rank| {
//!             let y = dist::local_shape(&[ni, nj, nr], Layout::BlockRows, grid, rank);
//!             [
//!                 dist::scatter(&x, &[ni, nj, nk], Layout::BlockRows, grid, rank),
//!                 dist::scatter(&u, &[nk, nr], Layout::BlockRows, grid, rank),
//!                 vec![0.0; y.iter().product()],
//!             ]
//!         })
//!         .collect();
//!     let f = program.get();
//!     let traffic = dist::run_ranks(&program, 2, &mut locals, |_, [x, u, y]| {
//!         // SAFETY: each buffer holds its rank's local array.
//!         unsafe { f(x.as_mut_ptr(), u.as_mut_ptr(), y.as_mut_ptr()) }
//!     })
//!     .unwrap();
//!     let parts: Vec<Vec<f64>> = locals.iter().map(|l| l[2].clone()).collect();
//!     let y = dist::gather(&parts, &[ni, nj, nr], Layout::BlockRows, grid);
//!     for ij in 0..ni * nj {
//!         for r in 0..nr {
//!             let want: f64 = (0..nk).map(|k| x[ij * nk + k] * u[k * nr + r]).sum();
//!             assert_eq!(y[ij * nr + r], want);
//!         }
//!     }
//!     // Half of U each way, and nothing else.
//!     for t in &traffic {
//!         assert_eq!(t.sent_bytes, (nk / 2 * nr * 8) as u64);
//!     }
//! }
//! # two_ranks();
//! ```
//!
//! For a matrix product on a 2D grid ([`Layout::Block2D`](crate::dist::Layout)),
//! the same rule gives SUMMA's plan: each rank's block of `A` goes to its
//! process row, its block of `B` to its process column
//! ([`matmul_plan_bytes`](crate::dist::matmul_plan_bytes) counts it).
//!
//! ## Under MPI
//!
//! The same extracted function becomes a standalone C program with
//! [`mpi_program`](crate::dist::mpi_program): every rank fills its part of
//! the inputs, runs, and rank 0 gathers the outputs and checks them against
//! a single-process computation. `augur emit summa --target mpi --size N
//! --ranks P` prints the product's, with the lines to build it with `mpicc`
//! and run it with `mpirun` in its header; `augur bench distributed` runs
//! it beside ScaLAPACK's `pdgemm` on the same layout, data and ranks, with
//! the bytes each side sent and the lower bound.
