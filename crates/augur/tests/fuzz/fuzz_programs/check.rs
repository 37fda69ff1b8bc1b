//! The differential check: extract a program twice (same C), run its IR in
//! the interpreter and the JIT, and (when asked) its compiled C on fixed
//! inputs, compare with the reference; failure kinds, the extraction and
//! compile limits, and the one documented limit that is not a failure.

use crate::fuzz_programs::language::{Bind, Decide, Program, Stmt};
use crate::fuzz_programs::reference::evaluate;
use crate::fuzz_programs::staged::{sets_plain_values, stage, Walk};
use augur::{Builder, Dyn, Extracted, Stats, Value};
use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};

type Native = unsafe extern "C" fn(i32, i32) -> i32;

/// Runs of the closure one extraction may take (over all its attempts).
/// An extraction needs about two runs per dyn decision it explores (one
/// exploring, one checking): up to about a thousand for a plain loop of 100
/// turns around a dyn `if`, about 6,500 for the largest program of a
/// 100,000-program run (seed 9400072330: a plain loop of 97 turns with two
/// `if`s and a tracked plain value, in a dyn loop; 35,000 operations).
/// Runs cost more and more as the graph grows, so the default limit (a
/// million) would let a blow-up run for hours in a debug build.
const MAX_RUNS: u64 = 10_000;
/// Operations one attempt may record: these programs need a few thousand
/// (long plain loops, copied per plain value). A second bound on blow-ups,
/// which grow the graph fast.
const MAX_OPERATIONS: usize = 100_000;

/// The engine's default bound on the operations all runs perform
/// (`Builder::max_work`), scaled with the others by `AUGUR_FUZZ_LIMITS`.
const DEFAULT_MAX_WORK: u64 = 200_000_000;

/// How long the C compiler may take on one program.
const COMPILE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

/// Inputs: zero, negatives (loops that never run, `i32::MIN` as a bound),
/// small bounds. Nothing large and positive, since both parameters can
/// bound nested loops.
const INPUTS: &[(i32, i32)] = &[
    (0, 0),
    (1, -1),
    (3, 2),
    (-4, 5),
    (2, 7),
    (6, 1),
    (i32::MIN, 4),
    (5, -1_000_000),
];

/// Why a program failed.
#[derive(Debug)]
pub(crate) struct Failure {
    /// The kind of failure ("wrong result", the error's variant...): the
    /// shrinker keeps it, so it cannot wander off to another bug.
    pub(crate) kind: String,
    what: String,
    code: Option<String>,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{}", self.what)?;
        if let Some(code) = &self.code {
            writeln!(f, "generated C:\n{code}")?;
        }
        Ok(())
    }
}

fn failure(kind: &str, what: String, code: Option<&str>) -> Failure {
    Failure {
        kind: kind.to_string(),
        what,
        code: code.map(str::to_string),
    }
}

fn extract(p: &Program, walk: Walk) -> Result<Extracted<Native>, Failure> {
    let p = p.clone();
    // Engine panics (as opposed to errors) are failures of the program too.
    let r = catch_unwind(AssertUnwindSafe(|| {
        // The indexed walk's programs have no long plain loops: a tighter
        // bound ends its documented-limit blow-ups sooner.
        let k = super::env_u64("AUGUR_FUZZ_LIMITS").unwrap_or(1);
        let (runs, ops) = match walk {
            Walk::Plain | Walk::Indexed => (MAX_RUNS, MAX_OPERATIONS),
            Walk::Trusted => (MAX_RUNS / 5, MAX_OPERATIONS / 20),
        };
        Builder::new()
            .trust_unannotated(walk == Walk::Trusted)
            .max_runs(runs * k)
            .max_operations(ops * k as usize)
            .max_work(DEFAULT_MAX_WORK * k)
            .extract("fuzz", move |a: Dyn<i32>, b: Dyn<i32>| {
                stage(&p, walk, a, b)
            })
    }))
    .map_err(|e| {
        let what = format!("extraction panicked: {}", panic_text(&e));
        failure("extraction panicked", what, None)
    })?;
    r.map_err(|e| {
        // The variant's name, from `Debug`.
        let debug = format!("{e:?}");
        let variant = debug.split([' ', '{', '(']).next().unwrap_or("");
        failure(variant, format!("extraction failed: {e}"), None)
    })
}

fn panic_text(e: &Box<dyn std::any::Any + Send>) -> String {
    e.downcast_ref::<String>()
        .cloned()
        .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "(not a string)".into())
}

/// Extracts `p` twice, checks the C, then compares interpreter (and C when
/// `compile`) with the reference on every input. Returns the extraction's
/// statistics.
///
/// Gotos and a C compile error are failures, but the results are checked
/// first (by the interpreter when the C does not compile), so that a wrong
/// result is never hidden behind them.
pub(crate) fn check_program(p: &Program, walk: Walk, compile: bool) -> Result<Stats, Failure> {
    let ex = extract(p, walk)?;
    let code = ex.c_code();
    let again = extract(p, walk).map_err(|f| Failure {
        what: format!("second {}", f.what),
        code: Some(code.clone()),
        ..f
    })?;
    if again.c_code() != code {
        let what = format!(
            "the C differs between two extractions; the second:\n{}",
            again.c_code()
        );
        return Err(failure("nondeterministic C", what, Some(&code)));
    }
    let text = ex.ir().to_string();
    let read_back = match augur::ir::parse(&text) {
        Ok(f) if f.to_string() == text => f,
        Ok(f) => {
            let what = format!("the IR text reads back as another text:\n{f}");
            return Err(failure("IR text round trip", what, Some(&text)));
        }
        Err(e) => {
            let what = format!("the IR text does not read back: {e}");
            return Err(failure("IR text round trip", what, Some(&text)));
        }
    };
    let gotos = ex.stats().gotos;
    let mut soft = None;
    // Code from structured Rust is structured. Plain values make copies of
    // a dyn loop per value that enter each other in the middle (irreducible
    // flow, a state machine), which C can only say with a `goto` (or a
    // loop over a switch): allowed there. Forward jumps between copies are
    // guards, not gotos (a 3,000-program run that failed on any goto found
    // only loops entered in the middle, all in the plain walk).
    if gotos != 0 && !sets_plain_values(&p.body) {
        soft = Some(failure("gotos", format!("{gotos} gotos"), Some(&code)));
    }
    // Programs with gotos are always compiled too.
    let compiled = if compile || gotos != 0 {
        // A compiler that runs for minutes on generated C is a failure to
        // report, not a run to wait for (gcc -O2 took over half an hour on
        // the code of seed 9980021677).
        let opts = augur::exec::CompileOptions {
            timeout: COMPILE_TIMEOUT,
            ..Default::default()
        };
        match ex.compile_with(&opts) {
            Ok(c) => Some(c),
            Err(e) => {
                let what = format!("C compile failed: {e}");
                soft = soft.or(Some(failure("C compile", what, Some(&code))));
                None
            }
        }
    } else {
        None
    };
    // The JIT compiles in well under a millisecond: every program.
    let jit_opts = augur::exec::CompileOptions::default().with_backend(augur::exec::Backend::Jit);
    let jitted = match ex.compile_with(&jit_opts) {
        Ok(j) => j,
        Err(e) => {
            let what = format!("JIT compile failed: {e}");
            return Err(failure("JIT compile", what, Some(&text)));
        }
    };
    for &(a, b) in INPUTS {
        let want = evaluate(p, a, b);
        let at = format!("inputs ({a}, {b})");
        {
            let got = catch_unwind(AssertUnwindSafe(|| ex.interpret(&[a.into(), b.into()])));
            let got = match got {
                Ok(Ok(v)) => v,
                Ok(Err(e)) => {
                    let what = format!("{at}: interpreter error: {e}; expected {want}");
                    return Err(failure("interpreter error", what, Some(&code)));
                }
                Err(e) => {
                    let what = format!("{at}: interpreter panicked: {}", panic_text(&e));
                    return Err(failure("interpreter panicked", what, Some(&code)));
                }
            };
            if got != Value::from(want) {
                let what = format!("{at}: interpreter gives {got}, expected {want}");
                return Err(failure("wrong result", what, Some(&code)));
            }
            let mut it = augur::exec::Interpreter::new();
            match it.call(&read_back, &[a.into(), b.into()]) {
                Ok(v) if v == got => {}
                other => {
                    let what = format!("{at}: the IR read back from its text gives {other:?}");
                    return Err(failure("IR text round trip", what, Some(&text)));
                }
            }
        }
        // SAFETY: as for the C below.
        let from_jit = unsafe { (jitted.get())(a, b) };
        if from_jit != want {
            let what = format!("{at}: the JIT gives {from_jit}, expected {want}");
            return Err(failure("wrong result", what, Some(&text)));
        }
        if let Some(c) = &compiled {
            // SAFETY: the function takes and returns `int32_t` and touches
            // no memory.
            let from_c = unsafe { (c.get())(a, b) };
            if from_c != want {
                let what = format!("{at}: C gives {from_c}, expected {want}");
                return Err(failure("wrong result", what, Some(&code)));
            }
        }
    }
    match soft {
        Some(f) => Err(f),
        None => Ok(ex.stats().clone()),
    }
}

/// The outcomes other than exact code that a walk may give, because they
/// are the specified behaviour for its input: without `#[augur::staged]`,
/// a plain Rust loop around dyn code inside a dyn loop keeps the dyn loop
/// from closing, and extraction stops with an error that names the plain
/// loop and the two ways to make it visible (`LoopNeverCloses`, or a run or
/// operation limit); the indexed walk's `Error::Unannotated`; and, under
/// the attribute, a clear refusal of a changed `let mut` of a type that is
/// not `Hash` (see [`refuses_a_let`]). Anything else (a wrong result,
/// another error, an error without that explanation, or such an error for
/// a program without that shape) fails.
pub(crate) fn documented_limit(p: &Program, walk: Walk, f: &Failure) -> bool {
    /// Does `s` contain a dyn decision?
    fn decides(s: &Stmt) -> bool {
        match s {
            Stmt::If(..)
            | Stmt::While { .. }
            | Stmt::Branch(..)
            | Stmt::Machine { .. }
            | Stmt::Adapter(_)
            | Stmt::Hidden(_)
            | Stmt::Use(_, _, Decide::Branch | Decide::Bound | Decide::Nested) => true,
            Stmt::Block(ss) => ss.iter().any(decides),
            Stmt::Repeat(_, b) | Stmt::StaticRepeat(_, b) | Stmt::PlainLoop(_, b) => decides(b),
            _ => false,
        }
    }
    /// A plain `Repeat` around a decision inside a `while`?
    fn plain_in_dyn(s: &Stmt, in_while: bool) -> bool {
        let go = |s| plain_in_dyn(s, in_while);
        match s {
            Stmt::If(_, t, e) => go(t) || go(e),
            Stmt::While { body, .. } | Stmt::Machine { body, .. } => plain_in_dyn(body, true),
            Stmt::Repeat(k, b) => (in_while && *k >= 2 && decides(b)) || go(b),
            Stmt::StaticRepeat(_, b) | Stmt::PlainLoop(_, b) => go(b),
            Stmt::Adapter(a) => (in_while && a.k >= 2) || go(&a.body),
            Stmt::Hidden(h) => go(&h.between) || go(&h.after),
            Stmt::Block(ss) => ss.iter().any(go),
            _ => false,
        }
    }
    if walk == Walk::Indexed {
        // The sound rule's refusal: it names the line and the fix.
        return f.kind == "Unannotated" && f.what.contains("#[augur::staged]");
    }
    if walk == Walk::Plain {
        return (changes_non_hash(&p.body) && refuses_a_let(f)) || outgrows_limits(p, walk, f);
    }
    walk == Walk::Trusted
        && matches!(f.kind.as_str(), "LoopNeverCloses" | "Limit")
        && f.what.contains("#[augur::staged]")
        && plain_in_dyn(&p.body, false)
}

/// Under the attribute, a resource limit (runs, recorded operations, work)
/// reached by a program that changes plain state on dyn branches: exact
/// code holds a copy of what follows for every plain state a path can
/// reach there, as many as the state's values (a stack's contents, a set,
/// a phase) times the decisions that lead to them, and the engine stops
/// with `Error::Limit` where that outgrows the limits. Two such programs
/// of a 100,000-program run (seeds 9018913 and 9021505) were run again
/// under limits twenty times as large (`AUGUR_FUZZ_LIMITS=20`): see the
/// sound-by-default issue's closing note. A wrong result is never
/// accepted, nor a limit for a program without such state.
pub(crate) fn outgrows_limits(p: &Program, walk: Walk, f: &Failure) -> bool {
    walk == Walk::Plain && f.kind == "Limit" && sets_plain_values(&p.body)
}

/// Does `s` hold a `let mut` of a type that is not `Hash`, changed on a
/// dyn branch (`Bind::MutStruct`)? The attribute cannot track it, so
/// under it the engine may refuse such a program instead of extracting it
/// exactly (see [`refuses_a_let`]).
pub(crate) fn changes_non_hash(s: &Stmt) -> bool {
    match s {
        Stmt::Hidden(h) => {
            let untracked = |b: &Bind| matches!(b, Bind::MutStruct(.., false));
            untracked(&h.first)
                || h.second.as_ref().is_some_and(untracked)
                || changes_non_hash(&h.between)
                || changes_non_hash(&h.after)
        }
        Stmt::If(_, t, e) => changes_non_hash(t) || changes_non_hash(e),
        Stmt::While { body, .. }
        | Stmt::Repeat(_, body)
        | Stmt::StaticRepeat(_, body)
        | Stmt::PlainLoop(_, body)
        | Stmt::Machine { body, .. } => changes_non_hash(body),
        Stmt::Adapter(a) => changes_non_hash(&a.body),
        Stmt::Block(ss) => ss.iter().any(changes_non_hash),
        _ => false,
    }
}

/// The engine's clear refusal of a changed `let mut` it cannot track:
/// `Error::Unannotated`, or a limit (`LoopNeverCloses`, `Limit`), whose
/// message names the `let`. Exact code is as good; a wrong result never is.
fn refuses_a_let(f: &Failure) -> bool {
    matches!(f.kind.as_str(), "Unannotated" | "LoopNeverCloses" | "Limit")
        && (f.what.contains("`let") || f.what.contains("let mut"))
}
