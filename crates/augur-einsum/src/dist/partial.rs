//! The partial-sums plan: each rank reduces over the slice of the
//! reduction it holds, and owners add the partial blocks they receive.
//!
//! It applies when every input that splits a reduced index splits it the
//! same way (same axis, parts and tiles), so a rank holds the same slice
//! of it in all of them. Rank `r` then computes, over its slice, every
//! left-side value it can: along a left-side index split over a grid axis
//! the reduction also uses, all values (the ranks along that axis hold
//! other slices of the same sums); along the others, the values it owns.
//! Each owner's block within that is the owner's whole local array, so a
//! part is one message and one elementwise add.
//!
//! The plan is only made when it is exact by construction, checked here at
//! the first stage: every point of the iteration space is computed by
//! exactly one rank, every left-side element has one holder, and every
//! holder computes a slice of its own block (so `=` overwrites it first).
//! Otherwise there is no partial-sums plan and owner-computes stands.

use super::layout::{Axis, DimSplit, Split};
use super::plan::{
    input_messages, owned, pieces, reduction_groups, Buffers, Carries, Message, Part, RankPlan,
    SlotIn, StatementPlan,
};
use super::Rule;
use crate::index::Index;

/// The partial-sums plan of `lhs[..] op rhs`, when it applies (see the
/// module doc); arguments as [`super::plan::plan`]'s.
pub(crate) fn plan(
    ranks: usize,
    lhs: (&[Index], &Split),
    slots: &[SlotIn],
    reduced: &[Index],
    ranges: &[(Index, usize)],
) -> Option<StatementPlan> {
    let (lhs_indices, lhs_split) = lhs;
    let range = |x: Index| ranges.iter().find(|(j, _)| *j == x).expect("checked").1;
    // The one split of each reduced index, where some input splits it.
    let mut splits: Vec<(Index, Option<(DimSplit, &Split)>)> = Vec::new();
    for &x in reduced {
        let mut common: Option<(DimSplit, &Split)> = None;
        for slot in slots {
            for (i, d) in slot.indices.iter().zip(&slot.split.dims) {
                if *i != x || d.parts <= 1 {
                    continue;
                }
                match common {
                    Some((c, _)) if c != *d => return None,
                    _ => common = Some((*d, slot.split)),
                }
            }
        }
        splits.push((x, common));
    }
    let used = splits
        .iter()
        .filter_map(|(_, s)| s.map(|(d, _)| mask(d.axis)))
        .fold(0, |a, b| a | b);
    if used == 0 {
        return None;
    }
    let extents: Vec<usize> = lhs_indices.iter().map(|&x| range(x)).collect();
    let holders: u128 = (0..ranks)
        .map(|r| {
            lhs_split
                .local_shape(r)
                .iter()
                .map(|&n| n as u128)
                .product::<u128>()
        })
        .sum();
    if holders != extents.iter().map(|&n| n as u128).product::<u128>() {
        return None; // some element has copies: each would need every partial
    }
    let slice = |r: usize| -> Vec<(Index, Vec<usize>)> {
        splits
            .iter()
            .map(|&(x, s)| {
                let all = 0..range(x);
                let values = match s {
                    None => all.collect(),
                    Some((d, split)) => {
                        let c = split.coord(r, d.axis);
                        all.filter(|&g| d.owner(g) == c).collect()
                    }
                };
                (x, values)
            })
            .collect()
    };
    let computed = |r: usize| -> Vec<(Index, Vec<usize>)> {
        let own = owned(r, lhs);
        own.into_iter()
            .zip(&lhs_split.dims)
            .zip(&extents)
            .map(|(((x, values), d), &n)| {
                if mask(d.axis) & used != 0 {
                    (x, (0..n).collect())
                } else {
                    (x, values)
                }
            })
            .collect()
    };
    let slices: Vec<_> = (0..ranks).map(slice).collect();
    let spaces: Vec<Vec<Vec<usize>>> = (0..ranks)
        .map(|r| {
            let mut space: Vec<Vec<usize>> = computed(r).into_iter().map(|(_, v)| v).collect();
            space.extend(slices[r].iter().map(|(_, v)| v.clone()));
            space
        })
        .collect();
    let full: Vec<usize> = extents
        .iter()
        .copied()
        .chain(reduced.iter().map(|&x| range(x)))
        .collect();
    if !exact_cover(&spaces, &full) {
        return None;
    }
    let owners: Vec<Vec<(Index, Vec<usize>)>> = (0..ranks).map(|r| owned(r, lhs)).collect();
    let holds = |o: usize| owners[o].iter().all(|(_, v)| !v.is_empty());
    if (0..ranks).any(|o| holds(o) && slices[o].iter().any(|(_, v)| v.is_empty())) {
        return None; // an owner that adds into a block it never wrote
    }
    let mut rank_plans = Vec::with_capacity(ranks);
    for r in 0..ranks {
        let mut plan = RankPlan {
            free: owners[r].clone(),
            pieces: Vec::new(),
            buffers: Vec::new(),
            parts: Vec::new(),
            adds: Vec::new(),
        };
        if slices[r].iter().any(|(_, v)| v.is_empty()) {
            rank_plans.push(plan);
            continue;
        }
        let groups: Vec<(Index, Vec<Vec<usize>>)> = slices[r]
            .iter()
            .map(|(x, v)| (*x, reduction_groups(*x, v.clone(), slots)))
            .collect();
        let mut buffers = Buffers::default();
        let reach = &spaces[r][..lhs_indices.len()];
        // The other owners' blocks first, in rank order: they travel while
        // this rank computes its own.
        for o in (0..ranks).filter(|&o| o != r && holds(o)) {
            match within(reach, &owners[o]) {
                Within::Disjoint => {}
                Within::Whole => {
                    let free = owners[o].clone();
                    let pieces = pieces(r, &free, slots, &groups, &mut buffers);
                    plan.parts.push(Part {
                        owner: o,
                        free,
                        pieces,
                        message: usize::MAX,
                    });
                }
                Within::Partly => return None,
            }
        }
        if holds(r) {
            plan.pieces = pieces(r, &owners[r], slots, &groups, &mut buffers);
        }
        plan.buffers = buffers.list;
        rank_plans.push(plan);
    }
    let mut messages = input_messages(&mut rank_plans);
    partial_messages(&mut rank_plans, &mut messages);
    Some(StatementPlan {
        rule: Rule::PartialSums,
        ranks: rank_plans,
        messages,
    })
}

/// One message per part, to its owner, numbered by owner then sender; each
/// owner adds them in that order (deterministic sums, run to run).
fn partial_messages(rank_plans: &mut [RankPlan], messages: &mut Vec<Message>) {
    for o in 0..rank_plans.len() {
        for r in 0..rank_plans.len() {
            for k in 0..rank_plans[r].parts.len() {
                let part = &rank_plans[r].parts[k];
                if part.owner != o {
                    continue;
                }
                let elements = part.elements();
                let id = messages.len();
                messages.push(Message {
                    from: r,
                    to: o,
                    carries: Carries::Partial { part: k },
                    elements,
                });
                rank_plans[r].parts[k].message = id;
                rank_plans[o].adds.push(id);
            }
        }
    }
}

/// The grid axes an axis fixes a coordinate on (rows 1, columns 2).
fn mask(a: Axis) -> u8 {
    match a {
        Axis::None => 0,
        Axis::Row => 1,
        Axis::Col => 2,
        Axis::All => 3,
    }
}

enum Within {
    Disjoint,
    Whole,
    Partly,
}

/// How the block `owner` (values per index) lies in `reach`.
fn within(reach: &[Vec<usize>], owner: &[(Index, Vec<usize>)]) -> Within {
    let mut whole = true;
    for (r, (_, o)) in reach.iter().zip(owner) {
        let common = o.iter().filter(|g| r.binary_search(g).is_ok()).count();
        if common == 0 {
            return Within::Disjoint;
        }
        whole &= common == o.len();
    }
    if whole {
        Within::Whole
    } else {
        Within::Partly
    }
}

/// True when the boxes `spaces` (per rank, sorted values per dimension)
/// cover the space of extents `full` exactly once: as many points as the
/// space, and no two boxes meet.
fn exact_cover(spaces: &[Vec<Vec<usize>>], full: &[usize]) -> bool {
    let size = |b: &Vec<Vec<usize>>| b.iter().map(|v| v.len() as u128).product::<u128>();
    let total: u128 = spaces.iter().map(size).sum();
    if total != full.iter().map(|&n| n as u128).product::<u128>() {
        return false;
    }
    let boxes: Vec<&Vec<Vec<usize>>> = spaces.iter().filter(|b| size(b) > 0).collect();
    for (a, x) in boxes.iter().enumerate() {
        for y in &boxes[a + 1..] {
            if x.iter().zip(y.iter()).all(|(u, v)| meet(u, v)) {
                return false;
            }
        }
    }
    true
}

/// True when two sorted lists share a value.
fn meet(u: &[usize], v: &[usize]) -> bool {
    let (mut i, mut j) = (0, 0);
    while i < u.len() && j < v.len() {
        match u[i].cmp(&v[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => return true,
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boxes_that_overlap_or_leave_a_gap_are_no_cover() {
        let full = [4, 2];
        let halves = vec![vec![vec![0, 1], vec![0, 1]], vec![vec![2, 3], vec![0, 1]]];
        assert!(exact_cover(&halves, &full));
        let overlap = vec![vec![vec![0, 1, 2], vec![0, 1]], vec![vec![2, 3], vec![0]]];
        assert!(!exact_cover(&overlap, &full), "as many points, one twice");
        let gap = vec![vec![vec![0, 1], vec![0, 1]], vec![vec![2], vec![0, 1]]];
        assert!(!exact_cover(&gap, &full));
    }
}
