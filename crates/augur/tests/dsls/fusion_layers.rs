//! Convolution/ReLU fusion with one conv line making several convolutions:
//! a layer helper called twice and a plain Rust loop over layers get one
//! prophecy per call path or turn, and `explain` leaves out the cells a
//! loop restart orphaned. The DSL is in `fusion_dsl/`.

use crate::common;
use crate::fusion_dsl;

use augur::prophecy::Prophecy;
use augur::Dyn;
use common::{count, Buf};
use fusion_dsl::{
    conv_ref, garbage, loops, prophecies, relu_ref, scale_ref, signal, Net, Ptr, TwoLayers, S,
    SIZES, T,
};
use std::hint::black_box;

/// A layer of the network, written once: its conv line makes a different
/// prophecy for each call path.
#[augur::staged]
fn layer(net: &mut Net, x: Ptr, y: Ptr, n: Dyn<i32>) {
    net.conv(x, y, n);
}

/// `(x, y, z, n)`: `x` holds `n + 4` values, `y` gets `n + 2`, `z` gets `n`.
#[augur::staged]
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

#[augur::staged]
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
#[augur::staged]
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
#[augur::staged]
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
#[augur::staged]
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
