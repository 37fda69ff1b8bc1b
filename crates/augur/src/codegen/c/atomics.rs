//! The atomic helpers of GPU kernels ([`gpu::atomic_add`]) as C for the
//! CPU: what the C backend and the CPU simulation compile.
//!
//! CUDA defines them with `atomicAdd`. On the CPU they are GCC/Clang
//! `__atomic` builtins (floats by compare-and-swap on their bits), so they
//! stay atomic if the code around them runs on several threads.
//!
//! [`gpu::atomic_add`]: crate::stage::gpu::atomic_add

use crate::ir::device::intrinsics;
use crate::ir::{atomic_suffix, Function, Intrinsic};
use std::collections::BTreeSet;
use std::fmt::Write;

/// The C type and, for floats, the same-sized integer of each suffix.
fn types(suffix: &str) -> Option<(&'static str, Option<&'static str>)> {
    Some(match suffix {
        "i32" => ("int32_t", None),
        "u32" => ("uint32_t", None),
        "i64" => ("int64_t", None),
        "u64" => ("uint64_t", None),
        "f32" => ("float", Some("uint32_t")),
        "f64" => ("double", Some("uint64_t")),
        _ => return None,
    })
}

/// The suffixes (`f32`, ...) of the atomic helpers `fs` call, sorted.
pub(crate) fn used(fs: &[&Function]) -> BTreeSet<&'static str> {
    fs.iter()
        .flat_map(|f| intrinsics(f))
        .filter(|(i, _)| *i == Intrinsic::AtomicAdd)
        .map(|(_, ty)| atomic_suffix(ty))
        .filter(|s| types(s).is_some())
        .collect()
}

/// Defines each atomic helper `fs` calls.
pub(crate) fn write_helpers(out: &mut String, fs: &[&Function]) {
    for suffix in used(fs) {
        let (t, bits) = types(suffix).expect("filtered by `used`");
        let name = format!("augur_atomic_add_{suffix}");
        let _ = match bits {
            None => write!(
                out,
                "\nstatic {t} {name}({t} *p, {t} v) {{\n  \
                 return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);\n}}\n"
            ),
            Some(u) => write!(
                out,
                "\nstatic {t} {name}({t} *p, {t} v) {{\n  \
                 union {{ {t} f; {u} u; }} old, sum;\n  \
                 old.u = __atomic_load_n(({u} *)p, __ATOMIC_RELAXED);\n  \
                 do {{\n    sum.f = old.f + v;\n  }} while (!__atomic_compare_exchange_n(({u} *)p, \
                 &old.u, sum.u, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED));\n  \
                 return old.f;\n}}\n"
            ),
        };
    }
}
