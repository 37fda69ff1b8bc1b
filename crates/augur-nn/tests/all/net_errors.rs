//! Networks the DSL refuses, with an error at the user's line: shapes a
//! layer cannot take (a `ShapeError` the caller matches), tensors of two
//! `Net`s mixed, and a tensor carried across a dyn loop in a plain Rust
//! variable (the loop could never close).

use augur::{Builder, Dyn, Error};
use augur_nn::{Net, ShapeError, Tensor};

/// A network over two caller buffers of the given shapes.
type Layer = fn(&Net, &Tensor, &Tensor);

/// Each layer given shapes it cannot take ends the extraction with
/// `Error::Dsl` at the layer's line, carrying the `ShapeError` that says
/// which layer and which shapes.
#[test]
#[augur::staged]
fn shape_errors_are_typed() {
    type F = unsafe extern "C" fn(*mut f32, *mut f32);
    let cases: [([&[usize]; 2], Layer, ShapeError); 6] = [
        (
            [&[4], &[5]],
            |n, x, w| drop(n.conv1d(x, w)),
            ShapeError::Conv1d {
                x: vec![4],
                w: vec![5],
            },
        ),
        (
            [&[4, 4], &[2, 5]],
            |n, x, w| drop(n.conv2d(x, w)),
            ShapeError::Conv2d {
                x: vec![4, 4],
                w: vec![2, 5],
            },
        ),
        (
            [&[4, 4, 1], &[2, 2]],
            |n, x, w| drop(n.conv2d(x, w)),
            ShapeError::NotMatrix {
                layer: "conv2d",
                shape: vec![4, 4, 1],
            },
        ),
        (
            [&[4], &[2, 3]],
            |n, x, w| drop(n.fully_connected(x, w)),
            ShapeError::FullyConnected {
                weights: vec![2, 3],
                x: vec![4],
            },
        ),
        (
            [&[4], &[3]],
            |n, x, b| drop(n.bias_add(n.alloc(x.shape()), b)),
            ShapeError::BiasAdd {
                bias: vec![3],
                tensor: vec![4],
            },
        ),
        (
            [&[4], &[3]],
            |n, _, _| drop(n.alloc([1 << 16, 1 << 16])),
            ShapeError::TooLarge {
                shape: vec![1 << 16, 1 << 16],
            },
        ),
    ];
    for ([xs, ws], layer, expected) in cases {
        let r: augur::Result<augur::Extracted<F>> =
            Builder::new().extract("bad", |x: Dyn<*mut f32>, w: Dyn<*mut f32>| {
                let net = Net::new();
                let (x, w) = (net.tensor_on(xs, x), net.tensor_on(ws, w));
                layer(&net, &x, &w)
            });
        let e = r.map(|_| ()).unwrap_err();
        assert_eq!(e.dsl_error::<ShapeError>(), Some(&expected), "{e}");
        // At the layer's call, in this file.
        let Error::Dsl { location, .. } = &e else {
            panic!("not a DSL error: {e}")
        };
        assert_eq!(location.file, file!());
        assert_eq!(e.to_string(), format!("{expected} at {location}"));
        assert!(e.to_string().starts_with("nn: "), "{e}");
    }
}

/// Tensors of two Nets do not mix (their ids and fusion states are each
/// Net's own): using one with the other Net is an error at the user's line.
#[test]
#[augur::staged]
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
                assert!(message.contains("net_errors.rs"), "{message}");
            }
            other => panic!("expected a panic, got {:?}", other.map(|_| ())),
        }
    }
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
#[augur::staged]
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
