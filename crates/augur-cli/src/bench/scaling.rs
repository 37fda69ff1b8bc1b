//! How the first stage scales as programs grow, on the shapes of the
//! BuildIt comparison (`crate::programs`): straight-line code, sequential
//! ifs, unrolled ifs (BuildIt's sample18), nested dyn loops, a state
//! machine over first-stage states (a dyn loop, a keyed family, a regex
//! DFA over resumable points) and prophecies violated in sequence. BuildIt's
//! run counts follow its exploration (two runs per dyn branch); its times
//! are the ones measured on this kind of machine. Ours are shown twice:
//! exploration runs (what BuildIt's count compares with) and all runs,
//! with the check runs that replay loop and link candidates.

use super::{ms, time, Ctx, Outcome};
use crate::programs::{self, Fn1};
use crate::report::{Cell, Plot, Table};
use crate::Result;
use augur::{Extracted, ProphecyMode, Stats, Value};

/// BuildIt's straight-line times (n, ms), measured with BuildIt's own build
/// on a 2-core machine of the kind these benchmarks run on (its per-statement
/// cost grows with n: 38 µs at 256, 63 µs at 2048).
const BUILDIT_STRAIGHT_MS: [(usize, f64); 2] = [(256, 9.7), (2048, 129.0)];
/// BuildIt's sequential-ifs times (n, ms), 20 statements between ifs,
/// measured the same way.
const BUILDIT_IFS_MS: [(u64, f64); 2] = [(32, 154.0), (64, 391.0)];
/// BuildIt's sample18 (128 unrolled ifs): runs, and ms for the whole
/// process, measured on this kind of machine.
const BUILDIT_SAMPLE18: (u64, u64, f64) = (128, 257, 52.0);
/// BuildIt's runs for k = 16 prophecies violated in sequence.
const BUILDIT_PROPHECY_RUNS: (usize, u64) = (16, 185);

/// One measured point: the size, the stats and the minimum time.
struct Point {
    n: u64,
    stats: Stats,
    ms: f64,
    /// Heap the extraction added at its peak (MB).
    peak_mb: f64,
}

#[augur::staged]
fn check(e: &Extracted<Fn1>, x: i64, want: i64, what: &str) -> Result<()> {
    let got = e.interpret(&[x.into()])?;
    if got != Value::I64(want) {
        return Err(format!("{what}: computes {got:?} for {x}, not {want}").into());
    }
    Ok(())
}

fn sweep(
    ctx: &Ctx,
    label: &str,
    sizes: &[u64],
    reps: usize,
    mut one: impl FnMut(u64) -> augur::Result<Extracted<Fn1>>,
    reference: impl Fn(u64, i64) -> i64,
) -> Result<Vec<Point>> {
    let bar = ctx.bar(sizes.len(), label);
    let mut out = Vec::new();
    for &n in sizes {
        bar.set_message(format!("n = {n}"));
        super::heap::reset_peak();
        let base = super::heap::live();
        let (min, _, e) = time(reps, || Ok(one(n)?))?;
        let peak_mb = super::heap::peak_since(base) as f64 / 1e6;
        if e.stats().gotos != 0 {
            return Err(format!("{label} n = {n}: unstructured code").into());
        }
        for x in [-1, 2, 3] {
            check(&e, x, reference(n, x), &format!("{label} n = {n}"))?;
        }
        out.push(Point {
            n,
            stats: e.stats().clone(),
            ms: ms(min),
            peak_mb,
        });
        bar.inc(1);
    }
    bar.finish_and_clear();
    Ok(out)
}

#[augur::staged]
fn sizes(ctx: &Ctx, full: &[u64], quick: &[u64]) -> Vec<u64> {
    if ctx.quick { quick } else { full }.to_vec()
}

#[augur::staged]
fn straight(ctx: &Ctx) -> Result<(Table, Plot)> {
    let ns = sizes(ctx, &[128, 256, 512, 1024, 2048, 4096], &[64, 256]);
    let pts = sweep(
        ctx,
        "straight",
        &ns,
        ctx.reps(10),
        |n| programs::straight_line(n as usize),
        |n, x| x + n as i64,
    )?;
    let mut t = Table::new(
        "straight-line",
        "Straight-line code: n statements `x = x + 1` from a plain Rust loop",
        &["n", "runs", "time (ms)", "ns per statement", "BuildIt (ms)"],
    );
    for p in &pts {
        let buildit = BUILDIT_STRAIGHT_MS
            .iter()
            .find(|b| b.0 as u64 == p.n)
            .map(|b| Cell::float(b.1, 1));
        t.push(vec![
            p.n.into(),
            p.stats.total_runs.into(),
            Cell::float(p.ms, 3),
            Cell::float(p.ms * 1e6 / p.n as f64, 0),
            buildit.unwrap_or(Cell::Missing),
        ]);
    }
    t.note(
        "BuildIt: measured on this kind of machine (quadratic: each statement scans the sequence)",
    );
    let plot = Plot::lines(
        "straight-line",
        "Straight-line code: first-stage time",
        "statements",
        "ms",
    )
    .log(true, true)
    .series("augur", pts.iter().map(|p| (p.n as f64, p.ms)))
    .series(
        "BuildIt",
        BUILDIT_STRAIGHT_MS.iter().map(|&(n, m)| (n as f64, m)),
    );
    Ok((t, plot))
}

#[augur::staged]
fn ifs(ctx: &Ctx) -> Result<(Table, Plot)> {
    let ns = sizes(ctx, &[4, 8, 16, 32, 64, 128], &[4, 16]);
    let pts = sweep(
        ctx,
        "ifs",
        &ns,
        ctx.reps(10),
        |n| programs::sequential_ifs(n as i64, false),
        |n, x| programs::sequential_ifs_ref(n as i64, x),
    )?;
    Ok(ifs_table(
        ("sequential-ifs", "n sequential ifs"),
        "n sequential dyn ifs, 20 statements between",
        "BuildIt (ms)",
        &pts,
        &BUILDIT_IFS_MS,
    ))
}

/// The table and plot of `n` ifs, with BuildIt's `2n + 1` runs and its
/// times (`buildit`: (n, ms)) beside.
#[augur::staged]
fn ifs_table(
    (name, plot_title): (&str, &str),
    title: &str,
    buildit_header: &str,
    pts: &[Point],
    buildit: &[(u64, f64)],
) -> (Table, Plot) {
    let mut t = Table::new(
        name,
        title,
        &[
            "n",
            "runs",
            "with check runs",
            "BuildIt runs (2n + 1)",
            "time (ms)",
            buildit_header,
        ],
    );
    for p in pts {
        let b = buildit.iter().find(|b| b.0 == p.n);
        t.push(vec![
            p.n.into(),
            p.stats.runs.into(),
            p.stats.total_runs.into(),
            (2 * p.n + 1).into(),
            Cell::float(p.ms, 3),
            b.map(|b| Cell::float(b.1, 0)).unwrap_or(Cell::Missing),
        ]);
    }
    let plot = runs_plot(name, plot_title, "ifs", pts, ("2n + 1", |n| 2 * n + 1));
    (t, plot)
}

#[augur::staged]
fn nested(ctx: &Ctx) -> Result<(Table, Plot)> {
    let ds = sizes(ctx, &[1, 2, 3, 4, 5, 6, 7, 8], &[1, 3]);
    let pts = sweep(
        ctx,
        "nested",
        &ds,
        ctx.reps(10),
        |d| programs::nested_loops(d as u32),
        |d, x| {
            if x <= 0 {
                0
            } else {
                x.pow(d as u32)
            }
        },
    )?;
    let mut t = Table::new(
        "nested-loops",
        "Dyn loops nested d deep",
        &[
            "d",
            "runs",
            "with check runs",
            "BuildIt runs (2d + 1)",
            "time (ms)",
        ],
    );
    for p in &pts {
        t.push(vec![
            p.n.into(),
            p.stats.runs.into(),
            p.stats.total_runs.into(),
            (2 * p.n + 1).into(),
            Cell::float(p.ms, 3),
        ]);
    }
    Ok((
        t,
        runs_plot(
            "nested-loops",
            "Nested dyn loops",
            "depth",
            &pts,
            ("2d + 1", |d| 2 * d + 1),
        ),
    ))
}

fn prophecies(ctx: &Ctx) -> Result<(Table, Plot)> {
    let ks = sizes(ctx, &[1, 2, 4, 8, 16, 32], &[1, 4, 16]);
    let mut runs = Vec::new();
    for mode in [ProphecyMode::Adaptive, ProphecyMode::Paper] {
        let pts = sweep(
            ctx,
            "prophecies",
            &ks,
            ctx.reps(5),
            |k| programs::prophecies_in_sequence(mode, k as usize, false),
            |k, x| programs::prophecies_in_sequence_ref(k as usize, x),
        )?;
        runs.push((mode, pts));
    }
    let mut t = Table::new(
        "prophecies",
        "k prophecies violated in sequence (each read, then a dyn if, then required)",
        &[
            "k",
            "runs (adaptive)",
            "attempts (adaptive)",
            "time (ms, adaptive)",
            "runs (paper mode)",
            "attempts (paper mode)",
            "time (ms, paper mode)",
            "BuildIt runs",
        ],
    );
    let (adaptive, paper) = (&runs[0].1, &runs[1].1);
    for (a, p) in adaptive.iter().zip(paper) {
        let b = (a.n == BUILDIT_PROPHECY_RUNS.0 as u64).then_some(BUILDIT_PROPHECY_RUNS.1);
        t.push(vec![
            a.n.into(),
            a.stats.total_runs.into(),
            a.stats.attempts.into(),
            Cell::float(a.ms, 3),
            p.stats.total_runs.into(),
            p.stats.attempts.into(),
            Cell::float(p.ms, 3),
            b.into(),
        ]);
    }
    let plot = Plot::lines(
        "prophecies",
        "Prophecies violated in sequence: first-stage runs",
        "prophecies",
        "runs",
    )
    .series(
        "augur (adaptive)",
        adaptive
            .iter()
            .map(|p| (p.n as f64, p.stats.total_runs as f64)),
    )
    .series(
        "augur (paper mode)",
        paper
            .iter()
            .map(|p| (p.n as f64, p.stats.total_runs as f64)),
    )
    .series(
        "BuildIt",
        [(
            BUILDIT_PROPHECY_RUNS.0 as f64,
            BUILDIT_PROPHECY_RUNS.1 as f64,
        )],
    );
    Ok((t, plot))
}

#[augur::staged]
fn runs_plot(
    name: &str,
    title: &str,
    x: &str,
    pts: &[Point],
    (formula, buildit): (&str, fn(u64) -> u64),
) -> Plot {
    Plot::lines(name, &format!("{title}: first-stage runs"), x, "runs")
        .series(
            "augur (exploration runs)",
            pts.iter().map(|p| (p.n as f64, p.stats.runs as f64)),
        )
        .series(
            "augur (with check runs)",
            pts.iter().map(|p| (p.n as f64, p.stats.total_runs as f64)),
        )
        .series(
            &format!("BuildIt ({formula})"),
            pts.iter().map(|p| (p.n as f64, buildit(p.n) as f64)),
        )
}

#[augur::staged]
fn unrolled(ctx: &Ctx) -> Result<(Table, Plot)> {
    let ns = sizes(ctx, &[16, 32, 64, 128, 256], &[16, 128]);
    let pts = sweep(
        ctx,
        "unrolled ifs",
        &ns,
        ctx.reps(10),
        |n| programs::unrolled_ifs(n as i64),
        |n, x| programs::unrolled_ifs_ref(n as i64, x),
    )?;
    let (n, _, ms) = BUILDIT_SAMPLE18;
    Ok(ifs_table(
        ("unrolled-ifs", "Unrolled ifs"),
        "n dyn ifs with nothing between (BuildIt's sample18 at n = 128)",
        "BuildIt (ms, whole process)",
        &pts,
        &[(n, ms)],
    ))
}

#[augur::staged]
fn machine(ctx: &Ctx) -> Result<(Table, Plot)> {
    let ns = sizes(ctx, &[125, 250, 500, 1000, 2000, 4000], &[50, 100]);
    let pts = sweep(
        ctx,
        "state machine",
        &ns,
        ctx.reps(1),
        |n| programs::state_machine(n as u32),
        |n, x| programs::state_machine_ref(n as u32, x),
    )?;
    let mut t = Table::new(
        "state-machine",
        "A dyn loop over a Static state of N values (N copies of the body)",
        &[
            "N",
            "runs",
            "with check runs",
            "recorded operations",
            "operations performed",
            "time (ms)",
            "µs per state",
            "peak heap (MB)",
        ],
    );
    for p in &pts {
        t.push(vec![
            p.n.into(),
            p.stats.runs.into(),
            p.stats.total_runs.into(),
            p.stats.nodes.into(),
            p.stats.operations.into(),
            Cell::float(p.ms, 1),
            Cell::float(p.ms * 1000.0 / p.n as f64, 1),
            Cell::float(p.peak_mb, 1),
        ]);
    }
    let plot = Plot::lines(
        "state-machine",
        "State machine over N first-stage states: extraction time",
        "states",
        "ms",
    )
    .series("augur, dyn loop", pts.iter().map(|p| (p.n as f64, p.ms)));
    Ok((t, plot))
}

/// One point of the keyed state machine: N, functions, min ms, peak MB.
type KeyedPoint = (u64, usize, f64, f64);

/// The state machine as a keyed family of staged functions, one per state:
/// each member is extracted once, from its key, with no replay of other
/// states, so the work grows with N.
#[augur::staged]
fn machine_keyed(ctx: &Ctx) -> Result<(Table, Plot)> {
    let ns = sizes(ctx, &[1000, 4000, 16000, 64000], &[100, 1000]);
    let bar = ctx.bar(ns.len(), "keyed state machine");
    let mut pts: Vec<KeyedPoint> = Vec::new();
    for &n in &ns {
        bar.set_message(format!("N = {n}"));
        super::heap::reset_peak();
        let base = super::heap::live();
        let (min, _, (ex, entry)) =
            time(ctx.reps(1), || Ok(programs::state_machine_keyed(n as u32)?))?;
        let peak_mb = super::heap::peak_since(base) as f64 / 1e6;
        for x in [-1, 2, 3, 7] {
            let got = ex.interpret(entry.clone(), &[x.into(), 0i64.into(), 0i64.into()])?;
            let want = programs::state_machine_ref(n as u32, x);
            if got != Value::I64(want) {
                return Err(
                    format!("keyed state machine N = {n}: {got:?} for {x}, not {want}").into(),
                );
            }
        }
        pts.push((n, ex.functions().count(), ms(min), peak_mb));
        bar.inc(1);
    }
    bar.finish_and_clear();
    let mut t = Table::new(
        "state-machine-keyed",
        "The same state machine as a keyed family: one staged function per state, each calling the next in tail position",
        &["N", "functions", "time (ms)", "µs per state", "peak heap (MB)"],
    );
    for &(n, functions, ms, peak_mb) in &pts {
        t.push(vec![
            n.into(),
            functions.into(),
            Cell::float(ms, 1),
            Cell::float(ms * 1000.0 / n as f64, 1),
            Cell::float(peak_mb, 1),
        ]);
    }
    let plot = Plot::lines(
        "state-machine-keyed",
        "State machine as keyed functions: extraction time",
        "states",
        "ms",
    )
    .series(
        "augur, keyed functions",
        pts.iter().map(|p| (p.0 as f64, p.2)),
    );
    Ok((t, plot))
}

/// The first match's span of `staged` on `hay`, by the interpreter.
fn interpreted_find(staged: &augur_regex::Staged, hay: &[u8]) -> Result<Option<(i64, i64)>> {
    let mut it = augur::Interpreter::new();
    let h = it.memory_mut().alloc_slice(hay);
    let (n, zero) = (Value::I64(hay.len() as i64), Value::I64(0));
    let Value::I64(end) = staged.find.interpret_in(&mut it, &[h, n, zero])? else {
        return Err("find gave no i64".into());
    };
    if end < 0 {
        return Ok(None);
    }
    let args = [h, n, zero, Value::I64(end)];
    let Value::I64(start) = staged.rfind.interpret_in(&mut it, &args)? else {
        return Err("rfind gave no i64".into());
    };
    Ok(Some((start, end)))
}

/// The patterns of [`machine_dfa`] with a haystack each, a match after
/// a near miss: `[a-q][^u-z]{k}x` over bytes has 2^(k+1) + 1 states in
/// search mode, none deeper than k + 2 bytes; in full runs also
/// `Tom.{10,25}river|river.{10,25}Tom`, 323,152 states over bytes (the
/// augur-regex issue's large DFA).
fn dfa_patterns(ctx: &Ctx) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = sizes(ctx, &[5, 7, 9, 11, 13], &[3, 5])
        .into_iter()
        .map(|k| {
            let k = k as usize;
            let hay = format!("zz{}u{}x!", "b".repeat(k), "a".repeat(k + 1));
            (format!("[a-q][^u-z]{{{k}}}x"), hay)
        })
        .collect();
    if !ctx.quick {
        let hay = format!("Tom{}rive Tom{}river!", " ".repeat(12), " ".repeat(20));
        out.push(("Tom.{10,25}river|river.{10,25}Tom".into(), hay));
    }
    out
}

/// A regex DFA as a state machine over resumable points keyed by thread
/// sets (augur-regex), patterns of [`dfa_patterns`].
fn machine_dfa(ctx: &Ctx) -> Result<(Table, Plot)> {
    let patterns = dfa_patterns(ctx);
    let bar = ctx.bar(patterns.len(), "regex DFA");
    let mut t = Table::new(
        "state-machine-dfa",
        "A regex DFA as resumable points keyed by state sets, over bytes: is_match, find and rfind staged",
        &["pattern", "DFA states", "runs", "time (ms)", "µs per state", "peak heap (MB)"],
    );
    let mut pts = Vec::new();
    for (pattern, hay) in &patterns {
        bar.set_message(pattern.clone());
        let opts = augur_regex::Options {
            unicode: false,
            ..Default::default()
        };
        let re = augur_regex::Regex::with(pattern, &opts)?;
        let builder = augur::Builder::new()
            .max_runs(20_000_000)
            .max_work(u64::MAX)
            .max_operations(64_000_000)
            .max_memory(12 << 30);
        super::heap::reset_peak();
        let base = super::heap::live();
        let t0 = std::time::Instant::now();
        let staged = re.stage(&builder)?;
        let elapsed = ms(t0.elapsed());
        let peak_mb = super::heap::peak_since(base) as f64 / 1e6;
        // A match after a near miss, checked against the regex crate.
        let want = regex::bytes::Regex::new(&format!("(?-u){pattern}"))
            .map_err(|e| e.to_string())?
            .find(hay.as_bytes())
            .map(|m| (m.start() as i64, m.end() as i64));
        let got = interpreted_find(&staged, hay.as_bytes())?;
        if got != want || want.is_none() {
            return Err(
                format!("DFA {pattern}: {got:?} on {hay:?}, the regex crate {want:?}").into(),
            );
        }
        let runs: u64 = [
            staged.is_match.stats(),
            staged.find.stats(),
            staged.rfind.stats(),
        ]
        .iter()
        .map(|s| s.runs)
        .sum();
        let states = staged.states.0 as u64;
        t.push(vec![
            pattern.as_str().into(),
            states.into(),
            runs.into(),
            Cell::float(elapsed, 1),
            Cell::float(elapsed * 1000.0 / states as f64, 1),
            Cell::float(peak_mb, 1),
        ]);
        pts.push((states as f64, elapsed));
        bar.inc(1);
    }
    bar.finish_and_clear();
    t.note("DFA states: the forward automaton's; runs: all three functions'; compare µs per state with the keyed state machine's");
    let plot = Plot::lines(
        "state-machine-dfa",
        "A regex DFA over resumable points: extraction time",
        "DFA states",
        "ms",
    )
    .log(true, true)
    .series("augur, resumable DFA", pts);
    Ok((t, plot))
}

/// Runs the experiment.
#[augur::staged]
pub fn run(ctx: &Ctx) -> Result<Outcome> {
    let mut out = Outcome::default();
    for part in [
        straight,
        ifs,
        unrolled,
        nested,
        machine,
        machine_keyed,
        machine_dfa,
        prophecies,
    ] {
        let (t, p) = part(ctx)?;
        out.tables.push(t);
        out.plots.push(p);
    }
    Ok(out)
}
