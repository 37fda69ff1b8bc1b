//! The communication plan of one distributed statement, computed at the
//! first stage from the layouts alone: for each rank, which values of
//! each index it computes, how the reduction is cut into pieces, and for
//! each piece which blocks of which input it needs from which rank.
//!
//! The rule is owner-computes: a rank computes the elements of the left
//! side it holds. A reduction index is cut where any input changes owner
//! along it, so each piece of an input comes from one rank per block of
//! its other dimensions. A rank computes its pieces whose inputs it holds
//! first, while the others are in flight.

use super::layout::Split;
use crate::index::Index;
use std::collections::BTreeMap;

/// One dimension of a copy: pairs of (position in the destination, index
/// in the source), in order.
pub(crate) type Pairs = Vec<(usize, usize)>;

/// An access on the right side, as the plan sees it.
pub(crate) struct SlotIn<'a> {
    pub indices: &'a [Index],
    pub split: &'a Split,
    /// True for the left side's tensor read on the right.
    pub is_lhs: bool,
}

/// A block of an input buffer that one rank supplies.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Block {
    /// The rank that holds it and sends it (the reader itself for a local block).
    pub source: usize,
    /// Per dimension: (position in the input buffer, index in the source's local array).
    pub dims: Vec<Pairs>,
    /// The message that carries it, when the source is another rank.
    pub message: Option<usize>,
}

impl Block {
    /// Elements in the block.
    pub fn elements(&self) -> usize {
        self.dims.iter().map(Vec::len).product()
    }
}

/// An input buffer of a rank: the part of one access a piece reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Buffer {
    /// Which access of the right side (in `Term::accesses` order).
    pub slot: usize,
    pub shape: Vec<usize>,
    pub blocks: Vec<Block>,
    /// The buffer is the rank's own local array, unchanged (no copy).
    pub direct: bool,
}

/// One piece of a rank's reduction: values of each reduced index, and
/// for each access the buffer it reads (an index into `RankPlan::buffers`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Piece {
    pub reduced: Vec<(Index, Vec<usize>)>,
    pub buffers: Vec<usize>,
    /// True when every block of its buffers is local.
    pub local: bool,
}

/// What one rank does in a statement.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct RankPlan {
    /// The values of each left-side index this rank computes.
    pub free: Vec<(Index, Vec<usize>)>,
    /// Local pieces first.
    pub pieces: Vec<Piece>,
    pub buffers: Vec<Buffer>,
}

impl RankPlan {
    /// True when the rank computes no element.
    pub fn idle(&self) -> bool {
        self.free.iter().any(|(_, v)| v.is_empty()) || self.pieces.is_empty()
    }
}

/// A message of the plan.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Message {
    pub from: usize,
    pub to: usize,
    /// Which buffer of the receiver, and which block of it.
    pub buffer: usize,
    pub block: usize,
    pub elements: usize,
}

/// The plan of a statement over every rank.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct StatementPlan {
    pub ranks: Vec<RankPlan>,
    pub messages: Vec<Message>,
}

/// The plan of `lhs[lhs_indices] op rhs` where `ranges` gives every
/// index's extent and `reduced` the indices only the right side has.
pub(crate) fn plan(
    ranks: usize,
    lhs: (&[Index], &Split),
    slots: &[SlotIn],
    reduced: &[Index],
    ranges: &[(Index, usize)],
) -> StatementPlan {
    let range = |x: Index| ranges.iter().find(|(j, _)| *j == x).expect("checked").1;
    let groups: Vec<(Index, Vec<Vec<usize>>)> = reduced
        .iter()
        .map(|&x| (x, reduction_groups(x, range(x), slots)))
        .collect();
    let mut rank_plans = Vec::with_capacity(ranks);
    for r in 0..ranks {
        rank_plans.push(rank_plan(r, lhs, slots, &groups));
    }
    let mut messages = Vec::new();
    for (to, rp) in rank_plans.iter_mut().enumerate() {
        if rp.idle() {
            continue;
        }
        for (b, buf) in rp.buffers.iter_mut().enumerate() {
            for (k, block) in buf.blocks.iter_mut().enumerate() {
                if block.source != to && block.elements() > 0 {
                    block.message = Some(messages.len());
                    messages.push(Message {
                        from: block.source,
                        to,
                        buffer: b,
                        block: k,
                        elements: block.elements(),
                    });
                }
            }
        }
    }
    StatementPlan {
        ranks: rank_plans,
        messages,
    }
}

/// The values of reduced index `x` grouped by which coordinates hold them
/// in every access that indexes with `x` (in order of first value).
fn reduction_groups(x: Index, extent: usize, slots: &[SlotIn]) -> Vec<Vec<usize>> {
    let mut order: Vec<Vec<usize>> = Vec::new();
    let mut groups: BTreeMap<Vec<usize>, usize> = BTreeMap::new();
    for g in 0..extent {
        let key: Vec<usize> = slots
            .iter()
            .flat_map(|s| {
                s.indices
                    .iter()
                    .zip(&s.split.dims)
                    .filter(|(i, _)| **i == x)
                    .map(|(_, d)| d.owner(g))
            })
            .collect();
        let at = *groups.entry(key).or_insert_with(|| {
            order.push(Vec::new());
            order.len() - 1
        });
        order[at].push(g);
    }
    order
}

fn rank_plan(
    r: usize,
    (lhs_indices, lhs_split): (&[Index], &Split),
    slots: &[SlotIn],
    groups: &[(Index, Vec<Vec<usize>>)],
) -> RankPlan {
    let free: Vec<(Index, Vec<usize>)> = lhs_indices
        .iter()
        .zip(&lhs_split.dims)
        .map(|(&x, d)| {
            let coord = lhs_split.coord(r, d.axis);
            (x, (0..d.extent).filter(|&g| d.owner(g) == coord).collect())
        })
        .collect();
    let mut buffers: Vec<Buffer> = Vec::new();
    // Buffers are shared by pieces that read the same values of an access.
    let mut by_key: BTreeMap<(usize, Vec<usize>), usize> = BTreeMap::new();
    let mut pieces = Vec::new();
    for choice in product(&groups.iter().map(|(_, g)| g.len()).collect::<Vec<_>>()) {
        let reduced: Vec<(Index, Vec<usize>)> = groups
            .iter()
            .zip(&choice)
            .map(|((x, g), &c)| (*x, g[c].clone()))
            .collect();
        let values = |x: Index| -> &Vec<usize> {
            free.iter()
                .chain(reduced.iter())
                .find(|(j, _)| *j == x)
                .map(|(_, v)| v)
                .expect("every index is free or reduced")
        };
        let mut piece_buffers = Vec::with_capacity(slots.len());
        for (s, slot) in slots.iter().enumerate() {
            let key_groups: Vec<usize> = groups
                .iter()
                .zip(&choice)
                .filter(|((x, _), _)| slot.indices.contains(x))
                .map(|(_, &c)| c)
                .collect();
            let at = *by_key.entry((s, key_groups)).or_insert_with(|| {
                buffers.push(buffer(r, s, slot, &values));
                buffers.len() - 1
            });
            piece_buffers.push(at);
        }
        let local = piece_buffers
            .iter()
            .all(|&b| buffers[b].blocks.iter().all(|k| k.source == r));
        pieces.push(Piece {
            reduced,
            buffers: piece_buffers,
            local,
        });
    }
    // Local pieces first: they compute while the others arrive.
    pieces.sort_by_key(|p| !p.local);
    RankPlan {
        free,
        pieces,
        buffers,
    }
}

/// The buffer of access `slot` over the index values `values` gives.
fn buffer<'v>(
    r: usize,
    s: usize,
    slot: &SlotIn,
    values: &impl Fn(Index) -> &'v Vec<usize>,
) -> Buffer {
    let split = slot.split;
    // Per dimension: owner coordinate -> pairs (buffer position, local index).
    let per_dim: Vec<Vec<(usize, Pairs)>> = slot
        .indices
        .iter()
        .zip(&split.dims)
        .map(|(&x, d)| {
            let mut by_owner: BTreeMap<usize, Pairs> = BTreeMap::new();
            for (pos, &g) in values(x).iter().enumerate() {
                by_owner
                    .entry(d.owner(g))
                    .or_default()
                    .push((pos, d.local(g)));
            }
            by_owner.into_iter().collect()
        })
        .collect();
    let shape: Vec<usize> = slot.indices.iter().map(|&x| values(x).len()).collect();
    let mut blocks = Vec::new();
    for choice in product(&per_dim.iter().map(Vec::len).collect::<Vec<_>>()) {
        let coords: Vec<usize> = per_dim.iter().zip(&choice).map(|(d, &c)| d[c].0).collect();
        let dims: Vec<Pairs> = per_dim
            .iter()
            .zip(&choice)
            .map(|(d, &c)| d[c].1.clone())
            .collect();
        let source = if slot.is_lhs {
            r
        } else {
            split.source(r, &coords)
        };
        blocks.push(Block {
            source,
            dims,
            message: None,
        });
    }
    let local_shape = split.local_shape(r);
    let direct = blocks.len() == 1
        && blocks[0].source == r
        && blocks[0].dims.iter().zip(&local_shape).all(|(pairs, &n)| {
            pairs.len() == n
                && pairs
                    .iter()
                    .enumerate()
                    .all(|(i, &(p, l))| p == i && l == i)
        });
    let direct = direct || shape.contains(&0) && blocks.iter().all(|b| b.source == r);
    Buffer {
        slot: s,
        shape,
        blocks,
        direct,
    }
}

/// Every choice of one of `n[d]` per dimension, the last fastest.
fn product(n: &[usize]) -> Vec<Vec<usize>> {
    let mut out = vec![vec![]];
    for &k in n {
        out = out
            .into_iter()
            .flat_map(|prefix| {
                (0..k).map(move |c| {
                    let mut v = prefix.clone();
                    v.push(c);
                    v
                })
            })
            .collect();
    }
    out
}
