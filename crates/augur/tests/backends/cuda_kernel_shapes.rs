//! Kernel shapes the CUDA backend (split, simulate, write_cuda) must handle,
//! on hand-written `gpu::launch` kernels: an early return from a thread,
//! `continue` in a kernel loop, launches in host loops and ifs, empty grids,
//! kernels that read no host variable or only sync; and reproducible
//! output. Each is simulated on the CPU and/or compiled to PTX by nvcc.
//!
//! Probes marked `#[ignore = "bug: ..."]` expose bugs (each fails when run
//! with `--ignored`); the others are regression tests for cases handled
//! correctly. The nvcc probes install nvcc from pip on first use.

use augur::codegen::cuda::{simulate, write_cuda};
use augur::exec::cuda::Nvcc;
use augur::stage::gpu::{grid_sync, launch};
use augur::{Builder, Dyn};

type F1 = unsafe extern "C" fn(*mut i32, i32);

#[augur::staged]
fn sim_run(ex: &augur::Extracted<F1>, name: &str, buf: &mut [i32], n: i32) -> String {
    let sim = simulate(ex.ir()).unwrap_or_else(|e| panic!("simulate: {e}"));
    let c = augur::codegen::write_function(&sim);
    let lib = augur::exec::compile(&c, &Default::default()).unwrap_or_else(|e| panic!("{e}\n{c}"));
    let f: F1 = unsafe { lib.symbol(name) }.unwrap();
    unsafe { f(buf.as_mut_ptr(), n) };
    c
}

#[augur::staged]
fn ptx(cu: &str) {
    let nvcc = Nvcc::find_or_install().unwrap();
    if let Err(e) = nvcc.ptx(cu, "sm_80") {
        panic!("nvcc rejects:\n{cu}\n{e}");
    }
}

/// `if (i >= n) return;` in a kernel body: structured without a jump out of the launch; simulated and compiled.
#[test]
#[augur::staged]
fn early_return_from_thread() {
    // `if (i >= n) return;` — the most common CUDA idiom.
    let ex = Builder::new()
        .extract("early_ret", |x: Dyn<*mut i32>, n: Dyn<i32>| {
            launch(2, 4, |bid, tid| {
                let i = bid * 4 + tid;
                if i.ge(n).is_true() {
                    return;
                }
                x.at(i).set(x.at(i) + 1);
            });
        })
        .unwrap();
    let mut buf = vec![0; 8];
    sim_run(&ex, "early_ret", &mut buf, 5);
    assert_eq!(buf, [1, 1, 1, 1, 1, 0, 0, 0]);
    let cu = write_cuda(ex.ir(), "").unwrap_or_else(|e| panic!("{e}\n{}", ex.c_code()));
    ptx(&cu);
}

/// `continue` in a loop inside a kernel.
#[test]
#[augur::staged]
fn continue_in_inner_loop() {
    let ex = Builder::new()
        .extract("cont", |x: Dyn<*mut i32>, n: Dyn<i32>| {
            launch(2, 2, |bid, tid| {
                let t = bid * 2 + tid;
                let j = Dyn::new(0i32);
                while j.lt(n).is_true() {
                    if (j % 2).eq(0).is_true() {
                        j.set(j + 1);
                        continue;
                    }
                    x.at(t).set(x.at(t) + j);
                    j.set(j + 1);
                }
            });
        })
        .unwrap();
    let mut buf = vec![0; 4];
    sim_run(&ex, "cont", &mut buf, 6);
    assert_eq!(buf, [9; 4]);
    let cu = write_cuda(ex.ir(), "").unwrap();
    ptx(&cu);
}

/// Launches in a host dyn loop and a dyn if, capturing the loop counter.
#[test]
#[augur::staged]
fn launch_in_host_loop_and_if() {
    let ex = Builder::new()
        .extract("hostloop", |x: Dyn<*mut i32>, n: Dyn<i32>| {
            let k = Dyn::new(0i32);
            while k.lt(n).is_true() {
                launch(1, 4, |_bid, tid| {
                    x.at(tid).set(x.at(tid) + k);
                });
                if (k % 2).eq(0).is_true() {
                    launch(1, 4, |_bid, tid| {
                        x.at(tid).set(x.at(tid) * 2);
                    });
                }
                k.set(k + 1);
            }
        })
        .unwrap();
    let mut buf = vec![0; 4];
    sim_run(&ex, "hostloop", &mut buf, 3);
    // k=0: 0 -> 0 -> 0; k=1: 1; k=2: 3 -> 6
    assert_eq!(buf, [6; 4]);
    let cu = write_cuda(ex.ir(), "").unwrap();
    ptx(&cu);
}

/// Empty grids (0 blocks, 0 threads), one cooperative.
#[test]
#[augur::staged]
fn zero_grids() {
    let ex = Builder::new()
        .extract("zerogrid", |x: Dyn<*mut i32>, _n: Dyn<i32>| {
            launch(0, 4, |_bid, tid| x.at(tid).set(1));
            launch(4, 0, |_bid, tid| x.at(tid).set(2));
            launch(0, 0, |_bid, tid| {
                x.at(tid).set(3);
                grid_sync();
                x.at(tid).set(4);
            });
        })
        .unwrap();
    let mut buf = vec![0; 4];
    sim_run(&ex, "zerogrid", &mut buf, 0);
    assert_eq!(buf, [0; 4]);
    let cu = write_cuda(ex.ir(), "").unwrap();
    ptx(&cu);
}

/// Two extractions give byte-identical CUDA and simulated C.
#[test]
#[augur::staged]
fn determinism_cuda_and_sim() {
    let mk = || {
        Builder::new()
            .extract("det", |x: Dyn<*mut i32>, n: Dyn<i32>| {
                let k = Dyn::new(0i32);
                while k.lt(n).is_true() {
                    launch(3, 4, |bid, tid| {
                        let i = bid * 4 + tid;
                        if (i % 3).eq(0).is_true() {
                            x.at(i).set(x.at(i) + k);
                        } else {
                            x.at(i).set(x.at(i) - n);
                        }
                        grid_sync();
                        let j = bid * 4 + tid;
                        x.at(j).set(x.at(j) * 2);
                    });
                    k.set(k + 1);
                }
            })
            .unwrap()
    };
    let (a, b) = (mk(), mk());
    assert_eq!(
        write_cuda(a.ir(), "").unwrap(),
        write_cuda(b.ir(), "").unwrap()
    );
    assert_eq!(
        augur::codegen::write_function(&simulate(a.ir()).unwrap()),
        augur::codegen::write_function(&simulate(b.ir()).unwrap())
    );
}

/// A kernel that reads no host variable (empty parameter list, `void *args[]` unused).
#[test]
#[augur::staged]
fn kernel_reading_no_host_variable() {
    let ex = Builder::new()
        .extract("noread", |_x: Dyn<*mut i32>, _n: Dyn<i32>| {
            launch(1, 2, |_bid, _tid| {
                augur::libc::PRINTF.call(Dyn::str("hi\n"));
            });
        })
        .unwrap();
    let cu = write_cuda(ex.ir(), "").unwrap();
    println!("{cu}");
    ptx(&cu);
    let mut buf = vec![0; 1];
    sim_run(&ex, "noread", &mut buf, 0);
}

// ------------------------------------------- bugs found here (now fixed)

/// A launch whose body is only a grid sync simulates to nothing (it used to
/// leave unused `bid`/`tid` declarations that cc -Werror rejects).
#[test]
#[augur::staged]
fn sim_of_sync_only_kernel_compiles() {
    let ex = Builder::new()
        .extract("synconly", |_x: Dyn<*mut i32>, _n: Dyn<i32>| {
            launch(1, 2, |_bid, _tid| {
                grid_sync();
            });
        })
        .unwrap();
    let mut buf = vec![0; 1];
    sim_run(&ex, "synconly", &mut buf, 0);
}
