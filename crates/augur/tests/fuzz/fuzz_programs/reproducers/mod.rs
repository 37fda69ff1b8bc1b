//! Engine bugs found by this test: minimal reproducers, written as plain
//! staged Rust where the bug shows there too, checked with the suite's
//! differential harness (extract twice, no gotos, C = interpreter = Rust).
//! Fixed, they stay as regression tests.

mod c_flags;
mod hidden_forms;
mod immutable_lets;
mod methods;
mod plain_loops;
mod structuring;

use crate::fuzz_programs::check::check_program;
use crate::fuzz_programs::language::Program;
use crate::fuzz_programs::staged::Walk;

/// Checks a fuzz program under one walk, printing it on failure.
#[track_caller]
#[augur::staged]
fn check_ast(p: &Program, walk: Walk) {
    if let Err(f) = check_program(p, walk, true) {
        panic!("{walk:?} walk:\n{p}{f}");
    }
}
