//! First-stage runs and time of the paper's DSL programs (its Tables
//! "einsum-reruns" and "convolutionrelu-reruns"), with BuildIt's figures
//! from the paper beside ours.
//!
//! ## Recorded
//!
//! 2-core x86-64; runs include check runs.
//!
//! **einsum** (kernel launches staged once, as statements): matmul with
//! prophecies 29 runs in 4 attempts, 1.25 ms (BuildIt: 113 + 7 runs, 38
//! ms); in the paper's restart-at-once mode 45 runs in 7 attempts, 1.7 ms;
//! copy-all 13 runs, 0.75 ms (BuildIt: 25 runs, 9.2 ms); matvec with
//! prophecies 23 runs, 1.05 ms (BuildIt: 89 + 7, 27 ms).
//!
//! **conv/ReLU**, the listing's whole benchmark (two loops of 10 turns, the
//! first with a flag-dependent threshold): 32 runs (4 of them check runs)
//! in 3 attempts, 1.3 ms; in the paper's restart-at-once mode 30 runs in 4
//! attempts, 1.2 ms. BuildIt (the paper's table): 72 runs + 4 prophecy
//! runs, 14.7 ms.

use super::{ms, time, Ctx, Outcome};
use crate::programs::einsum::{Benchmark, Kind};
use crate::programs::nn::paper_benchmark_with;
use crate::report::{Cell, Plot, Table};
use crate::Result;
use augur::{Builder, ProphecyMode, Stats};
use augur_einsum::Movement;

/// Extracts a program with a builder; returns its statistics.
type Extract = Box<dyn Fn(&Builder) -> Result<Stats>>;

/// One program of the table: how to extract it and BuildIt's figures.
struct Case {
    program: &'static str,
    strategy: &'static str,
    mode: ProphecyMode,
    /// BuildIt (the paper): control-flow runs, prophecy runs, µs.
    buildit: (u64, Option<u64>, f64),
    extract: Extract,
}

/// The einsum size of the paper's first-stage table.
const EINSUM_SIZE: usize = 1024;
/// The conv/ReLU sizes of the listing's benchmark.
const NN_SIZE: (usize, usize) = (1024000, 3);

#[augur::staged]
fn einsum_case(kind: Kind, m: Movement, mode: ProphecyMode) -> Case {
    let paper = match (kind, m) {
        (Kind::MatMul, Movement::CopyAll) => (25, None, 9212.0),
        (Kind::MatMul, Movement::Unified) => (25, None, 8336.0),
        (Kind::MatMul, Movement::Prophecy) => (113, Some(7), 38335.0),
        (Kind::MatVec, Movement::CopyAll) => (19, None, 7154.0),
        (Kind::MatVec, Movement::Unified) => (19, None, 6180.0),
        (Kind::MatVec, Movement::Prophecy) => (89, Some(7), 27167.0),
    };
    Case {
        program: kind.name(),
        strategy: strategy_name(m),
        mode,
        buildit: paper,
        extract: Box::new(move |b| {
            let e = Benchmark::paper(kind, EINSUM_SIZE, m).extract_with(b)?;
            Ok(e.stats().clone())
        }),
    }
}

#[augur::staged]
fn nn_case(fusion: bool, mode: ProphecyMode) -> Case {
    Case {
        program: "conv-relu",
        strategy: if fusion {
            "fusion enabled"
        } else {
            "fusion disabled"
        },
        mode,
        buildit: if fusion {
            (72, Some(4), 14701.0)
        } else {
            (33, None, 9872.0)
        },
        extract: Box::new(move |b| {
            let (n, k) = NN_SIZE;
            Ok(paper_benchmark_with(b, n, k, fusion)?.stats().clone())
        }),
    }
}

/// A strategy as the command line and the tables spell it.
#[augur::staged]
pub fn strategy_name(m: Movement) -> &'static str {
    match m {
        Movement::CopyAll => "copy-all",
        Movement::Unified => "unified",
        Movement::Prophecy => "prophecy",
    }
}

fn cases() -> Vec<Case> {
    let mut out = Vec::new();
    for kind in [Kind::MatMul, Kind::MatVec] {
        for m in Movement::ALL {
            out.push(einsum_case(kind, m, ProphecyMode::Adaptive));
        }
        out.push(einsum_case(kind, Movement::Prophecy, ProphecyMode::Paper));
    }
    out.push(nn_case(false, ProphecyMode::Adaptive));
    out.push(nn_case(true, ProphecyMode::Adaptive));
    out.push(nn_case(true, ProphecyMode::Paper));
    out
}

/// One measured row.
struct Row {
    case: Case,
    stats: Stats,
    min_ms: f64,
    median_ms: f64,
}

fn measure(ctx: &Ctx) -> Result<Vec<Row>> {
    let cases = cases();
    let bar = ctx.bar(cases.len(), "first stage");
    let mut rows = Vec::new();
    for case in cases {
        bar.set_message(format!("{} {}", case.program, case.strategy));
        let builder = Builder::new().prophecy_mode(case.mode);
        let (min, median, stats) = time(ctx.reps(20), || (case.extract)(&builder))?;
        rows.push(Row {
            case,
            stats,
            min_ms: ms(min),
            median_ms: ms(median),
        });
        bar.inc(1);
    }
    bar.finish_and_clear();
    Ok(rows)
}

#[augur::staged]
fn mode_name(m: ProphecyMode) -> &'static str {
    match m {
        ProphecyMode::Paper => "paper",
        ProphecyMode::Collect => "collect",
        ProphecyMode::Adaptive => "adaptive",
    }
}

#[augur::staged]
fn table(rows: &[Row]) -> Table {
    let mut t = Table::new(
        "runs",
        "First stage of the paper's programs (einsum at 1024, conv/ReLU at 1024000 × 3): ours against BuildIt",
        &[
            "program",
            "strategy",
            "prophecy mode",
            "runs",
            "check runs",
            "prophecy attempts",
            "time (ms)",
            "median (ms)",
            "BuildIt runs",
            "BuildIt prophecy runs",
            "BuildIt time (ms)",
            "BuildIt / ours (time)",
        ],
    );
    for r in rows {
        let (b_runs, b_prophecy, b_us) = r.case.buildit;
        t.push(vec![
            r.case.program.into(),
            r.case.strategy.into(),
            mode_name(r.case.mode).into(),
            r.stats.total_runs.into(),
            r.stats.check_runs.into(),
            r.stats.attempts.into(),
            Cell::float(r.min_ms, 2),
            Cell::float(r.median_ms, 2),
            b_runs.into(),
            b_prophecy.into(),
            Cell::float(b_us / 1e3, 1),
            Cell::float(b_us / 1e3 / r.min_ms, 1),
        ]);
    }
    t.note(format!(
        "ours: {} build on this machine, minimum over repetitions; runs count every execution of the closure, check runs included",
        if cfg!(debug_assertions) { "a debug" } else { "release" }
    ));
    t.note("BuildIt: the paper's tables (control-flow runs + prophecy runs, first-stage time)");
    t
}

#[augur::staged]
fn plot(rows: &[Row]) -> Plot {
    let label = |r: &Row| {
        let mode = if r.case.mode == ProphecyMode::Paper {
            " *"
        } else {
            ""
        };
        format!("{} {}{mode}", r.case.program, r.case.strategy)
    };
    let cats: Vec<String> = rows.iter().map(label).collect();
    Plot::bars(
        "time",
        "First-stage time (ms, log scale; * = paper prophecy mode)",
        &cats,
        "ms",
    )
    .log(false, true)
    .series(
        "augur",
        rows.iter().enumerate().map(|(i, r)| (i as f64, r.min_ms)),
    )
    .series(
        "BuildIt (paper)",
        rows.iter()
            .enumerate()
            .map(|(i, r)| (i as f64, r.case.buildit.2 / 1e3)),
    )
}

/// Runs the experiment.
#[augur::staged]
pub fn run(ctx: &Ctx) -> Result<Outcome> {
    let rows = measure(ctx)?;
    Ok(Outcome {
        tables: vec![table(&rows)],
        plots: vec![plot(&rows)],
    })
}
