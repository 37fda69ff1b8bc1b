//! Extern calls: `libc` functions, `printf` through `call_with`, and a user
//! runtime function given as C source and registered with the interpreter.

use crate::common;

use augur::exec::compile::CompileOptions;
use augur::{libc, Dyn, ExternFn, Interpreter, Value};
use common::{assert_contains, check, extract, Buf, Check};
use std::io::Read;
use std::os::fd::AsRawFd;
use std::sync::Mutex;

/// `abs` from `stdlib.h`.
#[test]
#[augur::staged]
fn abs() {
    let ex = check(
        "absdiff",
        |x: Dyn<i32>, y: Dyn<i32>| libc::ABS.call(x - y) + libc::ABS.call(-3),
        |&mut (x, y): &mut (i32, i32)| (x - y).abs().wrapping_add(3),
        &[(0, 0), (1, 5), (5, 1), (-100, 100), (i32::MAX, 1)],
    );
    assert_contains(&ex.c_code(), &["#include <stdlib.h>", "abs(arg0 - arg1)"]);
}

/// `sqrt` and `fabs` from `math.h` on doubles.
#[test]
#[augur::staged]
fn math_functions() {
    check(
        "hypotenuse",
        |x: Dyn<f64>, y: Dyn<f64>| libc::SQRT.call(x * x + y * y) + libc::FABS.call(x),
        |&mut (x, y): &mut (f64, f64)| (x * x + y * y).sqrt() + x.abs(),
        &[
            (0.0, 0.0),
            (3.0, 4.0),
            (-3.0, 4.0),
            (1e-3, 1e3),
            (-0.0, 2.0),
        ],
    );
}

/// `malloc` and `free`: a heap buffer filled and summed in dyn loops.
#[test]
#[augur::staged]
fn malloc_and_free() {
    let ex = check(
        "heap",
        |n: Dyn<i32>| {
            let bytes = libc::MALLOC.call((n + 1).cast::<u64>() * 8);
            let p = bytes.cast_ptr::<*mut i64>();
            let i = Dyn::new(0);
            while i.le(n).is_true() {
                p.at(i).set(i.cast::<i64>() * i.cast::<i64>());
                i.set(i + 1);
            }
            let s = Dyn::new(0i64);
            while i.gt(0).is_true() {
                i.set(i - 1);
                s.set(s + p.at(i));
            }
            libc::FREE.call(bytes);
            s
        },
        |&mut (n,): &mut (i32,)| (0..=n as i64).map(|i| i * i).sum::<i64>(),
        &[(0,), (1,), (2,), (10,), (1000,)],
    );
    assert_contains(&ex.c_code(), &["malloc(", "free("]);
}

/// The C library's `printf` writes to fd 1: capture it by redirecting fd 1
/// to a file for the duration of `f`. Other tests may print to fd 1 at the
/// same time, so callers look for their text with `contains`.
#[augur::staged]
fn capture_stdout(f: impl FnOnce()) -> String {
    extern "C" {
        fn dup(fd: i32) -> i32;
        fn dup2(from: i32, to: i32) -> i32;
        fn close(fd: i32) -> i32;
        fn fflush(stream: *mut std::ffi::c_void) -> i32;
    }
    static LOCK: Mutex<()> = Mutex::new(());
    let _guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let path = std::env::temp_dir().join(format!("augur-stdout-{}", std::process::id()));
    let file = std::fs::File::create(&path).expect("a capture file");
    // SAFETY: plain POSIX calls on file descriptors this function owns
    // (`saved`) or borrows for the duration of the call (`file`, fd 1).
    unsafe {
        fflush(std::ptr::null_mut());
        let saved = dup(1);
        assert!(saved >= 0);
        dup2(file.as_raw_fd(), 1);
        f();
        fflush(std::ptr::null_mut());
        dup2(saved, 1);
        close(saved);
    }
    let mut out = String::new();
    std::fs::File::open(&path)
        .and_then(|mut f| f.read_to_string(&mut out))
        .expect("reading the capture");
    let _ = std::fs::remove_file(&path);
    out
}

/// `printf` through `call_with` with an int and a double: the count it
/// returns agrees three ways, and the text printed by the compiled C and by
/// the interpreter is what Rust formats.
#[test]
fn printf() {
    let inputs = [
        (0, 0.0),
        (-1, 1.5),
        (i32::MAX, -2.25),
        (i32::MIN, 1e6),
        (7, 0.5),
    ];
    let text = |x: i32, f: f64| format!("x={x} f={f:.2}!\n");
    let mut ex = None;
    let out = capture_stdout(|| {
        ex = Some(check(
            "report",
            |x: Dyn<i32>, f: Dyn<f64>| {
                libc::PRINTF.call_with(&[Dyn::str("x=%d f=%.2f!\n").into(), x.into(), f.into()])
            },
            |&mut (x, f): &mut (i32, f64)| text(x, f).len() as i32,
            &inputs,
        ));
    });
    let all: String = inputs.iter().map(|&(x, f)| text(x, f)).collect();
    assert!(out.contains(&all), "captured {out:?}");
    let ex = ex.unwrap();
    assert_contains(
        &ex.c_code(),
        &["#include <stdio.h>", "printf(\"x=%d f=%.2f!\\n\""],
    );
    let mut it = Interpreter::new();
    ex.interpret_in(&mut it, &[Value::I32(-42), Value::F64(1.23456)])
        .unwrap();
    assert_eq!(it.output(), "x=-42 f=1.23!\n");
}

/// `putchar` in a dyn loop prints a run of characters.
#[test]
#[augur::staged]
fn putchar_loop() {
    let ex = extract("stars", |n: Dyn<i32>| {
        let i = Dyn::new(0);
        while i.lt(n).is_true() {
            libc::PUTCHAR.call(Dyn::select((i % 2).eq(0), 42, 43));
            i.set(i + 1);
        }
        libc::PUTCHAR.call(10);
    });
    for n in [0, 1, 2, 5, 9] {
        let expected: String = (0..n).map(|i| if i % 2 == 0 { '*' } else { '+' }).collect();
        let expected = format!("|{expected}\n");
        let mut it = Interpreter::new();
        ex.interpret_in(&mut it, &[Value::I32(n)]).unwrap();
        assert_eq!(format!("|{}", it.output()), expected);
        let compiled = ex.compile().unwrap();
        let out = capture_stdout(|| {
            print_marker();
            // SAFETY: the function takes one scalar.
            unsafe { (compiled.get())(n) };
        });
        assert!(out.contains(&expected), "captured {out:?} for {n}");
    }
}

/// Writes `|` through C stdio so that it lands just before the staged
/// function's output in the same buffer.
#[augur::staged]
fn print_marker() {
    extern "C" {
        fn putchar(c: i32) -> i32;
    }
    // SAFETY: putchar takes an int.
    unsafe { putchar(b'|' as i32) };
}

/// A user runtime function: declared by prototype, its C given through
/// `CompileOptions::extra_c`, its Rust twin registered with the interpreter.
const CLAMP: ExternFn<fn(i32, i32, i32) -> i32> = ExternFn::new("rt_clamp");
/// A runtime function that writes through a pointer.
const FILL: ExternFn<fn(*mut i32, i32, i32)> = ExternFn::new("rt_fill");

const RUNTIME_C: &str = "#include <stdint.h>\n\
    int32_t rt_clamp(int32_t v, int32_t lo, int32_t hi) { return v < lo ? lo : v > hi ? hi : v; }\n\
    void rt_fill(int32_t *p, int32_t n, int32_t v) { for (int32_t i = 0; i < n; i++) p[i] = v + i; }\n";

#[augur::staged]
fn runtime(it: &mut Interpreter) {
    it.register("rt_clamp", |_, a| {
        let [v, lo, hi] = [a[0], a[1], a[2]].map(|v| v.as_i64().unwrap() as i32);
        Ok(Value::I32(v.clamp(lo, hi)))
    });
    it.register("rt_fill", |mem, a| {
        let n = a[1].as_i64().unwrap() as i32;
        let v = a[2].as_i64().unwrap() as i32;
        let data: Vec<i32> = (0..n).map(|i| v + i).collect();
        mem.write_slice(a[0], &data)?;
        Ok(Value::Void)
    });
}

#[augur::staged]
fn runtime_check() -> Check {
    Check {
        opts: CompileOptions {
            extra_c: vec![RUNTIME_C.to_string()],
            ..CompileOptions::default()
        },
        setup: runtime,
        ..Check::default()
    }
}

/// The runtime clamp, called in a branch and in a loop.
#[test]
#[augur::staged]
fn user_runtime_function() {
    let ex = runtime_check().run(
        "use_clamp",
        |x: Dyn<i32>, n: Dyn<i32>| {
            let s = Dyn::new(0);
            let i = Dyn::new(0);
            while i.lt(n).is_true() {
                s.set(s + CLAMP.call(x + i, -5, 5));
                i.set(i + 1);
            }
            if s.lt(0).is_true() {
                s.set(CLAMP.call(s, -3, 0));
            }
            s
        },
        |&mut (x, n): &mut (i32, i32)| {
            let s: i32 = (0..n).map(|i| (x + i).clamp(-5, 5)).sum();
            if s < 0 {
                s.clamp(-3, 0)
            } else {
                s
            }
        },
        &[(0, 0), (-10, 3), (-3, 6), (4, 4), (100, 2), (-7, 20)],
    );
    assert_contains(
        &ex.c_code(),
        &["int32_t rt_clamp(int32_t, int32_t, int32_t);"],
    );
}

/// A runtime function that fills a buffer the staged code then reads.
#[test]
#[augur::staged]
fn user_runtime_function_with_pointer() {
    runtime_check().run(
        "use_fill",
        |p: Dyn<*mut i32>, n: Dyn<i32>| {
            FILL.call(p, n, 100);
            let s = Dyn::new(0);
            let i = Dyn::new(0);
            while i.lt(n).is_true() {
                s.set(s + p.at(i));
                i.set(i + 1);
            }
            s
        },
        |(p, n): &mut (Buf<i32>, i32)| {
            for i in 0..*n {
                p.0[i as usize] = 100 + i;
            }
            p.0[..*n as usize].iter().sum::<i32>()
        },
        &[
            (Buf(vec![]), 0),
            (Buf(vec![0]), 1),
            (Buf(vec![0; 3]), 3),
            (Buf(vec![9; 8]), 5),
            (Buf(vec![1; 16]), 16),
        ],
    );
}

/// C string escapes (quote, backslash, trigraph `??!`, tab, UTF-8) and a
/// range of `printf` conversions print the same from compiled C and from
/// the interpreter.
#[test]
#[augur::staged]
fn strings_and_printf_conversions() {
    let ex = extract(
        "formats",
        |x: Dyn<i64>, c: Dyn<i32>, u: Dyn<u32>, f: Dyn<f64>| {
            libc::PUTS.call(Dyn::str("q\"b\\c??!\t\u{e9}%"));
            libc::PRINTF.call_with(&[
                Dyn::str("[%5d|%-4x|%c|%s|%%|%ld|%u|%.3e|%g]\n").into(),
                c.into(),
                c.into(),
                (c + 65).into(),
                Dyn::str("s").into(),
                x.into(),
                u.into(),
                f.into(),
                f.into(),
            ])
        },
    );
    let args = (-1i64 << 40, 10, u32::MAX, 1234.5678);
    let mut it = Interpreter::new();
    let n = ex
        .interpret_in(
            &mut it,
            &[args.0.into(), args.1.into(), args.2.into(), args.3.into()],
        )
        .unwrap();
    let expected =
        "q\"b\\c??!\t\u{e9}%\n[   10|a   |K|s|%|-1099511627776|4294967295|1.235e+03|1234.57]\n";
    assert_eq!(it.output(), expected);
    let compiled = ex.compile().unwrap();
    let mut from_c = 0;
    let out = capture_stdout(|| {
        // SAFETY: the function takes four scalars.
        from_c = unsafe { (compiled.get())(args.0, args.1, args.2, args.3) };
    });
    assert!(out.contains(expected), "captured {out:?}");
    assert_eq!(n, Value::I32(from_c));
}
