//! What the CUDA backend (split, simulate, write_cuda) rejects or renames in
//! hand-written `gpu::launch` kernels: a host array read by a kernel, a
//! launch inside a launch, a libc call with no device version (kernel
//! errors), and captured names that clash with the launcher's locals, CUDA
//! builtins or C++ keywords (renamed, so nvcc accepts the unit).
//!
//! Probes marked `#[ignore = "bug: ..."]` expose bugs (each fails when run
//! with `--ignored`); the others are regression tests for cases handled
//! correctly. The nvcc probes install nvcc from pip on first use.

use augur::codegen::cuda::{simulate, split, write_cuda};
use augur::exec::cuda::Nvcc;
use augur::stage::gpu::{grid_sync, launch};
use augur::{Builder, Dyn};

#[augur::staged]
fn ptx(cu: &str) {
    let nvcc = Nvcc::find_or_install().unwrap();
    if let Err(e) = nvcc.ptx(cu, "sm_80") {
        panic!("nvcc rejects:\n{cu}\n{e}");
    }
}

// ------------------------------------------- bugs found here (now fixed)

/// A host array read by a kernel would arrive as a host pointer (an
/// "illegal memory access" on an H100): it is a kernel error naming it.
#[test]
#[augur::staged]
fn captured_local_array() {
    let ex = Builder::new()
        .extract("arr", |x: Dyn<*mut i32>, n: Dyn<i32>| {
            let a = Dyn::<[i32; 4]>::uninit();
            for i in 0..4 {
                a.at(i).set(n + i);
            }
            launch(1, 4, |_bid, tid| {
                x.at(tid).set(a.at(tid));
            });
        })
        .unwrap();
    for err in [split(ex.ir()).map(|_| ()), simulate(ex.ir()).map(|_| ())] {
        match err {
            Err(augur::Error::Kernel { message, .. }) => {
                assert!(message.contains("an array of the host code"), "{message}")
            }
            other => panic!("expected Error::Kernel, got {other:?}"),
        }
    }
}

/// Captured host variables named `err` or `args` (once the launcher's
/// locals) compile.
#[test]
#[augur::staged]
fn names_clash_with_launcher_locals() {
    let ex = Builder::new()
        .extract("clash", |x: Dyn<*mut i32>, n: Dyn<i32>| {
            let err = Dyn::named("err", n + 1);
            let args = Dyn::named("args", n + 2);
            launch(2, 2, |bid, tid| {
                let i = bid * 2 + tid;
                x.at(i).set(err + args);
                grid_sync();
                x.at(i).set(x.at(i) + 1);
            });
        })
        .unwrap();
    let cu = write_cuda(ex.ir(), "").unwrap();
    ptx(&cu);
}

/// Variables named `threadIdx`, `blockIdx` or C++ keywords (`class`, `new`,
/// `this`, `template`) are renamed, so nvcc accepts the unit.
#[test]
#[augur::staged]
fn names_clash_with_cuda_builtins_and_cpp_keywords() {
    let mut bad = Vec::new();
    for name in [
        "threadIdx",
        "blockIdx",
        "class",
        "new",
        "this",
        "template",
        "dim3",
        "warpSize",
    ] {
        let ex = Builder::new()
            .extract("kw", move |x: Dyn<*mut i32>, n: Dyn<i32>| {
                let v = Dyn::named(name, n + 1);
                launch(1, 2, |_bid, tid| {
                    x.at(tid).set(v);
                });
            })
            .unwrap();
        let cu = write_cuda(ex.ir(), "").unwrap();
        let nvcc = Nvcc::find_or_install().unwrap();
        if nvcc.ptx(&cu, "sm_80").is_err() {
            bad.push(name);
        }
    }
    assert!(bad.is_empty(), "nvcc rejects variables named {bad:?}");
}

/// A launch inside a launch: split and simulate both reject it.
#[test]
#[augur::staged]
fn nested_launch_sim_vs_split() {
    let ex = Builder::new()
        .extract("nested", |x: Dyn<*mut i32>, _n: Dyn<i32>| {
            launch(1, 2, |_bid, tid| {
                launch(1, 2, |_b2, t2| {
                    x.at(tid * 2 + t2).set(1);
                });
            });
        })
        .unwrap();
    let s = split(ex.ir());
    let m = simulate(ex.ir());
    assert_eq!(
        s.is_err(),
        m.is_err(),
        "split and simulate disagree on a nested launch"
    );
}

/// A kernel calling a libc function that has no device version (`puts`) is
/// a kernel error (it used to pass the check and fail in nvcc).
#[test]
#[augur::staged]
fn kernel_calls_libc_without_device_version() {
    let ex = Builder::new()
        .extract("libck", |x: Dyn<*mut i32>, _n: Dyn<i32>| {
            launch(1, 2, |_bid, tid| {
                x.at(tid).set(augur::libc::PUTS.call(Dyn::str("x")));
            });
        })
        .unwrap();
    match write_cuda(ex.ir(), "") {
        Err(augur::Error::Kernel { message, .. }) => {
            assert!(
                message.contains("calls `puts`, a host function"),
                "{message}"
            )
        }
        other => panic!("expected Error::Kernel, got {other:?}"),
    }
}
