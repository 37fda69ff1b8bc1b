//! The staged searches and, compiled, the matcher that drives them: match
//! tests, the leftmost-first match, and iteration as the regex crate
//! iterates (an empty match right where the previous match ended is
//! skipped).

use crate::stage::{ForwardFn, ReverseFn};
use crate::Error;
use augur::exec::CompileOptions;
use augur::{Compiled, Extracted};

/// The three staged functions of a pattern (see the `stage` module's
/// docs for what each computes).
pub struct Staged {
    /// `is_match(hay, len, at)`: 1 if a match starts at `at` or later.
    pub is_match: Extracted<ForwardFn>,
    /// `find(hay, len, at)`: the end of the leftmost-first match starting
    /// at `at` or later, or -1.
    pub find: Extracted<ForwardFn>,
    /// `rfind(hay, len, at, end)`: the start of that match.
    pub rfind: Extracted<ReverseFn>,
    /// DFA states built, forward and backward.
    pub states: (usize, usize),
}

/// DFA states past which C is compiled at `-O1` (see [`Staged::compile`]).
pub const LARGE_DFA: usize = 256;

impl Staged {
    /// Compiles the three functions. A matcher of more than [`LARGE_DFA`]
    /// states is compiled at `-O1` where `opts` ask for `-O2`: gcc's time
    /// at `-O2` grows faster than the code on one function of thousands of
    /// labels (1,037 states: 17.8 s at `-O2`, 2.1 s at `-O1`), and the DFA's
    /// code searches as fast within 10% (`augur bench regex`).
    pub fn compile(&self, opts: &CompileOptions) -> Result<Matcher, Error> {
        let mut opts = opts.clone();
        if self.states.0 + self.states.1 > LARGE_DFA {
            for f in opts.flags.iter_mut().filter(|f| *f == "-O2") {
                *f = "-O1".into();
            }
        }
        Ok(Matcher {
            is_match: self.is_match.compile_with(&opts)?,
            find: self.find.compile_with(&opts)?,
            rfind: self.rfind.compile_with(&opts)?,
        })
    }

    /// The C code of the three functions.
    pub fn c_code(&self) -> String {
        [
            self.is_match.c_code(),
            self.find.c_code(),
            self.rfind.c_code(),
        ]
        .join("\n")
    }
}

/// A compiled pattern.
pub struct Matcher {
    is_match: Compiled<ForwardFn>,
    find: Compiled<ForwardFn>,
    rfind: Compiled<ReverseFn>,
}

impl Matcher {
    /// Whether `hay` holds a match.
    pub fn is_match(&self, hay: &[u8]) -> bool {
        // SAFETY: the staged code reads `hay[i]` only for `0 <= i < len`.
        unsafe { self.is_match.get()(hay.as_ptr(), hay.len() as i64, 0) != 0 }
    }

    /// The leftmost-first match, as `(start, end)`.
    pub fn find(&self, hay: &[u8]) -> Option<(usize, usize)> {
        self.find_at(hay, 0)
    }

    /// The leftmost-first match that starts at `at` or later.
    pub fn find_at(&self, hay: &[u8], at: usize) -> Option<(usize, usize)> {
        if at > hay.len() {
            return None;
        }
        let (p, n) = (hay.as_ptr(), hay.len() as i64);
        // SAFETY: as in `is_match`; `at <= len`, and `rfind` reads back
        // from `end <= len` no further than `at`.
        let end = unsafe { self.find.get()(p, n, at as i64) };
        if end < 0 {
            return None;
        }
        // SAFETY: as above.
        let start = unsafe { self.rfind.get()(p, n, at as i64, end) };
        debug_assert!(start >= at as i64 && start <= end, "rfind found no start");
        Some((start as usize, end as usize))
    }

    /// The successive matches of `hay`.
    pub fn find_iter<'m, 'h>(&'m self, hay: &'h [u8]) -> Matches<'m, 'h> {
        Matches {
            m: self,
            hay,
            at: 0,
            last_end: None,
        }
    }

    /// How many matches `find_iter` gives.
    pub fn count(&self, hay: &[u8]) -> usize {
        self.find_iter(hay).count()
    }
}

/// The iterator of [`Matcher::find_iter`].
pub struct Matches<'m, 'h> {
    m: &'m Matcher,
    hay: &'h [u8],
    at: usize,
    last_end: Option<usize>,
}

impl Iterator for Matches<'_, '_> {
    type Item = (usize, usize);

    fn next(&mut self) -> Option<(usize, usize)> {
        loop {
            let (s, e) = self.m.find_at(self.hay, self.at)?;
            if s == e && Some(e) == self.last_end {
                // An empty match where the previous one ended: the regex
                // crate looks again one byte on.
                self.at = e + 1;
                continue;
            }
            self.last_end = Some(e);
            self.at = e;
            return Some((s, e));
        }
    }
}
