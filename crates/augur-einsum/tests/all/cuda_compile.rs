//! The CUDA units the DSL generates compile with nvcc (installed from pip on
//! first use when none is found): a program with a cooperative kernel (two
//! statements and a grid sync) and a plain one. The PTX has one `.entry`
//! per kernel, named as the unit's `__global__` functions.

use augur::exec::cuda::Nvcc;
use augur::{Builder, Dyn, Result};
use augur_einsum::{cuda_source, Config, Einsum, Movement};

/// Compiles `source` to PTX for sm_80 and checks it has exactly the
/// `kernels` named `__global__` functions of the source, as entries.
#[augur::staged]
fn compiles_with_entries(source: &str, kernels: usize) -> Result<String> {
    let ptx = Nvcc::find_or_install()?.ptx(source, "sm_80")?;
    let mut globals: Vec<&str> = source
        .split("__global__ void ")
        .skip(1)
        .map(|rest| rest.split('(').next().unwrap_or_default())
        .collect();
    let mut entries: Vec<&str> = ptx
        .lines()
        .filter_map(|l| l.split(".entry ").nth(1))
        .map(|rest| rest.split('(').next().unwrap_or_default().trim())
        .collect();
    globals.sort();
    entries.sort();
    assert_eq!(globals.len(), kernels, "{source}");
    assert_eq!(entries, globals, "{ptx}");
    Ok(ptx)
}

#[test]
#[augur::staged]
fn cooperative_kernel_compiles() -> Result<()> {
    let ex = Builder::new().extract(
        "coop",
        |a: Dyn<*mut f32>, b: Dyn<*mut f32>, c: Dyn<*mut f32>, d: Dyn<*mut f32>| {
            let ein = Einsum::new(Config::with(Movement::Prophecy));
            let (i, j, k) = (ein.index("i"), ein.index("j"), ein.index("k"));
            let a = ein.tensor_on::<f32>("A", [45, 3], a);
            let b = ein.tensor_on::<f32>("B", [3, 600], b);
            let c = ein.tensor_on::<f32>("C", [45, 600], c);
            let d = ein.tensor_on::<f32>("D", [600, 45], d);
            // C = A B, then D = Cᵀ + 1 after a grid sync: one cooperative kernel.
            ein.run_on_gpu(|| {
                c.at([i, j]).set(a.at([i, k]) * b.at([k, j]));
                d.at([j, i]).set(c.at([i, j]) + 1.0f32);
            });
            // Then a plain kernel: A = 2 A.
            ein.run_on_gpu(|| a.at([i, k]).mul_by(2.0f32));
            ein.finish();
        },
    )?;
    let source = cuda_source(&ex)?;
    assert_eq!(source.matches("cudaLaunchCooperativeKernel(").count(), 1);
    assert_eq!(source.matches("<<<40, 512>>>").count(), 1);
    assert!(source.contains("this_grid().sync()"), "{source}");
    compiles_with_entries(&source, 2)?;
    Ok(())
}
