//! The control-flow graph of a trace: basic blocks, reverse postorder,
//! dominators, loops.

use crate::error::Error;
use crate::ir::{Arena, VarData, VarId};
use crate::trace::graph::{map_vars, Node, NodeId, Op, OpExpr, Succ};
use std::collections::HashMap;

/// A block index (dense, in creation order).
pub type BlockId = usize;

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
}

/// A basic block: straight-line nodes and a terminator.
#[derive(Clone, Debug)]
pub struct Block {
    /// The statements (not the branch or return node that ends the block).
    pub nodes: Vec<NodeId>,
    /// How it ends.
    pub term: Term,
}

/// Blocks plus the analyses structuring needs.
pub struct Cfg {
    /// Blocks; block 0 is the entry.
    pub blocks: Vec<Block>,
    /// Reverse postorder index of each block.
    pub rpo_index: Vec<usize>,
    /// Blocks in reverse postorder.
    pub rpo: Vec<BlockId>,
    /// Immediate dominator (the entry's is itself).
    pub idom: Vec<BlockId>,
    /// Dominator-tree children, sorted by reverse postorder.
    pub dom_children: Vec<Vec<BlockId>>,
    /// Predecessors through forward (non-back) edges.
    pub forward_preds: Vec<u32>,
    /// True for blocks that are the target of a back-edge.
    pub is_header: Vec<bool>,
    /// For loop headers: the blocks of the natural loop.
    pub loop_body: Vec<Vec<bool>>,
    /// Pre/post numbers of the dominator tree for O(1) dominance queries.
    dom_pre: Vec<u32>,
    dom_post: Vec<u32>,
}

impl Cfg {
    /// Builds the CFG of the graph reachable from `entry`.
    pub fn build(nodes: &Arena<NodeId, Node>, entry: NodeId) -> Result<Cfg, Error> {
        Ok(Cfg::from_blocks(fold_short_circuits(
            make_blocks(nodes, entry)?,
            nodes,
        )))
    }

    /// The analyses of a block graph (block 0 is the entry).
    pub fn from_blocks(blocks: Vec<Block>) -> Cfg {
        let n = blocks.len();
        let rpo = reverse_postorder(&blocks);
        let mut rpo_index = vec![usize::MAX; n];
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
            dom_children: vec![Vec::new(); n],
            forward_preds: vec![0; n],
            is_header: vec![false; n],
            loop_body: vec![Vec::new(); n],
            dom_pre: vec![0; n],
            dom_post: vec![0; n],
        };
        cfg.dom_tree();
        cfg.loops(&preds);
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
        targets: &[bool],
        nodes: &mut Arena<NodeId, Node>,
        vars: &mut Arena<VarId, VarData>,
    ) -> Option<Vec<Block>> {
        let mut blocks = self.blocks.clone();
        let preds = predecessors(&blocks);
        let uses = use_counts(&blocks, nodes);
        let mut any = false;
        for (t, _) in targets.iter().enumerate().filter(|(_, &g)| g) {
            let b = &self.blocks[t];
            let small = b.nodes.len() <= 16;
            if !small || self.is_header[t] || !defines_only_locals(b, nodes, &uses) {
                continue;
            }
            for &p in preds[t].iter().skip(1) {
                let copy = blocks.len();
                blocks.push(copy_block(b, nodes, vars));
                retarget(&mut blocks[p].term, t, copy);
                any = true;
            }
        }
        any.then(|| compact(blocks))
    }

    /// Successor blocks of `b`.
    pub fn succs(&self, b: BlockId) -> Vec<BlockId> {
        match &self.blocks[b].term {
            Term::Goto(t) => vec![*t],
            Term::Branch(_, t, e) => vec![*t, *e],
            Term::Return(_) => vec![],
        }
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
            if b != 0 {
                self.dom_children[self.idom[b]].push(b);
            }
        }
        for c in &mut self.dom_children {
            c.sort_by_key(|&x| self.rpo_index[x]);
        }
        // Iterative pre/post numbering.
        let mut counter = 0u32;
        let mut stack = vec![(0usize, 0usize)];
        self.dom_pre[0] = 0;
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

    fn loops(&mut self, preds: &[Vec<BlockId>]) {
        let n = self.blocks.len();
        for b in 0..n {
            for s in self.succs(b) {
                if self.is_back_edge(b, s) {
                    self.is_header[s] = true;
                } else {
                    self.forward_preds[s] += 1;
                }
            }
        }
        for h in 0..n {
            if !self.is_header[h] {
                continue;
            }
            let mut body = vec![false; n];
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
fn make_blocks(nodes: &Arena<NodeId, Node>, entry: NodeId) -> Result<Vec<Block>, Error> {
    let mut preds = vec![0u32; nodes.len()];
    let mut branch_target = vec![false; nodes.len()];
    let mut seen = vec![false; nodes.len()];
    let mut stack = vec![entry];
    seen[entry.0 as usize] = true;
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
            preds[s.0 as usize] += 1;
            branch_target[s.0 as usize] |= is_branch;
            if !seen[s.0 as usize] {
                seen[s.0 as usize] = true;
                stack.push(s);
            }
        }
    }
    let leader = |n: NodeId| {
        let i = n.0 as usize;
        n == entry || preds[i] != 1 || branch_target[i]
    };
    let mut block_of = vec![usize::MAX; nodes.len()];
    let mut order = Vec::new();
    let mut stack = vec![entry];
    while let Some(n) = stack.pop() {
        if block_of[n.0 as usize] != usize::MAX {
            continue;
        }
        block_of[n.0 as usize] = order.len();
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
    let mut blocks = Vec::with_capacity(order.len());
    for &start in &order {
        let mut list = Vec::new();
        let mut cur = start;
        let term = loop {
            let node = &nodes[cur];
            match (&node.op, &node.succ) {
                (Op::Branch(_), Succ::Branch(Some(t), Some(e))) => {
                    break Term::Branch(
                        Cond::Node(cur),
                        block_of[t.0 as usize],
                        block_of[e.0 as usize],
                    );
                }
                (Op::Return(_), _) => {
                    break Term::Return(cur);
                }
                (_, Succ::Next(s)) => {
                    list.push(cur);
                    if leader(*s) {
                        break Term::Goto(block_of[s.0 as usize]);
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
    Ok(blocks)
}

fn successors(b: &Block) -> impl Iterator<Item = BlockId> {
    let (x, y) = match &b.term {
        Term::Goto(t) => (Some(*t), None),
        Term::Branch(_, t, e) => (Some(*t), Some(*e)),
        Term::Return(_) => (None, None),
    };
    x.into_iter().chain(y)
}

fn predecessors(blocks: &[Block]) -> Vec<Vec<BlockId>> {
    let mut preds = vec![Vec::new(); blocks.len()];
    for (b, block) in blocks.iter().enumerate() {
        for s in successors(block) {
            preds[s].push(b);
        }
    }
    preds
}

/// Reverse postorder from block 0, iteratively (then-sides first).
fn reverse_postorder(blocks: &[Block]) -> Vec<BlockId> {
    let n = blocks.len();
    let mut visited = vec![false; n];
    let mut post = Vec::with_capacity(n);
    let mut stack: Vec<(BlockId, Vec<BlockId>)> = vec![(0, successors(&blocks[0]).collect())];
    visited[0] = true;
    while let Some((b, rest)) = stack.last_mut() {
        if rest.is_empty() {
            post.push(*b);
            stack.pop();
            continue;
        }
        let s = rest.remove(0);
        if !visited[s] {
            visited[s] = true;
            stack.push((s, successors(&blocks[s]).collect()));
        }
    }
    post.reverse();
    post
}

/// Cooper, Harvey and Kennedy's iterative dominators.
fn dominators(rpo: &[BlockId], rpo_index: &[usize], preds: &[Vec<BlockId>]) -> Vec<BlockId> {
    let n = rpo_index.len();
    let undef = usize::MAX;
    let mut idom = vec![undef; n];
    idom[0] = 0;
    let intersect = |idom: &[usize], mut a: usize, mut b: usize| {
        while a != b {
            while rpo_index[a] > rpo_index[b] {
                a = idom[a];
            }
            while rpo_index[b] > rpo_index[a] {
                b = idom[b];
            }
        }
        a
    };
    let mut changed = true;
    while changed {
        changed = false;
        for &b in rpo.iter().skip(1) {
            let mut new = undef;
            for &p in &preds[b] {
                if idom[p] == undef {
                    continue;
                }
                new = if new == undef {
                    p
                } else {
                    intersect(&idom, p, new)
                };
            }
            if new != idom[b] {
                idom[b] = new;
                changed = true;
            }
        }
    }
    idom
}

/// Folds `if a { if b {X} else {Y} } else {Y}` into `if a && b {X} else {Y}`
/// (and the `||` shape) when the inner block only computes its condition:
/// Rust's `a.is_true() && b.is_true()` takes two decisions, C takes one
/// condition, and without this the join would need a `goto`.
fn fold_short_circuits(mut blocks: Vec<Block>, nodes: &Arena<NodeId, Node>) -> Vec<Block> {
    let uses = use_counts(&blocks, nodes);
    let mut preds = vec![0u32; blocks.len()];
    for b in &blocks {
        successors(b).for_each(|s| preds[s] += 1);
    }
    let mut changed = true;
    while changed {
        changed = false;
        for a in (0..blocks.len()).rev() {
            let Term::Branch(_, t, e) = blocks[a].term.clone() else {
                continue;
            };
            for (inner, and) in [(t, true), (e, false)] {
                if inner == a || preds[inner] != 1 || !condition_only(&blocks[inner], nodes, &uses)
                {
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
                let Term::Branch(ca, ..) = std::mem::replace(&mut blocks[a].term, Term::Goto(0))
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
fn condition_only(b: &Block, nodes: &Arena<NodeId, Node>, uses: &[u32]) -> bool {
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
        let pure = matches!(&node.op, Op::Let { expr, .. } if !matches!(expr, OpExpr::Call(..)));
        let Some(def) = node.def.filter(|_| pure && node.annotations.is_empty()) else {
            return false;
        };
        let all = uses.get(def.0 as usize).copied().unwrap_or(0);
        local.get(&def).copied().unwrap_or(0) == all
    })
}

/// How often each variable is read inside `b` (its nodes and terminator).
fn local_uses(b: &Block, nodes: &Arena<NodeId, Node>) -> HashMap<VarId, u32> {
    let mut local = HashMap::new();
    let mut vars = Vec::new();
    for n in block_nodes(b) {
        vars.clear();
        super::lower::uses(&nodes[n].op, &mut vars);
        for v in &vars {
            *local.entry(*v).or_insert(0u32) += 1;
        }
    }
    local
}

/// The nodes of `b` and of its terminator, in order.
fn block_nodes(b: &Block) -> Vec<NodeId> {
    let mut all = b.nodes.clone();
    match &b.term {
        Term::Branch(c, ..) => c.nodes(&mut all),
        Term::Return(n) => all.push(*n),
        Term::Goto(_) => {}
    }
    all
}

/// True if every variable `b` defines is read only inside `b`, so a copy
/// of `b` may define its own.
fn defines_only_locals(b: &Block, nodes: &Arena<NodeId, Node>, uses: &[u32]) -> bool {
    let local = local_uses(b, nodes);
    block_nodes(b)
        .iter()
        .filter_map(|&n| nodes[n].def)
        .all(|v| {
            let all = uses.get(v.0 as usize).copied().unwrap_or(0);
            local.get(&v).copied().unwrap_or(0) == all
        })
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
        node.op = map_vars(&node.op, &mut |v| renamed.get(&v).copied().unwrap_or(v));
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

fn use_counts(blocks: &[Block], nodes: &Arena<NodeId, Node>) -> Vec<u32> {
    let mut counts = Vec::new();
    let mut vars = Vec::new();
    let mut all = Vec::new();
    for b in blocks {
        all.clear();
        all.extend(&b.nodes);
        match &b.term {
            Term::Branch(c, ..) => c.nodes(&mut all),
            Term::Return(n) => all.push(*n),
            Term::Goto(_) => {}
        }
        for &n in &all {
            vars.clear();
            super::lower::uses(&nodes[n].op, &mut vars);
            for v in &vars {
                let i = v.0 as usize;
                if counts.len() <= i {
                    counts.resize(i + 1, 0);
                }
                counts[i] += 1;
            }
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

/// Drops blocks no longer reachable from block 0 and renumbers the rest.
fn compact(blocks: Vec<Block>) -> Vec<Block> {
    let mut new_id = vec![usize::MAX; blocks.len()];
    let mut order = vec![0];
    new_id[0] = 0;
    let mut i = 0;
    while i < order.len() {
        for s in successors(&blocks[order[i]]) {
            if new_id[s] == usize::MAX {
                new_id[s] = order.len();
                order.push(s);
            }
        }
        i += 1;
    }
    let mut slots: Vec<Option<Block>> = blocks.into_iter().map(Some).collect();
    order
        .iter()
        .map(|&old| {
            let mut b = slots[old].take().expect("each block once");
            b.term = match b.term {
                Term::Goto(t) => Term::Goto(new_id[t]),
                Term::Branch(c, t, e) => Term::Branch(c, new_id[t], new_id[e]),
                r @ Term::Return(_) => r,
            };
            b
        })
        .collect()
}
