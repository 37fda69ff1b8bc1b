//! Programs of several functions (`augur::Module`): staged calls, staged
//! recursion (a recursive C function), mutual recursion, functions
//! specialised on first-stage keys (one C function per key), pointers
//! passed between functions. Every module is extracted twice (the C must
//! be the same), compiled with the C compiler and with the JIT, and
//! interpreted; all three are compared with the plain Rust the first stage
//! means.

use augur::exec::{Backend, CompileOptions};
use augur::{Builder, CompiledModule, Dyn, ExtractedModule, Func, Interpreter, Module, Value};

/// A module and the handles of its functions.
type Built<H> = (Module<'static>, H);

/// Extracts the module `make` builds twice (byte-identical C), and
/// compiles it with both backends; gives the first build's handles.
#[augur::staged]
fn build<H>(make: impl Fn() -> Built<H>) -> (ExtractedModule, [CompiledModule; 2], H) {
    let (m, handles) = make();
    let ex = m.extract().unwrap();
    assert_eq!(
        ex.c_code(),
        make().0.extract().unwrap().c_code(),
        "C differs between extractions"
    );
    let c = ex
        .compile_with(&CompileOptions::default().with_backend(Backend::C))
        .unwrap();
    let jit = ex
        .compile_with(&CompileOptions::default().with_backend(Backend::Jit))
        .unwrap();
    (ex, [c, jit], handles)
}

#[augur::staged]
fn fib_rust(n: i64) -> i64 {
    if n < 2 {
        n
    } else {
        fib_rust(n - 1) + fib_rust(n - 2)
    }
}

type Fib = Func<fn(i64) -> i64>;

#[augur::staged]
fn fib_module() -> Built<Fib> {
    let mut m = Builder::new().module();
    let fib: Fib = m.declare("fib");
    m.define(fib, move |n: Dyn<i64>| {
        let r = Dyn::new(n);
        if n.ge(2).is_true() {
            r.set(fib.call(n - 1) + fib.call(n - 2));
        }
        r
    });
    (m, fib)
}

#[test]
#[augur::staged]
fn staged_recursion_gives_a_recursive_c_function() {
    let (ex, libs, fib) = build(fib_module);
    let c = ex.c_code();
    assert_eq!(ex.functions().count(), 1, "{c}");
    assert!(c.contains("int64_t fib(int64_t arg0) {"), "{c}");
    assert!(c.contains("fib(arg0 - 1)"), "{c}");
    for n in 0..=20 {
        let want = fib_rust(n);
        assert_eq!(
            ex.interpret(fib, &[n.into()]).unwrap(),
            want.into(),
            "n = {n}"
        );
        for lib in &libs {
            // SAFETY: `fib` is `int64_t fib(int64_t)`.
            assert_eq!(
                unsafe { lib.get(fib).unwrap()(n) },
                want,
                "{:?}, n = {n}",
                lib.backend()
            );
        }
    }
}

type Power = Func<fn(f64) -> f64, u32>;

#[augur::staged]
fn power_module(exported: &[u32]) -> Built<Power> {
    let mut m = Builder::new().module();
    let power = m.declare_keyed::<u32, fn(f64) -> f64>("power");
    m.define_keyed(power, move |k: u32, x: Dyn<f64>| {
        if k == 0 {
            Dyn::new(1.0)
        } else if k % 2 == 0 {
            let h = power.at(k / 2).call(x);
            h * h
        } else {
            x * power.at(k - 1).call(x)
        }
    });
    for &k in exported {
        m.export(power.at(k));
    }
    (m, power)
}

/// `x^k` in the order the staged `power` computes it.
#[augur::staged]
fn power_rust(k: u32, x: f64) -> f64 {
    match k {
        0 => 1.0,
        k if k % 2 == 0 => {
            let h = power_rust(k / 2, x);
            h * h
        }
        k => x * power_rust(k - 1, x),
    }
}

#[test]
#[augur::staged]
fn a_keyed_family_gives_one_function_per_key_named_by_it() {
    let keys = [13, 5];
    let (ex, libs, power) = build(|| power_module(&keys));
    let names: Vec<&str> = ex.functions().map(|f| f.name.as_str()).collect();
    // 13 → 12 → 6 → 3 → 2 → 1 → 0; 5 → 4 → 2 (already there).
    assert_eq!(
        names,
        [
            "power_13", "power_5", "power_12", "power_4", "power_6", "power_2", "power_3",
            "power_1", "power_0"
        ]
    );
    let c = ex.c_code();
    assert!(c.contains("double power_12(double arg0)"), "{c}");
    assert_eq!(ex.name(power.at(3)).unwrap(), "power_3");
    for &k in &keys {
        for x in [0.0, 1.5, -2.25, 1e10, f64::NAN] {
            let want = power_rust(k, x);
            let got = ex.interpret(power.at(k), &[x.into()]).unwrap();
            assert!(got.to_bits_eq(want), "k = {k}, x = {x}: {got}");
            for lib in &libs {
                // SAFETY: each `power_k` is `double power_k(double)`.
                let got = unsafe { lib.get(power.at(k)).unwrap()(x) };
                assert!(got.to_bits() == want.to_bits() || got.is_nan() && want.is_nan());
            }
        }
    }
    // A key nothing reaches has no function.
    let err = ex.name(power.at(7)).unwrap_err().to_string();
    assert!(err.contains("no function `power` at 7"), "{err}");
}

/// Compares a value with an `f64` bit for bit (NaNs: both NaN).
trait BitsEq {
    fn to_bits_eq(&self, want: f64) -> bool;
}

impl BitsEq for Value {
    #[augur::staged]
    fn to_bits_eq(&self, want: f64) -> bool {
        match *self {
            Value::F64(x) => x.to_bits() == want.to_bits() || x.is_nan() && want.is_nan(),
            _ => false,
        }
    }
}

type Parity = Func<fn(u32) -> bool>;

#[augur::staged]
fn parity_module() -> Built<(Parity, Parity)> {
    let mut m = Builder::new().module();
    let even: Func<fn(u32) -> bool> = m.declare("is_even");
    let odd: Func<fn(u32) -> bool> = m.declare("is_odd");
    m.define(even, move |n: Dyn<u32>| {
        let r = Dyn::new(true);
        if n.ne(0u32).is_true() {
            r.set(odd.call(n - 1u32));
        }
        r
    });
    m.define(odd, move |n: Dyn<u32>| {
        let r = Dyn::new(false);
        if n.ne(0u32).is_true() {
            r.set(even.call(n - 1u32));
        }
        r
    });
    (m, (even, odd))
}

#[test]
#[augur::staged]
fn mutual_recursion_works_in_c_the_jit_and_the_interpreter() {
    let (ex, libs, (even, odd)) = build(parity_module);
    for n in [0u32, 1, 2, 7, 100, 1001] {
        assert_eq!(
            ex.interpret(even, &[n.into()]).unwrap(),
            (n % 2 == 0).into()
        );
        assert_eq!(ex.interpret(odd, &[n.into()]).unwrap(), (n % 2 == 1).into());
        for lib in &libs {
            // SAFETY: both are `bool f(uint32_t)`.
            unsafe {
                assert_eq!(lib.get(even).unwrap()(n), n % 2 == 0);
                assert_eq!(lib.get(odd).unwrap()(n), n % 2 == 1);
            }
        }
    }
}

type Sum = Func<fn(*const i32, i64) -> i64>;

#[augur::staged]
fn sum_module() -> Built<Sum> {
    let mut m = Builder::new().module();
    let sum: Func<fn(*const i32, i64) -> i64> = m.declare("sum");
    m.define(sum, move |p: Dyn<*const i32>, n: Dyn<i64>| {
        let r = Dyn::new(0i64);
        if n.gt(0i64).is_true() {
            let last = p.at(n - 1).cast::<i64>();
            r.set(last + sum.call(p, n - 1));
        }
        r
    });
    (m, sum)
}

#[test]
#[augur::staged]
fn pointers_pass_between_functions_and_deep_recursion_is_interpreted() {
    let (ex, libs, sum) = build(sum_module);
    let xs: Vec<i32> = (0..3000).map(|i| i * 7 - 1000).collect();
    let want: i64 = xs.iter().map(|&x| x as i64).sum();
    let mut it = Interpreter::new();
    let p = it.memory_mut().alloc_slice(&xs);
    let got = ex
        .interpret_in(&mut it, sum, &[p, (xs.len() as i64).into()])
        .unwrap();
    assert_eq!(got, want.into());
    for lib in &libs {
        // SAFETY: `sum` reads `n` ints at `p`.
        assert_eq!(
            unsafe { lib.get(sum).unwrap()(xs.as_ptr(), xs.len() as i64) },
            want
        );
    }
    // Reading past the end is found in the callee.
    let err = ex
        .interpret_in(&mut it, sum, &[p, (xs.len() as i64 + 1).into()])
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("load of 4 bytes at offset 12000 of allocation"),
        "{err}"
    );
    // Recursion without end stops at the depth limit.
    it.set_call_depth_limit(100);
    let err = ex
        .interpret_in(&mut it, sum, &[p, 200i64.into()])
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("call depth limit of 100 exceeded calling `sum`"),
        "{err}"
    );
}

/// A first-stage expression tree; node `i`'s children come after it.
#[derive(Clone, Debug)]
enum Node {
    X,
    Lit(i32),
    Add(usize, usize),
    Mul(usize, usize),
    Neg(usize),
}

/// `(x + 3) * (x + 3) + -(x * 2)`, the `x + 3` node shared.
#[augur::staged]
fn tree() -> Vec<Node> {
    use Node::*;
    vec![
        Add(1, 4),
        Mul(2, 2),
        Add(3, 6),
        Lit(3),
        Neg(5),
        Mul(6, 7),
        X,
        Lit(2),
    ]
}

#[augur::staged]
fn eval_rust(t: &[Node], i: usize, x: i32) -> i32 {
    match t[i] {
        Node::X => x,
        Node::Lit(c) => c,
        Node::Add(a, b) => eval_rust(t, a, x).wrapping_add(eval_rust(t, b, x)),
        Node::Mul(a, b) => eval_rust(t, a, x).wrapping_mul(eval_rust(t, b, x)),
        Node::Neg(a) => eval_rust(t, a, x).wrapping_neg(),
    }
}

type Eval = Func<fn(i32) -> i32, usize>;

#[augur::staged]
fn tree_module() -> Built<Eval> {
    let t = tree();
    let mut m = Builder::new().module();
    let eval = m.declare_keyed::<usize, fn(i32) -> i32>("eval");
    m.define_keyed(eval, move |i: usize, x: Dyn<i32>| match t[i] {
        Node::X => x,
        Node::Lit(c) => Dyn::lit(c),
        Node::Add(a, b) => eval.at(a).call(x) + eval.at(b).call(x),
        Node::Mul(a, b) => eval.at(a).call(x) * eval.at(b).call(x),
        Node::Neg(a) => -eval.at(a).call(x),
    });
    m.export(eval.at(0));
    (m, eval)
}

#[test]
#[augur::staged]
fn a_tree_walk_specialised_on_a_static_tree_has_a_function_per_node() {
    let (ex, libs, eval) = build(tree_module);
    // The shared `x + 3` node and `x` are one function each.
    assert_eq!(ex.functions().count(), tree().len());
    for x in [-5, 0, 1, 7, i32::MAX] {
        let want = eval_rust(&tree(), 0, x);
        assert_eq!(ex.interpret(eval.at(0), &[x.into()]).unwrap(), want.into());
        for lib in &libs {
            // SAFETY: `eval_0` is `int32_t eval_0(int32_t)`.
            assert_eq!(unsafe { lib.get(eval.at(0)).unwrap()(x) }, want);
        }
    }
}

type Steps = Func<fn(u64) -> u32>;

#[augur::staged]
fn collatz_module() -> Built<Steps> {
    let mut m = Builder::new().module();
    let step: Func<fn(u64) -> u64> = m.declare("collatz_step");
    let steps: Func<fn(u64) -> u32> = m.declare("collatz_steps");
    m.define(step, |n: Dyn<u64>| {
        let r = Dyn::new(n / 2u64);
        if (n % 2u64).ne(0u64).is_true() {
            r.set(n * 3u64 + 1u64);
        }
        r
    });
    m.define(steps, move |n: Dyn<u64>| {
        let k = Dyn::new(0u32);
        let v = Dyn::new(n);
        while v.gt(1u64).is_true() {
            v.set(step.call(v));
            k.set(k + 1u32);
        }
        k
    });
    (m, steps)
}

#[test]
#[augur::staged]
fn staged_calls_inside_dyn_loops_and_branches() {
    let (ex, libs, steps) = build(collatz_module);
    for n in [1u64, 2, 3, 27, 97, 871] {
        let (mut v, mut want) = (n, 0u32);
        while v > 1 {
            v = if v % 2 == 0 { v / 2 } else { v * 3 + 1 };
            want += 1;
        }
        assert_eq!(ex.interpret(steps, &[n.into()]).unwrap(), want.into());
        for lib in &libs {
            // SAFETY: `uint32_t collatz_steps(uint64_t)`.
            assert_eq!(unsafe { lib.get(steps).unwrap()(n) }, want);
        }
    }
}

// ----- errors -----

#[augur::staged]
fn error_of(m: Module<'_>) -> String {
    m.extract().unwrap_err().to_string()
}

#[test]
#[augur::staged]
fn a_function_called_but_never_defined_names_the_call() {
    let mut m = Builder::new().module();
    let g: Func<fn(i32) -> i32> = m.declare("g");
    let f: Func<fn(i32) -> i32> = m.declare("f");
    let line = line!() + 1;
    m.define(f, move |x: Dyn<i32>| g.call(x) + 1);
    let e = error_of(m);
    assert!(
        e.contains("`g` (declared at") && e.contains("is called but never defined"),
        "{e}"
    );
    assert!(e.contains(&format!("modules.rs:{line}")), "{e}");
}

#[test]
#[augur::staged]
fn misuse_of_the_module_api_is_reported_with_its_line() {
    // Two definitions.
    let mut m = Builder::new().module();
    let f: Func<fn(i32) -> i32> = m.declare("f");
    m.define(f, |x: Dyn<i32>| x);
    m.define(f, |x: Dyn<i32>| x + 1);
    assert!(error_of(m).contains("`f` is defined twice"));
    // A name taken twice, and names that are not free C identifiers.
    for (a, b, want) in [
        ("f", "f", "`f` already names the function declared at"),
        ("f", "2x", "`2x` cannot name a C function"),
        ("f", "memcpy", "`memcpy` cannot name a C function"),
    ] {
        let mut m = Builder::new().module();
        let f: Func<fn(i32) -> i32> = m.declare(a);
        let _: Func<fn(i32) -> i32> = m.declare(b);
        m.define(f, |x: Dyn<i32>| x);
        let e = error_of(m);
        assert!(e.contains(want), "{e}");
    }
    // A handle of another module.
    let mut other = Builder::new().module();
    let foreign: Func<fn(i32) -> i32> = other.declare("foreign");
    let mut m = Builder::new().module();
    m.define(foreign, |x: Dyn<i32>| x);
    assert!(error_of(m).contains("a Func of another module"));
    let mut m = Builder::new().module();
    let f: Func<fn(i32) -> i32> = m.declare("f");
    m.define(f, move |x: Dyn<i32>| foreign.call(x));
    assert!(error_of(m).contains("a staged function of another module was called"));
    // Nothing exported.
    let mut m = Builder::new().module();
    let k = m.declare_keyed::<u8, fn(i32) -> i32>("k");
    m.define_keyed(k, |_: u8, x: Dyn<i32>| x);
    assert!(error_of(m).contains("the module exports no function"));
}

#[test]
#[augur::staged]
fn a_staged_call_outside_a_module_is_an_error_and_the_thread_stays_usable() {
    let (m, fib) = fib_module();
    let e = Builder::new()
        .extract("outside", move |n: Dyn<i64>| fib.call(n))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("a staged function was called outside Module::extract"),
        "{e}"
    );
    drop(m);
    // A failed module extraction leaves the thread ready for the next.
    let mut m = Builder::new().module();
    let f: Func<fn(i32) -> i32> = m.declare("f");
    m.define(f, |x: Dyn<i32>| {
        if x.gt(0).is_true() {
            panic!("boom");
        }
        x
    });
    assert!(error_of(m).contains("boom"));
    let (ex, _, fib) = build(fib_module);
    assert_eq!(ex.interpret(fib, &[6i64.into()]).unwrap(), 8i64.into());
    // A handle of another module finds nothing in this one.
    let e = ex
        .interpret(fib_module().1, &[6i64.into()])
        .unwrap_err()
        .to_string();
    assert!(e.contains("the handle belongs to another module"), "{e}");
}

#[test]
#[augur::staged]
fn a_key_that_never_repeats_stops_at_the_function_limit() {
    let mut m = Builder::new().module().max_functions(50);
    let up = m.declare_keyed::<u64, fn(i32) -> i32>("up");
    let line = line!() + 1;
    m.define_keyed(up, move |k: u64, x: Dyn<i32>| up.at(k + 1).call(x + 1));
    m.export(up.at(0));
    let e = error_of(m);
    assert!(
        e.contains("the module already has 50 functions and `up` at 50"),
        "{e}"
    );
    assert!(e.contains("Module::max_functions"), "{e}");
    assert!(e.contains(&format!("modules.rs:{line}")), "{e}");
}

#[test]
#[augur::staged]
fn an_extern_with_a_module_functions_name_must_have_its_signature() {
    const F: augur::ExternFn<fn(i64) -> i64> = augur::ExternFn::new("f");
    let mut m = Builder::new().module();
    let f: Func<fn(i32) -> i32> = m.declare("f");
    let g: Func<fn(i64) -> i64> = m.declare("g");
    m.define(f, |x: Dyn<i32>| x);
    m.define(g, |x: Dyn<i64>| F.call(x));
    let e = error_of(m);
    assert!(
        e.contains("`g` calls an extern `f`, which is also a function of this module"),
        "{e}"
    );
}

#[test]
#[augur::staged]
fn a_kernel_that_calls_a_module_function_is_a_clear_error() {
    use augur::stage::gpu;
    let mut m = Builder::new().module();
    let sq: Func<fn(f32) -> f32> = m.declare("sq");
    let run: Func<fn(*mut f32)> = m.declare("run");
    m.define(sq, |x: Dyn<f32>| x * x);
    let line = line!() + 4; // the call's line
    m.define(run, move |p: Dyn<*mut f32>| {
        gpu::launch(2, 4, |b, t| {
            let i = b * 4 + t;
            p.at(i).set(sq.call(p.at(i)));
        });
    });
    let ex = m.extract().unwrap();
    let e = ex.cuda_code("").unwrap_err().to_string();
    assert!(e.contains("the kernel calls `sq`, a host function"), "{e}");
    assert!(e.contains(&format!("modules.rs:{line}")), "{e}");
    // On the CPU the launch runs as its loop nest, which may call it.
    let mut xs = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0];
    let lib = ex.compile().unwrap();
    // SAFETY: `run` writes 8 floats at `p`.
    unsafe { lib.get(run).unwrap()(xs.as_mut_ptr()) };
    assert_eq!(xs, [1.0, 4.0, 9.0, 16.0, 25.0, 36.0, 49.0, 64.0]);
}
