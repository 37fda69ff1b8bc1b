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
            let opts = with_openmp(fs, opts);
            Ok(Code::C(compile::compile(
                &c_code(fs, &opts.codegen),
                &opts,
            )?))
        }
    }
}

/// `opts` with OpenMP on where the functions need it: a parallel loop, or
/// an `omp` pragma other than `omp simd` (which `-fopenmp-simd` alone
/// reads). With OpenMP on, the library is also linked `-z nodelete`: the
/// OpenMP runtime's threads outlive the library, and would run unmapped
/// code if it were unloaded when the compiled function is dropped.
pub(crate) fn with_openmp<'o>(
    fs: &[&Function],
    opts: &'o CompileOptions,
) -> std::borrow::Cow<'o, CompileOptions> {
    let pragma = |s: &crate::ir::Stmt| {
        s.annotations.iter().any(|a| match a {
            crate::ir::Annotation::Pragma(p) => {
                let p = p.trim();
                p.starts_with("omp") && !p.starts_with("omp simd")
            }
            _ => false,
        })
    };
    fn any(b: &[crate::ir::Stmt], p: &dyn Fn(&crate::ir::Stmt) -> bool) -> bool {
        b.iter().any(|s| p(s) || s.kind.blocks().any(|b| any(b, p)))
    }
    let needs = fs
        .iter()
        .any(|f| crate::ir::parallel::has_loops(f) || any(&f.body, &pragma));
    let has = |flag: &str| opts.flags.iter().any(|f| f == flag);
    let openmp = needs || has("-fopenmp");
    if !openmp || (has("-fopenmp") && has("-Wl,-z,nodelete")) {
        return std::borrow::Cow::Borrowed(opts);
    }
    let mut opts = opts.clone();
    for flag in ["-fopenmp", "-Wl,-z,nodelete"] {
        if !opts.flags.iter().any(|f| f == flag) {
            opts.flags.push(flag.to_string());
        }
    }
    std::borrow::Cow::Owned(opts)
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
