//! `const` and `restrict` on pointer parameters: in the C and CUDA, in the
//! IR's text form, compiled and interpreted against plain Rust, and the
//! errors for misuse.

use augur::{Builder, Dyn, Error, Interpreter, Value};

/// `y[i] += a * x[i]` for `n` elements: `x` read-only, both restrict.
#[augur::staged]
fn axpy(b: Builder) -> augur::Extracted<unsafe extern "C" fn(f64, *const f64, *mut f64, i64)> {
    b.extract(
        "axpy",
        |a: Dyn<f64>, x: Dyn<*const f64>, y: Dyn<*mut f64>, n: Dyn<i64>| {
            let i = Dyn::new(0i64);
            while i.lt(n).is_true() {
                y.at(i).set(y.at(i) + a * x.at(i));
                i.set(i + 1);
            }
        },
    )
    .unwrap()
}

#[test]
#[augur::staged]
fn restrict_and_const_parameters_print_compile_and_run() {
    let f = axpy(Builder::new().restrict([1, 2]));
    let c = f.c_code();
    assert!(
        c.contains("void axpy(double arg0, const double *restrict arg1, double *restrict arg2, int64_t arg3)"),
        "{c}"
    );
    let cuda = f.cuda_code("").unwrap();
    assert!(cuda.contains("const double *__restrict__ arg1"), "{cuda}");
    let x: Vec<f64> = (0..10).map(|i| i as f64).collect();
    let mut y = vec![1.0f64; 10];
    let want: Vec<f64> = x.iter().zip(&y).map(|(x, y)| y + 0.5 * x).collect();
    let lib = f.compile().unwrap();
    // SAFETY: `axpy` reads 10 doubles at `x` and writes 10 at `y`, which
    // do not overlap.
    unsafe { (lib.get())(0.5, x.as_ptr(), y.as_mut_ptr(), 10) };
    assert_eq!(y, want);
    let mut interp = Interpreter::new();
    let xp = interp.memory_mut().alloc_slice(&x);
    let yp = interp.memory_mut().alloc_slice(&[1.0f64; 10]);
    f.interpret_in(&mut interp, &[Value::F64(0.5), xp, yp, Value::I64(10)])
        .unwrap();
    assert_eq!(interp.memory().read_slice::<f64>(yp, 10).unwrap(), want);
}

#[test]
#[augur::staged]
fn without_restrict_nothing_is_promised() {
    let c = axpy(Builder::new()).c_code();
    assert!(!c.contains("restrict"), "{c}");
    assert!(c.contains("const double *arg1, double *arg2"), "{c}");
}

#[test]
#[augur::staged]
fn restrict_reads_back_from_the_ir_text_and_is_verified() {
    let f = axpy(Builder::new().restrict([2]));
    let text = f.ir().to_string();
    assert!(text.contains("restrict "), "{text}");
    let back = augur::ir::parse(&text).unwrap();
    assert_eq!(back.to_string(), text);
    assert_eq!(back.restrict.len(), 1);
    let mut bad = back.clone();
    bad.restrict = vec![bad.params[0]];
    let err = augur::ir::verify::verify(&bad).unwrap_err();
    assert!(err.contains("not a pointer parameter"), "{err}");
}

#[test]
#[augur::staged]
fn restrict_on_a_value_or_a_missing_parameter_is_a_misuse_error() {
    for (params, says) in [(vec![0], "of type f64"), (vec![7], "not one of the 4")] {
        let err = Builder::new()
            .restrict(params)
            .extract(
                "axpy",
                |a: Dyn<f64>, x: Dyn<*const f64>, y: Dyn<*mut f64>, n: Dyn<i64>| {
                    let _ = (a, x, y, n);
                },
            )
            .unwrap_err();
        assert!(matches!(err, Error::Misuse { .. }), "{err}");
        assert!(err.to_string().contains(says), "{err}");
    }
}
