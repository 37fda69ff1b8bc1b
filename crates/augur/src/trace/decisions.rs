//! Decision paths as nodes of one tree shared by every scheduled job.
//!
//! A job is the sequence of oracle decisions that leads to the side it
//! explores. Jobs scheduled by one run share that run's prefix, so storing
//! each as a copy costs the square of the run's depth (a dyn loop over a
//! `Static` state of `N` values schedules `N` jobs of up to `N` decisions);
//! a tree of `(parent, decision)` nodes stores each decision once.
//!
//! A run that enters a resumable point (`stage/resume.rs`) starts a path
//! of its own there: a *member* node, whose parent is the path that
//! reached the point's machine, and under which the decisions taken in
//! the member go. Unfolding a path gives its decisions and, at each member
//! node on the way, where the run jumps to that member instead of
//! starting the machine at its first point.

/// A decision path: a node of the [`DecisionTree`] (or the empty path).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct PathId(u32);

impl PathId {
    /// No decisions.
    pub(super) const ROOT: PathId = PathId(u32::MAX);
}

/// Where a run that replays a path jumps into a resumable machine: once
/// it has replayed the first `pos` decisions of its prefix, the next
/// machine it enters starts at `member` (a `trace::points` member), and
/// the path goes on from `root`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Start {
    pub(super) pos: usize,
    pub(super) member: u32,
    pub(super) root: PathId,
}

/// Every decision path of the current attempt.
#[derive(Default)]
pub(super) struct DecisionTree {
    /// `(parent, step)` per node: `0`/`1` a decision, `2 + m` the start of
    /// member `m`.
    nodes: Vec<(PathId, u32)>,
}

impl DecisionTree {
    /// The path `parent` followed by decision `d`.
    pub(super) fn push(&mut self, parent: PathId, d: bool) -> PathId {
        self.nodes.push((parent, u32::from(d)));
        PathId(self.nodes.len() as u32 - 1)
    }

    /// The path `parent` followed by a jump to member `member` of a
    /// resumable machine: the root of the paths of runs in that member.
    pub(super) fn push_member(&mut self, parent: PathId, member: u32) -> PathId {
        self.nodes.push((parent, member + 2));
        PathId(self.nodes.len() as u32 - 1)
    }

    /// The first jump into a member on path `p`: the member, the path
    /// before the jump and how many decisions it takes (`None`: no jump).
    pub(super) fn first_start(&self, mut p: PathId) -> Option<(u32, PathId, usize)> {
        let mut first = None;
        while p != PathId::ROOT {
            let (parent, step) = self.nodes[p.0 as usize];
            if step >= 2 {
                // Walking up: the last jump seen is the path's first.
                first = Some((step - 2, parent));
            }
            p = parent;
        }
        let (member, parent) = first?;
        Some((member, parent, self.decisions_on(parent)))
    }

    /// How many decisions path `p` takes.
    fn decisions_on(&self, mut p: PathId) -> usize {
        let mut n = 0;
        while p != PathId::ROOT {
            let (parent, step) = self.nodes[p.0 as usize];
            n += usize::from(step < 2);
            p = parent;
        }
        n
    }

    /// The decisions of `p` from the first, with the path after each.
    #[cfg(test)]
    pub(super) fn unfold(&self, p: PathId) -> (Vec<bool>, Vec<PathId>) {
        let (mut ds, mut ids, mut starts) = (Vec::new(), Vec::new(), Vec::new());
        self.unfold_into(p, &mut ds, &mut ids, &mut starts);
        (ds, ids)
    }

    /// [`unfold`](Self::unfold) into existing vectors (cleared first),
    /// with the jumps into members on the way, in order.
    pub(super) fn unfold_into(
        &self,
        mut p: PathId,
        ds: &mut Vec<bool>,
        ids: &mut Vec<PathId>,
        starts: &mut Vec<Start>,
    ) {
        ds.clear();
        ids.clear();
        starts.clear();
        while p != PathId::ROOT {
            let (parent, step) = self.nodes[p.0 as usize];
            match step {
                0 | 1 => {
                    ds.push(step == 1);
                    ids.push(p);
                }
                // Positions count decisions after the jump for now.
                m => starts.push(Start {
                    pos: ds.len(),
                    member: m - 2,
                    root: p,
                }),
            }
            p = parent;
        }
        ds.reverse();
        ids.reverse();
        starts.reverse();
        for s in starts.iter_mut() {
            s.pos = ds.len() - s.pos;
        }
    }

    /// Nodes stored.
    pub(super) fn len(&self) -> usize {
        self.nodes.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_share_prefixes_and_unfold_in_order() {
        let mut t = DecisionTree::default();
        let a = t.push(PathId::ROOT, true);
        let b = t.push(a, false);
        let c = t.push(a, true);
        assert_eq!(t.unfold(b), (vec![true, false], vec![a, b]));
        assert_eq!(t.unfold(c), (vec![true, true], vec![a, c]));
        assert_eq!(t.unfold(PathId::ROOT), (vec![], vec![]));
        assert_eq!(t.len(), 3);
    }

    #[test]
    fn member_nodes_are_jumps_between_decisions() {
        let mut t = DecisionTree::default();
        let a = t.push(PathId::ROOT, true);
        let m = t.push_member(a, 7);
        let b = t.push(m, false);
        let n = t.push_member(b, 9);
        let (mut ds, mut ids, mut starts) = (Vec::new(), Vec::new(), Vec::new());
        t.unfold_into(n, &mut ds, &mut ids, &mut starts);
        assert_eq!((ds.clone(), ids.clone()), (vec![true, false], vec![a, b]));
        let s = |pos, member, root| Start { pos, member, root };
        assert_eq!(starts, vec![s(1, 7, m), s(2, 9, n)]);
        t.unfold_into(m, &mut ds, &mut ids, &mut starts);
        assert_eq!((ds, starts), (vec![true], vec![s(1, 7, m)]));
    }
}
