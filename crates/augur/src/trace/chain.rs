//! Chained runs: a run that ends at a resumable point goes on as the next
//! run, where that run starts in the same machine.
//!
//! A run in a resumable machine that reaches a member recorded before
//! links to it and is over (`Engine::point_goto`). The next job is most
//! often the other side of a decision the run just took, in a member of
//! the same machine: a fresh run would unwind the closure's frames,
//! execute the closure again from the top, replay the code before the
//! machine (the same operations, the same first-stage state: the
//! machine's entry is a node reached by one path) and jump to the member
//! (`Engine::point_enter`). A chained run does the same without leaving
//! the machine's frame: it takes the run state the fresh run would have
//! at its jump from a copy made when this run entered the machine, and
//! the resumable loop goes on at the member's key.
//!
//! What makes the copy the fresh run's state: the body of a machine is a
//! function of its key and changes nothing the engine sees
//! (`Engine::point_goto` checks the statics), so the frames above the
//! machine hold what a replay to its entry would give them; the copy is
//! taken only where the run reached the entry replaying or recording
//! (no loop candidate followed, no link checked: `Run::pure`), along the
//! path that first reached the machine, so the decisions before it are
//! the job's. What a replay does not do is left as a fresh run has it:
//! no decision site counted (only recording counts them), nothing seen
//! (a jump forgets it). A run chains only where the next run would start
//! anyway (the top of the worklist, an exploration, every limit checked
//! as before a run), so the order of runs, and the code, are those of
//! fresh runs: `AUGUR_CHAIN_CHECK=1` runs every extraction fresh and
//! compares each run that could have been chained with its prediction.

use super::decisions::{PathId, Start};
use super::engine::{internal, Ctl, Engine};
use super::frames::Frames;
use super::graph::NodeId;
use super::points::PointKey;
use super::run::{Mode, Run};
use super::tag::{FastMap, Tag};
use crate::error::Error;
use crate::prophecy::ProphecyMode;

/// The run state at the entry of the outermost machine, as a replay of
/// the decisions before it leaves it.
#[derive(Clone)]
pub(super) struct Entry {
    instance: NodeId,
    /// The decision path the run reached the machine by.
    at: PathId,
    count: u32,
    ops: u64,
    oracle_calls: u64,
    salt: u64,
    never_counts: FastMap<Tag, u32>,
    regions: Vec<NodeId>,
    statics: Vec<(Option<u64>, Option<&'static std::panic::Location<'static>>)>,
    statics_hash: u64,
    cell_streaks: FastMap<Tag, (u64, u32)>,
    frames: Frames,
    /// The path's length and the decisions on it.
    path_len: usize,
    path_decisions: u32,
}

/// The engine's chaining state.
#[derive(Default)]
pub(super) struct Chain {
    /// The entry of the machine the run is in (kept by chained runs).
    pub(super) entry: Option<Box<Entry>>,
    /// A limit the next run would pass, found by a run that tried to go
    /// on as it: `next_run` reports it.
    pub(super) refused: Option<Error>,
    /// Compare instead of chaining (`AUGUR_CHAIN_CHECK=1`): the job a run
    /// would have gone on as, and the state it predicted.
    pub(super) check: bool,
    pub(super) predicted: Option<(PathId, String)>,
}

impl Chain {
    pub(super) fn new() -> Chain {
        Chain {
            check: std::env::var_os("AUGUR_CHAIN_CHECK").is_some_and(|v| v != "0"),
            ..Chain::default()
        }
    }
}

impl Engine {
    /// The run entered machine `n` (its entry node stepped, no jump made
    /// yet): keep its state, if it is the outermost machine and the state
    /// is a replay's.
    pub(super) fn note_entry(&mut self, n: NodeId) {
        let run = &self.run;
        if !run.points.is_empty() {
            // A machine inside another: the outer one's entry stays.
            return;
        }
        let usable = self.config.chain_runs
            && run.pure
            && matches!(run.mode, Mode::CatchUp | Mode::Record)
            && self.graph.points.reach(n) == Some(run.at);
        if !usable {
            self.chain.entry = None;
            return;
        }
        self.chain.entry = Some(Box::new(Entry {
            instance: n,
            at: run.at,
            count: run.count,
            ops: run.ops,
            oracle_calls: run.oracle_calls,
            salt: run.salt,
            never_counts: run.never_counts.clone(),
            regions: run.regions.clone(),
            statics: run.statics.clone(),
            statics_hash: run.statics_hash,
            cell_streaks: run.cell_streaks.clone(),
            frames: run.frames.clone(),
            path_len: run.path.len(),
            // A run that only replayed and recorded took each of its
            // decisions at a branch of its path (the check compares it).
            path_decisions: run.count,
        }));
    }

    /// The run, in machine `instance`, linked to a member recorded before
    /// and is over: go on as the next run if it starts in this machine.
    /// Returns the member the next run jumps to and its key, or `None`
    /// (the run ends as usual).
    pub(super) fn chain_next(&mut self, instance: NodeId) -> Result<Option<(u32, PointKey)>, Ctl> {
        if !self.chainable(instance) {
            return Ok(None);
        }
        // Taken, not cloned (a copy of the run state per chained run); every
        // way out puts it back.
        let entry = self.chain.entry.take().expect("chainable checked it");
        let out = self.chain_with(instance, &entry);
        self.chain.entry = Some(entry);
        out
    }

    /// `chain_next` with the entry out of `self.chain`.
    fn chain_with(
        &mut self,
        instance: NodeId,
        entry: &Entry,
    ) -> Result<Option<(u32, PointKey)>, Ctl> {
        let job = self.schedule.worklist.last().expect("chainable checked it");
        let (member, _, before) = self
            .schedule
            .tree
            .first_start(job.decisions)
            .expect("checked");
        let decisions = job.decisions;
        if self.chain.check {
            let state = self.chained_state(entry, decisions, member, before);
            self.chain.predicted = Some((decisions, state));
            return Ok(None);
        }
        // What `next_run` does before a run, in its order.
        self.settle_batch();
        if self.attempt_done() {
            return Err(internal("a chained run found its attempt done"));
        }
        let job = self.schedule.worklist.pop().expect("checked");
        self.schedule.pending_replay -= job.replay;
        if let Err(e) = self.admit(&job) {
            self.chain.refused = Some(e);
            return Ok(None);
        }
        self.count_run(&job);
        self.stats.chained_runs += 1;
        self.detached = None;
        let old = std::mem::take(&mut self.run.path);
        self.run.reset(job, &self.schedule.tree);
        restore(&mut self.run, entry, old, before);
        let start = self.run.starts[0];
        self.jump(instance, start).map(Some)
    }

    /// The entry to restore, if the next run can go on from it: the run is
    /// in the outermost machine `instance`, entered as a replay; the next
    /// job (the one `next_run` would take) explores a decision in one of
    /// its members; nothing `next_run` does first would differ.
    fn chainable(&self, instance: NodeId) -> bool {
        let Some(entry) = self.chain.entry.as_ref() else {
            return false;
        };
        let Some(job) = self.schedule.worklist.last() else {
            return false;
        };
        let Some((member, parent, before)) = self.schedule.tree.first_start(job.decisions) else {
            return false;
        };
        let quiet = self.learned.watch.is_none()
            && self.config.panic_before_run != Some(self.stats.total_runs)
            && (self.config.prophecy_mode != ProphecyMode::Adaptive || self.cells.deferred() == 0)
            && !self.cells.has_pending();
        quiet
            && job.check.is_none()
            && self.run.points.len() == 1
            && entry.instance == instance
            && self.graph.points.member_instance(member) == Some(instance)
            && parent == entry.at
            && before == entry.count as usize
    }

    /// The run state a chained run would start with, for the comparison
    /// with the fresh run (`AUGUR_CHAIN_CHECK`).
    fn chained_state(
        &mut self,
        entry: &Entry,
        decisions: PathId,
        member: u32,
        before: usize,
    ) -> String {
        let job = super::jobs::Job::explore(decisions);
        let mut run = Run::new(job, &self.schedule.tree);
        let old = self.run.path[..entry.path_len.min(self.run.path.len())].to_vec();
        restore(&mut run, entry, old, before);
        let saved = std::mem::replace(&mut self.run, run);
        let start = Start {
            pos: before,
            member,
            root: self.run.starts[0].root,
        };
        let state = match self.jump(entry.instance, start) {
            Ok(_) => self.run_state(),
            Err(_) => "a jump that failed".into(),
        };
        self.run = saved;
        state
    }

    /// A fresh run jumped into a member: compare with what the run before
    /// predicted for it (`AUGUR_CHAIN_CHECK`).
    pub(super) fn check_prediction(&mut self) -> Result<(), Ctl> {
        let Some((decisions, want)) = self.chain.predicted.take() else {
            return Ok(());
        };
        if decisions != self.run.job || self.run.started != 1 {
            return Ok(());
        }
        let got = self.run_state();
        if got != want {
            return Err(internal(&format!(
                "a chained run would have started otherwise than the fresh run:\n\
                 chained: {want}\nfresh:   {got}"
            )));
        }
        Ok(())
    }

    /// What a run holds that the code after a jump may read.
    fn run_state(&self) -> String {
        let r = &self.run;
        let mut never: Vec<_> = r
            .never_counts
            .iter()
            .map(|(t, c)| (t.path, t.state, c))
            .collect();
        never.sort();
        let mut streaks: Vec<_> = r
            .cell_streaks
            .iter()
            .map(|(t, c)| (t.path, t.state, c))
            .collect();
        streaks.sort();
        let statics: Vec<Option<u64>> = r.statics.iter().map(|s| s.0).collect();
        format!(
            "job {:?} pos {} started {} starts {:?} points {:?} at {:?} count {} ops {} \
             oracle {} salt {} never {:?} regions {:?} statics {:?} hash {} streaks {:?} \
             path {} seen {} upto {} seen_decisions {} sites {} limit {} annotations {} \
             cursor {:?} no_link {} mode {} prefix {:?} frames {:?}",
            r.job,
            r.pos,
            r.started,
            r.starts,
            r.points,
            r.at,
            r.count,
            r.ops,
            r.oracle_calls,
            r.salt,
            never,
            r.regions,
            statics,
            r.statics_hash,
            streaks,
            r.path.len(),
            r.seen.len(),
            r.seen_upto,
            r.seen_decisions,
            r.site_visits.len(),
            r.statics_at_limit.is_some(),
            r.pending_annotations.len(),
            r.cursor,
            r.no_link_until,
            matches!(r.mode, Mode::CatchUp),
            r.prefix,
            without_ords(&format!("{:?}", r.frames.settled_copy())),
        )
    }
}

/// Puts `entry`'s state into `run` (reset for the next job), as the
/// replay of its `before` decisions would leave it just before its jump;
/// `path` is the run's path, of which the entry's part stays.
fn restore(run: &mut Run, entry: &Entry, mut path: Vec<(NodeId, Option<bool>)>, before: usize) {
    path.truncate(entry.path_len);
    run.path = path;
    run.pos = before;
    run.at = entry.at;
    run.count = entry.count;
    run.ops = entry.ops;
    run.oracle_calls = entry.oracle_calls;
    run.salt = entry.salt;
    run.never_counts.clone_from(&entry.never_counts);
    run.regions.clone_from(&entry.regions);
    run.statics.clone_from(&entry.statics);
    run.statics_hash = entry.statics_hash;
    run.cell_streaks.clone_from(&entry.cell_streaks);
    run.frames.clone_from(&entry.frames);
    // The jump indexes the path into `seen` and then forgets it: only the
    // count of decisions on it stays.
    run.seen_upto = entry.path_len;
    run.seen_decisions = entry.path_decisions;
    if run.frames.holding() {
        super::context::HOLDING.set(true);
    }
}

/// `frames` (a `Debug` text, coverage computed: a run that recorded the
/// code before the machine computed it there, a replay need not have)
/// without the decision counts its sides were
/// taken at: a chained run's restored sides keep those of the execution
/// that made them, which the marks held in the frames above the machine
/// were read from too; a fresh run's are its own. Only their order counts.
fn without_ords(frames: &str) -> String {
    let mut out = String::with_capacity(frames.len());
    let mut rest = frames;
    while let Some(i) = rest.find("ord: ") {
        out.push_str(&rest[..i + 5]);
        rest = rest[i + 5..].trim_start_matches(|c: char| c.is_ascii_digit());
        out.push('_');
    }
    out.push_str(rest);
    out
}
