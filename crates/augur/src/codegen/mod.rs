//! Code generators: C99 (`c`) and CUDA with its CPU simulation (`cuda`).
//!
//! Both take [`CodegenOptions`]; with [`LineMarkers::Directives`] the code
//! carries `#line` directives, so C compiler diagnostics and debuggers lead
//! back to the user's Rust lines (source mapping).

pub mod c;
pub mod cuda;
mod source_map;

pub use c::{write_function, write_function_with, write_module, write_module_with};
pub use source_map::{CodegenOptions, LineMarkers};
