//! Distributed statements on simulated ranks (every rank a thread): each
//! program equals the single-process computation for 1 to 4 ranks, sizes
//! the ranks do not divide included, and sends exactly the bytes its plan
//! says. Under owner-computes each rank receives exactly the elements its
//! computation reads that it does not hold; a partial-sums plan is chosen
//! only where it sends less than that.

use augur::{Builder, Dyn, Extracted};
use augur_einsum::dist::{self, Grid, Layout, Planned, Rule, Traffic};
use augur_einsum::{einsum, Config, Einsum, ShapeError, Tensor};
use std::cell::RefCell;
use std::collections::HashSet;

type Sig = unsafe extern "C" fn(*mut i64, *mut i64, *mut i64, i32);
type Body = fn(&Einsum, &[Tensor<i64>; 3], Dyn<i32>);

fn extract(
    ranks: usize,
    shapes: &[Vec<usize>; 3],
    layouts: [Layout; 3],
    body: Body,
) -> augur::Result<Extracted<Sig>> {
    extract_seen(ranks, shapes, layouts, body, &RefCell::new(Vec::new()))
}

/// As `extract`, the plans of the last run left in `seen`.
#[augur::staged]
fn extract_seen(
    ranks: usize,
    shapes: &[Vec<usize>; 3],
    layouts: [Layout; 3],
    body: Body,
    seen: &RefCell<Vec<Planned>>,
) -> augur::Result<Extracted<Sig>> {
    let shapes = shapes.clone();
    Builder::new().extract(
        "dist",
        move |a: Dyn<*mut i64>, b: Dyn<*mut i64>, c: Dyn<*mut i64>, n: Dyn<i32>| {
            let ein = Einsum::new(Config::cpu());
            let world = ein.distribute(ranks);
            let ts = [
                world.tensor_with::<i64>("A", &shapes[0], layouts[0], a),
                world.tensor_with::<i64>("B", &shapes[1], layouts[1], b),
                world.tensor_with::<i64>("C", &shapes[2], layouts[2], c),
            ];
            body(&ein, &ts, n);
            *seen.borrow_mut() = world.plans();
            ein.finish();
        },
    )
}

fn input(len: usize, seed: i64) -> Vec<i64> {
    (0..len as i64)
        .map(|x| (x * 7 + seed * 13) % 17 - 8)
        .collect()
}

/// Runs the program on `ranks` simulated ranks; the gathered C and each
/// rank's traffic, checked against the plans.
fn run(
    ranks: usize,
    shapes: &[Vec<usize>; 3],
    layouts: [Layout; 3],
    body: Body,
    turns: i32,
) -> (Vec<i64>, Vec<Traffic>) {
    let (c, traffic, _) = run_planned(ranks, shapes, layouts, body, (turns, 1));
    (c, traffic)
}

/// As `run`, with the plans. Every rank sent and received what the plans
/// say, `times` over (the turns, for a body whose statement is in a loop).
fn run_planned(
    ranks: usize,
    shapes: &[Vec<usize>; 3],
    layouts: [Layout; 3],
    body: Body,
    (turns, times): (i32, u64),
) -> (Vec<i64>, Vec<Traffic>, Vec<Planned>) {
    let seen = RefCell::new(Vec::new());
    let ex = extract_seen(ranks, shapes, layouts, body, &seen).unwrap();
    let plans = seen.into_inner();
    let program = dist::compile_ranks(&ex).unwrap();
    let grid = Grid::for_ranks(ranks);
    let len = |s: &Vec<usize>| s.iter().product::<usize>();
    let (a, b) = (input(len(&shapes[0]), 1), input(len(&shapes[1]), 2));
    let c0 = input(len(&shapes[2]), 3);
    let mut locals: Vec<[Vec<i64>; 3]> = (0..ranks)
        .map(|r| {
            [
                dist::scatter(&a, &shapes[0], layouts[0], grid, r),
                dist::scatter(&b, &shapes[1], layouts[1], grid, r),
                dist::scatter(&c0, &shapes[2], layouts[2], grid, r),
            ]
        })
        .collect();
    let f = program.get();
    let traffic = dist::run_ranks(&program, ranks, &mut locals, |_, [a, b, c]| {
        // SAFETY: each buffer is its rank's local array of the layout.
        unsafe { f(a.as_mut_ptr(), b.as_mut_ptr(), c.as_mut_ptr(), turns) }
    })
    .unwrap();
    let parts: Vec<Vec<i64>> = locals.iter().map(|l| l[2].clone()).collect();
    // A statement in a dyn loop is staged more than once in a run, with
    // the same plan: once per statement, and once per turn in the loop.
    let mut plans = plans;
    plans.dedup_by(|a, b| a.location == b.location);
    let planned = |f: fn(&Planned) -> &Vec<u64>| -> Vec<u64> {
        (0..ranks)
            .map(|r| plans.iter().map(|p| f(p)[r]).sum::<u64>() * times)
            .collect()
    };
    let what = format!("{ranks} ranks, {layouts:?}, {shapes:?}");
    let sent: Vec<u64> = traffic.iter().map(|t| t.sent_bytes).collect();
    let received: Vec<u64> = traffic.iter().map(|t| t.received_bytes).collect();
    assert_eq!(sent, planned(|p| &p.sent_bytes), "{what}");
    assert_eq!(received, planned(|p| &p.received_bytes), "{what}");
    (
        dist::gather(&parts, &shapes[2], layouts[2], grid),
        traffic,
        plans,
    )
}

fn matmul(a: &[i64], b: &[i64], c: &mut [i64], (m, k, n): (usize, usize, usize)) {
    for i in 0..m {
        for j in 0..n {
            c[i * n + j] = (0..k).map(|l| a[i * k + l] * b[l * n + j]).sum();
        }
    }
}

/// The global flat positions `rank` holds.
fn held(shape: &[usize], layout: Layout, grid: Grid, rank: usize) -> HashSet<usize> {
    let all: Vec<usize> = (0..shape.iter().product()).collect();
    dist::scatter(&all, shape, layout, grid, rank)
        .into_iter()
        .collect()
}

/// Bytes rank `r` must receive for `C = A B`: the rows of A and columns of
/// B its part of C reads, less what it holds.
fn matmul_needs(
    r: usize,
    (m, k, n): (usize, usize, usize),
    layouts: [Layout; 3],
    grid: Grid,
) -> u64 {
    let c = held(&[m, n], layouts[2], grid, r);
    let rows: HashSet<usize> = c.iter().map(|e| e / n).collect();
    let cols: HashSet<usize> = c.iter().map(|e| e % n).collect();
    let (a, b) = (
        held(&[m, k], layouts[0], grid, r),
        held(&[k, n], layouts[1], grid, r),
    );
    let a_need = rows
        .iter()
        .flat_map(|&i| (0..k).map(move |l| i * k + l))
        .filter(|e| !a.contains(e))
        .count();
    let b_need = cols
        .iter()
        .flat_map(|&j| (0..k).map(move |l| l * n + j))
        .filter(|e| !b.contains(e))
        .count();
    ((a_need + b_need) * 8) as u64
}

#[augur::staged]
fn product(ein: &Einsum, [a, b, c]: &[Tensor<i64>; 3], _: Dyn<i32>) {
    let (i, j, l) = (ein.index("i"), ein.index("j"), ein.index("l"));
    einsum!(c[i, j] = a[i, l] * b[l, j]);
}

const LAYOUT_SETS: [[Layout; 3]; 6] = [
    [Layout::Block2D, Layout::Block2D, Layout::Block2D],
    [Layout::BlockRows, Layout::BlockRows, Layout::BlockRows],
    [
        Layout::BlockCols,
        Layout::BlockRows,
        Layout::BlockCyclic { rows: 2, cols: 1 },
    ],
    [
        Layout::BlockCyclic { rows: 2, cols: 3 },
        Layout::BlockCyclic { rows: 2, cols: 3 },
        Layout::BlockCyclic { rows: 2, cols: 3 },
    ],
    [Layout::Replicated, Layout::Block2D, Layout::BlockRows],
    [Layout::BlockCols, Layout::BlockCols, Layout::Replicated],
];

#[test]
fn products_equal_the_single_process_one_and_receive_exactly_what_they_read() {
    let mut partial_sums_chosen = 0;
    for &(m, k, n) in &[(7, 5, 6), (1, 3, 2), (4, 1, 5), (9, 8, 3)] {
        for ranks in 1..=4 {
            for layouts in LAYOUT_SETS {
                let shapes = [vec![m, k], vec![k, n], vec![m, n]];
                let (got, traffic, plans) = run_planned(ranks, &shapes, layouts, product, (0, 1));
                let mut want = vec![0; m * n];
                matmul(&input(m * k, 1), &input(k * n, 2), &mut want, (m, k, n));
                let what = format!("{m}x{k}x{n} on {ranks} ranks, {layouts:?}");
                assert_eq!(got, want, "{what}");
                let grid = Grid::for_ranks(ranks);
                let sent: u64 = traffic.iter().map(|t| t.sent_bytes).sum();
                let received: u64 = traffic.iter().map(|t| t.received_bytes).sum();
                assert_eq!(sent, received, "{what}");
                let needs: Vec<u64> = (0..ranks)
                    .map(|r| matmul_needs(r, (m, k, n), layouts, grid))
                    .collect();
                match plans[0].rule {
                    Rule::OwnerComputes => {
                        let got: Vec<u64> = traffic.iter().map(|t| t.received_bytes).collect();
                        assert_eq!(got, needs, "{what}");
                    }
                    Rule::PartialSums => {
                        partial_sums_chosen += 1;
                        assert!(received < needs.iter().sum(), "{what}: {received} bytes");
                    }
                }
                if layouts == LAYOUT_SETS[0] && plans[0].rule == Rule::OwnerComputes {
                    let plan = dist::matmul_plan_bytes(m, n, k, grid, 8);
                    let sent: Vec<u64> = traffic.iter().map(|t| t.sent_bytes).collect();
                    assert_eq!(sent, plan, "{what}");
                }
            }
        }
    }
    // Block columns of A beside block rows of B split `l` alike.
    assert!(
        partial_sums_chosen > 0,
        "no case took the partial-sums plan"
    );
}

#[augur::staged]
fn product_transposed(ein: &Einsum, [a, b, c]: &[Tensor<i64>; 3], _: Dyn<i32>) {
    let (i, j, l) = (ein.index("i"), ein.index("j"), ein.index("l"));
    einsum!(c[i, j] = a[i, l] * b[j, l]);
}

#[augur::staged]
fn product_transposed_added(ein: &Einsum, [a, b, c]: &[Tensor<i64>; 3], _: Dyn<i32>) {
    let (i, j, l) = (ein.index("i"), ein.index("j"), ein.index("l"));
    einsum!(c[i, j] += a[i, l] * b[j, l]);
}

#[test]
fn transposed_products_add_partial_sums_exactly_and_send_what_pdgemm_sends() {
    let block = [Layout::Block2D; 3];
    let mut layout_sets = LAYOUT_SETS.to_vec();
    layout_sets.push([Layout::BlockCols, Layout::BlockCols, Layout::BlockRows]);
    for &(m, k, n) in &[(7, 5, 6), (8, 8, 8), (4, 1, 5)] {
        let shapes = [vec![m, k], vec![n, k], vec![m, n]];
        let (a, b, c0) = (input(m * k, 1), input(n * k, 2), input(m * n, 3));
        let product: Vec<i64> = (0..m * n)
            .map(|e| (0..k).map(|l| a[e / n * k + l] * b[e % n * k + l]).sum())
            .collect();
        for ranks in 1..=4 {
            let grid = Grid::for_ranks(ranks);
            for &layouts in &layout_sets {
                let added = layouts == block || layouts == LAYOUT_SETS[5];
                for (body, plus) in [
                    (product_transposed as Body, false),
                    (product_transposed_added, true),
                ] {
                    if plus && !added {
                        continue;
                    }
                    let (got, _, plans) = run_planned(ranks, &shapes, layouts, body, (0, 1));
                    let want: Vec<i64> = if plus {
                        c0.iter().zip(&product).map(|(c, p)| c + p).collect()
                    } else {
                        product.clone()
                    };
                    let what = format!("{m}x{k}x{n} on {ranks} ranks, {layouts:?}, += {plus}");
                    assert_eq!(got, want, "{what}");
                    if layouts == block && ranks > 1 && k >= grid.cols {
                        // pdgemm's plan: B's block down the process column,
                        // partial blocks of C along the process row.
                        assert_eq!(plans[0].rule, Rule::PartialSums, "{what}");
                        assert_eq!(
                            plans[0].sent_bytes,
                            dist::matmul_transposed_plan_bytes(m, n, k, grid, 8),
                            "{what}"
                        );
                    }
                }
            }
        }
    }
}

#[augur::staged]
fn tensor_times_matrix(ein: &Einsum, [x, m, y]: &[Tensor<i64>; 3], _: Dyn<i32>) {
    let (i, j, k, l) = (
        ein.index("i"),
        ein.index("j"),
        ein.index("k"),
        ein.index("l"),
    );
    einsum!(y[i, j, l] = x[i, j, k] * m[k, l]);
}

#[test]
fn a_tensor_times_a_matrix_equals_the_single_process_one() {
    let (ni, nj, nk, nl) = (5, 3, 4, 6);
    let shapes = [vec![ni, nj, nk], vec![nk, nl], vec![ni, nj, nl]];
    let (x, m) = (input(ni * nj * nk, 1), input(nk * nl, 2));
    let mut want = vec![0i64; ni * nj * nl];
    for i in 0..ni {
        for j in 0..nj {
            for l in 0..nl {
                want[(i * nj + j) * nl + l] = (0..nk)
                    .map(|k| x[(i * nj + j) * nk + k] * m[k * nl + l])
                    .sum();
            }
        }
    }
    for ranks in 1..=4 {
        for layouts in [
            [Layout::BlockRows, Layout::Replicated, Layout::BlockRows],
            [Layout::BlockRows, Layout::BlockRows, Layout::BlockRows],
            [Layout::BlockCols, Layout::BlockCols, Layout::Block2D],
        ] {
            let (got, traffic) = run(ranks, &shapes, layouts, tensor_times_matrix, 0);
            assert_eq!(got, want, "{ranks} ranks, {layouts:?}");
            let sent: u64 = traffic.iter().map(|t| t.sent_bytes).sum();
            let received: u64 = traffic.iter().map(|t| t.received_bytes).sum();
            assert_eq!(sent, received);
            if layouts[1] == Layout::Replicated {
                assert_eq!(
                    sent, 0,
                    "X and Y split alike, M everywhere: nothing to send"
                );
            }
        }
    }
}

#[augur::staged]
fn transpose_plus_index(ein: &Einsum, [a, b, c]: &[Tensor<i64>; 3], _: Dyn<i32>) {
    let (i, j) = (ein.index("i"), ein.index("j"));
    einsum!(c[i, j] = a[j, i] * 2 + b[i, j] - i * 10 + j);
}

#[augur::staged]
fn product_in_a_loop(ein: &Einsum, [a, b, c]: &[Tensor<i64>; 3], turns: Dyn<i32>) {
    let (i, j, l) = (ein.index("i"), ein.index("j"), ein.index("l"));
    let t = Dyn::new(0);
    while t.lt(turns).is_true() {
        einsum!(c[i, j] += a[i, l] * b[l, j]);
        t.set(t + 1);
    }
}

#[test]
fn a_transpose_with_index_values_and_a_product_in_a_dyn_loop_are_exact() {
    let (m, n) = (5, 7);
    let shapes = [vec![n, m], vec![m, n], vec![m, n]];
    let (a, b) = (input(n * m, 1), input(m * n, 2));
    let want: Vec<i64> = (0..m * n)
        .map(|e| {
            let (i, j) = ((e / n) as i64, (e % n) as i64);
            a[(j as usize) * m + i as usize] * 2 + b[e] - i * 10 + j
        })
        .collect();
    for ranks in 1..=4 {
        for layouts in [
            [Layout::BlockRows, Layout::BlockRows, Layout::BlockRows],
            [Layout::Block2D, Layout::BlockCols, Layout::Block2D],
        ] {
            let (got, _) = run(ranks, &shapes, layouts, transpose_plus_index, 0);
            assert_eq!(got, want, "{ranks} ranks, {layouts:?}");
        }
    }
    let (m, k, n) = (6, 4, 5);
    let shapes = [vec![m, k], vec![k, n], vec![m, n]];
    let mut once = vec![0; m * n];
    matmul(&input(m * k, 1), &input(k * n, 2), &mut once, (m, k, n));
    for ranks in [2, 3, 4] {
        for turns in [0, 1, 3] {
            let (got, traffic, _) = run_planned(
                ranks,
                &shapes,
                LAYOUT_SETS[0],
                product_in_a_loop,
                (turns, turns as u64),
            );
            let c0 = input(m * n, 3);
            let want: Vec<i64> = c0
                .iter()
                .zip(&once)
                .map(|(c, p)| c + p * turns as i64)
                .collect();
            assert_eq!(got, want, "{ranks} ranks, {turns} turns");
            let plan = dist::matmul_plan_bytes(m, n, k, Grid::for_ranks(ranks), 8);
            let sent: Vec<u64> = traffic.iter().map(|t| t.sent_bytes).collect();
            let per_turn: Vec<u64> = plan.iter().map(|b| b * turns as u64).collect();
            assert_eq!(sent, per_turn, "{ranks} ranks, {turns} turns");
        }
    }
}

#[augur::staged]
fn index_value(ein: &Einsum, [a, _, c]: &[Tensor<i64>; 3], _: Dyn<i32>) {
    let (i, j) = (ein.index("i"), ein.index("j"));
    einsum!(c[i, j] = a[i, j] + i);
}

#[augur::staged]
fn reads_its_left_side(ein: &Einsum, [a, b, c]: &[Tensor<i64>; 3], _: Dyn<i32>) {
    let (i, j, l) = (ein.index("i"), ein.index("j"), ein.index("l"));
    einsum!(c[i, j] = c[i, j] + a[i, l] * b[l, j]);
}

fn distribution_error(r: augur::Result<Extracted<Sig>>) -> String {
    let e = r.map(|_| ()).unwrap_err();
    match e.dsl_error::<ShapeError>() {
        Some(ShapeError::Distribution { problem, .. }) => problem.clone(),
        other => panic!("{other:?}: {e}"),
    }
}

#[test]
fn what_the_ranks_cannot_run_as_written_is_a_clear_error() {
    let cyclic = Layout::BlockCyclic { rows: 1, cols: 1 };
    let shapes = [vec![4, 4], vec![4, 4], vec![4, 4]];
    let e = distribution_error(extract(4, &shapes, [cyclic; 3], index_value));
    assert!(e.contains("index `i`") && e.contains("block layout"), "{e}");
    let e = distribution_error(extract(
        4,
        &[vec![4], vec![4, 4], vec![4, 4]],
        [Layout::Block2D; 3],
        product,
    ));
    assert!(e.contains("splits 2 dimensions"), "{e}");
}

/// A right side that reads the left side (`C[i,j] = C[i,j] + A[i,l]
/// B[l,j]`, the sum over `l` of both terms) reduces whole on each rank, so
/// every term reads `C` before it changes: exact on 1 to 4 ranks.
#[test]
fn a_right_side_that_reads_the_left_side_reduces_whole() {
    let (m, k, n) = (5, 6, 4);
    let shapes = [vec![m, k], vec![k, n], vec![m, n]];
    let mut product = vec![0; m * n];
    matmul(&input(m * k, 1), &input(k * n, 2), &mut product, (m, k, n));
    let want: Vec<i64> = input(m * n, 3)
        .iter()
        .zip(&product)
        .map(|(c, p)| c * k as i64 + p)
        .collect();
    for ranks in 1..=4 {
        for layouts in [LAYOUT_SETS[0], LAYOUT_SETS[2]] {
            let (got, _) = run(ranks, &shapes, layouts, reads_its_left_side, 0);
            assert_eq!(got, want, "{ranks} ranks, {layouts:?}");
        }
    }
}
