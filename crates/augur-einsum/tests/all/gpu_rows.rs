//! Reductions along rows inside `run_on_gpu` (a matrix-vector product, a
//! row sum, a row product) go through lanes of 32 per row and a tree in
//! shared memory, unless the schedule is the paper's or the block cannot
//! hold whole warps: results equal plain Rust with `=`, `+=` and `*=`, row
//! counts and row lengths that leave remainders, C and the JIT, every
//! movement; the interpreter checks the simulation for races; the CUDA
//! compiles to PTX.

use crate::common;

use augur::exec::Backend;
use augur::Dyn;
use augur_einsum::{cuda_source, Config, Einsum, Movement, Schedule, Tensor};
use common::{all_equal, build, extract, interpret_simulated, run_on, Body, Outcome};

/// Rows (not a multiple of the 2 rows a 64-thread block takes).
const M: usize = 7;
/// Row length (more than 32 lanes, not a multiple of them).
const K: usize = 45;

#[augur::staged]
fn ints(n: usize, seed: usize) -> Vec<f32> {
    (0..n).map(|x| ((x * 7 + seed) % 5) as f32 - 2.0).collect()
}

#[augur::staged]
fn init() -> [Vec<f32>; 3] {
    [ints(M * K, 1), ints(K, 2), ints(M, 3)]
}

const SHAPES: [&[usize]; 3] = [&[M, K], &[K], &[M]];

/// A grid of 3 blocks of 64 threads: two rows of 32 lanes per block.
#[augur::staged]
fn lanes(m: Movement) -> Config {
    Config {
        blocks: 3,
        threads: 64,
        ..Config::with(m)
    }
}

/// Plain Rust: each row's `f(i, k)` folded with `op` into `c[i]`.
#[augur::staged]
fn reference(op: char, f: impl Fn(usize, usize) -> f32) -> Vec<f32> {
    let c = &init()[2];
    (0..M)
        .map(|i| match op {
            '*' => c[i] * (0..K).map(|k| f(i, k)).product::<f32>(),
            '+' => c[i] + (0..K).map(|k| f(i, k)).sum::<f32>(),
            _ => (0..K).map(|k| f(i, k)).sum(),
        })
        .collect()
}

#[augur::staged]
fn matvec(ein: &Einsum, [a, x, c]: &[Tensor<f32>; 3], _: Dyn<i32>) {
    let (i, k) = (ein.index("i"), ein.index("k"));
    ein.run_on_gpu(|| c.at([i]).set(a.at([i, k]) * x.at([k])));
}

#[augur::staged]
fn row_sums_added(ein: &Einsum, [a, x, c]: &[Tensor<f32>; 3], _: Dyn<i32>) {
    let (i, k) = (ein.index("i"), ein.index("k"));
    ein.run_on_gpu(|| c.at([i]).add_to(a.at([i, k]) + x.at([k]) * 2.0));
}

#[augur::staged]
fn row_products(ein: &Einsum, [a, _, c]: &[Tensor<f32>; 3], _: Dyn<i32>) {
    let (i, k) = (ein.index("i"), ein.index("k"));
    // Factors of 1 and -1 only, so the product is exact in any order.
    ein.run_on_gpu(|| c.at([i]).mul_by(a.at([i, k]) * a.at([i, k]) - 3.0));
}

/// What each program computes, from the inputs.
#[augur::staged]
fn want(name: &str) -> Vec<f32> {
    let [a, x, _] = init();
    match name {
        "matvec" => reference('=', |i, k| a[i * K + k] * x[k]),
        "sums" => reference('+', |i, k| a[i * K + k] + x[k] * 2.0),
        _ => reference('*', |i, k| a[i * K + k] * a[i * K + k] - 3.0),
    }
}

/// The programs, each handed on as a closure: a `#[augur::staged]` function
/// called through a `fn` pointer reports its own definition as its caller,
/// which no covered body contains.
#[augur::staged]
fn programs() -> [(&'static str, Body<f32>); 3] {
    [
        ("matvec", |e, t, n| matvec(e, t, n)),
        ("sums", |e, t, n| row_sums_added(e, t, n)),
        ("products", |e, t, n| row_products(e, t, n)),
    ]
}

/// Builds `body` for the CPU and for the simulated GPU under every
/// movement on the lanes grid, with C and the JIT, and runs each.
fn run_everywhere(name: &str, body: Body<f32>) -> Vec<Outcome<f32>> {
    let mut configs = vec![Config::cpu()];
    configs.extend(Movement::ALL.map(lanes));
    let mut out = Vec::new();
    for config in configs {
        let ex = extract::<f32>(name, config, SHAPES, body).unwrap();
        for backend in [Backend::Auto, Backend::Jit] {
            let p = build(&ex, config, backend).unwrap();
            let what = format!(
                "{name} {:?} {backend:?} gpu={}",
                config.movement, config.gpu
            );
            out.push((what, run_on(&p, &init(), 1), None));
        }
    }
    out
}

#[test]
#[augur::staged]
fn reductions_along_rows_equal_plain_rust_everywhere() {
    for (name, body) in programs() {
        let rs = run_everywhere(name, body);
        all_equal(&rs);
        assert_eq!(rs[0].1[2], want(name), "{name}");
        // Lanes, a tree of five steps between block barriers, and shared
        // memory for 64 partial results; the simulation is race-free.
        let ex = extract::<f32>(name, lanes(Movement::Prophecy), SHAPES, body).unwrap();
        let cu = cuda_source(&ex).unwrap();
        assert_eq!(cu.matches("augur_sync_threads();").count(), 6, "{cu}");
        assert!(cu.contains("<<<3, 64, 256>>>"), "{cu}");
        let got = interpret_simulated(&ex, &init(), M).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(got, want(name), "{name} (interpreter)");
    }
}

/// The CUDA of the lanes compiles, with shared memory.
#[test]
#[augur::staged]
fn lanes_compile_to_ptx() {
    let ex = extract::<f32>("mv", lanes(Movement::Prophecy), SHAPES, |e, t, n| {
        matvec(e, t, n)
    })
    .unwrap();
    let cu = cuda_source(&ex).unwrap();
    let ptx = common::ptx(&cu);
    assert!(ptx.contains(".shared"), "{ptx}");
}

/// The paper's loops stay under `Schedule::Naive`, for a block that is not
/// whole warps, and where the reduced index is not the innermost (`A`
/// stored transposed: lanes would read 32 rows apart).
#[test]
#[augur::staged]
fn the_papers_loops_where_asked_or_where_lanes_do_not_fit() {
    let naive = Config {
        schedule: Schedule::Naive,
        ..lanes(Movement::Prophecy)
    };
    let ragged = Config {
        threads: 40,
        ..lanes(Movement::Prophecy)
    };
    for config in [naive, ragged] {
        let got = common::papers_loops(config, SHAPES, |e, t, n| matvec(e, t, n), &init());
        assert_eq!(got, want("matvec"), "{config:?}");
    }
    let transposed: [&[usize]; 3] = [&[K, M], &[K], &[M]];
    let body: Body<f32> = |ein, [a, x, c], _| {
        let (i, k) = (ein.index("i"), ein.index("k"));
        ein.run_on_gpu(|| c.at([i]).set(a.at([k, i]) * x.at([k])));
    };
    let config = lanes(Movement::Prophecy);
    let ex = extract::<f32>("mvt", config, transposed, body).unwrap();
    let cu = cuda_source(&ex).unwrap();
    assert!(!cu.contains("augur_sync_threads();"), "{cu}");
}
