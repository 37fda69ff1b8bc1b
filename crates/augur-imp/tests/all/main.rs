//! augur-imp's integration tests, in one test binary: each module was a test
//! binary of its own (a test keeps its name under `<module>::`).

mod common;

mod analysis;
mod parse_errors;
mod parsing;
mod printing;
mod staged;
mod well_formedness;
