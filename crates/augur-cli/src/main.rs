//! `augur`: stage the paper's examples, emit their C and CUDA, explain
//! their prophecies, run the core language, and regenerate the paper's
//! experiments. All the work is in the `augur_cli` library; this file
//! parses arguments and reports errors.

use augur::codegen::LineMarkers;
use augur_cli::bench::{self, Ctx, Formats};
use augur_cli::catalog::{self, Params, Target};
use augur_cli::{demo, imp, Result};
use augur_einsum::{Movement, Schedule};
use clap::{Parser, Subcommand, ValueEnum};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "augur",
    version,
    about = "Staged DSLs in Rust with prophecy variables",
    long_about = "Staged DSLs in Rust with prophecy variables.\n\n\
                  Start with `augur demo`; `augur emit --list` lists the examples."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Stage the paper's examples, compile and run them on the CPU, and show
    /// what happened (code, prophecy decisions, runs, bytes, timings).
    Demo,
    /// Print an example's generated code.
    Emit {
        /// The example (see --list).
        example: Option<String>,
        /// What to generate.
        #[arg(long, value_enum, default_value_t = TargetArg::C)]
        target: TargetArg,
        #[command(flatten)]
        params: ParamArgs,
        /// Mark each statement with the Rust line that staged it.
        #[arg(long, value_enum, default_value_t = LinesArg::None)]
        lines: LinesArg,
        /// Write to this file instead of standard output.
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// List the examples.
        #[arg(long)]
        list: bool,
    },
    /// Show an example's prophecy and history decisions, and first-stage
    /// statistics.
    Explain {
        /// The example (see `augur emit --list`).
        example: String,
        #[command(flatten)]
        params: ParamArgs,
    },
    /// The compile cache: where it is, what it holds, emptying it.
    Cache {
        #[command(subcommand)]
        command: CacheCommand,
    },
    /// The paper's core language (§3) from a file.
    Imp {
        #[command(subcommand)]
        command: ImpCommand,
    },
    /// Run experiments: a table on the terminal, CSV/JSON and SVG plots in
    /// --out. Without names: first-stage, scaling, fusion, einsum.
    Bench {
        /// Experiments to run (`paper`: the paper's tables; `gpu`: GPU
        /// tables on this machine's GPU). --list lists them.
        experiments: Vec<String>,
        /// Fewer repetitions and smaller sizes.
        #[arg(long)]
        quick: bool,
        /// Where files go.
        #[arg(long, default_value = "target/augur-bench")]
        out: PathBuf,
        /// Which files to write.
        #[arg(long, value_enum, default_value_t = FormatArg::All)]
        format: FormatArg,
        /// Print the tables as markdown.
        #[arg(long)]
        markdown: bool,
        /// einsum: also tune the CPU products' schedules (time a few, keep
        /// the fastest; cached per program and machine).
        #[arg(long)]
        tune: bool,
        /// List the experiments.
        #[arg(long)]
        list: bool,
    },
}

#[derive(Subcommand)]
enum CacheCommand {
    /// Print the cache's directory (`AUGUR_CACHE`, else ~/.cache/augur).
    Path,
    /// Print how many entries it holds, their size and its limit.
    Size,
    /// Remove every entry (an nvcc installation there stays).
    Clean,
}

#[derive(Subcommand)]
enum ImpCommand {
    /// Run a program by the standard semantics and print the final state.
    Run {
        /// The program file.
        file: PathBuf,
        /// Initial values, `VAR=NUMBER`.
        #[arg(long = "set", value_name = "VAR=NUMBER")]
        inputs: Vec<String>,
        /// The most transitions to take.
        #[arg(long, default_value_t = 1_000_000)]
        fuel: usize,
    },
    /// Live variables before each label, by re-execution (the paper's
    /// Driver), checked against a worklist solver.
    Live {
        /// The program file.
        file: PathBuf,
    },
    /// Stage the program to C, dropping dead assignments; with --set, also
    /// compile and run it and compare with the semantics.
    Compile {
        /// The program file.
        file: PathBuf,
        /// Initial values, `VAR=NUMBER`.
        #[arg(long = "set", value_name = "VAR=NUMBER")]
        inputs: Vec<String>,
        /// The most transitions the semantics may take for the comparison.
        #[arg(long, default_value_t = 1_000_000)]
        fuel: usize,
    },
}

#[derive(clap::Args)]
struct ParamArgs {
    /// Problem size (einsum: matrix size; conv-relu, nn-benchmark: input length).
    #[arg(long)]
    size: Option<usize>,
    /// einsum data movement.
    #[arg(long, value_enum)]
    movement: Option<MovementArg>,
    /// einsum CPU schedule for --target c: auto (blocked, OpenMP: the fast
    /// version) or naive (the paper's loops).
    #[arg(long, value_enum)]
    schedule: Option<ScheduleArg>,
    /// The regex example's pattern (regex crate syntax).
    #[arg(long)]
    pattern: Option<String>,
    /// The regex example: classes and `.` over bytes, not UTF-8.
    #[arg(long)]
    bytes: bool,
    /// The regex example: case-insensitive.
    #[arg(long)]
    ignore_case: bool,
    /// summa: MPI ranks (on the squarest process grid).
    #[arg(long)]
    ranks: Option<usize>,
    /// summa: tiles of this many rows and columns dealt block-cyclically
    /// (ScaLAPACK's layout); without it, one block per rank (2D block).
    #[arg(long)]
    tile: Option<usize>,
}

#[derive(Clone, Copy, ValueEnum)]
enum ScheduleArg {
    Auto,
    Naive,
}

#[derive(Clone, Copy, ValueEnum)]
enum TargetArg {
    C,
    Cuda,
    CudaSim,
    /// A standalone MPI program (`summa`).
    Mpi,
}

#[derive(Clone, Copy, ValueEnum)]
enum LinesArg {
    None,
    Comments,
    Directives,
}

#[derive(Clone, Copy, ValueEnum)]
enum MovementArg {
    CopyAll,
    Unified,
    Prophecy,
}

#[derive(Clone, Copy, ValueEnum)]
enum FormatArg {
    All,
    Csv,
    Json,
    Svg,
    None,
}

impl ParamArgs {
    fn params(&self, lines: LinesArg) -> Params {
        Params {
            size: self.size,
            movement: self.movement.map(|m| match m {
                MovementArg::CopyAll => Movement::CopyAll,
                MovementArg::Unified => Movement::Unified,
                MovementArg::Prophecy => Movement::Prophecy,
            }),
            schedule: self.schedule.map(|s| match s {
                ScheduleArg::Auto => Schedule::Auto,
                ScheduleArg::Naive => Schedule::naive(),
            }),
            lines: match lines {
                LinesArg::None => LineMarkers::None,
                LinesArg::Comments => LineMarkers::Comments,
                LinesArg::Directives => LineMarkers::Directives,
            },
        }
    }
}

fn main() -> ExitCode {
    augur_cli::bench::openblas::prefer_avx512();
    match run(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("augur: error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// `augur cache`: opening the cache checks that it is private, so each of
/// these fails with the reason where it is not.
fn cache_command(command: CacheCommand) -> Result<()> {
    let cache = augur::exec::Cache::open(&augur::exec::CompileOptions::default())?;
    let mib = |bytes: u64| bytes as f64 / (1 << 20) as f64;
    match command {
        CacheCommand::Path => println!("{}", cache.path().display()),
        CacheCommand::Size => {
            let usage = cache.usage()?;
            let limit = match cache.limit() {
                u64::MAX => "no limit".to_string(),
                l => format!("limit {:.1} MiB", mib(l)),
            };
            println!(
                "{}: {} entries, {:.1} MiB ({limit}, AUGUR_CACHE_LIMIT)",
                cache.path().display(),
                usage.entries,
                mib(usage.bytes),
            );
        }
        CacheCommand::Clean => {
            let removed = cache.clean()?;
            println!(
                "removed {} entries, {:.1} MiB, from {}",
                removed.entries,
                mib(removed.bytes),
                cache.path().display()
            );
        }
    }
    Ok(())
}

fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Demo => demo::run(),
        Command::Emit {
            example,
            target,
            params,
            lines,
            output,
            list,
        } => {
            if list {
                list_examples();
                return Ok(());
            }
            let name = example.ok_or("name an example (augur emit --list lists them)")?;
            let code = if name == "regex" {
                regex_code(&params, target)?
            } else if name == "summa" {
                summa_code(&params, target)?
            } else {
                let staged = catalog::find(&name)?.staged(&params.params(lines))?;
                let target = match target {
                    TargetArg::C => Target::C,
                    TargetArg::Cuda => Target::Cuda,
                    TargetArg::CudaSim => Target::CudaSim,
                    TargetArg::Mpi => return Err(format!("{name} has no MPI target").into()),
                };
                staged.code(target)?
            };
            match output {
                Some(path) => std::fs::write(&path, code)
                    .map_err(|e| format!("cannot write {}: {e}", path.display()))?,
                None => print!("{code}"),
            }
            Ok(())
        }
        Command::Explain { example, params } => {
            let staged = catalog::find(&example)?.staged(&params.params(LinesArg::None))?;
            println!("{} ({}):\n", example, staged.function);
            println!("{}", staged.explain);
            println!("stats: {}", staged.stats);
            Ok(())
        }
        Command::Cache { command } => cache_command(command),
        Command::Imp { command } => imp_command(command),
        Command::Bench {
            experiments,
            quick,
            out,
            format,
            markdown,
            tune,
            list,
        } => {
            if list {
                for e in &bench::EXPERIMENTS {
                    println!("{:12} {}", e.name, e.about);
                }
                return Ok(());
            }
            bench_command(experiments, quick, out, format, markdown, tune)
        }
    }
}

fn list_examples() {
    for e in &catalog::EXAMPLES {
        println!("{:13} {}", e.name, e.about);
    }
    println!(
        "{:13} augur-regex: the matcher of --pattern P (is_match, find, rfind; --bytes, --ignore-case)",
        "regex"
    );
    println!(
        "{:13} augur-einsum over MPI: C = A B on --ranks R (4) for --size N (1024) as a standalone \
         program (--target mpi; --tile T for block-cyclic)",
        "summa"
    );
}

/// `augur emit summa --target mpi --size N`: the distributed product as a
/// standalone MPI program.
fn summa_code(p: &ParamArgs, target: TargetArg) -> Result<String> {
    if !matches!(target, TargetArg::Mpi) {
        return Err("summa has only an MPI target: --target mpi".into());
    }
    let n = p.size.unwrap_or(1024);
    let ranks = p.ranks.unwrap_or(4);
    if ranks == 0 {
        return Err("--ranks must be at least 1".into());
    }
    let layout = match p.tile {
        Some(0) => return Err("--tile must be at least 1".into()),
        Some(t) => augur_einsum::dist::Layout::BlockCyclic { rows: t, cols: t },
        None => augur_einsum::dist::Layout::Block2D,
    };
    Ok(augur_einsum::dist::summa(n, n, n, ranks, layout)?)
}

/// `augur emit regex --pattern P`: the three staged functions' C.
fn regex_code(p: &ParamArgs, target: TargetArg) -> Result<String> {
    if !matches!(target, TargetArg::C) {
        return Err("regex has only a C target".into());
    }
    let pattern = p.pattern.as_deref().ok_or("regex needs --pattern P")?;
    let opts = augur_regex::Options {
        unicode: !p.bytes,
        case_insensitive: p.ignore_case,
        ..Default::default()
    };
    let staged = augur_regex::Regex::with(pattern, &opts)?.stage(&augur::Builder::new())?;
    Ok(staged.c_code())
}

fn imp_command(c: ImpCommand) -> Result<()> {
    let show_warnings = |w: Vec<String>| w.iter().for_each(|w| eprintln!("{w}"));
    match c {
        ImpCommand::Run { file, inputs, fuel } => {
            let (p, w) = imp::load(&file)?;
            show_warnings(w);
            print!("{}", imp::run(&p, imp::parse_inputs(&inputs)?, fuel)?);
        }
        ImpCommand::Live { file } => {
            let (p, w) = imp::load(&file)?;
            show_warnings(w);
            print!("{}", imp::live(&p)?);
        }
        ImpCommand::Compile { file, inputs, fuel } => {
            let (p, w) = imp::load(&file)?;
            show_warnings(w);
            let initial = if inputs.is_empty() {
                None
            } else {
                Some(imp::parse_inputs(&inputs)?)
            };
            print!("{}", imp::compile(&p, initial, fuel)?);
        }
    }
    Ok(())
}

fn bench_command(
    names: Vec<String>,
    quick: bool,
    out: PathBuf,
    format: FormatArg,
    markdown: bool,
    tune: bool,
) -> Result<()> {
    let names = if names.is_empty() {
        bench::DEFAULT.map(String::from).to_vec()
    } else {
        names
    };
    // Check every name before spending minutes on the first experiment.
    let experiments = names
        .iter()
        .map(|n| bench::find(n))
        .collect::<Result<Vec<_>>>()?;
    let formats = match format {
        FormatArg::All => Formats {
            csv: true,
            json: true,
            svg: true,
        },
        FormatArg::Csv | FormatArg::Json | FormatArg::Svg | FormatArg::None => Formats {
            csv: matches!(format, FormatArg::Csv),
            json: matches!(format, FormatArg::Json),
            svg: matches!(format, FormatArg::Svg),
        },
    };
    // A folder that cannot be made fails now, not after minutes of work.
    if formats.csv || formats.json || formats.svg {
        std::fs::create_dir_all(&out)
            .map_err(|e| format!("cannot create the output folder {}: {e}", out.display()))?;
    }
    let ctx = Ctx {
        quick,
        progress: std::io::stderr().is_terminal(),
        tune,
    };
    if cfg!(debug_assertions) {
        eprintln!("note: a debug build; timings mean more from `cargo run --release -p augur-cli -- bench`");
    }
    for e in experiments {
        eprintln!("== {}: {}", e.name, e.about);
        let outcome = (e.run)(&ctx)?;
        for t in &outcome.tables {
            println!("{}", if markdown { t.markdown() } else { t.render() });
        }
        for path in bench::write(e.name, &outcome, &out, formats)? {
            eprintln!("   wrote {}", path.display());
        }
    }
    Ok(())
}
