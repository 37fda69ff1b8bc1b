//! `printf` formatting, byte for byte what glibc writes.
//!
//! Supported: conversions `d i u o x X c s f F e E g G p %`, flags
//! `- + space 0 #`, width and precision (both may be `*`), and the length
//! modifiers `hh h l ll j z t`. An argument whose type does not match its
//! conversion is an error: C would print garbage (what `-Wformat` warns of).

use super::memory::Memory;
use super::value::Value;
use crate::{Error, Result};

fn err<T>(message: String) -> Result<T> {
    Err(Error::Interp {
        message: format!("printf: {message}"),
    })
}

/// One parsed conversion specification.
#[derive(Default)]
struct Spec {
    left: bool,
    plus: bool,
    space: bool,
    zero: bool,
    alt: bool,
    width: usize,
    precision: Option<usize>,
    /// True for `l`, `ll`, `j`, `z`, `t` (64-bit arguments).
    long: bool,
    /// 1 for `hh`, 2 for `h`, 0 for none or long.
    short: u8,
    conv: u8,
}

/// The arguments after the format, consumed in order.
struct Args<'a> {
    values: &'a [Value],
    next: usize,
}

impl Args<'_> {
    fn next(&mut self, conv: u8) -> Result<Value> {
        let v = self.values.get(self.next).copied();
        self.next += 1;
        v.map_or_else(
            || err(format!("too few arguments for `%{}`", conv as char)),
            Ok,
        )
    }

    /// An argument of a type that is passed as `int` (what `*` and `%c` take).
    fn int(&mut self, conv: u8) -> Result<i64> {
        match self.next(conv)? {
            v @ (Value::Bool(_)
            | Value::Char(_)
            | Value::I8(_)
            | Value::I16(_)
            | Value::I32(_)
            | Value::U8(_)
            | Value::U16(_)
            | Value::U32(_)) => Ok(v.as_i64().expect("an integer")),
            v => err(format!(
                "`%{}` expects an int argument, got {}",
                conv as char,
                v.ty()
            )),
        }
    }
}

/// Formats `fmt` with `args` as glibc's `printf` does.
pub(super) fn format(mem: &Memory, fmt: &[u8], args: &[Value]) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(fmt.len());
    let mut args = Args {
        values: args,
        next: 0,
    };
    let mut i = 0;
    while i < fmt.len() {
        if fmt[i] != b'%' {
            out.push(fmt[i]);
            i += 1;
            continue;
        }
        let spec = parse(fmt, &mut i, &mut args)?;
        convert(mem, &spec, &mut args, &mut out)?;
    }
    Ok(out)
}

/// Parses the specification starting at the `%` at `fmt[*i]`, leaving `*i`
/// after its conversion character.
fn parse(fmt: &[u8], i: &mut usize, args: &mut Args) -> Result<Spec> {
    let mut s = Spec::default();
    *i += 1;
    let at = |i: usize| fmt.get(i).copied().unwrap_or(0);
    loop {
        match at(*i) {
            b'-' => s.left = true,
            b'+' => s.plus = true,
            b' ' => s.space = true,
            b'0' => s.zero = true,
            b'#' => s.alt = true,
            _ => break,
        }
        *i += 1;
    }
    if at(*i) == b'*' {
        *i += 1;
        let w = args.int(b'*')?;
        s.left |= w < 0;
        s.width = w.unsigned_abs() as usize;
    } else {
        s.width = number(fmt, i);
    }
    if at(*i) == b'.' {
        *i += 1;
        s.precision = if at(*i) == b'*' {
            *i += 1;
            // A negative precision counts as none.
            usize::try_from(args.int(b'*')?).ok()
        } else {
            Some(number(fmt, i))
        };
    }
    match (at(*i), at(*i + 1)) {
        (b'h', b'h') => (s.short, *i) = (1, *i + 2),
        (b'h', _) => (s.short, *i) = (2, *i + 1),
        (b'l', b'l') => (s.long, *i) = (true, *i + 2),
        (b'l' | b'j' | b'z' | b't', _) => (s.long, *i) = (true, *i + 1),
        _ => {}
    }
    s.conv = at(*i);
    if s.conv == 0 {
        return err("the format ends inside a conversion".into());
    }
    *i += 1;
    Ok(s)
}

fn number(fmt: &[u8], i: &mut usize) -> usize {
    let mut n = 0usize;
    while let Some(d) = fmt.get(*i).filter(|b| b.is_ascii_digit()) {
        n = n.saturating_mul(10).saturating_add((d - b'0') as usize);
        *i += 1;
    }
    n
}

fn convert(mem: &Memory, s: &Spec, args: &mut Args, out: &mut Vec<u8>) -> Result<()> {
    match s.conv {
        b'%' => out.push(b'%'),
        b'd' | b'i' => {
            let v = int_arg(s, args)?;
            let v = match s.short {
                1 => v as i8 as i64,
                2 => v as i16 as i64,
                _ if s.long => v,
                _ => v as i32 as i64,
            };
            integer(s, v < 0, v.unsigned_abs(), out);
        }
        b'u' | b'o' | b'x' | b'X' => {
            let v = int_arg(s, args)? as u64;
            let v = match s.short {
                1 => v as u8 as u64,
                2 => v as u16 as u64,
                _ if s.long => v,
                _ => v as u32 as u64,
            };
            integer(s, false, v, out);
        }
        b'c' => {
            let c = args.int(b'c')? as u8;
            pad(s, &[], &[c], out);
        }
        b's' => string(mem, s, args, out)?,
        b'p' => pointer(s, args, out)?,
        b'f' | b'F' | b'e' | b'E' | b'g' | b'G' => {
            let v = match args.next(s.conv)? {
                Value::F64(v) => v,
                Value::F32(v) => v as f64,
                v => {
                    return err(format!(
                        "`%{}` expects a double, got {}",
                        s.conv as char,
                        v.ty()
                    ))
                }
            };
            float(s, v, out);
        }
        c => return err(format!("unsupported conversion `%{}`", c as char)),
    }
    Ok(())
}

/// An integer argument whose width matches the length modifier.
fn int_arg(s: &Spec, args: &mut Args) -> Result<i64> {
    if !s.long {
        return args.int(s.conv);
    }
    match args.next(s.conv)? {
        Value::I64(v) => Ok(v),
        Value::U64(v) => Ok(v as i64),
        v => err(format!(
            "`%l{}` expects a 64-bit integer argument, got {}",
            s.conv as char,
            v.ty()
        )),
    }
}

/// Writes `prefix` (sign, `0x`) and `body` padded to the width: spaces on
/// the left, spaces on the right for `-`, or zeros after the prefix for `0`
/// (`zero_ok` is false where `0` does not apply).
fn pad_with(s: &Spec, prefix: &[u8], body: &[u8], zero_ok: bool, out: &mut Vec<u8>) {
    let fill = s.width.saturating_sub(prefix.len() + body.len());
    if s.left {
        out.extend_from_slice(prefix);
        out.extend_from_slice(body);
        out.extend(std::iter::repeat_n(b' ', fill));
    } else if s.zero && zero_ok {
        out.extend_from_slice(prefix);
        out.extend(std::iter::repeat_n(b'0', fill));
        out.extend_from_slice(body);
    } else {
        out.extend(std::iter::repeat_n(b' ', fill));
        out.extend_from_slice(prefix);
        out.extend_from_slice(body);
    }
}

fn pad(s: &Spec, prefix: &[u8], body: &[u8], out: &mut Vec<u8>) {
    pad_with(s, prefix, body, false, out);
}

fn sign(s: &Spec, negative: bool) -> &'static [u8] {
    match () {
        _ if negative => b"-",
        _ if s.plus => b"+",
        _ if s.space => b" ",
        _ => b"",
    }
}

fn integer(s: &Spec, negative: bool, mag: u64, out: &mut Vec<u8>) {
    let mut digits = match s.conv {
        b'o' => format!("{mag:o}"),
        b'x' => format!("{mag:x}"),
        b'X' => format!("{mag:X}"),
        _ => mag.to_string(),
    }
    .into_bytes();
    if s.precision == Some(0) && mag == 0 {
        digits.clear();
    }
    if let Some(p) = s.precision {
        while digits.len() < p {
            digits.insert(0, b'0');
        }
    }
    let prefix: &[u8] = match s.conv {
        b'd' | b'i' => sign(s, negative),
        b'o' if s.alt && digits.first() != Some(&b'0') => {
            digits.insert(0, b'0');
            b""
        }
        b'x' if s.alt && mag != 0 => b"0x",
        b'X' if s.alt && mag != 0 => b"0X",
        _ => b"",
    };
    // With a precision the `0` flag is ignored for integers.
    pad_with(s, prefix, &digits, s.precision.is_none(), out);
}

fn string(mem: &Memory, s: &Spec, args: &mut Args, out: &mut Vec<u8>) -> Result<()> {
    let p = match args.next(b's')? {
        Value::Ptr(0) => return err("`%s` with a null pointer".into()),
        Value::Ptr(p) => p,
        v => return err(format!("`%s` expects a char pointer, got {}", v.ty())),
    };
    let bytes = mem.read_cstr_at(p, s.precision.unwrap_or(usize::MAX))?;
    pad(s, &[], &bytes, out);
    Ok(())
}

fn pointer(s: &Spec, args: &mut Args, out: &mut Vec<u8>) -> Result<()> {
    match args.next(b'p')? {
        Value::Ptr(0) => pad(s, &[], b"(nil)", out),
        // glibc prints other pointers as `%#lx`.
        Value::Ptr(p) => {
            let mut digits = format!("{p:x}").into_bytes();
            while digits.len() < s.precision.unwrap_or(0) {
                digits.insert(0, b'0');
            }
            pad_with(s, b"0x", &digits, s.precision.is_none(), out);
        }
        v => return err(format!("`%p` expects a pointer, got {}", v.ty())),
    }
    Ok(())
}

fn float(s: &Spec, v: f64, out: &mut Vec<u8>) {
    let upper = s.conv.is_ascii_uppercase();
    let prefix = sign(s, v.is_sign_negative());
    if !v.is_finite() {
        let body = match (v.is_nan(), upper) {
            (true, false) => "nan",
            (true, true) => "NAN",
            (false, false) => "inf",
            (false, true) => "INF",
        };
        return pad(s, prefix, body.as_bytes(), out);
    }
    let a = v.abs();
    let p = s.precision.unwrap_or(6);
    let mut body = match s.conv.to_ascii_lowercase() {
        b'f' => fixed(a, p, s.alt),
        b'e' => exponent(a, p, s.alt),
        _ => general(a, p, s.alt),
    };
    if upper {
        body.make_ascii_uppercase();
    }
    pad_with(s, prefix, body.as_bytes(), true, out);
}

/// `%f` of a non-negative finite value.
fn fixed(a: f64, p: usize, alt: bool) -> String {
    let mut t = format!("{a:.p$}");
    if alt && p == 0 {
        t.push('.');
    }
    t
}

/// `%e` of a non-negative finite value: `d.ddde+XX`.
fn exponent(a: f64, p: usize, alt: bool) -> String {
    let (mantissa, exp) = split_exp(a, p);
    let dot = if alt && p == 0 { "." } else { "" };
    let sign = if exp < 0 { '-' } else { '+' };
    format!("{mantissa}{dot}e{sign}{:02}", exp.unsigned_abs())
}

/// Rust's `{:.pe}` as (mantissa, exponent): both round exactly.
fn split_exp(a: f64, p: usize) -> (String, i32) {
    let t = format!("{a:.p$e}");
    let (m, e) = t.split_once('e').expect("an exponent");
    (m.to_string(), e.parse().expect("a decimal exponent"))
}

/// `%g`: `%e` or `%f` by the exponent, trailing zeros removed unless `#`.
fn general(a: f64, p: usize, alt: bool) -> String {
    let p = p.max(1);
    let x = if a == 0.0 { 0 } else { split_exp(a, p - 1).1 };
    // glibc picks the style from the unrounded exponent: a value just below
    // 10^P that rounds up to it comes out as `1.e+P` under `#`, without the
    // zeros the standard asks for (seen with glibc 2.36). Mimicked where 10^P
    // is exact, which covers every precision that matters.
    if alt && p > 1 && x == p as i32 && p <= 22 && a < 10f64.powi(p as i32) {
        return exponent(a, 0, true);
    }
    let mut t = if (x as i64) < p as i64 && x >= -4 {
        fixed(a, (p as i64 - 1 - x as i64) as usize, alt)
    } else {
        exponent(a, p - 1, alt)
    };
    if !alt {
        let (num, exp) = match t.find('e') {
            Some(at) => t.split_at(at),
            None => (t.as_str(), ""),
        };
        if num.contains('.') {
            let num = num.trim_end_matches('0').trim_end_matches('.');
            t = format!("{num}{exp}");
        }
    }
    t
}
