//! Indices: the names of loop dimensions in einsum statements.

/// An index such as `i` in `C[i][j] = A[i][k] * B[k][j]`.
///
/// An index has no range of its own: each statement binds it to the extent
/// of the tensor dimensions it indexes (all must agree). Indices on the
/// right that are not on the left are reduced over. Make them with
/// [`Einsum::index`](crate::Einsum::index).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Index {
    pub(crate) id: u32,
    pub(crate) name: &'static str,
}

impl Index {
    /// The name it was made with (also the loop variable's name in the C).
    pub fn name(self) -> &'static str {
        self.name
    }
}

/// The indices of one access, in order (`A[i][k]` gives `[i, k]`).
pub(crate) fn dedup(indices: impl IntoIterator<Item = Index>) -> Vec<Index> {
    let mut out: Vec<Index> = Vec::new();
    for i in indices {
        if !out.contains(&i) {
            out.push(i);
        }
    }
    out
}
