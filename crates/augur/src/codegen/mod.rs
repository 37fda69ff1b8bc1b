//! Code generators: C99 (`c`) and CUDA with its CPU simulation (`cuda`).

pub mod c;
pub mod cuda;

pub use c::{write_function, write_module};
