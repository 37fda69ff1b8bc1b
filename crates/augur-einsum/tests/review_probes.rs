//! Adversarial review probes of the einsum DSL: the same program built for
//! the CPU, the CPU-simulated GPU under each movement, and plain Rust.
//!
//! Probes marked `#[ignore = "bug: ..."]` expose bugs (each fails when run
//! with `--ignored`); the others are regression tests for cases the review
//! found handled correctly (byte counts included).

use augur::{Builder, Dyn, Extracted};
use augur_einsum::{compile_cpu, compile_simulated, cuda_source, Config, Counters, Einsum};
use augur_einsum::{Movement, Tensor};

type Sig<E> = unsafe extern "C" fn(*mut E, *mut E, *mut E, i32);
type Body<E> = fn(&Einsum, &[Tensor<E>; 3], Dyn<i32>);

fn extract<E: augur_einsum::Elem + augur::CScalar>(
    name: &str,
    config: Config,
    shapes: [&[usize]; 3],
    body: Body<E>,
) -> augur::Result<Extracted<Sig<E>>> {
    let shapes: Vec<Vec<usize>> = shapes.iter().map(|s| s.to_vec()).collect();
    Builder::new().extract(
        name,
        move |a: Dyn<*mut E>, b: Dyn<*mut E>, c: Dyn<*mut E>, n: Dyn<i32>| {
            let ein = Einsum::new(config);
            let ts = [
                ein.tensor_on::<E>("A", &shapes[0], a),
                ein.tensor_on::<E>("B", &shapes[1], b),
                ein.tensor_on::<E>("C", &shapes[2], c),
            ];
            body(&ein, &ts, n);
            ein.finish();
        },
    )
}

fn small(m: Movement) -> Config {
    Config {
        blocks: 3,
        threads: 4,
        ..Config::with(m)
    }
}

/// Runs `body` under the CPU config and every simulated movement; returns
/// (config name, buffers after, counters).
fn run_all<E: augur_einsum::Elem + augur::CScalar>(
    name: &str,
    shapes: [&[usize]; 3],
    init: [Vec<E>; 3],
    n: i32,
    body: Body<E>,
) -> Vec<(String, [Vec<E>; 3], Option<Counters>)> {
    let mut out = Vec::new();
    let mut configs = vec![("cpu".to_string(), Config::cpu())];
    for m in Movement::ALL {
        configs.push((m.name().to_string(), small(m)));
    }
    for (cname, config) in configs {
        let ex = extract::<E>(&format!("{name}_{cname}"), config, shapes, body)
            .unwrap_or_else(|e| panic!("{cname}: {e}"));
        let p = if config.gpu {
            compile_simulated(&ex).unwrap_or_else(|e| panic!("{cname}: {e}"))
        } else {
            compile_cpu(&ex, false).unwrap_or_else(|e| panic!("{cname}: {e}"))
        };
        let mut bufs = init.clone();
        p.reset().unwrap();
        unsafe {
            (p.get())(
                bufs[0].as_mut_ptr(),
                bufs[1].as_mut_ptr(),
                bufs[2].as_mut_ptr(),
                n,
            )
        };
        let c = if config.gpu {
            Some(p.counters().unwrap())
        } else {
            None
        };
        out.push((cname, bufs, c));
    }
    out
}

/// One build's name, its three output buffers and its counters.
type Outcome<E> = (String, [Vec<E>; 3], Option<Counters>);

fn all_equal<E: PartialEq + std::fmt::Debug>(rs: &[Outcome<E>]) {
    for r in &rs[1..] {
        assert_eq!(r.1, rs[0].1, "{} differs from {}", r.0, rs[0].0);
    }
}

fn prophecy_counters<E>(rs: &[Outcome<E>]) -> Counters {
    rs.iter().find(|r| r.0 == "prophecy").unwrap().2.unwrap()
}

fn seq(n: usize) -> Vec<f32> {
    (0..n).map(|x| x as f32 + 1.0).collect()
}

/// Prophecy bytes: A written on the CPU between two kernels is copied in twice; B (kernel 1 output) out and in.
#[test]
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

/// The same index twice on the right (a trace), on the CPU and the GPU.
#[test]
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

/// Two extractions give byte-identical CUDA.
#[test]
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

// ------------------------------------------- bugs found here (now fixed)

/// A kernel of one `Einsum` reading a tensor of another would read its host
/// buffer (an illegal memory access on an H100; right answers in the
/// simulation): it is an error naming the tensor.
#[test]
fn tensors_of_another_instance() {
    let r = Builder::new().extract("two_instances", |a: Dyn<*mut f32>, b: Dyn<*mut f32>| {
        let e1 = Einsum::new(small(Movement::Prophecy));
        let e2 = Einsum::new(small(Movement::Prophecy));
        let i = e1.index("i");
        let a = e1.tensor_on::<f32>("A", [8], a);
        let b = e2.tensor_on::<f32>("B", [8], b);
        e2.run_on_gpu(|| b.at([i]).set(a.at([i]) * 2.0f32));
        e1.finish();
        e2.finish();
    });
    match r {
        Err(augur::Error::Panic { message, .. }) => {
            assert!(
                message.contains("tensor `A` belongs to another Einsum"),
                "{message}"
            )
        }
        other => panic!("expected a panic, got {:?}", other.map(|_| ())),
    }
}

/// blocks * threads over i32::MAX (the one-index GPU loop's stride used to
/// wrap to -2^31): a configuration error.
#[test]
fn grid_product_overflow() {
    // blocks * threads does not fit in i32.
    let config = Config {
        blocks: 1 << 21,
        threads: 1024,
        ..Config::with(Movement::Prophecy)
    };
    let r = std::panic::catch_unwind(|| {
        extract::<f32>(
            "bigGrid",
            config,
            [&[8], &[8], &[8]],
            |ein, [a, b, _c], _n| {
                let i = ein.index("i");
                ein.run_on_gpu(|| b.at([i]).set(a.at([i])));
            },
        )
        .map(|ex| cuda_source(&ex))
    });
    match r {
        Ok(Ok(Ok(src))) => {
            let k = src
                .split("__global__")
                .nth(1)
                .unwrap()
                .split("\n}\n")
                .next()
                .unwrap();
            panic!("accepted; kernel:\n{k}")
        }
        Ok(Ok(Err(e))) | Ok(Err(e)) => eprintln!("error: {e}"),
        Err(p) => eprintln!("panic: {:?}", p.downcast_ref::<String>()),
    }
}

/// A dyn loop around a statement inside run_on_gpu under CopyAll (a plain
/// statement counter used to make the first turn differ, so the loop never
/// closed) extracts and simulates.
#[test]
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
fn cpu_statements_in_plain_loop_inside_dyn_loop() {
    let r = Builder::new().max_runs(500).extract("cpu_pl", halve_both);
    r.unwrap_or_else(|e| panic!("{e}"));
}

/// A tensor made inside a dyn loop (any config, CPU included) would need a
/// buffer per turn: the tensor count stops it with an error naming the cause.
#[test]
fn tensor_made_inside_dyn_loop() {
    for (cname, config) in [
        ("cpu", Config::cpu()),
        ("prophecy", small(Movement::Prophecy)),
    ] {
        let config = Config {
            max_tensors: 16,
            ..config
        };
        let r = Builder::new().max_runs(5000).extract(
            "til",
            move |a: Dyn<*mut f32>, b: Dyn<*mut f32>, n: Dyn<i32>| {
                let ein = Einsum::new(config);
                let i = ein.index("i");
                let a = ein.tensor_on::<f32>("A", [8], a);
                let b = ein.tensor_on::<f32>("B", [8], b);
                let k = Dyn::new(0i32);
                while k.lt(n).is_true() {
                    let t = ein.tensor::<f32>("T", [8]);
                    ein.run_on_gpu(|| t.at([i]).set(a.at([i]) + 1.0f32));
                    b.at([i]).add_to(t.at([i]));
                    k.set(k + 1);
                }
                ein.finish();
            },
        );
        let m = r.map(|_| ()).unwrap_err().to_string();
        assert!(m.contains("made inside a dyn loop"), "{cname}: {m}");
    }
}

/// Statements repeated with `augur::range` inside a kernel (a first-stage
/// loop the engine sees) extract, simulate and agree with the CPU.
#[test]
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

/// A tensor made inside run_on_gpu is an error at the user's line (it used
/// to be an internal `expect`).
#[test]
fn tensor_made_inside_run_on_gpu() {
    let r = extract::<f32>(
        "tensor_in_kernel",
        small(Movement::Prophecy),
        [&[8], &[8], &[8]],
        |ein, [a, _b, _c], _n| {
            let i = ein.index("i");
            ein.run_on_gpu(|| {
                let t = ein.tensor::<f32>("T", [8]);
                t.at([i]).set(a.at([i]) + 1.0f32);
            });
        },
    );
    let e = r.map(|_| ()).expect_err("an error").to_string();
    assert!(
        e.contains("review_probes.rs"),
        "not at the user's line: {e}"
    );
}

/// A uniform `Dyn` value computed inside run_on_gpu and used by two
/// statements (across a barrier) simulates: the simulation computes it once.
#[test]
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
