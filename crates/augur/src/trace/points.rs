//! The engine's side of resumable points (`augur::resumable`).
//!
//! A resumable machine is a loop over first-stage *keys*: its body runs
//! from one point to the next and returns the key it goes on at. The body
//! is a function of its key (a `Fn`, which changes nothing it captures),
//! so the code from a point on is the same however a run got there: each
//! key's code, a *member*, is recorded once, and a jump to a member
//! recorded before becomes an edge to its first node, a [`Op::Point`]
//! label. The machine's entry is an ordinary operation (recorded, replayed,
//! shared and checked like any other); it is the machine's *instance*, and
//! its members are keyed by (instance, key).
//!
//! What makes extraction linear in the program: a run never replays the
//! members before the one it explores. A decision taken in member `m` is
//! filed under `m`'s own root in the decision tree (`decisions.rs`), whose
//! parent is the path that reached the instance; a run scheduled for it
//! replays that path, and at the machine's entry jumps straight to `m`
//! (`Engine::point_enter`), whose key the engine kept.
//!
//! The exit (the body returned `None`) is a label of its own per instance:
//! the code after the machine is recorded by the first run that leaves it,
//! and later ones jump there.

use super::decisions::{PathId, Start};
use super::engine::{internal, Ctl, Engine};
use super::graph::{Cursor, NodeId, Op};
use super::run::Mode;
use super::tag::{mix, FastMap, Tag};
use crate::error::Error;
use crate::ir::SrcLoc;
use std::any::Any;
use std::rc::Rc;

/// The operand of an instance's exit label.
pub(super) const EXIT: u64 = 0x4558_4954_u64;

/// A point's operand: this bit and its key's number, so that points of
/// different keys differ even where the keys' hashes collide.
const LABEL: u64 = 1 << 63;

/// A first-stage key, kept by the engine for the runs that start at its
/// member.
pub(crate) type PointKey = Rc<dyn Any>;

/// One member: the code from one key's point on.
struct Member {
    instance: NodeId,
    key: PointKey,
    /// The key's number (see `Points::keys`).
    number: u32,
    /// Its first node (an `Op::Point`).
    label: NodeId,
    /// The root of the decision paths taken in it.
    root: PathId,
}

/// Every instance and member of the attempt (reset with the graph).
#[derive(Default)]
pub(super) struct Points {
    members: Vec<Member>,
    /// Members by (instance, key hash); equal hashes are told apart by the
    /// keys themselves.
    by_key: FastMap<(NodeId, u32), u32>,
    /// The keys each machine (by its line) has met, by hash, each with
    /// its number: equal keys (by `Eq`) get one number in every instance
    /// of the machine, so a key's code looks alike wherever it runs, and
    /// keys whose hashes collide still get their own.
    keys: FastMap<(SrcLoc, u64), Vec<(PointKey, u32)>>,
    /// Every key, by its number.
    numbered: Vec<PointKey>,
    /// Per instance: the path that first reached it, its first member, and
    /// its exit label once a run left it.
    instances: FastMap<NodeId, Instance>,
    /// The member each label begins.
    label_member: FastMap<NodeId, u32>,
}

struct Instance {
    reach: PathId,
    first: u32,
    exit: Option<NodeId>,
    /// The first-stage state tags saw at its entry: a run that jumps to a
    /// member starts it with this state, so every point must see it.
    state: u64,
}

/// The key number of member `m`.
fn m_number(points: &Points, m: u32) -> u32 {
    points.members[m as usize].number
}

/// Where a body's run goes next.
pub(crate) enum Target<'a> {
    /// The member of this key: `hash` is its state hash, `same` tells the
    /// key from others of that hash, `key` makes the engine's copy.
    Member {
        hash: u64,
        same: &'a dyn Fn(&dyn Any) -> bool,
        key: &'a dyn Fn() -> PointKey,
    },
    /// The machine returns.
    Exit,
}

/// Where a run goes on after a body returned (`Engine::point_goto`).
pub(crate) enum Goto {
    /// In the member of this key number.
    Member(u32),
    /// After the machine.
    Exit,
    /// The run is over and the next one goes on in the member of this
    /// key number, at this key (see `chain.rs`).
    Jump(u32, PointKey),
}

impl Points {
    /// The path that first reached machine `n` (`None`: not a machine).
    pub(super) fn reach(&self, n: NodeId) -> Option<PathId> {
        self.instances.get(&n).map(|i| i.reach)
    }

    /// The machine member `m` belongs to.
    pub(super) fn member_instance(&self, m: u32) -> Option<NodeId> {
        self.members.get(m as usize).map(|m| m.instance)
    }

    /// Resumable points recorded (for the counters): members and exits.
    pub(super) fn len(&self) -> usize {
        self.members.len() + self.instances.values().filter(|i| i.exit.is_some()).count()
    }
}

impl Engine {
    /// The run enters a resumable machine whose first key is `start`
    /// (its hash, the test that tells it from others, the engine's copy).
    /// Returns the member the run starts in (the key's number, which
    /// stands for it in tags) and, where a replayed run jumps to another
    /// member, that member's key.
    pub(super) fn point_enter(
        &mut self,
        start: Target<'_>,
        loc: SrcLoc,
    ) -> Result<(u32, Option<PointKey>), Ctl> {
        if self.detached.is_some() {
            return Ok((0, None));
        }
        let Target::Member { hash, same, key } = start else {
            return Err(internal("a machine entered at its exit"));
        };
        let number = self.key_number(loc, hash, same, key);
        self.check_forget_labels();
        let n = self.step(Op::Point(LABEL | u64::from(number)), loc)?;
        if !self.graph.points.instances.contains_key(&n) {
            if !matches!(self.run.mode, Mode::Record) {
                return Err(internal(
                    "a resumable machine replayed before it was recorded",
                ));
            }
            let first = self.new_member(n, number, n);
            let reach = self.run.at;
            let instance = Instance {
                reach,
                first,
                exit: None,
                state: self.statics_hash(),
            };
            self.graph.points.instances.insert(n, instance);
        }
        self.note_entry(n);
        let jump = self.run.starts.get(self.run.started).copied();
        let replaying = matches!(self.run.mode, Mode::CatchUp | Mode::Check(_));
        if let Some(s) = jump.filter(|s| replaying && s.pos == self.run.pos) {
            let (number, key) = self.jump(n, s)?;
            if self.chain.check {
                self.check_prediction()?;
            }
            return Ok((number, Some(key)));
        }
        let first = self.graph.points.instances[&n].first;
        self.run.at = self.graph.points.members[first as usize].root;
        self.run.points.push((n, first));
        Ok((number, None))
    }

    /// A replayed run at the entry of machine `n` jumps to the member of
    /// start `s`: returns its key's number and the key.
    pub(super) fn jump(&mut self, n: NodeId, s: Start) -> Result<(u32, PointKey), Ctl> {
        self.run.started += 1;
        let m = &self.graph.points.members[s.member as usize];
        if m.instance != n {
            return Err(internal("a replayed run jumped into another machine"));
        }
        let (label, key) = (m.label, m.key.clone());
        self.run.cursor = Cursor::After(label);
        // The jump is no edge of the graph: no loop may close along
        // the path before it (a fresh entry starts at the first
        // point, not here), so forget where the run has been.
        self.sync_seen();
        self.run.seen.clear();
        self.run.path.push((label, None));
        self.run.seen_upto = self.run.path.len();
        self.run.at = s.root;
        self.run.points.push((n, s.member));
        Ok((m_number(&self.graph.points, s.member), key))
    }

    /// The number of key `key` of the machine at `loc` (see
    /// `Points::keys`), given one if it is new.
    fn key_number(
        &mut self,
        loc: SrcLoc,
        hash: u64,
        same: &dyn Fn(&dyn Any) -> bool,
        key: &dyn Fn() -> PointKey,
    ) -> u32 {
        let points = &mut self.graph.points;
        let next = points.numbered.len() as u32;
        let known = points.keys.entry((loc, hash)).or_default();
        if let Some(&(_, n)) = known.iter().find(|(k, _)| same(&**k)) {
            return n;
        }
        let k = key();
        known.push((k.clone(), next));
        points.numbered.push(k);
        next
    }

    /// The body of the innermost machine returned: go on at `to`.
    /// Returns the member the run goes on in (`None`: it left).
    pub(super) fn point_goto(&mut self, to: Target<'_>, loc: SrcLoc) -> Result<Goto, Ctl> {
        if self.detached.is_some() {
            return Ok(Goto::Exit);
        }
        let Some(&(instance, _)) = self.run.points.last() else {
            return Err(internal("a resumable jump outside its machine"));
        };
        let number = match &to {
            Target::Member { hash, same, key } => Some(self.key_number(loc, *hash, *same, *key)),
            Target::Exit => None,
        };
        if self.statics_hash() != self.graph.points.instances[&instance].state {
            return Err(Ctl::fail(Error::Misuse {
                message: "the first-stage state tags see (a `Static`, a DSL's `Seen` state) \
                          changed inside a resumable body, so its point would not be a \
                          function of its key: a run that starts at the point could not \
                          recreate that state. Carry what changes in the key"
                    .into(),
                location: Some(loc),
            }));
        }
        if matches!(self.run.mode, Mode::CatchUp)
            && self.recorded_successor()?.is_none()
            && self.run.pos == self.run.prefix.len()
        {
            self.run.mode = Mode::Record;
        }
        let operand = number.map_or(EXIT, |k| LABEL | u64::from(k));
        if !matches!(self.run.mode, Mode::Record) {
            // Replaying or comparing: the key's point must come next.
            let n = self.step(Op::Point(operand), loc)?;
            if number.is_none() {
                self.check_forget_labels();
            } else if self.check_goes_around(n) {
                return Err(Ctl::EndRun);
            }
            return Ok(match self.entered(n, number.is_none())? {
                Some(k) => Goto::Member(k),
                None => Goto::Exit,
            });
        }
        let points = &self.graph.points;
        let found = match number {
            None => points.instances[&instance].exit,
            Some(k) => points
                .by_key
                .get(&(instance, k))
                .map(|&m| points.members[m as usize].label),
        };
        self.run.ops += 1;
        self.run.frames.step(loc);
        if let Some(label) = found {
            // Recorded before: jump there, and the run is done.
            if !self.config.allow_infinite_loops && self.cycles_undecided(label) {
                return Err(Ctl::fail(Error::Misuse {
                    message: "a resumable machine jumps back to a point it left without a \
                              dyn decision since, so the generated code would loop forever \
                              (as the plain loop does): end the machine on a dyn decision, \
                              or allow it with Builder::allow_infinite_loops"
                        .into(),
                    location: Some(loc),
                }));
            }
            self.link(label)?;
            self.stats.point_jumps += 1;
            if let Some((number, key)) = self.chain_next(instance)? {
                return Ok(Goto::Jump(number, key));
            }
            return Err(Ctl::EndRun);
        }
        // A label's path is its instance's own, so no operation's tag is
        // ever taken for it; its state is the run's, as every node's is
        // (a loop's audit compares it).
        let base = Tag {
            path: mix(0x0050_4f49_4e54, u64::from(instance.0)),
            state: self.statics_hash(),
        };
        let key = self.op_key(base);
        let label = self.new_node(Op::Point(operand), loc, base, key, 0)?;
        self.link(label)?;
        self.note_seen(label, key);
        match number {
            None => {
                let i = self.graph.points.instances.get_mut(&instance);
                i.expect("the instance the run is in").exit = Some(label);
                self.run.points.pop();
                Ok(Goto::Exit)
            }
            Some(k) => {
                let m = self.new_member(instance, k, label);
                self.run.at = self.graph.points.members[m as usize].root;
                *self.run.points.last_mut().expect("checked above") = (instance, m);
                Ok(Goto::Member(k))
            }
        }
    }

    /// True if the code from `label` reaches the cursor without a branch:
    /// a jump there from here would close a loop no decision leaves.
    fn cycles_undecided(&self, label: NodeId) -> bool {
        let here = match self.run.cursor {
            Cursor::After(n) => n,
            _ => return false,
        };
        let mut at = label;
        for _ in 0..self.graph.nodes.len() {
            if at == here {
                return true;
            }
            match self.graph.nodes[at].succ {
                super::graph::Succ::Next(n) => at = n,
                _ => return false,
            }
        }
        false
    }

    /// A replayed or compared jump reached label `n`. The label may be
    /// another instance's of the same machine: a loop closed from one
    /// turn's instance into the code of the turn before (equal tags: the
    /// same key and state), and the run goes on in that instance.
    fn entered(&mut self, n: NodeId, exit: bool) -> Result<Option<u32>, Ctl> {
        if exit {
            self.run.points.pop();
            return Ok(None);
        }
        let points = &self.graph.points;
        let Some(&m) = points.label_member.get(&n) else {
            return Err(internal("a resumable jump replayed to no member"));
        };
        let member = &points.members[m as usize];
        self.run.at = member.root;
        *self.run.points.last_mut().expect("in a machine") = (member.instance, m);
        Ok(Some(member.number))
    }

    /// A new member of `instance` for `key`, beginning at `label`.
    fn new_member(&mut self, instance: NodeId, number: u32, label: NodeId) -> u32 {
        let points = &mut self.graph.points;
        let id = points.members.len() as u32;
        let reach = points
            .instances
            .get(&instance)
            .map_or(self.run.at, |i| i.reach);
        let root = self.schedule.tree.push_member(reach, id);
        let points = &mut self.graph.points;
        let key = points.numbered[number as usize].clone();
        points.by_key.insert((instance, number), id);
        points.label_member.insert(label, id);
        points.members.push(Member {
            instance,
            key,
            number,
            label,
            root,
        });
        id
    }
}
