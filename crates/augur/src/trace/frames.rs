//! Which code `#[augur::staged]` covers, and whether the engine can see
//! the plain Rust state at a program point (a leaf).
//!
//! Tags see the call path, `Static`s and the locals the attribute tracks.
//! Plain Rust state in code the attribute does not cover (a loop counter, a
//! flag) is invisible, so two points with one tag may still differ there.
//! Sharing code between them (closing a loop, linking to code another run
//! recorded) is exact only where every frame that is live at the point is
//! covered. The engine knows which are:
//!
//! * every function body the attribute rewrites is an *activation* that
//!   registers its source *region* and the location of its caller (the
//!   attribute makes the function `#[track_caller]`, so the location is
//!   lexical: inlining cannot hide a frame); a closure body inside it is an
//!   activation of its own region;
//! * an activation is *covered* when its caller lies in the region of a
//!   live covered activation, or when it is the run's first activation,
//!   entered before any decision (the closure handed to `extract`, or a
//!   function handed there);
//! * a closure's caller is unknown (so is a function's called through a
//!   `fn` pointer, and the functions a macro's expansion calls): whatever
//!   code calls it, it runs with the state of the activation it is entered
//!   under, and it is *counted*. The code between that activation and the
//!   call (an iterator adapter, an unannotated helper, a macro's expansion)
//!   may call it repeatedly from a loop the engine cannot see, so each call
//!   is a program point of its own until that activation's own code runs
//!   again ([`Counts`]): its tags carry how many calls came before, the
//!   state when the first began, and what the earlier ones returned;
//! * a point is *seen through* when the innermost activation is covered
//!   and the operation's location lies in the region of a live activation.
//!
//! Anything else is [`Hidden`], and by default the engine neither closes a
//! loop nor links there: it unrolls exactly, and a loop that never ends
//! stops with `Error::Unannotated`, naming the line to annotate.
//!
//! Entering costs a push: coverage is settled only where the engine asks
//! (a loop closing, a link), from the activations below, which are the ones
//! that were live when the activation began.
//!
//! What the rule cannot see, and the documentation lists: an uncovered
//! `#[track_caller]` function reports its caller's lines, so its code is
//! taken as its caller's.

use crate::ir::SrcLoc;
use crate::trace::tag::mix;

/// A span of source code: a function or closure body the attribute
/// rewrote. The attribute writes one `static` per body.
#[derive(Debug)]
pub struct Region {
    file: &'static str,
    start: (u32, u32),
    end: (u32, u32),
    /// Where the attribute that rewrote a function stands (`(0, 0)` for a
    /// closure): called through a `fn` pointer, a `#[track_caller]`
    /// function gets its own definition as its caller, which for code an
    /// attribute wrote is the attribute.
    head: (u32, u32),
}

impl Region {
    /// The body from `(line, column)` to `(end_line, end_column)` of `file`.
    pub const fn new(
        file: &'static str,
        line: u32,
        col: u32,
        end_line: u32,
        end_col: u32,
    ) -> Region {
        Region {
            file,
            start: (line, col),
            end: (end_line, end_col),
            head: (0, 0),
        }
    }

    /// A function's body, rewritten by the attribute at `(line, col)`.
    pub const fn function(self, line: u32, col: u32) -> Region {
        Region {
            head: (line, col),
            ..self
        }
    }

    /// True if `caller` is this function's own definition: it was called
    /// through a `fn` pointer, from a line no one can know.
    fn is_own_definition(&self, caller: SrcLoc) -> bool {
        self.head != (0, 0)
            && (caller.line, caller.col) == self.head
            && (std::ptr::eq(self.file, caller.file) || self.file == caller.file)
    }

    /// True if `loc` lies inside this body.
    pub fn contains(&self, loc: SrcLoc) -> bool {
        let at = (loc.line, loc.col);
        self.start <= at
            && at <= self.end
            && (std::ptr::eq(self.file, loc.file) || self.file == loc.file)
    }

    /// The body's first line.
    pub fn at(&self) -> SrcLoc {
        SrcLoc {
            file: self.file,
            line: self.start.0,
            col: self.start.1,
        }
    }
}

/// Why the engine cannot see the plain Rust state at a point.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hidden {
    /// No `#[augur::staged]` code is running: the closure handed to
    /// `extract` is not covered.
    NoActivation,
    /// The function whose body starts at `body` was called from `caller`,
    /// which no live covered body contains.
    CalledFrom {
        /// The called function's body.
        body: SrcLoc,
        /// The uncovered call site.
        caller: SrcLoc,
    },
    /// A covered body was entered after the run's covered code had returned
    /// (or after a decision): uncovered code called it.
    Reentered {
        /// The body entered.
        body: SrcLoc,
    },
    /// The operation at this location is outside every live covered body.
    Outside(SrcLoc),
    /// A `let` at this location changed a tracked local and may hold a
    /// `&mut` borrow of it, so its value is unknown until the local is
    /// named again.
    Borrowed(SrcLoc),
    /// Code a macro expanded at this location: the attribute cannot
    /// rewrite it, so its plain state is out of view.
    Macro(SrcLoc),
    /// The `let mut` at this location holds a value of a type the
    /// attribute cannot hash, and something changed it.
    Opaque(SrcLoc),
    /// A panic began at this location and the run went on: code inside
    /// the first stage caught it. A function body it left ends its
    /// activation only when its caller's does (see `Frame::finish`), so
    /// the activations live until then are not known.
    Panicked(SrcLoc),
}

impl Hidden {
    /// The line a user annotates to fix it, and what to write there.
    pub fn fix(&self) -> String {
        const VISIBLE: &str = " (its plain loops and mutable locals then become visible)";
        match *self {
            Hidden::NoActivation => {
                "write the closure handed to extract inside a function \
                 with #[augur::staged] (or hand extract a #[augur::staged] function)"
                    .to_string()
                    + VISIBLE
            }
            Hidden::CalledFrom { body, caller } => format!(
                "the function at {body} is called from {caller}, which #[augur::staged] does \
                 not cover: put #[augur::staged] on the function that contains {caller}{VISIBLE}"
            ),
            Hidden::Reentered { body } => format!(
                "the function at {body} is called by code #[augur::staged] does not cover \
                 (the closure handed to extract?): put #[augur::staged] on the function that \
                 holds that code{VISIBLE}"
            ),
            Hidden::Borrowed(at) => format!(
                "the `let` at {at} changed a tracked local and may hold a `&mut` borrow of it, \
                 so its value is unknown until the block names the local again: end the \
                 borrow before dyn decisions (name the local, or bind the borrow in a block \
                 of its own)"
            ),
            Hidden::Opaque(at) => format!(
                "the `let mut` at {at} holds a value of a type augur cannot hash, and it \
                 changed, so paths that changed it differently cannot share code: derive \
                 `Hash` for its type (`HashMap` and `HashSet` are not `Hash`; `BTreeMap` and \
                 `BTreeSet` are), or (for a DSL's state, whose fields that decide code are \
                 `Static`s or `dsl::Seen`s) implement `augur::dsl::Visible` for it"
            ),
            Hidden::Panicked(at) => format!(
                "the panic at {at} was caught inside the first stage, so the engine cannot \
                 tell which staged functions it left and shares no code for the rest of that \
                 run: let the panic end the extraction, or catch it outside the closure handed \
                 to extract"
            ),
            Hidden::Macro(at) => format!(
                "the macro at {at} expands to code #[augur::staged] cannot rewrite: write what \
                 it does as a function with #[augur::staged], or as plain code in the body"
            ),
            Hidden::Outside(at) => format!(
                "{at} is in code #[augur::staged] does not cover: put #[augur::staged] on the \
                 function that contains it{VISIBLE}"
            ),
        }
    }
}

/// How an activation was entered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Entry {
    /// The run's first activation.
    Root,
    /// The run's first activation, entered after the run's covered code
    /// had returned or after a decision: not covered.
    LateRoot,
    /// A function called from [`Activation::caller`].
    Caller,
    /// A closure, or a function called through a `fn` pointer or from a
    /// macro's expansion: whoever called it is unknown, so its calls are
    /// counted (see [`Counts`]).
    Counted,
    /// Code a macro the attribute cannot rewrite expanded (not covered).
    Macro,
}

/// What an activation's own code knows of the closures it hands out: the
/// calls of counted activations entered directly under it since its own
/// code last performed an operation. Between two such calls only other
/// code ran (an iterator adapter, an unannotated helper, a macro's
/// expansion, or nothing), whose state the engine cannot see. That state
/// follows from what it was handed (the tags when the first call began),
/// how many calls it made, and what they returned; so those three are part
/// of every tag inside the calls. A returned value is hashed where the
/// attribute can take it (`()` and `Dyn` give nothing to decide on; a
/// primitive, an `Option` of one, a `ControlFlow`, a pair of integers, a
/// string hash their value, see `stage::staged::value`); any other is
/// stood for by the decisions its call took, which determine it.
#[derive(Clone, Copy, Debug, Default)]
struct Counts {
    calls: u32,
    /// The tag state when the first of the calls began.
    base: u64,
    /// What each call returned, folded.
    returns: u64,
}

/// One activation: a covered body running now.
#[derive(Clone, Copy, Debug)]
struct Activation {
    region: &'static Region,
    entry: Entry,
    /// Where it was called from (for [`Entry::Caller`]).
    caller: SrcLoc,
    /// Why its own code is not covered, as `1 +` an index into
    /// [`Frames::hidden`] (`0`: covered), once [`Frames::settle`] has
    /// computed it (a macro's is set at entry).
    hidden: u32,
    /// What the activations entered under it inherit: its `hidden`, but for
    /// a macro's, whose callees are counted instead.
    inherit: u32,
    /// What this activation and those under it add to tags: the counts of
    /// the counted calls among them.
    salt: u64,
    counts: Counts,
    /// As a counted activation: the decisions taken since it began.
    trail: u64,
    /// `1 +` the depth of the innermost counted activation at or below
    /// this one (`0`: none).
    counted: u32,
    /// `1 +` the depth of the activation whose decisions this one's are:
    /// its own, or for a counted body (a closure) or a macro, its
    /// caller's owner's. What a closure decides decides what the function
    /// that called it returns and what a `let` around the call binds, as
    /// the function's own decisions do.
    owner: u32,
}

/// A decision, or a value a call returned after deciding, as a `let` in
/// the code around it sees it (see [`Frames::sides_since`]).
#[derive(Clone, Copy, Debug)]
struct Side {
    /// The branch's program point and state, or the value's hash.
    key: u64,
    /// The side taken (`false` for a value).
    taken: bool,
    /// The owner (see [`Activation::owner`]) of the activation that took
    /// it.
    owner: u32,
    /// The thread's decision count when it was taken.
    ord: u32,
}

/// A value an activation's code handed to a call, or matched, after
/// deciding to compute it: first-stage state while the call (the `match`)
/// runs (see `stage::staged::arg`).
#[derive(Clone, Copy, Debug)]
struct Held {
    /// The depth of the activation whose code holds it.
    depth: u32,
    /// The thread's decision count when its evaluation began.
    mark: u32,
    /// Its engine slot.
    slot: u32,
}

/// The live activations of a run, innermost last.
#[derive(Debug, Default)]
pub(super) struct Frames {
    stack: Vec<Activation>,
    /// The reasons activations are not covered (see `Activation::hidden`).
    hidden: Vec<Hidden>,
    /// How many activations, from the bottom, have their `hidden` settled.
    /// Entering is cheap this way: coverage is computed only where the
    /// engine asks (a loop closing, a link), from the activations below,
    /// which are the ones live when it was entered.
    settled: usize,
    /// The run's first activation was entered.
    rooted: bool,
    /// Why tracked locals cannot be read now, in order: borrowed through
    /// a `let` (see `Tracked::poison`), or of a type the attribute cannot
    /// hash and changed; each with the depth of the activation whose local
    /// it is (`0`: for the rest of the run).
    poisoned: Vec<(u32, Hidden)>,
    /// The engine slots of the live tracked locals, each with the depth of
    /// the activation whose local it is, in order (so by depth): a local's
    /// block ends it, and an activation that ends (by `return`, `?`, a
    /// caught panic) ends those its blocks did not.
    tracked: Vec<(u32, u32)>,
    /// What the run decided, in order (see [`Frames::sides_since`]).
    sides: Vec<Side>,
    /// The values held now, in order.
    held: Vec<Held>,
}

/// As derived, but `clone_from` keeps this value's buffers: a chained
/// run restores the frames of its machine's entry into the run's own
/// (`chain.rs`) once per run, and a fresh clone's vectors, exactly as long
/// as their contents, grew again at the run's first activation and first
/// decision.
impl Clone for Frames {
    fn clone(&self) -> Frames {
        let mut f = Frames::default();
        f.clone_from(self);
        f
    }

    fn clone_from(&mut self, from: &Frames) {
        let Frames {
            stack,
            hidden,
            settled,
            rooted,
            poisoned,
            tracked,
            sides,
            held,
        } = from;
        self.stack.clone_from(stack);
        self.hidden.clone_from(hidden);
        self.settled = *settled;
        self.rooted = *rooted;
        self.poisoned.clone_from(poisoned);
        self.tracked.clone_from(tracked);
        self.sides.clone_from(sides);
        self.held.clone_from(held);
    }
}

const NOWHERE_LOC: SrcLoc = SrcLoc {
    file: "",
    line: 0,
    col: 0,
};

impl Frames {
    /// Forgets the previous run's activations.
    pub(super) fn reset(&mut self) {
        self.stack.clear();
        self.hidden.clear();
        self.settled = 0;
        self.rooted = false;
        self.poisoned.clear();
        self.tracked.clear();
        self.sides.clear();
        self.held.clear();
    }

    /// The depth that owns what the innermost activation's code starts
    /// now (`0`: no activation).
    #[inline]
    pub(super) fn depth(&self) -> u32 {
        self.stack.len() as u32
    }

    /// A tracked local of the innermost activation's code holds the engine
    /// slot `slot`; returns the depth that owns it.
    #[inline]
    pub(super) fn track(&mut self, slot: u32) -> u32 {
        let depth = self.depth();
        self.tracked.push((depth, slot));
        depth
    }

    /// The tracked local owned at `depth` that holds `slot` ended: true if
    /// it was live (its activation had not ended it).
    #[inline]
    pub(super) fn untrack(&mut self, depth: u32, slot: u32) -> bool {
        let live = |&(d, s): &(u32, u32)| d == depth && s == slot;
        match self.tracked.iter().rposition(live) {
            Some(i) => {
                self.tracked.remove(i);
                true
            }
            None => false,
        }
    }

    /// The slot of a tracked local whose activation has ended, taken off
    /// the list; `None` when there is no more.
    #[inline]
    pub(super) fn swept(&mut self) -> Option<u32> {
        let depth = self.depth();
        let &(d, slot) = self.tracked.last()?;
        (d > depth).then(|| {
            self.tracked.pop();
            slot
        })
    }

    /// The innermost activation's code holds the engine slot `slot` for a
    /// value whose evaluation began at decision count `mark`.
    pub(super) fn hold(&mut self, mark: u32, slot: u32) {
        let depth = self.stack.len() as u32;
        self.held.push(Held { depth, mark, slot });
    }

    /// Whether any value is held.
    pub(super) fn holding(&self) -> bool {
        !self.held.is_empty()
    }

    /// The slot of the last value held by code of an activation that has
    /// ended, or (`Some(mark)`) by the innermost activation's code since
    /// `mark`, taken off the list; `None` when there is no more.
    pub(super) fn release(&mut self, since: Option<u32>) -> Option<u32> {
        let depth = self.stack.len() as u32;
        let h = self.held.last()?;
        let due = h.depth > depth
            || since.is_some_and(|m| h.depth == depth && h.mark.wrapping_sub(m) < 1 << 31);
        due.then(|| self.held.pop().expect("checked above").slot)
    }

    /// A tracked local owned at `depth` cannot be read for `why` (borrowed
    /// through a `let`, or opaque and changed): `on`, until it can again
    /// (`!on`: a borrow's end does not say where it began, any one ends) or
    /// its activation ends; at depth `0`, for the rest of the run.
    pub(super) fn poisoned(&mut self, depth: u32, why: Hidden, on: bool) {
        if on {
            return self.poisoned.push((depth, why));
        }
        let same = |&(_, h): &(u32, Hidden)| match (h, why) {
            (Hidden::Borrowed(_), Hidden::Borrowed(_)) => true,
            (h, why) => h == why,
        };
        if let Some(i) = self.poisoned.iter().rposition(same) {
            self.poisoned.remove(i);
        }
    }

    /// A covered body starts; `caller` is where it was called from (`None`
    /// for a closure; a function called through a `fn` pointer gets its
    /// own definition). `decided`: the run took a decision already.
    /// `state`: the live `Static`s' part of the tags, asked only of the
    /// first of a sequence of counted calls. Returns the depth to end it
    /// at, and whether it is counted.
    #[inline]
    pub(super) fn enter(
        &mut self,
        region: &'static Region,
        caller: Option<SrcLoc>,
        decided: bool,
        state: impl FnOnce() -> u64,
    ) -> (u32, bool) {
        let depth = self.stack.len() as u32;
        let Some(parent) = self.stack.last() else {
            let entry = if self.rooted || decided {
                Entry::LateRoot
            } else {
                Entry::Root
            };
            self.rooted = true;
            self.push(region, entry, NOWHERE_LOC, 0, (0, depth + 1));
            return (depth, false);
        };
        let direct = match caller {
            // Called through a pointer, a function reports its own
            // definition as its caller: unknown, so counted; unless live
            // code contains that line (code a macro expanded, where every
            // token has the invocation's line: the call is as direct as
            // it looks).
            Some(c) if parent.entry != Entry::Macro => {
                !region.is_own_definition(c) || covers(&self.stack, c)
            }
            _ => false,
        };
        if let (true, Some(c)) = (direct, caller) {
            let (salt, counted) = (parent.salt, parent.counted);
            self.push(region, Entry::Caller, c, salt, (counted, depth + 1));
            return (depth, false);
        }
        let parent = self.stack.last_mut().expect("checked above");
        let k = &mut parent.counts;
        if k.calls == 0 {
            k.base = mix(state(), parent.salt);
        }
        k.calls += 1;
        let salt = mix(parent.salt, mix(k.base, mix(k.calls.into(), k.returns)));
        let owner = parent.owner;
        self.push(
            region,
            Entry::Counted,
            NOWHERE_LOC,
            salt,
            (depth + 1, owner),
        );
        (depth, true)
    }

    fn push(
        &mut self,
        region: &'static Region,
        entry: Entry,
        caller: SrcLoc,
        salt: u64,
        (counted, owner): (u32, u32),
    ) {
        self.stack.push(Activation {
            region,
            entry,
            caller,
            hidden: 0,
            inherit: 0,
            salt,
            counts: Counts::default(),
            trail: 0,
            counted,
            owner,
        });
    }

    /// Whether the activation at `depth` is counted (tests).
    #[cfg(test)]
    fn is_counted(&self, depth: u32) -> bool {
        self.stack[depth as usize].entry == Entry::Counted
    }

    /// The activation at `depth` (and any left above it) ended, returning
    /// a value that hashes to `value` (`Some(0)`: `()` or a `Dyn`; `None`:
    /// unknown, and then what it decided stands for it). `decided`: the
    /// thread's decision count when it began and now, if it decided.
    #[inline]
    pub(super) fn exit(&mut self, depth: u32, value: Option<u64>, decided: Option<(u32, u32)>) {
        let d = depth as usize;
        // A function that decided: what it returned is what the code that
        // called it sees of its decisions, told by the value's hash where
        // it has one, else by the sides its own code and the closures it
        // called took last at each branch, and what the functions it
        // called returned. (Without the closures', a value a closure
        // counted, `W(n)`, stood for the same on every path.)
        if let (Some((since, ord)), Some(a)) = (decided, self.stack.get(d)) {
            if a.entry != Entry::Counted && value != Some(0) {
                let h = match value {
                    Some(h) => h,
                    None => {
                        let own = a.owner;
                        last_sides(self.within(since, ord.wrapping_sub(since), |s| s == own))
                    }
                };
                let key = mix(a.region as *const Region as u64, h);
                let caller = d.checked_sub(1).map_or(0, |p| self.stack[p].owner);
                self.sides.push(Side {
                    key,
                    taken: false,
                    owner: caller,
                    ord,
                });
            }
        }
        if let Some(&a) = self.stack.get(d) {
            if a.entry == Entry::Counted && d > 0 {
                let parent = &mut self.stack[d - 1];
                let k = &mut parent.counts;
                k.returns = mix(k.returns, value.unwrap_or(a.trail | 1));
                // What it decided decides what the counted body around it
                // returns, too.
                if let Some(outer) = parent.counted.checked_sub(1) {
                    let o = &mut self.stack[outer as usize];
                    o.trail = mix(o.trail, a.trail);
                }
            }
        }
        self.stack.truncate(d);
        self.settled = self.settled.min(d);
        if !self.poisoned.is_empty() {
            self.poisoned.retain(|&(owner, _)| owner <= depth);
        }
    }

    /// A decision took side `taken`: part of what the innermost counted
    /// activation returns (see [`Counts`]).
    #[inline]
    pub(super) fn decided(&mut self, key: u64, taken: bool, ord: u32) {
        let owner = self.owner();
        self.sides.push(Side {
            key,
            taken,
            owner,
            ord,
        });
        if let Some(i) = self.stack.last().and_then(|a| a.counted.checked_sub(1)) {
            let a = &mut self.stack[i as usize];
            a.trail = mix(a.trail, 2 + u64::from(taken));
        }
    }

    /// A macro the attribute cannot rewrite expands at `at` and runs now.
    /// Its own code is not covered (it may hold plain loops); the bodies it
    /// calls are covered as far as the code around the macro is, and
    /// counted, as closures are, since that code may call them repeatedly
    /// (`einsum!` expands to calls of annotated methods). Returns the depth
    /// to end it at.
    pub(super) fn enter_macro(&mut self, at: SrcLoc) -> u32 {
        static NOWHERE: Region = Region::new("", 0, 0, 0, 0);
        let depth = self.stack.len() as u32;
        let (salt, counted, owner) =
            (self.stack.last()).map_or((0, 0, depth + 1), |p| (p.salt, p.counted, p.owner));
        self.hidden.push(Hidden::Macro(at));
        let reason = self.hidden.len() as u32;
        self.push(&NOWHERE, Entry::Macro, at, salt, (counted, owner));
        self.stack[depth as usize].hidden = reason;
        depth
    }

    /// An operation at `loc` starts: if it is the innermost activation's
    /// own code, the calls it handed out are over (see [`Counts`]).
    #[inline]
    pub(super) fn step(&mut self, loc: SrcLoc) {
        if let Some(top) = self.stack.last_mut() {
            if top.counts.calls != 0 && top.region.contains(loc) {
                top.counts = Counts::default();
            }
        }
    }

    /// What the decisions since `mark` (the thread's decision count when
    /// a `let`'s initialiser began; `n` taken since) tell of the value it
    /// bound, as the innermost activation's own code and the closures it
    /// called saw them (its owner's, see [`Activation::owner`]): for each
    /// branch that code reached itself (`pick(a.is_true(), b.is_true())`),
    /// told by its program point and state, the side the last decision
    /// there took; and what each call that decided returned (`choose(x)`
    /// returning what it chose): its hash, or for a value the attribute
    /// cannot hash, the same account of the sides the call took (see
    /// [`Frames::exit`]). A branch reached again in the same state is a
    /// dyn loop whose turns leave the state as it was: only the side that
    /// left it counts, so a dyn loop in a call (an einsum statement, a
    /// DSL's tensor made by a loop) does not keep apart runs that left it
    /// after different turns.
    pub(super) fn sides_since(&self, mark: u32, n: u32) -> u64 {
        let owner = self.owner();
        last_sides(self.within(mark, n, |s| s == owner))
    }

    /// The owner of the innermost activation's decisions (see
    /// [`Activation::owner`]); `0` outside every activation.
    fn owner(&self) -> u32 {
        self.stack.last().map_or(0, |a| a.owner)
    }

    /// The sides taken since `mark` (`n` decisions), by owners `at`
    /// accepts, last first.
    fn within(&self, mark: u32, n: u32, at: impl Fn(u32) -> bool) -> impl Iterator<Item = &Side> {
        let since = move |s: &&Side| s.ord.wrapping_sub(mark).wrapping_sub(1) < n;
        (self.sides.iter().rev())
            .take_while(since)
            .filter(move |s| at(s.owner))
    }

    /// What the live activations add to the tag state.
    #[inline]
    pub(super) fn salt(&self) -> u64 {
        self.stack.last().map_or(0, |a| a.salt)
    }

    /// A copy with every activation's coverage computed: two stacks that
    /// differ only in how much of it was computed so far compare equal.
    pub(super) fn settled_copy(&self) -> Frames {
        let mut f = self.clone();
        f.settle();
        f
    }

    /// Computes `hidden` for the activations entered since the last time.
    fn settle(&mut self) {
        while self.settled < self.stack.len() {
            let i = self.settled;
            let (below, live) = self.stack.split_at_mut(i);
            let a = &mut live[0];
            let inherited = below.last().map_or(0, |b| b.inherit);
            let own = match a.entry {
                Entry::LateRoot => Some(Hidden::Reentered {
                    body: a.region.at(),
                }),
                Entry::Caller if !covers(below, a.caller) => Some(Hidden::CalledFrom {
                    body: a.region.at(),
                    caller: a.caller,
                }),
                _ => None,
            };
            if a.entry == Entry::Macro {
                a.inherit = inherited;
            } else {
                let h = match (inherited, own) {
                    (0, Some(h)) => {
                        self.hidden.push(h);
                        self.hidden.len() as u32
                    }
                    (inherited, _) => inherited,
                };
                a.hidden = h;
                a.inherit = h;
            }
            self.settled += 1;
        }
    }

    /// Why the plain Rust state at an operation of `loc` is out of view
    /// (`None`: every live frame is covered).
    pub(super) fn hidden_at(&mut self, loc: SrcLoc) -> Option<Hidden> {
        self.settle();
        let Some(top) = self.stack.last() else {
            return Some(Hidden::NoActivation);
        };
        if let Some(i) = top.hidden.checked_sub(1) {
            return Some(self.hidden[i as usize]);
        }
        if let Some(&(_, why)) = self.poisoned.first() {
            return Some(why);
        }
        if covers(&self.stack, loc) {
            None
        } else {
            Some(Hidden::Outside(loc))
        }
    }
}

/// For each branch among `sides` (last first), the side the last decision
/// there took, folded in the order of the branches' keys.
fn last_sides<'a>(sides: impl Iterator<Item = &'a Side>) -> u64 {
    let mut last: Vec<(u64, usize, bool)> = (sides.enumerate())
        .map(|(i, s)| (s.key, i, s.taken))
        .collect();
    // Walking back, the first seen at a branch is the last taken.
    last.sort_unstable_by_key(|&(key, i, _)| (key, i));
    last.dedup_by_key(|s| s.0);
    (last.into_iter()).fold(0, |h, (key, _, side)| mix(h, mix(key, 2 + u64::from(side))))
}

/// True if `loc` lies in the region of one of `live`.
fn covers(live: &[Activation], loc: SrcLoc) -> bool {
    live.iter().rev().any(|a| a.region.contains(loc))
}

#[cfg(test)]
mod tests {
    use super::*;

    static OUTER: Region = Region::new("a.rs", 10, 1, 30, 2);
    static INNER: Region = Region::new("a.rs", 40, 1, 50, 2);

    fn at(line: u32) -> SrcLoc {
        SrcLoc {
            file: "a.rs",
            line,
            col: 5,
        }
    }

    #[test]
    fn the_first_activation_before_any_decision_is_covered() {
        let mut f = Frames::default();
        f.enter(&OUTER, None, false, || 0);
        assert_eq!(f.hidden_at(at(12)), None);
        assert_eq!(f.hidden_at(at(35)), Some(Hidden::Outside(at(35))));
    }

    #[test]
    fn a_call_from_covered_code_is_covered_and_from_elsewhere_is_not() {
        let mut f = Frames::default();
        f.enter(&OUTER, None, false, || 0);
        let d = f.enter(&INNER, Some(at(20)), true, || 0).0;
        assert_eq!(f.hidden_at(at(45)), None);
        f.exit(d, Some(0), None);
        f.enter(&INNER, Some(at(35)), true, || 0);
        let h = Some(Hidden::CalledFrom {
            body: INNER.at(),
            caller: at(35),
        });
        assert_eq!(f.hidden_at(at(45)), h);
        // Everything under an uncovered call stays uncovered.
        f.enter(&OUTER, Some(at(45)), true, || 0);
        assert_eq!(f.hidden_at(at(12)), h);
    }

    #[test]
    fn a_body_entered_again_after_the_root_returned_is_not_covered() {
        let mut f = Frames::default();
        let d = f.enter(&OUTER, None, false, || 0).0;
        f.exit(d, Some(0), None);
        f.enter(&OUTER, None, false, || 0);
        assert_eq!(
            f.hidden_at(at(12)),
            Some(Hidden::Reentered { body: OUTER.at() })
        );
        let mut g = Frames::default();
        g.enter(&OUTER, None, true, || 0);
        assert!(g.hidden_at(at(12)).is_some());
        assert_eq!(
            Frames::default().hidden_at(at(1)),
            Some(Hidden::NoActivation)
        );
    }

    static CLOSURE: Region = Region::new("a.rs", 20, 9, 22, 5);

    #[test]
    fn closure_calls_are_counted_until_their_callers_own_code_runs() {
        let mut f = Frames::default();
        f.enter(&OUTER, None, false, || 0);
        let mut salts = Vec::new();
        for _ in 0..3 {
            let e = f.enter(&CLOSURE, None, true, || 99).0;
            assert!(f.is_counted(e));
            salts.push(f.salt());
            f.exit(e, Some(0), None);
        }
        // Three calls in a row (an adapter's loop): three tags.
        assert!(salts[0] != salts[1] && salts[1] != salts[2]);
        assert_eq!(f.salt(), 0);
        // The caller's own operation ends the sequence: counting restarts.
        f.step(at(12));
        let e = f.enter(&CLOSURE, None, true, || 99).0;
        assert_eq!(f.salt(), salts[0]);
        assert_eq!(f.hidden_at(at(21)), None);
        f.exit(e, Some(0), None);
        // What a call that returns a value decided gives the call after it
        // another tag; a call that returns `()` does not.
        for unit in [false, true] {
            let mut after = Vec::new();
            for taken in [false, true] {
                f.step(at(12));
                let e = f.enter(&CLOSURE, None, true, || 5).0;
                f.decided(0, taken, 0);
                f.exit(e, unit.then_some(0), None);
                let e = f.enter(&CLOSURE, None, true, || 0).0;
                after.push(f.salt());
                f.exit(e, Some(0), None);
            }
            assert_eq!(after[0] == after[1], unit);
        }
        // A function called from a line is not counted.
        let e = f.enter(&INNER, Some(at(12)), true, || 0).0;
        assert!(!f.is_counted(e));
    }

    #[test]
    fn a_macros_own_code_is_hidden_and_its_callees_are_counted() {
        let mut f = Frames::default();
        f.enter(&OUTER, None, false, || 0);
        let m = f.enter_macro(at(14));
        assert_eq!(f.hidden_at(at(14)), Some(Hidden::Macro(at(14))));
        let e = f.enter(&INNER, Some(at(14)), true, || 1).0;
        assert!(f.is_counted(e));
        assert_eq!(f.hidden_at(at(45)), None);
        f.exit(e, Some(0), None);
        f.exit(m, Some(0), None);
        assert_eq!(f.hidden_at(at(14)), None);
    }
}
