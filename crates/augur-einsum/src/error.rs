//! Shape errors as data: what `augur::Error::Dsl` carries when a tensor or
//! a statement does not fit (`augur::Error::dsl_error::<ShapeError>()`).

use std::fmt;

/// A tensor or a statement whose shapes do not fit. The extraction ends
/// with `augur::Error::Dsl` at the user's line, which gives it back with
/// `dsl_error::<ShapeError>()`.
///
/// ```
/// use augur::{Builder, Dyn};
/// use augur_einsum::{Config, Einsum, ShapeError};
///
/// #[augur::staged]
/// fn transpose_in_place() {
///     let r = Builder::new().extract("bad", |x: Dyn<*mut f32>| {
///         let ein = Einsum::new(Config::cpu());
///         let (i, j) = (ein.index("i"), ein.index("j"));
///         let m = ein.tensor_on::<f32>("M", [2, 3], x);
///         m.at([i, j]).set(m.at([j, i])); // a transpose in place
///         ein.finish();
///     });
///     let e = r.map(|_| ()).unwrap_err();
///     match e.dsl_error::<ShapeError>() {
///         Some(ShapeError::Extents { index, first, second, .. }) => {
///             assert_eq!((*index, first.extent, second.extent), ("j", 3, 2));
///         }
///         other => panic!("{other:?}"),
///     }
/// }
/// # transpose_in_place();
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ShapeError {
    /// `T.at(..)` with another number of indices than `T` has dimensions.
    Rank {
        /// The tensor.
        tensor: String,
        /// Its shape.
        shape: Vec<usize>,
        /// The indices it was given.
        indices: Vec<&'static str>,
    },
    /// A tensor with more elements than the generated code's `int32_t`
    /// indices reach (2^31 - 1).
    TooLarge {
        /// The tensor.
        tensor: String,
        /// Its shape.
        shape: Vec<usize>,
    },
    /// An index of a statement that indexes dimensions of two extents.
    Extents {
        /// The statement (`C[i][j] = ...`).
        statement: String,
        /// The index.
        index: &'static str,
        /// The first dimension it indexes.
        first: Dim,
        /// A later dimension of another extent.
        second: Dim,
    },
    /// An index of the right side that indexes no tensor of the statement,
    /// so has no extent.
    Unbound {
        /// The statement.
        statement: String,
        /// The index.
        index: &'static str,
    },
    /// The right side reads the written tensor at other positions than the
    /// statement writes: elements would be read after they are overwritten.
    Overwritten {
        /// The statement.
        statement: String,
        /// The access read (`S[j][i]`).
        read: String,
        /// The access written (`S[i][j]`).
        written: String,
    },
    /// An index whose generated loop, stepping by `step`, would overflow
    /// `int32_t` on its last step.
    TooLong {
        /// The index.
        index: &'static str,
        /// Its extent.
        extent: usize,
        /// What the loop adds each turn (the grid's size on the GPU).
        step: i32,
    },
    /// A distributed tensor or statement the ranks cannot run as written
    /// ([`Einsum::distribute`](crate::Einsum::distribute)).
    Distribution {
        /// The tensor or statement.
        what: String,
        /// What does not fit, and what to do instead.
        problem: String,
    },
}

/// A dimension of a tensor: where an index got its extent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dim {
    /// The tensor.
    pub tensor: String,
    /// Which dimension (0 first).
    pub dimension: usize,
    /// Its extent.
    pub extent: usize,
}

impl fmt::Display for ShapeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("einsum: ")?;
        match self {
            ShapeError::Rank {
                tensor,
                shape,
                indices,
            } => write!(
                f,
                "`{tensor}` has {} dimension{} (shape {shape:?}) but is indexed with {} ({})",
                shape.len(),
                if shape.len() == 1 { "" } else { "s" },
                indices.len(),
                indices.join(", "),
            ),
            ShapeError::TooLarge { tensor, shape } => write!(
                f,
                "tensor `{tensor}` of shape {shape:?} has more than 2^31 - 1 elements"
            ),
            ShapeError::Extents {
                statement,
                index,
                first,
                second,
            } => write!(
                f,
                "index `{index}` is bound to {} by {first} and to {} by {second}, in `{statement}`",
                first.extent, second.extent
            ),
            ShapeError::Unbound { statement, index } => write!(
                f,
                "index `{index}` has no range: it indexes no tensor of the statement, \
                 in `{statement}`"
            ),
            ShapeError::Overwritten {
                statement,
                read,
                written,
            } => write!(
                f,
                "the right side reads `{read}` while the statement writes `{written}`: \
                 elements would be read after they are overwritten; compute into another \
                 tensor, in `{statement}`"
            ),
            ShapeError::TooLong {
                index,
                extent,
                step,
            } => write!(
                f,
                "index `{index}` runs to {extent}, too close to 2^31 for loops that step by {step}"
            ),
            ShapeError::Distribution { what, problem } => write!(f, "{problem}, in `{what}`"),
        }
    }
}

impl fmt::Display for Dim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "dimension {} of `{}`", self.dimension, self.tensor)
    }
}

impl std::error::Error for ShapeError {}
