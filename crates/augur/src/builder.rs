//! The entry point: [`Builder::extract`] turns a closure into a function.

use crate::codegen::CodegenOptions;
use crate::exec::compile::{Backend, CompileOptions, Library};
use crate::exec::interp::{Interpreter, Value};
use crate::ir::{Function, SrcLoc, Type, VarId};
use crate::pipeline::Part;
use crate::program::{self, Code};
use crate::prophecy::{Explanation, ProphecyMode};
use crate::stage::dyn_val::caller;
use crate::stage::dyn_val::Arg;
use crate::stage::signature::StagedFn;
use crate::trace::driver::{self, with};
use crate::trace::Config;
use crate::trace::{Stats, Tagger};
use crate::{pipeline, Result};
use std::marker::PhantomData;

/// Extracts staged closures into second-stage functions.
///
/// ```
/// #[augur::staged]
/// fn main() -> augur::Result<()> {
///     use augur::{Builder, Dyn};
///     let power = Builder::new()
///         .extract("power", |x: Dyn<i64>| {
///             let r = Dyn::new(1i64);
///             let e = Dyn::new(x);
///             for _ in 0..5 {
///                 r.set(r * e);
///             }
///             r
///         })
///         .unwrap();
///     println!("{}", power.c_code());
///     assert_eq!(power.interpret(&[2i64.into()]).unwrap(), 32i64.into());
///     Ok(())
/// }
/// ```
#[derive(Clone, Debug, Default)]
pub struct Builder {
    config: Config,
    /// What the pipeline does to each function after its runs.
    options: pipeline::Options,
}

impl Builder {
    /// A builder with default limits.
    pub fn new() -> Builder {
        Builder::default()
    }

    /// Chooses how tags are taken (default: frame pointers, with the
    /// unwinder as fallback). `AUGUR_TAGGER=unwind` in the environment
    /// forces the unwinder.
    pub fn tagger(mut self, t: Tagger) -> Self {
        self.config.tagger = t;
        self
    }

    /// How many times one dyn decision site may be reached in one run before
    /// the loop around it is reported as never closing (default 10,000).
    pub fn max_loop_iterations(mut self, n: u64) -> Self {
        self.config.max_site_visits = n;
        self
    }

    /// How many extra turns a loop candidate must repeat identically before
    /// it is closed (default 16). Plain Rust loops of up to this many
    /// iterations around dyn branches are told apart from dyn loops.
    pub fn loop_audit_rounds(mut self, n: u32) -> Self {
        self.config.audit_rounds = n.max(1);
        self
    }

    /// Maximum executions of the closure (default 1,000,000).
    pub fn max_runs(mut self, n: u64) -> Self {
        self.config.max_runs = n;
        self
    }

    /// Memory the engine may hold while extracting, in bytes (default
    /// 2 GiB): the graph, the scheduled jobs and the variables, estimated
    /// from their counts. Past it extraction stops with
    /// [`Error::Limit`](crate::Error::Limit) naming the budget.
    pub fn max_memory(mut self, bytes: usize) -> Self {
        self.config.max_memory = bytes;
        self
    }

    /// Maximum attempts: restarts after a plain loop was found or a
    /// prophecy changed, plus one (default 1000).
    pub fn max_attempts(mut self, n: u32) -> Self {
        self.config.max_attempts = n.max(1);
        self
    }

    /// Share code between paths that reach the same program point (default
    /// on). Off, every path gets its own code: [`audit`](Builder::audit).
    pub fn memoize(mut self, yes: bool) -> Self {
        self.config.memoize = yes;
        self
    }

    /// Close loops (default on). Off, every dyn loop unrolls until a limit.
    pub fn close_loops(mut self, yes: bool) -> Self {
        self.config.close_loops = yes;
        self
    }

    /// Let a run that ends at a resumable point recorded before go on as
    /// the next run where that one starts in the same machine (default
    /// on): it keeps the closure's frames instead of unwinding them and
    /// executing the code before the machine again. The runs, their
    /// counts and the generated code are the same either way
    /// ([`Stats::chained_runs`](crate::Stats::chained_runs) counts them).
    /// What changes is what the first stage does outside the engine: the
    /// code before the machine runs once for a sequence of chained runs,
    /// so a side effect there (a counter, a log line) happens fewer times;
    /// as [`resumable`](crate::resumable) asks, state a body does not show
    /// the engine must not change what a point does.
    pub fn chain_runs(mut self, yes: bool) -> Self {
        self.config.chain_runs = yes;
        self
    }

    /// Whether to trust bounded observation for code `#[augur::staged]`
    /// does not cover (see [`Config::trust_unannotated`]).
    ///
    /// Off (the default), augur shares code (closes a loop, or lets a path join
    /// code another path recorded) only where it sees all the plain Rust
    /// state: every frame running at that point is a body the attribute
    /// rewrote, called from one. Elsewhere a plain loop counter or flag
    /// could make two points with the same tag differ, so augur unrolls
    /// them exactly, and a dyn loop there stops with
    /// [`Error::Unannotated`](crate::Error::Unannotated), naming the line
    /// to annotate.
    ///
    /// On, such points share code once observation (repeated turns, links
    /// followed to the end of the closure, check runs) found no difference.
    /// That risks **silently wrong code**: a plain `for _ in 0..18` around
    /// a dyn `return` closes into a `while` loop that loses the code after
    /// it. Use it for code you cannot annotate, after checking the result
    /// (for instance against [`audit`](Builder::audit)).
    ///
    /// The default is off: sound by default.
    ///
    /// [`Config::trust_unannotated`]: crate::trace::Config::trust_unannotated
    pub fn trust_unannotated(mut self, yes: bool) -> Self {
        self.config.trust_unannotated = yes;
        self
    }

    /// Testing hook: the engine panics before starting run `n` (counted
    /// from 0), as an internal bug would. Not API.
    #[doc(hidden)]
    pub fn panic_before_run(mut self, n: u64) -> Self {
        self.config.panic_before_run = Some(n);
        self
    }

    /// Maximum operations all runs of the closure perform together:
    /// replayed, recorded and compared (default 200 million: 10 to 40
    /// seconds).
    /// Runs that each replay more than the one before (a dyn loop whose
    /// turns never repeat their state) reach it long before the run limit.
    pub fn max_work(mut self, n: u64) -> Self {
        self.config.max_work = n;
        self
    }

    /// Maximum recorded operations (default 4,000,000).
    pub fn max_operations(mut self, n: usize) -> Self {
        self.config.max_nodes = n;
        self
    }

    /// Audit mode: no memoization, so every path is recorded on its own and
    /// code after a join is duplicated per path (bounded by the limits).
    /// Comparing its behaviour with a normal extraction on the same inputs
    /// catches first-stage state that escaped `Static` (a plain `let k = if
    /// c.is_true() { 1 } else { 2 };` used after the join). DSL test suites
    /// should run under it.
    ///
    /// Audit mode also checks every loop candidate for up to 1000 turns
    /// (instead of 16), so a plain Rust loop of up to that many iterations
    /// around a dyn `break` is told apart from a dyn loop.
    pub fn audit(mut self) -> Self {
        self.config.memoize = false;
        self.config.audit_rounds = self.config.max_site_visits.min(1000) as u32;
        self
    }

    /// How many operations a memoization link is checked for before it is
    /// made. By default (`u32::MAX`) a run that reaches code another run
    /// recorded follows it to the end of the closure, comparing every
    /// operation, and one check run then takes the other side of each
    /// decision on the way: where first-stage state that tags cannot see (a
    /// plain `let k = if c.is_true() { 1 } else { 2 };`) makes two paths
    /// differ, however far after the join, each path gets its own code
    /// instead of wrong shared code. A smaller bound trades that for speed;
    /// 0 trusts tags alone (as BuildIt does).
    pub fn link_audit_ops(mut self, n: u32) -> Self {
        self.config.link_audit_ops = n;
        self
    }

    /// Accept generated loops that have no exit (default: an error, since
    /// they almost always come from a plain Rust loop taken for a dyn loop).
    pub fn allow_infinite_loops(mut self, yes: bool) -> Self {
        self.config.allow_infinite_loops = yes;
        self
    }

    /// When a violated prophecy starts the extraction over (default
    /// [`ProphecyMode::Adaptive`]: collect violations while new ones keep
    /// turning up, then restart with all of them joined in).
    pub fn prophecy_mode(mut self, mode: ProphecyMode) -> Self {
        self.config.prophecy_mode = mode;
        self
    }

    /// Restarts for prophecies and histories before the extraction stops
    /// with [`Error::ProphecyNotSettled`](crate::Error::ProphecyNotSettled)
    /// (default 1000).
    pub fn max_prophecy_restarts(mut self, n: u64) -> Self {
        self.config.max_prophecy_restarts = n;
        self
    }

    /// Extracts `f` into a function called `name`.
    ///
    /// `f` is run many times (once per explored path); it must be
    /// deterministic apart from the answers of [`Dyn::is_true`](crate::Dyn::is_true).
    /// First-stage parameters are simply captured. On error the builder is
    /// ready for the next extraction.
    #[track_caller]
    pub fn extract<M, F: StagedFn<M>>(&self, name: &str, f: F) -> Result<Extracted<F::Native>> {
        let loc = caller();
        let (trace, config) = self.trace(name, f, loc)?;
        Ok(Extracted {
            part: pipeline::finish(trace, &config, &self.options, loc)?,
            _sig: PhantomData,
        })
    }

    /// Declares the pointer parameters at these positions (0 is the first)
    /// `restrict`, so the C compiler may assume they do not alias: the
    /// caller promises that memory the function modifies through one of
    /// them is reached through no other parameter while it runs (C99
    /// 6.7.3.1; breaking the promise is undefined behaviour, which the
    /// interpreter does not detect). A position that is not a pointer
    /// parameter is an [`Error::Misuse`](crate::Error::Misuse). On a
    /// [`module`](Builder::module) it applies to every function of the
    /// module, and the promise covers the calls between them too: a module
    /// function that passes one buffer as two restricted parameters is
    /// undefined behaviour, as it would be from outside.
    ///
    /// ```
    /// #[augur::staged]
    /// fn main() -> augur::Result<()> {
    ///     use augur::{Builder, Dyn};
    ///     let axpy = Builder::new()
    ///         .restrict([1, 2])
    ///         .extract("axpy", |a: Dyn<f32>, x: Dyn<*const f32>, y: Dyn<*mut f32>| {
    ///             for i in 0..4 {
    ///                 y.at(i).set(y.at(i) + a * x.at(i));
    ///             }
    ///         })
    ///         .unwrap();
    ///     let c = axpy.c_code();
    ///     assert!(c.contains("const float *restrict arg1, float *restrict arg2"), "{c}");
    ///     let (x, mut y) = ([1.0f32, 2.0, 3.0, 4.0], [1.0f32; 4]);
    ///     // SAFETY: `axpy` reads 4 floats at `x` and writes 4 at `y`, which do
    ///     // not overlap.
    ///     unsafe { axpy.compile().unwrap().get()(2.0, x.as_ptr(), y.as_mut_ptr()) };
    ///     assert_eq!(y, [3.0, 5.0, 7.0, 9.0]);
    ///     Ok(())
    /// }
    /// ```
    pub fn restrict(mut self, params: impl IntoIterator<Item = usize>) -> Self {
        self.options.restrict = params.into_iter().collect();
        self
    }

    /// Declares parameter `ptr` (a pointer to scalars) a slice of as many
    /// elements as parameter `len` (an integer) says, and makes the
    /// function *checked* ([`Builder::checked`]): every index into the
    /// slice is checked against `len`. [`Extracted::safe`] then calls it
    /// with a Rust slice for `ptr` and fills `len` in.
    ///
    /// ```
    /// #[augur::staged]
    /// fn main() -> augur::Result<()> {
    ///     use augur::{Builder, Dyn};
    ///     let sum = Builder::new()
    ///         .slice(0, 1)
    ///         .extract("sum", |x: Dyn<*const f64>, n: Dyn<i64>| {
    ///             let s = Dyn::new(0.0);
    ///             let i = Dyn::new(0i64);
    ///             while i.lt(n).is_true() {
    ///                 s.set(s + x.at(i));
    ///                 i.set(i + 1);
    ///             }
    ///             s
    ///         })
    ///         .unwrap();
    ///     let f = sum.safe().unwrap();
    ///     let xs = [1.0, 2.0, 3.5];
    ///     assert_eq!(f.call(&mut [(&xs[..]).into()]).unwrap(), 6.5.into());
    ///     Ok(())
    /// }
    /// ```
    pub fn slice(mut self, ptr: usize, len: usize) -> Self {
        self.options.slices.push((ptr, len));
        self
    }

    /// Makes the function *checked*: it may reach memory only by indexing
    /// its slice parameters ([`Builder::slice`]) and its local arrays,
    /// every index is checked (out of bounds stops the program with a
    /// message; the interpreter reports an error), and anything else that
    /// touches memory (a dereference, an address, a pointer given to a call)
    /// is an [`Error::Misuse`](crate::Error::Misuse) at its line. Such a
    /// function can be called safely ([`Extracted::safe`]).
    pub fn checked(mut self) -> Self {
        self.options.checked = true;
        self
    }

    /// Runs the first stage of `f`: its trace graph, before structuring,
    /// and the configuration used.
    pub(crate) fn trace<M, F: StagedFn<M>>(
        &self,
        name: &str,
        f: F,
        loc: SrcLoc,
    ) -> Result<(crate::trace::engine::Trace, Config)> {
        let invoke = |params: &[VarId], gen: u32| f.invoke(params, gen);
        let (trace, config) = self.trace_with(name, F::params(), F::ret(), loc, &invoke)?;
        if trace.func.externs.iter().any(|(_, x)| x.name == name) {
            return Err(crate::Error::Misuse {
                message: format!(
                    "`{name}` names both the extracted function and an extern it calls"
                ),
                location: Some(loc),
            });
        }
        Ok((trace, config))
    }

    /// Runs the first stage of a body that `invoke` runs on the parameters'
    /// variables: a function `name` of these parameter and return types.
    pub(crate) fn trace_with(
        &self,
        name: &str,
        params: Vec<Type>,
        ret: Type,
        loc: SrcLoc,
        invoke: &dyn Fn(&[VarId], u32) -> Option<Arg>,
    ) -> Result<(crate::trace::engine::Trace, Config)> {
        check_name(name, loc)?;
        let mut config = self.config.clone();
        if std::env::var("AUGUR_TAGGER").is_ok_and(|v| v == "unwind") {
            config.tagger = Tagger::Unwinder;
        }
        let body = |params: &[VarId]| {
            let gen = driver::current_gen().expect("inside an extraction");
            invoke(params, gen).map(|a| with(|e| e.operand(a, loc)))
        };
        let trace = driver::extract(config.clone(), name, params, ret, loc, &body)?;
        Ok((trace, config))
    }

    /// What the pipeline does to each function after its runs.
    pub(crate) fn options(&self) -> &pipeline::Options {
        &self.options
    }

    /// A module: several staged functions extracted together, which call
    /// each other (see [`Module`](crate::Module)). Every option of this
    /// builder applies to each of its functions as to a single one.
    pub fn module<'a>(&self) -> crate::Module<'a> {
        crate::Module::new(self.clone())
    }
}

/// The function's C name must be an identifier that the generated file and
/// the C library do not already use.
pub(crate) fn check_name(name: &str, loc: SrcLoc) -> Result<()> {
    let ident = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    let reserved = crate::codegen::c::keywords::is_reserved(name);
    if ident && !reserved {
        return Ok(());
    }
    Err(crate::Error::Misuse {
        message: format!(
            "`{name}` cannot name a C function: {}",
            if ident {
                "it is a C keyword or a C library name"
            } else {
                "it is not an identifier"
            }
        ),
        location: Some(loc),
    })
}

/// An extracted function: its IR, its C code, its statistics; compile it or
/// interpret it. `S` is the type of the compiled function.
#[derive(Clone, Debug)]
pub struct Extracted<S> {
    part: Part,
    _sig: PhantomData<S>,
}

impl<S: Copy> Extracted<S> {
    /// The IR.
    pub fn ir(&self) -> &Function {
        &self.part.func
    }

    /// What extraction did.
    pub fn stats(&self) -> &Stats {
        &self.part.stats
    }

    /// Why each prophecy and history ended at its value: the lines whose
    /// requirements made it so. Print it (`Display`) or inspect it.
    pub fn explain(&self) -> &Explanation {
        &self.part.explanation
    }

    /// Where `extract` was called.
    pub fn location(&self) -> SrcLoc {
        self.part.loc
    }

    /// The function as a C99 translation unit.
    pub fn c_code(&self) -> String {
        self.c_code_with(&CodegenOptions::default())
    }

    /// [`c_code`](Extracted::c_code) with options: source mapping with
    /// `#line` directives or comments that name the staging code's lines.
    ///
    /// ```
    /// #[augur::staged]
    /// fn main() -> augur::Result<()> {
    ///     use augur::codegen::{CodegenOptions, LineMarkers};
    ///     use augur::{Builder, Dyn};
    ///
    ///     let h_line = line!() + 3; // the line of `Dyn::new` below
    ///     let ex = Builder::new()
    ///         .extract("half", |x: Dyn<i32>| {
    ///             let h = Dyn::new(x / 2);
    ///             h
    ///         })
    ///         .unwrap();
    ///     let opts = CodegenOptions::default().with_line_markers(LineMarkers::Directives);
    ///     let c = ex.c_code_with(&opts);
    ///     assert!(c.contains(&format!("#line {h_line} \"{}\"\n", file!())), "{c}");
    ///     Ok(())
    /// }
    /// ```
    pub fn c_code_with(&self, opts: &CodegenOptions) -> String {
        program::c_code(&[&self.part.func], opts)
    }

    /// Compiles the function to native code and loads it: with the system C
    /// compiler (cached by content) when one is found, else with the
    /// in-process JIT ([`Backend::Auto`]). A launch runs as its loop nest
    /// over blocks and threads; a kernel that synchronises the grid
    /// ([`gpu::grid_sync`](crate::stage::gpu::grid_sync)) cannot run so and
    /// is an [`Error::Kernel`](crate::Error::Kernel) that names what can:
    /// the [`simulated`](Extracted::simulated) program and
    /// [`cuda_code`](Extracted::cuda_code).
    pub fn compile(&self) -> Result<Compiled<S>> {
        self.compile_with(&CompileOptions::default())
    }

    /// [`compile`](Extracted::compile) with options: the
    /// [`backend`](CompileOptions::backend), and for C the compiler, flags,
    /// extra C sources and [`codegen`](CompileOptions::codegen); for the
    /// JIT the [`symbols`](CompileOptions::symbols) of user externs.
    ///
    /// ```
    /// #[augur::staged]
    /// fn main() -> augur::Result<()> {
    ///     use augur::exec::{Backend, CompileOptions};
    ///     use augur::{Builder, Dyn};
    ///
    ///     let ex = Builder::new().extract("inc", |x: Dyn<u8>| x + 1u8).unwrap();
    ///     let jit = ex.compile_with(&CompileOptions::default().with_backend(Backend::Jit)).unwrap();
    ///     assert_eq!(jit.backend(), Backend::Jit);
    ///     // SAFETY: `inc` is `uint8_t inc(uint8_t)`.
    ///     assert_eq!(unsafe { jit.get()(255) }, 0);
    ///     Ok(())
    /// }
    /// ```
    pub fn compile_with(&self, opts: &CompileOptions) -> Result<Compiled<S>> {
        let code = program::compile(&[&self.part.func], opts)?;
        // SAFETY: the code was compiled from C (or IR) generated for this
        // very signature: `S` is `unsafe extern "C" fn` of the parameters'
        // and result's ABI types, which match the function's definition.
        let f = unsafe { code.symbol::<S>(&self.part.func.name)? };
        Ok(Compiled { code, f })
    }

    /// The function as a CUDA translation unit: each
    /// [`gpu::launch`](crate::stage::gpu::launch) a kernel. `prelude` (C++
    /// text after the includes) defines the host functions it calls.
    pub fn cuda_code(&self, prelude: &str) -> Result<String> {
        self.cuda_code_with(prelude, &CodegenOptions::default())
    }

    /// [`cuda_code`](Extracted::cuda_code) with options (source mapping for
    /// kernels and host code alike).
    pub fn cuda_code_with(&self, prelude: &str, opts: &CodegenOptions) -> Result<String> {
        program::cuda_code(&[&self.part.func], prelude, opts)
    }

    /// The CPU simulation of the GPU program: launches run as loop nests,
    /// phase by phase ([`codegen::cuda::simulate`](crate::codegen::cuda::simulate)).
    /// Its C is `codegen::write_function(&ex.simulated()?)`.
    pub fn simulated(&self) -> Result<Extracted<S>> {
        let mut part = self.part.clone();
        program::simulated([&mut part])?;
        Ok(Extracted {
            part,
            _sig: PhantomData,
        })
    }

    /// A safe call of a checked function ([`Builder::slice`],
    /// [`Builder::checked`]): compiled as by [`compile`](Extracted::compile),
    /// called with values and Rust slices, each checked against the
    /// function's parameters. An unchecked function is an
    /// [`Error::Misuse`](crate::Error::Misuse).
    pub fn safe(&self) -> Result<crate::safe::SafeFn> {
        self.safe_with(&CompileOptions::default())
    }

    /// [`safe`](Extracted::safe) with compile options.
    pub fn safe_with(&self, opts: &CompileOptions) -> Result<crate::safe::SafeFn> {
        crate::safe::of_part(&[&self.part.func], &self.part, opts)
    }

    /// Runs the function in the IR interpreter.
    pub fn interpret(&self, args: &[Value]) -> Result<Value> {
        self.interpret_in(&mut Interpreter::new(), args)
    }

    /// Runs the function in a given interpreter (with registered externs,
    /// memory prepared by the caller).
    pub fn interpret_in(&self, interp: &mut Interpreter, args: &[Value]) -> Result<Value> {
        program::interpret_in(interp, &[], &self.part.func, args)
    }
}

/// A compiled and loaded function.
#[derive(Clone)]
pub struct Compiled<S> {
    code: Code,
    f: S,
}

impl<S: Copy> Compiled<S> {
    /// The function pointer: `unsafe extern "C" fn(...) -> ...`. Calling it
    /// runs the generated code, which may dereference the pointers it is
    /// given: the caller guarantees they are valid. The pointer must not be
    /// used after this `Compiled` (and its clones) are dropped.
    pub fn get(&self) -> S {
        self.f
    }

    /// The backend that compiled it ([`Backend::C`] or [`Backend::Jit`]).
    pub fn backend(&self) -> Backend {
        self.code.backend()
    }

    /// The loaded library, for code the C compiler built (`None` for the JIT's).
    pub fn library(&self) -> Option<&Library> {
        self.code.library()
    }

    /// What the backend could not honour, one line each with the user's
    /// line: the JIT reads no pragma of [`annotate`](crate::annotate)
    /// (`omp parallel for` loops run on one thread there;
    /// [`parallel_for`](crate::parallel_for) runs on threads on every
    /// backend). Empty for C, which honours them.
    ///
    /// ```
    /// #[augur::staged]
    /// fn main() -> augur::Result<()> {
    ///     use augur::exec::{Backend, CompileOptions};
    ///     use augur::{Builder, Dyn};
    ///     let ex = Builder::new()
    ///         .extract("fill", |x: Dyn<*mut i32>, n: Dyn<i32>| {
    ///             augur::annotate("pragma: omp parallel for");
    ///             let i = Dyn::new(0);
    ///             while i.lt(n).is_true() {
    ///                 x.at(i).set(i);
    ///                 i.set(i + 1);
    ///             }
    ///         })
    ///         .unwrap();
    ///     let jit = ex.compile_with(&CompileOptions::default().with_backend(Backend::Jit))?;
    ///     assert!(jit.notes()[0].contains("omp parallel for"), "{:?}", jit.notes());
    ///     Ok(())
    /// }
    /// ```
    pub fn notes(&self) -> &[String] {
        self.code.notes()
    }
}

impl<S> std::fmt::Debug for Compiled<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Compiled({:?})", self.code)
    }
}
