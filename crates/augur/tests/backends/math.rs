//! `augur::math`: every `<math.h>` function, `double` and `float`, staged,
//! compiled with the system compiler and interpreted, on inputs that reach
//! the edges (zeros of both signs, infinities, NaN, huge and subnormal
//! values, halfway cases of the rounding functions). Compiled and
//! interpreted results must agree bit for bit (NaNs: both NaN), and both
//! must agree with Rust's own function wherever Rust has one.

use augur::exec::{Backend, CompileOptions};
use augur::{Builder, Dyn, Interpreter, Value};

/// Results each staged function writes.
const COUNT: usize = 59;

/// Stages `f(x, y, z, out)` writing every `<math.h>` function of `$t` at
/// `(x, y, z)` to `out[0..COUNT]`, in the order of [`reference`]'s rows:
/// integer results converted to `$t`, each out-parameter stored after the
/// result of the call that wrote it.
macro_rules! all_functions {
    ($t:ty, $nan:path) => {
        Builder::new()
            .extract(
                "all",
                |x: Dyn<$t>, y: Dyn<$t>, z: Dyn<$t>, out: Dyn<*mut $t>| {
                    let mut k = 0i64;
                    let mut put = |v: Dyn<$t>| {
                        out.at(k).set(v);
                        k += 1;
                    };
                    type D = Dyn<$t>;
                    let unary: [fn(D) -> D; 33] = [
                        D::acos,
                        D::asin,
                        D::atan,
                        D::cos,
                        D::sin,
                        D::tan,
                        D::acosh,
                        D::asinh,
                        D::atanh,
                        D::cosh,
                        D::sinh,
                        D::tanh,
                        D::exp,
                        D::exp2,
                        D::expm1,
                        D::log,
                        D::log10,
                        D::log1p,
                        D::log2,
                        D::logb,
                        D::cbrt,
                        D::fabs,
                        D::sqrt,
                        D::erf,
                        D::erfc,
                        D::lgamma,
                        D::tgamma,
                        D::ceil,
                        D::floor,
                        D::nearbyint,
                        D::rint,
                        D::round,
                        D::trunc,
                    ];
                    for f in unary {
                        put(f(x));
                    }
                    let binary: [fn(D, D) -> D; 10] = [
                        |a, b| a.atan2(b),
                        |a, b| a.pow(b),
                        |a, b| a.hypot(b),
                        |a, b| a.fmod(b),
                        |a, b| a.remainder(b),
                        |a, b| a.copysign(b),
                        |a, b| a.nextafter(b),
                        |a, b| a.fdim(b),
                        |a, b| a.fmax(b),
                        |a, b| a.fmin(b),
                    ];
                    for f in binary {
                        put(f(x, y));
                    }
                    put(x.fma(y, z));
                    put(x.ilogb().cast::<$t>());
                    // Out of range, C leaves these unspecified: convert only
                    // values that fit.
                    let fits = x.fabs().lt(1e9 as $t);
                    let rounded: [fn(D) -> Dyn<i64>; 4] =
                        [D::lrint, D::lround, D::llrint, D::llround];
                    for f in rounded {
                        let safe = D::select(fits, x, 0.0 as $t);
                        put(f(safe).cast::<$t>());
                    }
                    let e = Dyn::<i32>::select(y.fabs().lt(100.0 as $t), y.cast::<i32>(), 3);
                    put(x.ldexp(e));
                    put(x.scalbn(e));
                    put(x.scalbln(e.cast::<i64>()));
                    let exp = Dyn::new(0i32);
                    put(x.frexp(exp.addr()));
                    put(exp.cast::<$t>());
                    let whole = Dyn::new(0.0 as $t);
                    put(x.modf(whole.addr()));
                    put(whole);
                    let quo = Dyn::new(0i32);
                    put(x.remquo(y, quo.addr()));
                    put(quo.cast::<$t>());
                    put($nan.call(Dyn::str("")));
                    assert_eq!(k as usize, COUNT);
                },
            )
            .unwrap()
    };
}

/// Both NaN, or equal including the sign of zero.
#[augur::staged]
fn same_f64(a: f64, b: f64) -> bool {
    (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits()
}

/// Within `ulps` units in the last place (NaN with NaN, infinities equal).
#[augur::staged]
fn close(a: f64, b: f64, ulps: f64, ulp: f64) -> bool {
    (a.is_nan() && b.is_nan()) || a == b || (a - b).abs() <= ulps * ulp * a.abs().max(b.abs())
}

macro_rules! reference {
    ($t:ty, $x:expr, $y:expr, $z:expr) => {{
        let (x, y, z): ($t, $t, $t) = ($x, $y, $z);
        // (index in the staged order, Rust's value, allowed ulps; 0: exact).
        let rows: Vec<(usize, $t, f64)> = vec![
            (0, x.acos(), 2.0),
            (1, x.asin(), 2.0),
            (2, x.atan(), 2.0),
            (3, x.cos(), 2.0),
            (4, x.sin(), 2.0),
            (5, x.tan(), 2.0),
            (6, x.acosh(), 4.0),
            (7, x.asinh(), 4.0),
            (8, x.atanh(), 4.0),
            (9, x.cosh(), 2.0),
            (10, x.sinh(), 2.0),
            (11, x.tanh(), 2.0),
            (12, x.exp(), 2.0),
            (13, x.exp2(), 2.0),
            (14, x.exp_m1(), 2.0),
            (15, x.ln(), 2.0),
            (16, x.log10(), 2.0),
            (17, x.ln_1p(), 2.0),
            (18, x.log2(), 2.0),
            (20, x.cbrt(), 2.0),
            (21, x.abs(), 0.0),
            (22, x.sqrt(), 0.0),
            (27, x.ceil(), 0.0),
            (28, x.floor(), 0.0),
            (31, x.round(), 0.0),
            (32, x.trunc(), 0.0),
            (33, x.atan2(y), 2.0),
            (34, x.powf(y), 2.0),
            (35, x.hypot(y), 2.0),
            (36, x % y, 0.0),
            (38, x.copysign(y), 0.0),
            (43, x.mul_add(y, z), 0.0),
        ];
        rows
    }};
}

#[augur::staged]
fn inputs_f64() -> Vec<(f64, f64, f64)> {
    vec![
        (0.5, 2.0, -1.0),
        (-1.25, 0.75, 3.0),
        (2.5, -2.5, 0.5),
        (3.5, 2.0, 1e-300),
        (-2.5, 3.0, 0.0),
        (0.0, -0.0, 0.0),
        (-0.0, 0.0, -0.0),
        (1e300, 1e-300, 1.0),
        (f64::INFINITY, 1.0, 2.0),
        (f64::NEG_INFINITY, -3.0, 0.0),
        (f64::NAN, 1.0, 1.0),
        (7.0, 3.0, 0.1),
        (-7.5, 2.0, -0.1),
        (1.0, f64::NAN, 2.0),
        (100.0, 0.5, 1e10),
        (5e-324, 1.0, 0.0),
        (0.99, -4.0, 0.25),
    ]
}

#[test]
#[augur::staged]
fn every_double_function_compiled_interpreted_and_in_rust() {
    let f = all_functions!(f64, augur::math::NAN);
    let c = f.c_code();
    assert!(c.contains("#include <math.h>"), "{c}");
    for name in [
        "sqrt(",
        "tgamma(",
        "remquo(",
        "scalbln(",
        "nan(\"\")",
        "llround(",
    ] {
        assert!(c.contains(name), "{name} missing from\n{c}");
    }
    let lib = f.compile().unwrap();
    let jit = f
        .compile_with(&CompileOptions::default().with_backend(Backend::Jit))
        .unwrap();
    for (x, y, z) in inputs_f64() {
        let mut compiled = [0.0f64; COUNT];
        let mut jitted = [0.0f64; COUNT];
        // SAFETY: `all` writes COUNT doubles to its last argument.
        unsafe { (lib.get())(x, y, z, compiled.as_mut_ptr()) };
        // SAFETY: as above.
        unsafe { (jit.get())(x, y, z, jitted.as_mut_ptr()) };
        let mut interp = Interpreter::new();
        let out = interp.memory_mut().alloc_slice(&[0.0f64; COUNT]);
        let args = [Value::F64(x), Value::F64(y), Value::F64(z), out];
        f.interpret_in(&mut interp, &args).unwrap();
        let interpreted: Vec<f64> = interp.memory().read_slice(out, COUNT).unwrap();
        for k in 0..COUNT {
            assert!(
                same_f64(compiled[k], interpreted[k]) && same_f64(compiled[k], jitted[k]),
                "result {k} at ({x}, {y}, {z}): compiled {} interpreted {} JIT {}",
                compiled[k],
                interpreted[k],
                jitted[k]
            );
        }
        for (k, want, ulps) in reference!(f64, x, y, z) {
            assert!(
                close(compiled[k], want, ulps, f64::EPSILON),
                "result {k} at ({x}, {y}, {z}): C {} Rust {want}",
                compiled[k]
            );
        }
    }
}

#[test]
#[augur::staged]
fn every_float_function_compiled_interpreted_and_in_rust() {
    let f = all_functions!(f32, augur::math::NANF);
    let c = f.c_code();
    for name in [
        "sqrtf(",
        "tgammaf(",
        "remquof(",
        "scalblnf(",
        "nanf(\"\")",
        "fmaf(",
    ] {
        assert!(c.contains(name), "{name} missing from\n{c}");
    }
    let lib = f.compile().unwrap();
    let jit = f
        .compile_with(&CompileOptions::default().with_backend(Backend::Jit))
        .unwrap();
    for (x, y, z) in inputs_f64() {
        let (x, y, z) = (x as f32, y as f32, z as f32);
        let mut compiled = [0.0f32; COUNT];
        let mut jitted = [0.0f32; COUNT];
        // SAFETY: `all` writes COUNT floats to its last argument.
        unsafe { (lib.get())(x, y, z, compiled.as_mut_ptr()) };
        // SAFETY: as above.
        unsafe { (jit.get())(x, y, z, jitted.as_mut_ptr()) };
        let mut interp = Interpreter::new();
        let out = interp.memory_mut().alloc_slice(&[0.0f32; COUNT]);
        let args = [Value::F32(x), Value::F32(y), Value::F32(z), out];
        f.interpret_in(&mut interp, &args).unwrap();
        let interpreted: Vec<f32> = interp.memory().read_slice(out, COUNT).unwrap();
        for k in 0..COUNT {
            let (a, b, j) = (compiled[k] as f64, interpreted[k] as f64, jitted[k] as f64);
            assert!(
                same_f64(a, b) && same_f64(a, j),
                "result {k} at ({x}, {y}, {z}): compiled {a} interpreted {b} JIT {j}"
            );
        }
        for (k, want, ulps) in reference!(f32, x, y, z) {
            let (got, want) = (compiled[k] as f64, want as f64);
            assert!(
                close(got, want, ulps, f32::EPSILON as f64),
                "result {k} at ({x}, {y}, {z}): C {got} Rust {want}"
            );
        }
    }
}

/// The out-parameters go through the interpreter's checked memory: a
/// pointer past the end of a block is reported, not written.
#[test]
#[augur::staged]
fn an_out_parameter_out_of_bounds_is_an_interpreter_error() {
    let f = Builder::new()
        .extract("split", |x: Dyn<f64>, whole: Dyn<*mut f64>| {
            x.modf(whole.offset(1))
        })
        .unwrap();
    let mut interp = Interpreter::new();
    let one = interp.memory_mut().alloc_slice(&[0.0f64]);
    let err = f
        .interpret_in(&mut interp, &[Value::F64(2.5), one])
        .unwrap_err();
    assert!(matches!(err, augur::Error::Interp { .. }), "{err}");
    let two = interp.memory_mut().alloc_slice(&[0.0f64; 2]);
    let frac = f
        .interpret_in(&mut interp, &[Value::F64(2.5), two])
        .unwrap();
    assert_eq!(frac, Value::F64(0.5));
    let stored: Vec<f64> = interp.memory().read_slice(two, 2).unwrap();
    assert_eq!(stored, [0.0, 2.0]);
}

/// A variable named like a `<math.h>` function is renamed in the C, and a
/// function cannot take such a name.
#[test]
#[augur::staged]
fn math_names_stay_free_in_the_generated_c() {
    let f = Builder::new()
        .extract("g", |x: Dyn<f64>| {
            let sin = Dyn::named("sin", x);
            sin.sin() + Dyn::named("tgammaf", 1.0f64)
        })
        .unwrap();
    let c = f.c_code();
    assert!(!c.contains("double sin ="), "{c}");
    let lib = f.compile().unwrap();
    // SAFETY: `g` is `double g(double)`.
    assert_eq!(unsafe { (lib.get())(0.0) }, 1.0);
    let err = Builder::new()
        .extract("cbrtf", |x: Dyn<f32>| x)
        .unwrap_err();
    assert!(err.to_string().contains("cbrtf"), "{err}");
}
