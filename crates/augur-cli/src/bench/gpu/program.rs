//! The experiment's CUDA program: one executable that runs matmul and
//! matvec at each size under each strategy and prints one CSV row per run,
//! and the reader of that output.

use crate::programs::einsum::{Benchmark, Kind};
use augur::{Error, Result};
use augur_einsum::Movement;
use std::fmt::Write;

/// The programs of the experiment, in run order.
pub fn cases(kinds: &[Kind], sizes: &[usize]) -> Vec<Benchmark> {
    let mut out = Vec::new();
    for &kind in kinds {
        for &size in sizes {
            for m in Movement::ALL {
                out.push(Benchmark::paper(kind, size, m));
            }
        }
    }
    out
}

/// The CUDA program: every case's function and a `main` that runs each with
/// `iterations` turns and prints
/// `kind,size,movement,min_us,total_us,to_device,to_host,device_bytes,max_err`
/// (`max_err` against a host reference for sizes up to 256, else -1).
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
    for b in cases {
        let [xs, ys, zs] = b.kind.shapes(b.sizes);
        let n = |s: &[usize]| s.iter().product::<usize>();
        let _ = writeln!(
            src,
            "  {{\"{}\", {}, \"{}\", {}, {}, {}, {}, {}}},",
            b.kind.name(),
            b.sizes.0,
            b.movement.name(),
            b.function_name(),
            n(&xs),
            n(&ys),
            n(&zs),
            i32::from(b.kind == Kind::MatMul)
        );
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
extern "C" void augur_ein_stats(int64_t *out);
extern "C" void augur_ein_reset(void);
typedef void (*bench_fn)(float *, float *, float *, int32_t);
struct augur_case { const char *kind; int size; const char *movement; bench_fn f; long xl, yl, zl; int matmul; };
static const augur_case augur_cases[] = {
"#;

const HARNESS_TAIL: &str = r#"};

static double augur_max_err(const augur_case &c, const float *x, const float *y, const float *z) {
  if (c.size > 256) return -1.0;
  int m = c.size, n = c.size, o = c.matmul ? c.size : 1;
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

int main(void) {
  cudaFree(0);
  printf("kind,size,movement,min_us,total_us,to_device,to_host,device_bytes,max_err\n");
  for (size_t i = 0; i < sizeof(augur_cases) / sizeof(augur_cases[0]); i++) {
    const augur_case &c = augur_cases[i];
    float *x = (float *)malloc(c.xl * sizeof(float));
    float *y = (float *)malloc(c.yl * sizeof(float));
    float *z = (float *)malloc(c.zl * sizeof(float));
    for (long k = 0; k < c.xl; k++) x[k] = (float)(k % 7) * 0.25f - 0.5f;
    for (long k = 0; k < c.yl; k++) y[k] = (float)(k % 5) * 0.5f - 1.0f;
    for (long k = 0; k < c.zl; k++) z[k] = 0.0f;
    augur_ein_reset();
    c.f(x, y, z, ITERATIONS);
    int64_t st[8];
    augur_ein_stats(st);
    printf("%s,%d,%s,%.1f,%.1f,%lld,%lld,%lld,%g\n", c.kind, c.size, c.movement, st[6] / 1000.0,
           st[7] / 1000.0, (long long)st[0], (long long)st[1], (long long)st[2], augur_max_err(c, x, y, z));
    fflush(stdout);
    free(x); free(y); free(z);
  }
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
    /// Strategy name.
    pub movement: String,
    /// Shortest timed turn, µs.
    pub min_us: f64,
    /// Bytes to the device over all turns.
    pub to_device: i64,
    /// Bytes to the host over all turns.
    pub to_host: i64,
    /// Max abs error against the host reference (-1: not checked).
    pub max_err: f64,
}

/// Reads the program's output (the header and malformed lines are skipped).
pub fn parse(output: &str) -> Vec<GpuRow> {
    output
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.trim().split(',').collect();
            if f.len() != 9 {
                return None;
            }
            Some(GpuRow {
                kind: f[0].to_string(),
                size: f[1].parse().ok()?,
                movement: f[2].to_string(),
                min_us: f[3].parse().ok()?,
                to_device: f[5].parse().ok()?,
                to_host: f[6].parse().ok()?,
                max_err: f[8].parse().ok()?,
            })
        })
        .collect()
}
