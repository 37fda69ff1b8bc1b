//! Running the second stage.

pub mod compile;
pub mod cuda;
pub(crate) mod process;

pub use compile::{compile, CompileOptions, Library};
pub mod interp;
pub use interp::{Interpreter, Memory, Pod, Value};
