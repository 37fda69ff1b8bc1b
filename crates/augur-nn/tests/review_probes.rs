//! Adversarial probes of augur-nn's fusion protocol: networks built fused
//! and unfused, compiled and compared with plain Rust (inputs are
//! multiples of 1/16, so every sum is exact). Each probe that found a
//! problem stays, fixed, as a regression test (none is ignored).
// Same ReLU on both arms on purpose; `s = s + v` makes new values (`+=` on a
// `Dyn` would assign a variable).
#![allow(
    clippy::type_complexity,
    clippy::if_same_then_else,
    clippy::assign_op_pattern
)]

use augur::{Builder, Dyn, Extracted};
use augur_nn::{Net, Tensor};

thread_local! { static AUDIT: std::cell::Cell<bool> = const { std::cell::Cell::new(false) }; }

type Native = unsafe extern "C" fn(*mut f32, *mut f32, *mut f32, *mut f32, *mut f32, i32);

fn conv1d(x: &[f32], w: &[f32]) -> Vec<f32> {
    let n = x.len();
    (0..n)
        .map(|i| (0..w.len()).fold(0.0, |s, j| s + x[(i + j) % n] * w[j]))
        .collect()
}
fn relu(v: Vec<f32>, t: f32) -> Vec<f32> {
    v.into_iter()
        .map(|a| if a >= t { a } else { 0.0 })
        .collect()
}
fn add(a: Vec<f32>, b: &[f32]) -> Vec<f32> {
    a.iter().zip(b).map(|(a, b)| a + b).collect()
}

fn inputs(n: usize, seed: u64) -> Vec<f32> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((s >> 33) % 128) as f32 / 16.0 - 4.0
        })
        .collect()
}

/// Extracts `body(net, x, w1, w2, b, y, flag)` fused and unfused; runs both
/// on the given input sizes for each flag and compares with `reference`.
fn check(
    sizes: [usize; 5],
    flags: &[i32],
    body: impl Fn(
            &Net,
            Dyn<*mut f32>,
            Dyn<*mut f32>,
            Dyn<*mut f32>,
            Dyn<*mut f32>,
            Dyn<*mut f32>,
            Dyn<i32>,
        ) + Clone
        + 'static,
    reference: impl Fn(&[Vec<f32>; 4], i32) -> Vec<f32>,
) -> (String, String) {
    let ex = |fusion: bool| -> Extracted<Native> {
        let body = body.clone();
        let builder = if AUDIT.with(|a| a.get()) {
            Builder::new().audit()
        } else {
            Builder::new()
        };
        builder
            .extract(
                "probe",
                move |x: Dyn<*mut f32>, w1, w2, b, y, flag: Dyn<i32>| {
                    let net = Net::with_fusion(fusion);
                    body(&net, x, w1, w2, b, y, flag);
                },
            )
            .unwrap()
    };
    let (f, u) = (ex(true), ex(false));
    let (pf, pu) = (f.compile().unwrap(), u.compile().unwrap());
    for round in 0..3u64 {
        let ins = [
            inputs(sizes[0], round * 4 + 1),
            inputs(sizes[1], round * 4 + 2),
            inputs(sizes[2], round * 4 + 3),
            inputs(sizes[3], round * 4 + 4),
        ];
        for &flag in flags {
            let want = reference(&ins, flag);
            for (name, p, ex) in [("fused", &pf, &f), ("unfused", &pu, &u)] {
                let mut ins = ins.clone();
                let mut y = vec![f32::NAN; sizes[4]];
                unsafe {
                    (p.get())(
                        ins[0].as_mut_ptr(),
                        ins[1].as_mut_ptr(),
                        ins[2].as_mut_ptr(),
                        ins[3].as_mut_ptr(),
                        y.as_mut_ptr(),
                        flag,
                    )
                };
                assert_eq!(
                    y,
                    want,
                    "{name}, round {round}, flag {flag}\n{}",
                    ex.c_code()
                );
            }
        }
    }
    (f.c_code(), u.c_code())
}

/// The bias buffer is written through the `Net` (`data`) between the
/// producer and its bias add: that unfuses, so the write counts. (Writes
/// through the caller's own pointer are invisible to the `Net`: the
/// `tensor_on` docs forbid them while the network uses the tensor.)
#[test]
fn probe_bias_written_between_producer_and_bias_add() {
    check(
        [16, 3, 3, 16, 16],
        &[0],
        |net, x, w1, _w2, b, y, _flag| {
            let x = net.tensor_on([16], x);
            let w = net.tensor_on([3], w1);
            let bt = net.tensor_on([16], b);
            let c = net.conv1d(&x, &w);
            net.data(&bt).at(0).set(100.0f32);
            let c = net.bias_add(c, &bt);
            net.copy_to(&c, y);
        },
        |[x, w, _, b], _| {
            let mut b = b.clone();
            b[0] = 100.0;
            add(conv1d(x, w), &b)
        },
    );
}

/// Tensors of two Nets do not mix (their ids and fusion states are each
/// Net's own): using one with the other Net is an error at the user's line.
#[test]
fn probe_two_nets_do_not_mix() {
    type F = unsafe extern "C" fn(*mut f32, *mut f32);
    for interleaved in [false, true] {
        let r: augur::Result<augur::Extracted<F>> =
            Builder::new().extract("two", move |x: Dyn<*mut f32>, b: Dyn<*mut f32>| {
                let (net, net2) = (Net::new(), Net::new());
                let xt = net.tensor_on([16], x);
                let bt = net2.tensor_on([16], b);
                if interleaved {
                    let c = net.conv1d(&xt, &xt);
                    net2.bias_add(c, &bt);
                } else {
                    net.relu(bt, 0.5);
                }
            });
        match r {
            Err(augur::Error::Panic { message, .. }) => {
                assert!(message.contains("a tensor of another Net"), "{message}");
                assert!(message.contains("review_probes.rs"), "{message}");
            }
            other => panic!("expected a panic, got {:?}", other.map(|_| ())),
        }
    }
}

/// A state tensor carried across a dyn loop by copying into it.
#[test]
fn probe_loop_state_by_copy() {
    check(
        [16, 3, 3, 16, 16],
        &[0, 1, 3],
        |net, x, w1, _w2, b, y, flag| {
            let x = net.tensor_on([16], x);
            let w = net.tensor_on([3], w1);
            let bt = net.tensor_on([16], b);
            let state = net.alloc([16]);
            net.copy_to(&x, net.data(&state));
            let k = Dyn::new(0i32);
            while k.lt(flag).is_true() {
                let c = net.conv1d(&state, &w);
                let c = net.bias_add(c, &bt);
                let c = net.relu(c, 0.5);
                net.copy_to(&c, net.data(&state));
                net.free(c);
                k.set(k + 1);
            }
            net.copy_to(&state, y);
            net.free(state);
        },
        |[x, w, _, b], flag| {
            let mut c = x.clone();
            for _ in 0..flag {
                c = relu(add(conv1d(&c, w), b), 0.5);
            }
            c
        },
    );
}

fn thr_case(t: f32) {
    let (f, _) = check(
        [16, 3, 3, 16, 16],
        &[0],
        move |net, x, w1, _w2, _b, y, _flag| {
            let x = net.tensor_on([16], x);
            let w = net.tensor_on([3], w1);
            let c = net.conv1d(&x, &w);
            let c = net.relu(c, t);
            net.copy_to(&c, y);
        },
        move |[x, w, _, _], _| relu(conv1d(x, w), t),
    );
    assert_eq!(f.matches("for (").count(), 2, "{f}");
}

#[test]
fn probe_thresholds() {
    for t in [
        -0.0f32,
        0.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::MIN_POSITIVE / 4.0,
        1e30,
    ] {
        thr_case(t);
    }
}

#[test]
fn probe_threshold_nan() {
    thr_case(f32::NAN);
}

fn conv_case(n: usize, k: usize) {
    check(
        [n, k, 1, n, n],
        &[0],
        move |net, x, w1, _w2, b, y, _flag| {
            let x = net.tensor_on([n], x);
            let w = net.tensor_on([k], w1);
            let bt = net.tensor_on([n], b);
            let c = net.conv1d(&x, &w);
            let c = net.bias_add(c, &bt);
            let c = net.relu(c, 0.25);
            net.copy_to(&c, y);
        },
        move |[x, w, _, b], _| relu(add(conv1d(x, w), b), 0.25),
    );
}

#[test]
fn probe_conv1d_shapes() {
    for (n, k) in [
        (1, 1),
        (2, 2),
        (5, 5),
        (7, 1),
        (33, 33),
        (40, 33),
        (40, 40),
        (34, 32),
    ] {
        conv_case(n, k);
    }
}

fn conv2d_ref(x: &[f32], [h, wd]: [usize; 2], w: &[f32], [kh, kw]: [usize; 2]) -> Vec<f32> {
    let mut out = Vec::new();
    for r in 0..h - kh + 1 {
        for c in 0..wd - kw + 1 {
            let mut s = 0.0;
            for a in 0..kh {
                for d in 0..kw {
                    s += x[(r + a) * wd + c + d] * w[a * kw + d];
                }
            }
            out.push(s);
        }
    }
    out
}

fn conv2d_case(h: usize, wd: usize, kh: usize, kw: usize) {
    let o = (h - kh + 1) * (wd - kw + 1);
    check(
        [h * wd, kh * kw, 1, o, o],
        &[0],
        move |net, x, w1, _w2, b, y, _flag| {
            let x = net.tensor_on([h, wd], x);
            let w = net.tensor_on([kh, kw], w1);
            let bt = net.tensor_on([h - kh + 1, wd - kw + 1], b);
            let c = net.conv2d(&x, &w);
            let c = net.bias_add(c, &bt);
            let c = net.relu(c, 0.0);
            net.copy_to(&c, y);
        },
        move |[x, w, _, b], _| relu(add(conv2d_ref(x, [h, wd], w, [kh, kw]), b), 0.0),
    );
}

#[test]
fn probe_conv2d_shapes() {
    for (h, wd, kh, kw) in [
        (1, 1, 1, 1),
        (3, 4, 3, 4),
        (5, 3, 1, 1),
        (4, 9, 1, 9),
        (9, 4, 9, 1),
        (7, 7, 6, 6),
        (8, 8, 3, 8),
    ] {
        conv2d_case(h, wd, kh, kw);
    }
}

fn fc_case(m: usize, n: usize) {
    check(
        [n, m * n, 1, m, m],
        &[0],
        move |net, x, w1, _w2, b, y, _flag| {
            let x = net.tensor_on([n], x);
            let w = net.tensor_on([m, n], w1);
            let bt = net.tensor_on([m], b);
            let c = net.fully_connected(&x, &w);
            let c = net.bias_add(c, &bt);
            let c = net.relu(c, 0.0);
            net.copy_to(&c, y);
        },
        move |[x, w, _, b], _| {
            let h: Vec<f32> = (0..m)
                .map(|i| (0..n).fold(0.0, |s, j| s + w[i * n + j] * x[j]))
                .collect();
            relu(add(h, b), 0.0)
        },
    );
}

#[test]
fn probe_fc_shapes() {
    for (m, n) in [(1, 1), (1, 5), (5, 1), (3, 40)] {
        fc_case(m, n);
    }
}

fn loops(c: &str) -> usize {
    c.matches("for (").count()
}

#[test]
fn probe_misc_chains() {
    // relu then relu; bias then bias; same bias twice; bias created after.
    let (f, _) = check(
        [16, 3, 3, 16, 16],
        &[0],
        |net, x, w1, _w2, b, y, _flag| {
            let x = net.tensor_on([16], x);
            let w = net.tensor_on([3], w1);
            let bt = net.tensor_on([16], b);
            let c = net.conv1d(&x, &w);
            let c = net.bias_add(c, &bt);
            let c = net.bias_add(c, &bt);
            let c = net.relu(c, 0.5);
            let c = net.relu(c, 1.5);
            net.copy_to(&c, y);
        },
        |[x, w, _, b], _| relu(relu(add(add(conv1d(x, w), b), b), 0.5), 1.5),
    );
    // conv + bias fused (2), the second bias, each ReLU: one loop each.
    assert_eq!(loops(&f), 5, "{f}");
    let (f, _) = check(
        [16, 3, 3, 16, 16],
        &[0],
        |net, x, w1, _w2, b, y, _flag| {
            let x = net.tensor_on([16], x);
            let w = net.tensor_on([3], w1);
            let c = net.conv1d(&x, &w);
            let bt = net.tensor_on([16], b);
            let c = net.bias_add(c, &bt);
            let c = net.relu(c, 0.5);
            net.copy_to(&c, y);
        },
        |[x, w, _, b], _| relu(add(conv1d(x, w), b), 0.5),
    );
    // A bias made after its producer is not fused (nor the ReLU after it).
    assert_eq!(loops(&f), 4, "{f}");
    let (f, _) = check(
        [16, 3, 3, 16, 16],
        &[0],
        |net, x, w1, _w2, _b, y, _flag| {
            let x = net.tensor_on([16], x);
            let w = net.tensor_on([3], w1);
            let c = net.conv1d(&x, &w);
            net.copy_to(&c, y);
            let c = net.relu(c, 0.5);
            let c2 = net.conv1d(&c, &w);
            let p = net.data(&c2);
            let c2 = net.relu(c2, 0.5);
            let _ = p;
            net.copy_to(&c2, y);
        },
        |[x, w, _, _], _| relu(conv1d(&relu(conv1d(x, w), 0.5), w), 0.5),
    );
    // Reading a producer's output (copy_to, data) before its ReLU unfuses.
    assert_eq!(loops(&f), 6, "{f}");
    // conv output as bias of the next conv; bias = input x.
    check(
        [16, 3, 3, 16, 16],
        &[0],
        |net, x, w1, w2, _b, y, _flag| {
            let x = net.tensor_on([16], x);
            let w = net.tensor_on([3], w1);
            let w2 = net.tensor_on([3], w2);
            let c = net.conv1d(&x, &w);
            let d = net.conv1d(&c, &w2);
            let d = net.bias_add(d, &c);
            let d = net.bias_add(d, &x);
            let d = net.relu(d, 0.0);
            net.copy_to(&d, y);
        },
        |[x, w, w2, _], _| {
            let c = conv1d(x, w);
            relu(add(add(conv1d(&c, w2), &c), x), 0.0)
        },
    );
}

#[test]
fn probe_paths() {
    // Nested dyn ifs, same relu on every leaf.
    let (f, _) = check(
        [16, 3, 3, 16, 16],
        &[0, 1, 2, 3],
        |net, x, w1, _w2, _b, y, flag| {
            let x = net.tensor_on([16], x);
            let w = net.tensor_on([3], w1);
            let c = net.conv1d(&x, &w);
            let r = if flag.gt(0).is_true() {
                if flag.gt(1).is_true() {
                    net.relu(c, 0.5)
                } else {
                    net.relu(c, 0.5)
                }
            } else {
                net.relu(c, 0.5)
            };
            net.copy_to(&r, y);
        },
        |[x, w, _, _], _| relu(conv1d(x, w), 0.5),
    );
    assert_eq!(loops(&f), 2, "{f}");
    // bias on one path, bias + relu on another, relu on a third.
    check(
        [16, 3, 3, 16, 16],
        &[0, 1, 2, 3],
        |net, x, w1, _w2, b, y, flag| {
            let x = net.tensor_on([16], x);
            let w = net.tensor_on([3], w1);
            let bt = net.tensor_on([16], b);
            let c = net.conv1d(&x, &w);
            let r = if flag.gt(0).is_true() {
                let c = net.bias_add(c, &bt);
                if flag.gt(1).is_true() {
                    net.relu(c, 0.5)
                } else {
                    c
                }
            } else {
                net.relu(c, 0.5)
            };
            net.copy_to(&r, y);
        },
        |[x, w, _, b], flag| {
            let c = conv1d(x, w);
            if flag > 1 {
                relu(add(c, b), 0.5)
            } else if flag > 0 {
                add(c, b)
            } else {
                relu(c, 0.5)
            }
        },
    );
    // bias on all paths, then relu on one path only.
    let (f, _) = check(
        [16, 3, 3, 16, 16],
        &[0, 1],
        |net, x, w1, _w2, b, y, flag| {
            let x = net.tensor_on([16], x);
            let w = net.tensor_on([3], w1);
            let bt = net.tensor_on([16], b);
            let c = net.conv1d(&x, &w);
            let c = net.bias_add(c, &bt);
            let r = if flag.gt(0).is_true() {
                net.relu(c, 0.5)
            } else {
                c
            };
            net.copy_to(&r, y);
        },
        |[x, w, _, b], flag| {
            let c = add(conv1d(x, w), b);
            if flag > 0 {
                relu(c, 0.5)
            } else {
                c
            }
        },
    );
    // conv + bias fused; the ReLU on one path only is its own loop.
    assert_eq!(loops(&f), 3, "{f}");
}

#[test]
fn probe_batch_loop_bias_in_loop() {
    let (f, _) = check(
        [16, 3, 3, 16, 16],
        &[0, 1, 3],
        |net, x, w1, _w2, b, y, flag| {
            let x = net.tensor_on([16], x);
            let w = net.tensor_on([3], w1);
            let k = Dyn::new(0i32);
            while k.le(flag).is_true() {
                let bt = net.alloc([16]);
                net.copy_to(&net.tensor_on([16], b), net.data(&bt));
                let c = net.conv1d(&x, &w);
                let c = net.bias_add(c, &bt);
                let c = net.relu(c, 0.5);
                net.copy_to(&c, y);
                net.free(c);
                net.free(bt);
                k.set(k + 1);
            }
        },
        |[x, w, _, b], _| relu(add(conv1d(x, w), b), 0.5),
    );
    let _ = f;
}

#[test]
fn probe_all_under_audit() {
    AUDIT.with(|a| a.set(true));
    probe_paths();
    probe_misc_chains();
    probe_batch_loop_bias_in_loop();
    probe_loop_state_by_copy();
    probe_bias_in_loop_first_turn_follows_producer();
    probe_bias_relu_in_loop_after_producer();
    probe_conv1d_shapes();
}

/// A bias add in a dyn loop whose first turn follows a producer made
/// before the loop (fusable) and whose later turns follow nothing: the
/// first turn is peeled (the `Static` site), and the bias is added once
/// per turn.
#[test]
fn probe_bias_in_loop_first_turn_follows_producer() {
    check(
        [16, 3, 3, 16, 16],
        &[0, 1, 2, 3],
        |net, x, w1, _w2, b, y, flag| {
            let x = net.tensor_on([16], x);
            let w = net.tensor_on([3], w1);
            let bt = net.tensor_on([16], b);
            let mut c = net.conv1d(&x, &w);
            let k = Dyn::new(0i32);
            while k.lt(flag).is_true() {
                c = net.bias_add(c, &bt);
                k.set(k + 1);
            }
            net.copy_to(&c, y);
        },
        |[x, w, _, b], flag| {
            let mut c = conv1d(x, w);
            for _ in 0..flag {
                c = add(c, b);
            }
            c
        },
    );
}

/// Bias add and ReLU in a dyn loop after a producer.
#[test]
fn probe_bias_relu_in_loop_after_producer() {
    check(
        [16, 3, 3, 16, 16],
        &[0, 1, 2, 3],
        |net, x, w1, _w2, b, y, flag| {
            let x = net.tensor_on([16], x);
            let w = net.tensor_on([3], w1);
            let bt = net.tensor_on([16], b);
            let mut c = net.conv1d(&x, &w);
            let k = Dyn::new(0i32);
            while k.lt(flag).is_true() {
                c = net.bias_add(c, &bt);
                c = net.relu(c, -1.0);
                k.set(k + 1);
            }
            net.copy_to(&c, y);
        },
        |[x, w, _, b], flag| {
            let mut c = conv1d(x, w);
            for _ in 0..flag {
                c = relu(add(c, b), -1.0);
            }
            c
        },
    );
}

/// Two layers written out (two call sites) in a dyn batch loop.
#[test]
fn probe_two_written_layers_in_batch_loop() {
    let (f, _) = check(
        [16, 3, 3, 16, 16],
        &[1, 3],
        |net, x, w1, w2, b, y, flag| {
            let x = net.tensor_on([16], x);
            let w1 = net.tensor_on([3], w1);
            let w2 = net.tensor_on([3], w2);
            let bt = net.tensor_on([16], b);
            let k = Dyn::new(0i32);
            while k.lt(flag).is_true() {
                let c = net.conv1d(&x, &w1);
                let c = net.bias_add(c, &bt);
                let c = net.relu(c, 0.5);
                let d = net.conv1d(&c, &w2);
                let d = net.relu(d, 0.25);
                net.copy_to(&d, y);
                net.free(c);
                net.free(d);
                k.set(k + 1);
            }
        },
        |[x, w1, w2, b], flag| {
            let _ = flag;
            relu(conv1d(&relu(add(conv1d(x, w1), b), 0.5), w2), 0.25)
        },
    );
    assert_eq!(loops(&f), 5, "{f}");
}

/// A tensor carried across a dyn loop in a plain Rust variable, the
/// natural way to write a recurrent network: conv before the loop, ReLU +
/// conv in it. Each turn reads the buffer the turn before allocated, a
/// different variable of the generated code every turn, so the loop can
/// never close. It used to run into the run limit (with the default
/// million, hours); now the audit that finds a turn reading the previous
/// turn's value makes the loop stop after a bounded unrolling with an error
/// that names the loop, the read and the fix.
#[test]
fn tensor_carried_across_a_dyn_loop_is_a_clear_error() {
    for fusion in [false, true] {
        let r = Builder::new().extract(
            "carried",
            move |x: Dyn<*mut f32>, w: Dyn<*mut f32>, y: Dyn<*mut f32>, n: Dyn<i32>| {
                let net = Net::with_fusion(fusion);
                let x = net.tensor_on([16], x);
                let w = net.tensor_on([3], w);
                let mut c = net.conv1d(&x, &w);
                let k = Dyn::new(0i32);
                while k.lt(n).is_true() {
                    let r = net.relu(c, 0.5);
                    c = net.conv1d(&r, &w);
                    net.free(r);
                    k.set(k + 1);
                }
                net.copy_to(&c, y);
            },
        );
        let Err(e) = r else {
            panic!("fusion {fusion}: a carried tensor cannot extract")
        };
        let msg = e.to_string();
        assert!(
            matches!(e, augur::Error::CarriedValue { .. }),
            "fusion {fusion}: {msg}"
        );
        assert!(msg.contains(&format!("{}:", file!())), "{msg}");
        assert!(msg.contains("allocated before the loop"), "{msg}");
    }
}

/// The same recurrence written the way the DSL carries a tensor across a
/// dyn loop: a state tensor allocated before the loop, each turn reading it
/// and copying its result back.
#[test]
fn tensor_carried_across_a_dyn_loop_in_a_state_buffer() {
    check(
        [16, 3, 3, 16, 16],
        &[0, 1, 3],
        |net, x, w, _w2, _b, y, turns| {
            let x = net.tensor_on([16], x);
            let w = net.tensor_on([3], w);
            let state = net.alloc([16]);
            net.copy_to(&x, net.data(&state));
            let k = Dyn::new(0i32);
            while k.lt(turns).is_true() {
                let view = net.tensor_on([16], net.data(&state));
                let r = net.relu(view, 0.5);
                let c = net.conv1d(&r, &w);
                net.copy_to(&c, net.data(&state));
                net.free(r);
                net.free(c);
                k.set(k + 1);
            }
            net.copy_to(&state, y);
            net.free(state);
        },
        |[x, w, _, _], turns| {
            let mut s = x.to_vec();
            for _ in 0..turns.max(0) {
                s = conv1d(&relu(s, 0.5), w);
            }
            s
        },
    );
}

/// A deep network written the usual way: a plain `for` over the layers
/// inside a dyn batch loop, in a function under `#[augur::staged]` (the
/// loop's turns are then first-stage state scoped to the loop, so the batch
/// loop closes whatever the build unrolls).
#[augur::staged]
fn layers_in_batches(
    net: &Net,
    x: Dyn<*mut f32>,
    weights: [Dyn<*mut f32>; 2],
    y: Dyn<*mut f32>,
    batches: Dyn<i32>,
) {
    let x = net.tensor_on([16], x);
    let layers: Vec<Tensor> = weights.iter().map(|w| net.tensor_on([3], *w)).collect();
    let state = net.alloc([16]);
    let k = Dyn::new(0i32);
    while k.le(batches).is_true() {
        net.copy_to(&x, net.data(&state));
        for w in &layers {
            let c = net.conv1d(&state, w);
            let c = net.relu(c, 0.5);
            net.copy_to(&c, net.data(&state));
            net.free(c);
        }
        net.copy_to(&state, y);
        k.set(k + 1);
    }
    net.free(state);
}

#[test]
fn plain_loop_over_layers_in_a_batch_loop() {
    check(
        [16, 3, 3, 16, 16],
        &[0, 1, 3],
        |net, x, w1, w2, _b, y, flag| layers_in_batches(net, x, [w1, w2], y, flag),
        |[x, w1, w2, _], _| relu(conv1d(&relu(conv1d(x, w1), 0.5), w2), 0.5),
    );
}

/// A bias tensor registered inside a dyn batch loop (`tensor_on` over the
/// same parameter every turn) is fused, and so is the ReLU after it. It
/// used not to be: tensor ids came from a plain counter that goes on across
/// turns, so the shared prophecy "after conv1d" was required `Bias(2)` on
/// the first turn and `Bias(4)` on the second: `Conflict` (5 loops instead
/// of 3). `tensor_on` now gives the caller's buffer seen again its id.
#[test]
fn bias_registered_in_a_batch_loop_is_fused() {
    let (f, _) = check(
        [16, 3, 3, 16, 16],
        &[0, 1, 3],
        |net, x, w1, _w2, b, y, flag| {
            let x = net.tensor_on([16], x);
            let w = net.tensor_on([3], w1);
            let k = Dyn::new(0i32);
            while k.le(flag).is_true() {
                let bt = net.tensor_on([16], b);
                let c = net.conv1d(&x, &w);
                let c = net.bias_add(c, &bt);
                let c = net.relu(c, 0.5);
                net.copy_to(&c, y);
                net.free(c);
                k.set(k + 1);
            }
        },
        |[x, w, _, b], _| relu(add(conv1d(x, w), b), 0.5),
    );
    assert_eq!(loops(&f), 3, "the batch loop and the conv's two:\n{f}");
}

/// Producers in the two arms of a dyn if (one helper, so one call site),
/// the output used after the join 80 operations later. It used to fail
/// with `LoopNeverCloses` at `ops.rs:25` (inside the DSL), fused and
/// unfused, pointing nowhere near the cause; links are now verified to the
/// end of the closure, and it extracts.
#[test]
fn producer_in_a_branch_used_far_after_the_join() {
    fn layer(net: &Net, x: &Tensor, w: &Tensor) -> Tensor {
        net.conv1d(x, w)
    }
    for fusion in [false, true] {
        let r = Builder::new().extract(
            "branch",
            move |x: Dyn<*mut f32>,
                  w1: Dyn<*mut f32>,
                  w2: Dyn<*mut f32>,
                  y: Dyn<*mut f32>,
                  flag: Dyn<i32>| {
                let net = Net::with_fusion(fusion);
                let x = net.tensor_on([16], x);
                let w1 = net.tensor_on([3], w1);
                let w2 = net.tensor_on([3], w2);
                let c = if flag.gt(0).is_true() {
                    layer(&net, &x, &w1)
                } else {
                    layer(&net, &x, &w2)
                };
                let mut s = Dyn::new(0i32);
                for _ in 0..40 {
                    s = s + flag;
                }
                y.at(16).set(s.cast::<f32>());
                let r = net.relu(c, 0.5);
                net.copy_to(&r, y);
            },
        );
        if let Err(e) = r {
            assert!(
                !matches!(e, augur::Error::LoopNeverCloses { .. }),
                "fusion {fusion}: {e}"
            );
        }
    }
}
