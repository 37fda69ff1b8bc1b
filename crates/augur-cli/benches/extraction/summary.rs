//! Table 6, the summary: the headline figures of every table against
//! their targets and BuildIt's, with growth exponents fitted over the rows.

use crate::measure::Sample;
use crate::shapes::{IfsRow, LoopIfsRow, NestRow, StraightRow};
use crate::tags::{tagger_name, TagRow};
use augur::Tagger;
use augur_cli::bench::{ms, us};
use std::time::Duration;

/// The exponent `k` of the least-squares fit `time ∝ n^k` over the rows:
/// about 1 for linear growth, 2 for quadratic. A fit over every size is
/// far less sensitive to one noisy row than the ratio of two rows.
#[augur::staged]
fn growth_exponent(points: &[(f64, Duration)]) -> f64 {
    let xy: Vec<(f64, f64)> = points
        .iter()
        .map(|&(n, t)| (n.ln(), t.as_secs_f64().ln()))
        .collect();
    let len = xy.len() as f64;
    let (mx, my) = (
        xy.iter().map(|p| p.0).sum::<f64>() / len,
        xy.iter().map(|p| p.1).sum::<f64>() / len,
    );
    let cov: f64 = xy.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let var: f64 = xy.iter().map(|p| (p.0 - mx) * (p.0 - mx)).sum();
    cov / var
}

#[augur::staged]
fn verdict(ok: bool) -> &'static str {
    if ok {
        "met"
    } else {
        "MISSED"
    }
}

/// Two summary rows for `what`: its runs against BuildIt's `formula`
/// (= `bound`, also the target), and its time.
#[augur::staged]
fn runs_and_time(what: &str, formula: &str, bound: u64, sample: &Sample) {
    println!(
        "| {what}: runs | {} | ≤ {formula} = {bound}: {} | {formula} = {bound} |",
        sample.stats.runs,
        verdict(sample.stats.runs <= bound)
    );
    println!("| {what}: time | {:.0} µs | | |", us(sample.min()));
}

#[augur::staged]
pub(crate) fn summary(
    straight: &[StraightRow],
    ifs: &[IfsRow],
    nest: &[NestRow],
    loop_ifs: &[LoopIfsRow],
    tag_rows: &[TagRow],
    tag_alone: &[(Tagger, u32, f64)],
) {
    println!("## 6. Summary\n");
    let nproc = std::thread::available_parallelism().map_or(0, |n| n.get());
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".into());
    let profile = if cfg!(debug_assertions) {
        "debug (targets are for release builds)"
    } else {
        "release"
    };
    println!("nproc {nproc}, CPU {cpu}, build {profile}\n");
    println!("| measure | augur | target | BuildIt |");
    println!("|---|---:|---|---|");

    let sl = |n: usize| straight.iter().find(|r| r.n == n).expect("row");
    let t2048 = sl(2048).sample.min();
    println!(
        "| straight-line, 2048 statements | {:.2} ms | < 3 ms: {} | 129 ms |",
        ms(t2048),
        verdict(t2048 < Duration::from_millis(3))
    );
    let k = growth_exponent(
        &straight
            .iter()
            .map(|r| (r.n as f64, r.sample.min()))
            .collect::<Vec<_>>(),
    );
    println!(
        "| straight-line, growth exponent k of time ∝ n^k (n = 256…4096) | {k:.2} | ≈ 1 (linear): {} | ≈ 2 (quadratic) |",
        verdict(k < 1.3)
    );

    for form in ["`augur::range(0..n)`", "plain `for k in 0..n`"] {
        let r = ifs
            .iter()
            .filter(|r| r.form == form)
            .max_by_key(|r| r.n)
            .expect("row");
        let s = &r.sample.stats;
        println!(
            "| {} sequential ifs, {form}: runs (total) | {} ({}) | n+1 = {}: {} | 2n+1 = {} |",
            r.n,
            s.runs,
            s.total_runs,
            r.n + 1,
            verdict(s.runs <= r.n + 2),
            2 * r.n + 1
        );
        // Every run replays the path to its branch from the entry, so the
        // total work grows as n² here, in augur as in BuildIt.
        let k = growth_exponent(
            &ifs.iter()
                .filter(|r| r.form == form)
                .map(|r| (r.n as f64, r.sample.min()))
                .collect::<Vec<_>>(),
        );
        println!(
            "| {} sequential ifs, {form}: time (growth exponent over n = 8…256) | {:.2} ms ({k:.2}) | | |",
            r.n,
            ms(r.sample.min())
        );
    }

    let deepest = nest.last().expect("row");
    runs_and_time(
        &format!("dyn loops nested {} deep", deepest.d),
        "2d+1",
        2 * deepest.d as u64 + 1,
        &deepest.sample,
    );

    let widest = loop_ifs.last().expect("row");
    runs_and_time(
        &format!("dyn loop with {} ifs", widest.n),
        "2n+3",
        2 * widest.n + 3,
        &widest.sample,
    );

    for tagger in [Tagger::FramePointer, Tagger::Unwinder] {
        let row = |d: u32| {
            tag_rows
                .iter()
                .find(|r| r.tagger == tagger && r.depth == d)
                .expect("row")
        };
        let r = row(20);
        // A whole recorded operation (tag, compare, node, maps); the tag
        // target is checked on the tag-alone row below.
        let target = String::new();
        println!(
            "| ns per recorded op (tag included) at depth 20, {} (ran: {}) | {:.0} (difference: {:.0}) | {target} | 3.6–9.3 µs |",
            tagger_name(tagger),
            r.used,
            r.per_tag,
            r.per_tag_diff
        );
        // The slope over depth isolates the walk itself from the rest of
        // recording an operation.
        println!(
            "| ns per extra stack frame per tag, {} | {:.1} | | |",
            tagger_name(tagger),
            (row(40).per_tag - row(0).per_tag) / 40.0
        );
    }
    for &(tagger, depth, ns) in tag_alone.iter().filter(|r| r.1 == 20) {
        let target = if tagger == Tagger::FramePointer {
            format!("< 200 ns: {}", verdict(ns < 200.0))
        } else {
            String::new()
        };
        println!(
            "| the tag alone at depth {depth}, {} | {ns:.0} ns | {target} | 3.6 µs (depth 10) – 9.3 µs (depth 40) |",
            tagger_name(tagger)
        );
    }
    println!();
}
