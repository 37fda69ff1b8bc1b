//! Loops around statements: a dyn loop inside `run_on_gpu`, plain Rust
//! loops (under `#[augur::staged]`) inside a kernel and inside a dyn loop
//! on the CPU, and `augur::range` inside a kernel; each extracts, and the
//! simulation runs it.

use crate::common;

use augur::{Builder, Dyn};
use augur_einsum::{compile_simulated, Config, Einsum, Movement};
use common::{small, Body};

/// A dyn loop around a statement inside run_on_gpu under CopyAll (a plain
/// statement counter used to make the first turn differ, so the loop never
/// closed) extracts and simulates.
#[test]
#[augur::staged]
fn dyn_loop_inside_kernel_copy_all() {
    let body: Body<f32> = |ein, [a, b, _c], n| {
        let i = ein.index("i");
        ein.run_on_gpu(|| {
            let k = Dyn::new(0i32);
            while k.lt(n).is_true() {
                b.at([i]).add_to(a.at([i]));
                k.set(k + 1);
            }
        });
    };
    let r = Builder::new()
        .max_loop_iterations(200)
        .max_runs(500)
        .extract(
            "lik",
            move |a: Dyn<*mut f32>, b: Dyn<*mut f32>, c: Dyn<*mut f32>, n: Dyn<i32>| {
                let ein = Einsum::new(small(Movement::CopyAll));
                let ts = [
                    ein.tensor_on::<f32>("A", [8], a),
                    ein.tensor_on::<f32>("B", [8], b),
                    ein.tensor_on::<f32>("C", [8], c),
                ];
                body(&ein, &ts, n);
                ein.finish();
            },
        );
    let ex = r.unwrap_or_else(|e| panic!("{e}"));
    // Prophecy extracts (a Static peels the first turn) but puts the grid
    // sync inside the loop, which the simulation rejects.
    compile_simulated(&ex).unwrap();
}

/// A statement repeated by a plain Rust loop inside run_on_gpu (the
/// kernel's thread loop is a dyn loop), in a function under
/// `#[augur::staged]`: its turns are first-stage state scoped to the loop.
/// (Without the attribute, the error names the plain loop and the fix.)
#[augur::staged]
fn repeated_statement(m: Movement, a: Dyn<*mut i64>, b: Dyn<*mut i64>) {
    let ein = Einsum::new(small(m));
    let (i, j) = (ein.index("i"), ein.index("j"));
    let a = ein.tensor_on::<i64>("A", [5, 7], a);
    let b = ein.tensor_on::<i64>("B", [7, 5], b);
    ein.run_on_gpu(|| {
        for _ in 0..3 {
            b.at([j, i]).add_to(a.at([i, j]));
        }
    });
    ein.finish();
}

#[test]
#[augur::staged]
fn statements_in_plain_loop_inside_kernel() {
    for m in [Movement::CopyAll, Movement::Prophecy] {
        let r = Builder::new()
            .max_runs(500)
            .extract("rep_stmt", move |a: Dyn<*mut i64>, b: Dyn<*mut i64>| {
                repeated_statement(m, a, b)
            });
        let ex = r.unwrap_or_else(|e| panic!("{}: {e}", m.name()));
        compile_simulated(&ex).unwrap();
    }
}

/// The same on the CPU: a plain Rust loop over two statements inside a dyn
/// loop (`for t in [&a, &b] { t[i] *= 0.5 }`).
#[augur::staged]
fn halve_both(a: Dyn<*mut f32>, b: Dyn<*mut f32>, n: Dyn<i32>) {
    let ein = Einsum::new(Config::cpu());
    let i = ein.index("i");
    let a = ein.tensor_on::<f32>("A", [8], a);
    let b = ein.tensor_on::<f32>("B", [8], b);
    let k = Dyn::new(0i32);
    while k.lt(n).is_true() {
        for t in [&a, &b] {
            t.at([i]).mul_by(0.5f32);
        }
        k.set(k + 1);
    }
    ein.finish();
}

#[test]
#[augur::staged]
fn cpu_statements_in_plain_loop_inside_dyn_loop() {
    let r = Builder::new().max_runs(500).extract("cpu_pl", halve_both);
    r.unwrap_or_else(|e| panic!("{e}"));
}

/// Statements repeated with `augur::range` inside a kernel (a first-stage
/// loop the engine sees) extract, simulate and agree with the CPU.
#[test]
#[augur::staged]
fn statements_repeated_with_range_inside_kernel() {
    let stage = |m: Movement| {
        move |a: Dyn<*mut i64>, b: Dyn<*mut i64>| {
            let ein = Einsum::new(small(m));
            let (i, j) = (ein.index("i"), ein.index("j"));
            let a = ein.tensor_on::<i64>("A", [5, 7], a);
            let b = ein.tensor_on::<i64>("B", [7, 5], b);
            ein.run_on_gpu(|| {
                for _ in augur::range(0..3) {
                    b.at([j, i]).add_to(a.at([i, j]));
                }
            });
            ein.finish();
        }
    };
    for m in Movement::ALL {
        let ex = Builder::new().extract("rep_range", stage(m)).unwrap();
        let p = compile_simulated(&ex).unwrap();
        let mut a: Vec<i64> = (0..35).collect();
        let mut b = vec![1i64; 35];
        // SAFETY: both buffers hold 35 values.
        unsafe { (p.get())(a.as_mut_ptr(), b.as_mut_ptr()) };
        for r in 0..7 {
            for c in 0..5 {
                assert_eq!(b[r * 5 + c], 1 + 3 * a[c * 7 + r], "{}", m.name());
            }
        }
    }
}
