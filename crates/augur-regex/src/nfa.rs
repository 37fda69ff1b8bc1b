//! The automaton the first stage simulates: a Thompson NFA over bytes whose
//! splits are ordered by priority, so that simulating it in order gives the
//! regex crate's leftmost-first matches. Built from regex-syntax's HIR,
//! forward (to find where a match ends) or reversed (to find where it
//! starts, scanning back from its end).

use crate::Error;
use regex_syntax::hir::{Class, Hir, HirKind, Look, Repetition};
use regex_syntax::utf8::Utf8Sequences;

/// A state's index in [`Nfa::states`].
pub(crate) type StateId = u32;

/// The most states an automaton may have: a pattern past it (a counted
/// repetition of a large class, say) is refused with [`Error::TooLarge`].
pub const MAX_NFA_STATES: usize = 1 << 20;

/// One state of the automaton.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum State {
    /// Consumes one byte that lies in one of the ranges.
    Bytes {
        ranges: Vec<(u8, u8)>,
        next: StateId,
    },
    /// Goes on to each, the first preferred.
    Split(Vec<StateId>),
    /// Goes on where the assertion holds.
    Assert(Anchor, StateId),
    /// A match.
    Match,
}

/// What an assertion asks of the position.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Anchor {
    /// The haystack's start (`\A`, and `^` without multi-line mode).
    Start,
    /// The haystack's end (`\z`, and `$` without multi-line mode).
    End,
}

/// A Thompson NFA over bytes.
#[derive(Clone, Debug)]
pub(crate) struct Nfa {
    pub states: Vec<State>,
    /// Where a match attempt starts.
    pub start: StateId,
}

impl Nfa {
    /// The automaton of `hir`; `reverse` reads it right to left.
    pub fn new(hir: &Hir, reverse: bool) -> Result<Nfa, Error> {
        let mut b = Build {
            states: Vec::new(),
            reverse,
        };
        let done = b.push(State::Match)?;
        let start = b.hir(hir, done)?;
        Ok(Nfa {
            states: b.states,
            start,
        })
    }

    /// The same automaton behind the unanchored prefix `(?s-u:.)*?`: a
    /// state that starts a match attempt at every position, preferred after
    /// every attempt started earlier. Returns the prefix's state.
    pub fn unanchored(&mut self) -> StateId {
        let prefix = self.states.len() as StateId;
        let any = prefix + 1;
        self.states.push(State::Split(vec![self.start, any]));
        self.states.push(State::Bytes {
            ranges: vec![(0, 255)],
            next: prefix,
        });
        prefix
    }

    /// The byte classes of the automaton: bytes no range tells apart share
    /// a class. `class[b]` is `b`'s class; classes are numbered in byte
    /// order.
    pub fn byte_classes(&self) -> Vec<u8> {
        let mut cut = [false; 257];
        for s in &self.states {
            if let State::Bytes { ranges, .. } = s {
                for &(lo, hi) in ranges {
                    cut[lo as usize] = true;
                    cut[hi as usize + 1] = true;
                }
            }
        }
        let mut class = vec![0u8; 256];
        let mut c = 0u8;
        for b in 1..256 {
            if cut[b] {
                c += 1;
            }
            class[b] = c;
        }
        class
    }
}

struct Build {
    states: Vec<State>,
    reverse: bool,
}

impl Build {
    fn push(&mut self, s: State) -> Result<StateId, Error> {
        if self.states.len() >= MAX_NFA_STATES {
            return Err(Error::TooLarge {
                what: format!("the automaton passes {MAX_NFA_STATES} states"),
            });
        }
        self.states.push(s);
        Ok(self.states.len() as StateId - 1)
    }

    /// The entry of `h`'s automaton, which goes on to `next` (continuation
    /// passing: sequences are built back to front).
    fn hir(&mut self, h: &Hir, next: StateId) -> Result<StateId, Error> {
        match h.kind() {
            HirKind::Empty => Ok(next),
            HirKind::Literal(lit) => {
                let mut n = next;
                let bytes: Box<dyn Iterator<Item = &u8>> = if self.reverse {
                    Box::new(lit.0.iter())
                } else {
                    Box::new(lit.0.iter().rev())
                };
                for &b in bytes {
                    n = self.push(State::Bytes {
                        ranges: vec![(b, b)],
                        next: n,
                    })?;
                }
                Ok(n)
            }
            HirKind::Class(Class::Bytes(c)) => self.push(State::Bytes {
                ranges: c.ranges().iter().map(|r| (r.start(), r.end())).collect(),
                next,
            }),
            HirKind::Class(Class::Unicode(c)) => {
                let mut alts = Vec::new();
                for r in c.ranges() {
                    for seq in Utf8Sequences::new(r.start(), r.end()) {
                        alts.push(self.sequence(seq.as_slice(), next)?);
                    }
                }
                match alts.len() {
                    1 => Ok(alts[0]),
                    _ => self.push(State::Split(alts)),
                }
            }
            HirKind::Look(look) => match look {
                Look::Start => self.push(State::Assert(Anchor::Start, next)),
                Look::End => self.push(State::Assert(Anchor::End, next)),
                other => Err(Error::Unsupported {
                    what: look_name(*other).into(),
                }),
            },
            HirKind::Repetition(r) => self.repetition(r, next),
            HirKind::Capture(c) => self.hir(&c.sub, next),
            HirKind::Concat(hs) => {
                let mut n = next;
                if self.reverse {
                    for h in hs {
                        n = self.hir(h, n)?;
                    }
                } else {
                    for h in hs.iter().rev() {
                        n = self.hir(h, n)?;
                    }
                }
                Ok(n)
            }
            HirKind::Alternation(hs) => {
                let alts = hs
                    .iter()
                    .map(|h| self.hir(h, next))
                    .collect::<Result<Vec<_>, _>>()?;
                self.push(State::Split(alts))
            }
        }
    }

    /// One UTF-8 sequence of byte ranges, read in the automaton's direction.
    fn sequence(
        &mut self,
        seq: &[regex_syntax::utf8::Utf8Range],
        next: StateId,
    ) -> Result<StateId, Error> {
        let mut n = next;
        let ranges: Vec<_> = if self.reverse {
            seq.iter().collect()
        } else {
            seq.iter().rev().collect()
        };
        for r in ranges {
            n = self.push(State::Bytes {
                ranges: vec![(r.start, r.end)],
                next: n,
            })?;
        }
        Ok(n)
    }

    /// `sub{min,max}` as the regex crate's compiler builds it, so that
    /// preferences between empty iterations come out the same: `min`
    /// copies then `max - min` nested optional ones; unbounded, `min - 1`
    /// copies then `sub+` (one copy that loops back to itself), and for
    /// `min = 0` a loop, or `(sub+)?` where `sub` can match empty.
    fn repetition(&mut self, r: &Repetition, next: StateId) -> Result<StateId, Error> {
        let prefer = |more: StateId, done: StateId| {
            if r.greedy {
                vec![more, done]
            } else {
                vec![done, more]
            }
        };
        let Some(max) = r.max else {
            let lp = self.push(State::Split(Vec::new()))?;
            let body = self.hir(&r.sub, lp)?;
            self.states[lp as usize] = State::Split(prefer(body, next));
            let never_empty = r.sub.properties().minimum_len().is_some_and(|n| n > 0);
            let mut t = match r.min {
                0 if never_empty => return Ok(lp),
                0 => return self.push(State::Split(prefer(body, next))),
                _ => body,
            };
            for _ in 1..r.min {
                t = self.hir(&r.sub, t)?;
            }
            return Ok(t);
        };
        let mut t = next;
        for _ in r.min..max {
            let more = self.hir(&r.sub, t)?;
            t = self.push(State::Split(prefer(more, next)))?;
        }
        for _ in 0..r.min {
            t = self.hir(&r.sub, t)?;
        }
        Ok(t)
    }
}

/// The syntax of an assertion augur-regex does not support.
fn look_name(look: Look) -> &'static str {
    match look {
        Look::StartLF | Look::EndLF | Look::StartCRLF | Look::EndCRLF => {
            "line anchors (`^` and `$` in multi-line mode, `(?m)`)"
        }
        _ => "word boundaries (`\\b`, `\\B`, `\\<`, `\\>`)",
    }
}
