//! Unusual shapes and element types, on the CPU and the CPU-simulated GPU
//! under every movement: a repeated index on the right (a trace),
//! zero-sized dimensions, rank-0 tensors, and i32, i64 and f64 elements.

use crate::common;

use common::{all_equal, run_all, seq};

/// The same index twice on the right (a trace), on the CPU and the GPU.
#[test]
#[augur::staged]
fn repeated_index_right() {
    let rs = run_all::<f32>(
        "rep_right",
        [&[3, 3], &[3], &[1]],
        [seq(9), seq(3), seq(1)],
        3,
        |ein, [a, b, c], _n| {
            let i = ein.index("i");
            let j = ein.index("j");
            b.at([i]).set(a.at([i, i]));
            ein.run_on_gpu(|| {
                c.at([j]).set(a.at([i, i]) * 2.0f32);
            });
            let _ = j;
        },
    );
    all_equal(&rs);
    assert_eq!(rs[0].1[1], vec![1.0, 5.0, 9.0]);
    assert_eq!(rs[0].1[2], vec![30.0]);
}

/// Zero-sized dimensions, read and written on the GPU.
#[test]
#[augur::staged]
fn zero_sized() {
    let rs = run_all::<f32>(
        "zero",
        [&[0, 3], &[3], &[3, 0]],
        [vec![], seq(3), vec![]],
        3,
        |ein, [a, b, c], _n| {
            let (i, j) = (ein.index("i"), ein.index("j"));
            ein.run_on_gpu(|| {
                b.at([j]).set(a.at([i, j]));
                c.at([j, i]).set(1.0f32);
            });
        },
    );
    all_equal(&rs);
    assert_eq!(rs[0].1[1], vec![0.0; 3]);
}

/// Rank-0 tensors accumulated on the GPU (i64).
#[test]
#[augur::staged]
fn rank0_on_gpu() {
    let rs = run_all::<i64>(
        "rank0",
        [&[5], &[], &[]],
        [vec![1, 2, 3, 4, 5], vec![100], vec![7]],
        3,
        |ein, [a, b, c], _n| {
            let i = ein.index("i");
            ein.run_on_gpu(|| {
                b.at([]).add_to(a.at([i]));
                c.at([]).mul_by(a.at([i]));
            });
        },
    );
    all_equal(&rs);
    assert_eq!(rs[0].1[1], vec![115]);
    assert_eq!(rs[0].1[2], vec![7 * 120]);
}

/// i32 and f64 matrix products with Dyn and index terms.
#[test]
#[augur::staged]
fn elem_types_i32_f64() {
    let rs = run_all::<i32>(
        "i32mm",
        [&[3, 4], &[4, 5], &[3, 5]],
        [
            (0..12).collect(),
            (0..20).map(|x| x - 7).collect(),
            vec![0; 15],
        ],
        3,
        |ein, [a, b, c], n| {
            let (i, j, k) = (ein.index("i"), ein.index("j"), ein.index("k"));
            ein.run_on_gpu(|| c.at([i, j]).set(a.at([i, k]) * b.at([k, j]) + n));
        },
    );
    all_equal(&rs);
    let rs = run_all::<f64>(
        "f64mm",
        [&[3, 4], &[4, 5], &[3, 5]],
        [
            (0..12).map(|x| x as f64).collect(),
            (0..20).map(|x| x as f64 - 7.0).collect(),
            vec![0.0; 15],
        ],
        3,
        |ein, [a, b, c], _n| {
            let (i, j, k) = (ein.index("i"), ein.index("j"), ein.index("k"));
            ein.run_on_gpu(|| c.at([i, j]).add_to(a.at([i, k]) * b.at([k, j]) - j));
        },
    );
    all_equal(&rs);
}
