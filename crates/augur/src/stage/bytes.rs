//! Searching bytes in generated code: [`find_pair`], the first position of
//! two bytes a fixed distance apart, 16 positions at a time.
//!
//! A DSL that looks for a literal in a long buffer (a regex prefilter, a
//! tokenizer's keyword scan) does best by testing two of the literal's
//! bytes at once: `memchr` on one byte stops at every occurrence of it,
//! while a pair of bytes `d` apart shows far less often, and SIMD tests
//! sixteen positions of both in a few instructions. That is what
//! `@find_pair` is, an IR intrinsic (see [`Intrinsic`]) that
//! each backend lowers:
//!
//! * C: a `static` helper the writer prints once per unit, with SSE2 where
//!   the compiler targets it (`__SSE2__`), else one position at a time;
//! * the JIT: a call of [`find_pair_raw`], SSE2 on x86-64;
//! * the interpreter: [`find_pair_in`] over the `n` bytes, all of which
//!   must be readable (compiled code may read any of them).
//!
//! All three give the same answer: the least `i >= 0` with `i + d < n`,
//! `p[i] == a` and `p[i + d] == b`, or -1.

use super::dyn_val::{Dyn, IntoArg};
use super::extern_fn::emit_intrinsic;
use crate::ir::Intrinsic;

/// The first position `i` of the `len` bytes at `hay` where `hay[i] == a`
/// and `hay[i + dist] == b` (with `i + dist < len`), or -1 if there is
/// none or `dist` is negative. Compiled code may read any of the `len`
/// bytes, 16 at a time, so all of them must be readable (the interpreter
/// reports a read past an allocation even where the pair lies before it).
///
/// ```
/// #[augur::staged]
/// fn main() -> augur::Result<()> {
///     use augur::{bytes, Builder, Dyn};
///     // Where "Sherlock" may start: its 'S' with its 'k' 7 bytes on.
///     let f = Builder::new()
///         .extract("find", |s: Dyn<*const u8>, n: Dyn<i64>| {
///             bytes::find_pair(s, n, b'S', b'k', 7i64)
///         })
///         .unwrap();
///     let text = b"Sheep, Shark and Sherlock Holmes";
///     let mut it = augur::Interpreter::new();
///     let s = it.memory_mut().alloc_slice(text);
///     assert_eq!(f.interpret_in(&mut it, &[s, 32i64.into()])?, 17i64.into());
///     // SAFETY: `find` reads the `n` bytes at `s`, and `text` has 32.
///     let found = unsafe { f.compile()?.get()(text.as_ptr(), 32) };
///     assert_eq!(found, 17);
///     Ok(())
/// }
/// ```
#[track_caller]
pub fn find_pair(
    hay: Dyn<*const u8>,
    len: impl IntoArg<i64>,
    a: impl IntoArg<u8>,
    b: impl IntoArg<u8>,
    dist: impl IntoArg<i64>,
) -> Dyn<i64> {
    emit_intrinsic::<i64>(
        Intrinsic::FindPair,
        [
            hay.into_arg(),
            len.into_arg(),
            a.into_arg(),
            b.into_arg(),
            dist.into_arg(),
        ],
    )
}

/// `@find_pair` over `hay`, one position at a time: the meaning every
/// backend's version has.
pub fn find_pair_in(hay: &[u8], a: u8, b: u8, dist: i64) -> i64 {
    let Ok(d) = usize::try_from(dist) else {
        return -1;
    };
    let end = hay.len().saturating_sub(d);
    (0..end)
        .find(|&i| hay[i] == a && hay[i + d] == b)
        .map_or(-1, |i| i as i64)
}

/// `@find_pair` as compiled code calls it: the JIT's version.
///
/// # Safety
/// `n <= 0`, or the `n` bytes at `p` are readable.
pub unsafe extern "C" fn find_pair_raw(p: *const u8, n: i64, a: u8, b: u8, d: i64) -> i64 {
    if n <= 0 || d < 0 || d >= n {
        return -1;
    }
    // SAFETY: the caller's contract: `n > 0` bytes at `p` are readable.
    let hay = unsafe { std::slice::from_raw_parts(p, n as usize) };
    let d = d as usize;
    let mut i = 0;
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{
            _mm_and_si128, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_set1_epi8,
        };
        // SAFETY: SSE2 is part of x86-64; each load reads 16 bytes at `i`
        // and at `i + d`, both within `hay` while `i + d + 16 <= hay.len()`.
        unsafe {
            let (va, vb) = (_mm_set1_epi8(a as i8), _mm_set1_epi8(b as i8));
            while i + d + 16 <= hay.len() {
                let x = _mm_loadu_si128(hay.as_ptr().add(i).cast());
                let y = _mm_loadu_si128(hay.as_ptr().add(i + d).cast());
                let m =
                    _mm_movemask_epi8(_mm_and_si128(_mm_cmpeq_epi8(x, va), _mm_cmpeq_epi8(y, vb)));
                if m != 0 {
                    return (i + m.trailing_zeros() as usize) as i64;
                }
                i += 16;
            }
        }
    }
    match find_pair_in(&hay[i..], a, b, d as i64) {
        -1 => -1,
        k => i as i64 + k,
    }
}

#[cfg(test)]
mod tests {
    use super::{find_pair_in, find_pair_raw};

    /// The SIMD search agrees with the plain one at every length, distance
    /// and position, pairs found in a block of 16 and in the tail alike.
    #[test]
    fn simd_agrees_with_the_plain_search() {
        let mut r = augur_rng::Rng(0x9e37_79b9_7f4a_7c15);
        for n in 0..80usize {
            for _ in 0..40 {
                // Few distinct bytes, so that pairs show often.
                let hay: Vec<u8> = (0..n).map(|_| r.pick(b"abc")).collect();
                let d = r.below(20) as i64 - 2;
                let (a, b) = (r.pick(b"abc"), r.pick(b"abc"));
                let want = find_pair_in(&hay, a, b, d);
                // SAFETY: `hay` holds `n` readable bytes.
                let got = unsafe { find_pair_raw(hay.as_ptr(), n as i64, a, b, d) };
                assert_eq!(got, want, "{hay:?} {a} {b} {d}");
            }
        }
    }

    #[test]
    fn the_meaning() {
        assert_eq!(find_pair_in(b"xaxb", b'a', b'b', 2), 1);
        assert_eq!(find_pair_in(b"aab", b'a', b'b', 1), 1);
        assert_eq!(find_pair_in(b"ab", b'a', b'b', 2), -1, "the pair must fit");
        assert_eq!(
            find_pair_in(b"aa", b'a', b'a', 0),
            0,
            "distance 0: one byte"
        );
        assert_eq!(find_pair_in(b"ab", b'a', b'b', -1), -1);
        assert_eq!(find_pair_in(b"", b'a', b'b', 0), -1);
    }
}
