//! Matrix products on the GPU through shared memory and register blocks:
//! the tiled kernel that GPU BLAS libraries start from.
//!
//! `C[i, j] (=|+=) A[i, k] * B[k, j]` (the operands in any index order)
//! inside `run_on_gpu`, under any schedule but [`Schedule::Naive`]
//! (the paper's loops). A block's threads are laid out as `rows × cols`
//! (`cols` the largest power of two whose square fits in the block), and
//! each thread computes a square of `reg × reg` results, so a block
//! computes tiles of `rows·reg × cols·reg` elements of `C`. `reg` is 4, 2
//! or 1: the largest that still gives every block a tile and keeps the
//! shared tiles within 16 KiB ([`register_block`]).
//!
//! For each `cols`-deep step of the reduction the block's threads copy a
//! tile of `A` and one of `B` into shared memory, wait at a block barrier,
//! and each thread adds, for every `k` of the step, the products of its
//! `reg` elements of `A`'s column and `reg` of `B`'s row (`reg²` products
//! from `2·reg` reads of shared memory, against 2 reads per product with
//! one result per thread); a second barrier guards the tiles before the
//! next copy. A thread's results are `rows` and `cols` apart, so a warp's
//! reads of `B` and its writes of `C` are contiguous, and its reads of `A`
//! one broadcast. Every element of `A` and `B` is read from global memory
//! `rows·reg` or `cols·reg` times fewer than in the paper's loops. Tiles
//! past the edges are filled with zeros, and each sum runs over `k` in
//! order, as the paper's loops do, so results are the same (up to the sign
//! of a zero sum, which the zeros past the edge may turn from `-0.0` to
//! `0.0`).
//!
//! [`Schedule::Naive`]: crate::Schedule::Naive

use crate::context::Thread;
use crate::elem::Elem;
use crate::index::Index;
use crate::plan::{flat, Env, Op, Plan};
use crate::tensor::Access;
use crate::term::Term;
use augur::stage::gpu;
use augur::Dyn;

/// The shape a tiled product needs: `C[i, j] = X * Y` with one reduced
/// index `k`, `A` the operand with `i` (and `k`), `B` the one with `j`.
struct Product<'p, E: Elem> {
    i: Index,
    j: Index,
    k: Index,
    a: &'p Access<E>,
    b: &'p Access<E>,
    /// `A` is the product's left operand (kept, so the C reads alike).
    a_first: bool,
}

impl<E: Elem> Plan<'_, E> {
    #[augur::staged]
    fn product(&self) -> Option<Product<'_, E>> {
        if !matches!(self.op, Op::Assign | Op::Add) {
            return None;
        }
        let (&[i, j], &[k]) = (&self.lhs_indices[..], &self.reduced[..]) else {
            return None;
        };
        let Term::Product(x, y) = &self.rhs else {
            return None;
        };
        let (Term::Access(x), Term::Access(y)) = (&**x, &**y) else {
            return None;
        };
        let has = |a: &Access<E>, p: Index, q: Index| {
            a.indices.len() == 2 && a.indices.contains(&p) && a.indices.contains(&k) && p != q
        };
        let apart = |a: &Access<E>| !a.tensor.same(&self.lhs.tensor);
        if !apart(x) || !apart(y) || self.lhs.indices != [i, j] {
            return None;
        }
        if has(x, i, j) && has(y, j, i) {
            Some(Product {
                i,
                j,
                k,
                a: x,
                b: y,
                a_first: true,
            })
        } else if has(y, i, j) && has(x, j, i) {
            Some(Product {
                i,
                j,
                k,
                a: y,
                b: x,
                a_first: false,
            })
        } else {
            None
        }
    }

    /// Stages the statement as a tiled product if it is one and the block
    /// has at least 4 threads; false (nothing staged) otherwise.
    #[augur::staged]
    pub(crate) fn gpu_tiled(&self, t: Thread, blocks: u32, threads: u32) -> bool {
        let Some(p) = self.product() else {
            return false;
        };
        let cols = tile_cols(threads) as usize;
        if cols < 2 {
            return false;
        }
        let rows = threads as usize / cols;
        let (ni, nj, nk) = (self.range(p.i), self.range(p.j), self.range(p.k));
        let reg = register_block::<E>((ni, nj), (rows, cols), blocks as usize);
        // A block's tile of C, and the depth of one step along k.
        let (bm, bn, bk) = (rows * reg, cols * reg, cols);
        let tiles_j = nj.div_ceil(bn) as i32;
        let tiles = (ni.div_ceil(bm) as i32) * tiles_j;
        let a_tile = gpu::shared::<E>((bm * bk) as u32);
        let b_tile = gpu::shared::<E>((bk * bn) as u32);
        let (ty, tx) = (t.tid / cols as i32, t.tid % cols as i32);
        let (ni, nj, nk) = (ni as i32, nj as i32, nk as i32);
        let tile = Dyn::named("tile", t.bid);
        while tile.lt(tiles).is_true() {
            let row0 = Dyn::named("row0", tile / tiles_j * bm as i32);
            let col0 = Dyn::named("col0", tile % tiles_j * bn as i32);
            let acc: Vec<Dyn<E>> = (0..reg * reg)
                .map(|_| Dyn::named("acc", E::zero()))
                .collect();
            let k0 = Dyn::named("k0", 0i32);
            while k0.lt(nk).is_true() {
                let a_at = |e: Dyn<i32>| (row0 + e / bk as i32, k0 + e % bk as i32);
                self.load(t, threads, (a_tile, bm * bk), p.a, &|e| {
                    let (r, k) = a_at(e);
                    (r.lt(ni) & k.lt(nk), vec![(p.i, r), (p.k, k)])
                });
                let b_at = |e: Dyn<i32>| (k0 + e / bn as i32, col0 + e % bn as i32);
                self.load(t, threads, (b_tile, bk * bn), p.b, &|e| {
                    let (k, c) = b_at(e);
                    (k.lt(nk) & c.lt(nj), vec![(p.k, k), (p.j, c)])
                });
                gpu::sync_threads();
                // Thread (ty, tx) owns rows ty + r * rows and columns
                // tx + c * cols of the tile: a warp reads one row of A (a
                // broadcast) and consecutive columns of B.
                for kk in 0..bk as i32 {
                    let a: Vec<Dyn<E>> = (0..reg as i32)
                        .map(|r| a_tile.at((ty + r * rows as i32) * bk as i32 + kk))
                        .collect();
                    let b: Vec<Dyn<E>> = (0..reg as i32)
                        .map(|c| b_tile.at(kk * bn as i32 + tx + c * cols as i32))
                        .collect();
                    for (n, acc) in acc.iter().enumerate() {
                        let (x, y) = (a[n / reg], b[n % reg]);
                        let term = if p.a_first { x * y } else { y * x };
                        acc.set(*acc + term);
                    }
                }
                gpu::sync_threads();
                k0.set(k0 + bk as i32);
            }
            // Tags must tell the stores apart: each has a dyn branch.
            for n in augur::range(0..reg * reg) {
                let row = row0 + ty + (n / reg * rows) as i32;
                let col = col0 + tx + (n % reg * cols) as i32;
                if (row.lt(ni) & col.lt(nj)).is_true() {
                    let env = vec![(p.i, row), (p.j, col)];
                    let place = self
                        .lhs
                        .tensor
                        .write_buffer(self.loc)
                        .at(flat(self.lhs, &env));
                    match self.op {
                        Op::Add => place.set(self.read(self.lhs, &env) + acc[n]),
                        _ => place.set(acc[n]),
                    }
                }
            }
            tile.set(tile + blocks as i32);
        }
        true
    }

    /// Fills the `len` slots of `tile`, `threads` at a time: slot `e` gets
    /// the element of `a` at the indices `at(e)` gives where it is inside,
    /// zero past the edges.
    #[augur::staged]
    fn load(
        &self,
        t: Thread,
        threads: u32,
        (tile, len): (Dyn<*mut E>, usize),
        a: &Access<E>,
        at: &dyn Fn(Dyn<i32>) -> (Dyn<bool>, Env),
    ) {
        let threads = threads as usize;
        // Tags must tell the turns apart: each has dyn branches.
        for s in augur::range(0..len.div_ceil(threads)) {
            let e = t.tid + (s * threads) as i32;
            let (inside, env) = at(e);
            // Only a last, partial turn asks which threads have a slot.
            let whole = (s + 1) * threads <= len;
            if whole || e.lt(len as i32).is_true() {
                self.fill(tile.at(e), inside, a, &env);
            }
        }
    }

    /// `slot = inside ? a[env] : 0`, reading `a` only inside.
    #[augur::staged]
    fn fill(&self, slot: Dyn<E>, inside: Dyn<bool>, a: &Access<E>, env: &Env) {
        if inside.is_true() {
            slot.set(self.read(a, env));
        } else {
            slot.set(E::zero());
        }
    }
}

/// The side of the square of results each thread computes (4, 2 or 1):
/// the largest whose block tiles, `rows × cols` times its square, still
/// give every one of `blocks` blocks a tile of an `ni × nj` result, and
/// whose shared tiles of A and B take at most 16 KiB (a third of a block's
/// 48).
#[augur::staged]
fn register_block<E>(
    (ni, nj): (usize, usize),
    (rows, cols): (usize, usize),
    blocks: usize,
) -> usize {
    let fits = |reg: usize| {
        let tiles = ni.div_ceil(rows * reg) * nj.div_ceil(cols * reg);
        let bytes = reg * cols * (rows + cols) * std::mem::size_of::<E>();
        tiles >= blocks && bytes <= 16 << 10
    };
    [4, 2].into_iter().find(|&reg| fits(reg)).unwrap_or(1)
}

/// The columns of a tile for `threads` threads: the largest power of two
/// whose square fits and divides them (0 or 1: no tiling).
fn tile_cols(threads: u32) -> u32 {
    let mut c = 1u32;
    while (c * 2) * (c * 2) <= threads && threads % (c * 2) == 0 {
        c *= 2;
    }
    c
}

#[cfg(test)]
mod tests {
    #[test]
    fn tiles_take_the_largest_square_that_fits() {
        let cases = [
            (1, 1),
            (3, 1),
            (4, 2),
            (32, 4),
            (256, 16),
            (512, 16),
            (1024, 32),
            (96, 8),
        ];
        for (threads, cols) in cases {
            assert_eq!(super::tile_cols(threads), cols, "{threads} threads");
        }
    }
}
