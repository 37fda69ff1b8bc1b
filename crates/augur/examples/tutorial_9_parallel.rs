//! Tutorial chapter 9: parallel loops.
//!
//! Per-row statistics of a matrix, rows in parallel: each row's sum goes to
//! memory at the row's index, and reducers combine the count of negative
//! elements, the largest element and whether every row sum is finite. The
//! C (OpenMP), the JIT (threads) and the interpreter (race check) are each
//! compared with plain Rust.
//!
//! Run with `cargo run -p augur-staging --example tutorial_9_parallel`
//! (see `augur::tutorial::ch9_parallel`).

use augur::exec::{Backend, CompileOptions, Interpreter};
use augur::{parallel, Builder, Dyn, Reducer};

const ROWS: i64 = 1000;
const COLS: i64 = 1000;

/// The sums of the first `rows` rows, and (negatives, largest, all finite).
fn rust(a: &[f64], rows: usize, sums: &mut [f64]) -> [f64; 3] {
    let (mut neg, mut max, mut finite) = (0, f64::NEG_INFINITY, true);
    for r in 0..rows {
        let row = &a[r * COLS as usize..(r + 1) * COLS as usize];
        let mut s = 0.0;
        for &v in row {
            s += v;
            neg += i64::from(v < 0.0);
            max = max.max(v);
        }
        sums[r] = s;
        finite &= s.is_finite();
    }
    [neg as f64, max, f64::from(u8::from(finite))]
}

#[augur::staged]
fn main() -> augur::Result<()> {
    let ex = Builder::new().extract(
        "row_stats",
        |a: Dyn<*mut f64>, rows: Dyn<i64>, sums: Dyn<*mut f64>, out: Dyn<*mut f64>| {
            let neg = Reducer::sum(0i64);
            let max = Reducer::max(f64::NEG_INFINITY);
            let finite = Reducer::all(true);
            parallel(0, rows)
                .reduce(&neg)
                .reduce(&max)
                .reduce(&finite)
                .run(|r| {
                    let s = Dyn::new(0.0f64);
                    // A dyn loop inside the body: each row's own.
                    let c = Dyn::new(0i64);
                    while c.lt(COLS).is_true() {
                        let v = a.at(r * COLS + c);
                        s.set(s + v);
                        neg.add(v.lt(0.0).cast::<i64>());
                        max.add(v);
                        c.set(c + 1);
                    }
                    sums.at(r).set(s);
                    // s * 0 is 0 exactly when s is finite (NaN otherwise).
                    finite.add((s * 0.0).eq(0.0));
                });
            out.at(0).set(neg.value().cast::<f64>());
            out.at(1).set(max.value());
            out.at(2).set(finite.value().cast::<f64>());
        },
    )?;
    println!("{}", ex.c_code());

    let a: Vec<f64> = (0..ROWS * COLS)
        .map(|i| ((i * 7919) % 1000) as f64 - 300.0)
        .collect();
    let mut want_sums = vec![0.0; ROWS as usize];
    let want = rust(&a, ROWS as usize, &mut want_sums);

    for backend in [Backend::C, Backend::Jit] {
        let f = ex.compile_with(&CompileOptions::default().with_backend(backend))?;
        let (mut a, mut sums, mut out) = (a.clone(), vec![0.0; ROWS as usize], [0.0; 3]);
        let start = std::time::Instant::now();
        // SAFETY: `row_stats` reads ROWS * COLS doubles, writes ROWS and 3.
        unsafe { f.get()(a.as_mut_ptr(), ROWS, sums.as_mut_ptr(), out.as_mut_ptr()) };
        println!("{backend:?}: {out:?} in {:?}", start.elapsed());
        assert_eq!(out, want, "{backend:?}");
        assert_eq!(sums, want_sums, "{backend:?}");
    }

    // The interpreter checks every iteration for races; 20 rows suffice.
    let rows = 20usize;
    let mut want_sums = vec![0.0; rows];
    let want = rust(&a, rows, &mut want_sums);
    let mut it = Interpreter::new();
    let m = it.memory_mut();
    let (ap, sp, op) = (
        m.alloc_slice(&a[..rows * COLS as usize]),
        m.alloc_slice(&vec![0.0f64; rows]),
        m.alloc_slice(&[0.0f64; 3]),
    );
    ex.interpret_in(&mut it, &[ap, (rows as i64).into(), sp, op])?;
    assert_eq!(it.memory().read_slice::<f64>(op, 3)?, want, "interpreter");
    assert_eq!(
        it.memory().read_slice::<f64>(sp, rows)?,
        want_sums,
        "interpreter"
    );
    println!("C, the JIT and the interpreter agree with plain Rust");
    Ok(())
}
