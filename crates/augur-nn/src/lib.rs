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

//!
//! ## Layers
//!
//! [`Net::conv1d`] (wrap-around, as in the paper), [`Net::conv2d`] (valid),
//! [`Net::fully_connected`], [`Net::bias_add`], [`Net::relu`] (with a
//! threshold); tensors over the caller's buffers ([`Net::tensor_on`]) or
//! allocated ([`Net::alloc`], [`Net::free`]); [`Net::copy_to`] and
//! [`Net::data`] for results. Sizes are first-stage values: filters of up
//! to 32 taps are unrolled with their taps in locals, and the 1-D
//! convolution's `%` only runs in a tail of `k - 1` outputs.
//!
//! ## Fusion
//!
//! A producer's prophecy ([`Next`], a `Flat<Epilogue>`) predicts its
//! immediate follower on every path: `Exactly(Relu(t))` fuses the ReLU,
//! `Exactly(Bias(b))` the bias add (and then a second prophecy predicts
//! what follows the bias add, so conv + bias + ReLU is one loop);
//! different thresholds, a non-pointwise follower on some path, or reading
//! the tensor (`data`, `copy_to`) make it `Conflict`: unfused. The history
//! is the `Net`'s "last operation was this producer", mirrored in a
//! `Static` so that a network inside a dyn loop keeps its loop.
//! `Net::with_fusion(false)` gives the baseline.
//!
//! ## Results (`cargo run --release -p augur-cli -- bench fusion`, 2-core x86-64, gcc -O3, one run)
//!
//! µs, minimum of 10 runs; "BuildIt" is the C BuildIt generates for the
//! listing (`programs::buildit_c`), compiled and timed in the same run:
//!
//! | input × filter | input | BuildIt unfused | BuildIt fused | ours unfused | ours fused | paper unfused | paper fused |
//! |---|---|---:|---:|---:|---:|---:|---:|
//! | 10240 × 3 | constant | 23 | 19 | 2 | 2 | 26 | 25 |
//! | 10240 × 3 | random | 21 | 19 | 2 | 2 | 26 | 25 |
//! | 102400 × 3 | constant | 246 | 201 | 23 | 17 | 267 | 243 |
//! | 102400 × 3 | random | 232 | 206 | 26 | 21 | 267 | 243 |
//! | 1024000 × 3 | constant | 2,495 | 2,058 | 224 | 171 | 2,594 | 2,341 |
//! | 1024000 × 3 | random | 2,335 | 2,069 | 237 | 202 | 2,594 | 2,341 |
//! | 10240 × 9 | constant | 71 | 67 | 5 | 5 | 76 | 73 |
//! | 10240 × 9 | random | 69 | 67 | 5 | 5 | 76 | 73 |
//! | 102400 × 9 | constant | 740 | 696 | 57 | 62 | 770 | 742 |
//! | 102400 × 9 | random | 778 | 697 | 57 | 52 | 770 | 742 |
//! | 1024000 × 9 | constant | 7,544 | 7,070 | 561 | 526 | 7,953 | 7,451 |
//! | 1024000 × 9 | random | 7,653 | 7,033 | 568 | 526 | 7,953 | 7,451 |
//!
//! Fused, ours is 10–13× faster than BuildIt's code for the same program
//! and flags (1024000 × 3: 171 µs against 2,058 µs; a hand-written
//! modulo-free fused loop takes ~280 µs): the unrolled taps and the
//! modulo-free interior let gcc vectorize, and the ReLU is a select. All
//! four versions give identical outputs (checked by the bench). The
//! listing's program leaks its outputs; ours frees them.
//!
//! **First stage** of the listing's whole benchmark (two loops of 10 turns,
//! the first with a flag-dependent threshold;
//! `cargo run --release -p augur-cli -- bench first-stage`): 32 runs (4
//! of them check runs) in 3 attempts, 1.4 ms; in the paper's
//! restart-at-once mode 30 runs in 4 attempts, 1.3 ms. BuildIt (the
//! paper's table): 72 runs + 4 prophecy runs, 14.7 ms.
//!
//! **Size** (lines without blanks and comments): 410, of which the fusion
//! protocol (`net.rs`) is 112 and 27 more in the layers call it: about 64
//! deal with the prophecy or the history. The paper's DSL: 161 and 48; ours
//! adds 2-D convolution, fully connected layers, bias add and its fusion,
//! unrolling and the modulo split, and shape errors.

#![warn(missing_docs)]

mod net;
mod ops;
pub mod programs;
mod tensor;

pub use net::{Epilogue, Net, Next};
pub use tensor::Tensor;
