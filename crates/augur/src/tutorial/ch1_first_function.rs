//! # 1. The first staged function
//!
//! A staged program runs in two stages. The *first stage* is your Rust
//! code, run now, while the function is being generated. The *second
//! stage* is what it generates: a C function, run later on data the first
//! stage never sees. In augur the second stage is written in Rust too, over
//! values of type [`Dyn<T>`](crate::Dyn): an operator on a `Dyn` does not
//! compute anything, it adds code to the function being generated.
//!
//! Why bother? Because the first stage can do work once that a general
//! function would redo on every call (read a configuration, walk a table,
//! choose an algorithm), and what is left for the second stage is small,
//! plain C that a C compiler optimises well.
//!
//! # Extracting a function
//!
//! ```
//! #[augur::staged]
//! fn main() -> augur::Result<()> {
//!     use augur::{Builder, Dyn};
//!
//!     let poly = Builder::new().extract("poly", |x: Dyn<i64>, y: Dyn<i64>| {
//!         let x = x.name("x"); // names the parameters in the C
//!         let y = y.name("y");
//!         let t = Dyn::named("t", x * x); // int64_t t = x * x;
//!         t.set(t + 3 * y); // t = t + 3 * y;
//!         t - 1 // return t - 1;
//!     })?;
//!     let c = poly.c_code();
//!     println!("{c}");
//!     assert!(c.contains("int64_t poly(int64_t x, int64_t y) {"));
//!     assert!(c.contains("int64_t t = x * x;"));
//!     assert!(c.contains("return t - 1;"));
//!     Ok(())
//! }
//! ```
//!
//! [`Builder::extract`](crate::Builder::extract) takes the C function's
//! name and a closure with up to eight `Dyn` parameters, which become the
//! C parameters. The closure returns a `Dyn` (the C result) or `()` (a
//! `void` function). Inside it:
//!
//! * [`Dyn::new(init)`](crate::Dyn::new) declares a local variable;
//!   [`Dyn::named`](crate::Dyn::named) gives it a name in the C, and
//!   [`name`](crate::Dyn::name) names a parameter.
//! * [`set`](crate::Dyn::set) assigns to a variable.
//! * `+ - * / %`, bit operators and shifts work on `Dyn` values, with a
//!   Rust literal on either side (`3 * y`, `t - 1`), meaning what they mean
//!   in a release build of Rust: integers wrap, and a shift's count (of any
//!   integer type) is masked to the width of the value shifted. Comparisons are methods,
//!   because Rust's comparison traits must return `bool`:
//!   [`lt`](crate::Dyn::lt), `le`, `gt`, `ge`, `eq`, `ne` give a `Dyn<bool>`.
//!
//! [`c_code`](crate::Extracted::c_code) is a complete C99 translation unit,
//! with the `#include`s it needs.
//!
//! # Running it
//!
//! There are two ways. [`compile`](crate::Extracted::compile) runs the
//! system C compiler (cached by the code's content), loads the shared
//! library and gives back a typed function pointer. Calling it is `unsafe`:
//! generated code may dereference pointers it is given, and only the caller
//! can vouch for them. [`interpret`](crate::Extracted::interpret) runs the
//! same function in augur's IR interpreter instead: no compiler needed,
//! arguments and results are [`Value`](crate::Value)s, and what C would
//! silently get wrong (an out-of-bounds access, a division by zero, a read
//! of an uninitialised variable) is an error naming the line.
//!
//! ```
//! #[augur::staged]
//! fn main() -> augur::Result<()> {
//!     use augur::{Builder, Dyn, Value};
//!
//!     let poly = Builder::new().extract("poly", |x: Dyn<i64>, y: Dyn<i64>| {
//!         let t = Dyn::named("t", x * x);
//!         t.set(t + 3 * y);
//!         t - 1
//!     })?;
//!
//!     let compiled = poly.compile()?;
//!     // SAFETY: `poly` takes two int64_t and returns one; no pointers involved.
//!     let r = unsafe { (compiled.get())(4, 5) };
//!     assert_eq!(r, 4 * 4 + 3 * 5 - 1);
//!
//!     assert_eq!(poly.interpret(&[4i64.into(), 5i64.into()])?, Value::I64(30));
//!     Ok(())
//! }
//! ```
//!
//! The function pointer's type follows from the closure:
//! `unsafe extern "C" fn(i64, i64) -> i64` here. Keep the
//! [`Compiled`](crate::Compiled) value alive while you use the pointer: it
//! owns the loaded library.
//!
//! # Values and variables
//!
//! A `Dyn` made by an operator is a *value*: it stands for what the
//! expression was *when it was computed*, like any Rust value, even if a
//! variable it was computed from changes later. A `Dyn` made by
//! [`Dyn::new`](crate::Dyn::new) (or a parameter) is a *variable*: every copy
//! of the handle sees later assignments. Handles are `Copy`.
//!
//! ```
//! #[augur::staged]
//! fn main() -> augur::Result<()> {
//!     use augur::{Builder, Dyn, Value};
//!
//!     let f = Builder::new().extract("snapshot", |x: Dyn<i32>| {
//!         let e = x + 1; // the value of x + 1 now
//!         x.set(5);
//!         e * 10 + x // (old x + 1) * 10 + 5
//!     })?;
//!     assert_eq!(f.interpret(&[7.into()])?, Value::I32(85));
//!     Ok(())
//! }
//! ```
//!
//! This is why staged code reads like the Rust it stands for: you never
//! have to think about when the C evaluates an expression.
//!
//! # Types
//!
//! A `Dyn<T>` holds a C type: `bool`, `i8` to `i64`, `u8` to `u64`, `f32`,
//! `f64`, raw pointers `*mut T` and `*const T`, fixed arrays `[T; N]` (local
//! arrays) and `[T]` (an array parameter). [`cast`](crate::Dyn::cast)
//! converts between scalars, [`Dyn::select`](crate::Dyn::select) is C's
//! `c ? a : b`, and `&`, `|`, `!` on `Dyn<bool>` are C's `&&`, `||`, `!`.
//!
//! ```
//! #[augur::staged]
//! fn main() -> augur::Result<()> {
//!     use augur::{Builder, Dyn, Value};
//!
//!     let mean = Builder::new().extract("mean_clamped", |a: Dyn<i32>, b: Dyn<i32>| {
//!         let m = (a + b).cast::<f64>() / 2.0;
//!         Dyn::select(m.gt(100.0), 100.0, m)
//!     })?;
//!     assert_eq!(mean.interpret(&[1.into(), 2.into()])?, Value::F64(1.5));
//!     assert_eq!(mean.interpret(&[150.into(), 100.into()])?, Value::F64(100.0));
//!     Ok(())
//! }
//! ```
//!
//! # Pointers
//!
//! A pointer parameter lets the function read and write the caller's
//! memory: [`at(i)`](crate::Dyn::at) is `p[i]`, and `set` on it stores
//! there. Compiled code gets a real pointer; the interpreter has its own
//! checked memory ([`Memory`](crate::exec::interp::Memory)), into which you
//! copy the data and from which you read it back.
//!
//! ```
//! #[augur::staged]
//! fn main() -> augur::Result<()> {
//!     use augur::{Builder, Dyn, Interpreter};
//!
//!     let rotate = Builder::new().extract("rotate3", |p: Dyn<*mut i32>| {
//!         let first = Dyn::named("first", p.at(0));
//!         p.at(0).set(p.at(1));
//!         p.at(1).set(p.at(2));
//!         p.at(2).set(first);
//!     })?;
//!
//!     let compiled = rotate.compile()?;
//!     let mut data = [10, 20, 30];
//!     // SAFETY: `data` holds the three int32_t that rotate3 reads and writes.
//!     unsafe { (compiled.get())(data.as_mut_ptr()) };
//!     assert_eq!(data, [20, 30, 10]);
//!
//!     let mut interp = Interpreter::new();
//!     let buf = interp.memory_mut().alloc_slice(&[10i32, 20, 30]);
//!     rotate.interpret_in(&mut interp, &[buf])?;
//!     assert_eq!(interp.memory().read_slice::<i32>(buf, 3)?, [20, 30, 10]);
//!     Ok(())
//! }
//! ```
//!
//! # The closure runs more than once
//!
//! To find every path through the function (next chapter), extraction runs
//! the closure several times: [`stats`](crate::Extracted::stats) counts the
//! runs. So the closure must be deterministic. Printing from it prints
//! several times; state kept outside it (a counter, a `Dyn` from an earlier
//! run) is a bug, and a `Dyn` used outside the run that made it is reported
//! as an error. Plain Rust inside the closure is fine: it is the first
//! stage, and it is run as often as needed.
//!
//! The runnable version of this chapter is
//! `cargo run -p augur-staging --example tutorial_1_first`. Next:
//! [loops and branches](super::ch2_loops).
