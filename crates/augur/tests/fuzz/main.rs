//! Random and property tests: programs (`fuzz_programs/`), modules,
//! prophecies, block-level GPU kernels, struct layouts and lattice laws.
//! `fuzz_env/` reads the case counts and seeds from the environment.
//!
//! One test binary: each module was a test binary of its own (a test keeps
//! its name under `<module>::`).

#[path = "../common/mod.rs"]
mod common;
mod fuzz_env;

mod fuzz_programs;
mod gpu_block_fuzz;
mod lattice_laws;
mod module_fuzz;
mod parallel_fuzz;
mod prophecy_fuzz;
mod struct_layouts;
