//! The communication plan of one distributed statement, computed at the
//! first stage from the layouts alone: for each rank, which values of
//! each index it computes, how the reduction is cut into pieces, and for
//! each piece which blocks of which input it needs from which rank.
//!
//! Two plans are made and the one that sends less is kept
//! ([`plan`]; ties go to the first):
//!
//! - **Owner computes**: a rank computes the elements of the left side it
//!   holds. A reduction index is cut where any input changes owner along
//!   it, so each piece of an input comes from one rank per block of its
//!   other dimensions. A rank computes its pieces whose inputs it holds
//!   first, while the others are in flight. Where cutting would copy
//!   slices of an input held whole along the index (`X[i][j][k]` beside a
//!   `U[k][r]` split along `k`), or the right side reads the left side,
//!   the reduction stays whole: one piece over buffers gathered from
//!   every owner.
//! - **Partial sums** (`partial.rs`): when every input splits a reduced
//!   index alike, each rank reduces over its own slice of it, for every
//!   left-side block that slice contributes to, and sends each other
//!   owner its partial block; owners add them in rank order. This is what
//!   ScaLAPACK's `pdgemm` does for `A Bᵀ`.

use super::layout::Split;
use super::Rule;
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
    /// Partial sums of other ranks' blocks this rank computes and sends
    /// (partial-sums plans only), each before its own pieces.
    pub parts: Vec<Part>,
    /// The partial sums this rank adds into its left side after its own
    /// pieces: message ids, in order of sender.
    pub adds: Vec<usize>,
}

impl RankPlan {
    /// True when the rank computes none of its own elements.
    pub fn idle(&self) -> bool {
        self.free.iter().any(|(_, v)| v.is_empty()) || self.pieces.is_empty()
    }

    /// True when the rank computes anything: its own elements or a part.
    pub fn computes(&self) -> bool {
        !self.idle() || !self.parts.is_empty()
    }
}

/// A block of another rank's left side that a rank computes over its own
/// slice of the reduction (a partial sum) and sends to that owner.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Part {
    /// The rank that holds the block; it is the whole of its local array.
    pub owner: usize,
    /// The owner's values of each left-side index.
    pub free: Vec<(Index, Vec<usize>)>,
    /// Its pieces, reading `RankPlan::buffers`.
    pub pieces: Vec<Piece>,
    /// The message that carries it.
    pub message: usize,
}

impl Part {
    /// Elements in the block.
    pub fn elements(&self) -> usize {
        shape(&self.free).iter().product()
    }
}

/// The extents of a block given by its values of each index.
pub(crate) fn shape(values: &[(Index, Vec<usize>)]) -> Vec<usize> {
    values.iter().map(|(_, v)| v.len()).collect()
}

/// What a message carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Carries {
    /// Block `block` of the receiver's input buffer `buffer`.
    Input { buffer: usize, block: usize },
    /// The sender's part `part` (`RankPlan::parts`), which the receiver
    /// adds into its left side.
    Partial { part: usize },
}

/// A message of the plan.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Message {
    pub from: usize,
    pub to: usize,
    pub carries: Carries,
    pub elements: usize,
}

/// The plan of a statement over every rank.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct StatementPlan {
    pub rule: Rule,
    pub ranks: Vec<RankPlan>,
    pub messages: Vec<Message>,
}

impl StatementPlan {
    /// Elements each rank sends.
    pub fn sent(&self) -> Vec<usize> {
        let mut out = vec![0; self.ranks.len()];
        for m in &self.messages {
            out[m.from] += m.elements;
        }
        out
    }

    /// Elements the computing ranks copy from their own arrays into input
    /// buffers.
    fn copied(&self) -> usize {
        let local = |(r, rp): (usize, &RankPlan)| -> usize {
            rp.buffers
                .iter()
                .filter(|b| !b.direct)
                .flat_map(|b| &b.blocks)
                .filter(|k| k.source == r)
                .map(Block::elements)
                .sum()
        };
        self.ranks
            .iter()
            .enumerate()
            .filter(|(_, rp)| rp.computes())
            .map(local)
            .sum()
    }

    /// What the choice between plans minimizes: the total sent, then the
    /// most any rank sends.
    fn cost(&self) -> (usize, usize) {
        let sent = self.sent();
        (sent.iter().sum(), sent.iter().copied().max().unwrap_or(0))
    }
}

/// The plan of `lhs[lhs_indices] op rhs` where `ranges` gives every
/// index's extent and `reduced` the indices only the right side has.
/// `partial_sums` allows the partial-sums plan (an `=` or `+=` whose
/// right side does not read its left side); it is taken when it sends
/// less than owner-computes. `one_piece` asks for the reduction whole on
/// each rank (a right side that reads the left side: each piece would read
/// it again).
pub(crate) fn plan(
    ranks: usize,
    lhs: (&[Index], &Split),
    slots: &[SlotIn],
    reduced: &[Index],
    ranges: &[(Index, usize)],
    partial_sums: bool,
    one_piece: bool,
) -> StatementPlan {
    let range = |x: Index| ranges.iter().find(|(j, _)| *j == x).expect("checked").1;
    // The reduction cut where an input changes owner along it (pieces
    // whose inputs are local start while the others travel), or whole.
    let cut: Vec<(Index, Vec<Vec<usize>>)> = reduced
        .iter()
        .map(|&x| (x, reduction_groups(x, (0..range(x)).collect(), slots)))
        .collect();
    let whole: Vec<(Index, Vec<Vec<usize>>)> = reduced
        .iter()
        .map(|&x| (x, vec![(0..range(x)).collect()]))
        .collect();
    let owner = if one_piece {
        owner_computes(ranks, lhs, slots, &whole)
    } else {
        // Cutting copies a slice of each input that does not change owner
        // where the cut is (`X[i][j][k]` held whole along `k`, cut where
        // `U[k][r]` changes owner): whole when that copies less.
        let pieces = owner_computes(ranks, lhs, slots, &cut);
        if cut.iter().all(|(_, g)| g.len() <= 1) {
            pieces // nothing cut: the same plan
        } else {
            let one = owner_computes(ranks, lhs, slots, &whole);
            if one.copied() < pieces.copied() {
                one
            } else {
                pieces
            }
        }
    };
    if partial_sums {
        if let Some(p) = super::partial::plan(ranks, lhs, slots, reduced, ranges) {
            if p.cost() < owner.cost() {
                return p;
            }
        }
    }
    owner
}

/// Owner-computes over the reduction's `groups` (each reduced index's
/// values, grouped into pieces).
fn owner_computes(
    ranks: usize,
    lhs: (&[Index], &Split),
    slots: &[SlotIn],
    groups: &[(Index, Vec<Vec<usize>>)],
) -> StatementPlan {
    let mut rank_plans: Vec<RankPlan> = (0..ranks)
        .map(|r| {
            let free = owned(r, lhs);
            let mut buffers = Buffers::default();
            let pieces = pieces(r, &free, slots, groups, &mut buffers);
            RankPlan {
                free,
                pieces,
                buffers: buffers.list,
                parts: Vec::new(),
                adds: Vec::new(),
            }
        })
        .collect();
    let messages = input_messages(&mut rank_plans);
    StatementPlan {
        rule: Rule::OwnerComputes,
        ranks: rank_plans,
        messages,
    }
}

/// The values of each left-side index that rank `r` holds.
pub(crate) fn owned(
    r: usize,
    (lhs_indices, lhs_split): (&[Index], &Split),
) -> Vec<(Index, Vec<usize>)> {
    lhs_indices
        .iter()
        .zip(&lhs_split.dims)
        .map(|(&x, d)| {
            let coord = lhs_split.coord(r, d.axis);
            (x, (0..d.extent).filter(|&g| d.owner(g) == coord).collect())
        })
        .collect()
}

/// One message per block of an input buffer that a computing rank reads
/// from another rank, in order of receiver, buffer and block.
pub(crate) fn input_messages(rank_plans: &mut [RankPlan]) -> Vec<Message> {
    let mut messages = Vec::new();
    for (to, rp) in rank_plans.iter_mut().enumerate() {
        if !rp.computes() {
            continue;
        }
        for (b, buf) in rp.buffers.iter_mut().enumerate() {
            for (k, block) in buf.blocks.iter_mut().enumerate() {
                if block.source != to && block.elements() > 0 {
                    block.message = Some(messages.len());
                    messages.push(Message {
                        from: block.source,
                        to,
                        carries: Carries::Input {
                            buffer: b,
                            block: k,
                        },
                        elements: block.elements(),
                    });
                }
            }
        }
    }
    messages
}

/// The values of reduced index `x` among `values`, grouped by which
/// coordinates hold them in every access that indexes with `x` (in order
/// of first value).
pub(crate) fn reduction_groups(x: Index, values: Vec<usize>, slots: &[SlotIn]) -> Vec<Vec<usize>> {
    let mut order: Vec<Vec<usize>> = Vec::new();
    let mut groups: BTreeMap<Vec<usize>, usize> = BTreeMap::new();
    for g in values {
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

/// Input buffers of one rank, shared by the pieces that read the same
/// values of an access.
#[derive(Default)]
pub(crate) struct Buffers {
    pub list: Vec<Buffer>,
    by_values: BTreeMap<(usize, Vec<Vec<usize>>), usize>,
}

/// The pieces of rank `r` computing the left-side values `free` over the
/// reduction's `groups` (each reduced index's values, grouped), their
/// buffers added to `buffers`; local pieces first.
pub(crate) fn pieces(
    r: usize,
    free: &[(Index, Vec<usize>)],
    slots: &[SlotIn],
    groups: &[(Index, Vec<Vec<usize>>)],
    buffers: &mut Buffers,
) -> Vec<Piece> {
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
            let key = (s, slot.indices.iter().map(|&x| values(x).clone()).collect());
            let at = match buffers.by_values.get(&key) {
                Some(&at) => at,
                None => {
                    buffers.list.push(buffer(r, s, slot, &values));
                    buffers.by_values.insert(key, buffers.list.len() - 1);
                    buffers.list.len() - 1
                }
            };
            piece_buffers.push(at);
        }
        let local = piece_buffers
            .iter()
            .all(|&b| buffers.list[b].blocks.iter().all(|k| k.source == r));
        pieces.push(Piece {
            reduced,
            buffers: piece_buffers,
            local,
        });
    }
    // Local pieces first: they compute while the others arrive.
    pieces.sort_by_key(|p| !p.local);
    pieces
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
