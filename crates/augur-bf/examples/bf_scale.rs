//! Times extraction of `nested_loops(n)` in one form: `cargo run --release
//! -p augur-bf --example bf_scale -- N [--static-pc] [--fold] [--fresh]`
//! (`--fresh`: every run from the top of the closure,
//! `Builder::chain_runs(false)`).

use augur_bf::{extract, nested_loops, Form, Options};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let n: usize = args.first().map_or(Ok(4000), |a| a.parse())?;
    let opts = Options {
        fold: args.iter().any(|a| a == "--fold"),
        form: if args.iter().any(|a| a == "--static-pc") {
            Form::StaticPc
        } else {
            Form::Points
        },
    };
    let t = std::time::Instant::now();
    let f = extract(
        &nested_loops(n),
        opts,
        &augur::Builder::new()
            .max_work(u64::MAX)
            .chain_runs(!args.iter().any(|a| a == "--fresh")),
    )?;
    let s = f.stats();
    eprintln!(
        "n={n} {:?} ms={:.1} trace={:?} structure={:?} passes={:?} runs={} ops={} nodes={} memo={} back={} loop_audits={} link_fail={} checks={} restarts={} chained={}",
        opts.form,
        t.elapsed().as_secs_f64() * 1e3, s.time_trace, s.time_structure, s.time_passes,
        s.runs, s.operations, s.nodes, s.memo_hits, s.back_edges, s.loop_audits, s.link_audit_failures, s.check_runs, s.loop_restarts, s.chained_runs
    );
    Ok(())
}
