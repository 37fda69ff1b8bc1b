//! The paper's conv/ReLU table (§4.4): 1-D convolution then ReLU, inputs of
//! 10240, 102400 and 1024000 floats, filters of 3 and 9 taps, fused and
//! unfused, constant and random inputs. Beside ours: the C BuildIt
//! generates for the same program, compiled with the same compiler and
//! flags in the same run, and the paper's figures (i9-12900HK).
//!
//! ## Recorded (2-core x86-64, gcc -O3, one run)
//!
//! µs, minimum of 10 runs; "BuildIt" is [`buildit_c`], compiled and timed
//! in the same run:
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

use super::{us, Ctx, Outcome};
use crate::programs::nn::{conv_relu, ConvRelu, THRESHOLD};
use crate::report::{Cell, Plot, Table};
use crate::Result;
use augur::exec::compile::{compile, CompileOptions, DEFAULT_FLAGS};
use augur_rng::Rng;
use std::time::{Duration, Instant};

/// The paper's table: (n, k, unfused µs, fused µs).
pub const PAPER: [(usize, usize, u32, u32); 6] = [
    (10240, 3, 26, 25),
    (102400, 3, 267, 243),
    (1024000, 3, 2594, 2341),
    (10240, 9, 76, 73),
    (102400, 9, 770, 742),
    (1024000, 9, 7953, 7451),
];

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

/// gcc -O3, as for the paper's measurements.
pub fn o3() -> CompileOptions {
    CompileOptions {
        flags: DEFAULT_FLAGS
            .iter()
            .map(|f| if *f == "-O2" { "-O3" } else { f }.to_string())
            .collect(),
        ..CompileOptions::default()
    }
}

extern "C" {
    #[link_name = "free"]
    fn libc_free(p: *mut f32);
}

/// The minimum time of `runs` calls and the output of the last.
/// The minimum time of `runs` calls of `f` and the output of the last.
/// `f` must have been generated for `x.len()` inputs and `w.len()` taps
/// (every caller passes the buffers of the sizes it staged).
fn time_conv(
    f: ConvRelu,
    x: &mut [f32],
    w: &mut [f32],
    runs: usize,
) -> Result<(Duration, Vec<f32>)> {
    let mut best = Duration::MAX;
    let mut out = Vec::new();
    for _ in 0..runs {
        let t = Instant::now();
        // SAFETY: x holds the input length and w the filter length the
        // function was generated for; it returns a malloc'ed buffer of
        // x.len() floats (or NULL when malloc fails, checked below).
        let p = unsafe { f(x.as_mut_ptr(), w.as_mut_ptr()) };
        best = best.min(t.elapsed());
        if p.is_null() {
            return Err(format!("conv/ReLU over {} floats: malloc failed", x.len()).into());
        }
        // SAFETY: p is a non-null malloc'ed buffer of x.len() floats, read
        // once and freed exactly once.
        unsafe {
            out = std::slice::from_raw_parts(p, x.len()).to_vec();
            libc_free(p);
        }
    }
    Ok((best, out))
}

/// One row's four timings (µs): BuildIt unfused, fused, ours unfused, fused.
pub(crate) fn measure_row(n: usize, k: usize, random: bool, runs: usize) -> Result<[f64; 4]> {
    let (buildit, [ou, of]) = measure(n, k, random, runs, true)?;
    let [bu, bf] = buildit.expect("BuildIt's C measured");
    Ok([bu, bf, ou, of])
}

/// Timings (µs) of BuildIt's C unfused and fused (when `buildit`: it
/// needs a C compiler), then ours unfused and fused (compiled with
/// [`o3`]: by cc when there is one, else by the JIT). Every version's
/// output is compared with the others'.
pub(crate) fn measure(
    n: usize,
    k: usize,
    random: bool,
    runs: usize,
    buildit: bool,
) -> Result<(Option<[f64; 2]>, [f64; 2])> {
    let mut rng = Rng(42);
    let mut x: Vec<f32> = (0..n)
        .map(|_| {
            if random {
                rng.unit_f32() * 2.0 - 1.0
            } else {
                1.0
            }
        })
        .collect();
    let mut w: Vec<f32> = (0..k).map(|j| 0.75 - 0.5 * j as f32 / k as f32).collect();
    let ou = conv_relu(n, k, false)?.compile_with(&o3())?;
    let of = conv_relu(n, k, true)?.compile_with(&o3())?;
    let mut fns = vec![ou.get(), of.get()];
    let lib = if buildit {
        let lib = compile(&buildit_c(n, k), &o3())?;
        // SAFETY: both are `float *f(float *, float *)` as `buildit_c` writes them.
        fns.push(unsafe { lib.symbol("buildit_conv_relu_unfused") }?);
        // SAFETY: as above.
        fns.push(unsafe { lib.symbol("buildit_conv_relu_fused") }?);
        Some(lib)
    } else {
        None
    };
    let mut results = Vec::new();
    let mut times = Vec::new();
    for f in fns {
        let (t, r) = time_conv(f, &mut x, &mut w, runs)?;
        times.push(us(t));
        results.push(r);
    }
    drop(lib);
    if results.windows(2).any(|p| p[0] != p[1]) {
        return Err(format!("conv/ReLU {n} × {k}: the versions disagree").into());
    }
    let buildit = buildit.then(|| [times[2], times[3]]);
    Ok((buildit, [times[0], times[1]]))
}

/// Runs the experiment.
pub fn run(ctx: &Ctx) -> Result<Outcome> {
    let runs = ctx.reps(10);
    let cases: Vec<_> = PAPER
        .iter()
        .filter(|p| !ctx.quick || p.0 == 10240)
        .flat_map(|&p| [(p, false), (p, true)])
        .collect();
    let mut t = Table::new(
        "conv-relu",
        &format!("Conv/ReLU, µs (minimum of {runs} runs; gcc -O3 for both; paper: i9-12900HK)"),
        &[
            "input",
            "filter",
            "data",
            "BuildIt unfused",
            "BuildIt fused",
            "ours unfused",
            "ours fused",
            "BuildIt / ours (fused)",
            "paper unfused",
            "paper fused",
        ],
    );
    let bar = ctx.bar(cases.len(), "conv/relu");
    let mut fused = Vec::new();
    for ((n, k, pu, pf), random) in cases {
        bar.set_message(format!("{n} × {k}"));
        let [bu, bf, ou, of] = measure_row(n, k, random, runs)?;
        t.push(vec![
            n.into(),
            k.into(),
            if random { "random" } else { "constant" }.into(),
            Cell::float(bu, 0),
            Cell::float(bf, 0),
            Cell::float(ou, 0),
            Cell::float(of, 0),
            Cell::float(bf / of, 1),
            i64::from(pu).into(),
            i64::from(pf).into(),
        ]);
        if !random {
            fused.push((format!("{n}×{k}"), bf, of, f64::from(pf)));
        }
        bar.inc(1);
    }
    bar.finish_and_clear();
    t.note("all four versions' outputs are compared element by element in every row");
    let cats: Vec<String> = fused.iter().map(|f| f.0.clone()).collect();
    let at = |i: usize, v: f64| (i as f64, v);
    let plot = Plot::bars(
        "fused",
        "Fused conv+ReLU, µs (log scale; constant input)",
        &cats,
        "µs",
    )
    .log(false, true)
    .series("augur", fused.iter().enumerate().map(|(i, f)| at(i, f.2)))
    .series(
        "BuildIt's C, same compiler",
        fused.iter().enumerate().map(|(i, f)| at(i, f.1)),
    )
    .series(
        "paper (i9-12900HK)",
        fused.iter().enumerate().map(|(i, f)| at(i, f.3)),
    );
    Ok(Outcome {
        tables: vec![t],
        plots: vec![plot],
    })
}
