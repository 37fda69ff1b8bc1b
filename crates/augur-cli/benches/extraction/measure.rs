//! Measuring one extraction: how many repetitions a row takes, the timed
//! repetitions and their minimum, median and stats, the table cells made
//! from them, and the structured-code check every program shares.

use augur::{Extracted, Stats};
use augur_cli::bench::us;
use std::hint::black_box;
use std::time::{Duration, Instant};

/// How many repetitions each table row takes.
pub(crate) struct Plan {
    /// At least this many.
    pub(crate) min_reps: usize,
    /// More while the row has taken less than this (cheap rows get many
    /// repetitions, which matters on a shared machine: the minimum of many
    /// is what filters out the time other processes took).
    pub(crate) budget: Duration,
    /// At most this many.
    pub(crate) max_reps: usize,
}

/// The repetitions of one extraction.
pub(crate) struct Sample {
    /// Wall time of each `Builder::extract`, sorted.
    wall: Vec<Duration>,
    /// The stats of the fastest repetition.
    pub(crate) stats: Stats,
    /// The smallest trace time over the repetitions (for per-tag costs,
    /// where structuring and passes are not part of what is measured).
    pub(crate) min_trace: Duration,
}

impl Sample {
    #[augur::staged]
    pub(crate) fn min(&self) -> Duration {
        self.wall[0]
    }
    #[augur::staged]
    pub(crate) fn median(&self) -> Duration {
        self.wall[self.wall.len() / 2]
    }
}

/// Extracts once untimed (warm-up; its result is returned for checking),
/// then as many times as `plan` says, timed.
#[augur::staged]
pub(crate) fn measure<S: Copy>(
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
#[augur::staged]
pub(crate) fn us_pair(s: &Sample) -> String {
    format!("{:.1} ({:.1})", us(s.min()), us(s.median()))
}

/// Extraction time per run of the closure, in microseconds.
#[augur::staged]
pub(crate) fn us_per_run(s: &Sample) -> String {
    format!("{:.1}", us(s.min()) / s.stats.total_runs as f64)
}

/// Trace / structure / passes of the fastest repetition, in microseconds.
#[augur::staged]
pub(crate) fn phases(s: &Stats) -> String {
    format!(
        "{:.0} / {:.0} / {:.0}",
        us(s.time_trace),
        us(s.time_structure),
        us(s.time_passes)
    )
}

#[augur::staged]
pub(crate) fn count(haystack: &str, needle: &str) -> usize {
    haystack.matches(needle).count()
}

/// The checks every program shares: structured code only.
#[augur::staged]
pub(crate) fn check_structured<S: Copy>(e: &Extracted<S>, what: &str) {
    let c = e.c_code();
    assert_eq!(e.stats().gotos, 0, "{what}: gotos in\n{c}");
    assert_eq!(count(&c, "goto"), 0, "{what}: goto in\n{c}");
}
