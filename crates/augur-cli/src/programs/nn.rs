//! The nn DSL's benchmark programs: the paper's conv/ReLU (§4.4 and its
//! supplementary listing), one layer and the listing's whole benchmark.

use augur::{Builder, Dyn, ExternFn, Extracted, Result};
use augur_nn::Net;

/// One convolution + ReLU: `fn(input, filter) -> output` (a `malloc`ed
/// buffer the caller frees).
pub type ConvRelu = unsafe extern "C" fn(*mut f32, *mut f32) -> *mut f32;

/// The threshold of the listing's "Optimized" loop.
pub const THRESHOLD: f32 = 1.56;

/// `relu(conv1d(input, filter), THRESHOLD)` for an `n`-element input and a
/// `k`-tap filter (first-stage sizes), fused or not. The output buffer is
/// handed to the caller.
#[augur::staged]
pub fn conv_relu(n: usize, k: usize, fusion: bool) -> Result<Extracted<ConvRelu>> {
    let name = format!(
        "conv_relu_{}_{n}x{k}",
        if fusion { "fused" } else { "unfused" }
    );
    Builder::new().extract(&name, move |x: Dyn<*mut f32>, w: Dyn<*mut f32>| {
        let net = Net::with_fusion(fusion);
        let x = net.tensor_on([n], x);
        let w = net.tensor_on([k], w);
        let c = net.conv1d(&x, &w);
        let r = net.relu(c, THRESHOLD);
        net.data(&r)
    })
}

const START: ExternFn<fn()> = ExternFn::new("start_time");
const END: ExternFn<fn()> = ExternFn::new("end_time");
const CONSUME: ExternFn<fn(*mut f32)> = ExternFn::new("consume_tensor");

/// The listing's whole `benchmark` function: ten timed turns of conv +
/// ReLU whose threshold depends on a runtime flag (2.0 or 4.0: not fused),
/// then ten with one threshold (fused). For first-stage measurements.
#[augur::staged]
pub fn paper_benchmark(builder: &Builder, n: usize, k: usize) -> Result<Extracted<PaperFn>> {
    paper_benchmark_with(builder, n, k, true)
}

/// [`paper_benchmark`] with fusion on or off (the paper's "fusion
/// disabled" column of its first-stage table).
#[augur::staged]
pub fn paper_benchmark_with(
    builder: &Builder,
    n: usize,
    k: usize,
    fusion: bool,
) -> Result<Extracted<PaperFn>> {
    builder.extract(
        "benchmark",
        move |x: Dyn<*mut f32>, w: Dyn<*mut f32>, small_t: Dyn<bool>| {
            let net = Net::with_fusion(fusion);
            let x = net.tensor_on([n], x);
            let w = net.tensor_on([k], w);
            augur::libc::PUTS.call(Dyn::str("Baseline:"));
            let i = Dyn::new(0i32);
            while i.lt(10).is_true() {
                START.call();
                let c = net.conv1d(&x, &w);
                let out = if small_t.is_true() {
                    net.relu(c, 2.0)
                } else {
                    // A different threshold on the other path: not fused.
                    net.relu(c, 4.0)
                };
                END.call();
                CONSUME.call(net.data(&out));
                net.free(out);
                i.set(i + 1);
            }
            augur::libc::PUTS.call(Dyn::str("Optimized:"));
            let i = Dyn::new(0i32);
            while i.lt(10).is_true() {
                START.call();
                let c = net.conv1d(&x, &w);
                let out = net.relu(c, THRESHOLD);
                END.call();
                CONSUME.call(net.data(&out));
                net.free(out);
                i.set(i + 1);
            }
        },
    )
}

/// [`paper_benchmark`]'s compiled type.
pub type PaperFn = unsafe extern "C" fn(*mut f32, *mut f32, bool);
