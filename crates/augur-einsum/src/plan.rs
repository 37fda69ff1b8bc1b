//! What generating a statement works on, shared by every layout
//! (`statement.rs`'s plain and GPU loops, `blocked.rs`, `tile.rs`,
//! `gpu_tiles.rs`, `gpu_rows.rs`): the checked statement ([`Plan`]) with
//! its element-level code, the loop variables bound so far ([`Env`]), the
//! blocked layout's types ([`Layout`], [`Pack`], [`DepthTile`], [`Gen`]).
//! A leaf: it imports no layout, so the layouts form no circle.

use crate::elem::Elem;
use crate::error::ShapeError;
use crate::index::Index;
use crate::schedule::{Blocking, Shape};
use crate::tensor::Access;
use crate::term::Term;
use augur::{dsl, Dyn};
use std::panic::Location;

/// Which statement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Op {
    Assign,
    Add,
    Mul,
}

impl Op {
    pub(crate) fn text(self) -> &'static str {
        match self {
            Op::Assign => "=",
            Op::Add => "+=",
            Op::Mul => "*=",
        }
    }
}

/// How a reduction folds one more value in.
pub(crate) type Combine<E> = fn(Dyn<E>, Dyn<E>) -> Dyn<E>;

/// Loop variables of the indices bound so far.
pub(crate) type Env = Vec<(Index, Dyn<i32>)>;

/// A checked statement, ready to generate.
pub(crate) struct Plan<'a, E: Elem> {
    pub lhs: &'a Access<E>,
    pub op: Op,
    pub rhs: Term<E>,
    /// The left side's indices (deduplicated), then the reduced ones.
    pub lhs_indices: Vec<Index>,
    pub reduced: Vec<Index>,
    pub ranges: Vec<(Index, usize)>,
    pub loc: &'static Location<'static>,
}

impl<E: Elem> Plan<'_, E> {
    pub(crate) fn range(&self, i: Index) -> usize {
        self.ranges
            .iter()
            .find(|(j, _)| *j == i)
            .expect("checked")
            .1
    }

    /// `for (i = start; i < range(i); i += step) body(i)` as a dyn loop.
    #[augur::staged]
    pub(crate) fn dyn_loop(
        &self,
        i: Index,
        start: Dyn<i32>,
        step: i32,
        mut body: impl FnMut(Dyn<i32>),
    ) {
        let n = self.range(i);
        // The last `i + step` must not overflow `int32_t` (undefined in C).
        if n as i64 + step as i64 > i32::MAX as i64 {
            let error = ShapeError::TooLong {
                index: i.name,
                extent: n,
                step,
            };
            dsl::fail(error, self.loc);
        }
        let v = Dyn::named(i.name, start);
        while v.lt(n as i32).is_true() {
            body(v);
            v.set(v + step);
        }
    }

    /// Nested loops from 0 over `indices`, calling `inner` with all bound.
    #[augur::staged]
    pub(crate) fn loops(&self, indices: &[Index], env: &mut Env, inner: &mut dyn FnMut(&mut Env)) {
        let Some((&first, rest)) = indices.split_first() else {
            inner(env);
            return;
        };
        self.dyn_loop(first, Dyn::lit(0), 1, |v| {
            env.push((first, v));
            self.loops(rest, env, inner);
            env.pop();
        });
    }

    /// One element of the left side.
    #[augur::staged]
    pub(crate) fn element(&self, env: &mut Env) {
        let value = if self.reduced.is_empty() {
            self.value(&self.rhs, env)
        } else {
            let (start, combine) = self.combine();
            let acc = Dyn::named("acc", start);
            self.loops(&self.reduced, env, &mut |env| {
                acc.set(combine(acc, self.value(&self.rhs, env)));
            });
            acc
        };
        let value = match self.op {
            Op::Assign => value,
            Op::Add => self.read(self.lhs, env) + value,
            Op::Mul => self.read(self.lhs, env) * value,
        };
        let place = self
            .lhs
            .tensor
            .write_buffer(self.loc)
            .at(flat(self.lhs, env));
        place.set(value);
    }

    #[augur::staged]
    pub(crate) fn read(&self, a: &Access<E>, env: &Env) -> Dyn<E> {
        a.tensor.read_buffer(a.loc).at(flat(a, env))
    }

    #[augur::staged]
    pub(crate) fn value(&self, t: &Term<E>, env: &Env) -> Dyn<E> {
        value_with(t, env, &|a, env| self.read(a, env))
    }

    /// The reduction's start and how it folds one more value in.
    #[augur::staged]
    pub(crate) fn combine(&self) -> (E, Combine<E>) {
        match self.op {
            Op::Mul => (E::one(), |a, b| a * b),
            Op::Assign | Op::Add => (E::zero(), |a, b| a + b),
        }
    }
}

/// The value of `t` with the indices in `env`, reading accesses with `read`.
#[augur::staged]
pub(crate) fn value_with<E: Elem>(
    t: &Term<E>,
    env: &Env,
    read: &dyn Fn(&Access<E>, &Env) -> Dyn<E>,
) -> Dyn<E> {
    let v = |t: &Term<E>| value_with(t, env, read);
    match t {
        Term::Access(a) => read(a, env),
        Term::Const(c) => Dyn::lit(*c),
        Term::Value(v) => *v,
        Term::Index(i) => E::from_index(lookup(env, *i)),
        Term::Sum(a, b) => v(a) + v(b),
        Term::Diff(a, b) => v(a) - v(b),
        Term::Product(a, b) => v(a) * v(b),
        Term::Neg(a) => -v(a),
    }
}

pub(crate) fn lookup(env: &Env, i: Index) -> Dyn<i32> {
    env.iter()
        .rev()
        .find(|(j, _)| *j == i)
        .expect("every index is bound")
        .1
}

/// The row-major element number of an access.
#[augur::staged]
pub(crate) fn flat<E: Elem>(a: &Access<E>, env: &Env) -> Dyn<i32> {
    let shape = a.tensor.shape();
    let mut acc: Option<Dyn<i32>> = None;
    for (d, &i) in a.indices.iter().enumerate() {
        let stride: usize = shape[d + 1..].iter().product();
        let v = lookup(env, i);
        let term = if stride == 1 { v } else { v * stride as i32 };
        acc = Some(match acc {
            None => term,
            Some(a) => a + term,
        });
    }
    acc.unwrap_or_else(|| Dyn::lit(0))
}

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
        Some(Layout::with_vector(plan, vector))
    }

    /// [`Layout::of`] for the CPU's blocked nest: a product whose operands
    /// are both innermost along the one reduced index (`C[i][j] = A[i][l]
    /// B[j][l]`) takes the left side's last index as its vector index, so
    /// that it is laid out as a matrix product with the second operand
    /// packed into column slivers, rather than as partial sums along `l`,
    /// which suits a left side of one index (matrix-vector) only.
    pub(crate) fn for_cpu<E: Elem>(plan: &Plan<E>) -> Option<Layout> {
        let lay = Layout::of(plan)?;
        let product = plan.lhs_indices.len() >= 2 && plan.reduced.len() == 1;
        match plan.lhs.indices.last() {
            Some(&last) if lay.lanes && product => Some(Layout::with_vector(plan, last)),
            _ => Some(lay),
        }
    }

    /// The layout with `vector` as the vector index.
    fn with_vector<E: Elem>(plan: &Plan<E>, vector: Index) -> Layout {
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
        Layout {
            vector,
            lanes,
            row,
            outer,
            reduced,
        }
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
    /// Row slivers: the first row of the row tile the buffer holds (each
    /// row tile packs into a buffer of its own, so the buffer stays small
    /// and warm in the cache, and the threads never share one).
    pub origin: Dyn<i32>,
    /// Elements per row or column of the buffer: the reduction tile's
    /// depth (row slivers) or the whole reduction (column slivers).
    pub slot: usize,
}

impl<E: Elem> Clone for Pack<E> {
    fn clone(&self) -> Self {
        Pack {
            access: self.access.clone(),
            ..*self
        }
    }
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

/// What a CPU statement is generated for.
#[derive(Clone, Copy)]
pub(crate) struct Target {
    pub openmp: bool,
    pub schedule: crate::schedule::Schedule,
    pub vector_bytes: usize,
    /// The threads row tiles are balanced for.
    pub threads: usize,
}

impl Target {
    pub(crate) fn of(
        config: &crate::context::Config,
        schedule: crate::schedule::Schedule,
    ) -> Target {
        Target {
            openmp: config.openmp,
            schedule,
            vector_bytes: config.vector_bytes,
            threads: config.cpu_threads,
        }
    }
}

/// The generator of one statement.
pub(crate) struct Gen<'p, 'a, E: Elem> {
    pub plan: &'p Plan<'a, E>,
    pub lay: &'p Layout,
    pub b: Blocking,
    pub openmp: bool,
    pub threads: usize,
}

/// The distance in elements between `a`'s elements at `i` and `i + 1`
/// (0 when `a` does not use `i`).
#[augur::staged]
pub(crate) fn stride<E: Elem>(a: &Access<E>, i: Index) -> i32 {
    let shape = a.tensor.shape();
    let at = |d: usize| shape[d + 1..].iter().product::<usize>() as i32;
    (a.indices.iter().enumerate())
        .filter(|(_, &j)| j == i)
        .map(|(d, _)| at(d))
        .sum()
}
