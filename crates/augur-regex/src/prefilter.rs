//! What the search can skip before the automaton looks at a byte: a rare
//! byte every match holds, in a pattern whose matches are of bounded
//! length.
//!
//! If every match holds byte `c` and is at most `L` bytes long, a search
//! from `i` that has no match in progress finds its next match starting
//! no earlier than `q + 1 - L`, where `q` is the first `c` at or after
//! `i`: so the scan's restart state jumps there, finding `q` with the C
//! library's `memchr`, and with no `c` left the search is over. (The
//! bytes jumped over could only have started threads that never match;
//! leftmost-first priority among the matches that remain is unchanged.)
//!
//! A byte that keeps a state but one is skipped by `memchr` in the state's
//! own code ([`crate::stage`]); this module is for the patterns whose
//! first bytes are many (`[a-q][^u-z]{9}x`: any of 17 bytes, then 9 of
//! 250, then `x`).

use regex_syntax::hir::{Class, Hir, HirKind};

/// Jump to `max_len - 1` bytes before the next `byte`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Required {
    /// A byte every match holds.
    pub byte: u8,
    /// The longest match, in bytes.
    pub max_len: usize,
}

/// Bytes common in text: a jump to one of them would be too short to pay
/// for the call that finds it.
const COMMON: &[u8] = b" \n\t,.etaoinshrdlucmwfgypbETAOINSHRDLU0123456789";

/// The prefilter of `hir`, if its matches are bounded and all hold a byte
/// that is not common in text.
pub(crate) fn required(hir: &Hir) -> Option<Required> {
    let max_len = hir.properties().maximum_len()?;
    let mut bytes = held(hir);
    bytes.retain(|b| !COMMON.contains(b));
    // The byte furthest into the match leaves the least to scan after the
    // jump; `held` lists them in order.
    let byte = *bytes.last()?;
    (max_len > 0).then_some(Required { byte, max_len })
}

/// Bytes every match of `hir` holds, in the order they appear (those of a
/// concatenation in order; an alternation's in all its branches).
fn held(hir: &Hir) -> Vec<u8> {
    match hir.kind() {
        HirKind::Literal(lit) => {
            let mut out: Vec<u8> = Vec::new();
            for &b in lit.0.iter() {
                if !out.contains(&b) {
                    out.push(b);
                }
            }
            out
        }
        HirKind::Class(Class::Bytes(c)) => match c.ranges() {
            [r] if r.start() == r.end() => vec![r.start()],
            _ => Vec::new(),
        },
        HirKind::Class(Class::Unicode(c)) => match c.ranges() {
            [r] if r.start() == r.end() && r.start().is_ascii() => vec![r.start() as u8],
            _ => Vec::new(),
        },
        HirKind::Repetition(r) if r.min > 0 => held(&r.sub),
        HirKind::Capture(c) => held(&c.sub),
        HirKind::Concat(hs) => {
            let mut out = Vec::new();
            for b in hs.iter().flat_map(held) {
                if !out.contains(&b) {
                    out.push(b);
                }
            }
            out
        }
        HirKind::Alternation(hs) => {
            let mut it = hs.iter().map(held);
            let first = it.next().unwrap_or_default();
            it.fold(first, |acc, h| {
                acc.into_iter().filter(|b| h.contains(b)).collect()
            })
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

    #[test]
    fn a_bounded_pattern_with_a_rare_byte_in_every_match_has_one() {
        assert_eq!(of("[a-q][^u-z]{9}x").map(|r| r.byte), Some(b'x'));
        // In bytes: a negated class over UTF-8 takes up to 4.
        assert_eq!(of("(?-u)[a-q][^u-z]{9}x").map(|r| r.max_len), Some(11));
        assert_eq!(of("[a-q][^u-z]{9}x").map(|r| r.max_len), Some(38));
        // In both branches: the later of the rare ones.
        assert_eq!(of("(ax|bx)y?").map(|r| r.byte), Some(b'x'));
        assert_eq!(of("Sherlock").map(|r| r.byte), Some(b'k'));
    }

    #[test]
    fn unbounded_optional_or_common_bytes_give_none() {
        assert_eq!(of("[a-z]+x"), None);
        assert_eq!(of("[a-z]{3}x?"), None);
        assert_eq!(of("ax|b"), None);
        assert_eq!(of("the"), None);
        assert_eq!(of("x*"), None);
        assert_eq!(of(r"\A$"), None);
    }
}
