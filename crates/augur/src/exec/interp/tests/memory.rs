//! Pointers, allocations and the memory checks.

use super::super::Memory;
use super::*;
use BinOp::*;
use Value as V;

#[test]
fn address_of_and_deref_writes() {
    // x = 1; p = &x; *p = *p + 4; return x
    let mut b = B::new(I32);
    let x = b.addressed("x", I32);
    let p = b.local("p", ptr(I32));
    let one = b.i32(1);
    let xv = b.v(x);
    let ax = b.addr(xv);
    let (pv, pv2, four) = (b.v(p), b.v(p), b.i32(4));
    let (target, source) = (b.deref(pv), b.deref(pv2));
    let sum = b.bin(Add, source, four);
    let xv = b.v(x);
    let f = b.build(vec![
        decl(x, Some(one)),
        decl(p, Some(ax)),
        assign(target, sum),
        ret(xv),
    ]);
    assert_eq!(run(&f, &[]).unwrap(), V::I32(5));
}

#[test]
fn out_parameter_and_pointer_to_pointer() {
    // fn(out: *mut *mut f64, v: *mut f64) { *out = v + 1; **out = 2.5 }
    let mut b = B::new(Type::Void);
    let out = b.param("out", ptr(ptr(F64)));
    let v = b.param("v", ptr(F64));
    let (o1, vv, one) = (b.v(out), b.v(v), b.i32(1));
    let d1 = b.deref(o1);
    let moved = b.bin(Add, vv, one);
    let o2 = b.v(out);
    let d2 = b.deref(o2);
    let d3 = b.deref(d2);
    let val = b.c(Const::F64(2.5), F64);
    let f = b.build(vec![assign(d1, moved), assign(d3, val)]);
    let mut it = Interpreter::new();
    let slot = it.memory_mut().alloc(8);
    let data = it.memory_mut().alloc_slice(&[0.0f64, 0.0]);
    it.call(&f, &[slot, data]).unwrap();
    assert_eq!(it.memory().read_slice::<f64>(data, 2).unwrap(), [0.0, 2.5]);
    let stored = it.memory().load(slot, &ptr(F64)).unwrap();
    assert_eq!(stored, V::Ptr(data.as_ptr().unwrap() + 8));
}

/// `p = malloc(16); p[0] = 7; free(p); [free(p);] return p[0]`.
fn malloc_function(free_twice: bool) -> Function {
    let mut b = B::new(I32);
    let p = b.local("p", ptr(I32));
    let sixteen = b.int(U64, 16);
    let m = b.call("malloc", &[U64], ptr(Type::Void), &[sixteen]);
    let m = b.cast(m, ptr(I32));
    let (pv, zero, seven) = (b.v(p), b.i32(0), b.i32(7));
    let first = b.index(pv, zero);
    let pv = b.v(p);
    let pv = b.cast(pv, ptr(Type::Void));
    let fr = b.call("free", &[ptr(Type::Void)], Type::Void, &[pv]);
    let (pv, zero) = (b.v(p), b.i32(0));
    let again = b.index(pv, zero);
    let mut body = vec![decl(p, Some(m)), assign(first, seven), eval(fr)];
    if free_twice {
        body.push(eval(fr));
    }
    body.push(ret(again));
    b.build(body)
}

#[test]
fn malloc_free_and_use_after_free() {
    let msg = fails(run(&malloc_function(false), &[]));
    assert!(
        msg.contains("allocation 0 (malloc), which was freed"),
        "{msg}"
    );
    let msg = fails(run(&malloc_function(true), &[]));
    assert!(msg.contains("already freed"), "{msg}");
}

#[test]
fn out_of_bounds_local_array() {
    let mut b = B::new(I32);
    let a = b.local("a", array(I32, Some(10)));
    let (av, ten) = (b.v(a), b.i32(10));
    let e = b.index(av, ten);
    let f = b.build(vec![decl(a, None), ret(e)]);
    let msg = fails(run(&f, &[]));
    assert_eq!(
        msg,
        "load of 4 bytes at offset 40 of allocation 0 (size 40, local `a`)"
    );
    // Below the start too (the offset is signed).
    let mut b = B::new(I32);
    let a = b.local("a", array(I32, Some(10)));
    let (av, m1) = (b.v(a), b.i32(-1));
    let e = b.index(av, m1);
    let (av, zero, one) = (b.v(a), b.i32(0), b.i32(1));
    let first = b.index(av, zero);
    let f = b.build(vec![decl(a, None), assign(first, one), assign(e, one)]);
    b_fail_contains(&f, "store of 4 bytes at offset -4 of allocation 0");
}

fn b_fail_contains(f: &Function, what: &str) {
    let msg = fails(run(f, &[]));
    assert!(msg.contains(what), "{msg}");
}

#[test]
fn uninitialized_memory_is_caught() {
    // a: [i32; 4]; a[0] = 1; return a[1]
    let mut b = B::new(I32);
    let a = b.local("a", array(I32, Some(4)));
    let (av, zero, one) = (b.v(a), b.i32(0), b.i32(1));
    let first = b.index(av, zero);
    let (av, one_i) = (b.v(a), b.i32(1));
    let second = b.index(av, one_i);
    let f = b.build(vec![decl(a, None), assign(first, one), ret(second)]);
    b_fail_contains(&f, "reads uninitialized memory");
}

#[test]
fn pointers_to_ended_scopes_dangle() {
    // p = NULL; if (true) { x = 1 (addressed); p = &x; } return *p
    let mut b = B::new(I32);
    let p = b.local("p", ptr(I32));
    let x = b.addressed("x", I32);
    let null = b.c(Const::Null, ptr(I32));
    let (t, one, xv) = (b.c(Const::Bool(true), BOOL), b.i32(1), b.v(x));
    let ax = b.addr(xv);
    let pp = b.v(p);
    let pv = b.v(p);
    let d = b.deref(pv);
    let inner = vec![decl(x, Some(one)), assign(pp, ax)];
    let f = b.build(vec![decl(p, Some(null)), if_(t, inner, vec![]), ret(d)]);
    b_fail_contains(&f, "local `x`), which is out of scope");
}

#[test]
fn arrays_declared_in_a_loop_are_fresh_each_iteration() {
    // for i in 0..3 { a: [i32; 2]; a[0] = i; s = s + a[0] }: a is reused,
    // and a[1] is uninitialised again each time.
    let mut b = B::new(I32);
    let (i, sum) = (b.local("i", I32), b.local("s", I32));
    let a = b.local("a", array(I32, Some(2)));
    let (av, zero, iv) = (b.v(a), b.i32(0), b.v(i));
    let first = b.index(av, zero);
    let (av, zero, sv) = (b.v(a), b.i32(0), b.v(sum));
    let read = b.index(av, zero);
    let add = b.bin(Add, sv, read);
    let (splace, three, z) = (b.v(sum), b.i32(3), b.i32(0));
    let body = vec![decl(a, None), assign(first, iv), assign(splace, add)];
    let lp = count(&mut b, i, three, body);
    let sv = b.v(sum);
    let f = b.build(vec![decl(sum, Some(z)), lp, ret(sv)]);
    let mut it = Interpreter::new();
    assert_eq!(it.call(&f, &[]).unwrap(), V::I32(3));
}

#[test]
fn variable_length_array() {
    // a: [i64] with n elements; a[n - 1] = 5; return a[n - 1]
    let mut b = B::new(I64);
    let n = b.param("n", I32);
    let a = b.local("a", array(I64, None));
    let nv = b.v(n);
    let (av, nv2, one) = (b.v(a), b.v(n), b.i32(1));
    let last = b.bin(Sub, nv2, one);
    let place = b.index(av, last);
    let five = b.int(I64, 5);
    let read = b.f.deep_copy(place);
    let f = b.build(vec![decl(a, Some(nv)), assign(place, five), ret(read)]);
    assert_eq!(run(&f, &[V::I32(7)]).unwrap(), V::I64(5));
}

#[test]
fn pointer_arithmetic_difference_and_comparison() {
    // fn(p: *mut i32) -> i64 { q = p + 3; if (q > p && q - 1 != p) return q - p; return -1 }
    let mut b = B::new(I64);
    let p = b.param("p", ptr(I32));
    let q = b.local("q", ptr(I32));
    let (pv, three) = (b.v(p), b.i32(3));
    let moved = b.bin(Add, pv, three);
    let (qv, pv) = (b.v(q), b.v(p));
    let gt = b.bin(Gt, qv, pv);
    let (qv, one, pv) = (b.v(q), b.i32(1), b.v(p));
    let back = b.bin(Sub, qv, one);
    let ne = b.bin(Ne, back, pv);
    let both = b.bin(And, gt, ne);
    let (qv, pv) = (b.v(q), b.v(p));
    let diff = b.f.expr(Expr::Binary(Sub, qv, pv), I64);
    let m1 = b.int(I64, -1);
    let f = b.build(vec![
        decl(q, Some(moved)),
        if_(both, vec![ret(diff)], vec![]),
        ret(m1),
    ]);
    let mut it = Interpreter::new();
    let xs = it.memory_mut().alloc_slice(&[0i32; 4]);
    assert_eq!(it.call(&f, &[xs]).unwrap(), V::I64(3));
    // Different allocations cannot be subtracted.
    let mut b = B::new(I64);
    let (p, q) = (b.param("p", ptr(I32)), b.param("q", ptr(I32)));
    let (pv, qv) = (b.v(p), b.v(q));
    let diff = b.f.expr(Expr::Binary(Sub, pv, qv), I64);
    let f = b.build(vec![ret(diff)]);
    let ys = it.memory_mut().alloc_slice(&[0i32; 4]);
    assert!(fails(it.call(&f, &[xs, ys])).contains("different allocations"));
}

#[test]
fn string_literals_are_read_only() {
    let mut b = B::new(Type::Void);
    let (lit, zero) = (b.str("abc"), b.i32(0));
    let lit = b.cast(lit, ptr(CHAR));
    let place = b.index(lit, zero);
    let x = b.int(CHAR, 65);
    let f = b.build(vec![assign(place, x)]);
    b_fail_contains(&f, "into a string literal");
}

#[test]
fn memcpy_memset_calloc() {
    // fn(dst: *mut u8, src: *mut u8) -> i32 { memset(dst, 1, 4); memcpy(dst, src, 2);
    //   c = calloc(3, 4); return ((int*)c)[2] + dst[3] }
    let mut b = B::new(I32);
    let (dst, src) = (
        b.param("dst", ptr(Type::Scalar(Scalar::U8))),
        b.param("src", ptr(Type::Scalar(Scalar::U8))),
    );
    let vp = ptr(Type::Void);
    let (d, one, four) = (b.v(dst), b.i32(1), b.int(U64, 4));
    let d = b.cast(d, vp);
    let ms = b.call("memset", &[vp, I32, U64], vp, &[d, one, four]);
    let (d, sr, two) = (b.v(dst), b.v(src), b.int(U64, 2));
    let (d, sr) = (b.cast(d, vp), b.cast(sr, vp));
    let mc = b.call("memcpy", &[vp, vp, U64], vp, &[d, sr, two]);
    let (n, each) = (b.int(U64, 3), b.int(U64, 4));
    let c = b.call("calloc", &[U64, U64], vp, &[n, each]);
    let c = b.cast(c, ptr(I32));
    let two = b.i32(2);
    let elem = b.index(c, two);
    let (dv, three) = (b.v(dst), b.i32(3));
    let last = b.index(dv, three);
    let last = b.cast(last, I32);
    let sum = b.bin(Add, elem, last);
    let f = b.build(vec![eval(ms), eval(mc), ret(sum)]);
    let mut it = Interpreter::new();
    let dst = it.memory_mut().alloc(4);
    let src = it.memory_mut().alloc_slice(&[9u8, 8]);
    assert_eq!(it.call(&f, &[dst, src]).unwrap(), V::I32(1));
    assert_eq!(it.memory().read_slice::<u8>(dst, 4).unwrap(), [9, 8, 1, 1]);
    assert_eq!(it.memory().live_heap_blocks(), 1);
}

#[test]
fn memcpy_rejects_overlap() {
    let mut b = B::new(Type::Void);
    let p = b.param("p", ptr(Type::Void));
    let (d, one) = (b.v(p), b.i32(1));
    let d = b.cast(d, ptr(Type::Scalar(Scalar::U8)));
    let d1 = b.bin(Add, d, one);
    let d1 = b.cast(d1, ptr(Type::Void));
    let (sr, n) = (b.v(p), b.int(U64, 4));
    let vp = ptr(Type::Void);
    let mc = b.call("memcpy", &[vp, vp, U64], vp, &[d1, sr, n]);
    let f = b.build(vec![eval(mc)]);
    let mut it = Interpreter::new();
    let buf = it.memory_mut().alloc(8);
    assert!(fails(it.call(&f, &[buf])).contains("overlapping"));
}

#[test]
fn host_memory_helpers() {
    let mut m = Memory::new();
    let p = m.alloc_slice(&[1.5f32, -2.0]);
    assert_eq!(m.read_slice::<f32>(p, 2).unwrap(), [1.5, -2.0]);
    m.write_slice(p, &[3.0f32]).unwrap();
    assert_eq!(m.load(p, &F32).unwrap(), V::F32(3.0));
    assert_eq!(m.allocation_size(p), Some(8));
    let msg = m.read_slice::<f32>(p, 3).unwrap_err().to_string();
    assert!(
        msg.contains("load of 4 bytes at offset 8 of allocation 0 (size 8, host buffer)"),
        "{msg}"
    );
    let s = m.alloc_cstr("hi");
    assert_eq!(m.read_cstr(s).unwrap(), b"hi");
    let flags = m.alloc_slice(&[true, false]);
    m.store(flags, V::U8(2)).unwrap();
    assert!(m
        .read_slice::<bool>(flags, 1)
        .unwrap_err()
        .to_string()
        .contains("not 0 or 1"));
    m.free(p).unwrap();
    assert!(m.free(p).is_err());
    assert_eq!(m.allocation_size(p), None);
    assert!(m.free(V::Ptr(0)).is_ok());
    assert!(m
        .load(V::Ptr(0), &I32)
        .unwrap_err()
        .to_string()
        .contains("null pointer"));
}

#[test]
fn locals_die_when_the_call_returns() {
    // fn() -> *mut i32 { x = 3 (addressed); return &x }
    let mut b = B::new(ptr(I32));
    let x = b.addressed("x", I32);
    let (three, xv) = (b.i32(3), b.v(x));
    let ax = b.addr(xv);
    let f = b.build(vec![decl(x, Some(three)), ret(ax)]);
    let mut it = Interpreter::new();
    let p = it.call(&f, &[]).unwrap();
    let msg = it.memory().load(p, &I32).unwrap_err().to_string();
    assert!(msg.contains("local `x`), which is out of scope"), "{msg}");
}
