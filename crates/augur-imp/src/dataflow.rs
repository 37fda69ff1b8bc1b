//! Classic backward worklist solvers over the control-flow graph, to check
//! the re-execution analysis of [`crate::execute`] against.
//!
//! [`solve`] computes the least solution of any [`Analysis`]'s equations
//! `β_l = S1(l) ∪ ⋃_{l' ∈ succ(l)} (β_l' − S2(l, l'))` at the entry of
//! every label, reachable or not. [`very_busy`] solves very busy
//! expressions directly as a must-analysis (greatest solution), without
//! going through the complement that [`VeryBusyExpressions`] uses, so that
//! the two formulations check each other.

use std::collections::BTreeSet;

use crate::analysis::{Analysis, ExprId, VeryBusyExpressions};
use crate::ast::Program;

/// Re-evaluates `l` until nothing changes: every label starts on the
/// worklist, and a change at `l` puts its predecessors back, since only
/// they read `β_l`.
fn worklist<T: Ord + Clone>(
    p: &Program,
    init: Vec<BTreeSet<T>>,
    mut eval: impl FnMut(usize, &[BTreeSet<T>]) -> BTreeSet<T>,
) -> Vec<BTreeSet<T>> {
    let preds = p.predecessors();
    let mut beta = init;
    let mut queued = vec![true; p.cmds.len()];
    // Popped from the end: the last label first, the usual order for a
    // backward problem (fewer re-evaluations).
    let mut work: Vec<usize> = (0..p.cmds.len()).collect();
    while let Some(l) = work.pop() {
        queued[l] = false;
        let new = eval(l, &beta);
        if new != beta[l] {
            beta[l] = new;
            for &q in &preds[l] {
                if !std::mem::replace(&mut queued[q], true) {
                    work.push(q);
                }
            }
        }
    }
    beta
}

/// The least solution of `a`'s backward may-equations, indexed by label.
pub fn solve<A: Analysis>(p: &Program, a: &A) -> Vec<BTreeSet<A::Item>> {
    let s1: Vec<_> = (0..p.cmds.len()).map(|l| a.precondition(p, l)).collect();
    let succ: Vec<Vec<(usize, BTreeSet<A::Item>)>> = (0..p.cmds.len())
        .map(|l| {
            p.successors(l)
                .into_iter()
                .map(|n| (n, a.prediction(p, l, n)))
                .collect()
        })
        .collect();
    let init = vec![BTreeSet::new(); p.cmds.len()];
    worklist(p, init, |l, beta| {
        let mut out = s1[l].clone();
        for (n, s2) in &succ[l] {
            out.extend(beta[*n].difference(s2).cloned());
        }
        out
    })
}

/// Very busy expressions before each label: the greatest solution of
/// `VB(l) = gen(l) ∪ (⋂_{l' ∈ succ(l)} VB(l') − kill(l))`, where a label
/// without successors has `⋂ = ∅`. Starts from the universe everywhere
/// (top) and only shrinks.
/// `vbe` supplies `gen`, `kill` and `U` and must be built for `p`.
pub fn very_busy(p: &Program, vbe: &VeryBusyExpressions) -> Vec<BTreeSet<ExprId>> {
    let succ: Vec<_> = (0..p.cmds.len()).map(|l| p.successors(l)).collect();
    worklist(p, vec![vbe.universe(); p.cmds.len()], |l, vb| {
        let mut out = meet(succ[l].iter().map(|&n| &vb[n]));
        out.retain(|e| !vbe.kill(l).contains(e));
        out.extend(vbe.gen(l).iter().copied());
        out
    })
}

/// `⋂` of the sets, `∅` for none (a path that ends evaluates nothing more).
fn meet<'a>(mut sets: impl Iterator<Item = &'a BTreeSet<ExprId>>) -> BTreeSet<ExprId> {
    let Some(first) = sets.next() else {
        return BTreeSet::new();
    };
    let mut out = first.clone();
    for s in sets {
        out.retain(|e| s.contains(e));
    }
    out
}
