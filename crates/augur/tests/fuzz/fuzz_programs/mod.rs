//! Randomized differential test: random programs of a tiny structured
//! language are run three ways and must agree.
//!
//! * a plain Rust evaluator of the AST (wrapping `i32` arithmetic) is the
//!   reference;
//! * a *staged interpreter* walks the same AST over `Dyn<i32>` variables, so
//!   extraction turns each program into a C function (extracted twice: the
//!   C must be the same, without gotos); its IR is run in the IR
//!   interpreter and compiled by the JIT (every program), and its C is
//!   compiled and called (one program in eight, since a C compile costs far
//!   more than an extraction).
//!
//! The staged walk is written the way a DSL author would write it: a plain
//! Rust recursion that carries plain first-stage state (`PlainState`): a
//! value (`SetPlain`, `UsePlain`: set on one side of a dyn `if`, read any
//! distance later) and a stack, a slot, a map, a set and a phase that the
//! walk changes in the locals that hold them through methods (`Mutate`:
//! `push`/`pop`/`truncate`, `take`/`get_or_insert_with`/`replace`,
//! `insert`/`remove`, `bump(&mut phase, ..)`; `Branch`: the same on the
//! sides of a dyn `if`), and whose values later decide the code (`Use`:
//! which operation, whether a dyn branch exists, a dyn loop's bound, an
//! operation on one combination of two later decisions). `Machine` is a dyn
//! loop that steps a plain machine held in its frame's locals (a ring
//! rotated, an `Option` toggled, a counter bumped; periods 1 to 7), whose
//! value decides each turn's operation. `Adapter` hands a closure that
//! walks a body and takes a dyn decision to `for_each`, `try_for_each`,
//! `any`, `all`, `filter(..).count()`, `position`, `fold`,
//! `map(..).collect()` or `map(..).sum()` (written in the call, bound to a
//! name first, or handed to an unannotated helper that calls it), with the
//! body's `break`/`return` ending the adapter; what it finds decides later
//! code. `Hidden` binds plain values a dyn decision chose with immutable
//! `let`s, never `let x = if ..`: through a helper's return value
//! (`let k = pick(c.is_true(), 1, 2)`), a `bool` straight from
//! `is_true()`, a tuple pattern, a value derived from a tracked `let mut`
//! local that is then reset (`let k = s * 2; s = 0;`, `let p = o.take();`,
//! the plain slot taken), or an `f64` (not `Hash`); or hands them on
//! without a `let`: straight as an argument or the receiver of an annotated
//! helper that walks what follows, or as a `match`, `if let` or
//! `while let` arm's binding; or binds a struct that is not `Hash`, chosen
//! inside an annotated callee (`let w = choose_w(..)`) or a `let mut`
//! changed on a dyn branch (`w.0 += x`). After further statements it reads
//! them, one or two combined (`k * 10 + m`), to decide the code (as `Use`,
//! or whether `v = v + 100` is staged under a later dyn `if`). `Repeat` is a plain Rust `for`, `PlainLoop` a plain `for` of up to
//! 100 turns with its own dyn `break`/`continue`, `StaticRepeat` uses
//! `augur::range`. Every program is extracted under the *plain* walk (a
//! plain `for` over a block's statements, in functions under
//! `#[augur::staged]`: exact for every program), and under the *indexed*
//! walk (`augur::range` over the statement index, no attribute: exact or
//! `Error::Unannotated`); programs without plain state, adapters or long
//! plain loops also under the *trusted* walk (the opt-out).
//!
//! Environment: `AUGUR_FUZZ_CASES=N` runs N programs instead of the
//! default, `AUGUR_FUZZ_SEED=S` starts at seed S. Case `i` uses seed `S + i`
//! alone, so a failing case is reproduced by `AUGUR_FUZZ_SEED=<its seed>
//! AUGUR_FUZZ_CASES=1`. A failure prints the seed, the program (as pseudo-C
//! and as Rust `Debug`), the generated C and the inputs, then the smallest
//! failing program the shrinker found. Every failure fails: the outcomes
//! other than exact code that are accepted are the specified errors of
//! [`documented_limit`].
//! `AUGUR_FUZZ_HIDDEN=0` makes no `Hidden` statements (the other programs
//! stay the same), to compare a change with and without them (before
//! immutable `let`s from decisions were tracked, 161 of 3,000 programs gave
//! wrong code; see `reproducers/immutable_lets.rs`).
//! `AUGUR_FUZZ_BINDS=argument,arm,..` makes `Hidden` bind only the kinds
//! named (`generator::BINDS`, each as likely; the twins known to be exact
//! are `typed_argument`, `typed_receiver`, `typed_arm`, `hash_struct`,
//! `hash_mut_struct`), to count what one form finds, or to check that the
//! walk and the reference agree where the engine is exact (see
//! `reproducers/hidden_forms.rs`). The default mix makes those the engine
//! does not track yet only with `AUGUR_FUZZ_UNTRACKED=1`, their twins
//! otherwise (`generator::UNTRACKED_BY_DEFAULT`); the programs are the same
//! either way but for those bindings.
//! `AUGUR_FUZZ_VERBOSE=1` prints one line per program (with `--nocapture`).
//! `AUGUR_FUZZ_SHRINK_SECS=S` gives each shrink S seconds (default 60).
//! `AUGUR_FUZZ_LIMITS=K` multiplies the limits each extraction runs under
//! (runs, recorded operations, work) by K, to tell a program that needs
//! more from one that never ends.

mod check;
mod generator;
mod language;
mod reference;
mod reproducers;
mod shrink;
mod staged;

use check::{check_program, documented_limit, outgrows_limits};
use generator::{bind_kinds, generate, hidden_lets, untracked_forms};
use language::{Bind, Read, Stmt, MAX_DEPTH, MAX_STMTS};
use shrink::{shrink, size, valid};
use staged::{needs_attribute, sets_plain_values, Walk};

// ---------------------------------------------------------------------------
// The fuzz tests.

fn env_u64(name: &str) -> Option<u64> {
    let v = std::env::var(name).ok()?;
    Some(
        v.parse()
            .unwrap_or_else(|_| panic!("{name}={v} is not a number")),
    )
}

/// Programs per run by default: every one interpreted under every walk,
/// one in `COMPILE_EVERY` also compiled. The test command runs the suite
/// in a debug build and then in a release build, with the same seeds: the
/// debug build (ten times slower) runs the first quarter of them, for the
/// engine's debug assertions and overflow checks; the release build runs
/// them all.
const DEFAULT_CASES: u64 = if cfg!(debug_assertions) { 100 } else { 400 };
const COMPILE_EVERY: u64 = 8;
/// Failures shrunk per shard.
const MAX_SHRUNK: usize = 3;
/// Independent tests share the cases, so the test harness runs them in
/// parallel (the engine is thread-local).
const SHARDS: u64 = 4;

fn fuzz_shard(shard: u64) {
    let cases = env_u64("AUGUR_FUZZ_CASES").unwrap_or(DEFAULT_CASES);
    let base = env_u64("AUGUR_FUZZ_SEED").unwrap_or(0x00a0_9e5e_ed00);
    let verbose = std::env::var_os("AUGUR_FUZZ_VERBOSE").is_some();
    let started = std::time::Instant::now();
    let mut failures = Vec::new();
    let (mut limits, mut walked, mut executions, mut max_executions) = (0u64, 0u64, 0u64, 0u64);
    let mut outgrown = 0u64;
    for i in (shard..cases).step_by(SHARDS as usize) {
        let seed = base.wrapping_add(i);
        let p = generate(seed);
        let compile = i % COMPILE_EVERY == 0;
        for walk in [Walk::Indexed, Walk::Trusted, Walk::Plain] {
            if walk == Walk::Trusted && needs_attribute(&p.body) {
                continue;
            }
            walked += 1;
            let started = std::time::Instant::now();
            let result = check_program(&p, walk, compile);
            if verbose {
                let r = match &result {
                    Ok(st) => format!(
                        "ok: runs {} (check runs {}, total {}, restarts {}), nodes {}",
                        st.runs, st.check_runs, st.total_runs, st.loop_restarts, st.nodes
                    ),
                    Err(f) => format!("FAILED ({})", f.kind),
                };
                eprintln!("seed {seed} {walk:?}: {:?} {r}", started.elapsed());
            }
            let f = match result {
                Ok(st) => {
                    executions += st.total_runs;
                    max_executions = max_executions.max(st.total_runs);
                    continue;
                }
                Err(f) if documented_limit(&p, walk, &f) => {
                    limits += 1;
                    outgrown += u64::from(outgrows_limits(&p, walk, &f));
                    continue;
                }
                Err(f) => f,
            };
            eprintln!(
                "FAILED seed {seed}, {walk:?} walk (AUGUR_FUZZ_SEED={seed} AUGUR_FUZZ_CASES=1)\n\
                 program:\n{p}{p:?}\n{f}"
            );
            // Shrinking takes up to a minute: only the first few.
            if failures.len() < MAX_SHRUNK {
                let (small, sf) = shrink(&p, walk, compile, f);
                eprintln!(
                    "seed {seed}, {walk:?} walk, shrunk (size {} from {}):\n{small}{small:?}\n{sf}",
                    size(&small.body),
                    size(&p.body)
                );
            }
            failures.push((seed, walk));
        }
    }
    // Shown with --nocapture (or when the shard fails).
    let ok = walked - limits - failures.len() as u64;
    eprintln!(
        "shard {shard}: {walked} extractions, {ok} exact (executions of the closure: mean {:.1}, \
         max {max_executions}), {limits} stopped with a documented error (unannotated: \
         Error::Unannotated; trusted: a plain loop inside a dyn loop; plain: a changed \
         non-Hash let mut refused, or {outgrown} whose plain state changed on dyn branches \
         outgrew the limits), {} failed, in {:.1} s",
        executions as f64 / ok.max(1) as f64,
        failures.len(),
        started.elapsed().as_secs_f64()
    );
    assert!(failures.is_empty(), "failing seeds: {failures:?}");
}

#[test]
fn fuzz_shard_0() {
    fuzz_shard(0);
}

#[test]
fn fuzz_shard_1() {
    fuzz_shard(1);
}

#[test]
fn fuzz_shard_2() {
    fuzz_shard(2);
}

#[test]
fn fuzz_shard_3() {
    fuzz_shard(3);
}

/// The generator stays inside its bounds and makes the constructs the test
/// is about (a generator that silently stopped making loops would pass).
#[test]
fn generator_covers_the_language() {
    fn walk(s: &Stmt, depth: u32, seen: &mut [bool; 18], max_depth: &mut u32) {
        *max_depth = (*max_depth).max(depth);
        let i = match s {
            Stmt::Assign(..) => 0,
            Stmt::If(..) => 1,
            Stmt::While { .. } => 2,
            Stmt::Break => 3,
            Stmt::Continue => 4,
            Stmt::Return(_) => 5,
            Stmt::Block(_) => 6,
            Stmt::Repeat(..) => 7,
            Stmt::StaticRepeat(..) => 8,
            Stmt::PlainLoop(..) => 9,
            Stmt::SetPlain(_) => 10,
            Stmt::UsePlain(_) => 11,
            Stmt::Mutate(..) => 12,
            Stmt::Branch(..) => 13,
            Stmt::Use(..) => 14,
            Stmt::Machine { .. } => 15,
            Stmt::Adapter(_) => 16,
            Stmt::Hidden(_) => 17,
        };
        seen[i] = true;
        match s {
            Stmt::If(_, t, e) => {
                walk(t, depth + 1, seen, max_depth);
                walk(e, depth + 1, seen, max_depth);
            }
            Stmt::While { body, .. }
            | Stmt::Repeat(_, body)
            | Stmt::StaticRepeat(_, body)
            | Stmt::PlainLoop(_, body)
            | Stmt::Machine { body, .. } => walk(body, depth + 1, seen, max_depth),
            Stmt::Adapter(a) => walk(&a.body, depth + 1, seen, max_depth),
            Stmt::Hidden(h) => {
                walk(&h.between, depth + 1, seen, max_depth);
                walk(&h.after, depth + 1, seen, max_depth);
            }
            Stmt::Block(ss) => ss.iter().for_each(|s| walk(s, depth, seen, max_depth)),
            _ => {}
        }
    }
    /// The adapters, closure forms, machines and early exits out of
    /// adapters seen.
    fn shapes(s: &Stmt, out: &mut std::collections::BTreeSet<String>) {
        fn exits(s: &Stmt) -> Vec<&'static str> {
            match s {
                Stmt::Break => vec!["break"],
                Stmt::Continue => vec!["continue"],
                Stmt::Return(_) => vec!["return"],
                Stmt::If(_, t, e) => [exits(t), exits(e)].concat(),
                Stmt::Block(ss) => ss.iter().flat_map(exits).collect(),
                Stmt::Repeat(_, b) | Stmt::StaticRepeat(_, b) => exits(b),
                // Their own `break`s and `continue`s.
                Stmt::While { body, .. }
                | Stmt::PlainLoop(_, body)
                | Stmt::Machine { body, .. } => {
                    exits(body).into_iter().filter(|e| *e == "return").collect()
                }
                Stmt::Adapter(a) => exits(&a.body)
                    .into_iter()
                    .filter(|e| *e == "return")
                    .collect(),
                _ => vec![],
            }
        }
        match s {
            Stmt::Adapter(a) => {
                out.insert(format!("{:?} {:?}", a.kind, a.form));
                for e in exits(&a.body) {
                    out.insert(format!("{e} out of an adapter"));
                }
                if a.k > 17 {
                    out.insert("long adapter".into());
                }
                shapes(&a.body, out);
            }
            Stmt::Machine { machine, body, .. } => {
                let m = format!("{machine:?}");
                out.insert(m[..m.find('(').unwrap_or(m.len())].to_string());
                shapes(body, out);
            }
            Stmt::Branch(..) => {
                out.insert("Branch".into());
            }
            Stmt::Hidden(h) => {
                for b in std::iter::once(&h.first).chain(&h.second) {
                    let name = match b {
                        Bind::Call(.., true) => "let: staged call",
                        Bind::Call(.., false) => "let: plain call",
                        Bind::Bool(_) => "let: bool",
                        Bind::Tuple(..) => "let: tuple",
                        Bind::Reset(..) => "let: reset",
                        Bind::Take(..) => "let: take",
                        Bind::TakeSlot => "let: slot taken",
                        Bind::Weight(.., false) => "let: f64 as a literal",
                        Bind::Weight(.., true) => "let: f64 compared",
                        Bind::Pass(_, _, _, how, typed) => {
                            out.insert(format!("pass: {how:?}{}", typed_note(*typed)));
                            continue;
                        }
                        Bind::Struct(.., false) => "let: non-Hash struct chosen inside",
                        Bind::Struct(.., true) => "let: Hash struct chosen inside, typed",
                        Bind::MutStruct(.., false) => "let mut: non-Hash struct changed",
                        Bind::MutStruct(.., true) => "let mut: Hash struct changed",
                    };
                    out.insert(name.into());
                }
                if h.second.is_some() {
                    out.insert("two lets combined".into());
                }
                if matches!(h.read, Read::Guarded(..)) {
                    out.insert("let read under a later dyn if".into());
                }
                shapes(&h.between, out);
                shapes(&h.after, out);
            }
            Stmt::If(_, t, e) => {
                shapes(t, out);
                shapes(e, out);
            }
            Stmt::While { body, .. }
            | Stmt::Repeat(_, body)
            | Stmt::StaticRepeat(_, body)
            | Stmt::PlainLoop(_, body) => {
                if matches!(s, Stmt::While { .. }) && sets_plain_values(body) {
                    out.insert("plain state changed in a dyn loop".into());
                }
                shapes(body, out)
            }
            Stmt::Block(ss) => ss.iter().for_each(|s| shapes(s, out)),
            _ => {}
        }
    }
    let mut seen = [false; 18];
    let mut seen_shapes = std::collections::BTreeSet::new();
    for seed in 0..1000 {
        let p = generate(seed);
        let mut depth = 0;
        walk(&p.body, 0, &mut seen, &mut depth);
        shapes(&p.body, &mut seen_shapes);
        assert!(depth <= MAX_DEPTH, "seed {seed}: depth {depth}");
        assert!(size(&p.body) <= MAX_STMTS, "seed {seed}: {p:#?}");
        assert!(valid(&p.body, false), "seed {seed}: {p:#?}");
    }
    if !hidden_lets() {
        seen[17] = true;
    }
    assert!(seen.iter().all(|s| *s), "constructs seen: {seen:?}");
    let mut want: Vec<String> = [
        "ForEach Inline",
        "ForEach Named",
        "ForEach Helper",
        "TryForEach Inline",
        "TryForEach Helper",
        "Any Inline",
        "Any Named",
        "All Inline",
        "Count Inline",
        "Count Named",
        "Position Inline",
        "Fold Inline",
        "MapCollect Inline",
        "MapSum Inline",
        "Ring",
        "Toggle",
        "Counter",
        "Branch",
        "long adapter",
        "plain state changed in a dyn loop",
        "break out of an adapter",
        "continue out of an adapter",
        "return out of an adapter",
        "let: staged call",
        "let: plain call",
        "let: bool",
        "let: tuple",
        "let: reset",
        "let: take",
        "let: slot taken",
        "let: f64 as a literal",
        "let: f64 compared",
        "two lets combined",
        "let read under a later dyn if",
        "pass: Argument",
        "pass: Receiver",
        "pass: Match",
        "pass: IfLet",
        "pass: WhileLet",
        "pass: Argument, typed",
        "pass: Receiver, typed",
        "pass: Match, typed",
        "pass: IfLet, typed",
        "pass: WhileLet, typed",
        "let: non-Hash struct chosen inside",
        "let: Hash struct chosen inside, typed",
        "let mut: non-Hash struct changed",
        "let mut: Hash struct changed",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    if bind_kinds().is_none() && !untracked_forms() {
        // Only the twins of the forms the engine does not track yet.
        let untracked =
            |w: &str| (w.starts_with("pass") && !w.ends_with("typed")) || w.contains(": non-Hash");
        want.retain(|w| !untracked(w));
    }
    if !hidden_lets() || bind_kinds().is_some() {
        want.retain(|w| {
            !w.starts_with("let") && !w.starts_with("pass") && w != "two lets combined"
        });
    }
    want.retain(|w| !seen_shapes.contains(w));
    assert!(want.is_empty(), "shapes never generated: {want:?}");
}

/// `", typed"` for the twin of a binding known to be exact.
fn typed_note(typed: bool) -> &'static str {
    if typed {
        ", typed"
    } else {
        ""
    }
}

/// Prints the program of `AUGUR_FUZZ_SEED` (`cargo test -p augur-staging --test fuzz
/// fuzz_programs::print_program -- --ignored --nocapture`).
#[test]
#[ignore = "a tool: prints the program of AUGUR_FUZZ_SEED"]
fn print_program() {
    let seed = env_u64("AUGUR_FUZZ_SEED").expect("set AUGUR_FUZZ_SEED");
    let p = generate(seed);
    println!("{p}{p:?}");
}
