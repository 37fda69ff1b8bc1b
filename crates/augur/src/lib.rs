//! # augur: staged DSLs in Rust
//!
//! augur is a library for building high-performance domain-specific
//! languages by *staging*. You write ordinary Rust over second-stage values,
//! [`Dyn<T>`], and first-stage values, [`Static<T>`] and plain Rust; augur
//! runs that code, records what it does to the `Dyn` values, and gives back a
//! C function that you can print, compile, load and call, or run in the
//! built-in [`Interpreter`]. Data-dependent control flow (`if
//! c.is_true()`, `while c.is_true()`) is found by running the closure again
//! under a decision oracle, so Rust's own `if`, `while`, `break` and
//! `return` become C's. Everything first-stage is computed away: loops over
//! first-stage values unroll, and code is specialised to the tables,
//! sizes and programs it was staged over.
//!
//! [Prophecy variables](prophecy) carry facts about the future into the
//! first stage: a prediction is read now, checked by a requirement later,
//! and the first stage is re-run until every prediction holds on every
//! path. That is how a DSL decides, while generating a producer, what only
//! its consumers know: which data a GPU kernel will read, whether the next
//! operation can be fused into this loop.
//!
//! ```
//! #[augur::staged]
//! fn main() -> augur::Result<()> {
//!     use augur::{Builder, Dyn, Static};
//!
//!     // x^15 by repeated squaring: the exponent is first-stage and unrolls away.
//!     let power = Builder::new().extract("power15", |base: Dyn<i64>| {
//!         let res = Dyn::named("res", 1i64);
//!         let x = Dyn::named("x", base);
//!         let mut exponent = Static::new(15u32);
//!         while *exponent > 1 {
//!             if *exponent % 2 == 1 {
//!                 res.set(res * x);
//!             }
//!             x.set(x * x);
//!             exponent.set(*exponent / 2);
//!         }
//!         res * x
//!     })?;
//!     println!("{}", power.c_code()); // int64_t power15(int64_t arg0) { ... }
//!
//!     let f = power.compile()?; // cc, cached by content, loaded
//!     // SAFETY: power15 takes and returns an int64_t; no pointers involved.
//!     assert_eq!(unsafe { (f.get())(3) }, 3i64.pow(15));
//!     assert_eq!(power.interpret(&[3i64.into()])?, 3i64.pow(15).into());
//!     Ok(())
//! }
//! ```
//!
//! # Where to start
//!
//! The [`tutorial`] goes from a first staged function through loops,
//! static specialization and prophecies to a small DSL; each chapter has a
//! runnable twin in `crates/augur/examples/tutorial_*.rs`.
//!
//! The entry point is [`Builder::extract`], which returns an
//! [`Extracted`] function ([`c_code`](Extracted::c_code),
//! [`compile`](Extracted::compile), [`interpret`](Extracted::interpret),
//! [`stats`](Extracted::stats), [`explain`](Extracted::explain)). Staged
//! values live in [`stage`] ([`Dyn`], [`Static`], [`range`], extern C
//! functions, GPU kernels, and [`DynValue`] and [`DynPtr`] for values whose
//! type is first-stage data), predictions and histories in [`prophecy`]. The
//! IR ([`ir`]), its passes ([`passes`]), the C and CUDA writers
//! ([`codegen`]) and the compiler driver and interpreter ([`exec`]) are
//! public for DSL authors and tools.
//!
//! # Sibling crates
//!
//! * `augur-einsum`: tensors with first-stage shapes and einsum
//!   statements, compiled to C loops (optionally OpenMP) or CUDA kernels,
//!   moving exactly the data each kernel needs, decided by prophecies.
//! * `augur-nn`: a neural-network DSL (convolutions, fully connected
//!   layers, bias add, ReLU) that fuses a ReLU into its producer exactly
//!   when every path agrees on it.
//! * `augur-imp`: the paper's labelled core language, its prophecy
//!   analysis by re-execution, and a staged interpreter compiled through
//!   augur.
//! * `augur-cli`: the `augur` command, which stages the examples, emits C
//!   and CUDA, runs the imp language and regenerates the experiments.
//!
//! # Features
//!
//! * `cuda-install` (off by default): `Nvcc::find_or_install`, which
//!   installs NVIDIA's pip wheels of nvcc when none is found. Without it,
//!   [`Nvcc::find`](exec::cuda::Nvcc::find) uses an nvcc that is there
//!   (`AUGUR_NVCC`, `PATH`, `/usr/local/cuda`, an earlier install) and its
//!   error says how to install one. `augur-cli` and the tests turn it on.
//!
//! # Frame pointers
//!
//! Program points are identified by walking frame pointers: build projects
//! that use augur with `-C force-frame-pointers=yes` (see this workspace's
//! `.cargo/config.toml`). Without them augur falls back to the unwinder,
//! which is slower; [`Stats::tagger_used`] tells which one ran.
#![warn(missing_docs)]

mod builder;
pub mod codegen;
mod dump;
pub mod error;
pub mod exec;
pub mod ir;
mod libm;
mod module;
pub mod passes;
mod pipeline;
mod program;
pub mod prophecy;
pub mod safe;
pub mod stage;
pub mod structure;
pub mod trace;
pub mod tutorial;

pub use builder::{Builder, Compiled, Extracted};
pub use error::{Error, Result};
pub use exec::interp::{Interpreter, Value};
pub use module::{CompiledModule, ExtractedModule, Module, DEFAULT_MAX_FUNCTIONS};
pub use prophecy::{History, Prophecy, ProphecyMode};
pub use stage::bytes;
pub use stage::ctype::{CChar, CScalar, CType};
pub use stage::dsl;
pub use stage::dyn_val::{annotate, in_extraction, AnyArg, Dyn, IntoArg, IntoIndex};
pub use stage::dyn_value::{DynOperand, DynPtr, DynScalar, DynValue, ScalarType, TypeError};
pub use stage::extern_fn::ExternFn;
pub use stage::fn_ptr::FnPtr;
pub use stage::func::{Func, Handle, Instance, Key, Signature};
pub use stage::libc;
pub use stage::math;
pub use stage::parallel::{parallel, parallel_for, Parallel, Reducer};
pub use stage::resume::resumable;
pub use stage::static_var::{range, Static, StaticRange};
pub use trace::{Stats, Tagger};

/// Makes a function's plain Rust loops and locals visible to extraction.
///
/// Put it on a function (or an `impl` block) whose code runs inside
/// [`Builder::extract`]: its `for` loops unroll exactly whatever their
/// length and wherever they are (inside dyn loops, around dyn `break`s), its
/// `let mut` locals and `let x = if ... / match ...` bindings of `Hash` types
/// are part of every program point while they live, the closures it hands
/// to calls (`(0..n).any(|_| ..)`) count their calls, and its calls are
/// never tail calls. Outside an extraction the function runs as written.
///
/// ```
/// use augur::{Builder, Dyn};
///
/// #[augur::staged]
/// fn clamp_steps(x: Dyn<i32>, steps: u32) -> Dyn<i32> {
///     let r = Dyn::new(0);
///     let i = Dyn::new(0);
///     while i.lt(x).is_true() {       // a dyn loop...
///         for _ in 0..steps {         // ...around a plain one
///             if r.ge(100).is_true() {
///                 break;
///             }
///             r.set(r + 1);
///         }
///         i.set(i + 1);
///     }
///     r
/// }
///
/// let f = Builder::new().extract("steps", |x: Dyn<i32>| clamp_steps(x, 20)).unwrap();
/// assert_eq!(f.interpret(&[3.into()]).unwrap(), 60.into());
/// assert_eq!(f.interpret(&[9.into()]).unwrap(), 100.into());
/// ```
///
/// A tracked local changed through a method (`seen.push(c)`, `st.take()`)
/// or a `&mut` borrow is re-hashed after the statement or condition that
/// changes it. A `let` may keep such a borrow alive (`let last =
/// w.last_mut().unwrap();`), so the local is re-hashed before the block
/// next names it instead; until then its value is unknown, and the engine
/// shares no code (a loop closing, a path joining in that stretch unrolls
/// or stops with [`Error::Unannotated`] naming the `let`):
///
/// ```
/// #[augur::staged]
/// fn bump(v: &mut Vec<u8>) {
///     let mut w = v.clone();
///     let last = w.last_mut().unwrap(); // `w` unknown from here...
///     *last += 1;
///     *v = w; // ...to here, where it is re-hashed
/// }
/// let mut v = vec![1, 2];
/// bump(&mut v);
/// assert_eq!(v, [1, 3]);
/// ```
pub use augur_macros::staged;

/// Makes a `#[repr(C)]` struct a second-stage type: `Dyn<Point>` is a C
/// `Point` (declared once per unit, before the functions), with a method per
/// field from the generated trait `PointFields` (bring it into scope) that
/// gives the field as a `Dyn`: read it, [`set`](Dyn::set) it, `+=` it.
/// Fields are scalars, pointers, arrays, function pointers and other
/// staged structs. The struct itself is what compiled code takes and
/// returns by value (derive `Clone, Copy` too); the JIT takes structs by
/// pointer only. The derive also implements [`exec::Elem`], so that the
/// interpreter's [`Memory`](exec::Memory) holds arrays of the struct
/// (`alloc_slice`, `read_slice`); every field's type must be an `Elem`, as
/// the numbers, `CChar`, raw pointers, arrays and staged structs are.
///
/// ```
/// #[augur::staged]
/// fn main() -> augur::Result<()> {
///     use augur::{Builder, Dyn, Staged};
///
///     #[derive(Clone, Copy, Debug, PartialEq, Staged)]
///     #[repr(C)]
///     struct Point {
///         x: f32,
///         y: f32,
///     }
///
///     let f = Builder::new()
///         .extract("mirror", |ps: Dyn<*mut Point>, n: Dyn<i32>| {
///             let i = Dyn::new(0);
///             while i.lt(n).is_true() {
///                 let p = ps.at(i);
///                 let x = Dyn::new(p.x());
///                 p.x().set(p.y());
///                 p.y().set(x);
///                 i.set(i + 1);
///             }
///         })
///         .unwrap();
///     assert!(f.c_code().contains("typedef struct Point {\n  float x;\n  float y;\n} Point;"));
///     let mut ps = [Point { x: 1.0, y: 2.0 }, Point { x: 3.0, y: 4.0 }];
///     // SAFETY: `mirror` swaps the fields of `n` points at `ps`.
///     unsafe { f.compile().unwrap().get()(ps.as_mut_ptr(), 2) };
///     assert_eq!(ps, [Point { x: 2.0, y: 1.0 }, Point { x: 4.0, y: 3.0 }]);
///     Ok(())
/// }
/// ```
pub use augur_macros::Staged;

/// What [`staged`] expands to; not API.
#[doc(hidden)]
pub mod __private {
    pub use crate::exec::interp::value::field_at;
    pub use crate::stage::staged::{
        arg, body, call, end, ended, mark, scrutinee, turns, value, varies, Frame, FrameGuard,
        Held, MacroGuard, Mark, Probe, Region, Tracked, Turns, ViaHash, ViaNone, ViaSeen,
    };
}

/// The README's Rust examples, run as doctests so they cannot rot.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
pub struct ReadmeDoctests;
