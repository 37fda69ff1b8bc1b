//! Places of loaded values: a handle made by `at` or `deref` stores back to
//! the element it was loaded from, after compound assignment and after the
//! index or pointer it was loaded through changes. Each probe compares the
//! compiled C and the interpreter with plain Rust.
//!
//! Probes that expose engine bugs are `#[ignore = "engine bug: ..."]` with a
//! comment saying how the engine goes wrong; the others cover ground the
//! rest of the suite does not.

use crate::common;
use crate::probe_harness;

use augur::Dyn;
use common::{Buf, Check};
use probe_harness::diff;

/// `v += 1` twice on an element loaded with `at`.
// Mechanism: `p.at(0)` is a temporary `t = p[0]` that remembers its place
// (stage/dyn_val.rs:320-333). `+=` (stage/ops.rs:53-55) computes `t + 1` and
// stores it to the place, but the handle `v` still names `t`, the value
// loaded before; the second `+=` recomputes `t + 1`.
// C: `var0 = arg0[0]; arg0[0] = var0 + 1; arg0[0] = var0 + 1;`
// Fix: for handles with a place, make compound assignment (and arguably every
// read after a `set`) reload the place, or make `at`/`deref` results variables
// (a `Place`-backed lvalue handle) rather than snapshots, or forbid `op=` on
// them (Misuse) so the surprise is an error.
#[test]
#[augur::staged]
fn compound_assign_on_loaded_element_twice() {
    let o = diff(
        &Check::default(),
        "elem_inc2",
        |p: Dyn<*mut i32>| {
            let mut v = p.at(0);
            v += 1;
            v += 1;
        },
        |(p,): &mut (Buf<i32>,)| {
            p.0[0] += 2;
        },
        &[
            (Buf(vec![0]),),
            (Buf(vec![1]),),
            (Buf(vec![-3]),),
            (Buf(vec![7]),),
            (Buf(vec![20]),),
        ],
    );
    println!("{}", o.code);
    o.assert_ok();
}

/// `set` on an element loaded with `at(i)` after the index variable
/// changed: the store must go to the element that was loaded.
// Mechanism: `load` (stage/dyn_val.rs:320-333) records the place
// `Index(p, Var(i))` with the *variable* `i` as operand and `place_of`
// (dyn_val.rs:133-149) reuses that place at `set` time. `i` is a `Dyn::new`
// variable that changed in between, so the store goes to `p[i_new]`.
// C: `int32_t var1 = arg0[var0]; var0 = var0 + 1; arg0[var0] = var1 + 100;`
// Fix: when a place operand is a Local/Param variable, snapshot it into a
// temporary at load time (`Let idx = i`) and build the place from the
// snapshot; `addr()` of a loaded value needs the same.
#[test]
#[augur::staged]
fn set_on_loaded_element_after_index_changes() {
    let o = diff(
        &Check::default(),
        "elem_moved_index",
        |p: Dyn<*mut i32>| {
            let i = Dyn::new(0);
            let v = p.at(i);
            i.set(i + 1);
            v.set(v + 100);
        },
        |(p,): &mut (Buf<i32>,)| {
            p.0[0] += 100;
        },
        &[
            (Buf(vec![0, 0]),),
            (Buf(vec![1, 2]),),
            (Buf(vec![-3, 3]),),
            (Buf(vec![7, 7]),),
            (Buf(vec![20, -20]),),
        ],
    );
    println!("{}", o.code);
    o.assert_ok();
}

/// The same through `deref` of a pointer variable that is then advanced.
// Same mechanism as `set_on_loaded_element_after_index_changes`, with
// `Deref(Var(q))`: C `int32_t var1 = *var0; var0 = var0 + 1; *var0 = var1 * 2;
// int32_t *var2 = &*var0;`.
#[test]
#[augur::staged]
fn set_on_deref_after_pointer_moves() {
    let o = diff(
        &Check::default(),
        "deref_moved_ptr",
        |p: Dyn<*mut i32>| {
            let q = Dyn::new(p);
            let v = q.deref();
            q.set(q.offset(1));
            v.set(v * 2);
            let w = v.addr();
            w.deref().set(w.deref() + 1);
        },
        |(p,): &mut (Buf<i32>,)| {
            p.0[0] = p.0[0] * 2 + 1;
        },
        &[
            (Buf(vec![0, 0]),),
            (Buf(vec![1, 2]),),
            (Buf(vec![-3, 3]),),
            (Buf(vec![7, 7]),),
            (Buf(vec![20, -20]),),
        ],
    );
    println!("{}", o.code);
    o.assert_ok();
}
