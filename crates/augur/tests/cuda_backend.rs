//! The CUDA backend: kernel extraction, the CUDA text, and the CPU
//! simulation (compiled and run, compared with plain Rust).

use augur::codegen::cuda::{simulate, split, write_cuda};
use augur::stage::gpu::{grid_sync, launch};
use augur::{Builder, Dyn};

/// `y[i] = 2 * x[i]` for all i, then (after a grid sync) `x[i] = y[(i + 1) % n]`:
/// right only if every thread finished the first phase before any starts
/// the second.
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
    assert_eq!(c.matches("augur.cuda.kernel phase").count(), 2, "{c}");
}

#[test]
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
