//! The backends and the IR: names and types in the C, the JIT (`jit/`), the
//! CUDA backend and its CPU simulation, `augur::math`, source maps, the safe
//! call, the IR's text form and the file tests.
//!
//! One test binary: each module was a test binary of its own (a test keeps
//! its name under `<module>::`).

#[path = "../common/mod.rs"]
mod common;
#[path = "../probe_harness/mod.rs"]
mod probe_harness;

mod build_comment;
mod c_names;
mod c_types;
mod compile_cache;
mod cuda_backend;
mod cuda_kernel_checks;
mod cuda_kernel_shapes;
mod filetests;
mod find_pair;
mod gpu_block;
mod ir_text;
mod jit;
mod launch_statement;
mod math;
mod safe_call;
mod source_map;
