//! Errors of extraction, compilation and interpretation.

use crate::ir::SrcLoc;
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

/// Everything that can go wrong, each naming the problem and where it is.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Error {
    /// User code panicked during extraction.
    Panic {
        /// The panic message.
        message: String,
        /// Where it panicked.
        location: Option<SrcLoc>,
    },
    /// A DSL refused the program (a shape that does not fit, say): the
    /// DSL's own error, as data ([`Error::dsl_error`] gives it back typed),
    /// raised with [`dsl::fail`](crate::dsl::fail).
    Dsl {
        /// The DSL's error; its `Display` says what is wrong.
        error: Arc<dyn std::error::Error + Send + Sync + 'static>,
        /// The user's line.
        location: SrcLoc,
    },
    /// The staging API was used wrongly (a handle from another extraction,
    /// assigning to a computed value, ...).
    Misuse {
        /// What was wrong.
        message: String,
        /// The user's line.
        location: Option<SrcLoc>,
    },
    /// Re-running the first stage did not repeat the same operations.
    NonDeterministic {
        /// What differed.
        message: String,
        /// The operation recorded by the earlier run.
        recorded: Option<SrcLoc>,
        /// The operation seen on replay.
        replayed: Option<SrcLoc>,
    },
    /// A dyn loop whose first-stage state changes every iteration: it can
    /// never be closed.
    LoopNeverCloses {
        /// The decision (`is_true`) that kept being reached.
        location: SrcLoc,
        /// How many times it was reached in one run.
        iterations: u64,
        /// Plain Rust loops around dyn code found in this extraction: the
        /// engine keeps their turns apart for the rest of each run, so a dyn
        /// loop around one of them never repeats its state.
        plain_loops: Vec<SrcLoc>,
        /// Where the first-stage state that changed between the last two
        /// visits was made: a `Static::new`, or the `let` of a local
        /// `#[augur::staged]` tracks. Empty when the engine cannot tell
        /// (state it does not see, such as a plain loop's turn).
        changing: Vec<SrcLoc>,
    },
    /// Code the engine would share (a loop closing, two paths joining)
    /// lies where it cannot see all the plain Rust state: code
    /// `#[augur::staged]` does not cover. By default it keeps such code
    /// apart (a plain loop counter or flag could make two points with one
    /// tag differ), which is exact but grows with every turn and path; it
    /// stops here when a loop there never ends, or after
    /// `Config::max_unshared` such points. `Builder::trust_unannotated`
    /// shares code there after observing it repeat instead.
    Unannotated {
        /// Where the engine stopped.
        location: SrcLoc,
        /// The first point where code was not shared.
        at: SrcLoc,
        /// What to annotate, and where.
        fix: String,
        /// The limit the unrolled code reached, if one stopped it (its
        /// message).
        reached: Option<String>,
    },
    /// A dyn loop whose turns read, through a plain Rust variable, a `Dyn`
    /// value the previous turn computed (`let mut t = f(x); while c { t =
    /// g(t); }`): each turn reads another variable of the generated code,
    /// so the turns never repeat and the loop cannot be closed.
    CarriedValue {
        /// The loop's decision.
        loop_at: SrcLoc,
        /// Where a turn reads the value.
        used: SrcLoc,
        /// Where the previous turn computed it.
        computed: SrcLoc,
        /// Runs of the closure before the engine stopped (it stops after a
        /// bounded number of runs, or when one run reaches the loop more
        /// often than `Builder::max_loop_iterations`).
        runs: u64,
    },
    /// The first stage did something else than the generated code on a
    /// path through several dyn loops, though each loop's own check agreed:
    /// plain Rust state that one loop's turns change decides code that
    /// only another loop's later turns reach.
    CheckFailed {
        /// The first operation that differed.
        location: SrcLoc,
        /// The loops the path went through (their decisions); empty when
        /// the difference is on a path the batched link check took.
        loops: Vec<SrcLoc>,
    },
    /// A generated loop with no way out: almost always a plain Rust loop
    /// around a dyn branch that the engine took for a dyn loop.
    LoopNeverExits {
        /// The first statement of the loop.
        location: Option<SrcLoc>,
    },
    /// A value computed on one path is used on a path where it was never
    /// computed (a `Dyn` bound inside a dyn branch and used after it).
    UndefinedValue {
        /// Where the value was computed.
        defined: Option<SrcLoc>,
        /// Where it is used.
        used: Option<SrcLoc>,
    },
    /// A configured limit was reached.
    Limit {
        /// What was limited.
        what: String,
        /// Where, if known.
        location: Option<SrcLoc>,
    },
    /// No C (or CUDA) compiler could be started.
    CompilerMissing {
        /// The compiler command.
        compiler: String,
        /// Why it did not start.
        message: String,
    },
    /// The C compiler rejected the generated code.
    Compile {
        /// The file given to the compiler.
        path: PathBuf,
        /// The compiler's output.
        output: String,
    },
    /// The compile cache cannot be used: its directory is not private to
    /// this user (owned by another, writable by group or others, below a
    /// directory others can write to), or it cannot be created or written,
    /// or its limit cannot be read (see [`exec::Cache`](crate::exec::Cache)).
    Cache {
        /// The directory or file.
        path: PathBuf,
        /// Why, and what to do.
        message: String,
    },
    /// The compiled library could not be loaded.
    Load {
        /// The library.
        path: PathBuf,
        /// The loader's message.
        message: String,
    },
    /// The JIT backend (`exec::jit`) cannot compile the function: what it
    /// does not lower, an extern it cannot find, or Cranelift's own error.
    Jit {
        /// What went wrong.
        message: String,
    },
    /// The IR interpreter stopped (out-of-bounds access, division by zero,
    /// unknown extern, ...).
    Interp {
        /// What happened.
        message: String,
    },
    /// The interpreted program called `exit(status)` or `abort()`
    /// ([`libc::EXIT`](crate::libc::EXIT), [`libc::ABORT`](crate::libc::ABORT)):
    /// it ended where compiled code would end the whole process. What it
    /// wrote before stays in the interpreter's output, and the interpreter
    /// (its memory, `malloc` blocks included) stays usable.
    Exit {
        /// The status `exit` was given; `None` for `abort()`.
        status: Option<i32>,
        /// The call's line, when the statement has one.
        location: Option<SrcLoc>,
    },
    /// A lattice broke its laws: a join that does not satisfy the
    /// requirement, or loses what the value was.
    Lattice {
        /// Which law, with the values.
        message: String,
        /// The requirement that showed it.
        location: Option<SrcLoc>,
    },
    /// Prophecies and histories kept changing: a lattice of unbounded
    /// height, or requirements that grow with the predictions.
    ProphecyNotSettled {
        /// The restart limit that was reached.
        restarts: u64,
        /// Each cell's history: who required what, where.
        history: String,
    },
    /// A GPU launch ([`stage::gpu::launch`](crate::stage::gpu::launch)) that a
    /// GPU backend cannot turn into a kernel (it assigns a host variable,
    /// returns from inside, synchronises where the simulation cannot split).
    Kernel {
        /// What is wrong.
        message: String,
        /// The launch's line.
        location: Option<SrcLoc>,
    },
    /// A parallel loop ([`parallel_for`](crate::parallel_for)) whose
    /// iterations could not run at once with the meaning they have in order:
    /// its body assigns a variable declared outside it that is not one of
    /// its reductions, a value made in it is used after it, or it reads a
    /// reduction's partial value.
    Parallel {
        /// What is wrong, and the fix.
        message: String,
        /// The user's line.
        location: Option<SrcLoc>,
    },
    /// An internal invariant failed (a bug in augur).
    Internal {
        /// What failed.
        message: String,
    },
}

fn at(loc: &Option<SrcLoc>) -> String {
    match loc {
        Some(l) => format!(" at {l}"),
        None => String::new(),
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Panic { message, location } => {
                write!(f, "first-stage code panicked{}: {message}", at(location))
            }
            Error::Dsl { error, location } => write!(f, "{error} at {location}"),
            Error::Misuse { message, location } => write!(f, "{message}{}", at(location)),
            Error::NonDeterministic {
                message,
                recorded,
                replayed,
            } => write!(
                f,
                "the first stage is not deterministic: {message} (recorded{}, replayed{}); \
                 extraction re-runs the closure and needs the same operations every time",
                at(recorded),
                at(replayed)
            ),
            Error::LoopNeverCloses {
                location,
                iterations,
                plain_loops,
                changing,
            } if !plain_loops.is_empty() => write!(
                f,
                "dyn loop at {location} never closes: reached {iterations} times in one run{}{}",
                changing_hint(changing),
                plain_loop_hint(plain_loops)
            ),
            Error::LoopNeverCloses {
                location,
                iterations,
                changing,
                ..
            } if !changing.is_empty() => write!(
                f,
                "dyn loop at {location} never closes: reached {iterations} times in one run \
                 with different first-stage state each time{}; keep loop-carried values in \
                 Dyn variables, or raise Builder::max_loop_iterations if it is a first-stage \
                 loop longer than the limit",
                changing_hint(changing)
            ),
            Error::LoopNeverCloses {
                location,
                iterations,
                ..
            } => write!(
                f,
                "dyn loop at {location} never closes: reached {iterations} times in one run \
                 with different first-stage state each time (a Static or a plain Rust \
                 variable changes every iteration; keep loop-carried values in Dyn \
                 variables), or a first-stage loop longer than the limit \
                 (raise Builder::max_loop_iterations)"
            ),
            Error::Unannotated {
                location,
                at,
                fix,
                reached,
            } => write!(
                f,
                "stopped at {location}{}: augur shares code (closes a loop, joins two paths) \
                 only where it sees all the plain Rust state, and from {at} on it does not, \
                 so that code unrolls and grows with every turn and path: {fix}. \
                 Builder::trust_unannotated(true) \
                 shares code there once observation finds no difference instead, which is \
                 silently wrong where state augur cannot see differs",
                reached.as_ref().map_or(String::new(), |r| format!(" ({r})"))
            ),
            Error::CarriedValue {
                loop_at,
                used,
                computed,
                runs,
            } => write!(
                f,
                "dyn loop at {loop_at} never closes: each turn reads at {used}, through a plain \
                 Rust variable, the Dyn value the turn before computed at {computed}, so no two \
                 turns are alike (stopped after {runs} runs); declare the variable before \
                 the loop (Dyn::new) and set it each turn (a DSL value such as a tensor: copy \
                 into memory allocated before the loop); if the loop is a plain Rust loop, put \
                 #[augur::staged] on the function or iterate with augur::range"
            ),
            Error::CheckFailed { location, loops } if loops.is_empty() => write!(
                f,
                "the generated code would differ from the first stage at {location} on a \
                 path the checks took: plain Rust state decides later code; keep such state \
                 in a Static or a Dyn variable, or put #[augur::staged] on the function"
            ),
            Error::CheckFailed { location, loops } => write!(
                f,
                "the generated code would differ from the first stage at {location} on a \
                 path that turns the dyn loops at {} more than once: plain Rust state that \
                 their turns change decides later code; keep such state in a Static or a \
                 Dyn variable",
                loops
                    .iter()
                    .map(|l| l.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Error::LoopNeverExits { location } => write!(
                f,
                "generated loop{} never exits: a plain Rust loop around a dyn branch was \
                 taken for a dyn loop; iterate with augur::range so the counter is seen",
                at(location)
            ),
            Error::UndefinedValue { defined, used } => write!(
                f,
                "a value computed{} inside a dyn branch is {} on a path where it was \
                 never computed; use Dyn::if_else, or declare a variable before the branch (Dyn::new) and \
                 assign it in each branch",
                at(defined),
                match used {
                    Some(l) => format!("used at {l}"),
                    None => "returned".to_string(),
                }
            ),
            Error::Limit { what, location } => write!(f, "limit reached{}: {what}", at(location)),
            Error::CompilerMissing { compiler, message } => {
                write!(f, "cannot run the compiler `{compiler}`: {message}")
            }
            Error::Compile { path, output } => {
                write!(f, "the C compiler rejected {}:\n{output}", path.display())
            }
            Error::Cache { path, message } => {
                write!(f, "compile cache {}: {message}", path.display())
            }
            Error::Load { path, message } => {
                write!(f, "cannot load {}: {message}", path.display())
            }
            Error::Interp { message } => write!(f, "interpreter: {message}"),
            Error::Jit { message } => write!(f, "JIT: {message}"),
            Error::Exit {
                status: Some(status),
                location,
            } => write!(f, "the program called exit({status}){}", at(location)),
            Error::Exit {
                status: None,
                location,
            } => write!(f, "the program called abort(){}", at(location)),
            Error::Lattice { message, location } => {
                write!(f, "lattice law broken{}: {message}", at(location))
            }
            Error::ProphecyNotSettled { restarts, history } => write!(
                f,
                "prophecies did not settle after {restarts} restarts (a lattice of unbounded \
                 height, or requirements that grow with the predictions; raise \
                 Builder::max_prophecy_restarts if they are merely many):\n{history}"
            ),
            Error::Kernel { message, location } => {
                write!(f, "GPU kernel{}: {message}", at(location))
            }
            Error::Parallel { message, location } => {
                write!(f, "parallel loop{}: {message}", at(location))
            }
            Error::Internal { message } => write!(f, "internal error in augur: {message}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Dsl { error, .. } => Some(&**error),
            _ => None,
        }
    }
}

impl Error {
    /// The DSL error this is, as its type `E`: `None` when this is not
    /// [`Error::Dsl`] or its error is of another type.
    ///
    /// ```
    /// #[augur::staged]
    /// fn main() -> augur::Result<()> {
    /// #     use augur::{dsl, Builder, Dyn};
    ///     #[derive(Debug)]
    ///     struct Empty;
    ///     impl std::fmt::Display for Empty {
    ///         fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
    ///             f.write_str("an empty tensor")
    ///         }
    ///     }
    ///     impl std::error::Error for Empty {}
    ///
    ///     let r = Builder::new().extract("f", |_: Dyn<i32>| -> Dyn<i32> {
    ///         dsl::fail(Empty, std::panic::Location::caller())
    ///     });
    ///     let e = r.map(|_| ()).unwrap_err();
    ///     assert!(e.dsl_error::<Empty>().is_some());
    ///     assert!(e.dsl_error::<std::fmt::Error>().is_none());
    ///     Ok(())
    /// }
    /// ```
    pub fn dsl_error<E: std::error::Error + 'static>(&self) -> Option<&E> {
        match self {
            Error::Dsl { error, .. } => error.downcast_ref::<E>(),
            _ => None,
        }
    }
}

/// Shorthand for results with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What an error says about the loops an extraction found to repeat with
/// hidden first-stage state (empty when none): inside a dyn loop, their
/// turns stay apart for the rest of the run, so the dyn loop never repeats
/// its state.
/// `: the first-stage state made at L changes every turn` for a loop that
/// never closes (empty when no site is known).
fn changing_hint(changing: &[SrcLoc]) -> String {
    match changing {
        [] => String::new(),
        [one] => format!(": the first-stage state made at {one} changes every turn"),
        more => {
            let at: Vec<String> = more.iter().map(|l| l.to_string()).collect();
            format!(
                ": the first-stage state made at {} changes every turn",
                at.join(" and at ")
            )
        }
    }
}

pub(crate) fn plain_loop_hint(plain_loops: &[SrcLoc]) -> String {
    if plain_loops.is_empty() {
        return String::new();
    }
    let at: Vec<String> = plain_loops.iter().map(|l| l.to_string()).collect();
    format!(
        "; the loop at {} repeats with first-stage state that tags cannot see changing \
         between its turns (a plain Rust loop around dyn code, or a plain value a turn \
         changes), so the engine keeps its turns apart for the rest of each run and a dyn \
         loop around it never repeats its state: put #[augur::staged] on the function (its \
         plain loops and mutable locals become visible, scoped as Rust scopes them), keep \
         the state in a Static, or iterate with augur::range",
        at.join(", ")
    )
}
