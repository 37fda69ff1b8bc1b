//! Index fusion: two indices that every access uses side by side, in the
//! same order, are one index over the product of their extents.
//!
//! `Y[i][j][r] = X[i][j][k] * U[k][r]` reads `i` and `j` only as the
//! leading pair of `X` and `Y`, so it is `Y'[ij][r] = X'[ij][k] * U[k][r]`
//! over views of `X` and `Y` with those dimensions merged: one matrix
//! product of `I·J` rows rather than `I` products of `J` rows, which gives
//! the blocked layout rows enough to spread over threads. The element
//! addresses are the same (row-major dimensions are contiguous), so the
//! statement computes the same values in the same order per element.
//!
//! A pair fuses when, in every access that uses either index, both appear
//! once, the second right after the first; both are on the left side or
//! both reduced; and neither is read as a value (`Term::Index`). CPU only:
//! GPU statements map indices to blocks and threads and keep them.

use crate::elem::Elem;
use crate::index::Index;
use crate::plan::Plan;
use crate::tensor::{Access, Tensor};
use crate::term::Term;
use std::collections::HashSet;
use std::sync::Mutex;

/// The statement after fusion: owns the views and accesses the fused plan
/// borrows.
pub(crate) struct Fused<E: Elem> {
    pub lhs: Access<E>,
    pub rhs: Term<E>,
    pub lhs_indices: Vec<Index>,
    pub reduced: Vec<Index>,
    pub ranges: Vec<(Index, usize)>,
}

impl<E: Elem> Fused<E> {
    pub(crate) fn plan(
        &self,
        loc: &'static std::panic::Location<'static>,
        op: crate::plan::Op,
    ) -> Plan<'_, E> {
        Plan {
            lhs: &self.lhs,
            op,
            rhs: self.rhs.clone(),
            lhs_indices: self.lhs_indices.clone(),
            reduced: self.reduced.clone(),
            ranges: self.ranges.clone(),
            loc,
        }
    }
}

/// Fused indices take ids from the top down; no program makes this many.
const FUSED_IDS: u32 = 1 << 16;

/// True for an index [`fuse`] made.
pub(crate) fn is_fused(i: Index) -> bool {
    i.id > u32::MAX - FUSED_IDS
}

/// `plan` with every fusable pair fused, or `None` when none is.
pub(crate) fn fuse<E: Elem>(plan: &Plan<E>) -> Option<Fused<E>> {
    let mut f = Fused {
        lhs: plan.lhs.clone(),
        rhs: plan.rhs.clone(),
        lhs_indices: plan.lhs_indices.clone(),
        reduced: plan.reduced.clone(),
        ranges: plan.ranges.clone(),
    };
    let mut fused = 0;
    while let Some((p, q)) = pair(&f) {
        let range = |i: Index| f.ranges.iter().find(|(j, _)| *j == i).expect("bound").1;
        let merged = Index {
            id: u32::MAX - fused,
            name: intern(&format!("{}{}", p.name, q.name)),
        };
        let extent = range(p) * range(q);
        fused += 1;
        let mut views = Views { made: Vec::new() };
        f.lhs = views.fuse(&f.lhs, p, merged);
        f.rhs = map(&f.rhs, &mut |a| views.fuse(a, p, merged));
        for list in [&mut f.lhs_indices, &mut f.reduced] {
            if let Some(at) = list.iter().position(|&i| i == p) {
                list[at] = merged;
                list.retain(|&i| i != q);
            }
        }
        f.ranges.retain(|(i, _)| *i != p && *i != q);
        f.ranges.push((merged, extent));
    }
    (fused > 0).then_some(f)
}

/// The first fusable pair, in the left side's order then the reduction's.
fn pair<E: Elem>(f: &Fused<E>) -> Option<(Index, Index)> {
    let accesses: Vec<&Access<E>> = std::iter::once(&f.lhs).chain(f.rhs.accesses()).collect();
    let values = f.rhs.value_indices();
    let fits = |p: Index, q: Index| {
        let same_side = [&f.lhs_indices, &f.reduced]
            .iter()
            .any(|l| l.contains(&p) && l.contains(&q));
        same_side
            && !values.contains(&p)
            && !values.contains(&q)
            && accesses.iter().all(|a| adjacent(&a.indices, p, q))
    };
    let lists = [&f.lhs_indices, &f.reduced];
    lists.iter().find_map(|list| {
        // Candidates are pairs side by side in some access.
        (accesses.iter())
            .flat_map(|a| a.indices.windows(2).map(|w| (w[0], w[1])))
            .find(|&(p, q)| p != q && list.contains(&p) && fits(p, q))
    })
}

/// True when `indices` uses neither `p` nor `q`, or each once, `q` right
/// after `p`.
fn adjacent(indices: &[Index], p: Index, q: Index) -> bool {
    let count = |x: Index| indices.iter().filter(|&&i| i == x).count();
    match (count(p), count(q)) {
        (0, 0) => true,
        (1, 1) => indices.windows(2).any(|w| w[0] == p && w[1] == q),
        _ => false,
    }
}

/// One view per tensor and index list, so that accesses of one tensor
/// stay one tensor (the left side read on the right is still the left side).
struct Views<E: Elem> {
    made: Vec<(Tensor<E>, Vec<Index>, Access<E>)>,
}

impl<E: Elem> Views<E> {
    fn fuse(&mut self, a: &Access<E>, p: Index, merged: Index) -> Access<E> {
        let Some(at) = a.indices.iter().position(|&i| i == p) else {
            return a.clone();
        };
        if let Some((_, _, done)) =
            (self.made.iter()).find(|(t, i, _)| t.same(&a.tensor) && *i == a.indices)
        {
            return done.clone();
        }
        let mut shape = a.tensor.shape().to_vec();
        shape[at] *= shape[at + 1];
        shape.remove(at + 1);
        let mut indices = a.indices.clone();
        indices[at] = merged;
        indices.remove(at + 1);
        let view = a.tensor.view(a.tensor.name(), shape, a.tensor.state.host);
        let out = Access {
            tensor: view,
            indices,
            loc: a.loc,
        };
        self.made
            .push((a.tensor.clone(), a.indices.clone(), out.clone()));
        out
    }
}

/// `t` with each access replaced by `f` of it.
fn map<E: Elem>(t: &Term<E>, f: &mut impl FnMut(&Access<E>) -> Access<E>) -> Term<E> {
    match t {
        Term::Access(a) => Term::Access(f(a)),
        Term::Const(_) | Term::Value(_) | Term::Index(_) => t.clone(),
        Term::Sum(a, b) => Term::Sum(Box::new(map(a, f)), Box::new(map(b, f))),
        Term::Diff(a, b) => Term::Diff(Box::new(map(a, f)), Box::new(map(b, f))),
        Term::Product(a, b) => Term::Product(Box::new(map(a, f)), Box::new(map(b, f))),
        Term::Neg(a) => Term::Neg(Box::new(map(a, f))),
    }
}

/// A fused index's name, kept for the process (names are `&'static str`;
/// there are as many as distinct pairs of index names).
fn intern(name: &str) -> &'static str {
    static NAMES: Mutex<Option<HashSet<&'static str>>> = Mutex::new(None);
    let mut names = NAMES.lock().unwrap_or_else(|e| e.into_inner());
    let set = names.get_or_insert_with(HashSet::new);
    if let Some(&n) = set.get(name) {
        return n;
    }
    let n: &'static str = Box::leak(name.to_string().into_boxed_str());
    set.insert(n);
    n
}
