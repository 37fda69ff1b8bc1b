//! # 6. Structs and several functions
//!
//! Real DSLs have records (a tensor header, a particle, a tree node) and
//! more than one function. This chapter shows both.
//!
//! # Structs
//!
//! `#[derive(augur::Staged)]` on a `#[repr(C)]` struct makes it a
//! second-stage type: `Dyn<Particle>` is a C `Particle`, declared once at
//! the top of the unit (each struct after those it contains). The derive
//! also makes a trait, `ParticleFields`, with one method per field: `p.vel()`
//! is the field as a `Dyn`, which you read, [`set`](crate::Dyn::set) or
//! update with `+=`, and which itself has fields when it is a struct. A
//! struct reached through a pointer (`ps.at(i)`, `p.deref()`) assigns back
//! to memory, like any value loaded from there:
//!
//! ```
//! #[augur::staged]
//! fn main() -> augur::Result<()> {
//!     use augur::{Builder, Dyn, Staged};
//!
//!     #[derive(Clone, Copy, Debug, PartialEq, Staged)]
//!     #[repr(C)]
//!     struct Vec2 {
//!         x: f32,
//!         y: f32,
//!     }
//!
//!     #[derive(Clone, Copy, Debug, PartialEq, Staged)]
//!     #[repr(C)]
//!     struct Particle {
//!         pos: Vec2,
//!         vel: Vec2,
//!     }
//!
//!     const DT: f32 = 0.5; // first-stage: folded into the code
//!     let step = Builder::new().extract("step", |ps: Dyn<*mut Particle>, n: Dyn<i32>| {
//!         let i = Dyn::new(0);
//!         while i.lt(n).is_true() {
//!             let p = ps.at(i);
//!             let mut x = p.pos().x();
//!             x += p.vel().x() * DT;
//!             let mut y = p.pos().y();
//!             y += p.vel().y() * DT;
//!             i.set(i + 1);
//!         }
//!     })?;
//!     let c = step.c_code();
//!     assert!(c.contains("typedef struct Particle {\n  Vec2 pos;\n  Vec2 vel;\n} Particle;"));
//!     let mut ps = [Particle { pos: Vec2 { x: 0.0, y: 1.0 }, vel: Vec2 { x: 2.0, y: -2.0 } }];
//!     // SAFETY: `step` updates `n` particles at `ps`; `Particle` is `#[repr(C)]`.
//!     unsafe { step.compile()?.get()(ps.as_mut_ptr(), 1) };
//!     assert_eq!(ps[0].pos, Vec2 { x: 1.0, y: 0.0 });
//!     Ok(())
//! }
//! ```
//!
//! A whole struct is a value too: `Dyn::new(p)` copies it, `q.set(p)`
//! assigns it, and a staged function (below) takes and returns structs by
//! value, as C does. The JIT takes structs through pointers only: a struct
//! passed by value needs the C compiler (the JIT says so).
//!
//! # Several functions
//!
//! So far every extraction gave one C function, and a Rust function called
//! in the closure was simply inlined into it. That is usually what you
//! want. But a DSL sometimes needs real second-stage functions: a
//! recursive algorithm over data only the second stage has, a helper
//! called from many places that should exist once, an entry point per
//! operation of a library, a callback. A [`Module`](crate::Module)
//! extracts several staged functions that call each other into one C unit.
//!
//! # Declare, define, call
//!
//! A function is *declared* first, which gives a [`Func`](crate::Func)
//! handle: a `Copy` value that any body can call, its own included. The
//! signature is a Rust function type. Then it is *defined* with a closure,
//! exactly like one given to `extract`. A staged call generates a C call,
//! so a function that calls itself becomes a recursive C function:
//!
//! ```
//! #[augur::staged]
//! fn main() -> augur::Result<()> {
//!     use augur::{Builder, Dyn, Func};
//!
//!     let mut m = Builder::new().module();
//!     let gcd: Func<fn(u64, u64) -> u64> = m.declare("gcd");
//!     m.define(gcd, move |a: Dyn<u64>, b: Dyn<u64>| {
//!         let r = Dyn::named("r", a);
//!         if b.ne(0u64).is_true() {
//!             r.set(gcd.call(b, a % b));
//!         }
//!         r
//!     });
//!     let ex = m.extract()?;
//!     assert!(ex.c_code().contains("r = gcd(arg1, arg0 % arg1);"));
//!     // The interpreter runs calls between the functions...
//!     assert_eq!(ex.interpret(gcd, &[1071u64.into(), 462u64.into()])?, 21u64.into());
//!     // ...and one compile gives one library with a typed pointer per function.
//!     let lib = ex.compile()?;
//!     // SAFETY: `gcd` is `uint64_t gcd(uint64_t, uint64_t)`.
//!     assert_eq!(unsafe { lib.get(gcd)?(12, 18) }, 6);
//!     Ok(())
//! }
//! ```
//!
//! Each function is extracted on its own, as `extract` would: everything the
//! earlier chapters said about branches, loops, `Static` values and
//! prophecies holds inside each body. To the body that calls it, a staged
//! function is an opaque call, like an extern.
//!
//! # Specialising on first-stage keys
//!
//! Chapter 3 specialised one function on a first-stage exponent. A *keyed*
//! family does that across functions: [`declare_keyed`](crate::Module::declare_keyed)
//! takes a key type, the body gets the key as its first argument, and
//! `f.at(k)` is the member for `k`: a function of its own, named after the
//! key, extracted once however many calls ask for it. Recursion over a
//! first-stage value becomes a chain of specialised functions:
//!
//! ```
//! #[augur::staged]
//! fn main() -> augur::Result<()> {
//!     use augur::{Builder, Dyn};
//!
//!     let mut m = Builder::new().module();
//!     let power = m.declare_keyed::<u32, fn(f64) -> f64>("power");
//!     m.define_keyed(power, move |k: u32, x: Dyn<f64>| {
//!         if k == 0 {
//!             Dyn::new(1.0)
//!         } else if k % 2 == 0 {
//!             let half = Dyn::named("half", power.at(k / 2).call(x));
//!             half * half
//!         } else {
//!             x * power.at(k - 1).call(x)
//!         }
//!     });
//!     m.export(power.at(10)); // what the library exports
//!     let ex = m.extract()?;
//!     let names: Vec<&str> = ex.functions().map(|f| f.name.as_str()).collect();
//!     assert_eq!(names, ["power_10", "power_5", "power_4", "power_2", "power_1", "power_0"]);
//!     assert_eq!(ex.interpret(power.at(10), &[2.0.into()])?, 1024.0.into());
//!     Ok(())
//! }
//! ```
//!
//! Keys can be anything `Clone + Eq + Hash + Debug`: a node of a first-stage
//! tree (one function per node: a tree walk specialised on the tree), a
//! grammar rule, a tile size. A key that never repeats (a counter that only
//! grows) would make functions for ever; the module stops at
//! [`max_functions`](crate::Module::max_functions) with an error naming the
//! call.
//!
//! # Function pointers
//!
//! A function's address is a value too: `Dyn<FnPtr<fn(f64) -> f64>>` is a
//! C `double (*)(double)`. [`Func::addr`](crate::Func::addr) and
//! [`ExternFn::addr`](crate::ExternFn::addr) make one, a parameter of that
//! type takes a Rust `extern "C" fn` from the caller, and `.call(x)` calls
//! through it. A table of them dispatches on a second-stage index:
//!
//! ```
//! #[augur::staged]
//! fn main() -> augur::Result<()> {
//!     use augur::{Builder, Dyn, FnPtr, Func};
//!
//!     type Op = FnPtr<fn(i64, i64) -> i64>;
//!     let mut m = Builder::new().module();
//!     let add: Func<fn(i64, i64) -> i64> = m.declare("add");
//!     let mul: Func<fn(i64, i64) -> i64> = m.declare("mul");
//!     let apply: Func<fn(i32, i64, i64) -> i64> = m.declare("apply");
//!     m.define(add, |a: Dyn<i64>, b: Dyn<i64>| a + b);
//!     m.define(mul, |a: Dyn<i64>, b: Dyn<i64>| a * b);
//!     m.define(apply, move |op: Dyn<i32>, a: Dyn<i64>, b: Dyn<i64>| {
//!         let table = Dyn::<[Op; 2]>::uninit();
//!         table.at(0).set(add.addr());
//!         table.at(1).set(mul.addr());
//!         table.at(op).call(a, b)
//!     });
//!     let ex = m.extract()?;
//!     assert!(ex.c_code().contains("int64_t (*var0[2])(int64_t, int64_t);"));
//!     assert_eq!(ex.interpret(apply, &[1.into(), 6i64.into(), 7i64.into()])?, 42i64.into());
//!     Ok(())
//! }
//! ```
//!
//! A C type your code only passes around (a library's handle, `FILE`) is
//! declared with [`opaque_type!`](crate::opaque_type) and used behind
//! pointers.
//!
//! # Limits
//!
//! The module's functions are host functions: a GPU kernel cannot call one
//! (the CUDA writer says so, naming the line). Calls run as calls: nothing
//! is inlined across functions, so a helper called in a hot loop is better
//! staged inline, as a plain Rust function, which is what chapter 1 did.
//!
//! The complete program is `crates/augur/examples/tutorial_6_functions.rs`.
