//! Tutorial: einsum from one core to many ranks (see `augur_einsum::tutorial`).
//!
//! Tensor-times-matrix, `Y[i][j][r] = X[i][j][k] U[k][r]`, three ways: on
//! the cores of this machine (the layout `Schedule::Auto` chose, as
//! `Einsum::chosen` reports it), on two ranks simulated by threads (the
//! bytes each rank sent, against the plan's count), and the standalone MPI
//! program of a product. Every result is compared with plain Rust.
//!
//! Run with `cargo run --release -p augur-einsum --example tutorial_ranks`.

use augur::{Builder, Dyn};
use augur_einsum::dist::{self, Grid, Layout};
use augur_einsum::{compile_cpu, einsum, Config, Einsum};
use std::cell::RefCell;

const I: usize = 48;
const J: usize = 40;
const K: usize = 64;
const R: usize = 32;

type Ttm = unsafe extern "C" fn(*mut f64, *mut f64, *mut f64);

/// Plain Rust.
fn ttm(x: &[f64], u: &[f64]) -> Vec<f64> {
    let mut y = vec![0.0; I * J * R];
    for ij in 0..I * J {
        for k in 0..K {
            for r in 0..R {
                y[ij * R + r] += x[ij * K + k] * u[k * R + r];
            }
        }
    }
    y
}

/// On this machine's cores: staged, compiled with OpenMP, checked.
#[augur::staged]
fn on_the_cores(x: &[f64], u: &[f64]) -> augur::Result<()> {
    let chosen = RefCell::new(Vec::new());
    let seen = &chosen;
    let ex = Builder::new().extract(
        "ttm",
        |xp: Dyn<*mut f64>, up: Dyn<*mut f64>, yp: Dyn<*mut f64>| {
            let ein = Einsum::new(Config {
                openmp: true,
                ..Config::cpu()
            });
            let (i, j, k, r) = (
                ein.index("i"),
                ein.index("j"),
                ein.index("k"),
                ein.index("r"),
            );
            let x = ein.tensor_on::<f64>("X", [I, J, K], xp);
            let u = ein.tensor_on::<f64>("U", [K, R], up);
            let y = ein.tensor_on::<f64>("Y", [I, J, R], yp);
            einsum!(y[i, j, r] = x[i, j, k] * u[k, r]);
            *seen.borrow_mut() = ein.chosen();
            ein.finish();
        },
    )?;
    for c in chosen.borrow().iter() {
        println!("chosen: {c}");
    }
    let p = compile_cpu(&ex, true)?;
    let f: Ttm = p.get();
    let (mut x, mut u, mut y) = (x.to_vec(), u.to_vec(), vec![0.0; I * J * R]);
    // SAFETY: the buffers hold the shapes' element counts.
    unsafe { f(x.as_mut_ptr(), u.as_mut_ptr(), y.as_mut_ptr()) };
    assert_eq!(y, ttm(&x, &u), "on the cores");
    println!("on the cores: equal to plain Rust");
    Ok(())
}

/// On two ranks (threads of this process): X and Y by blocks of rows, U
/// by blocks of rows too, so each rank must receive the other's part of U.
#[augur::staged]
fn on_two_ranks(x: &[f64], u: &[f64]) -> augur::Result<()> {
    let ranks = 2;
    let ex = Builder::new().extract(
        "ttm_ranks",
        |xp: Dyn<*mut f64>, up: Dyn<*mut f64>, yp: Dyn<*mut f64>| {
            let ein = Einsum::new(Config::cpu());
            let world = ein.distribute(ranks);
            let (i, j, k, r) = (
                ein.index("i"),
                ein.index("j"),
                ein.index("k"),
                ein.index("r"),
            );
            let x = world.tensor_with::<f64>("X", [I, J, K], Layout::BlockRows, xp);
            let u = world.tensor_with::<f64>("U", [K, R], Layout::BlockRows, up);
            let y = world.tensor_with::<f64>("Y", [I, J, R], Layout::BlockRows, yp);
            einsum!(y[i, j, r] = x[i, j, k] * u[k, r]);
            ein.finish();
        },
    )?;
    let program = dist::compile_ranks(&ex)?;
    let grid = Grid::for_ranks(ranks);
    let mut locals: Vec<[Vec<f64>; 3]> = (0..ranks)
        .map(|rank| {
            let y = dist::local_shape(&[I, J, R], Layout::BlockRows, grid, rank);
            [
                dist::scatter(x, &[I, J, K], Layout::BlockRows, grid, rank),
                dist::scatter(u, &[K, R], Layout::BlockRows, grid, rank),
                vec![0.0; y.iter().product()],
            ]
        })
        .collect();
    let f: Ttm = program.get();
    let traffic = dist::run_ranks(&program, ranks, &mut locals, |_, [x, u, y]| {
        // SAFETY: each buffer holds its rank's local array.
        unsafe { f(x.as_mut_ptr(), u.as_mut_ptr(), y.as_mut_ptr()) }
    })?;
    let parts: Vec<Vec<f64>> = locals.iter().map(|l| l[2].clone()).collect();
    let y = dist::gather(&parts, &[I, J, R], Layout::BlockRows, grid);
    assert_eq!(y, ttm(x, u), "on two ranks");
    // Each rank sends its half of U to the other, and nothing else.
    for (rank, t) in traffic.iter().enumerate() {
        assert_eq!(t.sent_bytes, (K / 2 * R * 8) as u64);
        println!(
            "rank {rank}: sent {} bytes in {} messages (its half of U)",
            t.sent_bytes, t.sent_messages
        );
    }
    println!("on two ranks: equal to plain Rust");
    Ok(())
}

fn main() -> augur::Result<()> {
    let x: Vec<f64> = (0..I * J * K).map(|e| (e % 7) as f64 - 3.0).collect();
    let u: Vec<f64> = (0..K * R).map(|e| (e % 5) as f64 - 2.0).collect();
    on_the_cores(&x, &u)?;
    on_two_ranks(&x, &u)?;
    // Under MPI: a standalone program, its build and run lines in its header.
    let code = dist::summa(256, 256, 256, 4, Layout::Block2D)?;
    for line in code.lines().take(4) {
        println!("{line}");
    }
    Ok(())
}
