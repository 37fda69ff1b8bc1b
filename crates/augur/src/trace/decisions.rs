//! Decision paths as nodes of one tree shared by every scheduled job.
//!
//! A job is the sequence of oracle decisions that leads to the side it
//! explores. Jobs scheduled by one run share that run's prefix, so storing
//! each as a copy costs the square of the run's depth (a dyn loop over a
//! `Static` state of `N` values schedules `N` jobs of up to `N` decisions);
//! a tree of `(parent, decision)` nodes stores each decision once.

/// A decision path: a node of the [`DecisionTree`] (or the empty path).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct PathId(u32);

impl PathId {
    /// No decisions.
    pub(super) const ROOT: PathId = PathId(u32::MAX);
}

/// Every decision path of the current attempt.
#[derive(Default)]
pub(super) struct DecisionTree {
    /// `(parent, decision)` per node.
    nodes: Vec<(PathId, bool)>,
}

impl DecisionTree {
    /// The path `parent` followed by decision `d`.
    pub(super) fn push(&mut self, parent: PathId, d: bool) -> PathId {
        self.nodes.push((parent, d));
        PathId(self.nodes.len() as u32 - 1)
    }

    /// The decisions of `p` from the first, with the path after each.
    #[cfg(test)]
    pub(super) fn unfold(&self, p: PathId) -> (Vec<bool>, Vec<PathId>) {
        let (mut ds, mut ids) = (Vec::new(), Vec::new());
        self.unfold_into(p, &mut ds, &mut ids);
        (ds, ids)
    }

    /// [`unfold`](Self::unfold) into existing vectors (cleared first).
    pub(super) fn unfold_into(&self, mut p: PathId, ds: &mut Vec<bool>, ids: &mut Vec<PathId>) {
        ds.clear();
        ids.clear();
        while p != PathId::ROOT {
            let (parent, d) = self.nodes[p.0 as usize];
            ds.push(d);
            ids.push(p);
            p = parent;
        }
        ds.reverse();
        ids.reverse();
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
}
