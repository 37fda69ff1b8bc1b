//! Source mapping: `#line` directives and comments that lead from generated
//! C and CUDA back to the staging code's lines, checked the way the tools
//! read them (the preprocessor's line count, gcc's diagnostics, the DWARF
//! line table, nvcc's PTX line info).
//!
//! Staged statements below end in a marker comment (`// @sum` and the like,
//! or on the next line after a `{`) that the tests find in this very file, so the expected lines follow the
//! code when it moves. Keep each marked statement on one line.

use augur::codegen::{CodegenOptions, LineMarkers};
use augur::exec::CompileOptions;
use augur::stage::gpu::launch;
use augur::{Builder, Dyn, Error, Extracted};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

/// This file's text, to find the marker comments in.
const SOURCE: &str = include_str!("source_map.rs");

/// Lines of this file that carry `marker` (1-based). A marker alone on its
/// line marks the line above it (where rustfmt moves a comment after `{`).
#[augur::staged]
fn marked(marker: &str) -> BTreeSet<u32> {
    let tail = format!("// {marker}");
    SOURCE
        .lines()
        .zip(1..)
        .filter(|(l, _)| l.trim_end().ends_with(&tail))
        .map(|(l, n)| if l.trim() == tail { n - 1 } else { n })
        .collect()
}

type SumFn = unsafe extern "C" fn(i32) -> i32;

/// A loop, an if/else-if/else chain, a return: statements on known lines.
/// `@sum?` marks lines that may or may not be named (a `for` takes its
/// initialiser's line, not the `while`'s); the `return` is named by the line
/// of `extract`.
#[augur::staged]
fn sum_to() -> Extracted<SumFn> {
    Builder::new()
        .extract("sum_to", |n: Dyn<i32>| {
            // @sum
            let s = Dyn::new(0i32); // @sum
            let i = Dyn::new(0i32); // @sum
            while i.lt(n).is_true() {
                // @sum?
                s.set(s + i); // @sum
                i.set(i + 1); // @sum?
            }
            if s.gt(100).is_true() {
                // @sum
                s.set(100); // @sum
            } else if s.eq(3).is_true() {
                // @sum
                s.set(4); // @sum
            } else {
                s.set(s * 2); // @sum
            }
            s
        })
        .unwrap()
}

#[augur::staged]
fn sum_plain(n: i32) -> i32 {
    let s: i32 = (0..n.max(0)).sum();
    if s > 100 {
        100
    } else if s == 3 {
        4
    } else {
        s * 2
    }
}

#[augur::staged]
fn with_markers(m: LineMarkers) -> CodegenOptions {
    CodegenOptions::default().with_line_markers(m)
}

/// The directory `file!()` paths are relative to (the workspace root).
#[augur::staged]
fn source_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .find(|dir| dir.join(file!()).is_file())
        .expect("this file under an ancestor of the manifest directory")
        .to_path_buf()
}

/// Where a line of C is, as the preprocessor counts after `#line`s.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Origin {
    /// A Rust file and line.
    Rust(String, u32),
    /// The generated file; the number the compiler gives the line.
    Generated(u32),
}

/// Each non-directive line of `c` with its origin, as a C preprocessor
/// assigns them (`#line N "file"`; `#line N AUGUR_GENERATED_FILE`).
fn origins(c: &str) -> Vec<(Origin, &str)> {
    let mut at = Origin::Generated(1);
    let mut out = Vec::new();
    for text in c.lines() {
        if let Some(d) = text.strip_prefix("#line ") {
            let (n, file) = d.split_once(' ').expect("#line N FILE");
            let n: u32 = n.parse().expect("a line number");
            at = match file.strip_prefix('"') {
                Some(f) => Origin::Rust(f.strip_suffix('"').unwrap().to_string(), n),
                None => {
                    assert_eq!(file, "AUGUR_GENERATED_FILE", "{text}");
                    Origin::Generated(n)
                }
            };
            continue;
        }
        out.push((at.clone(), text));
        at = match at {
            Origin::Rust(f, n) => Origin::Rust(f, n + 1),
            Origin::Generated(n) => Origin::Generated(n + 1),
        };
    }
    out
}

/// The real 1-based number of every line of `c`, beside its text.
#[augur::staged]
fn numbered(c: &str) -> Vec<(u32, &str)> {
    c.lines().zip(1..).map(|(t, n)| (n, t)).collect()
}

/// True for lines that only close or continue a compound statement.
#[augur::staged]
fn is_brace(text: &str) -> bool {
    matches!(text.trim(), "}" | "} else {")
}

#[test]
#[augur::staged]
fn every_directive_names_a_staged_line_of_this_file() {
    let c = sum_to().c_code_with(&with_markers(LineMarkers::Directives));
    let (must, may) = (marked("@sum"), marked("@sum?"));
    let mut claimed = BTreeSet::new();
    for (origin, text) in origins(&c) {
        match origin {
            Origin::Rust(file, line) => {
                assert_eq!(file, file!(), "{text}\n{c}");
                assert!(!is_brace(text), "a brace claims line {line}\n{c}");
                assert!(
                    must.contains(&line) || may.contains(&line),
                    "`{text}` claims line {line}, no staged statement\n{c}"
                );
                claimed.insert(line);
            }
            Origin::Generated(_) => {}
        }
    }
    assert!(
        claimed.is_superset(&must),
        "{claimed:?} lacks some of {must:?}\n{c}"
    );
}

/// Lines that no statement produced (braces, the function's end, what
/// follows) count as the generated file's own, with their real numbers.
#[test]
#[augur::staged]
fn other_lines_go_back_to_the_generated_file_at_their_real_numbers() {
    let c = sum_to().c_code_with(&with_markers(LineMarkers::Directives));
    let real: Vec<(u32, &str)> = numbered(&c)
        .into_iter()
        .filter(|(_, t)| !t.starts_with("#line "))
        .collect();
    let seen = origins(&c);
    assert_eq!(seen.len(), real.len());
    for ((origin, text), (n, _)) in seen.iter().zip(&real) {
        match origin {
            Origin::Generated(g) => assert_eq!(g, n, "`{text}`\n{c}"),
            Origin::Rust(..) => assert!(text.starts_with("  "), "`{text}`\n{c}"),
        }
    }
    let closing = seen.iter().filter(|(_, t)| is_brace(t)).count();
    assert!(closing >= 3, "{c}");
    assert_eq!(seen.last().unwrap().1, "}");
}

/// Without the directives and the macro block, the code is the default code.
#[test]
#[augur::staged]
fn markers_only_add_lines() {
    let ex = sum_to();
    let plain = ex.c_code();
    assert_eq!(plain, ex.c_code_with(&CodegenOptions::default()));
    assert!(!plain.contains("#line") && !plain.contains("//"), "{plain}");
    let directives = ex.c_code_with(&with_markers(LineMarkers::Directives));
    let stripped: String = directives
        .split_inclusive('\n')
        .filter(|l| !l.starts_with("#line "))
        .collect();
    let block_start = stripped.find("\n#ifndef AUGUR_GENERATED_FILE").unwrap();
    let block_end = stripped.find("#endif\n#endif\n").unwrap() + "#endif\n#endif\n".len();
    let without_block = format!("{}{}", &stripped[..block_start], &stripped[block_end..]);
    assert_eq!(without_block, plain);
    let comments = ex.c_code_with(&with_markers(LineMarkers::Comments));
    let prefix = format!("// {}:", file!());
    let stripped: String = comments
        .split_inclusive('\n')
        .filter(|l| !l.trim_start().starts_with(&prefix))
        .collect();
    assert_eq!(stripped, plain);
}

#[test]
#[augur::staged]
fn output_is_deterministic() {
    for m in [
        LineMarkers::None,
        LineMarkers::Comments,
        LineMarkers::Directives,
    ] {
        let opts = with_markers(m).with_source_root("/src");
        let (a, b) = (sum_to(), sum_to());
        assert_eq!(a.c_code_with(&opts), b.c_code_with(&opts), "{m:?}");
        assert_eq!(a.c_code_with(&opts), a.c_code_with(&opts.clone()), "{m:?}");
    }
}

/// Comments name each statement's line once, where it changes.
#[test]
#[augur::staged]
fn comments_note_each_new_line() {
    let c = sum_to().c_code_with(&with_markers(LineMarkers::Comments));
    let prefix = format!("// {}:", file!());
    let noted: Vec<u32> = c
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix(&prefix))
        .map(|n| n.parse().unwrap())
        .collect();
    let unique: BTreeSet<u32> = noted.iter().copied().collect();
    assert_eq!(noted.len(), unique.len(), "{c}");
    let (must, may) = (marked("@sum"), marked("@sum?"));
    assert!(unique.is_superset(&must), "{c}");
    assert!(unique.iter().all(|l| must.contains(l) || may.contains(l)));
}

/// `-Wfloat-equal -Werror` makes gcc reject `x == y` on doubles; the error
/// names the Rust line of the comparison, under the source root.
#[augur::staged]
fn float_equal() -> Extracted<unsafe extern "C" fn(f64, f64) -> i32> {
    Builder::new()
        .extract("same", |x: Dyn<f64>, y: Dyn<f64>| {
            let r = Dyn::new(0i32);
            if x.eq(y).is_true() {
                // @feq
                r.set(1);
            }
            r
        })
        .unwrap()
}

#[test]
#[augur::staged]
fn compiler_errors_name_the_rust_line() {
    let root = source_root();
    let mut opts = CompileOptions::default();
    opts.flags.push("-Wfloat-equal".into());
    opts.codegen = with_markers(LineMarkers::Directives).with_source_root(&root);
    let line = *marked("@feq").first().unwrap();
    let output = match float_equal().compile_with(&opts) {
        Err(Error::Compile { output, .. }) => output,
        other => panic!("expected a compile error, got {other:?}"),
    };
    let rust_file = root.join(file!());
    let at = format!("{}:{line}:", rust_file.display());
    assert!(output.contains(&at), "no `{at}` in\n{output}");
    assert!(output.contains("float-equal"), "{output}");
    // Without directives the same error names the generated file.
    opts.codegen = CodegenOptions::default();
    match float_equal().compile_with(&opts) {
        Err(Error::Compile { output, path }) => {
            assert!(!output.contains(file!()), "{output}");
            assert!(output.contains(&*path.to_string_lossy()), "{output}");
        }
        other => panic!("expected a compile error, got {other:?}"),
    }
}

/// Options that compile `sum_to` with debug info and no optimisation.
#[augur::staged]
fn debug_options() -> CompileOptions {
    let mut opts = CompileOptions::default();
    opts.flags.extend(["-g".into(), "-O0".into()]);
    opts.codegen = with_markers(LineMarkers::Directives).with_source_root(source_root());
    opts
}

#[augur::staged]
fn call_sum(f: SumFn, n: i32) -> i32 {
    // SAFETY: `sum_to` is `int32_t sum_to(int32_t)` and reads no memory.
    unsafe { f(n) }
}

/// The compiled code with directives computes what the plain code does.
#[test]
#[augur::staged]
fn compiled_with_directives_gives_the_same_results() {
    let ex = sum_to();
    let plain = ex.compile().unwrap();
    let mapped = ex.compile_with(&debug_options()).unwrap();
    assert_ne!(
        plain.library().unwrap().path(),
        mapped.library().unwrap().path()
    );
    let comments = CompileOptions {
        codegen: with_markers(LineMarkers::Comments),
        ..CompileOptions::default()
    };
    let commented = ex.compile_with(&comments).unwrap();
    for n in [-3, 0, 1, 3, 4, 10, 15, 1000] {
        let want = sum_plain(n);
        assert_eq!(call_sum(plain.get(), n), want, "n = {n}");
        assert_eq!(call_sum(mapped.get(), n), want, "n = {n}");
        assert_eq!(call_sum(commented.get(), n), want, "n = {n}");
    }
}

/// Runs `tool args`; `None` when it is not installed.
#[augur::staged]
fn run_tool(tool: &str, args: &[&str], stdin: Option<&str>) -> Option<String> {
    use std::io::Write;
    let mut cmd = Command::new(tool);
    cmd.args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = cmd.spawn().ok()?;
    let mut input = child.stdin.take().unwrap();
    input.write_all(stdin.unwrap_or("").as_bytes()).unwrap();
    drop(input);
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{tool} {args:?} failed: {err}");
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The start and size of `symbol` in `lib`, from `nm -S`.
#[augur::staged]
fn symbol_range(lib: &str, symbol: &str) -> Option<(u64, u64)> {
    let table = run_tool("nm", &["-S", "--defined-only", lib], None)?;
    let line = table.lines().find(|l| l.ends_with(&format!(" {symbol}")))?;
    let words: Vec<&str> = line.split_whitespace().collect();
    let hex = |s: &str| u64::from_str_radix(s, 16).unwrap();
    Some((hex(words[0]), hex(words[1])))
}

/// Under `-g`, every instruction of `sum_to` maps (addr2line) to a staged
/// line of this file, by its absolute path, or to the generated C file; and
/// every staged statement has instructions.
#[test]
#[augur::staged]
fn debug_line_table_leads_to_the_rust_lines() {
    let compiled = sum_to().compile_with(&debug_options()).unwrap();
    let lib = compiled
        .library()
        .expect("C compiled it")
        .path()
        .to_string_lossy()
        .into_owned();
    let Some((start, size)) = symbol_range(&lib, "sum_to") else {
        eprintln!("skipped: nm is not installed");
        return;
    };
    let addrs: String = (start..start + size).map(|a| format!("{a:#x}\n")).collect();
    let Some(table) = run_tool("addr2line", &["-e", &lib], Some(&addrs)) else {
        eprintln!("skipped: addr2line is not installed");
        return;
    };
    let rust_file = source_root().join(file!());
    let rust_prefix = format!("{}:", rust_file.display());
    // The generated C beside the library, by the name the compiler was given.
    let c_file = Path::new(&lib).with_extension("c");
    let generated = format!("{}:", c_file.file_name().unwrap().to_string_lossy());
    let (must, may) = (marked("@sum"), marked("@sum?"));
    let mut hit = BTreeSet::new();
    for place in table.lines() {
        let place = place.split(" (discriminator").next().unwrap();
        if let Some(line) = place.strip_prefix(&rust_prefix) {
            let line: u32 = line.parse().unwrap();
            assert!(must.contains(&line) || may.contains(&line), "{place}");
            hit.insert(line);
        } else {
            assert!(place.contains(&generated), "{place} (not {generated})");
        }
    }
    assert!(rust_file.is_file());
    assert!(hit.is_superset(&must), "{hit:?} lacks some of {must:?}");
}

/// gdb, given the library alone, resolves `file.rs:line` to code of `sum_to`.
#[test]
#[augur::staged]
fn gdb_finds_code_at_the_rust_lines() {
    let compiled = sum_to().compile_with(&debug_options()).unwrap();
    let lib = compiled
        .library()
        .expect("C compiled it")
        .path()
        .to_string_lossy()
        .into_owned();
    let rust_file = source_root().join(file!());
    // The loop body: `s.set(s + i)`.
    let line = *marked("@sum").iter().nth(3).unwrap();
    let spec = format!("info line {}:{line}", rust_file.display());
    let Some(out) = run_tool("gdb", &["-nx", "-batch", "-ex", &spec, &lib], None) else {
        eprintln!("skipped: gdb is not installed");
        return;
    };
    assert!(out.contains(&format!("Line {line} of \"")), "{out}");
    assert!(out.contains("<sum_to+"), "{out}");
}

/// A launch whose kernel body has statements on known lines.
#[augur::staged]
fn scale() -> Extracted<unsafe extern "C" fn(*mut f32, i32)> {
    Builder::new()
        .extract("scale", |x: Dyn<*mut f32>, n: Dyn<i32>| {
            launch(2, 32, |bid, tid| {
                let i = Dyn::new(bid * 32 + tid); // @gpu
                if i.lt(n).is_true() {
                    // @gpu
                    x.at(i).set(x.at(i) * 3.0f32); // @gpu
                }
            });
        })
        .unwrap()
}

/// The CUDA unit: the kernel's statements name their lines, and the rest
/// goes back to the generated file at its real numbers.
#[test]
#[augur::staged]
fn cuda_kernels_name_the_rust_lines() {
    let ex = scale();
    let opts = with_markers(LineMarkers::Directives);
    let cu = ex.cuda_code_with("", &opts).unwrap();
    assert_eq!(
        ex.cuda_code("").unwrap(),
        ex.cuda_code_with("", &CodegenOptions::default()).unwrap()
    );
    let gpu = marked("@gpu");
    let mut claimed = BTreeSet::new();
    let real: Vec<u32> = numbered(&cu)
        .into_iter()
        .filter(|(_, t)| !t.starts_with("#line "))
        .map(|(n, _)| n)
        .collect();
    for ((origin, text), n) in origins(&cu).into_iter().zip(real) {
        match origin {
            Origin::Rust(file, line) => {
                assert_eq!(file, file!(), "{text}");
                claimed.insert(line);
            }
            Origin::Generated(g) => assert_eq!(g, n, "`{text}`\n{cu}"),
        }
    }
    assert!(claimed.is_superset(&gpu), "{claimed:?} vs {gpu:?}\n{cu}");
    assert!(cu.contains("__global__ void scale_k0("), "{cu}");
    nvcc_line_info(&cu, &gpu);
}

/// With nvcc (when installed), `-lineinfo` PTX locates kernel code at the
/// staged lines of this file.
#[augur::staged]
fn nvcc_line_info(cu: &str, lines: &BTreeSet<u32>) {
    let Ok(nvcc) = augur::exec::cuda::Nvcc::find() else {
        eprintln!("skipped: nvcc is not installed");
        return;
    };
    let dir = std::env::temp_dir().join(format!("augur-source-map-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (src, ptx) = (dir.join("scale.cu"), dir.join("scale.ptx"));
    std::fs::write(&src, cu).unwrap();
    let status = Command::new(nvcc.path())
        .args(["--ptx", "-lineinfo", "-arch=sm_80", "-std=c++17", "-o"])
        .arg(&ptx)
        .arg(&src)
        .status()
        .unwrap();
    assert!(status.success());
    let text = std::fs::read_to_string(&ptx).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    // `.file 1 "crates/augur/tests/backends/source_map.rs"`, then `.loc 1 LINE COL`.
    let file_no = text
        .lines()
        .find(|l| l.trim_start().starts_with(".file") && l.contains(file!()))
        .and_then(|l| l.split_whitespace().nth(1))
        .unwrap_or_else(|| panic!("no .file for this file in\n{text}"))
        .to_string();
    let located: BTreeSet<u32> = text
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix(".loc"))
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .filter(|w| w[0] == file_no)
        .map(|w| w[1].parse().unwrap())
        .collect();
    assert!(
        !located.is_empty() && located.is_subset(lines),
        "{located:?} vs {lines:?}"
    );
}
