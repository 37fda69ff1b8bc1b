//! The C99 `<math.h>` functions augur knows, listed once.
//!
//! [`math_functions!`] hands the list to a macro, so that the staging API
//! ([`crate::math`]), the interpreter's built-ins and the names the C writer
//! keeps free all come from this one table. Each row names the `double`
//! function, its `float` twin, and the constants `augur::math` gives them.
//! Rows are grouped by signature (`T` is `double` or `float`):
//!
//! * `unary`: `T f(T)`;
//! * `binary`: `T f(T, T)`; `ternary`: `T f(T, T, T)`;
//! * `to_int`: `int f(T)`; `to_long`: `long f(T)` and `long long f(T)`,
//!   both 64 bits where augur runs (LP64);
//! * `with_int`: `T f(T, int)`; `with_long`: `T f(T, long)`;
//! * `out_int`: `T f(T, int *)`; `out_self`: `T f(T, T *)`;
//!   `rem_quo`: `T f(T, T, int *)` (`remquo`);
//! * `parse`: `T f(const char *)` (`nan`).
//!
//! Left out: the classification macros (`isnan`, `signbit`, `fpclassify`,
//! ...), which are not functions a program can call through a pointer or a
//! JIT can resolve (compare `x != x` instead), and the `long double`
//! functions, which have no augur type.

/// Calls `$m!` with the table (see the module docs).
macro_rules! math_functions {
    ($m:ident) => {
        $m! {
            unary: [
                (acos, acosf, ACOS, ACOSF), (asin, asinf, ASIN, ASINF),
                (atan, atanf, ATAN, ATANF), (cos, cosf, COS, COSF),
                (sin, sinf, SIN, SINF), (tan, tanf, TAN, TANF),
                (acosh, acoshf, ACOSH, ACOSHF), (asinh, asinhf, ASINH, ASINHF),
                (atanh, atanhf, ATANH, ATANHF), (cosh, coshf, COSH, COSHF),
                (sinh, sinhf, SINH, SINHF), (tanh, tanhf, TANH, TANHF),
                (exp, expf, EXP, EXPF), (exp2, exp2f, EXP2, EXP2F),
                (expm1, expm1f, EXPM1, EXPM1F), (log, logf, LOG, LOGF),
                (log10, log10f, LOG10, LOG10F), (log1p, log1pf, LOG1P, LOG1PF),
                (log2, log2f, LOG2, LOG2F), (logb, logbf, LOGB, LOGBF),
                (cbrt, cbrtf, CBRT, CBRTF), (fabs, fabsf, FABS, FABSF),
                (sqrt, sqrtf, SQRT, SQRTF), (erf, erff, ERF, ERFF),
                (erfc, erfcf, ERFC, ERFCF), (lgamma, lgammaf, LGAMMA, LGAMMAF),
                (tgamma, tgammaf, TGAMMA, TGAMMAF), (ceil, ceilf, CEIL, CEILF),
                (floor, floorf, FLOOR, FLOORF), (nearbyint, nearbyintf, NEARBYINT, NEARBYINTF),
                (rint, rintf, RINT, RINTF), (round, roundf, ROUND, ROUNDF),
                (trunc, truncf, TRUNC, TRUNCF),
            ],
            binary: [
                (atan2, atan2f, ATAN2, ATAN2F), (pow, powf, POW, POWF),
                (hypot, hypotf, HYPOT, HYPOTF), (fmod, fmodf, FMOD, FMODF),
                (remainder, remainderf, REMAINDER, REMAINDERF),
                (copysign, copysignf, COPYSIGN, COPYSIGNF),
                (nextafter, nextafterf, NEXTAFTER, NEXTAFTERF),
                (fdim, fdimf, FDIM, FDIMF), (fmax, fmaxf, FMAX, FMAXF),
                (fmin, fminf, FMIN, FMINF),
            ],
            ternary: [(fma, fmaf, FMA, FMAF)],
            to_int: [(ilogb, ilogbf, ILOGB, ILOGBF)],
            to_long: [
                (lrint, lrintf, LRINT, LRINTF), (lround, lroundf, LROUND, LROUNDF),
                (llrint, llrintf, LLRINT, LLRINTF), (llround, llroundf, LLROUND, LLROUNDF),
            ],
            with_int: [(ldexp, ldexpf, LDEXP, LDEXPF), (scalbn, scalbnf, SCALBN, SCALBNF)],
            with_long: [(scalbln, scalblnf, SCALBLN, SCALBLNF)],
            out_int: [(frexp, frexpf, FREXP, FREXPF)],
            out_self: [(modf, modff, MODF, MODFF)],
            rem_quo: [(remquo, remquof, REMQUO, REMQUOF)],
            parse: [(nan, nanf, NAN, NANF)],
        }
    };
}
pub(crate) use math_functions;

macro_rules! names {
    ($($group:ident: [$(($d:ident, $f:ident, $dc:ident, $fc:ident)),* $(,)?]),* $(,)?) => {
        /// Every function of the table, `double` and `float`, by its C name.
        pub const NAMES: &[&str] = &[$($(stringify!($d), stringify!($f)),*),*];
    };
}
math_functions!(names);

#[cfg(test)]
mod tests {
    #[test]
    fn the_table_names_each_function_once() {
        let set: std::collections::HashSet<_> = super::NAMES.iter().collect();
        assert_eq!(set.len(), super::NAMES.len());
        // 33 unary, 10 binary, fma, ilogb, 4 to long, ldexp, scalbn,
        // scalbln, frexp, modf, remquo, nan: 56 in each precision.
        assert_eq!(super::NAMES.len(), 2 * 56);
    }
}
