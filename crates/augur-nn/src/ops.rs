//! The layers: producers (1-D and 2-D convolution, fully connected) that
//! apply fused epilogues as they write, and the pointwise operations (ReLU,
//! bias add) that are fused into them or run as their own pass.
//!
//! Sizes are first-stage values, so the generated loops use them as
//! constants: small filters are unrolled (their taps loaded once into
//! locals) and the 1-D convolution's wrap-around `%` is confined to a
//! short tail loop.

use crate::error::ShapeError;
use crate::net::{Epilogue, Fused, Net};
use crate::tensor::Tensor;
use augur::prophecy::Flat;
use augur::{dsl, Dyn};
use std::panic::Location;

/// Filters with at most this many taps are unrolled.
const UNROLL: usize = 32;

/// `for (v = lo; v < hi; v++) body(v)` as a dyn loop (nothing when empty).
#[augur::staged]
fn dyn_for(name: &str, lo: usize, hi: usize, mut body: impl FnMut(Dyn<i32>)) {
    if lo >= hi {
        return;
    }
    let v = Dyn::named(name, lo as i32);
    while v.lt(hi as i32).is_true() {
        body(v);
        v.set(v + 1);
    }
}

/// `i + j`, or `i` when `j` is 0.
#[augur::staged]
fn offset(i: Dyn<i32>, j: usize) -> Dyn<i32> {
    if j == 0 {
        i
    } else {
        i + j as i32
    }
}

/// `v >= t ? v : 0`, branch-free.
#[augur::staged]
fn relu_of(v: Dyn<f32>, t: f32) -> Dyn<f32> {
    Dyn::select(v.ge(t), v, 0.0f32)
}

/// Applies the fused epilogues to the value for output element `i`.
#[augur::staged]
fn epilogue(mut v: Dyn<f32>, fused: &[Fused], i: Dyn<i32>) -> Dyn<f32> {
    for f in fused {
        v = match *f {
            Fused::Relu(t) => relu_of(v, t),
            Fused::Bias(b) => v + b.at(i),
        };
    }
    v
}

#[track_caller]
#[augur::staged]
fn shape_error(error: ShapeError) -> ! {
    dsl::fail(error, Location::caller())
}

impl Net {
    /// 1-D convolution with wrap-around (the paper's):
    /// `y[i] = sum_j x[(i + j) % n] * w[j]`, `y` of `x`'s length.
    #[track_caller]
    #[augur::staged]
    pub fn conv1d(&self, x: &Tensor, w: &Tensor) -> Tensor {
        self.check_own(x);
        self.check_own(w);
        let (n, k) = (x.len(), w.len());
        if x.shape.len() != 1 || w.shape.len() != 1 || k == 0 || k > n {
            shape_error(ShapeError::Conv1d {
                x: x.shape.clone(),
                w: w.shape.clone(),
            });
        }
        self.follow(Flat::Conflict);
        let y = self.alloc([n]);
        let (pending, fused) = self.predict("conv1d", &y);
        let taps = self.taps(w);
        // Interior: no wrap-around, no `%`.
        dyn_for("i", 0, n - k + 1, |i| {
            let sum = self.dot(x, &taps, w, |j| offset(i, j), |j| i + j);
            y.data.at(i).set(epilogue(sum, &fused, i));
        });
        // The last k - 1 outputs wrap around.
        dyn_for("i", n - k + 1, n, |i| {
            let sum = self.dot(
                x,
                &taps,
                w,
                |j| offset(i, j) % n as i32,
                |j| (i + j) % n as i32,
            );
            y.data.at(i).set(epilogue(sum, &fused, i));
        });
        if let Some(p) = pending {
            self.produced(p);
        }
        y
    }

    /// Valid 2-D convolution: `y[r][c] = sum_{a,b} x[r + a][c + b] * w[a][b]`,
    /// `y` of shape `(h - kh + 1, w - kw + 1)`.
    #[track_caller]
    #[augur::staged]
    pub fn conv2d(&self, x: &Tensor, w: &Tensor) -> Tensor {
        self.check_own(x);
        self.check_own(w);
        let [h, wd] = dims2(x, "conv2d");
        let [kh, kw] = dims2(w, "conv2d");
        if kh == 0 || kw == 0 || kh > h || kw > wd {
            shape_error(ShapeError::Conv2d {
                x: x.shape.clone(),
                w: w.shape.clone(),
            });
        }
        self.follow(Flat::Conflict);
        let (oh, ow) = (h - kh + 1, wd - kw + 1);
        let y = self.alloc([oh, ow]);
        let (pending, fused) = self.predict("conv2d", &y);
        let taps = self.taps(w);
        dyn_for("r", 0, oh, |r| {
            dyn_for("c", 0, ow, |c| {
                let at = |j: usize| (r + (j / kw) as i32) * wd as i32 + c + (j % kw) as i32;
                let sum = self.dot(x, &taps, w, at, |j| {
                    (r + j / kw as i32) * wd as i32 + c + j % kw as i32
                });
                let o = r * ow as i32 + c;
                y.data.at(o).set(epilogue(sum, &fused, o));
            });
        });
        if let Some(p) = pending {
            self.produced(p);
        }
        y
    }

    /// Fully connected: `y[m] = sum_n W[m][n] * x[n]` for `W` of shape
    /// `(M, N)` and `x` of length `N`.
    #[track_caller]
    #[augur::staged]
    pub fn fully_connected(&self, x: &Tensor, weights: &Tensor) -> Tensor {
        self.check_own(x);
        self.check_own(weights);
        let [m, n] = dims2(weights, "fully_connected");
        if x.len() != n {
            shape_error(ShapeError::FullyConnected {
                weights: weights.shape.clone(),
                x: x.shape.clone(),
            });
        }
        self.follow(Flat::Conflict);
        let y = self.alloc([m]);
        let (pending, fused) = self.predict("fully_connected", &y);
        dyn_for("m", 0, m, |o| {
            let sum = Dyn::named("sum", 0.0f32);
            dyn_for("n", 0, n, |q| {
                sum.set(sum + weights.data.at(o * n as i32 + q) * x.data.at(q));
            });
            y.data.at(o).set(epilogue(sum, &fused, o));
        });
        if let Some(p) = pending {
            self.produced(p);
        }
        y
    }

    /// `t[i] = t[i] >= threshold ? t[i] : 0`, in place; nothing when the
    /// producer just before applied it already.
    #[track_caller]
    #[augur::staged]
    pub fn relu(&self, t: Tensor, threshold: f32) -> Tensor {
        self.check_own(&t);
        let me = Epilogue::Relu(threshold.to_bits());
        if let Some(p) = self.follow_on(Flat::Exactly(me), &t) {
            // Within an attempt every read of a prophecy agrees, so "fused
            // there" and "skipped here" cannot disagree.
            if p.next.get() == Flat::Exactly(me) {
                return t;
            }
        }
        dyn_for("i", 0, t.len(), |i| {
            t.data.at(i).set(relu_of(t.data.at(i), threshold))
        });
        t
    }

    /// `t[i] += b[i]`, in place (`b` of `t`'s shape); nothing when the
    /// producer just before added it already, and then the operation after
    /// this one may be fused too.
    #[track_caller]
    #[augur::staged]
    pub fn bias_add(&self, t: Tensor, b: &Tensor) -> Tensor {
        self.check_own(&t);
        self.check_own(b);
        if t.shape != b.shape {
            shape_error(ShapeError::BiasAdd {
                bias: b.shape.clone(),
                tensor: t.shape.clone(),
            });
        }
        let me = Epilogue::Bias(b.id);
        if let Some(p) = self.follow_on(Flat::Exactly(me), &t) {
            if p.fused_bias == Some(b.id) && p.next.get() == Flat::Exactly(me) {
                // Fused: what follows this bias add follows the producer.
                if let Some(after) = p.after_bias {
                    let next = crate::net::Pending {
                        output: t.id,
                        next: after,
                        after_bias: None,
                        fused_bias: None,
                        site: Location::caller(),
                    };
                    self.produced(next);
                }
                return t;
            }
        }
        dyn_for("i", 0, t.len(), |i| {
            t.data.at(i).set(t.data.at(i) + b.data.at(i))
        });
        t
    }

    /// The filter's taps loaded into locals once, when it is small enough
    /// to unroll.
    #[augur::staged]
    fn taps(&self, w: &Tensor) -> Option<Vec<Dyn<f32>>> {
        (w.len() <= UNROLL).then(|| {
            (0..w.len())
                .map(|j| Dyn::named(&format!("w{j}"), w.data.at(j as i32)))
                .collect()
        })
    }

    /// `sum_j x[at(j)] * w[j]`, unrolled over `taps` when there are, else
    /// a loop (`at_dyn` gives the index for a dyn `j`).
    #[augur::staged]
    fn dot(
        &self,
        x: &Tensor,
        taps: &Option<Vec<Dyn<f32>>>,
        w: &Tensor,
        at: impl Fn(usize) -> Dyn<i32>,
        at_dyn: impl Fn(Dyn<i32>) -> Dyn<i32>,
    ) -> Dyn<f32> {
        match taps {
            Some(taps) => {
                let mut sum = x.data.at(at(0)) * taps[0];
                for (j, &wj) in taps.iter().enumerate().skip(1) {
                    // A new value each time: `+=` on a `Dyn` assigns a
                    // variable, and `sum` is an expression.
                    #[allow(clippy::assign_op_pattern)]
                    {
                        sum = sum + x.data.at(at(j)) * wj;
                    }
                }
                sum
            }
            None => {
                let sum = Dyn::named("sum", 0.0f32);
                dyn_for("j", 0, w.len(), |j| {
                    sum.set(sum + x.data.at(at_dyn(j)) * w.data.at(j))
                });
                sum
            }
        }
    }
}

#[track_caller]
#[augur::staged]
fn dims2(t: &Tensor, layer: &'static str) -> [usize; 2] {
    match t.shape[..] {
        [a, b] => [a, b],
        _ => shape_error(ShapeError::NotMatrix {
            layer,
            shape: t.shape.clone(),
        }),
    }
}
