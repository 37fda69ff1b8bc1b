//! Kernels among host code: CPU writes between kernels, kernels in plain
//! Rust loops, dyn loops and dyn ifs, dyn control flow and shared values
//! inside a kernel, and cooperative (two-statement) kernels, each built
//! for the CPU and the CPU-simulated GPU under every movement and
//! compared (byte counts included); extraction gives the same CUDA twice.

use crate::common;

use augur::Dyn;
use augur_einsum::{compile_cpu, cuda_source, Movement};
use common::{all_equal, extract, prophecy_counters, run_all, seq, small, Body};

/// Prophecy bytes: A written on the CPU between two kernels is copied in twice; B (kernel 1 output) out and in.
#[test]
#[augur::staged]
fn cpu_write_between_kernels() {
    let rs = run_all::<f32>(
        "cpu_between",
        [&[8], &[8], &[8]],
        [seq(8), seq(8), seq(8)],
        1,
        |ein, [a, b, c], _n| {
            let i = ein.index("i");
            ein.run_on_gpu(|| b.at([i]).set(a.at([i]) * 2.0f32));
            a.at([i]).add_to(10.0f32);
            ein.run_on_gpu(|| c.at([i]).set(a.at([i]) + b.at([i])));
        },
    );
    all_equal(&rs);
    let c = prophecy_counters(&rs);
    // in: A, A, B ; out: B, C
    assert_eq!(c.to_device, 3 * 32);
    assert_eq!(c.to_host, 2 * 32);
}

/// One run_on_gpu call site in a plain Rust loop: each launch gets its own prophecies and history.
#[test]
#[augur::staged]
fn kernel_in_plain_rust_loop() {
    // Same run_on_gpu call site in a plain Rust loop; kernel 1 writes B,
    // the CPU then overwrites B, kernel 2 does not touch B.
    let rs = run_all::<f32>(
        "plain_loop",
        [&[8], &[8], &[8]],
        [seq(8), seq(8), seq(8)],
        1,
        |ein, [a, b, c], _n| {
            let i = ein.index("i");
            for t in 0..2 {
                ein.run_on_gpu(|| {
                    if t == 0 {
                        b.at([i]).set(a.at([i]) * 2.0f32)
                    } else {
                        c.at([i]).set(a.at([i]) * 3.0f32)
                    }
                });
                if t == 0 {
                    b.at([i]).set(7.0f32);
                }
            }
        },
    );
    all_equal(&rs);
}

/// Kernels in a dyn loop and a dyn if, with CPU writes in between.
#[test]
#[augur::staged]
fn kernel_in_dyn_loop_and_if() {
    for n in [0, 1, 3] {
        let rs = run_all::<f32>(
            "dyn_loop_if",
            [&[8], &[8], &[8]],
            [seq(8), seq(8), seq(8)],
            n,
            |ein, [a, b, c], n| {
                let i = ein.index("i");
                let k = Dyn::new(0i32);
                while k.lt(n).is_true() {
                    ein.run_on_gpu(|| b.at([i]).add_to(a.at([i])));
                    a.at([i]).add_to(1.0f32);
                    k.set(k + 1);
                }
                if n.gt(1).is_true() {
                    ein.run_on_gpu(|| c.at([i]).set(b.at([i]) - a.at([i])));
                }
            },
        );
        all_equal(&rs);
    }
}

/// A statement in a dyn if inside a kernel: the tensor is copied in (partial path).
#[test]
#[augur::staged]
fn statement_in_dyn_if_inside_kernel() {
    for n in [0, 1] {
        let rs = run_all::<f32>(
            "if_in_kernel",
            [&[8], &[8], &[8]],
            [seq(8), seq(8), seq(8)],
            n,
            |ein, [a, b, _c], n| {
                let i = ein.index("i");
                ein.run_on_gpu(|| {
                    if n.gt(0).is_true() {
                        b.at([i]).set(a.at([i]) * 2.0f32);
                    }
                });
            },
        );
        all_equal(&rs);
    }
}

/// A write only on the false (later explored) side of a dyn if in a kernel is still copied out.
#[test]
#[augur::staged]
fn write_on_false_side_in_kernel() {
    for n in [0, 1] {
        let rs = run_all::<f32>(
            "else_write",
            [&[8], &[8], &[8]],
            [seq(8), seq(8), seq(8)],
            n,
            |ein, [a, b, c], n| {
                let i = ein.index("i");
                ein.run_on_gpu(|| {
                    if n.gt(0).is_true() {
                        c.at([i]).set(1.0f32);
                    } else {
                        b.at([i]).set(a.at([i]) * 2.0f32);
                    }
                });
            },
        );
        all_equal(&rs);
    }
}

/// Two extractions give byte-identical CUDA.
#[test]
#[augur::staged]
fn determinism() {
    let body: Body<f32> = |ein, [a, b, c], n| {
        let (i, j, k) = (ein.index("i"), ein.index("j"), ein.index("k"));
        ein.run_on_gpu(|| {
            c.at([i, j]).set(a.at([i, k]) * b.at([k, j]));
            if n.gt(0).is_true() {
                b.at([i, i]).set(1.0f32);
            }
        });
        a.at([i, k]).add_to(c.at([i, j]));
    };
    let mk = || {
        extract::<f32>(
            "det",
            small(Movement::Prophecy),
            [&[4, 4], &[4, 4], &[4, 4]],
            body,
        )
    };
    let (x, y) = (mk(), mk());
    match (x, y) {
        (Ok(x), Ok(y)) => {
            assert_eq!(cuda_source(&x).unwrap(), cuda_source(&y).unwrap());
        }
        (x, y) => panic!("{:?} {:?}", x.err(), y.err()),
    }
}

/// A uniform `Dyn` value computed inside run_on_gpu and used by two
/// statements (across a barrier) simulates: the simulation computes it once.
#[test]
#[augur::staged]
fn dyn_value_shared_by_two_statements() {
    let rs = run_all::<f32>(
        "value_two",
        [&[8], &[8], &[8]],
        [seq(8), seq(8), seq(8)],
        3,
        |ein, [a, b, c], n| {
            let i = ein.index("i");
            ein.run_on_gpu(|| {
                let s = n.cast::<f32>() * 2.0f32;
                b.at([i]).set(a.at([i]) * s);
                c.at([i]).set(b.at([i]) * s);
            });
        },
    );
    all_equal(&rs);
}

/// A second statement in a (uniform) dyn if inside run_on_gpu puts a
/// barrier in control flow: the simulation runs that `if` on the host.
#[test]
#[augur::staged]
fn second_statement_in_dyn_if_inside_kernel() {
    for n in [0, 1] {
        let rs = run_all::<f32>(
            "if2_in_kernel",
            [&[8], &[8], &[8]],
            [seq(8), seq(8), seq(8)],
            n,
            |ein, [a, b, c], n| {
                let i = ein.index("i");
                ein.run_on_gpu(|| {
                    b.at([i]).set(a.at([i]) * 2.0f32);
                    if n.gt(0).is_true() {
                        c.at([i]).set(b.at([i]) * 2.0f32);
                    }
                });
            },
        );
        all_equal(&rs);
    }
}

/// compile_cpu of a GPU-config program with a two-statement kernel gets the
/// simulation (it used to fail in the C compiler on `augur_grid_sync`).
#[test]
#[augur::staged]
fn compile_cpu_of_cooperative_kernel() {
    let ex = extract::<f32>(
        "cpu_coop",
        small(Movement::Prophecy),
        [&[8], &[8], &[8]],
        |ein, [a, b, c], _n| {
            let (i, j) = (ein.index("i"), ein.index("j"));
            ein.run_on_gpu(|| {
                b.at([i]).set(a.at([i]) * 2.0f32);
                c.at([i]).set(b.at([j]));
            });
        },
    )
    .unwrap();
    match compile_cpu(&ex, false) {
        Ok(_) => eprintln!("compiled"),
        Err(e) => panic!("compile_cpu of a GPU program: {e}"),
    }
}
