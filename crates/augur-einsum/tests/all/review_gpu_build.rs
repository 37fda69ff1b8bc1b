//! Review: builds the GPU reproductions of two bugs (a captured host array,
//! a tensor of another Einsum read in a kernel) as executables in
//! `$RV_GPU_OUT` (a no-op without it). On an H100 both report "an illegal
//! memory access was encountered".

use augur::exec::cuda::Nvcc;
use augur::stage::gpu::launch;
use augur::{Builder, Dyn};
use augur_einsum::{cuda_source, Config, Einsum, Movement};

#[test]
#[augur::staged]
fn build() {
    let Ok(out) = std::env::var("RV_GPU_OUT") else {
        return;
    };
    let out = std::path::PathBuf::from(out);
    std::fs::create_dir_all(&out).unwrap();
    let nvcc = Nvcc::find_or_install().unwrap();

    // G1: a host array captured by a kernel.
    let ex = Builder::new()
        .extract("arr", |x: Dyn<*mut i32>, n: Dyn<i32>| {
            let a = Dyn::<[i32; 4]>::uninit();
            for i in 0..4 {
                a.at(i).set(n + i);
            }
            launch(1, 4, |_bid, tid| {
                x.at(tid).set(a.at(tid));
            });
        })
        .unwrap();
    let mut cu = augur::codegen::cuda::write_cuda(ex.ir(), "").unwrap();
    cu.push_str(
        r#"
int main(void) {
  int32_t *x;
  cudaMallocManaged((void **)&x, 16, cudaMemAttachGlobal);
  for (int i = 0; i < 4; i++) x[i] = -1;
  arr(x, 10);
  cudaError_t e = cudaDeviceSynchronize();
  printf("G1 captured array: sync=%s x=%d %d %d %d (want 10 11 12 13)\n", cudaGetErrorString(e), x[0], x[1], x[2], x[3]);
  return 0;
}
"#,
    );
    nvcc.executable(&cu, "sm_90", &out.join("g1"), &[]).unwrap();

    // G2: a kernel of one Einsum reading a tensor of another.
    let ex = Builder::new()
        .extract("two_instances", |a: Dyn<*mut f32>, b: Dyn<*mut f32>| {
            let e1 = Einsum::new(Config::with(Movement::Prophecy));
            let e2 = Einsum::new(Config::with(Movement::Prophecy));
            let i = e1.index("i");
            let a = e1.tensor_on::<f32>("A", [8], a);
            let b = e2.tensor_on::<f32>("B", [8], b);
            e2.run_on_gpu(|| b.at([i]).set(a.at([i]) * 2.0f32));
            e1.finish();
            e2.finish();
        })
        .unwrap();
    let mut cu = cuda_source(&ex).unwrap();
    cu.push_str(
        r#"
int main(void) {
  float *a = (float *)malloc(32), *b = (float *)malloc(32);
  for (int i = 0; i < 8; i++) { a[i] = i + 1; b[i] = -1; }
  two_instances(a, b);
  cudaError_t e = cudaDeviceSynchronize();
  printf("G2 two instances: sync=%s b=", cudaGetErrorString(e));
  for (int i = 0; i < 8; i++) printf("%g ", b[i]);
  printf("(want 2 4 ... 16)\n");
  return 0;
}
"#,
    );
    nvcc.executable(&cu, "sm_90", &out.join("g2"), &[]).unwrap();
}
