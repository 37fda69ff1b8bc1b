//! Convolution/ReLU fusion in dyn loops over batches: one prophecy for
//! every turn of the body, DSL state that crosses a back edge, and a
//! first-turn flag (tracked by `#[augur::staged]`, or hidden in a `Cell`:
//! a clear error). The DSL is in `fusion_dsl/`; every program is checked by
//! the differential harness in both prophecy modes.

use crate::common;
use crate::fusion_dsl;

use augur::{Builder, Dyn};
use common::{check, count, Buf};
use fusion_dsl::{
    conv_ref, garbage, loops, prophecies, relu_ref, scale_ref, signal, Batches, Net, Ptr, S, T,
};
use std::cell::Cell;
use std::hint::black_box;

/// `(x, y, n, batches)`: batch `b` reads `x[b * (n + 2)..]` and writes
/// `y[b * n..]`.
#[augur::staged]
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
#[augur::staged]
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
#[augur::staged]
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
#[augur::staged]
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
#[augur::staged]
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
