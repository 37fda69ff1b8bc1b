//! Names in the C: user names that collide with C keywords, with each
//! other, with parameters and generated names, with macros of the
//! always-included headers or of the compiler, or that are not identifiers,
//! must still give C that compiles and runs right.
//!
//! Probes that expose engine bugs are `#[ignore = "engine bug: ..."]` with a
//! comment saying how the engine goes wrong; the others cover ground the
//! rest of the suite does not.

use crate::common;
use crate::probe_harness;

use augur::Dyn;
use common::Check;
use probe_harness::diff;

/// User names that collide with C keywords, each other, parameters and
/// generated names, or are not identifiers.
#[test]
#[augur::staged]
fn naming_collisions_compile() {
    let o = diff(
        &Check::default(),
        "names",
        |x: Dyn<i32>| {
            let a = Dyn::named("var0", x);
            let b = Dyn::named("arg0", a + 1);
            let c = Dyn::named("x y", b + 1);
            let d = Dyn::named("x_y", c + 1);
            let e = Dyn::named("π", d + 1);
            let f = Dyn::named("while", e + 1);
            let g = Dyn::named("0abc", f + 1);
            let h = Dyn::named("", g + 1);
            h + a + b
        },
        |&mut (x,): &mut (i32,)| (x + 7) + x + (x + 1),
        &[(0,), (1,), (-1,), (100,), (-100,)],
    );
    println!("{}", o.code);
    o.assert_ok();
}

/// Names that are macros of the always-included headers or of the
/// compiler.
// Mechanism: passes/naming.rs:61-86 `sanitize`/`unique` only avoid the
// RESERVED list (codegen/c/keywords.rs), which has some <stdint.h> limits but
// not INTMAX_MAX, PTRDIFF_MAX, INTPTR_MAX, SIG_ATOMIC_MAX, WCHAR_MAX, ... nor
// the implementation's reserved space (`__*`, `_[A-Z]*`: __LINE__, __FILE__,
// __x86_64__). Error::Compile instead of a renamed variable.
// Fix: rename names that start with `__` or `_` + capital, and complete the
// list of the always-included headers' macros.
#[test]
#[augur::staged]
fn naming_predefined_macros() {
    let o = diff(
        &Check::default(),
        "macro_names",
        |x: Dyn<i32>| {
            let a = Dyn::named("INTMAX_MAX", x);
            let b = Dyn::named("__LINE__", a + 1);
            let c = Dyn::named("PTRDIFF_MAX", b + 1);
            c + a
        },
        |&mut (x,): &mut (i32,)| (x + 2) + x,
        &[(0,), (1,), (-1,), (100,), (-100,)],
    );
    println!("{}", o.code);
    o.assert_ok();
}
