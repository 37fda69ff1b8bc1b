//! Arrays and pointers: local `Dyn<[T; N]>`, pointer parameters pointing
//! at Rust vectors, `at`/`set`, `deref`, `addr`, `offset`.

use crate::common;

use augur::Dyn;
use common::{assert_contains, check, Buf};

/// A local `[i32; 8]` filled in a dyn loop and summed with a filter.
#[test]
#[augur::staged]
fn local_array() {
    let ex = check(
        "local_arr",
        |x: Dyn<i32>| {
            let a = Dyn::<[i32; 8]>::uninit();
            let i = Dyn::new(0);
            while i.lt(8).is_true() {
                a.at(i).set(i * x + 1);
                i.set(i + 1);
            }
            a.at(3).set(a.at(3) * 2);
            let s = Dyn::new(0);
            let j = Dyn::new(0);
            while j.lt(8).is_true() {
                if (a.at(j) & 1).eq(0).is_true() {
                    s.set(s + a.at(j));
                }
                j.set(j + 1);
            }
            s
        },
        |&mut (x,): &mut (i32,)| {
            let mut a: Vec<i32> = (0..8).map(|i| i * x + 1).collect();
            a[3] *= 2;
            a.iter().filter(|v| *v & 1 == 0).sum()
        },
        &[(0,), (1,), (2,), (-3,), (1000,)],
    );
    assert_contains(&ex.c_code(), &["int32_t var0[8];"]);
}

/// `y[i] = a * x[i] + y[i]` over two `float *` parameters.
#[test]
#[augur::staged]
fn saxpy() {
    let v = |xs: &[f32]| Buf(xs.to_vec());
    check(
        "saxpy",
        |y: Dyn<*mut f32>, x: Dyn<*mut f32>, a: Dyn<f32>, n: Dyn<i32>| {
            let i = Dyn::new(0);
            while i.lt(n).is_true() {
                y.at(i).set(a * x.at(i) + y.at(i));
                i.set(i + 1);
            }
        },
        |(y, x, a, n): &mut (Buf<f32>, Buf<f32>, f32, i32)| {
            for i in 0..*n as usize {
                y.0[i] += *a * x.0[i];
            }
        },
        &[
            (v(&[]), v(&[]), 2.0, 0),
            (v(&[1.0]), v(&[2.0]), 0.5, 1),
            (v(&[1.0, 2.0, 3.0]), v(&[-1.0, 0.25, 1e10]), 3.0, 3),
            (v(&[0.1; 5]), v(&[0.2; 5]), -1.5, 5),
            (v(&[1.0, 2.0, 3.0, 4.0]), v(&[9.0; 4]), 1.0, 2),
        ],
    );
}

/// `deref`, `addr` and `offset`: swap two elements through pointers, and
/// increment a local through its address.
#[test]
#[augur::staged]
fn deref_addr_offset() {
    let ex = check(
        "ptrs",
        |p: Dyn<*mut i64>, i: Dyn<i32>, j: Dyn<i32>| {
            let a = p.offset(i);
            let b = p.at(j).addr();
            let t = Dyn::new(a.deref());
            a.deref().set(b.deref());
            b.deref().set(t);
            let local = Dyn::new(10i64);
            let q = local.addr();
            q.deref().set(q.deref() + p.at(0));
            local
        },
        |(p, i, j): &mut (Buf<i64>, i32, i32)| {
            p.0.swap(*i as usize, *j as usize);
            10 + p.0[0]
        },
        &[
            (Buf(vec![1, 2, 3]), 0, 2),
            (Buf(vec![1, 2, 3]), 1, 1),
            (Buf(vec![5]), 0, 0),
            (Buf(vec![-1, i64::MAX, 0, 7]), 3, 0),
            (Buf(vec![4, 3, 2, 1]), 2, 1),
        ],
    );
    assert_contains(&ex.c_code(), &["&"]);
}

/// An unsized array parameter `Dyn<[i32]>` (C `int32_t a[]`): in-place
/// prefix sums.
#[test]
#[augur::staged]
fn prefix_sums_unsized_array() {
    let ex = check(
        "prefix",
        |a: Dyn<[i32]>, n: Dyn<i32>| {
            let i = Dyn::new(1);
            while i.lt(n).is_true() {
                a.at(i).set(a.at(i) + a.at(i - 1));
                i.set(i + 1);
            }
            Dyn::select(n.gt(0), a.at(Dyn::select(n.gt(0), n - 1, 0)), 0)
        },
        |(a, n): &mut (Buf<i32>, i32)| {
            for i in 1..*n as usize {
                a.0[i] += a.0[i - 1];
            }
            if *n > 0 {
                a.0[*n as usize - 1]
            } else {
                0
            }
        },
        &[
            (Buf(vec![0]), 0),
            (Buf(vec![3]), 1),
            (Buf(vec![1, 2, 3, 4]), 4),
            (Buf(vec![-5, 5, -5, 5, 100]), 5),
            (Buf(vec![1, 1, 1, 1]), 2),
        ],
    );
    assert_contains(&ex.c_code(), &["int32_t arg0[]"]);
}

/// Bubble sort in place: nested loops, a data-dependent swap.
#[test]
#[augur::staged]
fn bubble_sort() {
    check(
        "bubble",
        |a: Dyn<*mut i32>, n: Dyn<i32>| {
            let i = Dyn::new(0);
            while i.lt(n).is_true() {
                let j = Dyn::new(0);
                while (j + 1).lt(n - i).is_true() {
                    if a.at(j).gt(a.at(j + 1)).is_true() {
                        let t = Dyn::new(a.at(j));
                        a.at(j).set(a.at(j + 1));
                        a.at(j + 1).set(t);
                    }
                    j.set(j + 1);
                }
                i.set(i + 1);
            }
        },
        |(a, n): &mut (Buf<i32>, i32)| a.0[..*n as usize].sort(),
        &[
            (Buf(vec![]), 0),
            (Buf(vec![1]), 1),
            (Buf(vec![2, 1]), 2),
            (Buf(vec![5, -1, 3, 3, i32::MIN, i32::MAX, 0]), 7),
            (Buf(vec![9, 8, 7, 6, 5, 4, 3, 2, 1, 0]), 10),
            (Buf(vec![3, 2, 1, 0]), 2),
        ],
    );
}

/// Reading through a `*const` pointer made by casting a `*mut` one, and
/// bytes of a buffer reinterpreted (`cast_ptr`).
#[test]
#[augur::staged]
fn const_pointer_and_cast_ptr() {
    check(
        "bytes",
        |p: Dyn<*mut u32>, n: Dyn<i32>| {
            let bytes = p.cast_ptr::<*const u8>();
            let s = Dyn::new(0u32);
            let i = Dyn::new(0);
            while i.lt(n * 4).is_true() {
                s.set(s * 31 + bytes.at(i).cast::<u32>());
                i.set(i + 1);
            }
            s
        },
        |(p, n): &mut (Buf<u32>, i32)| {
            let mut s = 0u32;
            for w in &p.0[..*n as usize] {
                for b in w.to_le_bytes() {
                    s = s.wrapping_mul(31).wrapping_add(b as u32);
                }
            }
            s
        },
        &[
            (Buf(vec![]), 0),
            (Buf(vec![1]), 1),
            (Buf(vec![0xdeadbeef, 7]), 2),
            (Buf(vec![u32::MAX; 3]), 3),
            (Buf(vec![1, 2, 3, 4]), 2),
        ],
    );
}

/// A local array of `f64` used as a small ring buffer.
#[test]
#[augur::staged]
fn moving_average() {
    check(
        "movavg",
        |x: Dyn<*mut f64>, out: Dyn<*mut f64>, n: Dyn<i32>| {
            let win = Dyn::<[f64; 3]>::uninit();
            let k = Dyn::new(0);
            while k.lt(3).is_true() {
                win.at(k).set(0.0);
                k.set(k + 1);
            }
            let i = Dyn::new(0);
            while i.lt(n).is_true() {
                win.at(i % 3).set(x.at(i));
                out.at(i).set((win.at(0) + win.at(1) + win.at(2)) / 3.0);
                i.set(i + 1);
            }
        },
        |(x, out, n): &mut (Buf<f64>, Buf<f64>, i32)| {
            let mut win = [0.0; 3];
            for i in 0..*n as usize {
                win[i % 3] = x.0[i];
                out.0[i] = (win[0] + win[1] + win[2]) / 3.0;
            }
        },
        &[
            (Buf(vec![]), Buf(vec![]), 0),
            (Buf(vec![3.0]), Buf(vec![0.0]), 1),
            (Buf(vec![1.0, 2.0, 3.0, 4.0]), Buf(vec![0.0; 4]), 4),
            (
                Buf(vec![0.1, 0.2, 0.3, 1e100, -1e100]),
                Buf(vec![0.0; 5]),
                5,
            ),
            (Buf(vec![1.0; 6]), Buf(vec![9.0; 6]), 3),
        ],
    );
}

/// A loaded element is a value: after the element is overwritten it still
/// holds what was read.
#[test]
#[augur::staged]
fn loaded_value_keeps_old_contents() {
    check(
        "load_value",
        |p: Dyn<*mut i32>| {
            let old = p.at(0);
            p.at(0).set(old + 5);
            let r = Dyn::new(old);
            p.at(1).set(p.at(0));
            r
        },
        |(p,): &mut (Buf<i32>,)| {
            let old = p.0[0];
            p.0[0] = old.wrapping_add(5);
            p.0[1] = p.0[0];
            old
        },
        &[
            (Buf(vec![0, 0]),),
            (Buf(vec![1, 9]),),
            (Buf(vec![-5, 9]),),
            (Buf(vec![i32::MAX, 0]),),
            (Buf(vec![42, 42]),),
        ],
    );
}
