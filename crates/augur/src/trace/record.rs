//! Recording: how an operation in record mode becomes a node, a loop
//! candidate, a memoization link, or a sign of a plain Rust loop; and the
//! node and variable arenas it fills.

use super::engine::{internal, Ctl, Engine};
use super::graph::{Cursor, Node, NodeId, Op, Succ};
use super::tag::Tag;
use crate::error::Error;
use crate::ir::{SrcLoc, Type, VarData, VarId, VarKind};

impl Engine {
    pub(super) fn record(
        &mut self,
        op: Op,
        loc: SrcLoc,
        (base, key): (Tag, Tag),
    ) -> Result<NodeId, Ctl> {
        if matches!(op, Op::Branch(_)) {
            self.count_site(loc)?;
        }
        self.sync_seen();
        let seen = self.run.seen.get(&key).copied();
        if let Some(s) = seen {
            let closable = self.config.close_loops && !self.learned.never_close.contains(&base);
            if closable && s.decisions < self.run.decision_count() && self.sees(loc)? {
                let h = self.run.path[s.path_idx].0;
                if self.same_op(h, &op, loc) {
                    return Ok(self.start_verify(s.path_idx, h));
                }
                // The same operation on other variables declared at other
                // program points (a `Static` changed in an enclosing dyn
                // loop's first turn, peeling it, and the turn after declared
                // them anew): another program point that tags cannot tell
                // apart; record it as a new occurrence.
                // Anything else that differs is hidden first-stage state (a
                // plain Rust loop counter): salt every later tag with this
                // point's occurrences, so iterations stay apart on every path.
                if !self.peeled_turn(h, &op) {
                    return Err(self.mark_plain_loop(base, self.graph.nodes[h].loc));
                }
            }
        }
        let occ = seen.map_or(0, |s| s.count);
        let linkable =
            self.run.ops >= self.run.no_link_until && !self.learned.no_link.contains(&(key, occ));
        if self.config.memoize && linkable {
            let found = (self.graph).memo_find((key, occ), |n| self.same_op(n, &op, loc));
            let found = match found {
                Some(n) if self.sees(loc)? => Some(n),
                _ => None,
            };
            if let Some(n) = found {
                if self.config.link_audit_ops == 0 {
                    self.stats.memo_hits += 1;
                    self.link(n)?;
                    return Err(Ctl::EndRun);
                }
                return self.start_link_check(n);
            }
        }
        let n = self.new_node(op, loc, base, key, occ)?;
        self.link(n)?;
        if self.shareable(loc) {
            self.graph.memo_insert((key, occ), n);
        }
        self.note_seen(n, key);
        Ok(n)
    }

    /// True if other runs may link to the code recorded at an operation of
    /// `loc`. Where the plain state is out of view (see [`Engine::sees`]),
    /// a run that arrives at the same tag may differ in it: the arriving
    /// run may see all of its own state, and yet not the recording one's
    /// (a local a `let` holds borrowed, or changed while of a type the
    /// attribute cannot hash, is the recording run's alone).
    fn shareable(&mut self, loc: SrcLoc) -> bool {
        if self.config.trust_unannotated {
            return true;
        }
        let Some(hidden) = self.run.frames.hidden_at(loc) else {
            return true;
        };
        self.learned.hidden.get_or_insert((loc, hidden));
        false
    }

    /// True if code may be shared at an operation of `loc`: every live
    /// frame is covered by `#[augur::staged]` (see `frames.rs`), or the
    /// builder trusts observation. Where not, the first such point is kept
    /// for the error a loop that never closes then stops with.
    fn sees(&mut self, loc: SrcLoc) -> Result<bool, Ctl> {
        if self.config.trust_unannotated {
            return Ok(true);
        }
        let Some(hidden) = self.run.frames.hidden_at(loc) else {
            return Ok(true);
        };
        self.stats.unshared += 1;
        // The first point where the state was out of view names the fix.
        let (at, hidden) = *self.learned.hidden.get_or_insert((loc, hidden));
        if self.stats.unshared > self.config.max_unshared {
            // Unshared code is exact, but doubles with every dyn `if` a
            // path passes: stop early, naming the fix, rather than at the
            // work limit tens of seconds later.
            return Err(Ctl::fail(Error::Unannotated {
                location: loc,
                at,
                fix: hidden.fix(),
                reached: None,
            }));
        }
        Ok(false)
    }

    /// `e`, or, where the engine shared no code at some points because the
    /// plain state there is out of view and `e` is a limit the unrolled
    /// code then reached, `Error::Unannotated` naming the fix (the limit is
    /// a symptom; the missing annotation is the cause).
    pub(super) fn blame_unshared(&self, e: Error) -> Error {
        let Some((at, hidden)) = self.learned.hidden else {
            return e;
        };
        let location = match &e {
            Error::Limit { location, .. } => location.unwrap_or(at),
            Error::LoopNeverCloses { location, .. } => *location,
            Error::CarriedValue { loop_at, .. } => *loop_at,
            _ => return e,
        };
        Error::Unannotated {
            location,
            at,
            fix: hidden.fix(),
            reached: Some(e.to_string()),
        }
    }

    /// True if `op` is node `n`'s operation on other variables that come
    /// from a peeled turn: each traces back (through operations that again
    /// differ only in variables) to the same code run with other `Static`
    /// state than the variable it replaces. A plain Rust loop declares its
    /// variables anew at the same point (its repeats trace back to two
    /// identical operations), and a plain walk over different statements
    /// computes them in other code: neither is taken for peeling.
    pub(super) fn peeled_turn(&self, n: NodeId, op: &Op) -> bool {
        self.peeled_ops(&self.graph.nodes[n].op, op, PEEL_DEPTH)
    }

    fn peeled_ops(&self, old: &Op, new: &Op, depth: u32) -> bool {
        let Some(pairs) = old.renamed_vars(new) else {
            return false;
        };
        !pairs.is_empty()
            && pairs
                .into_iter()
                .all(|(a, b)| self.peeled_vars(a, b, depth))
    }

    fn peeled_vars(&self, a: VarId, b: VarId, depth: u32) -> bool {
        let (Some(&da), Some(&db)) = (self.graph.var_def.get(&a), self.graph.var_def.get(&b))
        else {
            return false;
        };
        let (na, nb) = (&self.graph.nodes[da], &self.graph.nodes[db]);
        if na.key.path != nb.key.path {
            // Declared by other code: a plain Rust walk over different
            // statements (an interpreter's loop), not a peeled turn.
            return false;
        }
        if na.key.state != nb.key.state {
            return true;
        }
        depth > 0 && self.peeled_ops(&na.op, &nb.op, depth - 1)
    }

    pub(super) fn same_op(&self, n: NodeId, op: &Op, loc: SrcLoc) -> bool {
        let node = &self.graph.nodes[n];
        node.op == *op && node.loc == loc && node.annotations == self.run.pending_annotations
    }

    pub(super) fn count_site(&mut self, loc: SrcLoc) -> Result<(), Ctl> {
        let c = self.run.site_visits.entry(loc).or_insert(0);
        *c += 1;
        let visits = *c;
        if visits == self.config.max_site_visits {
            // The last visit allowed: what changes by the next one is
            // what keeps the loop from closing.
            let hashes = self.run.statics.iter().map(|s| s.0).collect();
            self.run.statics_at_limit = Some((loc, hashes));
        }
        if visits > self.config.max_site_visits {
            if let Some(&(loop_at, used, computed)) =
                self.learned.carried.iter().find(|c| c.0 == loc)
            {
                return Err(Ctl::fail(Error::CarriedValue {
                    loop_at,
                    used,
                    computed,
                    runs: self.stats.total_runs,
                }));
            }
            if let Some((at, hidden)) = self.learned.hidden {
                return Err(Ctl::fail(Error::Unannotated {
                    location: loc,
                    at,
                    fix: hidden.fix(),
                    reached: None,
                }));
            }
            return Err(Ctl::fail(Error::LoopNeverCloses {
                location: loc,
                iterations: visits,
                plain_loops: self.learned.plain_loops.clone(),
                changing: self.changed_since_limit(loc),
            }));
        }
        Ok(())
    }

    /// A visit of the watched decision: the state that differs from the
    /// last visit's (in this run or an earlier one) is what keeps its runs
    /// apart.
    pub(super) fn watch_visit(&mut self) {
        let now: Vec<Option<u64>> = self.run.statics.iter().map(|s| s.0).collect();
        let Some(w) = self.learned.watch.as_mut() else {
            return;
        };
        if let Some(last) = &w.last {
            let slots = 0..last.len().min(now.len());
            changed_sites(&self.run.statics, last, slots, &mut w.changing);
        }
        w.last = Some(now);
    }

    /// Where the first-stage state made that changed since `loc`'s last
    /// allowed visit (a `Static`, a tracked local), in order of slot.
    fn changed_since_limit(&self, loc: SrcLoc) -> Vec<SrcLoc> {
        let Some((at, before)) = &self.run.statics_at_limit else {
            return Vec::new();
        };
        if *at != loc {
            return Vec::new();
        }
        let mut out = Vec::new();
        let slots = 0..self.run.statics.len().max(before.len());
        changed_sites(&self.run.statics, before, slots, &mut out);
        out
    }

    pub(super) fn new_node(
        &mut self,
        op: Op,
        loc: SrcLoc,
        base: Tag,
        key: Tag,
        occ: u32,
    ) -> Result<NodeId, Ctl> {
        if self.graph.nodes.len() >= self.config.max_nodes {
            return Err(Ctl::fail(Error::Limit {
                what: format!(
                    "{} recorded operations (a first-stage loop that never ends?){}",
                    self.config.max_nodes,
                    crate::error::plain_loop_hint(&self.learned.plain_loops)
                ),
                location: Some(loc),
            }));
        }
        self.check_memory(Some(loc)).map_err(Ctl::fail)?;
        let def = match &op {
            Op::Let { ty, .. } => Some(self.new_var(*ty, VarKind::Temp, None, loc)),
            Op::Decl { ty, hint, .. } => Some(self.new_var(*ty, VarKind::Local, hint.clone(), loc)),
            _ => None,
        };
        let annotations = std::mem::take(&mut self.run.pending_annotations);
        let id = NodeId(self.graph.nodes.len() as u32);
        if let Some(v) = def {
            self.graph.var_def.insert(v, id);
        }
        if let Some(v) = op.assigned_var() {
            self.graph.assigned.insert(v);
        }
        Ok(self.graph.nodes.push(Node {
            owns_heap: op.owns_heap(),
            op,
            def,
            annotations,
            loc,
            base,
            key,
            occ,
            succ: Succ::Open,
        }))
    }

    pub(super) fn new_var(
        &mut self,
        ty: Type,
        kind: VarKind,
        hint: Option<String>,
        loc: SrcLoc,
    ) -> VarId {
        self.out.func.vars.push(VarData {
            ty,
            kind,
            hint,
            name: None,
            addr_taken: false,
            loc: Some(loc),
        })
    }

    /// Attaches `n` at the cursor.
    pub(super) fn link(&mut self, n: NodeId) -> Result<(), Ctl> {
        match self.run.cursor {
            Cursor::Root => {
                if self.graph.entry.is_some() {
                    return Err(internal("entry recorded twice"));
                }
                self.graph.entry = Some(n);
            }
            Cursor::After(p) => {
                if !matches!(self.graph.nodes[p].succ, Succ::Open) {
                    return Err(internal("successor recorded twice"));
                }
                self.graph.nodes[p].succ = Succ::Next(n);
            }
            Cursor::Side(p, d) => {
                let succ = &mut self.graph.nodes[p].succ;
                let (mut t, mut e) = match *succ {
                    Succ::Branch(t, e) => (t, e),
                    Succ::Open => (None, None),
                    Succ::Next(_) => return Err(internal("branch node with a plain successor")),
                };
                let slot = if d { &mut t } else { &mut e };
                if slot.is_some() {
                    return Err(internal("branch side recorded twice"));
                }
                *slot = Some(n);
                *succ = Succ::Branch(t, e);
            }
        }
        Ok(())
    }
}

/// How far `peeled_turn` traces variables back through their definitions.
const PEEL_DEPTH: u32 = 16;

/// Adds to `out` (once each) where the live statics' slots among `slots`
/// whose hash differs from `before`'s were made.
fn changed_sites(
    statics: &[(Option<u64>, Option<&'static std::panic::Location<'static>>)],
    before: &[Option<u64>],
    slots: std::ops::Range<usize>,
    out: &mut Vec<SrcLoc>,
) {
    for slot in slots {
        let now = statics.get(slot);
        if before.get(slot).copied().flatten() == now.and_then(|s| s.0) {
            continue;
        }
        if let Some(s) = now.and_then(|s| s.1).map(SrcLoc::from_location) {
            if !out.contains(&s) {
                out.push(s);
            }
        }
    }
}
