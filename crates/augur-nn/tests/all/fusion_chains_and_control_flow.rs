//! Fusion through chains of layers, dyn branches and dyn loops: each
//! network is built fused and unfused, compiled and compared with plain
//! Rust, and the generated loops are counted; writes and reads between a
//! producer and its bias add or ReLU unfuse. The audit test runs the
//! chain, branch, loop and conv1d-shape probes again with the builder's
//! audit on.
// Same ReLU on both arms on purpose; `s = s + v` makes new values (`+=` on a
// `Dyn` would assign a variable).
#![allow(clippy::if_same_then_else, clippy::assign_op_pattern)]

use crate::common;

use augur::{Builder, Dyn};
use augur_nn::{Net, Tensor};
use common::{add, check, conv1d, loops, relu, AUDIT};

/// The bias buffer is written through the `Net` (`data`) between the
/// producer and its bias add: that unfuses, so the write counts. (Writes
/// through the caller's own pointer are invisible to the `Net`: the
/// `tensor_on` docs forbid them while the network uses the tensor.)
#[test]
#[augur::staged]
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

/// A state tensor carried across a dyn loop by copying into it.
#[test]
#[augur::staged]
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

#[augur::staged]
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
#[augur::staged]
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

#[test]
#[augur::staged]
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
#[augur::staged]
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
#[augur::staged]
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
#[augur::staged]
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
#[augur::staged]
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
#[augur::staged]
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

/// Producers in the two arms of a dyn if (one helper, so one call site),
/// the output used after the join 80 operations later. It used to fail
/// with `LoopNeverCloses` at `ops.rs:25` (inside the DSL), fused and
/// unfused, pointing nowhere near the cause; links are now verified to the
/// end of the closure, and it extracts.
#[test]
#[augur::staged]
fn producer_in_a_branch_used_far_after_the_join() {
    #[augur::staged]
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
