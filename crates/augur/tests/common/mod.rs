//! Differential harness: every staged program is extracted (twice, to check
//! that the C is reproducible), compiled and called, interpreted, and
//! compared with its plain-Rust meaning on several inputs.
#![allow(dead_code)]

use augur::exec::compile::CompileOptions;
use augur::exec::interp::{Memory, Pod};
use augur::stage::signature::StagedFn;
use augur::{Builder, Extracted, Interpreter, Value};
use std::fmt::Debug;

/// An argument on the host side: a scalar passed by value, or a [`Buf`]
/// passed as a pointer to its first element.
pub trait HostArg: Clone + Debug {
    /// What the compiled function takes.
    type Abi: Copy;
    /// The interpreter's argument (buffers are copied into `mem`).
    fn to_value(&self, mem: &mut Memory) -> Value;
    /// Reads a buffer back out of the interpreter's memory.
    fn read_back(&mut self, _mem: &Memory, _v: Value) {}
    /// The compiled function's argument.
    fn abi(&mut self) -> Self::Abi;
}

macro_rules! scalar_arg {
    ($($t:ty),*) => {$(
        impl HostArg for $t {
            type Abi = $t;
            fn to_value(&self, _: &mut Memory) -> Value {
                Value::from(*self)
            }
            fn abi(&mut self) -> $t {
                *self
            }
        }
        impl Ret for $t {
            fn value(self) -> Value {
                Value::from(self)
            }
        }
    )*};
}
scalar_arg!(bool, i8, i16, i32, i64, u8, u16, u32, u64, f32, f64);

/// A host array handed to the staged function as `T *`; compared after the
/// call, so it checks what the function wrote.
#[derive(Clone, Debug, PartialEq)]
pub struct Buf<T>(pub Vec<T>);

impl<T: Pod + Debug> HostArg for Buf<T> {
    type Abi = *mut T;
    fn to_value(&self, mem: &mut Memory) -> Value {
        mem.alloc_slice(&self.0)
    }
    fn read_back(&mut self, mem: &Memory, v: Value) {
        self.0 = mem.read_slice(v, self.0.len()).expect("read back a buffer");
    }
    fn abi(&mut self) -> *mut T {
        self.0.as_mut_ptr()
    }
}

/// A result: converted to a [`Value`] for comparison.
pub trait Ret: Debug {
    /// The value.
    fn value(self) -> Value;
}

impl Ret for () {
    fn value(self) -> Value {
        Value::Void
    }
}

/// A tuple of [`HostArg`]s.
pub trait Args: Clone + Debug {
    /// The interpreter's arguments.
    fn values(&self, mem: &mut Memory) -> Vec<Value>;
    /// Reads the buffers back.
    fn read_back(&mut self, mem: &Memory, vals: &[Value]);
}

/// A compiled function pointer callable with a tuple of host arguments.
pub trait Invoke<A> {
    /// The result.
    type Out;
    /// Calls it.
    ///
    /// # Safety
    /// The function must only touch the buffers it is given, in bounds.
    unsafe fn invoke(self, a: &mut A) -> Self::Out;
}

macro_rules! arity {
    ($($x:ident $i:tt),*) => {
        impl<$($x: HostArg),*> Args for ($($x,)*) {
            #[allow(unused_variables)]
            fn values(&self, mem: &mut Memory) -> Vec<Value> {
                vec![$(self.$i.to_value(mem)),*]
            }
            #[allow(unused_variables)]
            fn read_back(&mut self, mem: &Memory, vals: &[Value]) {
                $(self.$i.read_back(mem, vals[$i]);)*
            }
        }
        impl<R, $($x: HostArg),*> Invoke<($($x,)*)> for unsafe extern "C" fn($($x::Abi),*) -> R {
            type Out = R;
            #[allow(unused_variables)]
            unsafe fn invoke(self, a: &mut ($($x,)*)) -> R {
                (self)($(a.$i.abi()),*)
            }
        }
    };
}
arity!();
arity!(A 0);
arity!(A 0, B 1);
arity!(A 0, B 1, C 2);
arity!(A 0, B 1, C 2, D 3);

/// Equal results: floats bit for bit (any NaN equals any NaN).
pub fn same(a: &Value, b: &Value) -> bool {
    let nan = |v: &Value| v.as_f64().is_some_and(f64::is_nan);
    a.same_bits(b) || (nan(a) && nan(b))
}

/// How to run one check: the builder, compile options, and what the
/// interpreter needs (registered externs).
#[derive(Clone)]
pub struct Check {
    pub builder: Builder,
    pub opts: CompileOptions,
    pub setup: fn(&mut Interpreter),
}

impl Default for Check {
    fn default() -> Self {
        Check {
            builder: Builder::new(),
            opts: CompileOptions::default(),
            setup: |_| {},
        }
    }
}

impl Check {
    /// Extracts `f` twice (same C both times, no gotos), then on each input
    /// runs the compiled C, the interpreter and `reference`, and asserts
    /// that results and buffers agree.
    #[track_caller]
    pub fn run<M, F, A, R>(
        &self,
        name: &str,
        f: F,
        reference: impl Fn(&mut A) -> R,
        inputs: &[A],
    ) -> Extracted<F::Native>
    where
        F: StagedFn<M> + Clone,
        F::Native: Invoke<A, Out = R>,
        A: Args,
        R: Ret,
    {
        let ex = extract_with(&self.builder, name, f);
        let code = ex.c_code();
        let compiled = ex
            .compile_with(&self.opts)
            .unwrap_or_else(|e| panic!("compiling {name}: {e}\n{code}"));
        assert!(inputs.len() >= 5, "{name}: check at least 5 inputs");
        for input in inputs {
            let mut host = input.clone();
            // SAFETY: the staged programs only touch the buffers they get.
            let from_c = unsafe { compiled.get().invoke(&mut host) }.value();

            let mut it = Interpreter::new();
            (self.setup)(&mut it);
            let mut interp = input.clone();
            let vals = interp.values(it.memory_mut());
            let from_interp = ex
                .interpret_in(&mut it, &vals)
                .unwrap_or_else(|e| panic!("{name}{input:?}: interpreter: {e}\n{code}"));
            interp.read_back(it.memory(), &vals);

            let mut expect_args = input.clone();
            let expected = reference(&mut expect_args).value();

            let ctx = format!("{name}{input:?}\n{code}");
            assert!(
                same(&from_c, &expected) && same(&from_interp, &expected),
                "C gives {from_c}, interpreter {from_interp}, Rust {expected}: {ctx}"
            );
            // Debug text compares floats by value with NaN equal to NaN.
            let (host, interp, want) = (
                format!("{host:?}"),
                format!("{interp:?}"),
                format!("{expect_args:?}"),
            );
            assert_eq!(host, want, "C memory differs: {ctx}");
            assert_eq!(interp, want, "interpreter memory differs: {ctx}");
        }
        ex
    }
}

/// [`Check::run`] with the defaults.
#[track_caller]
pub fn check<M, F, A, R>(
    name: &str,
    f: F,
    reference: impl Fn(&mut A) -> R,
    inputs: &[A],
) -> Extracted<F::Native>
where
    F: StagedFn<M> + Clone,
    F::Native: Invoke<A, Out = R>,
    A: Args,
    R: Ret,
{
    Check::default().run(name, f, reference, inputs)
}

/// Extracts twice with `b`, asserting the same C both times and no gotos.
#[track_caller]
pub fn extract_with<M, F>(b: &Builder, name: &str, f: F) -> Extracted<F::Native>
where
    F: StagedFn<M> + Clone,
{
    let ex = b
        .extract(name, f.clone())
        .unwrap_or_else(|e| panic!("extracting {name}: {e}"));
    let again = b
        .extract(name, f)
        .unwrap_or_else(|e| panic!("extracting {name} again: {e}"));
    let code = ex.c_code();
    assert_eq!(
        code,
        again.c_code(),
        "{name}: C differs between extractions"
    );
    assert_eq!(ex.stats().gotos, 0, "{name}: gotos in\n{code}");
    assert_text_round_trip(ex.ir());
    ex
}

/// Asserts that `f`'s IR text reads back as a function that prints the same.
#[track_caller]
pub fn assert_text_round_trip(f: &augur::ir::Function) {
    let text = f.to_string();
    let back = augur::ir::parse(&text).unwrap_or_else(|e| panic!("{e} in\n{text}"));
    assert_eq!(back.to_string(), text, "the IR text reads back otherwise");
}

/// [`extract_with`] a default builder.
#[track_caller]
pub fn extract<M, F>(name: &str, f: F) -> Extracted<F::Native>
where
    F: StagedFn<M> + Clone,
{
    extract_with(&Builder::new(), name, f)
}

/// Asserts that `code` contains each snippet.
#[track_caller]
pub fn assert_contains(code: &str, snippets: &[&str]) {
    for s in snippets {
        assert!(code.contains(s), "missing `{s}` in\n{code}");
    }
}

/// Asserts that `code` contains none of the snippets.
#[track_caller]
pub fn assert_lacks(code: &str, snippets: &[&str]) {
    for s in snippets {
        assert!(!body(code).contains(s), "unexpected `{s}` in\n{code}");
    }
}

/// How many times `s` occurs in `code` (after its build comment).
pub fn count(code: &str, s: &str) -> usize {
    body(code).matches(s).count()
}

/// C `code` after the build comment it starts with (its words are no
/// code).
pub fn body(code: &str) -> &str {
    match code.find("\n */\n") {
        Some(end) if code.starts_with("/* C99 generated by augur") => &code[end + 5..],
        _ => code,
    }
}

/// The seeded generator of the random tests (the seed is in every failure
/// message, so a failing case can be replayed).
#[allow(unused_imports)] // each test binary uses part of this module
pub use augur_rng::Rng;

/// The extractions of one program in each prophecy mode.
pub struct ByMode<S> {
    pub paper: Extracted<S>,
    pub collect: Extracted<S>,
    pub adaptive: Extracted<S>,
}

/// [`Check::run`] in every prophecy mode: asserts that the modes generate
/// the same C and end with the same prophecy values (they reach the same
/// fixpoint when what a program requires never shrinks as predictions
/// grow).
#[track_caller]
pub fn check_modes<M, F, A, R>(
    name: &str,
    f: F,
    reference: impl Fn(&mut A) -> R,
    inputs: &[A],
) -> ByMode<F::Native>
where
    F: StagedFn<M> + Clone,
    F::Native: Invoke<A, Out = R>,
    A: Args,
    R: Ret,
{
    use augur::ProphecyMode;
    let run = |mode| {
        Check {
            builder: Builder::new().prophecy_mode(mode),
            ..Check::default()
        }
        .run(name, f.clone(), &reference, inputs)
    };
    let all = ByMode {
        paper: run(ProphecyMode::Paper),
        collect: run(ProphecyMode::Collect),
        adaptive: run(ProphecyMode::Adaptive),
    };
    let values = |e: &Extracted<F::Native>| -> Vec<String> {
        e.explain().cells.iter().map(|c| c.value.clone()).collect()
    };
    for (mode, other) in [("collect", &all.collect), ("adaptive", &all.adaptive)] {
        assert_eq!(
            all.paper.c_code(),
            other.c_code(),
            "{name}: paper and {mode} modes generate different C"
        );
        assert_eq!(
            values(&all.paper),
            values(other),
            "{name}: paper and {mode} modes settle differently:\n{}\n{}",
            all.paper.explain(),
            other.explain()
        );
    }
    all
}
