//! augur: staged DSLs in Rust.
#![warn(missing_docs)]

mod builder;
pub mod codegen;
pub mod error;
pub mod exec;
pub mod ir;
pub mod passes;
mod pipeline;
pub mod prophecy;
pub mod stage;
pub mod structure;
pub mod trace;

pub use builder::{Builder, Compiled, Extracted};
pub use error::{Error, Result};
pub use exec::interp::{Interpreter, Value};
pub use prophecy::{History, Prophecy, ProphecyMode};
pub use stage::ctype::{CChar, CScalar, CType};
pub use stage::dyn_val::{annotate, in_extraction, AnyArg, Dyn, IntoArg, IntoIndex};
pub use stage::extern_fn::ExternFn;
pub use stage::libc;
pub use stage::static_var::{range, Static, StaticRange};
pub use trace::{Stats, Tagger};
