//! The extraction engine (re-execution under a decision oracle).
//!
//! `driver` runs the closure again and again; `engine` records what each
//! run does into the `graph`, keyed by [`tag`]s; [`stats`] counts it all.

mod audit;
mod cells;
mod decisions;
pub(crate) mod driver;
pub(crate) mod engine;
pub(crate) mod graph;
mod record;
mod run;
pub mod stats;
pub mod tag;

pub use engine::Config;
pub use stats::Stats;
pub use tag::Tagger;
