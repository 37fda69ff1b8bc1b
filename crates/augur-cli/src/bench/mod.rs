//! `augur bench`: the experiments, each a function from a [`Ctx`] (quick or
//! full, progress) to tables and plots, and the runner that prints the
//! tables and writes CSV, JSON and SVG files.
//!
//! Every measurement is the minimum over repetitions (noise on a shared
//! machine only ever adds time), with the median beside it where it helps;
//! ratios are taken within one run. Each experiment checks the programs it
//! measures (results against plain Rust, bytes against the expected count)
//! so a row cannot silently measure something else.

pub mod compile;
pub mod distributed;
pub mod einsum;
pub mod first_stage;
pub mod fusion;
pub mod gpu;
pub mod heap;
pub mod interp;
pub mod kernels;
pub mod openblas;
pub mod paper;
pub mod regex;
pub mod scaling;

use crate::report::{Plot, Table};
use crate::Result;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// What an experiment produced.
#[derive(Default)]
pub struct Outcome {
    /// Its tables, in order.
    pub tables: Vec<Table>,
    /// Its plots.
    pub plots: Vec<Plot>,
}

/// How an experiment runs.
pub struct Ctx {
    /// Fewer repetitions and smaller sizes (for tests and a first look).
    pub quick: bool,
    /// Draw progress bars (on stderr, only when it is a terminal).
    pub progress: bool,
    /// Tune schedules where an experiment can (`einsum`'s CPU products).
    pub tune: bool,
}

impl Ctx {
    /// A progress bar over `len` steps, labelled `what`.
    pub fn bar(&self, len: usize, what: &str) -> ProgressBar {
        let target = if self.progress {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        };
        let bar = ProgressBar::with_draw_target(Some(len as u64), target);
        bar.set_style(
            ProgressStyle::with_template("{prefix:>12} [{bar:32}] {pos}/{len} {msg} ({elapsed})")
                .expect("a valid template")
                .progress_chars("=> "),
        );
        bar.set_prefix(what.to_string());
        bar
    }

    /// Repetitions of a measurement: `full` normally, 3 when quick.
    pub fn reps(&self, full: usize) -> usize {
        if self.quick {
            full.min(3)
        } else {
            full
        }
    }
}

/// One experiment of `augur bench`.
pub struct Experiment {
    /// Its name on the command line and in file names.
    pub name: &'static str,
    /// One line on what it measures.
    pub about: &'static str,
    /// Runs it.
    pub run: fn(&Ctx) -> Result<Outcome>,
}

/// Every experiment, in the order `augur bench` runs them.
pub const EXPERIMENTS: [Experiment; 11] = [
    Experiment {
        name: "first-stage",
        about: "first-stage runs and time of the paper's DSL programs, BuildIt's beside",
        run: first_stage::run,
    },
    Experiment {
        name: "scaling",
        about: "runs and time as programs grow: straight-line code, sequential and unrolled ifs, nested loops, a state machine, prophecies in sequence",
        run: scaling::run,
    },
    Experiment {
        name: "fusion",
        about: "conv/ReLU fused and unfused, ours against the C BuildIt generates, compiled alike",
        run: fusion::run,
    },
    Experiment {
        name: "einsum",
        about: "einsum bytes moved and CPU-simulated time per data-movement strategy; CPU matmul and matvec beside OpenBLAS",
        run: einsum::run,
    },
    Experiment {
        name: "kernels",
        about: "einsum's CPU kernels beyond matmul (batched matmul, TTM, MTTKRP, transpose, outer product) beside NumPy's fastest call",
        run: kernels::run,
    },
    Experiment {
        name: "distributed",
        about: "einsum over MPI (C = A B and C = A B^T on 1, 2, 4 ranks) beside ScaLAPACK's pdgemm: time, bytes sent per rank, the plan and the lower bound",
        run: distributed::run,
    },
    Experiment {
        name: "paper",
        about: "the paper's tables regenerated, the paper's numbers beside ours (GPU tables on a GPU machine)",
        run: paper::run,
    },
    Experiment {
        name: "compile",
        about: "the second stage's backends: cc -O2 + load, the JIT and the interpreter, compile time and code speed",
        run: compile::run,
    },
    Experiment {
        name: "interp",
        about: "a staged Brainf*** interpreter: extraction against program length in both forms, the code's speed beside interpreters",
        run: interp::run_all,
    },
    Experiment {
        name: "regex",
        about: "augur-regex beside the regex crate, PCRE2-JIT, RE2 and Hyperscan: counts, spans and matching lines over generated text, build and search times",
        run: regex::run,
    },
    Experiment {
        name: "gpu",
        about: "the paper's GPU tables on this machine's GPU (needs nvidia-smi and a GPU)",
        run: gpu::run,
    },
];

/// What `augur bench` runs without names (`paper` repeats parts of these;
/// `gpu` needs a GPU).
pub const DEFAULT: [&str; 4] = ["first-stage", "scaling", "fusion", "einsum"];

/// The experiment called `name`.
pub fn find(name: &str) -> Result<&'static Experiment> {
    EXPERIMENTS.iter().find(|e| e.name == name).ok_or_else(|| {
        let names: Vec<&str> = EXPERIMENTS.iter().map(|e| e.name).collect();
        format!(
            "no experiment called '{name}'; the experiments are: {}",
            names.join(", ")
        )
        .into()
    })
}

/// Which files to write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Formats {
    /// One CSV file per table.
    pub csv: bool,
    /// One JSON file per experiment (all its tables).
    pub json: bool,
    /// One SVG file per plot.
    pub svg: bool,
}

/// Writes an experiment's files into `dir`; returns their paths.
pub fn write(exp: &str, out: &Outcome, dir: &Path, formats: Formats) -> Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir)
        .map_err(|e| format!("cannot create the output folder {}: {e}", dir.display()))?;
    let mut written = Vec::new();
    let mut put = |name: String, text: String| -> Result<()> {
        let path = dir.join(name);
        std::fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        written.push(path);
        Ok(())
    };
    if formats.csv {
        for t in &out.tables {
            put(format!("{exp}-{}.csv", t.name), t.csv())?;
        }
    }
    if formats.json {
        let json = serde_json::json!({ "experiment": exp, "tables": out.tables });
        put(
            format!("{exp}.json"),
            serde_json::to_string_pretty(&json)? + "\n",
        )?;
    }
    if formats.svg {
        for p in &out.plots {
            put(format!("{exp}-{}.svg", p.name), p.svg())?;
        }
    }
    Ok(written)
}

/// Times `reps` calls of `f` (after one untimed warm-up whose result is
/// returned): the minimum and the median.
pub fn time<T>(reps: usize, mut f: impl FnMut() -> Result<T>) -> Result<(Duration, Duration, T)> {
    let first = f()?;
    let mut times = Vec::with_capacity(reps);
    for _ in 0..reps.max(1) {
        let t = Instant::now();
        std::hint::black_box(f()?);
        times.push(t.elapsed());
    }
    times.sort();
    Ok((times[0], times[times.len() / 2], first))
}

/// Milliseconds.
pub fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Microseconds.
pub fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}
