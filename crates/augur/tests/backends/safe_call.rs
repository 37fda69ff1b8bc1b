//! The safe call (`Extracted::safe`): checked functions take Rust slices
//! and values, every index is checked (C and the JIT stop the program with
//! a message, the interpreter reports an error), and what a check could
//! not cover is refused at extraction with its line.

use augur::exec::{Backend, CompileOptions};
use augur::safe::SafeFn;
use augur::{libc, Builder, Dyn, Extracted, Interpreter};

type Axpy = unsafe extern "C" fn(f32, *const f32, *mut f32, i64);

/// `y[i] += a * x[i]` for `i < n`; `x` and `y` are slices of length `n`.
#[augur::staged]
fn axpy(overrun: i64) -> Extracted<Axpy> {
    Builder::new()
        .slice(1, 3)
        .slice(2, 3)
        .extract(
            "axpy",
            move |a: Dyn<f32>, x: Dyn<*const f32>, y: Dyn<*mut f32>, n: Dyn<i64>| {
                let i = Dyn::new(0i64);
                while i.lt(n + overrun).is_true() {
                    y.at(i).set(y.at(i) + a * x.at(i));
                    i.set(i + 1);
                }
            },
        )
        .unwrap()
}

#[augur::staged]
fn both(ex: &Extracted<Axpy>) -> [SafeFn; 2] {
    [Backend::C, Backend::Jit].map(|b| {
        ex.safe_with(&CompileOptions::default().with_backend(b))
            .unwrap()
    })
}

#[test]
#[augur::staged]
fn slices_are_passed_with_their_lengths_and_every_index_is_checked() {
    let ex = axpy(0);
    let c = ex.c_code();
    assert!(
        c.contains("static int64_t augur_checked(int64_t i, int64_t len, int32_t slice) {"),
        "{c}"
    );
    assert!(c.contains("arg2[augur_checked(var0, arg3, 1)]"), "{c}");
    assert!(c.contains("arg1[augur_checked(var0, arg3, 0)]"), "{c}");
    let x = [1.0f32, 2.0, 3.0];
    for f in both(&ex) {
        let mut y = [10.0f32, 20.0, 30.0];
        f.call(&mut [2.0f32.into(), (&x[..]).into(), (&mut y[..]).into()])
            .unwrap();
        assert_eq!(y, [12.0, 24.0, 36.0], "{f:?}");
        // The unsafe call stays, on the same code.
        let raw = ex.compile().unwrap();
        // SAFETY: both arrays hold 3 floats.
        unsafe { raw.get()(1.0, x.as_ptr(), y.as_mut_ptr(), 3) };
        assert_eq!(y, [13.0, 26.0, 39.0]);
    }
    let mut it = Interpreter::new();
    let (px, py) = (
        it.memory_mut().alloc_slice(&x),
        it.memory_mut().alloc_slice(&[0.0f32; 3]),
    );
    ex.interpret_in(&mut it, &[1.0f32.into(), px, py, 3i64.into()])
        .unwrap();
    assert_eq!(it.memory().read_slice::<f32>(py, 3).unwrap(), x);
}

#[test]
#[augur::staged]
fn arguments_are_checked_against_the_parameters() {
    let [f, _] = both(&axpy(0));
    let x = [1.0f32; 3];
    let mut y = [0.0f32; 3];
    let mut short = [0.0f32; 2];
    let mut cases: Vec<(Vec<augur::safe::SafeArg>, &str)> = vec![
        (vec![2.0f32.into(), (&x[..]).into()], "takes 3 arguments"),
        (
            vec![2.0f64.into(), (&x[..]).into(), (&mut y[..]).into()],
            "parameter 0 has type f32, given 2.0 of type f64",
        ),
        (
            vec![2.0f32.into(), (&x[..]).into(), (&x[..]).into()],
            "which may be written: give a mutable slice",
        ),
        (
            vec![2.0f32.into(), (&x[..]).into(), (&mut short[..]).into()],
            "slices of length 3 and 2 share the length parameter 3",
        ),
    ];
    let ints = [1i32; 3];
    let mut y2 = [0.0f32; 3];
    cases.push((
        vec![2.0f32.into(), (&ints[..]).into(), (&mut y2[..]).into()],
        "parameter 1 has type *const f32, given a slice of i32",
    ));
    for (mut args, want) in cases {
        let e = f.call(&mut args).unwrap_err().to_string();
        assert!(e.contains(want), "{e}");
    }
}

#[test]
#[augur::staged]
fn an_index_out_of_bounds_is_an_interpreter_error_naming_the_slice() {
    let ex = axpy(1);
    let mut it = Interpreter::new();
    // Larger buffers than the length: only the check stops the overrun.
    let (bx, by) = (
        it.memory_mut().alloc_slice(&[1.0f32; 8]),
        it.memory_mut().alloc_slice(&[0.0f32; 8]),
    );
    let e = ex
        .interpret_in(&mut it, &[1.0f32.into(), bx, by, 3i64.into()])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("index 3 is out of bounds of slice 1 (length 3)"),
        "{e}"
    );
}

/// Only in the child process `compiled_code_stops_at_an_index_out_of_bounds`
/// starts (the test binary again, this test alone, with
/// `AUGUR_SAFE_CHILD_BACKEND` set): overruns through the safe call, which
/// stops the process before it touches a byte past the slice.
#[test]
#[augur::staged]
fn overrun_child() {
    let Ok(backend) = std::env::var("AUGUR_SAFE_CHILD_BACKEND") else {
        return;
    };
    if std::env::var("AUGUR_SAFE_CHILD").is_err() {
        return;
    }
    let backend = if backend == "jit" {
        Backend::Jit
    } else {
        Backend::C
    };
    let f = axpy(1)
        .safe_with(&CompileOptions::default().with_backend(backend))
        .unwrap();
    let x = [1.0f32; 3];
    let mut y = [0.0f32; 3];
    let _ = f.call(&mut [1.0f32.into(), (&x[..]).into(), (&mut y[..]).into()]);
    unreachable!("the check stops the process");
}

#[test]
#[augur::staged]
fn compiled_code_stops_at_an_index_out_of_bounds() {
    // The child test's name in this binary: its module path less the crate.
    let child = concat!(module_path!(), "::overrun_child");
    let child = child.split_once("::").unwrap().1;
    for backend in ["c", "jit"] {
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", child, "--nocapture", "--test-threads=1"])
            .env("AUGUR_SAFE_CHILD", "1")
            .env("AUGUR_SAFE_CHILD_BACKEND", backend)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{backend}: {err}");
        assert!(
            err.contains("augur: index 3 is out of bounds of slice 1 (length 3)"),
            "{backend}: {err}"
        );
        assert!(
            !err.contains("the check stops the process"),
            "{backend}: {err}"
        );
    }
}

#[test]
#[augur::staged]
fn local_arrays_of_a_checked_function_are_checked() {
    let ex = Builder::new()
        .checked()
        .extract("pick", |i: Dyn<i32>| {
            let t = Dyn::<[i32; 4]>::uninit();
            for k in 0..4i32 {
                t.at(k).set(10 * k);
            }
            t.at(i)
        })
        .unwrap();
    let c = ex.c_code();
    assert!(
        c.contains("var0[0] = 0;") && c.contains("[augur_checked((int64_t)arg0, (int64_t)4, -1)]"),
        "{c}"
    );
    let f = ex.safe().unwrap();
    assert_eq!(f.call(&mut [2.into()]).unwrap(), 20.into());
    let e = ex.interpret(&[4.into()]).unwrap_err().to_string();
    assert!(
        e.contains("index 4 is out of bounds of a local array (length 4)"),
        "{e}"
    );
}

#[test]
#[augur::staged]
fn what_a_check_cannot_cover_is_refused_at_its_line() {
    let line = line!() + 3;
    let e = Builder::new()
        .slice(0, 1)
        .extract("f", |x: Dyn<*mut i32>, _n: Dyn<i32>| x.offset(1).at(0))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("`f` indexes a pointer that is not a slice parameter or a local array"),
        "{e}"
    );
    assert!(e.contains(&format!("safe_call.rs:{line}")), "{e}");
    let e = Builder::new()
        .slice(0, 1)
        .extract("f", |x: Dyn<*mut u8>, n: Dyn<u64>| {
            libc::MEMCPY.call(x, x.cast_ptr::<*const u8>(), n);
        })
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("calls `memcpy`, which returns a pointer") || e.contains("passes a pointer"),
        "{e}"
    );
    let e = Builder::new()
        .slice(0, 1)
        .extract("f", |x: Dyn<*mut i32>, n: Dyn<i32>| {
            n.set(n + 1);
            x.at(0)
        })
        .unwrap_err()
        .to_string();
    assert!(e.contains("assigns `arg1`, a slice or its length"), "{e}");
    let e = Builder::new()
        .slice(0, 1)
        .extract("f", |x: Dyn<f32>, n: Dyn<i32>| x + n.cast::<f32>())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("Builder::slice(0, 1): a slice is a pointer to scalars and an integer length"),
        "{e}"
    );
    // An unchecked function, and a pointer parameter that is not a slice.
    let ex = Builder::new()
        .extract("g", |x: Dyn<*mut i32>| x.at(0))
        .unwrap();
    assert!(ex
        .safe()
        .unwrap_err()
        .to_string()
        .contains("`g` is not checked"));
    let ex = Builder::new()
        .slice(0, 1)
        .extract("h", |x: Dyn<*mut i32>, _n: Dyn<i32>, _p: Dyn<*mut i32>| {
            x.at(0)
        })
        .unwrap();
    let e = ex.safe().unwrap_err().to_string();
    assert!(
        e.contains("parameter 2 has type *mut i32, and only scalars and slices"),
        "{e}"
    );
}
