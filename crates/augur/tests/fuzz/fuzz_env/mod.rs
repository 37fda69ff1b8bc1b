//! What the random-program tests read from the environment: how many cases
//! to run and the seed to start from, so that a failing case's printed
//! seed reproduces it.
#![allow(dead_code)]

/// `$name` as a number, else 60 cases in release builds and 25 in debug
/// builds (CI runs both).
pub fn cases(name: &str) -> u64 {
    number(name).unwrap_or(if cfg!(debug_assertions) { 25 } else { 60 })
}

/// `$name` as a number, else `default`.
pub fn seed(name: &str, default: u64) -> u64 {
    number(name).unwrap_or(default)
}

fn number(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|s| s.parse().ok())
}
