//! The extraction context: everything a thread keeps while it extracts, in
//! one place, behind one guard.
//!
//! Each thread has one [`Context`]. Two scopes open on it, each by a
//! [`Scope`] guard:
//!
//! * a **module** scope, while [`Module::extract`](crate::Module::extract)
//!   runs: the registry of the module's functions, which staged calls
//!   reach (`stage/func.rs`);
//! * an **extraction** scope, while one function is extracted (inside a
//!   module scope or alone): the engine (with the frame its tags
//!   stop at), and what layers above the engine keep for the extraction
//!   (`stage/gpu.rs`'s shared memory handed out, a DSL's own state through
//!   [`dsl::local`](crate::dsl::local)).
//!
//! Dropping a scope's guard, when the scope ends normally or while a panic
//! unwinds out of the first stage, the engine or a DSL, clears everything
//! that scope holds, so the thread is ready for the next extraction. What
//! must stay distinct across extractions (handle generations, DSL
//! instance ids) are counters here that no scope resets.

use super::engine::Engine;
use crate::error::Error;
use crate::ir::SrcLoc;
use std::any::{Any, TypeId};
use std::cell::{Cell, RefCell};

/// The per-thread extraction context.
pub(crate) struct Context {
    /// The engine of the extraction in progress.
    pub(super) engine: RefCell<Option<Engine>>,
    /// True while an extraction scope is open.
    pub(super) extracting: Cell<bool>,
    /// True while a module scope is open.
    module: Cell<bool>,
    /// The message and place of the last panic in user code, kept by the
    /// panic hook for the driver.
    pub(super) last_panic: RefCell<Option<(String, Option<SrcLoc>)>>,
    /// Generation of the next run's handles (never reset).
    pub(super) next_gen: Cell<u32>,
    /// The next DSL instance id (never reset).
    next_id: Cell<u64>,
    /// Values kept for the extraction in progress, one per type.
    extraction_locals: RefCell<Locals>,
    /// Values kept for the module being extracted, one per type.
    module_locals: RefCell<Locals>,
}

/// Values of any type, one per type (a handful: a linear search).
type Locals = Vec<(TypeId, Box<dyn Any>)>;

thread_local! {
    static CONTEXT: Context = const {
        Context {
            engine: RefCell::new(None),
            extracting: Cell::new(false),
            module: Cell::new(false),
            last_panic: RefCell::new(None),
            next_gen: Cell::new(1),
            next_id: Cell::new(1),
            extraction_locals: RefCell::new(Vec::new()),
            module_locals: RefCell::new(Vec::new()),
        }
    };
}

thread_local! {
    /// Decisions taken on this thread, wrapping (never reset): a `let`
    /// under `#[augur::staged]` compares it before and after its
    /// initialiser, without reaching the engine, to learn whether its value
    /// may come out of a decision (`stage/staged.rs`). A thread-local of
    /// its own, with no destructor, is one instruction to read: the
    /// attribute reads it around every call that may decide.
    pub(super) static DECIDED: Cell<u32> = const { Cell::new(0) };
    /// The run in progress may hold values (`stage::staged::arg`): false
    /// when it holds none, so that the code after a call that decided
    /// need not reach the engine to release nothing.
    pub(super) static HOLDING: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f` on this thread's context.
#[inline]
pub(crate) fn with<R>(f: impl FnOnce(&Context) -> R) -> R {
    CONTEXT.with(f)
}

/// Which scope a value or a guard belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Level {
    /// One function's extraction.
    Extraction,
    /// A module's extraction, around its functions' extractions.
    Module,
}

/// An open scope of this thread's context: dropped, normally or while a
/// panic unwinds, it clears what the scope holds.
pub(crate) struct Scope {
    level: Level,
}

impl Scope {
    /// Opens a scope at `level`. An extraction inside an extraction, or a
    /// module inside a module or an extraction, is a misuse (at `loc`):
    /// one thread extracts one thing at a time.
    pub(crate) fn enter(level: Level, loc: SrcLoc) -> Result<Scope, Error> {
        with(|c| {
            let busy = match level {
                Level::Extraction => c.extracting.get(),
                Level::Module => c.extracting.get() || c.module.get(),
            };
            if busy {
                return Err(Error::Misuse {
                    message: match level {
                        Level::Extraction => "Builder::extract called inside another extraction",
                        Level::Module => "Module::extract called inside another extraction",
                    }
                    .into(),
                    location: Some(loc),
                });
            }
            match level {
                Level::Extraction => c.extracting.set(true),
                Level::Module => c.module.set(true),
            }
            Ok(Scope { level })
        })
    }

    /// Ends an extraction scope normally, handing back its engine.
    pub(crate) fn finish(self) -> Option<Engine> {
        let engine = with(|c| c.engine.borrow_mut().take());
        drop(self);
        engine
    }
}

impl Drop for Scope {
    fn drop(&mut self) {
        with(|c| match self.level {
            Level::Extraction => {
                c.extracting.set(false);
                if let Ok(mut e) = c.engine.try_borrow_mut() {
                    e.take();
                }
                // Taken out before dropping: a value's destructor may use
                // the context.
                let locals = c
                    .extraction_locals
                    .try_borrow_mut()
                    .map(|mut l| std::mem::take(&mut *l));
                drop(locals);
            }
            Level::Module => {
                c.module.set(false);
                let locals = c
                    .module_locals
                    .try_borrow_mut()
                    .map(|mut l| std::mem::take(&mut *l));
                drop(locals);
            }
        })
    }
}

impl Context {
    /// Runs `f` on this scope's value of type `T` (made with `Default` on
    /// first use). Outside such a scope `f` gets a fresh value that is
    /// dropped after: nothing is kept.
    pub(crate) fn local<T: Default + 'static, R>(
        &self,
        level: Level,
        f: impl FnOnce(&mut T) -> R,
    ) -> R {
        let (open, locals) = match level {
            Level::Extraction => (self.extracting.get(), &self.extraction_locals),
            Level::Module => (self.module.get(), &self.module_locals),
        };
        if !open {
            return f(&mut T::default());
        }
        // The value is taken out while `f` runs, so `f` may use other
        // locals (or this context) freely, and put back after, even when
        // `f` unwinds (a run ends by unwinding anywhere).
        let id = TypeId::of::<T>();
        let taken = {
            let mut l = locals.borrow_mut();
            l.iter()
                .position(|(t, _)| *t == id)
                .map(|i| l.swap_remove(i).1)
        };
        let mut put = PutBack {
            locals,
            value: Some(taken.and_then(|b| b.downcast().ok()).unwrap_or_default()),
        };
        f(put.value.as_mut().expect("put back only on drop"))
    }

    /// A copy of this scope's value of type `T`; `T::default()` when it
    /// has none, or outside such a scope. Only reads: nothing runs while
    /// the locals are borrowed.
    pub(crate) fn local_copy<T: Clone + Default + 'static>(&self, level: Level) -> T {
        let (open, locals) = match level {
            Level::Extraction => (self.extracting.get(), &self.extraction_locals),
            Level::Module => (self.module.get(), &self.module_locals),
        };
        if !open {
            return T::default();
        }
        let id = TypeId::of::<T>();
        let l = locals.borrow();
        (l.iter().find(|(t, _)| *t == id))
            .and_then(|(_, v)| v.downcast_ref::<T>())
            .cloned()
            .unwrap_or_default()
    }

    /// A new DSL instance id, distinct from every other on this thread.
    pub(crate) fn next_id(&self) -> u64 {
        let id = self.next_id.get();
        self.next_id.set(id + 1);
        id
    }

    /// True while an extraction scope is open.
    pub(crate) fn extracting(&self) -> bool {
        self.extracting.get()
    }
}

/// Puts a local back where it was taken from when dropped.
struct PutBack<'a, T: 'static> {
    locals: &'a RefCell<Locals>,
    value: Option<Box<T>>,
}

impl<T: 'static> Drop for PutBack<'_, T> {
    fn drop(&mut self) {
        if let (Some(v), Ok(mut l)) = (self.value.take(), self.locals.try_borrow_mut()) {
            l.push((TypeId::of::<T>(), v));
        }
    }
}
