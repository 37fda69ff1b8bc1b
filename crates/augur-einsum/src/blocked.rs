//! The blocked CPU loop nest of a [`Blocking`]: register tiles of scalar
//! accumulators, cache tiles, packed operands, OpenMP over row tiles.
//!
//! Every extent is first-stage, so each tiled loop is a loop over its full
//! tiles and, when the extent is not a multiple, the code of one more tile
//! of exactly the size left: no bounds are checked at run time.

use crate::elem::Elem;
use crate::error::ShapeError;
use crate::index::Index;
use crate::runtime;
use crate::schedule::{Blocking, Shape};
use crate::statement::{flat, Env, Op, Plan};
use crate::tensor::Access;
use crate::tile::Tile;
use augur::{dsl, Dyn};

/// Which index plays which part in a blocked statement.
pub(crate) struct Layout {
    /// Innermost (stride 1) in the most right-hand accesses: the register
    /// tile's columns.
    pub vector: Index,
    /// True when `vector` is reduced (its accumulators are partial sums).
    pub lanes: bool,
    /// The register tile's rows: a left-side index other than `vector`.
    pub row: Option<Index>,
    /// The other left-side indices: plain loops around everything.
    pub outer: Vec<Index>,
    /// The reduced indices other than `vector`.
    pub reduced: Vec<Index>,
}

impl Layout {
    /// The layout of `plan`, or `None` when it has no index or repeats
    /// one on the left (`S[i][i] = ...`).
    pub(crate) fn of<E: Elem>(plan: &Plan<E>) -> Option<Layout> {
        if plan.lhs_indices.len() != plan.lhs.indices.len() {
            return None;
        }
        let innermost = |i: Index| {
            let accesses = plan.rhs.accesses();
            accesses
                .iter()
                .filter(|a| a.indices.last() == Some(&i))
                .count()
        };
        // Ties go to the left side's indices, rightmost first.
        let candidates: Vec<Index> = (plan.lhs_indices.iter().rev())
            .chain(&plan.reduced)
            .copied()
            .collect();
        let best = candidates.iter().map(|&i| innermost(i)).max()?;
        let vector = *candidates.iter().find(|&&i| innermost(i) == best)?;
        let lanes = plan.reduced.contains(&vector);
        let row = plan
            .lhs_indices
            .iter()
            .rev()
            .find(|&&i| i != vector)
            .copied();
        let outer = plan
            .lhs_indices
            .iter()
            .filter(|&&i| i != vector && Some(i) != row)
            .copied()
            .collect();
        let reduced = plan
            .reduced
            .iter()
            .filter(|&&i| i != vector)
            .copied()
            .collect();
        Some(Layout {
            vector,
            lanes,
            row,
            outer,
            reduced,
        })
    }

    /// What [`Schedule::resolve`](crate::Schedule::resolve) decides on.
    pub(crate) fn shape<E: Elem>(&self, plan: &Plan<E>, vector_bytes: usize) -> Shape {
        let all = plan.lhs_indices.iter().chain(&plan.reduced);
        Shape {
            reduces: !plan.reduced.is_empty(),
            vector_reduced: self.lanes,
            work: all.map(|&i| plan.range(i)).product(),
            vector_bytes,
        }
    }
}

/// An operand copied into slivers.
pub(crate) struct Pack<E: Elem> {
    pub access: Access<E>,
    /// True: slivers of `rows` along the row index, of one reduction tile
    /// (packed by each row tile for itself); false: slivers of `cols` along
    /// the vector index over the whole reduction (packed once, up front).
    pub by_rows: bool,
    pub buffer: Dyn<*mut E>,
    /// Elements per row or column of the buffer: the reduction tile's
    /// depth (row slivers) or the whole reduction (column slivers). A
    /// shorter last tile keeps the same slots: row tiles packed at once by
    /// different threads must never share one.
    pub slot: usize,
}

/// The reduction tile a kernel covers: its index, first value and length,
/// and whether it is the first tile (which stores what `=` computes; later
/// tiles add to it).
#[derive(Clone, Copy)]
pub(crate) struct DepthTile {
    pub index: Index,
    pub start: Dyn<i32>,
    pub len: usize,
    pub first: bool,
}

/// Generates `plan` as `b` lays it out.
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

/// The generator of one statement.
pub(crate) struct Gen<'p, 'a, E: Elem> {
    pub plan: &'p Plan<'a, E>,
    pub lay: &'p Layout,
    pub b: Blocking,
    pub openmp: bool,
}

impl<E: Elem> Gen<'_, '_, E> {
    pub(crate) fn extent(&self, i: Option<Index>) -> usize {
        i.map_or(1, |i| self.plan.range(i))
    }

    /// `body(start, len, first)` for each tile of `step` from `start` over
    /// `n`: a loop over the full tiles (`omp parallel for` when `parallel`
    /// and OpenMP is on), then the one shorter tile left. With
    /// `separate_first`, the first tile is staged apart (`first` true).
    #[allow(clippy::too_many_arguments)]
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

/// The distance in elements between `a`'s elements at `i` and `i + 1`
/// (0 when `a` does not use `i`).
pub(crate) fn stride<E: Elem>(a: &Access<E>, i: Index) -> i32 {
    let shape = a.tensor.shape();
    let at = |d: usize| shape[d + 1..].iter().product::<usize>() as i32;
    (a.indices.iter().enumerate())
        .filter(|(_, &j)| j == i)
        .map(|(d, _)| at(d))
        .sum()
}
