//! The benchmark programs the experiments measure. The einsum programs on
//! the CPU and on the CPU-simulated GPU, under every data-movement
//! strategy, compiled by C and by the JIT: results against plain Rust,
//! bytes moved against what each strategy must move; their CUDA compiled
//! by nvcc. The conv/ReLU benchmark: what it fuses, and its C and JIT runs.

use augur::exec::cuda::Nvcc;
use augur::exec::{Backend, CompileOptions};
use augur::Builder;
use augur_cli::programs::einsum::{Accumulate, Benchmark, Kind};
use augur_cli::programs::nn::paper_benchmark;
use augur_einsum::{compile_cpu_with, compile_simulated_with, cuda_source, Movement};

#[augur::staged]
fn inputs(b: &Benchmark) -> (Vec<f32>, Vec<f32>) {
    let [xs, ys, _] = b.kind.shapes(b.sizes);
    let x = (0..xs.iter().product::<usize>())
        .map(|v| ((v * 7 + 3) % 11) as f32 - 5.0)
        .collect();
    let y = (0..ys.iter().product::<usize>())
        .map(|v| ((v * 5 + 1) % 13) as f32 * 0.5)
        .collect();
    (x, y)
}

#[augur::staged]
fn run(b: &Benchmark, iterations: i32, backend: Backend) -> (Vec<f32>, augur_einsum::Counters) {
    let ex = b
        .extract()
        .unwrap_or_else(|e| panic!("{}: {e}", b.function_name()));
    let p = if b.gpu {
        compile_simulated_with(&ex, backend)
    } else {
        compile_cpu_with(&ex, b.openmp, backend)
    }
    .unwrap();
    let (mut x, mut y) = inputs(b);
    let zlen: usize = b.kind.shapes(b.sizes)[2].iter().product();
    let mut z = vec![f32::NAN; zlen];
    p.reset().unwrap();
    // SAFETY: the buffers hold the shapes' element counts.
    unsafe { (p.get())(x.as_mut_ptr(), y.as_mut_ptr(), z.as_mut_ptr(), iterations) };
    (z, p.counters().unwrap())
}

#[test]
#[augur::staged]
fn every_strategy_computes_the_product_and_moves_what_it_must() {
    for kind in [Kind::MatMul, Kind::MatVec] {
        for sizes in [(4, 4, 4), (5, 7, 3), (1, 9, 2)] {
            for accumulate in [Accumulate::No, Accumulate::Yes] {
                for (movement, gpu) in Movement::ALL
                    .map(|m| (m, true))
                    .into_iter()
                    .chain([(Movement::Prophecy, false)])
                {
                    let b = Benchmark {
                        sizes,
                        accumulate,
                        gpu,
                        ..Benchmark::paper(kind, 1, movement)
                    };
                    let (z, c) = run(&b, 3, Backend::Auto);
                    let (zj, cj) = run(&b, 3, Backend::Jit);
                    assert_eq!(
                        (&zj, cj.moved()),
                        (&z, c.moved()),
                        "{} (JIT)",
                        b.function_name()
                    );
                    let (x, y) = inputs(&b);
                    assert_eq!(z, b.reference(&x, &y, 3), "{}", b.function_name());
                    assert_eq!(
                        c.moved(),
                        3 * b.expected_bytes_per_turn(),
                        "{}: {c:?}",
                        b.function_name()
                    );
                    assert_eq!(c.timed, 3);
                }
            }
        }
    }
}

/// The same programs in augur's interpreter (no C compiler; every access
/// bounds-checked): same results, same bytes, and every buffer the runtime
/// allocated is freed.
#[test]
#[augur::staged]
fn the_interpreter_agrees_and_nothing_leaks() {
    use augur_einsum::SimInterpreter;
    for kind in [Kind::MatMul, Kind::MatVec] {
        for accumulate in [Accumulate::No, Accumulate::Yes] {
            let modes = Movement::ALL.map(|m| (m, true));
            for (movement, gpu) in modes.into_iter().chain([(Movement::Prophecy, false)]) {
                let b = Benchmark {
                    sizes: (5, 7, 3),
                    accumulate,
                    gpu,
                    ..Benchmark::paper(kind, 1, movement)
                };
                let ex = b.extract().unwrap().simulated().unwrap();
                let mut it = SimInterpreter::new();
                let (x, y) = inputs(&b);
                let zlen: usize = b.kind.shapes(b.sizes)[2].iter().product();
                let mem = it.interp.memory_mut();
                let args = [
                    mem.alloc_slice(&x),
                    mem.alloc_slice(&y),
                    mem.alloc_slice(&vec![f32::NAN; zlen]),
                    2i32.into(),
                ];
                ex.interpret_in(&mut it.interp, &args)
                    .unwrap_or_else(|e| panic!("{}: {e}", b.function_name()));
                let z: Vec<f32> = it.interp.memory().read_slice(args[2], zlen).unwrap();
                assert_eq!(z, b.reference(&x, &y, 2), "{}", b.function_name());
                let c = it.counters();
                assert_eq!(
                    c.moved(),
                    2 * b.expected_bytes_per_turn(),
                    "{}",
                    b.function_name()
                );
                assert_eq!(c.timed, 2);
                assert_eq!(it.live_buffers(), 0, "{} leaks", b.function_name());
            }
        }
    }
}

/// Each einsum program's CUDA compiles to PTX (nvcc is installed from pip
/// on first use when none is found) with one kernel, launched plainly; only
/// prophecies copy in less than everything.
#[augur::staged]
fn einsum_cuda_compiles(kind: Kind) -> augur::Result<()> {
    let nvcc = Nvcc::find_or_install()?;
    for movement in Movement::ALL {
        let b = Benchmark::paper(kind, 64, movement);
        let source = cuda_source(&b.extract()?)?;
        let ptx = nvcc.ptx(&source, "sm_80")?;
        assert_eq!(ptx.matches(".entry ").count(), 1, "{ptx}");
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
#[augur::staged]
fn einsum_matmul_cuda_compiles() -> augur::Result<()> {
    einsum_cuda_compiles(Kind::MatMul)
}

#[test]
#[augur::staged]
fn einsum_matvec_cuda_compiles() -> augur::Result<()> {
    einsum_cuda_compiles(Kind::MatVec)
}

/// The listing's whole benchmark: the loop whose ReLU threshold depends on
/// a runtime flag is not fused; the loop with one threshold is; the C
/// compiles with a small runtime, runs, and frees every output.
#[test]
#[augur::staged]
fn the_papers_benchmark_fuses_only_its_optimized_loop() {
    let ex = paper_benchmark(&Builder::new(), 64, 3).unwrap();
    let c = ex.c_code();
    assert!(c.contains(">= 2.0f") && c.contains(">= 4.0f"), "{c}");
    let fused_conv = c.split("Optimized:").nth(1).unwrap();
    assert!(fused_conv.contains(">= 1.56f"), "{c}");
    // Baseline: the turn loop, conv (2 loops), a ReLU loop per path;
    // optimized: the turn loop and the conv only.
    assert_eq!(c.matches("for (").count(), (1 + 2 + 2) + (1 + 2), "{c}");
    assert_eq!(c.matches("free(").count(), 2, "{c}");
    let runtime = "#include <stdint.h>\n\
        static int64_t n_consumed; static double total;\n\
        void start_time(void) {}\n void end_time(void) {}\n\
        void consume_tensor(float *p) { n_consumed++; total += p[0]; }\n\
        int64_t consumed(void) { return n_consumed; }\n";
    let opts = CompileOptions {
        extra_c: vec![runtime.to_string()],
        ..Default::default()
    }
    .with_backend(Backend::C);
    let p = ex.compile_with(&opts).unwrap();
    let mut x = vec![1.0f32; 64];
    let mut w = vec![1.0f32; 3];
    // SAFETY: x holds 64 floats and w 3, as extracted.
    unsafe { (p.get())(x.as_mut_ptr(), w.as_mut_ptr(), true) };
    // SAFETY: the runtime defines `int64_t consumed(void)`.
    let consumed: unsafe extern "C" fn() -> i64 =
        unsafe { p.library().unwrap().symbol("consumed") }.unwrap();
    // SAFETY: it reads a counter.
    assert_eq!(unsafe { consumed() }, 20);
    // The JIT, with the runtime in Rust.
    let jit = CompileOptions::default()
        .with_backend(Backend::Jit)
        .with_symbol("start_time", nothing as *const ())
        .with_symbol("end_time", nothing as *const ())
        .with_symbol("consume_tensor", consume_tensor as *const ());
    let p = ex.compile_with(&jit).unwrap();
    let before = CONSUMED.load(std::sync::atomic::Ordering::Relaxed);
    // SAFETY: as above.
    unsafe { (p.get())(x.as_mut_ptr(), w.as_mut_ptr(), true) };
    let after = CONSUMED.load(std::sync::atomic::Ordering::Relaxed);
    assert_eq!(after - before, 20);
}

static CONSUMED: std::sync::atomic::AtomicI64 = std::sync::atomic::AtomicI64::new(0);

extern "C" fn nothing() {}

extern "C" fn consume_tensor(_p: *mut f32) {
    CONSUMED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
}

/// The fast CPU version (`Benchmark::fast`: the default schedule, blocked
/// at these sizes, and OpenMP) computes what the paper's does, compiled and
/// in the interpreter (every access of the packed, tiled loops
/// bounds-checked, every pack buffer freed).
#[test]
#[augur::staged]
fn the_fast_cpu_version_computes_the_same() {
    use augur_einsum::SimInterpreter;
    for kind in [Kind::MatMul, Kind::MatVec] {
        for accumulate in [Accumulate::No, Accumulate::Yes] {
            let sizes = match kind {
                Kind::MatMul => (37, 41, 43),
                Kind::MatVec => (300, 301, 1),
            };
            let b = Benchmark {
                sizes,
                accumulate,
                ..Benchmark::fast(kind, 1)
            };
            let ex = b.extract().unwrap();
            let (x, y) = inputs(&b);
            for backend in [Backend::Auto, Backend::Jit] {
                let (z, _) = run(&b, 2, backend);
                assert_eq!(
                    z,
                    b.reference(&x, &y, 2),
                    "{} {backend:?}",
                    b.function_name()
                );
            }
            let c = ex.c_code();
            assert!(c.contains("omp parallel for"), "{c}");
            let mut it = SimInterpreter::new();
            let zlen: usize = b.kind.shapes(b.sizes)[2].iter().product();
            let mem = it.interp.memory_mut();
            let args = [
                mem.alloc_slice(&x),
                mem.alloc_slice(&y),
                mem.alloc_slice(&vec![f32::NAN; zlen]),
                2i32.into(),
            ];
            let sim = ex.simulated().unwrap();
            sim.interpret_in(&mut it.interp, &args).unwrap();
            let z: Vec<f32> = it.interp.memory().read_slice(args[2], zlen).unwrap();
            assert_eq!(z, b.reference(&x, &y, 2), "{}", b.function_name());
            assert_eq!(it.live_buffers(), 0, "{}", b.function_name());
        }
    }
}
