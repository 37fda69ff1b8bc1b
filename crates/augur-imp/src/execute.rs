//! Prophecy variable analysis by repeated execution: Algorithms Execute,
//! Solve and Driver of §3.5, generic over the [`Analysis`].
//!
//! `β_l` starts empty for every label and the constraint set `C` empty;
//! both persist across re-executions. Execute visits configurations; on
//! entering one it checks the precondition `S1 ⊆ β_l`. A violation joins
//! `S1` into `β_l`, calls Solve to restore every constraint in `C`, and
//! returns a [`Misprediction`] (the paper's throw). Otherwise, for each
//! transition `l → l'`, it records `β_l' ⊆ β_l ∪ S2` in `C` and continues
//! at `l'`. [`Reexecution::driver`] re-executes until an execution
//! completes without a misprediction.
//!
//! **Termination.** Each execution visits every configuration at most once
//! (a visited set; the closing edge of a loop is still recorded in `C`),
//! so it is finite for the [`Abstract`] explorer, whose configurations are
//! labels; the [`Concrete`] explorer also stops after `fuel`
//! configurations. Every misprediction strictly grows some `β_l` within
//! the finite set of items the analysis mentions, so the Driver stops; in
//! fact each label can mispredict at most once (its whole `S1` is joined),
//! so there are at most `1 + |labels|` executions.
//!
//! **A gap in the algorithm as written.** Line 14 of Execute adds
//! `β_l' ⊆ β_l ∪ S2` to `C` without checking it, and Solve only runs
//! after a precondition violation. If `β_l'` already grew before the edge
//! `l → l'` is first met, the new constraint is violated and nothing
//! repairs it: `β_l` misses items and the extended semantics gets stuck on
//! that edge. The simplest `while` loop does it: the back edge `goto head`
//! is met only after the loop head's reads were mispredicted and joined,
//! and so is the second branch of an `if` that joins the first. By default
//! ([`Options::check_new_constraints`]) a newly recorded constraint is
//! checked and, if violated, repaired in place by joining `β_l' − S2` into
//! `β_l` and calling Solve on `l`. No re-execution is needed for that:
//! preconditions already checked stay satisfied because `β` only grows.
//! Turning the option off gives the algorithm exactly as written.
//!
//! **Other readings.** The Driver's single `try … catch Execute()` is
//! read as a loop ("repeatedly reexecutes", says the text); `Execute()`
//! without an argument starts at `⟨first(P), σ0⟩`. Solve's pattern
//! `β_l ⊆ β_l' ∪ S2` reuses the names of line 14 the other way round: its
//! `l` is the label that grew (the constrained successor) and its `l'` the
//! predecessor to update. Execute's recursion runs on an explicit stack in
//! the same depth-first order (so long executions cannot overflow the
//! thread stack); Solve's recursion becomes a worklist, which reaches the
//! same least fixpoint in any order.

use std::collections::btree_map::Entry;
use std::collections::{BTreeMap, BTreeSet};

use crate::analysis::Analysis;
use crate::ast::{Label, Program};
use crate::semantics::{self, Config, Step};

/// How Execute enumerates the transitions `⟨l, σ⟩ → ⟨l', σ'⟩`.
pub trait Explorer {
    /// A configuration; visited configurations are remembered per execution.
    type Config: Clone + Ord;

    /// The initial configuration, `None` for an empty program.
    fn start(&self, p: &Program) -> Option<Self::Config>;

    /// The label (command index) of a configuration.
    fn label(&self, c: &Self::Config) -> usize;

    /// Every transition from `c`.
    fn transitions(&self, p: &Program, c: &Self::Config) -> Vec<Self::Config>;

    /// At most this many configurations per execution.
    fn limit(&self) -> usize {
        usize::MAX
    }
}

/// Abstract execution: configurations are labels and every control-flow
/// edge is a transition, as if each condition could go either way. The
/// analyses here only look at labels, so this covers every path a concrete
/// execution with any inputs could take.
#[derive(Clone, Copy, Debug, Default)]
pub struct Abstract;

impl Explorer for Abstract {
    type Config = usize;

    fn start(&self, p: &Program) -> Option<usize> {
        p.first()
    }

    fn label(&self, c: &usize) -> usize {
        *c
    }

    fn transitions(&self, p: &Program, c: &usize) -> Vec<usize> {
        p.successors(*c)
    }
}

/// Concrete execution under the standard semantics from `⟨first(P), ∅⟩`:
/// one transition per configuration. The result covers only the path this
/// execution takes (what a staged interpreter sees in one run).
#[derive(Clone, Copy, Debug)]
pub struct Concrete {
    /// Configurations visited per execution at most.
    pub fuel: usize,
}

impl Explorer for Concrete {
    type Config = Config;

    fn start(&self, p: &Program) -> Option<Config> {
        Config::initial(p)
    }

    fn label(&self, c: &Config) -> usize {
        c.at
    }

    fn transitions(&self, p: &Program, c: &Config) -> Vec<Config> {
        match semantics::step(p, c) {
            Step::Next(n) => vec![n],
            Step::Done | Step::Stuck(_) => Vec::new(),
        }
    }

    fn limit(&self) -> usize {
        self.fuel
    }
}

/// Variants of the algorithm.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// Check each newly recorded prediction constraint and repair it if it
    /// is already violated (see the module documentation). `false` runs
    /// the algorithm exactly as written, which can miss items.
    pub check_new_constraints: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            check_new_constraints: true,
        }
    }
}

/// A violated prophecy variable precondition: the paper's
/// ProphecyVariableMisprediction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Misprediction<T> {
    /// The index of the label whose precondition failed.
    pub at: usize,
    /// Its label.
    pub label: Label,
    /// The items of `S1` that `β_l` lacked.
    pub missing: BTreeSet<T>,
}

/// What the Driver returns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Prophecy<T> {
    /// `β_l` for every label (index); empty for labels never reached.
    pub beta: Vec<BTreeSet<T>>,
    /// Executions run, the last one without a misprediction.
    pub executions: usize,
    /// The misprediction that ended each execution but the last.
    pub mispredictions: Vec<Misprediction<T>>,
    /// Newly recorded constraints found violated and repaired.
    pub repairs: usize,
    /// `|C|` at the end.
    pub constraints: usize,
}

/// The state of the algorithm: `β`, `C` and the program being analysed.
pub struct Reexecution<'a, A: Analysis, X: Explorer> {
    p: &'a Program,
    a: &'a A,
    x: X,
    opts: Options,
    beta: Vec<BTreeSet<A::Item>>,
    /// `C`, indexed by the constrained label: `into[l']` holds `(l, S2)`
    /// for each `β_l' ⊆ β_l ∪ S2`, which is what Solve looks up.
    into: Vec<Vec<(usize, BTreeSet<A::Item>)>>,
    /// The edges met so far, with their `S2` (a function of the edge).
    edges: BTreeMap<(usize, usize), BTreeSet<A::Item>>,
    /// `S1` per label, once asked for.
    pre: Vec<Option<BTreeSet<A::Item>>>,
    repairs: usize,
}

impl<'a, A: Analysis, X: Explorer> Reexecution<'a, A, X> {
    /// Lines 1–2: `β_l ← ∅` for every label, `C ← ∅`.
    pub fn new(p: &'a Program, a: &'a A, x: X, opts: Options) -> Self {
        Reexecution {
            p,
            a,
            x,
            opts,
            beta: vec![BTreeSet::new(); p.cmds.len()],
            into: vec![Vec::new(); p.cmds.len()],
            edges: BTreeMap::new(),
            pre: vec![None; p.cmds.len()],
            repairs: 0,
        }
    }

    /// The current `β`.
    pub fn beta(&self) -> &[BTreeSet<A::Item>] {
        &self.beta
    }

    /// Algorithm Driver: re-executes until no misprediction.
    pub fn driver(mut self) -> Prophecy<A::Item> {
        let mut mispredictions = Vec::new();
        while let Err(m) = self.execute() {
            mispredictions.push(m);
        }
        Prophecy {
            executions: mispredictions.len() + 1,
            mispredictions,
            beta: self.beta,
            repairs: self.repairs,
            constraints: self.edges.len(),
        }
    }

    /// Algorithm Execute from the initial configuration: one execution,
    /// depth first, each configuration once.
    pub fn execute(&mut self) -> Result<(), Misprediction<A::Item>> {
        let Some(start) = self.x.start(self.p) else {
            return Ok(());
        };
        let mut visited = BTreeSet::from([start.clone()]);
        self.check(&start)?;
        let mut stack = vec![self.frame(&start)];
        while let Some((succs, l)) = stack.last_mut() {
            let Some(next) = succs.pop() else {
                stack.pop();
                continue;
            };
            let l = *l;
            self.record(l, self.x.label(&next));
            if visited.len() >= self.x.limit() || !visited.insert(next.clone()) {
                continue;
            }
            self.check(&next)?;
            stack.push(self.frame(&next));
        }
        Ok(())
    }

    /// A pending call `Execute(c)`: its label and the transitions still to
    /// follow, reversed so that popping takes them in order (next first).
    fn frame(&self, c: &X::Config) -> (Vec<X::Config>, usize) {
        let mut t = self.x.transitions(self.p, c);
        t.reverse();
        (t, self.x.label(c))
    }

    /// Lines 6–12: the precondition `S1 ⊆ β_l` on entering `c`.
    fn check(&mut self, c: &X::Config) -> Result<(), Misprediction<A::Item>> {
        let l = self.x.label(c);
        // `S1` is a function of the label: ask the analysis once.
        let s1 = self.pre[l].get_or_insert_with(|| self.a.precondition(self.p, l));
        if s1.is_subset(&self.beta[l]) {
            return Ok(());
        }
        let missing: BTreeSet<_> = s1.difference(&self.beta[l]).cloned().collect();
        self.beta[l].extend(missing.iter().cloned());
        self.solve(l);
        Err(Misprediction {
            at: l,
            label: self.p.cmds[l].label.clone(),
            missing,
        })
    }

    /// Line 14: `C ← C ∪ {β_l' ⊆ β_l ∪ S2}` for the transition `l → l'`,
    /// then (unless running as written) repair it if already violated.
    fn record(&mut self, l: usize, l2: usize) {
        let s2 = match self.edges.entry((l, l2)) {
            Entry::Occupied(e) => e.into_mut(),
            Entry::Vacant(e) => {
                let s2 = self.a.prediction(self.p, l, l2);
                self.into[l2].push((l, s2.clone()));
                e.insert(s2)
            }
        };
        if !self.opts.check_new_constraints {
            return;
        }
        let (from, to) = (&self.beta[l], &self.beta[l2]);
        let add: Vec<_> = to
            .iter()
            .filter(|i| !s2.contains(*i) && !from.contains(*i))
            .cloned()
            .collect();
        if !add.is_empty() {
            self.repairs += 1;
            self.beta[l].extend(add);
            self.solve(l);
        }
    }

    /// Algorithm Solve: `β_l` grew, so restore every `β_l ⊆ β_l' ∪ S2` in
    /// `C` (here `l'` precedes `l`) by `β_l' ← β_l' ∪ (β_l − S2)`,
    /// transitively.
    pub fn solve(&mut self, l: usize) {
        let mut work = vec![l];
        while let Some(l) = work.pop() {
            for (l2, s2) in &self.into[l] {
                let add: Vec<_> = self.beta[l]
                    .difference(s2)
                    .filter(|i| !self.beta[*l2].contains(i))
                    .cloned()
                    .collect();
                if !add.is_empty() {
                    self.beta[*l2].extend(add);
                    work.push(*l2);
                }
            }
        }
    }
}

/// The Driver with abstract execution and the default options.
pub fn driver<A: Analysis>(p: &Program, a: &A) -> Prophecy<A::Item> {
    Reexecution::new(p, a, Abstract, Options::default()).driver()
}
