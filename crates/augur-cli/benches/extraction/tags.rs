//! Tables 5 and 5b: the cost of a tag by stack depth, for both taggers,
//! as part of recording an operation (recursion to depth D in the staged
//! closure) and alone (`augur::trace::tag_cost`).

use crate::measure::{check_structured, count, measure, Plan};
use augur::{Builder, Dyn, Extracted, Stats, Tagger};
use augur_cli::bench::us;
use augur_cli::programs::Fn1;
use std::hint::black_box;

// ---------------------------------------------------------------------------
// 5. Tag cost by stack depth
// ---------------------------------------------------------------------------

/// Operations performed at the bottom of the stack.
const TAG_OPS: usize = 1000;

/// Recurses `depth` frames, then performs `ops` statements `x.set(x + 1)`.
/// Returns how many bytes of stack the recursion used, to check that the
/// frames really are there (a tail call turned into a loop would use none).
#[inline(never)]
#[augur::staged]
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

#[augur::staged]
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

pub(crate) struct TagRow {
    pub(crate) tagger: Tagger,
    pub(crate) depth: u32,
    pub(crate) used: &'static str,
    /// ns per tag: trace time over tags taken.
    pub(crate) per_tag: f64,
    /// ns per tag: trace time with the operations minus without, over the
    /// difference in tags (drops the fixed cost of a run).
    pub(crate) per_tag_diff: f64,
}

#[augur::staged]
pub(crate) fn tagger_name(t: Tagger) -> &'static str {
    match t {
        Tagger::FramePointer => "FramePointer",
        Tagger::Unwinder => "Unwinder",
    }
}

#[augur::staged]
fn tags(s: &Stats) -> u64 {
    s.tags_frame_pointer + s.tags_unwinder
}

pub(crate) fn bench_tag_depth(plan: &Plan) -> Vec<TagRow> {
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
// 5b. The tag alone: `call_path` at depth D inside a driver frame.
// ---------------------------------------------------------------------------

/// Minimum over repetitions of ns per tag, for both taggers and several depths.
pub(crate) fn bench_tag_alone(plan: &Plan) -> Vec<(Tagger, u32, f64)> {
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
