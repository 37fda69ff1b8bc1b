//! augur: staged DSLs in Rust.
#![warn(missing_docs)]

pub mod codegen;
pub mod error;
pub mod exec;
pub mod ir;

pub use error::{Error, Result};
