//! Function pointers (`augur::FnPtr`): addresses of staged functions and
//! externs as values, passed, stored in tables and called through; a
//! Rust callback handed to compiled code. Each program runs compiled by the
//! C compiler and by the JIT, and interpreted, against plain Rust.

use augur::exec::{Backend, CompileOptions};
use augur::{
    Builder, CompiledModule, Dyn, ExternFn, ExtractedModule, FnPtr, Func, Interpreter, Module,
    Value,
};

type Unary = FnPtr<fn(f64) -> f64>;

#[augur::staged]
fn compiled(ex: &ExtractedModule) -> [CompiledModule; 2] {
    [Backend::C, Backend::Jit].map(|b| {
        ex.compile_with(&CompileOptions::default().with_backend(b))
            .unwrap()
    })
}

/// `twice`, `square` and C's `sqrt`, chosen through a table by a dyn index.
type Pick = Func<fn(i32, f64) -> f64>;

#[augur::staged]
fn table_module() -> (Module<'static>, Pick) {
    const SQRT: ExternFn<fn(f64) -> f64> = ExternFn::new("sqrt").header("math.h");
    let mut m = Builder::new().module();
    let twice: Func<fn(f64) -> f64> = m.declare("twice");
    let square: Func<fn(f64) -> f64> = m.declare("square");
    let pick: Func<fn(i32, f64) -> f64> = m.declare("pick");
    m.define(twice, |x: Dyn<f64>| x * 2.0);
    m.define(square, |x: Dyn<f64>| x * x);
    m.define(pick, move |i: Dyn<i32>, x: Dyn<f64>| {
        let table = Dyn::<[Unary; 3]>::uninit();
        table.at(0).set(twice.addr());
        table.at(1).set(square.addr());
        table.at(2).set(SQRT.addr());
        table.at(i).call(x)
    });
    (m, pick)
}

#[test]
#[augur::staged]
fn a_table_of_function_pointers_dispatches_on_a_dyn_index() {
    let (m, pick) = table_module();
    let ex = m.extract().unwrap();
    let c = ex.c_code();
    assert!(c.contains("double (*var0[3])(double);"), "{c}");
    assert!(
        c.contains("var0[1] = square;") && c.contains("var0[2] = sqrt;"),
        "{c}"
    );
    assert!(c.contains("double (*var1)(double) = var0[arg0];"), "{c}");
    assert!(c.contains("return var1(arg1);"), "{c}");
    assert_eq!(c, table_module().0.extract().unwrap().c_code());
    let libs = compiled(&ex);
    for (i, want) in [(0, 18.0), (1, 81.0), (2, 3.0)] {
        assert_eq!(
            ex.interpret(pick, &[i.into(), 9.0.into()]).unwrap(),
            want.into()
        );
        for lib in &libs {
            // SAFETY: `double pick(int32_t, double)`; `i` is in the table.
            assert_eq!(
                unsafe { lib.get(pick).unwrap()(i, 9.0) },
                want,
                "{:?}",
                lib.backend()
            );
        }
    }
    let e = ex
        .interpret(pick, &[3.into(), 9.0.into()])
        .unwrap_err()
        .to_string();
    assert!(e.contains("load of 8 bytes at offset 24"), "{e}");
}

extern "C" fn cube(x: f64) -> f64 {
    x * x * x
}

type Apply = Func<fn(Unary, f64, i32) -> f64>;

#[augur::staged]
fn apply_module() -> (Module<'static>, Apply) {
    let mut m = Builder::new().module();
    // Applies `f` to `x` `n` times.
    let apply: Apply = m.declare("apply");
    m.define(apply, |f: Dyn<Unary>, x: Dyn<f64>, n: Dyn<i32>| {
        let r = Dyn::new(x);
        let i = Dyn::new(0);
        while i.lt(n).is_true() {
            r.set(f.call(r));
            i.set(i + 1);
        }
        r
    });
    (m, apply)
}

#[test]
#[augur::staged]
fn compiled_code_calls_a_rust_callback_and_the_interpreter_a_registered_one() {
    let (m, apply) = apply_module();
    let ex = m.extract().unwrap();
    assert!(ex
        .c_code()
        .contains("double apply(double (*arg0)(double), double arg1, int32_t arg2)"));
    for lib in compiled(&ex) {
        // SAFETY: `apply` calls `cube`, a `double (*)(double)`, `n` times.
        assert_eq!(unsafe { lib.get(apply).unwrap()(cube, 2.0, 2) }, 512.0);
    }
    let mut it = Interpreter::new();
    it.register("cube", |_, args| match args {
        [Value::F64(x)] => Ok(Value::F64(x * x * x)),
        _ => unreachable!("declared as double cube(double)"),
    });
    let cube = it.memory_mut().function_ptr("cube");
    let got = ex
        .interpret_in(&mut it, apply, &[cube, 2.0.into(), 2.into()])
        .unwrap();
    assert_eq!(got, 512.0.into());
    // Through null, and through a pointer to data.
    let e = ex
        .interpret_in(&mut it, apply, &[Value::Ptr(0), 2.0.into(), 1.into()])
        .unwrap_err();
    assert!(
        e.to_string()
            .contains("call through a null function pointer"),
        "{e}"
    );
    let data = it.memory_mut().alloc_slice(&[1.0f64]);
    let e = ex
        .interpret_in(&mut it, apply, &[data, 2.0.into(), 1.into()])
        .unwrap_err();
    assert!(e.to_string().contains("which points to no function"), "{e}");
    // No call, no error.
    let got = ex
        .interpret_in(&mut it, apply, &[Value::Ptr(0), 2.0.into(), 0.into()])
        .unwrap();
    assert_eq!(got, 2.0.into());
}

/// A function returning a function pointer, and a pointer to constant
/// function pointers (`double (*const *p)(double)`).
type Run = Func<fn(*const Unary, i32, f64) -> f64>;

#[augur::staged]
fn chooser_module() -> (Module<'static>, Run) {
    let mut m = Builder::new().module();
    let neg: Func<fn(f64) -> f64> = m.declare("neg");
    let id: Func<fn(f64) -> f64> = m.declare("id");
    let choose: Func<fn(bool) -> Unary> = m.declare("choose");
    let run: Func<fn(*const Unary, i32, f64) -> f64> = m.declare("run");
    m.define(neg, |x: Dyn<f64>| -x);
    m.define(id, |x: Dyn<f64>| x + 0.0);
    m.define(choose, move |negate: Dyn<bool>| {
        let f = Dyn::new(id.addr());
        if negate.is_true() {
            f.set(neg.addr());
        }
        f
    });
    m.define(
        run,
        move |fs: Dyn<*const Unary>, i: Dyn<i32>, x: Dyn<f64>| {
            let g = choose.call(i.gt(0));
            g.call(fs.at(i).call(x))
        },
    );
    (m, run)
}

extern "C" fn plus_one(x: f64) -> f64 {
    x + 1.0
}

extern "C" fn halve(x: f64) -> f64 {
    x / 2.0
}

#[test]
#[augur::staged]
fn functions_return_function_pointers_and_read_them_from_memory() {
    let (m, run) = chooser_module();
    let ex = m.extract().unwrap();
    let c = ex.c_code();
    assert!(c.contains("double (*choose(bool arg0))(double) {"), "{c}");
    assert!(
        c.contains("double run(double (*const *arg0)(double), int32_t arg1, double arg2)"),
        "{c}"
    );
    let table: [unsafe extern "C" fn(f64) -> f64; 2] = [plus_one, halve];
    for lib in compiled(&ex) {
        for (i, want) in [(0, 4.0), (1, -1.5)] {
            // SAFETY: `run` reads entry `i` of the two-entry table (a
            // pointer to `FnPtr`s is one to Rust function pointers).
            assert_eq!(
                unsafe { lib.get(run).unwrap()(table.as_ptr().cast(), i, 3.0) },
                want
            );
        }
    }
    let mut it = Interpreter::new();
    it.register("plus_one", |_, a| {
        Ok(Value::F64(a[0].as_f64().unwrap() + 1.0))
    });
    it.register("halve", |_, a| Ok(Value::F64(a[0].as_f64().unwrap() / 2.0)));
    let ptrs = [
        it.memory_mut().function_ptr("plus_one"),
        it.memory_mut().function_ptr("halve"),
    ];
    let table = it.memory_mut().alloc(16);
    let Value::Ptr(base) = table else {
        unreachable!("alloc gives a pointer")
    };
    for (k, p) in ptrs.iter().enumerate() {
        // A pointer's low 32 bits are its offset.
        it.memory_mut()
            .store(Value::Ptr(base + 8 * k as u64), *p)
            .unwrap();
    }
    for (i, want) in [(0, 4.0), (1, -1.5)] {
        let got = ex
            .interpret_in(&mut it, run, &[table, i.into(), 3.0.into()])
            .unwrap();
        assert_eq!(got, want.into());
    }
    // The text form reads every function back.
    for f in ex.functions() {
        let back = augur::ir::parse(&f.to_string()).unwrap_or_else(|e| panic!("{e}\n{f}"));
        assert_eq!(back.to_string(), f.to_string());
    }
}

#[test]
#[augur::staged]
fn a_kernel_cannot_call_through_a_function_pointer() {
    use augur::stage::gpu;
    let (mut m, _) = apply_module();
    let map: Func<fn(Unary, *mut f64)> = m.declare("map");
    let line = line!() + 3; // the call's line
    m.define(map, |f: Dyn<Unary>, p: Dyn<*mut f64>| {
        gpu::launch(1, 4, |_, t| {
            p.at(t).set(f.call(p.at(t)));
        });
    });
    let ex = m.extract().unwrap();
    let e = ex.cuda_code("").unwrap_err().to_string();
    assert!(
        e.contains("the kernel calls through a function pointer"),
        "{e}"
    );
    assert!(e.contains(&format!("function_pointers.rs:{line}")), "{e}");
}
