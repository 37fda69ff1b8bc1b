//! The staged language: extraction, control flow, loops, first-stage state,
//! prophecies, modules, structs, pointers, externs and the errors of each.
//!
//! One test binary: each module was a test binary of its own (a test keeps
//! its name under `<module>::`).

#[path = "../common/mod.rs"]
mod common;
#[path = "../probe_harness/mod.rs"]
mod probe_harness;

mod builder_options;
mod control_flow;
mod copy_elimination;
mod dyn_value;
mod error_robustness;
mod errors;
mod expressions;
mod externs;
mod function_pointers;
mod history;
mod libc;
mod loop_control_flow;
mod loops;
mod memory;
mod modules;
mod opaque_types;
mod parallel;
mod places;
mod prophecy;
mod prophecy_errors;
mod qualifiers;
mod resumable;
mod resumable_shapes;
mod rust_operators;
mod semantics;
mod sound_by_default;
mod state_across_joins;
mod static_values;
mod structs;
mod structured_jumps;
mod structuring;
mod tracker_scopes;
