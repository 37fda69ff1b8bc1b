//! The experiments of `augur bench` (`augur_cli::bench::EXPERIMENTS`) as a
//! cargo bench: each table printed as markdown, no files written.
//!
//! `cargo bench -p augur-cli --bench experiments` runs first-stage,
//! scaling, fusion and einsum; name experiments to run others
//! (`-- paper gpu`: never by default, `gpu` needs a GPU). `-- --quick`
//! takes fewer repetitions and smaller sizes (and is what `cargo test
//! --benches` runs, since cargo then passes no `--bench` flag). For CSV,
//! JSON and SVG files: `cargo run --release -p augur-cli -- bench`.

use augur_cli::bench::{self, Ctx};

fn main() -> augur_cli::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // `cargo bench` passes `--bench`; without it (`cargo test --benches`)
    // this is a smoke run, so it is quick too.
    let quick = args.iter().any(|a| a == "--quick") || !args.iter().any(|a| a == "--bench");
    let named: Vec<&str> = args
        .iter()
        .map(String::as_str)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let names = if named.is_empty() {
        augur_cli::bench::DEFAULT.to_vec()
    } else {
        named
    };
    // Check every name before spending minutes on the first experiment.
    let experiments = names
        .iter()
        .map(|n| bench::find(n))
        .collect::<augur_cli::Result<Vec<_>>>()?;
    let ctx = Ctx {
        quick,
        progress: false,
        tune: false,
    };
    println!("# augur experiments\n");
    for e in experiments {
        println!("## {}: {}\n", e.name, e.about);
        for t in (e.run)(&ctx)?.tables {
            println!("{}", t.markdown());
        }
    }
    Ok(())
}
