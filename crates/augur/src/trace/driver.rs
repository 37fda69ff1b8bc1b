//! The extraction loop: runs the closure under the engine until every
//! scheduled run is done, restarting attempts when asked.
//!
//! The engine lives in the thread's extraction context (`context.rs`) for
//! the duration of one extraction, so extractions on different threads are
//! independent. Runs end early by unwinding with a private payload
//! (`resume_unwind` skips the panic hook); a real panic in user code is
//! caught and reported with its location.

use super::config::Config;
use super::context::{self, Level, Scope};
use super::engine::{Ctl, Engine, Trace};
use super::frames::Hidden;
use super::graph::Operand;
use super::recorder::Recorder;
use super::tag;
use crate::error::Error;
use crate::ir::{SrcLoc, Type, VarId};
use std::any::Any;
use std::panic::{self, AssertUnwindSafe, Location};
use std::sync::Once;
use std::time::Instant;

/// The private unwinding payload that ends a run.
struct Payload(Ctl);

/// Runs `f` on the recording API of the extraction in progress; control
/// outcomes (end of run, restart, error) unwind to the driver.
#[track_caller]
pub(crate) fn with<R>(f: impl FnOnce(&mut Recorder<'_>) -> Result<R, Ctl>) -> R {
    let caller = Location::caller();
    let r = context::with(|c| match c.engine.try_borrow_mut() {
        Ok(mut slot) => match slot.as_mut() {
            Some(e) => {
                if std::thread::panicking() && e.detached.is_none() {
                    // Destructors of the user's values run while a panic
                    // unwinds: their operations are not part of any run.
                    e.detached = Some(Ctl::fail(Error::Misuse {
                        message: "staging operations ran while a panic unwound \
                                  (a caught panic inside the closure?)"
                            .into(),
                        location: Some(SrcLoc::from_location(caller)),
                    }));
                }
                let r = f(&mut Recorder::new(e));
                if let Err(ctl) = &r {
                    e.detached = Some(ctl.clone());
                }
                r
            }
            None => Err(Ctl::fail(outside(caller))),
        },
        Err(_) => Err(Ctl::fail(Error::Internal {
            message: "re-entrant use of the engine".into(),
        })),
    });
    match r {
        Ok(v) => v,
        Err(ctl) => throw(ctl),
    }
}

/// True while an extraction runs on this thread.
pub(crate) fn in_extraction() -> bool {
    context::with(|c| c.extracting())
}

/// The id of the extraction in progress, or `None` outside one.
pub(crate) fn extraction_id() -> Option<u64> {
    context::with(|c| {
        c.engine
            .try_borrow()
            .ok()
            .and_then(|s| s.as_ref().map(|e| e.extraction))
    })
}

/// The current handle generation, or `None` outside an extraction.
pub(crate) fn current_gen() -> Option<u32> {
    context::with(|c| {
        c.engine
            .try_borrow()
            .ok()
            .and_then(|s| s.as_ref().map(|e| e.gen))
    })
}

/// How many decisions this thread has taken, wrapping: compared before and
/// after a `let`'s initialiser (no engine access).
#[inline]
pub(crate) fn decisions() -> u32 {
    context::DECIDED.get()
}

/// Whether the run may hold a value handed to a call and a decision was
/// taken since `mark`: only then can there be one to release.
#[inline]
pub(crate) fn holding_since(mark: u32) -> bool {
    context::HOLDING.get() && context::DECIDED.get() != mark
}

/// Runs `f` on the extraction in progress with its run's generation, in
/// one access to the thread's context (`None` outside an extraction, or
/// while the engine is busy). For the bookkeeping `#[augur::staged]` adds
/// to every call (`Frame`): it never unwinds.
#[inline]
pub(crate) fn with_gen<R>(f: impl FnOnce(&mut Recorder<'_>, u32) -> R) -> Option<R> {
    context::with(|c| {
        let mut slot = c.engine.try_borrow_mut().ok()?;
        let e = slot.as_mut()?;
        let gen = e.gen;
        Some(f(&mut Recorder::new(e), gen))
    })
}

fn outside(caller: &'static Location<'static>) -> Error {
    Error::Misuse {
        message: "a staging operation was used outside an extraction \
                  (Dyn, Static and annotations only work inside Builder::extract)"
            .into(),
        location: Some(SrcLoc::from_location(caller)),
    }
}

/// Ends the run (or the extraction) by unwinding to the driver.
pub(crate) fn throw(ctl: Ctl) -> ! {
    if !in_extraction() {
        // No driver to catch it: a plain panic with the message.
        match ctl {
            Ctl::Fail(e) => panic!("{e}"),
            other => panic!("augur control flow outside an extraction: {other:?}"),
        }
    }
    panic::resume_unwind(Box::new(Payload(ctl)))
}

fn install_hook() {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if in_extraction() {
                let message = panic_message(info.payload());
                let loc = info.location().map(|l| SrcLoc {
                    file: leak_file(l.file()),
                    line: l.line(),
                    col: l.column(),
                });
                context::with(|c| *c.last_panic.borrow_mut() = Some((message, loc)));
                // If code inside the first stage catches it, the run goes
                // on past function bodies it left without ending their
                // activations: no code is shared for the rest of the run.
                // (A panic that ends the run resets this with it; the
                // engine's own ends of runs raise no panic hook.)
                let at = loc.unwrap_or(SrcLoc {
                    file: "",
                    line: 0,
                    col: 0,
                });
                with_quiet(|e| e.poisoned(0, Hidden::Panicked(at), true));
            } else {
                previous(info)
            }
        }));
    });
}

/// Panic locations borrow the file name only for the hook's duration;
/// file names of a binary are few, so keeping them is cheap.
fn leak_file(f: &str) -> &'static str {
    use std::collections::HashSet;
    use std::sync::Mutex;
    static FILES: Mutex<Option<HashSet<&'static str>>> = Mutex::new(None);
    let mut g = FILES.lock().unwrap_or_else(|e| e.into_inner());
    let set = g.get_or_insert_with(HashSet::new);
    if let Some(s) = set.get(f) {
        return s;
    }
    let s: &'static str = Box::leak(f.to_string().into_boxed_str());
    set.insert(s);
    s
}

fn panic_message(p: &(dyn Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "(non-string panic payload)".to_string()
    }
}

/// What one execution of the closure did.
enum Outcome {
    Returned(Option<Operand>),
    Ctl(Ctl),
    Panicked(Box<dyn Any + Send>),
}

/// The body of an extraction: called with the parameters' variables,
/// returns the operand to return (after converting the user's result).
pub(crate) type Body<'a> = dyn Fn(&[VarId]) -> Option<Operand> + 'a;

/// Extracts `body` into a trace graph.
pub(crate) fn extract(
    config: Config,
    name: &str,
    params: Vec<Type>,
    ret: Type,
    ret_loc: SrcLoc,
    body: &Body<'_>,
) -> Result<Trace, Error> {
    install_hook();
    // Whatever happens from here (a panic inside the engine, or in user
    // code it calls between runs, such as a lattice's `Debug`), the scope
    // leaves the thread ready for the next extraction.
    let scope = Scope::enter(Level::Extraction, ret_loc)?;
    let engine = Engine::new(config, name, params, ret, bump_gen());
    context::with(|c| *c.engine.borrow_mut() = Some(engine));
    let start = Instant::now();
    let result = drive(body, ret_loc);
    let mut engine = scope.finish().expect("engine present during extraction");
    let result = result.map_err(|e| engine.blame_unshared(e));
    engine.stats.time_trace = start.elapsed();
    result.map(|()| engine.into_trace())
}

fn bump_gen() -> u32 {
    context::with(|c| {
        let v = c.next_gen.get();
        c.next_gen.set(v.wrapping_add(1).max(1));
        v
    })
}

fn engine_mut<R>(f: impl FnOnce(&mut Engine) -> R) -> R {
    context::with(|c| f(c.engine.borrow_mut().as_mut().expect("engine present")))
}

fn drive(body: &Body<'_>, ret_loc: SrcLoc) -> Result<(), Error> {
    loop {
        let gen = bump_gen();
        if !engine_mut(|e| e.next_run(gen))? {
            return Ok(());
        }
        let params = engine_mut(|e| e.out.func.params.clone());
        let outcome = run_once(body, &params);
        let ctl = match outcome {
            // A run whose end was caught inside the closure still ended.
            Outcome::Returned(_) if engine_mut(|e| e.detached.is_some()) => {
                engine_mut(|e| e.detached.take()).expect("checked")
            }
            Outcome::Returned(v) => match engine_mut(|e| e.finish(v, ret_loc)) {
                Ok(()) => continue,
                Err(ctl) => ctl,
            },
            Outcome::Ctl(ctl) => ctl,
            Outcome::Panicked(p) => {
                let (message, location) = context::with(|c| c.last_panic.borrow_mut().take())
                    .unwrap_or_else(|| (panic_message(&*p), None));
                Ctl::fail(Error::Panic { message, location })
            }
        };
        match ctl {
            Ctl::EndRun => {}
            Ctl::Restart => engine_mut(|e| {
                e.may_restart()?;
                e.start_attempt();
                Ok::<(), Error>(())
            })?,
            Ctl::Fail(err) => engine_mut(|e| e.retry_with_pending(*err))?,
        }
    }
}

fn run_once(body: &Body<'_>, params: &[VarId]) -> Outcome {
    let mut out = None;
    tag::driver_frame(&mut |fp| {
        // Tags of this run walk the stack up to this frame.
        engine_mut(|e| e.stop_fp = fp);
        out = Some(panic::catch_unwind(AssertUnwindSafe(|| body(params))));
    });
    match out.expect("the driver frame ran the closure") {
        Ok(v) => Outcome::Returned(v),
        Err(p) => match p.downcast::<Payload>() {
            Ok(payload) => Outcome::Ctl(payload.0),
            Err(p) => Outcome::Panicked(p),
        },
    }
}

/// Like [`with`] but never unwinds (for destructors, which run during unwinding).
pub(crate) fn with_quiet(f: impl FnOnce(&mut Recorder<'_>)) {
    context::with(|c| {
        if let Ok(mut slot) = c.engine.try_borrow_mut() {
            if let Some(e) = slot.as_mut() {
                f(&mut Recorder::new(e))
            }
        }
    })
}
