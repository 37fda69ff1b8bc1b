//! Shapes chosen to break `augur::resumable`: colliding keys, joins and
//! sequences, nested machines, random machines, dyn loops around machines,
//! and the first stage's other features inside bodies. Each machine is
//! compared with its plain-Rust meaning on C, the JIT and the interpreter.

mod checks;
mod dyn_loops;
mod features;
mod random;
mod shapes;

use augur::exec::{Backend, CompileOptions};
use augur::{resumable, Builder, Dyn, Extracted, Static, Value};
use std::hash::{Hash, Hasher};

fn pairs() -> Vec<(i64, i64)> {
    vec![
        (0, 0),
        (1, 5),
        (7, -3),
        (-4, 12),
        (100, 3),
        (5, 5),
        (-9, -9),
        (3, 40),
        (13, 2),
        (2, 13),
    ]
}

pub(crate) type Native = unsafe extern "C" fn(i64, i64) -> i64;

/// What chained runs must count as fresh runs do: runs, check runs, all
/// executions, operations, points and jumps.
pub(crate) fn run_counts(s: &augur::Stats) -> [u64; 6] {
    [
        s.runs,
        s.check_runs,
        s.total_runs,
        s.operations,
        s.points,
        s.point_jumps,
    ]
}

#[track_caller]
pub(crate) fn check_with<F>(
    b: Builder,
    name: &str,
    f: F,
    plain: &dyn Fn(i64, i64) -> i64,
    inputs: &[(i64, i64)],
) -> Extracted<Native>
where
    F: Fn(Dyn<i64>, Dyn<i64>) -> Dyn<i64> + Clone,
{
    eprintln!("{name}: extracting");
    let ex = b
        .clone()
        .extract(name, f.clone())
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    // The second extraction runs every run fresh (no run goes on as the
    // next one in a machine): the same runs and the same code.
    let again = b
        .chain_runs(false)
        .extract(name, f)
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    let code = ex.c_code();
    assert_eq!(
        code,
        again.c_code(),
        "{name}: C differs between extractions (chained runs, then fresh ones)"
    );
    assert_eq!(
        run_counts(ex.stats()),
        run_counts(again.stats()),
        "{name}: chained runs counted otherwise than fresh ones:\n{}\nagainst {}",
        ex.stats(),
        again.stats()
    );
    let c = ex
        .compile()
        .unwrap_or_else(|e| panic!("{name}: C: {e}\n{code}"));
    let jit = CompileOptions::default().with_backend(Backend::Jit);
    let jit = ex
        .compile_with(&jit)
        .unwrap_or_else(|e| panic!("{name}: JIT: {e}\n{code}"));
    eprintln!("{name}: running");
    for &(x, y) in inputs {
        eprintln!("{name}: ({x}, {y})");
        let want = plain(x, y);
        // SAFETY: `int64_t f(int64_t, int64_t)`, no memory.
        let (from_c, from_jit) = unsafe { (c.get()(x, y), jit.get()(x, y)) };
        let from_interp = ex
            .interpret(&[x.into(), y.into()])
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            (from_c, from_jit, from_interp),
            (want, want, Value::I64(want)),
            "{name}({x}, {y})\n{code}"
        );
    }
    ex
}

#[track_caller]
fn check<F>(name: &str, f: F, plain: &dyn Fn(i64, i64) -> i64) -> Extracted<Native>
where
    F: Fn(Dyn<i64>, Dyn<i64>) -> Dyn<i64> + Clone,
{
    check_with(Builder::new(), name, f, plain, &pairs())
}

/// All three builders.
#[track_caller]
fn check_all<F>(name: &str, f: F, plain: &dyn Fn(i64, i64) -> i64)
where
    F: Fn(Dyn<i64>, Dyn<i64>) -> Dyn<i64> + Clone,
{
    check_with(Builder::new(), name, f.clone(), plain, &pairs());
    check_with(Builder::new().audit(), name, f.clone(), plain, &pairs());
    check_with(
        Builder::new().trust_unannotated(true),
        name,
        f,
        plain,
        &pairs(),
    );
}

// ---------------------------------------------------------------------------
// Keys whose hashes collide.
