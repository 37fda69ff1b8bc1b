//! The convolution/ReLU fusion DSL of the fusion tests (the paper's neural
//! network fusion benchmark): `Net`, whose convolutions make a
//! `Prophecy<Flat<f32>>` of the operations that follow them, its plain-Rust
//! meaning, and the inputs and code measures the tests share.
#![allow(dead_code)]

use crate::common::{count, Buf};
use augur::prophecy::{Flat, Prophecy};
use augur::{Dyn, Extracted, Static};
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
pub const FILTER: [f32; 3] = [0.5, -0.25, 1.0];

/// The paper's threshold (Figure "BuildIt Code for Convolution Followed by
/// ReLU").
pub const T: f32 = 1.35;

/// The factor of `scale`, the pointwise operation that is not a ReLU.
pub const S: f32 = 1.5;

/// What a prophecy of "the operations after this convolution" holds.
pub type Next = Flat<f32>;

/// The DSL's first-stage state: the history "the last operation was a
/// convolution", as the handle of that convolution's prophecy (`None`
/// otherwise). It is a plain Rust value re-made by every run, so it is
/// path-sensitive like the paper's `static_var<bool> is_last_convolution`;
/// which convolution it is (`site`) is mirrored in a `Static`, so that
/// tags see it.
pub struct Net {
    pub last_conv: Option<Prophecy<Next>>,
    /// Which convolution `last_conv` is (its call site), mirrored in a
    /// `Static` so that tags see it. Needed where the state crosses a dyn
    /// loop's back edge and decides what a turn emits
    /// (`state_across_a_back_edge`); a plain value there is invisible to
    /// the engine (`bug_first_turn_flag_in_a_dyn_loop_never_closes`), and
    /// under `#[augur::staged]` a `let mut net` that changes is then one
    /// whose paths share no code.
    pub site: Option<Static<Option<&'static Location<'static>>>>,
}

impl Default for Net {
    fn default() -> Net {
        Net::tagged()
    }
}

// What decides the code after an operation, which convolution came last,
// is in `site`.
impl augur::dsl::Visible for Net {}

// Every operation is `#[track_caller]`, so the prophecies are created and
// required at the user's lines: that is what `explain` reports.
impl Net {
    /// A `Net` whose state is also part of every tag (see `site`).
    #[augur::staged]
    pub fn tagged() -> Net {
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
    #[augur::staged]
    pub fn follow(&mut self, me: Next) -> Option<Prophecy<Next>> {
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
    #[augur::staged]
    pub fn conv(&mut self, x: Dyn<*mut f32>, y: Dyn<*mut f32>, n: Dyn<i32>) {
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
    #[augur::staged]
    pub fn relu(&mut self, y: Dyn<*mut f32>, n: Dyn<i32>, t: f32) {
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
    #[augur::staged]
    pub fn scale(&mut self, y: Dyn<*mut f32>, n: Dyn<i32>, s: f32) {
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
    #[augur::staged]
    pub fn finish(&mut self) {
        self.follow(Flat::Conflict);
    }
}

/// `v > t ? v : 0`, as a dyn branch.
#[track_caller]
#[augur::staged]
pub fn relu_of(v: Dyn<f32>, t: f32) -> Dyn<f32> {
    Dyn::if_else(v.gt(t), || v, || Dyn::lit(0.0))
}

// ---------------------------------------------------------------------------
// The plain-Rust meaning
// ---------------------------------------------------------------------------

#[augur::staged]
pub fn conv_ref(x: &[f32], y: &mut [f32], n: usize) {
    for i in 0..n {
        let mut sum = 0.0f32;
        for (j, w) in FILTER.iter().enumerate() {
            sum += x[i + j] * w;
        }
        y[i] = sum;
    }
}

#[augur::staged]
pub fn relu_ref(y: &mut [f32], t: f32) {
    for v in y {
        *v = if *v > t { *v } else { 0.0 };
    }
}

#[augur::staged]
pub fn scale_ref(y: &mut [f32], s: f32) {
    for v in y {
        *v *= s;
    }
}

// ---------------------------------------------------------------------------
// Inputs and checks
// ---------------------------------------------------------------------------

/// `len` values in [-4, 4], multiples of 1/16 (exact arithmetic, see
/// `FILTER`), from a small LCG so that inputs differ per `seed`.
#[augur::staged]
pub fn signal(len: usize, seed: u32) -> Vec<f32> {
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
#[augur::staged]
pub fn garbage(len: usize) -> Buf<f32> {
    Buf(vec![-7.0; len])
}

/// The host arguments: `x`, `y`, `n`.
pub type Plain = (Buf<f32>, Buf<f32>, i32);
/// `x`, `y`, `n` and the branch condition.
pub type Branch = (Buf<f32>, Buf<f32>, i32, bool);
/// `x`, `y`, `n` and the number of batches.
pub type Batches = (Buf<f32>, Buf<f32>, i32, i32);
/// `x`, `y`, `z`, `n`: two layers.
pub type TwoLayers = (Buf<f32>, Buf<f32>, Buf<f32>, i32);

/// Tensor sizes checked: empty, one element, and a few longer.
pub const SIZES: [usize; 5] = [0, 1, 4, 9, 33];

/// `(x, y, n)`: `x` holds `n + 2` values, `y` gets `n`.
#[augur::staged]
pub fn plain_inputs() -> Vec<Plain> {
    SIZES
        .iter()
        .enumerate()
        .map(|(k, &n)| (Buf(signal(n + 2, k as u32)), garbage(n), n as i32))
        .collect()
}

/// `(x, y, n, c)` with both outcomes of the branch `c` for every size.
#[augur::staged]
pub fn branch_inputs() -> Vec<Branch> {
    plain_inputs()
        .into_iter()
        .flat_map(|(x, y, n)| [(x.clone(), y.clone(), n, true), (x, y, n, false)])
        .collect()
}

/// Passes over tensors: loops in the C.
#[augur::staged]
pub fn loops(code: &str) -> usize {
    count(code, "for (") + count(code, "while (")
}

/// The final values of the extraction's prophecies, in creation order.
#[augur::staged]
pub fn prophecies<S: Copy>(ex: &Extracted<S>) -> Vec<String> {
    ex.explain().cells.iter().map(|c| c.value.clone()).collect()
}

/// A staged pointer to `f32`s.
pub type Ptr = Dyn<*mut f32>;
