//! Extraction benchmark: how long `Builder::extract` takes and how many runs
//! of the closure it needs, on the program shapes of the BuildIt comparison.
//!
//! `cargo bench -p augur-cli --bench extraction` prints markdown tables;
//! `-- --quick` takes fewer repetitions (and is what a debug build under
//! `cargo test --benches` runs, since cargo then passes no `--bench` flag).
//!
//! Every number is the minimum (and median) over repetitions of a full
//! extraction: all runs of the closure, structuring and the IR passes. The
//! minimum is the figure to compare, because scheduling noise only ever
//! adds time; the median shows how noisy the machine was. Each program's
//! generated code is checked once, so a table row cannot silently measure a
//! program that extracted into something else.
//!
//! The programs of tables 1 to 4 are `augur_cli::programs`' (the ones
//! `augur bench scaling` measures too); the tag-depth programs are here.

use augur::{Builder, Dyn, Extracted, Stats, Tagger};
use augur_cli::bench::{ms, us};
use augur_cli::programs::{self, Fn1, FILLER};
use std::hint::black_box;
use std::time::{Duration, Instant};

/// How many repetitions each table row takes.
struct Plan {
    /// At least this many.
    min_reps: usize,
    /// More while the row has taken less than this (cheap rows get many
    /// repetitions, which matters on a shared machine: the minimum of many
    /// is what filters out the time other processes took).
    budget: Duration,
    /// At most this many.
    max_reps: usize,
}

/// The repetitions of one extraction.
struct Sample {
    /// Wall time of each `Builder::extract`, sorted.
    wall: Vec<Duration>,
    /// The stats of the fastest repetition.
    stats: Stats,
    /// The smallest trace time over the repetitions (for per-tag costs,
    /// where structuring and passes are not part of what is measured).
    min_trace: Duration,
}

impl Sample {
    fn min(&self) -> Duration {
        self.wall[0]
    }
    fn median(&self) -> Duration {
        self.wall[self.wall.len() / 2]
    }
}

/// Extracts once untimed (warm-up; its result is returned for checking),
/// then as many times as `plan` says, timed.
fn measure<S: Copy>(
    plan: &Plan,
    mut extract: impl FnMut() -> Extracted<S>,
) -> (Sample, Extracted<S>) {
    let first = extract();
    let start = Instant::now();
    let mut runs: Vec<(Duration, Stats)> = Vec::new();
    while runs.len() < plan.min_reps
        || (runs.len() < plan.max_reps && start.elapsed() < plan.budget)
    {
        let t = Instant::now();
        let e = black_box(extract());
        runs.push((t.elapsed(), e.stats().clone()));
    }
    runs.sort_by_key(|r| r.0);
    let min_trace = runs
        .iter()
        .map(|r| r.1.time_trace)
        .min()
        .unwrap_or_default();
    // Runs and tag counts must not vary between repetitions: extraction is
    // deterministic, so a difference would be an engine bug, not noise.
    for (_, s) in &runs {
        assert_eq!(
            (s.runs, s.total_runs, s.tags_frame_pointer + s.tags_unwinder),
            (
                first.stats().runs,
                first.stats().total_runs,
                first.stats().tags_frame_pointer + first.stats().tags_unwinder
            ),
            "repetitions of one extraction differ"
        );
    }
    let sample = Sample {
        wall: runs.iter().map(|r| r.0).collect(),
        stats: runs.swap_remove(0).1,
        min_trace,
    };
    (sample, first)
}

/// `min (median)` in microseconds.
fn us_pair(s: &Sample) -> String {
    format!("{:.1} ({:.1})", us(s.min()), us(s.median()))
}

/// Extraction time per run of the closure, in microseconds.
fn us_per_run(s: &Sample) -> String {
    format!("{:.1}", us(s.min()) / s.stats.total_runs as f64)
}

/// Trace / structure / passes of the fastest repetition, in microseconds.
fn phases(s: &Stats) -> String {
    format!(
        "{:.0} / {:.0} / {:.0}",
        us(s.time_trace),
        us(s.time_structure),
        us(s.time_passes)
    )
}

fn count(haystack: &str, needle: &str) -> usize {
    haystack.matches(needle).count()
}

/// The checks every program shares: structured code only.
fn check_structured<S: Copy>(e: &Extracted<S>, what: &str) {
    let c = e.c_code();
    assert_eq!(e.stats().gotos, 0, "{what}: gotos in\n{c}");
    assert_eq!(count(&c, "goto"), 0, "{what}: goto in\n{c}");
}

// ---------------------------------------------------------------------------
// 1. Straight-line code
// ---------------------------------------------------------------------------

struct StraightRow {
    n: usize,
    sample: Sample,
}

fn bench_straight_line(plan: &Plan) -> Vec<StraightRow> {
    println!("## 1. Straight-line code: n × `x.set(x + 1)` in a plain Rust loop\n");
    println!(
        "| n | runs | statements | min µs (median) | ns/statement | trace / structure / passes µs |"
    );
    println!("|---:|---:|---:|---:|---:|---|");
    let mut rows = Vec::new();
    for n in [256, 512, 1024, 2048, 4096] {
        let (sample, first) = measure(plan, || {
            programs::straight_line(n).expect("straight-line extraction")
        });
        check_structured(&first, "straight-line");
        let c = first.c_code();
        // One statement per iteration, nothing merged or dropped.
        assert_eq!(count(&c, " + 1;"), n, "straight-line n = {n}:\n{c}");
        assert_eq!(first.stats().runs, 1);
        let s = &sample.stats;
        println!(
            "| {n} | {} | {} | {} | {:.0} | {} |",
            s.runs,
            s.statements,
            us_pair(&sample),
            sample.min().as_secs_f64() * 1e9 / n as f64,
            phases(s)
        );
        rows.push(StraightRow { n, sample });
    }
    println!();
    rows
}

// ---------------------------------------------------------------------------
// 2. Sequential ifs
// ---------------------------------------------------------------------------

struct IfsRow {
    n: u64,
    form: &'static str,
    sample: Sample,
}

fn bench_sequential_ifs(plan: &Plan) -> Vec<IfsRow> {
    println!(
        "## 2. n sequential ifs `if x.lt(k).is_true() {{ y.set(y + 1) }}`, {FILLER} statements between\n"
    );
    println!(
        "| n | loop around the ifs | runs | BuildIt runs (2n+1) | total runs | restarts | memo hits | statements | min µs (median) | µs/run | trace / structure / passes µs |"
    );
    println!("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---|");
    let mut rows = Vec::new();
    for n in [8i64, 16, 32, 64, 128, 256] {
        // A plain Rust loop around a dyn if whose condition mentions `k`:
        // the engine takes the second `if` for a loop candidate, sees the
        // operation differ and restarts once with the head marked as a
        // plain loop. `range` puts `k` in every tag: no candidate, no restart.
        let forms = [
            ("plain `for k in 0..n`", true),
            ("`augur::range(0..n)`", false),
        ];
        for (form, plain) in forms {
            let (sample, first) = measure(plan, || {
                programs::sequential_ifs(n, plain).expect("sequential ifs")
            });
            check_structured(&first, "sequential ifs");
            let c = first.c_code();
            assert_eq!(
                count(&c, "if ("),
                n as usize,
                "sequential ifs n = {n}:\n{c}"
            );
            assert_eq!(count(&c, "while (") + count(&c, "for ("), 0, "{c}");
            assert_eq!(count(&c, " + 3;"), n as usize * FILLER, "{c}");
            assert_eq!(
                first.interpret(&[3i64.into()]).expect("interpret"),
                programs::sequential_ifs_ref(n, 3).into(),
                "{c}"
            );
            let s = &sample.stats;
            println!(
                "| {n} | {form} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                s.runs,
                2 * n + 1,
                s.total_runs,
                s.loop_restarts,
                s.memo_hits,
                s.statements,
                us_pair(&sample),
                us_per_run(&sample),
                phases(s)
            );
            rows.push(IfsRow {
                n: n as u64,
                form,
                sample,
            });
        }
    }
    println!();
    rows
}

// ---------------------------------------------------------------------------
// 3. Nested dyn loops
// ---------------------------------------------------------------------------

struct NestRow {
    d: u32,
    sample: Sample,
}

fn bench_nested_loops(plan: &Plan) -> Vec<NestRow> {
    println!("## 3. Dyn loops nested d deep (recursion over a plain depth)\n");
    println!(
        "| d | runs | BuildIt runs (2d+1) | loops closed | loop audits | memo hits | min µs (median) | µs/run | trace / structure / passes µs |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|---|");
    let mut rows = Vec::new();
    for d in 1..=8u32 {
        let (sample, first) = measure(plan, || programs::nested_loops(d).expect("nested loops"));
        check_structured(&first, "nested loops");
        let c = first.c_code();
        assert_eq!(
            count(&c, "while (") + count(&c, "for ("),
            d as usize,
            "nested loops d = {d}:\n{c}"
        );
        // n^d iterations of the innermost statement: check the semantics
        // too, since a loop closed at the wrong point would still count.
        let want = 3i64.pow(d);
        assert_eq!(
            first.interpret(&[3i64.into()]).expect("interpret"),
            want.into(),
            "{c}"
        );
        let s = &sample.stats;
        println!(
            "| {d} | {} | {} | {} | {} | {} | {} | {} | {} |",
            s.runs,
            2 * d + 1,
            s.back_edges,
            s.loop_audits,
            s.memo_hits,
            us_pair(&sample),
            us_per_run(&sample),
            phases(s)
        );
        rows.push(NestRow { d, sample });
    }
    println!();
    rows
}

// ---------------------------------------------------------------------------
// 4. A dyn loop containing n ifs
// ---------------------------------------------------------------------------

struct LoopIfsRow {
    n: u64,
    sample: Sample,
}

fn bench_loop_with_ifs(plan: &Plan) -> Vec<LoopIfsRow> {
    println!("## 4. One dyn loop containing n ifs with different conditions\n");
    println!(
        "| n | runs | BuildIt runs (2n+3) | total runs | restarts | loop audits | memo hits | min µs (median) | µs/run | trace / structure / passes µs |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|");
    let mut rows = Vec::new();
    for n in [1i64, 2, 4, 8, 16, 32] {
        let (sample, first) = measure(plan, || {
            programs::loop_with_ifs(n).expect("dyn loop with ifs")
        });
        check_structured(&first, "loop with ifs");
        let c = first.c_code();
        assert_eq!(
            count(&c, "while (") + count(&c, "for ("),
            1,
            "loop with ifs n = {n}:\n{c}"
        );
        assert_eq!(count(&c, "if ("), n as usize, "loop with ifs n = {n}:\n{c}");
        for (x, m) in [(0i64, 0i64), (1, 7), (5, 12)] {
            let got = first.interpret(&[x.into(), m.into()]).expect("interpret");
            assert_eq!(
                got,
                programs::loop_with_ifs_ref(n, x, m).into(),
                "x = {x}, m = {m}:\n{c}"
            );
        }
        let s = &sample.stats;
        println!(
            "| {n} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            s.runs,
            2 * n + 3,
            s.total_runs,
            s.loop_restarts,
            s.loop_audits,
            s.memo_hits,
            us_pair(&sample),
            us_per_run(&sample),
            phases(s)
        );
        rows.push(LoopIfsRow {
            n: n as u64,
            sample,
        });
    }
    println!();
    rows
}

// ---------------------------------------------------------------------------
// 5. Tag cost by stack depth
// ---------------------------------------------------------------------------

/// Operations performed at the bottom of the stack.
const TAG_OPS: usize = 1000;

/// Recurses `depth` frames, then performs `ops` statements `x.set(x + 1)`.
/// Returns how many bytes of stack the recursion used, to check that the
/// frames really are there (a tail call turned into a loop would use none).
#[inline(never)]
fn descend(depth: u32, x: Dyn<i64>, ops: usize) -> usize {
    let marker = 0u8;
    let here = black_box(&marker) as *const u8 as usize;
    if depth == 0 {
        for _ in 0..ops {
            x.set(x + 1);
        }
        return here;
    }
    // Using the result after the call keeps the call out of tail position.
    let bottom = descend(depth - 1, x, ops);
    black_box(bottom)
}

/// The stack span of the last extraction's recursion (bytes).
static SPAN: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

fn at_depth(tagger: Tagger, depth: u32, ops: usize) -> Extracted<Fn1> {
    Builder::new()
        .tagger(tagger)
        .extract("deep", move |a: Dyn<i64>| {
            let x = Dyn::new(a);
            let marker = 0u8;
            let top = black_box(&marker) as *const u8 as usize;
            let bottom = descend(depth, x, ops);
            SPAN.store(top - bottom, std::sync::atomic::Ordering::Relaxed);
            x
        })
        .expect("tag depth extraction")
}

struct TagRow {
    tagger: Tagger,
    depth: u32,
    used: &'static str,
    /// ns per tag: trace time over tags taken.
    per_tag: f64,
    /// ns per tag: trace time with the operations minus without, over the
    /// difference in tags (drops the fixed cost of a run).
    per_tag_diff: f64,
}

fn tagger_name(t: Tagger) -> &'static str {
    match t {
        Tagger::FramePointer => "FramePointer",
        Tagger::Unwinder => "Unwinder",
    }
}

fn tags(s: &Stats) -> u64 {
    s.tags_frame_pointer + s.tags_unwinder
}

fn bench_tag_depth(plan: &Plan) -> Vec<TagRow> {
    println!(
        "## 5. Tag cost by stack depth: recurse D frames, then {TAG_OPS} × `x.set(x + 1)` ({} tagged operations)\n",
        2 * TAG_OPS
    );
    println!(
        "| tagger | D | tagger used | stack span B | tags | trace µs | trace µs, no ops | ns/op (trace/tags) | ns/op (difference) | ns/op over D = 0 |"
    );
    println!("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|");
    let mut rows = Vec::new();
    for tagger in [Tagger::FramePointer, Tagger::Unwinder] {
        let mut spans = Vec::new();
        let mut at_zero = None;
        for depth in [0u32, 10, 20, 40] {
            let (full, first) = measure(plan, || at_depth(tagger, depth, TAG_OPS));
            let span = SPAN.load(std::sync::atomic::Ordering::Relaxed);
            check_structured(&first, "tag depth");
            let c = first.c_code();
            assert_eq!(count(&c, " + 1;"), TAG_OPS, "tag depth D = {depth}:\n{c}");
            assert_eq!(first.stats().runs, 1);
            let (empty, _) = measure(plan, || at_depth(tagger, depth, 0));
            let (s, e) = (&full.stats, &empty.stats);
            let per_tag = full.min_trace.as_secs_f64() * 1e9 / tags(s) as f64;
            let per_tag_diff = (full.min_trace.as_secs_f64() - empty.min_trace.as_secs_f64()) * 1e9
                / (tags(s) - tags(e)) as f64;
            let base = *at_zero.get_or_insert(per_tag);
            println!(
                "| {} | {depth} | {} | {span} | {} | {:.0} | {:.1} | {per_tag:.0} | {per_tag_diff:.0} | {:.0} |",
                tagger_name(tagger),
                s.tagger_used(),
                tags(s),
                us(full.min_trace),
                us(empty.min_trace),
                per_tag - base,
            );
            spans.push(span);
            rows.push(TagRow {
                tagger,
                depth,
                used: s.tagger_used(),
                per_tag,
                per_tag_diff,
            });
        }
        // Deeper recursion must use more stack, or the depths are not real.
        assert!(
            spans.windows(2).all(|w| w[0] < w[1]),
            "recursion was flattened: spans {spans:?}"
        );
    }
    println!(
        "\nns/op is the whole cost of recording one operation (tag walk, node, memo entry); \
         the last column is what the walk over the D extra frames adds to it.\n"
    );
    rows
}

// ---------------------------------------------------------------------------
// 6. Summary
// ---------------------------------------------------------------------------

/// The exponent `k` of the least-squares fit `time ∝ n^k` over the rows:
/// about 1 for linear growth, 2 for quadratic. A fit over every size is
/// far less sensitive to one noisy row than the ratio of two rows.
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

// ---------------------------------------------------------------------------
// 5b. The tag alone: `call_path` at depth D inside a driver frame.
// ---------------------------------------------------------------------------

/// Minimum over repetitions of ns per tag, for both taggers and several depths.
fn bench_tag_alone(plan: &Plan) -> Vec<(Tagger, u32, f64)> {
    println!("## 5b. The tag alone: one call-path hash at stack depth D (+ the driver's frames)\n");
    println!("| tagger | D | ns per tag (min) |");
    println!("|---|---:|---:|");
    let mut rows = Vec::new();
    for tagger in [Tagger::FramePointer, Tagger::Unwinder] {
        for depth in [0u32, 10, 20, 40] {
            let reps = if tagger == Tagger::FramePointer {
                20_000
            } else {
                500
            };
            let mut best = f64::MAX;
            for _ in 0..plan.min_reps.max(5) {
                let ns = augur::trace::tag_cost(tagger, depth, reps).as_nanos() as f64;
                best = best.min(ns);
            }
            println!("| {} | {depth} | {best:.0} |", tagger_name(tagger));
            rows.push((tagger, depth, best));
        }
    }
    println!();
    rows
}

fn verdict(ok: bool) -> &'static str {
    if ok {
        "met"
    } else {
        "MISSED"
    }
}

/// Two summary rows for `what`: its runs against BuildIt's `formula`
/// (= `bound`, also the target), and its time.
fn runs_and_time(what: &str, formula: &str, bound: u64, sample: &Sample) {
    println!(
        "| {what}: runs | {} | ≤ {formula} = {bound}: {} | {formula} = {bound} |",
        sample.stats.runs,
        verdict(sample.stats.runs <= bound)
    );
    println!("| {what}: time | {:.0} µs | | |", us(sample.min()));
}

fn summary(
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

fn main() {
    let args: Vec<String> = std::env::args().collect();
    // `cargo bench` passes `--bench`; without it (`cargo test --benches`)
    // this is a smoke run, so it is quick too.
    let quick = args.iter().any(|a| a == "--quick") || !args.iter().any(|a| a == "--bench");
    let plan = if quick {
        Plan {
            min_reps: 3,
            budget: Duration::ZERO,
            max_reps: 3,
        }
    } else {
        Plan {
            min_reps: 15,
            budget: Duration::from_millis(500),
            max_reps: 500,
        }
    };
    println!(
        "# augur extraction benchmark\n\nEach row: {} to {} repetitions of `Builder::extract` \
         (more for cheap rows, up to {} ms), time as min (median).\n",
        plan.min_reps,
        plan.max_reps,
        plan.budget.as_millis()
    );
    let straight = bench_straight_line(&plan);
    let ifs = bench_sequential_ifs(&plan);
    let nest = bench_nested_loops(&plan);
    let loop_ifs = bench_loop_with_ifs(&plan);
    let tag_rows = bench_tag_depth(&plan);
    let tag_alone = bench_tag_alone(&plan);
    summary(&straight, &ifs, &nest, &loop_ifs, &tag_rows, &tag_alone);
}
