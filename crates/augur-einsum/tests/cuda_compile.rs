//! The CUDA units the DSL generates compile with nvcc (installed from pip on
//! first use when none is found): the paper's programs under every
//! data-movement strategy, and a program with a cooperative kernel (two
//! statements and a grid sync) and a plain one. The PTX has one `.entry`
//! per kernel, named as the unit's `__global__` functions.

use augur::exec::cuda::Nvcc;
use augur::{Builder, Dyn, Result};
use augur_einsum::programs::{Benchmark, Kind};
use augur_einsum::{cuda_source, Config, Einsum, Movement};

/// Compiles `source` to PTX for sm_80 and checks it has exactly the
/// `kernels` named `__global__` functions of the source, as entries.
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

fn paper(kind: Kind) -> Result<()> {
    for movement in Movement::ALL {
        let b = Benchmark::paper(kind, 64, movement);
        let source = cuda_source(&b.extract()?)?;
        compiles_with_entries(&source, 1)?;
        // One plain launch; only prophecies copy less than everything.
        assert!(source.contains("<<<40, 512>>>"), "{source}");
        assert!(!source.contains("cudaLaunchCooperativeKernel"), "{source}");
        let copies_in = source.matches("augur_ein_to_device((uint8_t *)").count();
        let expected = match movement {
            Movement::CopyAll => 6,
            Movement::Unified => 0,
            Movement::Prophecy => 2,
        };
        assert_eq!(copies_in, expected, "{}:\n{source}", b.function_name());
    }
    Ok(())
}

#[test]
fn paper_matmul_compiles() -> Result<()> {
    paper(Kind::MatMul)
}

#[test]
fn paper_matvec_compiles() -> Result<()> {
    paper(Kind::MatVec)
}

#[test]
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
