//! Compiling generated C into a shared library and loading it.
//!
//! Libraries are cached on disk under a hash of everything that affects the
//! compiler's output, so running a program (or a test suite) again does not
//! run the compiler again. The cache is private to its user, every entry is
//! checked before it is loaded, and it is bounded: see [`Cache`].

use super::cache::{self, Cache, Entry};
use crate::codegen::c::build::BuildNeeds;
use crate::codegen::CodegenOptions;
use crate::{Error, Result};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

/// Flags used when [`CompileOptions::flags`] is left at its default.
///
/// They hold the flags every unit's build comment names
/// ([`C_FLAGS`](crate::codegen::c::build::C_FLAGS)), and the library's
/// `-fPIC -shared`; [`CompileOptions::with_needs`] adds what one unit
/// needs beyond them (`-fopenmp`).
///
/// `-fwrapv` makes signed overflow wrap, as it does in the IR interpreter, so
/// both ways of running the second stage agree. `-Wall -Werror` keeps the
/// generated code warning-free, except for comparisons of a value with
/// itself (`x == x`) and constant arithmetic that wraps (`INT_MIN * -1`,
/// which gcc sees once it folds `(-1 | x)` to `-1`): those are the user's
/// staged program, not ours, a staged interpreter meets them in the programs
/// it compiles, and `-fwrapv` defines the second. `-lm` links the C math
/// library, so `<math.h>` calls resolve in a process that has not loaded it
/// (a Rust binary loads it only if it calls a libm function itself).
pub const DEFAULT_FLAGS: &[&str] = &[
    "-std=c99",
    "-O2",
    "-fPIC",
    "-shared",
    "-Wall",
    "-Werror",
    "-Wno-tautological-compare",
    "-Wno-overflow",
    "-fwrapv",
    "-lm",
];

/// Bumped whenever the cache layout or key changes, so old entries are ignored.
const CACHE_VERSION: &str = "augur-cache-3";

/// How [`compile`] builds a library.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompileOptions {
    /// The compiler command; `None` means the `CC` environment variable, else
    /// `cc`. It is split at whitespace, so it may carry a wrapper or
    /// arguments (`ccache gcc`).
    pub cc: Option<String>,
    /// Compiler flags; they must produce a shared library. Flags that start
    /// with `-l` are placed after the sources, where linkers look for them.
    pub flags: Vec<String>,
    /// Where compiled libraries are cached; `None` means the `AUGUR_CACHE`
    /// environment variable, else the user's cache directory
    /// (`$XDG_CACHE_HOME/augur`, else `~/.cache/augur`). It must be private
    /// to the user: see [`Cache`].
    pub cache_dir: Option<PathBuf>,
    /// The most bytes the cache's entries may take before the least
    /// recently used are removed; `None` means the `AUGUR_CACHE_LIMIT`
    /// environment variable (`512M`, `2G`, `none`), else
    /// [`cache::DEFAULT_LIMIT`] (1 GiB).
    pub cache_limit: Option<u64>,
    /// Extra C sources (user runtime functions) compiled into the same library.
    pub extra_c: Vec<String>,
    /// How [`Extracted::compile_with`](crate::Extracted::compile_with)
    /// writes the C it compiles: with
    /// [`LineMarkers::Directives`](crate::codegen::LineMarkers::Directives)
    /// the compiler's messages, and the debug line table under `-g`, name
    /// the Rust lines. [`compile`] itself takes finished C and ignores it.
    ///
    /// ```
    /// #[augur::staged]
    /// fn main() -> augur::Result<()> {
    ///     use augur::codegen::{CodegenOptions, LineMarkers};
    ///     use augur::exec::CompileOptions;
    ///     use augur::{Builder, Dyn};
    ///     use std::path::Path;
    ///
    ///     let ex = Builder::new().extract("sq", |x: Dyn<f64>| x * x).unwrap();
    ///     // `file!()` paths are relative to the workspace root: find it.
    ///     let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    ///     let root = manifest.ancestors().find(|d| d.join(file!()).is_file()).unwrap();
    ///     let mut opts = CompileOptions::default();
    ///     opts.flags.extend(["-g".to_string(), "-O0".to_string()]);
    ///     opts.codegen = CodegenOptions::default()
    ///         .with_line_markers(LineMarkers::Directives)
    ///         .with_source_root(root);
    ///     let sq = ex.compile_with(&opts).unwrap();
    ///     // SAFETY: `sq` is `double sq(double)`.
    ///     assert_eq!(unsafe { sq.get()(1.5) }, 2.25);
    ///     // gdb on a program calling it can `break` at the Rust line of `x * x`.
    ///     Ok(())
    /// }
    /// ```
    pub codegen: CodegenOptions,
    /// How long the compiler may run before it is stopped and
    /// [`compile`] fails with [`Error::Compile`] saying so. Optimizers
    /// have inputs that take them very long (gcc's jump threading at `-O2`
    /// on long ladders of correlated conditions took more than half an hour
    /// on 53 KB of generated C); the limit keeps the process usable.
    pub timeout: std::time::Duration,
    /// Which backend [`Extracted::compile_with`](crate::Extracted::compile_with)
    /// uses: the C compiler, the in-process JIT, or (the default) the C
    /// compiler when one is found and the JIT otherwise. [`compile`]
    /// itself always runs the C compiler.
    pub backend: Backend,
    /// Functions the JIT backend calls by address (the JIT's counterpart of
    /// [`extra_c`](CompileOptions::extra_c), which it cannot compile):
    /// see [`with_symbol`](CompileOptions::with_symbol). The C backend
    /// ignores them.
    pub symbols: Vec<ExternSymbol>,
}

/// The backend that turns an extracted function into native code.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Backend {
    /// The C compiler ([`compile`]): the generated C, compiled with
    /// [`CompileOptions::flags`], cached on disk and loaded.
    C,
    /// Cranelift in process ([`exec::jit`](crate::exec::jit)): no compiler
    /// or files needed, well under a millisecond for a small function.
    /// It ignores `cc`, `flags`, `cache_dir`, `extra_c` and `codegen`;
    /// user externs come from [`CompileOptions::symbols`].
    Jit,
    /// The C compiler when [`CompileOptions::resolved_cc`] names a program
    /// that exists, else the JIT.
    #[default]
    Auto,
}

/// A function the JIT backend calls where the IR calls the extern `name`
/// (registered with [`CompileOptions::with_symbol`]).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ExternSymbol {
    /// The extern's C name.
    pub name: String,
    /// The function's address.
    pub address: usize,
}

/// The default [`CompileOptions::timeout`]: ten minutes.
pub const DEFAULT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(600);

impl Default for CompileOptions {
    fn default() -> Self {
        CompileOptions {
            cc: None,
            flags: DEFAULT_FLAGS.iter().map(|f| f.to_string()).collect(),
            cache_dir: None,
            cache_limit: None,
            extra_c: Vec::new(),
            codegen: CodegenOptions::default(),
            timeout: DEFAULT_TIMEOUT,
            backend: Backend::Auto,
            symbols: Vec::new(),
        }
    }
}

impl CompileOptions {
    /// These options with `backend`.
    pub fn with_backend(mut self, backend: Backend) -> Self {
        self.backend = backend;
        self
    }

    /// These options with the function at `address` as the extern `name`
    /// for the JIT backend (a later registration of a name wins). The
    /// function must have the C signature the IR declares for `name`.
    ///
    /// ```
    /// #[augur::staged]
    /// fn main() -> augur::Result<()> {
    ///     use augur::exec::{Backend, CompileOptions};
    ///     use augur::{Builder, Dyn, ExternFn};
    ///
    ///     extern "C" fn triple(x: i32) -> i32 {
    ///         3 * x
    ///     }
    ///     const TRIPLE: ExternFn<fn(i32) -> i32> = ExternFn::new("triple");
    ///     let ex = Builder::new()
    ///         .extract("f", |x: Dyn<i32>| TRIPLE.call(x) + 1)
    ///         .unwrap();
    ///     let opts = CompileOptions::default()
    ///         .with_backend(Backend::Jit)
    ///         .with_symbol("triple", triple as *const ());
    ///     let f = ex.compile_with(&opts).unwrap();
    ///     // SAFETY: `f` is `int32_t f(int32_t)`.
    ///     assert_eq!(unsafe { f.get()(5) }, 16);
    ///     Ok(())
    /// }
    /// ```
    pub fn with_symbol(mut self, name: impl Into<String>, address: *const ()) -> Self {
        self.symbols.push(ExternSymbol {
            name: name.into(),
            address: address as usize,
        });
        self
    }

    /// These options with the flags a unit needs
    /// ([`BuildNeeds::compile_flags`] and [`BuildNeeds::library_flags`])
    /// added where [`flags`](CompileOptions::flags) lack them: what
    /// [`Extracted::compile_with`](crate::Extracted::compile_with) does
    /// with the needs of the unit it compiles, which its build comment
    /// shows ([`BuildNeeds::c_header`]). A unit with `omp parallel for`
    /// pragmas so gets `-fopenmp -Wl,-z,nodelete`, one with only `omp simd`
    /// hints `-fopenmp-simd`.
    ///
    /// ```
    /// use augur::codegen::c::build::{BuildNeeds, OpenMp};
    /// use augur::exec::CompileOptions;
    ///
    /// let needs = BuildNeeds { openmp: OpenMp::Parallel, libm: true, ..BuildNeeds::default() };
    /// let opts = CompileOptions::default().with_needs(&needs);
    /// let added = &opts.flags[CompileOptions::default().flags.len()..];
    /// // `-lm` is a default flag already.
    /// assert_eq!(added, ["-fopenmp", "-Wl,-z,nodelete"]);
    /// ```
    pub fn with_needs(mut self, needs: &BuildNeeds) -> Self {
        for f in needs
            .compile_flags()
            .into_iter()
            .chain(needs.library_flags())
        {
            if !BuildNeeds::satisfied(f, &self.flags) {
                self.flags.push(f.to_string());
            }
        }
        self
    }

    /// The backend these options choose: [`Backend::Auto`] resolved by
    /// looking for the compiler.
    pub fn resolved_backend(&self) -> Backend {
        match self.backend {
            Backend::Auto if compiler_found(&self.resolved_cc()) => Backend::C,
            Backend::Auto => Backend::Jit,
            b => b,
        }
    }

    /// The compiler command these options name, after the `CC` fallback.
    pub fn resolved_cc(&self) -> String {
        choose(self.cc.clone(), std::env::var("CC").ok()).unwrap_or_else(|| "cc".to_string())
    }

    /// The cache directory these options name, after the `AUGUR_CACHE`
    /// fallback; `None` is the user's ([`cache::default_dir`]).
    pub fn resolved_cache_dir(&self) -> Option<PathBuf> {
        let env = std::env::var("AUGUR_CACHE").ok();
        choose(self.cache_dir.clone(), env.map(PathBuf::from))
    }

    /// The cache's limit these options name, after the `AUGUR_CACHE_LIMIT`
    /// fallback.
    ///
    /// Errors: [`Error::Cache`] if `AUGUR_CACHE_LIMIT` is not a size.
    pub fn resolved_cache_limit(&self) -> Result<u64> {
        if let Some(limit) = self.cache_limit {
            return Ok(limit);
        }
        match std::env::var("AUGUR_CACHE_LIMIT")
            .ok()
            .filter(|v| !v.is_empty())
        {
            None => Ok(cache::DEFAULT_LIMIT),
            Some(text) => cache::parse_limit(&text).ok_or_else(|| Error::Cache {
                path: PathBuf::from("AUGUR_CACHE_LIMIT"),
                message: format!(
                    "{text:?} is not a size (bytes, with K, M, G or T for powers of 1024, \
                     or `none`)"
                ),
            }),
        }
    }
}

/// True if the first word of `cc` names an executable file: a path, or a
/// name found on `PATH`.
pub fn compiler_found(cc: &str) -> bool {
    let Some(program) = cc.split_whitespace().next() else {
        return false;
    };
    let executable = |p: &Path| {
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            p.metadata()
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        }
        #[cfg(not(unix))]
        {
            p.is_file()
        }
    };
    if program.contains(std::path::MAIN_SEPARATOR) || program.contains('/') {
        return executable(Path::new(program));
    }
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| executable(&dir.join(program))))
}

/// The explicit setting if given, else a non-empty environment value.
fn choose<T: AsRef<std::ffi::OsStr>>(explicit: Option<T>, env: Option<T>) -> Option<T> {
    explicit.or(env.filter(|v| !v.as_ref().is_empty()))
}

/// A loaded shared library. Clones share the handle; the library stays loaded
/// while any clone is alive.
#[derive(Clone, Debug)]
pub struct Library {
    lib: Arc<libloading::Library>,
    path: PathBuf,
    cache_hit: bool,
}

impl Library {
    /// Loads the checked `entry` of `cache`.
    fn load(cache: &Cache, entry: &Entry, cache_hit: bool) -> Result<Library> {
        Ok(Library {
            lib: Arc::new(cache.load(entry)?),
            path: entry.path.clone(),
            cache_hit,
        })
    }

    /// The function (or other symbol) `name`, as `F`, typically an
    /// `extern "C" fn(..) -> ..` pointer type.
    ///
    /// # Safety
    ///
    /// `F` must match the C definition of `name` (argument and return types,
    /// C ABI), and the value must not be used after every clone of this
    /// `Library` has been dropped.
    pub unsafe fn symbol<F: Copy>(&self, name: &str) -> Result<F> {
        // SAFETY: the caller guarantees that `F` is the symbol's type.
        let sym = unsafe { self.lib.get::<F>(name.as_bytes()) };
        sym.map(|s| *s).map_err(|e| Error::Load {
            path: self.path.clone(),
            message: format!("no symbol `{name}`: {e}"),
        })
    }

    /// The library's entry in the cache (what was loaded is a private copy
    /// of the bytes checked there).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// True if the library came from the cache, without running the compiler.
    pub fn cache_hit(&self) -> bool {
        self.cache_hit
    }
}

/// Compiles `source` (a C translation unit) and `opts.extra_c` into one
/// shared library and loads it, reusing a cached library when one exists.
///
/// The cache is [`Cache::open`]ed from `opts`: a library is loaded from it
/// only after it passed every check there.
///
/// Errors: [`Error::CompilerMissing`] if the compiler cannot be started,
/// [`Error::Compile`] (naming the cached `.c` file) if it fails,
/// [`Error::Cache`] if the cache cannot be trusted or written,
/// [`Error::Load`] if the library cannot be loaded.
pub fn compile(source: &str, opts: &CompileOptions) -> Result<Library> {
    let cc = opts.resolved_cc();
    let cache = Cache::open(opts)?;
    let key = cache_key(&cc, opts, source);
    if let Some(entry) = cache.find(&key, "so") {
        return Library::load(&cache, &entry, true);
    }
    let c_path = cache.entry_path(&key, "c");
    cache.write_new(&c_path, source.as_bytes())?;
    let mut sources = vec![c_path.clone()];
    for (i, extra) in opts.extra_c.iter().enumerate() {
        let path = cache.entry_path(&key, &format!("extra{i}.c"));
        cache.write_new(&path, extra.as_bytes())?;
        sources.push(path);
    }
    let tmp = cache.temporary(&key, "so");
    run_compiler(&cc, &opts.flags, &sources, &tmp, opts.timeout).map_err(|e| match e {
        CompilerFailure::Spawn(message) => Error::CompilerMissing {
            compiler: cc.clone(),
            message: format!("{message} (set CC to choose another)"),
        },
        CompilerFailure::Exit(output) => Error::Compile {
            path: c_path.clone(),
            output,
        },
    })?;
    let entry = cache.put(&key, "so", &tmp)?;
    Library::load(&cache, &entry, false)
}

/// Why the compiler did not produce a library.
enum CompilerFailure {
    /// It could not be started.
    Spawn(String),
    /// It ran and failed, with this output.
    Exit(String),
}

/// Runs `cc flags -o out sources libs`, removing `out` on failure; stops
/// the compiler after `timeout`.
fn run_compiler(
    cc: &str,
    flags: &[String],
    sources: &[PathBuf],
    out: &Path,
    timeout: std::time::Duration,
) -> std::result::Result<(), CompilerFailure> {
    let mut words = cc.split_whitespace();
    let program = words.next().unwrap_or("cc");
    let (libs, flags): (Vec<&String>, Vec<&String>) =
        flags.iter().partition(|f| f.starts_with("-l"));
    // The compiler's messages go to a file, not a pipe: waiting with a
    // deadline then needs no reader thread.
    let log_path = out.with_extension("log");
    let log = cache::create_new(&log_path).map_err(|e| CompilerFailure::Spawn(e.to_string()))?;
    let log2 = log
        .try_clone()
        .map_err(|e| CompilerFailure::Spawn(e.to_string()))?;
    let mut command = Command::new(program);
    // Its own process group, so that a stop reaches the compiler's own
    // children (`cc1`, `as`) too.
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    let mut child = command
        .args(words)
        .args(flags)
        .arg("-o")
        .arg(out)
        .args(sources)
        .args(libs)
        .stdin(std::process::Stdio::null())
        .stdout(log)
        .stderr(log2)
        .spawn()
        .map_err(|e| {
            let _ = std::fs::remove_file(&log_path);
            CompilerFailure::Spawn(e.to_string())
        })?;
    let status = wait_until(&mut child, timeout);
    let mut output = std::fs::read_to_string(&log_path).unwrap_or_default();
    let _ = std::fs::remove_file(&log_path);
    match status {
        Some(s) if s.success() => return Ok(()),
        Some(s) if output.trim().is_empty() => {
            output = format!("{cc} failed ({s}) without output");
        }
        Some(_) => {}
        None => {
            output = format!(
                "{cc} did not finish within {} s and was stopped \
                 (CompileOptions::timeout); with gcc, -fno-thread-jumps or -O1 \
                 may help\n{output}",
                timeout.as_secs()
            );
        }
    }
    let _ = std::fs::remove_file(out);
    Err(CompilerFailure::Exit(output))
}

/// Waits for `child` for at most `timeout`; kills it after that (`None`).
fn wait_until(
    child: &mut std::process::Child,
    timeout: std::time::Duration,
) -> Option<std::process::ExitStatus> {
    let deadline = std::time::Instant::now() + timeout;
    let mut pause = std::time::Duration::from_millis(1);
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Some(status),
            Ok(None) if std::time::Instant::now() < deadline => {
                std::thread::sleep(pause);
                // Short compiles are seen at once, long ones polled gently.
                pause = (pause * 2).min(std::time::Duration::from_millis(50));
            }
            // Past the deadline, or the wait itself failed.
            _ => {
                #[cfg(unix)]
                let _ = Command::new("kill")
                    .args(["-KILL", "--", &format!("-{}", child.id())])
                    .status();
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    }
}

/// The cache key: 32 hex digits of a hash ([`cache::KeyHasher`]) of
/// everything that changes the library.
fn cache_key(cc: &str, opts: &CompileOptions, source: &str) -> String {
    let mut h = cache::KeyHasher::new();
    h.part(CACHE_VERSION.as_bytes());
    h.part(std::env::consts::ARCH.as_bytes());
    h.part(std::env::consts::OS.as_bytes());
    h.part(cc.as_bytes());
    h.part(&(opts.flags.len() as u64).to_le_bytes());
    for f in &opts.flags {
        h.part(f.as_bytes());
    }
    h.part(source.as_bytes());
    h.part(&(opts.extra_c.len() as u64).to_le_bytes());
    for x in &opts.extra_c {
        h.part(x.as_bytes());
    }
    h.finish()
}

/// Helpers for tests that compile C.
#[cfg(test)]
pub(crate) mod test_support {
    use std::path::{Path, PathBuf};

    /// A fresh directory, removed when dropped.
    pub(crate) struct TestDir(PathBuf);

    impl TestDir {
        /// An empty directory named after the test (and this process).
        pub(crate) fn new(name: &str) -> TestDir {
            let dir =
                std::env::temp_dir().join(format!("augur-test-{}-{name}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).expect("creating a test directory");
            TestDir(dir)
        }

        /// Its path.
        pub(crate) fn path(&self) -> &Path {
            &self.0
        }
    }

    impl Drop for TestDir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::test_support::TestDir;
    use super::*;

    const ADD: &str = "#include <stdint.h>\nint32_t add(int32_t a, int32_t b) { return a + b; }\n";

    type BinI32 = extern "C" fn(i32, i32) -> i32;

    fn opts(dir: &TestDir) -> CompileOptions {
        CompileOptions {
            cache_dir: Some(dir.path().to_path_buf()),
            ..CompileOptions::default()
        }
    }

    fn call_add(lib: &Library, a: i32, b: i32) -> i32 {
        // SAFETY: `add` is defined in ADD with this signature.
        let add: BinI32 = unsafe { lib.symbol("add") }.unwrap();
        add(a, b)
    }

    #[test]
    fn compiles_and_calls_a_function() {
        let dir = TestDir::new("compile-call");
        let lib = compile(ADD, &opts(&dir)).unwrap();
        assert!(!lib.cache_hit());
        assert_eq!(call_add(&lib, 2, 3), 5);
        assert!(lib.path().starts_with(dir.path()));
        assert_eq!(lib.path().extension().unwrap(), "so");
    }

    #[test]
    fn second_compile_hits_the_cache() {
        let dir = TestDir::new("compile-cache");
        let first = compile(ADD, &opts(&dir)).unwrap();
        let modified = std::fs::metadata(first.path()).unwrap().modified().unwrap();
        let second = compile(ADD, &opts(&dir)).unwrap();
        assert!(second.cache_hit());
        assert_eq!(first.path(), second.path());
        let again = std::fs::metadata(second.path())
            .unwrap()
            .modified()
            .unwrap();
        assert_eq!(modified, again, "the library was rebuilt");
        assert_eq!(call_add(&second, 40, 2), 42);
    }

    #[test]
    fn syntax_error_reports_the_compiler_output() {
        let dir = TestDir::new("compile-syntax");
        let err = compile("int f(void) { return 1 }\n", &opts(&dir)).unwrap_err();
        match err {
            Error::Compile { path, output } => {
                assert!(path.exists(), "{}", path.display());
                assert_eq!(path.extension().unwrap(), "c");
                assert!(output.contains("expected"), "{output}");
            }
            e => panic!("unexpected {e:?}"),
        }
        // A failed compile leaves no library or temporary library behind.
        let libs = std::fs::read_dir(dir.path())
            .unwrap()
            .filter(|e| e.as_ref().unwrap().path().extension().unwrap() == "so")
            .count();
        assert_eq!(libs, 0);
    }

    #[test]
    fn warnings_are_errors() {
        let dir = TestDir::new("compile-warning");
        let src = "int f(void) { int unused = 1; return 0; }\n";
        let err = compile(src, &opts(&dir)).unwrap_err();
        assert!(matches!(err, Error::Compile { ref output, .. } if output.contains("unused")));
    }

    /// A compiler that runs past the timeout is stopped, with the
    /// compiler it started (as `cc` starts `cc1`), and the error says so.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_compiler_past_its_timeout_is_stopped_with_its_children() {
        let dir = TestDir::new("compile-timeout");
        let script = dir.path().join("slow-cc.sh");
        let pid_file = dir.path().join("child.pid");
        let text = format!(
            "#!/bin/sh\nsleep 60 &\necho $! > {}\nwait\n",
            pid_file.display()
        );
        std::fs::write(&script, text).unwrap();
        std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        let opts = CompileOptions {
            cc: Some(script.display().to_string()),
            timeout: std::time::Duration::from_millis(500),
            ..opts(&dir)
        };
        let e = compile(ADD, &opts).unwrap_err();
        assert!(e.to_string().contains("did not finish within"), "{e}");
        let child = std::fs::read_to_string(&pid_file).unwrap();
        let proc_dir = format!("/proc/{}", child.trim());
        // The kill is asynchronous: give the kernel a moment to reap it.
        let gone = (0..100).any(|_| {
            let status = std::fs::read_to_string(format!("{proc_dir}/stat")).unwrap_or_default();
            let state = status.split(") ").nth(1).and_then(|r| r.chars().next());
            if matches!(state, None | Some('Z')) {
                return true;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
            false
        });
        assert!(gone, "the compiler's child {proc_dir} still runs");
    }

    #[test]
    fn missing_compiler() {
        let dir = TestDir::new("compile-missing");
        let opts = CompileOptions {
            cc: Some("/nonexistent/cc".into()),
            ..opts(&dir)
        };
        match compile(ADD, &opts).unwrap_err() {
            Error::CompilerMissing { compiler, message } => {
                assert_eq!(compiler, "/nonexistent/cc");
                assert!(!message.is_empty());
            }
            e => panic!("unexpected {e:?}"),
        }
    }

    #[test]
    fn extra_sources_are_linked_in() {
        let dir = TestDir::new("compile-extra");
        let main = "#include <stdint.h>\nint32_t twice(int32_t);\n\
                    int32_t quad(int32_t x) { return twice(twice(x)); }\n";
        let opts = CompileOptions {
            extra_c: vec![
                "#include <stdint.h>\nint32_t twice(int32_t x) { return 2 * x; }\n".into(),
            ],
            ..opts(&dir)
        };
        let lib = compile(main, &opts).unwrap();
        // SAFETY: `quad` is defined above with this signature.
        let quad: extern "C" fn(i32) -> i32 = unsafe { lib.symbol("quad") }.unwrap();
        assert_eq!(quad(3), 12);
    }

    #[test]
    fn concurrent_compiles_of_the_same_source() {
        let dir = TestDir::new("compile-threads");
        let opts = opts(&dir);
        let barrier = std::sync::Barrier::new(4);
        std::thread::scope(|s| {
            let handles: Vec<_> = (0..4)
                .map(|_| {
                    s.spawn(|| {
                        barrier.wait();
                        compile(ADD, &opts).map(|lib| call_add(&lib, 1, 2))
                    })
                })
                .collect();
            for h in handles {
                assert_eq!(h.join().unwrap().unwrap(), 3);
            }
        });
        // Only the final files remain: the source, the library and its
        // sum, no temporaries.
        let mut names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        let ends: Vec<&str> = names.iter().map(|n| &n[32..]).collect();
        assert_eq!(ends, [".c", ".so", ".so.sum"], "{names:?}");
    }

    #[test]
    fn missing_symbol_is_a_load_error() {
        let dir = TestDir::new("compile-symbol");
        let lib = compile(ADD, &opts(&dir)).unwrap();
        // SAFETY: the lookup fails, so the type is never used.
        let err = unsafe { lib.symbol::<BinI32>("sub") }.unwrap_err();
        assert!(matches!(err, Error::Load { ref message, .. } if message.contains("`sub`")));
    }

    #[test]
    fn signed_overflow_wraps() {
        let dir = TestDir::new("compile-wrap");
        let lib = compile(ADD, &opts(&dir)).unwrap();
        assert_eq!(call_add(&lib, i32::MAX, 1), i32::MIN);
    }

    #[test]
    fn link_flags_follow_the_sources() {
        let dir = TestDir::new("compile-libm");
        let src = "#include <math.h>\ndouble root(double x) { return sqrt(x); }\n";
        let mut opts = opts(&dir);
        opts.flags.push("-lm".into());
        let lib = compile(src, &opts).unwrap();
        // SAFETY: `root` is defined above with this signature.
        let root: extern "C" fn(f64) -> f64 = unsafe { lib.symbol("root") }.unwrap();
        assert_eq!(root(2.25), 1.5);
    }

    #[test]
    fn key_depends_on_everything_compiled() {
        let base = CompileOptions::default();
        let key = |cc: &str, o: &CompileOptions, src: &str| cache_key(cc, o, src);
        let k = key("cc", &base, "x");
        assert_eq!(k.len(), 32);
        assert_eq!(k, key("cc", &base, "x"));
        assert_ne!(k, key("gcc", &base, "x"));
        assert_ne!(k, key("cc", &base, "y"));
        let mut flags = base.clone();
        flags.flags.push("-O3".into());
        assert_ne!(k, key("cc", &flags, "x"));
        let mut extra = base.clone();
        extra.extra_c.push(String::new());
        assert_ne!(k, key("cc", &extra, "x"));
        // Parts are delimited: moving text between parts changes the key.
        assert_ne!(key("c", &base, "cx"), key("cc", &base, "x"));
    }

    #[test]
    fn defaults() {
        let o = CompileOptions::default();
        assert_eq!(o.flags, DEFAULT_FLAGS);
        assert!(o.flags.iter().any(|f| f == "-fwrapv"));
        assert_eq!(choose(Some("a"), Some("b")), Some("a"));
        assert_eq!(choose(None, Some("b")), Some("b"));
        assert_eq!(choose(None, Some("")), None);
        assert_eq!(choose::<&str>(None, None), None);
    }
}
