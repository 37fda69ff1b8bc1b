//! Schedules: how a CPU statement's loops are laid out.
//!
//! A statement says what to compute; its schedule says in which loop nest.
//! Every size is a first-stage value, so a schedule is resolved per
//! statement from its extents, and remainders are generated exactly (a
//! second copy of a tile's code for its last, shorter, turn) with no
//! runtime checks.

use std::fmt;

/// How a CPU statement's loops are laid out. Inside
/// [`Einsum::run_on_gpu`](crate::Einsum::run_on_gpu) kernels every
/// schedule but [`Schedule::Naive`] stages matrix products through
/// shared-memory tiles; GPU layouts may join this type later, hence
/// `non_exhaustive`.
///
/// Set for every statement with [`Config::schedule`](crate::Config), for
/// some with [`Einsum::with_schedule`](crate::Einsum::with_schedule).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Schedule {
    /// The paper's loops: one loop per index, the left side's outermost,
    /// a reduction's innermost (the outermost loop `omp parallel for` under
    /// [`Config::openmp`](crate::Config)).
    Naive,
    /// Chosen from the statement's first-stage extents ([`Schedule::resolve`]):
    /// [`Blocking::matmul`] (with smaller row tiles below
    /// [`AUTO_LARGE_WORK`]) for a product whose vector index is on the left
    /// side, [`Blocking::lanes`] for one whose vector index is reduced
    /// (matrix-vector), register tiles without packing for statements
    /// without a reduction (a transpose reads and writes whole tiles; an
    /// outer product keeps its operands in registers), the paper's loops
    /// for small statements. Indices side by side in every access are
    /// fused into one first (`Y[i][j][r] = X[i][j][k] U[k][r]` is one
    /// product of `I·J` rows), and row tiles are balanced over
    /// [`Config::cpu_threads`](crate::Config) (or, for a batch of products
    /// whose count suits the threads, the batch is the parallel loop).
    #[default]
    Auto,
    /// Register blocking, cache tiling and packing as given.
    Blocked(Blocking),
}

/// A blocked loop nest (the layout of BLIS and OpenBLAS kernels).
///
/// The statement is computed in tiles of `rows` × `cols` elements kept in
/// as many scalar accumulators, which the C compiler turns into vector
/// registers: `cols` runs along the *vector index* (the index that is
/// innermost, stride 1, in the most accesses), `rows` along the *row index*
/// (another index of the left side). When the vector index is on the left
/// side (a matrix product), each accumulator is one result element; when it
/// is reduced (a matrix-vector product), the `cols` accumulators of a row
/// are partial sums added at the end.
///
/// With a vector index on the left, one reduced index and `depth` > 0, the
/// reduction is tiled by `depth` (for L1/L2), the row index by `row_tile`,
/// and with `pack` the accesses over (row, reduced) and (reduced, vector)
/// indices are copied per reduction tile into contiguous slivers of `rows`
/// and `cols` (so the kernel reads both operands sequentially, whatever
/// their strides). Under [`Config::openmp`](crate::Config) the loop over
/// row tiles (and the packing loops) is `omp parallel for`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Blocking {
    /// Rows of the register tile (along the row index).
    pub rows: usize,
    /// Columns of the register tile (along the vector index).
    pub cols: usize,
    /// Reduction tile (0: the reduction is not tiled).
    pub depth: usize,
    /// Rows per parallel tile (rounded up to a multiple of `rows`).
    pub row_tile: usize,
    /// Copy the operands of each reduction tile into contiguous slivers.
    pub pack: bool,
}

impl Blocking {
    /// The default for a matrix product of `E` on a CPU with 32-byte
    /// vectors (AVX2): 6 rows × two vectors (6 × 16 `f32`), reduction
    /// tiles of 512, row tiles of 72, packed. That is the shape of BLIS's
    /// AVX2 kernels: 12 accumulator vectors of AVX2's 16, two loads of the
    /// packed right operand and six broadcasts per turn. [`Schedule::Auto`]
    /// takes row tiles of 36 below [`AUTO_LARGE_WORK`], so that each thread
    /// gets more of them.
    pub fn matmul<E>() -> Blocking {
        Blocking::matmul_for::<E>(32)
    }

    /// The default for a matrix product of `E` on a CPU whose vectors are
    /// `vector_bytes` wide: [`Blocking::matmul`] up to 32 bytes; from 64
    /// (AVX-512, 32 vector registers) 8 rows × three vectors (8 × 48
    /// `f32`: 24 accumulator vectors), otherwise alike.
    ///
    /// ```
    /// use augur_einsum::Blocking;
    /// assert_eq!(Blocking::matmul_for::<f32>(32).to_string(), "6x16/k512/m72/pack");
    /// assert_eq!(Blocking::matmul_for::<f32>(64).to_string(), "8x48/k512/m72/pack");
    /// assert_eq!(Blocking::matmul_for::<f64>(64).to_string(), "8x24/k512/m72/pack");
    /// ```
    pub fn matmul_for<E>(vector_bytes: usize) -> Blocking {
        let (rows, vectors, bytes) = if vector_bytes >= 64 {
            (8, 3, 64)
        } else {
            (6, 2, 32)
        };
        Blocking {
            rows,
            cols: vectors * vector::<E>(bytes),
            depth: 512,
            row_tile: 72,
            pack: true,
        }
    }

    /// The default for a reduction along the vector index (matrix-vector):
    /// one row of 4 vectors of partial sums (32 `f32`), untiled, unpacked.
    /// (With several rows, gcc 12 vectorizes the reduction loop across its
    /// turns through permutes: ten times slower. With one row that
    /// vectorization is the fast one: the loop is not annotated as the
    /// register tiles of products are.)
    pub fn lanes<E>() -> Blocking {
        Blocking {
            rows: 1,
            cols: 4 * vector::<E>(32),
            depth: 0,
            row_tile: 64,
            pack: false,
        }
    }

    /// `rows` × `cols`, otherwise as [`Blocking::matmul`].
    pub fn tile(rows: usize, cols: usize) -> Blocking {
        Blocking {
            rows,
            cols,
            ..Blocking::matmul::<f32>()
        }
    }

    /// With reduction tiles of `depth` (0: untiled).
    pub fn depth(self, depth: usize) -> Blocking {
        Blocking { depth, ..self }
    }

    /// With row tiles of `row_tile` rows.
    pub fn row_tile(self, row_tile: usize) -> Blocking {
        Blocking { row_tile, ..self }
    }

    /// With or without packing.
    pub fn pack(self, pack: bool) -> Blocking {
        Blocking { pack, ..self }
    }

    /// The same with every size at least 1 and `row_tile` a multiple of
    /// `rows`.
    pub(crate) fn normalized(self) -> Blocking {
        let rows = self.rows.max(1);
        let tiles = self.row_tile.max(1).div_ceil(rows);
        Blocking {
            rows,
            cols: self.cols.max(1),
            depth: self.depth,
            row_tile: tiles * rows,
            pack: self.pack,
        }
    }
}

/// The width in bytes of this machine's widest vectors that
/// [`Schedule::Auto`] shapes register tiles for: 64 with AVX-512 (its
/// foundation, byte and word, doubleword and quadword, and vector-length
/// parts), 32 otherwise. [`Config::cpu`](crate::Config::cpu) starts from
/// it: einsum programs compile with `-march=native`, for the machine that
/// compiles them.
pub fn native_vector_bytes() -> usize {
    #[cfg(target_arch = "x86_64")]
    {
        let avx512 = std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512bw")
            && std::arch::is_x86_feature_detected!("avx512dq")
            && std::arch::is_x86_feature_detected!("avx512vl");
        if avx512 {
            return 64;
        }
    }
    32
}

/// The default of [`Config::cpu_threads`](crate::Config): the first value
/// of `OMP_NUM_THREADS` where it is set and valid (libgomp reads it), the
/// machine's cores otherwise.
pub fn default_threads() -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    std::env::var("OMP_NUM_THREADS")
        .ok()
        .and_then(|v| v.split(',').next()?.trim().parse::<usize>().ok())
        .filter(|&n| n > 0)
        .unwrap_or(cores)
}

/// Elements of `E` in a vector of `bytes`, at least 1.
fn vector<E>(bytes: usize) -> usize {
    (bytes / std::mem::size_of::<E>().max(1)).max(1)
}

/// What [`Schedule::resolve`] looks at: the statement's shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    /// Whether the statement reduces (indices only its right side has).
    pub reduces: bool,
    /// Whether its vector index is reduced (matrix-vector) rather than on
    /// the left side (matrix product).
    pub vector_reduced: bool,
    /// The product of all its index extents (its innermost statement's
    /// executions).
    pub work: usize,
    /// The width of the target CPU's vectors in bytes
    /// ([`Config::vector_bytes`](crate::Config)).
    pub vector_bytes: usize,
}

/// Below this many innermost executions, [`Schedule::Auto`] keeps the
/// paper's loops (packing and tiles would cost more than they save).
pub const AUTO_MIN_WORK: usize = 32 * 32 * 32;

/// From this many innermost executions on (a square product of about
/// 800), [`Schedule::Auto`] gives matrix products row tiles of 72 (as
/// [`Blocking::matmul`]); below, of 36, so that each thread gets more of
/// them. Measured on 2 threads (AVX2): at 256 and 512 the smaller tiles
/// take 10 to 15% less time, from 1024 on the larger ones up to 2% less.
pub const AUTO_LARGE_WORK: usize = 1 << 29;

/// Below this many innermost executions, a statement [`Schedule::Auto`]
/// blocks stays on one thread under OpenMP (waking the others would cost
/// more than they save); explicit [`Schedule::Blocked`] layouts are
/// parallel at any size.
pub const AUTO_PARALLEL_MIN_WORK: usize = 1 << 18;

impl Schedule {
    /// The paper's loops.
    pub fn naive() -> Schedule {
        Schedule::Naive
    }

    /// The blocked layout for `shape` (`None`: the paper's loops), for
    /// elements of `E`.
    ///
    /// ```
    /// use augur_einsum::{Blocking, Schedule, Shape};
    /// let matmul = Shape { reduces: true, vector_reduced: false, work: 1 << 30, vector_bytes: 32 };
    /// assert_eq!(Schedule::Auto.resolve::<f32>(matmul), Some(Blocking::matmul::<f32>()));
    /// let small = Shape { work: 1 << 24, ..matmul };
    /// assert_eq!(Schedule::Auto.resolve::<f32>(small), Some(Blocking::matmul::<f32>().row_tile(36)));
    /// let avx512 = Shape { vector_bytes: 64, ..matmul };
    /// assert_eq!(Schedule::Auto.resolve::<f32>(avx512), Some(Blocking::matmul_for::<f32>(64)));
    /// let copy = Shape { reduces: false, work: 1 << 20, ..matmul };
    /// assert_eq!(Schedule::Auto.resolve::<f32>(copy), Some(Blocking::matmul::<f32>().row_tile(36)));
    /// let tiny = Shape { work: 1 << 10, ..copy };
    /// assert_eq!(Schedule::Auto.resolve::<f32>(tiny), None);
    /// assert_eq!(Schedule::naive().resolve::<f32>(matmul), None);
    /// ```
    pub fn resolve<E>(self, shape: Shape) -> Option<Blocking> {
        match self {
            Schedule::Naive => None,
            Schedule::Blocked(b) => Some(b.normalized()),
            Schedule::Auto if shape.work < AUTO_MIN_WORK => None,
            Schedule::Auto if shape.vector_reduced => Some(Blocking::lanes::<E>()),
            Schedule::Auto => {
                let b = Blocking::matmul_for::<E>(shape.vector_bytes);
                Some(if shape.work >= AUTO_LARGE_WORK {
                    b
                } else {
                    b.row_tile(36).normalized()
                })
            }
        }
    }
}

impl fmt::Display for Schedule {
    /// `naive`, `auto`, or `8x8/k256/m64/pack`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Schedule::Naive => write!(f, "naive"),
            Schedule::Auto => write!(f, "auto"),
            Schedule::Blocked(b) => write!(f, "{b}"),
        }
    }
}

impl fmt::Display for Blocking {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}x{}/k{}/m{}{}",
            self.rows,
            self.cols,
            self.depth,
            self.row_tile,
            if self.pack { "/pack" } else { "" }
        )
    }
}
