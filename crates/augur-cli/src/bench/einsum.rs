//! The einsum DSL's data movement: bytes each strategy moves per turn, and
//! the time of the CPU-simulated GPU program (kernels as block × thread
//! loops, transfers as copies, every byte counted by the runtime), beside
//! the same program compiled for the CPU alone.
//!
//! **Bytes moved per turn** of the paper's benchmark programs at 1024
//! (counted by the simulated runtime and, identically, by the CUDA runtime
//! on a GPU):
//!
//! | program | copy all | unified | prophecy |
//! |---|---:|---:|---:|
//! | matmul `z = x y` | 50,331,648 | 0 (on demand) | 12,582,912 (x, y in; z out) |
//! | matmul `z += x y` | 50,331,648 | 0 | 16,777,216 (z in too) |
//! | matvec `z = x y` | 16,809,984 | 0 | 4,202,496 |
//!
//! The third table sets the CPU code the DSL generates by default
//! ([`Schedule::Auto`](augur_einsum::Schedule), OpenMP) beside OpenBLAS and
//! the paper's loops ([`openblas`](super::openblas)).

use super::{us, Ctx, Outcome};
use crate::programs::einsum::{Accumulate, Benchmark, Kind, Native};
use crate::report::{Cell, Plot, Table};
use crate::Result;
use augur_einsum::{compile_cpu, compile_simulated, Movement, Program};
use std::time::{Duration, Instant};

/// The inputs of a benchmark, filled deterministically.
struct Buffers {
    x: Vec<f32>,
    y: Vec<f32>,
    z: Vec<f32>,
}

impl Buffers {
    #[augur::staged]
    fn new(b: &Benchmark) -> Buffers {
        let [xs, ys, zs] = b.kind.shapes(b.sizes);
        let fill = |s: &[usize], m: usize, scale: f32| {
            (0..s.iter().product::<usize>())
                .map(|k| (k % m) as f32 * scale - 0.5)
                .collect()
        };
        Buffers {
            x: fill(&xs, 7, 0.25),
            y: fill(&ys, 5, 0.5),
            z: vec![0.0; zs.iter().product()],
        }
    }

    /// Runs `turns` turns of `p`.
    #[augur::staged]
    fn run(&mut self, p: &Program<Native>, turns: i32) {
        // SAFETY: the buffers hold the element counts of the shapes the
        // program was generated for.
        unsafe {
            (p.get())(
                self.x.as_mut_ptr(),
                self.y.as_mut_ptr(),
                self.z.as_mut_ptr(),
                turns,
            )
        };
    }
}

/// Bytes `b`'s simulated program moves in one turn, checked against what
/// the strategy should move.
#[augur::staged]
pub(crate) fn bytes_per_turn(b: &Benchmark) -> Result<i64> {
    let p = compile_simulated(&b.extract()?)?;
    let mut buf = Buffers::new(b);
    p.reset()?;
    buf.run(&p, 1);
    let moved = p.counters()?.moved();
    if moved != b.expected_bytes_per_turn() {
        return Err(format!(
            "{} moved {moved} bytes, not {}",
            b.function_name(),
            b.expected_bytes_per_turn()
        )
        .into());
    }
    Ok(moved)
}

#[augur::staged]
fn bytes_table(ctx: &Ctx) -> Result<(Table, Plot)> {
    let size = if ctx.quick { 64 } else { 1024 };
    let mut t = Table::new(
        "bytes",
        &format!("Bytes moved per turn at size {size} (CPU-simulated GPU, counted by the runtime)"),
        &[
            "program",
            "statement",
            "copy-all",
            "unified",
            "prophecy",
            "prophecy / copy-all",
        ],
    );
    let mut plot_rows = Vec::new();
    let bar = ctx.bar(4, "bytes");
    for kind in [Kind::MatMul, Kind::MatVec] {
        for accumulate in [Accumulate::No, Accumulate::Yes] {
            let moved = Movement::ALL
                .iter()
                .map(|&m| {
                    bytes_per_turn(&Benchmark {
                        accumulate,
                        ..Benchmark::paper(kind, size, m)
                    })
                })
                .collect::<Result<Vec<i64>>>()?;
            let stmt = match accumulate {
                Accumulate::No => "z = x y",
                Accumulate::Yes => "z += x y",
            };
            t.push(vec![
                kind.name().into(),
                stmt.into(),
                moved[0].into(),
                moved[1].into(),
                moved[2].into(),
                Cell::float(moved[2] as f64 / moved[0] as f64, 2),
            ]);
            plot_rows.push((format!("{} {stmt}", kind.name()), moved));
            bar.inc(1);
        }
    }
    bar.finish_and_clear();
    t.note("every count equals the bytes the strategy must move (checked)");
    let cats: Vec<String> = plot_rows.iter().map(|r| r.0.clone()).collect();
    let series = |i: usize| {
        plot_rows
            .iter()
            .enumerate()
            .map(move |(c, r)| (c as f64, r.1[i] as f64 / 1e6))
    };
    let plot = Plot::bars(
        "bytes",
        &format!("Megabytes moved per turn at {size} (unified memory moves none explicitly)"),
        &cats,
        "MB",
    )
    .series("copy-all", series(0))
    .series("prophecy", series(2));
    Ok((t, plot))
}

/// Minimum time per turn of `p` over `reps` calls of `turns` turns.
#[augur::staged]
fn time_per_turn(p: &Program<Native>, b: &Benchmark, reps: usize, turns: i32) -> Result<Duration> {
    let mut buf = Buffers::new(b);
    buf.run(p, 1);
    if b.sizes.0 <= 256 {
        let want = b.reference(&buf.x, &buf.y, 1);
        let worst = want
            .iter()
            .zip(&buf.z)
            .map(|(w, g)| (w - g).abs())
            .fold(0f32, f32::max);
        if worst > 1e-3 {
            return Err(format!("{}: off by {worst}", b.function_name()).into());
        }
    }
    let mut best = Duration::MAX;
    for _ in 0..reps {
        let t = Instant::now();
        buf.run(p, turns);
        best = best.min(t.elapsed() / turns as u32);
    }
    Ok(best)
}

/// µs per turn of `b`'s simulated program (results checked up to 256).
#[augur::staged]
pub(crate) fn sim_time_per_turn(b: &Benchmark, reps: usize) -> Result<f64> {
    let p = compile_simulated(&b.extract()?)?;
    Ok(us(time_per_turn(&p, b, reps, 1)?))
}

fn sim_times(ctx: &Ctx) -> Result<(Table, Plot)> {
    let sizes: &[usize] = if ctx.quick {
        &[32, 64]
    } else {
        &[64, 128, 256, 512]
    };
    let mut t = Table::new(
        "simulated-time",
        "Matmul per turn, µs: CPU loops, and the GPU program simulated on the CPU per strategy",
        &["size", "cpu", "sim copy-all", "sim unified", "sim prophecy"],
    );
    let bar = ctx.bar(sizes.len() * 4, "simulate");
    let mut series: Vec<Vec<(f64, f64)>> = vec![Vec::new(); 4];
    for &size in sizes {
        let mut row = vec![size.into()];
        let cpu = Benchmark {
            gpu: false,
            ..Benchmark::paper(Kind::MatMul, size, Movement::CopyAll)
        };
        let runs = [(cpu, false)]
            .into_iter()
            .chain(Movement::ALL.map(|m| (Benchmark::paper(Kind::MatMul, size, m), true)));
        for (i, (b, simulated)) in runs.enumerate() {
            bar.set_message(format!("{size} {}", b.function_name()));
            let ex = b.extract()?;
            let p = if simulated {
                compile_simulated(&ex)?
            } else {
                compile_cpu(&ex, false)?
            };
            let turns = if size >= 512 { 1 } else { 3 };
            let d = us(time_per_turn(&p, &b, ctx.reps(5), turns)?);
            row.push(Cell::float(d, 0));
            series[i].push((size as f64, d));
            bar.inc(1);
        }
        t.push(row);
    }
    bar.finish_and_clear();
    t.note("results checked against plain Rust up to size 256");
    let names = ["cpu", "sim copy-all", "sim unified", "sim prophecy"];
    let plot = names.iter().zip(series).fold(
        Plot::lines(
            "simulated-time",
            "Matmul per turn: CPU and simulated GPU",
            "size",
            "µs",
        )
        .log(true, true),
        |p, (name, pts)| p.series(name, pts),
    );
    Ok((t, plot))
}

/// Runs the experiment.
#[augur::staged]
pub fn run(ctx: &Ctx) -> Result<Outcome> {
    let mut out = Outcome::default();
    for part in [bytes_table, sim_times, super::openblas::table] {
        let (t, p) = part(ctx)?;
        out.tables.push(t);
        out.plots.push(p);
    }
    Ok(out)
}
