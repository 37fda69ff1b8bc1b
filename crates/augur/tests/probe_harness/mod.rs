//! The harness of the adversarial probes: a differential run that collects
//! every disagreement of the compiled C, the IR interpreter and the
//! plain-Rust reference (instead of stopping at the first), and a probe
//! runtime of externs that write memory.
#![allow(dead_code)]

use crate::common::{same, Args, Buf, Check, Invoke, Ret};
use augur::exec::compile::CompileOptions;
use augur::ir::{Scalar, Type};
use augur::stage::signature::StagedFn;
use augur::{Builder, ExternFn, Interpreter, Value};

/// What a differential run found: the C, the goto count, and every way the
/// C, the interpreter and the Rust reference disagreed.
pub struct Outcome {
    pub code: String,
    pub gotos: u64,
    pub problems: Vec<String>,
}

impl Outcome {
    #[track_caller]
    pub fn assert_ok(&self) {
        assert!(
            self.problems.is_empty(),
            "{}\n--- C ---\n{}",
            self.problems.join("\n"),
            self.code
        );
    }

    #[track_caller]
    pub fn assert_ok_no_goto(&self) {
        self.assert_ok();
        assert_eq!(self.gotos, 0, "gotos in\n{}", self.code);
    }
}

/// Like `Check::run`, but collects disagreements instead of stopping at the
/// first, and does not insist on zero gotos (it reports them).
pub fn diff<M, F, A, R>(
    c: &Check,
    name: &str,
    f: F,
    reference: impl Fn(&mut A) -> R,
    inputs: &[A],
) -> Outcome
where
    F: StagedFn<M> + Clone,
    F::Native: Invoke<A, Out = R>,
    A: Args,
    R: Ret,
{
    let ex = c
        .builder
        .extract(name, f)
        .unwrap_or_else(|e| panic!("extracting {name}: {e}"));
    let code = ex.c_code();
    let gotos = ex.stats().gotos;
    let mut problems = Vec::new();
    let text = ex.ir().to_string();
    match augur::ir::parse(&text) {
        Ok(back) if back.to_string() == text => {}
        Ok(back) => problems.push(format!("the IR text reads back as\n{back}")),
        Err(e) => problems.push(format!("the IR text does not read back: {e}\n{text}")),
    }
    let compiled = match ex.compile_with(&c.opts) {
        Ok(x) => Some(x),
        Err(e) => {
            problems.push(format!("compile error: {e}"));
            None
        }
    };
    for input in inputs {
        let mut expect_args = input.clone();
        let expected = reference(&mut expect_args).value();
        let want = format!("{expect_args:?}");
        if let Some(compiled) = &compiled {
            let mut host = input.clone();
            // SAFETY: the probes only touch the buffers they are given.
            let from_c = unsafe { compiled.get().invoke(&mut host) }.value();
            if !same(&from_c, &expected) {
                problems.push(format!("{input:?}: C gives {from_c}, Rust {expected}"));
            }
            if format!("{host:?}") != want {
                problems.push(format!("{input:?}: C memory {host:?}, Rust {want}"));
            }
        }
        let mut it = Interpreter::new();
        (c.setup)(&mut it);
        let mut interp = input.clone();
        let vals = interp.values(it.memory_mut());
        match ex.interpret_in(&mut it, &vals) {
            Ok(v) => {
                interp.read_back(it.memory(), &vals);
                if !same(&v, &expected) {
                    problems.push(format!("{input:?}: interpreter gives {v}, Rust {expected}"));
                }
                if format!("{interp:?}") != want {
                    problems.push(format!(
                        "{input:?}: interpreter memory {interp:?}, Rust {want}"
                    ));
                }
            }
            Err(e) => problems.push(format!("{input:?}: interpreter error: {e}")),
        }
    }
    Outcome {
        code,
        gotos,
        problems,
    }
}

/// `diff` with the default builder and the probe runtime.
pub fn rt_diff<M, F, A, R>(
    name: &str,
    f: F,
    reference: impl Fn(&mut A) -> R,
    inputs: &[A],
) -> Outcome
where
    F: StagedFn<M> + Clone,
    F::Native: Invoke<A, Out = R>,
    A: Args,
    R: Ret,
{
    diff(&runtime(Builder::new()), name, f, reference, inputs)
}

/// A probe runtime: externs that write memory, given as C and registered
/// with the interpreter.
///
/// `rv_bump(p)`: `++*p`, returns the new value.
pub const BUMP: ExternFn<fn(*mut i32) -> i32> = ExternFn::new("rv_bump");
/// `rv_put(p, v)`: `*p = v`.
pub const PUT: ExternFn<fn(*mut i32, i32)> = ExternFn::new("rv_put");

pub const RUNTIME_C: &str = "#include <stdint.h>\n\
    int32_t rv_bump(int32_t *p) { return ++*p; }\n\
    void rv_put(int32_t *p, int32_t v) { *p = v; }\n";

pub fn register(it: &mut Interpreter) {
    let i32t = Type::Scalar(Scalar::I32);
    it.register("rv_bump", move |mem, a| {
        let v = mem.load(a[0], &i32t)?.as_i64().unwrap() as i32;
        let n = v.wrapping_add(1);
        mem.store(a[0], Value::I32(n))?;
        Ok(Value::I32(n))
    });
    it.register("rv_put", |mem, a| {
        mem.store(a[0], Value::I32(a[1].as_i64().unwrap() as i32))?;
        Ok(Value::Void)
    });
}

pub fn runtime(builder: Builder) -> Check {
    Check {
        builder,
        opts: CompileOptions {
            extra_c: vec![RUNTIME_C.to_string()],
            ..CompileOptions::default()
        },
        setup: register,
    }
}

pub fn bufs(a: &[i32]) -> Vec<(Buf<i32>, bool)> {
    a.iter()
        .flat_map(|&x| [(Buf(vec![x]), false), (Buf(vec![x]), true)])
        .collect()
}
