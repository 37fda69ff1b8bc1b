//! Machines of resumable points, structured a member at a time (where
//! a graph has more than [`WHOLE_MAX_POINTS`] of them).
//!
//! A machine's members jump to one another in any pattern (a DFA's states,
//! an interpreter's loops), so the graph of a machine is one large tangle
//! of cycles: structured as a whole it nests loops as deep as it has
//! members, and building that nesting costs the square of its size. Each
//! `Op::Point` node is a resumable point (an instance's entry, a member,
//! an exit); every jump to one is an edge to that node. So the graph is cut
//! there: the code up to the first point, and the code of each point up to
//! the next points, are *regions*, each structured on its own, in which an
//! edge to a point becomes `goto` the point's label (`Term::Leave`). The
//! body is the first region, then each point's label and its region, in
//! the order a walk from the entry meets the points: flat, one label per
//! member, as a hand-written state machine is.
//!
//! Definitions are checked against the whole graph's dominators (a value
//! made before a machine is used in its members).

use super::cfg::{Cfg, Scratch};
use super::{check_definitions, check_exits};
use crate::error::Error;
use crate::ir::{Arena, Block, Function, LabelId, Stmt, StmtKind};
use crate::trace::graph::{Node, NodeId, Op};
use crate::trace::Config;

/// The most points a graph structured as a whole may have: a small
/// machine's loops read as loops (an interpreter's `while`s); past it the
/// graph is cut into regions.
pub(super) const WHOLE_MAX_POINTS: usize = 64;

/// Labels of `goto`s to points, before they are numbered: above every
/// block's label.
const LEAVE_BASE: u32 = 1 << 31;

/// A node's entry in `structure`'s table of point numbers when it is no
/// point.
const NOT_A_POINT: u32 = u32::MAX;

/// The label a region's `goto` to point `n` carries until `structure`
/// numbers it.
pub(super) fn leave_label(n: NodeId) -> LabelId {
    LabelId(LEAVE_BASE + n.0)
}

/// The point nodes reachable from `entry`, in the order a depth-first walk
/// meets them (deterministic: the graph is).
pub(super) fn points(nodes: &Arena<NodeId, Node>, entry: NodeId) -> Vec<NodeId> {
    let mut seen = vec![false; nodes.len()];
    let (mut stack, mut out) = (vec![entry], Vec::new());
    while let Some(n) = stack.pop() {
        if std::mem::replace(&mut seen[n.0 as usize], true) {
            continue;
        }
        if matches!(nodes[n].op, Op::Point(_)) {
            out.push(n);
        }
        // The first successor is walked first.
        let mut succs = nodes[n].successors();
        let (first, second) = (succs.next(), succs.next());
        stack.extend(second.into_iter().chain(first));
    }
    out
}

/// Structures the graph region by region (see the module docs); returns
/// the function and its `goto` count (the jumps between regions included).
pub(super) fn structure(
    nodes: &mut Arena<NodeId, Node>,
    entry: NodeId,
    points: &[NodeId],
    mut func: Function,
    config: &Config,
) -> Result<(Function, u64), Error> {
    check_definitions(&Cfg::dominance(nodes, entry)?, nodes, &func)?;
    // A point's number by node, dense: asked at every edge of every region.
    // Nodes that splitting adds later lie past it and are no points.
    let mut number = vec![NOT_A_POINT; nodes.len()];
    for (k, &n) in points.iter().enumerate() {
        number[n.0 as usize] = k as u32;
    }
    let is_point = |n: NodeId| number.get(n.0 as usize).is_some_and(|&k| k != NOT_A_POINT);
    let mut body = Block::new();
    let mut next_label = points.len() as u32;
    let mut gotos = 0;
    let mut scratch = Scratch::default();
    for (r, &start) in std::iter::once(&entry).chain(points).enumerate() {
        let cfg = Cfg::region_in(nodes, start, &is_point, &mut scratch)?;
        if !config.allow_infinite_loops {
            check_exits(&cfg, nodes)?;
        }
        let (mut region, left, f) = super::emit_all(cfg, nodes, func)?;
        func = f;
        gotos += left;
        // Block labels move past the points' and the regions' before.
        let mut top = 0;
        renumber(&mut region, &mut |l| {
            if l.0 >= LEAVE_BASE {
                gotos += 1;
                let k = number[(l.0 - LEAVE_BASE) as usize];
                // As the map this table replaced: a leave names a point.
                assert_ne!(k, NOT_A_POINT, "a region left for a node that is no point");
                LabelId(k)
            } else {
                top = top.max(l.0 + 1);
                LabelId(next_label + l.0)
            }
        });
        next_label += top;
        if r > 0 {
            body.push(Stmt::new(StmtKind::Label(LabelId(r as u32 - 1))));
        }
        body.extend(region);
    }
    func.body = body;
    Ok((func, gotos))
}

/// Renames every label and `goto` target in `b`.
fn renumber(b: &mut Block, f: &mut impl FnMut(LabelId) -> LabelId) {
    for s in b.iter_mut() {
        match &mut s.kind {
            StmtKind::Label(l) | StmtKind::Goto(l) => *l = f(*l),
            k => k.blocks_mut().for_each(|inner| renumber(inner, f)),
        }
    }
}
