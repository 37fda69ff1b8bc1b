//! Tutorial chapter 4: prophecy variables.
//!
//! Code generated early depends on what later code will need: a prophecy
//! predicts it, later code requires it, and augur re-runs the first stage
//! until every prediction holds.
//!
//! Run with `cargo run -p augur-staging --example tutorial_4_prophecy`
//! (see `augur::tutorial::ch4_prophecy`).

use augur::exec::interp::Value;
use augur::prophecy::{Prophecy, Set};
use augur::{Builder, Dyn, ProphecyMode};

/// The statistics a [`Summary`] can compute.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Stat {
    Sum,
    Min,
    Max,
}

/// One pass over an array that computes only the statistics later code
/// reads.
struct Summary {
    wanted: Prophecy<Set<Stat>>,
    sum: Dyn<i32>,
    min: Dyn<i32>,
    max: Dyn<i32>,
}

#[augur::staged]
fn summarize(xs: Dyn<*mut i32>, n: Dyn<i32>) -> Summary {
    let wanted = Prophecy::named("statistics read", Set::new());
    let w = wanted.get(); // the prediction: read once, used while generating
    let sum = Dyn::named("sum", 0);
    let min = Dyn::named("min", i32::MAX);
    let max = Dyn::named("max", i32::MIN);
    let i = Dyn::named("i", 0);
    while i.lt(n).is_true() {
        let x = Dyn::named("x", xs.at(i));
        if w.contains(&Stat::Sum) {
            sum.set(sum + x);
        }
        if w.contains(&Stat::Min) {
            min.set(Dyn::select(x.lt(min), x, min));
        }
        if w.contains(&Stat::Max) {
            max.set(Dyn::select(x.gt(max), x, max));
        }
        i.set(i + 1);
    }
    Summary {
        wanted,
        sum,
        min,
        max,
    }
}

impl Summary {
    /// The statistic `s`, and the requirement that the loop computes it.
    /// `#[track_caller]`: `explain` names the line that read it.
    #[track_caller]
    #[augur::staged]
    fn get(&self, s: Stat) -> Dyn<i32> {
        self.wanted.require(Set::of([s]));
        match s {
            Stat::Sum => self.sum,
            Stat::Min => self.min,
            Stat::Max => self.max,
        }
    }
}

#[augur::staged]
fn sum_or_max_ref(xs: &[i32], which: i32) -> i32 {
    if which == 0 {
        xs.iter().sum()
    } else {
        xs.iter().copied().max().unwrap_or(i32::MIN)
    }
}

#[augur::staged]
fn main() -> augur::Result<()> {
    // 1. The smallest prophecy: copy `x` only if some later path reads the
    //    copy. `reads_copy` is first-stage: two different programs.
    for reads_copy in [false, true] {
        let f = Builder::new().extract("first_digit", move |x: Dyn<i32>| {
            let needed = Prophecy::named("original read", false);
            let original = Dyn::named("original", 0);
            if needed.get() {
                original.set(x); // generated only if a later path reads it
            }
            while x.gt(9).is_true() {
                x.set(x / 10);
            }
            if reads_copy && x.eq(1).is_true() {
                needed.require(true); // this path reads the copy
                x.set(original);
            }
            x
        })?;
        println!("== first_digit, reads_copy = {reads_copy} ==");
        println!("{}{}", f.c_code(), f.explain());
        println!("stats: {}\n", f.stats());
        assert_eq!(f.c_code().contains("original = arg0"), reads_copy);
        assert_eq!(f.stats().prophecy_restarts, u64::from(reads_copy));
        for x in [0, 7, 123, 1234, 98765] {
            let mut d = x;
            while d > 9 {
                d /= 10;
            }
            let want = if reads_copy && d == 1 { x } else { d };
            assert_eq!(f.interpret(&[x.into()])?, Value::I32(want));
        }
    }

    // 2. The worked example: statistics computed only if read, on any path.
    let f = Builder::new().extract(
        "sum_or_max",
        |xs: Dyn<*mut i32>, n: Dyn<i32>, which: Dyn<i32>| {
            let s = summarize(xs, n);
            Dyn::if_else(which.eq(0), || s.get(Stat::Sum), || s.get(Stat::Max))
        },
    )?;
    println!("== sum_or_max ==\n{}{}", f.c_code(), f.explain());
    println!("stats: {}\n", f.stats());
    let code = f.c_code();
    assert!(code.contains("sum = sum + x") && code.contains("x > max"));
    assert!(!code.contains("x < min"), "nobody reads the minimum");
    let compiled = f.compile()?;
    for xs in [vec![], vec![4], vec![3, -8, 11, 0]] {
        for which in [0, 1] {
            let mut buf = xs.clone();
            // SAFETY: `buf` holds the `n` int32_t the function reads.
            let c = unsafe { (compiled.get())(buf.as_mut_ptr(), xs.len() as i32, which) };
            assert_eq!(c, sum_or_max_ref(&xs, which));
            println!("sum_or_max({xs:?}, {which}) = {c}");
        }
    }

    // 3. Every mode gives the same code; they differ in how many runs it
    //    takes to get there.
    for mode in [
        ProphecyMode::Paper,
        ProphecyMode::Collect,
        ProphecyMode::Adaptive,
    ] {
        let g = Builder::new().prophecy_mode(mode).extract(
            "sum_or_max",
            |xs: Dyn<*mut i32>, n: Dyn<i32>, which: Dyn<i32>| {
                let s = summarize(xs, n);
                Dyn::if_else(which.eq(0), || s.get(Stat::Sum), || s.get(Stat::Max))
            },
        )?;
        assert_eq!(g.c_code(), code);
        let st = g.stats();
        println!(
            "{mode:?}: {} attempts, {} prophecy restarts, {} runs in all",
            st.attempts, st.prophecy_restarts, st.total_runs
        );
    }

    println!("\nall results agree with plain Rust");
    Ok(())
}
