//! Common C library functions as [`ExternFn`]s.
//!
//! ```
//! #[augur::staged]
//! fn main() -> augur::Result<()> {
//!     use augur::{libc, Builder, Dyn};
//!     let f = Builder::new()
//!         .extract("hello", |x: Dyn<i32>| {
//!             libc::PRINTF.call_with(&[Dyn::str("x = %d\n").into(), x.into()]);
//!         })
//!         .unwrap();
//!     assert!(f.c_code().contains("printf(\"x = %d\\n\", arg0);"));
//!     Ok(())
//! }
//! ```

use super::ctype::CChar;
use super::extern_fn::ExternFn;

/// `int printf(const char *, ...)`.
pub const PRINTF: ExternFn<fn(*const CChar) -> i32> =
    ExternFn::new("printf").header("stdio.h").variadic();
/// `int puts(const char *)`.
pub const PUTS: ExternFn<fn(*const CChar) -> i32> = ExternFn::new("puts").header("stdio.h");
/// `int putchar(int)`.
pub const PUTCHAR: ExternFn<fn(i32) -> i32> = ExternFn::new("putchar").header("stdio.h");
/// `void *malloc(size_t)`, typed as returning bytes.
pub const MALLOC: ExternFn<fn(u64) -> *mut u8> = ExternFn::new("malloc").header("stdlib.h");
/// `void *calloc(size_t, size_t)`.
pub const CALLOC: ExternFn<fn(u64, u64) -> *mut u8> = ExternFn::new("calloc").header("stdlib.h");
/// `void free(void *)`.
pub const FREE: ExternFn<fn(*mut u8)> = ExternFn::new("free").header("stdlib.h");
/// `void *memcpy(void *, const void *, size_t)`.
pub const MEMCPY: ExternFn<fn(*mut u8, *const u8, u64) -> *mut u8> =
    ExternFn::new("memcpy").header("string.h");
/// `void *memset(void *, int, size_t)`.
pub const MEMSET: ExternFn<fn(*mut u8, i32, u64) -> *mut u8> =
    ExternFn::new("memset").header("string.h");
/// `int abs(int)`.
pub const ABS: ExternFn<fn(i32) -> i32> = ExternFn::new("abs").header("stdlib.h");
/// `sqrt` and `fabs`, kept here too; [`crate::math`] has all of `<math.h>`.
pub use super::math::{FABS, SQRT};
