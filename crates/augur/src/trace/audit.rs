//! Loop audits: a loop candidate's cycle is followed again, with its own
//! decisions, before the back-edge is made; a cycle that the first stage
//! leaves without a decision was a plain Rust loop.

use super::engine::{Ctl, Engine};
use super::graph::{NodeId, Op};
use super::run::{Mode, Verify};
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
        let node = &self.nodes[expected];
        let same = node.key == key
            && node.op == op
            && node.loc == loc
            && node.annotations == self.run.pending_annotations;
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
            self.run.mode = Mode::Record;
            self.run.cursor = attach;
            self.link(head)?;
            self.stats.back_edges += 1;
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
}
