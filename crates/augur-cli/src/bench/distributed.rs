//! augur-einsum over MPI beside ScaLAPACK's `pdgemm`, in one run: the
//! product `C = A B` and the contraction `C[i][j] = A[i][l] B[j][l]`
//! (`pdgemm` with `transb = 'T'`) in `f64`, all three tensors in the 2D
//! block layout on the squarest process grid, on 1, 2 and 4 ranks, each
//! program built with `mpicc` and run with `mpirun`; the same sizes, data
//! layout and ranks on both sides, one thread per rank.
//!
//! augur's side is the standalone program `augur emit summa --target mpi`
//! prints (it checks its result against a single-process computation and
//! prints `check: ok`, its best time and the bytes each rank sent); the
//! `pdgemm` side is `scripts/pdgemm-bench.c` (bytes counted through PMPI).
//! Beside them: the plan's bytes ([`matmul_plan_bytes`]) and the
//! Irony-Toledo-Tiskin lower bound on what some rank must receive.
//!
//! Without `mpicc`/`mpirun` the table says how to install them; without
//! ScaLAPACK the `pdgemm` columns say so.

use super::{Ctx, Outcome};
use crate::report::{Cell, Table};
use crate::Result;
use augur_einsum::dist::{
    matmul_moved_lower_bound_words, matmul_plan_bytes, summa, summa_transposed, Grid, Layout,
};
use std::path::{Path, PathBuf};
use std::process::Command;

/// How to install what the bench needs, for messages.
pub const INSTALL: &str = "MPI is not installed (no mpicc or mpirun): install it with `sudo \
     apt-get install openmpi-bin libopenmpi-dev libscalapack-openmpi-dev` (Debian, Ubuntu), then \
     run `augur bench distributed` again";

/// `pdgemm`'s side, as committed in the repository.
const PDGEMM_C: &str = include_str!("../../../../scripts/pdgemm-bench.c");

/// What one program printed.
#[derive(Clone, Debug, PartialEq)]
struct Run {
    seconds: f64,
    bytes: Vec<u64>,
    /// Bytes each rank received (augur's program prints them; `pdgemm`'s
    /// side does not count them).
    received: Vec<u64>,
}

/// A scratch folder, removed at the end.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn found(tool: &str) -> bool {
    Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Runs `cmd`, failing with its output when it fails.
fn output(cmd: &mut Command, what: &str) -> Result<String> {
    let out = cmd
        .output()
        .map_err(|e| format!("{what}: cannot run it: {e}"))?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        return Err(format!("{what} failed ({}):\n{text}{err}", out.status).into());
    }
    Ok(text)
}

/// `mpirun` for `ranks` ranks on this machine (as root too), one OpenBLAS
/// thread per rank.
fn mpirun(ranks: usize) -> Command {
    let mut c = Command::new("mpirun");
    c.args(["--oversubscribe", "-n", &ranks.to_string()])
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("OPENBLAS_NUM_THREADS", "1")
        .env("OMP_NUM_THREADS", "1");
    c
}

/// The time and bytes a program printed (`time: S s`, `bytes sent per
/// rank: B...`); `check` also asks for `check: ok`.
fn parse(text: &str, check: bool, what: &str) -> Result<Run> {
    if check && !text.lines().any(|l| l.trim() == "check: ok") {
        return Err(format!("{what} did not print `check: ok`:\n{text}").into());
    }
    let field = |name: &str| {
        (text.lines())
            .find_map(|l| l.strip_prefix(name))
            .map(str::trim)
            .ok_or_else(|| format!("{what} printed no `{name}`:\n{text}"))
    };
    let seconds = field("time:")?
        .trim_end_matches('s')
        .trim()
        .parse::<f64>()
        .map_err(|e| format!("{what}: time: {e}"))?;
    let counts = |line: &str| {
        line.split_whitespace()
            .map(|b| b.parse::<u64>())
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(|e| format!("{what}: bytes: {e}"))
    };
    let bytes = counts(field("bytes sent per rank:")?)?;
    let received = match field("bytes received per rank:") {
        Ok(line) => counts(line)?,
        Err(_) => Vec::new(),
    };
    Ok(Run {
        seconds,
        bytes,
        received,
    })
}

/// Builds and runs augur's program for `n` on `ranks`.
#[augur::staged]
fn augur_run(dir: &Path, n: usize, ranks: usize, transposed: bool, reps: usize) -> Result<Run> {
    let code = if transposed {
        summa_transposed(n, n, n, ranks, Layout::Block2D)?
    } else {
        summa(n, n, n, ranks, Layout::Block2D)?
    };
    let src = dir.join(format!("augur_{n}_{ranks}_{transposed}.c"));
    let exe = src.with_extension("");
    std::fs::write(&src, code)?;
    let mut cc = Command::new("mpicc");
    cc.args([
        "-O3",
        "-march=native",
        "-ffp-contract=fast",
        "-fopenmp-simd",
        "-o",
    ])
    .arg(&exe)
    .arg(&src)
    .arg("-lm");
    output(&mut cc, "mpicc on augur's program")?;
    let what = format!("augur's program (n = {n}, {ranks} ranks)");
    let text = output(
        mpirun(ranks).arg(&exe).args(["-", &reps.to_string()]),
        &what,
    )?;
    parse(&text, true, &what)
}

/// Builds `pdgemm`'s side once; `None` without ScaLAPACK.
fn pdgemm_build(dir: &Path) -> Option<PathBuf> {
    let src = dir.join("pdgemm.c");
    let exe = dir.join("pdgemm");
    std::fs::write(&src, PDGEMM_C).ok()?;
    let mut cc = Command::new("mpicc");
    cc.args(["-O3", "-march=native", "-o"])
        .arg(&exe)
        .arg(&src)
        .args(["-lscalapack-openmpi", "-lopenblas"]);
    output(&mut cc, "mpicc on pdgemm").ok().map(|_| exe)
}

fn pdgemm_run(exe: &Path, n: usize, grid: Grid, transposed: bool, reps: usize) -> Result<Run> {
    let what = format!("pdgemm (n = {n}, {} ranks)", grid.ranks());
    let args = [
        n.to_string(),
        grid.rows.to_string(),
        grid.cols.to_string(),
        reps.to_string(),
        if transposed { "T" } else { "N" }.to_string(),
    ];
    let text = output(mpirun(grid.ranks()).arg(exe).args(args), &what)?;
    parse(&text, false, &what)
}

/// The table.
pub fn table(ctx: &Ctx) -> Result<Table> {
    let mut t = Table::new(
        "vs-pdgemm",
        "augur-einsum over MPI beside ScaLAPACK's pdgemm: f64, 2D block layout, best time of \
         several calls (seconds), bytes sent per rank",
        &[
            "statement",
            "n",
            "ranks",
            "grid",
            "augur (s)",
            "pdgemm (s)",
            "augur / pdgemm",
            "augur bytes/rank (max)",
            "pdgemm bytes/rank (max)",
            "plan bytes/rank (max)",
            "augur sent + received (max)",
            "lower bound: sent + received by some rank",
        ],
    );
    if !found("mpicc") || !found("mpirun") {
        t.note(INSTALL);
        return Ok(t);
    }
    let dir = std::env::temp_dir().join(format!("augur-bench-distributed-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let _scratch = Scratch(dir.clone());
    let pdgemm = pdgemm_build(&dir);
    let sizes: &[usize] = if ctx.quick {
        &[192]
    } else {
        &[1024, 2048, 4096]
    };
    let ranks = [1, 2, 4];
    let bar = ctx.bar(sizes.len() * ranks.len() * 2, "distributed");
    for transposed in [false, true] {
        let statement = if transposed {
            "C[i,j] = A[i,l] B[j,l]"
        } else {
            "C[i,j] = A[i,l] B[l,j]"
        };
        for &n in sizes {
            let reps = if n >= 4096 { ctx.reps(2) } else { ctx.reps(5) };
            for &p in &ranks {
                bar.set_message(format!("{statement} {n} on {p}"));
                let grid = Grid::for_ranks(p);
                let ours = augur_run(&dir, n, p, transposed, reps)?;
                let theirs = match &pdgemm {
                    Some(exe) => Some(pdgemm_run(exe, n, grid, transposed, reps)?),
                    None => None,
                };
                let plan = matmul_plan_bytes(n, n, n, grid, 8);
                if !transposed && ours.bytes != plan {
                    return Err(format!(
                        "{statement} n = {n} on {p} ranks: augur sent {:?} bytes, the plan says {plan:?}",
                        ours.bytes
                    )
                    .into());
                }
                let max = |b: &[u64]| b.iter().copied().max().unwrap_or(0);
                let bound = matmul_moved_lower_bound_words(n, n, n, p) * 8.0;
                let moved = (ours.bytes.iter().zip(&ours.received))
                    .map(|(s, r)| s + r)
                    .max()
                    .unwrap_or(0);
                let (time, ratio, bytes) = match &theirs {
                    Some(r) => (
                        Cell::float(r.seconds, 4),
                        Cell::float(ours.seconds / r.seconds, 2),
                        Cell::from(max(&r.bytes) as i64),
                    ),
                    None => ("not installed".into(), "-".into(), "-".into()),
                };
                t.push(vec![
                    statement.into(),
                    n.into(),
                    p.into(),
                    Cell::Text(format!("{}x{}", grid.rows, grid.cols)),
                    Cell::float(ours.seconds, 4),
                    time,
                    ratio,
                    Cell::from(max(&ours.bytes) as i64),
                    bytes,
                    if transposed {
                        Cell::Missing
                    } else {
                        Cell::from(max(&plan) as i64)
                    },
                    Cell::from(moved as i64),
                    Cell::from(bound.ceil() as i64),
                ]);
                bar.inc(1);
            }
        }
    }
    bar.finish_and_clear();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    t.note(format!(
        "one thread per rank on both sides (OMP_NUM_THREADS, OPENBLAS_NUM_THREADS = 1) on a \
         machine of {cores} cores (more ranks than cores oversubscribe them); augur's program \
         checked its result against a single-process one on every line, and for C = A B sent \
         exactly the plan's bytes"
    ));
    if pdgemm.is_none() {
        t.note("ScaLAPACK is not installed (mpicc -lscalapack-openmpi failed): `sudo apt-get install libscalapack-openmpi-dev libopenblas-dev`");
    }
    t.note(
        "lower bound: for n^3 products on P ranks that start with an equal share of each matrix \
         (matmul_moved_lower_bound_words: 3 (n^3/P)^(2/3) - 3 n^2/P words, from Loomis-Whitney), \
         on what some rank sends and receives together; pdgemm's side counts sends only \
         (through PMPI; a reduction counts what each rank contributes)",
    );
    Ok(t)
}

/// `augur bench distributed`.
pub fn run(ctx: &Ctx) -> Result<Outcome> {
    Ok(Outcome {
        tables: vec![table(ctx)?],
        plots: Vec::new(),
    })
}
