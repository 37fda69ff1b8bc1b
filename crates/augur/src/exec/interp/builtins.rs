//! The C library functions the interpreter provides without registration.
//!
//! Arguments are converted as a C prototype would convert them (`sqrt(2)`
//! takes the `int` as a `double`), and each function reports what C leaves
//! undefined (`abs(INT_MIN)`, overlapping `memcpy`, `free` of a non-heap
//! pointer) as an error. `exit` and `abort` stop the program with
//! [`Error::Exit`]; `qsort` calls back into interpreted code.

use super::memory::{ptr_add, Memory, Origin};
use super::printf;
use super::value::Value;
use super::Interpreter;
use crate::ir::Intrinsic;
use crate::{Error, Result};
use std::io::Write;

/// A built-in: memory, the output sink, the arguments.
pub(super) type Builtin = fn(&mut Memory, &mut Output, &[Value]) -> Result<Value>;

/// A built-in that calls functions of the program (`qsort`'s comparator):
/// the whole interpreter, the arguments.
pub(super) type Calling = fn(&mut Interpreter, &[Value]) -> Result<Value>;

/// Finds the calling built-in `name`.
pub(super) fn lookup_calling(name: &str) -> Option<Calling> {
    match name {
        "qsort" => Some(qsort),
        _ => None,
    }
}

/// `qsort(base, n, size, compar)`: a stable merge sort of the indices, the
/// comparator called on pointers to the elements where they lie before
/// the sort, then the elements moved into their order at once.
fn qsort(it: &mut Interpreter, a: &[Value]) -> Result<Value> {
    let base = ptr(a, 0, "qsort")?;
    let (n, each) = (size(a, 1, "qsort")?, size(a, 2, "qsort")?);
    let compar = arg(a, 3, "qsort")?;
    let name = super::eval::pointee(&it.memory, compar)
        .map_err(|e| fail(format!("qsort's comparator: {}", message(e))))?;
    let total = n
        .checked_mul(each)
        .ok_or_else(|| fail(format!("qsort of {n} elements of {each} bytes overflows")))?;
    if n < 2 || each == 0 {
        return Ok(Value::Void);
    }
    it.memory.writable(base, total, "qsort")?;
    let element = |i: u64| ptr_add(base, (i * each) as i64);
    // `Ok(true)` when element `i` sorts after element `j`.
    let after = |it: &mut Interpreter, i: u64, j: u64| -> Result<bool> {
        let args = [Value::Ptr(element(i)?), Value::Ptr(element(j)?)];
        let r = super::eval::call_named(it, &name, &args)?;
        r.as_i64()
            .filter(|_| r.is_int())
            .map(|c| c > 0)
            .ok_or_else(|| {
                fail(format!(
                    "qsort's comparator `{name}` returned {r} of type {}, not an int",
                    r.ty()
                ))
            })
    };
    let mut order: Vec<u64> = (0..n).collect();
    let mut scratch = order.clone();
    let mut width = 1;
    while width < order.len() {
        for start in (0..order.len()).step_by(2 * width) {
            let mid = (start + width).min(order.len());
            let end = (start + 2 * width).min(order.len());
            let (mut l, mut r) = (start, mid);
            for slot in &mut scratch[start..end] {
                let left = l < mid && (r == end || !after(it, order[l], order[r])?);
                if left {
                    *slot = order[l];
                    l += 1;
                } else {
                    *slot = order[r];
                    r += 1;
                }
            }
        }
        std::mem::swap(&mut order, &mut scratch);
        width *= 2;
    }
    it.memory.permute(base, each, &order)?;
    Ok(Value::Void)
}

/// The message of an interpreter error.
fn message(e: Error) -> String {
    match e {
        Error::Interp { message } => message,
        e => e.to_string(),
    }
}

/// The built-in that runs intrinsic `op`; `None` for those a loop nest
/// cannot run (barriers, shared memory).
pub(super) fn intrinsic(op: Intrinsic) -> Option<Builtin> {
    match op {
        Intrinsic::Checked => Some(checked),
        Intrinsic::AtomicAdd => Some(atomic_add),
        Intrinsic::FindPair => Some(find_pair),
        Intrinsic::GridSync | Intrinsic::SyncThreads | Intrinsic::Shared => None,
    }
}

/// The bounds check of checked functions (`passes::bounds`).
fn checked(_: &mut Memory, _: &mut Output, a: &[Value]) -> Result<Value> {
    let (i, n, k) = (
        int(a, 0, "@checked")?,
        int(a, 1, "@checked")?,
        int(a, 2, "@checked")?,
    );
    if (0..n).contains(&i) {
        Ok(Value::I64(i))
    } else {
        Err(fail(crate::passes::bounds::message(i, n, k as i32)))
    }
}

/// `@find_pair(p, n, a, b, d)` ([`crate::bytes::find_pair`]). Compiled
/// code may read any of the `n` bytes (16 at a time), so all of them must
/// be readable, even where the pair lies before the end.
fn find_pair(m: &mut Memory, _: &mut Output, a: &[Value]) -> Result<Value> {
    let what = "@find_pair";
    let (p, n) = (ptr(a, 0, what)?, int(a, 1, what)?);
    let (x, y, d) = (
        int(a, 2, what)? as u8,
        int(a, 3, what)? as u8,
        int(a, 4, what)?,
    );
    if n <= 0 || d < 0 || d >= n {
        return Ok(Value::I64(-1));
    }
    let hay = m.read(p, n as u64, "@find_pair read")?;
    Ok(Value::I64(crate::bytes::find_pair_in(hay, x, y, d)))
}

/// Finds the built-in called `name`.
pub(super) fn lookup(name: &str) -> Option<Builtin> {
    Some(match name {
        "printf" => |m, o, a| {
            let fmt = m.read_cstr_at(ptr(a, 0, "printf")?, usize::MAX)?;
            let text = printf::format(m, &fmt, &a[1..])?;
            o.write(&text);
            Ok(Value::I32(text.len() as i32))
        },
        "puts" => |m, o, a| {
            let mut text = m.read_cstr_at(ptr(a, 0, "puts")?, usize::MAX)?;
            text.push(b'\n');
            o.write(&text);
            Ok(Value::I32(text.len() as i32))
        },
        "putchar" => |_, o, a| {
            let c = int(a, 0, "putchar")? as u8;
            o.write(&[c]);
            Ok(Value::I32(c as i32))
        },
        "malloc" => |m, _, a| {
            Ok(Value::Ptr(m.new_alloc(
                size(a, 0, "malloc")?,
                Origin::Malloc,
                false,
            )?))
        },
        "calloc" => |m, _, a| {
            let (n, each) = (size(a, 0, "calloc")?, size(a, 1, "calloc")?);
            let total = n
                .checked_mul(each)
                .ok_or_else(|| fail(format!("calloc({n}, {each}) overflows")))?;
            Ok(Value::Ptr(m.new_alloc(total, Origin::Malloc, true)?))
        },
        "realloc" => |m, _, a| {
            let p = ptr(a, 0, "realloc")?;
            Ok(Value::Ptr(m.realloc(p, size(a, 1, "realloc")?)?))
        },
        "free" => |m, _, a| {
            m.free(Value::Ptr(ptr(a, 0, "free")?))?;
            Ok(Value::Void)
        },
        "memcpy" => |m, _, a| {
            let d = ptr(a, 0, "memcpy")?;
            m.copy(d, ptr(a, 1, "memcpy")?, size(a, 2, "memcpy")?)?;
            Ok(Value::Ptr(d))
        },
        "memmove" => |m, _, a| {
            let d = ptr(a, 0, "memmove")?;
            m.move_bytes(d, ptr(a, 1, "memmove")?, size(a, 2, "memmove")?)?;
            Ok(Value::Ptr(d))
        },
        "memcmp" => |m, _, a| {
            let (x, y) = (ptr(a, 0, "memcmp")?, ptr(a, 1, "memcmp")?);
            Ok(Value::I32(m.compare(x, y, size(a, 2, "memcmp")?)?))
        },
        "memchr" => |m, _, a| {
            let s = ptr(a, 0, "memchr")?;
            let c = int(a, 1, "memchr")? as u8;
            let n = size(a, 2, "memchr")?;
            // C's memchr stops at the byte it finds: only the bytes before
            // it must be readable. All `n` at once where they are, else
            // one by one, for the error at the first that is not.
            let found = match m.read(s, n, "memchr read") {
                Ok(bytes) => bytes.iter().position(|&b| b == c).map(|k| k as u64),
                Err(_) => {
                    let mut found = None;
                    for k in 0..n {
                        if m.read(ptr_add(s, k as i64)?, 1, "memchr read")?[0] == c {
                            found = Some(k);
                            break;
                        }
                    }
                    found
                }
            };
            match found {
                Some(k) => Ok(Value::Ptr(ptr_add(s, k as i64)?)),
                None => Ok(Value::Ptr(0)),
            }
        },
        "strlen" => |m, _, a| {
            let s = ptr(a, 0, "strlen")?;
            let mut n = 0;
            while m.string_byte(s, ptr_add(s, n)?, "strlen")? != 0 {
                n += 1;
            }
            Ok(Value::U64(n as u64))
        },
        "strcmp" => |m, _, a| {
            let (x, y) = (ptr(a, 0, "strcmp")?, ptr(a, 1, "strcmp")?);
            Ok(Value::I32(strncmp(m, x, y, u64::MAX, "strcmp")?))
        },
        "strncmp" => |m, _, a| {
            let (x, y) = (ptr(a, 0, "strncmp")?, ptr(a, 1, "strncmp")?);
            let n = size(a, 2, "strncmp")?;
            Ok(Value::I32(strncmp(m, x, y, n, "strncmp")?))
        },
        "exit" => |_, _, a| {
            Err(Error::Exit {
                status: Some(int(a, 0, "exit")? as i32),
                location: None,
            })
        },
        "abort" => |_, _, _| {
            Err(Error::Exit {
                status: None,
                location: None,
            })
        },
        "memset" => |m, _, a| {
            let p = ptr(a, 0, "memset")?;
            m.fill(p, int(a, 1, "memset")? as u8, size(a, 2, "memset")?)?;
            Ok(Value::Ptr(p))
        },
        "abs" => |_, _, a| {
            let v = int(a, 0, "abs")? as i32;
            v.checked_abs()
                .map(Value::I32)
                .ok_or_else(|| fail("abs of INT_MIN overflows".into()))
        },
        "labs" => |_, _, a| {
            let v = int(a, 0, "labs")?;
            v.checked_abs()
                .map(Value::I64)
                .ok_or_else(|| fail("labs of LONG_MIN overflows".into()))
        },
        _ => return super::math::lookup(name),
    })
}

/// `strncmp` (`strcmp` with `n` the largest size): the difference of the
/// first bytes (unsigned) that differ in the first `n`, or 0.
fn strncmp(m: &Memory, x: u64, y: u64, n: u64, func: &str) -> Result<i32> {
    let mut i = 0;
    while i < n {
        let off = i as i64;
        let b = m.string_byte(x, ptr_add(x, off)?, func)?;
        let c = m.string_byte(y, ptr_add(y, off)?, func)?;
        if b != c || b == 0 {
            return Ok(b as i32 - c as i32);
        }
        i += 1;
    }
    Ok(0)
}

/// `gpu::atomic_add`: adds to `*p` (integers wrap, as atomics do) and
/// gives the old value. Atomic updates of one element by several threads
/// are no race, so the race log does not see them; any other access to the
/// element from another thread still is.
fn atomic_add(m: &mut Memory, _: &mut Output, a: &[Value]) -> Result<Value> {
    let p = ptr(a, 0, "atomic_add")?;
    let v = arg(a, 1, "atomic_add")?;
    let s = v
        .scalar()
        .ok_or_else(|| fail(format!("atomic_add of a {}", v.ty())))?;
    let races = m.set_races(None);
    let result = m.load_scalar(p, s).and_then(|old| {
        let sum = match (old, v) {
            (Value::I32(x), Value::I32(y)) => Value::I32(x.wrapping_add(y)),
            (Value::U32(x), Value::U32(y)) => Value::U32(x.wrapping_add(y)),
            (Value::I64(x), Value::I64(y)) => Value::I64(x.wrapping_add(y)),
            (Value::U64(x), Value::U64(y)) => Value::U64(x.wrapping_add(y)),
            (Value::F32(x), Value::F32(y)) => Value::F32(x + y),
            (Value::F64(x), Value::F64(y)) => Value::F64(x + y),
            _ => {
                return Err(fail(format!(
                    "atomic_add of a {} to a {}",
                    v.ty(),
                    old.ty()
                )))
            }
        };
        m.store_at(p, sum)?;
        Ok(old)
    });
    m.set_races(races);
    result
}

fn fail(message: String) -> Error {
    Error::Interp { message }
}

fn arg(a: &[Value], i: usize, func: &str) -> Result<Value> {
    a.get(i).copied().ok_or_else(|| {
        fail(format!(
            "{func} takes at least {} arguments, got {}",
            i + 1,
            a.len()
        ))
    })
}

/// An integer argument (any integer type, as a prototype would convert it).
pub(super) fn int(a: &[Value], i: usize, func: &str) -> Result<i64> {
    let v = arg(a, i, func)?;
    v.as_i64().ok_or_else(|| {
        fail(format!(
            "argument {} of {func} must be an integer, got {}",
            i + 1,
            v.ty()
        ))
    })
}

/// A `size_t` argument; a negative signed value is an error rather than the
/// huge size C would turn it into.
fn size(a: &[Value], i: usize, func: &str) -> Result<u64> {
    let v = arg(a, i, func)?;
    let n = int(a, i, func)?;
    let signed = v.scalar().is_some_and(|s| s.is_signed());
    if signed && n < 0 {
        return Err(fail(format!("{func} called with the negative size {n}")));
    }
    Ok(n as u64)
}

pub(super) fn ptr(a: &[Value], i: usize, func: &str) -> Result<u64> {
    let v = arg(a, i, func)?;
    v.as_ptr().ok_or_else(|| {
        fail(format!(
            "argument {} of {func} must be a pointer, got {}",
            i + 1,
            v.ty()
        ))
    })
}

pub(super) fn f64_arg(a: &[Value], i: usize, func: &str) -> Result<f64> {
    let v = arg(a, i, func)?;
    match v {
        Value::F64(x) => Ok(x),
        Value::F32(x) => Ok(x as f64),
        Value::U64(x) => Ok(x as f64),
        v => v.as_i64().map(|x| x as f64).ok_or_else(|| {
            fail(format!(
                "argument {} of {func} must be a number, got {}",
                i + 1,
                v.ty()
            ))
        }),
    }
}

pub(super) fn f32_arg(a: &[Value], i: usize, func: &str) -> Result<f32> {
    let v = arg(a, i, func)?;
    match v {
        Value::F32(x) => Ok(x),
        Value::F64(x) => Ok(x as f32),
        Value::U64(x) => Ok(x as f32),
        v => v.as_i64().map(|x| x as f32).ok_or_else(|| {
            fail(format!(
                "argument {} of {func} must be a number, got {}",
                i + 1,
                v.ty()
            ))
        }),
    }
}

/// Everything the program wrote to `stdout`, as text.
#[derive(Default, Debug)]
pub(super) struct Output {
    text: String,
    /// The start of a UTF-8 sequence whose remaining bytes have not been
    /// written yet (`putchar` writes one byte at a time).
    pending: Vec<u8>,
    /// Also write to the process's stdout.
    pub echo: bool,
}

impl Output {
    /// Appends bytes; invalid UTF-8 becomes U+FFFD.
    pub fn write(&mut self, bytes: &[u8]) {
        if self.echo {
            // Echo is best effort: a closed stdout must not stop the program.
            let _ = std::io::stdout().write_all(bytes);
        }
        self.pending.extend_from_slice(bytes);
        let mut rest: &[u8] = &self.pending;
        loop {
            match std::str::from_utf8(rest) {
                Ok(s) => {
                    self.text.push_str(s);
                    rest = &[];
                    break;
                }
                Err(e) => {
                    let (valid, tail) = rest.split_at(e.valid_up_to());
                    self.text
                        .push_str(std::str::from_utf8(valid).expect("checked valid"));
                    match e.error_len() {
                        // An incomplete sequence at the end: wait for more bytes.
                        None => {
                            rest = tail;
                            break;
                        }
                        Some(n) => {
                            self.text.push(char::REPLACEMENT_CHARACTER);
                            rest = &tail[n..];
                        }
                    }
                }
            }
        }
        self.pending = rest.to_vec();
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    pub fn take(&mut self) -> String {
        std::mem::take(&mut self.text)
    }
}
