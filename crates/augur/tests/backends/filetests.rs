//! File tests in Cranelift's style: each file under `crates/augur/filetests/`
//! is one case of IR in its text form, run through the passes its first
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
//! Names are the passes' (`augur::passes::run_named`: `scope`, `copy_elim`,
//! `dead`, `fold`, `control`, `naming`) and structuring's goto removal
//! (`augur::structure::run_named`: `breaks`, `guards`); the IR is verified
//! after each. `// gotos removed: N` after `// expect:` checks that count.
//! `AUGUR_BLESS=1` rewrites each file's expectation with what the passes
//! give (review the diff before committing it).

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

/// What running `file`'s passes gives, in the expectation's form.
fn run(file: &Path, text: &str) -> Result<String, String> {
    let header = text.lines().next().unwrap_or_default();
    let names = header
        .strip_prefix("// test:")
        .ok_or("the first line must be `// test: <passes>`")?;
    let input = text.split("\n// expect:\n").next().unwrap_or_default();
    let mut f = augur::ir::parse(input).map_err(|e| format!("input: {e}"))?;
    let mut removed = None;
    for name in names.split_whitespace() {
        if let Some(r) = augur::passes::run_named(name, &mut f) {
            r.map_err(|e| e.to_string())?;
        } else if let Some(r) = augur::structure::run_named(name, &mut f) {
            *removed.get_or_insert(0) += r.map_err(|e| e.to_string())?;
        } else {
            return Err(format!("{}: no pass is named `{name}`", file.display()));
        }
    }
    let mut out = f.to_string();
    if let Some(n) = removed {
        out = format!("// gotos removed: {n}\n{out}");
    }
    Ok(out)
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
        let got = match run(file, &text) {
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
