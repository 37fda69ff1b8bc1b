//! # 5. A small DSL
//!
//! A DSL on augur is an ordinary Rust library. Its types hold `Dyn`
//! handles and first-stage information (sizes, identities, choices); its
//! functions emit code when called; its users write ordinary Rust with any
//! control flow around the calls. Because the library sees each call as it
//! happens, it can specialise everything it knows at that point, and a
//! prophecy lets it specialise on what it will only learn later.
//!
//! This chapter builds a DSL of in-place operations on integer vectors:
//!
//! * `affine(v, a, b)`: `v[i] = a * v[i] + b`;
//! * `clamp(v, lo)`: `v[i] = max(v[i], lo)`;
//! * `finish()`: the end of the program.
//!
//! Each operation is a loop over the vector. An `affine` followed by a
//! `clamp` of the same vector is better done in one loop (*fusion*): the
//! vector is read and written once instead of twice. But the `affine`
//! emits its loop before the `clamp` is called, and what follows it may
//! depend on a dyn branch in the user's code. So each `affine` makes a
//! prophecy, "what comes right after me", of type
//! [`Flat<i32>`](crate::prophecy::Flat): `Exactly(lo)` when the next
//! operation is a clamp of the same vector at `lo`, `Conflict` for
//! anything else. The `affine` clamps as it writes when the prediction is
//! `Exactly(lo)`, and such a `clamp` then does nothing. Because the
//! prediction is the join over every path, it is `Exactly(lo)` only when
//! *every* path clamps at `lo`, and fusion is never wrong.
//!
//! ```
//! #[augur::staged]
//! fn main() -> augur::Result<()> {
//!     use augur::prophecy::{Flat, Prophecy};
//!     use augur::{Builder, Dyn, Static};
//!
//!     /// A vector of the pipeline's length in the caller's memory.
//!     #[derive(Clone, Copy)]
//!     struct Vector {
//!         data: Dyn<*mut i32>,
//!         id: usize,
//!     }
//!
//!     struct Pipeline {
//!         n: Dyn<i32>,
//!         vectors: usize,
//!         /// Each affine's prophecy and the vector it wrote.
//!         producers: Vec<(Prophecy<Flat<i32>>, usize)>,
//!         /// The affine just before the current operation (an index into
//!         /// `producers`). A `Static`: see "Rules of thumb" below.
//!         last: Static<Option<usize>>,
//!     }
//!
//!     // What decides the code an operation generates is `last`, a
//!     // `Static`; `vectors` and `producers` are registries. So a `let mut`
//!     // pipeline may change under `#[augur::staged]` (see "Rules of thumb").
//!     impl augur::dsl::Visible for Pipeline {}
//!
//!     impl Pipeline {
//!         fn new(n: Dyn<i32>) -> Pipeline {
//!             Pipeline { n, vectors: 0, producers: Vec::new(), last: Static::new(None) }
//!         }
//!
//!         fn vector(&mut self, data: Dyn<*mut i32>) -> Vector {
//!             self.vectors += 1;
//!             Vector { data, id: self.vectors }
//!         }
//!
//!         /// Tells the affine just before (if any) what follows it: `me` is
//!         /// `Some((vector, lo))` for a clamp. Returns its prophecy when `me`
//!         /// is a clamp of the vector that affine wrote.
//!         #[track_caller]
//!         fn follow(&mut self, me: Option<(usize, i32)>) -> Option<Prophecy<Flat<i32>>> {
//!             let (p, wrote) = self.producers[(*self.last)?];
//!             self.last.set(None);
//!             match me {
//!                 Some((v, lo)) if v == wrote => {
//!                     p.require(Flat::Exactly(lo));
//!                     Some(p)
//!                 }
//!                 _ => {
//!                     p.require(Flat::Conflict);
//!                     None
//!                 }
//!             }
//!         }
//!
//!         /// `for (i = 0; i < n; i++) body(i)`.
//!         fn each(&self, body: impl Fn(Dyn<i32>)) {
//!             let i = Dyn::named("i", 0);
//!             while i.lt(self.n).is_true() {
//!                 body(i);
//!                 i.set(i + 1);
//!             }
//!         }
//!
//!         #[track_caller]
//!         fn affine(&mut self, v: Vector, a: i32, b: i32) {
//!             self.follow(None);
//!             let next = Prophecy::named(format!("after affine #{}", self.producers.len()), Flat::Unknown);
//!             let fused = next.get().exactly().copied();
//!             self.each(|i| {
//!                 let y = v.data.at(i) * a + b;
//!                 let y = match fused {
//!                     Some(lo) => Dyn::select(y.lt(lo), lo, y),
//!                     None => y,
//!                 };
//!                 v.data.at(i).set(y);
//!             });
//!             self.producers.push((next, v.id));
//!             self.last.set(Some(self.producers.len() - 1));
//!         }
//!
//!         #[track_caller]
//!         fn clamp(&mut self, v: Vector, lo: i32) {
//!             if let Some(p) = self.follow(Some((v.id, lo))) {
//!                 // Within an attempt this read agrees with the affine's.
//!                 if p.get() == Flat::Exactly(lo) {
//!                     return; // the affine already clamped
//!                 }
//!             }
//!             self.each(|i| {
//!                 let x = v.data.at(i);
//!                 v.data.at(i).set(Dyn::select(x.lt(lo), lo, x));
//!             });
//!         }
//!
//!         #[track_caller]
//!         fn finish(&mut self) {
//!             self.follow(None); // the end of the program follows too
//!         }
//!     }
//!
//!     // Every path clamps at 0 right after the affine: one fused loop.
//!     let agree = Builder::new().extract(
//!         "agree",
//!         |x: Dyn<*mut i32>, n: Dyn<i32>, c: Dyn<i32>| {
//!             let mut p = Pipeline::new(n);
//!             let x = p.vector(x);
//!             p.affine(x, 3, -4);
//!             if c.eq(0).is_true() {
//!                 p.clamp(x, 0);
//!             } else {
//!                 p.clamp(x, 0);
//!                 p.affine(x, 1, 1);
//!             }
//!             p.finish();
//!         },
//!     )?;
//!     let code = agree.c_code();
//!     println!("{code}{}", agree.explain());
//!     assert_eq!(code.matches("for (").count(), 2, "fused, plus the second affine");
//!     assert!(code.contains("var0 < 0 ? 0 : var0"));
//!
//!     let compiled = agree.compile()?;
//!     for c in [0, 1] {
//!         let mut x = [-3, -1, 0, 2, 5];
//!         let mut want = x.map(|v| (3 * v - 4).max(0));
//!         if c != 0 {
//!             want = want.map(|v| v + 1);
//!         }
//!         // SAFETY: `x` holds the 5 int32_t the function reads and writes.
//!         unsafe { (compiled.get())(x.as_mut_ptr(), 5, c) };
//!         assert_eq!(x, want);
//!     }
//!
//!     // The paths clamp at different bounds: the prediction is `Conflict`,
//!     // and each operation keeps its own loop.
//!     let disagree = Builder::new().extract(
//!         "disagree",
//!         |x: Dyn<*mut i32>, n: Dyn<i32>, c: Dyn<i32>| {
//!             let mut p = Pipeline::new(n);
//!             let x = p.vector(x);
//!             p.affine(x, 3, -4);
//!             if c.eq(0).is_true() {
//!                 p.clamp(x, 0);
//!             } else {
//!                 p.clamp(x, 5);
//!             }
//!             p.finish();
//!         },
//!     )?;
//!     assert_eq!(disagree.c_code().matches("for (").count(), 3);
//!     let compiled = disagree.compile()?;
//!     let mut x = [-3, -1, 0, 2, 5];
//!     // SAFETY: `x` holds the 5 int32_t the function reads and writes.
//!     unsafe { (compiled.get())(x.as_mut_ptr(), 5, 1) };
//!     assert_eq!(x, [5, 5, 5, 5, 11]);
//!     Ok(())
//! }
//! ```
//!
//! The fused program:
//!
//! ```c
//! void agree(int32_t *arg0, int32_t arg1, int32_t arg2) {
//!   for (int32_t i = 0; i < arg1; i = i + 1) {
//!     int32_t var0 = arg0[i] * 3 + -4;
//!     arg0[i] = var0 < 0 ? 0 : var0;
//!   }
//!   if (arg2 != 0) {
//!     for (int32_t i_1 = 0; i_1 < arg1; i_1 = i_1 + 1) {
//!       arg0[i_1] = arg0[i_1] * 1 + 1;
//!     }
//!   }
//! }
//! ```
//!
//! Note what the user's code does *not* say: nothing about loops, fusion
//! or prophecies. It calls operations, with a branch in between, and the
//! library decides.
//!
//! # Rules of thumb
//!
//! * **Make the DSL's state inside the closure.** Each run of the closure
//!   builds its own `Pipeline`; nothing carries over from one run to the
//!   next except prophecies and histories, which the engine keeps.
//! * **Keep first-stage state that outlives a dyn branch in a `Static`**
//!   (in state shared by handles, a `dsl::Seen`, below). After a branch,
//!   extraction shares the code that follows between the paths when
//!   their program points agree. Plain Rust state is not part
//!   of program points, so two paths that differ only in it (here: whether
//!   an `affine` is still waiting for its follower) could share code, and
//!   a requirement made only on a side the engine's checks do not take
//!   could be missed (extraction follows shared code to the end on two
//!   paths, [`Builder::link_audit_ops`](crate::Builder::link_audit_ops)).
//!   A `Static` keeps such paths apart. [`Builder::audit`](crate::Builder::audit),
//!   which never shares code, is the way to check a DSL in its tests.
//! * **Say that your DSL's state is seen.** Under `#[augur::staged]` a
//!   `let mut` of a type that is neither `Hash` nor
//!   [`dsl::Visible`](crate::dsl::Visible) cannot be tracked, so once it
//!   changes no code is shared while it lives (and a loop that needs sharing
//!   stops with an error naming the `let`). `impl dsl::Visible for Pipeline
//!   {}` is the DSL author's promise that what decides code is in `Static`s
//!   (`last`) and the rest is bookkeeping.
//! * **Say when the program ends.** `finish` requires `Conflict` of a
//!   pending `affine`; without it, a path that ends right after the
//!   `affine` would require nothing, and the other paths' clamp would be
//!   fused into it.
//! * **Identify what you fuse.** The `clamp` of another vector must not
//!   fuse; comparing the vector ids in `follow` sees to that.
//! * **`#[track_caller]` on every operation**, so prophecies are created
//!   and required at the user's lines, and `explain` names them.
//! * **Test against plain Rust**, compiled and interpreted, on inputs that
//!   take every path.
//!
//! The runnable version of this chapter,
//! `cargo run -p augur-staging --example tutorial_5_dsl`, adds an `add` operation
//! and two more programs (a clamp on only one path, a clamp of another
//! vector).
//!
//! # Shared state and typed errors: `augur::dsl`
//!
//! `Pipeline` above is one value the user threads through every call. A
//! DSL whose values carry their own operations (`v.clamp(0)`) needs
//! state every value reaches: [`dsl::State`](crate::dsl::State) shares it
//! for the run that made it (and refuses to be used in another run, where
//! it would carry one run's decisions into the next). Fields set through
//! `&self` are `Cell`s; a field that decides later code, which a
//! `Static` would hold in `Pipeline`, is a [`dsl::Seen`](crate::dsl::Seen):
//! one declaration, and tags see it. A program the DSL refuses ends with
//! [`dsl::fail`](crate::dsl::fail): the DSL's own error type reaches the
//! caller as [`Error::Dsl`](crate::Error::Dsl) at the user's line, and
//! [`Error::dsl_error`](crate::Error::dsl_error) gives it back typed.
//!
//! Here a clamp right after the same clamp does nothing, which only the
//! state of the path can say:
//!
//! ```
//! #[augur::staged]
//! fn main() -> augur::Result<()> {
//!     use augur::{dsl, Builder, Dyn};
//!     use std::cell::Cell;
//!     use std::panic::Location;
//!
//!     struct Shared {
//!         n: Dyn<i32>,
//!         vectors: Cell<usize>, // bookkeeping
//!         /// The clamp just before (vector, bound): it decides what the next
//!         /// clamp generates, so tags see it.
//!         last: dsl::Seen<Option<(usize, i32)>>,
//!     }
//!
//!     #[derive(Debug, PartialEq)]
//!     struct NegativeBound(i32);
//!     impl std::fmt::Display for NegativeBound {
//!         fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
//!             write!(f, "clamp at {}: bounds are at least 0", self.0)
//!         }
//!     }
//!     impl std::error::Error for NegativeBound {}
//!
//!     #[derive(Clone)]
//!     struct Vector {
//!         data: Dyn<*mut i32>,
//!         id: usize,
//!         shared: dsl::State<Shared>,
//!     }
//!
//!     fn vector(shared: &dsl::State<Shared>, data: Dyn<*mut i32>) -> Vector {
//!         let id = shared.vectors.get();
//!         shared.vectors.set(id + 1);
//!         Vector { data, id, shared: shared.clone() }
//!     }
//!
//!     impl Vector {
//!         #[track_caller]
//!         fn clamp(&self, lo: i32) {
//!             if lo < 0 {
//!                 dsl::fail(NegativeBound(lo), Location::caller());
//!             }
//!             if self.shared.last.replace(Some((self.id, lo))) == Some((self.id, lo)) {
//!                 return; // clamped already
//!             }
//!             let i = Dyn::named("i", 0);
//!             while i.lt(self.shared.n).is_true() {
//!                 let x = self.data.at(i);
//!                 self.data.at(i).set(Dyn::select(x.lt(lo), lo, x));
//!                 i.set(i + 1);
//!             }
//!         }
//!     }
//!
//!     let program = |lo: i32| {
//!         move |x: Dyn<*mut i32>, n: Dyn<i32>, c: Dyn<i32>| {
//!             let shared = dsl::State::new(Shared {
//!                 n,
//!                 vectors: Cell::new(0),
//!                 last: dsl::Seen::new(None),
//!             });
//!             let x = vector(&shared, x);
//!             if c.eq(0).is_true() {
//!                 x.clamp(0);
//!             }
//!             x.clamp(lo); // a loop on one path only
//!         }
//!     };
//!     let f = Builder::new().extract("clamped", program(0))?;
//!     assert_eq!(f.c_code().matches("for (").count(), 2, "{}", f.c_code());
//!
//!     let e = Builder::new().extract("negative", program(-1)).map(|_| ()).unwrap_err();
//!     assert_eq!(e.dsl_error::<NegativeBound>(), Some(&NegativeBound(-1)));
//!     assert!(e.to_string().starts_with("clamp at -1: bounds are at least 0 at "));
//!     Ok(())
//! }
//! ```
//!
//! `augur-einsum` and `augur-nn` keep their state this way.
//!
//! # Full-size DSLs
//!
//! The same ideas, grown up, are in this workspace's other crates:
//!
//! * `augur-nn`: convolutions, fully connected layers, bias adds and ReLUs;
//!   a producer fuses the ReLU (and a bias add before it) into its loop
//!   exactly when every path agrees on what follows, as here, with filters
//!   unrolled over first-stage sizes.
//! * `augur-einsum`: tensors with first-stage shapes and einsum
//!   statements, compiled to C loops or CUDA kernels; prophecies and a
//!   history decide which tensors to allocate on the GPU and copy in and
//!   out, so a program moves exactly the data its kernels need.
//! * `augur-imp`: the paper's small labelled language and its prophecy
//!   analysis by re-execution, with a staged interpreter that compiles
//!   programs to C through augur and drops assignments nobody reads.
//! * `augur-cli`: the `augur` command, which stages these examples and
//!   emits their C and CUDA.
