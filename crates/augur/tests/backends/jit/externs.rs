//! Calls out of JIT code: variadic ones (`snprintf`, `printf`) against what
//! the C backend's calls do, user externs registered by address, the
//! backend choice, and what the JIT refuses.

use augur::exec::{compile, jit, Backend, CompileOptions, Interpreter};
use augur::ir::parse;
use augur::{Builder, Dyn, Error, ExternFn};

/// `snprintf` with every kind of argument, and more of them than the
/// registers hold (integers and doubles spill to the stack, in order).
const SNPRINTF: &str = r#"
extern snprintf(*mut char, u64, *const char, ...) -> i32 in "stdio.h";
fn fmt(buf: *mut char, n: u64, x: i32, y: f64) -> i32 {
  let small: i8 = (x as i8);
  let u: u16 = (x as u16);
  let big: i64 = (x as i64) * 3000000000i64;
  let f: f32 = (y as f32) * 0.5f32;
  let c: char = 65char;
  return snprintf(buf, n, "%d %hhd %hu %ld %.3f %.2f %c %s|%d %d %d %d %d %d %d|%g %g %g %g %g %g %g %g %g %g", x, small, u, big, y, f, c, "str", 1, 2, 3, 4, 5, 6, 7, y, y + 1.0, y + 2.0, y + 3.0, y + 4.0, y + 5.0, y + 6.0, y + 7.0, y + 8.0, y + 9.0);
}
"#;

type Fmt = unsafe extern "C" fn(*mut u8, u64, i32, f64) -> i32;

#[test]
#[augur::staged]
fn variadic_calls_pass_arguments_as_c_does() {
    let f = parse(SNPRINTF).unwrap();
    let lib = compile(
        &augur::codegen::write_function(&f),
        &CompileOptions::default(),
    )
    .unwrap();
    let code = jit::compile_function(&f, &CompileOptions::default()).unwrap();
    // SAFETY: `fmt` has this C signature.
    let (c, j): (Fmt, Fmt) = unsafe { (lib.symbol("fmt").unwrap(), code.symbol("fmt").unwrap()) };
    for (x, y) in [(0, 0.0), (-129, 2.5), (70000, -1e300), (i32::MIN, f64::NAN)] {
        let run = |g: Fmt| {
            let mut buf = [0u8; 512];
            // SAFETY: the buffer holds `n` bytes.
            let n = unsafe { g(buf.as_mut_ptr(), buf.len() as u64, x, y) };
            (
                n,
                String::from_utf8_lossy(&buf[..n.max(0) as usize]).into_owned(),
            )
        };
        let (from_c, from_jit) = (run(c), run(j));
        assert_eq!(from_c, from_jit, "x = {x}, y = {y}");
        assert!(from_c.1.contains("|1 2 3 4 5 6 7|"), "{}", from_c.1);
    }
}

/// `printf` writes to the process's stdout through C's stdio: run in a
/// child process (this test binary, filtered to the child test) and
/// compare its output with the C backend's and the interpreter's.
const PRINTF: &str = r#"
extern printf(*const char, ...) -> i32 in "stdio.h";
extern fflush(*mut void) -> i32 in "stdio.h";
fn show(x: i32, y: f64) -> i32 {
  let n: i32 = printf("x=%d y=%.4f s=%s c=%c u=%u\n", x, y, "text", 66char, (x as u32));
  let m: i32 = printf("%5.1f|%-4d|%x\n", y * 2.0, x, 255);
  fflush((0i64 as *mut void));
  return n + m;
}
"#;

#[test]
#[augur::staged]
fn printf_child() {
    let Ok(backend) = std::env::var("AUGUR_JIT_PRINTF_CHILD") else {
        return; // only in the child process
    };
    let f = parse(PRINTF).unwrap();
    let opts = CompileOptions::default();
    type Show = unsafe extern "C" fn(i32, f64) -> i32;
    let (_lib, _code, show): (_, _, Show) = if backend == "c" {
        let lib = compile(&augur::codegen::write_function(&f), &opts).unwrap();
        // SAFETY: `show` has this C signature.
        let show = unsafe { lib.symbol("show").unwrap() };
        (Some(lib), None, show)
    } else {
        let code = jit::compile_function(&f, &opts).unwrap();
        // SAFETY: as above.
        let show = unsafe { code.symbol("show").unwrap() };
        (None, Some(code), show)
    };
    // SAFETY: `show` takes plain values.
    let n = unsafe { show(-42, 2.71875) };
    println!("returned {n}");
}

#[test]
#[augur::staged]
fn printf_writes_what_c_writes() {
    // The child test's name in this binary: its module path less the crate.
    let child = concat!(module_path!(), "::printf_child");
    let child = child.split_once("::").unwrap().1;
    let run = |backend: &str| {
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", child, "--nocapture", "--test-threads=1"])
            .env("AUGUR_JIT_PRINTF_CHILD", backend)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        let text = String::from_utf8(out.stdout).unwrap();
        // The generated code's lines, and the count they returned.
        // (The harness's "test ... " may lead the first line.)
        text.lines()
            .filter_map(|l| match l.find("x=") {
                Some(at) => Some(&l[at..]),
                None => (l.contains('|') || l.starts_with("returned")).then_some(l),
            })
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    let (c, j) = (run("c"), run("jit"));
    assert_eq!(c.len(), 3, "{c:?}");
    assert_eq!(c, j);
    let f = parse(PRINTF).unwrap();
    let mut it = Interpreter::new();
    it.register("fflush", |_, _| Ok(augur::Value::I32(0)));
    it.call(&f, &[augur::Value::I32(-42), augur::Value::F64(2.71875)])
        .unwrap();
    let interp: Vec<&str> = it.output().lines().collect();
    assert_eq!(interp, c[..2].to_vec());
}

extern "C" fn mix(a: i32, b: f64, c: u8) -> f64 {
    f64::from(a) * b + f64::from(c)
}

const MIX: ExternFn<fn(i32, f64, u8) -> f64> = ExternFn::new("mix");
const MIX_C: &str = "#include <stdint.h>\n\
    double mix(int32_t a, double b, uint8_t c) { return a * b + c; }\n";

#[test]
#[augur::staged]
fn user_externs_come_from_registered_addresses() {
    let ex = Builder::new()
        .extract("use_mix", |x: Dyn<i32>, y: Dyn<f64>| {
            MIX.call(x, y, 200u8) + 1.0
        })
        .unwrap();
    let c_opts = CompileOptions {
        extra_c: vec![MIX_C.into()],
        ..CompileOptions::default()
    }
    .with_backend(Backend::C);
    let jit_opts = CompileOptions::default()
        .with_backend(Backend::Jit)
        .with_symbol("mix", mix as *const ());
    let (c, j) = (
        ex.compile_with(&c_opts).unwrap(),
        ex.compile_with(&jit_opts).unwrap(),
    );
    assert_eq!((c.backend(), j.backend()), (Backend::C, Backend::Jit));
    assert!(c.library().is_some() && j.library().is_none());
    for (x, y) in [(0, 0.0), (3, -1.25), (-7, 1e9)] {
        // SAFETY: `use_mix` is `double use_mix(int32_t, double)`.
        let (a, b) = unsafe { (c.get()(x, y), j.get()(x, y)) };
        assert_eq!(a.to_bits(), b.to_bits(), "{x}, {y}");
    }
    // Unregistered, it is an error that names it.
    let e = ex
        .compile_with(&CompileOptions::default().with_backend(Backend::Jit))
        .unwrap_err();
    assert!(
        matches!(&e, Error::Jit { message } if message.contains("`mix`")),
        "{e}"
    );
}

#[test]
#[augur::staged]
fn auto_uses_the_jit_without_a_compiler() {
    let ex = Builder::new().extract("neg", |x: Dyn<i64>| -x).unwrap();
    let opts = CompileOptions {
        cc: Some("/nonexistent/cc".into()),
        ..CompileOptions::default()
    };
    assert_eq!(opts.backend, Backend::Auto);
    assert_eq!(opts.resolved_backend(), Backend::Jit);
    let f = ex.compile_with(&opts).unwrap();
    assert_eq!(f.backend(), Backend::Jit);
    // SAFETY: `neg` is `int64_t neg(int64_t)`.
    assert_eq!(unsafe { f.get()(i64::MIN + 1) }, i64::MAX);
    // With a compiler on PATH, Auto means C.
    if augur::exec::compile::compiler_found("cc") {
        assert_eq!(CompileOptions::default().resolved_backend(), Backend::C);
    }
    // Asked for C explicitly, a missing compiler is an error.
    let e = ex.compile_with(&opts.with_backend(Backend::C)).unwrap_err();
    assert!(matches!(e, Error::CompilerMissing { .. }), "{e}");
}

#[test]
#[augur::staged]
fn what_the_jit_does_not_lower_is_an_error_naming_it() {
    let vla = parse("fn f(n: i32) -> i32 { var v: [i32] = n; v[0] = 1; return v[0]; }");
    if let Ok(f) = vla {
        let e = jit::compile_function(&f, &CompileOptions::default()).unwrap_err();
        assert!(e.to_string().contains("variable-length array"), "{e}");
    }
    let missing = parse(
        "extern no_such_function_anywhere(i32) -> i32;\n\
         fn f(x: i32) -> i32 { return no_such_function_anywhere(x); }",
    )
    .unwrap();
    let e = jit::compile_function(&missing, &CompileOptions::default()).unwrap_err();
    assert!(e.to_string().contains("`no_such_function_anywhere`"), "{e}");
    // Declared but never called is fine, as in C.
    let unused = parse(
        "extern no_such_function_anywhere(i32) -> i32;\n\
         fn f(x: i32) -> i32 { return x; }",
    )
    .unwrap();
    assert!(jit::compile_function(&unused, &CompileOptions::default()).is_ok());
    let float_rem = parse("fn f(x: f64) -> f64 { return x % 2.0; }").unwrap();
    let e = jit::compile_function(&float_rem, &CompileOptions::default()).unwrap_err();
    assert!(e.to_string().contains("operator %"), "{e}");
}

/// The functions of one module call each other through externs of their
/// names, as in one C translation unit; a declaration that disagrees with
/// the definition is an error.
#[test]
#[augur::staged]
fn functions_of_one_module_call_each_other() {
    let sq = parse("fn sq(x: i64) -> i64 { return x * x; }").unwrap();
    let sum = parse(
        "extern sq(i64) -> i64;\n\
         fn sum_sq(a: i64, b: i64) -> i64 { return sq(a) + sq(b); }",
    )
    .unwrap();
    let code = jit::compile_module(&[&sq, &sum], &CompileOptions::default()).unwrap();
    // SAFETY: `sum_sq` is `int64_t sum_sq(int64_t, int64_t)`.
    let f: unsafe extern "C" fn(i64, i64) -> i64 = unsafe { code.symbol("sum_sq").unwrap() };
    // SAFETY: plain values.
    assert_eq!(unsafe { f(3, -4) }, 25);
    let bad = parse("extern sq(i32) -> i64;\nfn h(a: i32) -> i64 { return sq(a); }").unwrap();
    let e = jit::compile_module(&[&sq, &bad], &CompileOptions::default()).unwrap_err();
    assert!(e.to_string().contains("another signature"), "{e}");
}
