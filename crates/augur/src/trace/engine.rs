//! The engine: records operations of the runs of one extraction into the
//! trace graph, answers the decision oracle, closes loops, memoizes.
//!
//! A run executes the closure once. It starts in *catch-up* mode, following
//! the graph from the entry with the decisions of its job (no tags are taken:
//! each operation is only compared with the recorded node, which is the
//! determinism check). Where the recorded path ends it switches to *record*
//! mode: each operation is tagged and becomes a node, unless
//! * its tag was seen earlier in this run with an oracle decision in between
//!   and the same operation: a loop candidate, checked in *verify* mode by
//!   following the cycle again `audit_rounds` times before the back-edge is
//!   made (a plain Rust loop leaves the cycle without a decision and is
//!   caught: its head is marked `never_close` and the attempt restarts); or
//! * another run recorded the same tag (same occurrence) with the same
//!   operation: a memoization candidate, checked in *link-check* mode by
//!   following the linked code to the end of the closure, comparing each
//!   operation, before the link is made and the run ends (`audit.rs`).
//!
//! At a new decision the run takes the `true` side and schedules a job for
//! the `false` side, so `n` sequential ifs take `n + 1` runs.
//!
//! A *check* run (`Mode::Check`, scheduled after exploration) replays its
//! decisions like catch-up, then compares with recorded code to the end of
//! the closure and never records (see `audit.rs`; batched check runs:
//! `batch.rs`). Each mode's state is its own type in `run.rs`; the
//! dispatch (`step_op`, `decide`, `finish`) takes it out of the run for the
//! mode's own step, which leaves the run in the mode that follows.

use super::config::Config;
use super::decisions::{DecisionTree, PathId};
use super::graph::{Cursor, Graph, Node, NodeId, Op, Operand, Succ};
use super::jobs::{check_choice, Job, Learned, Schedule};
use super::output::Output;
use super::run::{static_term, Mode, Run, Seen};
use super::stats::Stats;
use super::tag::{self, mix, Tag, TagCounts};
use crate::error::Error;
use crate::ir::{Arena, ExternSig, FuncId, SrcLoc, Type, VarId};
use crate::prophecy::store::Store;
use crate::prophecy::Explanation;

/// How a run ends early; carried by the unwinding payload.
#[derive(Debug, Clone)]
pub enum Ctl {
    /// The run linked to existing code or closed a loop: nothing more to do.
    EndRun,
    /// Start the attempt over (a loop candidate was a plain Rust loop).
    Restart,
    /// Stop the extraction with this error (boxed: every staging
    /// operation returns `Result<_, Ctl>`, which stays two words wide).
    Fail(Box<Error>),
}

impl Ctl {
    /// `Ctl::Fail` with `e`.
    pub fn fail(e: Error) -> Ctl {
        Ctl::Fail(Box::new(e))
    }
}

/// The recorded result of an extraction, input of structuring.
pub struct Trace {
    /// Variables, externs, parameters (body empty).
    pub func: crate::ir::Function,
    /// The graph.
    pub nodes: Arena<NodeId, Node>,
    /// First node.
    pub entry: Option<NodeId>,
    /// Counters.
    pub stats: Stats,
    /// Why each prophecy and history ended at its value.
    pub explanation: Explanation,
}

/// Everything one extraction keeps, in parts by concept: what it builds
/// (`out`, `graph`: reset by each attempt), which runs are left
/// (`schedule`), what audits learned (`learned`: kept across attempts),
/// the run in progress (`run` and the thread's link to it), the prophecy
/// cells and the counters.
pub struct Engine {
    pub(super) config: Config,
    /// The function the attempt builds: its variables and externs.
    pub(super) out: Output,
    /// The trace graph the attempt recorded, with its indexes.
    pub(super) graph: Graph,
    /// The runs left to the attempt, and the attempts so far.
    pub(super) schedule: Schedule,
    /// What loop and link audits found out (kept across attempts).
    pub(super) learned: Learned,
    /// The run in progress.
    pub(super) run: Run,
    /// Generation of handles: changes every run.
    pub(super) gen: u32,
    /// Frame address of the driver's frame during the run in progress:
    /// where tags stop walking (see `tag::driver_frame`).
    pub(super) stop_fp: usize,
    /// Set once the run has ended (a `Ctl` was thrown, or a panic is
    /// unwinding): later operations, from destructors running during the
    /// unwind, do nothing, so they neither corrupt the graph nor unwind
    /// twice (which would abort the process).
    pub(super) detached: Option<Ctl>,
    /// How tags were taken (for the counters).
    pub(super) tags: TagCounts,
    /// Prophecies and histories: kept across runs and attempts.
    pub(super) cells: Store,
    pub(super) stats: Stats,
    /// Identifies this extraction to the handles it made.
    pub(super) extraction: u64,
    /// Runs that go on as the next one (see `chain.rs`).
    pub(super) chain: super::chain::Chain,
}

impl Engine {
    /// A fresh engine for one extraction.
    pub fn new(config: Config, name: &str, params: Vec<Type>, ret: Type, gen: u32) -> Engine {
        static EXTRACTIONS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        let extraction = EXTRACTIONS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let stats = Stats {
            tagger: config.tagger,
            ..Stats::default()
        };
        let config_mode = config.prophecy_mode;
        let mut e = Engine {
            config,
            out: Output::new(name, &params, ret),
            graph: Graph::default(),
            schedule: Schedule::default(),
            learned: Learned::default(),
            run: Run::new(Job::explore(PathId::ROOT), &DecisionTree::default()),
            gen,
            stop_fp: 0,
            detached: None,
            tags: TagCounts::default(),
            cells: Store::new(config_mode),
            stats,
            extraction,
            chain: super::chain::Chain::new(),
        };
        e.start_attempt();
        e
    }

    /// Finishes the extraction.
    pub fn into_trace(mut self) -> Trace {
        self.stats.operations += self.run.ops;
        self.stats.runs_per_attempt.push(self.stats.runs);
        self.stats.attempts = self.schedule.attempts as u64;
        self.stats.prophecies = self.cells.used() as u64;
        self.stats.nodes = self.graph.nodes.len() as u64;
        self.stats.points = self.graph.points.len() as u64;
        self.stats.tags_frame_pointer = self.tags.frame_pointer;
        self.stats.tags_unwinder = self.tags.unwinder;
        Trace {
            func: self.out.func,
            nodes: self.graph.nodes,
            entry: self.graph.entry,
            stats: self.stats,
            explanation: self.cells.explanation(false),
        }
    }

    // ----- first-stage state -----

    /// Registers a `Static` with the hash of its value; returns its slot.
    pub(super) fn static_register(
        &mut self,
        hash: u64,
        at: Option<&'static std::panic::Location<'static>>,
    ) -> u32 {
        let slot = self.run.statics.len();
        self.run.statics.push((Some(hash), at));
        self.run.statics_hash ^= static_term(slot, hash);
        slot as u32
    }

    /// Records a new value hash for a `Static`.
    pub(super) fn static_update(&mut self, slot: u32, hash: u64) {
        if let Some((s, _)) = self.run.statics.get_mut(slot as usize) {
            if let Some(old) = s.replace(hash) {
                self.run.statics_hash ^= static_term(slot as usize, old);
            }
            self.run.statics_hash ^= static_term(slot as usize, hash);
        }
    }

    /// Forgets a dropped `Static`.
    pub(super) fn static_drop(&mut self, slot: u32) {
        let st = &mut self.run.statics;
        if let Some(old) = st.get_mut(slot as usize).and_then(|s| s.0.take()) {
            self.run.statics_hash ^= static_term(slot as usize, old);
        }
        while matches!(st.last(), Some((None, _))) {
            st.pop();
        }
    }

    /// The first-stage state tags see: the live `Static`s, and the counts
    /// of the closure calls running (see `frames.rs`).
    pub(super) fn statics_hash(&mut self) -> u64 {
        let h = self.run.statics_hash;
        match self.run.frames.salt() {
            0 => h,
            salt => mix(h, salt),
        }
    }

    /// Queues an annotation for the next operation.
    pub(super) fn annotate(&mut self, text: &str) {
        self.run
            .pending_annotations
            .push(crate::ir::Annotation::parse(text));
    }

    /// The id of an extern, declaring it on first use.
    pub(super) fn extern_fn(&mut self, sig: &ExternSig<'_>) -> Result<FuncId, Error> {
        if self.detached.is_some() {
            return Ok(FuncId(0));
        }
        self.out.extern_id(sig)
    }

    // ----- operations -----

    /// Performs an operation; returns the variable it defines.
    pub(super) fn op(&mut self, op: Op, loc: SrcLoc) -> Result<Option<VarId>, Ctl> {
        if self.detached.is_some() {
            let defines = matches!(op, Op::Let { .. } | Op::Decl { .. });
            return Ok(defines.then_some(VarId(u32::MAX)));
        }
        let n = self.step(op, loc)?;
        Ok(self.graph.nodes[n].def)
    }

    /// Asks the oracle about `cond`.
    pub(super) fn decide(&mut self, cond: Operand, loc: SrcLoc) -> Result<bool, Ctl> {
        if self.detached.is_some() {
            return Ok(false);
        }
        if matches!(&self.learned.watch, Some(w) if w.site == loc) {
            self.watch_visit();
        }
        let (n, d) = self.oracle(cond, loc)?;
        // What a closure decided is part of what it returns, and what a
        // `let` decided is part of what it binds (`frames.rs`), told by the
        // branch's program point and state (the same in every turn of a
        // loop whose state repeats) and the side.
        let key = self.graph.nodes[n].key;
        let ord = super::context::DECIDED.get().wrapping_add(1);
        super::context::DECIDED.set(ord);
        self.run.frames.decided(mix(key.path, key.state), d, ord);
        Ok(d)
    }

    fn oracle(&mut self, cond: Operand, loc: SrcLoc) -> Result<(NodeId, bool), Ctl> {
        self.run.oracle_calls += 1;
        let n = self.step(Op::Branch(cond), loc)?;
        let d = match self.run.mode {
            Mode::CatchUp | Mode::Check(_) => match self.run.replay_decision() {
                Some(d) => d,
                // A check run past its decisions covers the other sides.
                None => {
                    let run = &mut self.run;
                    let choice = match &run.mode {
                        Mode::Check(c) => {
                            check_choice(&c.check, &mut run.visits, &self.graph.nodes, n)
                        }
                        _ => return Err(internal("replay reached a branch past its decisions")),
                    };
                    match choice {
                        Some(d) => d,
                        None => return Err(Ctl::EndRun),
                    }
                }
            },
            Mode::Record => {
                let alt = self.schedule.tree.push(self.run.at, false);
                let mut job = Job::explore(alt);
                (job.replay, job.site) = (self.run.ops, Some(loc));
                self.schedule.pending_replay += job.replay;
                self.schedule.worklist.push(job);
                self.run.at = self.schedule.tree.push(self.run.at, true);
                true
            }
            // Verify mode follows the cycle's own decisions; no state changes.
            Mode::Verify(ref v) => return Ok((n, v.last_decision.unwrap_or(true))),
            Mode::CheckLink(ref c) => return Ok((n, c.last_decision.unwrap_or(true))),
        };
        self.run.count += 1;
        if let Some(last) = self.run.path.last_mut() {
            last.1 = Some(d);
        }
        self.run.cursor = Cursor::Side(n, d);
        Ok((n, d))
    }

    /// The closure returned `value`.
    pub(super) fn finish(&mut self, value: Option<Operand>, loc: SrcLoc) -> Result<(), Ctl> {
        let op = Op::Return(value);
        self.run.ops += 1;
        // The mode's state is taken out for its own step; each arm leaves
        // the run in the mode that follows.
        match std::mem::replace(&mut self.run.mode, Mode::CatchUp) {
            Mode::Verify(v) => Err(self.reject_loop(&v)),
            Mode::CheckLink(c) => self.check_link_return(c, &op),
            Mode::Check(c) => {
                let r = self.recorded_successor().and_then(|s| match s {
                    Some(n) if self.graph.nodes[n].op == op => Ok(()),
                    Some(_) => Err(self.check_failed(&c.check, loc)),
                    None => Ok(()),
                });
                self.run.mode = Mode::Check(c);
                r
            }
            Mode::CatchUp => {
                if let Some(n) = self.recorded_successor()? {
                    self.check_replay(n, &op, loc)?;
                    return Ok(());
                }
                if self.run.pos < self.run.prefix.len() {
                    return Err(self.nondeterministic(None, loc, "the closure returned early"));
                }
                self.record_return(op, loc)
            }
            Mode::Record => {
                self.run.mode = Mode::Record;
                self.record_return(op, loc)
            }
        }
    }

    /// Returns have no future, so equal returns are shared whatever the tag.
    fn record_return(&mut self, op: Op, loc: SrcLoc) -> Result<(), Ctl> {
        let key = (RETURN_TAG, 0);
        if let Some(n) = (self.graph).memo_find(key, |n| self.graph.nodes[n].op == op) {
            return self.link(n);
        }
        let n = self.new_node(op, loc, RETURN_TAG, RETURN_TAG, 0)?;
        self.graph.memo_insert(key, n);
        self.link(n)
    }

    #[inline(always)]
    pub(super) fn step(&mut self, op: Op, loc: SrcLoc) -> Result<NodeId, Ctl> {
        let region = match op {
            Op::Launch { .. } | Op::Parallel { .. } => Some(true),
            Op::LaunchEnd | Op::ParallelEnd => Some(false),
            _ => None,
        };
        self.run.frames.step(loc);
        let n = self.step_op(op, loc)?;
        match region {
            Some(true) => self.run.regions.push(n),
            Some(false) => drop(self.run.regions.pop()),
            None => {}
        }
        Ok(n)
    }

    fn step_op(&mut self, op: Op, loc: SrcLoc) -> Result<NodeId, Ctl> {
        // Tags are taken here, at one call depth, so that the engine's own
        // frames hash alike for every operation. Only recording takes them:
        // the other modes compare with recorded nodes (see `verify_step`).
        let mut tags = None;
        self.run.ops += 1;
        loop {
            let compared = match self.run.mode {
                Mode::CatchUp => match self.recorded_successor()? {
                    Some(n) => self.check_replay(n, &op, loc).map(|()| {
                        self.pass(n);
                        n
                    }),
                    None if self.run.pos < self.run.prefix.len() => {
                        return Err(self.nondeterministic(None, loc, "a new operation appeared"));
                    }
                    None => {
                        self.run.mode = Mode::Record;
                        continue;
                    }
                },
                Mode::Record if tags.is_none() => {
                    tags = Some(self.tag_now());
                    continue;
                }
                Mode::Record => return self.record(op, loc, tags.expect("tagged")),
                // A comparing mode's state is taken out for its own step,
                // which leaves the run in the mode that follows.
                Mode::Check(_) | Mode::CheckLink(_) | Mode::Verify(_) => {
                    match std::mem::replace(&mut self.run.mode, Mode::Record) {
                        Mode::Check(mut c) => {
                            let r = self.check_step(&mut c, &op, loc);
                            self.run.mode = Mode::Check(c);
                            r
                        }
                        // Comparing with linked code needs no call path
                        // (see `check_link_step`), which keeps long
                        // comparisons cheap.
                        Mode::CheckLink(c) => self.check_link_step(c, &op, loc),
                        Mode::Verify(v) => self.verify_step(v, &op, loc),
                        // Not a comparing mode after all: dispatch again.
                        other @ (Mode::CatchUp | Mode::Record) => {
                            self.run.mode = other;
                            continue;
                        }
                    }
                }
            };
            // A node returned is one `op` was found equal to.
            if let Ok(n) = compared {
                op.release_as(self.graph.nodes[n].owns_heap);
            }
            return compared;
        }
    }

    /// The node recorded after the cursor, if any.
    pub(super) fn recorded_successor(&self) -> Result<Option<NodeId>, Ctl> {
        Ok(match self.run.cursor {
            Cursor::Root => self.graph.entry,
            Cursor::After(p) => match self.graph.nodes[p].succ {
                Succ::Next(n) => Some(n),
                Succ::Open => None,
                Succ::Branch(..) => return Err(internal("cursor after a branch")),
            },
            Cursor::Side(p, d) => match self.graph.nodes[p].succ {
                Succ::Branch(t, e) => {
                    if d {
                        t
                    } else {
                        e
                    }
                }
                // A branch whose first side was never attached (the run
                // that recorded it ended at a rejected link audit).
                Succ::Open => None,
                Succ::Next(_) => return Err(internal("cursor on the side of a non-branch")),
            },
        })
    }

    fn check_replay(&self, n: NodeId, op: &Op, loc: SrcLoc) -> Result<(), Ctl> {
        let node = &self.graph.nodes[n];
        if node.loc != loc || node.op != *op {
            return Err(self.nondeterministic(Some(node.loc), loc, "a different operation"));
        }
        if node.annotations != self.run.pending_annotations {
            return Err(self.nondeterministic(Some(node.loc), loc, "different annotations"));
        }
        Ok(())
    }

    fn nondeterministic(&self, recorded: Option<SrcLoc>, replayed: SrcLoc, what: &str) -> Ctl {
        Ctl::fail(Error::NonDeterministic {
            message: format!("replaying the same oracle decisions produced {what}"),
            recorded,
            replayed: Some(replayed),
        })
    }

    /// Updates the run's state for passing node `n` (catch-up).
    pub(super) fn pass(&mut self, n: NodeId) {
        self.advance(n);
        // What the run has seen is indexed only if it goes on to record
        // (`sync_seen`): check runs, which only replay, never need it.
        self.run.path.push((n, None));
    }

    /// Moves past node `n`: its plain-loop salt (which cells created later
    /// are keyed by, in every mode) and the cursor.
    pub(super) fn advance(&mut self, n: NodeId) {
        let base = self.graph.nodes[n].base;
        if !self.learned.never_close.is_empty() && self.learned.never_close.contains(&base) {
            self.bump_salt(base);
        }
        self.run.pending_annotations.clear();
        self.run.cursor = Cursor::After(n);
    }

    /// Indexes the nodes passed in catch-up mode (all before the first
    /// recorded one) into `seen`, for loop detection.
    pub(super) fn sync_seen(&mut self) {
        let run = &mut self.run;
        while run.seen_upto < run.path.len() {
            let (n, d) = run.path[run.seen_upto];
            let e = run.seen.entry(self.graph.nodes[n].key).or_insert(Seen {
                path_idx: 0,
                decisions: 0,
                count: 0,
            });
            e.path_idx = run.seen_upto;
            e.decisions = run.seen_decisions;
            e.count += 1;
            run.seen_decisions += u32::from(d.is_some());
            run.seen_upto += 1;
        }
    }

    pub(super) fn bump_salt(&mut self, base: Tag) {
        let c = self.run.never_counts.entry(base).or_insert(0);
        *c += 1;
        self.run.salt = mix(self.run.salt ^ base.path, mix(base.state, *c as u64));
    }

    pub(super) fn note_seen(&mut self, n: NodeId, key: Tag) {
        self.sync_seen();
        let idx = self.run.path.len();
        let decisions = self.run.decision_count();
        let e = self.run.seen.entry(key).or_insert(Seen {
            path_idx: idx,
            decisions,
            count: 0,
        });
        e.path_idx = idx;
        e.decisions = decisions;
        e.count += 1;
        self.run.path.push((n, None));
        self.run.seen_upto = self.run.path.len();
        self.run.cursor = Cursor::After(n);
    }

    /// Tags the current program point: (base, key).
    pub(super) fn tag_now(&mut self) -> (Tag, Tag) {
        let base = Tag {
            path: tag::call_path(self.config.tagger, self.stop_fp, &mut self.tags),
            state: self.statics_hash(),
        };
        if self.learned.never_close.contains(&base) {
            self.bump_salt(base);
        }
        (base, self.op_key(base))
    }

    /// The key of an operation with tag `base`: [`Engine::salted`], and,
    /// inside a kernel's or a parallel loop's body, the node the run entered
    /// it by, so that two launches recorded apart (reached with different
    /// first-stage state) never share a body through a memo link in the
    /// middle of it: each body stays one stretch of code.
    pub(super) fn op_key(&self, base: Tag) -> Tag {
        let t = self.salted(base);
        match self.run.regions.last() {
            None => t,
            Some(n) => Tag {
                path: t.path,
                state: mix(t.state, 0x1a0c_4e55 ^ u64::from(n.0)),
            },
        }
    }

    /// `base` with the run's plain-loop salt (the key memo and loops use).
    pub(super) fn salted(&self, base: Tag) -> Tag {
        if self.run.salt == 0 {
            base
        } else {
            Tag {
                path: base.path,
                state: mix(base.state, self.run.salt),
            }
        }
    }

    /// The program point of a prophecy's creation: like an operation's key,
    /// but without counting towards plain-loop salt.
    pub(super) fn point_key(&mut self) -> Tag {
        let base = Tag {
            path: tag::call_path(self.config.tagger, self.stop_fp, &mut self.tags),
            state: self.statics_hash(),
        };
        self.salted(base)
    }
}

/// The key all return nodes share.
const RETURN_TAG: Tag = Tag {
    path: 0x5245_5455_524e,
    state: 0,
};

pub(super) fn internal(what: &str) -> Ctl {
    Ctl::fail(Error::Internal {
        message: what.to_string(),
    })
}
