//! The control-flow graph of a trace: basic blocks, reverse postorder,
//! dominators, loops.

use crate::error::Error;
use crate::ir::{Arena, EntityId, SecondaryMap, VarData, VarId};
use crate::trace::graph::{Node, NodeId, Op, OpExpr, Succ};
use crate::trace::tag::FastMap;
use std::collections::HashMap;

crate::ir::entity!(
    /// Handle of a basic block (dense, in creation order).
    BlockId,
    "b"
);

/// The entry block.
pub const ENTRY: BlockId = BlockId(0);

/// A set of blocks: a flag per block, unset for blocks never marked.
pub type BlockSet = SecondaryMap<BlockId, bool>;

/// A branch condition: one decision, or decisions joined by the
/// short-circuit operators Rust's `a.is_true() && b.is_true()` produces.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Cond {
    /// The condition of a branch node.
    Node(NodeId),
    /// `a && b`, where `b` first computes the pure `lets` (a block absorbed
    /// into the condition: C's `&&` evaluates them only when `a` holds).
    And(Box<Cond>, Vec<NodeId>, Box<Cond>),
    /// `a || b`, likewise.
    Or(Box<Cond>, Vec<NodeId>, Box<Cond>),
}

impl Cond {
    /// Every node of the condition: branch nodes and absorbed lets.
    pub fn nodes(&self, out: &mut Vec<NodeId>) {
        match self {
            Cond::Node(n) => out.push(*n),
            Cond::And(a, lets, b) | Cond::Or(a, lets, b) => {
                a.nodes(out);
                out.extend(lets);
                b.nodes(out);
            }
        }
    }

    /// The first decision (for locations and annotations).
    pub fn first(&self) -> NodeId {
        match self {
            Cond::Node(n) => *n,
            Cond::And(a, ..) | Cond::Or(a, ..) => a.first(),
        }
    }
}

/// How a block ends.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Term {
    /// Continues in another block.
    Goto(BlockId),
    /// A decision, then its two targets.
    Branch(Cond, BlockId, BlockId),
    /// The function returns (the return node).
    Return(NodeId),
    /// Control goes to a resumable point outside the region (its `Point`
    /// node): a `goto` to the point's label (see `regions.rs`).
    Leave(NodeId),
}

/// A basic block: straight-line nodes and a terminator.
#[derive(Clone, Debug)]
pub struct Block {
    /// The statements (not the branch or return node that ends the block).
    pub nodes: Vec<NodeId>,
    /// How it ends.
    pub term: Term,
}

impl Block {
    /// Every node of the block in order: its statements, then its
    /// terminator's (a branch's decisions and the lets absorbed into its
    /// condition, or the return).
    pub fn ops(&self) -> impl Iterator<Item = NodeId> + '_ {
        let mut term = Vec::new();
        match &self.term {
            Term::Branch(c, ..) => c.nodes(&mut term),
            Term::Return(n) => term.push(*n),
            Term::Goto(_) | Term::Leave(_) => {}
        }
        self.nodes.iter().copied().chain(term)
    }

    /// The blocks control goes to next (then before else).
    pub fn succs(&self) -> impl Iterator<Item = BlockId> {
        let (x, y) = match &self.term {
            Term::Goto(t) => (Some(*t), None),
            Term::Branch(_, t, e) => (Some(*t), Some(*e)),
            Term::Return(_) | Term::Leave(_) => (None, None),
        };
        x.into_iter().chain(y)
    }
}

/// Blocks plus the analyses structuring needs.
pub struct Cfg {
    /// Blocks; [`ENTRY`] is the entry.
    pub blocks: Arena<BlockId, Block>,
    /// Reverse postorder index of each block.
    pub rpo_index: SecondaryMap<BlockId, usize>,
    /// Blocks in reverse postorder.
    pub rpo: Vec<BlockId>,
    /// Immediate dominator (the entry's is itself).
    pub idom: SecondaryMap<BlockId, BlockId>,
    /// Dominator-tree children, sorted by reverse postorder.
    pub dom_children: SecondaryMap<BlockId, Vec<BlockId>>,
    /// Predecessors through forward (non-back) edges.
    pub forward_preds: SecondaryMap<BlockId, u32>,
    /// True for blocks that are the target of a back-edge.
    pub is_header: BlockSet,
    /// For loop headers: the blocks of the natural loop.
    pub loop_body: SecondaryMap<BlockId, BlockSet>,
    /// Pre/post numbers of the dominator tree for O(1) dominance queries.
    dom_pre: SecondaryMap<BlockId, u32>,
    dom_post: SecondaryMap<BlockId, u32>,
}

impl Cfg {
    /// Builds the CFG of the graph reachable from `entry`.
    pub fn build(nodes: &Arena<NodeId, Node>, entry: NodeId) -> Result<Cfg, Error> {
        Cfg::region(nodes, entry, &|_| false)
    }

    /// Builds the CFG of the graph reachable from `entry` without passing
    /// a node `cut` holds for: each edge to one ends in a block of its own
    /// that leaves the region (`Term::Leave`).
    pub fn region(
        nodes: &Arena<NodeId, Node>,
        entry: NodeId,
        cut: &dyn Fn(NodeId) -> bool,
    ) -> Result<Cfg, Error> {
        Cfg::region_in(nodes, entry, cut, &mut Scratch::default())
    }

    /// [`Cfg::region`] with the node maps of `scratch` (left clean), so
    /// that many small regions of a large graph cost their own size.
    pub fn region_in(
        nodes: &Arena<NodeId, Node>,
        entry: NodeId,
        cut: &dyn Fn(NodeId) -> bool,
        scratch: &mut Scratch,
    ) -> Result<Cfg, Error> {
        let blocks = make_blocks(nodes, entry, cut, scratch);
        scratch.clear();
        Ok(Cfg::from_blocks(fold_short_circuits(blocks?, nodes)))
    }

    /// The blocks and dominators of the graph reachable from `entry`,
    /// without loops: enough for `dominates`.
    pub fn dominance(nodes: &Arena<NodeId, Node>, entry: NodeId) -> Result<Cfg, Error> {
        let blocks = make_blocks(nodes, entry, &|_| false, &mut Scratch::default())?;
        Ok(Cfg::analyse(blocks, false))
    }

    /// The analyses of a block graph ([`ENTRY`] is the entry).
    pub fn from_blocks(blocks: Arena<BlockId, Block>) -> Cfg {
        Cfg::analyse(blocks, true)
    }

    fn analyse(blocks: Arena<BlockId, Block>, loops: bool) -> Cfg {
        let rpo = reverse_postorder(&blocks);
        let n = blocks.len();
        let mut rpo_index = SecondaryMap::with_len(n, usize::MAX);
        for (i, &b) in rpo.iter().enumerate() {
            rpo_index[b] = i;
        }
        let preds = predecessors(&blocks);
        let idom = dominators(&rpo, &rpo_index, &preds);
        let mut cfg = Cfg {
            blocks,
            rpo_index,
            rpo,
            idom,
            dom_children: SecondaryMap::with_len(n, Vec::new()),
            forward_preds: SecondaryMap::with_len(n, 0),
            is_header: SecondaryMap::with_len(n, false),
            loop_body: SecondaryMap::new(),
            dom_pre: SecondaryMap::with_len(n, 0),
            dom_post: SecondaryMap::with_len(n, 0),
        };
        cfg.dom_tree();
        if loops {
            cfg.loops(&preds);
        }
        cfg
    }

    /// Gives every predecessor but the first its own copy of each block in
    /// `targets` that is small, heads no loop and declares only variables
    /// it alone reads (node splitting): a join C cannot reach structurally
    /// becomes code in each branch. A copy's nodes are new nodes whose
    /// variables are new variables, so every definition stays unique.
    /// Returns the new blocks, or `None` if nothing could be split.
    pub fn split(
        &self,
        targets: &[BlockId],
        nodes: &mut Arena<NodeId, Node>,
        vars: &mut Arena<VarId, VarData>,
    ) -> Option<Arena<BlockId, Block>> {
        let mut blocks = self.blocks.clone();
        let preds = predecessors(&blocks);
        let uses = use_counts(&blocks, nodes);
        let mut any = false;
        for &t in targets {
            let b = &self.blocks[t];
            let small = b.nodes.len() <= 16;
            if !small || self.is_header[t] || !defines_only_locals(b, nodes, &uses) {
                continue;
            }
            for &p in preds[t].iter().skip(1) {
                let copy = blocks.push(copy_block(b, nodes, vars));
                retarget(&mut blocks[p].term, t, copy);
                any = true;
            }
        }
        any.then(|| compact(blocks))
    }

    /// Successor blocks of `b` (then before else).
    pub fn succs(&self, b: BlockId) -> impl Iterator<Item = BlockId> {
        self.blocks[b].succs()
    }

    /// True if `a` dominates `b`.
    pub fn dominates(&self, a: BlockId, b: BlockId) -> bool {
        self.dom_pre[a] <= self.dom_pre[b] && self.dom_post[b] <= self.dom_post[a]
    }

    /// True for an edge `from -> to` that closes a loop.
    pub fn is_back_edge(&self, from: BlockId, to: BlockId) -> bool {
        self.dominates(to, from)
    }

    fn dom_tree(&mut self) {
        let n = self.blocks.len();
        for &b in &self.rpo {
            if b != ENTRY {
                self.dom_children[self.idom[b]].push(b);
            }
        }
        for b in self.blocks.keys() {
            let rpo_index = &self.rpo_index;
            self.dom_children[b].sort_by_key(|&x| rpo_index[x]);
        }
        // Iterative pre/post numbering.
        let mut counter = 0u32;
        let mut stack = vec![(ENTRY, 0usize)];
        self.dom_pre[ENTRY] = 0;
        while let Some(&mut (b, ref mut i)) = stack.last_mut() {
            if *i == 0 {
                self.dom_pre[b] = counter;
                counter += 1;
            }
            if *i < self.dom_children[b].len() {
                let c = self.dom_children[b][*i];
                *i += 1;
                stack.push((c, 0));
            } else {
                self.dom_post[b] = counter;
                counter += 1;
                stack.pop();
            }
        }
        debug_assert!(counter as usize == 2 * n);
    }

    fn loops(&mut self, preds: &SecondaryMap<BlockId, Vec<BlockId>>) {
        for b in self.blocks.keys() {
            for s in self.succs(b) {
                if self.is_back_edge(b, s) {
                    self.is_header[s] = true;
                } else {
                    self.forward_preds[s] += 1;
                }
            }
        }
        for h in self.blocks.keys() {
            if !self.is_header[h] {
                continue;
            }
            let mut body = BlockSet::new();
            body[h] = true;
            let mut stack: Vec<BlockId> = preds[h]
                .iter()
                .copied()
                .filter(|&p| self.is_back_edge(p, h))
                .collect();
            while let Some(b) = stack.pop() {
                if !body[b] {
                    body[b] = true;
                    stack.extend(preds[b].iter().copied());
                }
            }
            self.loop_body[h] = body;
        }
    }
}

/// Splits the reachable graph into basic blocks.
/// Per-node maps of [`make_blocks`], kept between regions.
#[derive(Default)]
pub struct Scratch {
    preds: SecondaryMap<NodeId, u32>,
    branch_target: SecondaryMap<NodeId, bool>,
    seen: SecondaryMap<NodeId, bool>,
    block_of: SecondaryMap<NodeId, Option<BlockId>>,
    /// The nodes whose entries were set.
    touched: Vec<NodeId>,
}

impl Scratch {
    fn clear(&mut self) {
        for n in self.touched.drain(..) {
            self.preds[n] = 0;
            self.branch_target[n] = false;
            self.seen[n] = false;
            self.block_of[n] = None;
        }
    }
}

fn make_blocks(
    nodes: &Arena<NodeId, Node>,
    entry: NodeId,
    cut: &dyn Fn(NodeId) -> bool,
    scratch: &mut Scratch,
) -> Result<Arena<BlockId, Block>, Error> {
    let cut = |n: NodeId| n != entry && cut(n);
    let Scratch {
        preds,
        branch_target,
        seen,
        block_of,
        touched,
    } = scratch;
    let mut stack = vec![entry];
    seen[entry] = true;
    touched.push(entry);
    while let Some(n) = stack.pop() {
        let node = &nodes[n];
        let is_branch = matches!(node.op, Op::Branch(_));
        match (&node.succ, &node.op) {
            (Succ::Open, Op::Return(_)) => {}
            (Succ::Open, _) | (Succ::Branch(None, _) | Succ::Branch(_, None), _) => {
                return Err(Error::Internal {
                    message: format!("unexplored successor of {n:?} at {}", node.loc),
                })
            }
            _ => {}
        }
        for s in node.successors() {
            if preds[s] == 0 && !seen[s] {
                touched.push(s);
            }
            preds[s] += 1;
            branch_target[s] |= is_branch;
            if !seen[s] && !cut(s) {
                seen[s] = true;
                stack.push(s);
            }
        }
    }
    let leader = |n: NodeId| n == entry || preds[n] != 1 || branch_target[n] || cut(n);
    let mut order = Vec::new();
    let mut stack = vec![entry];
    while let Some(n) = stack.pop() {
        if block_of[n].is_some() || cut(n) {
            continue;
        }
        block_of[n] = Some(BlockId::new(order.len()));
        order.push(n);
        // Visit successors of the whole chain.
        let mut cur = n;
        loop {
            let node = &nodes[cur];
            match node.succ {
                Succ::Next(s) if !leader(s) => cur = s,
                Succ::Next(s) => {
                    stack.push(s);
                    break;
                }
                Succ::Branch(Some(t), Some(e)) => {
                    stack.push(e);
                    stack.push(t);
                    break;
                }
                _ => break,
            }
        }
    }
    // Every leader reached was given its block above; each edge out of the
    // region gets a block of its own after them.
    let mut leaves: Vec<NodeId> = Vec::new();
    let mut block = |n: &NodeId| match block_of[*n] {
        Some(b) => b,
        None => {
            debug_assert!(cut(*n), "a block per leader");
            leaves.push(*n);
            BlockId::new(order.len() + leaves.len() - 1)
        }
    };
    let mut blocks = Arena::new();
    for &start in &order {
        let mut list = Vec::new();
        let mut cur = start;
        let term = loop {
            let node = &nodes[cur];
            match (&node.op, &node.succ) {
                (Op::Branch(_), Succ::Branch(Some(t), Some(e))) => {
                    break Term::Branch(Cond::Node(cur), block(t), block(e));
                }
                (Op::Return(_), _) => {
                    break Term::Return(cur);
                }
                (op, Succ::Next(s)) => {
                    // A resumable point does nothing: the jumps to it
                    // are the edges into its block.
                    if !matches!(op, Op::Point(_)) {
                        list.push(cur);
                    }
                    if leader(*s) {
                        break Term::Goto(block(s));
                    }
                    cur = *s;
                }
                _ => {
                    return Err(Error::Internal {
                        message: format!("malformed node {cur:?}"),
                    })
                }
            }
        };
        blocks.push(Block { nodes: list, term });
    }
    for n in leaves {
        blocks.push(Block {
            nodes: Vec::new(),
            term: Term::Leave(n),
        });
    }
    Ok(blocks)
}

fn predecessors(blocks: &Arena<BlockId, Block>) -> SecondaryMap<BlockId, Vec<BlockId>> {
    let mut preds: SecondaryMap<BlockId, Vec<BlockId>> =
        SecondaryMap::with_len(blocks.len(), Vec::new());
    for (b, block) in blocks.iter() {
        for s in block.succs() {
            preds[s].push(b);
        }
    }
    preds
}

/// Reverse postorder from the entry, iteratively (then-sides first).
fn reverse_postorder(blocks: &Arena<BlockId, Block>) -> Vec<BlockId> {
    let mut visited = BlockSet::with_len(blocks.len(), false);
    let mut post = Vec::with_capacity(blocks.len());
    // Each block on the stack with how many of its successors it has tried.
    let mut stack: Vec<(BlockId, usize)> = vec![(ENTRY, 0)];
    visited[ENTRY] = true;
    while let Some((b, tried)) = stack.last_mut() {
        let next = blocks[*b].succs().nth(*tried);
        *tried += 1;
        match next {
            None => {
                post.push(*b);
                stack.pop();
            }
            Some(s) if !visited[s] => {
                visited[s] = true;
                stack.push((s, 0));
            }
            Some(_) => {}
        }
    }
    post.reverse();
    post
}

/// Cooper, Harvey and Kennedy's iterative dominators.
fn dominators(
    rpo: &[BlockId],
    rpo_index: &SecondaryMap<BlockId, usize>,
    preds: &SecondaryMap<BlockId, Vec<BlockId>>,
) -> SecondaryMap<BlockId, BlockId> {
    // `None` until a block's first processed predecessor is seen.
    let mut idom: SecondaryMap<BlockId, Option<BlockId>> = SecondaryMap::with_len(rpo.len(), None);
    idom[ENTRY] = Some(ENTRY);
    // Both walks go up through processed blocks only.
    let up = |idom: &SecondaryMap<BlockId, Option<BlockId>>, b| idom[b].expect("processed");
    let intersect = |idom: &SecondaryMap<BlockId, Option<BlockId>>, mut a, mut b| {
        while a != b {
            while rpo_index[a] > rpo_index[b] {
                a = up(idom, a);
            }
            while rpo_index[b] > rpo_index[a] {
                b = up(idom, b);
            }
        }
        a
    };
    let mut changed = true;
    while changed {
        changed = false;
        for &b in rpo.iter().skip(1) {
            let mut new = None;
            for &p in &preds[b] {
                if idom[p].is_none() {
                    continue;
                }
                new = Some(match new {
                    None => p,
                    Some(new) => intersect(&idom, p, new),
                });
            }
            if new != idom[b] {
                idom[b] = new;
                changed = true;
            }
        }
    }
    let mut done = SecondaryMap::with_len(rpo.len(), ENTRY);
    for &b in rpo {
        done[b] = up(&idom, b);
    }
    done
}

/// Folds `if a { if b {X} else {Y} } else {Y}` into `if a && b {X} else {Y}`
/// (and the `||` shape) when the inner block only computes its condition:
/// Rust's `a.is_true() && b.is_true()` takes two decisions, C takes one
/// condition, and without this the join would need a `goto`.
fn fold_short_circuits(
    mut blocks: Arena<BlockId, Block>,
    nodes: &Arena<NodeId, Node>,
) -> Arena<BlockId, Block> {
    // Counted at the first candidate (folds move uses, never change them):
    // most regions have none.
    let mut uses: Option<FastMap<VarId, u32>> = None;
    let mut preds: SecondaryMap<BlockId, u32> = SecondaryMap::with_len(blocks.len(), 0);
    for (_, b) in blocks.iter() {
        b.succs().for_each(|s| preds[s] += 1);
    }
    let mut changed = true;
    while changed {
        changed = false;
        for a in blocks.keys().rev() {
            let Term::Branch(_, t, e) = blocks[a].term.clone() else {
                continue;
            };
            for (inner, and) in [(t, true), (e, false)] {
                if inner == a
                    || preds[inner] != 1
                    || !matches!(blocks[inner].term, Term::Branch(..))
                {
                    continue;
                }
                let uses = uses.get_or_insert_with(|| use_counts(&blocks, nodes));
                if !condition_only(&blocks[inner], nodes, uses) {
                    continue;
                }
                let Term::Branch(cb, t2, e2) = blocks[inner].term.clone() else {
                    continue;
                };
                // `&&`: the else sides agree; `||`: the then sides agree.
                let shared = if and { e2 == e } else { t2 == t };
                if !shared {
                    continue;
                }
                let Term::Branch(ca, ..) =
                    std::mem::replace(&mut blocks[a].term, Term::Goto(ENTRY))
                else {
                    unreachable!("checked above")
                };
                let lets = std::mem::take(&mut blocks[inner].nodes);
                let (ca, cb) = (Box::new(ca), Box::new(cb));
                blocks[a].term = if and {
                    preds[e] -= 1;
                    Term::Branch(Cond::And(ca, lets, cb), t2, e)
                } else {
                    preds[t] -= 1;
                    Term::Branch(Cond::Or(ca, lets, cb), t, e2)
                };
                preds[inner] = 0;
                blocks[inner].term = Term::Goto(inner);
                changed = true;
                break;
            }
        }
    }
    compact(blocks)
}

/// True if `b` holds only pure lets read nowhere but in its own condition
/// (and nothing annotated, which folding would lose).
fn condition_only(b: &Block, nodes: &Arena<NodeId, Node>, uses: &FastMap<VarId, u32>) -> bool {
    let Term::Branch(c, ..) = &b.term else {
        return false;
    };
    let mut decisions = Vec::new();
    c.nodes(&mut decisions);
    if decisions.iter().any(|&n| !nodes[n].annotations.is_empty()) {
        return false;
    }
    let local = local_uses(b, nodes);
    b.nodes.iter().all(|&n| {
        let node = &nodes[n];
        let pure = matches!(&node.op, Op::Let { expr, .. }
            if !matches!(expr, OpExpr::Call(..) | OpExpr::Intrinsic(..)));
        let Some(def) = node.def.filter(|_| pure && node.annotations.is_empty()) else {
            return false;
        };
        local.get(&def).copied().unwrap_or(0) == uses.get(&def).copied().unwrap_or(0)
    })
}

/// Calls `f` with each variable `op` uses: reads, assigns and addresses
/// taken. These are the uses a definition must dominate and that keep a
/// block's definitions from being renamed in a copy: `&v` outside the block
/// that defines `v` names that block's `v`, which a copy must not rename.
pub fn for_each_use(op: &Op, mut f: impl FnMut(VarId)) {
    op.for_each_var(|v, _| f(v))
}

/// How often each variable is used inside `b` (its nodes and terminator).
fn local_uses(b: &Block, nodes: &Arena<NodeId, Node>) -> FastMap<VarId, u32> {
    let mut local = FastMap::default();
    for n in b.ops() {
        for_each_use(&nodes[n].op, |v| *local.entry(v).or_insert(0u32) += 1);
    }
    local
}

/// True if every variable `b` defines is used only inside `b`, so a copy
/// of `b` may define its own.
fn defines_only_locals(b: &Block, nodes: &Arena<NodeId, Node>, uses: &FastMap<VarId, u32>) -> bool {
    let local = local_uses(b, nodes);
    b.ops()
        .filter_map(|n| nodes[n].def)
        .all(|v| local.get(&v).copied().unwrap_or(0) == uses.get(&v).copied().unwrap_or(0))
}

/// A copy of `b` made of new nodes; each variable `b` defines gets a new
/// variable in the copy.
fn copy_block(
    b: &Block,
    nodes: &mut Arena<NodeId, Node>,
    vars: &mut Arena<VarId, VarData>,
) -> Block {
    let mut renamed: HashMap<VarId, VarId> = HashMap::new();
    let mut copy_node = |n: NodeId, nodes: &mut Arena<NodeId, Node>| {
        let mut node = nodes[n].clone();
        node.op = node.op.map_vars(|v| renamed.get(&v).copied().unwrap_or(v));
        if let Some(v) = node.def {
            let fresh = vars.push(vars[v].clone());
            renamed.insert(v, fresh);
            node.def = Some(fresh);
        }
        nodes.push(node)
    };
    let list = b.nodes.iter().map(|&n| copy_node(n, nodes)).collect();
    let term = match &b.term {
        Term::Goto(t) => Term::Goto(*t),
        Term::Branch(c, t, e) => Term::Branch(copy_cond(c, &mut |n| copy_node(n, nodes)), *t, *e),
        Term::Return(n) => Term::Return(copy_node(*n, nodes)),
        Term::Leave(n) => Term::Leave(*n),
    };
    Block { nodes: list, term }
}

/// `c` with each node replaced by `copy(node)`, in evaluation order.
fn copy_cond(c: &Cond, copy: &mut impl FnMut(NodeId) -> NodeId) -> Cond {
    match c {
        Cond::Node(n) => Cond::Node(copy(*n)),
        Cond::And(a, lets, b) | Cond::Or(a, lets, b) => {
            let a = Box::new(copy_cond(a, copy));
            let lets = lets.iter().map(|&n| copy(n)).collect();
            let b = Box::new(copy_cond(b, copy));
            if matches!(c, Cond::And(..)) {
                Cond::And(a, lets, b)
            } else {
                Cond::Or(a, lets, b)
            }
        }
    }
}

/// How often each variable is used in all of `blocks`.
fn use_counts(blocks: &Arena<BlockId, Block>, nodes: &Arena<NodeId, Node>) -> FastMap<VarId, u32> {
    // A map, not a table by variable: a region of a large graph counts
    // only its own.
    let mut counts = FastMap::default();
    for (_, b) in blocks.iter() {
        for n in b.ops() {
            for_each_use(&nodes[n].op, |v| *counts.entry(v).or_insert(0) += 1);
        }
    }
    counts
}

/// Points the first edge of `term` that goes to `from` at `to`.
fn retarget(term: &mut Term, from: BlockId, to: BlockId) {
    match term {
        Term::Goto(t) if *t == from => *t = to,
        Term::Branch(_, t, _) if *t == from => *t = to,
        Term::Branch(_, _, e) if *e == from => *e = to,
        _ => {}
    }
}

/// Drops blocks no longer reachable from the entry and renumbers the rest
/// in breadth-first order.
fn compact(blocks: Arena<BlockId, Block>) -> Arena<BlockId, Block> {
    let mut new_id: SecondaryMap<BlockId, Option<BlockId>> = SecondaryMap::new();
    let mut order = vec![ENTRY];
    new_id[ENTRY] = Some(ENTRY);
    let mut i = 0;
    while i < order.len() {
        for s in blocks[order[i]].succs() {
            if new_id[s].is_none() {
                new_id[s] = Some(BlockId::new(order.len()));
                order.push(s);
            }
        }
        i += 1;
    }
    // Every successor of a kept block is kept.
    let renumber = |b: BlockId| new_id[b].expect("reachable");
    let mut slots: SecondaryMap<BlockId, Option<Block>> = SecondaryMap::new();
    for (b, block) in blocks {
        slots[b] = Some(block);
    }
    order
        .iter()
        .map(|&old| {
            let mut b = slots[old].take().expect("each block once");
            b.term = match b.term {
                Term::Goto(t) => Term::Goto(renumber(t)),
                Term::Branch(c, t, e) => Term::Branch(c, renumber(t), renumber(e)),
                r @ (Term::Return(_) | Term::Leave(_)) => r,
            };
            b
        })
        .collect()
}
