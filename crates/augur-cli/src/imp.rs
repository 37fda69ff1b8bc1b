//! `augur imp run|live|compile FILE`: the paper's core language from a
//! file. `run` executes it by the standard semantics; `live` runs the
//! live-variable prophecy analysis by re-execution (Algorithms Execute,
//! Solve, Driver) and checks it against the classic worklist solver;
//! `compile` stages it to C through augur, dropping the assignments the
//! liveness prophecy says nobody reads, and checks the C against the
//! semantics.

use crate::Result;
use augur_imp::check::check;
use augur_imp::dataflow;
use augur_imp::parse::parse;
use augur_imp::semantics::{step, Config, State, Step};
use augur_imp::staged::{stage, Staged};
use augur_imp::{driver, Diagnostic, LiveVariables, Pos, Program, Severity};
use std::fmt::Write;
use std::path::Path;

/// Reads and parses `path`; syntax errors and well-formedness errors name
/// the file, line and column. Warnings are returned for the caller to show.
#[augur::staged]
pub fn load(path: &Path) -> Result<(Program, Vec<String>)> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    load_text(&text, &path.display().to_string())
}

/// [`load`] for program text; `name` is used in messages.
#[augur::staged]
pub fn load_text(text: &str, name: &str) -> Result<(Program, Vec<String>)> {
    let p = parse(text).map_err(|e| format!("{name}:{e}"))?;
    let (errors, warnings): (Vec<_>, Vec<_>) = check(&p)
        .into_iter()
        .partition(|d| d.severity() == Severity::Error);
    // A diagnostic with a position prints `line:col: `; one without none.
    let show = |d: &Diagnostic| {
        let sep = if d.pos == Pos::default() { " " } else { "" };
        format!("{name}:{sep}{d}")
    };
    if !errors.is_empty() {
        let lines: Vec<String> = errors.iter().map(show).collect();
        return Err(format!("{} is not well-formed:\n{}", name, lines.join("\n")).into());
    }
    Ok((p, warnings.iter().map(show).collect()))
}

/// Parses `x=3` assignments for the initial state.
#[augur::staged]
pub fn parse_inputs(inputs: &[String]) -> Result<State> {
    let mut s = State::new();
    for a in inputs {
        let (v, n) = a
            .split_once('=')
            .ok_or_else(|| format!("'{a}' is not VAR=NUMBER"))?;
        let n: i64 = n
            .trim()
            .parse()
            .map_err(|_| format!("'{a}': '{}' is not a 64-bit integer", n.trim()))?;
        s.set(v.trim(), n);
    }
    Ok(s)
}

/// The final state of running `p` from `initial` for at most `fuel` steps,
/// and the number of steps; an error says where it got stuck or that the
/// fuel ran out.
#[augur::staged]
pub fn execute(p: &Program, initial: State, fuel: usize) -> Result<(State, usize)> {
    let at = p.first().ok_or("the program is empty")?;
    let mut c = Config { at, state: initial };
    for steps in 0..=fuel {
        match step(p, &c) {
            Step::Done => return Ok((c.state, steps)),
            Step::Stuck(s) => return Err(format!("stuck after {steps} steps at {s}").into()),
            Step::Next(n) => c = n,
        }
    }
    Err(format!("still running after {fuel} steps (raise --fuel, or it may not terminate)").into())
}

/// `augur imp run`: the final state, one `var = value` per line.
#[augur::staged]
pub fn run(p: &Program, initial: State, fuel: usize) -> Result<String> {
    let (state, steps) = execute(p, initial, fuel)?;
    let mut out = String::new();
    for (v, n) in &state.0 {
        let _ = writeln!(out, "{v} = {n}");
    }
    let _ = writeln!(out, "({steps} steps)");
    Ok(out)
}

/// `augur imp live`: β (the variables live before each label) by
/// re-execution, with how it got there, checked against the worklist
/// solver.
#[augur::staged]
pub fn live(p: &Program) -> Result<String> {
    let prophecy = driver(p, &LiveVariables);
    let classic = dataflow::solve(p, &LiveVariables);
    if prophecy.beta != classic {
        return Err(format!(
            "re-execution and the worklist solver disagree:\n{:?}\n{:?}",
            prophecy.beta, classic
        )
        .into());
    }
    let mut out = String::new();
    let width = p
        .cmds
        .iter()
        .map(|c| c.to_string().len())
        .max()
        .unwrap_or(0);
    for (c, live) in p.cmds.iter().zip(&prophecy.beta) {
        let vars: Vec<&str> = live.iter().map(String::as_str).collect();
        let _ = writeln!(
            out,
            "{:width$}   live: {{{}}}",
            c.to_string(),
            vars.join(", ")
        );
    }
    let _ = writeln!(
        out,
        "\n{} executions of the first stage, {} mispredictions, {} repairs, {} constraints; \
         equal to the worklist solver's result",
        prophecy.executions,
        prophecy.mispredictions.len(),
        prophecy.repairs,
        prophecy.constraints
    );
    for m in &prophecy.mispredictions {
        let vars: Vec<&str> = m.missing.iter().map(String::as_str).collect();
        let _ = writeln!(
            out,
            "  misprediction at {}: {{{}}} not predicted live",
            m.label,
            vars.join(", ")
        );
    }
    Ok(out)
}

/// `augur imp compile`: the staged C, the assignments dropped as dead, and
/// (with inputs) the compiled result checked against the semantics.
#[augur::staged]
pub fn compile(p: &Program, initial: Option<State>, fuel: usize) -> Result<String> {
    let staged = stage(p, true)?;
    let mut out = staged.extracted.c_code();
    let dropped = if staged.dropped.is_empty() {
        "none".to_string()
    } else {
        staged.dropped.join(", ")
    };
    let _ = writeln!(out, "\n// dead assignments dropped: {dropped}");
    if let Some(initial) = initial {
        // The semantics first: its fuel bounds a program that never stops,
        // which the compiled code would run forever.
        let (want, _) = execute(p, initial.clone(), fuel)?;
        let got = run_compiled(&staged, &initial)?;
        let same = staged
            .vars
            .iter()
            .zip(&got)
            .all(|(v, n)| want.get(v).is_none_or(|w| w == *n));
        if !same {
            return Err(
                format!("the compiled program gives {got:?}, the semantics {want:?}").into(),
            );
        }
        let shown: Vec<String> = staged
            .vars
            .iter()
            .zip(&got)
            .map(|(v, n)| format!("{v} = {n}"))
            .collect();
        let _ = writeln!(
            out,
            "// compiled and run: {} (the same as the semantics)",
            shown.join(", ")
        );
    }
    Ok(out)
}

/// Runs the compiled program on `initial` (unset variables start at 0).
#[augur::staged]
fn run_compiled(staged: &Staged, initial: &State) -> Result<Vec<i64>> {
    let mut state: Vec<i64> = staged
        .vars
        .iter()
        .map(|v| initial.get(v).unwrap_or(0))
        .collect();
    let f = staged.extracted.compile()?;
    // SAFETY: the function reads and writes one i64 per variable of
    // `staged.vars`, which is exactly the array's length.
    unsafe { (f.get())(state.as_mut_ptr()) };
    Ok(state)
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::demo::IMP_SAMPLE as SUM;

    #[test]
    #[augur::staged]
    fn runs_liveness_and_compiles() {
        let (p, warnings) = load_text(SUM, "sum.imp").unwrap();
        // n is the input: read before any assignment, as the check warns.
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(
            warnings[0].starts_with("sum.imp:6:1: warning: `n`"),
            "{warnings:?}"
        );
        let state = parse_inputs(&["n=4".into()]).unwrap();
        let out = run(&p, state.clone(), 1000).unwrap();
        assert!(out.contains("s = 10\n"), "{out}");
        let l = live(&p).unwrap();
        assert!(
            l.contains("l3: s := s + i") && l.contains("live: {i, n, s}"),
            "{l}"
        );
        let c = compile(&p, Some(state), 1000).unwrap();
        assert!(c.contains("dead assignments dropped: l2"), "{c}");
        assert!(c.contains("s = 10"), "{c}");
    }

    #[test]
    #[augur::staged]
    fn errors_name_file_line_and_column() {
        let e = load_text("l0: x := \n", "bad.imp")
            .err()
            .unwrap()
            .to_string();
        assert!(e.starts_with("bad.imp:1:"), "{e}");
        let e = load_text("l0: goto l9\nl1: halt\nl2: done\n", "t.imp")
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("t.imp:1:") && e.contains("l9"), "{e}");
        let e = parse_inputs(&["n=x".into()]).err().unwrap().to_string();
        assert!(e.contains("'x' is not a 64-bit integer"), "{e}");
        let (p, _) = load_text(SUM, "sum.imp").unwrap();
        let e = execute(&p, State::new(), 100).err().unwrap().to_string();
        assert!(e.contains("unset variable n"), "{e}");
        let e = load_text("", "empty.imp").err().unwrap().to_string();
        assert!(e.contains("empty.imp: error:"), "{e}");
    }

    #[test]
    #[augur::staged]
    fn compile_checks_the_semantics_first_so_fuel_bounds_endless_programs() {
        let endless = "l0: x := 1 - x\nl1: if 0 <= x then l0\nl2: halt\nl3: done\n";
        let (p, _) = load_text(endless, "loop.imp").unwrap();
        let init = parse_inputs(&["x=1".into()]).unwrap();
        let e = compile(&p, Some(init), 100).err().unwrap().to_string();
        assert!(e.contains("still running after 100 steps"), "{e}");
    }
}
