//! The einsum DSL's numbers: the first stage (runs, prophecy attempts, time)
//! and the bytes each strategy moves, for the paper's matmul and matvec
//! benchmark programs (`augur_einsum::programs`).
//!
//! `cargo bench -p augur-einsum --bench einsum` prints markdown tables;
//! `-- --quick` takes fewer repetitions and a smaller size for the bytes
//! table (what `cargo test --benches` runs). Times are the minimum over
//! repetitions, with the median beside.
//!
//! BuildIt, on the same matmul program (the paper's Table, and measured on
//! a 2-core machine of this kind): 113 control-flow runs + 7 prophecy runs,
//! ~40 ms with prophecies; 25 runs, ~8 ms for copy-all and unified memory.
//! Matvec: 89 + 7 runs, 27 ms; 19 runs, ~6-7 ms.

use augur::{Builder, ProphecyMode};
use augur_einsum::programs::{Accumulate, Benchmark, Kind};
use augur_einsum::{compile_simulated, Movement};
use std::time::{Duration, Instant};

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let reps = if quick { 3 } else { 30 };
    first_stage(reps);
    bytes(if quick { 64 } else { 1024 });
}

fn first_stage(reps: usize) {
    println!(
        "## First stage (size 1024; runs = every execution of the closure, check runs included)\n"
    );
    println!("| program | strategy | runs | of which check runs | prophecy attempts | runs per attempt | time (min) | median | BuildIt |");
    println!("|---|---|---:|---:|---:|---|---:|---:|---|");
    let modes = Movement::ALL
        .iter()
        .map(|&m| (m, ProphecyMode::Adaptive))
        .chain([(Movement::Prophecy, ProphecyMode::Paper)]);
    for kind in [Kind::MatMul, Kind::MatVec] {
        for (m, mode) in modes.clone() {
            let b = Benchmark::paper(kind, 1024, m);
            let builder = Builder::new().prophecy_mode(mode);
            let mut times = Vec::new();
            let mut stats = None;
            for _ in 0..reps {
                let t = Instant::now();
                let ex = b.extract_with(&builder).expect("extracts");
                times.push(t.elapsed());
                stats = Some(ex.stats().clone());
            }
            let s = stats.expect("one repetition at least");
            let (min, med) = min_median(&mut times);
            let buildit = match (kind, m) {
                (Kind::MatMul, Movement::Prophecy) => "113 + 7 runs, ~40 ms",
                (Kind::MatMul, _) => "25 runs, ~8 ms",
                (Kind::MatVec, Movement::Prophecy) => "89 + 7 runs, ~27 ms",
                (Kind::MatVec, _) => "19 runs, ~6-7 ms",
            };
            println!(
                "| {} | {} | {} | {} | {} | {:?} | {:.2} ms | {:.2} ms | {buildit} |",
                kind.name(),
                if mode == ProphecyMode::Paper {
                    "prophecy (paper mode)"
                } else {
                    m.name()
                },
                s.total_runs,
                s.check_runs,
                s.attempts,
                s.runs_per_attempt,
                ms(min),
                ms(med)
            );
        }
    }
    println!();
}

fn bytes(size: usize) {
    println!("## Bytes moved per turn, size {size} (CPU-simulated GPU, counted by the runtime)\n");
    println!("| program | statement | copy all | unified | prophecy | prophecy / copy all |");
    println!("|---|---|---:|---:|---:|---:|");
    for kind in [Kind::MatMul, Kind::MatVec] {
        for accumulate in [Accumulate::No, Accumulate::Yes] {
            let moved: Vec<i64> = Movement::ALL
                .iter()
                .map(|&m| {
                    let b = Benchmark {
                        accumulate,
                        ..Benchmark::paper(kind, size, m)
                    };
                    let got = simulate_one_turn(&b);
                    assert_eq!(got, b.expected_bytes_per_turn(), "{}", b.function_name());
                    got
                })
                .collect();
            println!(
                "| {} | {} | {} | {} | {} | {:.2} |",
                kind.name(),
                if accumulate == Accumulate::Yes {
                    "z += x y"
                } else {
                    "z = x y"
                },
                moved[0],
                moved[1],
                moved[2],
                moved[2] as f64 / moved[0] as f64
            );
        }
    }
    println!();
}

/// Bytes the simulated program moves in one turn.
fn simulate_one_turn(b: &Benchmark) -> i64 {
    let ex = b.extract().expect("extracts");
    let p = compile_simulated(&ex).expect("compiles");
    let [xs, ys, zs] = b.kind.shapes(b.sizes);
    let buf = |s: &[usize]| vec![1f32; s.iter().product()];
    let (mut x, mut y, mut z) = (buf(&xs), buf(&ys), buf(&zs));
    p.reset().expect("runtime");
    // SAFETY: the buffers hold the shapes' element counts.
    unsafe { (p.get())(x.as_mut_ptr(), y.as_mut_ptr(), z.as_mut_ptr(), 1) };
    p.counters().expect("runtime").moved()
}

fn min_median(times: &mut [Duration]) -> (Duration, Duration) {
    times.sort();
    (times[0], times[times.len() / 2])
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}
