//! Stages a pattern and prints what it cost: the pattern, the mode, the
//! time (ms), the forward DFA's states and the runs of the three
//! functions' extractions, tab-separated (`docs/results/regex-scaling.txt`).
//!
//! `cargo run --release -p augur-regex --example scale -- '[a-q][^u-z]{13}x' bytes`
//! (without `bytes`: Unicode classes over UTF-8; `fresh`: every run from
//! the top of the closure, `Builder::chain_runs(false)`; `here`: the three
//! functions one after the other on this thread, `Regex::stage_here`). The
//! limits are raised past the defaults so large DFAs can be measured.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let pattern = args
        .next()
        .ok_or("usage: scale PATTERN [bytes] [fresh] [here]")?;
    let flags: Vec<String> = args.collect();
    let has = |f: &str| flags.iter().any(|a| a == f);
    let unicode = !has("bytes");
    let chain = !has("fresh");
    let opts = augur_regex::Options {
        unicode,
        ..Default::default()
    };
    let re = augur_regex::Regex::with(&pattern, &opts)?;
    let builder = augur::Builder::new()
        .max_runs(20_000_000)
        .max_work(u64::MAX)
        .max_memory(12 << 30)
        .max_operations(64_000_000)
        .chain_runs(chain);
    let t = std::time::Instant::now();
    let s = if has("here") {
        re.stage_here(&builder)?
    } else {
        re.stage(&builder)?
    };
    let ms = t.elapsed().as_secs_f64() * 1e3;
    let runs: u64 = [s.is_match.stats(), s.find.stats(), s.rfind.stats()]
        .iter()
        .map(|st| st.runs)
        .sum();
    let mode = if unicode { "utf-8" } else { "bytes" };
    println!("{pattern}\t{mode}\t{ms:.0}\t{}\t{runs}", s.states.0);
    if std::env::var_os("SCALE_STATS").is_some() {
        // Each function's extraction statistics, one line each.
        let stats = [s.is_match.stats(), s.find.stats(), s.rfind.stats()];
        for (name, st) in ["is_match", "find", "rfind"].iter().zip(stats) {
            println!("{name}: {st}");
        }
    }
    Ok(())
}
