//! Matrix products on the GPU through shared memory: the tiled kernel
//! that GPU BLAS libraries start from.
//!
//! `C[i, j] (=|+=) A[i, k] * B[k, j]` (the operands in any index order)
//! inside `run_on_gpu`, under any schedule but [`Schedule::Naive`]
//! (the paper's loops): each block computes `rows × cols` tiles of `C`,
//! one element per thread (`rows × cols` is the block's thread count,
//! `cols` the largest power of two whose square fits in it). For each
//! `cols`-deep step of the reduction the block's threads copy a tile of `A`
//! and one of `B` into shared memory, wait at a block barrier, and each adds
//! its row of the one times its column of the other; a second barrier
//! guards the tiles before the next copy. Every element of `A` and `B` is
//! read from global memory `rows` or `cols` times fewer than in the
//! paper's loops. Tiles past the edges are filled with zeros, and the sum
//! runs over `k` in order, as the paper's loops do, so results are the
//! same (up to the sign of a zero sum, which the zeros past the edge may
//! turn from `-0.0` to `0.0`).
//!
//! [`Schedule::Naive`]: crate::Schedule::Naive

use crate::context::Thread;
use crate::elem::Elem;
use crate::index::Index;
use crate::statement::{flat, Op, Plan};
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
    pub(crate) fn gpu_tiled(&self, t: Thread, blocks: u32, threads: u32) -> bool {
        let Some(p) = self.product() else {
            return false;
        };
        let cols = tile_cols(threads);
        if cols < 2 {
            return false;
        }
        let rows = threads / cols;
        let (ni, nj, nk) = (self.range(p.i), self.range(p.j), self.range(p.k));
        let tiles_j = nj.div_ceil(cols as usize) as i32;
        let tiles = (ni.div_ceil(rows as usize) as i32) * tiles_j;
        let (rows, cols) = (rows as i32, cols as i32);
        let a_tile = gpu::shared::<E>((rows * cols) as u32);
        let b_tile = gpu::shared::<E>((cols * cols) as u32);
        let (ty, tx) = (t.tid / cols, t.tid % cols);
        let tile = Dyn::named("tile", t.bid);
        while tile.lt(tiles).is_true() {
            let row = Dyn::named("row", tile / tiles_j * rows + ty);
            let col = Dyn::named("col", tile % tiles_j * cols + tx);
            let acc = Dyn::named("acc", E::zero());
            let k0 = Dyn::named("k0", 0i32);
            while k0.lt(nk as i32).is_true() {
                let ka = k0 + tx;
                let from_a = vec![(p.i, row), (p.k, ka)];
                let inside = row.lt(ni as i32) & ka.lt(nk as i32);
                self.fill(a_tile.at(t.tid), inside, p.a, &from_a);
                if ty.lt(cols).is_true() {
                    let kb = k0 + ty;
                    let from_b = vec![(p.k, kb), (p.j, col)];
                    let inside = kb.lt(nk as i32) & col.lt(nj as i32);
                    self.fill(b_tile.at(t.tid), inside, p.b, &from_b);
                }
                gpu::sync_threads();
                for kk in 0..cols {
                    let (x, y) = (a_tile.at(ty * cols + kk), b_tile.at(tx + kk * cols));
                    let term = if p.a_first { x * y } else { y * x };
                    acc.set(acc + term);
                }
                gpu::sync_threads();
                k0.set(k0 + cols);
            }
            if (row.lt(ni as i32) & col.lt(nj as i32)).is_true() {
                let env = vec![(p.i, row), (p.j, col)];
                let place = self
                    .lhs
                    .tensor
                    .write_buffer(self.loc)
                    .at(flat(self.lhs, &env));
                match self.op {
                    Op::Add => place.set(self.read(self.lhs, &env) + acc),
                    _ => place.set(acc),
                }
            }
            tile.set(tile + blocks as i32);
        }
        true
    }

    /// `slot = inside ? a[env] : 0`, reading `a` only inside.
    fn fill(&self, slot: Dyn<E>, inside: Dyn<bool>, a: &Access<E>, env: &crate::statement::Env) {
        if inside.is_true() {
            slot.set(self.read(a, env));
        } else {
            slot.set(E::zero());
        }
    }
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
