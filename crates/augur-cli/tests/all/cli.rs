//! The `augur` binary end to end: every subcommand's output is checked for
//! what it must say, generated code is compiled and run, and bad input
//! gives a clear error and a failing exit status.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

#[augur::staged]
fn augur(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_augur"))
        .args(args)
        .output()
        .expect("the augur binary runs")
}

#[augur::staged]
fn ok(args: &[&str]) -> String {
    let out = augur(args);
    assert!(
        out.status.success(),
        "augur {args:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8 output")
}

#[augur::staged]
fn fails(args: &[&str]) -> String {
    let out = augur(args);
    assert!(!out.status.success(), "augur {args:?} succeeded");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A fresh folder under the target directory.
#[augur::staged]
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Compiles `main_c` with `code` and runs it; returns its output.
#[augur::staged]
fn compile_and_run(dir: &Path, code: &str, main_c: &str) -> String {
    let src = dir.join("prog.c");
    std::fs::write(&src, format!("{code}\n{main_c}")).unwrap();
    let exe = dir.join("prog");
    let cc = Command::new("cc")
        .args(["-std=c99", "-O1", "-o"])
        .arg(&exe)
        .arg(&src)
        .output()
        .expect("cc runs");
    assert!(
        cc.status.success(),
        "{}",
        String::from_utf8_lossy(&cc.stderr)
    );
    let run = Command::new(&exe).output().unwrap();
    String::from_utf8(run.stdout).unwrap()
}

#[test]
#[augur::staged]
fn emitted_c_compiles_and_computes_what_the_first_stage_meant() {
    let dir = scratch("emit_power");
    let code = ok(&["emit", "power"]);
    let main_c = "#include <stdio.h>\nint main(void) { printf(\"%lld\\n\", (long long)power15(3)); return 0; }\n";
    assert_eq!(compile_and_run(&dir, &code, main_c).trim(), "14348907");
}

/// Compiles the emitted unit `code` on its own with `-std=c99 -Wall -Werror`.
#[augur::staged]
fn compiles_alone(dir: &Path, code: &str) {
    let src = dir.join("unit.c");
    std::fs::write(&src, code).unwrap();
    let cc = Command::new("cc")
        .args(["-std=c99", "-Wall", "-Werror", "-c", "-o"])
        .arg(dir.join("unit.o"))
        .arg(&src)
        .output()
        .expect("cc runs");
    assert!(
        cc.status.success(),
        "{}",
        String::from_utf8_lossy(&cc.stderr)
    );
}

#[test]
#[augur::staged]
fn the_recursion_example_is_one_unit_that_compiles_alone_without_warnings() {
    let dir = scratch("emit_recursion");
    let code = ok(&["emit", "recursion"]);
    assert!(code.contains("r = gcd(arg1, arg0 % arg1);"), "{code}");
    assert!(code.contains("double power_13(double arg0) {"), "{code}");
    compiles_alone(&dir, &code);
    let main_c = "#include <stdio.h>\nint main(void) { printf(\"%llu %.1f\\n\", \
                  (unsigned long long)gcd(1071, 462), power_13(2.0)); return 0; }\n";
    assert_eq!(compile_and_run(&dir, &code, main_c).trim(), "21 8192.0");
}

#[test]
#[augur::staged]
fn the_particles_example_declares_its_structs_and_computes_what_rust_does() {
    let dir = scratch("emit_particles");
    let code = ok(&["emit", "particles"]);
    assert!(
        code.contains("typedef struct Particle {\n  Vec2 pos;\n  Vec2 vel;\n} Particle;"),
        "{code}"
    );
    let main_c = "#include <stdio.h>\nint main(void) {\n  Particle ps[2] = {{{0.0f, 1.0f}, {1.0f, 0.0f}}, {{2.0f, 0.5f}, {-1.0f, 3.0f}}};\n  \
                  for (int t = 0; t < 200; t++) step(ps, 2);\n  \
                  for (int i = 0; i < 2; i++) printf(\"%.9g %.9g %.9g %.9g\\n\", ps[i].pos.x, ps[i].pos.y, ps[i].vel.x, ps[i].vel.y);\n  \
                  return 0;\n}\n";
    compiles_alone(&dir, &code);
    let printed = compile_and_run(&dir, &code, main_c);
    // The same step in Rust, operation by operation.
    let mut ps = [[0.0f32, 1.0, 1.0, 0.0], [2.0, 0.5, -1.0, 3.0]];
    for _ in 0..200 {
        for p in &mut ps {
            p[3] += -9.81f32 * 0.01;
            p[0] += p[2] * 0.01;
            p[1] += p[3] * 0.01;
            if p[1] < 0.0 {
                p[1] = -p[1];
                p[3] = -p[3] * 0.9;
            }
        }
    }
    let got: Vec<Vec<f32>> = printed
        .lines()
        .map(|l| l.split(' ').map(|x| x.parse().unwrap()).collect())
        .collect();
    assert_eq!(
        got,
        ps.iter().map(|p| p.to_vec()).collect::<Vec<_>>(),
        "{printed}"
    );
}

#[test]
#[augur::staged]
fn line_directives_point_at_the_staging_code_and_still_compile() {
    let dir = scratch("emit_lines");
    let code = ok(&["emit", "collatz", "--lines", "directives"]);
    assert!(
        code.contains("\"crates/augur-cli/src/catalog.rs\""),
        "{code}"
    );
    let main_c = "#include <stdio.h>\nint main(void) { printf(\"%u\\n\", (unsigned)collatz_steps(27)); return 0; }\n";
    assert_eq!(compile_and_run(&dir, &code, main_c).trim(), "111");
    let comments = ok(&["emit", "collatz", "--lines", "comments"]);
    assert!(
        comments.contains("// crates/augur-cli/src/catalog.rs:"),
        "{comments}"
    );
}

#[test]
#[augur::staged]
fn einsum_targets_differ_as_they_should() {
    let cuda = ok(&["emit", "matmul", "--size", "16", "--target", "cuda"]);
    assert!(
        cuda.contains("__global__") && cuda.contains("cudaMemcpy"),
        "{cuda}"
    );
    let sim = ok(&["emit", "matmul", "--size", "16", "--target", "cuda-sim"]);
    assert!(!sim.contains("__global__"), "{sim}");
    let copy_all = ok(&[
        "emit",
        "matmul",
        "--size",
        "16",
        "--target",
        "cuda",
        "--movement",
        "copy-all",
    ]);
    assert_ne!(cuda, copy_all);
    // The same program gives byte-identical code.
    assert_eq!(
        cuda,
        ok(&["emit", "matmul", "--size", "16", "--target", "cuda"])
    );
}

/// A C `main` that runs `function` (an n×n matmul, 2 turns) on small
/// integers and prints how many elements differ from the plain product.
#[augur::staged]
fn matmul_main(function: &str, n: usize) -> String {
    format!(
        r#"
#include <stdio.h>
static float x[{nn}], y[{nn}], z[{nn}];
int main(void) {{
  for (int k = 0; k < {nn}; k++) {{ x[k] = (float)(k % 7) - 3.0f; y[k] = (float)(k % 5) - 2.0f; z[k] = 0.0f; }}
  {function}(x, y, z, 2);
  int bad = 0;
  for (int i = 0; i < {n}; i++)
    for (int j = 0; j < {n}; j++) {{
      float s = 0.0f;
      for (int k = 0; k < {n}; k++) s += x[i * {n} + k] * y[k * {n} + j];
      if (s != z[i * {n} + j]) bad++;
    }}
  printf("%d\n", bad);
  return 0;
}}
"#,
        nn = n * n
    )
}

#[test]
#[augur::staged]
fn einsum_c_target_is_the_cpu_build_and_computes_matmul() {
    let dir = scratch("emit_matmul_c");
    // The default is the fast version: blocked (packed tiles) with OpenMP
    // pragmas (ignored by a compiler without -fopenmp, which its build
    // comment names).
    let code = ok(&["emit", "matmul", "--size", "37"]);
    assert!(code.contains("matmul_cpu_fast_37x37x37"), "{code}");
    assert!(
        code.contains("x_pack") && code.contains("omp parallel for"),
        "{code}"
    );
    let main_c = matmul_main("matmul_cpu_fast_37x37x37", 37);
    assert_eq!(compile_and_run(&dir, &code, &main_c).trim(), "0");
    // The paper's loops on request.
    let naive = ok(&["emit", "matmul", "--size", "8", "--schedule", "naive"]);
    assert!(
        naive.contains("matmul_cpu_8x8x8") && !naive.contains("omp"),
        "{naive}"
    );
    let main_c = matmul_main("matmul_cpu_8x8x8", 8);
    assert_eq!(compile_and_run(&dir, &naive, &main_c).trim(), "0");
}

#[test]
#[augur::staged]
fn simulated_einsum_compiles_standalone() {
    let dir = scratch("emit_sim");
    let sim = ok(&["emit", "matvec", "--size", "8", "--target", "cuda-sim"]);
    let src = dir.join("sim.c");
    std::fs::write(&src, sim).unwrap();
    let cc = Command::new("cc")
        .args(["-std=c99", "-c", "-o"])
        .arg(dir.join("sim.o"))
        .arg(&src)
        .output()
        .unwrap();
    assert!(
        cc.status.success(),
        "{}",
        String::from_utf8_lossy(&cc.stderr)
    );
}

/// The command line of a unit's build comment after ` * build: ` or
/// ` * library: ` (`key`), or `// build: ` in CUDA.
#[augur::staged]
fn build_line<'a>(code: &'a str, key: &str) -> &'a str {
    let comment = code.split("\n */\n").next().unwrap_or("");
    let line = comment
        .lines()
        .find_map(|l| l.strip_prefix(key))
        .unwrap_or_else(|| panic!("no `{key}` line in the build comment:\n{comment}"));
    line.trim()
}

/// Runs `line` (a build comment's, naming `unit.c`) with `-Wall -Werror`
/// in `dir`, where `code` is `unit.c`.
#[augur::staged]
fn builds_with(dir: &Path, code: &str, line: &str, what: &str) {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("unit.c"), code).unwrap();
    let full = format!("{line} -Wall -Werror");
    let out = Command::new("sh")
        .arg("-c")
        .arg(&full)
        .current_dir(dir)
        .output()
        .expect("sh runs");
    assert!(
        out.status.success(),
        "{what}: `{full}` failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stderr),
        code.lines().take(12).collect::<Vec<_>>().join("\n")
    );
}

/// Every C unit `augur emit` prints (each example, the C and simulated
/// targets, the einsum examples' paper schedule, source mapping) starts
/// with its build comment, and compiles alone with exactly the comment's
/// lines under `-Wall -Werror`: the object line (`-c`: no unit is a
/// program) and the shared library line (linked: `-lm`, OpenMP's runtime).
/// The comment names `-fopenmp` exactly when the unit has OpenMP's
/// parallel pragmas, which without it fail under `-Wall -Werror`.
#[test]
#[augur::staged]
fn every_emitted_c_unit_builds_alone_with_its_build_comment() {
    let list = ok(&["emit", "--list"]);
    let mut runs: Vec<Vec<&str>> = Vec::new();
    for e in &augur_cli::catalog::EXAMPLES {
        assert!(list.contains(e.name), "{list}");
        for target in ["c", "cuda-sim"] {
            runs.push(vec!["emit", e.name, "--target", target]);
        }
        if e.movement {
            runs.push(vec!["emit", e.name, "--schedule", "naive"]);
            runs.push(vec!["emit", e.name, "--size", "37"]);
        }
    }
    runs.push(vec!["emit", "collatz", "--lines", "directives"]);
    runs.push(vec![
        "emit", "matvec", "--size", "19", "--lines", "comments",
    ]);
    let dir = scratch("emit_build_comment");
    let mut openmp = 0;
    for (i, args) in runs.iter().enumerate() {
        let code = ok(args);
        let what = args.join(" ");
        assert!(
            code.starts_with("/* C99 generated by augur from `"),
            "{what}:\n{code}"
        );
        let object = build_line(&code, " * build: ");
        let library = build_line(&code, " * library: ");
        assert!(object.starts_with("cc -std=c99 -O2 -fwrapv ") && object.ends_with(" -c unit.c"));
        assert!(
            library.contains(" -fPIC -shared -o unit.so unit.c"),
            "{library}"
        );
        let parallel = code.contains("_Pragma(\"omp parallel");
        assert_eq!(object.contains(" -fopenmp "), parallel, "{what}: {object}");
        assert_eq!(
            library.contains("-Wl,-z,nodelete"),
            parallel,
            "{what}: {library}"
        );
        openmp += usize::from(parallel);
        let unit = dir.join(i.to_string());
        builds_with(&unit, &code, object, &what);
        assert!(unit.join("unit.o").is_file(), "{what}");
        builds_with(&unit, &code, library, &what);
        assert!(unit.join("unit.so").is_file(), "{what}");
    }
    assert!(openmp >= 2, "the einsum C targets are OpenMP units");
    // Without the comment's -fopenmp an OpenMP unit does not build.
    let code = ok(&["emit", "matmul", "--size", "37"]);
    let bare = build_line(&code, " * build: ").replace(" -fopenmp", "");
    let unit = dir.join("bare");
    std::fs::create_dir_all(&unit).unwrap();
    std::fs::write(unit.join("unit.c"), &code).unwrap();
    let out = Command::new("sh")
        .arg("-c")
        .arg(format!("{bare} -Wall -Werror"))
        .current_dir(&unit)
        .output()
        .unwrap();
    assert!(!out.status.success(), "{bare} built an OpenMP unit");
}

/// Every CUDA unit `augur emit` prints names its nvcc line after its first
/// line (nvcc is not needed to check that; the CUDA tests build units).
#[test]
#[augur::staged]
fn every_emitted_cuda_unit_names_its_nvcc_line() {
    for e in &augur_cli::catalog::EXAMPLES {
        let code = ok(&["emit", e.name, "--target", "cuda"]);
        let mut lines = code.lines();
        let first = lines.next().unwrap();
        assert!(
            first.starts_with("// CUDA generated by augur from `"),
            "{first}"
        );
        let line = build_line(&code, "// build: ");
        assert_eq!(
            line, "nvcc -std=c++17 -O3 -arch=native -c unit.cu",
            "{}",
            e.name
        );
        assert!(
            code.contains("\n// -arch=native: for this machine's GPU;"),
            "{code}"
        );
    }
}

#[test]
#[augur::staged]
fn explain_names_each_prophecy_and_its_decision() {
    let out = ok(&["explain", "conv-relu", "--size", "64"]);
    assert!(out.contains("prophecy `after conv1d`"), "{out}");
    assert!(out.contains("Exactly(Relu(1.56))"), "{out}");
    assert!(out.contains("stats: runs"), "{out}");
    let out = ok(&["explain", "nn-benchmark", "--size", "64"]);
    assert!(
        out.contains("Conflict"),
        "the flag-dependent threshold is not fused:\n{out}"
    );
}

#[test]
#[augur::staged]
fn bad_names_and_arguments_are_clear_errors() {
    let e = fails(&["emit", "powr"]);
    assert!(
        e.contains("no example called 'powr'") && e.contains("matmul"),
        "{e}"
    );
    let e = fails(&["bench", "nosuch"]);
    assert!(
        e.contains("no experiment called 'nosuch'") && e.contains("scaling"),
        "{e}"
    );
    let e = fails(&["emit", "power", "--target", "ptx"]);
    assert!(e.contains("ptx"), "{e}");
    let e = fails(&["emit", "matmul", "--size", "0"]);
    assert!(e.contains("matmul: --size must be between 1 and"), "{e}");
    let e = fails(&["emit", "conv-relu", "--size", "2"]);
    assert!(e.contains("conv-relu: --size must be between 3 and"), "{e}");
    let e = fails(&["emit", "power", "--size", "8"]);
    assert!(e.contains("power takes no --size"), "{e}");
    let e = fails(&["explain", "collatz", "--movement", "unified"]);
    assert!(e.contains("collatz takes no --movement"), "{e}");
    let e = fails(&["imp", "run", "/no/such/file.imp"]);
    assert!(e.contains("cannot read /no/such/file.imp"), "{e}");
}

#[test]
#[augur::staged]
fn imp_subcommands_run_analyse_and_compile() {
    let dir = scratch("imp");
    let file = dir.join("sum.imp");
    std::fs::write(&file, augur_cli::demo::IMP_SAMPLE).unwrap();
    let f = file.to_str().unwrap();
    let run = ok(&["imp", "run", f, "--set", "n=4"]);
    assert!(
        run.contains("s = 10\n") && run.contains("d = 20\n"),
        "{run}"
    );
    let live = ok(&["imp", "live", f]);
    assert!(
        live.contains("equal to the worklist solver's result"),
        "{live}"
    );
    let c = ok(&["imp", "compile", f, "--set", "n=4"]);
    assert!(c.contains("dead assignments dropped: l2"), "{c}");
    assert!(c.contains("s = 10"), "{c}");
    let e = fails(&["imp", "run", f]);
    assert!(e.contains("unset variable n"), "{e}");
    let bad = dir.join("bad.imp");
    std::fs::write(&bad, "l0: x := 1 +\nl1: halt\nl2: done\n").unwrap();
    let e = fails(&["imp", "live", bad.to_str().unwrap()]);
    assert!(e.contains("bad.imp:1:"), "{e}");
}

#[test]
#[augur::staged]
fn bench_writes_tables_and_plots() {
    let dir = scratch("bench");
    let out = ok(&[
        "bench",
        "scaling",
        "--quick",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert!(out.contains("n sequential dyn ifs"), "{out}");
    let csv = std::fs::read_to_string(dir.join("scaling-nested-loops.csv")).unwrap();
    let mut lines = csv.lines();
    assert_eq!(
        lines.next(),
        Some("d,runs,with check runs,BuildIt runs (2d + 1),time (ms)")
    );
    // d = 1: two exploration runs; BuildIt needs three.
    let first: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!((first[0], first[1], first[3]), ("1", "2", "3"), "{csv}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("scaling.json")).unwrap()).unwrap();
    assert_eq!(json["experiment"], "scaling");
    assert_eq!(json["tables"].as_array().unwrap().len(), 8);
    // The state machine: one exploration run per state and one for the
    // loop's exit past the last.
    let csv = std::fs::read_to_string(dir.join("scaling-state-machine.csv")).unwrap();
    let first: Vec<&str> = csv.lines().nth(1).unwrap().split(',').collect();
    assert_eq!((first[0], first[1]), ("50", "51"), "{csv}");
    // The same as keyed functions: one per state.
    let csv = std::fs::read_to_string(dir.join("scaling-state-machine-keyed.csv")).unwrap();
    let first: Vec<&str> = csv.lines().nth(1).unwrap().split(',').collect();
    assert_eq!((first[0], first[1]), ("100", "100"), "{csv}");
    // n sequential ifs share one check run for their links: n + 2 in all.
    let csv = std::fs::read_to_string(dir.join("scaling-sequential-ifs.csv")).unwrap();
    let first: Vec<&str> = csv.lines().nth(1).unwrap().split(',').collect();
    assert_eq!((first[1], first[2]), ("5", "6"), "{csv}");
    let svg = std::fs::read_to_string(dir.join("scaling-prophecies.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("BuildIt"), "{svg}");
}

#[test]
#[augur::staged]
fn bench_paper_regenerates_the_papers_tables() {
    if augur_cli::bench::gpu::gpu_name().is_some() {
        return; // measured for real on a GPU machine, which takes minutes
    }
    let e = fails(&["bench", "gpu", "--quick"]);
    assert!(e.contains("no GPU here"), "{e}");
    let dir = scratch("bench_paper");
    let out = ok(&[
        "bench",
        "paper",
        "--quick",
        "--format",
        "csv",
        "--out",
        dir.to_str().unwrap(),
    ]);
    // The paper's figures beside ours: BuildIt's 113 + 7 runs for prophecy
    // matmul, its fused conv/ReLU time, the V100's 43 µs for 64 × 64.
    assert!(out.contains("First stage of the paper's programs"), "{out}");
    let first = std::fs::read_to_string(dir.join("paper-first-stage-runs.csv")).unwrap();
    assert!(
        first
            .lines()
            .any(|l| l.starts_with("matmul,prophecy,adaptive,29,") && l.contains(",113,7,38.335,")),
        "{first}"
    );
    let conv = std::fs::read_to_string(dir.join("paper-conv-relu-conv-relu.csv")).unwrap();
    assert!(
        conv.lines()
            .any(|l| l.starts_with("10240,3,constant,") && l.ends_with(",26,25")),
        "{conv}"
    );
    let gpu = std::fs::read_to_string(dir.join("paper-gpu-matmul.csv")).unwrap();
    assert!(
        gpu.lines()
            .any(|l| l.starts_with("64,148.1,134.5,46.4,149,239,43")),
        "{gpu}"
    );
    assert!(out.contains("recorded earlier, not measured now"), "{out}");
    let e = fails(&["bench", "scaling", "--quick", "--out", "/dev/null/x"]);
    assert!(
        e.contains("cannot create the output folder /dev/null/x"),
        "{e}"
    );
}

#[test]
#[augur::staged]
fn demo_runs_every_screen() {
    let out = ok(&["demo"]);
    for screen in ["[1/5]", "[2/5]", "[3/5]", "[4/5]", "[5/5]"] {
        assert!(out.contains(screen), "{screen} missing:\n{out}");
    }
    assert_eq!(out.matches('✓').count(), 5, "{out}");
}

/// With no C compiler on `PATH` (and no `CC`), the demo runs every screen
/// with every check through the JIT, and says the BuildIt C comparison,
/// which needs a compiler, was skipped.
#[test]
#[augur::staged]
fn demo_runs_without_a_c_compiler() {
    let empty = scratch("no-compiler-path");
    let out = Command::new(env!("CARGO_BIN_EXE_augur"))
        .arg("demo")
        .env_remove("CC")
        .env("PATH", &empty)
        .output()
        .expect("the augur binary runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(text.matches('✓').count(), 5, "{text}");
    assert!(text.contains("compiled by the JIT"), "{text}");
    assert!(text.contains("BuildIt's C comparison skipped"), "{text}");
}

/// `augur bench compile`: compile times of every backend side by side (the
/// 2048-statement function among the programs) and the generated code's
/// speed, every backend's output checked by the experiment itself.
#[test]
#[augur::staged]
fn bench_compile_compares_the_backends() {
    let dir = scratch("bench_compile");
    let out = ok(&[
        "bench",
        "compile",
        "--quick",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert!(out.contains("straight-line, 2048 statements"), "{out}");
    let csv = std::fs::read_to_string(dir.join("compile-compile-time.csv")).unwrap();
    assert!(
        csv.starts_with(
            "program,statements,cc -O2 + load (ms),JIT (ms),interpreter start (µs),cc / JIT\n"
        ),
        "{csv}"
    );
    assert_eq!(csv.lines().count(), 1 + 5, "{csv}");
    let speed = std::fs::read_to_string(dir.join("compile-code-speed.csv")).unwrap();
    assert!(
        speed.contains("conv/ReLU fused") && speed.contains("einsum matmul"),
        "{speed}"
    );
}

/// `augur cache` with the cache in `dir`.
fn augur_cache(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_augur"))
        .arg("cache")
        .args(args)
        .env("AUGUR_CACHE", dir)
        .output()
        .expect("the augur binary runs")
}

#[test]
fn cache_path_size_and_clean() {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch("cache-command").join("cache");
    let text = |out: Output| {
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let path = text(augur_cache(&dir, &["path"]));
    let resolved = dir.canonicalize().unwrap();
    assert_eq!(path.trim(), resolved.display().to_string());
    let mode = std::fs::metadata(&dir).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o700, "created private");
    assert!(text(augur_cache(&dir, &["size"])).contains(": 0 entries"));
    let opts = augur::exec::CompileOptions {
        cache_dir: Some(dir.clone()),
        ..Default::default()
    };
    augur::exec::compile("int f(void) { return 1; }\n", &opts).unwrap();
    augur::exec::compile("int f(void) { return 2; }\n", &opts).unwrap();
    let size = text(augur_cache(&dir, &["size"]));
    assert!(
        size.contains(": 2 entries") && size.contains("limit 1024.0 MiB"),
        "{size}"
    );
    let clean = text(augur_cache(&dir, &["clean"]));
    assert!(clean.starts_with("removed 2 entries"), "{clean}");
    assert!(text(augur_cache(&dir, &["size"])).contains(": 0 entries"));
    // A cache others can write to is refused, with the reason.
    std::fs::set_permissions(&dir, PermissionsExt::from_mode(0o777)).unwrap();
    let out = augur_cache(&dir, &["size"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("writable by group or others"),
        "{err}"
    );
}

#[test]
fn the_default_cache_is_the_users_and_private() {
    use std::os::unix::fs::PermissionsExt;
    let home = scratch("cache-default");
    let out = Command::new(env!("CARGO_BIN_EXE_augur"))
        .args(["cache", "path"])
        .env_remove("AUGUR_CACHE")
        .env("XDG_CACHE_HOME", &home)
        .output()
        .expect("the augur binary runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let expected = home.canonicalize().unwrap().join("augur");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        expected.display().to_string()
    );
    let mode = std::fs::metadata(&expected).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o700);
}

/// Under umask 002 (Debian's default with a group per user) the missing
/// directories of the default cache are made private, so the cache works
/// from the first run on.
#[test]
fn the_default_cache_works_under_umask_002() {
    use std::os::unix::fs::PermissionsExt;
    let home = scratch("cache-umask");
    let xdg = home.join("fresh").join(".cache");
    let run = || {
        Command::new("sh")
            .arg("-c")
            .arg(format!(
                "umask 002 && exec {} cache size",
                env!("CARGO_BIN_EXE_augur")
            ))
            .env_remove("AUGUR_CACHE")
            .env("XDG_CACHE_HOME", &xdg)
            .output()
            .expect("sh runs")
    };
    for _ in 0..2 {
        let out = run();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    for dir in [home.join("fresh"), xdg.clone(), xdg.join("augur")] {
        let mode = std::fs::metadata(&dir).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700, "{}", dir.display());
    }
}

/// `augur bench regex --quick`: augur's matchers beside the regex crate and
/// the C and C++ engines installed, each result checked against the regex
/// crate's; an engine whose library is missing is named with its package.
#[test]
#[augur::staged]
fn bench_regex_sets_augur_beside_the_other_engines() {
    let dir = scratch("bench_regex");
    let out = ok(&["bench", "regex", "--quick", "--out", dir.to_str().unwrap()]);
    assert!(out.contains("Geometric mean"), "{out}");
    let csv = std::fs::read_to_string(dir.join("regex-regex.csv")).unwrap();
    let header = csv.lines().next().unwrap();
    assert!(
        header.starts_with("pattern,mode,result,augur C (MB/s)"),
        "{header}"
    );
    // Four patterns in three modes.
    assert_eq!(csv.lines().count(), 1 + 4 * 3, "{csv}");
    let pcre2 = header
        .split(',')
        .position(|c| c == "PCRE2-JIT (MB/s)")
        .unwrap();
    let literal: Vec<&str> = csv.lines().nth(1).unwrap().split(',').collect();
    assert_eq!((literal[0], literal[1]), ("literal", "count"), "{csv}");
    if Path::new("/usr/include/pcre2.h").exists() {
        assert!(literal[pcre2].parse::<f64>().is_ok(), "{csv}");
    } else {
        assert!(out.contains("apt-get install libpcre2-dev"), "{out}");
    }
    let svg = std::fs::read_to_string(dir.join("regex-count.svg")).unwrap();
    assert!(
        svg.starts_with("<svg") && svg.contains("regex crate"),
        "{svg}"
    );
}

/// `augur emit regex`: the three functions in one file, which compiles and
/// finds what the regex crate finds.
#[test]
#[augur::staged]
fn the_regex_matcher_compiles_and_finds_the_match() {
    let dir = scratch("emit_regex");
    let code = ok(&["emit", "regex", "--pattern", r"[a-z]+@[a-z]+\.com"]);
    let main_c = r#"#include <stdio.h>
#include <string.h>
int main(void) {
  const char *s = "mail bob@example.com now";
  int64_t n = (int64_t)strlen(s);
  int64_t end = find((const uint8_t *)s, n, 0);
  int64_t start = rfind((const uint8_t *)s, n, 0, end);
  printf("%lld %lld %lld\n", (long long)is_match((const uint8_t *)s, n, 0), (long long)start, (long long)end);
  return 0;
}
"#;
    assert_eq!(compile_and_run(&dir, &code, main_c).trim(), "1 5 20");
    assert!(fails(&["emit", "regex"]).contains("--pattern"));
    assert!(fails(&["emit", "regex", "--pattern", r"\bx"]).contains("word boundaries"));
}

/// The cells of one CSV line (quoted cells may hold commas).
fn csv_cells(line: &str) -> Vec<String> {
    let (mut cells, mut cell, mut quoted) = (Vec::new(), String::new(), false);
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                cell.push('"');
                chars.next();
            }
            '"' => quoted = !quoted,
            ',' if !quoted => cells.push(std::mem::take(&mut cell)),
            c => cell.push(c),
        }
    }
    cells.push(cell);
    cells
}

/// `augur bench kernels --quick`: each statement's default layout beside
/// NumPy's fastest call (checked equal by checksums), with what the
/// default chose; without NumPy the table says how to install it.
#[test]
#[augur::staged]
fn bench_kernels_sets_the_defaults_beside_numpy() {
    let dir = scratch("bench_kernels");
    let out = ok(&[
        "bench",
        "kernels",
        "--quick",
        "--out",
        dir.to_str().unwrap(),
    ]);
    let csv = std::fs::read_to_string(dir.join("kernels-cpu-vs-numpy.csv")).unwrap();
    let header = csv.lines().next().unwrap();
    assert!(
        header.starts_with("statement,shapes,augur (auto),NumPy (best call),augur / NumPy"),
        "{header}"
    );
    // Seven statements, each with what the default chose.
    assert_eq!(csv.lines().count(), 1 + 7, "{csv}");
    let rows: Vec<Vec<String>> = csv.lines().skip(1).map(csv_cells).collect();
    let ttm = rows.iter().find(|r| r[0].starts_with("ttm:")).unwrap();
    assert!(ttm.last().unwrap().contains("fused ij"), "{ttm:?}");
    let numpy = std::process::Command::new("python3")
        .args(["-c", "import numpy"])
        .status()
        .is_ok_and(|s| s.success());
    if numpy {
        assert!(ttm[4].parse::<f64>().is_ok(), "{ttm:?}");
    } else {
        assert!(out.contains("pip install numpy"), "{out}");
    }
}

/// `augur bench distributed --quick`: augur's MPI programs beside pdgemm
/// (each checked against a single-process computation by the program
/// itself), the product's bytes equal to the plan's; without MPI the
/// table says how to install it.
#[test]
#[augur::staged]
fn bench_distributed_sets_augur_beside_pdgemm() {
    let dir = scratch("bench_distributed");
    let out = ok(&[
        "bench",
        "distributed",
        "--quick",
        "--out",
        dir.to_str().unwrap(),
    ]);
    let csv = std::fs::read_to_string(dir.join("distributed-vs-pdgemm.csv")).unwrap();
    let mpi = std::process::Command::new("mpicc")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !mpi {
        assert!(out.contains("apt-get install openmpi-bin"), "{out}");
        assert!(std::env::var_os("CI").is_none(), "CI installs MPI");
        return;
    }
    // Three statements on 1, 2 and 4 ranks.
    assert_eq!(csv.lines().count(), 1 + 3 * 3, "{csv}");
    let header = csv_cells(csv.lines().next().unwrap());
    let col = |name: &str| header.iter().position(|c| c == name).unwrap();
    let rows: Vec<Vec<String>> = csv.lines().skip(1).map(csv_cells).collect();
    for r in &rows {
        assert!(r[col("augur (s)")].parse::<f64>().is_ok(), "{r:?}");
    }
    // The product on a 1x2 grid: each rank sends its block of A (n^2/2 of
    // n = 192 doubles) to the other, as the plan says.
    let two = &rows[1];
    assert_eq!(two[col("grid")], "1x2", "{two:?}");
    assert_eq!(two[col("augur bytes/rank (max)")], "147456", "{two:?}");
    assert_eq!(two[col("plan bytes/rank (max)")], "147456", "{two:?}");
    // A B^T on 1x2 by partial sums: each rank sends its partial half of C,
    // as pdgemm does; TTM on 2 ranks: each sends its half of U (24 x 48).
    let transposed = &rows[4];
    assert_eq!(
        transposed[col("augur bytes/rank (max)")],
        "147456",
        "{transposed:?}"
    );
    let ttm = &rows[7];
    assert_eq!(ttm[col("grid")], "2x1", "{ttm:?}");
    assert_eq!(ttm[col("augur bytes/rank (max)")], "9216", "{ttm:?}");
    assert_eq!(ttm[col("plan bytes/rank (max)")], "9216", "{ttm:?}");
}
