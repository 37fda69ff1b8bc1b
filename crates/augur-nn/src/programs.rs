//! The paper's conv/ReLU benchmark (§4.4 and its supplementary listing),
//! and the code BuildIt generates for it, for side-by-side measurements.

use crate::Net;
use augur::{Builder, Dyn, ExternFn, Extracted, Result};

/// One convolution + ReLU: `fn(input, filter) -> output` (a `malloc`ed
/// buffer the caller frees).
pub type ConvRelu = unsafe extern "C" fn(*mut f32, *mut f32) -> *mut f32;

/// The threshold of the listing's "Optimized" loop.
pub const THRESHOLD: f32 = 1.56;

/// `relu(conv1d(input, filter), THRESHOLD)` for an `n`-element input and a
/// `k`-tap filter (first-stage sizes), fused or not. The output buffer is
/// handed to the caller.
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

/// The C BuildIt generates for the listing's convolution and ReLU (its
/// `convolve` and `relu` with the sizes as constants, as its code
/// generator prints them), as `buildit_conv_relu_{fused,unfused}`
/// functions of the [`ConvRelu`] type. The listing allocates the output
/// with `malloc` (and never frees it; the benchmark harness does).
pub fn buildit_c(n: usize, k: usize) -> String {
    format!(
        r#"#include <stdlib.h>
float *buildit_conv_relu_fused(float *arg0, float *arg1) {{
  float *var0 = (float *)malloc({bytes});
  for (int var1 = 0; var1 < {n}; var1 = var1 + 1) {{
    float var2 = 0;
    for (int var3 = 0; var3 < {k}; var3 = var3 + 1) {{
      var2 = var2 + arg0[(var1 + var3) % {n}] * arg1[var3];
    }}
    if (var2 < {t:?}f) {{
      var2 = 0;
    }}
    var0[var1] = var2;
  }}
  return var0;
}}
float *buildit_conv_relu_unfused(float *arg0, float *arg1) {{
  float *var0 = (float *)malloc({bytes});
  for (int var1 = 0; var1 < {n}; var1 = var1 + 1) {{
    float var2 = 0;
    for (int var3 = 0; var3 < {k}; var3 = var3 + 1) {{
      var2 = var2 + arg0[(var1 + var3) % {n}] * arg1[var3];
    }}
    var0[var1] = var2;
  }}
  for (int var4 = 0; var4 < {n}; var4 = var4 + 1) {{
    if (var0[var4] >= {t:?}f) {{
      var0[var4] = var0[var4];
    }} else {{
      var0[var4] = 0;
    }}
  }}
  return var0;
}}
"#,
        bytes = n * 4,
        t = THRESHOLD
    )
}

const START: ExternFn<fn()> = ExternFn::new("start_time");
const END: ExternFn<fn()> = ExternFn::new("end_time");
const CONSUME: ExternFn<fn(*mut f32)> = ExternFn::new("consume_tensor");

/// The listing's whole `benchmark` function: ten timed turns of conv +
/// ReLU whose threshold depends on a runtime flag (2.0 or 4.0: not fused),
/// then ten with one threshold (fused). For first-stage measurements.
pub fn paper_benchmark(builder: &Builder, n: usize, k: usize) -> Result<Extracted<PaperFn>> {
    paper_benchmark_with(builder, n, k, true)
}

/// [`paper_benchmark`] with fusion on or off (the paper's "fusion
/// disabled" column of its first-stage table).
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
