//! What several test files share: `extract` builds a program over tensors
//! A, B, C on a small grid (`small`); `run_all` builds and runs it on the
//! CPU and on the CPU-simulated GPU under every data-movement strategy,
//! each with the C compiler and with the JIT, and `all_equal` checks that
//! every build left the same buffers. (Each
//! test file uses a part.)

#![allow(dead_code)]

use augur::exec::Backend;
use augur::{Builder, Dyn, Extracted};
use augur_einsum::SimInterpreter;
use augur_einsum::{compile_cpu_with, compile_simulated_with, Config, Counters, Einsum};
use augur_einsum::{Movement, Tensor};

pub type Sig<E> = unsafe extern "C" fn(*mut E, *mut E, *mut E, i32);
pub type Body<E> = fn(&Einsum, &[Tensor<E>; 3], Dyn<i32>);

#[augur::staged]
pub fn extract<E: augur_einsum::Elem + augur::CScalar>(
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

#[augur::staged]
pub fn small(m: Movement) -> Config {
    Config {
        blocks: 3,
        threads: 4,
        ..Config::with(m)
    }
}

/// Runs `body` under the CPU config, every simulated movement and resident
/// prophecies; returns
/// (config name, buffers after, counters).
pub fn run_all<E: augur_einsum::Elem + augur::CScalar>(
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
    // Prophecies with tensors kept on the device between kernels.
    let resident = Config {
        resident: true,
        ..small(Movement::Prophecy)
    };
    configs.push(("resident".to_string(), resident));
    for (cname, config) in configs {
        let ex = extract::<E>(&format!("{name}_{cname}"), config, shapes, body)
            .unwrap_or_else(|e| panic!("{cname}: {e}"));
        for (backend, suffix) in [(Backend::Auto, ""), (Backend::Jit, " (JIT)")] {
            let p = build(&ex, config, backend).unwrap_or_else(|e| panic!("{cname}{suffix}: {e}"));
            let bufs = run_on(&p, &init, n);
            let c = if config.gpu {
                Some(p.counters().unwrap())
            } else {
                None
            };
            out.push((format!("{cname}{suffix}"), bufs, c));
        }
    }
    out
}

/// `ex` compiled for its configuration's target (the simulated GPU or the
/// CPU) with `backend`.
#[augur::staged]
pub fn build<S: Copy>(
    ex: &Extracted<S>,
    config: Config,
    backend: Backend,
) -> augur::Result<augur_einsum::Program<S>> {
    if config.gpu {
        compile_simulated_with(ex, backend)
    } else {
        compile_cpu_with(ex, false, backend)
    }
}

/// Runs `p` on a copy of `init` with `n` (counters reset first); gives the
/// buffers after.
#[augur::staged]
pub fn run_on<E: Clone>(
    p: &augur_einsum::Program<Sig<E>>,
    init: &[Vec<E>; 3],
    n: i32,
) -> [Vec<E>; 3] {
    let mut bufs = init.clone();
    p.reset().unwrap();
    // SAFETY: each buffer holds its tensor's elements, as the test's
    // shapes say.
    unsafe {
        (p.get())(
            bufs[0].as_mut_ptr(),
            bufs[1].as_mut_ptr(),
            bufs[2].as_mut_ptr(),
            n,
        )
    };
    bufs
}

/// One build's name, its three output buffers and its counters.
pub type Outcome<E> = (String, [Vec<E>; 3], Option<Counters>);

/// Every build left the same buffers, and each JIT build counted what its
/// C build counted.
#[augur::staged]
pub fn all_equal<E: PartialEq + std::fmt::Debug>(rs: &[Outcome<E>]) {
    for r in &rs[1..] {
        assert_eq!(r.1, rs[0].1, "{} differs from {}", r.0, rs[0].0);
    }
    for pair in rs.chunks(2) {
        assert_eq!(pair[0].2, pair[1].2, "{} counted differently", pair[1].0);
    }
}

#[augur::staged]
pub fn prophecy_counters<E>(rs: &[Outcome<E>]) -> Counters {
    rs.iter().find(|r| r.0 == "prophecy").unwrap().2.unwrap()
}

#[augur::staged]
pub fn seq(n: usize) -> Vec<f32> {
    (0..n).map(|x| x as f32 + 1.0).collect()
}

/// Runs `ex`'s simulated GPU version in the memory-checked interpreter
/// (which reports races between threads) on a copy of `init` with n = 1;
/// gives the first `len` elements of C after.
pub fn interpret_simulated(
    ex: &Extracted<Sig<f32>>,
    init: &[Vec<f32>; 3],
    len: usize,
) -> augur::Result<Vec<f32>> {
    let sim = ex.simulated()?;
    let mut it = SimInterpreter::new();
    let m = it.interp.memory_mut();
    let bufs = [
        m.alloc_slice(&init[0]),
        m.alloc_slice(&init[1]),
        m.alloc_slice(&init[2]),
    ];
    sim.interpret_in(&mut it.interp, &[bufs[0], bufs[1], bufs[2], 1i32.into()])?;
    it.interp.memory().read_slice(bufs[2], len)
}

/// The PTX of CUDA source `cu` (nvcc, installed on first use); panics
/// with the source when nvcc refuses it.
#[augur::staged]
pub fn ptx(cu: &str) -> String {
    augur::exec::cuda::Nvcc::find_or_install()
        .expect("nvcc")
        .ptx(cu, "sm_80")
        .unwrap_or_else(|e| panic!("nvcc: {e}\n{cu}"))
}

/// Builds `body` under `config`, checks that its CUDA has no block
/// barrier (the paper's loops), and gives C after a JIT run on `init`.
#[augur::staged]
pub fn papers_loops(
    config: Config,
    shapes: [&[usize]; 3],
    body: Body<f32>,
    init: &[Vec<f32>; 3],
) -> Vec<f32> {
    let ex = extract::<f32>("papers", config, shapes, body).unwrap();
    let cu = augur_einsum::cuda_source(&ex).unwrap();
    assert!(!cu.contains("augur_sync_threads();"), "{cu}");
    let p = build(&ex, config, Backend::Jit).unwrap();
    run_on(&p, init, 1)[2].clone()
}
