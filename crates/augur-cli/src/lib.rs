//! The `augur` command's library: the example catalogue, the demo, the
//! imp subcommands and the experiments behind `augur bench`.
//!
//! The binary (`src/main.rs`) only parses arguments; everything it runs is
//! here, so tests drive the same code.
#![warn(missing_docs)]

pub mod bench;
pub mod catalog;
pub mod demo;
pub mod imp;
pub mod programs;
pub mod report;

/// Counts heap bytes for `augur bench` (peak memory of an extraction).
#[global_allocator]
static HEAP: bench::heap::Counting = bench::heap::Counting;

/// Errors of the command: a message for people (staging errors keep
/// augur's own text, which names the user's line).
pub type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;
