//! Matrix products inside `run_on_gpu` go through shared memory (tiles of
//! A and B, block barriers) unless the schedule is the paper's: results
//! equal the CPU's on odd sizes, operands in either order and stored
//! transposed, `=` and `+=`, two products in one kernel (between grid
//! syncs), with every movement; the interpreter checks the simulation for
//! races; the CUDA compiles to PTX.

use crate::common;

use augur::Dyn;
use augur_einsum::{cuda_source, Config, Einsum, Movement, Schedule, Tensor};
use common::{all_equal, extract, interpret_simulated, run_all, run_on, small, Body};

const M: usize = 7;
const K: usize = 5;
const N: usize = 6;

#[augur::staged]
fn ints(n: usize, seed: usize) -> Vec<f32> {
    (0..n).map(|x| ((x * 7 + seed) % 9) as f32 - 4.0).collect()
}

#[augur::staged]
fn init() -> [Vec<f32>; 3] {
    [ints(M * K, 1), ints(K * N, 2), ints(M * N, 3)]
}

/// `C = A B` (and `+=`): row-major A (M × K), B (K × N), C (M × N).
#[augur::staged]
fn product(acc: bool, [a, b, c]: &[Vec<f32>; 3]) -> Vec<f32> {
    (0..M * N)
        .map(|e| {
            let (i, j) = (e / N, e % N);
            let s: f32 = (0..K).map(|k| a[i * K + k] * b[k * N + j]).sum();
            if acc {
                c[e] + s
            } else {
                s
            }
        })
        .collect()
}

const SHAPES: [&[usize]; 3] = [&[M, K], &[K, N], &[M, N]];

#[augur::staged]
fn matmul(ein: &Einsum, [a, b, c]: &[Tensor<f32>; 3], _: Dyn<i32>) {
    let (i, j, k) = (ein.index("i"), ein.index("j"), ein.index("k"));
    ein.run_on_gpu(|| c.at([i, j]).set(a.at([i, k]) * b.at([k, j])));
}

#[augur::staged]
fn matmul_acc_swapped(ein: &Einsum, [a, b, c]: &[Tensor<f32>; 3], _: Dyn<i32>) {
    let (i, j, k) = (ein.index("i"), ein.index("j"), ein.index("k"));
    ein.run_on_gpu(|| c.at([i, j]).add_to(b.at([k, j]) * a.at([i, k])));
}

#[test]
#[augur::staged]
fn products_on_the_gpu_equal_the_cpus() {
    for (name, body, acc) in [
        ("mm", (|e, t, n| matmul(e, t, n)) as Body<f32>, false),
        (
            "mm_acc",
            (|e, t, n| matmul_acc_swapped(e, t, n)) as Body<f32>,
            true,
        ),
    ] {
        let rs = run_all(name, SHAPES, init(), 1, body);
        all_equal(&rs);
        assert_eq!(rs[0].1[2], product(acc, &init()), "{name}");
        // The kernel stages tiles in shared memory (small(): 4 threads as
        // 2 × 2, each computing 2 × 2 results, so tiles of 4 × 4 of C and
        // 4 × 2 of A and 2 × 4 of B: 64 bytes), and the simulation is
        // race-free.
        let ex = extract::<f32>(name, small(Movement::Prophecy), SHAPES, body).unwrap();
        let cu = cuda_source(&ex).unwrap();
        assert_eq!(cu.matches("augur_sync_threads();").count(), 2, "{cu}");
        assert!(cu.contains("<<<3, 4, 64>>>"), "{cu}");
        let got =
            interpret_simulated(&ex, &init(), M * N).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(got, product(acc, &init()), "{name} (interpreter)");
    }
}

/// Each thread computes a square of 4 × 4, 2 × 2 or 1 × 1 results: the
/// largest that still gives every block a tile (1, 3 and 40 blocks of 4
/// threads on the 7 × 6 result); the same results from each, in C and in
/// the race-checking interpreter.
#[test]
#[augur::staged]
fn register_blocks_shrink_until_every_block_has_a_tile() {
    for (blocks, bytes) in [(1, 128), (3, 64), (40, 32)] {
        let config = Config {
            blocks,
            ..small(Movement::Prophecy)
        };
        let ex = extract::<f32>("mm", config, SHAPES, |e, t, n| matmul(e, t, n)).unwrap();
        let cu = cuda_source(&ex).unwrap();
        let launch = format!("<<<{blocks}, 4, {bytes}>>>");
        assert!(cu.contains(&launch), "{launch}: {cu}");
        let p = common::build(&ex, config, augur::exec::Backend::Auto).unwrap();
        assert_eq!(
            run_on(&p, &init(), 1)[2],
            product(false, &init()),
            "{blocks}"
        );
        let got = interpret_simulated(&ex, &init(), M * N)
            .unwrap_or_else(|e| panic!("{blocks} blocks: {e}"));
        assert_eq!(
            got,
            product(false, &init()),
            "{blocks} blocks (interpreter)"
        );
    }
}

/// On the paper's grid (40 blocks of 512 threads as 32 × 16): 4 × 4
/// results per thread (tiles of 128 × 64, loads of A in four turns and of
/// B in two) and 2 × 2, with edges in every direction, in C and the JIT.
#[test]
#[augur::staged]
fn register_blocks_on_the_papers_grid() {
    for (m, k, n, bytes) in [(260, 37, 840, 12288), (100, 37, 700, 6144)] {
        let shapes: [&[usize]; 3] = [&[m, k], &[k, n], &[m, n]];
        let body: Body<f32> = |ein, [a, b, c], _| {
            let (i, j, k) = (ein.index("i"), ein.index("j"), ein.index("k"));
            ein.run_on_gpu(|| c.at([i, j]).set(a.at([i, k]) * b.at([k, j])));
        };
        let init = [ints(m * k, 1), ints(k * n, 2), ints(m * n, 3)];
        let want: Vec<f32> = (0..m * n)
            .map(|e| {
                (0..k)
                    .map(|q| init[0][e / n * k + q] * init[1][q * n + e % n])
                    .sum()
            })
            .collect();
        let config = Config::with(Movement::Prophecy);
        let ex = extract::<f32>("mm", config, shapes, body).unwrap();
        let launch = format!("<<<40, 512, {bytes}>>>");
        assert!(cuda_source(&ex).unwrap().contains(&launch), "{launch}");
        for backend in [augur::exec::Backend::Auto, augur::exec::Backend::Jit] {
            let p = common::build(&ex, config, backend).unwrap();
            assert_eq!(run_on(&p, &init, 1)[2], want, "{m}x{k}x{n} {backend:?}");
        }
    }
}

/// A stored transposed (`A[k, i]`), and a second product in the same kernel
/// after a grid sync: the simulation runs the stretches between grid syncs
/// block by block.
#[test]
#[augur::staged]
fn transposed_operand_and_two_products_in_one_kernel() {
    let shapes: [&[usize]; 3] = [&[K, M], &[K, N], &[M, N]];
    let body: Body<f32> = |ein, [a, b, c], _| {
        let (i, j, k) = (ein.index("i"), ein.index("j"), ein.index("k"));
        ein.run_on_gpu(|| {
            c.at([i, j]).set(a.at([k, i]) * b.at([k, j]));
            c.at([i, j]).add_to(a.at([k, i]) * b.at([k, j]));
        });
    };
    let a: Vec<f32> = ints(K * M, 1);
    let init = [a.clone(), ints(K * N, 2), ints(M * N, 3)];
    let rs = run_all("two", shapes, init.clone(), 1, body);
    all_equal(&rs);
    let want: Vec<f32> = (0..M * N)
        .map(|e| {
            let (i, j) = (e / N, e % N);
            2.0 * (0..K)
                .map(|k| a[k * M + i] * init[1][k * N + j])
                .sum::<f32>()
        })
        .collect();
    assert_eq!(rs[0].1[2], want);
    let ex = extract::<f32>("two", small(Movement::Prophecy), shapes, body).unwrap();
    let cu = cuda_source(&ex).unwrap();
    assert_eq!(cu.matches("augur_sync_threads();").count(), 4, "{cu}");
    assert_eq!(cu.matches("augur_grid_sync();").count(), 1, "{cu}");
    let ptx = common::ptx(&cu);
    assert!(ptx.contains(".shared"), "{ptx}");
}

/// The paper's loops stay under `Schedule::Naive`; a block of one thread
/// cannot tile (the paper's loops again).
#[test]
#[augur::staged]
fn the_papers_loops_where_asked_or_where_a_tile_cannot_fit() {
    let naive = Config {
        schedule: Schedule::Naive,
        ..small(Movement::Prophecy)
    };
    let single = Config {
        threads: 1,
        ..small(Movement::Prophecy)
    };
    for config in [naive, single] {
        let got = common::papers_loops(config, SHAPES, |e, t, n| matmul(e, t, n), &init());
        assert_eq!(got, product(false, &init()), "{config:?}");
    }
}
