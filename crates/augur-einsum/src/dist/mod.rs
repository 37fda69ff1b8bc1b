//! Einsum over MPI ranks: distributed tensors, statements that become one
//! SPMD program, and communication planned at the first stage.
//!
//! [`Einsum::distribute`] makes a [`World`] of `P` ranks on a process
//! [`Grid`]; its tensors are distributed in a [`Layout`] (block rows or
//! columns, 2D block, 2D block-cyclic; [`Layout::auto`] when none is
//! named), each rank's buffer holding its local array. A statement over
//! distributed tensors generates, for every rank, the messages it posts and
//! the local computation of the left side's elements it holds (the
//! existing CPU schedules, OpenMP inside a rank). Which blocks each rank
//! receives is decided by prophecy, one per message (the generated reads correct it): the program sends exactly
//! what some rank's computation reads, with non-blocking sends and
//! receives overlapped with the local pieces. Tensors made with
//! [`Einsum::tensor_on`] count as replicated: every rank holds them whole.
//!
//! The same function runs under MPI ([`mpi_program`]: a standalone C
//! program for `mpicc` and `mpirun`) or with every rank a thread of one
//! process ([`compile_ranks`] and [`run_ranks`], no MPI needed), and both
//! count the bytes each rank sends ([`Traffic`]), which equal the plan's
//! ([`matmul_plan_bytes`] for a product).
//!
//! ```
//! use augur::{Builder, Dyn};
//! use augur_einsum::dist::{self, Layout};
//! use augur_einsum::{einsum, Config, Einsum};
//!
//! #[augur::staged]
//! fn product_on_four_ranks() {
//!     // C = A B, 6x5 times 5x4, on a 2x2 grid of ranks.
//!     let (m, k, n, ranks) = (6, 5, 4, 4);
//!     let ex = Builder::new()
//!         .extract("mm", |a: Dyn<*mut i64>, b: Dyn<*mut i64>, c: Dyn<*mut i64>| {
//!             let ein = Einsum::new(Config::cpu());
//!             let world = ein.distribute(ranks);
//!             let (i, j, l) = (ein.index("i"), ein.index("j"), ein.index("l"));
//!             let a = world.tensor_on::<i64>("A", [m, k], a);
//!             let b = world.tensor_on::<i64>("B", [k, n], b);
//!             let c = world.tensor_on::<i64>("C", [m, n], c);
//!             einsum!(c[i, j] = a[i, l] * b[l, j]);
//!             ein.finish();
//!         })
//!         .unwrap();
//!     let program = dist::compile_ranks(&ex).unwrap();
//!     let grid = dist::Grid::for_ranks(ranks);
//!     let a: Vec<i64> = (0..30).collect();
//!     let b: Vec<i64> = (0..20).map(|x| x % 7 - 3).collect();
//!     let mut locals: Vec<[Vec<i64>; 3]> = (0..ranks)
//!         .map(|r| {
//!             [
//!                 dist::scatter(&a, &[m, k], Layout::Block2D, grid, r),
//!                 dist::scatter(&b, &[k, n], Layout::Block2D, grid, r),
//!                 vec![0; dist::local_shape(&[m, n], Layout::Block2D, grid, r).iter().product()],
//!             ]
//!         })
//!         .collect();
//!     let f = program.get();
//!     let traffic = dist::run_ranks(&program, ranks, &mut locals, |_, [a, b, c]| {
//!         // SAFETY: each buffer holds its rank's local array, as the layouts say.
//!         unsafe { f(a.as_mut_ptr(), b.as_mut_ptr(), c.as_mut_ptr()) }
//!     })
//!     .unwrap();
//!     let parts: Vec<Vec<i64>> = locals.iter().map(|l| l[2].clone()).collect();
//!     let c = dist::gather(&parts, &[m, n], Layout::Block2D, grid);
//!     for (e, got) in c.iter().enumerate() {
//!         let want: i64 = (0..k).map(|q| a[e / n * k + q] * b[q * n + e % n]).sum();
//!         assert_eq!(*got, want);
//!     }
//!     // Each rank sent exactly what the plan says.
//!     let plan = dist::matmul_plan_bytes(m, n, k, grid, 8);
//!     assert_eq!(traffic.iter().map(|t| t.sent_bytes).collect::<Vec<_>>(), plan);
//! }
//! # product_on_four_ranks();
//! ```

pub(crate) mod copy;
pub(crate) mod layout;
pub(crate) mod partial;
pub(crate) mod plan;
pub(crate) mod runtime;
pub(crate) mod stage;
mod standalone;
mod summa;

pub use layout::{Grid, Layout};
pub use runtime::{mpi_c, simulated_c};
pub use standalone::{mpi_program, Buffer, Role};
pub use summa::{summa, summa_transposed};

use crate::context::Einsum;
use crate::elem::Elem;
use crate::error::ShapeError;
use crate::program::{options, Program};
use crate::tensor::Tensor;
use augur::exec::compile::Backend;
use augur::{dsl, Dyn, Extracted};
use layout::{flatten, unflatten, Split};
use std::panic::Location;

/// The ranks as the first stage knows them: the grid, and the generated
/// code's rank.
#[derive(Clone, Copy)]
pub(crate) struct WorldInfo {
    pub grid: Grid,
    pub rank: Dyn<i32>,
}

/// The MPI ranks a program runs on ([`Einsum::distribute`]): makes
/// distributed tensors.
#[derive(Clone)]
pub struct World {
    ein: Einsum,
    info: WorldInfo,
}

impl Einsum {
    /// Distributes this program over `ranks` MPI ranks on the squarest
    /// grid ([`Grid::for_ranks`]). The generated code reads its rank from
    /// the runtime and stops with a clear message when it runs on another
    /// number of ranks. Call it once, before making tensors, with a CPU
    /// configuration ([`Config::cpu`](crate::Config::cpu)).
    #[track_caller]
    #[augur::staged]
    pub fn distribute(&self, ranks: usize) -> World {
        if ranks == 0 {
            panic!("einsum: distribute over 0 ranks, at {}", Location::caller());
        }
        self.distribute_on(Grid::for_ranks(ranks))
    }

    /// [`distribute`](Einsum::distribute) on the given grid.
    #[track_caller]
    #[augur::staged]
    pub fn distribute_on(&self, grid: Grid) -> World {
        let loc = Location::caller();
        if self.ctx.world.get().is_some() {
            panic!("einsum: distribute called twice on one Einsum, at {loc}");
        }
        if self.ctx.config.gpu {
            panic!(
                "einsum: distribute needs a CPU configuration (Config::cpu()): each rank \
                 computes on its CPU, at {loc}"
            );
        }
        runtime::CHECK_SIZE.call(grid.ranks() as i32);
        let rank = Dyn::named("rank", runtime::RANK.call());
        let info = WorldInfo { grid, rank };
        self.ctx.world.set(Some(info));
        World {
            ein: self.clone(),
            info,
        }
    }
}

impl World {
    /// The rank this code runs on (second stage).
    pub fn rank(&self) -> Dyn<i32> {
        self.info.rank
    }

    /// The process grid.
    pub fn grid(&self) -> Grid {
        self.info.grid
    }

    /// Ranks.
    pub fn ranks(&self) -> usize {
        self.info.grid.ranks()
    }

    /// The communication plan of every distributed statement staged so far,
    /// in order: which rule it follows and the bytes each rank sends and
    /// receives (the generated program's counters, [`Traffic`], equal
    /// them).
    ///
    /// ```
    /// use augur::{Builder, Dyn};
    /// use augur_einsum::dist::{Layout, Rule};
    /// use augur_einsum::{einsum, Config, Einsum};
    ///
    /// #[augur::staged]
    /// fn plans() {
    ///     let seen = std::cell::RefCell::new(Vec::new());
    ///     Builder::new()
    ///         .extract("abt", |a: Dyn<*mut f64>, b: Dyn<*mut f64>, c: Dyn<*mut f64>| {
    ///             let ein = Einsum::new(Config::cpu());
    ///             let world = ein.distribute(2);
    ///             let (i, j, l) = (ein.index("i"), ein.index("j"), ein.index("l"));
    ///             let a = world.tensor_with::<f64>("A", [8, 8], Layout::Block2D, a);
    ///             let b = world.tensor_with::<f64>("B", [8, 8], Layout::Block2D, b);
    ///             let c = world.tensor_with::<f64>("C", [8, 8], Layout::Block2D, c);
    ///             einsum!(c[i, j] = a[i, l] * b[j, l]);
    ///             *seen.borrow_mut() = world.plans();
    ///             ein.finish();
    ///         })
    ///         .unwrap();
    ///     let plans = seen.borrow();
    ///     // Both ranks hold half of `l` in A and B: each sums over its half
    ///     // and sends the other its partial block of C (8 x 4 doubles).
    ///     assert_eq!(plans[0].rule, Rule::PartialSums);
    ///     assert_eq!(plans[0].sent_bytes, [256, 256]);
    /// }
    /// # plans();
    /// ```
    pub fn plans(&self) -> Vec<Planned> {
        self.ein.ctx.planned.borrow().clone()
    }

    /// A distributed tensor of global `shape` in the layout
    /// [`Layout::auto`] picks; `buffer` is this rank's local array
    /// ([`local_shape`] elements).
    #[track_caller]
    #[augur::staged]
    pub fn tensor_on<E: Elem>(
        &self,
        name: &str,
        shape: impl AsRef<[usize]>,
        buffer: Dyn<*mut E>,
    ) -> Tensor<E> {
        let layout = Layout::auto(shape.as_ref(), self.info.grid);
        self.tensor_with(name, shape, layout, buffer)
    }

    /// A distributed tensor of global `shape` in `layout`; `buffer` is
    /// this rank's local array ([`local_shape`] elements).
    #[track_caller]
    #[augur::staged]
    pub fn tensor_with<E: Elem>(
        &self,
        name: &str,
        shape: impl AsRef<[usize]>,
        layout: Layout,
        buffer: Dyn<*mut E>,
    ) -> Tensor<E> {
        let shape = shape.as_ref();
        let split = match Split::new(layout, shape, self.info.grid) {
            Ok(s) => s,
            Err(problem) => dsl::fail(
                ShapeError::Distribution {
                    what: format!("tensor `{name}` of shape {shape:?}"),
                    problem,
                },
                Location::caller(),
            ),
        };
        self.ein.distributed_on(name, shape, split, buffer)
    }
}

/// The local shape rank `rank` stores of a tensor of `shape` in `layout`
/// on `grid`.
///
/// ```
/// use augur_einsum::dist::{local_shape, Grid, Layout};
/// let g = Grid::new(2, 2);
/// assert_eq!(local_shape(&[5, 4], Layout::Block2D, g, 3), vec![2, 2]);
/// assert_eq!(local_shape(&[5, 4], Layout::BlockCyclic { rows: 2, cols: 1 }, g, 0), vec![3, 2]);
/// ```
pub fn local_shape(shape: &[usize], layout: Layout, grid: Grid, rank: usize) -> Vec<usize> {
    split(shape, layout, grid).local_shape(rank)
}

fn split(shape: &[usize], layout: Layout, grid: Grid) -> Split {
    Split::new(layout, shape, grid).unwrap_or_else(|e| panic!("{e}"))
}

/// Rank `rank`'s local array of a row-major `global` tensor of `shape`.
pub fn scatter<T: Copy>(
    global: &[T],
    shape: &[usize],
    layout: Layout,
    grid: Grid,
    rank: usize,
) -> Vec<T> {
    let s = split(shape, layout, grid);
    let local = s.local_shape(rank);
    let n: usize = local.iter().product();
    (0..n)
        .map(|f| {
            let l = unflatten(&local, f);
            let g: Vec<usize> = s
                .dims
                .iter()
                .zip(&l)
                .map(|(d, &x)| d.global(x, s.coord(rank, d.axis)))
                .collect();
            global[flatten(shape, &g)]
        })
        .collect()
}

/// The row-major global tensor from every rank's local array (`locals[r]`
/// is rank `r`'s); a replicated element comes from the first rank that
/// holds it.
pub fn gather<T: Copy + Default>(
    locals: &[Vec<T>],
    shape: &[usize],
    layout: Layout,
    grid: Grid,
) -> Vec<T> {
    let s = split(shape, layout, grid);
    let n: usize = shape.iter().product();
    (0..n)
        .map(|f| {
            let g = unflatten(shape, f);
            let r = (0..grid.ranks())
                .find(|&r| s.holds(r, &g))
                .expect("every element has a holder");
            let l: Vec<usize> = s.dims.iter().zip(&g).map(|(d, &x)| d.local(x)).collect();
            locals[r][flatten(&s.local_shape(r), &l)]
        })
        .collect()
}

/// Which rule a distributed statement's plan follows ([`World::plans`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rule {
    /// Each rank computes the left-side elements it holds and receives the
    /// input blocks they read (SUMMA's plan for `A B`).
    OwnerComputes,
    /// Each rank reduces over the slice of the reduction it holds and sends
    /// each owner its partial block, which the owner adds in rank order
    /// (`pdgemm`'s plan for `A Bᵀ`). Chosen when every input splits the
    /// reduced indices alike and it sends less (in all, then the most any
    /// rank sends); sums are then in another order than one process's, the
    /// same on every run.
    PartialSums,
}

/// The plan of one distributed statement ([`World::plans`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Planned {
    /// The statement, as `C[i][j] = ...`.
    pub statement: String,
    /// Its line in the program (`file:line:column`).
    pub location: String,
    /// The rule its plan follows.
    pub rule: Rule,
    /// Bytes each rank sends.
    pub sent_bytes: Vec<u64>,
    /// Bytes each rank receives.
    pub received_bytes: Vec<u64>,
}

/// What one rank sent and received, as its runtime counted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Traffic {
    /// Bytes sent.
    pub sent_bytes: u64,
    /// Messages sent.
    pub sent_messages: u64,
    /// Bytes received.
    pub received_bytes: u64,
    /// Messages received.
    pub received_messages: u64,
}

/// A distributed program compiled with the simulated-ranks runtime
/// ([`simulated_c`]): every rank a thread of this process ([`run_ranks`]).
pub fn compile_ranks<S: Copy>(ex: &Extracted<S>) -> augur::Result<Program<S>> {
    let mut opts = options(false).with_backend(Backend::C);
    opts.extra_c.push(simulated_c());
    opts.flags.push("-pthread".to_string());
    Program::compile(ex, &opts)
}

/// Runs `program` (from [`compile_ranks`]) on `ranks` simulated ranks:
/// one thread per rank calls `call(rank, &mut locals[rank])`, which calls
/// the function with that rank's buffers. Returns each rank's traffic.
pub fn run_ranks<S: Copy, L: Send>(
    program: &Program<S>,
    ranks: usize,
    locals: &mut [L],
    call: impl Fn(usize, &mut L) + Sync,
) -> augur::Result<Vec<Traffic>> {
    assert_eq!(locals.len(), ranks, "one set of buffers per rank");
    let lib = program.library().ok_or_else(|| augur::Error::Misuse {
        message: "run_ranks needs a program compiled by compile_ranks (C)".to_string(),
        location: None,
    })?;
    // SAFETY: the simulated runtime defines these with these signatures.
    let enter: unsafe extern "C" fn(i32, i32) = unsafe { lib.symbol("augur_dist_sim_enter")? };
    // SAFETY: as above; `augur_dist_stats` writes 4 counters.
    let stats: unsafe extern "C" fn(*mut i64) = unsafe { lib.symbol("augur_dist_stats")? };
    let call = &call;
    let out = std::thread::scope(|scope| {
        let handles: Vec<_> = locals
            .iter_mut()
            .enumerate()
            .map(|(r, l)| {
                scope.spawn(move || {
                    // SAFETY: sets this thread's rank; no memory is touched.
                    unsafe { enter(r as i32, ranks as i32) };
                    call(r, l);
                    let mut st = [0i64; 4];
                    // SAFETY: writes 4 counters into `st`.
                    unsafe { stats(st.as_mut_ptr()) };
                    Traffic {
                        sent_bytes: st[0] as u64,
                        sent_messages: st[1] as u64,
                        received_bytes: st[2] as u64,
                        received_messages: st[3] as u64,
                    }
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a rank's thread panicked"))
            .collect()
    });
    Ok(out)
}

/// Bytes each rank sends for `C[m×n] = A[m×k] B[k×n]` with all three in
/// [`Layout::Block2D`] on `grid` (elements of `elem` bytes): the plan's
/// volume, computed from the layouts alone. Rank `(p, q)` sends its block
/// of A to the other ranks of process row `p` and its block of B to the
/// other ranks of process column `q`, as SUMMA does (skipping ranks that
/// compute nothing).
pub fn matmul_plan_bytes(m: usize, n: usize, k: usize, grid: Grid, elem: usize) -> Vec<u64> {
    let a = split(&[m, k], Layout::Block2D, grid);
    let b = split(&[k, n], Layout::Block2D, grid);
    let c = split(&[m, n], Layout::Block2D, grid);
    (0..grid.ranks())
        .map(|r| {
            let (p, q) = grid.coords(r);
            let a_block: usize = a.local_shape(r).iter().product();
            let b_block: usize = b.local_shape(r).iter().product();
            let busy = |rr: usize| c.local_shape(rr).iter().all(|&x| x > 0);
            let a_to = (0..grid.cols)
                .filter(|&qq| qq != q && busy(grid.rank(p, qq)))
                .count();
            let b_to = (0..grid.rows)
                .filter(|&pp| pp != p && busy(grid.rank(pp, q)))
                .count();
            ((a_block * a_to + b_block * b_to) * elem) as u64
        })
        .collect()
}

/// Bytes each rank sends for `C[m×n] = A[m×k] Bᵀ` (`B` of `n×k`,
/// `C[i][j] = A[i][l] B[j][l]`) with all three in [`Layout::Block2D`] on
/// `grid`, under the partial-sums plan ([`Rule::PartialSums`], which
/// [`World::plans`] reports when it is the one chosen). Rank `(p, q)`
/// holds columns `L_q` of both `A` and `B`; it reduces over them for its
/// rows `I_p` of `C` and every column. It sends its block of `B` to the
/// other ranks of its process column that compute something, and its
/// partial block `C[I_p, J_q']` to each other rank `(p, q')` of its process
/// row, as `pdgemm` reduces.
///
/// ```
/// use augur_einsum::dist::{matmul_transposed_plan_bytes, Grid};
/// // 2x2 ranks, n = 8: a 4x4 block of B and a 4x4 partial of C, 8 bytes each.
/// assert_eq!(matmul_transposed_plan_bytes(8, 8, 8, Grid::new(2, 2), 8), vec![256; 4]);
/// ```
pub fn matmul_transposed_plan_bytes(
    m: usize,
    n: usize,
    k: usize,
    grid: Grid,
    elem: usize,
) -> Vec<u64> {
    let a = split(&[m, k], Layout::Block2D, grid);
    let b = split(&[n, k], Layout::Block2D, grid);
    let c = split(&[m, n], Layout::Block2D, grid);
    let rows_of_c = |p: usize| c.dims[0].local_extent(p);
    let cols_of_c = |q: usize| c.dims[1].local_extent(q);
    let slice = |q: usize| a.dims[1].local_extent(q);
    (0..grid.ranks())
        .map(|r| {
            let (p, q) = grid.coords(r);
            if slice(q) == 0 {
                return 0;
            }
            let b_block = b.dims[0].local_extent(p) * slice(q);
            let b_to = (0..grid.rows)
                .filter(|&pp| pp != p && rows_of_c(pp) > 0)
                .count();
            let parts: usize = (0..grid.cols)
                .filter(|&qq| qq != q)
                .map(|qq| rows_of_c(p) * cols_of_c(qq))
                .sum();
            ((b_block * b_to + parts) * elem) as u64
        })
        .collect()
}

/// A lower bound on the words some rank must receive for an `m×n×k`
/// product on `p` ranks that each hold `memory` words (Irony, Toledo and
/// Tiskin's: `m n k / (2 sqrt(2) p sqrt(memory)) - memory`), at least 0.
pub fn matmul_lower_bound_words(m: usize, n: usize, k: usize, p: usize, memory: usize) -> f64 {
    let work = m as f64 * n as f64 * k as f64 / p as f64;
    (work / (2.0 * 2f64.sqrt() * (memory as f64).sqrt()) - memory as f64).max(0.0)
}

/// A lower bound on the words some rank must send and receive, together,
/// for an `m×n×k` product on `p` ranks when every rank starts with an equal
/// share of each matrix and no copies (a 2D layout such as
/// [`Layout::Block2D`] on sizes the grid divides): some rank performs at
/// least `m n k / p` multiply-adds, which by the Loomis–Whitney inequality
/// touch at least `3 (m n k / p)^(2/3)` elements of `A`, `B` and `C`; it
/// holds `(m k + k n + m n) / p` of them, and every other one must reach it
/// (an input) or leave it (a partial sum). At least 0.
///
/// ```
/// use augur_einsum::dist::matmul_moved_lower_bound_words;
/// assert_eq!(matmul_moved_lower_bound_words(64, 64, 64, 1), 0.0);
/// // 4 ranks, 4096: 3 * 4096^2 * (4^(-2/3) - 1/4) words.
/// let w = matmul_moved_lower_bound_words(4096, 4096, 4096, 4);
/// assert!((w - 7_391_216.0).abs() < 1.0, "{w}");
/// ```
pub fn matmul_moved_lower_bound_words(m: usize, n: usize, k: usize, p: usize) -> f64 {
    let (m, n, k, p) = (m as f64, n as f64, k as f64, p.max(1) as f64);
    let touched = 3.0 * (m * n * k / p).powf(2.0 / 3.0);
    (touched - (m * k + k * n + m * n) / p).max(0.0)
}
