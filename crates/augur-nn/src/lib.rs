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
//! let ex = Builder::new()
//!     .extract("layer", |x: Dyn<*mut f32>, w: Dyn<*mut f32>, y: Dyn<*mut f32>| {
//!         let net = Net::new();
//!         let x = net.tensor_on([8], x);
//!         let w = net.tensor_on([3], w);
//!         let c = net.conv1d(&x, &w);
//!         let r = net.relu(c, 1.5);
//!         net.copy_to(&r, y);
//!         net.free(r);
//!     })
//!     .unwrap();
//! let c = ex.c_code();
//! // One pass: the ReLU is applied where the convolution writes.
//! assert_eq!(c.matches("for (").count(), 2, "{c}"); // interior, wrap-around tail
//! assert!(c.contains(">= 1.5f"), "{c}");
//! ```

#![warn(missing_docs)]

mod net;
mod ops;
pub mod programs;
mod tensor;

pub use net::{Epilogue, Net, Next};
pub use tensor::Tensor;
