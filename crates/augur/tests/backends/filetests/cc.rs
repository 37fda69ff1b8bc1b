//! The `cc` step: the function's C unit, compiled by the system's C
//! compiler with a `main` that makes one call and reports it, run as a
//! process.

use super::args::{self, Arg};
use super::Fail;
use augur::ir::{Function, Scalar, Type};
use std::fmt::Write;
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};

/// Compiles `f` with a `main` calling it on the arguments in `text`, runs
/// it, and reports the run as the interpreter's `run` step does.
#[augur::staged]
pub(super) fn run(f: &Function, text: &str) -> Result<String, Fail> {
    let args = args::parse(f, text)?;
    if f.ret != Type::Void && kind(&f.ret).is_none() {
        return Err(Fail::Case(format!("no results of type {} in `cc`", f.ret)));
    }
    let source = format!("{}\n{}", augur::codegen::write_function(f), main(f, &args));
    static CASES: AtomicU32 = AtomicU32::new(0);
    let dir = std::env::temp_dir().join(format!(
        "augur-filetest-{}-{}",
        std::process::id(),
        CASES.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir).map_err(|e| Fail::Case(e.to_string()))?;
    let out = compile_and_run(&dir, &source);
    let _ = std::fs::remove_dir_all(&dir);
    let (stdout, stderr, ok) = out?;
    let mut values = stderr.lines().filter_map(|l| l.strip_prefix("@@"));
    let printed = stdout;
    if !ok {
        let said: Vec<&str> = stderr.lines().filter(|l| !l.starts_with("@@")).collect();
        return Ok(args::report(Err(said.join("\n")), &[], &printed));
    }
    let mut next = |ty: &Type| show(ty, values.next().unwrap_or("?"));
    let result = match f.ret {
        Type::Void => "void".to_string(),
        ref t => next(t),
    };
    let mut arrays = Vec::new();
    for (k, a) in args.iter().enumerate() {
        if let Arg::Array(elem, items) = a {
            arrays.push((k, items.iter().map(|_| next(elem)).collect()));
        }
    }
    Ok(args::report(Ok(result), &arrays, &printed))
}

/// Writes `source`, compiles it and runs the program: its stdout, its
/// stderr and whether it exited normally.
#[augur::staged]
fn compile_and_run(dir: &std::path::Path, source: &str) -> Result<(String, String, bool), Fail> {
    let (c, exe) = (dir.join("case.c"), dir.join("case"));
    std::fs::write(&c, source).map_err(|e| Fail::Case(e.to_string()))?;
    let cc = std::env::var("CC").ok().filter(|s| !s.is_empty());
    let cc = cc.unwrap_or_else(|| "cc".to_string());
    let mut words = cc.split_whitespace();
    let program = words.next().unwrap_or("cc");
    let built = Command::new(program)
        .args(words)
        .args(["-std=c99", "-Wall", "-Werror", "-O1", "-o"])
        .arg(&exe)
        .arg(&c)
        .arg("-lm")
        .output()
        .map_err(|e| Fail::Case(format!("running `{cc}`: {e}")))?;
    if !built.status.success() {
        let why = String::from_utf8_lossy(&built.stderr);
        return Err(Fail::Case(format!(
            "the C does not compile:\n{why}\n{source}"
        )));
    }
    let ran = Command::new(&exe)
        .output()
        .map_err(|e| Fail::Case(format!("running the program: {e}")))?;
    Ok((
        String::from_utf8_lossy(&ran.stdout).into_owned(),
        String::from_utf8_lossy(&ran.stderr).into_owned(),
        ran.status.success(),
    ))
}

/// How the values of a type are printed in C and read back.
enum Kind {
    Bool,
    Signed,
    Unsigned,
    F32,
    F64,
}

#[augur::staged]
fn kind(ty: &Type) -> Option<Kind> {
    Some(match ty {
        Type::Scalar(Scalar::Bool) => Kind::Bool,
        Type::Scalar(Scalar::I32 | Scalar::I64) => Kind::Signed,
        Type::Scalar(Scalar::U8 | Scalar::U32 | Scalar::U64) => Kind::Unsigned,
        Type::Scalar(Scalar::F32) => Kind::F32,
        Type::Scalar(Scalar::F64) => Kind::F64,
        _ => return None,
    })
}

/// The C type of a scalar.
#[augur::staged]
fn c_type(ty: &Type) -> &'static str {
    match ty {
        Type::Scalar(Scalar::Bool) => "bool",
        Type::Scalar(Scalar::I32) => "int32_t",
        Type::Scalar(Scalar::I64) => "int64_t",
        Type::Scalar(Scalar::U8) => "uint8_t",
        Type::Scalar(Scalar::U32) => "uint32_t",
        Type::Scalar(Scalar::U64) => "uint64_t",
        Type::Scalar(Scalar::F32) => "float",
        _ => "double",
    }
}

/// A C constant of type `ty` from an argument's text.
#[augur::staged]
fn literal(ty: &Type, text: &str) -> String {
    match kind(ty) {
        Some(Kind::Bool) => (if text == "true" { "1" } else { "0" }).to_string(),
        Some(Kind::Signed) => format!("({})INT64_C({text})", c_type(ty)),
        Some(Kind::Unsigned) => format!("({})UINT64_C({text})", c_type(ty)),
        _ => format!("({})({text})", c_type(ty)),
    }
}

/// `fprintf(stderr, ...)` of `value` of type `ty`, as one `@@` line.
#[augur::staged]
fn print(ty: &Type, value: &str) -> String {
    let (fmt, cast) = match kind(ty) {
        Some(Kind::Bool) => ("%d", "int"),
        Some(Kind::Signed) => ("%lld", "long long"),
        Some(Kind::Unsigned) => ("%llu", "unsigned long long"),
        Some(Kind::F32) => ("%.9g", "double"),
        _ => ("%.17g", "double"),
    };
    format!("  fprintf(stderr, \"@@{fmt}\\n\", ({cast})({value}));\n")
}

/// A value printed by [`print`], shown as the interpreter shows it.
#[augur::staged]
fn show(ty: &Type, text: &str) -> String {
    match kind(ty) {
        Some(Kind::Bool) => (text != "0").to_string(),
        Some(Kind::F32) => text
            .parse::<f32>()
            .map_or(text.to_string(), |x| format!("{x:?}")),
        Some(Kind::F64) => text
            .parse::<f64>()
            .map_or(text.to_string(), |x| format!("{x:?}")),
        _ => text.to_string(),
    }
}

/// `main`: the arrays, the call, then the result and each array's
/// elements on stderr.
#[augur::staged]
fn main(f: &Function, args: &[Arg]) -> String {
    let mut m = String::from("#include <stdio.h>\n\nint main(void) {\n");
    let mut call = Vec::new();
    for (k, a) in args.iter().enumerate() {
        match a {
            Arg::Scalar(ty, t) => call.push(literal(ty, t)),
            Arg::Array(elem, items) => {
                let init: Vec<String> = items.iter().map(|t| literal(elem, t)).collect();
                let _ = writeln!(
                    m,
                    "  static {} a{k}[{}] = {{{}}};",
                    c_type(elem),
                    items.len().max(1),
                    init.join(", ")
                );
                call.push(format!("a{k}"));
            }
        }
    }
    let call = format!("{}({})", f.name, call.join(", "));
    match f.ret {
        Type::Void => {
            let _ = writeln!(m, "  {call};");
        }
        ref t => {
            let _ = writeln!(m, "  {} r = {call};", c_type(t));
        }
    }
    m.push_str("  fflush(stdout);\n");
    if f.ret != Type::Void {
        m.push_str(&print(&f.ret, "r"));
    }
    for (k, a) in args.iter().enumerate() {
        if let Arg::Array(elem, items) = a {
            for i in 0..items.len() {
                m.push_str(&print(elem, &format!("a{k}[{i}]")));
            }
        }
    }
    m.push_str("  return 0;\n}\n");
    m
}
