//! The paper's GPU tables (§4.3): matmul and matvec at 64…4096 under the
//! three data-movement strategies, built as one CUDA program by nvcc
//! (installed from pip when missing) and run on this machine's GPU. Without
//! a GPU, [`recorded`] gives the tables last measured on an H100, labelled
//! as such.

use super::{Ctx, Outcome};
use crate::report::{Cell, Plot, Table};
use crate::Result;
use augur::exec::cuda::Nvcc;
use augur_einsum::gpu_bench::{
    cases, cuda_program, parse, GpuRow, PAPER_MATMUL_US, PAPER_MATVEC_US, PAPER_SIZES,
};
use augur_einsum::programs::Kind;
use augur_einsum::Movement;
use std::process::Command;

/// The H100 results committed with the einsum crate.
const H100_CSV: &str = include_str!("../../../augur-einsum/results/h100.csv");

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
    let bar = ctx.bar(2, "gpu");
    bar.set_message("nvcc");
    Nvcc::find_or_install()?.executable(&src, &arch(device), &exe, &[])?;
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
    Ok(out)
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
    let ours = |size: usize, m: Movement| {
        rows.iter()
            .find(|r| r.kind == kind.name() && r.size == size && r.movement == m.name())
            .map(|r| r.min_us)
    };
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

/// The tables last measured on an H100 (committed with the einsum crate).
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
