//! Running the second stage.

pub mod cache;
pub mod compile;
pub mod cuda;
pub(crate) mod process;

pub use cache::Cache;
pub use compile::{compile, Backend, CompileOptions, ExternSymbol, Library};
pub mod interp;
#[cfg(feature = "jit")]
pub mod jit;
pub use interp::{Elem, Interpreter, Memory, Pod, Value};
