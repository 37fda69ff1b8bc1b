//! What `#[augur::staged]` expands to: plain Rust loops and locals made
//! visible to tags.
//!
//! Tags see the call path and the live [`Static`](super::static_var::Static)
//! values, not plain Rust state. The attribute (crate `augur-macros`)
//! rewrites a function so that the state that decides what it generates is
//! first-stage state tags see, scoped the way Rust scopes it:
//!
//! * every `for` loop iterates through [`turns`], whose turn counter is a
//!   `Static` living as long as the loop: a plain loop of any length unrolls
//!   exactly, around or inside dyn loops, and its counter is gone once the
//!   loop ends, so an enclosing dyn loop still closes;
//! * a `let mut` local, and a `let` bound to an `if` or `match`, gets a
//!   [`Tracked`] beside it holding the hash of its value (for `Hash` types),
//!   updated after every assignment to it and after every statement (or
//!   `if`/`while` condition) that may change it through a method or a
//!   `&mut` borrow: two paths that differ in it do
//!   not share code, a dyn loop that changes it unrolls until its value
//!   repeats (a state machine closes into a loop over its states). The
//!   tracker has no destructor: the block ends it ([`end`], [`ended`]), as
//!   does a `break` or `continue` that leaves the block, and the
//!   activation that owns it ends what a `return` or `?` left;
//!
//!   An immutable `let` is tracked where its value may tell paths apart
//!   that tags no longer do: its initialiser reads a local that may change
//!   later, or took a decision ([`mark`] before it, [`Tracked::bound`]
//!   after), by its hash if it is bound to an `if` or `match`, else by
//!   what determines it (the state and the sides decided).
//!
//!   A `let` whose initialiser changes a tracked local may keep a `&mut`
//!   borrow of it alive (`let r = v.last_mut().unwrap(); *r += 1;`), so no
//!   re-hash can follow it at once: the tracker is *poisoned* instead
//!   ([`Tracked::poison`]: the engine shares no code while one is) and
//!   re-hashed before the block's next statement that names the local;
//! * every closure body starts with a [`Frame`] whose calls the engine
//!   counts (`(0..n).any(|_| ..)`, `xs.map(f)`, a helper's loop): code the
//!   attribute does not cover may call it repeatedly, so each call is a
//!   program point of its own until the code around it runs again, as each
//!   turn of a `for` loop is (see `trace/frames.rs`);
//! * a value handed to a call, or matched, whose expression holds a call
//!   is held ([`arg`] and [`call`], [`Held`] and [`scrutinee`]) while the
//!   call or the `match` runs, if a decision was taken to compute it
//!   (`f(pick(x.gt(0).is_true()))`): tracked as a `let` bound to it would
//!   be;
//! * a `let mut` of a type the attribute cannot hash is tracked as an
//!   immutable one until something changes it; from then on the engine
//!   shares no code while it lives ([`Tracked::changing`]; a DSL's handle
//!   promises its state is seen by implementing `dsl::Visible`);
//! * a macro the attribute cannot rewrite runs under a [`MacroGuard`];
//! * every function body runs between a [`Frame`]'s start and its
//!   [`Frame::finish`], which keeps the calls in it from becoming tail
//!   calls (a tail call would reuse the caller's frame and give the
//!   callee's operations the caller's tags). An explicit call, not a
//!   destructor: each run the engine ends early unwinds through every
//!   frame, and a frame with no cleanup costs the unwinder a fraction of
//!   one with (a closure body, whose `return`s and `?`s the attribute
//!   cannot all wrap, holds a [`FrameGuard`]).
//!
//! None of this is API: the paths may change with the attribute.

use super::dsl::Visible;
use super::static_var::Static;
use crate::ir::SrcLoc;
use crate::trace::driver::{self, with};
use crate::trace::frames::Hidden;
pub use crate::trace::frames::Region;
use crate::trace::tag::state_hash;
use std::cell::Cell;
use std::hash::Hash;
use std::panic::Location;

/// A `for` loop's iterator with its turn counter (see the module docs).
pub struct Turns<I> {
    inner: I,
    turn: Static<u32>,
}

/// Wraps a `for` loop's iterable so that its turns are first-stage state.
pub fn turns<I: IntoIterator>(iterable: I) -> Turns<I::IntoIter> {
    Turns {
        inner: iterable.into_iter(),
        turn: Static::new(0),
    }
}

impl<I: Iterator> Iterator for Turns<I> {
    type Item = I::Item;
    fn next(&mut self) -> Option<I::Item> {
        let item = self.inner.next()?;
        self.turn += 1;
        Some(item)
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.inner.size_hint()
    }
}

/// The thread's decision count before a `let`'s initialiser runs (see
/// [`Tracked::bound`]).
#[derive(Clone, Copy)]
pub struct Mark(Option<u32>);

impl Mark {
    /// No mark: the initialiser holds no call, so it cannot decide.
    pub const NONE: Mark = Mark(None);
}

/// Marks the start of a `let`'s initialiser: one read of a thread-local
/// counter.
#[inline]
pub fn mark() -> Mark {
    Mark(Some(driver::decisions()))
}

/// A plain local's value, as a hash that is part of every tag while the
/// local lives.
///
/// No destructor: a block the local's `let` stands in ends its tracker
/// ([`end`], [`ended`], before a `break` or `continue` that leaves it), and
/// the activation that owns it ends the rest when it ends (a `return`, a
/// `?`, a caught panic). A destructor would give every function that
/// tracks a local a cleanup, which each run the engine ends early unwinds
/// through at a cost.
pub struct Tracked {
    /// The engine slot, the depth of the activation that owns it, and the
    /// run it belongs to.
    slot: Option<(u32, u32, u32)>,
    /// Poisoned (see [`Tracked::poison`]) and not updated since.
    poisoned: Cell<bool>,
    /// For a local that may change: where its `let` stands, the depth of
    /// the activation that owns it, the run it belongs to, and the
    /// thread's decision count when it was bound. A change to a value of a
    /// type the attribute cannot hash after a decision poisons it for good
    /// ([`Hidden::Opaque`]).
    changes: Option<(&'static Location<'static>, u32, u32, u32)>,
    /// Changed while holding a value the attribute cannot hash.
    opaque: Cell<bool>,
    /// Ended: by its block, or where a `break` left the block.
    ended: Cell<bool>,
}

impl Tracked {
    fn untracked() -> Tracked {
        Tracked {
            slot: None,
            poisoned: Cell::new(false),
            changes: None,
            opaque: Cell::new(false),
            ended: Cell::new(false),
        }
    }

    /// Starts tracking a `let mut` local whose value hashes to `hash`
    /// (`None`: its type is not one the attribute can hash). Such a value
    /// is tracked as [`Tracked::bound`] tracks an immutable one until
    /// something changes it; from then on the engine shares no code while
    /// it lives ([`Hidden::Opaque`]: an error that names the `let` where a
    /// loop needs it).
    /// `varies`: see [`varies`].
    #[track_caller]
    pub fn changing(mark: Mark, always: bool, varies: bool, hash: Option<u64>) -> Tracked {
        let mut t = Tracked::bound(mark, varies && (always || hash.is_some()), hash);
        if hash.is_none() {
            t.changes = t.changes_from(Location::caller());
        }
        t
    }

    /// What [`Tracked::changes`] holds for a local bound at `at` now.
    fn changes_from(
        &self,
        at: &'static Location<'static>,
    ) -> Option<(&'static Location<'static>, u32, u32, u32)> {
        let (depth, gen) = match self.slot {
            Some((_, depth, gen)) => (depth, gen),
            None => driver::with_gen(|e, gen| (e.depth(), gen))?,
        };
        Some((at, depth, gen, driver::decisions()))
    }

    /// Starts tracking a parameter the body may change in place (`&mut
    /// self`, `st: &mut State`, `mut n: u32`) by its hash, if its type is
    /// `Hash` and carries something (`hash` is neither `None` nor `Some(0)`,
    /// what `Dyn`s, `()` and `dsl::Visible` handles give). A parameter of
    /// another type is left as before: a method call on `self` cannot be
    /// told from a change, and making every such body share no code after
    /// its first call would refuse DSLs whose `&mut self` state lives in
    /// `Static`s. The body's activation ends it.
    #[track_caller]
    #[inline]
    pub fn param(varies: bool, hash: Option<u64>) -> Tracked {
        let carries = varies && !matches!(hash, None | Some(0));
        Tracked::bound(Mark::NONE, carries, hash)
    }

    /// Starts tracking a local declared without a value (`let x;`): what
    /// assigns it later updates it.
    #[track_caller]
    pub fn unset() -> Tracked {
        let mut t = Tracked::bound(Mark::NONE, true, Some(0));
        t.changes = t.slot.and_then(|_| t.changes_from(Location::caller()));
        t
    }

    /// Starts tracking a local a `let` bound, if its value may differ
    /// between two paths whose tags agree after it: `always` when its
    /// initialiser reads a tracked local (which may change later while the
    /// value it gave lives on: `let p = o.take();`, `let k = s * 2; s = 0;`)
    /// or is an `if` or `match`, and otherwise when a decision was taken
    /// since `mark`, the start of the initialiser (`let k =
    /// pick(x.gt(0).is_true());`). A value of a `Hash` type is tracked by
    /// its hash; any other by what determines it: the live state and the
    /// sides of the decisions its initialiser took.
    #[track_caller]
    #[inline]
    pub fn bound(mark: Mark, always: bool, hash: Option<u64>) -> Tracked {
        let m = mark.0.unwrap_or(0);
        let decided = match mark.0 {
            Some(m) => driver::decisions().wrapping_sub(m),
            None => 0,
        };
        if !always && decided == 0 {
            return Tracked::untracked();
        }
        let at = Location::caller();
        let slot = driver::with_gen(|e, gen| {
            let h = match hash {
                Some(h) => h,
                None => e.stand_in(m, decided),
            };
            let (slot, depth) = e.track(h, at);
            (slot, depth, gen)
        });
        Tracked {
            slot,
            ..Tracked::untracked()
        }
    }

    /// A `let` changed the local and may hold a `&mut` borrow of it
    /// (`let m = v.last_mut().unwrap();`), so its value cannot be read
    /// until the borrow ends: until the next [`update`](Tracked::update),
    /// the engine shares no code (see `trace/frames.rs`).
    #[track_caller]
    pub fn poison(&self) {
        let Some((_, depth, gen)) = self.slot else {
            return;
        };
        if self.poisoned.get() || self.ended.get() || driver::current_gen() != Some(gen) {
            return;
        }
        self.poisoned.set(true);
        let at = SrcLoc::from_location(Location::caller());
        driver::with_quiet(|e| e.poisoned(depth, Hidden::Borrowed(at), true));
    }

    fn unpoison(&self) {
        if self.poisoned.replace(false) {
            driver::with_quiet(|e| e.poisoned_any_borrow());
        }
    }

    /// The local was assigned, or a statement may have changed it: its
    /// value now hashes to `hash` (`None`: a type the attribute cannot
    /// hash, see [`Tracked::changing`]).
    pub fn update(&self, hash: Option<u64>) {
        let Some(h) = hash else {
            return self.changed_opaque();
        };
        let Some((slot, _, gen)) = self.slot else {
            return;
        };
        if self.ended.get() || driver::current_gen() != Some(gen) {
            return;
        }
        self.unpoison();
        with(|e| {
            e.static_update(slot, h);
            Ok(())
        });
    }

    fn changed_opaque(&self) {
        let Some((at, depth, gen, bound)) = self.changes else {
            return;
        };
        // With no decision since the `let`, the new value follows from
        // the state there, as the value it was bound with does (`let mut
        // ts = Vec::new(); ts.push(t);`): every path that reaches this
        // point with the same tags changed it the same way.
        if self.opaque.get() || self.ended.get() || driver::decisions() == bound {
            return;
        }
        if driver::current_gen() != Some(gen) {
            return;
        }
        self.unpoison();
        self.opaque.set(true);
        let why = Hidden::Opaque(SrcLoc::from_location(at));
        driver::with_quiet(|e| e.poisoned(depth, why, true));
    }

    /// The local's scope ended: the engine forgets it. Inlined: most
    /// trackers track nothing (their `let` decided nothing), and end with
    /// this test.
    #[inline]
    pub fn end(&self) {
        if (self.slot.is_some() || self.changes.is_some()) && !self.ended.replace(true) {
            self.forget();
        }
    }

    #[inline(never)]
    fn forget(&self) {
        let gen = match (self.slot, self.changes) {
            (Some((_, _, g)), _) | (None, Some((_, _, g, _))) => g,
            (None, None) => return,
        };
        let borrowed = self.poisoned.get();
        let opaque = self.changes.filter(|_| self.opaque.get());
        let slot = self.slot;
        // One access to the engine: the attribute makes many trackers.
        driver::with_gen(|e, now| {
            if now != gen {
                return;
            }
            if borrowed {
                e.poisoned_any_borrow();
            }
            if let Some((at, depth, _, _)) = opaque {
                e.poisoned(depth, Hidden::Opaque(SrcLoc::from_location(at)), false);
            }
            if let Some((slot, depth, _)) = slot {
                e.untrack(depth, slot);
            }
        });
    }
}

/// The trackers of a block's locals end where the block does.
#[inline]
pub fn end(trackers: &[&Tracked]) {
    for t in trackers {
        t.end();
    }
}

/// The value `v` of a block's tail: the trackers of the block's locals end
/// after it is computed.
#[inline]
pub fn ended<T>(v: T, trackers: &[&Tracked]) -> T {
    end(trackers);
    v
}

/// A value handed to a call (an argument, a receiver) whose expression
/// holds a call: if a decision was taken since `mark` to compute it
/// (`f(pick(x.gt(0).is_true()))`), it is held as first-stage state while
/// the call runs, as a `let` bound to it would be ([`Tracked::bound`]),
/// until [`call`] releases it. Two paths that handed different values do
/// not share the callee's code.
#[inline]
pub fn arg<T>(mark: Mark, v: T) -> T {
    hold(mark, &v);
    v
}

/// The value of a call whose arguments [`arg`] held since `mark`: they are
/// released (an activation that ends releases what its code held, too).
#[inline]
pub fn call<T>(mark: Mark, v: T) -> T {
    release(mark);
    v
}

/// Holds `v` if a decision was taken since `mark`: by its hash where its
/// type is one [`value`] knows, else by what determines it (the state, and
/// the sides taken since). A `Dyn` or `()` carries nothing to hold.
fn hold<T>(mark: Mark, v: &T) {
    let Some(m) = mark.0 else { return };
    let now = driver::decisions();
    if now != m && !carries_nothing::<T>() {
        let hash = known_hash(v);
        driver::with_gen(|e, _| e.hold(m, now.wrapping_sub(m), hash));
    }
}

#[inline]
fn release(mark: Mark) {
    if let Some(m) = mark.0 {
        if driver::holding_since(m) {
            release_since(m);
        }
    }
}

#[inline(never)]
fn release_since(mark: u32) {
    driver::with_gen(|e, _| e.release(mark));
}

/// The guard of a scrutinee [`scrutinee`] holds: a temporary of the
/// scrutinee's expression, so it lives as long as the `match` (the `if
/// let`, the `while let` turn, the `for` loop) whose arms bind names from
/// the value, and releases it when that ends, however it ends.
pub struct Held(Mark);

impl Held {
    /// The scrutinee's evaluation starts.
    #[inline]
    #[allow(clippy::new_without_default)]
    pub fn new() -> Held {
        Held(mark())
    }
}

impl Drop for Held {
    #[inline]
    fn drop(&mut self) {
        release(self.0)
    }
}

/// A scrutinee whose expression holds a call, held while `held` lives if
/// a decision was taken to compute it (`match pick(x.gt(0).is_true()) {
/// k => .. }`: the arm binds `k` as a `let` would).
#[inline]
pub fn scrutinee<T>(held: &Held, v: T) -> T {
    hold(held.0, &v);
    v
}

/// Runs a function body the attribute moved into a closure (see
/// `augur-macros`): `FnOnce`, so the body may move out of the parameters.
#[inline(always)]
pub fn body<R>(f: impl FnOnce() -> R) -> R {
    f()
}

/// Borrows a local for [`ViaHash`] / [`ViaSeen`] / [`ViaNone`]:
/// `(&&Probe(&x)).augur_hash()` is the hash of `x` when its type is `Hash`,
/// `Some(0)` when it is state the engine sees by itself ([`Visible`]), else
/// `None` (method lookup tries the receiver `&&Probe` first, then derefs:
/// each trait is implemented at one step, bounded by what it needs).
pub struct Probe<'a, T: ?Sized>(pub &'a T);

impl<T: ?Sized> Clone for Probe<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T: ?Sized> Copy for Probe<'_, T> {}

/// The hash of a `Hash` value.
pub trait ViaHash {
    /// `Some(hash)`.
    fn augur_hash(&self) -> Option<u64>;
}

impl<T: Hash + ?Sized> ViaHash for &Probe<'_, T> {
    fn augur_hash(&self) -> Option<u64> {
        Some(state_hash(self.0))
    }
}

/// Nothing to hash for state the engine sees.
pub trait ViaSeen {
    /// `Some(0)`.
    fn augur_hash(&self) -> Option<u64>;
}

impl<T: Visible + ?Sized> ViaSeen for Probe<'_, T> {
    fn augur_hash(&self) -> Option<u64> {
        Some(0)
    }
}

/// No hash for other values.
pub trait ViaNone {
    /// `None`.
    fn augur_hash(self) -> Option<u64>;
}

impl<T: ?Sized> ViaNone for Probe<'_, T> {
    fn augur_hash(self) -> Option<u64> {
        None
    }
}

/// Registers a body the attribute rewrote with the engine as an
/// activation (see `trace/frames.rs`), which tells where the plain Rust
/// state is in view. It ends after the body's last call, so no call in
/// tail position reuses the frame (a tail call would give the callee's
/// operations the caller's tags): a function's through
/// [`Frame::finish`], a closure's when its [`FrameGuard`] drops.
#[must_use]
pub struct Frame {
    /// The depth to end the activation at, the run it belongs to, and
    /// whether it is counted (what it returns then matters).
    slot: Option<(u32, u32, bool)>,
    /// The thread's decision count when it began: a function that decided
    /// since hands its value to the `let` around its call (see
    /// [`Tracked::bound`]).
    mark: u32,
}

impl Frame {
    /// A function body starts; the attribute makes the function
    /// `#[track_caller]`, so `caller` is the line that called it.
    #[inline]
    pub fn enter(region: &'static Region, caller: &'static Location<'static>) -> Frame {
        Frame::start(region, Some(SrcLoc::from_location(caller)))
    }

    /// A closure body starts (its caller is not known).
    #[inline]
    pub fn closure(region: &'static Region) -> Frame {
        Frame::start(region, None)
    }

    #[inline]
    fn start(region: &'static Region, caller: Option<SrcLoc>) -> Frame {
        let slot = driver::with_gen(|e, gen| {
            let (depth, counted) = e.frame_enter(region, caller);
            (depth, gen, counted)
        });
        Frame {
            slot,
            mark: driver::decisions(),
        }
    }

    /// The decision counts when the body began and now, if it decided
    /// since.
    #[inline]
    fn decided(&self) -> Option<(u32, u32)> {
        let now = driver::decisions();
        (now != self.mark).then_some((self.mark, now))
    }

    /// The body returned a value hashing to `value` (`Some(0)` for `()` or
    /// a `Dyn`, which give the code that called it nothing to decide on;
    /// `None`: unknown, see `trace/frames.rs`).
    #[inline]
    pub fn exit(self, value: Option<u64>) {
        if let Some((depth, gen, counted)) = self.slot {
            // Only a direct call's value is handed to the code around its
            // call, where it carries something (see `Frames::exit`).
            let handed = !counted && value != Some(0);
            let decided = if handed { self.decided() } else { None };
            driver::with_gen(|e, now| {
                if now == gen {
                    e.frame_exit(depth, value, decided)
                }
            });
        }
    }

    /// The body returned `()` (or a value the code that called it cannot
    /// decide on): the activation ends. Called after the body, not from a
    /// destructor: a run the engine ends early unwinds through no cleanup
    /// of ours (the engine forgets that run's activations), and a frame
    /// left by a panic caught inside the run is ended with its caller's
    /// (see `Frames::exit`).
    #[inline]
    pub fn finish_unit<T>(self, v: T) -> T {
        self.exit(Some(0));
        v
    }

    /// The body returned `v`: hashed where the code that called the body
    /// may decide on it (it is counted, or it decided), by its type's
    /// `Hash` where `probe` can take it (the signature gives the type: see
    /// [`Probe`]), so a caller's `let` sees the value a function chose, not
    /// only the decisions that chose it; and the activation ends.
    #[inline]
    pub fn finish<T>(self, v: T, probe: impl FnOnce(&T) -> Option<u64>) -> T {
        let value = if !self.wanted() {
            None
        } else if carries_nothing::<T>() {
            Some(0)
        } else {
            known_hash(&v).or_else(|| probe(&v))
        };
        self.exit(value);
        v
    }

    /// Whether what the body returns is something its caller may decide
    /// on: it is counted, or it decided (the code around its call sees
    /// what it decided).
    #[inline]
    fn wanted(&self) -> bool {
        matches!(self.slot, Some((_, _, counted)) if counted || self.decided().is_some())
    }

    /// The guard the body holds (`unit`: the body evidently returns `()`).
    #[inline]
    pub fn guard(self, unit: bool) -> FrameGuard {
        FrameGuard {
            frame: Some(self),
            unit,
            hash: None,
        }
    }
}

/// The value `v` a body returns: if its type carries nothing the code
/// that called the body could decide on (`()`, a `Dyn`), the guard tells
/// the engine so, as for a body that evidently returns `()` (see
/// `trace/frames.rs`). The type is read by name: no bound on `T`, so the
/// attribute can pass any value, its type inferred or not.
#[inline]
pub fn value<T>(guard: &mut FrameGuard, v: T) -> T {
    // A counted body's value, and that of a function that decided (which
    // the code around its call sees), are what callers may decide on.
    let wanted = guard.frame.as_ref().is_some_and(Frame::wanted);
    if wanted && !guard.unit {
        if carries_nothing::<T>() {
            guard.unit = true;
        } else {
            guard.hash = known_hash(&v);
        }
    }
    v
}

/// The hash of a value whose type is one of a fixed list of standard types
/// a closure commonly returns, told by the type's name and hashed through
/// that type's own `Hash`: the primitives (integers, `bool`, `char`),
/// `Option` of one, `ControlFlow` and `Result` with `()` or one on either
/// side (`try_for_each`'s closures), pairs of the common integers and
/// `bool`, `String` and `&str`. The value itself is what a caller decides
/// on, so it stands for the decisions that made it, exactly.
fn known_hash<T>(v: &T) -> Option<u64> {
    use std::ops::ControlFlow;
    let name = std::any::type_name::<T>();
    macro_rules! known {
        ($($t:ty),* $(,)?) => {$(
            if name == std::any::type_name::<$t>()
                && std::mem::size_of::<T>() == std::mem::size_of::<$t>()
                && std::mem::align_of::<T>() == std::mem::align_of::<$t>()
            {
                // SAFETY: `T` is `$t`: the same name, a standard library
                // type that no other crate can name so (its path is
                // `core`'s, `alloc`'s or a primitive's; at most lifetimes,
                // which hashing ignores, are erased), of the same size and
                // alignment. The value is read through `$t`'s `Hash`, which
                // touches only its initialised parts.
                let same = unsafe { &*(v as *const T).cast::<$t>() };
                return Some(state_hash(same));
            }
        )*};
    }
    macro_rules! with_primitives {
        ($($p:ty),*) => {
            known!($($p, Option<$p>, ControlFlow<$p>, ControlFlow<(), $p>, Result<$p, ()>),*);
        };
    }
    with_primitives!(bool, char, u8, u16, u32, u64, u128, usize, i8, i16, i32, i64, i128, isize);
    known!(ControlFlow<()>, Result<(), ()>, Result<(), String>, String, &str);
    macro_rules! floats {
        ($($f:ty),*) => {$(
            if name == std::any::type_name::<$f>() && std::mem::size_of::<T>() == std::mem::size_of::<$f>() {
                // SAFETY: `T` is the primitive `$f` (same name and size);
                // its bits are read by value.
                let f = unsafe { std::ptr::read((v as *const T).cast::<$f>()) };
                return Some(state_hash(&f.to_bits()));
            }
        )*};
    }
    floats!(f32, f64);
    known!(
        (i32, i32),
        (i64, i64),
        (usize, usize),
        (bool, bool),
        (i32, bool),
        (bool, i32),
        (usize, i32),
        (i32, usize),
        (usize, bool),
        (bool, usize),
    );
    None
}

/// Whether a local holding `v` can tell two paths apart by its value:
/// not one of `()` or a `Dyn`, whose tracker would hash alike on every
/// path, so one is tracked only where its initialiser decided
/// ([`Tracked::bound`]), never for its `let` alone.
#[inline]
pub fn varies<T: ?Sized>(_: &T) -> bool {
    !carries_nothing::<T>()
}

/// True for `()` and `Dyn<_>`: a `Dyn` is a handle to a second-stage
/// value, the same plain data on every path (the engine compares the
/// variables where operations use them).
fn carries_nothing<T: ?Sized>() -> bool {
    let name = std::any::type_name::<T>();
    name == "()" || name.starts_with(super::dyn_val::TYPE_PREFIX)
}

/// Ends a [`Frame`] when dropped (see [`Frame::guard`]).
pub struct FrameGuard {
    frame: Option<Frame>,
    unit: bool,
    /// The hash of the value the body returned, where [`value`] could take
    /// it.
    hash: Option<u64>,
}

impl Drop for FrameGuard {
    #[inline]
    fn drop(&mut self) {
        if let Some(f) = self.frame.take() {
            f.exit(if self.unit { Some(0) } else { self.hash })
        }
    }
}

/// Held while a macro the attribute cannot rewrite runs (see
/// `trace/frames.rs`): nothing it does is covered.
pub struct MacroGuard {
    slot: Option<(u32, u32)>,
}

impl MacroGuard {
    /// The macro expanded at the caller's line starts.
    #[track_caller]
    pub fn enter() -> MacroGuard {
        let at = SrcLoc::from_location(Location::caller());
        MacroGuard {
            slot: driver::with_gen(|e, gen| (e.macro_enter(at), gen)),
        }
    }
}

impl Drop for MacroGuard {
    fn drop(&mut self) {
        if let Some((depth, gen)) = self.slot {
            driver::with_gen(|e, now| {
                if now == gen {
                    e.frame_exit(depth, Some(0), None)
                }
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Dyn;

    #[test]
    fn values_that_carry_nothing_and_known_types_are_told_by_type() {
        assert!(carries_nothing::<()>());
        assert!(carries_nothing::<Dyn<i32>>());
        assert!(carries_nothing::<Dyn<*mut f32>>());
        assert!(!carries_nothing::<Option<Dyn<i32>>>());
        assert!(!carries_nothing::<(Dyn<i32>, bool)>());
        assert!(!carries_nothing::<bool>());
        assert_ne!(known_hash(&3i32), known_hash(&4i32));
        assert_ne!(known_hash(&true), known_hash(&false));
        assert!(known_hash(&3usize).is_some());
        assert_ne!(known_hash(&Some(3)), known_hash(&None::<i32>));
        assert_ne!(known_hash(&Some(3)), known_hash(&Some(4)));
        use std::ops::ControlFlow;
        let (go, stop) = (
            ControlFlow::<()>::Continue(()),
            ControlFlow::<()>::Break(()),
        );
        assert_ne!(known_hash(&go), known_hash(&stop));
        assert_ne!(known_hash(&"ab"), known_hash(&"ba"));
        assert_ne!(known_hash(&(1i32, 2i32)), known_hash(&(2i32, 1i32)));
        // Types off the list are not read.
        assert!(known_hash(&Some(Some(3))).is_none());
        assert!(known_hash(&vec![1]).is_none());
        struct Mine(#[allow(dead_code)] i32);
        assert!(known_hash(&Mine(1)).is_none());
    }
}
