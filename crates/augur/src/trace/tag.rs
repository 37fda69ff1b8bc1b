//! Program-point tags: the call path inside the staged closure plus the
//! first-stage state.
//!
//! The call path is read by walking frame pointers from the tagging
//! function up to the driver's frame (about 5 ns a frame). Where a frame
//! has no frame pointer the walk notices (each link must lie strictly above
//! the last and inside the driver's stack range) and falls back to the
//! unwinder for that tag, which is slower but always works. Both are
//! deterministic for a given program point, which is all tags need.

/// A program point: a hash of the call path and one of the first-stage state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Tag {
    /// Hash of the return addresses between the driver and the operation.
    pub path: u64,
    /// Hash of the live `Static` values (and plain-loop salt).
    pub state: u64,
}

/// How tags are taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Tagger {
    /// Frame-pointer walk, falling back to the unwinder per tag when a frame
    /// lacks a frame pointer.
    #[default]
    FramePointer,
    /// Always the unwinder (the `backtrace` crate).
    Unwinder,
}

/// Mixes a word into a running hash (a multiply-xorshift finaliser: every
/// input bit affects every output bit, so distinct paths do not collide the
/// way BuildIt's hash of one repeated frame did).
#[inline]
pub fn mix(h: u64, x: u64) -> u64 {
    let mut z = (h ^ x).wrapping_add(0x9e37_79b9_7f4a_7c15).rotate_left(17);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Counts of how tags were taken.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TagCounts {
    /// Tags taken by the frame-pointer walk.
    pub frame_pointer: u64,
    /// Tags taken by the unwinder.
    pub unwinder: u64,
}

/// Reads the current frame pointer.
#[inline(always)]
fn frame_pointer() -> usize {
    let fp: usize;
    #[cfg(target_arch = "x86_64")]
    // SAFETY: reading rbp has no side effects.
    unsafe {
        std::arch::asm!("mov {}, rbp", out(reg) fp, options(nomem, nostack, preserves_flags));
    }
    #[cfg(target_arch = "aarch64")]
    // SAFETY: reading x29 has no side effects.
    unsafe {
        std::arch::asm!("mov {}, x29", out(reg) fp, options(nomem, nostack, preserves_flags));
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        fp = 0;
    }
    fp
}

/// Runs `f` as the driver frame: tags are the call path from inside `f` up
/// to (not including) this frame.
#[inline(never)]
pub fn driver_frame(f: &mut dyn FnMut(usize)) {
    f(frame_pointer());
    // Keeps this frame from being merged into its caller by tail-call.
    std::hint::black_box(());
}

/// Hashes the call path from the caller of this function up to the driver.
#[inline(never)]
pub fn call_path(tagger: Tagger, stop: usize, counts: &mut TagCounts) -> u64 {
    if tagger == Tagger::FramePointer {
        if let Some(h) = walk_frame_pointers(stop) {
            counts.frame_pointer += 1;
            return h;
        }
    }
    counts.unwinder += 1;
    walk_unwinder()
}

/// Frames deeper than this are not walked (a stack overflow guard, not a
/// tag cut: real stacks inside a staged closure are far shallower).
const MAX_FRAMES: usize = 100_000;

fn walk_frame_pointers(stop: usize) -> Option<u64> {
    let mut fp = frame_pointer();
    if stop == 0 || fp == 0 || fp >= stop {
        return None;
    }
    let mut h = 0x243f_6a88_85a3_08d3;
    for _ in 0..MAX_FRAMES {
        if fp == stop {
            return Some(h);
        }
        if fp > stop || fp % 16 != 0 {
            return None;
        }
        // SAFETY: `fp` is 16-byte aligned and lies strictly between this
        // function's own frame and the driver's frame, both on this thread's
        // live stack, so `fp` and `fp + 8` (< stop) are readable stack words.
        let (next, ret) = unsafe { (*(fp as *const usize), *((fp + 8) as *const usize)) };
        h = mix(h, ret as u64);
        if next <= fp {
            return None;
        }
        fp = next;
    }
    None
}

fn walk_unwinder() -> u64 {
    let stop = driver_frame as *const () as usize;
    let mut h = 0x1319_8a2e_0370_7344;
    let mut found = false;
    backtrace::trace(|frame| {
        if frame.symbol_address() as usize == stop {
            found = true;
            return false;
        }
        h = mix(h, frame.ip() as u64);
        true
    });
    if !found {
        // The driver frame was not recognised: still deterministic, since
        // the whole stack is hashed, but memoization across different
        // callers of `extract` would not match. Salt to keep domains apart.
        h = mix(h, 0xdead_beef);
    }
    h
}

/// A fast hasher for keys that are already hashes (tags, ids): FxHash.
#[derive(Default, Clone, Copy)]
pub struct FxHasher(u64);

impl std::hash::Hasher for FxHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(b as u64);
        }
    }
    fn write_u64(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(5) ^ x).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
    fn write_u32(&mut self, x: u32) {
        self.write_u64(x as u64)
    }
    fn write_usize(&mut self, x: usize) {
        self.write_u64(x as u64)
    }
}

/// `HashMap` with [`FxHasher`]; iteration order never reaches the output.
pub type FastMap<K, V> = std::collections::HashMap<K, V, std::hash::BuildHasherDefault<FxHasher>>;
/// `HashSet` with [`FxHasher`].
pub type FastSet<K> = std::collections::HashSet<K, std::hash::BuildHasherDefault<FxHasher>>;
