//! The first stage's view of a search: the automaton's active threads at a
//! position, in priority order (a *set*), and where each byte takes them.
//! Sets are the keys of the staged search's resumable points, so the code
//! generated is the DFA the sets form, each state built once, when the
//! search first reaches it.
//!
//! Leftmost-first is the order: a step follows the threads in priority
//! order, and a thread that reaches the match drops every thread after it
//! (a preferred alternative has matched; what it could still extend is its
//! own business). The unanchored prefix is the last thread, so once a
//! match is under way no later start is tried.

use crate::nfa::{Anchor, Nfa, State, StateId};
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

/// Active threads in priority order: byte-consuming states, assertions
/// still pending, and the match (forward: last, if present).
pub(crate) type Set = Rc<[StateId]>;

/// Which way a search reads the haystack.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Dir {
    /// From a start position to the end: `Anchor::End` is pending until the
    /// end; `Anchor::Start` holds only before the first byte at 0.
    Forward,
    /// From a match's end back to the search's start: `Anchor::Start`
    /// is pending until the scan stops; `Anchor::End` holds only before the
    /// first byte, at the haystack's end.
    Reverse,
}

impl Dir {
    /// The anchor that is decided where the scan begins.
    fn first(self) -> Anchor {
        match self {
            Dir::Forward => Anchor::Start,
            Dir::Reverse => Anchor::End,
        }
    }
}

/// Bytes (as inclusive ranges) and the set they lead to (`None`: no
/// thread left).
pub(crate) type Arm = (Vec<(u8, u8)>, Option<Set>);

/// What a set does at one step: everything the staged code needs.
#[derive(Debug)]
pub(crate) struct Step {
    /// The set holds a match: the scan has matched up to here.
    pub matching: bool,
    /// No thread is left: the scan is over.
    pub dead: bool,
    /// Where the scan stops: whether the pending assertions then lead to
    /// a match, `stop_match[pending holds][first holds]` (the anchor left
    /// pending, and the one decided where the scan began, which can hold
    /// again where it stops only if the region scanned is empty).
    pub stop_match: [[bool; 2]; 2],
    /// Bytes that keep the set as it is.
    pub stay: Vec<(u8, u8)>,
    /// The other bytes (`stay`'s complement), as ranges.
    pub leave: Vec<(u8, u8)>,
    /// The other bytes, grouped by the set they lead to (`None`: no thread
    /// left), largest group last.
    pub arms: Vec<Arm>,
}

/// The sets of one search direction and their steps, computed once each.
pub(crate) struct Sets {
    nfa: Nfa,
    dir: Dir,
    /// Whether a set's order matters: only for the leftmost-first end
    /// (`find`). Where it does not, sets are kept sorted, and sets that
    /// differ only in order are one state.
    ordered: bool,
    /// The runs of bytes of one class each, in byte order (a class may
    /// have several): the first byte of a run stands for all of it.
    runs: Vec<(u8, u8)>,
    steps: RefCell<HashMap<Set, Rc<Step>>>,
    /// The start sets computed, by (state, first anchor holds): every run
    /// of a staged search asks for them again.
    starts: RefCell<HashMap<(StateId, bool), Set>>,
}

impl Sets {
    /// The sets of `nfa`, read in direction `dir`, in priority order (see
    /// [`Sets::unordered`]).
    pub fn new(nfa: Nfa, dir: Dir) -> Sets {
        let class = nfa.byte_classes();
        let mut runs: Vec<(u8, u8)> = Vec::new();
        for b in 0..256usize {
            match runs.last_mut() {
                Some((_, hi)) if class[b] == class[b - 1] => *hi = b as u8,
                _ => runs.push((b as u8, b as u8)),
            }
        }
        Sets {
            nfa,
            dir,
            ordered: true,
            runs,
            steps: RefCell::new(HashMap::new()),
            starts: RefCell::new(HashMap::new()),
        }
    }

    /// The set a scan begins with from `from`, where the anchor decided at
    /// the scan's start holds or not.
    pub fn start(&self, from: StateId, first_holds: bool) -> Set {
        if let Some(s) = self.starts.borrow().get(&(from, first_holds)) {
            return s.clone();
        }
        let s = self.compute_start(from, first_holds);
        self.starts
            .borrow_mut()
            .insert((from, first_holds), s.clone());
        s
    }

    fn compute_start(&self, from: StateId, first_holds: bool) -> Set {
        let first = self.dir.first();
        let mut scratch = Scratch::new(self.nfa.states.len());
        let Scratch { out, seen, stack } = &mut scratch;
        self.closure(
            from,
            &|a| (a == first).then_some(first_holds),
            out,
            seen,
            stack,
        );
        self.finish(std::mem::take(out))
    }

    /// Sets without priority order, for searches that only ask whether a
    /// thread matches: the match test (which stops at the first match it
    /// sees, so the threads a match drops never matter) and the longest
    /// match backward (where no thread is dropped). A set's threads then
    /// go sorted, so orders of one set of threads are one DFA state: for
    /// `Tom.{10,16}river|river.{10,16}Tom` the ordered sets are 59,116.
    pub fn unordered(mut self) -> Sets {
        self.ordered = false;
        self
    }

    /// `out` as a set: sorted where order does not matter.
    fn finish(&self, mut out: Vec<StateId>) -> Set {
        if !self.ordered {
            out.sort_unstable();
        }
        out.into()
    }

    /// The set a scan begins with from `from`, asking `first_holds` only
    /// where the anchor decided at the start makes a difference.
    pub fn start_where(&self, from: StateId, first_holds: impl FnOnce() -> bool) -> Set {
        let (no, yes) = (self.start(from, false), self.start(from, true));
        if no == yes || first_holds() {
            yes
        } else {
            no
        }
    }

    /// Where `set` goes (memoized: a pure function of the set).
    pub fn step(&self, set: &Set) -> Rc<Step> {
        if let Some(s) = self.steps.borrow().get(set) {
            return s.clone();
        }
        let s = Rc::new(self.compute(set));
        self.steps.borrow_mut().insert(set.clone(), s.clone());
        s
    }

    /// How many distinct sets have been stepped.
    pub fn len(&self) -> usize {
        self.steps.borrow().len()
    }

    fn compute(&self, set: &Set) -> Step {
        let matching = set
            .iter()
            .any(|&s| self.nfa.states[s as usize] == State::Match);
        let mut scratch = Scratch::new(self.nfa.states.len());
        let mut at = |p, f| self.ends_in_match(set, p, f, &mut scratch);
        let stop_match = [
            [at(false, false), at(false, true)],
            [at(true, false), at(true, true)],
        ];
        // Where a byte takes the set depends only on which of its threads
        // take the byte (its signature): each signature's set is computed
        // once, and the runs that share it go where it goes.
        let words = set.len().div_ceil(64).max(1);
        let mut sig = vec![0u64; words];
        let mut sigs: Vec<u64> = Vec::new();
        let mut dests: Vec<Dest> = Vec::new();
        // Runs come in byte order, so each list of ranges is built sorted.
        let mut groups: Vec<Arm> = Vec::new();
        let mut stay = Vec::new();
        for &run in &self.runs {
            self.signature(set, run.0, &mut sig);
            let known = sigs.chunks(words).position(|c| c == &sig[..]);
            let dest = match known {
                Some(k) => dests[k],
                None => {
                    let next = self.next(set, &sig, &mut scratch);
                    let dest = if next.as_deref() == Some(&set[..]) {
                        Dest::Stay
                    } else if let Some(g) = groups.iter().position(|g| g.1 == next) {
                        Dest::Group(g)
                    } else {
                        groups.push((Vec::new(), next));
                        Dest::Group(groups.len() - 1)
                    };
                    sigs.extend_from_slice(&sig);
                    dests.push(dest);
                    dest
                }
            };
            match dest {
                Dest::Stay => push_range(&mut stay, run),
                Dest::Group(g) => push_range(&mut groups[g].0, run),
            }
        }
        // The largest group needs no test: it is what is left.
        if let Some(big) = (0..groups.len()).max_by_key(|&i| (size(&groups[i].0), usize::MAX - i)) {
            let g = groups.remove(big);
            groups.push(g);
        }
        Step {
            matching,
            dead: set.is_empty(),
            stop_match,
            leave: complement(&stay),
            stay,
            arms: groups,
        }
    }

    /// Into `sig`, bit `k` for each thread `set[k]` that takes byte `b`.
    fn signature(&self, set: &Set, b: u8, sig: &mut [u64]) {
        sig.fill(0);
        for (k, &s) in set.iter().enumerate() {
            if let State::Bytes { ranges, .. } = &self.nfa.states[s as usize] {
                if ranges.iter().any(|&(lo, hi)| lo <= b && b <= hi) {
                    sig[k / 64] |= 1 << (k % 64);
                }
            }
        }
    }

    /// The set after a byte whose signature is `sig` (`None`: empty).
    fn next(&self, set: &Set, sig: &[u64], scratch: &mut Scratch) -> Option<Set> {
        let first = self.dir.first();
        scratch.clear();
        let Scratch { out, seen, stack } = scratch;
        for (k, &s) in set.iter().enumerate() {
            if sig[k / 64] & (1 << (k % 64)) == 0 {
                continue;
            }
            if let State::Bytes { next, .. } = &self.nfa.states[s as usize] {
                let hit = self.closure(*next, &|a| (a == first).then_some(false), out, seen, stack);
                if hit && self.dir == Dir::Forward {
                    break;
                }
            }
        }
        (!out.is_empty()).then(|| self.finish(std::mem::take(out)))
    }

    /// Whether the scan matches when it stops after `set`, where the
    /// pending anchor holds or not and the first one holds or not.
    fn ends_in_match(
        &self,
        set: &Set,
        pending: bool,
        first_holds: bool,
        scratch: &mut Scratch,
    ) -> bool {
        let first = self.dir.first();
        scratch.clear();
        let Scratch { out, seen, stack } = scratch;
        for &s in set.iter() {
            match &self.nfa.states[s as usize] {
                State::Match => return true,
                State::Assert(_, _) => {
                    let holds = |a: Anchor| Some(if a == first { first_holds } else { pending });
                    if self.closure(s, &holds, out, seen, stack) {
                        return true;
                    }
                }
                _ => {}
            }
        }
        false
    }

    /// Follows the threads from `seed` through splits and assertions into
    /// `out` (in priority order): `holds` says whether an anchor holds
    /// here (`None`: not known yet, the assertion stays in the set).
    /// Returns true where a match was reached (forward, the threads after
    /// it are dropped). `stack` is scratch space.
    fn closure(
        &self,
        seed: StateId,
        holds: &dyn Fn(Anchor) -> Option<bool>,
        out: &mut Vec<StateId>,
        seen: &mut Seen,
        stack: &mut Vec<StateId>,
    ) -> bool {
        stack.clear();
        stack.push(seed);
        let mut matched = false;
        while let Some(s) = stack.pop() {
            if !seen.insert(s) {
                continue;
            }
            match &self.nfa.states[s as usize] {
                State::Bytes { .. } => out.push(s),
                State::Match => {
                    out.push(s);
                    matched = true;
                    // Leftmost-first: what is preferred less is dropped.
                    // Longest (backward): every thread goes on.
                    if self.dir == Dir::Forward {
                        return true;
                    }
                }
                State::Split(alts) => stack.extend(alts.iter().rev()),
                State::Assert(a, next) => match holds(*a) {
                    Some(true) => stack.push(*next),
                    Some(false) => {}
                    None => out.push(s),
                },
            }
        }
        matched
    }
}

/// Where the bytes of one signature take a set.
#[derive(Clone, Copy)]
enum Dest {
    Stay,
    Group(usize),
}

/// The buffers of one set's closures, reused from one to the next.
struct Scratch {
    out: Vec<StateId>,
    seen: Seen,
    stack: Vec<StateId>,
}

impl Scratch {
    fn new(n: usize) -> Scratch {
        Scratch {
            out: Vec::new(),
            seen: Seen::new(n),
            stack: Vec::new(),
        }
    }

    /// Ready for the closures of one more set: nothing seen, nothing out.
    fn clear(&mut self) {
        self.out.clear();
        self.seen.0.fill(0);
    }
}

/// States visited in one closure or step.
struct Seen(Vec<u64>);

impl Seen {
    fn new(n: usize) -> Seen {
        Seen(vec![0; n.div_ceil(64)])
    }

    fn insert(&mut self, s: StateId) -> bool {
        let (w, bit) = (s as usize / 64, 1u64 << (s % 64));
        let fresh = self.0[w] & bit == 0;
        self.0[w] |= bit;
        fresh
    }
}

/// The bytes `ranges` (sorted, disjoint) leave out, as ranges.
fn complement(ranges: &[(u8, u8)]) -> Vec<(u8, u8)> {
    let mut out = Vec::new();
    let mut next = 0u16;
    for &(lo, hi) in ranges {
        if u16::from(lo) > next {
            out.push((next as u8, lo - 1));
        }
        next = u16::from(hi) + 1;
    }
    if next <= 255 {
        out.push((next as u8, 255));
    }
    out
}

/// Adds `run` to the sorted ranges `out`, joined to the last one where
/// they touch.
fn push_range(out: &mut Vec<(u8, u8)>, run: (u8, u8)) {
    match out.last_mut() {
        Some((_, hi)) if u16::from(*hi) + 1 == u16::from(run.0) => *hi = run.1,
        _ => out.push(run),
    }
}

/// How many bytes `ranges` hold.
fn size(ranges: &[(u8, u8)]) -> usize {
    ranges
        .iter()
        .map(|&(lo, hi)| usize::from(hi - lo) + 1)
        .sum()
}
