//! The DSL kit: the state a DSL instance keeps for one run of the closure,
//! shared by its handles, with the fields tags must see declared as such;
//! and DSL errors as typed data.
//!
//! A DSL's handles (tensors, layers, vectors) all reach one state: its
//! configuration, registries, counters, "what ran last". [`State`] shares
//! it (a cheap, clonable handle) and refuses to be used outside the run of
//! the closure that made it, where it would carry one run's decisions into
//! another. Most of that state is bookkeeping that the generated code does
//! not depend on, kept in `Cell`s. The fields that decide what later code
//! generates, across dyn branches and dyn loops' turns, must be part of
//! program points, or two paths that differ in them could share code: such
//! a field is a [`Seen`], a `Cell` whose value (or a key of it) tags see,
//! as with a [`Static`].
//!
//! A DSL refuses a program with [`fail`]: its own error type (a shape that
//! does not fit, say) ends the extraction as [`Error::Dsl`] at the user's
//! line, and the caller gets it back typed with [`Error::dsl_error`].
//!
//! ```
//! #[augur::staged]
//! fn main() -> augur::Result<()> {
//!     use augur::{dsl, Builder, Dyn, Error};
//!     use std::cell::Cell;
//!     use std::panic::Location;
//!
//!     /// The state of a DSL of scaled outputs: the scale the program set last
//!     /// decides the code of every later `emit`, so tags see it; the count of
//!     /// scales set is bookkeeping.
//!     struct Scaler {
//!         scale: dsl::Seen<i32>,
//!         scales_set: Cell<u32>,
//!     }
//!
//!     #[derive(Debug, PartialEq)]
//!     struct ZeroScale;
//!     impl std::fmt::Display for ZeroScale {
//!         fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
//!             write!(f, "scaler: a scale of 0 loses every output")
//!         }
//!     }
//!     impl std::error::Error for ZeroScale {}
//!
//!     #[derive(Clone)]
//!     struct Dsl(dsl::State<Scaler>);
//!
//!     impl Dsl {
//!         fn new() -> Dsl {
//!             Dsl(dsl::State::new(Scaler { scale: dsl::Seen::new(2), scales_set: Cell::new(0) }))
//!         }
//!         #[track_caller]
//!         fn scale(&self, s: i32) {
//!             if s == 0 {
//!                 dsl::fail(ZeroScale, Location::caller());
//!             }
//!             self.0.scale.set(s);
//!             self.0.scales_set.set(self.0.scales_set.get() + 1);
//!         }
//!         fn emit(&self, out: Dyn<*mut i32>, v: Dyn<i32>) {
//!             out.at(0).set(v * self.0.scale.get());
//!         }
//!     }
//!
//!     // The scale differs between the sides of the branch: the `emit` after
//!     // the join is generated once per scale, not shared.
//!     let f = Builder::new().extract("scaled", |out: Dyn<*mut i32>, x: Dyn<i32>| {
//!         let d = Dsl::new();
//!         if x.gt(0).is_true() {
//!             d.scale(3);
//!         }
//!         d.emit(out, x);
//!     })?;
//!     let c = f.c_code();
//!     assert!(c.contains("arg1 * 3") && c.contains("arg1 * 2"), "{c}");
//!
//!     // A DSL error reaches the caller typed, at the user's line.
//!     let line = line!() + 3;
//!     let r = Builder::new().extract("zero", |out: Dyn<*mut i32>, x: Dyn<i32>| {
//!         let d = Dsl::new();
//!         d.scale(0);
//!         d.emit(out, x);
//!     });
//!     let e = r.map(|_| ()).unwrap_err();
//!     assert_eq!(e.dsl_error::<ZeroScale>(), Some(&ZeroScale));
//!     assert!(matches!(e, Error::Dsl { location, .. } if location.line == line));
//!     assert!(e.to_string().starts_with("scaler: a scale of 0 loses every output at "));
//!     Ok(())
//! }
//! ```

use crate::error::Error;
use crate::ir::SrcLoc;
use crate::stage::static_var::Static;
use crate::trace::context::{self, Level};
use crate::trace::driver;
use crate::trace::recorder::Ctl;
use std::cell::RefCell;
use std::fmt;
use std::hash::Hash;
use std::ops::Deref;
use std::panic::Location;
use std::rc::{Rc, Weak};
use std::sync::Arc;

/// A DSL instance's state for one run of the closure, shared by every
/// handle that clones it.
///
/// Make it inside the closure, once per DSL instance: each run of the
/// closure starts from fresh state, and a `State` used in a run other than
/// the one that made it (kept across runs in state outside the closure,
/// made outside the extraction) is a [`Error::Misuse`] naming both lines.
/// Outside an extraction it is a plain shared value.
pub struct State<S> {
    inner: Rc<Inner<S>>,
}

struct Inner<S> {
    id: Id,
    /// The run that made it (`None`: made outside an extraction).
    run: Option<u32>,
    made: &'static Location<'static>,
    state: S,
}

/// Which DSL instance a handle belongs to: a `Copy` identity, distinct for
/// every [`State`] made on this thread, for handles that must not keep the
/// state alive or that check they are used with the instance that made
/// them.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Id(u64);

impl<S> State<S> {
    /// Shares `state`, made by the run in progress (if any).
    #[track_caller]
    pub fn new(state: S) -> State<S> {
        let id = Id(context::with(|c| c.next_id()));
        State {
            inner: Rc::new(Inner {
                id,
                run: driver::current_gen(),
                made: Location::caller(),
                state,
            }),
        }
    }

    /// This instance's identity.
    pub fn id(&self) -> Id {
        self.inner.id
    }

    /// A handle that does not keep the state alive (for handles the
    /// state's own registries hold).
    pub fn downgrade(&self) -> WeakState<S> {
        WeakState(Rc::downgrade(&self.inner))
    }

    #[track_caller]
    fn check_run(&self) {
        let now = driver::current_gen();
        // Destructors run while a run ends by unwinding; they may read the
        // state, and nothing may unwind from there.
        if now.is_none() || now == self.inner.run || std::thread::panicking() {
            return;
        }
        let made = match self.inner.run {
            None => "outside the extraction",
            Some(_) => "by an earlier run of the closure",
        };
        driver::throw(Ctl::fail(Error::Misuse {
            message: format!(
                "DSL state made at {} {made} is used in this run: each run of the closure \
                 must make its own (make the DSL instance inside the closure)",
                SrcLoc::from_location(self.inner.made)
            ),
            location: Some(SrcLoc::from_location(Location::caller())),
        }))
    }
}

impl<S> Deref for State<S> {
    type Target = S;

    #[track_caller]
    fn deref(&self) -> &S {
        self.check_run();
        &self.inner.state
    }
}

impl<S> Clone for State<S> {
    fn clone(&self) -> Self {
        State {
            inner: self.inner.clone(),
        }
    }
}

impl<S> fmt::Debug for State<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "State({:?}, made at {})", self.inner.id, self.inner.made)
    }
}

/// A [`State`] that does not keep it alive.
pub struct WeakState<S>(Weak<Inner<S>>);

impl<S> WeakState<S> {
    /// The state, while some [`State`] handle still holds it.
    pub fn upgrade(&self) -> Option<State<S>> {
        self.0.upgrade().map(|inner| State { inner })
    }
}

impl<S> Clone for WeakState<S> {
    fn clone(&self) -> Self {
        WeakState(self.0.clone())
    }
}

/// A field of a DSL's state that tags see: a `Cell` (set through `&self`,
/// so every handle of a [`State`] can change it) mirrored in a [`Static`].
///
/// Two program points whose `Seen` values (keys, for [`Seen::keyed`])
/// differ are different program points: paths that differ in them do not
/// share code, a dyn loop whose turns change one unrolls until the value
/// repeats, and a dyn loop whose turns leave it as they found it closes.
/// Keep in a `Seen` what decides later code; keep in plain `Cell`s what
/// does not (counters for names, registries), since every difference in a
/// `Seen` copies code.
pub struct Seen<T, K: Clone + Hash + Eq + 'static = T> {
    value: RefCell<T>,
    key: fn(&T) -> K,
    seen: RefCell<Static<K>>,
}

impl<T: Clone + Hash + Eq + 'static> Seen<T> {
    /// A field whose whole value tags see.
    pub fn new(value: T) -> Seen<T> {
        Seen::keyed(value, T::clone)
    }
}

impl<T, K: Clone + Hash + Eq + 'static> Seen<T, K> {
    /// A field of which tags see `key(&value)`: for values that hold what
    /// cannot or must not be part of program points (prophecy handles, ids
    /// that grow from turn to turn) beside what must be.
    pub fn keyed(value: T, key: fn(&T) -> K) -> Seen<T, K> {
        let seen = RefCell::new(Static::new(key(&value)));
        Seen {
            value: RefCell::new(value),
            key,
            seen,
        }
    }

    /// The current value.
    pub fn get(&self) -> T
    where
        T: Clone,
    {
        self.value.borrow().clone()
    }

    /// Replaces the value.
    pub fn set(&self, value: T) {
        self.replace(value);
    }

    /// Replaces the value, returning the old one.
    pub fn replace(&self, value: T) -> T {
        self.update(|v| std::mem::replace(v, value))
    }

    /// Changes the value in place (`f` must not use this field).
    pub fn update<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        let mut value = self.value.borrow_mut();
        let r = f(&mut value);
        self.seen.borrow_mut().set((self.key)(&value));
        r
    }
}

/// A type whose state that decides generated code the engine sees by
/// itself: it lives in [`Static`]s, [`Seen`] fields, prophecy or history
/// cells, or behind a [`State`] (whose fields that decide code are, by
/// the contract above, `Seen`s). A DSL's handle type implements it so that
/// `#[augur::staged]` code may keep one in a `let mut` and change it.
///
/// Under the attribute, a `let mut` local is tracked by its value's hash;
/// one whose type is neither `Hash` nor `Visible` cannot be, so once
/// something changes it the engine shares no code while it lives (exact,
/// and an error naming the `let` where a loop needs sharing to close).
/// Implementing `Visible` for a type that keeps such state in plain fields
/// instead makes code that depends on it silently wrong: it is a promise.
///
/// ```
/// #[augur::staged]
/// fn main() -> augur::Result<()> {
///     use augur::{dsl, Builder, Dyn};
///
///     /// A DSL handle: its state is a `dsl::State`.
///     struct Counter(dsl::State<dsl::Seen<i32>>);
///     impl dsl::Visible for Counter {}
///     impl Counter {
///         fn bump(&mut self) {
///             self.0.set(self.0.get() + 1);
///         }
///     }
///
///     // The loop closes: the counter's value is state tags see.
///     let f = Builder::new().extract("count", |n: Dyn<i32>| {
///         let mut c = Counter(dsl::State::new(dsl::Seen::new(0)));
///         let i = Dyn::new(0);
///         while i.lt(n).is_true() {
///             if c.0.get() < 2 {
///                 c.bump();
///             }
///             i.set(i + 1);
///         }
///         i + c.0.get()
///     })?;
///     assert_eq!(f.interpret(&[5.into()])?, 7.into());
///     Ok(())
/// }
/// ```
pub trait Visible {}

impl<T: Clone + Hash + Eq + 'static> Visible for Static<T> {}
impl<L> Visible for crate::prophecy::Prophecy<L> {}
impl<L> Visible for crate::prophecy::History<L> {}
impl<T, K: Clone + Hash + Eq + 'static> Visible for Seen<T, K> {}
impl<S> Visible for State<S> {}
impl<T: Visible + ?Sized> Visible for &T {}
impl<T: Visible + ?Sized> Visible for &mut T {}
impl<T: Visible + ?Sized> Visible for Box<T> {}
impl<T: Visible + ?Sized> Visible for Rc<T> {}
// Not for containers (`Option`, `Vec`, arrays): how many elements they
// hold is plain state, which tags see only where each element registers
// itself (a `Static` does, a prophecy handle does not).

impl<T: fmt::Debug, K: Clone + Hash + Eq + 'static> fmt::Debug for Seen<T, K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Seen({:?})", self.value.borrow())
    }
}

/// Ends the extraction with the DSL's `error` at `location` (the user's
/// line: pass `Location::caller()` from a `#[track_caller]` operation):
/// the caller gets [`Error::Dsl`], whose [`Error::dsl_error`] gives `error`
/// back typed. Outside an extraction it panics with the message.
pub fn fail(
    error: impl std::error::Error + Send + Sync + 'static,
    location: &'static Location<'static>,
) -> ! {
    driver::throw(Ctl::fail(Error::Dsl {
        error: Arc::new(error),
        location: SrcLoc::from_location(location),
    }))
}

/// Runs `f` on the extraction's value of type `T`: state a DSL keeps for
/// the whole extraction in progress (across its runs), made with
/// `Default` on first use and dropped when the extraction ends, normally
/// or by an error or a panic anywhere, so the thread is ready for the next
/// one. Outside an extraction `f` gets a fresh value, dropped after.
///
/// Most DSL state belongs to one run ([`State`]); this is for what must
/// outlive a run's handles, such as which instance is generating a kernel
/// (a guard sets it, and runs end by unwinding anywhere). Use a type of
/// the DSL's own, so no other DSL reaches the value. The closure's code
/// before a resumable machine runs once for the runs chained inside it
/// ([`Builder::chain_runs`](crate::Builder::chain_runs)), so a count kept
/// there counts executions of the closure, not runs.
///
/// ```
/// #[augur::staged]
/// fn main() -> augur::Result<()> {
///     use augur::{dsl, Builder, Dyn};
///     use std::cell::Cell;
///
///     #[derive(Default)]
///     struct Runs(u64);
///
///     let counted = Cell::new(0);
///     let ex = Builder::new()
///         .extract("f", |x: Dyn<i32>| {
///             counted.set(dsl::local(|r: &mut Runs| {
///                 r.0 += 1;
///                 r.0
///             }));
///             if x.gt(0).is_true() { x } else { -x }
///         })
///         .unwrap();
///     assert_eq!(counted.get(), ex.stats().total_runs);
///     // The extraction's value is gone with it.
///     assert_eq!(dsl::local(|r: &mut Runs| r.0), 0);
///     Ok(())
/// }
/// ```
pub fn local<T: Default + 'static, R>(f: impl FnOnce(&mut T) -> R) -> R {
    context::with(|c| c.local(Level::Extraction, f))
}

/// A copy of the extraction's value of type `T` (see [`local`]); `T`'s
/// `Default` when the extraction has none or outside one. Cheaper than
/// [`local`] for a value read often (a check on every statement): nothing
/// is taken out or made.
///
/// ```
/// #[augur::staged]
/// fn main() -> augur::Result<()> {
///     use augur::{dsl, Builder, Dyn};
///
///     #[derive(Clone, Default)]
///     struct Depth(u32);
///
///     Builder::new()
///         .extract("f", |x: Dyn<i32>| {
///             assert_eq!(dsl::local_copy::<Depth>().0, 0);
///             dsl::local(|d: &mut Depth| d.0 = 2);
///             assert_eq!(dsl::local_copy::<Depth>().0, 2);
///             x
///         })
///         .unwrap();
///     Ok(())
/// }
/// ```
pub fn local_copy<T: Clone + Default + 'static>() -> T {
    context::with(|c| c.local_copy(Level::Extraction))
}
