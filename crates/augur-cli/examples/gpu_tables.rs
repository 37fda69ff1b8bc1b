//! The paper's GPU tables (§4.3), built here and run on another machine.
//!
//! `cargo run --release -p augur-cli --example gpu_tables -- build OUT [ARCH]`
//! writes `OUT.cu` (matmul and matvec at 64…4096 under the three
//! strategies) and builds the executable `OUT` for `ARCH` (default sm_90)
//! with nvcc (installed from pip when missing). Run `OUT > results.csv` on a
//! GPU machine, then
//! `cargo run -p augur-cli --example gpu_tables -- table results.csv DEVICE`
//! prints the tables as markdown with the paper's V100 numbers beside (an
//! error if any result is wrong); with `--out DIR` it also writes each table
//! as CSV (and JSON, and the plots as SVG) into `DIR`. On the GPU machine
//! itself, `augur bench gpu` does both.
//!
//! `gpu_tables source FILE.cu [--quick]` writes the source alone (`--quick`:
//! sizes 64 and 256), for a machine with nvcc to build with
//! `-DAUGUR_CUBLAS -lcublas` (`scripts/device-check`).

use augur::exec::cuda::Nvcc;
use augur_cli::bench::gpu::program::{cases, cuda_program, parse};
use augur_cli::bench::gpu::{tables, PAPER_SIZES};
use augur_cli::bench::{write, Formats};
use augur_cli::programs::einsum::Kind;
use std::path::Path;

fn main() -> augur_cli::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        ["build", out, rest @ ..] => {
            let arch = rest.first().copied().unwrap_or("sm_90");
            let src = cuda_program(&cases(&[Kind::MatMul, Kind::MatVec], &PAPER_SIZES), 10)?;
            std::fs::write(format!("{out}.cu"), &src)?;
            Nvcc::find_or_install()?.executable(&src, arch, Path::new(out), &[])?;
            println!("built {out} ({arch}) from {out}.cu");
        }
        ["source", file, rest @ ..] if rest.is_empty() || rest == ["--quick"] => {
            let sizes: &[usize] = if rest.is_empty() {
                &PAPER_SIZES
            } else {
                &[64, 256]
            };
            let src = cuda_program(&cases(&[Kind::MatMul, Kind::MatVec], sizes), 10)?;
            std::fs::write(file, &src)?;
            println!("wrote {file}");
        }
        ["table", csv, device, rest @ ..] if rest.is_empty() || rest.len() == 2 => {
            let rows = parse(&std::fs::read_to_string(csv)?);
            let outcome = tables(&rows, device, &format!("from {csv}"))?;
            for t in &outcome.tables {
                println!("{}", t.markdown());
            }
            if let ["--out", dir] = rest {
                let formats = Formats {
                    csv: true,
                    json: true,
                    svg: true,
                };
                write("gpu", &outcome, Path::new(dir), formats)?;
            }
        }
        _ => {
            eprintln!(
                "usage: gpu_tables build OUT [ARCH] | gpu_tables source FILE.cu [--quick] \
                 | gpu_tables table CSV DEVICE [--out DIR]"
            );
            std::process::exit(2);
        }
    }
    Ok(())
}
