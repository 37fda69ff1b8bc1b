//! The heap an extraction holds at its peak: the process's allocator,
//! counting the bytes live and the most live since the last reset.
//!
//! Each thread adds up its own allocations and frees and reaches the
//! shared counts only when they come to [`BATCH`] bytes either way: a
//! count every thread updates on every allocation is one cache line the
//! cores pass back and forth, and it made a staging on two threads (a
//! regex's three functions side by side, `augur bench scaling`'s DFA of
//! 16,385 states) take about a fifth longer. The peak is exact to `BATCH`
//! bytes a thread.
//!
//! (The `cap` crate counts a peak too, but only since the process began;
//! a bench needs one per measurement.)

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicIsize, Ordering::Relaxed};

/// The system allocator with byte counts.
pub struct Counting;

static LIVE: AtomicIsize = AtomicIsize::new(0);
static PEAK: AtomicIsize = AtomicIsize::new(0);

/// What a thread allocates (or frees) before it adds that to [`LIVE`].
const BATCH: isize = 256 << 10;

thread_local! {
    /// This thread's bytes allocated less freed, not yet in [`LIVE`].
    static PENDING: Cell<isize> = const { Cell::new(0) };
}

/// Counts `bytes` more live (fewer, if negative).
fn count(bytes: isize) {
    // A thread being torn down has no `PENDING`: its counts go straight
    // to the shared ones. (A `const` thread-local without a destructor
    // does not allocate, so the allocator may read it.)
    let flush = PENDING
        .try_with(|p| {
            let now = p.get() + bytes;
            if now.abs() < BATCH {
                p.set(now);
                0
            } else {
                p.set(0);
                now
            }
        })
        .unwrap_or(bytes);
    if flush != 0 {
        let now = LIVE.fetch_add(flush, Relaxed) + flush;
        PEAK.fetch_max(now, Relaxed);
    }
}

// SAFETY: every call is passed unchanged to `System`, which upholds the
// `GlobalAlloc` contract; the counters only observe sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract for `alloc` is `System.alloc`'s.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            count(layout.size() as isize);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        count(-(layout.size() as isize));
        // SAFETY: `ptr` was allocated by `System` with `layout` (above).
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as for `alloc`.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            count(layout.size() as isize);
        }
        p
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: `ptr` and `layout` come from this allocator, which got
        // them from `System`; the caller upholds `realloc`'s contract.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            // Both blocks may be live for a moment (a copy).
            count(new_size as isize);
            count(-(layout.size() as isize));
        }
        p
    }
}

/// Starts a new peak at what is live now.
pub fn reset_peak() {
    PEAK.store(LIVE.load(Relaxed), Relaxed);
}

/// The most bytes live since [`reset_peak`], less what was live then
/// (`base`): what the measured work added at its peak.
pub fn peak_since(base: usize) -> usize {
    (PEAK.load(Relaxed) - base as isize).max(0) as usize
}

/// Bytes live now (exact to [`BATCH`] bytes a thread).
pub fn live() -> usize {
    LIVE.load(Relaxed).max(0) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peak_counts_what_a_measurement_adds() {
        // Other tests allocate and free on other threads meanwhile: a
        // block far larger than theirs keeps the bound clear of them.
        reset_peak();
        let base = live();
        let v = vec![0u8; 64 << 20];
        drop(v);
        assert!(peak_since(base) >= 48 << 20, "{}", peak_since(base));
    }
}
