//! Opaque types (`augur::opaque_type!`): a library's `struct` and C's
//! `FILE`, known by name only, used through pointers and externs. The
//! library is C (compiled beside the generated code), Rust (the JIT's
//! symbols) and interpreter host functions; all three agree.

use augur::exec::{Backend, CompileOptions};
use augur::{Builder, CChar, Dyn, ExternFn, Extracted, Interpreter, Value};

augur::opaque_type!(
    /// A counter of the library below, `struct counter` in C.
    Counter = "struct counter"
);
augur::opaque_type!(File = "FILE" in "stdio.h");

const NEW: ExternFn<fn(i32) -> *mut Counter> = ExternFn::new("counter_new");
const ADD: ExternFn<fn(*mut Counter, i32)> = ExternFn::new("counter_add");
const GET: ExternFn<fn(*const Counter) -> i32> = ExternFn::new("counter_get");
const FREE: ExternFn<fn(*mut Counter)> = ExternFn::new("counter_free");

const LIBRARY: &str = "
#include <stdlib.h>
struct counter { int n; };
struct counter *counter_new(int start) {
  struct counter *c = malloc(sizeof *c);
  c->n = start;
  return c;
}
void counter_add(struct counter *c, int k) { c->n += k; }
int counter_get(const struct counter *c) { return c->n; }
void counter_free(struct counter *c) { free(c); }
";

/// The library in Rust, for the JIT.
mod rust_library {
    pub struct Counter(i32);
    pub extern "C" fn counter_new(start: i32) -> *mut Counter {
        Box::into_raw(Box::new(Counter(start)))
    }
    /// # Safety
    /// `c` came from `counter_new` and was not freed.
    pub unsafe extern "C" fn counter_add(c: *mut Counter, k: i32) {
        // SAFETY: the caller passes a live counter.
        unsafe { (*c).0 += k }
    }
    /// # Safety
    /// As for `counter_add`.
    pub unsafe extern "C" fn counter_get(c: *const Counter) -> i32 {
        // SAFETY: the caller passes a live counter.
        unsafe { (*c).0 }
    }
    /// # Safety
    /// As for `counter_add`; `c` is not used after.
    pub unsafe extern "C" fn counter_free(c: *mut Counter) {
        // SAFETY: `c` came from `Box::into_raw`.
        drop(unsafe { Box::from_raw(c) })
    }
}

/// Counts the even numbers below `n` with a library counter; the counter
/// handle is kept in a variable and passed around.
#[augur::staged]
fn count_evens() -> Extracted<unsafe extern "C" fn(i32) -> i32> {
    Builder::new()
        .extract("count_evens", |n: Dyn<i32>| {
            let c = Dyn::new(NEW.call(0));
            let i = Dyn::new(0);
            while i.lt(n).is_true() {
                if (i % 2).eq(0).is_true() {
                    ADD.call(c, 1);
                }
                i.set(i + 1);
            }
            let r = Dyn::new(GET.call(c.cast_ptr::<*const Counter>()));
            FREE.call(c);
            r
        })
        .unwrap()
}

#[test]
#[augur::staged]
fn a_library_struct_is_used_through_pointers_in_c_the_jit_and_the_interpreter() {
    let ex = count_evens();
    let c = ex.c_code();
    assert!(c.contains("struct counter;\n"), "{c}");
    assert!(c.contains("struct counter *counter_new(int32_t);"), "{c}");
    assert!(
        c.contains("int32_t counter_get(const struct counter *);"),
        "{c}"
    );
    assert!(c.contains("struct counter *var0 = counter_new(0);"), "{c}");
    let mut c_opts = CompileOptions::default().with_backend(Backend::C);
    c_opts.extra_c.push(LIBRARY.into());
    let jit_opts = CompileOptions::default()
        .with_backend(Backend::Jit)
        .with_symbol("counter_new", rust_library::counter_new as *const ())
        .with_symbol("counter_add", rust_library::counter_add as *const ())
        .with_symbol("counter_get", rust_library::counter_get as *const ())
        .with_symbol("counter_free", rust_library::counter_free as *const ());
    let libs = [
        ex.compile_with(&c_opts).unwrap(),
        ex.compile_with(&jit_opts).unwrap(),
    ];
    let mut it = Interpreter::new();
    it.register("counter_new", |m, a| {
        let p = m.alloc(4);
        m.store(p, a[0])?;
        Ok(p)
    });
    it.register("counter_add", |m, a| {
        let n = m.load(a[0], &augur::ir::Type::Scalar(augur::ir::Scalar::I32))?;
        m.store(
            a[0],
            Value::I32(n.as_i64().unwrap() as i32 + a[1].as_i64().unwrap() as i32),
        )?;
        Ok(Value::Void)
    });
    it.register("counter_get", |m, a| {
        m.load(a[0], &augur::ir::Type::Scalar(augur::ir::Scalar::I32))
    });
    it.register("counter_free", |m, a| m.free(a[0]).map(|()| Value::Void));
    for n in [0, 1, 7, 100] {
        let want = (n + 1) / 2;
        for lib in &libs {
            // SAFETY: `int32_t count_evens(int32_t)`, calling the library.
            assert_eq!(unsafe { lib.get()(n) }, want, "{:?}", lib.backend());
        }
        assert_eq!(ex.interpret_in(&mut it, &[n.into()]).unwrap(), want.into());
    }
    // The text form reads the opaque types back.
    let back = augur::ir::parse(&ex.ir().to_string()).unwrap();
    assert_eq!(back.to_string(), ex.ir().to_string());
    assert_eq!(augur::codegen::write_function(&back), c);
}

#[test]
#[augur::staged]
fn a_header_that_declares_an_opaque_type_is_included() {
    const FPUTS: ExternFn<fn(*const CChar, *mut File) -> i32> =
        ExternFn::new("fputs").header("stdio.h");
    const FFLUSH: ExternFn<fn(*mut File) -> i32> = ExternFn::new("fflush").header("stdio.h");
    let ex = Builder::new()
        .extract("say", |f: Dyn<*mut File>, loud: Dyn<bool>| {
            let r = Dyn::new(FPUTS.call(Dyn::str("hello"), f));
            if loud.is_true() {
                r.set(FPUTS.call(Dyn::str("!\n"), f));
            }
            FFLUSH.call(f);
            r
        })
        .unwrap();
    let c = ex.c_code();
    assert!(
        c.contains("#include <stdio.h>\n") && c.contains("int32_t say(FILE *arg0, bool arg1)"),
        "{c}"
    );
    assert!(!c.contains("struct"), "{c}");
    // Compiles with -Wall -Werror, and the JIT finds stdio's functions.
    ex.compile_with(&CompileOptions::default().with_backend(Backend::C))
        .unwrap();
    ex.compile_with(&CompileOptions::default().with_backend(Backend::Jit))
        .unwrap();
}

#[test]
#[augur::staged]
fn a_value_of_an_opaque_type_is_an_error_at_its_line() {
    let line = line!() + 3;
    let e = Builder::new()
        .extract("bad", |_: Dyn<i32>| {
            let _ = Dyn::<Counter>::uninit();
        })
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("a value of the opaque type `struct counter`"),
        "{e}"
    );
    assert!(e.contains(&format!("opaque_types.rs:{line}")), "{e}");
    let line = line!() + 3;
    let e = Builder::new()
        .extract("bad", |p: Dyn<*mut Counter>| {
            let _ = p.deref();
        })
        .unwrap_err()
        .to_string();
    assert!(e.contains("only behind pointers"), "{e}");
    assert!(e.contains(&format!("opaque_types.rs:{line}")), "{e}");
}
