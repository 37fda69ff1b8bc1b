//! A staged interpreter at scale (`augur-bf`): extraction time against
//! program length in both of its forms (over resumable points, and with a
//! `Static` program counter), and the generated code's speed on a
//! loop-heavy program beside the reference and the folding interpreters.

use super::{ms, time, Ctx, Outcome};
use crate::report::{Cell, Plot, Table};
use crate::Result;
use augur::exec::{Backend, CompileOptions};
use augur::Builder;
use augur_bf::{extract, nested_loops, run, squares, Folded, Form, Options, Program};
use std::time::Instant;

/// Runs the experiment.
pub fn run_all(ctx: &Ctx) -> Result<Outcome> {
    let (extraction, plot) = extraction(ctx)?;
    let code = code(ctx)?;
    Ok(Outcome {
        tables: vec![extraction, code],
        plots: vec![plot],
    })
}

fn form_name(form: Form) -> &'static str {
    match form {
        Form::Points => "points",
        Form::StaticPc => "static pc",
    }
}

/// Extraction of loops in sequence (nested three deep) as the program
/// grows, both forms, without folding (so that each command is staged).
fn extraction(ctx: &Ctx) -> Result<(Table, Plot)> {
    let mut t = Table::new(
        "extraction",
        "Staging Brainf***: first-stage time against program length (loops in sequence, 3 deep)",
        &[
            "commands",
            "form",
            "runs",
            "operations",
            "nodes",
            "time (ms)",
            "MB held",
        ],
    );
    let sizes: &[(Form, &[usize])] = if ctx.quick {
        &[
            (Form::Points, &[1000, 4000, 16000]),
            (Form::StaticPc, &[1000, 2000]),
        ]
    } else {
        &[
            (Form::Points, &[1000, 4000, 16000, 40000, 100000]),
            (Form::StaticPc, &[1000, 2000, 4000, 8000]),
        ]
    };
    let mut plot = Plot::lines(
        "extraction",
        "Staging Brainf***: first-stage time",
        "commands",
        "ms",
    )
    .log(true, true);
    for &(form, ns) in sizes {
        let bar = ctx.bar(ns.len(), form_name(form));
        let mut series = Vec::new();
        for &n in ns {
            bar.set_message(format!("n = {n}"));
            let prog = nested_loops(n);
            let opts = Options { form, fold: false };
            super::heap::reset_peak();
            let base = super::heap::live();
            let reps = if n >= 16000 { 1 } else { ctx.reps(3) };
            let (best, _, f) = time(reps, || {
                Ok(extract(&prog, opts, &Builder::new().max_work(u64::MAX))?)
            })?;
            let held = super::heap::peak_since(base) as f64 / 1e6;
            check(&prog, &f, b"")?;
            let s = f.stats();
            t.push(vec![
                (prog.len() as i64).into(),
                form_name(form).into(),
                s.total_runs.into(),
                s.operations.into(),
                s.nodes.into(),
                Cell::float(ms(best), 1),
                Cell::float(held, 1),
            ]);
            series.push((prog.len() as f64, ms(best)));
            bar.inc(1);
        }
        bar.finish_and_clear();
        plot = plot.series(form_name(form), series);
    }
    t.note("time: extraction (runs, structuring, passes), minimum of the repetitions; MB held: the heap's peak above what was live before");
    t.note("the forms give code that behaves alike (the points form's is flat past 64 points); each program is checked against the reference interpreter (C)");
    Ok((t, plot))
}

/// Runs `f`'s C on `prog` with `input`, against the reference.
fn check(prog: &Program, f: &augur::Extracted<augur_bf::BfFn>, input: &[u8]) -> Result<()> {
    let c = f.compile()?;
    let (want, _) = outputs(prog, input)?;
    let (mut tape, mut out) = (vec![0u8; 64], vec![0u8; 16384]);
    let mut inp = input.to_vec();
    // SAFETY: the reference ran within a 64-cell tape and this output.
    let n = unsafe { c.get()(tape.as_mut_ptr(), inp.as_mut_ptr(), out.as_mut_ptr()) };
    if out[..n.max(0) as usize] != want[..] {
        return Err("the staged Brainf*** differs from the reference".into());
    }
    Ok(())
}

fn outputs(prog: &Program, input: &[u8]) -> Result<(Vec<u8>, Vec<u8>)> {
    let (mut tape, mut out) = (vec![0u8; 64], vec![0u8; 16384]);
    let n = run(prog, &mut tape, input, &mut out).map_err(|e| e.to_string())?;
    out.truncate(n);
    Ok((out, tape))
}

/// The squares program (2.6 million turns of moving loops): each way to
/// run it, the same output checked.
fn code(ctx: &Ctx) -> Result<Table> {
    let prog = squares();
    let (want, _) = outputs(&prog, b"")?;
    let mut t = Table::new(
        "code",
        "Running a loop-heavy Brainf*** program (10,000 squares): the staged code beside interpreters",
        &["how", "folded while staging", "to run (ms)", "run (ms)", "vs gcc -O2 of the folded stage"],
    );
    let reps = ctx.reps(7);
    let mut rows: Vec<(String, &str, Option<f64>, f64)> = Vec::new();
    let (r, _, ()) = time(ctx.reps(3), || {
        let (mut tape, mut out) = (vec![0u8; 64], vec![0u8; 16384]);
        run(&prog, &mut tape, b"", &mut out).map_err(|e| e.to_string())?;
        same(&out[..want.len()], &want)
    })?;
    rows.push(("reference interpreter".into(), "-", None, ms(r)));
    let start = Instant::now();
    let folded = Folded::new(&prog);
    let fold_ms = ms(start.elapsed());
    let (r, _, ()) = time(reps, || {
        let (mut tape, mut out) = (vec![0u8; 64], vec![0u8; 16384]);
        folded
            .run(&mut tape, b"", &mut out)
            .map_err(|e| e.to_string())?;
        same(&out[..want.len()], &want)
    })?;
    rows.push(("folding interpreter".into(), "yes", Some(fold_ms), ms(r)));
    for fold in [true, false] {
        let opts = Options {
            form: Form::Points,
            fold,
        };
        for backend in [Backend::C, Backend::Jit] {
            let cache = super::compile::FreshCache::new(usize::from(fold) * 2 + 100);
            let opts_c = CompileOptions {
                cache_dir: Some(cache.0.clone()),
                ..CompileOptions::default().with_backend(backend)
            };
            let start = Instant::now();
            let f = extract(&prog, opts, &Builder::new())?;
            let code = f.compile_with(&opts_c)?;
            let ready = ms(start.elapsed());
            let (r, _, ()) = time(reps, || {
                let (mut tape, mut out) = (vec![0u8; 64], vec![0u8; 16384]);
                // SAFETY: the program uses 5 cells and writes 10,000 bytes.
                let n =
                    unsafe { code.get()(tape.as_mut_ptr(), [0u8].as_mut_ptr(), out.as_mut_ptr()) };
                same(&out[..n as usize], &want)
            })?;
            let how = match backend {
                Backend::C => "staged, C (gcc -O2)",
                _ => "staged, JIT",
            };
            rows.push((
                how.into(),
                if fold { "yes" } else { "no" },
                Some(ready),
                ms(r),
            ));
        }
    }
    let gcc = rows
        .iter()
        .find(|r| r.0.contains("gcc") && r.1 == "yes")
        .map_or(1.0, |r| r.3);
    for (how, fold, ready, run_ms) in rows {
        t.push(vec![
            how.into(),
            fold.into(),
            ready.map_or(Cell::Missing, |m| Cell::float(m, 1)),
            Cell::float(run_ms, 3),
            Cell::float(run_ms / gcc, 2),
        ]);
    }
    t.note("to run: from the program to something that runs it (folding; extraction and compilation, C with its cache off)");
    t.note("run: minimum of the repetitions, output checked against the reference every time");
    Ok(t)
}

fn same(got: &[u8], want: &[u8]) -> Result<()> {
    if got != want {
        return Err("a run printed something else than the reference".into());
    }
    Ok(())
}
