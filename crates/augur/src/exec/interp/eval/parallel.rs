//! `omp parallel for` loops: run one iteration after another, with every
//! memory access logged by the data-race check
//! ([`races`](super::super::races)) and every assignment to a variable
//! declared outside the loop refused (each thread would write the one
//! shared variable).
//!
//! A loop nested in a checked loop's iteration runs as a plain loop: with
//! nested parallelism off (OpenMP's default) one thread runs all of it.

use super::{at, err, Flow, Frame};
use crate::exec::interp::races::{Kind, Races};
use crate::ir::{Annotation, Block, EntityId, Expr, ExprId, Reduction, Stmt, StmtKind, VarId};
use crate::{Error, Result};

/// The pragma that makes a loop parallel.
const PARALLEL_FOR: &str = "omp parallel for";

/// Clauses the check models: they change how iterations are shared among
/// threads, never which variables are shared.
const MODELLED: [&str; 4] = ["schedule", "num_threads", "proc_bind", "simd"];

/// The clauses after `omp parallel for` when `s` carries that pragma.
pub(super) fn clauses(s: &Stmt) -> Option<&str> {
    s.annotations.iter().find_map(|a| match a {
        Annotation::Pragma(p) => {
            let rest = p.trim().strip_prefix(PARALLEL_FOR)?;
            (rest.is_empty() || rest.starts_with([' ', '\t'])).then_some(rest)
        }
        Annotation::Comment(_) | Annotation::Threads | Annotation::Parallel(_) => None,
    })
}

/// True for a loop of the GPU simulation whose iterations are threads.
pub(super) fn threads(s: &Stmt) -> bool {
    s.annotations.contains(&Annotation::Threads)
}

/// Refuses a clause the check does not model (`reduction`, `private`,
/// `collapse`, ...): running the loop without it would be a guess.
pub(super) fn check_clauses(clauses: &str) -> Result<()> {
    let mut depth = 0usize;
    let mut word = String::new();
    for c in clauses.chars().chain([' ']) {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            c if depth == 0 && (c.is_alphanumeric() || c == '_') => word.push(c),
            _ if depth == 0 && !word.is_empty() => {
                if !MODELLED.contains(&word.as_str()) {
                    return err(format!(
                        "the interpreter does not model the `{word}` clause of \
                         `{PARALLEL_FOR}` (it checks {})",
                        MODELLED.join(", ")
                    ));
                }
                word.clear();
            }
            _ => {}
        }
    }
    Ok(())
}

impl<'a> Frame<'a> {
    /// Runs an `omp parallel for` loop with the data-race check.
    pub(super) fn parallel_for(
        &mut self,
        s: &Stmt,
        init: &'a Stmt,
        cond: ExprId,
        step: &'a Stmt,
        body: &'a Block,
        kind: Kind,
    ) -> Result<Flow> {
        if self.it.memory.races().is_some() {
            return self.for_loop(s, init, cond, step, body);
        }
        self.stmt(init)?;
        let var = loop_var(init, self.f);
        let mut log = Races::new(self.it.memory.last_epoch(), kind);
        loop {
            self.tick(s)?;
            if !self.cond(cond, s)? {
                break;
            }
            log.next_iteration(self.iteration_name(var, log.iterations()));
            self.it.memory.set_races(Some(log));
            let flow = self.block(body);
            log = self.it.memory.set_races(None).expect("the loop's own log");
            match flow.map_err(|e| name_loop(e, s))? {
                Flow::Next | Flow::Continue => {}
                _ => return at(err(leaves(kind)), s),
            }
            self.stmt(step)?;
        }
        self.it.memory.end_epochs(log.last_epoch());
        Ok(Flow::Next)
    }

    /// A loop of `augur::parallel_for`: `hi` read once (it is a variable
    /// the body does not assign), the iterations in order under the race
    /// check, its reductions' variables updated in place (one thread's
    /// order: what OpenMP and the JIT give, up to float rounding).
    pub(super) fn reduce_loop(
        &mut self,
        s: &Stmt,
        init: &'a Stmt,
        cond: ExprId,
        step: &'a Stmt,
        body: &'a Block,
        reductions: &[Reduction],
    ) -> Result<Flow> {
        let mark = self.reducing.len();
        self.reducing.extend(reductions.iter().map(|r| r.var));
        let flow = self.parallel_for(s, init, cond, step, body, Kind::Parallel);
        self.reducing.truncate(mark);
        flow
    }

    /// A loop whose iterations are GPU threads ([`Annotation::Threads`]):
    /// outside a checked loop, checked as one; inside one (the threads of
    /// one block, in the loop over blocks), each iteration is an iteration
    /// of the running check of its own. Several such loops in one block's
    /// iteration are its phases, between block barriers: threads of
    /// different phases of one block never run at once.
    pub(super) fn thread_loop(
        &mut self,
        s: &Stmt,
        init: &'a Stmt,
        cond: ExprId,
        step: &'a Stmt,
        body: &'a Block,
    ) -> Result<Flow> {
        if self.it.memory.races().is_none() {
            return self.parallel_for(s, init, cond, step, body, Kind::Gpu);
        }
        // The loop variable is the thread's index: the loop's own, not
        // data the threads share.
        self.unlogged(|me| me.stmt(init))?;
        let var = loop_var(init, self.f);
        let block = self
            .it
            .memory
            .races()
            .map_or(String::new(), |r| r.start_inner());
        loop {
            self.tick(s)?;
            if !self.unlogged(|me| me.cond(cond, s))? {
                if let Some(races) = self.it.memory.races() {
                    races.end_inner();
                }
                return Ok(Flow::Next);
            }
            let name = self.iteration_name(var, 0);
            let races = self.it.memory.races().expect("inside the check");
            races.next_inner_iteration(format!("{block}, {name}"));
            match self.block(body)? {
                Flow::Next | Flow::Continue => {}
                _ => return at(err(leaves(Kind::Gpu)), s),
            }
            self.unlogged(|me| me.stmt(step))?;
        }
    }

    /// Runs `f` with the data-race log set aside.
    fn unlogged<T>(&mut self, f: impl FnOnce(&mut Self) -> Result<T>) -> Result<T> {
        let log = self.it.memory.set_races(None);
        let r = f(self);
        self.it.memory.set_races(log);
        r
    }

    /// Refuses an assignment, in an iteration of a checked loop, to the
    /// register-held variable `v` declared outside the iteration.
    pub(super) fn check_shared_write(&mut self, v: VarId) -> Result<()> {
        let Some(r) = self.it.memory.races() else {
            return Ok(());
        };
        if self.decl_epoch[v.index()] == r.epoch() || self.reducing.contains(&v) {
            return Ok(());
        }
        let (region, unit) = (r.kind().region(), r.kind().unit());
        err(format!(
            "data race in {region}: {unit} {} assigns `{}`, which is declared outside \
             it and so shared by all threads",
            r.current_name(),
            self.f.var_name(v)
        ))
    }

    /// `var = value` for the iteration about to run, or its number.
    fn iteration_name(&self, var: Option<VarId>, n: usize) -> String {
        match var.map(|v| self.read_var(v)) {
            Some(Ok(x)) => format!("{} = {x}", self.f.var_name(var.expect("read"))),
            _ => format!("#{n}"),
        }
    }
}

/// The error for a `break`, `return` or `goto` out of what runs at once.
fn leaves(kind: Kind) -> String {
    match kind {
        Kind::OpenMp => format!(
            "control leaves an `{PARALLEL_FOR}` loop's body (OpenMP allows no break, \
             return or goto out of it)"
        ),
        Kind::Parallel => "control leaves a parallel loop's body".into(),
        Kind::Gpu => "control leaves a GPU thread's loop".into(),
    }
}

/// The variable a loop's initialiser declares or sets.
fn loop_var(init: &Stmt, f: &crate::ir::Function) -> Option<VarId> {
    match &init.kind {
        StmtKind::Decl { var, .. } => Some(*var),
        StmtKind::Assign { place, .. } => match f.exprs[*place].kind {
            Expr::Var(v) => Some(v),
            _ => None,
        },
        _ => None,
    }
}

/// Adds the loop's location to a race found in its body.
fn name_loop(e: Error, s: &Stmt) -> Error {
    match (e, s.loc) {
        (Error::Interp { message }, Some(loc)) if message.starts_with("data race") => {
            Error::Interp {
                message: format!("{message}; the loop is at {loc}"),
            }
        }
        (e, _) => e,
    }
}
