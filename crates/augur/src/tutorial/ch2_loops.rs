//! # 2. Loops and branches
//!
//! The first stage cannot know the value of a `Dyn<bool>`: it is computed
//! later, in C. When the closure needs it anyway, in an `if` or a `while`,
//! it asks with [`is_true`](crate::Dyn::is_true). That call is a *decision*:
//! extraction runs the closure once with the answer `true` and again with
//! `false`, records both paths, and joins them into one C function. So
//! Rust's own control flow becomes C's: `if`/`else`, `while`, `break`,
//! `continue`, `return`, `&&` and `||` between decisions, labelled breaks.
//!
//! Why this design rather than combinators such as `if_(c, then, else)`?
//! Because staged code stays ordinary Rust. A DSL's functions can branch,
//! loop and return early wherever they like, call each other, and keep
//! their first-stage state in plain Rust variables, and the structure of
//! the C follows the structure of the Rust.
//!
//! # Branches
//!
//! ```
//! #[augur::staged]
//! fn main() -> augur::Result<()> {
//!     use augur::{Builder, Dyn, Value};
//!
//!     let sign = Builder::new().extract("sign", |x: Dyn<i32>| {
//!         let r = Dyn::named("r", 0);
//!         if x.lt(0).is_true() {
//!             r.set(-1);
//!         } else if x.gt(0).is_true() {
//!             r.set(1);
//!         }
//!         r
//!     })?;
//!     assert!(sign.c_code().contains("if (arg0 < 0)"));
//!     for (x, s) in [(-7, -1), (0, 0), (3, 1)] {
//!         assert_eq!(sign.interpret(&[x.into()])?, Value::I32(s));
//!     }
//!     assert_eq!(sign.stats().runs, 3); // one run per path
//!     Ok(())
//! }
//! ```
//!
//! A value chosen by a branch is best kept in a variable declared before
//! it, as `r` is here; [`Dyn::if_else`](crate::Dyn::if_else) does that for
//! you, and [`Dyn::select`](crate::Dyn::select) chooses without a branch.
//! (`let v = if c.is_true() { a } else { b };` also works, but then each
//! path has its own `v`, and the code after the join is generated once per
//! path.)
//!
//! # Loops
//!
//! A `while` on a `Dyn<bool>` becomes a C loop. Extraction does not run the
//! loop `n` times: it notices that a turn came back to the same program
//! point in the same first-stage state, checks that the next turns repeat
//! it, and closes the loop.
//!
//! ```
//! #[augur::staged]
//! fn main() -> augur::Result<()> {
//!     use augur::{Builder, Dyn};
//!
//!     let gcd = Builder::new().extract("gcd", |a: Dyn<u64>, b: Dyn<u64>| {
//!         let (a, b) = (a.name("a"), b.name("b"));
//!         while b.ne(0).is_true() {
//!             let r = a % b;
//!             a.set(b);
//!             b.set(r);
//!         }
//!         a
//!     })?;
//!     let c = gcd.c_code();
//!     assert!(c.contains("while (b != 0ull) {"), "{c}");
//!     let compiled = gcd.compile()?;
//!     // SAFETY: two uint64_t in, one out.
//!     assert_eq!(unsafe { (compiled.get())(12, 18) }, 6);
//!     Ok(())
//! }
//! ```
//!
//! `break` and `continue` come out as themselves. This one walks an array,
//! skips multiples of 3 and stops before the sum passes a limit:
//!
//! ```
//! #[augur::staged]
//! fn main() -> augur::Result<()> {
//!     use augur::{Builder, Dyn};
//!
//!     let capped = Builder::new().extract(
//!         "capped_sum",
//!         |xs: Dyn<*mut i32>, n: Dyn<i32>, limit: Dyn<i32>| {
//!             let s = Dyn::named("s", 0);
//!             let i = Dyn::named("i", 0);
//!             while i.lt(n).is_true() {
//!                 let x = Dyn::named("x", xs.at(i));
//!                 i.set(i + 1);
//!                 if (x % 3).eq(0).is_true() {
//!                     continue;
//!                 }
//!                 if (s + x).gt(limit).is_true() {
//!                     break;
//!                 }
//!                 s.set(s + x);
//!             }
//!             s
//!         },
//!     )?;
//!     println!("{}", capped.c_code());
//!     assert!(capped.c_code().contains("break;"));
//!     let compiled = capped.compile()?;
//!     let mut xs = [1, 2, 3, 4, 5, 6, 7];
//!     // SAFETY: `xs` holds the 7 int32_t the function reads.
//!     let s = unsafe { (compiled.get())(xs.as_mut_ptr(), 7, 8) };
//!     assert_eq!(s, 1 + 2 + 4); // 3 skipped, then 7 + 5 > 8
//!     Ok(())
//! }
//! ```
//!
//! The C it prints:
//!
//! ```c
//! int32_t capped_sum(int32_t *arg0, int32_t arg1, int32_t arg2) {
//!   int32_t s = 0;
//!   int32_t i = 0;
//!   while (i < arg1) {
//!     int32_t x = arg0[i];
//!     i = i + 1;
//!     if (x % 3 != 0) {
//!       if (s + x > arg2) {
//!         break;
//!       }
//!       s = s + x;
//!     }
//!   }
//!   return s;
//! }
//! ```
//!
//! Unnamed variables are called `var0`, `var1`, …, unnamed parameters
//! `arg0`, …; a loop of the shape `i = a; while (i < n) { …; i = i + 1; }`
//! is printed as a `for`, and a `continue` that only skips the rest of the
//! body becomes an `if` around it.
//!
//! # Plain Rust loops unroll
//!
//! A loop over plain Rust values is first-stage code: it runs now, and
//! what its body emits is emitted once per turn. That is how fixed-size
//! work is unrolled, here Horner's rule with fixed coefficients:
//!
//! ```
//! #[augur::staged]
//! fn main() -> augur::Result<()> {
//!     use augur::{Builder, Dyn, Value};
//!
//!     let horner = Builder::new().extract("horner", |x: Dyn<i64>| {
//!         let acc = Dyn::named("acc", 0i64);
//!         for c in [2i64, -3, 0, 5] {
//!             acc.set(acc * x + c);
//!         }
//!         acc
//!     })?;
//!     let c = horner.c_code();
//!     assert_eq!(c.matches("acc = acc * arg0").count(), 4); // no loop left
//!     assert_eq!(horner.interpret(&[3i64.into()])?, Value::I64(2 * 27 - 3 * 9 + 5));
//!     Ok(())
//! }
//! ```
//!
//! # `augur::range`: first-stage loops around decisions
//!
//! When the body of a first-stage loop makes decisions, use
//! [`augur::range`](crate::range) instead of `0..n`. Its counter is a
//! [`Static`](crate::Static) (next chapter), which is part of every program
//! point, so extraction can tell the turns apart: each turn gets its own
//! code. Here, for each element, three unrolled tests:
//!
//! ```
//! #[augur::staged]
//! fn main() -> augur::Result<()> {
//!     use augur::{range, Builder, Dyn};
//!
//!     let buckets = Builder::new().extract("buckets", |xs: Dyn<*mut i32>, n: Dyn<i32>| {
//!         let count = Dyn::named("count", 0);
//!         let i = Dyn::named("i", 0);
//!         while i.lt(n).is_true() {
//!             for k in range(0..3) {
//!                 if xs.at(i).gt(k * 10).is_true() {
//!                     count.set(count + 1);
//!                 }
//!             }
//!             i.set(i + 1);
//!         }
//!         count
//!     })?;
//!     let c = buckets.c_code();
//!     assert_eq!(c.matches("for (").count(), 1);
//!     assert_eq!(c.matches("if (").count(), 3);
//!     let compiled = buckets.compile()?;
//!     let mut xs = [-1, 5, 15, 25];
//!     // SAFETY: `xs` holds the 4 int32_t the function reads.
//!     assert_eq!(unsafe { (compiled.get())(xs.as_mut_ptr(), 4) }, 6);
//!     Ok(())
//! }
//! ```
//!
//! # `#[augur::staged]`: plain Rust loops anywhere
//!
//! To write the same with a plain `for k in 0..3` (or `for layer in
//! &layers`, or a `for` whose body `break`s on a dyn condition), put
//! [`#[augur::staged]`](crate::staged) on the function that holds the code.
//! Its `for` loops then count their turns in a `Static` that lives as long
//! as the loop, its `let mut` locals are first-stage state too, and its
//! calls stay real calls; so a plain loop of any length unrolls exactly,
//! around or inside dyn loops:
//!
//! ```
//! use augur::{Builder, Dyn};
//!
//! #[augur::staged]
//! fn first_over(xs: Dyn<*mut i32>, n: Dyn<i32>, limits: &[i32]) -> Dyn<i32> {
//!     let hits = Dyn::named("hits", 0);
//!     let i = Dyn::named("i", 0);
//!     while i.lt(n).is_true() {
//!         for &limit in limits {             // plain, 20 turns
//!             if xs.at(i).gt(limit).is_true() {
//!                 hits.set(hits + 1);
//!                 break;                     // a dyn exit of the plain loop
//!             }
//!         }
//!         i.set(i + 1);
//!     }
//!     hits
//! }
//!
//! let limits: Vec<i32> = (0..20).map(|k| 100 - 5 * k).collect();
//! let f = Builder::new().extract("first_over", |xs: Dyn<*mut i32>, n: Dyn<i32>| {
//!     first_over(xs, n, &limits)
//! })?;
//! assert_eq!(f.c_code().matches("if (").count(), 20); // one test per limit
//! let compiled = f.compile()?;
//! let mut xs = [3, 1000, -7, 50];
//! // SAFETY: `xs` holds the 4 int32_t the function reads.
//! assert_eq!(unsafe { (compiled.get())(xs.as_mut_ptr(), 4) }, 2); // 1000 and 50
//! # Ok::<(), augur::Error>(())
//! ```
//!
//! **Without the attribute**, extraction finds plain loops around decisions
//! by itself, by replaying them, and unrolls them exactly when they end
//! without a dyn exit of their own. Two shapes are beyond what it can see:
//!
//! * a plain loop inside a dyn loop: its turns look like new program points
//!   on every turn of the dyn loop, which then never repeats its state, and
//!   extraction stops with an error that names the plain loop and the fix
//!   (the attribute, a `Static`, or `augur::range`);
//! * a plain loop of more than 17 turns whose body has its own dyn `break`
//!   or `return` on a value the loop changes (`if s.gt(x).is_true() {
//!   break }` with `s.set(s + 1)` in the body) looks like a dyn loop for
//!   longer than extraction checks
//!   ([`Builder::audit`](crate::Builder::audit), which checks far longer,
//!   can cross-check such code in tests).
//!
//! Keep values that change from turn to turn of a dyn loop in `Dyn`
//! variables: a plain local that changes every turn (a counter) never lets
//! the loop repeat its state. The same holds for a `Dyn` value rebound in a
//! plain variable, `let mut t = x + 0; while c.is_true() { t = t * 2; }`:
//! each turn reads the temporary the turn before computed, a new variable
//! of the generated code every turn, so extraction stops with
//! [`Error::CarriedValue`](crate::Error::CarriedValue), naming the loop, the
//! read and the fix: declare `let t = Dyn::new(x)` before the loop and
//! `t.set(t * 2)` in it.
//!
//! The runnable version of this chapter is
//! `cargo run -p augur-staging --example tutorial_2_loops`. Next:
//! [static specialization](super::ch3_static).
