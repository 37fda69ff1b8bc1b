//! `Static<T>`: first-stage values that are part of every program point's
//! identity, and `range`, the first-stage loop whose counter tags can see.

use crate::trace::driver::{self, with};
use crate::trace::tag::state_hash;
use std::fmt;
use std::hash::Hash;
use std::ops::{AddAssign, Deref, MulAssign, SubAssign};

/// A first-stage value whose current value is part of the tag of every
/// operation while it lives.
///
/// Use it for first-stage state that changes while staged code runs: loop
/// counters around dyn branches, interpreter program counters, flags. Two
/// operations at the same line with different `Static` values are different
/// program points, so loops over a `Static` unroll, while a dyn loop whose
/// `Static` state repeats closes.
///
/// A plain Rust local is invisible to tags. Plain loops without dyn branches
/// inside are fine (they are straight-line code); a plain loop around a dyn
/// branch is detected (a loop candidate whose cycle is left without a
/// decision) and handled, but [`range`] makes the intent explicit and cheap.
///
/// ```
/// #[augur::staged]
/// fn main() -> augur::Result<()> {
///     use augur::{Builder, Dyn, Static};
///     let f = Builder::new()
///         .extract("cube", |x: Dyn<i32>| {
///             let r = Dyn::new(1);
///             let mut n = Static::new(3);
///             while *n > 0 {
///                 r.set(r * x);
///                 n -= 1;
///             }
///             r
///         })
///         .unwrap();
///     assert_eq!(f.interpret(&[2.into()]).unwrap(), 8.into());
///     Ok(())
/// }
/// ```
pub struct Static<T: Clone + Hash + Eq + 'static> {
    value: T,
    /// The engine slot and the run it belongs to; `None` outside an extraction.
    slot: Option<(u32, u32)>,
}

impl<T: Clone + Hash + Eq + 'static> Static<T> {
    /// A new static value, registered with the extraction in progress (a
    /// `Static` made outside an extraction is a plain constant).
    #[track_caller]
    pub fn new(value: T) -> Static<T> {
        let at = std::panic::Location::caller();
        let slot = driver::current_gen().map(|gen| {
            let h = state_hash(&value);
            (with(|e| Ok(e.static_register(h, Some(at)))), gen)
        });
        Static { value, slot }
    }

    /// The current value.
    pub fn get(&self) -> T {
        self.value.clone()
    }

    /// Replaces the value.
    pub fn set(&mut self, value: T) {
        self.value = value;
        self.changed();
    }

    /// Changes the value in place.
    pub fn update(&mut self, f: impl FnOnce(&mut T)) {
        f(&mut self.value);
        self.changed();
    }

    fn changed(&mut self) {
        if let Some((slot, gen)) = self.slot {
            if driver::current_gen() == Some(gen) {
                let h = state_hash(&self.value);
                with(|e| {
                    e.static_update(slot, h);
                    Ok(())
                });
            }
        }
    }
}

impl<T: Clone + Hash + Eq + 'static> Drop for Static<T> {
    fn drop(&mut self) {
        if let Some((slot, gen)) = self.slot {
            if driver::current_gen() == Some(gen) {
                driver::with_quiet(|e| e.static_drop(slot));
            }
        }
    }
}

impl<T: Clone + Hash + Eq + 'static> Deref for Static<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.value
    }
}

impl<T: Clone + Hash + Eq + fmt::Debug + 'static> fmt::Debug for Static<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Static({:?})", self.value)
    }
}

impl<T: Clone + Hash + Eq + 'static> Clone for Static<T> {
    /// A new static with the same value (registered separately).
    fn clone(&self) -> Self {
        Static::new(self.value.clone())
    }
}

impl<T: Clone + Hash + Eq + 'static> PartialEq<T> for Static<T> {
    fn eq(&self, other: &T) -> bool {
        self.value == *other
    }
}

impl<T: Clone + Hash + Eq + PartialOrd + 'static> PartialOrd<T> for Static<T> {
    fn partial_cmp(&self, other: &T) -> Option<std::cmp::Ordering> {
        self.value.partial_cmp(other)
    }
}

macro_rules! static_assign {
    ($($trait:ident $method:ident),*) => {$(
        impl<T: Clone + Hash + Eq + $trait + 'static> $trait<T> for Static<T> {
            fn $method(&mut self, rhs: T) {
                self.value.$method(rhs);
                self.changed();
            }
        }
    )*};
}
static_assign!(AddAssign add_assign, SubAssign sub_assign, MulAssign mul_assign);

/// A first-stage loop whose counter is a [`Static`], so tags tell the
/// iterations apart: `for i in augur::range(0..n) { ... }` unrolls even when
/// its body contains dyn branches.
///
/// ```
/// #[augur::staged]
/// fn main() -> augur::Result<()> {
///     use augur::{range, Builder, Dyn};
///     let f = Builder::new()
///         .extract("clamp3", |x: Dyn<i32>| {
///             let r = Dyn::new(0);
///             for i in range(0..3) {
///                 if x.gt(i).is_true() {
///                     r.set(r + 1);
///                 }
///             }
///             r
///         })
///         .unwrap();
///     assert_eq!(f.interpret(&[2.into()]).unwrap(), 2.into());
///     Ok(())
/// }
/// ```
pub fn range<T: StaticInt>(r: std::ops::Range<T>) -> StaticRange<T> {
    StaticRange {
        next: Static::new(r.start),
        end: r.end,
    }
}

/// Integers [`range`] can count with.
pub trait StaticInt: Copy + Hash + Eq + PartialOrd + 'static {
    /// `self + 1`.
    fn succ(self) -> Self;
}
macro_rules! static_int {
    ($($t:ty),*) => {$(impl StaticInt for $t { fn succ(self) -> Self { self + 1 } })*};
}
static_int!(i8, i16, i32, i64, u8, u16, u32, u64, usize, isize);

/// The iterator of [`range`].
pub struct StaticRange<T: StaticInt> {
    next: Static<T>,
    end: T,
}

impl<T: StaticInt> Iterator for StaticRange<T> {
    type Item = T;
    fn next(&mut self) -> Option<T> {
        let v = self.next.get();
        if v < self.end {
            self.next.set(v.succ());
            Some(v)
        } else {
            None
        }
    }
}
