//! `augur demo`: the paper's examples staged, compiled and run on the CPU,
//! with what happened shown in a few screens: the generated code, the
//! prophecy decisions (`explain`), first-stage runs, bytes moved and
//! timings. Every result is checked against plain Rust; a mismatch is an
//! error, so the demo doubles as a smoke test. Without a C compiler the
//! JIT compiles everything (`Backend::Auto`), and the comparison with
//! BuildIt's C, which needs one, says it was skipped.

use crate::bench::einsum::{bytes_per_turn, sim_time_per_turn};
use crate::bench::fusion::measure;
use crate::bench::{ms, time};
use crate::catalog;
use crate::programs::einsum::{Benchmark, Kind};
use crate::report::{Cell, Table};
use crate::{imp, Result};
use augur::exec::compile::compiler_found;
use augur::exec::{Backend, CompileOptions};
use augur::{Builder, Value};
use augur_einsum::Movement;
use std::fmt::Write as _;
use std::io::IsTerminal;

/// Output helpers: bold headings on a terminal, plain text otherwise.
struct Screen {
    color: bool,
    out: String,
}

impl Screen {
    #[augur::staged]
    fn heading(&mut self, n: usize, title: &str) {
        let line = format!("[{n}/5] {title}");
        let rule = "━".repeat(line.chars().count().min(78));
        if self.color {
            let _ = writeln!(self.out, "\n\x1b[1;36m{line}\x1b[0m\n{rule}");
        } else {
            let _ = writeln!(self.out, "\n{line}\n{rule}");
        }
    }

    #[augur::staged]
    fn text(&mut self, s: &str) {
        let _ = writeln!(self.out, "{s}");
    }

    #[augur::staged]
    fn code(&mut self, code: &str, max_lines: usize) {
        let lines: Vec<&str> = code.lines().collect();
        for l in lines.iter().take(max_lines) {
            let _ = writeln!(self.out, "    │ {l}");
        }
        if lines.len() > max_lines {
            let _ = writeln!(
                self.out,
                "    │ … ({} more line{}: `augur emit` shows all)",
                lines.len() - max_lines,
                if lines.len() - max_lines == 1 {
                    ""
                } else {
                    "s"
                }
            );
        }
    }

    #[augur::staged]
    fn ok(&mut self, s: &str) {
        let mark = if self.color {
            "\x1b[32m✓\x1b[0m"
        } else {
            "✓"
        };
        let _ = writeln!(self.out, "  {mark} {s}");
    }

    /// Prints what has accumulated (screens appear as they are ready).
    #[augur::staged]
    fn flush(&mut self) {
        print!("{}", std::mem::take(&mut self.out));
    }
}

#[augur::staged]
fn fail(what: String) -> Box<dyn std::error::Error> {
    format!("demo check failed: {what}").into()
}

/// Runs the demo, printing as it goes.
#[augur::staged]
pub fn run() -> Result<()> {
    let mut s = Screen {
        color: std::io::stdout().is_terminal(),
        out: String::new(),
    };
    s.text("augur: staged DSLs in Rust with prophecy variables.");
    s.text("Ordinary Rust over Dyn<T> (second-stage) and Static<T> (first-stage) values");
    s.text("generates C; data-dependent control flow is found by re-running the closure;");
    s.text("prophecies predict what later code needs and are checked when it runs.");
    power(&mut s)?;
    s.flush();
    prophecy(&mut s)?;
    s.flush();
    einsum(&mut s)?;
    s.flush();
    fusion(&mut s)?;
    s.flush();
    imp_live(&mut s)?;
    s.text("\nMore: `augur emit <example> --target c|cuda|cuda-sim`, `augur explain <example>`,");
    s.text(
        "`augur bench` (tables, CSV/JSON, SVG plots), `augur bench paper` (the paper's tables).",
    );
    s.flush();
    Ok(())
}

/// What compiled a function, in the demo's words.
#[augur::staged]
fn backend_name(b: Backend) -> &'static str {
    match b {
        Backend::C => "cc",
        _ => "the JIT (no C compiler found)",
    }
}

#[augur::staged]
fn power(s: &mut Screen) -> Result<()> {
    s.heading(
        1,
        "A first staged function: x^15 with a first-stage exponent",
    );
    let (min, _, ex) = time(5, catalog::power_extracted)?;
    s.code(&ex.c_code(), 14);
    let f = ex.compile()?;
    // SAFETY: power15 takes and returns a plain i64.
    let got = unsafe { (f.get())(3) };
    if got != 3i64.pow(15) {
        return Err(fail(format!("power15(3) = {got}")));
    }
    s.ok(&format!(
        "{} run of the closure, staged in {:.2} ms; compiled by {} and called: power15(3) = {got} = 3^15",
        ex.stats().total_runs,
        ms(min),
        backend_name(f.backend())
    ));
    Ok(())
}

#[augur::staged]
fn prophecy(s: &mut Screen) -> Result<()> {
    s.heading(2, "A prophecy: copy x only if code after the copy reads it");
    let ex = catalog::prophecy_extracted()?;
    s.code(&ex.c_code(), 24);
    s.text("  explain():");
    for l in ex.explain().to_string().lines() {
        s.text(&format!("    {l}"));
    }
    let f = ex.compile()?;
    for x in [-3, 1, 5] {
        // SAFETY: predicted takes and returns a plain i32.
        let got = unsafe { (f.get())(x) };
        let want = if x > 1 {
            let mut r = 1;
            while r < x {
                r += x;
            }
            r
        } else {
            1
        };
        let interp = ex.interpret(&[x.into()])?;
        if got != want || interp != Value::I32(want) {
            return Err(fail(format!(
                "predicted({x}) = {got}, {interp:?}; want {want}"
            )));
        }
    }
    let st = ex.stats();
    s.ok(&format!(
        "{} runs in {} prophecy attempts; compiled and interpreted results equal plain Rust",
        st.total_runs, st.attempts
    ));
    Ok(())
}

#[augur::staged]
fn einsum(s: &mut Screen) -> Result<()> {
    const SIZE: usize = 256;
    s.heading(
        3,
        &format!(
            "einsum: move only what GPU kernels read (matmul {SIZE}, GPU simulated on the CPU)"
        ),
    );
    let mut t = Table::new(
        "demo-einsum",
        "z[i, j] = x[i, k] * y[k, j] inside run_on_gpu, per data-movement strategy:",
        &[
            "strategy",
            "first-stage runs",
            "attempts",
            "staging (ms)",
            "bytes per turn",
            "simulated µs per turn",
        ],
    );
    for m in Movement::ALL {
        let b = Benchmark::paper(Kind::MatMul, SIZE, m);
        let (min, _, ex) = time(3, || Ok(b.extract()?))?;
        let bytes = bytes_per_turn(&b)?;
        let sim = sim_time_per_turn(&b, 3)?;
        t.push(vec![
            crate::bench::first_stage::strategy_name(m).into(),
            ex.stats().total_runs.into(),
            ex.stats().attempts.into(),
            Cell::float(ms(min), 2),
            bytes.into(),
            Cell::float(sim, 0),
        ]);
    }
    s.text(&t.render());
    let ex = Benchmark::paper(Kind::MatMul, SIZE, Movement::Prophecy).extract()?;
    s.text("  explain() for the prophecy strategy (what each tensor's prophecy settled on):");
    for l in ex.explain().to_string().lines().take(16) {
        s.text(&format!("    {l}"));
    }
    s.ok("bytes equal what each strategy must move; results equal plain Rust (checked)");
    Ok(())
}

#[augur::staged]
fn fusion(s: &mut Screen) -> Result<()> {
    const N: usize = 102400;
    s.heading(
        4,
        "nn: fuse ReLU into the convolution only when every path agrees",
    );
    let ex = crate::programs::nn::paper_benchmark(&Builder::new(), N, 3)?;
    s.text("  The paper's benchmark: the first loop's ReLU threshold depends on a runtime");
    s.text("  flag (2.0 or 4.0), the second loop's is fixed. explain():");
    for l in ex.explain().to_string().lines().take(12) {
        s.text(&format!("    {l}"));
    }
    let cc = compiler_found(&CompileOptions::default().resolved_cc());
    let (buildit, [ou, of]) = measure(N, 3, true, 5, cc)?;
    let how = if cc {
        "gcc -O3 for both"
    } else {
        "ours JIT-compiled: no C compiler found"
    };
    let mut t = Table::new(
        "demo-fusion",
        &format!("conv1d({N}) × 3 taps then ReLU, µs (min of 5; {how}):"),
        &["code", "unfused", "fused"],
    );
    t.push(vec!["augur".into(), Cell::float(ou, 0), Cell::float(of, 0)]);
    match buildit {
        Some([bu, bf]) => t.push(vec![
            "BuildIt's generated C".into(),
            Cell::float(bu, 0),
            Cell::float(bf, 0),
        ]),
        None => t.push(vec![
            "BuildIt's generated C".into(),
            "skipped: no C compiler".into(),
            "skipped: no C compiler".into(),
        ]),
    }
    s.text(&t.render());
    s.ok(if cc {
        "all four versions give identical outputs (checked element by element)"
    } else {
        "fused and unfused give identical outputs (checked element by element); BuildIt's C comparison skipped"
    });
    Ok(())
}

/// The paper's §3 language: a sum with a dead assignment.
pub const IMP_SAMPLE: &str = "\
l0: i := 0
l1: s := 0
l2: d := 7
l3: s := s + i
l4: i := i + 1
l5: if i <= n then l3
l6: d := s * 2
l7: halt
l8: done
";

#[augur::staged]
fn imp_live(s: &mut Screen) -> Result<()> {
    s.heading(
        5,
        "The paper's core language: live variables by re-execution, dead code dropped",
    );
    let (p, _) = imp::load_text(IMP_SAMPLE, "sum.imp")?;
    s.text(&imp::live(&p)?);
    let init = imp::parse_inputs(&["n=10".into()])?;
    let c = imp::compile(&p, Some(init), 10_000)?;
    s.text("  Staged to C (the caller reads every variable's final value from the state");
    s.text("  array, so only assignments overwritten before any read are dead):");
    s.code(&c, usize::MAX);
    let dropped = c.contains("dead assignments dropped: l2");
    if !dropped {
        return Err(fail(format!("l2 was not dropped:\n{c}")));
    }
    s.ok("l2 dropped (d is overwritten before anyone reads it); the compiled code gives the semantics' final state (last line)");
    Ok(())
}
