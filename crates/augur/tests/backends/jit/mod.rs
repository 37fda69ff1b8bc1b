//! The JIT backend (`exec::jit`) against the C backend and the interpreter.

mod control;
mod externs;
mod harness;
mod memory;
mod ops;
mod vector;
