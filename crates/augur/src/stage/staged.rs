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
//!   repeats (a state machine closes into a loop over its states);
//!
//!   A `let` whose initialiser changes a tracked local may keep a `&mut`
//!   borrow of it alive (`let r = v.last_mut().unwrap(); *r += 1;`), so no
//!   re-hash can follow it at once: the tracker is *poisoned* instead
//!   ([`Tracked::poison`]: the engine shares no code while one is) and
//!   re-hashed before the block's next statement that names the local;
//! * every closure handed to one of the standard library's adapters
//!   (`(0..n).any(|_| ..)`, `xs.map(|x| ..)`)
//!   counts its calls at a [`CallSite`] of the statement: each call
//!   is a program point of its own, as each turn of a `for` loop is;
//! * every function body starts with a [`Frame`], whose destructor keeps the
//!   calls in it from becoming tail calls (a tail call would reuse the
//!   caller's frame and give the callee's operations the caller's tags).
//!
//! None of this is API: the paths may change with the attribute.

use super::static_var::Static;
use crate::ir::SrcLoc;
use crate::trace::driver::{self, with};
pub use crate::trace::frames::Region;
use crate::trace::tag::FxHasher;
use std::hash::{Hash, Hasher};
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

/// A plain local's value, as a hash that is part of every tag while the
/// local lives (`None`: the type is not `Hash`, nothing is tracked).
pub struct Tracked {
    /// The engine slot and the run it belongs to.
    slot: Option<(u32, u32)>,
    /// Poisoned (see [`Tracked::poison`]) and not updated since.
    poisoned: std::cell::Cell<bool>,
}

impl Tracked {
    /// Starts tracking a local whose value hashes to `hash`.
    pub fn new(hash: Option<u64>) -> Tracked {
        let slot = hash.and_then(|h| {
            let gen = driver::current_gen()?;
            Some((with(|e| Ok(e.static_register(h))), gen))
        });
        Tracked {
            slot,
            poisoned: std::cell::Cell::new(false),
        }
    }

    /// A `let` changed the local and may hold a `&mut` borrow of it
    /// (`let m = v.last_mut().unwrap();`), so its value cannot be read
    /// until the borrow ends: until the next [`update`](Tracked::update),
    /// the engine shares no code (see `trace/frames.rs`).
    #[track_caller]
    pub fn poison(&self) {
        let Some((_, gen)) = self.slot else { return };
        if self.poisoned.get() || driver::current_gen() != Some(gen) {
            return;
        }
        self.poisoned.set(true);
        let at = SrcLoc::from_location(Location::caller());
        with(|e| {
            e.borrowed(Some(at));
            Ok(())
        });
    }

    fn unpoison(&self) {
        if self.poisoned.replace(false) {
            driver::with_quiet(|e| e.borrowed(None));
        }
    }

    /// The local was assigned: its value now hashes to `hash`.
    pub fn update(&self, hash: Option<u64>) {
        if let Some((_, gen)) = self.slot {
            if driver::current_gen() == Some(gen) {
                self.unpoison();
            }
        }
        if let (Some((slot, gen)), Some(h)) = (self.slot, hash) {
            if driver::current_gen() == Some(gen) {
                with(|e| {
                    e.static_update(slot, h);
                    Ok(())
                });
            }
        }
    }
}

impl Drop for Tracked {
    fn drop(&mut self) {
        if let Some((slot, gen)) = self.slot {
            if driver::current_gen() == Some(gen) {
                self.unpoison();
                driver::with_quiet(|e| e.static_drop(slot));
            }
        }
    }
}

/// The closures one statement hands to other code (`(0..n).any(|_| ..)`):
/// the code that calls them (the standard library's adapters) is not
/// annotated, so every call would be one program point; each call counts
/// itself, first-stage state while the statement's block lives, as
/// [`turns`] counts a `for` loop's turns.
///
/// The attribute writes one `static` site per such statement, a guard
/// ([`CallSite::scope`]) before the statement, and a call of
/// [`CallSite::enter`] first in each closure: the closures name the static
/// without capturing anything, so they stay `'static`, `fn`-pointer
/// compatible and unwind-safe as written.
#[allow(dead_code)] // read by no one: it only gives the static a size, so an address of its own
pub struct CallSite(u8);

impl CallSite {
    /// A statement's site (non-zero-sized: each static has its own address).
    pub const fn new() -> CallSite {
        CallSite(0)
    }

    fn key(&'static self) -> usize {
        self as *const CallSite as usize
    }

    /// The statement starts: its closures' calls count from zero while the
    /// guard lives.
    pub fn scope(&'static self) -> CallScope {
        let gen = driver::current_gen();
        if gen.is_some() {
            with(|e| {
                e.calls_scope(self.key());
                Ok(())
            });
        }
        CallScope {
            site: self.key(),
            gen,
        }
    }

    /// One more call of one of the statement's closures begins.
    pub fn enter(&'static self) {
        if driver::current_gen().is_some() {
            with(|e| {
                e.calls_enter(self.key());
                Ok(())
            });
        }
    }
}

impl Default for CallSite {
    fn default() -> CallSite {
        CallSite::new()
    }
}

/// Runs a function body the attribute moved into a closure (see
/// `augur-macros`): `FnOnce`, so the body may move out of the parameters.
#[inline(always)]
pub fn body<R>(f: impl FnOnce() -> R) -> R {
    f()
}

/// The statement of a [`CallSite`] is running (see there).
pub struct CallScope {
    site: usize,
    gen: Option<u32>,
}

impl Drop for CallScope {
    fn drop(&mut self) {
        if self.gen.is_some() && driver::current_gen() == self.gen {
            driver::with_quiet(|e| e.calls_exit(self.site));
        }
    }
}

/// Borrows a local for [`ViaHash`] / [`ViaNone`]: `(&Probe(&x)).augur_hash()`
/// is the hash of `x` when its type is `Hash`, else `None` (method lookup
/// prefers the by-value impl, which exists only for `Hash` types).
pub struct Probe<'a, T: ?Sized>(pub &'a T);

/// The hash of a `Hash` value.
pub trait ViaHash {
    /// `Some(hash)`.
    fn augur_hash(&self) -> Option<u64>;
}

impl<T: Hash + ?Sized> ViaHash for Probe<'_, T> {
    fn augur_hash(&self) -> Option<u64> {
        let mut h = FxHasher::default();
        self.0.hash(&mut h);
        Some(h.finish())
    }
}

/// No hash for other values.
pub trait ViaNone {
    /// `None`.
    fn augur_hash(&self) -> Option<u64>;
}

impl<T: ?Sized> ViaNone for &Probe<'_, T> {
    fn augur_hash(&self) -> Option<u64> {
        None
    }
}

/// Held by every body the attribute rewrites: registers the body with the
/// engine as an activation (see `trace/frames.rs`), which tells where the
/// plain Rust state is in view; its destructor also runs after any call in
/// tail position, so no such call reuses the frame.
pub struct Frame {
    /// The depth to end the activation at, and the run it belongs to.
    slot: Option<(u32, u32)>,
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
        let slot = driver::with_gen(|e, gen| (e.frame_enter(region, caller), gen));
        Frame { slot }
    }
}

impl Drop for Frame {
    #[inline(never)]
    fn drop(&mut self) {
        if let Some((depth, gen)) = self.slot {
            driver::with_gen(|e, now| {
                if now == gen {
                    e.frame_exit(depth)
                }
            });
        }
        std::hint::black_box(());
    }
}
