//! The staged searches: first-stage code that walks the automaton's sets
//! over second-stage bytes. Each set is a resumable point
//! ([`augur::resumable`]), so each DFA state's code is recorded once and
//! extraction costs about the states times the bytes' classes, whatever
//! the haystack.
//!
//! Three functions come out, as the regex crate's engines split the work:
//! * `is_match(hay, len, at)`: 1 if a match starts at `at` or later (the
//!   scan stops at the first match it sees), else 0;
//! * `find(hay, len, at)`: where the leftmost-first match starting at `at`
//!   or later ends, or -1;
//! * `rfind(hay, len, at, end)`: where that match starts, by the reversed
//!   automaton read back from `end` (the longest reversed match, which is
//!   the leftmost start).
//!
//! In every state the bytes that keep the state are skipped before
//! anything else: by the C library's `memchr` where a single byte leaves
//! the state (the unanchored start state of a pattern that begins with a
//! literal spends the search there, as a first-byte scan), else by a tight
//! loop testing the ranges that keep it or, where fewer, those that leave
//! it. The restart state of a bounded pattern with a literal in every
//! match (or one of a few) first jumps ahead to it ([`crate::prefilter`]).

use crate::dfa::{Set, Sets, Step};
use crate::nfa::StateId;
use crate::prefilter::{Pairs, Prefilter, Required};
use augur::{Builder, Dyn, Extracted};
use std::rc::Rc;

/// `is_match` and `find`: `(hay, len, at)`.
pub type ForwardFn = unsafe extern "C" fn(*const u8, i64, i64) -> i64;
/// `rfind`: `(hay, len, at, end)`.
pub type ReverseFn = unsafe extern "C" fn(*const u8, i64, i64, i64) -> i64;

/// What a forward scan is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Goal {
    /// Stop at the first match seen.
    Any,
    /// Go on while a match can still grow.
    End,
}

/// The scan's second-stage state.
#[derive(Clone, Copy)]
struct Scan {
    hay: Dyn<*const u8>,
    len: Dyn<i64>,
    /// The position: the next byte forward, just past the next byte back.
    i: Dyn<i64>,
    /// Where the scan stops going back (the search's start).
    bound: Dyn<i64>,
    /// The last position where the scan matched, or -1.
    last: Dyn<i64>,
}

impl Scan {
    /// A scan of `hay[..len]` from `from`, going back no further than
    /// `bound`.
    #[augur::staged]
    fn new(hay: Dyn<*const u8>, len: Dyn<i64>, from: Dyn<i64>, bound: Dyn<i64>) -> Scan {
        Scan {
            hay,
            len,
            i: Dyn::named("i", from),
            bound,
            last: Dyn::named("last", -1i64),
        }
    }
}

/// `b` lies in one of `ranges`.
#[augur::staged]
fn within(b: Dyn<u8>, ranges: &[(u8, u8)]) -> Dyn<bool> {
    let one = |&(lo, hi): &(u8, u8)| match (lo, hi) {
        (lo, hi) if lo == hi => b.eq(lo),
        (0, hi) => b.le(hi),
        (lo, 255) => b.ge(lo),
        // One comparison: `b - lo` wraps below `lo` (u8 arithmetic wraps).
        (lo, hi) => (b - lo).le(hi - lo),
    };
    let mut it = ranges.iter();
    let first = it.next().map(one).unwrap_or_else(|| Dyn::lit(false));
    it.fold(first, |acc, r| acc | one(r))
}

/// The test that a byte keeps the state: on the ranges that keep it, or
/// negated on those that leave it where they are fewer. A test of few
/// ranges is fewer branches, and branches that go the same way on most
/// bytes (the ranges of a scan's start state split text into runs that
/// alternate).
enum Keeps<'a> {
    In(&'a [(u8, u8)]),
    NotIn(&'a [(u8, u8)]),
}

impl Keeps<'_> {
    fn of(st: &Step) -> Keeps<'_> {
        if st.leave.len() < st.stay.len() {
            Keeps::NotIn(&st.leave)
        } else {
            Keeps::In(&st.stay)
        }
    }

    #[augur::staged]
    fn test(&self, b: Dyn<u8>) -> Dyn<bool> {
        match self {
            Keeps::In(r) => within(b, r),
            Keeps::NotIn(r) => !within(b, r),
        }
    }
}

/// The byte that alone leaves a state the others keep (its skip is a
/// `memchr`), if there is one.
fn single_byte_leaves(st: &Step) -> Option<u8> {
    match st.leave[..] {
        [(lo, hi)] if lo == hi && !st.stay.is_empty() => Some(lo),
        _ => None,
    }
}

/// The prefilter's jump (see [`crate::prefilter`]): to `max_len - |lit|`
/// bytes before the next occurrence of the literal, or to the end if there
/// is none.
#[augur::staged]
fn jump_to_required(r: &Required, s: Scan) {
    match r.also {
        Some(also) => jump_by_pair(r, also, s),
        None => jump_by_byte(r, s),
    }
}

/// [`jump_to_required`] for a literal of one byte, found by `memchr`.
#[augur::staged]
fn jump_by_byte(r: &Required, s: Scan) {
    let n = r.lit.len() as i64;
    let at = r.at as i64;
    // Where `memchr` looks from; the occurrence found, or -1.
    let from = Dyn::named("from", s.i + at);
    let found = Dyn::named("found", -1i64);
    while found.lt(0).is_true() && from.lt(s.len).is_true() {
        let rest = (s.len - from).cast::<u64>();
        let p = augur::libc::MEMCHR.call(s.hay.offset(from), i32::from(r.lit[r.at]), rest);
        if p.is_null().is_true() {
            from.set(s.len);
        } else {
            let start = p.offset_from(s.hay) - at;
            from.set(start + at + 1);
            // `start >= s.i` holds: `memchr` looked from `s.i + at`.
            if (start + n).le(s.len).is_true() && same_bytes(&r.lit, r.at, s, start) {
                found.set(start);
            }
        }
    }
    land(s, found, n - r.max_len as i64);
}

/// [`jump_to_required`] for a longer literal, found by the pair of its
/// bytes `at` and `also` ([`augur::bytes::find_pair`]).
#[augur::staged]
fn jump_by_pair(r: &Required, also: usize, s: Scan) {
    let n = r.lit.len() as i64;
    let (first, second) = (r.at.min(also), r.at.max(also));
    let (lead, dist) = (first as i64, (second - first) as i64);
    // Where the search looks from (the pair's first byte); the occurrence
    // found, or -1.
    let from = Dyn::named("from", s.i + lead);
    let found = Dyn::named("found", -1i64);
    while found.lt(0).is_true() && from.lt(s.len).is_true() {
        let (x, y) = (r.lit[first], r.lit[second]);
        let k = augur::bytes::find_pair(s.hay.offset(from), s.len - from, x, y, dist);
        if k.lt(0).is_true() {
            from.set(s.len);
        } else {
            // `start >= s.i` holds: the search looked from `s.i + lead`.
            let start = from + k - lead;
            from.set(start + lead + 1);
            if (start + n).le(s.len).is_true() && same_bytes_but(&r.lit, &[first, second], s, start)
            {
                found.set(start);
            }
        }
    }
    land(s, found, n - r.max_len as i64);
}

/// Ends a prefilter's jump: to `found + by` if that is ahead, or to the end
/// if nothing was found (`found < 0`).
#[augur::staged]
fn land(s: Scan, found: Dyn<i64>, by: i64) {
    if found.lt(0).is_true() {
        s.i.set(s.len);
    } else {
        let jump = found + by;
        if jump.gt(s.i).is_true() {
            s.i.set(jump);
        }
    }
}

/// Whether `hay[start..]` holds `lit`, but for byte `skip` (already seen):
/// a test per byte, each read only once the one before it matched.
#[augur::staged]
fn same_bytes(lit: &[u8], skip: usize, s: Scan, start: Dyn<i64>) -> bool {
    same_bytes_but(lit, &[skip], s, start)
}

/// [`same_bytes`] but for each byte of `seen`.
#[augur::staged]
fn same_bytes_but(lit: &[u8], seen: &[usize], s: Scan, start: Dyn<i64>) -> bool {
    lit.iter()
        .enumerate()
        .filter(|(k, _)| !seen.contains(k))
        .all(|(k, &b)| s.hay.at(start + k as i64).eq(b).is_true())
}

/// The prefilter's jump by pairs (see [`crate::prefilter`]): to
/// `max_len - min_k(|w_k| - a_k)` bytes before the first position `q` where
/// a literal's pair shows and the literal is there, or to the end if there
/// is none.
#[augur::staged]
fn jump_to_pairs(p: &Pairs, s: Scan) {
    let first = p.lits.iter().map(|&(_, a)| a).min().unwrap_or(0) as i64;
    let ahead = p.lits.iter().map(|(l, a)| l.len() - a).min().unwrap_or(0) as i64;
    // The next position a pair may start at; where one was verified, or -1.
    let q = Dyn::named("q", s.i + first);
    let found = Dyn::named("found", -1i64);
    // The haystack's words at `q` and `q + 1` (byte k of each is the byte
    // at `q + k` and `q + 1 + k`, in either byte order).
    let w = Dyn::named("w", 0u64);
    let v = Dyn::named("v", 0u64);
    while found.lt(0).is_true() && (q + 1).lt(s.len).is_true() {
        while (q + 9).le(s.len).is_true() && no_pair_in_words(p, s, q, w, v) {
            q.set(q + 8);
        }
        // Position by position through the word where a pair showed (or
        // the tail, shorter than a word).
        let end = Dyn::named("end", q + 8);
        while found.lt(0).is_true() && q.lt(end).is_true() && (q + 1).lt(s.len).is_true() {
            if literal_at_pair(p, s, q) {
                found.set(q);
            }
            q.set(q + 1);
        }
    }
    land(s, found, ahead - p.max_len as i64);
}

/// Loads the words at `q` and `q + 1` into `w` and `v` (the C library's
/// `memcpy`: any alignment) and tells whether none of the literals' pairs
/// shows in them.
#[augur::staged]
fn no_pair_in_words(p: &Pairs, s: Scan, q: Dyn<i64>, w: Dyn<u64>, v: Dyn<u64>) -> bool {
    augur::libc::MEMCPY.call(w.addr().cast_ptr::<*mut u8>(), s.hay.offset(q), 8u64);
    augur::libc::MEMCPY.call(v.addr().cast_ptr::<*mut u8>(), s.hay.offset(q + 1), 8u64);
    let mut hits = p
        .lits
        .iter()
        .map(|(l, a)| byte_lanes(w, l[*a]) & byte_lanes(v, l[*a + 1]));
    let first = hits.next().unwrap_or_else(|| Dyn::lit(0u64));
    hits.fold(first, |acc, h| acc | h).eq(0u64).is_true()
}

/// Loads the word at `s.i` into `w` and tells whether it holds none of
/// `bytes`.
#[augur::staged]
fn none_in_word(bytes: &[u8], s: Scan, w: Dyn<u64>) -> bool {
    augur::libc::MEMCPY.call(w.addr().cast_ptr::<*mut u8>(), s.hay.offset(s.i), 8u64);
    let mut hits = bytes.iter().map(|&b| byte_lanes(w, b));
    let first = hits.next().unwrap_or_else(|| Dyn::lit(0u64));
    hits.fold(first, |acc, h| acc | h).eq(0u64).is_true()
}

/// The word with the high bit of each byte set where `x`'s byte is `b`,
/// and no other bit: a zero byte of `x ^ b...b` is one whose low seven
/// bits plus `0x7f` leave the high bit clear, and whose own high bit is
/// clear (no carry crosses a byte: each sum is at most `0xfe`).
#[augur::staged]
fn byte_lanes(x: Dyn<u64>, b: u8) -> Dyn<u64> {
    const LOW: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    let t = x ^ (u64::from(b) * 0x0101_0101_0101_0101);
    !(((t & LOW) + LOW) | t | LOW)
}

/// Whether one of the literals has its pair at `q` and lies all in the
/// haystack there.
#[augur::staged]
fn literal_at_pair(p: &Pairs, s: Scan, q: Dyn<i64>) -> bool {
    p.lits.iter().any(|(lit, a)| {
        let start = q - *a as i64;
        s.hay.at(q).eq(lit[*a]).is_true()
            && s.hay.at(q + 1).eq(lit[*a + 1]).is_true()
            && start.ge(0).is_true()
            && (start + lit.len() as i64).le(s.len).is_true()
            && same_bytes(lit, *a, s, start)
    })
}

/// The bytes that leave a state the others keep, where they are two to
/// [`MAX_WORD_LANES`] (the restart state's skip tests them a word at
/// a time).
fn few_bytes_leave(st: &Step) -> Option<Vec<u8>> {
    let count: usize = st
        .leave
        .iter()
        .map(|&(lo, hi)| usize::from(hi - lo) + 1)
        .sum();
    ((2..=MAX_WORD_LANES).contains(&count) && !st.stay.is_empty())
        .then(|| st.leave.iter().flat_map(|&(lo, hi)| lo..=hi).collect())
}

/// The most bytes a word skip tests: each adds about six operations a word
/// of eight bytes.
const MAX_WORD_LANES: usize = 3;

/// Moves the scan forward past the bytes that keep the state. Where a
/// single byte leaves it, the C library's `memchr` finds that byte (a
/// literal's first byte in a search's start state: the prefilter); where
/// a few do and `words` is set (the restart state, where a search spends
/// its time), whole words of eight bytes that hold none of them are
/// skipped first; otherwise a loop tests each byte.
#[augur::staged]
fn skip_forward(st: &Step, s: Scan, words: bool) {
    if let Some(bytes) = few_bytes_leave(st).filter(|_| words) {
        let w = Dyn::named("w", 0u64);
        while (s.i + 8).le(s.len).is_true() && none_in_word(&bytes, s, w) {
            s.i.set(s.i + 8);
        }
    }
    if let Some(c) = single_byte_leaves(st) {
        if s.i.lt(s.len).is_true() {
            let rest = (s.len - s.i).cast::<u64>();
            let p = augur::libc::MEMCHR.call(s.hay.offset(s.i), i32::from(c), rest);
            if p.is_null().is_true() {
                s.i.set(s.len);
            } else {
                s.i.set(p.offset_from(s.hay));
            }
        }
    } else {
        let keeps = Keeps::of(st);
        while s.i.lt(s.len).is_true() && keeps.test(s.hay.at(s.i)).is_true() {
            s.i.set(s.i + 1);
        }
    }
}

/// Where a forward state's code is: in the restart state (where the
/// prefilter jumps and the skip goes a word at a time) or elsewhere.
#[derive(Clone, Copy)]
struct At<'a> {
    restart: bool,
    prefilter: Option<&'a Prefilter>,
}

/// One state's code, forward: the next set, or `None` when the scan is
/// over.
#[augur::staged]
fn forward_state(st: &Step, set: &Set, s: Scan, goal: Goal, at: At) -> Option<Set> {
    if st.matching {
        s.last.set(s.i);
        if goal == Goal::Any {
            return None;
        }
    }
    if st.dead {
        return None;
    }
    // Where a single byte leaves the restart state, its skip's `memchr`
    // stops at each occurrence of that byte: a literal's pair shows far
    // less often.
    let jump = at.prefilter.filter(|p| {
        at.restart
            && (single_byte_leaves(st).is_none()
                || matches!(p, Prefilter::Required(r) if r.also.is_some()))
    });
    match jump {
        Some(Prefilter::Required(r)) => jump_to_required(r, s),
        Some(Prefilter::Pairs(p)) => jump_to_pairs(p, s),
        None => {}
    }
    if !st.stay.is_empty() {
        skip_forward(st, s, at.restart);
        // Each byte skipped in a matching state matched too.
        if st.matching {
            s.last.set(s.i);
        }
    }
    if s.i.ge(s.len).is_true() {
        // `\z` holds here; `\A` too if the haystack is empty.
        if stop_matches(st, || true, || s.len.eq(0).is_true()) {
            s.last.set(s.len);
        }
        return None;
    }
    let b = s.hay.at(s.i);
    s.i.set(s.i + 1);
    arms(st, set, b)
}

/// One state's code, backward.
#[augur::staged]
fn reverse_state(st: &Step, set: &Set, s: Scan) -> Option<Set> {
    if st.matching {
        s.last.set(s.i);
    }
    if st.dead {
        return None;
    }
    if !st.stay.is_empty() {
        let keeps = Keeps::of(st);
        while s.i.gt(s.bound).is_true() && keeps.test(s.hay.at(s.i - 1)).is_true() {
            s.i.set(s.i - 1);
        }
        if st.matching {
            s.last.set(s.i);
        }
    }
    if s.i.le(s.bound).is_true() {
        // `\A` holds here if the search started at 0; `\z` too if it
        // started at the end.
        if stop_matches(
            st,
            || s.bound.eq(0).is_true(),
            || s.bound.eq(s.len).is_true(),
        ) {
            s.last.set(s.bound);
        }
        return None;
    }
    let b = s.hay.at(s.i - 1);
    s.i.set(s.i - 1);
    arms(st, set, b)
}

/// Whether the scan matches where it stops: asks whether the pending
/// anchor holds, and the first, only where the answer depends on it.
#[augur::staged]
fn stop_matches(st: &Step, pending: impl FnOnce() -> bool, first: impl FnOnce() -> bool) -> bool {
    let t = st.stop_match;
    let p = t[0] != t[1] && pending();
    let row = t[usize::from(p)];
    let f = row[0] != row[1] && first();
    row[usize::from(f)]
}

/// The set byte `b` leads to: a test per group of bytes, the largest last
/// and untested.
#[augur::staged]
fn arms(st: &Step, set: &Set, b: Dyn<u8>) -> Option<Set> {
    let n = st.arms.len();
    for (k, (bytes, next)) in st.arms.iter().enumerate() {
        if k + 1 == n || within(b, bytes).is_true() {
            return next.clone();
        }
    }
    // Every byte keeps the state: the skip loop ran to the end, so this is
    // never reached, but a point must name where it goes.
    Some(set.clone())
}

/// Stages the forward search of `sets` from state `from`.
#[augur::staged]
pub(crate) fn forward(
    name: &str,
    sets: Rc<Sets>,
    from: StateId,
    goal: Goal,
    prefilter: Option<Prefilter>,
    builder: &Builder,
) -> augur::Result<Extracted<ForwardFn>> {
    builder.extract(
        name,
        move |hay: Dyn<*const u8>, len: Dyn<i64>, at: Dyn<i64>| {
            let s = Scan::new(hay, len, at, at);
            let start = sets.start_where(from, || at.eq(0).is_true());
            // The set the scan is in with no match in progress, where the
            // prefilter may jump and the skip reads words.
            let restart = sets.start(from, false);
            augur::resumable(start, |set: Set| {
                let st = sets.step(&set);
                let at = At {
                    restart: set == restart,
                    prefilter: prefilter.as_ref(),
                };
                forward_state(&st, &set, s, goal, at)
            });
            if goal == Goal::Any {
                s.last.ge(0).cast::<i64>()
            } else {
                s.last
            }
        },
    )
}

/// Stages the backward search of `sets` (a reversed automaton).
#[augur::staged]
pub(crate) fn reverse(
    sets: Rc<Sets>,
    from: StateId,
    builder: &Builder,
) -> augur::Result<Extracted<ReverseFn>> {
    builder.extract(
        "rfind",
        move |hay: Dyn<*const u8>, len: Dyn<i64>, at: Dyn<i64>, end: Dyn<i64>| {
            let s = Scan::new(hay, len, end, at);
            let start = sets.start_where(from, || end.eq(len).is_true());
            augur::resumable(start, |set: Set| {
                let st = sets.step(&set);
                reverse_state(&st, &set, s)
            });
            s.last
        },
    )
}
