//! What the search can skip before the automaton looks at a byte: a
//! literal every match holds, in a pattern whose matches are of bounded
//! length.
//!
//! If every match holds the literal `w` and is at most `L` bytes long, a
//! search from `i` that has no match in progress finds its next match
//! starting no earlier than `o + |w| - L`, where `o` is the first
//! occurrence of `w` starting at or after `i`: so the scan's restart state
//! jumps there, and with no `w` left the search is over. (The bytes jumped
//! over could only have started threads that never match; leftmost-first
//! priority among the matches that remain is unchanged.) The occurrence is
//! found by the C library's `memchr` on the literal's least common byte,
//! then the literal's other bytes compared.
//!
//! A byte that keeps a state but one is skipped by `memchr` in the state's
//! own code ([`crate::stage`]); this module is for the patterns whose
//! first bytes are many (`[a-q][^u-z]{9}x`: any of 17 bytes, then 9 of
//! 250, then `x`; `\s[a-zA-Z]{0,12}ing\s`: `ing` after any letters).

use regex_syntax::hir::{Class, Hir, HirKind};

/// Jump to `max_len - lit.len()` bytes before the next occurrence of `lit`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Required {
    /// A literal every match holds.
    pub lit: Vec<u8>,
    /// The index in `lit` of the byte `memchr` looks for.
    pub at: usize,
    /// The longest match, in bytes.
    pub max_len: usize,
}

/// Bytes common in English-like text, the most common first: a jump found
/// by `memchr` on one of them is too short to pay for the call.
const COMMON: &[u8] = b" \n\t,.etaoinshrdlucmwfgypbETAOINSHRDLU0123456789";

/// The rank at which a byte is rare enough for `memchr` on its own; a
/// byte of a literal of two or more bytes may be as common as `RANK_IN_LITERAL`,
/// since the other bytes turn most of its occurrences away cheaply.
const RANK_IN_LITERAL: usize = 16;

/// How rare `b` is: its place in [`COMMON`], or past it.
fn rank(b: u8) -> usize {
    COMMON.iter().position(|&c| c == b).unwrap_or(COMMON.len())
}

/// The prefilter of `hir`, if its matches are bounded and all hold a
/// literal with a byte rare enough to look for.
pub(crate) fn required(hir: &Hir) -> Option<Required> {
    let max_len = hir.properties().maximum_len()?;
    if max_len == 0 {
        return None;
    }
    let usable = |lit: &Vec<u8>| {
        let at = (0..lit.len()).max_by_key(|&k| (rank(lit[k]), k))?;
        let needed = if lit.len() > 1 {
            RANK_IN_LITERAL
        } else {
            COMMON.len()
        };
        (rank(lit[at]) >= needed).then_some(at)
    };
    // The rarest byte wins; among equals, the literal furthest into the
    // match (`held` lists them in order), which leaves the least to scan
    // after the jump.
    held(hir)
        .into_iter()
        .filter_map(|lit| usable(&lit).map(|at| (rank(lit[at]), lit, at)))
        .enumerate()
        .max_by_key(|(k, (r, _, _))| (*r, *k))
        .map(|(_, (_, lit, at))| Required { lit, at, max_len })
}

/// Literals every match of `hir` holds, in the order they appear: those of
/// a concatenation in order; of an alternation, the bytes all its branches
/// hold, one literal each.
fn held(hir: &Hir) -> Vec<Vec<u8>> {
    match hir.kind() {
        HirKind::Literal(lit) => vec![lit.0.to_vec()],
        HirKind::Class(Class::Bytes(c)) => match c.ranges() {
            [r] if r.start() == r.end() => vec![vec![r.start()]],
            _ => Vec::new(),
        },
        HirKind::Class(Class::Unicode(c)) => match c.ranges() {
            [r] if r.start() == r.end() && r.start().is_ascii() => vec![vec![r.start() as u8]],
            _ => Vec::new(),
        },
        HirKind::Repetition(r) if r.min > 0 => held(&r.sub),
        HirKind::Capture(c) => held(&c.sub),
        HirKind::Concat(hs) => hs.iter().flat_map(held).collect(),
        HirKind::Alternation(hs) => {
            let bytes = |h: &Hir| -> Vec<u8> {
                let mut out: Vec<u8> = held(h).concat();
                out.sort_unstable();
                out.dedup();
                out
            };
            let mut it = hs.iter().map(bytes);
            let first = it.next().unwrap_or_default();
            let common = it.fold(first, |acc, h| {
                acc.into_iter().filter(|b| h.contains(b)).collect()
            });
            common.into_iter().map(|b| vec![b]).collect()
        }
        HirKind::Empty | HirKind::Look(_) | HirKind::Repetition(_) => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(p: &str) -> Option<Required> {
        required(
            &regex_syntax::ParserBuilder::new()
                .utf8(false)
                .build()
                .parse(p)
                .unwrap(),
        )
    }

    fn lit(p: &str) -> Option<(String, u8)> {
        of(p).map(|r| (String::from_utf8(r.lit.clone()).unwrap(), r.lit[r.at]))
    }

    #[test]
    fn a_bounded_pattern_with_a_rare_literal_in_every_match_has_one() {
        assert_eq!(lit("[a-q][^u-z]{9}x"), Some(("x".into(), b'x')));
        // In bytes: a negated class over UTF-8 takes up to 4.
        assert_eq!(of("(?-u)[a-q][^u-z]{9}x").map(|r| r.max_len), Some(11));
        assert_eq!(of("[a-q][^u-z]{9}x").map(|r| r.max_len), Some(38));
        // In both branches: the byte, alone.
        assert_eq!(lit("(ax|bx)y?"), Some(("x".into(), b'x')));
        // A literal of common bytes, found by its least common one.
        assert_eq!(lit(r"\s[a-zA-Z]{0,12}ing\s"), Some(("ing".into(), b'g')));
        assert_eq!(lit("Sherlock"), Some(("Sherlock".into(), b'k')));
    }

    #[test]
    fn unbounded_optional_or_common_bytes_give_none() {
        assert_eq!(of("[a-z]+x"), None);
        assert_eq!(of("[a-z]{3}x?"), None);
        assert_eq!(of("ax|b"), None);
        assert_eq!(of("the"), None);
        assert_eq!(of("[a-z]e"), None);
        assert_eq!(of("x*"), None);
        assert_eq!(of(r"\A$"), None);
    }
}
