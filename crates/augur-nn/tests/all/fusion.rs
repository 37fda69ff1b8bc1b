//! Fusion: every network is built fused and unfused, compiled (by C and by
//! the JIT) and run on
//! random inputs, and compared with plain Rust; the generated code's shape
//! says whether the ReLU (and bias) went into the producer's loop.
//!
//! Inputs are multiples of 1/16 in [-4, 4), so every product and sum here
//! is exact in `f32` and the comparisons are exact whatever the order.

use augur::exec::{Backend, CompileOptions};
use augur::{Builder, Dyn, Extracted};
use augur_nn::{Net, Tensor};
use augur_rng::Rng;

type Native = unsafe extern "C" fn(*mut f32, *mut f32, *mut f32, *mut f32, i32);
type Body = fn(&Net, &[Tensor; 3], Dyn<*mut f32>, Dyn<i32>);

/// `n` values in `[-4, 4)`, multiples of 1/16: sums of their products stay
/// exact in `f32`, so fused and unfused code must agree to the bit.
#[augur::staged]
fn random_vec(rng: &mut Rng, n: usize) -> Vec<f32> {
    (0..n).map(|_| rng.below(128) as f32 / 16.0 - 4.0).collect()
}

/// A network over x, w, b (shapes given) writing `out` floats to y.
struct Case {
    shapes: [Vec<usize>; 3],
    out: usize,
    body: Body,
    reference: fn(&[Vec<f32>; 3], i32) -> Vec<f32>,
}

impl Case {
    #[augur::staged]
    fn extract(&self, fusion: bool) -> Extracted<Native> {
        let (shapes, body) = (self.shapes.clone(), self.body);
        Builder::new()
            .extract("net", move |x: Dyn<*mut f32>, w, b, y, flag: Dyn<i32>| {
                let net = Net::with_fusion(fusion);
                let ts = [
                    net.tensor_on(&shapes[0], x),
                    net.tensor_on(&shapes[1], w),
                    net.tensor_on(&shapes[2], b),
                ];
                body(&net, &ts, y, flag);
            })
            .unwrap()
    }

    /// Runs fused and unfused on random inputs and both flags; returns the
    /// C of (fused, unfused).
    #[augur::staged]
    fn check(&self) -> (String, String) {
        let (f, u) = (self.extract(true), self.extract(false));
        let (pf, pu) = (f.compile().unwrap(), u.compile().unwrap());
        let jit = CompileOptions::default().with_backend(Backend::Jit);
        let (jf, ju) = (f.compile_with(&jit).unwrap(), u.compile_with(&jit).unwrap());
        let mut rng = Rng(7);
        for round in 0..4 {
            let ins = [
                random_vec(&mut rng, self.shapes[0].iter().product()),
                random_vec(&mut rng, self.shapes[1].iter().product()),
                random_vec(&mut rng, self.shapes[2].iter().product()),
            ];
            for flag in [0, 1] {
                let want = (self.reference)(&ins, flag);
                let builds = [
                    ("fused", &pf),
                    ("unfused", &pu),
                    ("fused (JIT)", &jf),
                    ("unfused (JIT)", &ju),
                ];
                for (name, p) in builds {
                    let mut ins = ins.clone();
                    let mut y = vec![f32::NAN; self.out];
                    // SAFETY: the buffers hold the shapes' element counts.
                    unsafe {
                        (p.get())(
                            ins[0].as_mut_ptr(),
                            ins[1].as_mut_ptr(),
                            ins[2].as_mut_ptr(),
                            y.as_mut_ptr(),
                            flag,
                        )
                    };
                    assert_eq!(
                        y,
                        want,
                        "{name}, round {round}, flag {flag}\n{}",
                        f.c_code()
                    );
                }
            }
        }
        (f.c_code(), u.c_code())
    }
}

#[augur::staged]
fn conv1d(x: &[f32], w: &[f32]) -> Vec<f32> {
    let n = x.len();
    (0..n)
        .map(|i| (0..w.len()).fold(0.0, |s, j| s + x[(i + j) % n] * w[j]))
        .collect()
}

#[augur::staged]
fn relu(v: Vec<f32>, t: f32) -> Vec<f32> {
    v.into_iter()
        .map(|a| if a >= t { a } else { 0.0 })
        .collect()
}

#[augur::staged]
fn loops(c: &str) -> usize {
    c.matches("for (").count()
}

#[test]
#[augur::staged]
fn conv_then_relu_is_one_pass() {
    let case = Case {
        shapes: [vec![50], vec![3], vec![1]],
        out: 50,
        body: |net, [x, w, _], y, _| {
            let c = net.conv1d(x, w);
            let r = net.relu(c, 1.35);
            net.copy_to(&r, y);
            net.free(r);
        },
        reference: |[x, w, _], _| relu(conv1d(x, w), 1.35),
    };
    let (fused, unfused) = case.check();
    assert_eq!(loops(&fused), 2, "interior and tail only:\n{fused}");
    assert!(fused.contains(">= 1.35f"), "{fused}");
    assert_eq!(loops(&unfused), 3, "{unfused}");
    // No `%` in the interior loop.
    let interior = fused
        .split("for (")
        .nth(1)
        .unwrap()
        .split('}')
        .next()
        .unwrap();
    assert!(!interior.contains('%'), "{interior}");
}

#[test]
#[augur::staged]
fn same_threshold_on_both_paths_is_fused() {
    let case = Case {
        shapes: [vec![20], vec![5], vec![1]],
        out: 20,
        body: |net, [x, w, _], y, flag| {
            let c = net.conv1d(x, w);
            // The same ReLU on both sides of a dyn branch (two call sites).
            #[allow(clippy::if_same_then_else)]
            let r = if flag.gt(0).is_true() {
                net.relu(c, 0.5)
            } else {
                net.relu(c, 0.5)
            };
            net.copy_to(&r, y);
        },
        reference: |[x, w, _], _| relu(conv1d(x, w), 0.5),
    };
    let (fused, _) = case.check();
    assert_eq!(loops(&fused), 2, "{fused}");
}

#[test]
#[augur::staged]
fn different_thresholds_are_not_fused() {
    let case = Case {
        shapes: [vec![20], vec![5], vec![1]],
        out: 20,
        body: |net, [x, w, _], y, flag| {
            let c = net.conv1d(x, w);
            let r = if flag.gt(0).is_true() {
                net.relu(c, 2.0)
            } else {
                net.relu(c, 4.0)
            };
            net.copy_to(&r, y);
        },
        reference: |[x, w, _], flag| relu(conv1d(x, w), if flag > 0 { 2.0 } else { 4.0 }),
    };
    let (fused, _) = case.check();
    assert_eq!(
        loops(&fused),
        4,
        "conv (2) and a ReLU on each path:\n{fused}"
    );
    let conv = fused.split("if (").next().unwrap();
    assert!(
        !conv.contains(">="),
        "the convolution applies no ReLU:\n{fused}"
    );
}

#[test]
#[augur::staged]
fn relu_on_one_path_only_is_not_fused() {
    let case = Case {
        shapes: [vec![20], vec![3], vec![20]],
        out: 20,
        body: |net, [x, w, b], y, flag| {
            let c = net.conv1d(x, w);
            let r = if flag.gt(0).is_true() {
                net.relu(c, 1.0)
            } else {
                net.bias_add(c, b)
            };
            net.copy_to(&r, y);
        },
        reference: |[x, w, b], flag| {
            let c = conv1d(x, w);
            if flag > 0 {
                relu(c, 1.0)
            } else {
                c.iter().zip(b).map(|(a, b)| a + b).collect()
            }
        },
    };
    let (fused, _) = case.check();
    assert_eq!(loops(&fused), 4, "{fused}");
}

#[test]
#[augur::staged]
fn bias_and_relu_fuse_into_a_fully_connected_layer() {
    let case = Case {
        shapes: [vec![7], vec![5, 7], vec![5]],
        out: 5,
        body: |net, [x, w, b], y, _| {
            let h = net.fully_connected(x, w);
            let h = net.bias_add(h, b);
            let h = net.relu(h, 0.25);
            net.copy_to(&h, y);
        },
        reference: |[x, w, b], _| {
            let h: Vec<f32> = (0..5)
                .map(|m| (0..7).fold(0.0, |s, n| s + w[m * 7 + n] * x[n]) + b[m])
                .collect();
            relu(h, 0.25)
        },
    };
    let (fused, unfused) = case.check();
    assert_eq!(loops(&fused), 2, "the layer's two loops only:\n{fused}");
    assert_eq!(loops(&unfused), 4, "{unfused}");
}

#[test]
#[augur::staged]
fn bias_and_relu_fuse_into_a_2d_convolution() {
    let case = Case {
        shapes: [vec![6, 9], vec![3, 2], vec![4, 8]],
        out: 32,
        body: |net, [x, w, b], y, _| {
            let c = net.conv2d(x, w);
            let c = net.bias_add(c, b);
            let c = net.relu(c, -0.5);
            net.copy_to(&c, y);
        },
        reference: |[x, w, b], _| {
            let mut out: Vec<f32> = Vec::new();
            for r in 0..4 {
                for c in 0..8 {
                    let mut s = 0.0;
                    for a in 0..3 {
                        for d in 0..2 {
                            s += x[(r + a) * 9 + c + d] * w[a * 2 + d];
                        }
                    }
                    out.push(s + b[r * 8 + c]);
                }
            }
            relu(out, -0.5)
        },
    };
    let (fused, unfused) = case.check();
    assert_eq!(loops(&fused), 2, "{fused}");
    assert_eq!(loops(&unfused), 4, "{unfused}");
}

#[test]
#[augur::staged]
fn a_network_in_a_dyn_batch_loop_is_fused_and_not_peeled() {
    let case = Case {
        shapes: [vec![16], vec![3], vec![1]],
        out: 16,
        body: |net, [x, w, _], y, flag| {
            let k = Dyn::new(0i32);
            while k.le(flag).is_true() {
                let c = net.conv1d(x, w);
                let r = net.relu(c, 0.75);
                net.copy_to(&r, y);
                net.free(r);
                k.set(k + 1);
            }
        },
        reference: |[x, w, _], _| relu(conv1d(x, w), 0.75),
    };
    let (fused, _) = case.check();
    assert_eq!(
        loops(&fused),
        3,
        "the batch loop and the conv's two:\n{fused}"
    );
}

#[test]
#[augur::staged]
fn a_long_filter_is_a_loop_not_unrolled() {
    let case = Case {
        shapes: [vec![60], vec![40], vec![1]],
        out: 60,
        body: |net, [x, w, _], y, _| {
            let c = net.conv1d(x, w);
            let r = net.relu(c, 0.0);
            net.copy_to(&r, y);
        },
        reference: |[x, w, _], _| relu(conv1d(x, w), 0.0),
    };
    let (fused, _) = case.check();
    assert_eq!(
        loops(&fused),
        4,
        "two output loops with a tap loop each:\n{fused}"
    );
}

#[test]
#[augur::staged]
fn explain_names_the_relu_lines() {
    let ex = Builder::new()
        .extract(
            "e",
            |x: Dyn<*mut f32>, w: Dyn<*mut f32>, y: Dyn<*mut f32>| {
                let net = Net::new();
                let (x, w) = (net.tensor_on([10], x), net.tensor_on([3], w));
                let c = net.conv1d(&x, &w);
                let r = net.relu(c, 1.56);
                net.copy_to(&r, y);
            },
        )
        .unwrap();
    let text = ex.explain().to_string();
    assert!(text.contains("after conv1d"), "{text}");
    assert!(text.contains("fusion.rs"), "{text}");
}

#[test]
#[augur::staged]
fn shape_errors_name_the_line() {
    let r = Builder::new().extract("bad", |x: Dyn<*mut f32>, w: Dyn<*mut f32>| {
        let net = Net::new();
        let (x, w) = (net.tensor_on([4], x), net.tensor_on([2, 3], w));
        net.fully_connected(&x, &w);
    });
    match r {
        Err(e @ augur::Error::Dsl { .. }) => {
            let message = e.to_string();
            assert!(
                message.contains("weights [2, 3] need an input of 3"),
                "{message}"
            );
            assert!(message.contains("fusion.rs"), "{message}");
        }
        other => panic!("expected a DSL error, got {:?}", other.map(|_| ())),
    }
}

/// A ReLU of another tensor right after a convolution is not fused into
/// that convolution (it would apply to the wrong tensor).
#[test]
#[augur::staged]
fn a_relu_of_another_tensor_is_not_fused() {
    let case = Case {
        shapes: [vec![12], vec![3], vec![12]],
        out: 24,
        body: |net, [x, w, b], y, _| {
            let other = net.alloc([12]);
            net.copy_to(b, net.data(&other));
            let c = net.conv1d(x, w);
            let r = net.relu(other, 0.5);
            net.copy_to(&c, y);
            net.copy_to(&r, y.offset(12));
        },
        reference: |[x, w, b], _| {
            let mut out = conv1d(x, w);
            out.extend(relu(b.clone(), 0.5));
            out
        },
    };
    let (fused, _) = case.check();
    let conv = fused
        .split("memcpy")
        .nth(1)
        .unwrap()
        .split("for (int32_t i_2")
        .next()
        .unwrap();
    assert!(!conv.contains(">="), "{fused}");
}
