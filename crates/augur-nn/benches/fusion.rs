//! The paper's conv/ReLU table (§4.4): 1-D convolution followed by a ReLU,
//! inputs of 10240, 102400 and 1024000 floats, filters of 3 and 9 taps,
//! fused and unfused, constant and uniformly random inputs; the minimum of
//! 10 runs, in µs. Beside ours: the code BuildIt generates for the same
//! program (`augur_nn::programs::buildit_c`), compiled with the same
//! compiler and flags (gcc -O3) in the same run, and the paper's numbers
//! (i9-12900HK). Then the first stage of the listing's whole benchmark.
//!
//! `cargo bench -p augur-nn --bench fusion` (`-- --quick`: the smallest size
//! and 3 runs, what `cargo test --benches` runs).

use augur::exec::compile::{compile, CompileOptions, DEFAULT_FLAGS};
use augur::{Builder, ProphecyMode};
use augur_nn::programs::{buildit_c, conv_relu, paper_benchmark, ConvRelu};
use std::time::{Duration, Instant};

/// The paper's table: (n, k, unfused µs, fused µs).
const PAPER: [(usize, usize, u32, u32); 6] = [
    (10240, 3, 26, 25),
    (102400, 3, 267, 243),
    (1024000, 3, 2594, 2341),
    (10240, 9, 76, 73),
    (102400, 9, 770, 742),
    (1024000, 9, 7953, 7451),
];

fn o3() -> CompileOptions {
    CompileOptions {
        flags: DEFAULT_FLAGS
            .iter()
            .map(|f| if *f == "-O2" { "-O3" } else { f }.to_string())
            .collect(),
        ..CompileOptions::default()
    }
}

struct Rng(u64);
impl Rng {
    fn unit(&mut self) -> f32 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 40) as f32 / (1u64 << 24) as f32
    }
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let runs = if quick { 3 } else { 10 };
    println!("## Conv/ReLU, µs (minimum of {runs} runs; gcc -O3 for both; paper: i9-12900HK)\n");
    println!("| input × filter | input | BuildIt unfused | BuildIt fused | ours unfused | ours fused | fused: BuildIt / ours | paper unfused | paper fused |");
    println!("|---|---|---:|---:|---:|---:|---:|---:|---:|");
    for &(n, k, pu, pf) in PAPER.iter().filter(|p| !quick || p.0 == 10240) {
        for random in [false, true] {
            row(n, k, random, runs, (pu, pf));
        }
    }
    println!();
    first_stage(if quick { 3 } else { 20 });
}

fn row(n: usize, k: usize, random: bool, runs: usize, (pu, pf): (u32, u32)) {
    let mut rng = Rng(42);
    let mut x: Vec<f32> = (0..n)
        .map(|_| if random { rng.unit() * 2.0 - 1.0 } else { 1.0 })
        .collect();
    let mut w: Vec<f32> = (0..k).map(|j| 0.75 - 0.5 * j as f32 / k as f32).collect();
    let lib = compile(&buildit_c(n, k), &o3()).expect("BuildIt's C compiles");
    // SAFETY: both are `float *f(float *, float *)` as written in `buildit_c`.
    let bu: ConvRelu = unsafe { lib.symbol("buildit_conv_relu_unfused") }.unwrap();
    // SAFETY: as above.
    let bf: ConvRelu = unsafe { lib.symbol("buildit_conv_relu_fused") }.unwrap();
    let ours = |fusion| {
        let ex = conv_relu(n, k, fusion).expect("extracts");
        ex.compile_with(&o3()).expect("compiles")
    };
    let (ou, of) = (ours(false), ours(true));
    let mut time = |f: ConvRelu| {
        let mut best = Duration::MAX;
        let mut out = Vec::new();
        for _ in 0..runs {
            let t = Instant::now();
            // SAFETY: x holds n floats and w k; the result is a malloc'ed
            // buffer of n floats, freed below.
            let p = unsafe { f(x.as_mut_ptr(), w.as_mut_ptr()) };
            best = best.min(t.elapsed());
            // SAFETY: p holds n floats; it came from malloc and is freed once.
            unsafe {
                out = std::slice::from_raw_parts(p, n).to_vec();
                libc_free(p);
            }
        }
        (best, out)
    };
    let (tbu, rbu) = time(bu);
    let (tbf, rbf) = time(bf);
    let (tou, rou) = time(ou.get());
    let (tof, rof) = time(of.get());
    assert!(
        rbu == rbf && rbf == rou && rou == rof,
        "the four versions disagree at {n}x{k}"
    );
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    println!(
        "| {n} × {k} | {} | {:.0} | {:.0} | {:.0} | {:.0} | {:.1}× | {pu} | {pf} |",
        if random { "random" } else { "constant" },
        us(tbu),
        us(tbf),
        us(tou),
        us(tof),
        us(tbf) / us(tof)
    );
}

extern "C" {
    #[link_name = "free"]
    fn libc_free(p: *mut f32);
}

fn first_stage(reps: usize) {
    println!("## First stage of the listing's benchmark (1024000 × 3; runs include check runs)\n");
    println!("| mode | runs | of which check runs | prophecy attempts | time (min) | BuildIt |");
    println!("|---|---:|---:|---:|---:|---|");
    for mode in [ProphecyMode::Adaptive, ProphecyMode::Paper] {
        let builder = Builder::new().prophecy_mode(mode);
        let mut best = Duration::MAX;
        let mut stats = None;
        for _ in 0..reps {
            let t = Instant::now();
            let ex = paper_benchmark(&builder, 1024000, 3).expect("extracts");
            best = best.min(t.elapsed());
            stats = Some(ex.stats().clone());
        }
        let s = stats.expect("one repetition");
        println!(
            "| {mode:?} | {} | {} | {} | {:.2} ms | 64 runs + 4 prophecy runs, ~6 ms |",
            s.total_runs,
            s.check_runs,
            s.attempts,
            best.as_secs_f64() * 1e3
        );
    }
}
