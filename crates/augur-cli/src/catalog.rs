//! The examples the command knows by name (`augur emit power`, `augur
//! explain matmul`): the core engine's, the einsum and nn DSLs' programs
//! from the paper, each staged on demand into its C, CUDA and simulated
//! forms with the first stage's explanation and statistics.

use crate::programs::einsum::{Benchmark, Kind};
use crate::Result;
use augur::codegen::{CodegenOptions, LineMarkers};
use augur::prophecy::{History, Prophecy};
use augur::{Builder, Dyn, Extracted, ExtractedModule, Func, Static};
use augur_einsum::{Movement, Schedule};

/// Which generated form to show.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// C99 for the CPU (the einsum programs: their CPU build, without
    /// `run_on_gpu`, under the default schedule and OpenMP unless
    /// [`Params::schedule`] says otherwise).
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
    /// The einsum programs' CPU schedule for the C target (default:
    /// [`Schedule::Auto`] with OpenMP, the fast version; [`Schedule::naive`]:
    /// the paper's loops without OpenMP).
    pub schedule: Option<Schedule>,
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
    /// Runs, attempts, times (one line per function of a module).
    pub stats: String,
}

impl Staged {
    /// The generated code for `target`.
    #[augur::staged]
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
    /// The sizes `--size` may give (none: the example has no size).
    pub sizes: Option<(usize, usize)>,
    /// Whether `--movement` applies.
    pub movement: bool,
    /// Stages it.
    pub stage: fn(&Params) -> Result<Staged>,
}

/// Square einsum sizes whose element count fits the generated `int32_t`
/// indices.
const EINSUM_SIZES: Option<(usize, usize)> = Some((1, 46340));
/// Conv input lengths: at least the 3-tap filter, and `n + k` within `int32_t`.
const CONV_SIZES: Option<(usize, usize)> = Some((3, 1 << 30));

/// Every example.
pub const EXAMPLES: [Example; 9] = [
    Example {
        name: "power",
        about: "x^15 by repeated squaring; the exponent is first-stage, so the loop unrolls away",
        sizes: None,
        movement: false,
        stage: power,
    },
    Example {
        name: "collatz",
        about: "a dyn loop with a dyn branch: data-dependent control flow extracted by re-execution",
        sizes: None,
        movement: false,
        stage: collatz,
    },
    Example {
        name: "prophecy",
        about: "a prophecy (make a copy only if later code reads it) and a history (did any path change r?)",
        sizes: None,
        movement: false,
        stage: prophecy,
    },
    Example {
        name: "recursion",
        about: "several functions: a recursive gcd, and power specialised on its exponent (power_13 calls power_12 ...)",
        sizes: None,
        movement: false,
        stage: recursion,
    },
    Example {
        name: "particles",
        about: "structs: a time step over particles (position and velocity, each a struct of two floats), with bounces",
        sizes: None,
        movement: false,
        stage: particles,
    },
    Example {
        name: "matmul",
        about: "einsum: the paper's matrix-matrix benchmark (--size, --movement copy-all|unified|prophecy)",
        sizes: EINSUM_SIZES,
        movement: true,
        stage: matmul,
    },
    Example {
        name: "matvec",
        about: "einsum: the paper's matrix-vector benchmark (--size, --movement)",
        sizes: EINSUM_SIZES,
        movement: true,
        stage: matvec,
    },
    Example {
        name: "conv-relu",
        about: "nn: 1-D convolution then ReLU, fused by prophecy (--size: input length)",
        sizes: CONV_SIZES,
        movement: false,
        stage: conv_relu,
    },
    Example {
        name: "nn-benchmark",
        about: "nn: the paper's benchmark listing; fused only where every path agrees on the threshold",
        sizes: CONV_SIZES,
        movement: false,
        stage: nn_benchmark,
    },
];

impl Example {
    /// Stages the example; an option it does not take, or a size out of
    /// its range, is an error naming the option.
    #[augur::staged]
    pub fn staged(&self, p: &Params) -> Result<Staged> {
        let name = self.name;
        match (p.size, self.sizes) {
            (Some(_), None) => return Err(format!("{name} takes no --size").into()),
            (Some(n), Some((lo, hi))) if n < lo || n > hi => {
                return Err(format!("{name}: --size must be between {lo} and {hi}, not {n}").into())
            }
            _ => {}
        }
        if p.movement.is_some() && !self.movement {
            return Err(format!("{name} takes no --movement (only the einsum examples do)").into());
        }
        if p.schedule.is_some() && !self.movement {
            return Err(format!("{name} takes no --schedule (only the einsum examples do)").into());
        }
        (self.stage)(p)
    }
}

/// The example called `name`, or an error listing the names.
#[augur::staged]
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

/// What a DSL's generated code needs beside it.
#[derive(Clone, Copy)]
struct Runtime {
    /// Put before the CUDA (the DSL's device runtime).
    cuda: fn() -> String,
    /// Put before the C of the CPU and simulated builds, so the file
    /// compiles on its own.
    c: fn() -> String,
}

/// The core examples need no runtime.
const NO_RUNTIME: Runtime = Runtime {
    cuda: String::new,
    c: String::new,
};

/// The einsum runtime: transfers, counters, timers.
const EINSUM_RUNTIME: Runtime = Runtime {
    cuda: augur_einsum::cuda_prelude,
    c: augur_einsum::sim_c,
};

/// The C, CUDA and simulation of an extracted function; `cpu` is the
/// function the C target shows (the same one, or a CPU-only build).
#[augur::staged]
fn staged<S: Copy + 'static, C: Copy + 'static>(
    ex: Extracted<S>,
    cpu: Extracted<C>,
    lines: LineMarkers,
    rt: Runtime,
) -> Staged {
    let opts = CodegenOptions::default().with_line_markers(lines);
    let explain = ex.explain().to_string();
    let stats = ex.stats().to_string();
    let function = ex.ir().name.clone();
    let with_runtime = move |code: String| {
        let runtime = (rt.c)();
        if runtime.is_empty() {
            return code;
        }
        // The unit's build comment stays its first lines.
        let (header, rest) = split_build_comment(&code);
        format!("{header}{runtime}\n{rest}")
    };
    let code = move |t: Target| -> Result<String> {
        Ok(match t {
            Target::C => with_runtime(cpu.c_code_with(&opts)),
            Target::Cuda => ex.cuda_code_with(&(rt.cuda)(), &opts)?,
            Target::CudaSim => with_runtime(ex.simulated()?.c_code_with(&opts)),
        })
    };
    Staged {
        function,
        code: Box::new(code),
        explain,
        stats,
    }
}

/// The build comment a C unit starts with, and the rest.
fn split_build_comment(code: &str) -> (&str, &str) {
    match code.find("\n */\n") {
        Some(end) if code.starts_with("/* ") => code.split_at(end + 5),
        _ => ("", code),
    }
}

/// A core example: one function for every target.
#[augur::staged]
fn core<S: Copy + 'static>(ex: Extracted<S>, lines: LineMarkers) -> Staged {
    staged(ex.clone(), ex, lines, NO_RUNTIME)
}

/// The power example's function: `power15(base)`.
#[augur::staged]
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

#[augur::staged]
fn power(p: &Params) -> Result<Staged> {
    Ok(core(power_extracted()?, p.lines))
}

#[augur::staged]
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
    Ok(core(ex, p.lines))
}

/// The prophecy example's function: `predicted(x)`.
#[augur::staged]
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

#[augur::staged]
fn prophecy(p: &Params) -> Result<Staged> {
    Ok(core(prophecy_extracted()?, p.lines))
}

/// The recursion example's module: `gcd(a, b)` (a recursive C function)
/// and `power_13(x)`, which calls the `power` specialised on 12, then 6, 3,
/// 2, 1 and 0.
#[augur::staged]
pub fn recursion_extracted() -> Result<ExtractedModule> {
    let mut m = Builder::new().module();
    let gcd: Func<fn(u64, u64) -> u64> = m.declare("gcd");
    m.define(gcd, move |a: Dyn<u64>, b: Dyn<u64>| {
        let r = Dyn::named("r", a);
        if b.ne(0u64).is_true() {
            r.set(gcd.call(b, a % b));
        }
        r
    });
    let power = m.declare_keyed::<u32, fn(f64) -> f64>("power");
    m.define_keyed(power, move |k: u32, x: Dyn<f64>| {
        if k == 0 {
            Dyn::new(1.0)
        } else if k % 2 == 0 {
            let half = Dyn::named("half", power.at(k / 2).call(x));
            half * half
        } else {
            x * power.at(k - 1).call(x)
        }
    });
    m.export(power.at(13));
    Ok(m.extract()?)
}

#[augur::staged]
fn recursion(p: &Params) -> Result<Staged> {
    let ex = recursion_extracted()?;
    let opts = CodegenOptions::default().with_line_markers(p.lines);
    let names: Vec<&str> = ex.functions().map(|f| f.name.as_str()).collect();
    let function = names.join(", ");
    let mut explain = String::new();
    let mut stats = String::new();
    for (name, st, why) in ex.reports() {
        explain.push_str(&format!("{name}:\n{why}\n"));
        stats.push_str(&format!("\n  {name}: {st}"));
    }
    let code = move |t: Target| -> Result<String> {
        Ok(match t {
            Target::C => ex.c_code_with(&opts),
            Target::Cuda => ex.cuda_code_with("", &opts)?,
            Target::CudaSim => ex.simulated()?.c_code_with(&opts),
        })
    };
    Ok(Staged {
        function,
        code: Box::new(code),
        explain,
        stats,
    })
}

/// A 2-D vector: two floats.
#[derive(Clone, Copy, Debug, PartialEq, augur::Staged)]
#[repr(C)]
pub struct Vec2 {
    /// Horizontal.
    pub x: f32,
    /// Vertical.
    pub y: f32,
}

/// A particle: where it is and where it goes.
#[derive(Clone, Copy, Debug, PartialEq, augur::Staged)]
#[repr(C)]
pub struct Particle {
    /// Position.
    pub pos: Vec2,
    /// Velocity.
    pub vel: Vec2,
}

/// The particles example's function: `step(ps, n)` moves each of `n`
/// particles by its velocity over a first-stage time step, under gravity,
/// bouncing off the floor at `y = 0`.
#[augur::staged]
pub fn particles_extracted() -> Result<Extracted<unsafe extern "C" fn(*mut Particle, i32)>> {
    const DT: f32 = 0.01;
    const GRAVITY: f32 = -9.81;
    Ok(
        Builder::new().extract("step", |ps: Dyn<*mut Particle>, n: Dyn<i32>| {
            let i = Dyn::named("i", 0);
            while i.lt(n).is_true() {
                let p = ps.at(i);
                let (pos, vel) = (p.pos(), p.vel());
                vel.y().set(vel.y() + GRAVITY * DT);
                pos.x().set(pos.x() + vel.x() * DT);
                pos.y().set(pos.y() + vel.y() * DT);
                if pos.y().lt(0.0f32).is_true() {
                    pos.y().set(-pos.y());
                    vel.y().set(-vel.y() * 0.9f32);
                }
                i.set(i + 1);
            }
        })?,
    )
}

#[augur::staged]
fn particles(p: &Params) -> Result<Staged> {
    Ok(core(particles_extracted()?, p.lines))
}

#[augur::staged]
fn einsum(kind: Kind, p: &Params) -> Result<Staged> {
    let b = Benchmark::paper(
        kind,
        p.size.unwrap_or(256),
        p.movement.unwrap_or(Movement::Prophecy),
    );
    let cpu = match p.schedule.unwrap_or(Schedule::Auto) {
        Schedule::Naive => Benchmark { gpu: false, ..b },
        schedule => Benchmark {
            schedule,
            ..Benchmark::fast(kind, b.sizes.0)
        },
    };
    let cpu = cpu.extract()?;
    Ok(staged(b.extract()?, cpu, p.lines, EINSUM_RUNTIME))
}

#[augur::staged]
fn matmul(p: &Params) -> Result<Staged> {
    einsum(Kind::MatMul, p)
}

#[augur::staged]
fn matvec(p: &Params) -> Result<Staged> {
    einsum(Kind::MatVec, p)
}

#[augur::staged]
fn conv_relu(p: &Params) -> Result<Staged> {
    let ex = crate::programs::nn::conv_relu(p.size.unwrap_or(1024), 3, true)?;
    Ok(core(ex, p.lines))
}

#[augur::staged]
fn nn_benchmark(p: &Params) -> Result<Staged> {
    let ex = crate::programs::nn::paper_benchmark(&Builder::new(), p.size.unwrap_or(1024), 3)?;
    Ok(core(ex, p.lines))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[augur::staged]
    fn unknown_examples_are_named_with_the_alternatives() {
        let e = find("powr").err().unwrap().to_string();
        assert!(e.contains("'powr'") && e.contains("power, collatz"), "{e}");
    }
}
