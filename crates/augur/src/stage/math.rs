//! The C99 `<math.h>` functions, typed, for `f64` (`double`) and `f32`
//! (`float`).
//!
//! Each function is an [`ExternFn`] constant named like C in capitals
//! (`SIN` is `double sin(double)`, `SINF` is `float sinf(float)`), and a
//! method on `Dyn<f64>` and `Dyn<f32>` named like the `double` function:
//! on a `Dyn<f32>`, `x.sin()` calls `sinf`, so code generic over the float
//! type calls the function of its precision. The generated C includes
//! `<math.h>`; the interpreter runs every function with the C library the
//! process links, found the way the dynamic linker finds it for compiled
//! code (results equal the compiled code's, bit for bit).
//!
//! ```
//! #[augur::staged]
//! fn main() -> augur::Result<()> {
//!     use augur::math::POW;
//!     use augur::{Builder, Dyn};
//!
//!     let f = Builder::new()
//!         .extract("norm", |x: Dyn<f64>, y: Dyn<f32>| {
//!             let h = x.hypot(3.0).floor(); // double hypot, double floor
//!             let s = y.sin().cast::<f64>(); // float sinf
//!             POW.call(h, 2.0) + s
//!         })
//!         .unwrap();
//!     let c = f.c_code();
//!     assert!(c.contains("#include <math.h>"), "{c}");
//!     assert!(c.contains("hypot(arg0, 3.0)"), "{c}");
//!     assert!(c.contains("sinf(arg1)"), "{c}");
//!     let got = f.interpret(&[4.0f64.into(), 0.0f32.into()]).unwrap();
//!     assert_eq!(got, augur::Value::F64(25.0));
//!     Ok(())
//! }
//! ```
//!
//! Not here: the classification macros (`isnan`, `signbit`, ...; compare
//! `x.ne(x)` for NaN) and the `long double` functions.

use super::ctype::CChar;
use super::dyn_val::{Dyn, IntoArg};
use super::extern_fn::ExternFn;
use crate::libm::math_functions;

macro_rules! constants {
    ($($group:ident: [$(($d:ident, $f:ident, $dc:ident, $fc:ident)),* $(,)?]),* $(,)?) => {
        $($(constants!(@one $group, $d, $f, $dc, $fc);)*)*
    };
    (@one $group:ident, $d:ident, $f:ident, $dc:ident, $fc:ident) => {
        constants!(@sig $group, $d, $dc, f64, "double");
        constants!(@sig $group, $f, $fc, f32, "float");
    };
    (@sig unary, $n:ident, $c:ident, $t:ty, $ct:literal) => {
        constants!(@def $n, $c, fn($t) -> $t, concat!($ct, " ", stringify!($n), "(", $ct, ")"));
    };
    (@sig binary, $n:ident, $c:ident, $t:ty, $ct:literal) => {
        constants!(@def $n, $c, fn($t, $t) -> $t,
            concat!($ct, " ", stringify!($n), "(", $ct, ", ", $ct, ")"));
    };
    (@sig ternary, $n:ident, $c:ident, $t:ty, $ct:literal) => {
        constants!(@def $n, $c, fn($t, $t, $t) -> $t,
            concat!($ct, " ", stringify!($n), "(", $ct, ", ", $ct, ", ", $ct, ")"));
    };
    (@sig to_int, $n:ident, $c:ident, $t:ty, $ct:literal) => {
        constants!(@def $n, $c, fn($t) -> i32, concat!("int ", stringify!($n), "(", $ct, ")"));
    };
    (@sig to_long, $n:ident, $c:ident, $t:ty, $ct:literal) => {
        constants!(@def $n, $c, fn($t) -> i64,
            concat!("long ", stringify!($n), "(", $ct, ") (64 bits; `long long` likewise)"));
    };
    (@sig with_int, $n:ident, $c:ident, $t:ty, $ct:literal) => {
        constants!(@def $n, $c, fn($t, i32) -> $t,
            concat!($ct, " ", stringify!($n), "(", $ct, ", int)"));
    };
    (@sig with_long, $n:ident, $c:ident, $t:ty, $ct:literal) => {
        constants!(@def $n, $c, fn($t, i64) -> $t,
            concat!($ct, " ", stringify!($n), "(", $ct, ", long)"));
    };
    (@sig out_int, $n:ident, $c:ident, $t:ty, $ct:literal) => {
        constants!(@def $n, $c, fn($t, *mut i32) -> $t,
            concat!($ct, " ", stringify!($n), "(", $ct, ", int *)"));
    };
    (@sig out_self, $n:ident, $c:ident, $t:ty, $ct:literal) => {
        constants!(@def $n, $c, fn($t, *mut $t) -> $t,
            concat!($ct, " ", stringify!($n), "(", $ct, ", ", $ct, " *)"));
    };
    (@sig rem_quo, $n:ident, $c:ident, $t:ty, $ct:literal) => {
        constants!(@def $n, $c, fn($t, $t, *mut i32) -> $t,
            concat!($ct, " ", stringify!($n), "(", $ct, ", ", $ct, ", int *)"));
    };
    (@sig parse, $n:ident, $c:ident, $t:ty, $ct:literal) => {
        constants!(@def $n, $c, fn(*const CChar) -> $t,
            concat!($ct, " ", stringify!($n), "(const char *)"));
    };
    (@def $n:ident, $c:ident, $sig:ty, $doc:expr) => {
        #[doc = concat!("`", $doc, "`.")]
        pub const $c: ExternFn<$sig> = ExternFn::new(stringify!($n)).header("math.h");
    };
}
math_functions!(constants);

macro_rules! methods {
    ($($group:ident: [$(($d:ident, $f:ident, $dc:ident, $fc:ident)),* $(,)?]),* $(,)?) => {
        impl Dyn<f64> {
            $($(methods!(@one $group, $d, $dc, f64);)*)*
        }
        impl Dyn<f32> {
            $($(methods!(@one $group, $d, $fc, f32);)*)*
        }
    };
    (@one unary, $d:ident, $c:ident, $t:ty) => {
        #[doc = concat!("[`", stringify!($c), "`] of this value.")]
        #[track_caller]
        pub fn $d(self) -> Dyn<$t> {
            $c.call(self)
        }
    };
    (@one binary, $d:ident, $c:ident, $t:ty) => {
        #[doc = concat!("[`", stringify!($c), "`]`(self, y)`.")]
        #[track_caller]
        pub fn $d(self, y: impl IntoArg<$t>) -> Dyn<$t> {
            $c.call(self, y)
        }
    };
    (@one ternary, $d:ident, $c:ident, $t:ty) => {
        #[doc = concat!("[`", stringify!($c), "`]`(self, y, z)`: `self * y + z`, rounded once.")]
        #[track_caller]
        pub fn $d(self, y: impl IntoArg<$t>, z: impl IntoArg<$t>) -> Dyn<$t> {
            $c.call(self, y, z)
        }
    };
    (@one to_int, $d:ident, $c:ident, $t:ty) => {
        #[doc = concat!("[`", stringify!($c), "`] of this value.")]
        #[track_caller]
        pub fn $d(self) -> Dyn<i32> {
            $c.call(self)
        }
    };
    (@one to_long, $d:ident, $c:ident, $t:ty) => {
        #[doc = concat!("[`", stringify!($c), "`] of this value.")]
        #[track_caller]
        pub fn $d(self) -> Dyn<i64> {
            $c.call(self)
        }
    };
    (@one with_int, $d:ident, $c:ident, $t:ty) => {
        #[doc = concat!("[`", stringify!($c), "`]`(self, e)`.")]
        #[track_caller]
        pub fn $d(self, e: impl IntoArg<i32>) -> Dyn<$t> {
            $c.call(self, e)
        }
    };
    (@one with_long, $d:ident, $c:ident, $t:ty) => {
        #[doc = concat!("[`", stringify!($c), "`]`(self, e)`.")]
        #[track_caller]
        pub fn $d(self, e: impl IntoArg<i64>) -> Dyn<$t> {
            $c.call(self, e)
        }
    };
    (@one out_int, $d:ident, $c:ident, $t:ty) => {
        #[doc = concat!("[`", stringify!($c), "`]`(self, exp)`: stores the exponent at `exp`.")]
        #[track_caller]
        pub fn $d(self, exp: impl IntoArg<*mut i32>) -> Dyn<$t> {
            $c.call(self, exp)
        }
    };
    (@one out_self, $d:ident, $c:ident, $t:ty) => {
        #[doc = concat!("[`", stringify!($c), "`]`(self, whole)`: stores the integral part at `whole`.")]
        #[track_caller]
        pub fn $d(self, whole: impl IntoArg<*mut $t>) -> Dyn<$t> {
            $c.call(self, whole)
        }
    };
    (@one rem_quo, $d:ident, $c:ident, $t:ty) => {
        #[doc = concat!("[`", stringify!($c), "`]`(self, y, quo)`: stores low quotient bits at `quo`.")]
        #[track_caller]
        pub fn $d(self, y: impl IntoArg<$t>, quo: impl IntoArg<*mut i32>) -> Dyn<$t> {
            $c.call(self, y, quo)
        }
    };
    // `nan` takes no value of the type: a constant only.
    (@one parse, $d:ident, $c:ident, $t:ty) => {};
}
math_functions!(methods);
