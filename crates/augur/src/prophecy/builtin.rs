//! Built-in lattices: `bool` (true at top), [`Flat`], [`Set`], [`Max`], and
//! products (tuples, arrays).

use super::Lattice;
use std::fmt::Debug;

/// `false < true`: the paper's `TrueTop`. A prediction starts `false` ("the
/// kernel does not read this tensor") and a requirement of `true` raises it.
///
/// ```
/// use augur::prophecy::Lattice;
/// let mut read = false;
/// assert!(!read.satisfies(&true));
/// read.join(&true);
/// assert!(read);
/// ```
impl Lattice for bool {
    fn satisfies(&self, required: &bool) -> bool {
        *self || !*required
    }
    fn join(&mut self, required: &bool) {
        *self |= *required;
    }
}

/// One value, or a conflict: `Unknown < Exactly(v) < Conflict`, with
/// different `Exactly` values unordered (their join is `Conflict`).
///
/// "Every ReLU after this convolution has the same threshold": each ReLU
/// requires `Exactly(threshold)`, anything else requires `Conflict`; the
/// convolution fuses only when the prediction is `Exactly(t)`. Values are
/// compared with `==`, so a NaN never equals itself and ends as `Conflict`.
///
/// ```
/// use augur::prophecy::{Flat, Lattice};
/// let mut t = Flat::Unknown;
/// t.join(&Flat::Exactly(1.35));
/// assert_eq!(t, Flat::Exactly(1.35));
/// t.join(&Flat::Exactly(2.0));
/// assert_eq!(t, Flat::Conflict);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Flat<T> {
    /// Nothing required yet (bottom).
    #[default]
    Unknown,
    /// Exactly this value was required, every time.
    Exactly(T),
    /// Different values were required, or something that rules a single
    /// value out (top).
    Conflict,
}

impl<T> Flat<T> {
    /// The value, when there is exactly one.
    pub fn exactly(&self) -> Option<&T> {
        match self {
            Flat::Exactly(v) => Some(v),
            _ => None,
        }
    }
}

impl<T: Clone + PartialEq + Debug + 'static> Lattice for Flat<T> {
    fn satisfies(&self, required: &Self) -> bool {
        match (self, required) {
            (_, Flat::Unknown) | (Flat::Conflict, _) => true,
            (Flat::Exactly(a), Flat::Exactly(b)) => a == b,
            _ => false,
        }
    }
    fn join(&mut self, required: &Self) {
        if !self.satisfies(required) {
            *self = match self {
                Flat::Unknown => required.clone(),
                _ => Flat::Conflict,
            };
        }
    }
}

/// A set under union: `a` satisfies `b` when `b ⊆ a`. Kept as a sorted
/// vector, which is the fastest form for the small sets prophecies hold
/// (tensors read by one kernel, variables live at one point).
///
/// ```
/// use augur::prophecy::{Lattice, Set};
/// let mut live = Set::new();
/// live.join(&Set::of(["x"]));
/// live.join(&Set::of(["y", "x"]));
/// assert!(live.contains(&"y"));
/// assert_eq!(live.len(), 2);
/// assert!(live.satisfies(&Set::of(["x"])));
/// ```
#[derive(Clone, PartialEq, Eq, Hash, Default)]
pub struct Set<T> {
    items: Vec<T>,
}

impl<T: Ord> Set<T> {
    /// The empty set (bottom).
    pub fn new() -> Set<T> {
        Set { items: Vec::new() }
    }

    /// The set of these items.
    pub fn of(items: impl IntoIterator<Item = T>) -> Set<T> {
        let mut items: Vec<T> = items.into_iter().collect();
        items.sort();
        items.dedup();
        Set { items }
    }

    /// Adds an item; true if it was new.
    pub fn insert(&mut self, item: T) -> bool {
        match self.items.binary_search(&item) {
            Ok(_) => false,
            Err(i) => {
                self.items.insert(i, item);
                true
            }
        }
    }

    /// True if `item` is in the set.
    pub fn contains(&self, item: &T) -> bool {
        self.items.binary_search(item).is_ok()
    }

    /// The items in ascending order.
    pub fn iter(&self) -> std::slice::Iter<'_, T> {
        self.items.iter()
    }

    /// How many items.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// True if every item of `other` is in `self`.
    pub fn is_superset(&self, other: &Set<T>) -> bool {
        // Both sorted: one merge walk.
        let mut mine = self.items.iter().peekable();
        other.items.iter().all(|x| {
            while mine.next_if(|m| *m < x).is_some() {}
            mine.next_if(|m| *m == x).is_some()
        })
    }
}

impl<T: Debug> Debug for Set<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set().entries(&self.items).finish()
    }
}

impl<T: Ord> FromIterator<T> for Set<T> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        Set::of(iter)
    }
}

impl<'a, T> IntoIterator for &'a Set<T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.items.iter()
    }
}

impl<T: Ord + Clone + Debug + 'static> Lattice for Set<T> {
    fn satisfies(&self, required: &Self) -> bool {
        self.is_superset(required)
    }
    fn join(&mut self, required: &Self) {
        if self.is_superset(required) {
            return;
        }
        let mut merged = Vec::with_capacity(self.items.len() + required.items.len());
        let (mut a, mut b) = (
            self.items.iter().peekable(),
            required.items.iter().peekable(),
        );
        loop {
            let next = match (a.peek(), b.peek()) {
                (Some(x), Some(y)) if x < y => a.next(),
                (Some(x), Some(y)) if y < x => b.next(),
                (Some(_), Some(_)) => {
                    b.next();
                    a.next()
                }
                (Some(_), None) => a.next(),
                (None, Some(_)) => b.next(),
                (None, None) => break,
            };
            merged.extend(next.cloned());
        }
        self.items = merged;
    }
}

/// The largest value required, by `Ord`: "the scratch buffer must hold at
/// least this many elements". Its height is that of `T`'s order: finite for
/// `u8` or `bool`, practically unbounded for `u64`, so a program must not
/// require ever larger values (the extraction then stops at the restart
/// limit with each prophecy's history).
///
/// ```
/// use augur::prophecy::{Lattice, Max};
/// let mut size = Max(0usize);
/// size.join(&Max(64));
/// size.join(&Max(16));
/// assert_eq!(size, Max(64));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Max<T>(pub T);

impl<T: Ord + Clone + Debug + 'static> Lattice for Max<T> {
    fn satisfies(&self, required: &Self) -> bool {
        self.0 >= required.0
    }
    fn join(&mut self, required: &Self) {
        if required.0 > self.0 {
            self.0 = required.0.clone();
        }
    }
}

macro_rules! tuple_lattice {
    ($($name:ident $idx:tt),+) => {
        /// Componentwise: each component is its own lattice.
        impl<$($name: Lattice),+> Lattice for ($($name,)+) {
            fn satisfies(&self, required: &Self) -> bool {
                $(self.$idx.satisfies(&required.$idx))&&+
            }
            fn join(&mut self, required: &Self) {
                $(self.$idx.join(&required.$idx);)+
            }
        }
    };
}

tuple_lattice!(A 0, B 1);
tuple_lattice!(A 0, B 1, C 2);
tuple_lattice!(A 0, B 1, C 2, D 3);

/// Componentwise, like a tuple of `N` equal lattices.
impl<L: Lattice, const N: usize> Lattice for [L; N] {
    fn satisfies(&self, required: &Self) -> bool {
        self.iter().zip(required).all(|(a, b)| a.satisfies(b))
    }
    fn join(&mut self, required: &Self) {
        for (a, b) in self.iter_mut().zip(required) {
            a.join(b);
        }
    }
}
