//! Common C library functions as [`ExternFn`]s: output (`printf`,
//! `puts`, `putchar`), the heap (`malloc`, `calloc`, `realloc`, `free`),
//! memory and strings (`memcpy`, `memmove`, `memset`, `memcmp`, `memchr`, `strlen`,
//! `strcmp`, `strncmp`), sorting with a staged comparator ([`QSORT`]), the
//! end of the program (`abort`, `exit`) and `abs`.
//!
//! Each is typed as a Rust user expects (a `void *` is bytes, `*mut u8`; a
//! `size_t` is `u64`), printed in C with its header, resolved by the JIT
//! to the process's C library, and provided by the interpreter, which
//! reports what C leaves undefined (`free` or `realloc` of a pointer
//! `malloc` did not make, overlapping `memcpy`, a read past an allocation
//! or of uninitialised bytes, a string with no NUL) as
//! [`Error::Interp`](crate::Error::Interp). `abort()` and `exit(status)`
//! end the process of compiled code (C's and the JIT's alike); the
//! interpreter stops the interpreted program with
//! [`Error::Exit`](crate::Error::Exit) instead, and stays usable.
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

use super::ctype::{CChar, CType};
use super::dyn_val::{Dyn, IntoArg};
use super::extern_fn::ExternFn;
use super::fn_ptr::FnPtr;
use crate::ir::Type;

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
/// `void *realloc(void *, size_t)`: the block resized, its first bytes
/// kept (null gives a new block, as `malloc`). The interpreter always
/// moves the block, so a use of the old pointer afterwards is an error, as
/// are `realloc` of a pointer `malloc` did not give and `realloc(p, 0)`
/// (implementation-defined in C17, undefined in C23: `free` it).
///
/// ```
/// #[augur::staged]
/// fn main() -> augur::Result<()> {
///     use augur::{libc, Builder, Dyn};
///     // Grows a buffer of `n` doubles one element at a time.
///     let f = Builder::new()
///         .extract("grow", |n: Dyn<i32>| {
///             let buf = Dyn::new(libc::MALLOC.call(8u64).cast_ptr::<*mut f64>());
///             let i = Dyn::new(0);
///             while i.lt(n).is_true() {
///                 let bytes = (i + 1).cast::<u64>() * 8;
///                 buf.set(libc::REALLOC.call(buf.cast_ptr::<*mut u8>(), bytes).cast_ptr());
///                 buf.at(i).set(i.cast::<f64>());
///                 i.set(i + 1);
///             }
///             let last = buf.at(n - 1);
///             libc::FREE.call(buf.cast_ptr::<*mut u8>());
///             last
///         })
///         .unwrap();
///     assert!(f.c_code().contains("realloc("));
///     assert_eq!(f.interpret(&[5.into()])?, 4.0.into());
///     Ok(())
/// }
/// ```
pub const REALLOC: ExternFn<fn(*mut u8, u64) -> *mut u8> =
    ExternFn::new("realloc").header("stdlib.h");
/// `void free(void *)`.
pub const FREE: ExternFn<fn(*mut u8)> = ExternFn::new("free").header("stdlib.h");
/// `void *memcpy(void *, const void *, size_t)`.
pub const MEMCPY: ExternFn<fn(*mut u8, *const u8, u64) -> *mut u8> =
    ExternFn::new("memcpy").header("string.h");
/// `void *memmove(void *, const void *, size_t)`: as `memcpy`, and the
/// regions may overlap.
pub const MEMMOVE: ExternFn<fn(*mut u8, *const u8, u64) -> *mut u8> =
    ExternFn::new("memmove").header("string.h");
/// `int memcmp(const void *, const void *, size_t)`: less than, equal to
/// or greater than zero as the first differing byte (unsigned) of the
/// first region is below, equal to or above the second's. Only the sign is
/// C's promise; the interpreter gives the difference of the bytes, as the
/// GNU C library does. It reads all `n` bytes of both: past an
/// allocation, or an uninitialised byte (a struct's padding, say), is an
/// interpreter error.
///
/// ```
/// #[augur::staged]
/// fn main() -> augur::Result<()> {
///     use augur::{libc, Builder, Dyn};
///     let f = Builder::new()
///         .extract("same", |a: Dyn<*const u8>, b: Dyn<*const u8>, n: Dyn<u64>| {
///             libc::MEMCMP.call(a, b, n).eq(0)
///         })
///         .unwrap();
///     let mut it = augur::Interpreter::new();
///     let a = it.memory_mut().alloc_slice(&[1u8, 2, 3]);
///     let b = it.memory_mut().alloc_slice(&[1u8, 2, 4]);
///     assert_eq!(f.interpret_in(&mut it, &[a, b, 2u64.into()])?, true.into());
///     assert_eq!(f.interpret_in(&mut it, &[a, b, 3u64.into()])?, false.into());
///     let e = f.interpret_in(&mut it, &[a, b, 4u64.into()]).unwrap_err();
///     assert!(e.to_string().contains("memcmp read of 4 bytes"), "{e}");
///     Ok(())
/// }
/// ```
pub const MEMCMP: ExternFn<fn(*const u8, *const u8, u64) -> i32> =
    ExternFn::new("memcmp").header("string.h");
/// `void *memchr(const void *s, int c, size_t n)`: the first of the `n`
/// bytes at `s` that equals `c` (as an `unsigned char`), or null. The
/// C library's is vectorised: the fastest way to skip to a byte. Reading
/// past an allocation before finding it is an interpreter error.
/// [`Dyn::offset_from`] turns the pointer into an index.
///
/// ```
/// #[augur::staged]
/// fn main() -> augur::Result<()> {
///     use augur::{libc, Builder, Dyn};
///     let f = Builder::new()
///         .extract("has", |s: Dyn<*const u8>, c: Dyn<i32>, n: Dyn<u64>| {
///             !libc::MEMCHR.call(s, c, n).is_null()
///         })
///         .unwrap();
///     let mut it = augur::Interpreter::new();
///     let s = it.memory_mut().alloc_slice(b"abc");
///     let has = |it: &mut augur::Interpreter, c: u8, n: u64| {
///         f.interpret_in(it, &[s, (c as i32).into(), n.into()])
///     };
///     assert_eq!(has(&mut it, b'b', 3)?, true.into());
///     // Found before the end of the allocation: as C, no error.
///     assert_eq!(has(&mut it, b'b', 10)?, true.into());
///     let e = has(&mut it, b'z', 10).unwrap_err();
///     assert!(e.to_string().contains("memchr read"), "{e}");
///     Ok(())
/// }
/// ```
pub const MEMCHR: ExternFn<fn(*const u8, i32, u64) -> *const u8> =
    ExternFn::new("memchr").header("string.h");
/// `size_t strlen(const char *)`. A string whose allocation ends before a
/// NUL is an interpreter error.
///
/// ```
/// #[augur::staged]
/// fn main() -> augur::Result<()> {
///     use augur::{libc, Builder, Dyn};
///     let f = Builder::new()
///         .extract("len", |s: Dyn<*const augur::CChar>| libc::STRLEN.call(s))
///         .unwrap();
///     let mut it = augur::Interpreter::new();
///     let s = it.memory_mut().alloc_cstr("hello");
///     assert_eq!(f.interpret_in(&mut it, &[s])?, 5u64.into());
///     let bytes = it.memory_mut().alloc_slice(&[b'h', b'i']);
///     let e = f.interpret_in(&mut it, &[bytes]).unwrap_err();
///     assert!(e.to_string().contains("strlen of a string with no NUL"), "{e}");
///     Ok(())
/// }
/// ```
pub const STRLEN: ExternFn<fn(*const CChar) -> u64> = ExternFn::new("strlen").header("string.h");
/// `int strcmp(const char *, const char *)`: the sign of the first
/// difference (bytes compared unsigned); the interpreter gives the
/// difference of the bytes.
pub const STRCMP: ExternFn<fn(*const CChar, *const CChar) -> i32> =
    ExternFn::new("strcmp").header("string.h");
/// `int strncmp(const char *, const char *, size_t)`: `strcmp` of at most
/// `n` bytes.
pub const STRNCMP: ExternFn<fn(*const CChar, *const CChar, u64) -> i32> =
    ExternFn::new("strncmp").header("string.h");
/// `void abort(void)`: ends the program abnormally (compiled code: the
/// process, by `SIGABRT`). The interpreter stops with
/// [`Error::Exit`](crate::Error::Exit) whose `status` is `None`.
pub const ABORT: ExternFn<fn()> = ExternFn::new("abort").header("stdlib.h");
/// `void exit(int)`: ends the program with a status (compiled code: the
/// whole process, after flushing C's streams). The interpreter stops with
/// [`Error::Exit`](crate::Error::Exit) carrying the status.
///
/// ```
/// #[augur::staged]
/// fn main() -> augur::Result<()> {
///     use augur::{libc, Builder, Dyn, Error};
///     let f = Builder::new()
///         .extract("check", |x: Dyn<i32>| {
///             if x.lt(0).is_true() {
///                 libc::EXIT.call(3);
///             }
///             x * 2
///         })
///         .unwrap();
///     assert!(f.c_code().contains("exit(3);"));
///     assert_eq!(f.interpret(&[4.into()])?, 8.into());
///     match f.interpret(&[(-1).into()]) {
///         Err(Error::Exit { status: Some(3), .. }) => {}
///         other => panic!("{other:?}"),
///     }
///     Ok(())
/// }
/// ```
pub const EXIT: ExternFn<fn(i32)> = ExternFn::new("exit").header("stdlib.h");
/// `void *memset(void *, int, size_t)`.
pub const MEMSET: ExternFn<fn(*mut u8, i32, u64) -> *mut u8> =
    ExternFn::new("memset").header("string.h");
/// `int abs(int)`.
pub const ABS: ExternFn<fn(i32) -> i32> = ExternFn::new("abs").header("stdlib.h");
/// `sqrt` and `fabs`, kept here too; [`crate::math`] has all of `<math.h>`.
pub use super::math::{FABS, SQRT};

/// The comparator [`QSORT`] takes: two pointers to elements, giving less
/// than, equal to or greater than zero as the first sorts before, with or
/// after the second.
pub type Comparator = FnPtr<fn(*const u8, *const u8) -> i32>;

/// C's `void`, for the prototype `qsort` has in `<stdlib.h>`.
enum Void {}

impl CType for Void {
    fn ty() -> Type {
        Type::Void
    }
}

/// The comparator's type in `<stdlib.h>`: `int (*)(const void *, const void *)`.
type VoidComparator = FnPtr<fn(*const Void, *const Void) -> i32>;

/// `qsort` as `<stdlib.h>` declares it.
const QSORT_C: ExternFn<fn(*mut u8, u64, u64, VoidComparator)> =
    ExternFn::new("qsort").header("stdlib.h");

/// `void qsort(void *base, size_t n, size_t size, int (*compar)(const void *,
/// const void *))`: sorts `n` elements of `size` bytes at `base` with a
/// staged comparator: the address of a function of the
/// [`Module`](crate::Module) ([`Func::addr`](crate::Func::addr)), or a
/// function pointer passed in. See [`Qsort::call`].
pub const QSORT: Qsort = Qsort(());

/// The type of [`QSORT`]: C's `qsort`, its comparator typed on bytes
/// ([`Comparator`]).
#[derive(Clone, Copy, Debug)]
pub struct Qsort(());

impl Qsort {
    /// Sorts `n` elements of `size` bytes at `base`, ordered by `compar`.
    ///
    /// The C code casts the comparator to the type `<stdlib.h>` declares
    /// (`int (*)(const void *, const void *)`; the pointers are passed
    /// alike on every ABI augur targets). C's `qsort` is not stable: sort
    /// by a total order (break ties) where the result must be the same on
    /// every backend. The interpreter sorts stably (a merge sort), calls
    /// the comparator with pointers to the elements where they lie before
    /// the sort, and reports a comparator that is not a function, a
    /// comparator's own errors, and elements past the allocation.
    ///
    /// ```
    /// #[augur::staged]
    /// fn main() -> augur::Result<()> {
    ///     use augur::{libc, Builder, Dyn, Func, Interpreter};
    ///
    ///     let mut m = Builder::new().module();
    ///     let by_value: Func<fn(*const u8, *const u8) -> i32> = m.declare("by_value");
    ///     let sort: Func<fn(*mut i32, u64)> = m.declare("sort");
    ///     m.define(by_value, |a: Dyn<*const u8>, b: Dyn<*const u8>| {
    ///         let x = a.cast_ptr::<*const i32>().deref();
    ///         let y = b.cast_ptr::<*const i32>().deref();
    ///         x.gt(y).cast::<i32>() - x.lt(y).cast::<i32>()
    ///     });
    ///     m.define(sort, move |xs: Dyn<*mut i32>, n: Dyn<u64>| {
    ///         libc::QSORT.call(xs.cast_ptr::<*mut u8>(), n, 4u64, by_value.addr());
    ///     });
    ///     let ex = m.extract()?;
    ///     let c = ex.c_code();
    ///     let cast = "(int32_t (*)(const void *, const void *))by_value";
    ///     assert!(c.contains(&format!("qsort((uint8_t *)arg0, arg1, 4ull, {cast});")), "{c}");
    ///
    ///     let mut it = Interpreter::new();
    ///     let xs = it.memory_mut().alloc_slice(&[3, -1, 2]);
    ///     ex.interpret_in(&mut it, sort, &[xs, 3u64.into()])?;
    ///     assert_eq!(it.memory().read_slice::<i32>(xs, 3)?, [-1, 2, 3]);
    ///     Ok(())
    /// }
    /// ```
    #[track_caller]
    pub fn call(
        &self,
        base: impl IntoArg<*mut u8>,
        n: impl IntoArg<u64>,
        size: impl IntoArg<u64>,
        compar: Dyn<Comparator>,
    ) {
        QSORT_C.call(base, n, size, compar.cast_ptr())
    }
}
