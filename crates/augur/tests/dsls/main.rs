//! DSLs written with augur: convolution/ReLU fusion (`fusion_dsl/`), the
//! paper's examples (`gpu_tensors/`), BuildIt's samples, staged interpreters,
//! the DSL kit's state and `#[augur::staged]`.
//!
//! One test binary: each module was a test binary of its own (a test keeps
//! its name under `<module>::`).

#[path = "../common/mod.rs"]
mod common;
mod fusion_dsl;
mod gpu_tensors;

mod buildit_samples;
mod dsl_state;
mod fusion;
mod fusion_batch_loops;
mod fusion_layers;
mod interpreters;
mod paper_example;
mod paper_example_two_kernels;
mod staged_attribute;
