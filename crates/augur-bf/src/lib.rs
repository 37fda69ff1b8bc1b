//! Brainf*** compiled by staging an interpreter on augur: the first
//! Futamura projection, at the scale of programs of 100,000 commands.
//!
//! The interpreter ([`extract`]) is ordinary first-stage Rust over the
//! program; the tape, the input and the output are second-stage values,
//! so what augur generates is the program compiled, as C or by the JIT.
//! Written over [`augur::resumable`] points ([`Form::Points`]) it extracts
//! in time linear in the program; the same interpreter with a `Static`
//! program counter ([`Form::StaticPc`]) gives code that behaves alike (the
//! same code, up to 64 points) in quadratic time. Folding while staging ([`fold`]) is the first stage doing an
//! optimizer's work: runs of commands become one operation, pointer moves
//! become offsets, clearing and moving loops become multiply-adds.
//!
//! [`run`] is the reference interpreter the tests compare with, and
//! [`Folded`] the fast interpreter the benchmarks compare with
//! (`augur bench interp`).
//!
//! The tutorial's chapter "Staging an interpreter"
//! (`augur::tutorial::ch10_interpreters`) builds it step by step.

pub mod fold;
mod interp;
mod program;
mod stage;

pub use interp::{run, Fault, Folded};
pub use program::{nested_loops, squares, ParseError, Program, HELLO};
pub use stage::{extract, BfFn, Form, Options};
