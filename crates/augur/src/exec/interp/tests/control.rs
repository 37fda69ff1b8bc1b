//! Calls and limits. Statements and variables are file tests
//! (`crates/augur/filetests/interp/`).

use super::*;
use BinOp::*;
use Value as V;

/// `fn sum(p: ty, n: i32) -> i32 { s = 0; for i in 0..n { s = s + p[i] } return s }`.
fn sum_function(param_ty: Type) -> Function {
    let mut b = B::new(I32);
    let (p, n) = (b.param("p", param_ty), b.param("n", I32));
    let (s, i) = (b.local("s", I32), b.local("i", I32));
    let zero = b.i32(0);
    let nv = b.v(n);
    let (sv, pv, iv) = (b.v(s), b.v(p), b.v(i));
    let elem = b.index(pv, iv);
    let add = b.bin(Add, sv, elem);
    let place = b.v(s);
    let lp = count(&mut b, i, nv, vec![assign(place, add)]);
    let sv = b.v(s);
    b.build(vec![decl(s, Some(zero)), lp, ret(sv)])
}

#[test]
fn call_checks_arguments() {
    let f = sum_function(ptr(I32));
    let msg = fails(run(&f, &[V::I32(1)]));
    assert!(msg.contains("takes 2 arguments, got 1"), "{msg}");
    let msg = fails(run(&f, &[V::Ptr(0), V::I64(1)]));
    assert!(msg.contains("parameter `n` has type i32"), "{msg}");
}

#[test]
fn errors_name_the_source_location() {
    let mut b = B::new(I32);
    let (one, zero) = (b.i32(1), b.i32(0));
    let q = b.bin(Div, one, zero);
    let mut st = ret(q);
    st.loc = Some(crate::ir::SrcLoc {
        file: "src/user.rs",
        line: 12,
        col: 5,
    });
    let f = b.build(vec![st]);
    assert_eq!(
        fails(run(&f, &[])),
        "division by zero (at src/user.rs:12:5)"
    );
}

#[test]
fn user_externs_and_overrides() {
    let mut b = B::new(I32);
    let x = b.param("x", I32);
    let xv = b.v(x);
    let t = b.call("triple", &[I32], I32, &[xv]);
    let a = b.call("abs", &[I32], I32, &[t]);
    let f = b.build(vec![ret(a)]);
    let mut it = Interpreter::new();
    assert!(fails(it.call(&f, &[V::I32(2)])).contains("unknown extern `triple`"));
    it.register("triple", |_, args| {
        Ok(V::I32(args[0].as_i64().unwrap() as i32 * 3))
    });
    assert_eq!(it.call(&f, &[V::I32(-2)]).unwrap(), V::I32(6));
    // A registered name overrides the built-in.
    it.register("abs", |_, _| Ok(V::I32(7)));
    assert_eq!(it.call(&f, &[V::I32(-2)]).unwrap(), V::I32(7));
    it.register("abs", |_, _| Ok(V::I64(7)));
    assert!(fails(it.call(&f, &[V::I32(-2)])).contains("declared to return i32"));
}

#[test]
fn extern_writes_through_memory() {
    // fill(p, n) is a host function; the IR then reads p[2].
    let mut b = B::new(I32);
    let p = b.param("p", ptr(I32));
    let (pv, three) = (b.v(p), b.i32(3));
    let call = b.call("fill", &[ptr(I32), I32], Type::Void, &[pv, three]);
    let (pv, two) = (b.v(p), b.i32(2));
    let elem = b.index(pv, two);
    let f = b.build(vec![eval(call), ret(elem)]);
    let mut it = Interpreter::new();
    it.register("fill", |mem, args| {
        mem.write_slice(args[0], &[10i32, 20, 30])?;
        Ok(V::Void)
    });
    let buf = it.memory_mut().alloc(12);
    assert_eq!(it.call(&f, &[buf]).unwrap(), V::I32(30));
}

#[test]
fn step_limit_stops_endless_loops() {
    let mut b = B::new(Type::Void);
    let t = b.c(Const::Bool(true), BOOL);
    let f = b.build(vec![while_(t, vec![])]);
    let mut it = Interpreter::new();
    it.set_step_limit(1000);
    assert!(fails(it.call(&f, &[])).contains("step limit of 1000"));
}

#[test]
fn millions_of_steps_run_under_the_default_limit() {
    // s = 0; for i in 0..n { s = s + (i ^ (i >> 3)) }: 4 statements an iteration.
    let mut b = B::new(I64);
    let n = b.param("n", I32);
    let (i, s) = (b.local("i", I32), b.local("s", I64));
    let zero = b.int(I64, 0);
    let (iv, iv2, three) = (b.v(i), b.v(i), b.i32(3));
    let sh = b.bin(Shr, iv2, three);
    let x = b.bin(BitXor, iv, sh);
    let x = b.cast(x, I64);
    let sv = b.v(s);
    let add = b.bin(Add, sv, x);
    let (place, nv) = (b.v(s), b.v(n));
    let lp = count(&mut b, i, nv, vec![assign(place, add)]);
    let sv = b.v(s);
    let f = b.build(vec![decl(s, Some(zero)), lp, ret(sv)]);
    let n = 1_000_000;
    let expect: i64 = (0..n).map(|i| (i ^ (i >> 3)) as i64).sum();
    // Four million statements stay under the default step limit; the
    // interpreter's speed is measured by `augur bench compile`.
    assert_eq!(run(&f, &[V::I32(n)]).unwrap(), V::I64(expect));
}
