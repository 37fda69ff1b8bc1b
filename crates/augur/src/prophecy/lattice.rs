//! The [`Lattice`] trait, its laws, and a checker for them.

use std::fmt::Debug;

/// The values a [`Prophecy`](super::Prophecy) or [`History`](super::History)
/// can take: a join-semilattice, ordered by how much is known or required.
///
/// The paper calls the two operations `check` and `merge`:
///
/// * [`satisfies`](Lattice::satisfies): does the current value already
///   satisfy this requirement (is it at least as high)?
/// * [`join`](Lattice::join): raise the value to the least value that
///   satisfies both what it was and the requirement.
///
/// # Laws
///
/// For all values `a`, `b`, `c` (write `a ⊒ b` for `a.satisfies(&b)` and
/// `a ⊔ b` for the value of `a` after `a.join(&b)`):
///
/// 1. **reflexive**: `a ⊒ a`;
/// 2. **transitive**: `a ⊒ b` and `b ⊒ c` imply `a ⊒ c`;
/// 3. **upper bound**: `a ⊔ b ⊒ a` and `a ⊔ b ⊒ b` (a join never loses
///    what the value was, and always meets the requirement);
/// 4. **least**: if `c ⊒ a` and `c ⊒ b` then `c ⊒ a ⊔ b` (a join adds no
///    more than it must, which is what makes the result the *least*
///    prediction that holds, as in the paper);
/// 5. **finite height**: every chain `a ⊏ a ⊔ b₁ ⊏ a ⊔ b₁ ⊔ b₂ ⊏ …` is
///    finite, so the restarts of an extraction end.
///
/// The engine checks law 3 at every join and stops with
/// [`Error::Lattice`](crate::Error::Lattice) when it fails; a lattice that
/// keeps growing (law 5) stops at [`Builder::max_prophecy_restarts`](crate::Builder::max_prophecy_restarts)
/// with the history of every prophecy. [`check_laws`] checks laws 1–4 on
/// sample values: call it from your tests.
///
/// # Built-in lattices
///
/// | lattice | order | use |
/// |---|---|---|
/// | `bool` | `false < true` (the paper's `TrueTop`) | "may happen": tensor may be read |
/// | [`Flat<T>`](super::Flat) | `Unknown < Exactly(v) < Conflict` | "always the same value": the ReLU threshold |
/// | [`Set<T>`](super::Set) | subset | which items: live variables, tensors read |
/// | [`Max<T>`](super::Max) | `Ord` | the largest size needed |
/// | `(A, B)`, `(A, B, C)`, `(A, B, C, D)`, `[L; N]` | componentwise | several facts at once |
///
/// # A lattice of your own
///
/// An interval that widens to hold every required value (finite height
/// because `u8` is finite):
///
/// ```
/// use augur::prophecy::{check_laws, Lattice};
///
/// #[derive(Clone, Copy, Debug, PartialEq)]
/// enum Span {
///     Empty,
///     Range(u8, u8),
/// }
///
/// impl Lattice for Span {
///     fn satisfies(&self, required: &Span) -> bool {
///         match (*self, *required) {
///             (_, Span::Empty) => true,
///             (Span::Empty, _) => false,
///             (Span::Range(a, b), Span::Range(c, d)) => a <= c && d <= b,
///         }
///     }
///     fn join(&mut self, required: &Span) {
///         *self = match (*self, *required) {
///             (x, Span::Empty) | (Span::Empty, x) => x,
///             (Span::Range(a, b), Span::Range(c, d)) => Span::Range(a.min(c), b.max(d)),
///         };
///     }
/// }
///
/// let samples = [Span::Empty, Span::Range(1, 3), Span::Range(2, 9), Span::Range(0, 0)];
/// check_laws(&samples).unwrap();
/// ```
pub trait Lattice: Clone + Debug + 'static {
    /// True when `self` is at least `required` (the paper's `check`).
    fn satisfies(&self, required: &Self) -> bool;

    /// Raises `self` to the least value that satisfies both its old value
    /// and `required` (the paper's `merge`).
    fn join(&mut self, required: &Self);
}

/// Checks laws 1–4 of [`Lattice`] on every pair and triple of `samples`;
/// the error names the law and the values that break it.
///
/// ```
/// use augur::prophecy::{check_laws, Flat};
/// check_laws(&[Flat::Unknown, Flat::Exactly(1), Flat::Exactly(2), Flat::Conflict]).unwrap();
/// ```
pub fn check_laws<L: Lattice>(samples: &[L]) -> Result<(), String> {
    for a in samples {
        if !a.satisfies(a) {
            return Err(format!("not reflexive: {a:?} does not satisfy itself"));
        }
        for b in samples {
            let mut j = a.clone();
            j.join(b);
            if !j.satisfies(a) || !j.satisfies(b) {
                return Err(format!(
                    "not an upper bound: {a:?} joined with {b:?} gives {j:?}, \
                     which does not satisfy both"
                ));
            }
            for c in samples {
                if a.satisfies(b) && b.satisfies(c) && !a.satisfies(c) {
                    return Err(format!(
                        "not transitive: {a:?} satisfies {b:?}, which satisfies {c:?}, \
                         but {a:?} does not satisfy {c:?}"
                    ));
                }
                if c.satisfies(a) && c.satisfies(b) && !c.satisfies(&j) {
                    return Err(format!(
                        "not least: {c:?} satisfies {a:?} and {b:?} but not their join {j:?}"
                    ));
                }
            }
        }
    }
    Ok(())
}
