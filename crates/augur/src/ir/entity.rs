//! Typed `u32` handles, the arenas they index and side tables keyed by them
//! (Cranelift's entity style).

use std::fmt;
use std::marker::PhantomData;
use std::ops::{Index, IndexMut};

/// A typed index into an [`Arena`].
pub trait EntityId: Copy + Eq + Ord + std::hash::Hash + fmt::Debug {
    /// Makes the handle for slot `index`.
    fn new(index: usize) -> Self;
    /// The slot this handle names.
    fn index(self) -> usize;
}

macro_rules! entity {
    ($(#[$m:meta])* $name:ident, $prefix:literal) => {
        $(#[$m])*
        #[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name(pub u32);
        impl $crate::ir::EntityId for $name {
            fn new(index: usize) -> Self {
                $name(u32::try_from(index).expect("more than u32::MAX entities"))
            }
            fn index(self) -> usize {
                self.0 as usize
            }
        }
        impl ::std::fmt::Debug for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                write!(f, concat!($prefix, "{}"), self.0)
            }
        }
        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                write!(f, concat!($prefix, "{}"), self.0)
            }
        }
    };
}
pub(crate) use entity;

/// A growable vector indexed by a typed handle.
#[derive(Clone)]
pub struct Arena<K: EntityId, V> {
    items: Vec<V>,
    _k: PhantomData<K>,
}

impl<K: EntityId, V> Default for Arena<K, V> {
    fn default() -> Self {
        Arena {
            items: Vec::new(),
            _k: PhantomData,
        }
    }
}

impl<K: EntityId, V> Arena<K, V> {
    /// An empty arena.
    pub fn new() -> Self {
        Self::default()
    }
    /// Appends `v` and returns its handle.
    pub fn push(&mut self, v: V) -> K {
        let k = K::new(self.items.len());
        self.items.push(v);
        k
    }
    /// Number of entries.
    pub fn len(&self) -> usize {
        self.items.len()
    }
    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
    /// All handles with their entries, in creation order.
    pub fn iter(&self) -> impl Iterator<Item = (K, &V)> {
        self.items.iter().enumerate().map(|(i, v)| (K::new(i), v))
    }
    /// All handles, in creation order.
    pub fn keys(&self) -> impl DoubleEndedIterator<Item = K> + ExactSizeIterator {
        (0..self.items.len()).map(K::new)
    }
    /// All entries, in creation order.
    pub fn values(&self) -> impl Iterator<Item = &V> {
        self.items.iter()
    }
    /// All entries, mutably, in creation order.
    pub fn values_mut(&mut self) -> impl Iterator<Item = &mut V> {
        self.items.iter_mut()
    }
    /// Shared access by handle, `None` when out of range.
    pub fn get(&self, k: K) -> Option<&V> {
        self.items.get(k.index())
    }
    /// Mutable access by handle, `None` when out of range.
    pub fn get_mut(&mut self, k: K) -> Option<&mut V> {
        self.items.get_mut(k.index())
    }
}

impl<K: EntityId, V> FromIterator<V> for Arena<K, V> {
    fn from_iter<I: IntoIterator<Item = V>>(items: I) -> Self {
        Arena {
            items: items.into_iter().collect(),
            _k: PhantomData,
        }
    }
}

impl<K: EntityId, V> IntoIterator for Arena<K, V> {
    type Item = (K, V);
    type IntoIter =
        std::iter::Map<std::iter::Enumerate<std::vec::IntoIter<V>>, fn((usize, V)) -> (K, V)>;
    /// All handles with their entries, in creation order.
    fn into_iter(self) -> Self::IntoIter {
        self.items
            .into_iter()
            .enumerate()
            .map(|(i, v)| (K::new(i), v))
    }
}

impl<K: EntityId, V> Index<K> for Arena<K, V> {
    type Output = V;
    fn index(&self, k: K) -> &V {
        &self.items[k.index()]
    }
}

impl<K: EntityId, V> IndexMut<K> for Arena<K, V> {
    fn index_mut(&mut self, k: K) -> &mut V {
        &mut self.items[k.index()]
    }
}

impl<K: EntityId, V: fmt::Debug> fmt::Debug for Arena<K, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

/// A side table: a value for each handle of one kind, `default` for every
/// handle never written (Cranelift's `SecondaryMap`). A write past the end
/// grows the table, so it needs no size up front; analyses keep their facts
/// about blocks, nodes or variables here instead of in vectors indexed by
/// raw integers.
#[derive(Clone)]
pub struct SecondaryMap<K: EntityId, V: Clone> {
    items: Vec<V>,
    default: V,
    _k: PhantomData<K>,
}

impl<K: EntityId, V: Clone + Default> SecondaryMap<K, V> {
    /// A table that holds `V::default()` for every handle.
    pub fn new() -> Self {
        Self::with_default(V::default())
    }
}

impl<K: EntityId, V: Clone + Default> Default for SecondaryMap<K, V> {
    fn default() -> Self {
        Self::new()
    }
}

impl<K: EntityId, V: Clone> SecondaryMap<K, V> {
    /// A table that holds `default` for every handle.
    pub fn with_default(default: V) -> Self {
        SecondaryMap {
            items: Vec::new(),
            default,
            _k: PhantomData,
        }
    }
}

impl<K: EntityId, V: Clone> SecondaryMap<K, V> {
    /// A table that holds `default` for every handle, with room for the
    /// first `n` made (a table filled in by handle grows no further).
    pub fn with_len(n: usize, default: V) -> Self {
        SecondaryMap {
            items: vec![default.clone(); n],
            default,
            _k: PhantomData,
        }
    }
}

impl<K: EntityId, V: Clone> Index<K> for SecondaryMap<K, V> {
    type Output = V;
    fn index(&self, k: K) -> &V {
        self.items.get(k.index()).unwrap_or(&self.default)
    }
}

impl<K: EntityId, V: Clone> IndexMut<K> for SecondaryMap<K, V> {
    fn index_mut(&mut self, k: K) -> &mut V {
        let i = k.index();
        if i >= self.items.len() {
            self.items.resize(i + 1, self.default.clone());
        }
        &mut self.items[i]
    }
}

impl<K: EntityId, V: Clone + fmt::Debug> fmt::Debug for SecondaryMap<K, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let entries = self.items.iter().enumerate().map(|(i, v)| (K::new(i), v));
        f.debug_map().entries(entries).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::VarId;

    #[test]
    fn a_side_table_reads_its_default_until_written_and_grows_on_write() {
        let mut t: SecondaryMap<VarId, u32> = SecondaryMap::new();
        assert_eq!(t[VarId(7)], 0);
        t[VarId(3)] += 2;
        assert_eq!((t[VarId(3)], t[VarId(2)], t[VarId(9)]), (2, 0, 0));
        let mut flags = SecondaryMap::with_default(true);
        flags[VarId(1)] = false;
        assert!(flags[VarId(0)] && !flags[VarId(1)] && flags[VarId(5)]);
        // Made with room: the same reads, and writes past the room grow it.
        let mut sized: SecondaryMap<VarId, u32> = SecondaryMap::with_len(4, 7);
        sized[VarId(2)] = 1;
        sized[VarId(6)] = 3;
        assert_eq!([2, 3, 5, 6, 9].map(|i| sized[VarId(i)]), [1, 7, 7, 3, 7]);
    }
}
