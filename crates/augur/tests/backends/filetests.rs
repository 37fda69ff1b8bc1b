//! File tests in Cranelift's style: each file under `crates/augur/filetests/`
//! is one case of IR in its text form, run through the steps its first
//! line names, and compared with the text after its `// expect:` line.
//!
//! ```text
//! // test: copy_elim dead
//! // (why the case matters)
//! fn f(x: i32) -> i32 { .. }
//! // expect:
//! fn f(x: i32) -> i32 { .. }
//! ```
//!
//! Steps, in order:
//! - a pass (`augur::passes::run_named`: `scope`, `copy_elim`, `dead`,
//!   `fold`, `control`, `naming`) or structuring's goto removal
//!   (`augur::structure::run_named`: `breaks`, `guards`; `// gotos
//!   removed: N` heads the output);
//! - `bounds=P:L,..` makes the function checked (`passes::bounds`), with
//!   the slices (pointer parameter `P`, length parameter `L`); `bounds`
//!   alone, with none;
//! - `simulate`: the CPU simulation of its launches (`codegen::cuda::simulate`);
//! - `verify`: the verifier alone.
//!
//! The IR is verified after each step. Output steps add to the output,
//! anywhere in the list (so `run=1 guards run=1` shows a pass keeping the
//! meaning):
//! - `print`: the IR's text;
//! - `c`: the C unit (`codegen::write_function`);
//! - `cuda`: the CUDA unit (`codegen::cuda::write_cuda`);
//! - `run=A,..|B,..`: for each `|`-separated list of arguments (numbers,
//!   or `[1, 2]` for a pointer parameter, allocated in the interpreter's
//!   memory), the interpreter's run: `result: V` (or `error: ..`), each
//!   array argument's contents after the run, and what the program
//!   printed.
//!
//! Without an output step the output is the IR's text after the last step.
//!
//! A step that fails gives `error: ` and its message as the output, so
//! errors are file tests too. `AUGUR_BLESS=1` rewrites each file's
//! expectation with what the steps give (review the diff before
//! committing it).

use augur::exec::{Interpreter, Value};
use augur::ir::{Function, Scalar, Type};
use std::path::{Path, PathBuf};

fn cases(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            cases(&p, out);
        } else if p.extension().is_some_and(|x| x == "ir") {
            out.push(p);
        }
    }
}

/// What running `text`'s steps gives, in the expectation's form; `Err`
/// for a malformed case (not for a step that fails).
fn run(text: &str) -> Result<String, String> {
    let header = text.lines().next().unwrap_or_default();
    let steps = words(
        header
            .strip_prefix("// test:")
            .ok_or("the first line must be `// test: <steps>`")?,
    );
    let input = text.split("\n// expect:\n").next().unwrap_or_default();
    let mut f = match augur::ir::parse(input) {
        Ok(f) => f,
        Err(e) => return Ok(format!("error: {e}\n")),
    };
    let mut removed = None;
    let mut out: Option<String> = None;
    for step in &steps {
        let result = apply(step, &mut f, &mut removed);
        let o = out.get_or_insert_with(String::new);
        match result {
            Ok(Some(text)) => o.push_str(&text),
            Ok(None) => {}
            Err(Fail::Step(e)) => return Ok(format!("{o}error: {e}\n")),
            Err(Fail::Case(e)) => return Err(e),
        }
        if let Err(e) = augur::ir::verify::verify(&f) {
            return Ok(format!("{o}error: `{step}` left unverified IR: {e}\n"));
        }
    }
    let mut out = match out {
        Some(o) if !o.is_empty() => o,
        _ => f.to_string(),
    };
    if let Some(n) = removed {
        out = format!("// gotos removed: {n}\n{out}");
    }
    Ok(out)
}

/// `text` split at the white space outside brackets (`run=[1, 2]` is one).
fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let (mut depth, mut cur) = (0, String::new());
    for c in text.chars() {
        match c {
            '[' => depth += 1,
            ']' => depth -= 1,
            c if c.is_whitespace() && depth == 0 => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// Why a step gave no output: it failed, or the case is malformed.
enum Fail {
    Step(String),
    Case(String),
}

/// Runs one step on `f`; `Some` output for the output steps.
fn apply(step: &str, f: &mut Function, removed: &mut Option<u64>) -> Result<Option<String>, Fail> {
    let fail = |e: augur::Error| Fail::Step(e.to_string());
    let (name, arg) = step.split_once('=').unwrap_or((step, ""));
    match name {
        "print" => return Ok(Some(f.to_string())),
        "c" => return Ok(Some(augur::codegen::write_function(f))),
        "cuda" => {
            return augur::codegen::cuda::write_cuda(f, "")
                .map(Some)
                .map_err(fail)
        }
        "run" => {
            let runs: Result<Vec<String>, Fail> = arg.split('|').map(|a| interpret(f, a)).collect();
            return runs.map(|r| Some(r.concat()));
        }
        "simulate" => *f = augur::codegen::cuda::simulate(f).map_err(fail)?,
        "bounds" => {
            let slices = slices(arg).map_err(Fail::Case)?;
            let loc = augur::ir::SrcLoc {
                file: "filetest",
                line: 1,
                col: 1,
            };
            augur::passes::bounds::run(f, &slices, loc).map_err(fail)?;
        }
        "verify" => {}
        _ => {
            if let Some(r) = augur::passes::run_named(name, f) {
                r.map_err(fail)?;
            } else if let Some(r) = augur::structure::run_named(name, f) {
                *removed.get_or_insert(0) += r.map_err(fail)?;
            } else {
                return Err(Fail::Case(format!("no step is named `{name}`")));
            }
        }
    }
    Ok(None)
}

/// `0:1,2:3`: pairs of parameter positions.
fn slices(arg: &str) -> Result<Vec<(usize, usize)>, String> {
    let pair = |p: &str| -> Option<(usize, usize)> {
        let (a, b) = p.split_once(':')?;
        Some((a.parse().ok()?, b.parse().ok()?))
    };
    arg.split(',')
        .filter(|p| !p.is_empty())
        .map(|p| pair(p).ok_or(format!("`{p}` is not `pointer:length`")))
        .collect()
}

/// Runs `f` in the interpreter on `args` (see the module docs).
fn interpret(f: &Function, args: &str) -> Result<String, Fail> {
    let texts: Vec<String> = split_args(args)
        .iter()
        .map(|t| t.trim().to_string())
        .collect();
    if texts.len() != f.params.len() {
        return Err(Fail::Case(format!(
            "`run` has {} arguments for {} parameters",
            texts.len(),
            f.params.len()
        )));
    }
    let mut it = Interpreter::new();
    let mut values = Vec::new();
    let mut arrays = Vec::new();
    for (k, (text, &p)) in texts.iter().zip(&f.params).enumerate() {
        let ty = f.vars[p].ty;
        let v = match text.strip_prefix('[').and_then(|t| t.strip_suffix(']')) {
            Some(items) => {
                let elem = *ty.element().ok_or(Fail::Case(format!(
                    "an array for parameter {k}, of type {ty}"
                )))?;
                let items: Vec<&str> = items.split(',').map(str::trim).collect();
                let v = alloc(&mut it, elem, &items).map_err(Fail::Case)?;
                arrays.push((k, elem, items.len(), v));
                v
            }
            None => scalar(ty, text).map_err(Fail::Case)?,
        };
        values.push(v);
    }
    let result = match it.call(f, &values) {
        Ok(v) => format!("result: {v}\n"),
        Err(e) => format!("error: {e}\n"),
    };
    let mut out = result;
    for (k, elem, n, v) in arrays {
        out.push_str(&format!("arg{k}: [{}]\n", read(&it, elem, v, n)));
    }
    let printed = it.take_output();
    if !printed.is_empty() {
        out.push_str("printed:\n");
        out.push_str(&printed);
        if !printed.ends_with('\n') {
            out.push('\n');
        }
    }
    Ok(out)
}

/// `a, [1, 2], b` split at the commas outside brackets.
fn split_args(args: &str) -> Vec<String> {
    let mut out = Vec::new();
    let (mut depth, mut cur) = (0, String::new());
    for c in args.chars() {
        match c {
            '[' => depth += 1,
            ']' => depth -= 1,
            ',' if depth == 0 => {
                out.push(std::mem::take(&mut cur));
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// The value of `text` as type `ty`.
fn scalar(ty: Type, text: &str) -> Result<Value, String> {
    let bad = || format!("`{text}` is not a {ty}");
    let int = || text.parse::<i64>().map_err(|_| bad());
    let float = || text.parse::<f64>().map_err(|_| bad());
    Ok(match ty {
        Type::Scalar(Scalar::Bool) => Value::Bool(text.parse().map_err(|_| bad())?),
        Type::Scalar(Scalar::I32) => Value::I32(int()? as i32),
        Type::Scalar(Scalar::I64) => Value::I64(int()?),
        Type::Scalar(Scalar::U32) => Value::U32(int()? as u32),
        Type::Scalar(Scalar::U64) => Value::U64(int()? as u64),
        Type::Scalar(Scalar::F32) => Value::F32(float()? as f32),
        Type::Scalar(Scalar::F64) => Value::F64(float()?),
        _ => return Err(format!("no arguments of type {ty} in file tests")),
    })
}

/// `items` as an array of `elem` in the interpreter's memory.
fn alloc(it: &mut Interpreter, elem: Type, items: &[&str]) -> Result<Value, String> {
    fn parse<T: std::str::FromStr>(items: &[&str]) -> Result<Vec<T>, String> {
        let items = items.iter().filter(|s| !s.is_empty());
        items
            .map(|s| s.parse().map_err(|_| format!("`{s}` is not an element")))
            .collect()
    }
    let m = it.memory_mut();
    Ok(match elem {
        Type::Scalar(Scalar::I32) => m.alloc_slice(&parse::<i32>(items)?),
        Type::Scalar(Scalar::I64) => m.alloc_slice(&parse::<i64>(items)?),
        Type::Scalar(Scalar::U32) => m.alloc_slice(&parse::<u32>(items)?),
        Type::Scalar(Scalar::U8) => m.alloc_slice(&parse::<u8>(items)?),
        Type::Scalar(Scalar::F32) => m.alloc_slice(&parse::<f32>(items)?),
        Type::Scalar(Scalar::F64) => m.alloc_slice(&parse::<f64>(items)?),
        t => return Err(format!("no arrays of {t} in file tests")),
    })
}

/// The `n` elements of type `elem` at `v`, printed.
fn read(it: &Interpreter, elem: Type, v: Value, n: usize) -> String {
    fn show<T: augur::exec::Pod + std::fmt::Debug>(it: &Interpreter, v: Value, n: usize) -> String {
        match it.memory().read_slice::<T>(v, n) {
            Ok(xs) => xs
                .iter()
                .map(|x| format!("{x:?}"))
                .collect::<Vec<_>>()
                .join(", "),
            Err(e) => format!("unreadable: {e}"),
        }
    }
    match elem {
        Type::Scalar(Scalar::I32) => show::<i32>(it, v, n),
        Type::Scalar(Scalar::I64) => show::<i64>(it, v, n),
        Type::Scalar(Scalar::U32) => show::<u32>(it, v, n),
        Type::Scalar(Scalar::U8) => show::<u8>(it, v, n),
        Type::Scalar(Scalar::F32) => show::<f32>(it, v, n),
        _ => show::<f64>(it, v, n),
    }
}

#[test]
fn filetests() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("filetests");
    let mut files = Vec::new();
    cases(&root, &mut files);
    assert!(files.len() >= 10, "only {} file tests", files.len());
    let bless = std::env::var_os("AUGUR_BLESS").is_some();
    let mut failures = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        let got = match run(&text) {
            Ok(got) => got,
            Err(e) => {
                failures.push(format!("{}: {e}", file.display()));
                continue;
            }
        };
        let Some((input, want)) = text.split_once("\n// expect:\n") else {
            failures.push(format!("{}: no `// expect:` line", file.display()));
            continue;
        };
        if bless {
            std::fs::write(file, format!("{input}\n// expect:\n{got}")).unwrap();
        } else if got != want {
            failures.push(format!("{}: got\n{got}\nexpected\n{want}", file.display()));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
