//! Register tiles: a tile of results (or of partial sums) in scalar
//! accumulators, every operand read through a pointer that walks the
//! reduction.
//!
//! Element (r, c) of a tile reads each operand at its walking pointer plus
//! a constant (`r` times its row stride plus `c` times its vector stride),
//! and each reduction turn advances the pointers by constants: the
//! addresses are affine in the loop counters even under `-fwrapv` (which
//! augur compiles with, and under which `int32_t` index arithmetic is not
//! affine), so the C compiler turns a row of accumulators into vector
//! registers and the products into vector FMAs.

use crate::elem::Elem;
use crate::index::Index;
use crate::plan::{flat, stride, value_with, DepthTile, Env, Gen, Op, Pack};
use crate::tensor::Access;
use augur::Dyn;

/// The annotation on a register tile's innermost reduction loop: an OpenMP
/// `simd` loop whose turns never run concurrently (`safelen(1)`), which
/// is the loop as written, with the hint that its turns are one lane each.
/// The C compiler then turns the tile's row of accumulators into vector
/// registers (superword parallelism within one turn) instead of
/// vectorizing the loop across its turns, which it does on its own for
/// tiles of fewer than 5 rows, through permutes and 10 times slower
/// (gcc 12 on AVX2: a 4 × 16 tile of a 512 product takes 10.9 ms a call
/// without it, 0.93 ms with). Einsum programs compile with
/// `-fopenmp-simd`, which reads `simd` pragmas and nothing else of OpenMP.
pub(crate) const REGISTER_TILE_LOOP: &str = "pragma: omp simd safelen(1) simdlen(1)";

/// One register tile: its first row and column, and its sizes.
#[derive(Clone, Copy)]
pub(crate) struct Tile {
    pub row: Dyn<i32>,
    pub rows: usize,
    pub col: Dyn<i32>,
    pub cols: usize,
}

/// An operand of a tile: element (r, c) at `ptr[r * row + c * col]`; a
/// reduction turn of index `i` moves `ptr` by `step(i)`.
struct Walker<E: Elem> {
    ptr: Dyn<*mut E>,
    row: i32,
    col: i32,
    steps: Vec<(Index, i32)>,
}

/// Hashes the strides (the pointer is a `Dyn`, which hashes to nothing):
/// what decides the code a tile generates, so `#[augur::staged]` tracks a
/// list of walkers.
impl<E: Elem> std::hash::Hash for Walker<E> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        (self.row, self.col, &self.steps).hash(state);
    }
}

impl<E: Elem> Walker<E> {
    fn step(&self, i: Index) -> i32 {
        self.steps.iter().find(|(j, _)| *j == i).map_or(0, |s| s.1)
    }
}

/// One reduction loop: its index, first value and length.
type Level = (Index, Dyn<i32>, usize);

impl<E: Elem> Gen<'_, '_, E> {
    /// Binds the tile's row `r` and column `c` (or the vector index to
    /// `col`).
    #[augur::staged]
    fn bind(&self, env: &mut Env, row: Option<Dyn<i32>>, col: Option<Dyn<i32>>) -> usize {
        let before = env.len();
        if let (Some(i), Some(v)) = (self.lay.row, row) {
            env.push((i, v));
        }
        if let Some(v) = col {
            env.push((self.lay.vector, v));
        }
        env.len() - before
    }

    /// A walker per right-hand access (in [`Term::accesses`](crate::Term)
    /// order) at the element `env` binds, or at its packed sliver.
    #[augur::staged]
    fn walkers(
        &self,
        env: &Env,
        t: Tile,
        d: Option<DepthTile>,
        packs: &[Pack<E>],
    ) -> Vec<Walker<E>> {
        let (lay, plan) = (self.lay, self.plan);
        let accesses = plan.rhs.accesses();
        let packed = |a: &Access<E>| {
            let same =
                |p: &&Pack<E>| p.access.tensor.same(&a.tensor) && p.access.indices == a.indices;
            d.and_then(|d| packs.iter().find(same).map(|p| (p, d)))
        };
        let mut out = Vec::new();
        for a in accesses {
            let w = match packed(a) {
                Some((p, d)) => {
                    // Row slivers hold this tile from its start; column
                    // slivers the whole reduction.
                    let (ptr, w) = if p.by_rows {
                        (p.buffer.offset((t.row - p.origin) * p.slot as i32), t.rows)
                    } else {
                        let at = t.col * p.slot as i32 + d.start * t.cols as i32;
                        (p.buffer.offset(at), t.cols)
                    };
                    Walker {
                        ptr,
                        row: p.by_rows as i32,
                        col: !p.by_rows as i32,
                        steps: vec![(d.index, w as i32)],
                    }
                }
                None => Walker {
                    ptr: a.tensor.read_buffer(a.loc).offset(flat(a, env)),
                    row: lay.row.map_or(0, |i| stride(a, i)),
                    col: stride(a, lay.vector),
                    steps: plan.reduced.iter().map(|&i| (i, stride(a, i))).collect(),
                },
            };
            out.push(w);
        }
        out
    }

    /// The right side at tile element (`r`, `c`), reading through `ptrs`.
    #[augur::staged]
    fn element(
        &self,
        env: &Env,
        ws: &[Walker<E>],
        ptrs: &[Dyn<*mut E>],
        r: usize,
        c: usize,
    ) -> Dyn<E> {
        let accesses = self.plan.rhs.accesses();
        let read = |a: &Access<E>, _: &Env| {
            let n = accesses
                .iter()
                .position(|b| std::ptr::eq(*b, a))
                .expect("an access of the term");
            let at = r as i32 * ws[n].row + c as i32 * ws[n].col;
            ptrs[n].at(at)
        };
        value_with(&self.plan.rhs, env, &read)
    }

    /// Loops over `levels`, advancing copies of the walkers' pointers each
    /// turn; `leaf` runs innermost with the current pointers. With `tile`
    /// the innermost loop (around `leaf` alone) is a register tile's, and
    /// annotated [`REGISTER_TILE_LOOP`].
    #[augur::staged]
    fn walk(
        &self,
        env: &mut Env,
        levels: &[Level],
        tile: bool,
        ws: &[Walker<E>],
        ptrs: &[Dyn<*mut E>],
        leaf: &mut dyn FnMut(&mut Env, &[Dyn<*mut E>]),
    ) {
        let Some((&(i, start, len), rest)) = levels.split_first() else {
            return leaf(env, ptrs);
        };
        let ps: Vec<Dyn<*mut E>> = ptrs.iter().map(|p| Dyn::named("p", *p)).collect();
        if tile && rest.is_empty() {
            augur::annotate(REGISTER_TILE_LOOP);
        }
        let q = Dyn::named(&format!("{}_q", i.name), 0i32);
        while q.lt(len as i32).is_true() {
            env.push((i, start + q));
            self.walk(env, rest, tile, ws, &ps, leaf);
            env.pop();
            for (w, p) in ws.iter().zip(&ps) {
                let s = w.step(i);
                if s != 0 {
                    p.set(p.offset(s));
                }
            }
            q.set(q + 1);
        }
    }

    /// `lhs op= value` at `lp[off]`.
    #[augur::staged]
    fn store(&self, lp: Dyn<*mut E>, off: i32, op: Op, value: Dyn<E>) {
        let value = match op {
            Op::Assign => value,
            Op::Add => lp.at(off) + value,
            Op::Mul => lp.at(off) * value,
        };
        lp.at(off).set(value);
    }

    /// The left side's pointer at the element `env` binds, and its strides
    /// along the row and vector indices.
    #[augur::staged]
    fn lhs(&self, env: &Env) -> (Dyn<*mut E>, i32, i32) {
        let (plan, lay) = (self.plan, self.lay);
        let lp = plan
            .lhs
            .tensor
            .write_buffer(plan.loc)
            .offset(flat(plan.lhs, env));
        let lp = Dyn::named("out", lp);
        let row = lay.row.map_or(0, |i| stride(plan.lhs, i));
        (lp, row, stride(plan.lhs, lay.vector))
    }

    /// One register tile of results: accumulators over the reduction (the
    /// depth tile `d`, or all of it), then folded into the left side.
    #[augur::staged]
    pub(crate) fn kernel(&self, env: &mut Env, t: Tile, d: Option<DepthTile>, packs: &[Pack<E>]) {
        let plan = self.plan;
        // Every reduced index at its first value, for the walkers' start.
        let levels: Vec<Level> = (plan.reduced.iter())
            .map(|&i| match d {
                Some(d) if d.index == i => (i, d.start, d.len),
                _ => (i, Dyn::lit(0), plan.range(i)),
            })
            .collect();
        let n = self.bind(env, Some(t.row), Some(t.col));
        env.extend(levels.iter().map(|&(i, s, _)| (i, s)));
        let ws = self.walkers(env, t, d, packs);
        env.truncate(env.len() - levels.len());
        let (lp, lr, lc) = self.lhs(env);
        env.truncate(env.len() - n);
        let (start, combine) = plan.combine();
        let reduces = !plan.reduced.is_empty();
        let acc: Vec<Dyn<E>> = (0..t.rows * t.cols)
            .map(|_| Dyn::named("c", start))
            .collect();
        let ptrs: Vec<Dyn<*mut E>> = ws.iter().map(|w| w.ptr).collect();
        self.walk(env, &levels, true, &ws, &ptrs, &mut |env, ps| {
            for r in 0..t.rows {
                for c in 0..t.cols {
                    let n = self.bind(env, Some(t.row + r as i32), Some(t.col + c as i32));
                    let v = self.element(env, &ws, ps, r, c);
                    env.truncate(env.len() - n);
                    let a = acc[r * t.cols + c];
                    a.set(if reduces { combine(a, v) } else { v });
                }
            }
        });
        // With a tiled reduction, `=` stores the first tile; the others add.
        let op = if d.is_some_and(|d| !d.first) && plan.op == Op::Assign {
            Op::Add
        } else {
            plan.op
        };
        for r in 0..t.rows {
            for c in 0..t.cols {
                let off = r as i32 * lr + c as i32 * lc;
                self.store(lp, off, op, acc[r * t.cols + c]);
            }
        }
    }

    /// A reduction along the vector index: row slivers (in parallel) of
    /// `rows` × `cols` partial sums, added up at the end of each row.
    #[augur::staged]
    pub(crate) fn lanes(&self, env: &mut Env) {
        let (plan, lay) = (self.plan, self.lay);
        let m = self.extent(lay.row);
        let n = plan.range(lay.vector);
        let w = self.b.cols.min(n);
        let name = format!("{}_1", lay.row.map_or("r", |r| r.name));
        self.tiles(
            &name,
            Dyn::lit(0),
            m,
            self.b.rows,
            lay.row.is_some(),
            false,
            &mut |row, rows, _| {
                let t = Tile {
                    row,
                    rows,
                    col: Dyn::lit(0),
                    cols: w,
                };
                let levels: Vec<Level> = (lay.reduced.iter())
                    .map(|&i| (i, Dyn::lit(0), plan.range(i)))
                    .collect();
                let k = self.bind(env, Some(row), None);
                env.push((lay.vector, Dyn::lit(0)));
                env.extend(levels.iter().map(|&(i, s, _)| (i, s)));
                let ws = self.walkers(env, t, None, &[]);
                env.truncate(env.len() - levels.len() - 1);
                let (lp, lr, _) = self.lhs(env);
                env.truncate(env.len() - k);
                let (start, combine) = plan.combine();
                let acc: Vec<Dyn<E>> = (0..rows * w).map(|_| Dyn::named("c", start)).collect();
                let ptrs: Vec<Dyn<*mut E>> = ws.iter().map(|w| w.ptr).collect();
                self.walk(env, &levels, true, &ws, &ptrs, &mut |env, ps| {
                    let ps: Vec<Dyn<*mut E>> = ps.iter().map(|p| Dyn::named("p", *p)).collect();
                    let turn = |env: &mut Env, v0: Dyn<i32>, cols: usize| {
                        for r in 0..rows {
                            for c in 0..cols {
                                let n = self.bind(env, Some(row + r as i32), Some(v0 + c as i32));
                                let v = self.element(env, &ws, &ps, r, c);
                                env.truncate(env.len() - n);
                                let a = acc[r * w + c];
                                a.set(combine(a, v));
                            }
                        }
                    };
                    let full = n / w;
                    if full > 0 {
                        let q = Dyn::named(&format!("{}_q", lay.vector.name), 0i32);
                        while q.lt(full as i32).is_true() {
                            turn(env, q * w as i32, w);
                            for (wk, p) in ws.iter().zip(&ps) {
                                let s = wk.col * w as i32;
                                if s != 0 {
                                    p.set(p.offset(s));
                                }
                            }
                            q.set(q + 1);
                        }
                    }
                    if n % w > 0 {
                        turn(env, Dyn::lit((full * w) as i32), n % w);
                    }
                });
                for r in 0..rows {
                    let mut sums: Vec<Dyn<E>> = acc[r * w..(r + 1) * w].to_vec();
                    while sums.len() > 1 {
                        let pairs = sums.chunks(2);
                        sums = pairs
                            .map(|p| {
                                if p.len() == 2 {
                                    combine(p[0], p[1])
                                } else {
                                    p[0]
                                }
                            })
                            .collect();
                    }
                    self.store(lp, r as i32 * lr, plan.op, sums[0]);
                }
            },
        );
    }
}
