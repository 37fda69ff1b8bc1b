//! The extended semantics `⟨l, σ, π⟩ ⇒ ⟨l', σ', π'⟩` of §3.4, run with an
//! analysis result `β` as the prophecy: `π = β_l` in every configuration,
//! which is the relation `⟨l, σ⟩ ~ ⟨l, σ, β_l⟩` of the Progress property.
//!
//! Each transition must satisfy the standard rule, the prophecy variable
//! precondition and the prediction `π' ⊆ π ∪ S2` with `π' = β_l'`. A `β`
//! that mispredicts makes the execution stuck at the first configuration
//! where one of these fails; [`run_live`] reports, for live variables, the
//! label and the variable read that was not predicted live.
//!
//! Standard stuckness (an unset variable, a missing target) is reported
//! first, as [`ExtStuck::Standard`]: it is no misprediction. `done` has
//! no rule, but its precondition is checked on arrival, as a final
//! condition, because a must-analysis in complement form (very busy
//! expressions) states "the path ended here" there; for live variables it
//! is empty.

use std::collections::BTreeSet;

use crate::analysis::{Analysis, LiveVariables};
use crate::ast::{Cmd, Label, Program, Var};
use crate::semantics::{self, eval_bexpr_with, eval_expr_with, Config, Reason, Step, Stuck};

/// Why an extended configuration has no transition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExtStuck<T> {
    /// The standard semantics is stuck here too.
    Standard(Stuck),
    /// Live variables: `l` reads `var`, but `var ∉ π` (`{v} ⊆ π` fails).
    NotLive {
        /// The reading label.
        label: Label,
        /// The first variable read that was not predicted live.
        var: Var,
    },
    /// The precondition `S1 ⊆ π` fails at `label`.
    Precondition {
        /// The label.
        label: Label,
        /// `S1 − π`.
        missing: BTreeSet<T>,
    },
    /// The prediction `π' ⊆ π ∪ S2` fails on `label → to`.
    Prediction {
        /// The label transitioned from.
        label: Label,
        /// The label transitioned to.
        to: Label,
        /// `π' − (π ∪ S2)`.
        extra: BTreeSet<T>,
    },
}

/// How an extended execution ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExtEnd<T> {
    /// It reached `done`.
    Complete,
    /// It is stuck.
    Stuck(ExtStuck<T>),
    /// Still running when the fuel was spent.
    OutOfFuel,
}

/// The result of an extended execution.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExtOutcome<T> {
    /// How it ended.
    pub end: ExtEnd<T>,
    /// Transitions taken.
    pub steps: usize,
}

/// Runs `p` under the extended semantics of `a` with `π = β_l` for at most
/// `fuel` transitions; the precondition is checked per rule, `S1(l) ⊆ β_l`.
pub fn run<A: Analysis>(
    p: &Program,
    a: &A,
    beta: &[BTreeSet<A::Item>],
    fuel: usize,
) -> ExtOutcome<A::Item> {
    let pre = |c: &Config| {
        let missing: BTreeSet<_> = a
            .precondition(p, c.at)
            .difference(&beta[c.at])
            .cloned()
            .collect();
        match missing.is_empty() {
            true => Ok(()),
            false => Err(ExtStuck::Precondition {
                label: p.cmds[c.at].label.clone(),
                missing,
            }),
        }
    };
    drive(p, a, beta, fuel, pre)
}

/// Runs `p` under the live-variable extended semantics with `π = β_l`:
/// every variable read must be in `π` (checked read by read, so the first
/// unpredicted one is reported), and `l : v := e` may predict `π' ⊆ π ∪ {v}`.
pub fn run_live(p: &Program, beta: &[BTreeSet<Var>], fuel: usize) -> ExtOutcome<Var> {
    let pre = |c: &Config| {
        let pi = &beta[c.at];
        let mut read = |v: &str| match pi.contains(v) {
            // The standard step already succeeded, so `v` is set.
            true => Ok(c.state.get(v).unwrap_or_default()),
            false => Err(v.to_string()),
        };
        let r = match &p.cmds[c.at].cmd {
            Cmd::Assign(_, e) => eval_expr_with(e, &mut read).map(drop),
            Cmd::IfGoto(b, _) => eval_bexpr_with(b, &mut read).map(drop),
            _ => Ok(()),
        };
        r.map_err(|var| ExtStuck::NotLive {
            label: p.cmds[c.at].label.clone(),
            var,
        })
    };
    drive(p, &LiveVariables, beta, fuel, pre)
}

/// The common loop: standard step, then the precondition `pre`, then the
/// prediction `β_l' ⊆ β_l ∪ S2` for the transition taken.
fn drive<A: Analysis>(
    p: &Program,
    a: &A,
    beta: &[BTreeSet<A::Item>],
    fuel: usize,
    pre: impl Fn(&Config) -> Result<(), ExtStuck<A::Item>>,
) -> ExtOutcome<A::Item> {
    let outcome = |end, steps| ExtOutcome { end, steps };
    let Some(mut c) = Config::initial(p) else {
        // As in the standard semantics: no `first(P)`, no execution.
        let empty = Stuck {
            label: Label::new(),
            reason: Reason::Empty,
        };
        return outcome(ExtEnd::Stuck(ExtStuck::Standard(empty)), 0);
    };
    for steps in 0..=fuel {
        let next = match semantics::step(p, &c) {
            Step::Stuck(s) => return outcome(ExtEnd::Stuck(ExtStuck::Standard(s)), steps),
            Step::Done => None,
            Step::Next(n) => Some(n),
        };
        if let Err(s) = pre(&c) {
            return outcome(ExtEnd::Stuck(s), steps);
        }
        let Some(n) = next else {
            return outcome(ExtEnd::Complete, steps);
        };
        if steps == fuel {
            break;
        }
        if let Err(s) = predict(p, a, beta, c.at, n.at) {
            return outcome(ExtEnd::Stuck(s), steps);
        }
        c = n;
    }
    outcome(ExtEnd::OutOfFuel, fuel)
}

/// The prediction on `l → l2` with `π = β_l`, `π' = β_l2`.
fn predict<A: Analysis>(
    p: &Program,
    a: &A,
    beta: &[BTreeSet<A::Item>],
    l: usize,
    l2: usize,
) -> Result<(), ExtStuck<A::Item>> {
    let s2 = a.prediction(p, l, l2);
    let extra: BTreeSet<_> = beta[l2]
        .iter()
        .filter(|i| !beta[l].contains(*i) && !s2.contains(*i))
        .cloned()
        .collect();
    match extra.is_empty() {
        true => Ok(()),
        false => Err(ExtStuck::Prediction {
            label: p.cmds[l].label.clone(),
            to: p.cmds[l2].label.clone(),
            extra,
        }),
    }
}
