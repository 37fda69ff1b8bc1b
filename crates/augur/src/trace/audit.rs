//! Loop audits: a loop candidate's cycle is followed again, with its own
//! decisions, before the back-edge is made; a cycle that the first stage
//! leaves without a decision was a plain Rust loop.

use super::engine::{Ctl, Engine};
use super::graph::Succ;
use super::graph::{NodeId, Op};
use super::run::{Check, Job, LinkCheck, Mode, Verify};
use super::tag::Tag;
use crate::ir::SrcLoc;

impl Engine {
    pub(super) fn start_verify(&mut self, head_idx: usize, head: NodeId) -> NodeId {
        self.stats.loop_audits += 1;
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

    pub(super) fn verify_step(
        &mut self,
        op: Op,
        loc: SrcLoc,
        (_, key): (Tag, Tag),
    ) -> Result<NodeId, Ctl> {
        let Mode::Verify(v) = &mut self.run.mode else {
            unreachable!("verify_step outside verify mode")
        };
        let (expected, decision) = v.cycle[v.pos];
        let same = repeats(
            &self.nodes[expected],
            &op,
            loc,
            key,
            &self.run.pending_annotations,
        );
        self.run.pending_annotations.clear();
        if !same {
            return self.reject_loop().map(|_| expected);
        }
        v.last_decision = decision;
        if v.pos == 0 {
            v.rounds += 1;
        }
        v.pos = (v.pos + 1) % v.cycle.len();
        if v.rounds >= self.config.audit_rounds {
            let (attach, head) = (v.attach, v.head);
            let turn: Vec<Option<bool>> = v.cycle.iter().map(|c| c.1).collect();
            self.run.mode = Mode::Record;
            self.run.cursor = attach;
            self.link(head)?;
            self.stats.back_edges += 1;
            self.schedule_loop_checks(head, &turn);
            return Err(Ctl::EndRun);
        }
        Ok(expected)
    }

    /// The loop candidate was a plain Rust loop: never close at its head
    /// again, and start over so that every run salts its tags alike.
    pub(super) fn reject_loop(&mut self) -> Result<(), Ctl> {
        let Mode::Verify(v) = &self.run.mode else {
            return Ok(());
        };
        let base = self.nodes[v.head].base;
        Err(self.mark_plain_loop(base))
    }

    pub(super) fn mark_plain_loop(&mut self, base: Tag) -> Ctl {
        self.never_close.insert(base);
        self.stats.loop_restarts += 1;
        Ctl::Restart
    }

    // ----- memoization links -----

    /// Instead of linking to `target` at once, follows it for a while: a
    /// plain Rust value that differs between the two paths (`let k = if
    /// c.is_true() { 1 } else { 2 };` used later) shows up as a different
    /// operation, and the run records its own code instead.
    pub(super) fn start_link_check(&mut self, target: NodeId) -> Result<NodeId, Ctl> {
        let decisions = self.run.decisions.clone();
        self.run.pending_annotations.clear();
        let (expected, last_decision) = self.follow(target);
        self.run.mode = Mode::CheckLink(Box::new(LinkCheck {
            target,
            expected,
            attach: self.run.cursor,
            steps: 1,
            decisions,
            last_decision,
            taken: last_decision.into_iter().collect(),
        }));
        if expected.is_none() {
            self.accept_link()?;
        }
        Ok(target)
    }

    /// The node after `n` along recorded code, and the decision taken there.
    fn follow(&self, n: NodeId) -> (Option<NodeId>, Option<bool>) {
        match self.nodes[n].succ {
            Succ::Next(s) => (Some(s), None),
            Succ::Branch(Some(t), _) => (Some(t), Some(true)),
            Succ::Branch(None, Some(e)) => (Some(e), Some(false)),
            _ => (None, None),
        }
    }

    pub(super) fn check_link_step(
        &mut self,
        op: Op,
        loc: SrcLoc,
        (_, key): (Tag, Tag),
    ) -> Result<NodeId, Ctl> {
        let Mode::CheckLink(c) = &self.run.mode else {
            unreachable!("check_link_step outside link-check mode")
        };
        let Some(expected) = c.expected else {
            return Err(super::engine::internal("link check past its end"));
        };
        let same = repeats(
            &self.nodes[expected],
            &op,
            loc,
            key,
            &self.run.pending_annotations,
        );
        self.run.pending_annotations.clear();
        if !same {
            return Err(self.reject_link());
        }
        let (next, decision) = self.follow(expected);
        let Mode::CheckLink(c) = &mut self.run.mode else {
            unreachable!("still in link-check mode")
        };
        c.expected = next;
        c.last_decision = decision;
        c.taken.extend(decision);
        c.steps += 1;
        if next.is_none() || c.steps >= self.config.link_audit_ops {
            self.accept_link()?;
        }
        Ok(expected)
    }

    /// The closure returned while a link was checked.
    pub(super) fn check_link_return(&mut self, op: &Op) -> Result<(), Ctl> {
        let Mode::CheckLink(c) = &self.run.mode else {
            return Ok(());
        };
        match c.expected {
            Some(n) if self.nodes[n].op == *op => self.accept_link(),
            _ => Err(self.reject_link()),
        }
    }

    fn accept_link(&mut self) -> Result<(), Ctl> {
        let Mode::CheckLink(c) = std::mem::replace(&mut self.run.mode, Mode::Record) else {
            return Ok(());
        };
        self.run.cursor = c.attach;
        self.link(c.target)?;
        self.stats.memo_hits += 1;
        self.schedule_link_checks(&c);
        Err(Ctl::EndRun)
    }

    /// The linked code is not what this path does: run the same path again
    /// without memoization up to the operation that differed.
    fn reject_link(&mut self) -> Ctl {
        let Mode::CheckLink(c) = std::mem::replace(&mut self.run.mode, Mode::Record) else {
            return Ctl::EndRun;
        };
        self.stats.link_audit_failures += 1;
        self.worklist.push(Job {
            decisions: c.decisions,
            no_link_until: self.run.ops,
            check: None,
        });
        Ctl::EndRun
    }

    // ----- check runs -----

    /// The loop's exits and other sides were explored from its first turn
    /// only: a plain Rust value changed by the turn (`last = i * 3`, a flag
    /// set on one side) would make a later turn's exit differ. Replay the
    /// second turn taking each other side once.
    fn schedule_loop_checks(&mut self, head: NodeId, turn: &[Option<bool>]) {
        let base = self.nodes[head].base;
        let mut prefix = self.run.decisions.clone();
        for d in turn.iter().flatten() {
            let mut alt = prefix.clone();
            alt.push(!d);
            self.checks.push(Job {
                decisions: alt,
                no_link_until: 0,
                check: Some(Check::Loop(base)),
            });
            prefix.push(*d);
        }
    }

    /// A link audit followed one path through the linked code; the other
    /// sides of its decisions are replayed by check runs.
    fn schedule_link_checks(&mut self, c: &LinkCheck) {
        let key = (self.nodes[c.target].key, self.nodes[c.target].occ);
        let mut prefix = c.decisions.clone();
        for d in &c.taken {
            let mut alt = prefix.clone();
            alt.push(!d);
            self.checks.push(Job {
                decisions: alt,
                no_link_until: 0,
                check: Some(Check::Link(key.0, key.1)),
            });
            prefix.push(*d);
        }
    }

    /// One operation of a check run: compare with recorded code.
    pub(super) fn check_step(&mut self, op: Op, loc: SrcLoc) -> Result<NodeId, Ctl> {
        let Some(n) = self.recorded_successor()? else {
            // Nothing recorded here to compare with (a path still open).
            return Err(Ctl::EndRun);
        };
        if self.nodes[n].op != op || self.nodes[n].loc != loc {
            return Err(self.check_failed());
        }
        self.pass(n);
        if self.run.pos >= self.run.prefix.len() {
            self.run.check_budget = self.run.check_budget.saturating_sub(1);
            if self.run.check_budget == 0 {
                return Err(Ctl::EndRun);
            }
        }
        Ok(n)
    }

    /// A check run saw the first stage do something else than the shared
    /// code: never share it that way again, and start over.
    pub(super) fn check_failed(&mut self) -> Ctl {
        match self.run.check {
            Some(Check::Loop(base)) => self.mark_plain_loop(base),
            Some(Check::Link(key, occ)) => {
                self.no_link.insert((key, occ));
                self.stats.link_audit_failures += 1;
                Ctl::Restart
            }
            None => super::engine::internal("a check failed outside a check run"),
        }
    }
}

/// True if the operation just performed is the recorded `node` again: same
/// program point, operation, line and annotations.
fn repeats(node: &super::graph::Node, op: &Op, loc: SrcLoc, key: Tag, notes: &[String]) -> bool {
    node.key == key && node.op == *op && node.loc == loc && node.annotations == notes
}
