//! The experiment's CUDA program: one executable that runs matmul and
//! matvec at each size under each strategy, with the paper's kernels and
//! with the default schedule's, and (built with `AUGUR_CUBLAS`) cuBLAS on
//! the same data, and prints one CSV row per run; and the reader of that
//! output.

use crate::programs::einsum::{Benchmark, Kind};
use augur::{Error, Result};
use augur_einsum::{Movement, Schedule};
use std::fmt::Write;

/// The programs of the experiment, in run order: per kind and size, each
/// strategy with the paper's kernels, then each with the default
/// schedule's.
pub fn cases(kinds: &[Kind], sizes: &[usize]) -> Vec<Benchmark> {
    let mut out = Vec::new();
    for &kind in kinds {
        for &size in sizes {
            for m in Movement::ALL {
                out.push(Benchmark::paper(kind, size, m));
            }
            for m in Movement::ALL {
                out.push(Benchmark::gpu_auto(kind, size, m));
            }
        }
    }
    out
}

/// What a row's `schedule` column says of `b`.
#[augur::staged]
fn schedule_name(b: &Benchmark) -> &'static str {
    if b.schedule == Schedule::naive() {
        "paper"
    } else {
        "auto"
    }
}

/// The CUDA program: every case's function and a `main` that runs each with
/// `iterations` turns and prints
/// `kind,size,movement,min_us,total_us,to_device,to_host,device_bytes,max_err,schedule`
/// (`max_err` against a host reference for sizes up to 256, else -1;
/// `schedule` is `paper` or `auto`). Built with `-DAUGUR_CUBLAS` (and
/// cuBLAS linked), it then runs `cublasSgemm` or `cublasSgemv` on each
/// kind and size the same way: copies in, the call, the copy out, timed
/// together, `iterations` turns; its rows say `cublas` as movement and
/// schedule.
#[augur::staged]
pub fn cuda_program(cases: &[Benchmark], iterations: u32) -> Result<String> {
    if cases.is_empty() {
        return Err(Error::Misuse {
            message: "the GPU experiment needs at least one case".into(),
            location: None,
        });
    }
    let extracted = cases
        .iter()
        .map(|b| b.extract())
        .collect::<Result<Vec<_>>>()?;
    let funcs: Vec<&augur::ir::Function> = extracted.iter().map(|e| e.ir()).collect();
    let mut src = augur::codegen::cuda::write_cuda_module(&funcs, &augur_einsum::cuda_prelude())?;
    src.push_str(HARNESS_HEAD);
    let mut shapes: Vec<(Kind, usize)> = Vec::new();
    for b in cases {
        let [xs, ys, zs] = b.kind.shapes(b.sizes);
        let n = |s: &[usize]| s.iter().product::<usize>();
        let _ = writeln!(
            src,
            "  {{\"{}\", {}, \"{}\", \"{}\", {}, {}, {}, {}, {}}},",
            b.kind.name(),
            b.sizes.0,
            b.movement.name(),
            schedule_name(b),
            b.function_name(),
            n(&xs),
            n(&ys),
            n(&zs),
            i32::from(b.kind == Kind::MatMul)
        );
        if !shapes.contains(&(b.kind, b.sizes.0)) {
            shapes.push((b.kind, b.sizes.0));
        }
    }
    src.push_str("};\n\nstatic const augur_shape augur_shapes[] = {\n");
    for (kind, size) in shapes {
        let matmul = i32::from(kind == Kind::MatMul);
        let _ = writeln!(src, "  {{\"{}\", {size}, {matmul}}},", kind.name());
    }
    let _ = write!(
        src,
        "{}",
        HARNESS_TAIL.replace("ITERATIONS", &iterations.to_string())
    );
    Ok(src)
}

const HARNESS_HEAD: &str = r#"
#include <math.h>
#include <chrono>
#ifdef AUGUR_CUBLAS
#include <cublas_v2.h>
#endif
extern "C" void augur_ein_stats(int64_t *out);
extern "C" void augur_ein_reset(void);
typedef void (*bench_fn)(float *, float *, float *, int32_t);
struct augur_case { const char *kind; int size; const char *movement; const char *schedule; bench_fn f; long xl, yl, zl; int matmul; };
struct augur_shape { const char *kind; int size; int matmul; };
static const augur_case augur_cases[] = {
"#;

const HARNESS_TAIL: &str = r#"};

static double augur_max_err(int size, int matmul, const float *x, const float *y, const float *z) {
  if (size > 256) return -1.0;
  int m = size, n = size, o = matmul ? size : 1;
  double worst = 0.0;
  for (int r = 0; r < m; r++)
    for (int q = 0; q < o; q++) {
      double s = 0.0;
      for (int k = 0; k < n; k++) s += (double)x[r * n + k] * (double)y[k * o + q];
      double e = fabs(s - (double)z[r * o + q]);
      if (!(e <= worst)) worst = e;
    }
  return worst;
}

/* The inputs every program and cuBLAS get. */
static void augur_inputs(long xl, long yl, long zl, float **x, float **y, float **z) {
  *x = (float *)malloc(xl * sizeof(float));
  *y = (float *)malloc(yl * sizeof(float));
  *z = (float *)malloc(zl * sizeof(float));
  for (long k = 0; k < xl; k++) (*x)[k] = (float)(k % 7) * 0.25f - 0.5f;
  for (long k = 0; k < yl; k++) (*y)[k] = (float)(k % 5) * 0.5f - 1.0f;
  for (long k = 0; k < zl; k++) (*z)[k] = 0.0f;
}

#ifdef AUGUR_CUBLAS
/* cuBLAS on one shape, timed as the programs' turns are: copies in, the
   call, the copy out. Row-major z = x y is column-major z' = y' x'. */
static void augur_cublas(const augur_shape &s) {
  long n = s.size, xl = n * n, yl = s.matmul ? n * n : n, zl = s.matmul ? n * n : n;
  float *x, *y, *z, *dx, *dy, *dz;
  augur_inputs(xl, yl, zl, &x, &y, &z);
  cudaMalloc(&dx, xl * sizeof(float));
  cudaMalloc(&dy, yl * sizeof(float));
  cudaMalloc(&dz, zl * sizeof(float));
  cublasHandle_t h;
  if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) { fprintf(stderr, "cublasCreate failed\n"); exit(1); }
  const float one = 1.0f, zero = 0.0f;
  double best = 1e300, total = 0.0;
  for (int t = 0; t < ITERATIONS; t++) {
    auto t0 = std::chrono::steady_clock::now();
    cudaMemcpy(dx, x, xl * sizeof(float), cudaMemcpyHostToDevice);
    cudaMemcpy(dy, y, yl * sizeof(float), cudaMemcpyHostToDevice);
    if (s.matmul)
      cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, dy, n, dx, n, &zero, dz, n);
    else
      cublasSgemv(h, CUBLAS_OP_T, n, n, &one, dx, n, dy, 1, &zero, dz, 1);
    cudaMemcpy(z, dz, zl * sizeof(float), cudaMemcpyDeviceToHost);
    double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
    total += us;
    if (us < best) best = us;
  }
  if (cudaGetLastError() != cudaSuccess) { fprintf(stderr, "cuBLAS run failed\n"); exit(1); }
  printf("%s,%d,cublas,%.1f,%.1f,%lld,%lld,%lld,%g,cublas\n", s.kind, s.size, best, total,
         (long long)((xl + yl) * 4 * ITERATIONS), (long long)(zl * 4 * ITERATIONS),
         (long long)((xl + yl + zl) * 4), augur_max_err(s.size, s.matmul, x, y, z));
  fflush(stdout);
  cublasDestroy(h);
  cudaFree(dx); cudaFree(dy); cudaFree(dz);
  free(x); free(y); free(z);
}
#endif

int main(void) {
  cudaFree(0);
  printf("kind,size,movement,min_us,total_us,to_device,to_host,device_bytes,max_err,schedule\n");
  for (size_t i = 0; i < sizeof(augur_cases) / sizeof(augur_cases[0]); i++) {
    const augur_case &c = augur_cases[i];
    float *x, *y, *z;
    augur_inputs(c.xl, c.yl, c.zl, &x, &y, &z);
    augur_ein_reset();
    c.f(x, y, z, ITERATIONS);
    int64_t st[8];
    augur_ein_stats(st);
    printf("%s,%d,%s,%.1f,%.1f,%lld,%lld,%lld,%g,%s\n", c.kind, c.size, c.movement, st[6] / 1000.0,
           st[7] / 1000.0, (long long)st[0], (long long)st[1], (long long)st[2],
           augur_max_err(c.size, c.matmul, x, y, z), c.schedule);
    fflush(stdout);
    free(x); free(y); free(z);
  }
#ifdef AUGUR_CUBLAS
  for (size_t i = 0; i < sizeof(augur_shapes) / sizeof(augur_shapes[0]); i++) augur_cublas(augur_shapes[i]);
#endif
  return 0;
}
"#;

/// One CSV row of the program's output.
#[derive(Clone, Debug, PartialEq)]
pub struct GpuRow {
    /// `matmul` or `matvec`.
    pub kind: String,
    /// Square size.
    pub size: usize,
    /// Strategy name (`cublas` for cuBLAS's rows).
    pub movement: String,
    /// `paper` (the paper's kernels), `auto` (the default schedule's) or
    /// `cublas`.
    pub schedule: String,
    /// Shortest timed turn, µs.
    pub min_us: f64,
    /// Bytes to the device over all turns.
    pub to_device: i64,
    /// Bytes to the host over all turns.
    pub to_host: i64,
    /// Max abs error against the host reference (-1: not checked).
    pub max_err: f64,
}

/// Reads the program's output (the header and malformed lines are
/// skipped; rows of 9 fields, from before the `schedule` column, are the
/// paper's kernels).
#[augur::staged]
pub fn parse(output: &str) -> Vec<GpuRow> {
    output
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.trim().split(',').collect();
            let schedule = match f.len() {
                9 => "paper",
                10 => f[9],
                _ => return None,
            };
            Some(GpuRow {
                kind: f[0].to_string(),
                size: f[1].parse().ok()?,
                movement: f[2].to_string(),
                schedule: schedule.to_string(),
                min_us: f[3].parse().ok()?,
                to_device: f[5].parse().ok()?,
                to_host: f[6].parse().ok()?,
                max_err: f[8].parse().ok()?,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use augur::exec::cuda::Nvcc;

    /// The program runs each size's three strategies with the paper's
    /// kernels and with the default schedule's, knows each shape once for
    /// cuBLAS, and builds with nvcc (without cuBLAS: its rows need the
    /// wheel, which `augur bench gpu` installs).
    #[test]
    #[augur::staged]
    fn the_program_has_paper_and_auto_kernels_and_builds() {
        let cases = cases(&[Kind::MatMul, Kind::MatVec], &[64]);
        assert_eq!(cases.len(), 12);
        let src = cuda_program(&cases, 2).unwrap();
        assert_eq!(src.matches(", \"paper\", ").count(), 6, "{src}");
        assert_eq!(src.matches(", \"auto\", ").count(), 6, "{src}");
        assert!(src.contains("{\"matmul\", 64, 1},\n  {\"matvec\", 64, 0},"));
        let dir = std::env::temp_dir().join(format!("augur-gpu-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let exe = dir.join("tables");
        let nvcc = Nvcc::find_or_install().expect("nvcc");
        let built = nvcc.executable(&src, "sm_90", &exe, &[]);
        let _ = std::fs::remove_dir_all(&dir);
        built.unwrap_or_else(|e| panic!("{e}"));
    }

    #[test]
    #[augur::staged]
    fn rows_read_with_and_without_the_schedule_column() {
        let out =
            "kind,size,movement,min_us,total_us,to_device,to_host,device_bytes,max_err,schedule\n\
                   matmul,64,prophecy,46.4,600,1,2,3,0\n\
                   matmul,64,prophecy,20.5,300,1,2,3,0,auto\n\
                   matvec,64,cublas,30.0,400,1,2,3,-1,cublas\n\
                   garbage\n";
        let rows = parse(out);
        let got: Vec<(&str, &str, f64)> = rows
            .iter()
            .map(|r| (r.movement.as_str(), r.schedule.as_str(), r.min_us))
            .collect();
        assert_eq!(
            got,
            [
                ("prophecy", "paper", 46.4),
                ("prophecy", "auto", 20.5),
                ("cublas", "cublas", 30.0)
            ]
        );
    }
}
