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
//! - `cc=A,..|B,..`: the same from the C unit compiled by the system's C
//!   compiler (`$CC`, else `cc`; `-std=c99 -Wall -Werror`) with a `main`
//!   that makes the call, so a case can show C and the interpreter agree
//!   (`run=3 cc=3`). A program that stops gives `error: ` and what it
//!   wrote to stderr.
//!
//! Without an output step the output is the IR's text after the last step.
//!
//! A step that fails gives `error: ` and its message as the output, so
//! errors are file tests too. `AUGUR_BLESS=1` rewrites each file's
//! expectation with what the steps give (review the diff before
//! committing it).

use augur::ir::Function;

mod args;
mod cc;
mod run;
use std::path::{Path, PathBuf};

#[augur::staged]
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
fn check_case(text: &str) -> Result<String, String> {
    let header = text.lines().next().unwrap_or_default();
    let steps = args::split_outside_brackets(
        header
            .strip_prefix("// test:")
            .ok_or("the first line must be `// test: <steps>`")?,
        char::is_whitespace,
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

/// Why a step gave no output: it failed, or the case is malformed.
pub(super) enum Fail {
    Step(String),
    Case(String),
}

/// Runs one step on `f`; `Some` output for the output steps.
#[augur::staged]
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
            let runs: Result<Vec<String>, Fail> =
                arg.split('|').map(|a| run::interpret(f, a)).collect();
            return runs.map(|r| Some(r.concat()));
        }
        "cc" => {
            let runs: Result<Vec<String>, Fail> = arg.split('|').map(|a| cc::run(f, a)).collect();
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
#[augur::staged]
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

#[test]
#[augur::staged]
fn filetests() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("filetests");
    let mut files = Vec::new();
    cases(&root, &mut files);
    assert!(files.len() >= 10, "only {} file tests", files.len());
    let bless = std::env::var_os("AUGUR_BLESS").is_some();
    let mut failures = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        let got = match check_case(&text) {
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
