//! A tutorial: from a first staged function to a small DSL.
//!
//! augur generates C functions from Rust code. You write the function as an
//! ordinary Rust closure over [`Dyn<T>`](crate::Dyn) values; augur runs the
//! closure, records what it does to those values, and hands back C that you
//! can print, compile and call, or run in the built-in interpreter. What
//! the closure computes with plain Rust values (configuration, tables,
//! sizes, loop counters) is computed once, while generating, and leaves
//! nothing behind in the C. That is *staging*, and it is how a library can
//! offer a general, high-level interface whose generated code is as
//! specific as hand-written code.
//!
//! The chapters build on each other:
//!
//! 1. [The first staged function](ch1_first_function): `Dyn` values,
//!    [`Builder::extract`](crate::Builder::extract), the C, compiling,
//!    calling and interpreting.
//! 2. [Loops and branches](ch2_loops): `if` and `while` on second-stage
//!    conditions, `break` and `continue`, plain Rust loops that unroll, and
//!    [`augur::range`](crate::range).
//! 3. [Static specialization](ch3_static): [`Static`](crate::Static)
//!    values, specialising on exponents, tables and whole programs, and
//!    [histories](crate::prophecy::History) that carry facts about the past.
//! 4. [Prophecy](ch4_prophecy): deciding now what only later code knows,
//!    with [`Prophecy`](crate::prophecy::Prophecy) and re-execution.
//! 5. [A small DSL](ch5_dsl): a vector library that fuses operations when
//!    every path agrees, and where to go from there.
//! 6. [Structs and several functions](ch6_functions): `#[derive(augur::Staged)]`
//!    structs, and a [`Module`](crate::Module) of staged functions that
//!    call each other: recursion, functions specialised on first-stage
//!    keys, function pointers.
//! 7. [GPU kernels](ch7_kernels): [`gpu::launch`](crate::stage::gpu::launch),
//!    CUDA and its CPU simulation, shared memory, barriers and atomics.
//! 8. [Values whose type is first-stage data](ch8_dynamic):
//!    [`DynValue`](crate::DynValue) and [`DynPtr`](crate::DynPtr) for DSLs
//!    whose types come from their input (a query's schema), with the
//!    code of typed `Dyn`s.
//! 9. [Parallel loops](ch9_parallel): [`parallel_for`](crate::parallel_for)
//!    on OpenMP, the JIT's threads and the interpreter's race check, and
//!    [`Reducer`](crate::Reducer)s.
//! 10. [Staging an interpreter](ch10_interpreters): an interpreter
//!     specialised to its program, and [`resumable`](crate::resumable)
//!     points, which make extraction linear in the program.
//!
//! A DSL's own chapter lives in its crate: `augur_einsum::tutorial` follows
//! one tensor statement from the cores of one machine to MPI ranks, with
//! communication planned by prophecy (its twin: `cargo run --release -p
//! augur-einsum --example tutorial_ranks`).
//!
//! Every code block in these chapters is a test that runs. Each chapter also
//! has a complete program in `crates/augur/examples/` that prints the
//! generated C and checks its results against plain Rust:
//!
//! ```sh
//! cargo run -p augur-staging --example tutorial_1_first
//! cargo run -p augur-staging --example tutorial_2_loops
//! cargo run -p augur-staging --example tutorial_3_static
//! cargo run -p augur-staging --example tutorial_4_prophecy
//! cargo run -p augur-staging --example tutorial_5_dsl
//! cargo run -p augur-staging --example tutorial_6_functions
//! cargo run -p augur-staging --example tutorial_7_kernels
//! cargo run -p augur-staging --example tutorial_8_dynamic
//! cargo run -p augur-staging --example tutorial_9_parallel
//! cargo run -p augur-staging --example tutorial_10_interpreters
//! ```
//!
//! # Before you start
//!
//! augur tells program points apart by walking the stack's frame pointers.
//! Build with `-C force-frame-pointers=yes`, as this workspace's
//! `.cargo/config.toml` does (`rustflags` for builds, `rustdocflags` for
//! doctests). Without it augur falls back to the unwinder, which gives the
//! same code about thirty times more slowly;
//! [`Stats::tagger_used`](crate::Stats::tagger_used) says which one ran.
//!
//! Compiling generated code needs a C compiler: `cc` on the `PATH` (or
//! [`CompileOptions`](crate::exec::compile::CompileOptions) to choose one).
//! The interpreter needs none.

pub mod ch10_interpreters;
pub mod ch1_first_function;
pub mod ch2_loops;
pub mod ch3_static;
pub mod ch4_prophecy;
pub mod ch5_dsl;
pub mod ch6_functions;
pub mod ch7_kernels;
pub mod ch8_dynamic;
pub mod ch9_parallel;
