//! The limits and switches of an extraction (`Builder` sets each one).

use super::tag::Tagger;
use crate::prophecy::ProphecyMode;

/// Limits and switches of an extraction.
#[derive(Clone, Debug)]
pub struct Config {
    /// How tags are taken.
    pub tagger: Tagger,
    /// How many times one decision site may be reached in one run before the
    /// loop around it is declared never-closing.
    pub max_site_visits: u64,
    /// How many extra turns a loop candidate's cycle must repeat identically.
    pub audit_rounds: u32,
    /// Maximum runs (over all attempts).
    pub max_runs: u64,
    /// Maximum operations performed by all runs together (replayed,
    /// recorded and compared): the first stage's work, which bounds its
    /// time where runs grow longer one after another.
    pub max_work: u64,
    /// Maximum recorded operations in one attempt.
    pub max_nodes: usize,
    /// Maximum attempts (restarts + 1).
    pub max_attempts: u32,
    /// Link to code recorded by other runs.
    pub memoize: bool,
    /// Close loops at all (off: every loop unrolls up to the limits).
    pub close_loops: bool,
    /// Close loops and link paths where the plain Rust state is out of
    /// view (code `#[augur::staged]` does not cover), trusting bounded
    /// observation that it does not matter. Off: such points unroll
    /// exactly, and a loop among them that never ends stops with
    /// `Error::Unannotated` (the default). See `Builder::trust_unannotated`.
    pub trust_unannotated: bool,
    /// Points where code was not shared because the plain Rust state is
    /// out of view before the extraction stops with `Error::Unannotated`.
    pub max_unshared: u64,
    /// Allow generated loops without an exit.
    pub allow_infinite_loops: bool,
    /// How many operations a memoization link is checked for before it is
    /// made: `u32::MAX` (the default) follows the linked code to the end of
    /// the closure; 0 links at once, trusting tags alone.
    pub link_audit_ops: u32,
    /// When a violated prophecy starts the extraction over.
    pub prophecy_mode: ProphecyMode,
    /// Restarts for prophecies and histories before the extraction stops
    /// with each cell's history.
    pub max_prophecy_restarts: u64,
    /// Memory the engine may hold for the graph, the jobs and the
    /// variables, in bytes (estimated from their counts).
    pub max_memory: usize,
    /// Let a run that ends at a resumable point recorded before go on as
    /// the next run, where that one starts in the same machine: no
    /// unwinding, no replay of the code before the machine (see
    /// `trace/chain.rs`). The runs and the code are the same either way.
    pub chain_runs: bool,
    /// Testing hook: the engine panics (as an internal bug would) before
    /// starting this run, so tests can check that the thread recovers.
    #[doc(hidden)]
    pub panic_before_run: Option<u64>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            tagger: Tagger::FramePointer,
            max_site_visits: 10_000,
            audit_rounds: 16,
            max_runs: 1_000_000,
            max_work: DEFAULT_MAX_WORK,
            max_nodes: 4_000_000,
            max_attempts: 1000,
            memoize: true,
            close_loops: true,
            trust_unannotated: false,
            max_unshared: 10_000,
            allow_infinite_loops: false,
            link_audit_ops: u32::MAX,
            prophecy_mode: ProphecyMode::Adaptive,
            max_prophecy_restarts: 1000,
            max_memory: DEFAULT_MAX_MEMORY,
            chain_runs: true,
            panic_before_run: None,
        }
    }
}

/// The default [`Config::max_work`]: 200 million operations, 10 to 40
/// seconds of the first stage (the paper's programs perform tens of
/// thousands, 128 unrolled ifs 115,000, a 4,000-state machine about 50
/// million).
pub const DEFAULT_MAX_WORK: u64 = 200_000_000;

/// The default memory budget: 2 GiB, well below the 24 GiB of the machines
/// the project runs on, so a blow-up stops with an error first.
pub const DEFAULT_MAX_MEMORY: usize = 2 << 30;
