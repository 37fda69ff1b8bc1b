//! Fusion over layer shapes and ReLU thresholds: conv2d and fully
//! connected layers of every awkward shape (single elements, kernels as
//! large as the input) and thresholds at signed zeros, infinities,
//! subnormals and NaN, built fused and unfused and compared with plain
//! Rust. (The conv1d shapes are in `fusion_chains_and_control_flow.rs`,
//! whose audit test runs them again.)

use crate::common;

use common::{add, check, conv1d, relu};

#[augur::staged]
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
#[augur::staged]
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
#[augur::staged]
fn probe_threshold_nan() {
    thr_case(f32::NAN);
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

#[augur::staged]
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
#[augur::staged]
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

#[augur::staged]
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
#[augur::staged]
fn probe_fc_shapes() {
    for (m, n) in [(1, 1), (1, 5), (5, 1), (3, 40)] {
        fc_case(m, n);
    }
}
