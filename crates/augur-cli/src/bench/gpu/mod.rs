//! The paper's GPU tables (§4.3): matmul and matvec at 64…4096 under the
//! three data-movement strategies, built as one CUDA program
//! ([`program`]) by nvcc (installed from pip when missing) and run on this
//! machine's GPU. Without a GPU, [`recorded`] gives the tables last
//! measured on an H100, labelled as such.
//!
//! ## Recorded on an H100
//!
//! H100 80GB HBM3, driver 580; µs, minimum of 10 turns; timed region as in
//! the paper's listing: copies in, kernel, copies out, and the host copy of
//! the result; one run (`cargo run --release -p augur-cli --example
//! gpu_tables`); paper: V100.
//!
//! | matmul | copy all | unified | prophecy | paper: copy all | unified | prophecy |
//! |---:|---:|---:|---:|---:|---:|---:|
//! | 64 | 148 | 134 | **46** | 149 | 239 | 43 |
//! | 128 | 268 | 139 | **76** | 284 | 269 | 94 |
//! | 256 | 621 | 495 | **204** | 840 | 615 | 248 |
//! | 512 | 2,092 | 1,090 | **752** | 3,053 | 1,647 | 1,059 |
//! | 1024 | 8,670 | 4,518 | **3,986** | 9,863 | 6,343 | 4,244 |
//! | 2048 | 40,139 | 21,990 | **21,972** | 46,552 | 32,395 | 26,803 |
//! | 4096 | 317,604 | 274,204 | **266,894** | 380,378 | 316,443 | 307,830 |
//!
//! | matvec | copy all | unified | prophecy | paper: copy all | unified | prophecy |
//! |---:|---:|---:|---:|---:|---:|---:|
//! | 64 | 113 | 85 | **35** | 112 | 79 | 35 |
//! | 128 | 145 | 101 | **43** | 173 | 132 | 60 |
//! | 256 | 345 | 137 | **84** | 362 | 237 | 129 |
//! | 512 | 950 | 356 | **239** | 1,199 | 621 | 468 |
//! | 1024 | 2,276 | 789 | **594** | 3,061 | 1,356 | 1,054 |
//! | 2048 | 6,486 | 2,011 | **1,648** | 9,647 | 3,564 | 2,854 |
//! | 4096 | 26,388 | **5,815** | 7,431 | 34,341 | 9,754 | 9,199 |
//!
//! As in the paper, prophecy is fastest at every size but one (matvec at
//! 4096, where the H100's page migration wins by 22%; on the V100 prophecy
//! won by 6%): 3.2× faster than copy-all and 2.9× faster than unified
//! memory for 64×64 matmul, and the gap narrows as computation grows.
//! Between three runs of the whole program single cells moved by up to
//! ±15% (matvec 4096 prophecy: 8,598, 9,508 and 7,431 µs), so close cells
//! (matmul 2048) are ties. Every result was checked against a host
//! reference (sizes up to 256) and the byte counts equal those of
//! [`einsum`](super::einsum). Raw data: `crates/augur-cli/data/h100.csv`;
//! the example `gpu_check` (`cargo run --release -p augur-cli --example
//! gpu_check`) compares every output element of multi-statement
//! (cooperative), looping (barriers in a dyn loop), transposing, batched,
//! diagonal-writing and rank-0 kernels with the CPU version, under all
//! three strategies, on the GPU (all equal).
//!
//! ## The default schedule beside cuBLAS
//!
//! The program also runs every case with its kernels under
//! `Schedule::Auto` (products through shared-memory tiles with 4 × 4
//! register blocks, matvec through 32 lanes per row), and, when cuBLAS's
//! wheel installs ([`cublas`]), `cublasSgemm`/`cublasSgemv` on the same data
//! timed the same way (copies in, the call, the copy out): the tables
//! `matmul-auto` and `matvec-auto`. Not yet measured on a GPU: the H100
//! data above predates them.

pub mod cublas;
pub mod program;

use super::{Ctx, Outcome};
use crate::programs::einsum::Kind;
use crate::report::{Cell, Plot, Table};
use crate::Result;
use augur::exec::cuda::Nvcc;
use augur_einsum::Movement;
use program::{cases, cuda_program, parse, GpuRow};
use std::process::Command;

/// The H100 results the tables show on a machine without a GPU.
const H100_CSV: &str = include_str!("../../../data/h100.csv");

/// The sizes of the paper's tables.
pub const PAPER_SIZES: [usize; 7] = [64, 128, 256, 512, 1024, 2048, 4096];

/// The paper's Tables (V100, µs, minimum of 10): (size, copy all, unified,
/// prophecy) for matrix-matrix multiplication.
pub const PAPER_MATMUL_US: [(usize, u32, u32, u32); 7] = [
    (64, 149, 239, 43),
    (128, 284, 269, 94),
    (256, 840, 615, 248),
    (512, 3053, 1647, 1059),
    (1024, 9863, 6343, 4244),
    (2048, 46552, 32395, 26803),
    (4096, 380378, 316443, 307830),
];

/// The same for matrix-vector multiplication.
pub const PAPER_MATVEC_US: [(usize, u32, u32, u32); 7] = [
    (64, 112, 79, 35),
    (128, 173, 132, 60),
    (256, 362, 237, 129),
    (512, 1199, 621, 468),
    (1024, 3061, 1356, 1054),
    (2048, 9647, 3564, 2854),
    (4096, 34341, 9754, 9199),
];

/// The GPU's name and compute capability (`NVIDIA H100 80GB HBM3, 9.0`),
/// when `nvidia-smi` finds one.
pub fn gpu_name() -> Option<String> {
    let out = Command::new("nvidia-smi")
        .args(["--query-gpu=name,compute_cap", "--format=csv,noheader"])
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text.lines().next()?.trim().to_string();
    (out.status.success() && !line.is_empty()).then_some(line)
}

/// `sm_90` for a GPU whose compute capability `nvidia-smi` reports as
/// `9.0` (the last field of [`gpu_name`]).
fn arch(name: &str) -> String {
    let cap = name
        .rsplit(',')
        .next()
        .unwrap_or("9.0")
        .trim()
        .replace('.', "");
    format!("sm_{cap}")
}

/// Builds and runs the experiment's CUDA program; returns its CSV output.
fn measure(ctx: &Ctx, device: &str) -> Result<String> {
    let sizes: &[usize] = if ctx.quick { &[64, 256] } else { &PAPER_SIZES };
    let src = cuda_program(&cases(&[Kind::MatMul, Kind::MatVec], sizes), 10)?;
    let dir = std::env::temp_dir().join(format!("augur-gpu-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let exe = dir.join("einsum_tables");
    // cuBLAS's rows need its wheel; without it the program runs ours alone.
    let cublas = cublas::nvcc_flags().unwrap_or_else(|e| {
        eprintln!("augur: the GPU tables go without cuBLAS: {e}");
        Vec::new()
    });
    let flags: Vec<&str> = cublas.iter().map(String::as_str).collect();
    let bar = ctx.bar(2, "gpu");
    bar.set_message("nvcc");
    Nvcc::find_or_install()?.executable(&src, &arch(device), &exe, &flags)?;
    bar.inc(1);
    bar.set_message(format!("running on {device}"));
    let out = Command::new(&exe)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", exe.display()))?;
    bar.finish_and_clear();
    let _ = std::fs::remove_dir_all(&dir);
    if !out.status.success() {
        return Err(format!(
            "the GPU program failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        )
        .into());
    }
    Ok(String::from_utf8(out.stdout)?)
}

/// The tables and plots for one device's rows, the paper's V100 beside.
pub fn tables(rows: &[GpuRow], device: &str, source: &str) -> Result<Outcome> {
    if rows.is_empty() {
        return Err(format!("the GPU program on {device} printed no results").into());
    }
    // NaN compares false with everything: test it by name.
    if let Some(bad) = rows.iter().find(|r| r.max_err.is_nan() || r.max_err > 1e-3) {
        return Err(format!("wrong GPU result: {bad:?}").into());
    }
    let mut out = Outcome::default();
    for kind in [Kind::MatMul, Kind::MatVec] {
        let (t, p) = kind_table(rows, kind, device, source);
        out.tables.push(t);
        out.plots.push(p);
    }
    for kind in [Kind::MatMul, Kind::MatVec] {
        out.tables.extend(auto_table(rows, kind, device, source));
    }
    Ok(out)
}

/// The µs of `kind` at `size` under `movement` (`cublas` for cuBLAS) with
/// `schedule`'s kernels, if measured.
fn time_of(
    rows: &[GpuRow],
    kind: Kind,
    size: usize,
    movement: &str,
    schedule: &str,
) -> Option<f64> {
    rows.iter()
        .find(|r| {
            r.kind == kind.name()
                && r.size == size
                && r.movement == movement
                && r.schedule == schedule
        })
        .map(|r| r.min_us)
}

/// The default schedule's kernels under each strategy beside cuBLAS (when
/// the program was built with it); `None` without such rows (the
/// recorded H100 data predates them).
fn auto_table(rows: &[GpuRow], kind: Kind, device: &str, source: &str) -> Option<Table> {
    let sizes: Vec<usize> = PAPER_SIZES
        .into_iter()
        .filter(|&n| {
            Movement::ALL
                .iter()
                .any(|m| time_of(rows, kind, n, m.name(), "auto").is_some())
        })
        .collect();
    if sizes.is_empty() {
        return None;
    }
    let mut t = Table::new(
        &format!("{}-auto", kind.name()),
        &format!(
            "{}, default schedule: µs per turn, minimum of 10 ({device}, {source}), cuBLAS beside",
            kind.name()
        ),
        &[
            "size",
            "copy-all",
            "unified",
            "prophecy",
            "fastest",
            "cuBLAS",
            "prophecy / cuBLAS",
        ],
    );
    for n in sizes {
        let mine = Movement::ALL.map(|m| time_of(rows, kind, n, m.name(), "auto"));
        let fastest = (Movement::ALL.iter().zip(&mine))
            .filter_map(|(m, v)| v.map(|v| (m.name(), v)))
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .map_or(Cell::Missing, |f| Cell::Text(f.0.into()));
        let blas = time_of(rows, kind, n, "cublas", "cublas");
        let ratio = match (mine[2], blas) {
            (Some(p), Some(b)) => Cell::float(p / b, 2),
            _ => Cell::Missing,
        };
        let mut row: Vec<Cell> = vec![n.into()];
        row.extend(mine.map(|v| v.map_or(Cell::Missing, |v| Cell::float(v, 0))));
        row.push(fastest);
        row.push(blas.map_or(Cell::Missing, |v| Cell::float(v, 0)));
        row.push(ratio);
        t.push(row);
    }
    t.note(
        "the same programs with kernels under Schedule::Auto (products through shared-memory \
         tiles and register blocks, matvec through lanes per row); cuBLAS timed alike: copies \
         in, the call, the copy out (missing: built without cuBLAS)",
    );
    Some(t)
}

fn kind_table(rows: &[GpuRow], kind: Kind, device: &str, source: &str) -> (Table, Plot) {
    let paper = match kind {
        Kind::MatMul => &PAPER_MATMUL_US,
        Kind::MatVec => &PAPER_MATVEC_US,
    };
    let mut t = Table::new(
        kind.name(),
        &format!(
            "{}: µs per turn, minimum of 10 ({device}, {source}; paper on a V100)",
            kind.name()
        ),
        &[
            "size",
            "copy-all",
            "unified",
            "prophecy",
            "paper copy-all",
            "paper unified",
            "paper prophecy",
        ],
    );
    let ours = |size: usize, m: Movement| time_of(rows, kind, size, m.name(), "paper");
    let mut series: Vec<Vec<(f64, f64)>> = vec![Vec::new(); 4];
    for &(size, pc, pu, pp) in paper {
        let mine: Vec<Option<f64>> = Movement::ALL.iter().map(|&m| ours(size, m)).collect();
        // Rows are matched on the runtime's spelling (`copy_all`).
        if mine.iter().all(Option::is_none) {
            continue;
        }
        let mut row: Vec<Cell> = vec![size.into()];
        row.extend(
            mine.iter()
                .map(|v| v.map_or(Cell::Missing, |v| Cell::float(v, 0))),
        );
        row.extend([pc, pu, pp].map(|v| Cell::Int(i64::from(v))));
        t.push(row);
        for (i, v) in mine.iter().enumerate() {
            if let Some(v) = v {
                series[i].push((size as f64, *v));
            }
        }
        series[3].push((size as f64, f64::from(pp)));
    }
    t.note("every result up to size 256 was checked against a host reference");
    let names = ["copy-all", "unified", "prophecy", "paper prophecy (V100)"];
    let plot = names.iter().zip(series).fold(
        Plot::lines(
            kind.name(),
            &format!("{} on {device}: µs per turn", kind.name()),
            "size",
            "µs",
        )
        .log(true, true),
        |p, (n, pts)| p.series(n, pts),
    );
    (t, plot)
}

/// The tables last measured on an H100 (`data/h100.csv`).
pub fn recorded() -> Result<Outcome> {
    tables(
        &parse(H100_CSV),
        "NVIDIA H100 80GB HBM3",
        "recorded earlier, not measured now",
    )
}

/// Runs the experiment: an error on a machine without a GPU.
pub fn run(ctx: &Ctx) -> Result<Outcome> {
    let device = gpu_name().ok_or(
        "no GPU here (nvidia-smi found none); `augur bench paper` shows the tables recorded on an H100",
    )?;
    let csv = measure(ctx, &device)?;
    let name = device.rsplit_once(',').map_or(device.as_str(), |d| d.0);
    tables(&parse(&csv), name, "measured now")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recorded_tables_have_every_size_and_the_paper_beside() {
        let out = recorded().unwrap();
        assert_eq!(out.tables.len(), 2);
        for t in &out.tables {
            assert_eq!(t.rows.len(), PAPER_SIZES.len());
            assert!(t.numbers("prophecy").iter().all(Option::is_some));
        }
        // The committed matmul 64 row: 46.4 µs with prophecies, 149 in the paper's copy-all.
        assert_eq!(out.tables[0].rows[0][3], Cell::float(46.4, 0));
        assert_eq!(out.tables[0].rows[0][4], Cell::Int(149));
    }

    #[test]
    fn arch_from_compute_capability() {
        assert_eq!(arch("NVIDIA H100 80GB HBM3, 9.0"), "sm_90");
        assert_eq!(arch("Tesla V100-SXM2-16GB, 7.0"), "sm_70");
    }
}
