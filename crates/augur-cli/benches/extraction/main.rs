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

mod measure;
mod shapes;
mod summary;
mod tags;

use measure::Plan;
use shapes::{bench_loop_with_ifs, bench_nested_loops, bench_sequential_ifs, bench_straight_line};
use std::time::Duration;
use summary::summary;
use tags::{bench_tag_alone, bench_tag_depth};

#[augur::staged]
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
