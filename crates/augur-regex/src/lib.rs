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
mod stage;

pub use error::Error;
pub use matcher::{Matcher, Staged, LARGE_DFA};
pub use nfa::MAX_NFA_STATES;
pub use stage::{ForwardFn, ReverseFn};

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
    required: Option<prefilter::Required>,
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
            required: prefilter::required(&hir),
        })
    }

    /// The pattern as written.
    pub fn pattern(&self) -> &str {
        &self.pattern
    }

    /// Stages the searches with `builder` (see [`Staged`]).
    pub fn stage(&self, builder: &augur::Builder) -> Result<Staged, Error> {
        let mut fwd = self.forward.clone();
        let prefix = fwd.unanchored();
        // Only the leftmost-first end needs its sets in priority order.
        let any_sets = Rc::new(Sets::new(fwd.clone(), Dir::Forward).unordered());
        let fwd = Rc::new(Sets::new(fwd, Dir::Forward));
        let rev_start = self.reverse.start;
        let rev = Rc::new(Sets::new(self.reverse.clone(), Dir::Reverse).unordered());
        let forward = |name, sets: &Rc<Sets>, goal| {
            stage::forward(
                name,
                sets.clone(),
                prefix,
                goal,
                self.required.clone(),
                builder,
            )
        };
        let any = forward("is_match", &any_sets, stage::Goal::Any)?;
        let find = forward("find", &fwd, stage::Goal::End)?;
        let rfind = stage::reverse(rev.clone(), rev_start, builder)?;
        Ok(Staged {
            is_match: any,
            find,
            rfind,
            states: (fwd.len(), rev.len()),
        })
    }
}
