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
use augur_einsum::{einsum, Config, Einsum, Movement};

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
    pub fn name(self) -> &'static str {
        match self {
            Kind::MatMul => "matmul",
            Kind::MatVec => "matvec",
        }
    }

    /// The shapes of x, y, z for sizes (m, n, o).
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
}

impl Benchmark {
    /// The paper's program at a square size.
    pub fn paper(kind: Kind, size: usize, movement: Movement) -> Benchmark {
        Benchmark {
            kind,
            sizes: (size, size, size),
            movement,
            accumulate: Accumulate::No,
            gpu: true,
        }
    }

    /// The generated function's name: `matmul_prophecy_1024x1024x1024`.
    pub fn function_name(&self) -> String {
        let (m, n, o) = self.sizes;
        format!(
            "{}_{}{}_{m}x{n}x{o}",
            self.kind.name(),
            if self.gpu {
                self.movement.name()
            } else {
                "cpu"
            },
            if self.accumulate == Accumulate::Yes {
                "_acc"
            } else {
                ""
            }
        )
    }

    /// Extracts the program with `builder`.
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
    pub fn extract(&self) -> Result<Extracted<Native>> {
        self.extract_with(&Builder::new())
    }

    /// The first-stage program.
    fn stage(&self, x_b: Dyn<*mut f32>, y_b: Dyn<*mut f32>, z_b: Dyn<*mut f32>, iters: Dyn<i32>) {
        let config = if self.gpu {
            Config::with(self.movement)
        } else {
            Config::cpu()
        };
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
