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
use std::thread::{Scope, ScopedJoinHandle};

/// The stack of a staging thread: as large as a main thread's usually is
/// (extraction recurses through the first stage's code and the IR).
const STAGING_STACK: usize = 64 << 20;

/// A staging started on a thread, or done on this one.
enum Staging<'s, T> {
    Thread(ScopedJoinHandle<'s, augur::Result<T>>),
    Done(augur::Result<T>),
}

/// Runs `f` on a thread of `scope`, named after the calling thread and
/// `what` (dumps and panic messages name it); on this thread if none can
/// start.
fn spawn<'s, 'e, T: Send + 's>(
    scope: &'s Scope<'s, 'e>,
    what: &str,
    f: impl FnOnce() -> augur::Result<T> + Send + 's,
) -> Staging<'s, T> {
    let name = format!("{}.{what}", std::thread::current().name().unwrap_or("main"));
    // The closure comes back if the thread cannot start: it runs here.
    let f = std::sync::Arc::new(std::sync::Mutex::new(Some(f)));
    let given = f.clone();
    let started = std::thread::Builder::new()
        .name(name)
        .stack_size(STAGING_STACK)
        .spawn_scoped(scope, move || {
            let f = given
                .lock()
                .expect("taken once")
                .take()
                .expect("taken once");
            f()
        });
    match started {
        Ok(h) => Staging::Thread(h),
        Err(_) => {
            let f = f.lock().expect("not started").take().expect("not started");
            Staging::Done(f())
        }
    }
}

/// The staging's result; a thread's panic goes on in the caller.
fn join<T>(s: Staging<'_, T>) -> augur::Result<T> {
    match s {
        Staging::Thread(h) => h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)),
        Staging::Done(r) => r,
    }
}

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
    ///
    /// The three functions are extracted side by side, each on a thread of
    /// its own (an extraction's engine is its thread's; none shares state
    /// with another): on a machine with more than one core the matcher is
    /// staged in about the time of its largest function. The code is the
    /// same as one after the other, and so is the error: the first, in the
    /// order `is_match`, `find`, `rfind`.
    pub fn stage(&self, builder: &augur::Builder) -> Result<Staged, Error> {
        let mut fwd = self.forward.clone();
        let prefix = fwd.unanchored();
        let rev_start = self.reverse.start;
        let forward = |name, sets: Rc<Sets>, goal| {
            stage::forward(name, sets, prefix, goal, self.required.clone(), builder)
        };
        std::thread::scope(|scope| {
            // Only the leftmost-first end needs its sets in priority order.
            let any = spawn(scope, "is_match", || {
                let sets = Rc::new(Sets::new(fwd.clone(), Dir::Forward).unordered());
                forward("is_match", sets, stage::Goal::Any)
            });
            let rfind = spawn(scope, "rfind", || {
                let rev = Rc::new(Sets::new(self.reverse.clone(), Dir::Reverse).unordered());
                let rfind = stage::reverse(rev.clone(), rev_start, builder)?;
                Ok((rfind, rev.len()))
            });
            let fwd = Rc::new(Sets::new(fwd.clone(), Dir::Forward));
            let find = forward("find", fwd.clone(), stage::Goal::End);
            let any = join(any);
            let (find, (rfind, rev_states)) = (find?, join(rfind)?);
            let any = any?;
            Ok(Staged {
                is_match: any,
                find,
                rfind,
                states: (fwd.len(), rev_states),
            })
        })
    }
}
