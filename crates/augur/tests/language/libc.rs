//! The C library a DSL needs (`augur::libc`): `realloc`, `memmove`,
//! `memcmp`, `strlen`/`strcmp`/`strncmp`, `qsort` with a staged comparator,
//! `exit` and `abort`. Each runs compiled by the C compiler and by the JIT,
//! and interpreted, against plain Rust; the interpreter's errors for what C
//! leaves undefined are asserted with their messages. `exit` and `abort`
//! end a compiled program's process, so they run in a child process.

use crate::common::{self, Buf, Check};
use augur::exec::{Backend, CompileOptions};
use augur::ir::{Scalar, Type};
use augur::libc::{self, Comparator};
use augur::{
    Builder, CChar, CompiledModule, Dyn, Error, ExtractedModule, Func, Interpreter, Module, Value,
};
use common::{assert_contains, Rng};
use std::cmp::Ordering;

/// `check` on C and on the JIT (each against the interpreter and Rust).
#[track_caller]
fn check_c_and_jit<M, F, A, R>(name: &str, f: F, reference: impl Fn(&mut A) -> R, inputs: &[A])
where
    F: augur::stage::signature::StagedFn<M> + Clone,
    F::Native: common::Invoke<A, Out = R>,
    A: common::Args,
    R: common::Ret,
{
    for backend in [Backend::C, Backend::Jit] {
        Check {
            opts: CompileOptions::default().with_backend(backend),
            ..Check::default()
        }
        .run(name, f.clone(), &reference, inputs);
    }
}

#[augur::staged]
fn compiled(ex: &ExtractedModule) -> [CompiledModule; 2] {
    [Backend::C, Backend::Jit].map(|b| {
        ex.compile_with(&CompileOptions::default().with_backend(b))
            .unwrap_or_else(|e| panic!("{b:?}: {e}\n{}", ex.c_code()))
    })
}

/// `-1`, `0` or `1` as `c` is below, equal to or above zero.
#[augur::staged]
fn sign(c: Dyn<i32>) -> Dyn<i32> {
    c.gt(0).cast::<i32>() - c.lt(0).cast::<i32>()
}

// ----- realloc -----

/// A growable vector: capacity doubled by `realloc` whenever it is full,
/// every element pushed kept through the moves. The result weighs each
/// element by its place and adds the final capacity.
#[test]
#[augur::staged]
fn realloc_grows_a_vector_and_keeps_its_elements() {
    let grow = |xs: Dyn<*mut i32>, n: Dyn<i32>| {
        let cap = Dyn::new(1);
        let len = Dyn::new(0);
        let data = Dyn::new(libc::MALLOC.call(4u64).cast_ptr::<*mut i32>());
        let i = Dyn::new(0);
        while i.lt(n).is_true() {
            if len.eq(cap).is_true() {
                cap.set(cap * 2);
                let bytes = cap.cast::<u64>() * 4;
                data.set(
                    libc::REALLOC
                        .call(data.cast_ptr::<*mut u8>(), bytes)
                        .cast_ptr::<*mut i32>(),
                );
            }
            data.at(len).set(xs.at(i) * 3);
            len.set(len + 1);
            i.set(i + 1);
        }
        let s = Dyn::new(0i64);
        i.set(0);
        while i.lt(len).is_true() {
            s.set(s + (i + 1).cast::<i64>() * data.at(i).cast::<i64>());
            i.set(i + 1);
        }
        libc::FREE.call(data.cast_ptr::<*mut u8>());
        s + cap.cast::<i64>() * 1_000_000
    };
    let reference = |(xs, n): &mut (Buf<i32>, i32)| {
        let n = *n as usize;
        let s: i64 = (xs.0[..n].iter().enumerate())
            .map(|(i, &x)| (i as i64 + 1) * (x as i64 * 3))
            .sum();
        s + n.max(1).next_power_of_two() as i64 * 1_000_000
    };
    let xs: Vec<i32> = (0..100).map(|i| (i * 37 % 101) - 50).collect();
    let inputs: Vec<(Buf<i32>, i32)> = [0, 1, 2, 3, 5, 8, 9, 100]
        .iter()
        .map(|&n| (Buf(xs.clone()), n))
        .collect();
    check_c_and_jit("grow", grow, reference, &inputs);
    let ex = common::extract("grow", grow);
    assert_contains(&ex.c_code(), &["#include <stdlib.h>", "realloc("]);

    // The interpreter: no block leaks, and every grown block was moved.
    let mut it = Interpreter::new();
    let p = it.memory_mut().alloc_slice(&xs);
    ex.interpret_in(&mut it, &[p, 100.into()]).unwrap();
    assert_eq!(it.memory().live_heap_blocks(), 0);
}

/// What C leaves undefined about `realloc`, and a use of the old pointer
/// after the block moved.
#[test]
#[augur::staged]
fn realloc_errors_in_the_interpreter() {
    // `realloc` of the address of a local array.
    let local = common::extract("local", |x: Dyn<i32>| {
        let a = Dyn::<[i32; 4]>::uninit();
        a.at(0).set(x);
        let p = libc::REALLOC.call(a.at(0).addr().cast_ptr::<*mut u8>(), 32u64);
        p.cast_ptr::<*mut i32>().at(0)
    });
    let e = local.interpret(&[1.into()]).unwrap_err().to_string();
    assert!(e.contains("realloc of allocation"), "{e}");
    assert!(e.contains("which was not allocated by malloc"), "{e}");

    // Of a pointer given by the host, into a block's middle, of a freed
    // block, to 0 bytes; and a read through the old pointer.
    let f = common::extract("re", |p: Dyn<*mut u8>, n: Dyn<u64>| {
        libc::REALLOC.call(p, n)
    });
    let mut it = Interpreter::new();
    let host = it.memory_mut().alloc_slice(&[1u8, 2, 3]);
    let e = f.interpret_in(&mut it, &[host, 8u64.into()]).unwrap_err();
    assert!(
        e.to_string()
            .contains("which the host made (Memory::alloc), not malloc"),
        "{e}"
    );
    let use_after = common::extract("use_after", |n: Dyn<u64>| {
        let p = libc::MALLOC.call(4u64);
        p.at(0).set(7u8);
        let q = libc::REALLOC.call(p, n);
        let kept = q.at(0);
        libc::FREE.call(q);
        kept + p.at(0)
    });
    let e = use_after
        .interpret(&[16u64.into()])
        .unwrap_err()
        .to_string();
    assert!(e.contains("which was freed"), "{e}");
    let e = use_after.interpret(&[0u64.into()]).unwrap_err().to_string();
    assert!(e.contains("to 0 bytes, which C17 leaves"), "{e}");
    let middle = common::extract("middle", |n: Dyn<u64>| {
        let p = libc::MALLOC.call(8u64);
        libc::REALLOC.call(p.offset(2), n)
    });
    let e = middle.interpret(&[16u64.into()]).unwrap_err().to_string();
    assert!(e.contains("a pointer into the middle of the block"), "{e}");
    let twice = common::extract("twice", |n: Dyn<u64>| {
        let p = libc::MALLOC.call(8u64);
        libc::FREE.call(p);
        libc::REALLOC.call(p, n)
    });
    let e = twice.interpret(&[16u64.into()]).unwrap_err().to_string();
    assert!(e.contains("which was already freed"), "{e}");
    // realloc(NULL, n) is malloc(n); the bytes kept, the rest uninitialised.
    let null = common::extract("null", |n: Dyn<u64>| {
        let p = libc::REALLOC.call(Dyn::<*mut u8>::null(), 2u64);
        p.at(0).set(5u8);
        p.at(1).set(6u8);
        let q = libc::REALLOC.call(p, n);
        let r = q.at(0) + q.at(n - 1);
        libc::FREE.call(q);
        r
    });
    assert_eq!(null.interpret(&[2u64.into()]).unwrap(), Value::U8(11));
    let e = null.interpret(&[3u64.into()]).unwrap_err().to_string();
    assert!(e.contains("reads uninitialized memory"), "{e}");
}

// ----- memmove, memcmp -----

/// `memmove` of `k` elements from `from` to `to` in one buffer, in both
/// directions and overlapping, against `copy_within`.
#[test]
#[augur::staged]
fn memmove_moves_overlapping_regions() {
    let shift = |xs: Dyn<*mut i32>, from: Dyn<i32>, to: Dyn<i32>, k: Dyn<i32>| {
        let d = libc::MEMMOVE.call(
            xs.offset(to).cast_ptr::<*mut u8>(),
            xs.offset(from).cast_ptr::<*const u8>(),
            k.cast::<u64>() * 4,
        );
        // memmove returns its destination.
        d.cast_ptr::<*mut i32>().at(0) - xs.at(to)
    };
    let reference = |(xs, from, to, k): &mut (Buf<i32>, i32, i32, i32)| {
        let (from, to, k) = (*from as usize, *to as usize, *k as usize);
        xs.0.copy_within(from..from + k, to);
        0
    };
    let xs = Buf((1..=10).collect::<Vec<i32>>());
    let inputs = [
        (xs.clone(), 0, 3, 7),
        (xs.clone(), 3, 0, 7),
        (xs.clone(), 2, 3, 5),
        (xs.clone(), 4, 4, 6),
        (xs.clone(), 0, 9, 1),
        (xs.clone(), 5, 1, 0),
    ];
    check_c_and_jit("shift", shift, reference, &inputs);

    // The same copy with memcpy is the interpreter's error.
    let f = common::extract("copy", |xs: Dyn<*mut i32>| {
        libc::MEMCPY.call(
            xs.offset(1).cast_ptr::<*mut u8>(),
            xs.cast_ptr::<*const u8>(),
            8u64,
        );
    });
    let mut it = Interpreter::new();
    let p = it.memory_mut().alloc_slice(&[1, 2, 3]);
    let e = f.interpret_in(&mut it, &[p]).unwrap_err().to_string();
    assert!(e.contains("overlapping regions"), "{e}");
}

/// `memcmp`'s sign against Rust's slice order: bytes compare unsigned, the
/// first difference decides, `n` = 0 is equal.
#[test]
#[augur::staged]
fn memcmp_orders_bytes_unsigned() {
    let cmp = |a: Dyn<*mut u8>, b: Dyn<*mut u8>, n: Dyn<u64>| {
        sign(libc::MEMCMP.call(a.cast_ptr::<*const u8>(), b.cast_ptr::<*const u8>(), n))
    };
    let reference = |(a, b, n): &mut (Buf<u8>, Buf<u8>, u64)| {
        a.0[..*n as usize].cmp(&b.0[..*n as usize]) as i32
    };
    let a = vec![1u8, 2, 3, 0x80, 5];
    let inputs = [
        (Buf(a.clone()), Buf(a.clone()), 5),
        (Buf(a.clone()), Buf(vec![1, 2, 3, 0x01, 5]), 5),
        (Buf(a.clone()), Buf(vec![1, 2, 3, 0xff, 0]), 5),
        (Buf(a.clone()), Buf(vec![1, 2, 3, 0x80, 6]), 5),
        (Buf(a.clone()), Buf(vec![1, 2, 3, 0x80, 6]), 4),
        (Buf(a.clone()), Buf(vec![9, 9, 9, 9, 9]), 0),
        (Buf(vec![0xff; 5]), Buf(vec![0; 5]), 1),
    ];
    check_c_and_jit("cmp", cmp, reference, &inputs);

    // Past an allocation, and a struct's padding (never written: C reads
    // indeterminate bytes there, the classic memcmp-of-structs bug).
    let f = common::extract("cmp", cmp);
    let mut it = Interpreter::new();
    let x = it.memory_mut().alloc_slice(&[1u8, 2, 3]);
    let y = it.memory_mut().alloc_slice(&[1u8, 2, 3, 4]);
    let e = f
        .interpret_in(&mut it, &[x, y, 4u64.into()])
        .unwrap_err()
        .to_string();
    assert!(e.contains("memcmp read of 4 bytes at offset 0"), "{e}");
    assert!(e.contains("(size 3, host buffer)"), "{e}");
    let recs = [Rec {
        key: 1,
        weight: 2.0,
    }];
    let (r, s) = (
        it.memory_mut().alloc_slice(&recs),
        it.memory_mut().alloc_slice(&recs),
    );
    let e = f
        .interpret_in(&mut it, &[r, s, 16u64.into()])
        .unwrap_err()
        .to_string();
    assert!(e.contains("reads uninitialized memory"), "{e}");
    assert_eq!(
        f.interpret_in(&mut it, &[r, s, 4u64.into()]).unwrap(),
        0.into()
    );
}

// ----- strings -----

/// `strlen`, `strcmp` and `strncmp` against Rust on NUL-terminated bytes.
#[test]
#[augur::staged]
fn strlen_strcmp_and_strncmp_read_up_to_the_nul() {
    let f = |a: Dyn<*mut u8>, b: Dyn<*mut u8>, n: Dyn<u64>| {
        let (a, b) = (a.cast_ptr::<*const CChar>(), b.cast_ptr::<*const CChar>());
        let len = libc::STRLEN.call(a).cast::<i64>();
        len * 100
            + sign(libc::STRCMP.call(a, b)).cast::<i64>() * 10
            + sign(libc::STRNCMP.call(a, b, n)).cast::<i64>()
    };
    let reference = |(a, b, n): &mut (Buf<u8>, Buf<u8>, u64)| {
        let str_of = |v: &[u8]| {
            std::ffi::CStr::from_bytes_until_nul(v)
                .unwrap()
                .to_bytes()
                .to_vec()
        };
        let (x, y) = (str_of(&a.0), str_of(&b.0));
        let n = *n as usize;
        let prefix = |v: &[u8]| v[..v.len().min(n)].to_vec();
        x.len() as i64 * 100 + x.cmp(&y) as i64 * 10 + prefix(&x).cmp(&prefix(&y)) as i64
    };
    let s = |t: &str| Buf(t.bytes().chain([0]).collect::<Vec<u8>>());
    let inputs = [
        (s("hello"), s("hello"), 5),
        (s("hello"), s("help"), 3),
        (s("hello"), s("help"), 4),
        (s("ab"), s("abc"), 2),
        (s("abc"), s("ab"), 10),
        (s(""), s("x"), 0),
        (s("\u{e9}t\u{e9}"), s("ete"), 1),
        (Buf(b"ab\0zz\0".to_vec()), s("ab"), 6),
    ];
    check_c_and_jit("strings", f, reference, &inputs);

    // A string with no NUL in its allocation, and a NUL found in time.
    let len = common::extract("len", |a: Dyn<*const CChar>| libc::STRLEN.call(a));
    let mut it = Interpreter::new();
    let bytes = it.memory_mut().alloc_slice(b"abc");
    let e = len.interpret_in(&mut it, &[bytes]).unwrap_err().to_string();
    assert!(
        e.contains("strlen of a string with no NUL: it starts at offset 0 of allocation"),
        "{e}"
    );
    assert!(
        e.contains("(host buffer, size 3), which ends before a NUL"),
        "{e}"
    );
    let cmp = common::extract("cmp", |a: Dyn<*const CChar>, b: Dyn<*const CChar>| {
        libc::STRCMP.call(a, b)
    });
    let abc = it.memory_mut().alloc_cstr("abc");
    let e = cmp
        .interpret_in(&mut it, &[abc, bytes])
        .unwrap_err()
        .to_string();
    assert!(e.contains("strcmp of a string with no NUL"), "{e}");
    let abd = it.memory_mut().alloc_slice(b"abd");
    // The first difference comes before the end: no NUL is needed.
    let got = cmp.interpret_in(&mut it, &[bytes, abd]).unwrap();
    assert_eq!(got, Value::I32(i32::from(b'c') - i32::from(b'd')));
}

// ----- qsort -----

/// A record with padding between its fields (4 bytes after `key`).
#[derive(augur::Staged, Clone, Copy, Debug, PartialEq)]
#[repr(C)]
struct Rec {
    key: i32,
    weight: f64,
}

/// Rust's order of [`Rec`]s: by key, then by weight, heaviest first.
fn rec_order(a: &Rec, b: &Rec) -> Ordering {
    a.key
        .cmp(&b.key)
        .then(b.weight.partial_cmp(&a.weight).unwrap())
}

type SortInts = Func<fn(*mut i32, u64, bool)>;
type SortRecs = Func<fn(*mut Rec, u64)>;
type SortWith = Func<fn(*mut i32, u64, Comparator)>;

/// Sorts of `i32`s (ascending or descending, the comparator chosen by a dyn
/// flag), of [`Rec`]s, and of `i32`s by a comparator passed in.
#[augur::staged]
fn sort_module() -> (Module<'static>, SortInts, SortRecs, SortWith) {
    let mut m = Builder::new().module();
    let up: Func<fn(*const u8, *const u8) -> i32> = m.declare("up");
    let down: Func<fn(*const u8, *const u8) -> i32> = m.declare("down");
    let by_rec: Func<fn(*const u8, *const u8) -> i32> = m.declare("by_rec");
    let sort_ints: SortInts = m.declare("sort_ints");
    let sort_recs: SortRecs = m.declare("sort_recs");
    let sort_with: SortWith = m.declare("sort_with");
    m.define(up, |a: Dyn<*const u8>, b: Dyn<*const u8>| {
        let (x, y) = (
            a.cast_ptr::<*const i32>().deref(),
            b.cast_ptr::<*const i32>().deref(),
        );
        x.gt(y).cast::<i32>() - x.lt(y).cast::<i32>()
    });
    m.define(down, move |a: Dyn<*const u8>, b: Dyn<*const u8>| {
        up.call(b, a)
    });
    m.define(by_rec, |a: Dyn<*const u8>, b: Dyn<*const u8>| {
        let (x, y) = (a.cast_ptr::<*const Rec>(), b.cast_ptr::<*const Rec>());
        let (kx, ky) = (x.deref().key(), y.deref().key());
        let r = Dyn::new(kx.gt(ky).cast::<i32>() - kx.lt(ky).cast::<i32>());
        if r.eq(0).is_true() {
            let (wx, wy) = (x.deref().weight(), y.deref().weight());
            r.set(wy.gt(wx).cast::<i32>() - wy.lt(wx).cast::<i32>());
        }
        r
    });
    m.define(
        sort_ints,
        move |xs: Dyn<*mut i32>, n: Dyn<u64>, descending: Dyn<bool>| {
            let cmp = Dyn::new(up.addr());
            if descending.is_true() {
                cmp.set(down.addr());
            }
            libc::QSORT.call(xs.cast_ptr::<*mut u8>(), n, 4u64, cmp);
        },
    );
    m.define(sort_recs, move |rs: Dyn<*mut Rec>, n: Dyn<u64>| {
        libc::QSORT.call(rs.cast_ptr::<*mut u8>(), n, 16u64, by_rec.addr());
    });
    m.define(
        sort_with,
        |xs: Dyn<*mut i32>, n: Dyn<u64>, cmp: Dyn<Comparator>| {
            libc::QSORT.call(xs.cast_ptr::<*mut u8>(), n, 4u64, cmp);
        },
    );
    (m, sort_ints, sort_recs, sort_with)
}

/// `qsort` of `i32`s with a staged comparator chosen at run time, on
/// every backend, against Rust's sort; lengths 0 to 40 with duplicates.
#[test]
#[augur::staged]
fn qsort_sorts_ints_with_a_staged_comparator() {
    let (m, sort_ints, ..) = sort_module();
    let ex = m.extract().unwrap();
    let c = ex.c_code();
    assert_contains(
        &c,
        &[
            "#include <stdlib.h>",
            "int32_t up(const uint8_t *arg0, const uint8_t *arg1)",
            "(int32_t (*)(const void *, const void *))",
        ],
    );
    let libs = compiled(&ex);
    let mut rng = Rng(0x5157);
    for n in (0..=12).chain([31, 40]) {
        for descending in [false, true] {
            let xs: Vec<i32> = (0..n).map(|_| rng.below(20) as i32 - 10).collect();
            let mut want = xs.clone();
            want.sort();
            if descending {
                want.reverse();
            }
            for lib in &libs {
                let mut got = xs.clone();
                // SAFETY: `sort_ints` sorts the `n` elements of `got`.
                unsafe { lib.get(sort_ints).unwrap()(got.as_mut_ptr(), n, descending) };
                assert_eq!(got, want, "{:?} {xs:?}", lib.backend());
            }
            let mut it = Interpreter::new();
            let p = it.memory_mut().alloc_slice(&xs);
            ex.interpret_in(&mut it, sort_ints, &[p, n.into(), descending.into()])
                .unwrap();
            let got: Vec<i32> = it.memory().read_slice(p, n as usize).unwrap();
            assert_eq!(got, want, "interpreter {xs:?}");
        }
    }
}

/// `qsort` of structs (with padding) by a two-key comparator reading their
/// fields, on every backend, against Rust's `sort_by`; the interpreter's
/// memory holds and gives back the array of structs.
#[test]
#[augur::staged]
fn qsort_sorts_structs_by_their_fields() {
    let (m, _, sort_recs, _) = sort_module();
    let ex = m.extract().unwrap();
    assert_contains(
        &ex.c_code(),
        &[
            "var0->key",
            "qsort((uint8_t *)arg0, arg1, 16ull, (int32_t (*)(const void *, const void *))by_rec);",
        ],
    );
    let libs = compiled(&ex);
    let mut rng = Rng(0x2ec5);
    for n in [0, 1, 2, 3, 7, 16, 33] {
        let recs: Vec<Rec> = (0..n)
            .map(|_| Rec {
                key: rng.below(5) as i32,
                weight: rng.below(8) as f64 / 4.0,
            })
            .collect();
        let mut want = recs.clone();
        want.sort_by(rec_order);
        for lib in &libs {
            let mut got = recs.clone();
            // SAFETY: `sort_recs` sorts the `n` records of `got`.
            unsafe { lib.get(sort_recs).unwrap()(got.as_mut_ptr(), n) };
            assert_eq!(got, want, "{:?}", lib.backend());
        }
        let mut it = Interpreter::new();
        let p = it.memory_mut().alloc_slice(&recs);
        ex.interpret_in(&mut it, sort_recs, &[p, n.into()]).unwrap();
        let got: Vec<Rec> = it.memory().read_slice(p, n as usize).unwrap();
        assert_eq!(got, want, "interpreter");
    }
}

/// By absolute value, ties by value: a comparator the host supplies.
extern "C" fn by_abs(a: *const u8, b: *const u8) -> i32 {
    // SAFETY: qsort passes pointers to two of the `i32`s it sorts.
    let (x, y) = unsafe { (*(a as *const i32), *(b as *const i32)) };
    (x.abs(), x).cmp(&(y.abs(), y)) as i32
}

/// `qsort` through a comparator passed in: a Rust function for compiled
/// code, a registered extern or a function of the module for the
/// interpreter; and the interpreter's errors for comparators that are not
/// functions, elements past the array, and a comparator that exits.
#[test]
#[augur::staged]
fn qsort_calls_a_comparator_passed_in_and_reports_bad_ones() {
    let (m, sort_ints, _, sort_with) = sort_module();
    let ex = m.extract().unwrap();
    let xs: Vec<i32> = vec![3, -1, 4, -1, 5, -9, 2, 6, -5, 3, 5];
    let mut want = xs.clone();
    want.sort_by_key(|&x| (x.abs(), x));
    let n = xs.len() as u64;
    for lib in compiled(&ex) {
        let mut got = xs.clone();
        // SAFETY: `sort_with` sorts `got` with `by_abs`, an `int (*)(const
        // uint8_t *, const uint8_t *)`.
        unsafe { lib.get(sort_with).unwrap()(got.as_mut_ptr(), n, by_abs) };
        assert_eq!(got, want, "{:?}", lib.backend());
    }
    let mut it = Interpreter::new();
    it.register("by_abs", |m, args| {
        let ty = Type::Scalar(Scalar::I32);
        let x = m.load(args[0], &ty)?.as_i64().unwrap();
        let y = m.load(args[1], &ty)?.as_i64().unwrap();
        Ok(Value::I32((x.abs(), x).cmp(&(y.abs(), y)) as i32))
    });
    let host_cmp = it.memory_mut().function_ptr("by_abs");
    let p = it.memory_mut().alloc_slice(&xs);
    ex.interpret_in(&mut it, sort_with, &[p, n.into(), host_cmp])
        .unwrap();
    assert_eq!(it.memory().read_slice::<i32>(p, xs.len()).unwrap(), want);
    // A function of the module, by its address.
    let down = it.memory_mut().function_ptr("down");
    ex.interpret_in(&mut it, sort_with, &[p, n.into(), down])
        .unwrap();
    let mut descending = xs.clone();
    descending.sort_by(|a, b| b.cmp(a));
    assert_eq!(
        it.memory().read_slice::<i32>(p, xs.len()).unwrap(),
        descending
    );

    // Not functions: null, and a pointer to data.
    let sort = |it: &mut Interpreter, n: u64, cmp: Value| {
        let e = ex
            .interpret_in(it, sort_with, &[p, n.into(), cmp])
            .unwrap_err();
        e.to_string()
    };
    let e = sort(&mut it, 3, Value::Ptr(0));
    assert!(
        e.contains("qsort's comparator: call through a null function pointer"),
        "{e}"
    );
    let e = sort(&mut it, 3, p);
    assert!(e.contains("which points to no function"), "{e}");
    // More elements than the array holds.
    let e = sort(&mut it, n + 1, down);
    assert!(e.contains("qsort of 48 bytes at offset 0"), "{e}");
    assert!(e.contains("size 44, host buffer"), "{e}");
    // A comparator that calls exit: the program ends there, and the
    // interpreter sorts again afterwards.
    it.register("fussy", |_, _| {
        Err(Error::Exit {
            status: Some(9),
            location: None,
        })
    });
    let fussy = it.memory_mut().function_ptr("fussy");
    match ex.interpret_in(&mut it, sort_with, &[p, n.into(), fussy]) {
        Err(Error::Exit {
            status: Some(9), ..
        }) => {}
        other => panic!("{other:?}"),
    }
    ex.interpret_in(&mut it, sort_ints, &[p, n.into(), false.into()])
        .unwrap();
    let mut ascending = xs.clone();
    ascending.sort();
    assert_eq!(
        it.memory().read_slice::<i32>(p, xs.len()).unwrap(),
        ascending
    );
}

// ----- the interpreter's memory: arrays of pointers and of structs -----

/// A struct holding a pointer and an array, as host data.
#[derive(augur::Staged, Clone, Copy, Debug, PartialEq)]
#[repr(C)]
struct Span {
    items: *mut i32,
    count: i32,
    scale: [f32; 2],
}

/// Arrays of pointers and of structs (with pointer and array fields) go
/// into the interpreter's memory and come back out; the same program
/// compiled reads the host's arrays alike.
#[test]
#[augur::staged]
fn the_interpreter_holds_arrays_of_pointers_and_structs() {
    // Sums `*ps[i]` over an array of pointers, and the spans' scaled sums.
    let sum_ptrs = |ps: Dyn<*mut *mut i32>, n: Dyn<i32>| {
        let s = Dyn::new(0);
        let i = Dyn::new(0);
        while i.lt(n).is_true() {
            s.set(s + ps.at(i).at(0));
            i.set(i + 1);
        }
        s
    };
    let sum_spans = |sp: Dyn<*mut Span>, n: Dyn<i32>| {
        let s = Dyn::new(0.0f32);
        let i = Dyn::new(0);
        while i.lt(n).is_true() {
            let span = sp.at(i);
            let j = Dyn::new(0);
            while j.lt(span.count()).is_true() {
                s.set(s + span.items().at(j).cast::<f32>() * span.scale().at(j % 2));
                j.set(j + 1);
            }
            i.set(i + 1);
        }
        s
    };
    let ptrs = common::extract("sum_ptrs", sum_ptrs);
    let spans = common::extract("sum_spans", sum_spans);
    let (mut a, mut b, mut c) = ([1, 2, 3], [10], [100, 200]);
    let mut host_ptrs = [c.as_mut_ptr(), a.as_mut_ptr(), b.as_mut_ptr()];
    let mut host_spans = [
        Span {
            items: a.as_mut_ptr(),
            count: 3,
            scale: [1.0, 0.5],
        },
        Span {
            items: c.as_mut_ptr(),
            count: 2,
            scale: [2.0, 0.25],
        },
    ];
    let want_spans = 1.0 + 2.0 * 0.5 + 3.0 + 100.0 * 2.0 + 200.0 * 0.25;
    for backend in [Backend::C, Backend::Jit] {
        let opts = CompileOptions::default().with_backend(backend);
        let (p, s) = (
            ptrs.compile_with(&opts).unwrap(),
            spans.compile_with(&opts).unwrap(),
        );
        // SAFETY: each pointer points to at least one `i32`, each span to
        // `len` of them.
        unsafe {
            assert_eq!(p.get()(host_ptrs.as_mut_ptr(), 3), 111);
            assert_eq!(s.get()(host_spans.as_mut_ptr(), 2), want_spans);
        }
    }

    let mut it = Interpreter::new();
    let m = it.memory_mut();
    let (ia, ib, ic) = (m.alloc_slice(&a), m.alloc_slice(&b), m.alloc_slice(&c));
    let table = m.alloc_slice(&[ic, ia, ib]);
    assert_eq!(m.allocation_size(table), Some(24));
    assert_eq!(m.read_slice::<Value>(table, 3).unwrap(), [ic, ia, ib]);
    let raw = |v: Value| v.as_ptr().unwrap() as usize as *mut i32;
    let in_memory = [
        Span {
            items: raw(ia),
            ..host_spans[0]
        },
        Span {
            items: raw(ic),
            ..host_spans[1]
        },
    ];
    let sp = m.alloc_slice(&in_memory);
    assert_eq!(m.allocation_size(sp), Some(48));
    assert_eq!(m.read_slice::<Span>(sp, 2).unwrap(), in_memory);
    assert_eq!(
        ptrs.interpret_in(&mut it, &[table, 3.into()]).unwrap(),
        111.into()
    );
    assert_eq!(
        spans.interpret_in(&mut it, &[sp, 2.into()]).unwrap(),
        Value::F32(want_spans)
    );
    // Written back, then read by the program.
    it.memory_mut().write_slice(table, &[ib]).unwrap();
    assert_eq!(
        ptrs.interpret_in(&mut it, &[table, 1.into()]).unwrap(),
        10.into()
    );
    // A Value in memory is a pointer; past the end is an error.
    let e = it
        .memory_mut()
        .write_slice(table, &[Value::I32(1)])
        .unwrap_err()
        .to_string();
    assert!(e.contains("a Value in memory is a pointer"), "{e}");
    let e = it
        .memory()
        .read_slice::<Span>(sp, 3)
        .unwrap_err()
        .to_string();
    assert!(e.contains("load of 8 bytes at offset 48"), "{e}");
}

// ----- exit and abort -----

/// `exit` in the interpreter: a typed outcome with the status and the
/// call's line; what the program printed stays; the interpreter runs on.
#[test]
#[augur::staged]
fn exit_and_abort_stop_the_interpreted_program() {
    let f = common::extract("ends", |x: Dyn<i32>| {
        libc::PRINTF.call_with(&[Dyn::str("x = %d\n").into(), x.into()]);
        if x.lt(0).is_true() {
            libc::EXIT.call(-x);
        }
        if x.eq(0).is_true() {
            libc::ABORT.call();
        }
        x * 2
    });
    assert_contains(&f.c_code(), &["exit(-arg0);", "abort();"]);
    let line = include_str!("libc.rs")
        .lines()
        .position(|l| l.trim() == "libc::EXIT.call(-x);")
        .unwrap() as u32
        + 1;
    let mut it = Interpreter::new();
    match f.interpret_in(&mut it, &[(-3).into()]) {
        Err(
            e @ Error::Exit {
                status: Some(3),
                location: Some(loc),
            },
        ) => {
            assert_eq!((loc.file, loc.line), (file!(), line), "{e}");
            let text = e.to_string();
            assert!(text.starts_with("the program called exit(3) at "), "{text}");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(it.take_output(), "x = -3\n");
    match f.interpret_in(&mut it, &[0.into()]) {
        Err(e @ Error::Exit { status: None, .. }) => {
            assert!(
                e.to_string().starts_with("the program called abort() at "),
                "{e}"
            );
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(f.interpret_in(&mut it, &[4.into()]).unwrap(), 8.into());
    assert_eq!(it.take_output(), "x = 0\nx = 4\n");
}

/// The child process of [`exit_and_abort_end_compiled_processes`]: calls a
/// compiled function that ends the process. Does nothing unless asked.
#[test]
#[augur::staged]
fn exit_and_abort_child() {
    let Ok(what) = std::env::var("AUGUR_LIBC_CHILD") else {
        return;
    };
    let (call, backend) = what.split_once(':').unwrap();
    let abort = call == "abort";
    let f = common::extract("ends", move |x: Dyn<i32>| {
        libc::PRINTF.call_with(&[Dyn::str("before %d\n").into(), x.into()]);
        if abort {
            libc::ABORT.call();
        } else {
            libc::EXIT.call(x);
        }
        x + 1
    });
    let backend = if backend == "jit" {
        Backend::Jit
    } else {
        Backend::C
    };
    let lib = f
        .compile_with(&CompileOptions::default().with_backend(backend))
        .unwrap();
    // SAFETY: `int32_t ends(int32_t)`.
    let r = unsafe { lib.get()(3) };
    println!("still alive: {r}");
}

/// `exit(3)` and `abort()` in code compiled by C and by the JIT end the
/// process: with status 3 (C's output flushed first), by `SIGABRT`.
#[test]
#[augur::staged]
fn exit_and_abort_end_compiled_processes() {
    use std::os::unix::process::ExitStatusExt;
    let child = concat!(module_path!(), "::exit_and_abort_child");
    let child = child.split_once("::").unwrap().1;
    for what in ["exit:c", "exit:jit", "abort:c", "abort:jit"] {
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", child, "--nocapture", "--test-threads=1"])
            .env("AUGUR_LIBC_CHILD", what)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let text = format!("{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
        assert!(!stdout.contains("still alive"), "{what}: {text}");
        if what.starts_with("exit") {
            assert_eq!(out.status.code(), Some(3), "{what}: {text}");
            assert!(stdout.contains("before 3"), "{what}: {text}");
        } else {
            assert_eq!(out.status.signal(), Some(6), "{what}: {text}");
        }
    }
}
