//! The standard operational semantics of §3.3 as a step function.
//!
//! A configuration `⟨l, σ⟩` is a command index and a [`State`]. Expression
//! evaluation is partial: reading a variable outside `dom(σ)` has no rule,
//! so the execution is stuck there. `and`/`or` evaluate both operands, as
//! the paper's rules do, so an unset variable on either side is stuck.
//! Arithmetic wraps (the paper's integers are unbounded; wrapping keeps
//! every step defined and deterministic).

use std::collections::BTreeMap;
use std::fmt;

use crate::ast::{BExpr, Cmd, Expr, Label, Program, Var};

/// A state `σ : V → N`: a partial map; unset variables are outside `dom(σ)`.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct State(pub BTreeMap<Var, i64>);

impl State {
    /// The empty state `σ0 = ∅`.
    pub fn new() -> State {
        State::default()
    }

    /// `σ(v)`, if `v ∈ dom(σ)`.
    pub fn get(&self, v: &str) -> Option<i64> {
        self.0.get(v).copied()
    }

    /// `σ[v ↦ n]`, in place.
    pub fn set(&mut self, v: &str, n: i64) {
        self.0.insert(v.to_string(), n);
    }
}

/// `⟨e, σ⟩ → n`; `Err(v)` names the first unset variable read.
pub fn eval_expr(e: &Expr, s: &State) -> Result<i64, Var> {
    eval_expr_with(e, &mut |v| s.get(v).ok_or_else(|| v.to_string()))
}

/// `⟨b, σ⟩ → t`; `Err(v)` names the first unset variable read.
pub fn eval_bexpr(b: &BExpr, s: &State) -> Result<bool, Var> {
    eval_bexpr_with(b, &mut |v| s.get(v).ok_or_else(|| v.to_string()))
}

/// Evaluates `e` with `read` as the variable rule, so that the extended
/// semantics can add its precondition `{v} ⊆ π` to reads without
/// duplicating the other rules. Operands evaluate left to right.
pub fn eval_expr_with<E>(
    e: &Expr,
    read: &mut impl FnMut(&str) -> Result<i64, E>,
) -> Result<i64, E> {
    Ok(match e {
        Expr::Num(n) => *n,
        Expr::Var(v) => read(v)?,
        Expr::Add(a, b) => eval_expr_with(a, read)?.wrapping_add(eval_expr_with(b, read)?),
        Expr::Sub(a, b) => eval_expr_with(a, read)?.wrapping_sub(eval_expr_with(b, read)?),
        Expr::Mul(a, b) => eval_expr_with(a, read)?.wrapping_mul(eval_expr_with(b, read)?),
    })
}

/// Evaluates `b` with `read` as the variable rule (see [`eval_expr_with`]).
/// Both operands of `and`/`or` are evaluated: the paper's rules are strict.
pub fn eval_bexpr_with<E>(
    b: &BExpr,
    read: &mut impl FnMut(&str) -> Result<i64, E>,
) -> Result<bool, E> {
    Ok(match b {
        BExpr::True => true,
        BExpr::False => false,
        BExpr::Eq(x, y) => eval_expr_with(x, read)? == eval_expr_with(y, read)?,
        BExpr::Le(x, y) => eval_expr_with(x, read)? <= eval_expr_with(y, read)?,
        BExpr::Not(x) => !eval_bexpr_with(x, read)?,
        BExpr::And(x, y) => {
            let l = eval_bexpr_with(x, read)?;
            l & eval_bexpr_with(y, read)?
        }
        BExpr::Or(x, y) => {
            let l = eval_bexpr_with(x, read)?;
            l | eval_bexpr_with(y, read)?
        }
    })
}

/// A configuration `⟨l, σ⟩`: `at` is the index of `l` in the program.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Config {
    /// The index of the command about to execute.
    pub at: usize,
    /// The current state.
    pub state: State,
}

impl Config {
    /// `⟨first(P), ∅⟩`, or `None` for an empty program.
    pub fn initial(p: &Program) -> Option<Config> {
        p.first().map(|at| Config {
            at,
            state: State::new(),
        })
    }
}

/// Why a configuration has no transition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reason {
    /// The command reads a variable outside `dom(σ)`.
    Unset(Var),
    /// A `goto`/`if` target names no command.
    MissingTarget(Label),
    /// The command needs `next(l)` and is the last one.
    FallsOff,
    /// `halt` whose next command is not `done`.
    HaltNotBeforeDone,
    /// The program has no commands, so there is no `first(P)`.
    Empty,
}

/// A stuck configuration: where and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stuck {
    /// The label of the stuck command (empty for [`Reason::Empty`]).
    pub label: Label,
    /// Why no rule applies.
    pub reason: Reason,
}

impl fmt::Display for Stuck {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.reason {
            Reason::Unset(v) => write!(f, "{}: reads unset variable {v}", self.label),
            Reason::MissingTarget(g) => write!(f, "{}: no command labelled {g}", self.label),
            Reason::FallsOff => write!(f, "{}: no next command", self.label),
            Reason::HaltNotBeforeDone => write!(f, "{}: halt not followed by done", self.label),
            Reason::Empty => write!(f, "empty program"),
        }
    }
}

/// The result of one step from a configuration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// `⟨l, σ⟩ → ⟨l', σ'⟩`.
    Next(Config),
    /// `l : done`: the execution is complete.
    Done,
    /// No rule applies and the command is not `done`.
    Stuck(Stuck),
}

/// The control transfer of command `at` once its expression (if any) is
/// known: `Ok(target)` or the reason there is none. Shared with the
/// extended semantics, whose rules have the same `l'`.
pub fn target(p: &Program, at: usize, branch: bool) -> Result<usize, Reason> {
    let next = || p.next(at).ok_or(Reason::FallsOff);
    match &p.cmds[at].cmd {
        Cmd::Goto(g) => p.index(g).ok_or_else(|| Reason::MissingTarget(g.clone())),
        Cmd::IfGoto(_, g) if branch => p.index(g).ok_or_else(|| Reason::MissingTarget(g.clone())),
        Cmd::Halt => match p.next(at).map(|n| &p.cmds[n].cmd) {
            Some(Cmd::Done) => next(),
            _ => Err(Reason::HaltNotBeforeDone),
        },
        _ => next(),
    }
}

/// One transition of Fig. "Program Execution Rules" from `c`.
pub fn step(p: &Program, c: &Config) -> Step {
    let stuck = |reason| {
        Step::Stuck(Stuck {
            label: p.cmds[c.at].label.clone(),
            reason,
        })
    };
    let mut state = c.state.clone();
    let branch = match &p.cmds[c.at].cmd {
        Cmd::Done => return Step::Done,
        Cmd::Assign(v, e) => match eval_expr(e, &state) {
            Ok(n) => {
                state.set(v, n);
                false
            }
            Err(u) => return stuck(Reason::Unset(u)),
        },
        Cmd::IfGoto(b, _) => match eval_bexpr(b, &state) {
            Ok(t) => t,
            Err(u) => return stuck(Reason::Unset(u)),
        },
        Cmd::Skip | Cmd::Goto(_) | Cmd::Halt => false,
    };
    match target(p, c.at, branch) {
        Ok(at) => Step::Next(Config { at, state }),
        Err(r) => stuck(r),
    }
}

/// How an execution ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum End {
    /// A complete execution: it reached `done`.
    Complete,
    /// A stuck execution.
    Stuck(Stuck),
    /// Still running after the fuel was spent (possibly infinite).
    OutOfFuel,
}

/// The result of [`run`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// How it ended.
    pub end: End,
    /// Transitions taken; the trace `⟨l0,σ0⟩ → … → ⟨ln,σn⟩` has `steps + 1`
    /// configurations (none for an empty program).
    pub steps: usize,
    /// The last configuration (`None` for an empty program).
    pub last: Option<Config>,
}

impl Outcome {
    /// The number of configurations in the trace (the paper's `n + 1`).
    pub fn trace_len(&self) -> usize {
        self.last.as_ref().map_or(0, |_| self.steps + 1)
    }
}

/// Runs `p` from `⟨first(P), ∅⟩` for at most `fuel` transitions.
pub fn run(p: &Program, fuel: usize) -> Outcome {
    let Some(mut c) = Config::initial(p) else {
        let stuck = Stuck {
            label: Label::new(),
            reason: Reason::Empty,
        };
        return Outcome {
            end: End::Stuck(stuck),
            steps: 0,
            last: None,
        };
    };
    let mut steps = 0;
    let end = loop {
        match step(p, &c) {
            Step::Done => break End::Complete,
            Step::Stuck(s) => break End::Stuck(s),
            Step::Next(_) if steps == fuel => break End::OutOfFuel,
            Step::Next(n) => {
                c = n;
                steps += 1;
            }
        }
    };
    Outcome {
        end,
        steps,
        last: Some(c),
    }
}
