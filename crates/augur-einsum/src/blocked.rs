//! The blocked CPU loop nest of a [`Blocking`]: register tiles of scalar
//! accumulators, cache tiles, packed operands, OpenMP over row tiles.
//!
//! Every extent is first-stage, so each tiled loop is a loop over its full
//! tiles and, when the extent is not a multiple, the code of one more tile
//! of exactly the size left: no bounds are checked at run time.

use crate::elem::Elem;
use crate::error::ShapeError;
use crate::index::Index;
use crate::plan::{flat, stride, DepthTile, Env, Gen, Layout, Op, Pack, Plan};
use crate::runtime;
use crate::schedule::Blocking;
use crate::tile::Tile;
use augur::{dsl, Dyn};

/// Generates `plan` as `b` lays it out.
#[augur::staged]
pub(crate) fn generate<E: Elem>(plan: &Plan<E>, lay: &Layout, b: Blocking, openmp: bool) {
    let g = Gen {
        plan,
        lay,
        b,
        openmp,
    };
    let mut env = Vec::new();
    if lay.lanes {
        plan.loops(&lay.outer, &mut env, &mut |env| g.lanes(env));
        return;
    }
    // The reduction is tiled when there is one reduced index and the right
    // side does not read the left (a tile would see earlier tiles' sums).
    let reads_lhs = (plan.rhs.accesses().iter()).any(|a| a.tensor.same(&plan.lhs.tensor));
    let depth = match lay.reduced[..] {
        [k] if b.depth > 0 && !reads_lhs => Some(k),
        _ => None,
    };
    let Some(k) = depth else {
        plan.loops(&lay.outer, &mut env, &mut |env| {
            g.parallel_tiles(env, None, &[])
        });
        return;
    };
    let packs = g.allocate(k, b.depth.min(plan.range(k)));
    plan.loops(&lay.outer, &mut env, &mut |env| {
        let whole = DepthTile {
            index: k,
            start: Dyn::lit(0),
            len: plan.range(k),
            first: true,
        };
        // Tags must tell the packs apart: each has dyn loops.
        for n in augur::range(0..packs.len()) {
            if !packs[n].by_rows {
                let n_cols = plan.range(lay.vector);
                g.pack(env, &packs[n], whole, Dyn::lit(0), n_cols, true);
            }
        }
        g.parallel_tiles(env, Some(k), &packs);
    });
    for p in packs {
        runtime::HOST_FREE.call(p.buffer.cast_ptr::<*mut u8>());
    }
}

impl<E: Elem> Gen<'_, '_, E> {
    #[augur::staged]
    pub(crate) fn extent(&self, i: Option<Index>) -> usize {
        i.map_or(1, |i| self.plan.range(i))
    }

    /// `body(start, len, first)` for each tile of `step` from `start` over
    /// `n`: a loop over the full tiles (`omp parallel for` when `parallel`
    /// and OpenMP is on), then the one shorter tile left. With
    /// `separate_first`, the first tile is staged apart (`first` true).
    #[allow(clippy::too_many_arguments)]
    #[augur::staged]
    pub(crate) fn tiles(
        &self,
        name: &str,
        start: Dyn<i32>,
        n: usize,
        step: usize,
        parallel: bool,
        separate_first: bool,
        body: &mut dyn FnMut(Dyn<i32>, usize, bool),
    ) {
        let step = step.clamp(1, n.max(1));
        let mut full = n / step;
        if n as i64 + step as i64 > i32::MAX as i64 {
            let error = ShapeError::TooLong {
                index: self.lay.vector.name,
                extent: n,
                step: step as i32,
            };
            dsl::fail(error, self.plan.loc);
        }
        let mut from = 0;
        if separate_first && full > 0 {
            body(start, step, true);
            (from, full) = (step, full - 1);
        }
        if full == 1 {
            body(start + from as i32, step, from == 0);
        } else if full > 1 {
            let end = Dyn::named(&format!("{name}_end"), start + (from + full * step) as i32);
            if parallel && self.openmp {
                augur::annotate("pragma: omp parallel for");
            }
            let v = Dyn::named(name, start + from as i32);
            while v.lt(end).is_true() {
                body(v, step, from == 0 && !separate_first);
                v.set(v + step as i32);
            }
        }
        if n % step > 0 {
            let first = n < step;
            body(start + (from + full * step) as i32, n % step, first);
        }
    }

    /// Pack buffers for the accesses over (row, `k`) and (`k`, vector)
    /// indices, one tile of `kc` deep each (identical accesses share one).
    #[augur::staged]
    fn allocate(&self, k: Index, kc: usize) -> Vec<Pack<E>> {
        let whole = self.plan.range(k);
        let mut packs: Vec<Pack<E>> = Vec::new();
        if !self.b.pack {
            return packs;
        }
        for a in self.plan.rhs.accesses() {
            let over = |x: Option<Index>| {
                x.is_some_and(|x| {
                    let i = &a.indices;
                    x != k && i.len() == 2 && i.contains(&k) && i.contains(&x)
                })
            };
            let by_rows = if over(self.lay.row) {
                true
            } else if over(Some(self.lay.vector)) {
                false
            } else {
                continue;
            };
            let same =
                |p: &Pack<E>| p.access.tensor.same(&a.tensor) && p.access.indices == a.indices;
            if packs.iter().any(same) {
                continue;
            }
            // Row slivers hold one reduction tile; column slivers all of it.
            let (slot, along) = if by_rows {
                (kc, self.extent(self.lay.row))
            } else {
                (whole, self.plan.range(self.lay.vector))
            };
            let n = slot * along;
            let bytes = (n * std::mem::size_of::<E>()) as i64;
            let name = format!("{}_pack", a.tensor.name());
            let buffer = Dyn::named(&name, runtime::HOST_ALLOC.call(bytes).cast_ptr::<*mut E>());
            packs.push(Pack {
                access: (*a).clone(),
                by_rows,
                buffer,
                slot,
            });
        }
        packs
    }

    /// Copies `p`'s operand for reduction tile `d`, `n` rows or columns
    /// from `from`, into slivers: sliver `s` (`w` wide) at `s * p.slot`,
    /// element (`q`, `x`) of it at `q * w + x`. Both sides are read through
    /// pointers that walk the reduction (affine, so the C compiler can
    /// vectorize the copy).
    #[augur::staged]
    fn pack(
        &self,
        env: &mut Env,
        p: &Pack<E>,
        d: DepthTile,
        from: Dyn<i32>,
        n: usize,
        parallel: bool,
    ) {
        let (along, width) = if p.by_rows {
            (self.lay.row.expect("packed by rows"), self.b.rows)
        } else {
            (self.lay.vector, self.b.cols)
        };
        let a = &p.access;
        let (sa, sk) = (stride(a, along), stride(a, d.index));
        let name = format!("{}_s", along.name);
        self.tiles(&name, from, n, width, parallel, false, &mut |s, w, _| {
            env.push((along, s));
            env.push((d.index, d.start));
            let buffer = a.tensor.read_buffer(a.loc);
            let src = Dyn::named("src", buffer.offset(flat(a, env)));
            env.truncate(env.len() - 2);
            let dst = Dyn::named("dst", p.buffer.offset(s * p.slot as i32));
            let q = Dyn::named(&format!("{}_q", d.index.name), 0i32);
            while q.lt(d.len as i32).is_true() {
                for x in 0..w {
                    dst.at(x as i32).set(src.at(x as i32 * sa));
                }
                dst.set(dst.offset(w as i32));
                src.set(src.offset(sk));
                q.set(q + 1);
            }
        });
    }

    /// Row tiles in parallel (or, without a row index, column slivers);
    /// in each, the reduction tiles of `k` (packing the row operands of
    /// each), then column slivers, then row slivers: one register tile each.
    #[augur::staged]
    fn parallel_tiles(&self, env: &mut Env, k: Option<Index>, packs: &[Pack<E>]) {
        let lay = self.lay;
        let (m, n) = (self.extent(lay.row), self.plan.range(lay.vector));
        let col_name = format!("{}_0", lay.vector.name);
        let row_name = format!("{}_1", lay.row.map_or("r", |r| r.name));
        let regs = |env: &mut Env, ic: Dyn<i32>, mc: usize, d: Option<DepthTile>| {
            self.tiles(
                &col_name,
                Dyn::lit(0),
                n,
                self.b.cols,
                false,
                false,
                &mut |col, cols, _| {
                    self.tiles(
                        &row_name,
                        ic,
                        mc,
                        self.b.rows,
                        false,
                        false,
                        &mut |row, rows, _| {
                            let t = Tile {
                                row,
                                rows,
                                col,
                                cols,
                            };
                            self.kernel(env, t, d, packs);
                        },
                    );
                },
            );
        };
        let depth = |env: &mut Env, ic: Dyn<i32>, mc: usize| {
            let Some(k) = k else {
                return regs(env, ic, mc, None);
            };
            let (kn, kc) = (self.plan.range(k), self.b.depth);
            let separate = self.plan.op == Op::Assign;
            self.tiles(
                k.name,
                Dyn::lit(0),
                kn,
                kc,
                false,
                separate,
                &mut |start, len, first| {
                    let d = DepthTile {
                        index: k,
                        start,
                        len,
                        first,
                    };
                    for n in augur::range(0..packs.len()) {
                        if packs[n].by_rows {
                            self.pack(env, &packs[n], d, ic, mc, false);
                        }
                    }
                    regs(env, ic, mc, Some(d));
                },
            );
        };
        if lay.row.is_none() {
            // One row: the column slivers are the parallel tiles.
            let mut each = |col: Dyn<i32>, cols: usize, _| {
                let Some(k) = k else {
                    let t = Tile {
                        row: Dyn::lit(0),
                        rows: 1,
                        col,
                        cols,
                    };
                    return self.kernel(env, t, None, packs);
                };
                let (kn, kc) = (self.plan.range(k), self.b.depth);
                let separate = self.plan.op == Op::Assign;
                self.tiles(
                    k.name,
                    Dyn::lit(0),
                    kn,
                    kc,
                    false,
                    separate,
                    &mut |start, len, first| {
                        let d = DepthTile {
                            index: k,
                            start,
                            len,
                            first,
                        };
                        let t = Tile {
                            row: Dyn::lit(0),
                            rows: 1,
                            col,
                            cols,
                        };
                        self.kernel(env, t, Some(d), packs);
                    },
                );
            };
            return self.tiles(
                &col_name,
                Dyn::lit(0),
                n,
                self.b.cols,
                true,
                false,
                &mut each,
            );
        }
        let name = format!("{}_0", lay.row.map_or("r", |r| r.name));
        self.tiles(
            &name,
            Dyn::lit(0),
            m,
            self.b.row_tile,
            true,
            false,
            &mut |ic, mc, _| depth(env, ic, mc),
        );
    }
}
