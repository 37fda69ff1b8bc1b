//! # 9. Parallel loops
//!
//! [`augur::parallel_for(lo, hi, body)`](crate::parallel_for) stages
//! `body(i)` once, as the body of a loop over `lo..hi` whose iterations may
//! run at once. Each backend runs it in parallel its own way, with the same
//! meaning:
//!
//! * C: an OpenMP loop, `_Pragma("omp parallel for ...")`, with the clauses
//!   written from the loop's own variables; augur compiles the unit with
//!   `-fopenmp` (and `-Wl,-z,nodelete`, so the library can be dropped and
//!   loaded again while OpenMP's threads live on);
//! * the JIT: the body becomes a function of its own, run on chunks of the
//!   range by rayon's threads (`RAYON_NUM_THREADS` sets how many);
//! * the interpreter: one iteration after another, with its data-race
//!   check: two iterations touching the same memory, one writing, is an
//!   error naming both.
//!
//! Each iteration writes memory at its own index:
//!
//! ```
//! #[augur::staged]
//! fn main() -> augur::Result<()> {
//!     use augur::{parallel_for, Builder, Dyn};
//!
//!     let ex = Builder::new().extract(
//!         "axpy",
//!         |a: Dyn<f64>, x: Dyn<*mut f64>, y: Dyn<*mut f64>, n: Dyn<i64>| {
//!             parallel_for(0, n, |i| y.at(i).set(a * x.at(i) + y.at(i)));
//!         },
//!     )?;
//!     assert!(ex.c_code().contains("_Pragma(\"omp parallel for\")"));
//!     let (mut x, mut y) = (vec![1.0; 1000], vec![2.0; 1000]);
//!     let f = ex.compile()?;
//!     // SAFETY: both buffers hold the n doubles the loop touches.
//!     unsafe { f.get()(3.0, x.as_mut_ptr(), y.as_mut_ptr(), 1000) };
//!     assert!(y.iter().all(|&v| v == 5.0));
//!     Ok(())
//! }
//! ```
//!
//! # Reductions
//!
//! What the iterations combine goes into a [`Reducer`](crate::Reducer):
//! a sum, product, minimum or maximum, a bitwise `and`, `or` or `xor` of
//! integers, or `all`/`any` of `bool`s. Make it before the loop, list it
//! with [`reduce`](crate::Parallel::reduce), [`add`](crate::Reducer::add)
//! to it in the body, and read its [`value`](crate::Reducer::value) after
//! the loop. Each thread combines into a partial of its own, and the
//! partials are combined when the loop ends: OpenMP's `reduction` clause
//! in C, partials combined in chunk order by the JIT.
//!
//! ```
//! #[augur::staged]
//! fn main() -> augur::Result<()> {
//!     use augur::{parallel, Builder, Dyn, Reducer};
//!
//!     // Revenue and count of the rows a filter keeps (TPC-H Q6's shape).
//!     let ex = Builder::new().extract(
//!         "q6",
//!         |price: Dyn<*mut f64>, qty: Dyn<*mut i32>, n: Dyn<i64>, count: Dyn<*mut i64>| {
//!             let revenue = Reducer::sum(0.0f64);
//!             let kept = Reducer::sum(0i64);
//!             parallel(0, n).reduce(&revenue).reduce(&kept).run(|i| {
//!                 if qty.at(i).lt(24).is_true() {
//!                     revenue.add(price.at(i));
//!                     kept.add(1);
//!                 }
//!             });
//!             count.at(0).set(kept.value());
//!             revenue.value()
//!         },
//!     )?;
//!     let c = ex.c_code();
//!     assert!(c.contains("reduction(+:sum) reduction(+:sum_1)"), "{c}");
//!
//!     let price: Vec<f64> = (0..100).map(|i| i as f64).collect();
//!     let qty: Vec<i32> = (0..100).map(|i| i % 50).collect();
//!     let (mut p, mut q, mut count) = (price.clone(), qty.clone(), [0i64]);
//!     let f = ex.compile()?;
//!     // SAFETY: the buffers hold the n elements the loop reads, and one count.
//!     let revenue = unsafe { f.get()(p.as_mut_ptr(), q.as_mut_ptr(), 100, count.as_mut_ptr()) };
//!     let want: f64 = (0..100).filter(|i| qty[*i] < 24).map(|i| price[i]).sum();
//!     assert_eq!((revenue, count[0]), (want, 48));
//!     Ok(())
//! }
//! ```
//!
//! Integer reductions are exact whatever the threads; float sums and
//! products are rounded in an order that depends on how the range is split
//! (as in OpenMP), and float minimum and maximum ignore NaN values.
//!
//! A reduction of your own is [`Reducer::custom`](crate::Reducer::custom)`(init,
//! identity, combine)`, `combine` a function of two `Dyn`s that is
//! associative (it need not commute: the last positive value is one). The
//! loop then runs as a fixed number of chunks of consecutive indices, in
//! parallel, each folding its values from `identity`, and the chunks'
//! results are combined in order: the same result on every backend.
//!
//! # What the body may not do
//!
//! Iterations that run at once must not share variables. The body may read
//! anything made before the loop, but assigning a variable declared outside
//! it (other than through a reducer listed for the loop), reading a
//! reducer's value inside its own loop, or using a value made in the body
//! after the loop is an [`Error::Parallel`](crate::Error::Parallel) at the
//! line that does it, with the fix:
//!
//! ```
//! #[augur::staged]
//! fn main() {
//!     use augur::{parallel_for, Builder, Dyn, Error};
//!
//!     let e = Builder::new()
//!         .extract("last", |x: Dyn<*mut i32>, n: Dyn<i32>| {
//!             let last = Dyn::new(0);
//!             parallel_for(0, n, |i| last.set(x.at(i)));
//!             last
//!         })
//!         .unwrap_err();
//!     assert!(matches!(e, Error::Parallel { .. }));
//!     assert!(e.to_string().contains("declared outside it"), "{e}");
//! }
//! ```
//!
//! The body is staged like any code: branches, dyn loops and calls inside
//! it are fine, and a parallel loop inside it runs in order in each of its
//! iterations (list the outer reducers it adds to on it too). As with every
//! first-stage decision, stage the loop from code under `#[augur::staged]`:
//! the end of the body joins all its paths, which needs the plain state
//! there in view.
//!
//! [`annotate`](crate::annotate)`("pragma: omp ...")` stays for experts who
//! want a pragma of their own in C; the JIT reads no pragma, and says so in
//! [`Compiled::notes`](crate::Compiled::notes).
//!
//! The chapter's program, `cargo run -p augur-staging --example tutorial_9_parallel`,
//! computes per-row statistics of a million values on every backend and
//! compares them with plain Rust.
