//! # augur-nn: a neural-network DSL that fuses by prophecy
//!
//! A network is ordinary Rust code calling [`Net`]'s layers, with any
//! control flow, dyn branches on runtime values included. Convolutions and
//! fully connected layers apply the ReLU (and the bias add) that follow
//! them as they write, in one pass, exactly when every path agrees on what
//! follows: a prophecy per producer ("the next operation is this ReLU")
//! and a history ("the last operation was a producer") decide it, as in
//! the paper's §4.4.
//!
//! ```
//! use augur::{Builder, Dyn};
//! use augur_nn::Net;
//!
//! // Code that runs while augur stages (the closure handed to `extract`)
//! // is written in a `#[augur::staged]` function.
//! #[augur::staged]
//! fn fused_layer() {
//!     let ex = Builder::new()
//!         .extract("layer", |x: Dyn<*mut f32>, w: Dyn<*mut f32>, y: Dyn<*mut f32>| {
//!             let net = Net::new();
//!             let x = net.tensor_on([8], x);
//!             let w = net.tensor_on([3], w);
//!             let c = net.conv1d(&x, &w);
//!             let r = net.relu(c, 1.5);
//!             net.copy_to(&r, y);
//!             net.free(r);
//!         })
//!         .unwrap();
//!     let c = ex.c_code();
//!     // One pass: the ReLU is applied where the convolution writes.
//!     assert_eq!(c.matches("for (").count(), 2, "{c}"); // interior, wrap-around tail
//!     assert!(c.contains(">= 1.5f"), "{c}");
//! }
//! # fused_layer();
//! ```

//!
//! ## Layers
//!
//! [`Net::conv1d`] (wrap-around, as in the paper), [`Net::conv2d`] (valid),
//! [`Net::fully_connected`], [`Net::bias_add`], [`Net::relu`] (with a
//! threshold); tensors over the caller's buffers ([`Net::tensor_on`]) or
//! allocated ([`Net::alloc`], [`Net::free`]); [`Net::copy_to`] and
//! [`Net::data`] for results. Sizes are first-stage values: filters of up
//! to 32 taps are unrolled with their taps in locals, and the 1-D
//! convolution's `%` only runs in a tail of `k - 1` outputs. Tensors a
//! layer cannot take end the extraction with `augur::Error::Dsl`, whose
//! `dsl_error::<`[`ShapeError`]`>()` says which, as data.
//!
//! ## Fusion
//!
//! A producer's prophecy ([`Next`], a `Flat<Epilogue>`) predicts its
//! immediate follower on every path: `Exactly(Relu(t))` fuses the ReLU,
//! `Exactly(Bias(b))` the bias add (and then a second prophecy predicts
//! what follows the bias add, so conv + bias + ReLU is one loop);
//! different thresholds, a non-pointwise follower on some path, or reading
//! the tensor (`data`, `copy_to`) make it `Conflict`: unfused. The history
//! is the `Net`'s "last operation was this producer", a field of its
//! `augur::dsl::State` whose call site tags see (`augur::dsl::Seen`), so
//! that a network inside a dyn loop keeps its loop.
//! `Net::with_fusion(false)` gives the baseline.
//!
//! The paper's conv/ReLU benchmark (fused and unfused, beside the C BuildIt
//! generates for it) and its first stage are measured by the `augur`
//! command: `cargo run --release -p augur-cli -- bench fusion`
//! (`first-stage`, `paper`).

#![warn(missing_docs)]

mod error;
mod net;
mod ops;
mod tensor;

pub use error::ShapeError;
pub use net::{Epilogue, Net, Next};
pub use tensor::Tensor;
