//! What an extracted function and an extracted module do with their
//! functions, written once: a single function is a module of one.
//! [`Extracted`](crate::Extracted) and [`ExtractedModule`](crate::ExtractedModule)
//! are typed views over these functions.

use crate::codegen::CodegenOptions;
use crate::exec::compile::{self, Backend, CompileOptions, Library};
use crate::exec::interp::{Interpreter, Value};
use crate::ir::Function;
use crate::pipeline::Part;
use crate::Result;

/// The functions as one C99 translation unit.
pub(crate) fn c_code(fs: &[&Function], opts: &CodegenOptions) -> String {
    crate::codegen::c::write_module_with(fs, opts)
}

/// The functions as one CUDA unit.
pub(crate) fn cuda_code(fs: &[&Function], prelude: &str, opts: &CodegenOptions) -> Result<String> {
    crate::codegen::cuda::write_cuda_module_with(fs, prelude, opts)
}

/// Each part with its GPU program replaced by the CPU simulation.
pub(crate) fn simulated<'a>(parts: impl IntoIterator<Item = &'a mut Part>) -> Result<()> {
    for p in parts {
        p.func = crate::codegen::cuda::simulate(&p.func)?;
    }
    Ok(())
}

/// Runs `f` in `interp`. `callees` are the functions `f` may call by name
/// (a module's functions; none for a single function), added to `interp`
/// first.
pub(crate) fn interpret_in(
    interp: &mut Interpreter,
    callees: &[&Function],
    f: &Function,
    args: &[Value],
) -> Result<Value> {
    for g in callees {
        crate::ir::device::runs_as_loop_nest(g)?;
        interp.add_function(g);
    }
    interp.call(f, args)
}

/// Compiles the functions into one library or JIT module: a launch runs as
/// its loop nest over blocks and threads, so a kernel that meets at a
/// barrier or uses shared memory is an [`Error::Kernel`](crate::Error::Kernel) naming what can
/// run it.
pub(crate) fn compile(fs: &[&Function], opts: &CompileOptions) -> Result<Code> {
    for f in fs {
        crate::ir::device::runs_as_loop_nest(f)?;
    }
    match opts.resolved_backend() {
        Backend::Jit => jit(fs, opts),
        _ => {
            // The flags the unit's build comment names.
            let opts = opts
                .clone()
                .with_needs(&crate::codegen::c::build::needs(fs));
            Ok(Code::C(compile::compile(
                &c_code(fs, &opts.codegen),
                &opts,
            )?))
        }
    }
}

#[cfg(feature = "jit")]
fn jit(fs: &[&Function], opts: &CompileOptions) -> Result<Code> {
    let code = crate::exec::jit::compile_module(fs, opts)?;
    Ok(Code::Jit(std::sync::Arc::new(code)))
}

#[cfg(not(feature = "jit"))]
fn jit(_: &[&Function], _: &CompileOptions) -> Result<Code> {
    Err(crate::error::Error::Jit {
        message: "augur was built without its `jit` feature".into(),
    })
}

/// What keeps compiled code alive.
#[derive(Clone)]
pub(crate) enum Code {
    C(Library),
    #[cfg(feature = "jit")]
    Jit(std::sync::Arc<crate::exec::jit::JitCode>),
}

impl Code {
    /// The backend that made it.
    pub(crate) fn backend(&self) -> Backend {
        match self {
            Code::C(_) => Backend::C,
            #[cfg(feature = "jit")]
            Code::Jit(_) => Backend::Jit,
        }
    }

    /// What the backend could not honour.
    pub(crate) fn notes(&self) -> &[String] {
        match self {
            Code::C(_) => &[],
            #[cfg(feature = "jit")]
            Code::Jit(j) => j.notes(),
        }
    }

    /// The loaded library, for code the C compiler built.
    pub(crate) fn library(&self) -> Option<&Library> {
        match self {
            Code::C(lib) => Some(lib),
            #[cfg(feature = "jit")]
            Code::Jit(_) => None,
        }
    }

    /// The function `name` as an `F`.
    ///
    /// # Safety
    /// `F` must be the function's C signature (see [`Library::symbol`]).
    pub(crate) unsafe fn symbol<F: Copy>(&self, name: &str) -> Result<F> {
        match self {
            // SAFETY: the caller vouches for `F`.
            Code::C(lib) => unsafe { lib.symbol::<F>(name) },
            #[cfg(feature = "jit")]
            // SAFETY: the caller vouches for `F`.
            Code::Jit(code) => unsafe { code.symbol::<F>(name) },
        }
    }
}

impl std::fmt::Debug for Code {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Code::C(lib) => write!(f, "{}", lib.path().display()),
            #[cfg(feature = "jit")]
            Code::Jit(code) => write!(f, "{code:?}"),
        }
    }
}
