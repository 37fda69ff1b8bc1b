//! The examples the command knows by name (`augur emit power`, `augur
//! explain matmul`): the core engine's, the einsum and nn DSLs' programs
//! from the paper, each staged on demand into its C, CUDA and simulated
//! forms with the first stage's explanation and statistics.

use crate::Result;
use augur::codegen::{CodegenOptions, LineMarkers};
use augur::prophecy::{History, Prophecy};
use augur::{Builder, Dyn, Extracted, Static, Stats};
use augur_einsum::programs::{Benchmark, Kind};
use augur_einsum::Movement;

/// Which generated form to show.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// C99 for the CPU (einsum's GPU blocks as plain loops only when the
    /// program has none; see `CudaSim`).
    C,
    /// CUDA: kernels, launches and transfers.
    Cuda,
    /// C that simulates the GPU on the CPU (kernels as block × thread loops,
    /// transfers counted).
    CudaSim,
}

/// What `augur emit` and `augur explain` can change about an example.
#[derive(Clone, Copy, Debug, Default)]
pub struct Params {
    /// The einsum programs' square size (first-stage: it is unrolled into
    /// the code as constants); the conv input length for `conv-relu`.
    pub size: Option<usize>,
    /// The einsum programs' data movement.
    pub movement: Option<Movement>,
    /// Source mapping in the generated code.
    pub lines: LineMarkers,
}

/// A staged example.
pub struct Staged {
    /// The generated function's name.
    pub function: String,
    /// The code of each target, or why the target does not apply.
    code: Box<dyn Fn(Target) -> Result<String>>,
    /// The first stage's account of its prophecies and histories.
    pub explain: String,
    /// Runs, attempts, times.
    pub stats: Stats,
}

impl Staged {
    /// The generated code for `target`.
    pub fn code(&self, target: Target) -> Result<String> {
        (self.code)(target)
    }
}

/// One example of the catalogue.
pub struct Example {
    /// Its name on the command line.
    pub name: &'static str,
    /// One line on what it shows.
    pub about: &'static str,
    /// Stages it.
    pub stage: fn(&Params) -> Result<Staged>,
}

/// Every example.
pub const EXAMPLES: [Example; 7] = [
    Example {
        name: "power",
        about: "x^15 by repeated squaring; the exponent is first-stage, so the loop unrolls away",
        stage: power,
    },
    Example {
        name: "collatz",
        about: "a dyn loop with a dyn branch: data-dependent control flow extracted by re-execution",
        stage: collatz,
    },
    Example {
        name: "prophecy",
        about: "a prophecy (make a copy only if later code reads it) and a history (did any path change r?)",
        stage: prophecy,
    },
    Example {
        name: "matmul",
        about: "einsum: the paper's matrix-matrix benchmark (--size, --movement copy-all|unified|prophecy)",
        stage: matmul,
    },
    Example {
        name: "matvec",
        about: "einsum: the paper's matrix-vector benchmark (--size, --movement)",
        stage: matvec,
    },
    Example {
        name: "conv-relu",
        about: "nn: 1-D convolution then ReLU, fused by prophecy (--size: input length)",
        stage: conv_relu,
    },
    Example {
        name: "nn-benchmark",
        about: "nn: the paper's benchmark listing; fused only where every path agrees on the threshold",
        stage: nn_benchmark,
    },
];

impl Example {
    /// Stages the example; a `--size` of 0 is an error naming the option.
    pub fn staged(&self, p: &Params) -> Result<Staged> {
        if p.size == Some(0) {
            return Err(format!("{}: --size must be at least 1", self.name).into());
        }
        (self.stage)(p)
    }
}

/// The example called `name`, or an error listing the names.
pub fn find(name: &str) -> Result<&'static Example> {
    EXAMPLES.iter().find(|e| e.name == name).ok_or_else(|| {
        let names: Vec<&str> = EXAMPLES.iter().map(|e| e.name).collect();
        format!(
            "no example called '{name}'; the examples are: {}",
            names.join(", ")
        )
        .into()
    })
}

/// The C, CUDA and simulation of an extracted function. `prelude` is the
/// DSL's runtime for CUDA; `sim_runtime` the C its simulation links with
/// (empty for the core examples). The simulation applies to programs that
/// launch kernels; for the others it is an error naming the example.
fn staged<S: Copy + 'static>(
    ex: Extracted<S>,
    lines: LineMarkers,
    prelude: fn() -> String,
) -> Staged {
    let opts = CodegenOptions::default().with_line_markers(lines);
    let explain = ex.explain().to_string();
    let stats = ex.stats().clone();
    let function = ex.ir().name.clone();
    let code = move |t: Target| -> Result<String> {
        Ok(match t {
            Target::C => ex.c_code_with(&opts),
            Target::Cuda => ex.cuda_code_with(&prelude(), &opts)?,
            Target::CudaSim => ex.simulated()?.c_code_with(&opts),
        })
    };
    Staged {
        function,
        code: Box::new(code),
        explain,
        stats,
    }
}

fn no_prelude() -> String {
    String::new()
}

/// The power example's function: `power15(base)`.
pub fn power_extracted() -> Result<Extracted<unsafe extern "C" fn(i64) -> i64>> {
    Ok(Builder::new().extract("power15", |base: Dyn<i64>| {
        let res = Dyn::named("res", 1i64);
        let x = Dyn::named("x", base);
        let mut exponent = Static::new(15u32);
        while *exponent > 1 {
            if *exponent % 2 == 1 {
                res.set(res * x);
            }
            x.set(x * x);
            exponent.set(*exponent / 2);
        }
        res * x
    })?)
}

fn power(p: &Params) -> Result<Staged> {
    Ok(staged(power_extracted()?, p.lines, no_prelude))
}

fn collatz(p: &Params) -> Result<Staged> {
    let ex = Builder::new().extract("collatz_steps", |n: Dyn<u64>| {
        let n = Dyn::named("n", n);
        let mut steps = Dyn::named("steps", 0u32);
        while n.ne(1).is_true() {
            if (n % 2).eq(0).is_true() {
                n.set(n / 2);
            } else {
                n.set(3 * n + 1);
            }
            steps += 1;
        }
        steps
    })?;
    Ok(staged(ex, p.lines, no_prelude))
}

/// The prophecy example's function: `predicted(x)`.
pub fn prophecy_extracted() -> Result<Extracted<unsafe extern "C" fn(i32) -> i32>> {
    Ok(Builder::new().extract("predicted", |x: Dyn<i32>| {
        let needs_copy = Prophecy::named("x copied", false);
        let copy = Dyn::named("copy", 0);
        if needs_copy.get() {
            copy.set(x);
        }
        let wrote = History::named("r may change", false);
        let r = Dyn::named("r", 1);
        while r.lt(x).is_true() {
            wrote.record(true);
            needs_copy.require(true);
            r.set(r + copy);
        }
        if wrote.get() {
            r
        } else {
            Dyn::new(1)
        }
    })?)
}

fn prophecy(p: &Params) -> Result<Staged> {
    Ok(staged(prophecy_extracted()?, p.lines, no_prelude))
}

fn einsum(kind: Kind, p: &Params) -> Result<Staged> {
    let b = Benchmark::paper(
        kind,
        p.size.unwrap_or(256),
        p.movement.unwrap_or(Movement::Prophecy),
    );
    let ex = b.extract()?;
    let mut s = staged(ex, p.lines, augur_einsum::cuda_prelude);
    // The simulation links the einsum runtime's counters: show it whole.
    let inner = std::mem::replace(&mut s.code, Box::new(|_| Ok(String::new())));
    s.code = Box::new(move |t| match t {
        Target::CudaSim => Ok(format!("{}\n{}", augur_einsum::sim_c(), inner(t)?)),
        _ => inner(t),
    });
    Ok(s)
}

fn matmul(p: &Params) -> Result<Staged> {
    einsum(Kind::MatMul, p)
}

fn matvec(p: &Params) -> Result<Staged> {
    einsum(Kind::MatVec, p)
}

fn conv_relu(p: &Params) -> Result<Staged> {
    let ex = augur_nn::programs::conv_relu(p.size.unwrap_or(1024), 3, true)?;
    Ok(staged(ex, p.lines, no_prelude))
}

fn nn_benchmark(p: &Params) -> Result<Staged> {
    let ex = augur_nn::programs::paper_benchmark(&Builder::new(), p.size.unwrap_or(1024), 3)?;
    Ok(staged(ex, p.lines, no_prelude))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_examples_are_named_with_the_alternatives() {
        let e = find("powr").err().unwrap().to_string();
        assert!(e.contains("'powr'") && e.contains("power, collatz"), "{e}");
    }
}
