//! Stagings side by side: each extraction on a scoped thread of its own
//! (an extraction's engine is its thread's, so none shares state with
//! another), with the outcome a caller would have seen staging them one
//! after the other.

use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::thread::{Scope, ScopedJoinHandle};

/// The stack of a staging thread: as large as a main thread's usually is
/// (extraction recurses through the first stage's code and the IR).
const STAGING_STACK: usize = 64 << 20;

/// How a staging ended: its result, or the payload of its panic.
pub(crate) type Outcome<T> = std::thread::Result<augur::Result<T>>;

/// A staging started on a thread, or done on this one.
pub(crate) enum Staging<'s, T> {
    Thread(ScopedJoinHandle<'s, augur::Result<T>>),
    Done(Outcome<T>),
}

/// Runs `f` on a thread of `scope`, named after the calling thread and
/// `what` (`AUGUR_DUMP_DIR` files and panic messages name it); on this
/// thread if none can start (`f` is `Copy`: a closure over references,
/// kept to run here).
pub(crate) fn spawn<'s, 'e, T: Send + 's>(
    scope: &'s Scope<'s, 'e>,
    what: &str,
    f: impl FnOnce() -> augur::Result<T> + Send + Copy + 's,
) -> Staging<'s, T> {
    let caller = std::thread::current();
    let name = format!("{}.{what}", caller.name().unwrap_or("unnamed"));
    let started = std::thread::Builder::new()
        .name(name)
        .stack_size(STAGING_STACK)
        .spawn_scoped(scope, f);
    match started {
        Ok(h) => Staging::Thread(h),
        Err(_) => Staging::Done(here(f)),
    }
}

/// Runs `f` on this thread, its panic caught.
pub(crate) fn here<T>(f: impl FnOnce() -> augur::Result<T>) -> Outcome<T> {
    catch_unwind(AssertUnwindSafe(f))
}

/// Waits for the staging to end.
pub(crate) fn join<T>(s: Staging<'_, T>) -> Outcome<T> {
    match s {
        Staging::Thread(h) => h.join(),
        Staging::Done(o) => o,
    }
}

/// The outcome as one after the other would have ended: its result, or
/// its panic going on here. Settled in the order they would have run, the
/// first error or panic is the caller's.
pub(crate) fn settle<T>(o: Outcome<T>) -> augur::Result<T> {
    o.unwrap_or_else(|p| resume_unwind(p))
}
