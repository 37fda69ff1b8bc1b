//! A regex compiler staged on augur.
//!
//! The first stage is an ordinary simulation of the pattern's automaton: a
//! set of threads in priority order, stepped over the haystack's bytes.
//! The haystack is second-stage data, so each step becomes a test on a
//! byte in the generated code, and each set a resumable point
//! ([`augur::resumable`]) keyed by the set: the code generated is the
//! pattern's DFA, built only as far as the search reaches, and extraction
//! costs about the DFA's states times the classes of bytes it tells apart.
//!
//! Matches are the regex crate's (`regex::bytes::Regex`): leftmost-first,
//! greedy and lazy repetition, empty matches as its iterator reports them.
//! The syntax is regex-syntax's (the regex crate's parser): literals,
//! classes and their negation, `.`, alternation, `* + ?`, counted
//! repetition, `\A`, `\z`, `^` and `$`, case-insensitive matching, and
//! Unicode classes over UTF-8 (with [`Options::unicode`], the default) or
//! bytes. Word boundaries and multi-line anchors are refused with
//! [`Error::Unsupported`] naming them.
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let re = augur_regex::Regex::new(r"[a-z]+@[a-z]+\.com")?;
//! let m = re.stage(&augur::Builder::new())?.compile(&Default::default())?;
//! assert_eq!(m.find(b"mail bob@example.com now"), Some((5, 20)));
//! assert!(!m.is_match(b"no address here"));
//! assert_eq!(m.count(b"a@b.com c@d.com"), 2);
//! # Ok(())
//! # }
//! ```

mod dfa;
mod error;
mod matcher;
mod nfa;
mod prefilter;
mod side;
mod stage;

pub use error::Error;
pub use matcher::{Matcher, Staged, LARGE_DFA};
pub use nfa::MAX_NFA_STATES;
pub use stage::{ForwardFn, ReverseFn};

use augur::Extracted;
use dfa::{Dir, Sets};
use nfa::Nfa;
use std::rc::Rc;

/// How a pattern is read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    /// Unicode classes and `.` over UTF-8 (true, the default), or over
    /// bytes (`(?-u)`).
    pub unicode: bool,
    /// Case-insensitive matching (`(?i)`).
    pub case_insensitive: bool,
    /// `.` matches `\n` too (`(?s)`).
    pub dot_matches_new_line: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            unicode: true,
            case_insensitive: false,
            dot_matches_new_line: false,
        }
    }
}

/// A parsed pattern: its automaton forward and reversed.
#[derive(Clone, Debug)]
pub struct Regex {
    pattern: String,
    forward: Nfa,
    reverse: Nfa,
    prefilter: Option<prefilter::Prefilter>,
}

impl Regex {
    /// Parses `pattern` with the default [`Options`].
    pub fn new(pattern: &str) -> Result<Regex, Error> {
        Regex::with(pattern, &Options::default())
    }

    /// Parses `pattern` read as `opts` say.
    pub fn with(pattern: &str, opts: &Options) -> Result<Regex, Error> {
        let hir = regex_syntax::ParserBuilder::new()
            .unicode(opts.unicode)
            .case_insensitive(opts.case_insensitive)
            .dot_matches_new_line(opts.dot_matches_new_line)
            .utf8(false)
            .build()
            .parse(pattern)
            .map_err(|e| Error::Syntax(e.to_string()))?;
        Ok(Regex {
            pattern: pattern.to_string(),
            forward: Nfa::new(&hir, false)?,
            reverse: Nfa::new(&hir, true)?,
            prefilter: prefilter::prefilter(&hir),
        })
    }

    /// The pattern as written.
    pub fn pattern(&self) -> &str {
        &self.pattern
    }

    /// Stages the searches with `builder` (see [`Staged`]).
    ///
    /// The three functions are extracted side by side, each on a thread of
    /// its own (an extraction's engine is its thread's; none shares state
    /// with another): on a machine with more than one core the matcher is
    /// staged in about the time of its largest function, holding the
    /// memory of all three at once. The outcome is [`Regex::stage_here`]'s:
    /// the same code, and the first error or panic in the order
    /// `is_match`, `find`, `rfind`. Inside an extraction (a DSL that stages
    /// a matcher as part of its own program) this is `stage_here`.
    pub fn stage(&self, builder: &augur::Builder) -> Result<Staged, Error> {
        if augur::in_extraction() {
            // The caller's extraction refuses another on its thread: no
            // work on other threads that would fail there.
            return self.stage_here(builder);
        }
        let (any, find, rfind) = std::thread::scope(|scope| {
            let any = side::spawn(scope, "is_match", || self.is_match(builder));
            let rfind = side::spawn(scope, "rfind", || self.rfind(builder));
            let found = side::here(|| self.find(builder));
            (side::join(any), found, side::join(rfind))
        });
        Ok(staged(
            side::settle(any)?,
            side::settle(find)?,
            side::settle(rfind)?,
        ))
    }

    /// Stages the searches with `builder` one after the other, on this
    /// thread: the memory of one extraction at a time.
    pub fn stage_here(&self, builder: &augur::Builder) -> Result<Staged, Error> {
        let any = self.is_match(builder)?;
        let find = self.find(builder)?;
        Ok(staged(any, find, self.rfind(builder)?))
    }

    /// The forward automaton as a search runs it (unanchored), and the
    /// state the search starts in.
    fn search_nfa(&self) -> (Nfa, nfa::StateId) {
        let mut fwd = self.forward.clone();
        let prefix = fwd.unanchored();
        (fwd, prefix)
    }

    /// Stages the match test. Its sets go sorted: only the leftmost-first
    /// end needs them in priority order.
    fn is_match(&self, builder: &augur::Builder) -> augur::Result<Extracted<ForwardFn>> {
        let (fwd, prefix) = self.search_nfa();
        let sets = Rc::new(Sets::new(fwd, Dir::Forward).unordered());
        let prefilter = self.prefilter.clone();
        stage::forward(
            "is_match",
            sets,
            prefix,
            stage::Goal::Any,
            prefilter,
            builder,
        )
    }

    /// Stages the search for a match's end, and counts its DFA's states.
    fn find(&self, builder: &augur::Builder) -> augur::Result<(Extracted<ForwardFn>, usize)> {
        let (fwd, prefix) = self.search_nfa();
        let sets = Rc::new(Sets::new(fwd, Dir::Forward));
        let prefilter = self.prefilter.clone();
        let f = stage::forward(
            "find",
            sets.clone(),
            prefix,
            stage::Goal::End,
            prefilter,
            builder,
        )?;
        Ok((f, sets.len()))
    }

    /// Stages the backward search for a match's start, and counts its
    /// DFA's states.
    fn rfind(&self, builder: &augur::Builder) -> augur::Result<(Extracted<ReverseFn>, usize)> {
        let sets = Rc::new(Sets::new(self.reverse.clone(), Dir::Reverse).unordered());
        let f = stage::reverse(sets.clone(), self.reverse.start, builder)?;
        Ok((f, sets.len()))
    }
}

/// The matcher of three functions staged, each search with its DFA's
/// state count.
fn staged(
    is_match: Extracted<ForwardFn>,
    (find, fwd_states): (Extracted<ForwardFn>, usize),
    (rfind, rev_states): (Extracted<ReverseFn>, usize),
) -> Staged {
    Staged {
        is_match,
        find,
        rfind,
        states: (fwd_states, rev_states),
    }
}
