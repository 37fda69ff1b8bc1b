//! The second stage without a C compiler: IR functions compiled in process
//! by [Cranelift](https://cranelift.dev), as typed function pointers like
//! those of [`compile`](crate::exec::compile()).
//!
//! Behaviour is the C backend's wherever C defines it: integers wrap at
//! their type's width (the C writer's casts of narrow results, `-fwrapv`),
//! narrow types are promoted to `int` for division, remainder and shifts,
//! floats are IEEE (NaN compares unequal, `(bool)NaN` is true), `&&`, `||`
//! and `?:` run only the operand they need, `goto` jumps as in C, and a
//! launch runs as its loop nest. Where the interpreter reports undefined
//! behaviour (a division by zero, a shift out of range, an out-of-range
//! float-to-int conversion), the JIT does what C may: it traps, or gives
//! some value (float-to-int conversions saturate).
//!
//! Externs resolve, in this order, to the module's own functions, to
//! addresses registered with [`CompileOptions::with_symbol`] (the user's
//! own C functions, which the C backend compiles from
//! [`CompileOptions::extra_c`], are registered this way), to symbols of the
//! running process (libc), and to libm's. Variadic calls (`printf`) go
//! through a shim that makes them as C does on x86-64 and aarch64 Linux
//! and the BSDs: every argument where the C ABI puts it, registers and
//! stack alike.
//!
//! A counted loop whose body is element-wise straight-line code (`for (i =
//! a; i < n; i = i + 1)` over `p[i + c]` loads and stores, arithmetic,
//! comparisons and `?:`) also gets a vector version: 128 bits of
//! iterations at a time, each lane computing its iteration's operations in
//! the scalar order, so results are the scalar loop's bit for bit. It runs
//! when a run-time check finds that no store overlaps another pointer's
//! accesses, and the scalar loop does what is left; loops of other shapes
//! stay scalar ([`JitCode::vectorized_loops`] counts those vectorized).
//!
//! What the JIT does not lower is an [`Error::Jit`] naming the construct
//! (a C99 variable-length array, a call of an extern it cannot find),
//! never code that does something else.
//!
//! ```
//! #[augur::staged]
//! fn main() -> augur::Result<()> {
//!     use augur::exec::{Backend, CompileOptions};
//!     use augur::{Builder, Dyn};
//!
//!     let ex = Builder::new()
//!         .extract("twice", |x: Dyn<i32>| x * 2)
//!         .unwrap();
//!     let opts = CompileOptions::default().with_backend(Backend::Jit);
//!     let twice = ex.compile_with(&opts).unwrap();
//!     // SAFETY: `twice` is `int32_t twice(int32_t)`.
//!     assert_eq!(unsafe { twice.get()(21) }, 42);
//!     Ok(())
//! }
//! ```

mod call;
mod expr;
mod lower;
mod memory;
mod parallel;
mod symbols;
mod types;
mod vector;

use crate::exec::CompileOptions;
use crate::ir::{Function, Type};
use crate::{Error, Result};
use cranelift_codegen::ir::{Signature, UserFuncName};
use cranelift_codegen::isa::OwnedTargetIsa;
use cranelift_codegen::settings::{self, Configurable};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{Linkage, Module};
use std::collections::HashMap;
use std::sync::OnceLock;

/// How a function's extern is called.
#[derive(Clone, Copy)]
enum Callee {
    /// A C function at this address.
    Address(usize),
    /// A function of the module being compiled.
    Local(cranelift_codegen::ir::FuncRef),
    /// Not found: an error if it is called (C leaves uncalled prototypes alone too).
    Missing,
    /// Calls through the function pointer that is the first argument.
    Indirect,
}

/// An [`Error::Jit`] about `what`.
fn jit_error(what: &str) -> Error {
    Error::Jit {
        message: format!("cannot lower {what}"),
    }
}

/// Compiled code: the functions of one module, in memory until dropped.
pub struct JitCode {
    /// `None` only while dropping.
    module: Option<JITModule>,
    functions: HashMap<String, usize>,
    vectorized: usize,
    /// Pragmas the code does not honour, one line each.
    notes: Vec<String>,
    /// The string literals the code points at.
    _strings: Vec<Box<[u8]>>,
}

// SAFETY: after `finalize_definitions` the module is only kept to free its
// memory on drop (which takes `&mut self`); no method of `JitCode` touches
// it through `&self`, and the code and strings it owns are immutable.
unsafe impl Send for JitCode {}
// SAFETY: as above: `&JitCode` gives access to addresses only.
unsafe impl Sync for JitCode {}

impl Drop for JitCode {
    fn drop(&mut self) {
        if let Some(m) = self.module.take() {
            // SAFETY: the code's contract (see `symbol`) is that no pointer
            // into it is used after the `JitCode` is dropped.
            unsafe { m.free_memory() };
        }
    }
}

impl std::fmt::Debug for JitCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut names: Vec<&String> = self.functions.keys().collect();
        names.sort();
        f.debug_struct("JitCode")
            .field("functions", &names)
            .finish()
    }
}

impl JitCode {
    /// The function `name` of the module as `F`, an `unsafe extern "C"
    /// fn(..) -> ..` pointer type.
    ///
    /// # Safety
    ///
    /// `F` must be the function's C signature (the ABI types of its
    /// parameters and result), and the pointer must not be used after this
    /// `JitCode` is dropped.
    pub unsafe fn symbol<F: Copy>(&self, name: &str) -> Result<F> {
        let addr = self
            .functions
            .get(name)
            .copied()
            .ok_or_else(|| Error::Jit {
                message: format!("no function `{name}` in the compiled module"),
            })?;
        if std::mem::size_of::<F>() != std::mem::size_of::<usize>() {
            return Err(Error::Jit {
                message: format!("`{name}` asked for as a type that is not a function pointer"),
            });
        }
        // SAFETY: `F` is pointer-sized, and the caller vouches that it is
        // the function's type.
        Ok(unsafe { std::mem::transmute_copy::<usize, F>(&addr) })
    }

    /// How many loops of the module run in vector code (see the module
    /// docs: counted loops of element-wise code).
    pub fn vectorized_loops(&self) -> usize {
        self.vectorized
    }

    /// What the JIT did not honour, one line each: every pragma of
    /// [`annotate`](crate::annotate) (it reads none; an `omp parallel for`
    /// loop runs on one thread, where [`parallel_for`](crate::parallel_for)
    /// runs on threads).
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    /// The address of function `name`, if the module defines it.
    pub fn address(&self, name: &str) -> Option<*const u8> {
        self.functions.get(name).map(|&a| a as *const u8)
    }
}

/// Compiles `f` in process.
pub fn compile_function(f: &Function, opts: &CompileOptions) -> Result<JitCode> {
    compile_module(&[f], opts)
}

/// Compiles the functions `fs` into one module; each may call the others
/// through an extern of its name (as in one C translation unit).
pub fn compile_module(fs: &[&Function], opts: &CompileOptions) -> Result<JitCode> {
    // Parallel loops run on threads: each becomes a function of its own.
    let mut outlined: Vec<Function> = Vec::new();
    let mut replaced: Vec<Option<Function>> = Vec::with_capacity(fs.len());
    for f in fs {
        match parallel::outline(f)? {
            Some((caller, bodies)) => {
                replaced.push(Some(caller));
                outlined.extend(bodies);
            }
            None => replaced.push(None),
        }
    }
    let all: Vec<&Function> = (fs.iter().zip(&replaced))
        .map(|(f, r)| r.as_ref().unwrap_or(f))
        .chain(&outlined)
        .collect();
    compile_functions(&all, opts)
}

fn compile_functions(fs: &[&Function], opts: &CompileOptions) -> Result<JitCode> {
    let isa = isa()?;
    let builder = JITBuilder::with_isa(isa.clone(), cranelift_module::default_libcall_names());
    let mut module = JITModule::new(builder);
    let mut ids = Vec::with_capacity(fs.len());
    let mut by_name: HashMap<&str, usize> = HashMap::new();
    for (i, f) in fs.iter().enumerate() {
        if by_name.insert(f.name.as_str(), i).is_some() {
            return Err(jit_error(&format!(
                "a module with two functions `{}`",
                f.name
            )));
        }
        let sig = signature(
            &module,
            &f.params.iter().map(|&p| f.vars[p].ty).collect::<Vec<_>>(),
            &f.ret,
        )?;
        let id = module
            .declare_function(&f.name, Linkage::Export, &sig)
            .map_err(|e| backend_error(&f.name, e))?;
        ids.push((id, sig));
    }
    let mut ctx = module.make_context();
    let mut fctx = FunctionBuilderContext::new();
    let mut strings = Vec::new();
    let mut vectorized = 0;
    for (f, (id, sig)) in fs.iter().zip(&ids) {
        ctx.func.signature = sig.clone();
        ctx.func.name = UserFuncName::user(0, id.as_u32());
        let mut callees = Vec::with_capacity(f.externs.len());
        for (_, d) in f.externs.iter() {
            if d.indirect {
                callees.push(Callee::Indirect);
                continue;
            }
            let callee = match by_name.get(d.name.as_str()) {
                Some(&j) => {
                    let g = fs[j];
                    let params: Vec<Type> = g.params.iter().map(|&p| g.vars[p].ty).collect();
                    if params != d.params || g.ret != d.ret || d.variadic {
                        return Err(jit_error(&format!(
                            "a call of `{}` declared with another signature than its definition",
                            d.name
                        )));
                    }
                    Callee::Local(module.declare_func_in_func(ids[j].0, &mut ctx.func))
                }
                None => symbols::resolve(&d.name, opts).map_or(Callee::Missing, Callee::Address),
            };
            callees.push(callee);
        }
        let b = FunctionBuilder::new(&mut ctx.func, &mut fctx);
        vectorized += lower::Lower::new(f, b, &callees, &mut strings)?.body()?;
        // Cranelift panics on some input it cannot take (a function past
        // its size limits, though `lower` stops well before those): a clear
        // error, not a crash of the program that asked for the code.
        let defined = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            (module.define_function(*id, &mut ctx)).map_err(|e| backend_error(&f.name, e))
        }));
        defined.map_err(|p| backend_panic(&f.name, p.as_ref()))??;
        // Past its limits Cranelift may also compile wrongly without a
        // panic (its checks are debug assertions); values are never taken
        // out of a function, so this count, taken after its optimiser,
        // shows any overflow. The code is dropped with the module.
        let dfg = &ctx.func.dfg;
        lower::fits_cranelift(dfg.num_values(), dfg.num_insts(), dfg.num_blocks())?;
        module.clear_context(&mut ctx);
    }
    module
        .finalize_definitions()
        .map_err(|e| backend_error("the module", e))?;
    let functions = fs
        .iter()
        .zip(&ids)
        .map(|(f, (id, _))| (f.name.clone(), module.get_finalized_function(*id) as usize))
        .collect();
    let mut notes = Vec::new();
    for f in fs {
        ignored_pragmas(f, &f.body, &mut notes);
    }
    Ok(JitCode {
        module: Some(module),
        functions,
        vectorized,
        notes,
        _strings: strings,
    })
}

/// A note for each pragma in `b`: the JIT reads none.
fn ignored_pragmas(f: &Function, b: &[crate::ir::Stmt], notes: &mut Vec<String>) {
    for s in b {
        for a in &s.annotations {
            if let crate::ir::Annotation::Pragma(p) = a {
                let at = s.loc.map(|l| format!(" at {l}")).unwrap_or_default();
                let hint = if p.trim().starts_with("omp parallel") {
                    ": the loop runs on one thread (augur::parallel_for runs on threads here)"
                } else {
                    ""
                };
                notes.push(format!(
                    "`{}`: the JIT ignores `#pragma {p}`{at}{hint}",
                    f.name
                ));
            }
        }
        for inner in s.kind.blocks() {
            ignored_pragmas(f, inner, notes);
        }
    }
}

/// The C signature of a function taking `params` and returning `ret`.
fn signature(module: &JITModule, params: &[Type], ret: &Type) -> Result<Signature> {
    let mut sig = module.make_signature();
    for p in params {
        sig.params.push(types::abi(p)?);
    }
    if *ret != Type::Void {
        sig.returns.push(types::abi(ret)?);
    }
    Ok(sig)
}

fn backend_panic(what: &str, p: &(dyn std::any::Any + Send)) -> Error {
    let why = (p.downcast_ref::<&str>().copied())
        .or_else(|| p.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("a panic");
    Error::Jit {
        message: format!(
            "Cranelift failed on `{what}` ({why}); compile it with the C backend \
             (`CompileOptions::with_backend(Backend::C)`) or run it in the interpreter"
        ),
    }
}

fn backend_error(what: &str, e: cranelift_module::ModuleError) -> Error {
    Error::Jit {
        message: format!("Cranelift failed on `{what}`: {e}"),
    }
}

/// The host's instruction set, set up once per process: optimising for
/// speed, with Cranelift's IR verifier in debug builds.
fn isa() -> Result<OwnedTargetIsa> {
    static ISA: OnceLock<std::result::Result<OwnedTargetIsa, String>> = OnceLock::new();
    let isa = ISA.get_or_init(|| {
        let mut flags = settings::builder();
        let verify = if cfg!(debug_assertions) {
            "true"
        } else {
            "false"
        };
        for (k, v) in [
            ("opt_level", "speed"),
            ("is_pic", "false"),
            ("enable_verifier", verify),
        ] {
            flags.set(k, v).map_err(|e| e.to_string())?;
        }
        let host = cranelift_native::builder().map_err(str::to_string)?;
        host.finish(settings::Flags::new(flags))
            .map_err(|e| e.to_string())
    });
    isa.clone().map_err(|message| Error::Jit {
        message: format!("no Cranelift backend for this machine: {message}"),
    })
}
