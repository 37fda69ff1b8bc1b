//! The einsum DSL's benchmark programs (the paper's supplementary listing's
//! `benchmark`), as staged functions ready to extract.
//!
//! Each program keeps six tensors: three over the caller's buffers (`x_b`,
//! `y_b`, `z_b`) and three the generated code allocates (`x`, `y`, `z`). Each
//! of `iterations` turns (a dyn loop) copies the inputs into `x` and `y` on
//! the CPU, runs the product on the GPU, and copies `z` out to `z_b`; the
//! timer covers the GPU part and the copy out, as in the listing. Only `x`,
//! `y` and `z` are ever used on the GPU.
//!
//! The listing writes the product as `z[i][j] += x[i][k] * y[k][j]`, but its
//! `+=` stores the sum without reading `z` (it is `=`): `z` is never
//! initialised, so a real `+=` would accumulate garbage. The programs here
//! say what the listing computes, `z[i][j] = x[i][k] * y[k][j]`;
//! [`Accumulate::Yes`] gives the `+=` form (then the kernel reads `z`, and the
//! prophecy strategy copies it in).

use augur::{Builder, Dyn, Extracted, Result};
use augur_einsum::{einsum, Config, Einsum, Movement, Schedule};

/// The programs' compiled type: `(x_b, y_b, z_b, iterations)`.
pub type Native = unsafe extern "C" fn(*mut f32, *mut f32, *mut f32, i32);

/// The `z` statement: `=` (what the listing computes) or a real `+=`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Accumulate {
    /// `z = x y`.
    No,
    /// `z += x y` (`z` zeroed first, on the CPU).
    Yes,
}

/// Which product.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `z[i][j] = x[i][k] * y[k][j]`: x is m×n, y n×o, z m×o.
    MatMul,
    /// `z[i] = x[i][j] * y[j]`: x is m×n, y n, z m (`o` unused).
    MatVec,
}

impl Kind {
    /// `matmul` or `matvec`.
    #[augur::staged]
    pub fn name(self) -> &'static str {
        match self {
            Kind::MatMul => "matmul",
            Kind::MatVec => "matvec",
        }
    }

    /// The shapes of x, y, z for sizes (m, n, o).
    #[augur::staged]
    pub fn shapes(self, (m, n, o): (usize, usize, usize)) -> [Vec<usize>; 3] {
        match self {
            Kind::MatMul => [vec![m, n], vec![n, o], vec![m, o]],
            Kind::MatVec => [vec![m, n], vec![n], vec![m]],
        }
    }
}

/// One benchmark program: what to extract.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Benchmark {
    /// Matrix-matrix or matrix-vector.
    pub kind: Kind,
    /// (m, n, o).
    pub sizes: (usize, usize, usize),
    /// How tensors move.
    pub movement: Movement,
    /// `=` or `+=`.
    pub accumulate: Accumulate,
    /// False: the same program with `run_on_gpu` on the CPU ([`Config::cpu`]).
    pub gpu: bool,
    /// The CPU statements' schedule ([`Schedule::naive`] in the paper's
    /// programs, where kernels keep the paper's loops too; under any other, a
    /// kernel's matrix product goes through shared memory).
    pub schedule: Schedule,
    /// The CPU statements' loops `omp parallel for` (off in the paper's).
    pub openmp: bool,
}

impl Benchmark {
    /// The paper's program at a square size.
    #[augur::staged]
    pub fn paper(kind: Kind, size: usize, movement: Movement) -> Benchmark {
        Benchmark {
            kind,
            sizes: (size, size, size),
            movement,
            accumulate: Accumulate::No,
            gpu: true,
            schedule: Schedule::naive(),
            openmp: false,
        }
    }

    /// The GPU program users get by default: the paper's, with kernels
    /// under [`Schedule::Auto`] (products through shared-memory tiles and
    /// register blocks, matvec through lanes per row).
    #[augur::staged]
    pub fn gpu_auto(kind: Kind, size: usize, movement: Movement) -> Benchmark {
        Benchmark {
            schedule: Schedule::Auto,
            ..Benchmark::paper(kind, size, movement)
        }
    }

    /// The CPU version users get by default: [`Schedule::Auto`], OpenMP.
    #[augur::staged]
    pub fn fast(kind: Kind, size: usize) -> Benchmark {
        Benchmark {
            gpu: false,
            schedule: Schedule::Auto,
            openmp: true,
            ..Benchmark::paper(kind, size, Movement::Prophecy)
        }
    }

    /// The generated function's name: `matmul_prophecy_1024x1024x1024`
    /// (`matmul_cpu_fast_...` with a schedule other than the paper's).
    #[augur::staged]
    pub fn function_name(&self) -> String {
        let (m, n, o) = self.sizes;
        let fast = self.schedule != Schedule::naive() || self.openmp;
        format!(
            "{}_{}{}{}_{m}x{n}x{o}",
            self.kind.name(),
            if self.gpu {
                self.movement.name()
            } else {
                "cpu"
            },
            if fast { "_fast" } else { "" },
            if self.accumulate == Accumulate::Yes {
                "_acc"
            } else {
                ""
            }
        )
    }

    /// Extracts the program with `builder`.
    #[augur::staged]
    pub fn extract_with(&self, builder: &Builder) -> Result<Extracted<Native>> {
        let b = *self;
        builder.extract(
            &self.function_name(),
            move |x_b: Dyn<*mut f32>, y_b: Dyn<*mut f32>, z_b: Dyn<*mut f32>, iters: Dyn<i32>| {
                b.stage(x_b, y_b, z_b, iters)
            },
        )
    }

    /// Extracts the program with a default builder.
    #[augur::staged]
    pub fn extract(&self) -> Result<Extracted<Native>> {
        self.extract_with(&Builder::new())
    }

    /// The first-stage program.
    #[augur::staged]
    fn stage(&self, x_b: Dyn<*mut f32>, y_b: Dyn<*mut f32>, z_b: Dyn<*mut f32>, iters: Dyn<i32>) {
        let mut config = if self.gpu {
            Config::with(self.movement)
        } else {
            Config::cpu()
        };
        (config.schedule, config.openmp) = (self.schedule, self.openmp);
        let ein = Einsum::new(config);
        let (i, j, k) = (ein.index("i"), ein.index("j"), ein.index("k"));
        let [xs, ys, zs] = self.kind.shapes(self.sizes);
        let x = ein.tensor::<f32>("x", &xs);
        let x_b = ein.tensor_on::<f32>("x_b", &xs, x_b);
        let y = ein.tensor::<f32>("y", &ys);
        let y_b = ein.tensor_on::<f32>("y_b", &ys, y_b);
        let z = ein.tensor::<f32>("z", &zs);
        let z_b = ein.tensor_on::<f32>("z_b", &zs, z_b);
        let acc = self.accumulate == Accumulate::Yes;
        if acc {
            match self.kind {
                Kind::MatMul => z.at([i, j]).set(0.0f32),
                Kind::MatVec => z.at([i]).set(0.0f32),
            }
        }
        let iter = Dyn::named("iter", 0i32);
        while iter.lt(iters).is_true() {
            match self.kind {
                Kind::MatMul => {
                    x.at([i, j]).set(x_b.at([i, j]));
                    y.at([i, j]).set(y_b.at([i, j]));
                }
                Kind::MatVec => {
                    x.at([i, j]).set(x_b.at([i, j]));
                    y.at([i]).set(y_b.at([i]));
                }
            }
            ein.timer_start();
            ein.run_on_gpu(|| match (self.kind, acc) {
                (Kind::MatMul, false) => einsum!(z[i, j] = x[i, k] * y[k, j]),
                (Kind::MatMul, true) => einsum!(z[i, j] += x[i, k] * y[k, j]),
                (Kind::MatVec, false) => einsum!(z[i] = x[i, j] * y[j]),
                (Kind::MatVec, true) => einsum!(z[i] += x[i, j] * y[j]),
            });
            match self.kind {
                Kind::MatMul => z_b.at([i, j]).set(z.at([i, j])),
                Kind::MatVec => z_b.at([i]).set(z.at([i])),
            }
            ein.timer_stop();
            iter.set(iter + 1);
        }
        ein.finish();
    }

    /// Plain-Rust meaning: `z_b` after `iterations` turns from `x_b`, `y_b`
    /// (with `+=`, the sum accumulates once per turn).
    #[augur::staged]
    pub fn reference(&self, x_b: &[f32], y_b: &[f32], iterations: usize) -> Vec<f32> {
        let (m, n, o) = self.sizes;
        let o = if self.kind == Kind::MatVec { 1 } else { o };
        let mut z = vec![0f32; m * o];
        let turns = match self.accumulate {
            Accumulate::No => iterations.min(1),
            Accumulate::Yes => iterations,
        };
        for _ in 0..turns {
            for r in 0..m {
                for c in 0..o {
                    let mut s = 0f32;
                    for q in 0..n {
                        s += x_b[r * n + q] * y_b[q * o + c];
                    }
                    z[r * o + c] += s;
                }
            }
        }
        z
    }

    /// Bytes each strategy should move per turn (what the tables report):
    /// copy-all moves all six tensors both ways; prophecy moves x and y in
    /// and z out (and z in with `+=`); unified memory copies nothing.
    #[augur::staged]
    pub fn expected_bytes_per_turn(&self) -> i64 {
        if !self.gpu {
            return 0;
        }
        let [xs, ys, zs] = self.kind.shapes(self.sizes);
        let bytes = |s: &[usize]| (s.iter().product::<usize>() * 4) as i64;
        let (x, y, z) = (bytes(&xs), bytes(&ys), bytes(&zs));
        match self.movement {
            Movement::CopyAll => 2 * 2 * (x + y + z),
            Movement::Unified => 0,
            Movement::Prophecy => {
                x + y
                    + z
                    + if self.accumulate == Accumulate::Yes {
                        z
                    } else {
                        0
                    }
            }
        }
    }
}

/// A product alone over the caller's buffers, `(x, y, z)`: what `augur bench
/// einsum` sets beside OpenBLAS's `sgemm` and `sgemv` (the benchmark
/// programs' copies and turns left out).
pub type ProductFn = unsafe extern "C" fn(*mut f32, *mut f32, *mut f32);

/// `z = x y` at a square size, on the CPU, under a schedule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Product {
    /// Matrix-matrix or matrix-vector.
    pub kind: Kind,
    /// The square size.
    pub size: usize,
    /// How its loops are laid out.
    pub schedule: Schedule,
    /// The outer (tile) loop `omp parallel for`.
    pub openmp: bool,
}

impl Product {
    /// Extracts it.
    #[augur::staged]
    pub fn extract(&self) -> Result<Extracted<ProductFn>> {
        let p = *self;
        let [xs, ys, zs] = p.kind.shapes((p.size, p.size, p.size));
        let name = format!("{}_{}", p.kind.name(), p.size);
        Builder::new().extract(
            &name,
            move |x: Dyn<*mut f32>, y: Dyn<*mut f32>, z: Dyn<*mut f32>| {
                let mut config = Config::cpu();
                (config.schedule, config.openmp) = (p.schedule, p.openmp);
                let ein = Einsum::new(config);
                let (i, j, k) = (ein.index("i"), ein.index("j"), ein.index("k"));
                let x = ein.tensor_on::<f32>("x", &xs, x);
                let y = ein.tensor_on::<f32>("y", &ys, y);
                let z = ein.tensor_on::<f32>("z", &zs, z);
                match p.kind {
                    Kind::MatMul => einsum!(z[i, j] = x[i, k] * y[k, j]),
                    Kind::MatVec => einsum!(z[i] = x[i, j] * y[j]),
                }
                ein.finish();
            },
        )
    }
}
