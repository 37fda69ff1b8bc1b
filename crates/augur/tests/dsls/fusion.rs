//! Convolution/ReLU fusion with a prophecy variable: the paper's neural
//! network fusion benchmark (§ "Neural Network Operation Fusion" and its
//! supplementary listing), as a small DSL written in `fusion_dsl/`.
//!
//! A convolution must decide, while it generates its loop, whether to apply
//! a ReLU as it writes: only the operations after it know. Each convolution
//! therefore makes a `Prophecy<Flat<f32>>`, "every operation that
//! immediately follows me is a ReLU with this threshold", and each later
//! operation checks the guess. Control flow is what makes this hard: the
//! follower may differ per path, and fusing is right only when it is a
//! ReLU with one threshold on every path.
//!
//! Every program is checked by the differential harness (C, interpreter and
//! plain Rust agree on at least five inputs) in both prophecy modes, which
//! must generate the same C.
//!
//! This file: straight-line code and one dyn branch, the two prophecy
//! modes, the paper's benchmark and what `explain` reports. Dyn loops over
//! batches are in `fusion_batch_loops.rs`, several convolutions from one
//! conv line in `fusion_layers.rs`.

use crate::common;
use crate::fusion_dsl;

use augur::{Builder, Dyn, ProphecyMode};
use common::count;
use fusion_dsl::{
    branch_inputs, conv_ref, garbage, loops, plain_inputs, prophecies, relu_ref, scale_ref, Branch,
    Net, Plain, Ptr, S, T,
};

/// The line of this file holding `// <tag>` (exactly one must), for
/// checking the locations `explain` names. The marker is built at run time
/// so that this function's callers do not match it themselves.
#[augur::staged]
fn line_of(tag: &str) -> u32 {
    let marker = format!("// <{tag}>");
    let src = include_str!("fusion.rs");
    let hits: Vec<usize> = src
        .lines()
        .enumerate()
        .filter(|(_, l)| l.contains(&marker))
        .map(|(i, _)| i + 1)
        .collect();
    assert_eq!(hits.len(), 1, "marker {marker} in fusion.rs: {hits:?}");
    hits[0] as u32
}

// ---------------------------------------------------------------------------
// The programs (named functions, so that tests can share them)
// ---------------------------------------------------------------------------

/// The paper's program: a convolution, then `relu(1.35)`.
#[augur::staged]
fn conv_relu(x: Ptr, y: Ptr, n: Dyn<i32>) {
    let mut net = Net::default();
    net.conv(x, y, n);
    net.relu(y, n, T);
    net.finish();
}

#[augur::staged]
fn conv_relu_ref((x, y, n): &mut Plain) {
    conv_ref(&x.0, &mut y.0, *n as usize);
    relu_ref(&mut y.0, T);
}

/// Both arms of a dyn branch apply the same ReLU. The arms are identical
/// Rust but distinct program points, each requiring the prophecy.
#[allow(clippy::if_same_then_else)]
#[augur::staged]
fn same_threshold_arms(x: Ptr, y: Ptr, n: Dyn<i32>, c: Dyn<bool>) {
    let mut net = Net::default();
    net.conv(x, y, n);
    if c.is_true() {
        net.relu(y, n, T);
    } else {
        net.relu(y, n, T);
    }
    net.finish();
}

/// The arms' ReLUs have different thresholds: no single one to fuse.
#[augur::staged]
fn different_threshold_arms(x: Ptr, y: Ptr, n: Dyn<i32>, c: Dyn<bool>) {
    let mut net = Net::default();
    net.conv(x, y, n);
    if c.is_true() {
        net.relu(y, n, 2.0); // <relu-small>
    } else {
        net.relu(y, n, 4.0); // <relu-large>
    }
    net.finish();
}

#[augur::staged]
fn different_threshold_ref((x, y, n, c): &mut Branch) {
    conv_ref(&x.0, &mut y.0, *n as usize);
    relu_ref(&mut y.0, if *c { 2.0 } else { 4.0 });
}

/// One arm applies a ReLU, the other scales.
#[augur::staged]
fn relu_or_scale(x: Ptr, y: Ptr, n: Dyn<i32>, c: Dyn<bool>) {
    let mut net = Net::default();
    net.conv(x, y, n);
    if c.is_true() {
        net.relu(y, n, T);
    } else {
        net.scale(y, n, S);
    }
    net.finish();
}

#[augur::staged]
fn relu_or_scale_ref((x, y, n, c): &mut Branch) {
    conv_ref(&x.0, &mut y.0, *n as usize);
    if *c {
        relu_ref(&mut y.0, T);
    } else {
        scale_ref(&mut y.0, S);
    }
}

// ---------------------------------------------------------------------------
// 1-4: straight-line code and one dyn branch
// ---------------------------------------------------------------------------

/// The paper's program fuses: one pass over the tensor, whose ReLU uses
/// the threshold, and no second ReLU loop.
#[test]
#[augur::staged]
fn conv_then_relu_fuses() {
    let ex = common::check_modes("conv_relu", conv_relu, conv_relu_ref, &plain_inputs()).paper;
    let code = ex.c_code();
    assert_eq!(loops(&code), 1, "not fused:\n{code}");
    assert_eq!(count(&code, "> 1.35f"), 1, "ReLU not in the pass:\n{code}");
    assert_eq!(prophecies(&ex), ["Exactly(1.35)"]);
}

/// Both arms follow the conv with `relu(1.35)`: the prophecy joins to one
/// threshold on every path, so the conv fuses and neither arm emits a loop.
#[test]
#[augur::staged]
fn same_threshold_in_both_arms_fuses() {
    let ex = common::check_modes(
        "same_threshold_arms",
        same_threshold_arms,
        |(x, y, n, _): &mut Branch| {
            conv_ref(&x.0, &mut y.0, *n as usize);
            relu_ref(&mut y.0, T);
        },
        &branch_inputs(),
    )
    .paper;
    let code = ex.c_code();
    assert_eq!(loops(&code), 1, "not fused:\n{code}");
    assert_eq!(count(&code, "> 1.35f"), 1, "{code}");
    assert_eq!(prophecies(&ex), ["Exactly(1.35)"]);
}

/// Thresholds 2 and 4 on the two arms (the paper's "baseline" loop): the
/// prophecy ends `Conflict`, the conv is plain and each arm keeps its own
/// ReLU pass; both branch outcomes are checked.
#[test]
#[augur::staged]
fn different_thresholds_do_not_fuse() {
    let ex = common::check_modes(
        "different_threshold_arms",
        different_threshold_arms,
        different_threshold_ref,
        &branch_inputs(),
    )
    .paper;
    let code = ex.c_code();
    assert_eq!(loops(&code), 3, "conv + two ReLU passes expected:\n{code}");
    assert_eq!(count(&code, "> 2.0f"), 1, "{code}");
    assert_eq!(count(&code, "> 4.0f"), 1, "{code}");
    // A conv fused with the smaller threshold would give the same results
    // (ReLUs compose to the larger threshold): look at the code as well.
    assert_eq!(count(&code, " > "), 2, "the conv applies a ReLU:\n{code}");
    assert_eq!(prophecies(&ex), ["Conflict"]);
}

/// A ReLU on one arm and a scale on the other: no fusion (fusing would
/// ReLU the scaled arm).
#[test]
#[augur::staged]
fn relu_or_scale_does_not_fuse() {
    let ex = common::check_modes(
        "relu_or_scale",
        relu_or_scale,
        relu_or_scale_ref,
        &branch_inputs(),
    )
    .paper;
    let code = ex.c_code();
    assert_eq!(
        loops(&code),
        3,
        "conv, ReLU and scale passes expected:\n{code}"
    );
    assert_eq!(count(&code, " > "), 1, "the conv applies a ReLU:\n{code}");
    assert_eq!(prophecies(&ex), ["Conflict"]);
}

/// A ReLU on one arm and nothing on the other before the output is
/// consumed: `finish` counts as a non-ReLU follower, so no fusion.
#[test]
#[augur::staged]
fn relu_on_one_path_only_does_not_fuse() {
    let ex = common::check_modes(
        "relu_on_one_path",
        |x: Ptr, y: Ptr, n: Dyn<i32>, c: Dyn<bool>| {
            let mut net = Net::default();
            net.conv(x, y, n);
            if c.is_true() {
                net.relu(y, n, T);
            }
            net.finish();
        },
        |(x, y, n, c): &mut Branch| {
            conv_ref(&x.0, &mut y.0, *n as usize);
            if *c {
                relu_ref(&mut y.0, T);
            }
        },
        &branch_inputs(),
    )
    .paper;
    let code = ex.c_code();
    assert_eq!(loops(&code), 2, "{code}");
    assert_eq!(prophecies(&ex), ["Conflict"]);
}

// ---------------------------------------------------------------------------
// 7-8: modes and reports
// ---------------------------------------------------------------------------

/// The paper's program in both modes: the same C (also checked for every
/// program above by `check_modes`), and one restart either way: the conv
/// reads `Unknown`, the ReLU requires `Exactly(1.35)` of a value already
/// read. Paper mode restarts at once, collect mode at the end of the sweep.
/// Run with `--nocapture` for the numbers.
#[test]
#[augur::staged]
fn modes_same_code_and_restarts() {
    let mut codes = Vec::new();
    for mode in [ProphecyMode::Paper, ProphecyMode::Collect] {
        let b = Builder::new().prophecy_mode(mode);
        let ex = common::extract_with(&b, "conv_relu", conv_relu);
        let s = ex.stats();
        println!(
            "{mode:?}: prophecy_restarts {}, attempts {}, runs {} \
             (per attempt {:?}, total {}, check runs {})",
            s.prophecy_restarts, s.attempts, s.runs, s.runs_per_attempt, s.total_runs, s.check_runs
        );
        assert_eq!(s.prophecy_restarts, 1, "{mode:?}: {s:?}");
        assert_eq!(s.attempts, 2, "{mode:?}: {s:?}");
        assert_eq!(s.prophecies, 1, "{mode:?}: {s:?}");
        let deferred = ex.explain().cells[0].joins.iter().any(|j| j.deferred);
        assert_eq!(deferred, mode == ProphecyMode::Collect, "{}", ex.explain());
        codes.push(ex.c_code());
    }
    assert_eq!(codes[0], codes[1]);
}

/// The paper's whole benchmark (supplementary listing, `benchmark`): a
/// "baseline" dyn loop whose conv is followed by `relu(2.0)` or `relu(4.0)`
/// depending on a dyn flag (not fused), then an "optimized" dyn loop of
/// conv + `relu(1.56)` (fused). Baseline results go to `y[0..n]`, optimized
/// ones to `y[n..2n]`.
#[augur::staged]
fn benchmark(x: Ptr, y: Ptr, n: Dyn<i32>, small_t: Dyn<bool>) {
    let mut net = Net::default();
    let i = Dyn::new(0);
    while i.lt(10).is_true() {
        net.conv(x, y, n);
        if small_t.is_true() {
            net.relu(y, n, 2.0);
        } else {
            net.relu(y, n, 4.0);
        }
        i.set(i + 1);
    }
    let out = y.offset(n);
    let i = Dyn::new(0);
    while i.lt(10).is_true() {
        net.conv(x, out, n);
        net.relu(out, n, 1.56);
        i.set(i + 1);
    }
    net.finish();
}

#[augur::staged]
fn benchmark_ref((x, y, n, small_t): &mut Branch) {
    let n = *n as usize;
    conv_ref(&x.0, &mut y.0[..n], n);
    relu_ref(&mut y.0[..n], if *small_t { 2.0 } else { 4.0 });
    conv_ref(&x.0, &mut y.0[n..], n);
    relu_ref(&mut y.0[n..], 1.56);
}

/// The paper reports 4 prophecy-variable runs for its benchmark. Paper
/// mode takes 4 attempts too: the first loop's conv is violated twice
/// (`Exactly(2.0)`, then `Conflict`), the second loop's once, each
/// restarting at once. Collect mode joins all three in its first sweep: 2
/// attempts. Same C either way.
#[test]
#[augur::staged]
fn paper_benchmark_program() {
    let ex = common::check_modes(
        "benchmark",
        benchmark,
        benchmark_ref,
        &branch_inputs()
            .into_iter()
            .map(|(x, _, n, c)| (x, garbage(2 * n as usize), n, c))
            .collect::<Vec<_>>(),
    )
    .paper;
    let code = ex.c_code();
    assert_eq!(prophecies(&ex), ["Conflict", "Exactly(1.56)"]);
    // Two batch loops; the first holds a plain conv and two ReLU passes,
    // the second one fused pass.
    assert_eq!(loops(&code), 6, "{code}");
    assert_eq!(count(&code, " > "), 3, "{code}");
    for (mode, attempts) in [(ProphecyMode::Paper, 4), (ProphecyMode::Collect, 2)] {
        let b = Builder::new().prophecy_mode(mode);
        let ex = common::extract_with(&b, "benchmark", benchmark);
        let s = ex.stats();
        println!(
            "benchmark, {mode:?}: prophecy_restarts {}, attempts {}, runs {} \
             (per attempt {:?}, total {})",
            s.prophecy_restarts, s.attempts, s.runs, s.runs_per_attempt, s.total_runs
        );
        assert_eq!(s.attempts, attempts, "{mode:?}: {s:?}\n{}", ex.explain());
        assert_eq!(s.prophecy_restarts, attempts - 1, "{mode:?}: {s:?}");
    }
}

/// Why the conv of `different_threshold_arms` is not fused: `explain`
/// names both ReLU calls (the DSL is `#[track_caller]`) and the final
/// value `Conflict`.
#[test]
#[augur::staged]
fn explain_names_both_relus() {
    let ex = common::check_modes(
        "different_threshold_arms",
        different_threshold_arms,
        different_threshold_ref,
        &branch_inputs(),
    )
    .paper;
    let text = ex.explain().to_string();
    println!("{text}");
    for tag in ["relu-small", "relu-large"] {
        let at = format!("{}:{}:", file!(), line_of(tag));
        assert!(text.contains(&at), "{tag} ({at}) not named:\n{text}");
    }
    assert!(
        text.contains(": Conflict\n"),
        "final value not Conflict:\n{text}"
    );
    let cell = ex
        .explain()
        .find("after conv")
        .expect("the conv's prophecy");
    assert_eq!(cell.value, "Conflict");
    assert_eq!(
        cell.joins.last().map(|j| j.value.as_str()),
        Some("Conflict")
    );
    let lines: Vec<u32> = cell.sites.iter().map(|s| s.line).collect();
    assert!(
        lines.contains(&line_of("relu-small")) && lines.contains(&line_of("relu-large")),
        "{lines:?}\n{text}"
    );
}
