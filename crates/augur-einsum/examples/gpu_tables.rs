//! The paper's GPU tables (§4.3).
//!
//! `cargo run --release -p augur-einsum --example gpu_tables -- build OUT [ARCH]`
//! writes `OUT.cu` (matmul and matvec at 64…4096 under the three
//! strategies) and builds the executable `OUT` for `ARCH` (default sm_90)
//! with nvcc (installed from pip when missing). Run `OUT > results.csv` on a
//! GPU machine, then
//! `cargo run -p augur-einsum --example gpu_tables -- table results.csv DEVICE`
//! prints the tables with the paper's V100 numbers beside.

use augur::exec::cuda::Nvcc;
use augur_einsum::gpu_bench::{cases, cuda_program, parse, table, PAPER_SIZES};
use augur_einsum::programs::Kind;
use std::path::Path;

fn main() -> Result<(), Box<dyn std::error::Error>> {
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
        ["table", csv, device] => {
            let rows = parse(&std::fs::read_to_string(csv)?);
            for kind in [Kind::MatMul, Kind::MatVec] {
                println!("{}", table(&rows, kind, device));
            }
            for r in rows.iter().filter(|r| r.max_err > 1e-3) {
                println!("WRONG RESULT: {r:?}");
            }
        }
        _ => {
            eprintln!("usage: gpu_tables build OUT [ARCH] | gpu_tables table CSV DEVICE");
            std::process::exit(2);
        }
    }
    Ok(())
}
