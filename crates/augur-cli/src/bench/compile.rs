//! The second stage's backends side by side, in one run: how long it takes
//! to get from an [`Extracted`] function to something callable (`cc -O2`
//! and `dlopen`, the Cranelift JIT, the interpreter), and how fast what
//! each gives runs (conv/ReLU and matmul).
//!
//! Compile times are the minimum over repetitions with the C compiler's
//! cache off (a fresh cache directory each time, removed after); they
//! include writing the C (or lowering the IR) and, for C, compiling the
//! runtime the program links. "Interpreter start" is making an
//! interpreter ready to call the function (registering the runtime's
//! externs where it has one). Run times are the minimum over repetitions;
//! every backend's output is compared element by element with the C
//! compiler's (or, without one, with the interpreter's).
//!
//! Without a C compiler the C columns say so and the rest still runs.
//!
//! ## Recorded (2-core x86-64, gcc 12, one run)
//!
//! | program | statements | cc -O2 + load (ms) | JIT (ms) | interpreter start (µs) | cc / JIT |
//! |---|---:|---:|---:|---:|---:|
//! | matmul_prophecy_256x256x256 | 37 | 164.9 | 0.90 | 1.52 | 184 |
//! | matvec_prophecy_256x256x256 | 34 | 165.0 | 0.80 | 1.50 | 206 |
//! | conv/ReLU fused 102400 × 9 | 19 | 114.6 | 1.37 | 0.07 | 84 |
//! | nn listing benchmark | 37 | 114.6 | 1.79 | 0.41 | 64 |
//! | straight-line, 2048 statements | 2,050 | 717.6 | 12.18 | 0.06 | 59 |
//!
//! | program | cc -O2 (µs) | cc -O2 -fno-tree-vectorize (µs) | JIT (µs) | interpreter (µs) | JIT / cc |
//! |---|---:|---:|---:|---:|---:|
//! | conv/ReLU fused 102400 × 9 | 85 | 286 | 139 | 158,621 | 1.63 |
//! | einsum matmul 128 × 128 (CPU) | 2,665 | 2,592 | 3,168 | 1,007,580 | 1.19 |
//!
//! The JIT is 59 to 206 times faster to a callable function than `cc`.
//! Its code is within 1.2 times gcc's on matmul, whose inner loop is a
//! float reduction that neither vectorizes, and 1.6 times on conv/ReLU,
//! whose loop both vectorize (the JIT's `exec::jit` vector loops; without
//! them the JIT took 458 to 777 µs there, 5.5 to 7 times gcc's).

use super::{ms, time, us, Ctx, Outcome};
use crate::programs::einsum::{Benchmark, Kind};
use crate::programs::nn::{conv_relu, paper_benchmark};
use crate::report::{Cell, Table};
use crate::Result;
use augur::exec::{compile::compiler_found, Backend, CompileOptions, Interpreter};
use augur::ir::{Block, Function};
use augur::{Builder, Dyn, Extracted};
use augur_einsum::{Movement, SimInterpreter};
use std::time::Duration;

/// Statements of `f`, nested ones included.
#[augur::staged]
fn statements(f: &Function) -> usize {
    #[augur::staged]
    fn count(b: &Block) -> usize {
        b.iter()
            .map(|s| 1 + s.kind.blocks().map(count).sum::<usize>())
            .sum()
    }
    count(&f.body)
}

/// A fresh, empty cache directory (removed when dropped), so that every
/// C compile runs the compiler.
pub(super) struct FreshCache(pub(super) std::path::PathBuf);

impl FreshCache {
    #[augur::staged]
    pub(super) fn new(i: usize) -> FreshCache {
        let dir =
            std::env::temp_dir().join(format!("augur-bench-compile-{}-{i}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        FreshCache(dir)
    }
}

impl Drop for FreshCache {
    #[augur::staged]
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The minimum time of `reps` compiles of `ex` with `opts` (the cache off
/// for C).
#[augur::staged]
fn compile_time<S: Copy>(
    ex: &Extracted<S>,
    opts: &CompileOptions,
    reps: usize,
) -> Result<Duration> {
    let mut n = 0;
    let (best, _, _) = time(reps, || {
        n += 1;
        let cache = FreshCache::new(n);
        let opts = CompileOptions {
            cache_dir: Some(cache.0.clone()),
            ..opts.clone()
        };
        let f = ex.compile_with(&opts)?;
        Ok(std::hint::black_box(f.get()))
    })?;
    Ok(best)
}

/// The runtime of the listing's whole benchmark, in C and in Rust.
mod listing_runtime {
    pub const C: &str = "#include <stdint.h>\n\
        void start_time(void) {}\nvoid end_time(void) {}\n\
        void consume_tensor(float *p) { (void)p; }\n";

    extern "C" fn nothing() {}

    extern "C" fn consume(_p: *mut f32) {}

    /// `opts` with the runtime: its C, and its Rust functions for the JIT.
    #[augur::staged]
    pub fn with(opts: augur::exec::CompileOptions) -> augur::exec::CompileOptions {
        let opts = augur::exec::CompileOptions {
            extra_c: vec![C.to_string()],
            ..opts
        };
        opts.with_symbol("start_time", nothing as *const ())
            .with_symbol("end_time", nothing as *const ())
            .with_symbol("consume_tensor", consume as *const ())
    }

    /// An interpreter that runs it.
    #[augur::staged]
    pub fn interpreter() -> augur::exec::Interpreter {
        let mut it = augur::exec::Interpreter::new();
        for name in ["start_time", "end_time", "consume_tensor"] {
            it.register(name, |_, _| Ok(augur::Value::Void));
        }
        it
    }
}

/// A straight-line function of `n` statements: a plain Rust loop that
/// stages arithmetic on one variable, shifts and xors among it.
#[augur::staged]
pub fn long_function(n: usize) -> Result<Extracted<unsafe extern "C" fn(i64) -> i64>> {
    Ok(
        Builder::new().extract(&format!("straight_{n}"), move |x: Dyn<i64>| {
            let acc = Dyn::new(x);
            for i in 0..n as i64 {
                if i % 5 == 0 {
                    acc.set(acc ^ (acc >> 7i64));
                } else {
                    acc.set(acc * 3i64 + i);
                }
            }
            acc
        })?,
    )
}

/// The compile-time table as it fills: its repetitions and whether there
/// is a C compiler.
struct CompileRows {
    t: Table,
    reps: usize,
    cc: bool,
}

impl CompileRows {
    /// One row: the program's name and statements, then cc, JIT and
    /// interpreter start (`interpreter` makes one ready to call it).
    #[augur::staged]
    fn add<S: Copy>(
        &mut self,
        name: &str,
        ex: &Extracted<S>,
        opts: &CompileOptions,
        interpreter: fn(),
    ) -> Result<()> {
        let reps = self.reps;
        let jit = compile_time(ex, &opts.clone().with_backend(Backend::Jit), reps)?;
        let start = time(reps * 10, || {
            interpreter();
            Ok(())
        })?
        .0;
        let c = if self.cc {
            Some(compile_time(
                ex,
                &opts.clone().with_backend(Backend::C),
                reps,
            )?)
        } else {
            None
        };
        let ratio = c.map(|c| c.as_secs_f64() / jit.as_secs_f64());
        self.t.push(vec![
            name.into(),
            statements(ex.ir()).into(),
            c.map_or_else(skipped, |c| Cell::float(ms(c), 1)),
            Cell::float(ms(jit), 2),
            Cell::float(us(start), 2),
            ratio.map_or_else(skipped, |r| Cell::float(r, 0)),
        ]);
        Ok(())
    }
}

#[augur::staged]
fn plain_interpreter() {
    std::hint::black_box(Interpreter::new());
}

#[augur::staged]
fn einsum_interpreter() {
    std::hint::black_box(SimInterpreter::new());
}

#[augur::staged]
fn listing_interpreter() {
    std::hint::black_box(listing_runtime::interpreter());
}

#[augur::staged]
fn skipped() -> Cell {
    "skipped: no C compiler".into()
}

/// The compile-time table.
#[augur::staged]
fn compile_table(ctx: &Ctx, cc: bool) -> Result<Table> {
    let reps = ctx.reps(5);
    let t = Table::new(
        "compile-time",
        &format!(
            "From an Extracted function to a callable one, ms (minimum of {reps}; \
             C cache off)"
        ),
        &[
            "program",
            "statements",
            "cc -O2 + load (ms)",
            "JIT (ms)",
            "interpreter start (µs)",
            "cc / JIT",
        ],
    );
    let mut rows = CompileRows { t, reps, cc };
    let size = if ctx.quick { 32 } else { 256 };
    let bar = ctx.bar(5, "compile");
    let plain = CompileOptions::default();
    let ein = augur_einsum::options(false);
    for kind in [Kind::MatMul, Kind::MatVec] {
        let b = Benchmark::paper(kind, size, Movement::Prophecy);
        bar.set_message(b.function_name());
        let ex = b.extract()?.simulated()?;
        rows.add(&b.function_name(), &ex, &ein, einsum_interpreter)?;
        bar.inc(1);
    }
    let conv = conv_relu(102_400, 9, true)?;
    rows.add(
        "conv/ReLU fused 102400 × 9",
        &conv,
        &plain,
        plain_interpreter,
    )?;
    bar.inc(1);
    let listing = paper_benchmark(&Builder::new(), 1024, 3)?;
    let with_runtime = listing_runtime::with(plain.clone());
    rows.add(
        "nn listing benchmark",
        &listing,
        &with_runtime,
        listing_interpreter,
    )?;
    bar.inc(1);
    let long = long_function(2048)?;
    rows.add(
        "straight-line, 2048 statements",
        &long,
        &plain,
        plain_interpreter,
    )?;
    bar.inc(1);
    let mut t = rows.t;
    bar.finish_and_clear();
    t.note("target: the JIT at least 20 times faster than cc -O2 + load");
    t.note("cc's time includes the einsum runtime's C (a second file); the JIT's runtime is Rust");
    Ok(t)
}

/// Minimum run time over `reps` calls of `run`, and its last output.
#[augur::staged]
fn run_time<T>(reps: usize, run: impl FnMut() -> Result<T>) -> Result<(Duration, T)> {
    let (best, _, out) = time(reps, run)?;
    Ok((best, out))
}

/// One backend's run: its minimum time and its output.
type Run = (Duration, Vec<f32>);

/// A run-time row: C and C without vectorization (if there is a
/// compiler), JIT, interpreter; outputs compared.
#[augur::staged]
fn speed_row(
    t: &mut Table,
    name: &str,
    c: Option<(Run, Run)>,
    jit: Run,
    interp: Run,
) -> Result<()> {
    let reference = c.as_ref().map_or(&interp.1, |c| &c.0 .1);
    let scalar_c = c.as_ref().map(|c| &c.1 .1);
    if &jit.1 != reference || &interp.1 != reference || scalar_c.is_some_and(|s| s != reference) {
        return Err(format!("{name}: the backends' outputs differ").into());
    }
    let j = us(jit.0);
    let c = c.map(|(v, s)| (v.0, s.0));
    t.push(vec![
        name.into(),
        c.as_ref().map_or_else(skipped, |c| Cell::float(us(c.0), 0)),
        c.as_ref().map_or_else(skipped, |c| Cell::float(us(c.1), 0)),
        Cell::float(j, 0),
        Cell::float(us(interp.0), 0),
        c.as_ref()
            .map_or_else(skipped, |c| Cell::float(j / us(c.0), 2)),
        Cell::float(us(interp.0) / j, 0),
    ]);
    Ok(())
}

extern "C" {
    #[link_name = "free"]
    fn libc_free(p: *mut f32);
}

/// The C backend's options, with gcc's vectorizer off when `scalar`.
#[augur::staged]
fn c_options(base: CompileOptions, scalar: bool) -> CompileOptions {
    let mut opts = base.with_backend(Backend::C);
    if scalar {
        opts.flags.push("-fno-tree-vectorize".into());
    }
    opts
}

/// `native` run with C (vectorized and not) when `cc`, and with the JIT,
/// each from the options `base` makes.
#[augur::staged]
fn native_runs(
    base: impl Fn() -> CompileOptions,
    cc: bool,
    native: impl Fn(CompileOptions) -> Result<Run>,
) -> Result<(Option<(Run, Run)>, Run)> {
    let c = if cc {
        let vectorized = native(c_options(base(), false))?;
        Some((vectorized, native(c_options(base(), true))?))
    } else {
        None
    };
    Ok((c, native(base().with_backend(Backend::Jit))?))
}

/// Conv/ReLU, fused, on `n` inputs and `k` taps: each backend's time.
#[augur::staged]
fn conv_speed(t: &mut Table, n: usize, k: usize, reps: usize, cc: bool) -> Result<()> {
    let ex = conv_relu(n, k, true)?;
    let x: Vec<f32> = (0..n).map(|i| ((i * 7 + 3) % 11) as f32 - 5.0).collect();
    let w: Vec<f32> = (0..k).map(|j| 0.75 - 0.5 * j as f32 / k as f32).collect();
    let native = |opts: CompileOptions| -> Result<Run> {
        let f = ex.compile_with(&opts)?;
        let (mut x, mut w) = (x.clone(), w.clone());
        run_time(reps, || {
            // SAFETY: x holds n floats and w k, as staged; the output is a
            // malloc'ed buffer of n floats, read once and freed once.
            unsafe {
                let p = (f.get())(x.as_mut_ptr(), w.as_mut_ptr());
                if p.is_null() {
                    return Err("conv/ReLU: malloc failed".into());
                }
                let out = std::slice::from_raw_parts(p, n).to_vec();
                libc_free(p);
                Ok(out)
            }
        })
    };
    let (c, jit) = native_runs(CompileOptions::default, cc, native)?;
    let interp = run_time(1, || {
        let mut it = Interpreter::new();
        let args = [
            it.memory_mut().alloc_slice(&x),
            it.memory_mut().alloc_slice(&w),
        ];
        let out = ex.interpret_in(&mut it, &args)?;
        Ok(it.memory().read_slice::<f32>(out, n)?)
    })?;
    speed_row(t, &format!("conv/ReLU fused {n} × {k}"), c, jit, interp)
}

/// The einsum matmul (CPU build) of size `s`: each backend's time.
#[augur::staged]
fn matmul_speed(t: &mut Table, s: usize, reps: usize, cc: bool) -> Result<()> {
    // The paper's loops, on the CPU: the same program for every backend.
    let b = Benchmark {
        gpu: false,
        ..Benchmark::paper(Kind::MatMul, s, Movement::Prophecy)
    };
    let ex = b.extract()?;
    let x: Vec<f32> = (0..s * s)
        .map(|v| ((v * 7 + 3) % 11) as f32 - 5.0)
        .collect();
    let y: Vec<f32> = (0..s * s)
        .map(|v| ((v * 5 + 1) % 13) as f32 * 0.5)
        .collect();
    let native = |opts: CompileOptions| -> Result<Run> {
        let p = augur_einsum::Program::compile(&ex, &opts)?;
        let (mut x, mut y, mut z) = (x.clone(), y.clone(), vec![0f32; s * s]);
        run_time(reps, || {
            // SAFETY: the buffers hold s × s floats each, as staged.
            unsafe { (p.get())(x.as_mut_ptr(), y.as_mut_ptr(), z.as_mut_ptr(), 1) };
            Ok(z.clone())
        })
    };
    let (c, jit) = native_runs(|| einsum_o2(augur_einsum::options(false)), cc, native)?;
    let sim = ex.simulated()?;
    let interp = run_time(1, || {
        let mut it = SimInterpreter::new();
        let mem = it.interp.memory_mut();
        let args = [
            mem.alloc_slice(&x),
            mem.alloc_slice(&y),
            mem.alloc_slice(&vec![0f32; s * s]),
            1i32.into(),
        ];
        sim.interpret_in(&mut it.interp, &args)?;
        Ok(it.interp.memory().read_slice::<f32>(args[2], s * s)?)
    })?;
    if jit.1 != b.reference(&x, &y, 1) {
        return Err("matmul: the JIT's product is wrong".into());
    }
    speed_row(t, &format!("einsum matmul {s} × {s} (CPU)"), c, jit, interp)
}

/// einsum's options at this table's `-O2`: without the `-O3
/// -march=native -ffp-contract=fast` its blocked schedules ask for.
#[augur::staged]
fn einsum_o2(mut opts: CompileOptions) -> CompileOptions {
    opts.flags
        .retain(|f| !matches!(f.as_str(), "-O3" | "-march=native" | "-ffp-contract=fast"));
    opts
}

/// The run-time table.
#[augur::staged]
fn speed_table(ctx: &Ctx, cc: bool) -> Result<Table> {
    let reps = ctx.reps(10);
    let mut t = Table::new(
        "code-speed",
        &format!("The generated code's run time, µs (minimum of {reps}; interpreter: one run)"),
        &[
            "program",
            "cc -O2 (µs)",
            "cc -O2 -fno-tree-vectorize (µs)",
            "JIT (µs)",
            "interpreter (µs)",
            "JIT / cc",
            "interpreter / JIT",
        ],
    );
    let bar = ctx.bar(2, "code speed");
    let (n, s) = if ctx.quick {
        (4096, 24)
    } else {
        (102_400, 128)
    };
    conv_speed(&mut t, n, 9, reps, cc)?;
    bar.inc(1);
    matmul_speed(&mut t, s, reps, cc)?;
    bar.inc(1);
    bar.finish_and_clear();
    t.note("target: the JIT's code within 2 times cc -O2's; outputs compared element by element");
    t.note(
        "the second C column is gcc -O2 without its vectorizer; the JIT vectorizes \
         element-wise loops (conv/ReLU), and neither vectorizes matmul's float reduction",
    );
    Ok(t)
}

/// Runs the experiment.
#[augur::staged]
pub fn run(ctx: &Ctx) -> Result<Outcome> {
    let cc = compiler_found(&CompileOptions::default().resolved_cc());
    let mut tables = vec![compile_table(ctx, cc)?, speed_table(ctx, cc)?];
    if !cc {
        for t in &mut tables {
            t.note("no C compiler was found: its columns were skipped");
        }
    }
    Ok(Outcome {
        tables,
        plots: Vec::new(),
    })
}
