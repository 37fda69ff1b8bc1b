//! The einsum DSL's CPU products beside OpenBLAS, in one run: `z = x y`
//! (matmul, `cblas_sgemm`) and `z = x y` for a vector `y` (matvec,
//! `cblas_sgemv`) at 256…2048, on the same data, with the same number of
//! threads (OpenMP in the generated code, OpenBLAS's own), minimum of
//! several calls; the paper's loops (OpenMP too) beside them up to 1024.
//!
//! OpenBLAS is loaded at run time (`libopenblas.so.0`), so building and
//! testing need none; without it the table shows the generated code alone
//! and says how to install it.
//!
//! **Recorded** (`OPENBLAS_CORETYPE=SkylakeX augur bench einsum --tune`,
//! release build, a shared 2-core AMD EPYC with AVX-512, Debian's OpenBLAS
//! 0.3.21 running its AVX-512 kernels, gcc 12.2; ms per call on 2 threads,
//! minimum of several, one run):
//!
//! | program | size | paper loops | augur (auto) | OpenBLAS | augur / OpenBLAS |
//! |---|---:|---:|---:|---:|---:|
//! | matmul | 256 | 6.37 | 0.079 | 0.080 | 0.99 |
//! | matmul | 1024 | 1,661 | 4.37 | 4.30 | 1.02 |
//! | matmul | 2048 | - | 38.6 | 36.1 | 1.07 |
//! | matvec | 1024 | 0.32 | 0.021 | 0.023 | 0.90 |
//!
//! (augur's 1024 product runs at 492 GFLOP/s there.) OpenBLAS 0.3.21 does
//! not know that CPU and falls back to its AVX2 kernels (`Haswell`), which
//! take 8.1 ms at 1024 and 64 at 2048; [`prefer_avx512`] asks for its
//! AVX-512 ones unless `OPENBLAS_CORETYPE` is set, and the table's note
//! names the kernels that ran. With register tiles for 32-byte vectors
//! (`Config::vector_bytes` 32, the AVX2 default) the same run's augur takes
//! 6.1 ms at 1024 and 50 to 54 at 2048.

use super::{ms, Ctx};
use crate::programs::einsum::{Kind, Product, ProductFn};
use crate::report::{Cell, Plot, Table};
use crate::Result;
use augur_einsum::{compile_cpu, tune, Schedule};
use std::ffi::{c_char, CStr};
use std::time::Instant;

/// How to install OpenBLAS, for messages.
pub const INSTALL: &str = "OpenBLAS is not installed (no libopenblas.so.0): install it with \
     `sudo apt-get install libopenblas-dev` (Debian, Ubuntu) or `sudo dnf install \
     openblas-devel` (Fedora), then run `augur bench einsum` again";

/// `cblas_sgemm`'s type (row-major is 101, no transpose 111).
type Sgemm = unsafe extern "C" fn(
    i32,
    i32,
    i32,
    i32,
    i32,
    i32,
    f32,
    *const f32,
    i32,
    *const f32,
    i32,
    f32,
    *mut f32,
    i32,
);
/// `cblas_sgemv`'s type.
type Sgemv = unsafe extern "C" fn(
    i32,
    i32,
    i32,
    i32,
    f32,
    *const f32,
    i32,
    *const f32,
    i32,
    f32,
    *mut f32,
    i32,
);

const ROW_MAJOR: i32 = 101;
const NO_TRANS: i32 = 111;

/// Asks OpenBLAS for its AVX-512 kernels where the CPU has AVX-512 and
/// the user did not choose (`OPENBLAS_CORETYPE` unset): OpenBLAS builds
/// with run-time dispatch fall back to their AVX2 (`Haswell`) kernels on
/// CPUs newer than they know (Debian's 0.3.21 on AMD Zen 5), which would
/// make it look slower than it can be. Call it first in `main`, while the
/// process has one thread (it sets an environment variable).
#[augur::staged]
pub fn prefer_avx512() {
    let chosen = std::env::var_os("OPENBLAS_CORETYPE").is_some();
    if augur_einsum::native_vector_bytes() >= 64 && !chosen {
        std::env::set_var("OPENBLAS_CORETYPE", "SkylakeX");
    }
}

/// OpenBLAS, loaded.
pub struct OpenBlas {
    /// The kernels it runs (`openblas_get_corename`: `Haswell`,
    /// `SkylakeX`, ...).
    pub core: String,
    sgemm: Sgemm,
    sgemv: Sgemv,
    /// Kept loaded while the function pointers live.
    _lib: libloading::Library,
}

impl OpenBlas {
    /// Loads OpenBLAS and sets its thread count; `None` when it is not
    /// installed.
    #[augur::staged]
    pub fn load(threads: usize) -> Option<OpenBlas> {
        let lib = ["libopenblas.so.0", "libopenblas.so"]
            .iter()
            .find_map(|name| {
                // SAFETY: loading OpenBLAS runs its initialisers, which only
                // set up its thread pool.
                unsafe { libloading::Library::new(name) }.ok()
            })?;
        // SAFETY: the symbols have these C types in every OpenBLAS, and
        // `openblas_get_corename` returns a static NUL-terminated string.
        unsafe {
            let sgemm = *lib.get::<Sgemm>(b"cblas_sgemm\0").ok()?;
            let sgemv = *lib.get::<Sgemv>(b"cblas_sgemv\0").ok()?;
            let set: libloading::Symbol<unsafe extern "C" fn(i32)> =
                lib.get(b"openblas_set_num_threads\0").ok()?;
            set(threads as i32);
            let name: Option<libloading::Symbol<unsafe extern "C" fn() -> *const c_char>> =
                lib.get(b"openblas_get_corename\0").ok();
            let core = name.map_or("unknown".into(), |f| {
                CStr::from_ptr(f()).to_string_lossy().into_owned()
            });
            Some(OpenBlas {
                core,
                sgemm,
                sgemv,
                _lib: lib,
            })
        }
    }

    /// `z = x y` for n×n `x` and `y` n×n (matmul) or n (matvec).
    #[augur::staged]
    pub fn product(&self, kind: Kind, n: usize, x: &[f32], y: &[f32], z: &mut [f32]) {
        let [xs, ys, zs] = kind.shapes((n, n, n));
        let len = |s: &[usize]| s.iter().product::<usize>();
        assert!(x.len() >= len(&xs) && y.len() >= len(&ys) && z.len() >= len(&zs));
        let n = n as i32;
        // SAFETY: the buffers hold the shapes' element counts (checked).
        unsafe {
            match kind {
                Kind::MatMul => (self.sgemm)(
                    ROW_MAJOR,
                    NO_TRANS,
                    NO_TRANS,
                    n,
                    n,
                    n,
                    1.0,
                    x.as_ptr(),
                    n,
                    y.as_ptr(),
                    n,
                    0.0,
                    z.as_mut_ptr(),
                    n,
                ),
                Kind::MatVec => (self.sgemv)(
                    ROW_MAJOR,
                    NO_TRANS,
                    n,
                    n,
                    1.0,
                    x.as_ptr(),
                    n,
                    y.as_ptr(),
                    1,
                    0.0,
                    z.as_mut_ptr(),
                    1,
                ),
            }
        }
    }
}

/// The thread count both sides use: `OMP_NUM_THREADS` when set (libgomp
/// reads it), all cores otherwise ([`augur_einsum::default_threads`]).
pub fn threads() -> usize {
    augur_einsum::default_threads()
}

/// Inputs of small integers: every sum of products is exact in `f32`
/// whatever the order, so all versions must agree to the bit.
#[augur::staged]
fn inputs(kind: Kind, n: usize) -> [Vec<f32>; 3] {
    let [xs, ys, zs] = kind.shapes((n, n, n));
    let fill = |s: &[usize], m: usize, off: f32| {
        (0..s.iter().product::<usize>())
            .map(|k| (k % m) as f32 - off)
            .collect()
    };
    [
        fill(&xs, 7, 3.0),
        fill(&ys, 5, 2.0),
        vec![0.0; zs.iter().product()],
    ]
}

/// Minimum milliseconds of `reps` calls of `f` (after one warm-up).
#[augur::staged]
fn min_ms(reps: usize, mut f: impl FnMut()) -> f64 {
    f();
    (0..reps.max(1))
        .map(|_| {
            let t = Instant::now();
            f();
            ms(t.elapsed())
        })
        .fold(f64::MAX, f64::min)
}

/// Milliseconds per call of the generated `p` (result checked against
/// `want` when given), and its output.
#[augur::staged]
fn time_ours(p: &Product, reps: usize, want: Option<&[f32]>) -> Result<(f64, Vec<f32>)> {
    let prog = compile_cpu(&p.extract()?, p.openmp)?;
    let [mut x, mut y, mut z] = inputs(p.kind, p.size);
    let f: ProductFn = prog.get();
    // SAFETY: the buffers hold the element counts of the shapes.
    let t = min_ms(reps, || unsafe {
        f(x.as_mut_ptr(), y.as_mut_ptr(), z.as_mut_ptr())
    });
    if let Some(w) = want {
        if let Some(e) = z.iter().zip(w).position(|(a, b)| a != b) {
            let what = format!("{} {} ({})", p.kind.name(), p.size, p.schedule);
            return Err(format!("{what}: element {e} is {}, OpenBLAS says {}", z[e], w[e]).into());
        }
    }
    Ok((t, z))
}

/// Tunes `p`'s schedule (cached per program and machine) and times the
/// winner (checked against `want`): its schedule and milliseconds.
#[augur::staged]
fn tuned(p: &Product, reps: usize, want: &[f32]) -> Result<(Schedule, f64)> {
    let [mut x, mut y, mut z] = inputs(p.kind, p.size);
    let key = format!("augur-bench-{}-{}-omp{}", p.kind.name(), p.size, p.openmp);
    let build = |schedule| compile_cpu(&Product { schedule, ..*p }.extract()?, p.openmp);
    let tuned = tune(&key, &Schedule::candidates::<f32>(), reps, build, |prog| {
        let f: ProductFn = prog.get();
        // SAFETY: the buffers hold the element counts of the shapes.
        unsafe { f(x.as_mut_ptr(), y.as_mut_ptr(), z.as_mut_ptr()) };
        z.clone()
    })?;
    let best = Product {
        schedule: tuned.best,
        ..*p
    };
    Ok((tuned.best, time_ours(&best, reps, Some(want))?.0))
}

/// The side-by-side table and its plot.
pub fn table(ctx: &Ctx) -> Result<(Table, Plot)> {
    let threads = threads();
    let blas = OpenBlas::load(threads);
    let sizes: &[usize] = if ctx.quick {
        &[64, 128]
    } else {
        &[256, 512, 1024, 2048]
    };
    let mut columns = vec![
        "program",
        "size",
        "paper loops",
        "augur (auto schedule)",
        "OpenBLAS",
        "augur / OpenBLAS",
        "augur GFLOP/s",
    ];
    if ctx.tune {
        columns.extend(["augur (tuned)", "tuned / OpenBLAS", "tuned schedule"]);
    }
    let mut t = Table::new(
        "cpu-vs-openblas",
        &format!("CPU products, ms per call on {threads} threads: generated code beside OpenBLAS"),
        &columns,
    );
    let bar = ctx.bar(sizes.len() * 2, "openblas");
    let mut series: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
    for kind in [Kind::MatMul, Kind::MatVec] {
        let mut ratio = Vec::new();
        for &n in sizes {
            bar.set_message(format!("{} {n}", kind.name()));
            let reps = match (kind, n) {
                (Kind::MatMul, 2048) => ctx.reps(3),
                (Kind::MatMul, _) => ctx.reps(5),
                (Kind::MatVec, _) => ctx.reps(50),
            };
            let reference = blas.as_ref().map(|b| {
                let [x, y, mut z] = inputs(kind, n);
                let t = min_ms(reps, || b.product(kind, n, &x, &y, &mut z));
                (t, z)
            });
            let want = reference.as_ref().map(|r| r.1.as_slice());
            let fast = Product {
                kind,
                size: n,
                schedule: Schedule::Auto,
                openmp: true,
            };
            let (ours, got) = time_ours(&fast, reps, want)?;
            // The paper's loops: a 2048 matmul takes seconds a call.
            let paper = if kind == Kind::MatMul && n > 1024 {
                Cell::Text("-".into())
            } else {
                let naive = Product {
                    schedule: Schedule::naive(),
                    ..fast
                };
                Cell::float(time_ours(&naive, reps.min(3), Some(&got))?.0, 2)
            };
            let flops = 2.0 * (n * n) as f64 * if kind == Kind::MatMul { n as f64 } else { 1.0 };
            let (blas_cell, ratio_cell) = match &reference {
                Some((b, _)) => {
                    ratio.push((n as f64, ours / b));
                    (Cell::float(*b, 3), Cell::float(ours / b, 2))
                }
                None => (Cell::Text("not installed".into()), Cell::Text("-".into())),
            };
            let mut row = vec![
                kind.name().into(),
                n.into(),
                paper,
                Cell::float(ours, 3),
                blas_cell,
                ratio_cell,
                Cell::float(flops / ours / 1e6, 1),
            ];
            if ctx.tune {
                let (best, tuned) = tuned(&fast, reps, &got)?;
                row.push(Cell::float(tuned, 3));
                row.push(match &reference {
                    Some((b, _)) => Cell::float(tuned / b, 2),
                    None => Cell::Text("-".into()),
                });
                row.push(Cell::Text(best.to_string()));
            }
            t.push(row);
            bar.inc(1);
        }
        series.push((kind.name().to_string(), ratio));
    }
    bar.finish_and_clear();
    t.note(format!(
        "min of several calls each; {threads} threads for both (OMP_NUM_THREADS and \
         openblas_set_num_threads); inputs are small integers, so every result is \
         exact and checked equal to OpenBLAS's (and the paper loops' to ours)"
    ));
    match &blas {
        Some(b) => t.note(format!(
            "OpenBLAS runs its {} kernels (OPENBLAS_CORETYPE chooses; on a CPU with \
             AVX-512 augur asks for SkylakeX unless it is set)",
            b.core
        )),
        None => t.note(INSTALL),
    }
    let plot = series.into_iter().fold(
        Plot::lines(
            "cpu-vs-openblas",
            "Generated code's time over OpenBLAS's (1 = as fast)",
            "size",
            "augur / OpenBLAS",
        )
        .log(true, false),
        |p, (name, pts)| p.series(&name, pts),
    );
    Ok((t, plot))
}
