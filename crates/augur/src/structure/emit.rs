//! Emits structured statements from a reducible CFG, walking the dominator
//! tree (after Ramsey, "Beyond Relooper", adapted to C's loops):
//!
//! * a block's code is followed by its dominator-tree children that are
//!   *merge* blocks (two or more forward predecessors), innermost first: they
//!   are the code after an `if`;
//! * a loop header opens `while (true) { ... }`; the loop's *follow* (its
//!   nearest exit target) is emitted after it;
//! * a jump to the innermost `if`'s merge falls through, to the innermost
//!   loop's header is `continue`, to its follow is `break`, to a block with
//!   one forward predecessor emits that block in place;
//! * anything else (a labelled Rust `break 'outer`, irreducible flow) becomes
//!   a `goto`, counted in the stats; code from structured Rust needs none.

use super::cfg::{BlockId, BlockSet, Cfg, Term, ENTRY};
use super::lower;
use crate::ir::{Arena, SecondaryMap};
use crate::ir::{Block, Const, Expr, Function, LabelId, Scalar, Stmt, StmtKind, Type};
use crate::trace::graph::{Node, NodeId, Op};
use std::collections::HashMap;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Ctx {
    IfFollow(BlockId),
    Loop {
        header: BlockId,
        follow: Option<BlockId>,
    },
}

pub struct Emitter<'a> {
    cfg: &'a Cfg,
    nodes: &'a Arena<NodeId, Node>,
    func: &'a mut Function,
    emitted: BlockSet,
    follow: SecondaryMap<BlockId, Option<BlockId>>,
    goto_targets: BlockSet,
    /// Blocks whose copying would remove a `goto` (targets and the joins
    /// a jump had to cross).
    split_candidates: BlockSet,
    pub gotos: u64,
}

impl<'a> Emitter<'a> {
    pub fn new(cfg: &'a Cfg, nodes: &'a Arena<NodeId, Node>, func: &'a mut Function) -> Self {
        let mut e = Emitter {
            cfg,
            nodes,
            func,
            emitted: BlockSet::new(),
            follow: SecondaryMap::new(),
            goto_targets: BlockSet::new(),
            split_candidates: BlockSet::new(),
            gotos: 0,
        };
        for h in cfg.blocks.keys() {
            if cfg.is_header[h] {
                e.follow[h] = e.loop_follow(h);
            }
        }
        e
    }

    /// Emits the whole function body; returns it, its `goto` count, the
    /// blocks gotos jump to, and the joins that C could not reach between
    /// a jump and its target (copying them may remove the jump).
    pub fn run(mut self) -> (Block, u64, BlockSet, BlockSet) {
        let mut ctx = Vec::new();
        let mut body = self.emit_block(ENTRY, &mut ctx);
        // Blocks reached only by `goto` (never in structured code).
        for b in self.cfg.blocks.keys() {
            if !self.emitted[b] {
                body.extend(self.emit_block(b, &mut ctx));
            }
        }
        // Labels of no block (a launch's end) are `launches`' to remove.
        let blocks = &self.cfg.blocks;
        let keep = |l: LabelId| {
            let b = block_of(l);
            blocks.get(b).is_none() || self.goto_targets[b]
        };
        strip_labels(&mut body, &keep);
        (body, self.gotos, self.goto_targets, self.split_candidates)
    }

    /// The exit target a loop's `break` goes to: the nearest (in reverse
    /// postorder) exit that does not only lead to a `return`.
    fn loop_follow(&self, h: BlockId) -> Option<BlockId> {
        let body = &self.cfg.loop_body[h];
        let mut exits: Vec<BlockId> = Vec::new();
        // How many blocks of the body leave it for each block outside.
        let mut edges: HashMap<BlockId, usize> = HashMap::new();
        for b in self.cfg.blocks.keys() {
            if body[b] {
                let mut succs: Vec<BlockId> = self.cfg.succs(b).collect();
                succs.dedup();
                for s in succs {
                    if !body[s] {
                        let n = edges.entry(s).or_insert(0);
                        if *n == 0 {
                            exits.push(s);
                        }
                        *n += 1;
                    }
                }
            }
        }
        // An exit block with one predecessor that just continues elsewhere
        // is the code of a `break` (`if c { x = 1; break }`): the loop's
        // follow is where it continues, so several such breaks share it.
        let through = |e: BlockId| match self.cfg.blocks[e].term {
            Term::Goto(s)
                if self.cfg.forward_preds[e] == 1 && !self.cfg.is_header[e] && !body[s] =>
            {
                s
            }
            _ => e,
        };
        let mapped: Vec<BlockId> = exits.iter().map(|&e| through(e)).collect();
        let shared = |t: BlockId| mapped.iter().filter(|&&m| m == t).count() >= 2;
        if mapped.iter().any(|&t| shared(t)) {
            exits = mapped;
            exits.sort();
            exits.dedup();
        }
        // Prefer an exit inside the enclosing loops, then one that rejoins
        // other code (a join, even one that
        // then returns: the code after an enclosing `if`, which a `break`
        // reaches by falling out of the `if`) over one with a single way in
        // (emitted in place where the loop leaves for it), then the one
        // most edges leave the loop for (the `break` target), then the
        // nearest.
        let single = |x: BlockId| self.cfg.forward_preds[x] <= 1;
        // An exit that also leaves an enclosing loop cannot be a `break`.
        let parents: Vec<BlockId> = (self.cfg.blocks.keys())
            .filter(|&p| p != h && self.cfg.is_header[p] && self.cfg.loop_body[p][h])
            .collect();
        let leaves_parent = |x: BlockId| parents.iter().any(|&p| !self.cfg.loop_body[p][x]);
        // A returning tail reached by one edge is emitted in place, and a
        // short one is copied to each edge (`copy_return_tail`): neither
        // needs to be the follow.
        let private_return =
            |x: BlockId| self.returns_only(x) && (single(x) || self.copyable_return(x));
        let edges_in = |x: BlockId| edges.get(&x).copied().unwrap_or(0);
        // Each key once: they walk the graph.
        exits.sort_by_cached_key(|&b| {
            (
                leaves_parent(b),
                private_return(b),
                single(b),
                std::cmp::Reverse(edges_in(b)),
                self.cfg.rpo_index[b],
            )
        });
        exits.first().copied()
    }

    /// True if everything reachable from `b` is dominated by `b` and has no
    /// loop: the code ends in `return` without rejoining anything.
    fn returns_only(&self, b: BlockId) -> bool {
        let mut stack = vec![b];
        let mut seen = BlockSet::new();
        while let Some(x) = stack.pop() {
            if seen[x] {
                continue;
            }
            seen[x] = true;
            if !self.cfg.dominates(b, x) || self.cfg.is_header[x] {
                return false;
            }
            stack.extend(self.cfg.succs(x));
        }
        true
    }

    /// Emits `b` and whatever follows it in sequence. Code that follows in
    /// sequence (the merge after an `if`, the follow of a loop) is emitted
    /// by this loop, not by recursion, so long programs do not use deep
    /// stacks: recursion depth is the nesting depth of the code.
    fn emit_block(&mut self, b: BlockId, ctx: &mut Vec<Ctx>) -> Block {
        let mut out = Vec::new();
        let mut next = Some(b);
        while let Some(b) = next {
            let (code, cont) = self.emit_one(b, ctx);
            out.extend(code);
            next = cont;
        }
        out
    }

    /// Emits one block (opening its loop if it is a header); returns the
    /// block that follows in sequence, if any.
    fn emit_one(&mut self, b: BlockId, ctx: &mut Vec<Ctx>) -> (Block, Option<BlockId>) {
        if self.emitted[b] {
            return (self.goto(b), None);
        }
        let opening = self.cfg.is_header[b]
            && !matches!(ctx.last(), Some(Ctx::Loop { header, .. }) if *header == b);
        if !opening {
            return self.emit_node(b, ctx);
        }
        let follow = self.follow[b];
        ctx.push(Ctx::Loop { header: b, follow });
        let body = self.emit_block_seq(b, ctx);
        ctx.pop();
        let t = self.const_true();
        let mut out = vec![Stmt::new(StmtKind::While { cond: t, body })];
        // Merge children of the header outside the loop that are not its follow.
        let outside: Vec<BlockId> = self.cfg.dom_children[b]
            .iter()
            .copied()
            .filter(|&c| {
                self.cfg.forward_preds[c] >= 2 && !self.cfg.loop_body[b][c] && Some(c) != follow
            })
            .collect();
        let Some(f) = follow else {
            return (out, None);
        };
        if outside.is_empty() {
            let (code, cont) = self.tail_jump(f, ctx, true);
            out.extend(code);
            return (out, cont);
        }
        // The outside blocks come right after the follow's code, so a jump
        // from inside it to anything further out must not fall through.
        for &c in outside.iter().rev() {
            ctx.push(Ctx::IfFollow(c));
        }
        // (Blocks already emitted stay in the context only to be crossed.)
        out.extend(self.jump(f, ctx, true));
        for c in outside {
            ctx.pop();
            if !self.emitted[c] {
                out.extend(self.emit_block(c, ctx));
            }
        }
        (out, None)
    }

    /// The header's own code inside its loop, then what follows it there.
    fn emit_block_seq(&mut self, b: BlockId, ctx: &mut Vec<Ctx>) -> Block {
        let (mut out, mut next) = self.emit_node(b, ctx);
        while let Some(n) = next {
            let (code, cont) = self.emit_one(n, ctx);
            out.extend(code);
            next = cont;
        }
        out
    }

    fn const_true(&mut self) -> crate::ir::ExprId {
        self.func
            .expr(Expr::Const(Const::Bool(true)), Type::Scalar(Scalar::Bool))
    }

    /// The block's own code, then its merge children; the last merge child
    /// is returned as the continuation.
    fn emit_node(&mut self, b: BlockId, ctx: &mut Vec<Ctx>) -> (Block, Option<BlockId>) {
        self.emitted[b] = true;
        // The label, the nodes and a terminator (an `if` or a jump).
        let mut out = Vec::with_capacity(self.cfg.blocks[b].nodes.len() + 2);
        out.push(Stmt::new(StmtKind::Label(label(b))));
        for &n in &self.cfg.blocks[b].nodes {
            out.push(lower::stmt(self.func, &self.nodes[n]));
        }
        let in_loop = |c: BlockId| !self.cfg.is_header[b] || self.cfg.loop_body[b][c];
        let merges: Vec<BlockId> = self.cfg.dom_children[b]
            .iter()
            .copied()
            .filter(|&c| self.cfg.forward_preds[c] >= 2 && in_loop(c))
            .filter(|&c| !(self.cfg.is_header[b] && Some(c) == self.follow[b]))
            .collect();
        match self.cfg.blocks[b].term.clone() {
            Term::Return(n) => out.push(lower::stmt(self.func, &self.nodes[n])),
            Term::Leave(n) => out.push(Stmt::new(StmtKind::Goto(super::regions::leave_label(n)))),
            Term::Goto(t) => {
                let (code, cont) = self.tail_jump(t, ctx, false);
                out.extend(code);
                return (out, cont);
            }
            Term::Branch(c, t, e) => {
                for &m in merges.iter().rev() {
                    ctx.push(Ctx::IfFollow(m));
                }
                let cond = lower::cond(self.func, self.nodes, &c);
                let n = c.first();
                let guard = if merges.is_empty() {
                    self.guard(t, e, ctx)
                } else {
                    None
                };
                let (then_, else_, cont) = match guard {
                    Some((then_, else_, cont)) => (then_, else_, Some(cont)),
                    None => (self.jump(t, ctx, false), self.jump(e, ctx, false), None),
                };
                let mut s = Stmt::new(StmtKind::If { cond, then_, else_ });
                s.annotations = self.nodes[n].annotations.clone();
                s.loc = Some(self.nodes[n].loc);
                out.push(s);
                if cont.is_some() {
                    return (out, cont);
                }
                for (i, &m) in merges.iter().enumerate() {
                    ctx.pop();
                    if self.emitted[m] {
                        continue;
                    }
                    if i + 1 == merges.len() {
                        return (out, Some(m));
                    }
                    out.extend(self.emit_block(m, ctx));
                }
            }
        }
        (out, None)
    }

    /// A branch with no join where one side only jumps away (`break`,
    /// `continue`, a copied `return`) and the other is emitted in place: the
    /// jump becomes a guard `if` with that side alone, and the other side
    /// the continuation, emitted in sequence after it. A dyn loop's turns
    /// (a state machine's copies of the body, each guarded by the loop's
    /// condition) then come out flat instead of nesting one `if` per turn,
    /// which every later pass would walk level by level.
    fn guard(
        &mut self,
        t: BlockId,
        e: BlockId,
        ctx: &mut Vec<Ctx>,
    ) -> Option<(Block, Block, BlockId)> {
        let (t_here, e_here) = (
            self.inline_target(t, ctx, false),
            self.inline_target(e, ctx, false),
        );
        let (away, cont) = match (t_here, e_here) {
            (true, false) => (e, t),
            (false, true) => (t, e),
            _ => return None,
        };
        if !self.structured_jump(away, ctx) {
            return None;
        }
        let jump = self.jump(away, ctx, false);
        Some(if cont == t {
            (Vec::new(), jump, cont)
        } else {
            (jump, Vec::new(), cont)
        })
    }

    /// True if [`jump`](Emitter::jump) to `target` (not emitted in place)
    /// gives a `break`, a `continue` or a copied `return`: neither a fall
    /// through to an enclosing join nor a `goto` (which node splitting and
    /// forward breaks remove better from the nested form). Mirrors `jump`'s
    /// walk of the context, without its effects.
    fn structured_jump(&self, target: BlockId, ctx: &[Ctx]) -> bool {
        let mut crossed = false;
        let mut crossed_loop = false;
        for c in ctx.iter().rev() {
            match *c {
                Ctx::IfFollow(m) if m == target => {
                    let falls_through = !(crossed || self.emitted[target]);
                    return !falls_through && self.copyable_return(target);
                }
                Ctx::IfFollow(_) => crossed = true,
                Ctx::Loop { header, follow } if header == target || follow == Some(target) => {
                    return !crossed_loop || self.copyable_return(target);
                }
                Ctx::Loop { .. } => {
                    crossed = true;
                    crossed_loop = true;
                }
            }
        }
        self.copyable_return(target)
    }

    /// [`jump`](Emitter::jump) at the end of a sequence: a block emitted in
    /// place is returned as the continuation instead.
    fn tail_jump(
        &mut self,
        target: BlockId,
        ctx: &mut Vec<Ctx>,
        after_loop: bool,
    ) -> (Block, Option<BlockId>) {
        if self.inline_target(target, ctx, after_loop) {
            return (Vec::new(), Some(target));
        }
        (self.jump(target, ctx, after_loop), None)
    }

    /// True when a jump to `target` emits it in place (no context names it).
    fn inline_target(&self, target: BlockId, ctx: &[Ctx], after_loop: bool) -> bool {
        let named = ctx.iter().any(|c| match *c {
            Ctx::IfFollow(m) => m == target,
            Ctx::Loop { header, follow } => header == target || follow == Some(target),
        });
        let single = self.cfg.forward_preds[target] <= 1;
        !named && !self.emitted[target] && (single || after_loop)
    }

    /// Control transfer to `target` at the end of the current code.
    fn jump(&mut self, target: BlockId, ctx: &mut Vec<Ctx>, after_loop: bool) -> Block {
        let mut crossed_if = false;
        let mut crossed_loop = false;
        for c in ctx.iter().rev() {
            match *c {
                Ctx::IfFollow(m) => {
                    if m == target {
                        // Falling through reaches the join only if it is
                        // still to be emitted there (not copied in place
                        // earlier, as a loop's follow can be).
                        if !(crossed_if || crossed_loop || self.emitted[target]) {
                            return Vec::new();
                        }
                        // The joins in between are what C cannot skip:
                        // copying them into each branch removes the jump.
                        for c in ctx.iter().rev() {
                            match *c {
                                Ctx::IfFollow(x) if x == target => break,
                                Ctx::IfFollow(x) => self.split_candidates[x] = true,
                                Ctx::Loop { .. } => {}
                            }
                        }
                        return self.goto(target);
                    }
                    crossed_if = true;
                }
                Ctx::Loop { header, follow } => {
                    let kind = if header == target {
                        Some(StmtKind::Continue)
                    } else if follow == Some(target) {
                        Some(StmtKind::Break)
                    } else {
                        None
                    };
                    if let Some(k) = kind {
                        return if crossed_loop {
                            self.goto(target)
                        } else {
                            vec![Stmt::new(k)]
                        };
                    }
                    crossed_loop = true;
                }
            }
        }
        let single = self.cfg.forward_preds[target] <= 1;
        if !self.emitted[target] && (single || after_loop) {
            return self.emit_block(target, ctx);
        }
        self.goto(target)
    }

    /// A short tail that only returns and declares nothing (`return x;`)
    /// can be emitted again where C has no structured jump to it (out of
    /// two loops at once).
    fn copy_return_tail(&mut self, target: BlockId) -> Option<Block> {
        if !self.copyable_return(target) {
            return None;
        }
        // Its statements, then the return.
        let ops = self.cfg.blocks[target].ops();
        Some(
            ops.map(|n| lower::stmt(self.func, &self.nodes[n]))
                .collect(),
        )
    }

    /// True for a short block that only returns and declares nothing.
    fn copyable_return(&self, b: BlockId) -> bool {
        let block = &self.cfg.blocks[b];
        matches!(block.term, Term::Return(_))
            && block.nodes.len() <= 8
            && block.nodes.iter().all(|&n| {
                // A launch's or parallel loop's end is one place: folding happens at it.
                let op = &self.nodes[n].op;
                self.nodes[n].def.is_none()
                    && !matches!(
                        op,
                        Op::Launch { .. } | Op::LaunchEnd | Op::Parallel { .. } | Op::ParallelEnd
                    )
            })
    }

    /// A jump C cannot express structurally: copy a returning tail, else `goto`.
    fn goto(&mut self, target: BlockId) -> Block {
        if let Some(copy) = self.copy_return_tail(target) {
            return copy;
        }
        self.gotos += 1;
        self.goto_targets[target] = true;
        vec![Stmt::new(StmtKind::Goto(label(target)))]
    }
}

/// The label of a block's code: the block's number.
fn label(b: BlockId) -> LabelId {
    LabelId(b.0)
}

/// The block whose label `l` is (past the last block for a label of none).
fn block_of(l: LabelId) -> BlockId {
    BlockId(l.0)
}

/// Removes the labels `keep` refuses.
fn strip_labels(b: &mut Block, keep: &impl Fn(LabelId) -> bool) {
    b.retain(|s| match s.kind {
        StmtKind::Label(l) => keep(l),
        _ => true,
    });
    for s in b.iter_mut() {
        s.kind
            .blocks_mut()
            .for_each(|inner| strip_labels(inner, keep));
    }
}
