//! Networks in dyn batch loops and recurrences across them: layers written
//! out or produced by a plain loop over the layers inside a batch loop, a
//! bias registered inside the loop (still fused), and a tensor carried
//! from turn to turn in a state buffer; each built fused and unfused and
//! compared with plain Rust.

use crate::common;

use augur::Dyn;
use augur_nn::{Net, Tensor};
use common::{add, check, conv1d, loops, relu};

/// Two layers written out (two call sites) in a dyn batch loop.
#[test]
#[augur::staged]
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

/// The same recurrence written the way the DSL carries a tensor across a
/// dyn loop: a state tensor allocated before the loop, each turn reading it
/// and copying its result back.
#[test]
#[augur::staged]
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
#[augur::staged]
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
#[augur::staged]
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
