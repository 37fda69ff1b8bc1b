//! # 3. Static specialization
//!
//! Everything the first stage knows is computed away. A function staged
//! over a known exponent contains exactly the multiplications that exponent
//! needs; a dot product with a known weight vector skips the zero weights;
//! an interpreter staged over a known program leaves only the program's
//! own operations. This is the point of staging: you write the general
//! algorithm once, and each use of it generates code as specific as if it
//! had been written by hand for that case.
//!
//! # Plain first-stage values
//!
//! Anything the closure captures or computes with plain Rust is a
//! first-stage value. Code that branches on it branches now:
//!
//! ```
//! #[augur::staged]
//! fn main() -> augur::Result<()> {
//!     use augur::{Builder, Dyn};
//!
//!     const WEIGHTS: [i32; 6] = [3, 0, 1, -1, 0, 2];
//!
//!     let dot = Builder::new().extract("dot_weights", |p: Dyn<*mut i32>| {
//!         let s = Dyn::named("s", 0);
//!         for (i, &w) in WEIGHTS.iter().enumerate() {
//!             match w {
//!                 0 => {}                         // nothing to add
//!                 1 => s.set(s + p.at(i)),        // no multiplication
//!                 -1 => s.set(s - p.at(i)),
//!                 _ => s.set(s + p.at(i) * w),
//!             }
//!         }
//!         s
//!     })?;
//!     let c = dot.c_code();
//!     assert!(c.contains("s = s + arg0[0] * 3;") && c.contains("s = s - arg0[3];"));
//!     assert!(!c.contains("arg0[1]") && !c.contains("arg0[4]"));
//!     Ok(())
//! }
//! ```
//!
//! # `Static<T>`: first-stage state the engine can see
//!
//! Extraction identifies each operation by its *program point*: where it is
//! in the code (the call stack) and the current values of every live
//! [`Static`](crate::Static). Plain Rust locals are not part of it. That
//! matters as soon as first-stage state changes around decisions: two
//! operations at the same line with different `Static` values are
//! different program points, so a first-stage loop over a `Static` unrolls,
//! and a dyn loop whose `Static` state repeats closes.
//!
//! A `Static` reads like the value it holds (`*e`), and changes with
//! [`set`](crate::Static::set), [`update`](crate::Static::update), `+=`,
//! `-=` and `*=`. Repeated squaring with a first-stage exponent:
//!
//! ```
//! #[augur::staged]
//! fn main() -> augur::Result<()> {
//!     use augur::{Builder, Dyn, Static};
//!
//!     fn power(x: Dyn<i64>, exp: u32) -> Dyn<i64> {
//!         let res = Dyn::named("res", 1i64);
//!         let base = Dyn::named("base", x);
//!         let mut e = Static::new(exp);
//!         while *e > 0 {
//!             if *e % 2 == 1 {
//!                 res.set(res * base);
//!             }
//!             e.set(*e / 2);
//!             if *e > 0 {
//!                 base.set(base * base);
//!             }
//!         }
//!         res
//!     }
//!
//!     for exp in [0u32, 5, 15] {
//!         let f = Builder::new().extract(&format!("power{exp}"), move |x: Dyn<i64>| power(x, exp))?;
//!         let c = f.c_code();
//!         assert!(!c.contains("while") && !c.contains("if"), "straight-line code");
//!         let compiled = f.compile()?;
//!         // SAFETY: int64_t in, int64_t out.
//!         assert_eq!(unsafe { (compiled.get())(3) }, 3i64.pow(exp));
//!     }
//!     Ok(())
//! }
//! ```
//!
//! This loop makes no decisions, so a plain `u32` would do as well; the
//! `Static` costs nothing and keeps working when someone adds a dyn branch
//! to the body. Where the first-stage state *must* be a `Static` is the
//! next example.
//!
//! # Specializing an interpreter
//!
//! An interpreter for a tiny accumulator machine, staged over its program:
//! the program counter is a `Static`, so the first stage runs the dispatch,
//! and what is left is the program's own arithmetic. The backward jump
//! depends on a second-stage value, so it is a decision; when it jumps
//! back, the program counter repeats, and the repetition becomes a C loop.
//! (Specializing an interpreter to its program is the first Futamura
//! projection: a compiler, for free.)
//!
//! ```
//! #[augur::staged]
//! fn main() -> augur::Result<()> {
//!     use augur::{Builder, Dyn, Static};
//!
//!     #[derive(Clone, Copy)]
//!     enum Ins {
//!         Add(i32),
//!         Mul(i32),
//!         Dec,              // n = n - 1
//!         JumpIfPos(usize), // if n > 0, go to an instruction
//!     }
//!
//!     let prog = [Ins::Mul(2), Ins::Add(1), Ins::Dec, Ins::JumpIfPos(0), Ins::Add(100)];
//!     let run = Builder::new().extract("run_prog", move |acc: Dyn<i32>, n: Dyn<i32>| {
//!         let acc = Dyn::named("acc", acc);
//!         let n = Dyn::named("n", n);
//!         let mut pc = Static::new(0usize);
//!         while *pc < prog.len() {
//!             match prog[*pc] {
//!                 Ins::Add(k) => acc.set(acc + k),
//!                 Ins::Mul(k) => acc.set(acc * k),
//!                 Ins::Dec => n.set(n - 1),
//!                 Ins::JumpIfPos(t) => {
//!                     if n.gt(0).is_true() {
//!                         pc.set(t);
//!                         continue;
//!                     }
//!                 }
//!             }
//!             pc += 1;
//!         }
//!         acc
//!     })?;
//!     println!("{}", run.c_code());
//!     let compiled = run.compile()?;
//!     // SAFETY: two int32_t in, one out.
//!     assert_eq!(unsafe { (compiled.get())(1, 3) }, ((1 * 2 + 1) * 2 + 1) * 2 + 1 + 100);
//!     Ok(())
//! }
//! ```
//!
//! It prints:
//!
//! ```c
//! int32_t run_prog(int32_t arg0, int32_t arg1) {
//!   int32_t acc = arg0;
//!   int32_t n = arg1;
//!   while (true) {
//!     acc = acc * 2;
//!     acc = acc + 1;
//!     n = n - 1;
//!     if (n <= 0) {
//!       break;
//!     }
//!   }
//!   acc = acc + 100;
//!   return acc;
//! }
//! ```
//!
//! With a plain `usize` for `pc`, the jump back would lead to operations
//! that look the same as the first turn's but with different first-stage
//! state behind them; extraction detects that and unrolls forever, stopping
//! with "dyn loop … never closes". The `Static` is what tells it that the
//! state really repeats.
//!
//! # Histories: facts about every path
//!
//! Sometimes code after a loop needs to know something about what happened
//! in it: did any turn subtract, write, allocate? A plain Rust flag set
//! inside a dyn branch cannot say: it changes from turn to turn, so the
//! loop never repeats its state (the "never closes" error again). A
//! `Static` flag works, but it is part of the program point, so the loop is
//! split in two: the turns before the flag was set and those after.
//!
//! A [`History`](crate::prophecy::History) is the third way. Facts are
//! [`record`](crate::prophecy::History::record)ed, and
//! [`get`](crate::prophecy::History::get) returns the join of every fact
//! recorded *on any path* of the extraction. It is not part of program
//! points, so the loop keeps its shape:
//!
//! ```
//! #[augur::staged]
//! fn main() -> augur::Result<()> {
//!     use augur::prophecy::History;
//!     use augur::{Builder, Dyn};
//!
//!     for allow_negative in [false, true] {
//!         let f = Builder::new().extract("total", move |xs: Dyn<*mut i32>, n: Dyn<i32>| {
//!             let may_be_negative = History::named("acc may be negative", false);
//!             let acc = Dyn::named("acc", 0);
//!             let i = Dyn::named("i", 0);
//!             while i.lt(n).is_true() {
//!                 let x = xs.at(i);
//!                 if x.gt(0).is_true() {
//!                     acc.set(acc + x);
//!                 } else if allow_negative {
//!                     may_be_negative.record(true);
//!                     acc.set(acc + x);
//!                 }
//!                 i.set(i + 1);
//!             }
//!             // Clamp at 0, but only if some path may have gone below.
//!             if may_be_negative.get() {
//!                 Dyn::select(acc.lt(0), 0, acc)
//!             } else {
//!                 acc
//!             }
//!         })?;
//!         let c = f.c_code();
//!         assert_eq!(c.matches("for (").count(), 1, "one loop, not split");
//!         assert_eq!(c.contains("acc < 0 ? 0 : acc"), allow_negative);
//!         println!("{}", f.explain()); // the history's value and where it was recorded
//!     }
//!     Ok(())
//! }
//! ```
//!
//! A history is path-insensitive: its value is the same on every path, the
//! join over all of them. Facts recorded before anything reads the history
//! cost nothing. If a fact arrives after a read (the read came first on
//! some path), the first stage starts over so that every read sees the
//! final value; that re-execution is the machinery of the next chapter,
//! where the facts come from the future.
//!
//! The runnable version of this chapter is
//! `cargo run -p augur-staging --example tutorial_3_static`. Next:
//! [prophecy](super::ch4_prophecy).
