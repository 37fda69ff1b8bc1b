//! Copy elimination: temporaries folded into their readers must keep the
//! order and the conditions of calls, loads and stores (short-circuit
//! operands and `select` arms, aliased stores, address-taken locals and
//! parameters). Each probe compares the compiled C and the interpreter with
//! plain Rust.
//!
//! Probes that expose engine bugs are `#[ignore = "engine bug: ..."]` with a
//! comment saying how the engine goes wrong; the others cover ground the
//! rest of the suite does not.

use crate::common;
use crate::probe_harness;

use augur::exec::compile::CompileOptions;
use augur::{Dyn, ExternFn, Value};
use common::{Buf, Check};
use probe_harness::{bufs, diff, register, rt_diff, BUMP, PUT, RUNTIME_C};

/// A call whose result feeds `and`: the call happened unconditionally in
/// the first stage, so it must happen unconditionally in C.
// Mechanism: `b = rv_bump(p) > 0` is a temporary read once, by `c = a && b`.
// passes/copy_elim.rs:59-113 (`find_reader`, `reader_ok`) checks what lies
// *between* the definition and the reader, but not *where* in the reader the
// use sits: the use is the right operand of `&&`, which C evaluates only when
// `a` holds. The first stage made the call unconditionally; C now makes it
// only when `arg1` is true. The interpreter short-circuits the same way, so
// only the Rust reference notices.
// C: `return arg1 && rv_bump(arg0) > 0 ? 10 : 20;`
// Fix: in `find_top_use`, refuse (or stop the search at) a use under the
// right operand of `And`/`Or` or under either arm of `Select` when the folded
// expression has a call (also worth refusing for memory reads/division if
// faults should be kept).
#[test]
#[augur::staged]
fn copy_elim_call_into_and_rhs() {
    let o = rt_diff(
        "call_and",
        |p: Dyn<*mut i32>, a: Dyn<bool>| {
            let b = BUMP.call(p).gt(0);
            let c = a.and(b);
            Dyn::select(c, 10, 20)
        },
        |(p, a): &mut (Buf<i32>, bool)| {
            p.0[0] += 1;
            if *a && p.0[0] > 0 {
                10
            } else {
                20
            }
        },
        &bufs(&[0, 5, -5]),
    );
    println!("{}", o.code);
    o.assert_ok();
}

/// The same through `&` on `Dyn<bool>` (Rust's non-short-circuit `&`).
// Same mechanism as `copy_elim_call_into_and_rhs`: stage/ops.rs `logical_for`
// maps Rust's non-short-circuit `&`/`|` on bools to C `&&`/`||`, then
// copy_elim.rs folds the call into the short-circuited operand.
#[test]
#[augur::staged]
fn copy_elim_call_into_bitand_bool() {
    let o = rt_diff(
        "call_bitand",
        |p: Dyn<*mut i32>, a: Dyn<bool>| {
            let c = a & BUMP.call(p).gt(0);
            Dyn::select(c, 10, 20)
        },
        |(p, a): &mut (Buf<i32>, bool)| {
            p.0[0] += 1;
            if *a & (p.0[0] > 0) {
                10
            } else {
                20
            }
        },
        &bufs(&[0, 5, -5]),
    );
    o.assert_ok();
}

/// A call whose result is one arm of `select`.
// Same mechanism as `copy_elim_call_into_and_rhs`, with `Select`:
// C: `return arg1 ? rv_bump(arg0) : -1;` (the bump is lost when `arg1` is false).
#[test]
#[augur::staged]
fn copy_elim_call_into_select_arm() {
    let o = rt_diff(
        "call_select",
        |p: Dyn<*mut i32>, a: Dyn<bool>| {
            let v = BUMP.call(p);
            Dyn::select(a, v, -1)
        },
        |(p, a): &mut (Buf<i32>, bool)| {
            p.0[0] += 1;
            if *a {
                p.0[0]
            } else {
                -1
            }
        },
        &bufs(&[0, 5, -5]),
    );
    println!("{}", o.code);
    o.assert_ok();
}

/// Reads of an address-taken local must not move across an extern call
/// that writes it through the pointer.
#[test]
#[augur::staged]
fn copy_elim_addr_taken_local_across_call() {
    let o = rt_diff(
        "addr_local",
        |n: Dyn<i32>| {
            let x = Dyn::new(n);
            let px = x.addr();
            let before = x + 1;
            PUT.call(px, 100);
            let after = x + 0;
            before * 1000 + after
        },
        |&mut (n,): &mut (i32,)| n.wrapping_add(1).wrapping_mul(1000).wrapping_add(100),
        &[(0,), (1,), (-7,), (99,), (123456,)],
    );
    o.assert_ok();
}

/// A load from `p[1]` must not move past a store through another pointer
/// to the same element, nor past a call that writes it.
#[test]
#[augur::staged]
fn copy_elim_load_across_alias_store_and_call() {
    let o = rt_diff(
        "alias_store",
        |p: Dyn<*mut i32>, v: Dyn<i32>| {
            let a = p.at(1);
            p.offset(1).deref().set(v);
            let b = p.at(1);
            PUT.call(p.offset(1), v * 2);
            let c = p.at(1);
            a * 10000 + b * 100 + c
        },
        |(p, v): &mut (Buf<i32>, i32)| {
            let a = p.0[1];
            p.0[1] = *v;
            let b = p.0[1];
            p.0[1] = v.wrapping_mul(2);
            a.wrapping_mul(10000)
                .wrapping_add(b.wrapping_mul(100))
                .wrapping_add(p.0[1])
        },
        &[
            (Buf(vec![0, 1]), 2),
            (Buf(vec![0, 7]), -3),
            (Buf(vec![9, 9]), 0),
            (Buf(vec![0, -1]), 11),
            (Buf(vec![5, 42]), 42),
        ],
    );
    o.assert_ok();
}

/// C leaves the order of a call and a load in one expression open: the
/// load recorded before the call must see the old value, the one recorded
/// after the call the new one.
#[test]
#[augur::staged]
fn copy_elim_call_and_load_order() {
    let o = rt_diff(
        "call_load",
        |p: Dyn<*mut i32>| {
            let a = p.at(0);
            let b = BUMP.call(p);
            let c = p.at(0);
            (a * 100 + b) * 100 + c
        },
        |(p,): &mut (Buf<i32>,)| {
            let a = p.0[0];
            p.0[0] += 1;
            let b = p.0[0];
            (a * 100 + b) * 100 + p.0[0]
        },
        &[
            (Buf(vec![0]),),
            (Buf(vec![1]),),
            (Buf(vec![-3]),),
            (Buf(vec![7]),),
            (Buf(vec![20]),),
        ],
    );
    o.assert_ok();
}

/// A comparison computed before an assignment to what it reads, used as
/// an `if` condition after it.
#[test]
#[augur::staged]
fn copy_elim_condition_across_assignment() {
    let o = diff(
        &Check::default(),
        "cond_assign",
        |x: Dyn<i32>| {
            let pos = x.gt(0);
            x.set(-x);
            let r = Dyn::new(0);
            if pos.is_true() {
                r.set(x);
            } else {
                r.set(x * 2);
            }
            r
        },
        |&mut (x,): &mut (i32,)| {
            let pos = x > 0;
            let x = x.wrapping_neg();
            if pos {
                x
            } else {
                x.wrapping_mul(2)
            }
        },
        &[(0,), (1,), (-1,), (5,), (i32::MIN,)],
    );
    o.assert_ok_no_goto();
}

/// Two calls as the operands of one operator, and a call inside a call.
#[test]
#[augur::staged]
fn copy_elim_two_calls_in_one_expression() {
    const SUB: ExternFn<fn(i32, i32) -> i32> = ExternFn::new("rv_sub");
    let check = Check {
        opts: CompileOptions {
            extra_c: vec![
                RUNTIME_C.to_string(),
                "#include <stdint.h>\nint32_t rv_sub(int32_t a, int32_t b) { return a - b; }\n"
                    .to_string(),
            ],
            ..CompileOptions::default()
        },
        setup: |it| {
            register(it);
            it.register("rv_sub", |_, a| {
                Ok(Value::I32(
                    (a[0].as_i64().unwrap() - a[1].as_i64().unwrap()) as i32,
                ))
            });
        },
        ..Check::default()
    };
    let o = diff(
        &check,
        "two_calls",
        |p: Dyn<*mut i32>| {
            let d = BUMP.call(p) * 10 - BUMP.call(p);
            let e = SUB.call(BUMP.call(p), BUMP.call(p));
            d * 100 + e
        },
        |(p,): &mut (Buf<i32>,)| {
            let mut bump = || {
                p.0[0] += 1;
                p.0[0]
            };
            let d = bump() * 10 - bump();
            let e = bump() - bump();
            d * 100 + e
        },
        &[
            (Buf(vec![0]),),
            (Buf(vec![1]),),
            (Buf(vec![-3]),),
            (Buf(vec![7]),),
            (Buf(vec![20]),),
        ],
    );
    o.assert_ok_no_goto();
}

/// A load through a pointer to a local, then a plain assignment to that
/// local by name: the load must not move past the assignment.
// Mechanism: `old = *px` reads memory. passes/effects.rs:35-38 counts
// `x = ...` as a write of the variable `x` only (`writes_memory` is set for
// stores through places that are not variables), and copy_elim.rs:81-83 lets
// a memory read move past any statement that neither writes memory, calls,
// nor writes a variable the expression names (`px`, not `x`). `x` is
// address-taken, so its assignment *is* a store to the memory `*px` reads.
// C: `var0 = arg0 * 2 + 1; return *var1 * 1000 + *var1;` (old value lost).
// Fix: in `effects::add`, an Assign/Decl of a variable with `addr_taken`
// also sets `writes_memory`.
#[test]
#[augur::staged]
fn copy_elim_deref_across_assignment_to_pointee() {
    let o = diff(
        &Check::default(),
        "deref_assign",
        |n: Dyn<i32>| {
            let x = Dyn::new(n);
            let px = x.addr();
            let old = px.deref();
            x.set(n * 2 + 1);
            old * 1000 + px.deref()
        },
        |&mut (n,): &mut (i32,)| {
            n.wrapping_mul(1000)
                .wrapping_add(n.wrapping_mul(2).wrapping_add(1))
        },
        &[(0,), (1,), (-7,), (99,), (123,)],
    );
    println!("{}", o.code);
    o.assert_ok();
}

/// The same with the pointer made from a parameter.
#[test]
#[augur::staged]
fn copy_elim_deref_across_assignment_to_param() {
    let o = diff(
        &Check::default(),
        "deref_param",
        |n: Dyn<i32>| {
            let pn = n.addr();
            let old = pn.deref() + 0;
            n.set(5);
            old
        },
        |&mut (n,): &mut (i32,)| n,
        &[(0,), (1,), (-7,), (99,), (123,)],
    );
    println!("{}", o.code);
    o.assert_ok();
}
