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
    let here = 0u8;
    walk_from(
        frame_pointer(),
        std::hint::black_box(std::ptr::addr_of!(here)) as usize,
        stop,
    )
}

/// Hashes the return addresses of the frame-pointer chain from `fp` up to
/// the driver's frame `stop`, or `None` where `fp` is not such a chain:
/// code built without frame pointers uses the register for anything. `low`
/// is the address of a local of the caller, on this thread's stack below
/// every frame the chain may hold, so that a value the register happens to
/// hold is never read as a frame unless it lies on the stack between the
/// caller and the driver.
fn walk_from(mut fp: usize, low: usize, stop: usize) -> Option<u64> {
    if stop == 0 || fp <= low || fp >= stop {
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
        // SAFETY: `fp` is 16-byte aligned and lies strictly between `low`,
        // a live local of the caller, and the driver's frame `stop` (the
        // chain only climbs: `next > fp` below), both on this thread's live
        // stack, so `fp` and `fp + 8` (< stop, which is aligned too) are
        // readable stack words.
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

/// The hash of a first-stage value (a `Static`, a local under
/// `#[augur::staged]`, what a function returned): the state half of tags.
/// Equal hashes stand for equal states, so it must tell apart every input
/// `Hash` writes, not only spread keys as [`FxHasher`] does: FxHash maps
/// a leading zero word to no input at all, so the words `0, 1, 0, 0`
/// (`None` and a one-entry map) and `1, 0, 0` (`Some(0)` and an empty
/// map) collided. See [`StateHasher`].
#[inline]
pub fn state_hash<T: std::hash::Hash + ?Sized>(v: &T) -> u64 {
    use std::hash::Hasher;
    let mut h = StateHasher::default();
    v.hash(&mut h);
    h.finish()
}

/// The hasher of [`state_hash`]: each word goes through [`mix`], a
/// finaliser in which every input bit affects every output bit, from a
/// nonzero start, and a byte string ends with its length. Two different
/// inputs then agree only where a running hash happens to equal another
/// XORed with the difference of the next words, a chance of about 2^-64
/// for a pair of values that are not built to collide; the same in every
/// run (invariant 3). Several times cheaper than SipHash on the small
/// values first stages hold, and the first stage hashes one at every
/// change of a tracked local.
#[derive(Clone, Copy)]
pub struct StateHasher(u64);

impl Default for StateHasher {
    #[inline]
    fn default() -> StateHasher {
        StateHasher(0x243f_6a88_85a3_08d3)
    }
}

impl std::hash::Hasher for StateHasher {
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            self.write_u64(u64::from_le_bytes(w));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut w = [0u8; 8];
            w[..rest.len()].copy_from_slice(rest);
            self.write_u64(u64::from_le_bytes(w));
        }
        // Zero padding would make `[1]` and `[1, 0]` one word: the length
        // tells them apart.
        self.write_u64(bytes.len() as u64);
    }
    #[inline]
    fn write_u8(&mut self, x: u8) {
        self.write_u64(x.into())
    }
    #[inline]
    fn write_u16(&mut self, x: u16) {
        self.write_u64(x.into())
    }
    #[inline]
    fn write_u32(&mut self, x: u32) {
        self.write_u64(x.into())
    }
    #[inline]
    fn write_u64(&mut self, x: u64) {
        self.0 = mix(self.0, x);
    }
    #[inline]
    fn write_u128(&mut self, x: u128) {
        self.write_u64(x as u64);
        self.write_u64((x >> 64) as u64);
    }
    #[inline]
    fn write_usize(&mut self, x: usize) {
        self.write_u64(x as u64)
    }
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

#[cfg(test)]
mod tests {
    use super::{state_hash, walk_from, FxHasher};

    /// Code built without frame pointers leaves anything in the register:
    /// a value below the caller's frame (an address outside the stack, a
    /// small integer) is refused without being read, so the engine falls
    /// back to the unwinder instead of faulting; a chain on the stack up to
    /// the driver's frame is hashed by its return addresses.
    #[test]
    fn a_frame_pointer_off_the_stack_is_never_read() {
        let mut words = [0usize; 16];
        let start = words.as_ptr() as usize;
        let base = (start + 15) & !15;
        let (f0, f1, stop) = (base, base + 32, base + 64);
        let at = |a: usize| (a - start) / 8;
        words[at(f0)] = f1;
        words[at(f0) + 1] = 0xaa;
        words[at(f1)] = stop;
        words[at(f1) + 1] = 0xbb;
        let words = std::hint::black_box(&mut words);
        let low = f0 - 8;
        let h = walk_from(f0, low, stop).expect("a chain on the stack");
        words[at(f1) + 1] = 0xcc;
        assert_ne!(walk_from(f0, low, stop), Some(h), "return addresses hashed");
        words[at(f1)] = stop + 16;
        assert_eq!(walk_from(f0, low, stop), None, "a chain past the driver");
        for fp in [0, 16, 0x1000, (low / 2) & !15, low - 8, low] {
            assert_eq!(walk_from(fp, low, stop), None, "{fp:#x}");
        }
    }

    use std::collections::BTreeMap;
    use std::hash::{Hash, Hasher};

    fn fx<T: Hash>(v: &T) -> u64 {
        let mut h = FxHasher::default();
        v.hash(&mut h);
        h.finish()
    }

    #[derive(Hash)]
    enum Mode {
        A(u32, u32),
        B(u32),
    }

    /// The pairs FxHash takes for one (a leading zero word is lost) are
    /// different states.
    #[test]
    fn values_that_differ_by_a_leading_zero_word_hash_apart() {
        let emptied = (None::<i32>, BTreeMap::from([(0, 0)]));
        let filled = (Some(0), BTreeMap::<i32, i32>::new());
        assert_eq!(fx(&emptied), fx(&filled), "the collision this guards");
        assert_ne!(state_hash(&emptied), state_hash(&filled));
        assert_eq!(fx(&Mode::A(1, 0)), fx(&Mode::B(0)));
        assert_ne!(state_hash(&Mode::A(1, 0)), state_hash(&Mode::B(0)));
    }

    /// Byte strings: a zero byte more is another value, and so is a split
    /// in another place.
    #[test]
    fn byte_strings_hash_by_content_and_length() {
        let h = |parts: &[&[u8]]| {
            let mut h = super::StateHasher::default();
            for p in parts {
                h.write(p);
            }
            h.finish()
        };
        assert_ne!(h(&[b"a"]), h(&[b"a\0"]));
        assert_ne!(h(&[b"abcdefgh"]), h(&[b"abcdefgh\0"]));
        assert_ne!(h(&[b"ab", b"c"]), h(&[b"a", b"bc"]));
        assert_eq!(h(&[b"abc"]), h(&[b"abc"]));
        assert_ne!(state_hash("ab"), state_hash("ba"));
    }

    /// Small values of every shape a first stage holds stay apart: no
    /// collision among 200,000 of them.
    #[test]
    fn small_structured_values_do_not_collide() {
        let mut seen = std::collections::HashSet::new();
        let mut n = 0;
        for a in 0..40u32 {
            for b in 0..40u32 {
                for v in [
                    state_hash(&(a, b)),
                    state_hash(&(Some(a), b as u8)),
                    state_hash(&vec![a, b, 1]),
                    state_hash(&(u64::from(a) << 32 | u64::from(b))),
                    state_hash(&[a, b, 0]),
                ] {
                    assert!(seen.insert(v), "collision at {a}, {b}");
                    n += 1;
                }
            }
        }
        assert_eq!(n, 8000);
        for x in 0..192_000u64 {
            assert!(seen.insert(state_hash(&(x, !x))), "collision at {x}");
        }
    }
}
