//! The runtime the generated code calls: memory, transfers, timers.
//!
//! Two implementations of one interface. [`sim_c`] (C99, for the CPU and the
//! CPU-simulated GPU) keeps "device" memory in host memory and counts every
//! transfer in bytes; [`cuda_prelude`] (for the CUDA unit) calls the CUDA
//! runtime and counts the same way. Both fill fresh allocations with a
//! poison pattern (all bits set: NaN for floats, -1 for integers), so a
//! kernel that reads a tensor that was never copied in gives visibly wrong
//! results instead of lucky zeros.

use augur::exec::Library;
use augur::ExternFn;

pub(crate) const HOST_ALLOC: ExternFn<fn(i64) -> *mut u8> = ExternFn::new("augur_ein_host_alloc");
pub(crate) const HOST_FREE: ExternFn<fn(*mut u8)> = ExternFn::new("augur_ein_host_free");
/// Scratch memory the generated code writes before it reads (pack
/// buffers): `malloc` without the poison fill, freed with [`HOST_FREE`].
pub(crate) const SCRATCH_ALLOC: ExternFn<fn(i64) -> *mut u8> =
    ExternFn::new("augur_ein_scratch_alloc");
pub(crate) const DEVICE_ALLOC: ExternFn<fn(i64) -> *mut u8> =
    ExternFn::new("augur_ein_device_alloc");
pub(crate) const DEVICE_FREE: ExternFn<fn(*mut u8)> = ExternFn::new("augur_ein_device_free");
pub(crate) const UNIFIED_ALLOC: ExternFn<fn(i64) -> *mut u8> =
    ExternFn::new("augur_ein_unified_alloc");
pub(crate) const UNIFIED_FREE: ExternFn<fn(*mut u8)> = ExternFn::new("augur_ein_unified_free");
pub(crate) const TO_DEVICE: ExternFn<fn(*mut u8, *mut u8, i64)> =
    ExternFn::new("augur_ein_to_device");
pub(crate) const TO_HOST: ExternFn<fn(*mut u8, *mut u8, i64)> = ExternFn::new("augur_ein_to_host");
pub(crate) const SYNC: ExternFn<fn()> = ExternFn::new("augur_ein_sync");
pub(crate) const TIMER_START: ExternFn<fn()> = ExternFn::new("augur_ein_timer_start");
pub(crate) const TIMER_STOP: ExternFn<fn()> = ExternFn::new("augur_ein_timer_stop");

/// What the runtime counted since the last reset (per thread in the
/// simulation; per process on a GPU).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    /// Bytes copied host → device.
    pub to_device: i64,
    /// Bytes copied device → host.
    pub to_host: i64,
    /// Bytes of device memory allocated.
    pub device_bytes: i64,
    /// Device allocations.
    pub device_allocs: i64,
    /// Bytes of unified memory allocated.
    pub unified_bytes: i64,
    /// Timed regions completed (`Einsum::timer_start`/`timer_stop`).
    pub timed: i64,
    /// The shortest timed region, in nanoseconds (0 when none).
    pub min_ns: i64,
    /// All timed regions together, in nanoseconds.
    pub total_ns: i64,
}

impl Counters {
    /// Bytes moved either way.
    pub fn moved(&self) -> i64 {
        self.to_device + self.to_host
    }

    /// The counters of the runtime linked into `lib`, on this thread.
    pub fn read(lib: &Library) -> augur::Result<Counters> {
        // SAFETY: the runtime defines `void augur_ein_stats(int64_t *out)`
        // writing 8 values; `out` holds 8.
        let f: unsafe extern "C" fn(*mut i64) = unsafe { lib.symbol("augur_ein_stats")? };
        let mut out = [0i64; 8];
        // SAFETY: as above.
        unsafe { f(out.as_mut_ptr()) };
        Ok(Counters::from_array(out))
    }

    /// The counters from the runtime's eight, in order.
    pub(crate) fn from_array(out: [i64; 8]) -> Counters {
        Counters {
            to_device: out[0],
            to_host: out[1],
            device_bytes: out[2],
            device_allocs: out[3],
            unified_bytes: out[4],
            timed: out[5],
            min_ns: out[6],
            total_ns: out[7],
        }
    }

    /// Sets the counters of the runtime in `lib` (this thread) to zero.
    pub fn reset(lib: &Library) -> augur::Result<()> {
        // SAFETY: the runtime defines `void augur_ein_reset(void)`.
        let f: unsafe extern "C" fn() = unsafe { lib.symbol("augur_ein_reset")? };
        // SAFETY: as above; it only writes the counters.
        unsafe { f() };
        Ok(())
    }
}

/// The body both runtimes share: counters, the stats interface, timers.
const COMMON: &str = r#"
static RT_TLS int64_t augur_ein_st[8];
static RT_TLS int64_t augur_ein_t0;
static int64_t augur_ein_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}
RT_EXPORT void augur_ein_stats(int64_t *out) {
  for (int i = 0; i < 8; i++) out[i] = augur_ein_st[i];
}
RT_EXPORT void augur_ein_reset(void) {
  for (int i = 0; i < 8; i++) augur_ein_st[i] = 0;
}
RT_EXPORT void augur_ein_sync(void) { RT_SYNC(); }
RT_EXPORT void augur_ein_timer_start(void) {
  RT_SYNC();
  augur_ein_t0 = augur_ein_now_ns();
}
RT_EXPORT void augur_ein_timer_stop(void) {
  RT_SYNC();
  int64_t d = augur_ein_now_ns() - augur_ein_t0;
  if (augur_ein_st[5] == 0 || d < augur_ein_st[6]) augur_ein_st[6] = d;
  augur_ein_st[5] += 1;
  augur_ein_st[7] += d;
}
RT_EXPORT uint8_t *augur_ein_host_alloc(int64_t bytes) {
  uint8_t *p = (uint8_t *)malloc(bytes > 0 ? (size_t)bytes : 1);
  if (!p) { fprintf(stderr, "augur-einsum: out of host memory (%lld bytes)\n", (long long)bytes); abort(); }
  memset(p, 0xff, (size_t)bytes);
  return p;
}
RT_EXPORT void augur_ein_host_free(uint8_t *p) { free(p); }
RT_EXPORT uint8_t *augur_ein_scratch_alloc(int64_t bytes) {
  uint8_t *p = (uint8_t *)malloc(bytes > 0 ? (size_t)bytes : 1);
  if (!p) { fprintf(stderr, "augur-einsum: out of host memory (%lld bytes)\n", (long long)bytes); abort(); }
  return p;
}
"#;

/// The simulated device: host memory, transfers counted.
const SIM_DEVICE: &str = r#"
RT_EXPORT uint8_t *augur_ein_device_alloc(int64_t bytes) {
  augur_ein_st[2] += bytes;
  augur_ein_st[3] += 1;
  return augur_ein_host_alloc(bytes);
}
RT_EXPORT void augur_ein_device_free(uint8_t *p) { free(p); }
RT_EXPORT uint8_t *augur_ein_unified_alloc(int64_t bytes) {
  augur_ein_st[4] += bytes;
  return augur_ein_host_alloc(bytes);
}
RT_EXPORT void augur_ein_unified_free(uint8_t *p) { free(p); }
RT_EXPORT void augur_ein_to_device(uint8_t *dst, uint8_t *src, int64_t bytes) {
  augur_ein_st[0] += bytes;
  memcpy(dst, src, (size_t)bytes);
}
RT_EXPORT void augur_ein_to_host(uint8_t *dst, uint8_t *src, int64_t bytes) {
  augur_ein_st[1] += bytes;
  memcpy(dst, src, (size_t)bytes);
}
"#;

/// The real device, through the CUDA runtime.
const CUDA_DEVICE: &str = r#"
static void augur_ein_check(cudaError_t e, const char *what) {
  if (e != cudaSuccess) {
    fprintf(stderr, "augur-einsum: %s failed: %s\n", what, cudaGetErrorString(e));
    abort();
  }
}
RT_EXPORT uint8_t *augur_ein_device_alloc(int64_t bytes) {
  void *p = NULL;
  augur_ein_check(cudaMalloc(&p, (size_t)bytes), "cudaMalloc");
  augur_ein_check(cudaMemset(p, 0xff, (size_t)bytes), "cudaMemset");
  augur_ein_st[2] += bytes;
  augur_ein_st[3] += 1;
  return (uint8_t *)p;
}
RT_EXPORT void augur_ein_device_free(uint8_t *p) { augur_ein_check(cudaFree(p), "cudaFree"); }
RT_EXPORT uint8_t *augur_ein_unified_alloc(int64_t bytes) {
  void *p = NULL;
  augur_ein_check(cudaMallocManaged(&p, (size_t)bytes, cudaMemAttachGlobal), "cudaMallocManaged");
  memset(p, 0xff, (size_t)bytes);
  augur_ein_st[4] += bytes;
  return (uint8_t *)p;
}
RT_EXPORT void augur_ein_unified_free(uint8_t *p) { augur_ein_check(cudaFree(p), "cudaFree"); }
RT_EXPORT void augur_ein_to_device(uint8_t *dst, uint8_t *src, int64_t bytes) {
  augur_ein_st[0] += bytes;
  augur_ein_check(cudaMemcpy(dst, src, (size_t)bytes, cudaMemcpyHostToDevice), "cudaMemcpy to device");
}
RT_EXPORT void augur_ein_to_host(uint8_t *dst, uint8_t *src, int64_t bytes) {
  augur_ein_st[1] += bytes;
  augur_ein_check(cudaMemcpy(dst, src, (size_t)bytes, cudaMemcpyDeviceToHost), "cudaMemcpy to host");
}
"#;

/// The C runtime for the CPU and the simulated GPU (with `__thread`
/// counters, so parallel tests that share a loaded library keep their counts apart).
pub fn sim_c() -> String {
    format!(
        "#define _POSIX_C_SOURCE 199309L\n#include <stdint.h>\n#include <stdio.h>\n\
         #include <stdlib.h>\n#include <string.h>\n#include <time.h>\n\
         #define RT_TLS __thread\n#define RT_EXPORT\n#define RT_SYNC() ((void)0)\n{COMMON}{SIM_DEVICE}"
    )
}

/// The prelude of CUDA units: the runtime on the CUDA runtime API.
pub fn cuda_prelude() -> String {
    format!(
        "#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n#include <time.h>\n\
         #define RT_TLS\n#define RT_EXPORT extern \"C\"\n\
         #define RT_SYNC() augur_ein_check(cudaDeviceSynchronize(), \"kernel\")\n\
         static void augur_ein_check(cudaError_t e, const char *what);\n{COMMON}{CUDA_DEVICE}"
    )
}
