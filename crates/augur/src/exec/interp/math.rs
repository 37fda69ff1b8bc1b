//! The `<math.h>` built-ins: every function of [`crate::libm`]'s table,
//! computed by the C library this process links, the one compiled code
//! calls, so the interpreter's results equal the compiled code's bit for
//! bit (Rust's own `f64::sin` and friends are not guaranteed to be that
//! library). Arguments convert as a prototype would (`sqrt(2)` takes the
//! `int` as a `double`); out-parameters (`frexp`, `modf`, `remquo`) are
//! written through the checked memory.

use super::builtins::{f32_arg, f64_arg, int, ptr, Builtin};
use super::value::Value;
use crate::libm::math_functions;
use crate::{Error, Result};
use std::ffi::c_char;
use std::sync::OnceLock;

/// The address of the C library's `name` (see [`crate::exec::process`]).
fn c_symbol(name: &str) -> Result<usize> {
    crate::exec::process::c_symbol(name).ok_or_else(|| Error::Interp {
        message: format!("the C library function `{name}` is not in this process"),
    })
}

/// `$name` from the C library, as a function pointer of type `$ty`
/// (resolved once per function).
macro_rules! c_fn {
    ($name:ident: $ty:ty) => {{
        static ADDRESS: OnceLock<usize> = OnceLock::new();
        let address = match ADDRESS.get() {
            Some(&a) => a,
            None => {
                let a = c_symbol(stringify!($name))?;
                *ADDRESS.get_or_init(|| a)
            }
        };
        // SAFETY: the address is the C library's `$name`, whose `<math.h>`
        // declaration is `$ty`; it reads only its arguments (and writes
        // the out-parameter, a local here).
        unsafe { std::mem::transmute::<usize, $ty>(address) }
    }};
}

macro_rules! lookup {
    ($($group:ident: [$(($d:ident, $f:ident, $dc:ident, $fc:ident)),* $(,)?]),* $(,)?) => {
        /// The built-in `<math.h>` function called `name`.
        pub(super) fn lookup(name: &str) -> Option<Builtin> {
            Some(match name {
                $($(
                    stringify!($d) => lookup!(@arm $group, $d, f64, f64_arg, F64),
                    stringify!($f) => lookup!(@arm $group, $f, f32, f32_arg, F32),
                )*)*
                _ => return None,
            })
        }
    };
    (@arm unary, $n:ident, $t:ty, $arg:ident, $v:ident) => {
        |_, _, a| {
            let f = c_fn!($n: unsafe extern "C" fn($t) -> $t);
            let x = $arg(a, 0, stringify!($n))?;
            // SAFETY (here and below): `f` is the C library's function of
            // this signature (see `c_fn!`).
            Ok(Value::$v(unsafe { f(x) }))
        }
    };
    (@arm binary, $n:ident, $t:ty, $arg:ident, $v:ident) => {
        |_, _, a| {
            let f = c_fn!($n: unsafe extern "C" fn($t, $t) -> $t);
            let (x, y) = ($arg(a, 0, stringify!($n))?, $arg(a, 1, stringify!($n))?);
            Ok(Value::$v(unsafe { f(x, y) }))
        }
    };
    (@arm ternary, $n:ident, $t:ty, $arg:ident, $v:ident) => {
        |_, _, a| {
            let f = c_fn!($n: unsafe extern "C" fn($t, $t, $t) -> $t);
            let x = $arg(a, 0, stringify!($n))?;
            let (y, z) = ($arg(a, 1, stringify!($n))?, $arg(a, 2, stringify!($n))?);
            Ok(Value::$v(unsafe { f(x, y, z) }))
        }
    };
    (@arm to_int, $n:ident, $t:ty, $arg:ident, $v:ident) => {
        |_, _, a| {
            let f = c_fn!($n: unsafe extern "C" fn($t) -> i32);
            Ok(Value::I32(unsafe { f($arg(a, 0, stringify!($n))?) }))
        }
    };
    (@arm to_long, $n:ident, $t:ty, $arg:ident, $v:ident) => {
        |_, _, a| {
            let f = c_fn!($n: unsafe extern "C" fn($t) -> i64);
            Ok(Value::I64(unsafe { f($arg(a, 0, stringify!($n))?) }))
        }
    };
    (@arm with_int, $n:ident, $t:ty, $arg:ident, $v:ident) => {
        |_, _, a| {
            let f = c_fn!($n: unsafe extern "C" fn($t, i32) -> $t);
            let (x, e) = ($arg(a, 0, stringify!($n))?, int(a, 1, stringify!($n))? as i32);
            Ok(Value::$v(unsafe { f(x, e) }))
        }
    };
    (@arm with_long, $n:ident, $t:ty, $arg:ident, $v:ident) => {
        |_, _, a| {
            let f = c_fn!($n: unsafe extern "C" fn($t, i64) -> $t);
            let (x, e) = ($arg(a, 0, stringify!($n))?, int(a, 1, stringify!($n))?);
            Ok(Value::$v(unsafe { f(x, e) }))
        }
    };
    (@arm out_int, $n:ident, $t:ty, $arg:ident, $v:ident) => {
        |m, _, a| {
            let f = c_fn!($n: unsafe extern "C" fn($t, *mut i32) -> $t);
            let (x, out) = ($arg(a, 0, stringify!($n))?, ptr(a, 1, stringify!($n))?);
            let mut e = 0i32;
            let r = unsafe { f(x, &mut e) };
            m.store(Value::Ptr(out), Value::I32(e))?;
            Ok(Value::$v(r))
        }
    };
    (@arm out_self, $n:ident, $t:ty, $arg:ident, $v:ident) => {
        |m, _, a| {
            let f = c_fn!($n: unsafe extern "C" fn($t, *mut $t) -> $t);
            let (x, out) = ($arg(a, 0, stringify!($n))?, ptr(a, 1, stringify!($n))?);
            let mut w: $t = 0.0;
            let r = unsafe { f(x, &mut w) };
            m.store(Value::Ptr(out), Value::$v(w))?;
            Ok(Value::$v(r))
        }
    };
    (@arm rem_quo, $n:ident, $t:ty, $arg:ident, $v:ident) => {
        |m, _, a| {
            let f = c_fn!($n: unsafe extern "C" fn($t, $t, *mut i32) -> $t);
            let (x, y) = ($arg(a, 0, stringify!($n))?, $arg(a, 1, stringify!($n))?);
            let out = ptr(a, 2, stringify!($n))?;
            let mut q = 0i32;
            let r = unsafe { f(x, y, &mut q) };
            m.store(Value::Ptr(out), Value::I32(q))?;
            Ok(Value::$v(r))
        }
    };
    (@arm parse, $n:ident, $t:ty, $arg:ident, $v:ident) => {
        |m, _, a| {
            let f = c_fn!($n: unsafe extern "C" fn(*const c_char) -> $t);
            let mut tag = m.read_cstr_at(ptr(a, 0, stringify!($n))?, usize::MAX)?;
            tag.push(0);
            Ok(Value::$v(unsafe { f(tag.as_ptr() as *const c_char) }))
        }
    };
}
math_functions!(lookup);
