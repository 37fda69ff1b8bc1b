//! # 4. Prophecy
//!
//! Generated code often has to commit now to something only later code
//! knows. Should the input be copied before a loop overwrites it? Only if
//! some later path reads the copy. Should this loop compute the maximum as
//! well as the sum? Only if someone asks for it. Should a convolution apply
//! the ReLU that follows it as it writes? Only if what follows is that ReLU
//! on every path. A `Static` or a history cannot help: they know the past.
//!
//! A [`Prophecy`](crate::prophecy::Prophecy) knows the future, by trying:
//!
//! * [`Prophecy::named(name, initial)`](crate::prophecy::Prophecy::named)
//!   (or [`new`](crate::prophecy::Prophecy::new)) makes a prophecy whose
//!   first prediction is `initial`, usually "nothing will be needed";
//! * [`get`](crate::prophecy::Prophecy::get) reads the prediction, and the
//!   code generated now depends on it;
//! * [`require`](crate::prophecy::Prophecy::require), called later, is the
//!   precondition: if the prediction does not satisfy it, the requirement
//!   is joined into the prediction and the first stage runs again.
//!
//! When no requirement is violated any more, every prediction the generated
//! code relied on holds on every path. No intermediate representation is
//! analysed: the analysis is your first-stage code, run again.
//!
//! # The smallest prophecy
//!
//! Copy `x` before the loop overwrites it, only if a later path reads the
//! copy:
//!
//! ```
//! #[augur::staged]
//! fn main() -> augur::Result<()> {
//!     use augur::prophecy::Prophecy;
//!     use augur::{Builder, Dyn, Value};
//!
//!     for reads_copy in [false, true] {
//!         let f = Builder::new().extract("first_digit", move |x: Dyn<i32>| {
//!             let needed = Prophecy::named("original read", false);
//!             let original = Dyn::named("original", 0);
//!             if needed.get() {
//!                 original.set(x); // generated only if a later path reads it
//!             }
//!             while x.gt(9).is_true() {
//!                 x.set(x / 10);
//!             }
//!             if reads_copy && x.eq(1).is_true() {
//!                 needed.require(true); // this path reads the copy
//!                 x.set(original);
//!             }
//!             x
//!         })?;
//!         assert_eq!(f.c_code().contains("original = arg0"), reads_copy);
//!         assert_eq!(f.stats().prophecy_restarts, u64::from(reads_copy));
//!         let want = if reads_copy { 1234 } else { 1 };
//!         assert_eq!(f.interpret(&[1234.into()])?, Value::I32(want));
//!     }
//!     Ok(())
//! }
//! ```
//!
//! With `reads_copy`, the first attempt predicts `false`, generates no
//! copy, and reaches `require(true)` on the path that reads it. The
//! requirement is joined in, the prediction becomes `true`, and the second
//! attempt generates the copy; its `require(true)` holds, and that
//! attempt's code is the result. Without `reads_copy` nothing is required
//! and the first attempt is final.
//!
//! # What re-execution does
//!
//! An *attempt* is one full exploration of the closure's paths. Within an
//! attempt every read of a prophecy returns the same value, so a prophecy
//! is not part of program points. A requirement that the prediction
//! already satisfies costs nothing. One that raises a prediction somebody
//! read in this attempt (in paper mode, below: any prediction) starts a
//! new attempt with the raised prediction;
//! the code of the old attempt is thrown away and never reaches the C.
//! Predictions are kept from attempt to attempt until nothing is raised.
//!
//! Two consequences for the code you write:
//!
//! * `require` may return even when it was violated (see the modes
//!   below): the run goes on to find more violations. The code after it
//!   must stay valid with the old prediction. It is thrown away, so it
//!   only needs to be harmless: read a variable that holds nothing useful,
//!   skip an optimisation.
//! * Make a DSL's functions `#[track_caller]`: prophecies are identified,
//!   and [`explain`](crate::Extracted::explain) reports requirements, by
//!   the caller's line.
//!
//! # Lattices
//!
//! A prediction only ever grows: requirements are *joined* in, in a
//! [`Lattice`](crate::prophecy::Lattice). That is what makes re-execution
//! end, and what makes the result hold on every path: the final prediction
//! is the least value that satisfies every requirement made anywhere.
//!
//! | lattice | order | typical use |
//! |---|---|---|
//! | `bool` | `false < true` | "may be needed": a copy, a buffer, a transfer |
//! | [`Flat<T>`](crate::prophecy::Flat) | `Unknown < Exactly(v) < Conflict` | "always this one value": a threshold, a shape |
//! | [`Set<T>`](crate::prophecy::Set) | subsets | which items: fields read, live variables |
//! | [`Max<T>`](crate::prophecy::Max) | `Ord` | the largest size needed |
//! | tuples, `[L; N]` | componentwise | several facts at once |
//!
//! Your own lattice implements the trait's two methods, `satisfies` and
//! `join`; [`check_laws`](crate::prophecy::check_laws) tests them.
//!
//! # A worked example: compute only what is read
//!
//! `summarize` walks an array once and computes the sum, minimum and
//! maximum, but only those that later code reads. A `Set<Stat>` prophecy
//! says which; `Summary::get` requires the statistic it returns. Which
//! statistics are read depends on the path, and the set is the join over
//! all of them:
//!
//! ```
//! #[augur::staged]
//! fn main() -> augur::Result<()> {
//!     use augur::prophecy::{Prophecy, Set};
//!     use augur::{Builder, Dyn};
//!
//!     #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
//!     enum Stat {
//!         Sum,
//!         Min,
//!         Max,
//!     }
//!
//!     struct Summary {
//!         wanted: Prophecy<Set<Stat>>,
//!         sum: Dyn<i32>,
//!         min: Dyn<i32>,
//!         max: Dyn<i32>,
//!     }
//!
//!     fn summarize(xs: Dyn<*mut i32>, n: Dyn<i32>) -> Summary {
//!         let wanted = Prophecy::named("statistics read", Set::new());
//!         let w = wanted.get();
//!         let sum = Dyn::named("sum", 0);
//!         let min = Dyn::named("min", i32::MAX);
//!         let max = Dyn::named("max", i32::MIN);
//!         let i = Dyn::named("i", 0);
//!         while i.lt(n).is_true() {
//!             let x = Dyn::named("x", xs.at(i));
//!             if w.contains(&Stat::Sum) {
//!                 sum.set(sum + x);
//!             }
//!             if w.contains(&Stat::Min) {
//!                 min.set(Dyn::select(x.lt(min), x, min));
//!             }
//!             if w.contains(&Stat::Max) {
//!                 max.set(Dyn::select(x.gt(max), x, max));
//!             }
//!             i.set(i + 1);
//!         }
//!         Summary { wanted, sum, min, max }
//!     }
//!
//!     impl Summary {
//!         #[track_caller]
//!         fn get(&self, s: Stat) -> Dyn<i32> {
//!             self.wanted.require(Set::of([s]));
//!             // Not computed yet? Then this attempt is discarded: any value will do.
//!             match s {
//!                 Stat::Sum => self.sum,
//!                 Stat::Min => self.min,
//!                 Stat::Max => self.max,
//!             }
//!         }
//!     }
//!
//!     let f = Builder::new().extract(
//!         "sum_or_max",
//!         |xs: Dyn<*mut i32>, n: Dyn<i32>, which: Dyn<i32>| {
//!             let s = summarize(xs, n);
//!             Dyn::if_else(which.eq(0), || s.get(Stat::Sum), || s.get(Stat::Max))
//!         },
//!     )?;
//!     let c = f.c_code();
//!     assert!(c.contains("sum = sum + x;") && c.contains("x > max ? x : max"));
//!     assert!(!c.contains("x < min"), "nobody reads the minimum");
//!
//!     let compiled = f.compile()?;
//!     let mut xs = [3, -8, 11, 0];
//!     // SAFETY: `xs` holds the 4 int32_t the function reads.
//!     unsafe {
//!         assert_eq!((compiled.get())(xs.as_mut_ptr(), 4, 0), 6);
//!         assert_eq!((compiled.get())(xs.as_mut_ptr(), 4, 1), 11);
//!     }
//!     println!("{}", f.explain());
//!     Ok(())
//! }
//! ```
//!
//! The loop it generates computes two of the three statistics:
//!
//! ```c
//!   for (int32_t i = 0; i < arg1; i = i + 1) {
//!     int32_t x = arg0[i];
//!     sum = sum + x;
//!     max = x > max ? x : max;
//!   }
//! ```
//!
//! # Why a prediction has the value it has
//!
//! [`Extracted::explain`](crate::Extracted::explain) lists every prophecy
//! and history, its final value, and each requirement that raised it, by
//! attempt and line. For the example above it reads (paths shortened):
//!
//! ```text
//! prophecy `statistics read` (Set<Stat>, created at src/main.rs:32:18): {Sum, Max}
//!   initial {}
//!   attempt 1: required {Sum} at src/main.rs:56:44 -> {Sum} (at the end of the sweep)
//!   attempt 1: required {Max} at src/main.rs:56:65 -> {Sum, Max} (at the end of the sweep)
//!   required at src/main.rs:56:44, src/main.rs:56:65
//! ```
//!
//! [`Stats`](crate::Stats) counts the cost: `attempts`,
//! `prophecy_restarts`, and `total_runs` over all attempts.
//!
//! # When the first stage starts over
//!
//! [`Builder::prophecy_mode`](crate::Builder::prophecy_mode) chooses what
//! a violated requirement does, with a [`ProphecyMode`](crate::ProphecyMode):
//!
//! * `Paper`: start over at once (the paper's Algorithm 3); `require` does
//!   not return;
//! * `Collect`: finish exploring every path, joining every violation seen,
//!   then start over once;
//! * `Adaptive`: keep exploring after the first violation while new ones
//!   keep turning up, then start over.
//!
//! They produce the same code whenever requirements do not shrink as
//! predictions grow (the usual case: predictions choose *how* to generate
//! code); they differ in how many runs it takes.
//! Independent requirements, like the two above, settle in one restart in
//! the collect and adaptive modes, and in one restart each in paper mode:
//!
//! ```
//! #[augur::staged]
//! fn main() -> augur::Result<()> {
//!     use augur::prophecy::{Prophecy, Set};
//!     use augur::{Builder, Dyn, ProphecyMode};
//!
//!     let staged = |x: Dyn<i32>| {
//!         let read = Prophecy::named("read", Set::new());
//!         let r = Dyn::new(0);
//!         for k in read.get().iter() {
//!             r.set(r + x * *k); // one term per required k
//!         }
//!         if x.gt(0).is_true() {
//!             read.require(Set::of([2]));
//!         } else {
//!             read.require(Set::of([3]));
//!         }
//!         r
//!     };
//!     let paper = Builder::new().prophecy_mode(ProphecyMode::Paper).extract("f", staged)?;
//!     let collect = Builder::new().prophecy_mode(ProphecyMode::Collect).extract("f", staged)?;
//!     assert_eq!(paper.c_code(), collect.c_code());
//!     assert_eq!(paper.stats().prophecy_restarts, 2);
//!     assert_eq!(collect.stats().prophecy_restarts, 1);
//!     Ok(())
//! }
//! ```
//!
//! # Which prophecy is which
//!
//! A prophecy is identified by where it is created: the call stack and
//! `Static` state at `Prophecy::new`, plus how many were created there
//! since the last decision. So a helper called from two places makes two
//! prophecies; a plain loop over ten tensors makes ten, one per tensor; and
//! a prophecy created in a dyn loop's body is one for all turns, its value
//! the join over them. Handles are `Copy`: keep them in your DSL's structs.
//!
//! # When predictions never settle
//!
//! A lattice that keeps growing (a `Max` required ever larger, say) would
//! restart forever. Extraction stops after
//! [`Builder::max_prophecy_restarts`](crate::Builder::max_prophecy_restarts)
//! with [`Error::ProphecyNotSettled`](crate::Error::ProphecyNotSettled),
//! which lists each prophecy's history; a `join` that breaks the lattice
//! laws is [`Error::Lattice`](crate::Error::Lattice).
//!
//! The runnable version of this chapter is
//! `cargo run -p augur-staging --example tutorial_4_prophecy`. Next:
//! [a small DSL](super::ch5_dsl).
