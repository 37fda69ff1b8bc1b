//! The CUDA backend: kernel extraction, the CUDA text, and the CPU
//! simulation (compiled and run, compared with plain Rust).

use augur::codegen::cuda::{simulate, split, write_cuda};
use augur::stage::gpu::{grid_sync, launch};
use augur::{Builder, Dyn};

/// `y[i] = 2 * x[i]` for all i, then (after a grid sync) `x[i] = y[(i + 1) % n]`:
/// right only if every thread finished the first phase before any starts
/// the second.
#[augur::staged]
fn rotate_doubled(x: Dyn<*mut f32>, y: Dyn<*mut f32>, n: Dyn<i32>) {
    launch(3, 4, |bid, tid| {
        let i = Dyn::new(bid * 4 + tid);
        while i.lt(n).is_true() {
            y.at(i).set(x.at(i) * 2.0f32);
            i.set(i + 12);
        }
        grid_sync();
        let j = Dyn::new(bid * 4 + tid);
        while j.lt(n).is_true() {
            x.at(j).set(y.at((j + 1) % n));
            j.set(j + 12);
        }
    });
}

type Native = unsafe extern "C" fn(*mut f32, *mut f32, i32);

#[test]
#[augur::staged]
fn two_phase_kernel_runs_phase_by_phase_on_the_cpu() {
    let ex = Builder::new()
        .extract(
            "rotate",
            |x: Dyn<*mut f32>, y: Dyn<*mut f32>, n: Dyn<i32>| rotate_doubled(x, y, n),
        )
        .unwrap();
    let sim = simulate(ex.ir()).unwrap();
    let c = augur::codegen::write_function(&sim);
    let lib = augur::exec::compile(&c, &Default::default()).unwrap();
    // SAFETY: `rotate` is `void rotate(float *, float *, int32_t)`.
    let f: Native = unsafe { lib.symbol("rotate") }.unwrap();
    for n in [0usize, 1, 5, 12, 13, 40] {
        let mut x: Vec<f32> = (0..n).map(|i| i as f32 + 0.5).collect();
        let mut y = vec![0f32; n];
        let want: Vec<f32> = (0..n).map(|i| 2.0 * x[(i + 1) % n]).collect();
        // SAFETY: both buffers hold n floats.
        unsafe { f(x.as_mut_ptr(), y.as_mut_ptr(), n as i32) };
        assert_eq!(x, want, "n = {n}\n{c}");
    }
    assert_eq!(c.matches("of the launch").count(), 2, "{c}");
}

#[test]
#[augur::staged]
fn compiling_or_interpreting_a_kernel_with_a_grid_sync_names_the_ways_to_run_it() {
    use augur::exec::{Backend, CompileOptions};
    let ex = Builder::new()
        .extract(
            "rotate",
            |x: Dyn<*mut f32>, y: Dyn<*mut f32>, n: Dyn<i32>| rotate_doubled(x, y, n),
        )
        .unwrap();
    let launch_line = include_str!("cuda_backend.rs")
        .lines()
        .position(|l| l.contains("launch(3, 4, |bid, tid|"))
        .unwrap() as u32
        + 1;
    let mut interp = augur::exec::Interpreter::new();
    let x = interp.memory_mut().alloc_slice(&[1f32; 4]);
    let y = interp.memory_mut().alloc_slice(&[0f32; 4]);
    let interpreted = ex.interpret_in(&mut interp, &[x, y, 4i32.into()]);
    let c = ex.compile_with(&CompileOptions::default().with_backend(Backend::C));
    let jit = ex.compile_with(&CompileOptions::default().with_backend(Backend::Jit));
    for e in [interpreted.err(), c.err(), jit.err()] {
        let e = e.expect("an error, not a run that ignores the barrier");
        let augur::Error::Kernel { location, .. } = &e else {
            panic!("{e}");
        };
        assert_eq!(location.map(|l| l.line), Some(launch_line), "{e}");
        let text = e.to_string();
        assert!(text.contains("`rotate` calls gpu::grid_sync"), "{text}");
        assert!(text.contains("ex.simulated()?.compile()"), "{text}");
        assert!(text.contains("ex.cuda_code(prelude)"), "{text}");
    }
    // What the error points to runs, phase by phase.
    let sim = ex.simulated().unwrap().compile().unwrap();
    let (mut x, mut y) = (vec![1f32, 2.0, 3.0, 4.0], vec![0f32; 4]);
    // SAFETY: both buffers hold 4 floats.
    unsafe { sim.get()(x.as_mut_ptr(), y.as_mut_ptr(), 4) };
    assert_eq!(x, [4.0, 6.0, 8.0, 2.0]);
}

#[test]
#[augur::staged]
fn cuda_text_has_a_cooperative_kernel_and_its_launch() {
    let ex = Builder::new()
        .extract(
            "rotate",
            |x: Dyn<*mut f32>, y: Dyn<*mut f32>, n: Dyn<i32>| rotate_doubled(x, y, n),
        )
        .unwrap();
    let s = split(ex.ir()).unwrap();
    assert_eq!(s.kernels.len(), 1);
    let k = &s.kernels[0];
    assert!(k.cooperative);
    assert_eq!((k.grid, k.block), (3, 4));
    assert_eq!(k.captured.len(), 3);
    let cu = write_cuda(ex.ir(), "").unwrap();
    assert!(cu.contains("__global__ void rotate_k0(float *"), "{cu}");
    assert!(
        cu.contains("cudaLaunchCooperativeKernel((void *)rotate_k0, dim3(3), dim3(4)"),
        "{cu}"
    );
    assert!(
        cu.contains("rotate_k0_launch(x, y, n);") || cu.contains("rotate_k0_launch("),
        "{cu}"
    );
    assert!(cu.contains("augur_grid_sync();"), "{cu}");
    println!("{cu}");
}

#[augur::staged]
fn kernel_error(
    r: augur::Result<augur::Extracted<unsafe extern "C" fn(*mut i32, i32)>>,
    sim: bool,
) -> String {
    let ex = r.expect("extraction itself succeeds");
    let err = if sim {
        simulate(ex.ir()).map(|_| ()).unwrap_err()
    } else {
        split(ex.ir()).map(|_| ()).unwrap_err()
    };
    match err {
        augur::Error::Kernel { message, location } => {
            let l = location.expect("the error names a line");
            format!("{message} @{}", l.line)
        }
        other => panic!("expected Error::Kernel, got {other:?}"),
    }
}

#[test]
#[augur::staged]
fn a_kernel_that_assigns_a_host_variable_is_an_error_naming_it() {
    let line = line!() + 5;
    let r = Builder::new().extract("bad", |x: Dyn<*mut i32>, n: Dyn<i32>| {
        let total = Dyn::named("total", 0i32);
        launch(2, 2, |bid, tid| {
            x.at(bid * 2 + tid).set(n);
            total.set(total + 1);
        });
        let _ = line;
    });
    let m = kernel_error(r, false);
    assert!(m.contains("assigns `total`"), "{m}");
    assert!(m.ends_with(&format!("@{line}")), "{m}");
}

#[test]
#[augur::staged]
fn a_grid_sync_under_thread_dependent_control_flow_cannot_be_simulated() {
    let r = Builder::new().extract("bad", |x: Dyn<*mut i32>, n: Dyn<i32>| {
        launch(2, 2, |bid, tid| {
            if tid.gt(0).is_true() {
                grid_sync();
            }
            x.at(bid * 2 + tid).set(n);
        });
    });
    let m = kernel_error(r, true);
    assert!(
        m.contains("control flow that threads may take differently"),
        "{m}"
    );
}

/// Barriers inside uniform control flow (a dyn loop over a parameter, a dyn
/// `if`) simulate: the control flow runs once on the host, each stretch
/// between barriers for all threads.
#[test]
#[augur::staged]
fn barriers_in_uniform_loops_and_ifs_simulate() {
    type Native = unsafe extern "C" fn(*mut i32, *mut i32, i32);
    let ex = Builder::new()
        .extract(
            "steps",
            |x: Dyn<*mut i32>, y: Dyn<*mut i32>, rounds: Dyn<i32>| {
                launch(2, 3, |bid, tid| {
                    let r = Dyn::new(0i32);
                    // Per-thread values do not live across a barrier in the
                    // simulation: each stretch computes its own `i`.
                    let i = || bid * 3 + tid;
                    while r.lt(rounds).is_true() {
                        // y = rotate(x); then x = y + 1 (needs every y).
                        y.at(i()).set(x.at((i() + 1) % 6));
                        grid_sync();
                        x.at(i()).set(y.at(i()) + 1);
                        grid_sync();
                        r.set(r + 1);
                    }
                    if rounds.gt(2).is_true() {
                        y.at(i()).set(x.at(5 - i()));
                        grid_sync();
                        x.at(i()).set(y.at(i()) * 10);
                    }
                });
            },
        )
        .unwrap();
    let sim = simulate(ex.ir()).unwrap();
    let c = augur::codegen::write_function(&sim);
    let lib = augur::exec::compile(&c, &Default::default()).unwrap();
    // SAFETY: `steps` is `void steps(int32_t *, int32_t *, int32_t)`.
    let f: Native = unsafe { lib.symbol("steps") }.unwrap();
    for rounds in 0..5 {
        let mut x: Vec<i32> = (0..6).map(|v| v * 7).collect();
        let mut want = x.clone();
        for _ in 0..rounds {
            let y: Vec<i32> = (0..6).map(|i| want[(i + 1) % 6]).collect();
            want = y.iter().map(|v| v + 1).collect();
        }
        if rounds > 2 {
            let y: Vec<i32> = (0..6).map(|i| want[5 - i]).collect();
            want = y.iter().map(|v| v * 10).collect();
        }
        let mut y = vec![0; 6];
        // SAFETY: both buffers hold 6 ints.
        unsafe { f(x.as_mut_ptr(), y.as_mut_ptr(), rounds) };
        assert_eq!(x, want, "rounds = {rounds}\n{c}");
    }
    // The CUDA form keeps the barriers in the loop (a cooperative kernel).
    let cu = write_cuda(ex.ir(), "").unwrap();
    assert_eq!(cu.matches("augur_grid_sync();").count(), 3, "{cu}");
    assert!(cu.contains("cudaLaunchCooperativeKernel"), "{cu}");
}

#[test]
#[augur::staged]
fn a_grid_sync_outside_a_launch_is_an_error() {
    let r = Builder::new().extract("bad", |x: Dyn<*mut i32>, n: Dyn<i32>| {
        x.at(0).set(n);
        grid_sync();
    });
    let m = kernel_error(r, false);
    assert!(m.contains("outside a GPU launch"), "{m}");
}

/// A value a thread computes before a grid sync and uses after it is kept
/// per thread by the CPU simulation (a slot per thread between phases).
#[test]
#[augur::staged]
fn a_value_kept_across_a_grid_sync_is_kept_per_thread() {
    let ex = Builder::new()
        .extract("shift", |x: Dyn<*mut i32>, n: Dyn<i32>| {
            launch(2, 2, |bid, tid| {
                let i = bid * 2 + tid;
                let v = x.at(i) + n;
                grid_sync();
                x.at(3 - i).set(v);
            });
        })
        .unwrap();
    let sim = ex.simulated().unwrap();
    let lib = sim.compile().unwrap();
    let mut x = vec![1, 2, 3, 4];
    // SAFETY: four ints.
    unsafe { lib.get()(x.as_mut_ptr(), 10) };
    assert_eq!(x, [14, 13, 12, 11]);
    let mut interp = augur::exec::Interpreter::new();
    let p = interp.memory_mut().alloc_slice(&[1i32, 2, 3, 4]);
    sim.interpret_in(&mut interp, &[p, 10i32.into()]).unwrap();
    assert_eq!(
        interp.memory().read_slice::<i32>(p, 4).unwrap(),
        [14, 13, 12, 11]
    );
}

/// The CUDA text compiles with nvcc (installed from pip when missing).
#[test]
#[augur::staged]
fn cuda_text_compiles_to_ptx() {
    let ex = Builder::new()
        .extract(
            "rotate",
            |x: Dyn<*mut f32>, y: Dyn<*mut f32>, n: Dyn<i32>| rotate_doubled(x, y, n),
        )
        .unwrap();
    let cu = write_cuda(ex.ir(), "").unwrap();
    let ptx = augur::exec::cuda::Nvcc::find_or_install()
        .unwrap()
        .ptx(&cu, "sm_80")
        .unwrap();
    assert_eq!(ptx.matches(".entry rotate_k0").count(), 1, "{ptx}");
}
