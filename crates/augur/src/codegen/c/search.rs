//! The byte search of [`bytes::find_pair`] as C: what the C backend and
//! the CPU simulation compile.
//!
//! Sixteen positions at a time with SSE2 where the compiler targets it
//! (GCC and Clang define `__SSE2__` on every x86-64), then one at a time;
//! other compilers and targets take the plain loop. Every load lies within
//! the `n` bytes: `i + d + 16 <= n` before each pair of 16-byte loads.
//!
//! [`bytes::find_pair`]: crate::bytes::find_pair

use crate::ir::device::intrinsics;
use crate::ir::{Function, Intrinsic};

/// True if some function of `fs` searches for a pair of bytes.
fn used(fs: &[&Function]) -> bool {
    fs.iter()
        .flat_map(|f| intrinsics(f))
        .any(|(i, _)| i == Intrinsic::FindPair)
}

/// Defines `augur_find_pair` if `fs` call it.
pub(crate) fn write_helper(out: &mut String, fs: &[&Function]) {
    if used(fs) {
        out.push_str(HELPER);
    }
}

const HELPER: &str = r#"
#if defined(__SSE2__) && defined(__GNUC__)
#include <emmintrin.h>
#endif
static int64_t augur_find_pair(const uint8_t *p, int64_t n, uint8_t a, uint8_t b, int64_t d) {
  int64_t i = 0;
  if (n <= 0 || d < 0 || d >= n) return -1;
#if defined(__SSE2__) && defined(__GNUC__)
  {
    const __m128i va = _mm_set1_epi8((char)a), vb = _mm_set1_epi8((char)b);
    for (; i + d + 16 <= n; i += 16) {
      __m128i x = _mm_loadu_si128((const __m128i *)(p + i));
      __m128i y = _mm_loadu_si128((const __m128i *)(p + i + d));
      int m = _mm_movemask_epi8(_mm_and_si128(_mm_cmpeq_epi8(x, va), _mm_cmpeq_epi8(y, vb)));
      if (m) return i + __builtin_ctz((unsigned)m);
    }
  }
#endif
  for (; i + d < n; i++)
    if (p[i] == a && p[i + d] == b) return i;
  return -1;
}
"#;
