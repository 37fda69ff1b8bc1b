//! The simulated runtime ([`sim_c`](crate::runtime::sim_c)) in Rust, for
//! code the JIT compiles (`augur::exec::Backend::Jit`): the same functions
//! under the same names, registered by address
//! ([`CompileOptions::with_symbol`]), counting in the same eight counters,
//! per thread.
//!
//! One difference: the C runtime has counters per loaded library and
//! thread, this one per thread for every JIT-compiled program.

use augur::exec::CompileOptions;
use std::cell::Cell;

thread_local! {
    /// The counters, in `Counters`' order.
    static STATS: Cell<[i64; 8]> = const { Cell::new([0; 8]) };
    /// When the running timed region started.
    static T0: Cell<i64> = const { Cell::new(0) };
}

extern "C" {
    fn malloc(size: usize) -> *mut u8;
    fn free(p: *mut u8);
}

fn bump(i: usize, by: i64) {
    STATS.with(|s| {
        let mut v = s.get();
        v[i] += by;
        s.set(v);
    });
}

/// The counters of this thread.
pub(crate) fn stats() -> [i64; 8] {
    STATS.with(Cell::get)
}

/// Zeroes the counters of this thread.
pub(crate) fn reset() {
    STATS.with(|s| s.set([0; 8]));
}

fn now_ns() -> i64 {
    use std::sync::OnceLock;
    static START: OnceLock<std::time::Instant> = OnceLock::new();
    let start = *START.get_or_init(std::time::Instant::now);
    i64::try_from(start.elapsed().as_nanos()).unwrap_or(i64::MAX)
}

extern "C" fn stats_c(out: *mut i64) {
    let v = stats();
    // SAFETY: the generated code passes 8 writable counters, as to the C runtime.
    unsafe { std::ptr::copy_nonoverlapping(v.as_ptr(), out, 8) };
}

extern "C" fn reset_c() {
    reset();
}

extern "C" fn sync() {}

extern "C" fn timer_start() {
    T0.with(|t| t.set(now_ns()));
}

extern "C" fn timer_stop() {
    let d = now_ns() - T0.with(Cell::get);
    STATS.with(|s| {
        let mut v = s.get();
        if v[5] == 0 || d < v[6] {
            v[6] = d;
        }
        v[5] += 1;
        v[7] += d;
        s.set(v);
    });
}

extern "C" fn host_alloc(bytes: i64) -> *mut u8 {
    let n = usize::try_from(bytes).unwrap_or(0);
    let p = scratch_alloc(bytes);
    // SAFETY: `p` holds `n` bytes. The poison pattern, as in C.
    unsafe { std::ptr::write_bytes(p, 0xff, n) };
    p
}

extern "C" fn scratch_alloc(bytes: i64) -> *mut u8 {
    let n = usize::try_from(bytes).unwrap_or(0);
    // SAFETY: malloc of at least one byte.
    let p = unsafe { malloc(n.max(1)) };
    if p.is_null() {
        eprintln!("augur-einsum: out of host memory ({bytes} bytes)");
        std::process::abort();
    }
    p
}

extern "C" fn host_free(p: *mut u8) {
    // SAFETY: `p` came from `host_alloc` (malloc), as the generated code pairs them.
    unsafe { free(p) }
}

extern "C" fn device_alloc(bytes: i64) -> *mut u8 {
    bump(2, bytes);
    bump(3, 1);
    host_alloc(bytes)
}

extern "C" fn unified_alloc(bytes: i64) -> *mut u8 {
    bump(4, bytes);
    host_alloc(bytes)
}

fn copy(dst: *mut u8, src: *mut u8, bytes: i64) {
    let n = usize::try_from(bytes).unwrap_or(0);
    // SAFETY: the generated code copies between buffers of `bytes` bytes
    // each, as with the C runtime's memcpy.
    unsafe { std::ptr::copy(src, dst, n) };
}

extern "C" fn to_device(dst: *mut u8, src: *mut u8, bytes: i64) {
    bump(0, bytes);
    copy(dst, src, bytes);
}

extern "C" fn to_host(dst: *mut u8, src: *mut u8, bytes: i64) {
    bump(1, bytes);
    copy(dst, src, bytes);
}

/// `opts` with the runtime's functions registered for the JIT.
pub(crate) fn register(opts: CompileOptions) -> CompileOptions {
    let alloc: extern "C" fn(i64) -> *mut u8 = host_alloc;
    let dev_alloc: extern "C" fn(i64) -> *mut u8 = device_alloc;
    let uni_alloc: extern "C" fn(i64) -> *mut u8 = unified_alloc;
    let free_: extern "C" fn(*mut u8) = host_free;
    let scratch: extern "C" fn(i64) -> *mut u8 = scratch_alloc;
    let copy_to: extern "C" fn(*mut u8, *mut u8, i64) = to_device;
    let copy_back: extern "C" fn(*mut u8, *mut u8, i64) = to_host;
    let plain: [(&str, extern "C" fn()); 4] = [
        ("augur_ein_reset", reset_c),
        ("augur_ein_sync", sync),
        ("augur_ein_timer_start", timer_start),
        ("augur_ein_timer_stop", timer_stop),
    ];
    let stats_fn: extern "C" fn(*mut i64) = stats_c;
    let mut opts = opts
        .with_symbol("augur_ein_stats", stats_fn as *const ())
        .with_symbol("augur_ein_host_alloc", alloc as *const ())
        .with_symbol("augur_ein_host_free", free_ as *const ())
        .with_symbol("augur_ein_scratch_alloc", scratch as *const ())
        .with_symbol("augur_ein_device_alloc", dev_alloc as *const ())
        .with_symbol("augur_ein_device_free", free_ as *const ())
        .with_symbol("augur_ein_unified_alloc", uni_alloc as *const ())
        .with_symbol("augur_ein_unified_free", free_ as *const ())
        .with_symbol("augur_ein_to_device", copy_to as *const ())
        .with_symbol("augur_ein_to_host", copy_back as *const ());
    for (name, f) in plain {
        opts = opts.with_symbol(name, f as *const ());
    }
    opts
}
