//! Prophecy benchmark: attempts, runs and time to settle `k` prophecies
//! violated one after another, in paper mode (restart at the first
//! violation, the paper's Algorithm 3), collect mode (join every
//! violation of a sweep, then restart) and adaptive mode (the default).
//!
//! `cargo bench -p augur-cli --bench prophecy` prints markdown tables;
//! `-- --quick` takes fewer repetitions (what `cargo test --benches` runs).
//!
//! Three programs (`augur_cli::programs`' prophecy programs):
//! * **independent** (`prophecies_in_sequence`, not late): `k` prophecies,
//!   each read (its prediction decides a statement), then a dyn `if`, then
//!   required. Every requirement is reached whatever the predictions:
//!   BuildIt takes 185 runs at k = 16.
//! * **late** (`prophecies_in_sequence`, late): the same, but each
//!   requirement sits on the `else` side, which exploration reaches last:
//!   paper mode re-explores everything before each violation (quadratic,
//!   like BuildIt), collect mode sweeps once.
//! * **chained** (`prophecies_chained`): all predictions are read first;
//!   prophecy `i + 1` is required only where prophecy `i` is predicted
//!   true, so each attempt can only discover the next one: no mode can do
//!   better than `k` restarts.
//!
//! Times are the minimum over repetitions (noise only adds time), with the
//! median beside it.

use augur::{Extracted, ProphecyMode, Stats};
use augur_cli::programs::{self, Fn1};
use std::hint::black_box;
use std::time::{Duration, Instant};

/// One of the programs, extracted with a mode at a size `k`.
type Make = fn(ProphecyMode, usize) -> Extracted<Fn1>;

struct Row {
    k: usize,
    mode: ProphecyMode,
    stats: Stats,
    min: Duration,
    median: Duration,
}

#[augur::staged]
fn measure(
    quick: bool,
    k: usize,
    mode: ProphecyMode,
    f: Make,
    reference: fn(usize, i64) -> i64,
) -> Row {
    let first = f(mode, k);
    for x in [-1, 0, 1, (k / 2) as i64, k as i64 + 3] {
        let got = first.interpret(&[x.into()]).expect("interprets");
        assert_eq!(got, reference(k, x).into(), "k = {k}, x = {x}");
    }
    let (min_reps, budget) = if quick {
        (1, Duration::from_millis(20))
    } else {
        (5, Duration::from_millis(600))
    };
    let start = Instant::now();
    let mut times = Vec::new();
    while times.len() < min_reps || (times.len() < 200 && start.elapsed() < budget) {
        let t = Instant::now();
        let e = black_box(f(mode, k));
        times.push(t.elapsed());
        assert_eq!(e.c_code(), first.c_code(), "deterministic");
    }
    times.sort();
    Row {
        k,
        mode,
        stats: first.stats().clone(),
        min: times[0],
        median: times[times.len() / 2],
    }
}

#[augur::staged]
fn table(title: &str, rows: &[Row]) {
    println!("\n### {title}\n");
    println!("| k | mode | attempts | prophecy restarts | runs per attempt | total runs | time min (median) |");
    println!("|---:|---|---:|---:|---|---:|---:|");
    for r in rows {
        let per = &r.stats.runs_per_attempt;
        let per = if per.len() > 6 {
            format!("{}, {}, … , {}", per[0], per[1], per[per.len() - 1])
        } else {
            per.iter()
                .map(|n| n.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        };
        println!(
            "| {} | {:?} | {} | {} | {} | {} | {:.3} ms ({:.3}) |",
            r.k,
            r.mode,
            r.stats.attempts,
            r.stats.prophecy_restarts,
            per,
            r.stats.total_runs,
            r.min.as_secs_f64() * 1e3,
            r.median.as_secs_f64() * 1e3
        );
    }
}

fn main() {
    // Under `cargo test --benches` cargo passes no `--bench`: run quickly.
    let args: Vec<String> = std::env::args().collect();
    let quick = args.iter().any(|a| a == "--quick") || !args.iter().any(|a| a == "--bench");
    let ks: &[usize] = if quick {
        &[1, 4, 16]
    } else {
        &[1, 2, 4, 8, 16, 32, 64]
    };
    for (title, f, reference) in [
        (
            "independent violations (BuildIt, paper mode: k = 16 → 185 runs)",
            (|mode, k| programs::prophecies_in_sequence(mode, k, false).expect("extracts")) as Make,
            programs::prophecies_in_sequence_ref as fn(usize, i64) -> i64,
        ),
        (
            "late violations (each on the side explored last)",
            |mode, k| programs::prophecies_in_sequence(mode, k, true).expect("extracts"),
            programs::prophecies_in_sequence_ref,
        ),
        (
            "chained violations (each found only once the previous holds)",
            |mode, k| programs::prophecies_chained(mode, k).expect("extracts"),
            programs::prophecies_chained_ref,
        ),
    ] {
        let mut rows = Vec::new();
        for &k in ks {
            let paper = f(ProphecyMode::Paper, k).c_code();
            for mode in [
                ProphecyMode::Paper,
                ProphecyMode::Collect,
                ProphecyMode::Adaptive,
            ] {
                assert_eq!(paper, f(mode, k).c_code(), "{mode:?} agrees at k = {k}");
                rows.push(measure(quick, k, mode, f, reference));
            }
        }
        table(title, &rows);
    }
}
