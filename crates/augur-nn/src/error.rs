//! Shape errors as data: what `augur::Error::Dsl` carries when a layer's
//! tensors do not fit (`augur::Error::dsl_error::<ShapeError>()`).

use std::fmt;

/// Tensors whose shapes a layer cannot take. The extraction ends with
/// `augur::Error::Dsl` at the user's line, which gives it back with
/// `dsl_error::<ShapeError>()`.
///
/// ```
/// use augur::{Builder, Dyn};
/// use augur_nn::{Net, ShapeError};
///
/// #[augur::staged]
/// fn wrong_weights() {
///     let r = Builder::new().extract("bad", |x: Dyn<*mut f32>, w: Dyn<*mut f32>| {
///         let net = Net::new();
///         let (x, w) = (net.tensor_on([4], x), net.tensor_on([2, 3], w));
///         net.fully_connected(&x, &w);
///     });
///     let e = r.map(|_| ()).unwrap_err();
///     let Some(ShapeError::FullyConnected { weights, x }) = e.dsl_error::<ShapeError>() else {
///         panic!("{e}")
///     };
///     assert_eq!((&weights[..], &x[..]), (&[2, 3][..], &[4][..]));
/// }
/// # wrong_weights();
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ShapeError {
    /// `conv1d` needs 1-D `x` and `w` with `1 <= len(w) <= len(x)`.
    Conv1d {
        /// The input's shape.
        x: Vec<usize>,
        /// The filter's shape.
        w: Vec<usize>,
    },
    /// A `conv2d` filter larger than its input (or empty).
    Conv2d {
        /// The input's shape.
        x: Vec<usize>,
        /// The filter's shape.
        w: Vec<usize>,
    },
    /// A layer that takes a 2-D tensor given another.
    NotMatrix {
        /// The layer (`conv2d`, `fully_connected`).
        layer: &'static str,
        /// The tensor's shape.
        shape: Vec<usize>,
    },
    /// A fully connected layer's input whose length is not the weights'
    /// second dimension.
    FullyConnected {
        /// The weights' shape `(M, N)`.
        weights: Vec<usize>,
        /// The input's shape.
        x: Vec<usize>,
    },
    /// A bias of another shape than the tensor it is added to.
    BiasAdd {
        /// The bias's shape.
        bias: Vec<usize>,
        /// The tensor's shape.
        tensor: Vec<usize>,
    },
    /// A tensor with more elements than the generated code's `int32_t`
    /// indices reach (2^31 - 1).
    TooLarge {
        /// Its shape.
        shape: Vec<usize>,
    },
}

impl fmt::Display for ShapeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ShapeError::Conv1d { x, w } => write!(
                f,
                "nn: conv1d: needs 1-D x and w with 1 <= len(w) <= len(x), got {x:?} and {w:?}"
            ),
            ShapeError::Conv2d { x, w } => {
                write!(f, "nn: conv2d: filter {w:?} does not fit input {x:?}")
            }
            ShapeError::NotMatrix { layer, shape } => {
                write!(f, "nn: {layer}: needs a 2-D tensor, got {shape:?}")
            }
            ShapeError::FullyConnected { weights, x } => write!(
                f,
                "nn: fully_connected: weights {weights:?} need an input of {}, got {x:?}",
                weights.get(1).copied().unwrap_or_default()
            ),
            ShapeError::BiasAdd { bias, tensor } => {
                write!(f, "nn: bias_add: bias {bias:?} for a tensor {tensor:?}")
            }
            ShapeError::TooLarge { shape } => write!(
                f,
                "nn: a tensor of shape {shape:?} has more than 2^31 - 1 elements"
            ),
        }
    }
}

impl std::error::Error for ShapeError {}
