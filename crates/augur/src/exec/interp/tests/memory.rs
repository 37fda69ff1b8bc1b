//! Memory as the host sees it, out parameters and the C library's memory
//! functions. The memory checks on IR are file tests
//! (`crates/augur/filetests/interp/memory/`).

use super::super::Memory;
use super::*;
use BinOp::*;
use Value as V;

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
