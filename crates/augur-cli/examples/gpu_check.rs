//! Runs einsum programs on a real GPU and compares every output element
//! with the same program's CPU version, in one CUDA executable.
//!
//! `cargo run --release -p augur-cli --example gpu_check -- OUT [ARCH]`
//! writes `OUT.cu` and builds `OUT`; run it on a GPU machine: it prints one
//! line per program and strategy, `ok` or the first mismatch, and exits 1 on
//! any mismatch. Inputs are small integers, so results are exact whatever
//! the order of the sums. `gpu_check source FILE.cu` writes the source
//! alone, for a machine with nvcc to build (`scripts/device-check`).

use augur::exec::cuda::Nvcc;
use augur::{Builder, Dyn, Extracted};
use augur_einsum::{cuda_prelude, Config, Einsum, Movement};
use std::fmt::Write;
use std::path::Path;

type Native = unsafe extern "C" fn(*mut f32, *mut f32, *mut f32);

/// A program: name, input sizes, output size, and the staged body.
struct Program {
    name: &'static str,
    a: usize,
    b: usize,
    out: usize,
    body: fn(&Einsum, Dyn<*mut f32>, Dyn<*mut f32>, Dyn<*mut f32>),
}

#[augur::staged]
fn programs() -> Vec<Program> {
    vec![
        Program {
            name: "chain",
            a: 37 * 19,
            b: 19 * 23,
            out: 37,
            body: |ein, a, b, out| {
                let (i, j, k) = (ein.index("i"), ein.index("j"), ein.index("k"));
                let a = ein.tensor_on::<f32>("a", [37, 19], a);
                let b = ein.tensor_on::<f32>("b", [19, 23], b);
                let t = ein.tensor::<f32>("t", [37, 23]);
                let u = ein.tensor_on::<f32>("u", [37], out);
                ein.run_on_gpu(|| {
                    t.at([i, j]).set(a.at([i, k]) * b.at([k, j]));
                    u.at([i]).set(t.at([i, j]) + 1.0f32);
                });
            },
        },
        Program {
            name: "transpose",
            a: 45 * 600,
            b: 1,
            out: 600 * 45,
            body: |ein, a, _b, out| {
                let (i, j) = (ein.index("i"), ein.index("j"));
                let a = ein.tensor_on::<f32>("a", [45, 600], a);
                let t = ein.tensor_on::<f32>("t", [600, 45], out);
                ein.run_on_gpu(|| t.at([j, i]).set(a.at([i, j]) * 2.0f32 - i));
            },
        },
        Program {
            name: "batched",
            a: 3 * 17 * 9,
            b: 3 * 9 * 21,
            out: 3 * 17 * 21,
            body: |ein, a, b, out| {
                let (n, i, j, k) = (
                    ein.index("n"),
                    ein.index("i"),
                    ein.index("j"),
                    ein.index("k"),
                );
                let a = ein.tensor_on::<f32>("a", [3, 17, 9], a);
                let b = ein.tensor_on::<f32>("b", [3, 9, 21], b);
                let c = ein.tensor_on::<f32>("c", [3, 17, 21], out);
                ein.run_on_gpu(|| c.at([n, i, j]).set(a.at([n, i, k]) * b.at([n, k, j])));
            },
        },
        Program {
            name: "rounds",
            a: 24,
            b: 1,
            out: 24,
            body: |ein, a, _b, out| {
                // A dyn loop inside the kernel with barriers in it: each
                // round needs every element of the previous one.
                let (i, j) = (ein.index("i"), ein.index("j"));
                let a = ein.tensor_on::<f32>("a", [24], a);
                let t = ein.tensor::<f32>("t", [24]);
                let s = ein.tensor::<f32>("s", []);
                let o = ein.tensor_on::<f32>("o", [24], out);
                ein.run_on_gpu(|| {
                    t.at([i]).set(a.at([i]));
                    let k = Dyn::new(0i32);
                    while k.lt(3).is_true() {
                        s.at([]).set(t.at([j]));
                        t.at([i]).set(t.at([i]) * 0.5f32 + s.at([]));
                        k.set(k + 1);
                    }
                    o.at([i]).set(t.at([i]));
                });
            },
        },
        Program {
            name: "diagonal",
            a: 50,
            b: 1,
            out: 50 * 50,
            body: |ein, a, _b, out| {
                // Writes only the diagonal: the rest must survive the trip.
                let i = ein.index("i");
                let v = ein.tensor_on::<f32>("v", [50], a);
                let s = ein.tensor_on::<f32>("s", [50, 50], out);
                ein.run_on_gpu(|| s.at([i, i]).set(v.at([i])));
            },
        },
        Program {
            // Large enough that each thread of the product computes 4 × 4
            // results (register blocks), then row sums through lanes.
            name: "square_products",
            a: 700 * 300,
            b: 300 * 700,
            out: 700,
            body: |ein, a, b, out| {
                let (i, j, k) = (ein.index("i"), ein.index("j"), ein.index("k"));
                let a = ein.tensor_on::<f32>("a", [700, 300], a);
                let b = ein.tensor_on::<f32>("b", [300, 700], b);
                let c = ein.tensor::<f32>("c", [700, 700]);
                let u = ein.tensor_on::<f32>("u", [700], out);
                ein.run_on_gpu(|| {
                    c.at([i, j]).set(a.at([i, k]) * b.at([k, j]));
                    u.at([i]).set(c.at([i, j]));
                });
            },
        },
        Program {
            name: "sum_then_scale",
            a: 33 * 65,
            b: 65,
            out: 33,
            body: |ein, a, b, out| {
                let (i, j) = (ein.index("i"), ein.index("j"));
                let a = ein.tensor_on::<f32>("a", [33, 65], a);
                let v = ein.tensor_on::<f32>("v", [65], b);
                let s = ein.tensor::<f32>("s", []);
                let r = ein.tensor_on::<f32>("r", [33], out);
                ein.run_on_gpu(|| s.at([]).set(v.at([j])));
                // On the CPU between the kernels: s is back on the host.
                s.at([]).add_to(1.0f32);
                ein.run_on_gpu(|| r.at([i]).set(a.at([i, j]) * v.at([j]) + s.at([])));
            },
        },
    ]
}

#[augur::staged]
fn extract(p: &Program, config: Config, suffix: &str) -> augur::Result<Extracted<Native>> {
    let body = p.body;
    Builder::new().extract(
        &format!("{}_{suffix}", p.name),
        move |a: Dyn<*mut f32>, b: Dyn<*mut f32>, out: Dyn<*mut f32>| {
            let ein = Einsum::new(config);
            body(&ein, a, b, out);
            ein.finish();
        },
    )
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: gpu_check OUT [ARCH] | gpu_check source FILE.cu";
    if let [mode, file] = args.as_slice() {
        if mode == "source" {
            std::fs::write(file, source()?)?;
            println!("wrote {file}");
            return Ok(());
        }
    }
    let out = args.first().ok_or(usage)?;
    let arch = args.get(1).map(String::as_str).unwrap_or("sm_90");
    let src = source()?;
    std::fs::write(format!("{out}.cu"), &src)?;
    Nvcc::find_or_install()?.executable(&src, arch, Path::new(out), &[])?;
    println!("built {out} ({arch})");
    Ok(())
}

/// The CUDA program: every program under every strategy, the CPU version
/// beside, and a `main` that compares them.
fn source() -> Result<String, Box<dyn std::error::Error>> {
    let mut funcs = Vec::new();
    let mut main = String::from(
        "\n#include <math.h>\ntypedef void (*fn3)(float *, float *, float *);\nint main(void) {\n  int bad = 0;\n",
    );
    for p in programs() {
        let cpu = extract(&p, Config::cpu(), "cpu")?;
        for m in Movement::ALL {
            let gpu = extract(&p, Config::with(m), m.name())?;
            let _ = writeln!(
                main,
                "  bad += augur_check(\"{}\", \"{}\", {}_{}, {}_cpu, {}, {}, {});",
                p.name,
                m.name(),
                p.name,
                m.name(),
                p.name,
                p.a,
                p.b,
                p.out
            );
            funcs.push(gpu);
        }
        funcs.push(cpu);
    }
    main.push_str(
        "  printf(\"%s\\n\", bad ? \"MISMATCHES\" : \"all ok\");\n  return bad ? 1 : 0;\n}\n",
    );
    let irs: Vec<&augur::ir::Function> = funcs.iter().map(|e| e.ir()).collect();
    let mut src = augur::codegen::cuda::write_cuda_module(&irs, &cuda_prelude())?;
    src.push_str(CHECK);
    src.push_str(&main);
    Ok(src)
}

const CHECK: &str = r#"
static int augur_check(const char *name, const char *mv, void (*g)(float *, float *, float *),
                       void (*c)(float *, float *, float *), long na, long nb, long no) {
  // Managed memory: under the unified strategy the kernels read the
  // caller's buffers directly (the caller's duty, as in the paper).
  float *a, *b, *o1, *o2;
  cudaMallocManaged((void **)&a, na * sizeof(float), cudaMemAttachGlobal);
  cudaMallocManaged((void **)&b, nb * sizeof(float), cudaMemAttachGlobal);
  cudaMallocManaged((void **)&o1, no * sizeof(float), cudaMemAttachGlobal);
  cudaMallocManaged((void **)&o2, no * sizeof(float), cudaMemAttachGlobal);
  for (long i = 0; i < na; i++) a[i] = (float)((i * 7 + 3) % 11) - 5.0f;
  for (long i = 0; i < nb; i++) b[i] = (float)((i * 5 + 1) % 13) - 6.0f;
  for (long i = 0; i < no; i++) { o1[i] = (float)(i % 3); o2[i] = (float)(i % 3); }
  g(a, b, o1);
  cudaError_t e = cudaDeviceSynchronize();
  if (e != cudaSuccess) { printf("ERROR %s %s: %s\n", name, mv, cudaGetErrorString(e)); fflush(stdout); return 1; }
  c(a, b, o2);
  long wrong = -1;
  for (long i = 0; i < no; i++) if (!(o1[i] == o2[i])) { wrong = i; break; }
  if (wrong < 0) printf("ok %s %s (%ld values)\n", name, mv, no);
  else printf("MISMATCH %s %s at %ld: gpu %g cpu %g\n", name, mv, wrong, o1[wrong], o2[wrong]);
  fflush(stdout);
  cudaFree(a); cudaFree(b); cudaFree(o1); cudaFree(o2);
  return wrong >= 0;
}
"#;
