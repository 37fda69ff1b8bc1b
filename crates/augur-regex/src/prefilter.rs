//! What the search can skip before the automaton looks at a byte: a
//! literal every match holds, or one of a few, in a pattern whose matches
//! are of bounded length.
//!
//! If every match holds the literal `w` and is at most `L` bytes long, a
//! search from `i` that has no match in progress finds its next match
//! starting no earlier than `o + |w| - L`, where `o` is the first
//! occurrence of `w` starting at or after `i`: so the scan's restart state
//! jumps there, and with no `w` left the search is over. (The bytes jumped
//! over could only have started threads that never match; leftmost-first
//! priority among the matches that remain is unchanged.) Two ways to find
//! the occurrence:
//!
//! * [`Required`]: one literal with a rare byte. A literal of one byte is
//!   found by the C library's `memchr`; a longer one by that byte together
//!   with its next rarest ([`augur::bytes::find_pair`]: both tested at 16
//!   positions at a time, where `memchr` would stop at every occurrence of
//!   the one), then the literal's other bytes are compared.
//! * [`Pairs`]: every match holds one of a few literals (an alternation
//!   whose branches share no rare byte: `([A-Za-z]awyer|[A-Za-z]inn)\s`),
//!   each found by two adjacent bytes of it. The scan reads the haystack
//!   eight bytes at a time as words and tests every pair in all eight
//!   positions at once (a byte equal to `b` is a zero byte of the word
//!   xor `b` repeated), then looks position by position only in a word
//!   where a pair shows. If the first verified pair lies at `q`, the
//!   literal `k` with its pair at offset `a_k` cannot start before
//!   `q - a_k` (its pair would have shown earlier), so no match starts
//!   before `q + min_k(|w_k| - a_k) - L`.
//!
//! A byte that keeps a state but one is skipped by `memchr` in the state's
//! own code ([`crate::stage`]); this module is for the patterns whose
//! first bytes are many (`[a-q][^u-z]{9}x`: any of 17 bytes, then 9 of
//! 250, then `x`; `\s[a-zA-Z]{0,12}ing\s`: `ing` after any letters).

use regex_syntax::hir::{Class, Hir, HirKind};

/// What the restart state does before it reads a byte (see the module
/// docs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Prefilter {
    /// Jump ahead of one literal's next occurrence, found by `memchr` or
    /// by a pair of its bytes.
    Required(Required),
    /// Jump ahead of the next occurrence of any of a few literals, found
    /// by their pairs, a word at a time.
    Pairs(Pairs),
}

/// Jump to `max_len - lit.len()` bytes before the next occurrence of `lit`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Required {
    /// A literal every match holds.
    pub lit: Vec<u8>,
    /// The index in `lit` of its rarest byte, the one `memchr` looks for.
    pub at: usize,
    /// For a literal of two or more bytes, the index of its next rarest
    /// byte: the search looks for the pair of `lit[at]` and `lit[also]`.
    pub also: Option<usize>,
    /// The longest match, in bytes.
    pub max_len: usize,
}

/// Jump ahead of the first occurrence of any of `lits`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Pairs {
    /// The literals, one of which every match holds, each with the offset
    /// of the two adjacent bytes the scan looks for.
    pub lits: Vec<(Vec<u8>, usize)>,
    /// The longest match, in bytes.
    pub max_len: usize,
}

/// The most literals a [`Pairs`] scan tests: each adds about a dozen
/// operations a word. Measured on the regex bench's text against the
/// automaton's own scan of the restart state, C side by side: five names
/// (`Sherlock|Holmes|..`) take 0.59 of the time, six 0.89, seven 1.32.
pub(crate) const MAX_PAIRS: usize = 5;

/// The least rank sum of a pair worth a scan: below it, pairs of common
/// letters (`th`, `in`, `er`) that show in most words.
const PAIR_RANK: usize = 20;

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

/// The prefilter of `hir`: one literal with a rare byte where there is
/// one, else a few found by their pairs.
pub(crate) fn prefilter(hir: &Hir) -> Option<Prefilter> {
    required(hir)
        .map(Prefilter::Required)
        .or_else(|| pairs(hir).map(Prefilter::Pairs))
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
        .map(|(_, (_, lit, at))| Required {
            also: (0..lit.len())
                .filter(|&k| k != at)
                .max_by_key(|&k| (rank(lit[k]), k)),
            lit,
            at,
            max_len,
        })
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

/// The pair scan of `hir`, if its matches are bounded and every one holds
/// one of at most [`MAX_PAIRS`] literals with a pair rare enough.
pub(crate) fn pairs(hir: &Hir) -> Option<Pairs> {
    let max_len = hir.properties().maximum_len()?;
    let lits = one_of(hir)?;
    if max_len == 0 || lits.len() > MAX_PAIRS || score(&lits)? < PAIR_RANK {
        return None;
    }
    let lits = lits
        .into_iter()
        .map(|lit| {
            let (at, _) = best_pair(&lit).expect("scored");
            (lit, at)
        })
        .collect();
    Some(Pairs { lits, max_len })
}

/// The offset of `lit`'s rarest pair of adjacent bytes and its rank sum
/// (among equals, the last); `None` for a single byte.
fn best_pair(lit: &[u8]) -> Option<(usize, usize)> {
    (0..lit.len().saturating_sub(1))
        .map(|k| (k, rank(lit[k]) + rank(lit[k + 1])))
        .max_by_key(|&(k, r)| (r, k))
}

/// How rare the rarest pairs of a set of literals are: the least of their
/// best pairs' rank sums.
fn score(lits: &[Vec<u8>]) -> Option<usize> {
    lits.iter()
        .map(|l| best_pair(l).map(|(_, r)| r))
        .min()
        .flatten()
}

/// Literals one of which every match of `hir` holds, as few as the
/// pattern allows and with the rarest pairs: a literal's own; of a
/// concatenation, its best part's; of an alternation, one set of each
/// branch together (`None` if a branch has none).
fn one_of(hir: &Hir) -> Option<Vec<Vec<u8>>> {
    match hir.kind() {
        HirKind::Literal(lit) => Some(vec![lit.0.to_vec()]),
        HirKind::Repetition(r) if r.min > 0 => one_of(&r.sub),
        HirKind::Capture(c) => one_of(&c.sub),
        HirKind::Concat(hs) => hs
            .iter()
            .filter_map(one_of)
            .filter(|s| s.len() <= MAX_PAIRS)
            .max_by_key(|s| score(s)),
        HirKind::Alternation(hs) => {
            let mut all: Vec<Vec<u8>> = Vec::new();
            for h in hs {
                for lit in one_of(h)? {
                    if !all.contains(&lit) {
                        all.push(lit);
                    }
                }
            }
            Some(all)
        }
        _ => None,
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
        // The pair's other byte: the next rarest.
        assert_eq!(of("Sherlock").and_then(|r| r.also), Some(0));
        assert_eq!(of(r"\s[a-zA-Z]{0,12}ing\s").and_then(|r| r.also), Some(1));
        assert_eq!(of("[a-q][^u-z]{9}x").and_then(|r| r.also), None);
    }

    fn pair_lits(p: &str) -> Option<Vec<(String, String)>> {
        let hir = regex_syntax::ParserBuilder::new()
            .utf8(false)
            .build()
            .parse(p)
            .unwrap();
        pairs(&hir).map(|ps| {
            ps.lits
                .iter()
                .map(|(l, at)| {
                    let s = |b: &[u8]| String::from_utf8(b.to_vec()).unwrap();
                    (s(l), s(&l[*at..*at + 2]))
                })
                .collect()
        })
    }

    #[test]
    fn an_alternation_of_literals_without_a_shared_rare_byte_has_pairs() {
        let p = r"([A-Za-z]awyer|[A-Za-z]inn)\s";
        assert_eq!(of(p), None);
        assert_eq!(
            pair_lits(p),
            Some(vec![
                ("awyer".into(), "wy".into()),
                ("inn".into(), "nn".into())
            ])
        );
        assert_eq!(
            pairs(
                &regex_syntax::ParserBuilder::new()
                    .utf8(false)
                    .build()
                    .parse(p)
                    .unwrap()
            )
            .map(|ps| ps.max_len),
            Some(9)
        );
        // The best part of a concatenation; a literal once.
        assert_eq!(
            pair_lits("(?:Finn|Tom)(?:Finn|qz)"),
            Some(vec![
                ("Finn".into(), "Fi".into()),
                ("qz".into(), "qz".into())
            ])
        );
        // What a single rare byte serves takes `memchr`; pairs are for the rest.
        assert!(pair_lits("(?:Finn|Tom)").is_some());
        assert!(prefilter(
            &regex_syntax::ParserBuilder::new()
                .utf8(false)
                .build()
                .parse("[ab]xa")
                .unwrap()
        )
        .is_some_and(|p| matches!(p, Prefilter::Required(_))));
    }

    #[test]
    fn unbounded_common_single_or_too_many_literals_give_no_pairs() {
        assert_eq!(pair_lits("(?:awyer|inn)+x*"), None);
        // Pairs of common letters show in most words.
        assert_eq!(pair_lits("(?:the|in)"), None);
        // A branch of one byte has no pair.
        assert_eq!(pair_lits("(?:Finn|q)"), None);
        assert!(pair_lits("(?:Finn|Tom|Sawyer|Huck|Jim)").is_some());
        assert_eq!(pair_lits("(?:Finn|Tom|Sawyer|Huck|Jim|Joe)"), None);
        assert_eq!(pair_lits("(?:Finn|Tom)?"), None);
        assert_eq!(pair_lits("[a-z]{3}"), None);
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
