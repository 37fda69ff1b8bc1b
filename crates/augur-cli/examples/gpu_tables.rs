//! The paper's GPU tables (§4.3), built here and run on another machine.
//!
//! `cargo run --release -p augur-cli --example gpu_tables -- build OUT [ARCH]`
//! writes `OUT.cu` (matmul and matvec at 64…4096 under the three
//! strategies) and builds the executable `OUT` for `ARCH` (default sm_90)
//! with nvcc (installed from pip when missing). Run `OUT > results.csv` on a
//! GPU machine, then
//! `cargo run -p augur-cli --example gpu_tables -- table results.csv DEVICE`
//! prints the tables as markdown with the paper's V100 numbers beside (an
//! error if any result is wrong). On the GPU machine itself, `augur bench
//! gpu` does both.

use augur::exec::cuda::Nvcc;
use augur_cli::bench::gpu::program::{cases, cuda_program, parse};
use augur_cli::bench::gpu::{tables, PAPER_SIZES};
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
        ["table", csv, device] => {
            let rows = parse(&std::fs::read_to_string(csv)?);
            for t in tables(&rows, device, &format!("from {csv}"))?.tables {
                println!("{}", t.markdown());
            }
        }
        _ => {
            eprintln!("usage: gpu_tables build OUT [ARCH] | gpu_tables table CSV DEVICE");
            std::process::exit(2);
        }
    }
    Ok(())
}
