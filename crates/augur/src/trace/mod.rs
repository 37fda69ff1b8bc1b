//! The extraction engine (re-execution under a decision oracle).
//!
//! `context` holds what a thread keeps while it extracts, behind one guard;
//! `driver` runs the closure again and again; `engine` records what each
//! run does into the `graph`, keyed by program-point tags (`tag`: the call
//! path and the live `Static` values); [`stats`] counts it all. Outside the
//! crate only the configuration, the counters, the [`Tagger`] choice and
//! [`tag_cost`] (for benchmarks) are visible.

mod audit;
mod batch;
mod cells;
mod chain;
mod config;
pub(crate) mod context;
mod decisions;
pub(crate) mod driver;
pub(crate) mod engine;
pub(crate) mod frames;
pub(crate) mod graph;
mod jobs;
mod output;
pub(crate) mod points;
mod record;
pub(crate) mod recorder;
mod run;
mod schedule;
pub mod stats;
pub(crate) mod tag;
mod values;

pub use config::Config;
pub use stats::Stats;
pub use tag::Tagger;

/// The time one program-point tag takes, taken `depth` frames below the
/// frame that runs a staged closure (as deep user code would be), averaged
/// over `reps` tags: what the engine pays per operation it records. For
/// benchmarks.
///
/// ```
/// let t = augur::trace::tag_cost(augur::Tagger::FramePointer, 10, 1000);
/// assert!(t < std::time::Duration::from_millis(1));
/// ```
pub fn tag_cost(tagger: Tagger, depth: u32, reps: u32) -> std::time::Duration {
    #[inline(never)]
    fn at_depth(depth: u32, tagger: Tagger, reps: u32, stop: usize) -> std::time::Duration {
        if depth > 0 {
            // Work after the call keeps the recursion from becoming a loop.
            let d = at_depth(std::hint::black_box(depth - 1), tagger, reps, stop);
            let d = std::hint::black_box(d);
            return d + std::time::Duration::ZERO;
        }
        let mut counts = tag::TagCounts::default();
        let start = std::time::Instant::now();
        let mut h = 0u64;
        for _ in 0..reps {
            h ^= tag::call_path(tagger, stop, &mut counts);
        }
        std::hint::black_box(h);
        start.elapsed() / reps.max(1)
    }
    let mut per_tag = std::time::Duration::ZERO;
    tag::driver_frame(&mut |stop| per_tag = at_depth(depth, tagger, reps, stop));
    per_tag
}
