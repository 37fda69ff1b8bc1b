//! Loop audits: a loop candidate's cycle is followed again, with its own
//! decisions, before the back-edge is made; a cycle that the first stage
//! leaves without a decision was a plain Rust loop.

use super::engine::{Ctl, Engine};
use super::graph::{Node, NodeId, Op, Succ};
use super::jobs::{Check, Job, Visits};
use super::run::{CheckRun, LinkCheck, Mode, Verify};
use super::tag::{FastSet, Tag};
use crate::ir::{Arena, SrcLoc};

impl Engine {
    pub(super) fn start_verify(&mut self, head_idx: usize, head: NodeId) -> NodeId {
        self.stats.loop_audits += 1;
        self.run.pure = false;
        let cycle = self.run.path[head_idx..].to_vec();
        let last_decision = cycle[0].1;
        self.run.pending_annotations.clear();
        self.run.mode = Mode::Verify(Box::new(Verify {
            cycle,
            pos: 1 % (self.run.path.len() - head_idx),
            rounds: 0,
            attach: self.run.cursor,
            head,
            last_decision,
        }));
        head
    }

    /// One operation of a loop candidate's next turn, compared with the
    /// cycle's node at the same place without a call path, as a link check
    /// compares (see `check_link_step`): operation, line, annotations and
    /// `Static` state. Turns that emit the same operations emit the same
    /// code whatever Rust code they come from; what else a call path would
    /// tell apart can only matter on other sides, which the loop's check run
    /// compares. (Taking a call path per operation of every audited turn was
    /// most of the first stage's time in DSLs with deep call stacks.)
    /// `Ok(n)` only where `op` equals node `n`'s operation (`step` relies
    /// on it to release `op`), as for `check_link_step` and `check_step`.
    pub(super) fn verify_step(
        &mut self,
        mut v: Box<Verify>,
        op: &Op,
        loc: SrcLoc,
    ) -> Result<NodeId, Ctl> {
        let (expected, decision) = v.cycle[v.pos];
        let state = self.state_at(expected);
        let same = repeats(
            &self.graph.nodes[expected],
            op,
            loc,
            state,
            &self.run.pending_annotations,
        );
        self.run.pending_annotations.clear();
        if !same {
            self.note_carried(&v, expected, op, loc);
            return Err(self.reject_loop(&v));
        }
        v.last_decision = decision;
        if v.pos == 0 {
            v.rounds += 1;
        }
        v.pos = (v.pos + 1) % v.cycle.len();
        if v.rounds >= self.config.audit_rounds {
            let (attach, head) = (v.attach, v.head);
            let turn = v.cycle.clone();
            if !self.config.allow_infinite_loops && !self.decides_anew(&turn) {
                // No decision of the turn can come out differently in a
                // later turn: as a dyn loop it would leave only in its
                // first turn or never. What repeats like that is a plain
                // Rust loop around a dyn exit (`for _ in 0..30 { if
                // x.lt(5).is_true() { return } }`): unroll it.
                let (base, loc) = (self.graph.nodes[head].base, self.graph.nodes[head].loc);
                return Err(self.mark_plain_loop(base, loc));
            }
            self.run.mode = Mode::Record;
            self.run.cursor = attach;
            self.link(head)?;
            self.stats.back_edges += 1;
            self.schedule_loop_check(head, &turn);
            return Err(Ctl::EndRun);
        }
        self.run.mode = Mode::Verify(v);
        Ok(expected)
    }

    /// A loop candidate's turn read, where the first turn read `expected`'s
    /// variables, a value the first turn computed: remember it for the
    /// loop's decision, so that a loop that never repeats for this reason
    /// stops with `Error::CarriedValue` (see `count_site`).
    fn note_carried(&mut self, v: &Verify, expected: NodeId, op: &Op, loc: SrcLoc) {
        let old = &self.graph.nodes[expected].op;
        let Some(pairs) = old.renamed_vars(op) else {
            return;
        };
        let in_turn = |n: NodeId| v.cycle.iter().any(|&(m, _)| m == n);
        let computed = pairs
            .into_iter()
            .find_map(|(_, b)| self.graph.var_def.get(&b).copied().filter(|&d| in_turn(d)));
        let decision = v.cycle.iter().find(|(_, d)| d.is_some());
        if let (Some(d), Some(&(n, _))) = (computed, decision) {
            let at = self.graph.nodes[n].loc;
            if !self.learned.carried.iter().any(|c| c.0 == at) {
                self.learned
                    .carried
                    .push((at, loc, self.graph.nodes[d].loc));
            }
        }
    }

    /// True if some decision of `turn` (one turn of a loop candidate) reads
    /// a value that can differ from turn to turn: computed from a variable
    /// the turn or any recorded operation assigns (another side of the
    /// loop's body may), from memory, or by a call. Calling a variable
    /// invariant that is assigned on a path not yet recorded only unrolls
    /// a loop that could have closed: never wrong code.
    fn decides_anew(&self, turn: &[(NodeId, Option<bool>)]) -> bool {
        use super::graph::{OpExpr, Operand};
        let mut variant: FastSet<crate::ir::VarId> = self.graph.assigned.clone();
        for &(n, _) in turn {
            if let Some(v) = self.graph.nodes[n].op.assigned_var() {
                variant.insert(v);
            }
        }
        for &(n, _) in turn {
            let node = &self.graph.nodes[n];
            let Some(def) = node.def else { continue };
            let reads_variant = || node.op.vars().iter().any(|v| variant.contains(v));
            let changes = match &node.op {
                Op::Let { expr, .. } | Op::Eval(expr) => {
                    matches!(
                        expr,
                        OpExpr::Load(_) | OpExpr::Call(..) | OpExpr::Intrinsic(..)
                    ) || reads_variant()
                }
                Op::Decl { .. } => reads_variant(),
                _ => false,
            };
            if changes {
                variant.insert(def);
            }
        }
        turn.iter().any(|&(n, _)| match &self.graph.nodes[n].op {
            Op::Branch(Operand::Var(c)) => variant.contains(c),
            _ => false,
        })
    }

    /// The loop candidate `v` was a plain Rust loop: never close at its
    /// head again, and start over so that every run salts its tags alike.
    pub(super) fn reject_loop(&mut self, v: &Verify) -> Ctl {
        let (base, loc) = (self.graph.nodes[v.head].base, self.graph.nodes[v.head].loc);
        self.mark_plain_loop(base, loc)
    }

    pub(super) fn mark_plain_loop(&mut self, base: Tag, loc: SrcLoc) -> Ctl {
        if self.learned.never_close.insert(base) && !self.learned.plain_loops.contains(&loc) {
            self.learned.plain_loops.push(loc);
        }
        self.stats.loop_restarts += 1;
        Ctl::Restart
    }

    // ----- memoization links -----

    /// Instead of linking to `target` at once, follows it to the end of the
    /// closure: a plain Rust value that differs between the two paths (`let
    /// k = if c.is_true() { 1 } else { 2 };` used later, however much later)
    /// shows up as a different operation, and the run records its own code
    /// instead. The run executes everything on the way (prophecy
    /// requirements included), so this path's requirements are never
    /// skipped by the link.
    pub(super) fn start_link_check(&mut self, target: NodeId) -> Result<NodeId, Ctl> {
        self.run.pure = false;
        let decisions = self.run.at;
        self.run.pending_annotations.clear();
        let mut c = LinkCheck {
            target,
            expected: None,
            attach: self.run.cursor,
            steps: 1,
            decisions,
            last_decision: None,
        };
        self.run.visits.clear();
        (c.expected, c.last_decision) = follow(&self.graph.nodes, &mut self.run.visits, target);
        let c = Box::new(c);
        if c.expected.is_none() {
            return self.accept_link(c).map(|()| target);
        }
        self.run.mode = Mode::CheckLink(c);
        Ok(target)
    }

    /// One operation along the linked code. It is compared with the linked
    /// node without a call path: operation, line, annotations and the
    /// `Static` state (with plain-loop salt) must agree. What a call path
    /// would add (other code that happens to emit the same operations here)
    /// can only matter on other sides, which the link's check run compares.
    pub(super) fn check_link_step(
        &mut self,
        mut c: Box<LinkCheck>,
        op: &Op,
        loc: SrcLoc,
    ) -> Result<NodeId, Ctl> {
        let Some(expected) = c.expected else {
            self.run.mode = Mode::CheckLink(c);
            return Err(super::engine::internal("link check past its end"));
        };
        let state = self.state_at(expected);
        let node = &self.graph.nodes[expected];
        let same = node.key.state == state
            && node.op == *op
            && node.loc == loc
            && node.annotations == self.run.pending_annotations;
        self.run.pending_annotations.clear();
        if !same {
            return Err(self.reject_link(&c));
        }
        let limit = self.config.link_audit_ops;
        let bound = 2 * self.graph.nodes.len() as u32 + 64;
        let (next, decision) = follow(&self.graph.nodes, &mut self.run.visits, expected);
        c.expected = next;
        c.last_decision = decision;
        c.steps += 1;
        if next.is_none() || c.steps >= limit {
            self.accept_link(c)?;
        } else if c.steps > bound {
            // The path through the linked code does not end (it keeps
            // taking a side that loops): record this path's own code.
            return Err(self.reject_link(&c));
        } else {
            self.run.mode = Mode::CheckLink(c);
        }
        Ok(expected)
    }

    /// The `Static` state (with plain-loop salt) of the operation being
    /// compared with recorded node `expected`: the state half of its key,
    /// taken without a call path.
    fn state_at(&mut self, expected: NodeId) -> u64 {
        let base = self.graph.nodes[expected].base;
        if self.learned.never_close.contains(&base) {
            self.bump_salt(base);
        }
        let state = self.statics_hash();
        self.op_key(Tag { path: 0, state }).state
    }

    /// The closure returned while link `c` was checked.
    pub(super) fn check_link_return(&mut self, c: Box<LinkCheck>, op: &Op) -> Result<(), Ctl> {
        match c.expected {
            Some(n) if self.graph.nodes[n].op == *op => self.accept_link(c),
            _ => Err(self.reject_link(&c)),
        }
    }

    /// The linked code is what this path does: make the link, end the run.
    fn accept_link(&mut self, c: Box<LinkCheck>) -> Result<(), Ctl> {
        self.run.mode = Mode::Record;
        self.run.cursor = c.attach;
        self.link(c.target)?;
        self.stats.memo_hits += 1;
        self.schedule_link_check(&c);
        Err(Ctl::EndRun)
    }

    /// The linked code is not what this path does: run the same path again
    /// without memoization up to the operation that differed.
    fn reject_link(&mut self, c: &LinkCheck) -> Ctl {
        self.run.mode = Mode::Record;
        self.stats.link_audit_failures += 1;
        self.schedule.worklist.push(Job {
            decisions: c.decisions,
            no_link_until: self.run.ops,
            check: None,
            replay: 0,
            site: None,
        });
        Ctl::EndRun
    }

    // ----- check runs -----

    /// The loop's exits and other sides were explored from its first turn
    /// only: a plain Rust value changed by the turn (`last = i * 3`, a flag
    /// set on one side, a flag each turn flips) would make a later turn or
    /// a later exit differ. One check run replays the first turn, then runs
    /// two more taking the other side of each of the turn's decisions,
    /// leaves the loop (after three turns: see `LOOP_CHECK_TURNS`), and
    /// compares everything to the end of the closure.
    fn schedule_loop_check(&mut self, head: NodeId, turn: &[(NodeId, Option<bool>)]) {
        let base = self.graph.nodes[head].base;
        let taken: std::rc::Rc<[(NodeId, bool)]> = turn
            .iter()
            .filter_map(|&(n, d)| d.map(|d| (n, d)))
            .collect();
        if taken.is_empty() {
            return;
        }
        self.schedule.checks.push(Job {
            decisions: self.run.at,
            no_link_until: 0,
            check: Some(Check::Loop(base, taken)),
            replay: 0,
            site: None,
        });
    }

    /// The link was verified along one path to the end; one check run
    /// replays this path to the link and then takes the other side at each
    /// decision of the linked code.
    fn schedule_link_check(&mut self, c: &LinkCheck) {
        let key = (
            self.graph.nodes[c.target].key,
            self.graph.nodes[c.target].occ,
        );
        self.schedule.checks.push(Job {
            decisions: c.decisions,
            no_link_until: 0,
            check: Some(Check::Link(key.0, key.1, c.attach)),
            replay: 0,
            site: None,
        });
    }

    /// One operation of a check run: compare with recorded code.
    pub(super) fn check_step(
        &mut self,
        c: &mut CheckRun,
        op: &Op,
        loc: SrcLoc,
    ) -> Result<NodeId, Ctl> {
        let Some(n) = self.recorded_successor()? else {
            // Nothing recorded here to compare with (a path still open).
            return Err(Ctl::EndRun);
        };
        if self.graph.nodes[n].op != *op || self.graph.nodes[n].loc != loc {
            return Err(self.check_failed(&c.check, loc));
        }
        // A check run never records, so it keeps no path (see `pass`).
        self.note_link_edge(&c.check);
        self.advance(n);
        let past_decisions = self.run.pos >= self.run.prefix.len();
        let bound = 2 * self.graph.nodes.len() as u64 + 64;
        if past_decisions {
            c.ops += 1;
            if c.ops > bound {
                // The path keeps going around recorded code: nothing more
                // to learn from it.
                return Err(Ctl::EndRun);
            }
        }
        Ok(n)
    }

    /// True where a check run goes around code it compared already: it
    /// jumped to member `label` past its decisions a second time since it
    /// last entered or left a machine, and its sides depend on the branch
    /// alone (`Check::sides_by_branch`). Nothing more can show then:
    /// * between the two jumps the run stayed in one call of the innermost
    ///   machine, whose frames above it wait in `resumable`, unchanged;
    /// * what a member does is a function of its key (a `Fn` body; the
    ///   state tags see, checked at every jump, is the instance's), and the
    ///   run takes the same side at every branch it meets again,
    ///
    /// so from the second jump on the run would do what it did from the
    /// first, around the same cycle of members until its bound. (A link
    /// check in a DFA took `2 × nodes` operations that way.)
    pub(super) fn check_goes_around(&mut self, label: NodeId) -> bool {
        let past_decisions = self.run.pos >= self.run.prefix.len();
        match &mut self.run.mode {
            Mode::Check(c) if past_decisions && c.check.sides_by_branch() => {
                !c.labels.insert(label)
            }
            _ => false,
        }
    }

    /// The run enters or leaves a machine: a check run's jumps before it
    /// say nothing of the code after it (see `check_goes_around`).
    pub(super) fn check_forget_labels(&mut self) {
        if let Mode::Check(c) = &mut self.run.mode {
            c.labels.clear();
        }
    }

    /// A check run saw the first stage do something else than the shared
    /// code: never share it that way again, and start over.
    pub(super) fn check_failed(&mut self, check: &Check, at: SrcLoc) -> Ctl {
        match *check {
            Check::Loop(base, ref taken) => {
                let loc = self.graph.nodes[taken[0].0].loc;
                self.mark_plain_loop(base, loc)
            }
            Check::Link(key, occ, _) => {
                self.learned.no_link.insert((key, occ));
                self.stats.link_audit_failures += 1;
                Ctl::Restart
            }
            Check::Batch(ref b) => {
                self.batch_failed(b, at);
                Ctl::EndRun
            }
        }
    }
}

/// The node after `n` along recorded code, and the decision taken there.
/// A branch takes its first recorded side on its first visit and the other
/// side (where recorded) on later ones, so the path leaves every loop it
/// enters and reaches the end of the closure.
fn follow(
    nodes: &Arena<NodeId, Node>,
    visits: &mut Visits,
    n: NodeId,
) -> (Option<NodeId>, Option<bool>) {
    match nodes[n].succ {
        Succ::Next(s) => (Some(s), None),
        Succ::Branch(t, e) => {
            let first = visits.bump(n) == 1;
            // A side not recorded yet ends the comparison there.
            match (t, e) {
                (Some(t), _) if first => (Some(t), Some(true)),
                (None, _) if first => (None, Some(true)),
                (_, e) => (e, Some(false)),
            }
        }
        Succ::Open => (None, None),
    }
}

/// True if the operation just performed is the recorded `node` again: same
/// `Static` state, operation, line and annotations.
#[inline]
fn repeats(
    node: &super::graph::Node,
    op: &Op,
    loc: SrcLoc,
    state: u64,
    notes: &[crate::ir::Annotation],
) -> bool {
    node.key.state == state && node.op == *op && node.loc == loc && node.annotations == notes
}
