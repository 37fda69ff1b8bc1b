//! Schedules: how a CPU statement's loops are laid out.
//!
//! A statement says what to compute; its schedule says in which loop nest.
//! Every size is a first-stage value, so a schedule is resolved per
//! statement from its extents, and remainders are generated exactly (a
//! second copy of a tile's code for its last, shorter, turn) with no
//! runtime checks.

use std::fmt;

/// How a CPU statement's loops are laid out (statements inside
/// [`Einsum::run_on_gpu`](crate::Einsum::run_on_gpu) kernels keep the
/// paper's block × thread mapping; a GPU mapping may join this type later,
/// hence `non_exhaustive`).
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
    /// [`Blocking::matmul`] for a product whose vector index is on the left
    /// side, [`Blocking::lanes`] for one whose vector index is reduced
    /// (matrix-vector), the paper's loops for statements without a
    /// reduction (a plain loop over a contiguous dimension, which the C
    /// compiler vectorizes) and for small ones.
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
    /// The default for a matrix product of `E`: 8 rows × one 32-byte vector
    /// (8 `f32`), reduction tiles of 256, row tiles of 64, packed (what
    /// AVX2's 16 vector registers hold: 8 accumulators, a column of the
    /// packed right operand, a broadcast).
    pub fn matmul<E>() -> Blocking {
        Blocking {
            rows: 8,
            cols: vector::<E>(),
            depth: 256,
            row_tile: 64,
            pack: true,
        }
    }

    /// The default for a reduction along the vector index (matrix-vector):
    /// one row of 4 vectors of partial sums (32 `f32`), untiled, unpacked.
    /// (With several rows, gcc 12 vectorizes the reduction loop across its
    /// turns instead, through permutes: ten times slower.)
    pub fn lanes<E>() -> Blocking {
        Blocking {
            rows: 1,
            cols: 4 * vector::<E>(),
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

/// Elements of `E` in a 32-byte vector (AVX2), at least 1.
fn vector<E>() -> usize {
    (32 / std::mem::size_of::<E>().max(1)).max(1)
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
}

/// Below this many innermost executions, [`Schedule::Auto`] keeps the
/// paper's loops (packing and tiles would cost more than they save).
pub const AUTO_MIN_WORK: usize = 32 * 32 * 32;

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
    /// let matmul = Shape { reduces: true, vector_reduced: false, work: 1 << 30 };
    /// assert_eq!(Schedule::Auto.resolve::<f32>(matmul), Some(Blocking::matmul::<f32>()));
    /// let copy = Shape { reduces: false, vector_reduced: false, work: 1 << 20 };
    /// assert_eq!(Schedule::Auto.resolve::<f32>(copy), None);
    /// assert_eq!(Schedule::naive().resolve::<f32>(matmul), None);
    /// ```
    pub fn resolve<E>(self, shape: Shape) -> Option<Blocking> {
        match self {
            Schedule::Naive => None,
            Schedule::Blocked(b) => Some(b.normalized()),
            Schedule::Auto if !shape.reduces || shape.work < AUTO_MIN_WORK => None,
            Schedule::Auto if shape.vector_reduced => Some(Blocking::lanes::<E>()),
            Schedule::Auto => Some(Blocking::matmul::<E>()),
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
