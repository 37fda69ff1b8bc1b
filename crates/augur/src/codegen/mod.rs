//! Code generators.

pub mod c;

pub use c::{write_function, write_module};
