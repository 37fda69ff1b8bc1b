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

/// Generates `plan` as `b` lays it out; `openmp`: the OpenMP threads to
/// balance for (`None`: no OpenMP).
#[augur::staged]
pub(crate) fn generate<E: Elem>(plan: &Plan<E>, lay: &Layout, b: Blocking, openmp: Option<usize>) {
    let g = Gen {
        plan,
        lay,
        b,
        openmp: openmp.is_some(),
        threads: openmp.unwrap_or(1),
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
    if g.over_outer() {
        // One parallel loop over the outer index, each turn on one thread
        // with pack buffers of its own.
        let inner = Gen {
            openmp: false,
            threads: 1,
            ..g
        };
        augur::annotate("pragma: omp parallel for");
        plan.loops(&lay.outer, &mut env, &mut |env| match depth {
            None => inner.parallel_tiles(env, None, &[]),
            Some(k) => inner.packed(env, k),
        });
        return;
    }
    let Some(k) = depth else {
        plan.loops(&lay.outer, &mut env, &mut |env| {
            g.parallel_tiles(env, None, &[])
        });
        return;
    };
    let packs = g.allocate(k, b.depth.min(plan.range(k)));
    plan.loops(&lay.outer, &mut env, &mut |env| {
        g.pack_columns(env, k, &packs);
        g.parallel_tiles(env, Some(k), &packs);
    });
    free(&packs, false);
}

/// Frees the buffers of the row-sliver packs (`by_rows`) or of the
/// column-sliver ones.
#[augur::staged]
fn free<E: Elem>(packs: &[Pack<E>], by_rows: bool) {
    for p in packs.iter().filter(|p| p.by_rows == by_rows) {
        runtime::HOST_FREE.call(p.buffer.cast_ptr::<*mut u8>());
    }
}

/// Whether, under OpenMP on `threads`, the outermost loop is the parallel
/// one ([`Gen::over_outer`]).
fn over_outer<E: Elem>(plan: &Plan<E>, lay: &Layout, threads: usize) -> bool {
    let Some(&outer) = lay.outer.first() else {
        return false;
    };
    let (n, t) = (plan.range(outer), threads);
    !lay.lanes && n >= t && (n % t == 0 || n >= 8 * t)
}

/// The index whose loop [`generate`] makes parallel (`None` without OpenMP).
pub(crate) fn parallel_index<E: Elem>(
    plan: &Plan<E>,
    lay: &Layout,
    openmp: Option<usize>,
) -> Option<Index> {
    let threads = openmp?;
    if over_outer(plan, lay, threads) {
        return lay.outer.first().copied();
    }
    match lay.row {
        Some(row) => Some(row),
        None if lay.lanes => None,
        None => Some(lay.vector),
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

    /// Whether the outermost loop (over an index the register tiles do not
    /// cover, a batch) is the parallel one: under OpenMP, when its turns
    /// divide evenly over the threads or are many. Each turn is then a
    /// whole product on one thread, with no fork and join per turn.
    fn over_outer(&self) -> bool {
        self.openmp && over_outer(self.plan, self.lay, self.threads)
    }

    /// One turn of the outer loops with its own pack buffers.
    #[augur::staged]
    fn packed(&self, env: &mut Env, k: Index) {
        let packs = self.allocate(k, self.b.depth.min(self.plan.range(k)));
        self.pack_columns(env, k, &packs);
        self.parallel_tiles(env, Some(k), &packs);
        free(&packs, false);
    }

    /// Packs the column-sliver operands over the whole reduction.
    #[augur::staged]
    fn pack_columns(&self, env: &mut Env, k: Index, packs: &[Pack<E>]) {
        let whole = DepthTile {
            index: k,
            start: Dyn::lit(0),
            len: self.plan.range(k),
            first: true,
        };
        // Tags must tell the packs apart: each has dyn loops.
        for n in augur::range(0..packs.len()) {
            if !packs[n].by_rows {
                let n_cols = self.plan.range(self.lay.vector);
                self.pack(env, &packs[n], whole, Dyn::lit(0), n_cols, true);
            }
        }
    }

    /// Pack buffers for the accesses over (row, `k`) and (`k`, vector)
    /// indices, one tile of `kc` deep each (identical accesses share one).
    /// Column slivers are allocated here, for the whole statement; row
    /// slivers by each row tile ([`Gen::row_buffers`]), so their buffer
    /// here is a placeholder.
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
            let buffer = if by_rows {
                a.tensor.read_buffer(a.loc)
            } else {
                self.scratch(&format!("{}_pack", a.tensor.name()), slot * along)
            };
            packs.push(Pack {
                access: (*a).clone(),
                by_rows,
                buffer,
                origin: Dyn::lit(0),
                slot,
            });
        }
        packs
    }

    /// A pack buffer of `n` elements, written before it is read.
    #[augur::staged]
    fn scratch(&self, name: &str, n: usize) -> Dyn<*mut E> {
        let bytes = (n * std::mem::size_of::<E>()) as i64;
        Dyn::named(
            name,
            runtime::SCRATCH_ALLOC.call(bytes).cast_ptr::<*mut E>(),
        )
    }

    /// `packs` with each row-sliver pack given a buffer of its own for the
    /// `mc` rows from `ic`.
    #[augur::staged]
    fn row_buffers(&self, packs: &[Pack<E>], ic: Dyn<i32>, mc: usize) -> Vec<Pack<E>> {
        let own = |p: &Pack<E>| {
            if !p.by_rows {
                return p.clone();
            }
            let name = format!("{}_pack", p.access.tensor.name());
            Pack {
                buffer: self.scratch(&name, p.slot * mc),
                origin: ic,
                ..p.clone()
            }
        };
        packs.iter().map(own).collect()
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
            let at = if p.by_rows { s - p.origin } else { s };
            let dst = Dyn::named("dst", p.buffer.offset(at * p.slot as i32));
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
        // A product walks column slivers outside row slivers (each column
        // sliver of the packed operand serves every row); a statement
        // without a reduction whose left side is stored along the vector
        // index walks rows outside, so each thread writes few streams.
        let rows_outside =
            self.plan.reduced.is_empty() && self.plan.lhs.indices.last() == Some(&lay.vector);
        let regs =
            |env: &mut Env, ic: Dyn<i32>, mc: usize, d: Option<DepthTile>, packs: &[Pack<E>]| {
                let kernel = |env: &mut Env, row, rows, col, cols| {
                    let t = Tile {
                        row,
                        rows,
                        col,
                        cols,
                    };
                    self.kernel(env, t, d, packs);
                };
                let (rs, cs) = (self.b.rows, self.b.cols);
                if rows_outside {
                    self.tiles(&row_name, ic, mc, rs, false, false, &mut |row, rows, _| {
                        let zero = Dyn::lit(0);
                        self.tiles(&col_name, zero, n, cs, false, false, &mut |col, cols, _| {
                            kernel(env, row, rows, col, cols)
                        });
                    });
                    return;
                }
                self.tiles(
                    &col_name,
                    Dyn::lit(0),
                    n,
                    cs,
                    false,
                    false,
                    &mut |col, cols, _| {
                        self.tiles(&row_name, ic, mc, rs, false, false, &mut |row, rows, _| {
                            kernel(env, row, rows, col, cols)
                        });
                    },
                );
            };
        let depth = |env: &mut Env, ic: Dyn<i32>, mc: usize| {
            let Some(k) = k else {
                return regs(env, ic, mc, None, packs);
            };
            let packs = &self.row_buffers(packs, ic, mc)[..];
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
                    regs(env, ic, mc, Some(d), packs);
                },
            );
            free(packs, true);
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
        self.row_tiles(&name, m, &mut |ic, mc| depth(env, ic, mc));
    }

    /// `body(start, rows)` for each row tile over `m` rows. Under OpenMP,
    /// as many tiles as a multiple of the threads (about `row_tile` rows
    /// each), whose sizes differ by at most one register tile, all inside
    /// the parallel loop (the shorter last one too) and dealt out in turn,
    /// so every thread gets the same rows give or take one register tile.
    /// Without OpenMP, full tiles of `row_tile` then the one left.
    #[augur::staged]
    fn row_tiles(&self, name: &str, m: usize, body: &mut dyn FnMut(Dyn<i32>, usize)) {
        let rows = self.b.rows;
        let slivers = m.div_ceil(rows);
        let per = (self.b.row_tile / rows).max(1);
        let threads = self.threads.max(1);
        let tiles = (slivers.div_ceil(per * threads) * threads).min(slivers);
        if !self.openmp || tiles <= 1 {
            let row_tile = self.b.row_tile;
            return self.tiles(
                name,
                Dyn::lit(0),
                m,
                row_tile,
                true,
                false,
                &mut |s, n, _| body(s, n),
            );
        }
        // Tiles `0..r` hold `q + 1` register tiles, the others `q`; the
        // last ends at `m`.
        let (q, r) = (slivers / tiles, slivers % tiles);
        let (big, small) = ((q + 1) * rows, q * rows);
        let last_start = (tiles - 1) * small + r * rows;
        let last = m - last_start;
        augur::annotate("pragma: omp parallel for schedule(static, 1)");
        let t = Dyn::named(&format!("{name}_t"), 0i32);
        while t.lt(tiles as i32).is_true() {
            if r > 0 && t.lt(r as i32).is_true() {
                body(t * big as i32, big);
            } else if last != small && t.eq((tiles - 1) as i32).is_true() {
                body(Dyn::lit(last_start as i32), last);
            } else {
                body(t * small as i32 + (r * rows) as i32, small);
            }
            t.set(t + 1);
        }
    }
}
