//! Convolution/ReLU fusion with a prophecy variable: the paper's neural
//! network fusion benchmark (§ "Neural Network Operation Fusion" and its
//! supplementary listing), as a small DSL written here.
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

mod common;

use augur::prophecy::{Flat, Prophecy};
use augur::{Builder, Dyn, Extracted, ProphecyMode, Static};
use common::{check, count, Buf};
use std::cell::Cell;
use std::hint::black_box;
use std::panic::Location;

// ---------------------------------------------------------------------------
// The DSL
// ---------------------------------------------------------------------------

/// The convolution's taps. First-stage constants, so the tap loop unrolls
/// and each pass over a tensor is exactly one C loop (loops in the C count
/// passes). Powers of two: with inputs that are multiples of 1/16, every
/// product and sum is exact, so bit-for-bit comparison with Rust cannot be
/// upset by a C compiler that contracts `a + b * c` into a fused
/// multiply-add.
const FILTER: [f32; 3] = [0.5, -0.25, 1.0];

/// The paper's threshold (Figure "BuildIt Code for Convolution Followed by
/// ReLU").
const T: f32 = 1.35;

/// The factor of `scale`, the pointwise operation that is not a ReLU.
const S: f32 = 1.5;

/// What a prophecy of "the operations after this convolution" holds.
type Next = Flat<f32>;

/// The DSL's first-stage state: the history "the last operation was a
/// convolution", as the handle of that convolution's prophecy (`None`
/// otherwise). It is a plain Rust value re-made by every run, so it is
/// path-sensitive like the paper's `static_var<bool> is_last_convolution`;
/// unlike that one it is not part of tags (but see `site`).
#[derive(Default)]
struct Net {
    last_conv: Option<Prophecy<Next>>,
    /// Only in [`Net::tagged`]: which convolution `last_conv` is (its call
    /// site), mirrored in a `Static` so that tags see it. Needed where the
    /// state crosses a dyn loop's back edge and decides what a turn emits
    /// (`state_across_a_back_edge`); a plain value there is invisible to
    /// the engine (`bug_first_turn_flag_in_a_dyn_loop_never_closes`).
    site: Option<Static<Option<&'static Location<'static>>>>,
}

/// `v > t ? v : 0`, as a dyn branch.
#[track_caller]
fn relu_of(v: Dyn<f32>, t: f32) -> Dyn<f32> {
    Dyn::if_else(v.gt(t), || v, || Dyn::lit(0.0))
}

// Every operation is `#[track_caller]`, so the prophecies are created and
// required at the user's lines: that is what `explain` reports.
impl Net {
    /// A `Net` whose state is also part of every tag (see `site`).
    fn tagged() -> Net {
        Net {
            last_conv: None,
            site: Some(Static::new(None)),
        }
    }

    /// Called on entry to every operation: if a convolution came just
    /// before, tell its prophecy what follows it (`Exactly(t)` for a ReLU
    /// with threshold `t`, `Conflict` for anything else), and forget it:
    /// only the *immediate* follower counts. Returns the prophecy so that a
    /// ReLU can see whether it was fused.
    #[track_caller]
    fn follow(&mut self, me: Next) -> Option<Prophecy<Next>> {
        let p = self.last_conv.take()?;
        if let Some(site) = &mut self.site {
            site.set(None);
        }
        p.require(me);
        Some(p)
    }

    /// `y[i] = sum_j x[i + j] * FILTER[j]` for `i < n` (`x` holds `n + 2`
    /// values); with the ReLU applied as it writes when the prophecy says
    /// every follower is one ReLU threshold.
    #[track_caller]
    fn conv(&mut self, x: Dyn<*mut f32>, y: Dyn<*mut f32>, n: Dyn<i32>) {
        self.follow(Flat::Conflict);
        let next = Prophecy::named("after conv", Flat::Unknown);
        let fused = next.get().exactly().copied();
        let i = Dyn::new(0);
        while i.lt(n).is_true() {
            let sum = Dyn::new(0.0f32);
            for (j, &w) in FILTER.iter().enumerate() {
                sum.set(sum + x.at(i + j as i32) * w);
            }
            let out = match fused {
                Some(t) => relu_of(sum, t),
                None => sum,
            };
            y.at(i).set(out);
            i.set(i + 1);
        }
        self.last_conv = Some(next);
        if let Some(site) = &mut self.site {
            site.set(Some(Location::caller()));
        }
    }

    /// `y[i] = y[i] > t ? y[i] : 0` in place, or nothing when the
    /// convolution just before already applied exactly this ReLU.
    #[track_caller]
    fn relu(&mut self, y: Dyn<*mut f32>, n: Dyn<i32>, t: f32) {
        if let Some(p) = self.follow(Flat::Exactly(t)) {
            // Within an attempt every read agrees with the conv's read, so
            // "fused there" and "skipped here" cannot disagree.
            if p.get() == Flat::Exactly(t) {
                return;
            }
        }
        let i = Dyn::new(0);
        while i.lt(n).is_true() {
            y.at(i).set(relu_of(y.at(i), t));
            i.set(i + 1);
        }
    }

    /// `y[i] *= s` in place: pointwise, but not a ReLU, so a convolution
    /// just before it must not fuse.
    #[track_caller]
    fn scale(&mut self, y: Dyn<*mut f32>, n: Dyn<i32>, s: f32) {
        self.follow(Flat::Conflict);
        let i = Dyn::new(0);
        while i.lt(n).is_true() {
            y.at(i).set(y.at(i) * s);
            i.set(i + 1);
        }
    }

    /// The network's output is consumed: the end of the program follows
    /// the last operation too. Without this, a convolution followed by a
    /// ReLU on one path and by nothing on another would fuse, and the
    /// other path would get a ReLU it never asked for.
    #[track_caller]
    fn finish(&mut self) {
        self.follow(Flat::Conflict);
    }
}

// ---------------------------------------------------------------------------
// The plain-Rust meaning
// ---------------------------------------------------------------------------

fn conv_ref(x: &[f32], y: &mut [f32], n: usize) {
    for i in 0..n {
        let mut sum = 0.0f32;
        for (j, w) in FILTER.iter().enumerate() {
            sum += x[i + j] * w;
        }
        y[i] = sum;
    }
}

fn relu_ref(y: &mut [f32], t: f32) {
    for v in y {
        *v = if *v > t { *v } else { 0.0 };
    }
}

fn scale_ref(y: &mut [f32], s: f32) {
    for v in y {
        *v *= s;
    }
}

// ---------------------------------------------------------------------------
// Inputs and checks
// ---------------------------------------------------------------------------

/// `len` values in [-4, 4], multiples of 1/16 (exact arithmetic, see
/// `FILTER`), from a small LCG so that inputs differ per `seed`.
fn signal(len: usize, seed: u32) -> Vec<f32> {
    let mut s = seed.wrapping_mul(2_654_435_761).wrapping_add(12_345);
    (0..len)
        .map(|_| {
            s = s.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            ((s >> 16) % 129) as f32 / 16.0 - 4.0
        })
        .collect()
}

/// An output buffer whose old contents show if a position is not written
/// (or written where the reference does not).
fn garbage(len: usize) -> Buf<f32> {
    Buf(vec![-7.0; len])
}

/// The host arguments: `x`, `y`, `n`.
type Plain = (Buf<f32>, Buf<f32>, i32);
/// `x`, `y`, `n` and the branch condition.
type Branch = (Buf<f32>, Buf<f32>, i32, bool);
/// `x`, `y`, `n` and the number of batches.
type Batches = (Buf<f32>, Buf<f32>, i32, i32);
/// `x`, `y`, `z`, `n`: two layers.
type TwoLayers = (Buf<f32>, Buf<f32>, Buf<f32>, i32);

/// Tensor sizes checked: empty, one element, and a few longer.
const SIZES: [usize; 5] = [0, 1, 4, 9, 33];

/// `(x, y, n)`: `x` holds `n + 2` values, `y` gets `n`.
fn plain_inputs() -> Vec<Plain> {
    SIZES
        .iter()
        .enumerate()
        .map(|(k, &n)| (Buf(signal(n + 2, k as u32)), garbage(n), n as i32))
        .collect()
}

/// `(x, y, n, c)` with both outcomes of the branch `c` for every size.
fn branch_inputs() -> Vec<Branch> {
    plain_inputs()
        .into_iter()
        .flat_map(|(x, y, n)| [(x.clone(), y.clone(), n, true), (x, y, n, false)])
        .collect()
}

/// Passes over tensors: loops in the C.
fn loops(code: &str) -> usize {
    count(code, "for (") + count(code, "while (")
}

/// The final values of the extraction's prophecies, in creation order.
fn prophecies<S: Copy>(ex: &Extracted<S>) -> Vec<String> {
    ex.explain().cells.iter().map(|c| c.value.clone()).collect()
}

/// The line of this file holding `// <tag>` (exactly one must), for
/// checking the locations `explain` names. The marker is built at run time
/// so that this function's callers do not match it themselves.
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

type Ptr = Dyn<*mut f32>;

/// The paper's program: a convolution, then `relu(1.35)`.
fn conv_relu(x: Ptr, y: Ptr, n: Dyn<i32>) {
    let mut net = Net::default();
    net.conv(x, y, n);
    net.relu(y, n, T);
    net.finish();
}

fn conv_relu_ref((x, y, n): &mut Plain) {
    conv_ref(&x.0, &mut y.0, *n as usize);
    relu_ref(&mut y.0, T);
}

/// Both arms of a dyn branch apply the same ReLU. The arms are identical
/// Rust but distinct program points, each requiring the prophecy.
#[allow(clippy::if_same_then_else)]
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

fn different_threshold_ref((x, y, n, c): &mut Branch) {
    conv_ref(&x.0, &mut y.0, *n as usize);
    relu_ref(&mut y.0, if *c { 2.0 } else { 4.0 });
}

/// One arm applies a ReLU, the other scales.
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
// 5: dyn loops over batches
// ---------------------------------------------------------------------------

/// `(x, y, n, batches)`: batch `b` reads `x[b * (n + 2)..]` and writes
/// `y[b * n..]`.
fn batch_inputs() -> Vec<Batches> {
    [(0, 3), (5, 0), (1, 1), (4, 2), (7, 3), (3, 5)]
        .iter()
        .enumerate()
        .map(|(k, &(n, batches)): (usize, &(usize, usize))| {
            (
                Buf(signal((n + 2) * batches, 100 + k as u32)),
                garbage(n * batches),
                n as i32,
                batches as i32,
            )
        })
        .collect()
}

/// The network in a dyn loop's body: the body's prophecy is one for all
/// turns, every turn follows its conv with `relu(1.35)`, so it fuses; and
/// since the DSL state is back to "no conv" at the end of each turn the
/// loop closes at once: one batch loop around one fused pass, no peeled
/// copy.
#[test]
fn network_in_a_batch_loop_fuses() {
    let ex = common::check_modes(
        "batches",
        |x: Ptr, y: Ptr, n: Dyn<i32>, batches: Dyn<i32>| {
            let mut net = Net::default();
            let b = Dyn::new(0);
            while b.lt(batches).is_true() {
                let (xb, yb) = (x.offset(b * (n + 2)), y.offset(b * n));
                net.conv(xb, yb, n);
                net.relu(yb, n, T);
                b.set(b + 1);
            }
            net.finish();
        },
        |(x, y, n, batches): &mut Batches| {
            let n = *n as usize;
            for b in 0..*batches as usize {
                conv_ref(&x.0[b * (n + 2)..], &mut y.0[b * n..], n);
                relu_ref(&mut y.0[b * n..(b + 1) * n], T);
            }
        },
        &batch_inputs(),
    )
    .paper;
    let code = ex.c_code();
    assert_eq!(loops(&code), 2, "batch loop + one fused pass:\n{code}");
    assert_eq!(count(&code, "> 1.35f"), 1, "{code}");
    assert_eq!(count(&code, "* 0.5f"), 1, "conv body copied:\n{code}");
    assert_eq!(prophecies(&ex), ["Exactly(1.35)"]);
}

/// The DSL state crosses a dyn loop's back edge. The ReLU at the top of
/// the body follows the conv made before the loop on the first turn (only
/// ever followed by that ReLU: fused) and the body's conv or a scale on
/// later turns (the body's conv is sometimes followed by a scale: not
/// fused). So the first turn emits no ReLU and later turns do, at the same
/// program points: the state must be in the tags (`Net::tagged`) for the
/// engine to tell the turns apart. The loop must still close: one copy of
/// each conv.
#[test]
fn state_across_a_back_edge() {
    let ex = common::check_modes(
        "back_edge",
        |x: Ptr, y: Ptr, n: Dyn<i32>, batches: Dyn<i32>| {
            let mut net = Net::tagged();
            net.conv(x, y, n);
            let b = Dyn::new(0);
            loop {
                net.relu(y.offset(b * n), n, T);
                b.set(b + 1);
                if b.ge(batches).is_true() {
                    break;
                }
                let yb = y.offset(b * n);
                net.conv(x.offset(b * (n + 2)), yb, n);
                if (b & 1).eq(0).is_true() {
                    net.scale(yb, n, S);
                }
            }
            net.finish();
        },
        |(x, y, n, batches): &mut Batches| {
            let n = *n as usize;
            // The body runs at least once: batch 0 always exists.
            for b in 0..(*batches).max(1) as usize {
                let yb = b * n..(b + 1) * n;
                conv_ref(&x.0[b * (n + 2)..], &mut y.0[yb.clone()], n);
                if b % 2 == 0 && b > 0 {
                    scale_ref(&mut y.0[yb.clone()], S);
                }
                relu_ref(&mut y.0[yb], T);
            }
        },
        &batch_inputs()
            .into_iter()
            .filter(|(_, _, _, b)| *b > 0)
            .collect::<Vec<_>>(),
    )
    .paper;
    let code = ex.c_code();
    assert_eq!(prophecies(&ex), ["Exactly(1.35)", "Conflict"]);
    assert_eq!(count(&code, "* 0.5f"), 2, "a conv copied:\n{code}");
}

/// Found with the fusion DSL (`state_across_a_back_edge` with an untagged
/// `Net::default()`): a dyn loop whose first turn differs from later ones
/// because of a plain first-stage value (`first` here; "the last conv was
/// fused" in the DSL), with an operation before the difference in the body.
/// Under `#[augur::staged]` the `let mut` is tracked: the first turn is
/// peeled and the loop closes.
#[augur::staged]
fn first_turn_flag(y: Ptr, batches: Dyn<i32>) {
    let mut first = true;
    let b = Dyn::new(0);
    loop {
        let v = b * 2;
        if !first {
            y.at(v).set(1.0);
        }
        first = false;
        b.set(b + 1);
        if b.ge(batches).is_true() {
            break;
        }
    }
}

#[test]
fn first_turn_flag_in_a_dyn_loop_peels_the_first_turn() {
    let ex = check(
        "first_turn_flag",
        first_turn_flag,
        |(y, batches): &mut (Buf<f32>, i32)| {
            for b in 1..*batches as usize {
                y.0[2 * b] = 1.0;
            }
        },
        &(0..6).map(|b| (garbage(12), b)).collect::<Vec<_>>(),
    );
    assert_eq!(loops(&ex.c_code()), 1, "{}", ex.c_code());
}

/// The same flag in a `Cell`, which no attribute sees: at the second turn
/// `v = b * 2` is met again with the same content, replaying the cycle finds
/// the store the first turn lacked, and the loop unrolls until a limit. The
/// error says why and what makes the state visible.
#[test]
fn first_turn_flag_in_a_cell_is_a_clear_error() {
    let err = Builder::new()
        .max_runs(500)
        .extract("first_turn_cell", |y: Ptr, batches: Dyn<i32>| {
            // Behind `black_box`: else release builds peel the first turn
            // and the peeled copy has tags of its own, hiding the case.
            let first = Cell::new(true);
            let first = black_box(&first);
            let b = Dyn::new(0);
            loop {
                let v = b * 2;
                if !first.get() {
                    y.at(v).set(1.0);
                }
                first.set(false);
                b.set(b + 1);
                if b.ge(batches).is_true() {
                    break;
                }
            }
        })
        .unwrap_err();
    let m = err.to_string();
    assert!(
        m.contains("#[augur::staged]") && m.contains("Static"),
        "{m}"
    );
}

// ---------------------------------------------------------------------------
// 6: one conv line, several convolutions
// ---------------------------------------------------------------------------

/// A layer of the network, written once: its conv line makes a different
/// prophecy for each call path.
fn layer(net: &mut Net, x: Ptr, y: Ptr, n: Dyn<i32>) {
    net.conv(x, y, n);
}

/// `(x, y, z, n)`: `x` holds `n + 4` values, `y` gets `n + 2`, `z` gets `n`.
fn two_layer_inputs() -> Vec<TwoLayers> {
    SIZES
        .iter()
        .enumerate()
        .map(|(k, &n)| {
            (
                Buf(signal(n + 4, 200 + k as u32)),
                garbage(n + 2),
                garbage(n),
                n as i32,
            )
        })
        .collect()
}

fn two_layer_ref((x, y, z, n): &mut TwoLayers) {
    let n = *n as usize;
    conv_ref(&x.0, &mut y.0, n + 2);
    relu_ref(&mut y.0, T);
    conv_ref(&y.0, &mut z.0, n);
    scale_ref(&mut z.0, S);
}

/// The helper is called twice, followed by a ReLU the first time and a
/// scale the second: two prophecies, fused once and plain once (one shared
/// prophecy would end `Conflict` and fuse neither).
#[test]
fn helper_called_twice_gets_two_prophecies() {
    let ex = common::check_modes(
        "two_layers",
        |x: Ptr, y: Ptr, z: Ptr, n: Dyn<i32>| {
            let mut net = Net::default();
            layer(&mut net, x, y, n + 2);
            net.relu(y, n + 2, T);
            layer(&mut net, y, z, n);
            net.scale(z, n, S);
            net.finish();
        },
        two_layer_ref,
        &two_layer_inputs(),
    )
    .paper;
    let code = ex.c_code();
    assert_eq!(prophecies(&ex), ["Exactly(1.35)", "Conflict"]);
    assert_eq!(loops(&code), 3, "fused conv, plain conv, scale:\n{code}");
    assert_eq!(count(&code, "> 1.35f"), 1, "{code}");
}

/// The same network with its layers in a plain Rust loop: the module docs
/// promise one prophecy per turn of a plain loop ("one made in a plain loop
/// over tensors is one per tensor"). Each conv's dyn loop runs between two
/// creations, so this rests on the engine detecting the plain loop (`len`
/// differs per turn) and salting the creation keys.
#[test]
fn plain_loop_over_layers_gets_one_prophecy_per_layer() {
    let ex = common::check_modes(
        "layer_loop",
        |x: Ptr, y: Ptr, z: Ptr, n: Dyn<i32>| {
            let mut net = Net::default();
            let bufs = [x, y, z];
            for l in 0..2 {
                let len = n + (2 - 2 * l);
                net.conv(bufs[l as usize], bufs[l as usize + 1], len);
                if l == 0 {
                    net.relu(bufs[1], len, T);
                } else {
                    net.scale(bufs[2], len, S);
                }
            }
            net.finish();
        },
        two_layer_ref,
        &two_layer_inputs(),
    )
    .paper;
    let code = ex.c_code();
    assert_eq!(loops(&code), 3, "fused conv, plain conv, scale:\n{code}");
    assert_eq!(count(&code, "> 1.35f"), 1, "{code}");
    // Only the cells the final attempt used (see
    // `explain_leaves_out_cells_orphaned_by_a_loop_restart`).
    let live: Vec<&str> = ex
        .explain()
        .cells
        .iter()
        .map(|c| c.value.as_str())
        .collect();
    assert_eq!(live, ["Exactly(1.35)", "Conflict"], "{}", ex.explain());
}

/// A plain Rust loop around a dyn loop, making one prophecy per turn. The
/// first attempt makes the cell of turn 0 under its unsalted key; when the
/// plain loop is detected (`len` is the same point with different content
/// after a decision) the restart salts every later key, turn 0's prophecy
/// included, so it is made again under a new key. The report and the count
/// hold only the cells the final attempt used: 2, not 3.
#[test]
fn explain_leaves_out_cells_orphaned_by_a_loop_restart() {
    let ex = common::extract("orphan", |n: Dyn<i32>| {
        let r = Dyn::new(0);
        // `black_box`: else release builds unroll the loop, and each copy
        // has tags of its own.
        for k in 0..black_box(2) {
            let len = n + k;
            let used = Prophecy::new(false);
            if used.get() {
                r.set(r + len);
            }
            let i = Dyn::new(0);
            while i.lt(len).is_true() {
                i.set(i + 1);
            }
            used.require(true);
        }
        r
    });
    assert_eq!(ex.explain().cells.len(), 2, "{}", ex.explain());
    assert_eq!(ex.stats().prophecies, 2, "{:?}", ex.stats());
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
