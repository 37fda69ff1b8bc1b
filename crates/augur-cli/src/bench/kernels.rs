//! The einsum DSL's CPU kernels on tensor statements beyond matmul beside
//! NumPy (on its OpenBLAS), in one run: a matrix product, a batched one,
//! tensor-times-matrix at two sizes, MTTKRP, a transpose and an outer
//! product, each on the same data, with the same number of threads,
//! interleaved (rounds of ours then NumPy's), minimum of several calls.
//!
//! NumPy's side is its best call among a few a user would write (`matmul`,
//! `einsum(optimize=True)`, a reshape to one `matmul`, `tensordot`,
//! `multiply.outer`, `copyto`), each timed; the table names the fastest.
//! NumPy runs in a `python3` child process that this bench talks to over
//! a pipe; without it (or without NumPy) the table shows the generated
//! code alone and says how to install it. Every result is checked: the
//! inputs are small integers, so each result is exact and both sides must
//! agree on two checksums of it.

use super::{ms, Ctx, Outcome};
use crate::report::{Cell, Table};
use crate::Result;
use augur::{Builder, Dyn, Extracted};
use augur_einsum::{compile_cpu, einsum, tune, Chosen, Config, Einsum, Schedule, Tensor};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::Instant;

/// How to install NumPy, for messages.
pub const INSTALL: &str = "NumPy is not installed (no `python3 -c 'import numpy'`): install it \
     with `pip install numpy` (its wheels bring their own OpenBLAS) or `sudo apt-get install \
     python3-numpy`, then run `augur bench kernels` again";

/// The generated function: up to three inputs, then the output (unused
/// arguments are ignored).
type KernelFn = unsafe extern "C" fn(*mut f32, *mut f32, *mut f32, *mut f32);

/// One statement measured.
#[derive(Clone)]
pub struct Case {
    /// Its name in the table.
    pub name: &'static str,
    /// The statement, as text.
    pub statement: &'static str,
    /// The inputs' shapes, then the output's.
    pub shapes: Vec<Vec<usize>>,
    /// NumPy calls that compute it: Python expressions over `x`, `y`, `z`
    /// (the inputs) and `out`; one that returns an array is copied into
    /// `out` after it is timed.
    pub numpy: &'static [&'static str],
    /// Stages it over tensors made from `shapes`.
    pub stage: fn(&Einsum, &[Tensor<f32>]),
    /// Multiply-adds of one call (for GFLOP/s).
    pub madds: f64,
}

#[augur::staged]
fn stage_matmul(ein: &Einsum, t: &[Tensor<f32>]) {
    let (i, j, k) = (ein.index("i"), ein.index("j"), ein.index("k"));
    let (a, b, c) = (&t[0], &t[1], &t[2]);
    einsum!(c[i, j] = a[i, k] * b[k, j]);
}

#[augur::staged]
fn stage_batched(ein: &Einsum, t: &[Tensor<f32>]) {
    let (n, i, j, k) = (
        ein.index("n"),
        ein.index("i"),
        ein.index("j"),
        ein.index("k"),
    );
    let (a, b, c) = (&t[0], &t[1], &t[2]);
    einsum!(c[n, i, j] = a[n, i, k] * b[n, k, j]);
}

#[augur::staged]
fn stage_ttm(ein: &Einsum, t: &[Tensor<f32>]) {
    let (i, j, k, r) = (
        ein.index("i"),
        ein.index("j"),
        ein.index("k"),
        ein.index("r"),
    );
    let (x, u, y) = (&t[0], &t[1], &t[2]);
    einsum!(y[i, j, r] = x[i, j, k] * u[k, r]);
}

#[augur::staged]
fn stage_mttkrp(ein: &Einsum, t: &[Tensor<f32>]) {
    let (i, j, k, r) = (
        ein.index("i"),
        ein.index("j"),
        ein.index("k"),
        ein.index("r"),
    );
    let (x, b, c, m) = (&t[0], &t[1], &t[2], &t[3]);
    einsum!(m[i, r] = x[i, j, k] * b[j, r] * c[k, r]);
}

#[augur::staged]
fn stage_transpose(ein: &Einsum, t: &[Tensor<f32>]) {
    let (i, j) = (ein.index("i"), ein.index("j"));
    let (a, b) = (&t[0], &t[1]);
    einsum!(b[j, i] = a[i, j]);
}

#[augur::staged]
fn stage_outer(ein: &Einsum, t: &[Tensor<f32>]) {
    let (i, j) = (ein.index("i"), ein.index("j"));
    let (a, b, c) = (&t[0], &t[1], &t[2]);
    einsum!(c[i, j] = a[i] * b[j]);
}

/// The statements measured (smaller sizes when `quick`).
pub fn cases(quick: bool) -> Vec<Case> {
    let s = |full: usize, small: usize| if quick { small } else { full };
    let (n, b, t1, t2, m, r) = (
        s(1024, 96),
        s(64, 4),
        s(128, 24),
        s(256, 40),
        s(128, 24),
        s(64, 16),
    );
    let (tr, o) = (s(4096, 200), s(4096, 300));
    let f = |v: &[usize]| v.iter().product::<usize>() as f64;
    let ttm = |e: usize| Case {
        name: if e == t1 { "ttm" } else { "ttm (larger)" },
        statement: "Y[i,j,r] = X[i,j,k] U[k,r]",
        shapes: vec![vec![e, e, e], vec![e, e], vec![e, e, e]],
        numpy: &[
            "np.matmul(x.reshape(-1, x.shape[2]), y, out=out.reshape(-1, y.shape[1]))",
            "np.matmul(x, y, out=out)",
            "np.tensordot(x, y, axes=1)",
            "np.einsum('ijk,kr->ijr', x, y, out=out, optimize=True)",
        ],
        stage: stage_ttm,
        madds: f(&[e, e, e, e]),
    };
    vec![
        Case {
            name: "matmul",
            statement: "C[i,j] = A[i,k] B[k,j]",
            shapes: vec![vec![n, n], vec![n, n], vec![n, n]],
            numpy: &["np.matmul(x, y, out=out)", "np.dot(x, y, out=out)"],
            stage: stage_matmul,
            madds: f(&[n, n, n]),
        },
        Case {
            name: "batched matmul",
            statement: "C[n,i,j] = A[n,i,k] B[n,k,j]",
            shapes: vec![vec![b, t2, t2], vec![b, t2, t2], vec![b, t2, t2]],
            numpy: &[
                "np.matmul(x, y, out=out)",
                "np.einsum('nik,nkj->nij', x, y, out=out, optimize=True)",
            ],
            stage: stage_batched,
            madds: f(&[b, t2, t2, t2]),
        },
        ttm(t1),
        ttm(t2),
        Case {
            name: "mttkrp",
            statement: "M[i,r] = X[i,j,k] B[j,r] C[k,r]",
            shapes: vec![vec![m, m, m], vec![m, r], vec![m, r], vec![m, r]],
            numpy: &[
                "np.einsum('ijk,jr,kr->ir', x, y, z, optimize=True)",
                "np.matmul(x.reshape(x.shape[0], -1), \
                 (y[:, None, :] * z[None, :, :]).reshape(-1, y.shape[1]), out=out)",
            ],
            stage: stage_mttkrp,
            madds: f(&[m, m, m, r]),
        },
        Case {
            name: "transpose",
            statement: "B[j,i] = A[i,j]",
            shapes: vec![vec![tr, tr], vec![tr, tr]],
            numpy: &["np.copyto(out, x.T)", "np.ascontiguousarray(x.T)"],
            stage: stage_transpose,
            madds: 0.0,
        },
        Case {
            name: "outer product",
            statement: "C[i,j] = a[i] b[j]",
            shapes: vec![vec![o], vec![o], vec![o, o]],
            numpy: &[
                "np.multiply.outer(x, y, out=out)",
                "np.outer(x, y, out=out)",
            ],
            stage: stage_outer,
            madds: 0.0,
        },
    ]
}

/// Input `n`'s elements: `(e % m) - off`, the same on both sides.
fn fill(shape: &[usize], n: usize) -> Vec<f32> {
    let (m, off) = [(7, 3.0), (5, 2.0), (3, 1.0)][n];
    (0..shape.iter().product::<usize>())
        .map(|e| (e % m) as f32 - off)
        .collect()
}

/// Two checksums of a result: its sum and a weighted sum, both exact for
/// results of small integers.
fn checksums(out: &[f32]) -> (f64, f64) {
    let sum = out.iter().map(|&v| v as f64).sum();
    let weighted = (out.iter().enumerate())
        .map(|(e, &v)| v as f64 * ((e % 11) as f64 - 5.0))
        .sum();
    (sum, weighted)
}

impl Case {
    /// Extracts it under `schedule` (OpenMP on).
    pub fn extract(&self, schedule: Schedule) -> augur::Result<Extracted<KernelFn>> {
        Ok(self.extract_reporting(schedule)?.0)
    }

    /// Extracts it under `schedule` (OpenMP on), with how the statement
    /// was generated.
    #[augur::staged]
    pub fn extract_reporting(
        &self,
        schedule: Schedule,
    ) -> augur::Result<(Extracted<KernelFn>, Vec<Chosen>)> {
        let case = self.clone();
        let name = self.name.replace(|c: char| !c.is_ascii_alphanumeric(), "_");
        let chosen = std::cell::RefCell::new(Vec::new());
        let seen = &chosen;
        let ex = Builder::new().extract(
            &name,
            move |x: Dyn<*mut f32>, y: Dyn<*mut f32>, z: Dyn<*mut f32>, w: Dyn<*mut f32>| {
                let ein = Einsum::new(Config {
                    schedule,
                    openmp: true,
                    ..Config::cpu()
                });
                let ptrs = [x, y, z, w];
                let outputs = case.shapes.len() - 1;
                let names = ["x", "y", "z"];
                let tensor = |(n, shape): (usize, &Vec<usize>)| {
                    let (name, ptr) = if n == outputs {
                        ("out", w)
                    } else {
                        (names[n], ptrs[n])
                    };
                    ein.tensor_on::<f32>(name, shape, ptr)
                };
                let tensors: Vec<Tensor<f32>> =
                    case.shapes.iter().enumerate().map(tensor).collect();
                (case.stage)(&ein, &tensors);
                *seen.borrow_mut() = ein.chosen();
                ein.finish();
            },
        )?;
        Ok((ex, chosen.into_inner()))
    }

    fn buffers(&self) -> Vec<Vec<f32>> {
        let last = self.shapes.len() - 1;
        (self.shapes.iter().enumerate())
            .map(|(n, s)| {
                if n == last {
                    vec![0.0; s.iter().product()]
                } else {
                    fill(s, n)
                }
            })
            .collect()
    }
}

/// Calls `prog` on `bufs` (the inputs, then the output; missing inputs
/// are null).
fn call(prog: &augur_einsum::Program<KernelFn>, bufs: &mut [Vec<f32>]) {
    let mut p: Vec<*mut f32> = bufs.iter_mut().map(|b| b.as_mut_ptr()).collect();
    let out = p.pop().expect("an output");
    p.resize(3, std::ptr::null_mut());
    let f: KernelFn = prog.get();
    // SAFETY: the buffers hold the element counts of the shapes the
    // program was generated for; the null arguments are never read.
    unsafe { f(p[0], p[1], p[2], out) }
}

/// A compiled case with its buffers.
struct Ours {
    prog: augur_einsum::Program<KernelFn>,
    bufs: Vec<Vec<f32>>,
    /// How the statement was generated.
    chosen: Vec<Chosen>,
}

impl Ours {
    #[augur::staged]
    fn new(case: &Case, schedule: Schedule) -> Result<Ours> {
        let (ex, chosen) = case.extract_reporting(schedule)?;
        let prog = compile_cpu(&ex, true)?;
        Ok(Ours {
            prog,
            bufs: case.buffers(),
            chosen,
        })
    }

    fn call(&mut self) {
        call(&self.prog, &mut self.bufs);
    }

    fn min_ms(&mut self, reps: usize) -> f64 {
        self.call();
        (0..reps.max(1))
            .map(|_| {
                let t = Instant::now();
                self.call();
                ms(t.elapsed())
            })
            .fold(f64::MAX, f64::min)
    }

    fn checksums(&self) -> (f64, f64) {
        checksums(self.bufs.last().expect("an output"))
    }
}

/// The Python side: reads one request a line, answers one a line.
const NUMPY_SERVER: &str = r#"
import json, sys, time
import numpy as np
def fill(shape, n):
    m, off = [(7, 3.0), (5, 2.0), (3, 1.0)][n]
    k = int(np.prod(shape))
    return ((np.arange(k) % m).astype(np.float32) - np.float32(off)).reshape(shape)
print(json.dumps({"numpy": np.__version__}), flush=True)
arrays = {}
for line in sys.stdin:
    req = json.loads(line)
    key = json.dumps(req["shapes"])
    if key not in arrays:
        shapes = req["shapes"]
        ins = [fill(s, n) for n, s in enumerate(shapes[:-1])]
        arrays = {key: (ins, np.zeros(shapes[-1], np.float32))}
    ins, out = arrays[key]
    env = {"np": np, "out": out}
    env.update(zip(["x", "y", "z"], ins))
    times, sums = [], []
    for call in req["calls"]:
        f = eval("lambda: " + call, env)
        r = f()
        best = float("inf")
        for _ in range(req["reps"]):
            t = time.perf_counter()
            f()
            best = min(best, time.perf_counter() - t)
        if r is not None and not np.shares_memory(r, out):
            out[...] = r
        o = out.astype(np.float64).ravel()
        w = (np.arange(o.size) % 11).astype(np.float64) - 5.0
        times.append(best * 1e3)
        sums.append([float(o.sum()), float((o * w).sum())])
        out[...] = 0
    print(json.dumps({"times": times, "sums": sums}), flush=True)
"#;

/// NumPy in a child process.
struct NumPy {
    child: Child,
    to: ChildStdin,
    from: BufReader<ChildStdout>,
    version: String,
}

impl NumPy {
    /// Starts it with `threads` OpenBLAS threads; `None` without Python or
    /// NumPy.
    fn start(threads: usize) -> Option<NumPy> {
        let mut child = Command::new("python3")
            .args(["-c", NUMPY_SERVER])
            .env("OPENBLAS_NUM_THREADS", threads.to_string())
            .env("OMP_NUM_THREADS", threads.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .ok()?;
        let to = child.stdin.take()?;
        let mut from = BufReader::new(child.stdout.take()?);
        let mut line = String::new();
        from.read_line(&mut line).ok()?;
        let hello: serde_json::Value = serde_json::from_str(&line).ok()?;
        let version = hello["numpy"].as_str()?.to_string();
        Some(NumPy {
            child,
            to,
            from,
            version,
        })
    }

    /// Each call's minimum milliseconds over `reps` and its checksums.
    fn time(&mut self, case: &Case, reps: usize) -> Result<Vec<(f64, (f64, f64))>> {
        let req = serde_json::json!({ "shapes": case.shapes, "calls": case.numpy, "reps": reps });
        writeln!(self.to, "{req}")?;
        let mut line = String::new();
        self.from.read_line(&mut line)?;
        let v: serde_json::Value = serde_json::from_str(&line)
            .map_err(|e| format!("NumPy's answer for {}: {e} ({line:?})", case.name))?;
        let times = v["times"].as_array().ok_or("NumPy answered no times")?;
        let sums = v["sums"].as_array().ok_or("NumPy answered no checksums")?;
        Ok(times
            .iter()
            .zip(sums)
            .map(|(t, s)| {
                let f = |v: &serde_json::Value| v.as_f64().unwrap_or(f64::NAN);
                (f(t), (f(&s[0]), f(&s[1])))
            })
            .collect())
    }
}

impl Drop for NumPy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The schedule [`tune`] keeps for `case` (cached per machine).
#[augur::staged]
fn tuned(case: &Case, reps: usize) -> Result<Schedule> {
    let key = format!("augur-bench-kernels-{}-{:?}", case.name, case.shapes);
    let mut bufs = case.buffers();
    let build = |s: Schedule| compile_cpu(&case.extract(s)?, true);
    let t = tune(&key, &Schedule::candidates::<f32>(), reps, build, |prog| {
        call(prog, &mut bufs);
        checksums(bufs.last().expect("an output"))
    })?;
    Ok(t.best)
}

/// What [`Einsum::chosen`] says, short: `8x48/k512/m72/pack, fused ij,
/// parallel over ij`.
fn describe(chosen: &[Chosen]) -> String {
    let one = |c: &Chosen| {
        let mut s = c.schedule.to_string();
        if !c.fused.is_empty() {
            s += &format!(", fused {}", c.fused.join(" "));
        }
        if let Some(p) = &c.parallel {
            s += &format!(", parallel over {p}");
        }
        s
    };
    let all: Vec<String> = chosen.iter().map(one).collect();
    all.join("; ")
}

/// The table.
pub fn table(ctx: &Ctx) -> Result<Table> {
    let threads = super::openblas::threads();
    let mut numpy = NumPy::start(threads);
    let mut columns = vec![
        "statement",
        "shapes",
        "augur (auto)",
        "NumPy (best call)",
        "augur / NumPy",
        "augur GFLOP/s",
        "NumPy's best call",
        "auto chose",
    ];
    if ctx.tune {
        columns.extend(["augur (tuned)", "tuned / NumPy", "tuned schedule"]);
    }
    let mut t = Table::new(
        "cpu-vs-numpy",
        &format!(
            "einsum statements on the CPU, ms per call on {threads} threads: the \
             generated code (OpenMP) beside NumPy's fastest call"
        ),
        &columns,
    );
    let cases = cases(ctx.quick);
    let bar = ctx.bar(cases.len(), "kernels");
    let rounds = if ctx.quick { 1 } else { 3 };
    for case in &cases {
        bar.set_message(case.name);
        let reps = ctx.reps(5);
        let mut ours = Ours::new(case, Schedule::Auto)?;
        let (mut mine, mut theirs) = (f64::MAX, vec![f64::MAX; case.numpy.len()]);
        for _ in 0..rounds {
            mine = mine.min(ours.min_ms(reps));
            if let Some(np) = numpy.as_mut() {
                for (n, (ms, sums)) in np.time(case, reps)?.into_iter().enumerate() {
                    if sums != ours.checksums() {
                        return Err(format!(
                            "{}: NumPy's `{}` gives checksums {sums:?}, augur's {:?}",
                            case.name,
                            case.numpy[n],
                            ours.checksums()
                        )
                        .into());
                    }
                    theirs[n] = theirs[n].min(ms);
                }
            }
        }
        let shapes: Vec<String> = (case.shapes.iter())
            .map(|s| {
                let d: Vec<String> = s.iter().map(|d| d.to_string()).collect();
                d.join("x")
            })
            .collect();
        let best = (theirs.iter().enumerate()).min_by(|a, b| a.1.total_cmp(b.1));
        let have = numpy.is_some();
        let (np_cell, ratio, call) = match best {
            Some((n, &b)) if have => (
                Cell::float(b, 3),
                Cell::float(mine / b, 2),
                Cell::Text(case.numpy[n].to_string()),
            ),
            _ => (Cell::Text("not installed".into()), "-".into(), "-".into()),
        };
        let gflops = if case.madds > 0.0 {
            Cell::float(2.0 * case.madds / mine / 1e6, 1)
        } else {
            Cell::Text("-".into())
        };
        let mut row = vec![
            Cell::Text(format!("{}: {}", case.name, case.statement)),
            Cell::Text(shapes.join(", ")),
            Cell::float(mine, 3),
            np_cell,
            ratio,
            gflops,
            call,
            Cell::Text(describe(&ours.chosen)),
        ];
        if ctx.tune {
            let best_schedule = tuned(case, reps)?;
            let mut tuned = Ours::new(case, best_schedule)?;
            let ms = tuned.min_ms(reps);
            if tuned.checksums() != ours.checksums() {
                return Err(format!("{}: the tuned schedule's result differs", case.name).into());
            }
            row.push(Cell::float(ms, 3));
            row.push(match best {
                Some((_, &b)) if have => Cell::float(ms / b, 2),
                _ => "-".into(),
            });
            row.push(Cell::Text(best_schedule.to_string()));
        }
        t.push(row);
        bar.inc(1);
    }
    bar.finish_and_clear();
    t.note(format!(
        "min of {} calls in each of {rounds} interleaved rounds; {threads} threads for both \
         (OMP_NUM_THREADS, OPENBLAS_NUM_THREADS; NumPy's copies and ufuncs use one); inputs \
         are small integers, so every result is exact and both sides' checksums are equal",
        ctx.reps(5)
    ));
    match &numpy {
        Some(np) => t.note(format!("NumPy {} (python3)", np.version)),
        None => t.note(INSTALL),
    }
    Ok(t)
}

/// `augur bench kernels`.
pub fn run(ctx: &Ctx) -> Result<Outcome> {
    Ok(Outcome {
        tables: vec![table(ctx)?],
        plots: Vec::new(),
    })
}
