//! Where the functions that JIT code calls come from, and how it calls
//! variadic ones.
//!
//! A name resolves to, in order: a function of the module being compiled,
//! an address registered with
//! [`CompileOptions::with_symbol`](crate::exec::CompileOptions::with_symbol),
//! a symbol of the running process (libc, and whatever else it loaded), or
//! one of libm's (opened once, by its soname, if the process has not loaded
//! it).
//!
//! Cranelift cannot make variadic calls. They go through [`call_int`] and
//! [`call_float`], Rust functions that make the call as a C variadic call
//! with a fixed shape: every register argument of both register files,
//! then stack words. On the System V x86-64 and the Linux/BSD aarch64 ABIs
//! a variadic argument travels exactly as a named one of its class would:
//! integer-class arguments in order through the integer registers, floats
//! in order through the vector registers, and the rest in order on the
//! stack, one 8-byte word each. So JIT code sorts the call's arguments
//! into those three lists (see [`Words`]) and the callee reads them where
//! C would have put them. Registers it does not read are ignored, and so
//! are unread stack words (the caller pops them).

use crate::exec::CompileOptions;
use crate::ir::{Intrinsic, Type};

/// The address of `name` outside the module: a registered symbol, the
/// process's, or libm's.
pub(super) fn resolve(name: &str, opts: &CompileOptions) -> Option<usize> {
    if name == super::parallel::RUNTIME {
        return Some(super::parallel::run as *const () as usize);
    }
    if let Some(s) = opts.symbols.iter().rev().find(|s| s.name == name) {
        return Some(s.address);
    }
    crate::exec::process::c_symbol(name)
}

/// The address of the Rust function that runs intrinsic `op` with result
/// type `ty` (the bounds check, the atomic adds); `None` for the
/// intrinsics a loop nest cannot run (barriers, shared memory).
pub(super) fn intrinsic(op: Intrinsic, ty: &Type) -> Option<usize> {
    match op {
        Intrinsic::Checked => Some(checked as *const () as usize),
        Intrinsic::AtomicAdd => atomics::address(crate::ir::atomic_suffix(ty)),
        Intrinsic::FindPair => Some(crate::bytes::find_pair_raw as *const () as usize),
        Intrinsic::GridSync | Intrinsic::SyncThreads | Intrinsic::Shared => None,
    }
}

/// The bounds check of checked functions (`passes::bounds`), as the C
/// writer defines it: the index, or a message and the end of the process.
extern "C" fn checked(index: i64, len: i64, slice: i32) -> i64 {
    if (0..len).contains(&index) {
        return index;
    }
    eprintln!(
        "augur: {}",
        crate::passes::bounds::message(index, len, slice)
    );
    std::process::abort()
}

/// True where [`call_int`] and [`call_float`] make variadic calls as the
/// C ABI does (see the module docs).
const VARIADIC_ABI: bool = cfg!(all(
    any(target_arch = "x86_64", target_arch = "aarch64"),
    any(
        target_os = "linux",
        target_os = "freebsd",
        target_os = "netbsd",
        target_os = "openbsd"
    )
));

/// The address of the shim for variadic calls whose result is a float
/// (`float_ret`) or not; 0 where the shims do not implement the C ABI's
/// variadic calls.
pub(super) fn shim(float_ret: bool) -> usize {
    match (VARIADIC_ABI, float_ret) {
        (false, _) => 0,
        (true, true) => call_float as *const () as usize,
        (true, false) => call_int as *const () as usize,
    }
}

/// Integer registers that carry arguments.
pub(super) const INT_REGS: usize = if cfg!(target_arch = "aarch64") { 8 } else { 6 };
/// Vector registers that carry floating-point arguments.
pub(super) const FLOAT_REGS: usize = 8;
/// Stack words a variadic call may pass.
pub(super) const STACK_WORDS: usize = 16;

/// How a variadic call's arguments are laid out in memory for the shims:
/// `INT_REGS` integer-register words, `FLOAT_REGS` vector-register words
/// (an `f64`'s bits, or an `f32`'s in the low half), `STACK_WORDS` stack
/// words, each 8 bytes.
pub(super) struct Words;

impl Words {
    /// The words in all.
    pub(super) const LEN: usize = INT_REGS + FLOAT_REGS + STACK_WORDS;
    /// Where the vector-register words start.
    pub(super) const FLOATS: usize = INT_REGS;
    /// Where the stack words start.
    pub(super) const STACK: usize = INT_REGS + FLOAT_REGS;
}

/// `callee(ints..., x(0)..x(7), s(0)..s(15))`: the integer registers'
/// words (as many as the ABI has), then the vector registers' and the
/// stack's, the same on both ABIs.
macro_rules! variadic_call {
    ($callee:ident, $x:ident, $s:ident; $($g:expr),*) => {
        // SAFETY: the shim's caller vouches for the callee (see `variadic_shim`).
        unsafe {
            $callee(
                $($g,)*
                $x(0), $x(1), $x(2), $x(3), $x(4), $x(5), $x(6), $x(7),
                $s(0), $s(1), $s(2), $s(3), $s(4), $s(5), $s(6), $s(7),
                $s(8), $s(9), $s(10), $s(11), $s(12), $s(13), $s(14), $s(15),
            )
        }
    };
}

macro_rules! variadic_shim {
    ($name:ident, $ret:ty) => {
        /// Calls the C function at `f` with the arguments in `words` (laid
        /// out as [`Words`] says) as a variadic call, and returns what it
        /// returns in the register of its class.
        ///
        /// # Safety
        ///
        /// `f` must be a C function that reads its arguments where the call
        /// of the JIT code's extern declaration puts them; `words` must
        /// point at `Words::LEN` words.
        pub(super) unsafe extern "C" fn $name(f: usize, words: *const u64) -> $ret {
            // SAFETY: the caller passes `Words::LEN` readable words.
            let w = unsafe { std::slice::from_raw_parts(words, Words::LEN) };
            let g = |i: usize| w[i] as i64;
            let x = |i: usize| f64::from_bits(w[Words::FLOATS + i]);
            let s = |i: usize| w[Words::STACK + i] as i64;
            // SAFETY: a function address transmuted to the variadic type
            // whose calls put arguments where the callee reads them (module
            // docs); the caller vouches for `f`.
            let callee: unsafe extern "C" fn(i64, ...) -> $ret = unsafe { std::mem::transmute(f) };
            #[cfg(not(target_arch = "aarch64"))]
            return variadic_call!(callee, x, s; g(0), g(1), g(2), g(3), g(4), g(5));
            #[cfg(target_arch = "aarch64")]
            return variadic_call!(callee, x, s; g(0), g(1), g(2), g(3), g(4), g(5), g(6), g(7));
        }
    };
}

variadic_shim!(call_int, i64);
variadic_shim!(call_float, f64);

/// The atomic helpers of GPU kernels (`gpu::atomic_add`), as the C writer
/// defines them for the CPU: atomic read-modify-writes, relaxed.
mod atomics {
    use std::sync::atomic::{AtomicI32, AtomicI64, AtomicU32, AtomicU64, Ordering::Relaxed};

    /// The helper for type suffix `suffix` (`i32`, `f64`, ...).
    pub(super) fn address(suffix: &str) -> Option<usize> {
        Some(match suffix {
            "i32" => add_i32 as *const () as usize,
            "u32" => add_u32 as *const () as usize,
            "i64" => add_i64 as *const () as usize,
            "u64" => add_u64 as *const () as usize,
            "f32" => add_f32 as *const () as usize,
            "f64" => add_f64 as *const () as usize,
            _ => return None,
        })
    }

    // Each helper is called by compiled code with the address of an
    // element of its type, aligned and live for the call: what the C helper
    // (and CUDA's `atomicAdd`) require too.
    extern "C" fn add_i32(p: *mut i32, v: i32) -> i32 {
        // SAFETY: `p` is an aligned, live element (see above); all concurrent
        // access to it is atomic.
        unsafe { AtomicI32::from_ptr(p) }.fetch_add(v, Relaxed)
    }

    extern "C" fn add_u32(p: *mut u32, v: u32) -> u32 {
        // SAFETY: `p` is an aligned, live element (see above); all concurrent
        // access to it is atomic.
        unsafe { AtomicU32::from_ptr(p) }.fetch_add(v, Relaxed)
    }

    extern "C" fn add_i64(p: *mut i64, v: i64) -> i64 {
        // SAFETY: `p` is an aligned, live element (see above); all concurrent
        // access to it is atomic.
        unsafe { AtomicI64::from_ptr(p) }.fetch_add(v, Relaxed)
    }

    extern "C" fn add_u64(p: *mut u64, v: u64) -> u64 {
        // SAFETY: `p` is an aligned, live element (see above); all concurrent
        // access to it is atomic.
        unsafe { AtomicU64::from_ptr(p) }.fetch_add(v, Relaxed)
    }

    extern "C" fn add_f32(p: *mut f32, v: f32) -> f32 {
        // SAFETY: `p` is an aligned, live `f32` (see above), which has the
        // size and alignment of a `u32`; all concurrent access is atomic.
        let bits = unsafe { AtomicU32::from_ptr(p.cast()) };
        let old = bits.fetch_update(Relaxed, Relaxed, |b| {
            Some((f32::from_bits(b) + v).to_bits())
        });
        f32::from_bits(old.unwrap_or_else(|b| b))
    }

    extern "C" fn add_f64(p: *mut f64, v: f64) -> f64 {
        // SAFETY: `p` is an aligned, live `f64` (see above), which has the
        // size and alignment of a `u64`; all concurrent access is atomic.
        let bits = unsafe { AtomicU64::from_ptr(p.cast()) };
        let old = bits.fetch_update(Relaxed, Relaxed, |b| {
            Some((f64::from_bits(b) + v).to_bits())
        });
        f64::from_bits(old.unwrap_or_else(|b| b))
    }
}
