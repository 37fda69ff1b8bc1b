//! augur-nn's integration tests, in one test binary: each module was a test
//! binary of its own (a test keeps its name under `<module>::`).

mod common;

mod batch_loops_and_recurrences;
mod fusion;
mod fusion_chains_and_control_flow;
mod fusion_shapes_and_thresholds;
mod net_errors;
