//! `augur::parallel_for` and reducers: C (OpenMP), the JIT (threads) and the
//! interpreter (race check) agree with plain Rust; what the body may not do
//! is an `Error::Parallel` at the user's line, and a data race is an
//! interpreter error.

use augur::exec::{Backend, CompileOptions};
use augur::{parallel, parallel_for, Builder, Dyn, Error, FnPtr, Interpreter, Reducer};
use std::collections::HashSet;
use std::sync::Mutex;

fn backends() -> [CompileOptions; 2] {
    [
        CompileOptions::default().with_backend(Backend::C),
        CompileOptions::default().with_backend(Backend::Jit),
    ]
}

#[augur::staged]
fn stats(x: Dyn<*mut i64>, n: Dyn<i64>, out: Dyn<*mut i64>) {
    let sum = Reducer::sum(0i64);
    let lo = Reducer::min(i64::MAX);
    let hi = Reducer::max(i64::MIN);
    let odd = Reducer::sum(0i64);
    parallel(0, n)
        .reduce(&sum)
        .reduce(&lo)
        .reduce(&hi)
        .reduce(&odd)
        .run(|i| {
            let v = x.at(i);
            sum.add(v);
            lo.add(v);
            hi.add(v);
            if (v % 2).ne(0).is_true() {
                odd.add(1);
            }
        });
    out.at(0).set(sum.value());
    out.at(1).set(lo.value());
    out.at(2).set(hi.value());
    out.at(3).set(odd.value());
}

fn stats_rust(x: &[i64]) -> [i64; 4] {
    [
        x.iter().sum::<i64>(),
        x.iter().copied().min().unwrap_or(i64::MAX),
        x.iter().copied().max().unwrap_or(i64::MIN),
        x.iter().filter(|v| *v % 2 != 0).count() as i64,
    ]
}

#[test]
fn sums_and_extrema_agree_on_every_backend() {
    let ex = Builder::new().extract("stats", stats).unwrap();
    let c = ex.c_code();
    // The build comment names what augur itself compiles it with.
    let header = c.split("*/").next().unwrap();
    assert!(
        header.contains("-fopenmp") && header.contains("-Wl,-z,nodelete"),
        "{c}"
    );
    assert!(
        c.contains("_Pragma(\"omp parallel for reduction(+:sum) reduction(min:min) reduction(max:max) reduction(+:sum_1)\")"),
        "{c}"
    );
    for n in [0i64, 1, 3, 1000, 100_000] {
        let x: Vec<i64> = (0..n).map(|i| (i * 7919) % 10007 - 5000).collect();
        let want = stats_rust(&x);
        for opts in backends() {
            let f = ex.compile_with(&opts).unwrap();
            let mut out = [0i64; 4];
            let mut xs = x.clone();
            // SAFETY: `stats` reads n elements of x and writes 4 of out.
            unsafe { f.get()(xs.as_mut_ptr(), n, out.as_mut_ptr()) };
            assert_eq!(out, want, "{:?}, n = {n}", opts.backend);
        }
        let mut it = Interpreter::new();
        let xs = it.memory_mut().alloc_slice(&x);
        let out = it.memory_mut().alloc_slice(&[0i64; 4]);
        ex.interpret_in(&mut it, &[xs, n.into(), out]).unwrap();
        assert_eq!(it.memory().read_slice::<i64>(out, 4).unwrap(), want);
    }
}

/// Threads that ran an iteration, recorded by the callback the staged
/// function calls through a function pointer.
static THREADS: Mutex<Option<HashSet<std::thread::ThreadId>>> = Mutex::new(None);

extern "C" fn note_thread(_i: i64) {
    let mut t = THREADS.lock().unwrap();
    t.get_or_insert_with(HashSet::new)
        .insert(std::thread::current().id());
    drop(t);
    // Long enough that one thread cannot take every chunk.
    std::thread::sleep(std::time::Duration::from_micros(50));
}

#[test]
#[augur::staged]
fn iterations_really_run_on_several_threads() {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let ex = Builder::new()
        .extract("spread", |note: Dyn<FnPtr<fn(i64)>>, n: Dyn<i64>| {
            parallel_for(0, n, |i| note.call(i));
        })
        .unwrap();
    for opts in backends() {
        *THREADS.lock().unwrap() = None;
        let f = ex.compile_with(&opts).unwrap();
        // SAFETY: `spread` calls `note` with each index of 0..n.
        unsafe { f.get()(note_thread, 200) };
        let used = THREADS.lock().unwrap().take().map_or(0, |t| t.len());
        let want = cores.min(2);
        assert!(
            used >= want,
            "{:?}: {used} threads on {cores} cores",
            opts.backend
        );
    }
}

#[test]
#[augur::staged]
fn float_integer_and_bool_reductions_agree() {
    // Sums of floats that are small integers are exact in any order.
    let ex = Builder::new()
        .extract(
            "mixed",
            |x: Dyn<*mut f64>,
             b: Dyn<*mut u32>,
             n: Dyn<i64>,
             out: Dyn<*mut f64>,
             bits: Dyn<*mut u32>| {
                let sum = Reducer::sum(10.0f64);
                let max = Reducer::max(f64::NEG_INFINITY);
                let min = Reducer::min(f64::INFINITY);
                let prod = Reducer::product(1i32);
                let and = Reducer::bit_and(u32::MAX);
                let or = Reducer::bit_or(0u32);
                let xor = Reducer::bit_xor(0u32);
                let all = Reducer::all(true);
                let any = Reducer::any(false);
                parallel(0, n)
                    .reduce(&sum)
                    .reduce(&max)
                    .reduce(&min)
                    .reduce(&prod)
                    .reduce(&and)
                    .reduce(&or)
                    .reduce(&xor)
                    .reduce(&all)
                    .reduce(&any)
                    .run(|i| {
                        let v = x.at(i);
                        sum.add(v);
                        max.add(v);
                        min.add(v);
                        prod.add((i % 5 + 1).cast::<i32>());
                        and.add(b.at(i));
                        or.add(b.at(i));
                        xor.add(b.at(i));
                        all.add(v.ge(-50.0));
                        any.add(v.gt(40.0));
                    });
                out.at(0).set(sum.value());
                out.at(1).set(max.value());
                out.at(2).set(min.value());
                out.at(3).set(prod.value().cast::<f64>());
                out.at(4).set(all.value().cast::<f64>());
                out.at(5).set(any.value().cast::<f64>());
                bits.at(0).set(and.value());
                bits.at(1).set(or.value());
                bits.at(2).set(xor.value());
            },
        )
        .unwrap();
    let n = 777i64;
    let mut x: Vec<f64> = (0..n).map(|i| ((i * 37) % 101 - 50) as f64).collect();
    x[100] = f64::NAN; // min and max ignore it; the sum does not
    let b: Vec<u32> = (0..n)
        .map(|i| (i as u32).wrapping_mul(2654435761) | 0x10)
        .collect();
    let clean: Vec<f64> = x.iter().copied().filter(|v| !v.is_nan()).collect();
    let prod = (0..n).fold(1i32, |p, i| p.wrapping_mul((i % 5 + 1) as i32));
    let want = [
        f64::NAN,
        clean.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        clean.iter().copied().fold(f64::INFINITY, f64::min),
        prod as f64,
        x.iter().all(|v| *v >= -50.0) as i32 as f64,
        x.iter().any(|v| *v > 40.0) as i32 as f64,
    ];
    let want_bits = [
        b.iter().fold(u32::MAX, |a, v| a & v),
        b.iter().fold(0, |a, v| a | v),
        b.iter().fold(0, |a, v| a ^ v),
    ];
    let same = |a: &[f64], b: &[f64]| {
        a.iter()
            .zip(b)
            .all(|(a, b)| a == b || (a.is_nan() && b.is_nan()))
    };
    for opts in backends() {
        let f = ex.compile_with(&opts).unwrap();
        let (mut xs, mut bs) = (x.clone(), b.clone());
        let (mut out, mut bits) = ([0f64; 6], [0u32; 3]);
        // SAFETY: reads n elements of x and b, writes 6 of out and 3 of bits.
        unsafe {
            f.get()(
                xs.as_mut_ptr(),
                bs.as_mut_ptr(),
                n,
                out.as_mut_ptr(),
                bits.as_mut_ptr(),
            )
        };
        assert!(same(&out, &want), "{:?}: {out:?} vs {want:?}", opts.backend);
        assert_eq!(bits, want_bits, "{:?}", opts.backend);
    }
    let mut it = Interpreter::new();
    let xs = it.memory_mut().alloc_slice(&x);
    let bs = it.memory_mut().alloc_slice(&b);
    let out = it.memory_mut().alloc_slice(&[0f64; 6]);
    let bits = it.memory_mut().alloc_slice(&[0u32; 3]);
    ex.interpret_in(&mut it, &[xs, bs, n.into(), out, bits])
        .unwrap();
    let got = it.memory().read_slice::<f64>(out, 6).unwrap();
    assert!(same(&got, &want), "interpreter: {got:?} vs {want:?}");
    assert_eq!(it.memory().read_slice::<u32>(bits, 3).unwrap(), want_bits);
}

/// A 2D loop nest: rows in parallel, a nested parallel loop over columns
/// that runs in order inside each row, a dyn `while` and branches inside,
/// values of several types read from outside. The reduction is listed for
/// both loops.
#[augur::staged]
fn nest(
    a: Dyn<*mut f32>,
    rows: Dyn<i32>,
    cols: Dyn<i32>,
    scale: Dyn<f32>,
    out: Dyn<*mut f32>,
) -> Dyn<i64> {
    let count = Reducer::sum(0i64);
    parallel(0, rows).reduce(&count).run(|r| {
        let row_sum = Reducer::sum(0.0f32);
        parallel(0, cols).reduce(&count).reduce(&row_sum).run(|c| {
            let v = a.at(r * cols.cast::<i64>() + c) * scale;
            let k = Dyn::new(v);
            while k.gt(100.0f32).is_true() {
                k.set(k - 100.0f32);
            }
            if k.lt(0.0f32).is_true() {
                count.add(1);
            } else {
                row_sum.add(k);
            }
        });
        out.at(r).set(row_sum.value());
    });
    count.value()
}

fn nest_rust(a: &[f32], rows: i32, cols: i32, scale: f32, out: &mut [f32]) -> i64 {
    let mut count = 0;
    for r in 0..rows as usize {
        let mut row_sum = 0.0f32;
        for c in 0..cols as usize {
            let mut k = a[r * cols as usize + c] * scale;
            while k > 100.0 {
                k -= 100.0;
            }
            if k < 0.0 {
                count += 1;
            } else {
                row_sum += k;
            }
        }
        out[r] = row_sum;
    }
    count
}

#[test]
fn nested_parallel_loops_with_dyn_control_flow_agree() {
    let ex = Builder::new().extract("nest", nest).unwrap();
    let (rows, cols, scale) = (37, 29, 3.0f32);
    let a: Vec<f32> = (0..rows * cols)
        .map(|i| ((i * 13) % 97 - 20) as f32)
        .collect();
    let mut want_out = vec![0f32; rows as usize];
    let want = nest_rust(&a, rows, cols, scale, &mut want_out);
    for opts in backends() {
        let f = ex.compile_with(&opts).unwrap();
        let (mut xs, mut out) = (a.clone(), vec![0f32; rows as usize]);
        // SAFETY: reads rows * cols elements of a, writes rows of out.
        let got = unsafe { f.get()(xs.as_mut_ptr(), rows, cols, scale, out.as_mut_ptr()) };
        assert_eq!((got, &out), (want, &want_out), "{:?}", opts.backend);
    }
    let mut it = Interpreter::new();
    let xs = it.memory_mut().alloc_slice(&a);
    let out = it.memory_mut().alloc_slice(&vec![0f32; rows as usize]);
    let got = ex
        .interpret_in(&mut it, &[xs, rows.into(), cols.into(), scale.into(), out])
        .unwrap();
    assert_eq!(got, want.into());
    assert_eq!(
        it.memory().read_slice::<f32>(out, rows as usize).unwrap(),
        want_out
    );
}

#[test]
#[augur::staged]
fn empty_and_reversed_ranges_keep_the_start_value() {
    let ex = Builder::new()
        .extract("count", |lo: Dyn<i64>, hi: Dyn<i64>| {
            let s = Reducer::sum(42i64);
            parallel(lo, hi).reduce(&s).run(|i| s.add(i));
            s.value()
        })
        .unwrap();
    for opts in backends() {
        let f = ex.compile_with(&opts).unwrap();
        for (lo, hi) in [(0, 0), (5, 2), (-3, 4), (i64::MAX - 3, i64::MAX)] {
            let want = (lo..hi).fold(42i64, |a, i| a.wrapping_add(i));
            // SAFETY: `count` takes and returns integers.
            assert_eq!(
                unsafe { f.get()(lo, hi) },
                want,
                "{:?} {lo}..{hi}",
                opts.backend
            );
            let got = ex.interpret(&[lo.into(), hi.into()]).unwrap();
            assert_eq!(got, want.into());
        }
    }
}

fn parallel_error(e: Error) -> (String, u32) {
    match e {
        Error::Parallel { message, location } => (message, location.map_or(0, |l| l.line)),
        other => panic!("expected Error::Parallel, got {other}"),
    }
}

#[test]
#[augur::staged]
fn assigning_a_variable_declared_outside_is_an_error_at_its_line() {
    let e = Builder::new()
        .extract("racy", |x: Dyn<*mut i32>, n: Dyn<i32>| {
            let last = Dyn::new(0);
            parallel_for(0, n, |i| {
                last.set(x.at(i)); // the line
            });
            last
        })
        .unwrap_err();
    let line = line!() - 5;
    let (message, at) = parallel_error(e);
    assert_eq!(at, line, "{message}");
    assert!(message.contains("declared outside it"), "{message}");
    assert!(message.contains("Reducer"), "{message}");
}

#[test]
#[augur::staged]
fn a_reducer_not_listed_is_an_error() {
    let e = Builder::new()
        .extract("unlisted", |x: Dyn<*mut i32>, n: Dyn<i32>| {
            let s = Reducer::sum(0);
            parallel_for(0, n, |i| s.add(x.at(i)));
            s.value()
        })
        .unwrap_err();
    let (message, _) = parallel_error(e);
    assert!(message.contains("assigns `sum"), "{message}");
}

#[test]
#[augur::staged]
fn reading_a_reducer_inside_its_loop_is_an_error_at_its_line() {
    let e = Builder::new()
        .extract("peek", |x: Dyn<*mut i32>, n: Dyn<i32>| {
            let s = Reducer::sum(0);
            parallel(0, n).reduce(&s).run(|i| {
                x.at(i).set(s.value()); // the line
            });
        })
        .unwrap_err();
    let line = line!() - 4;
    let (message, at) = parallel_error(e);
    assert_eq!(at, line, "{message}");
    assert!(message.contains("after the loop"), "{message}");
}

#[test]
#[augur::staged]
fn a_value_made_in_the_body_and_used_after_it_is_an_error() {
    let e = Builder::new()
        .extract("leak", |x: Dyn<*mut i32>, n: Dyn<i32>| {
            let mut kept = None;
            parallel_for(0, n, |i| kept = Some(x.at(i) * 2));
            kept.unwrap()
        })
        .unwrap_err();
    let (message, _) = parallel_error(e);
    assert!(message.contains("used after it"), "{message}");
}

#[test]
#[augur::staged]
fn a_data_race_is_an_interpreter_error_naming_the_iterations() {
    let ex = Builder::new()
        .extract("race", |x: Dyn<*mut i32>, n: Dyn<i32>| {
            parallel_for(0, n, |i| x.at(0).set(x.at(0) + i.cast::<i32>()));
        })
        .unwrap();
    let mut it = Interpreter::new();
    let x = it.memory_mut().alloc_slice(&[0i32; 4]);
    let e = ex.interpret_in(&mut it, &[x, 4.into()]).unwrap_err();
    let text = e.to_string();
    assert!(text.contains("data race in a parallel loop"), "{text}");
}

#[test]
#[augur::staged]
fn openmp_code_survives_being_dropped_and_reloaded() {
    // No flag from the user: augur compiles OpenMP with `-z nodelete`.
    for round in 0..3 {
        let ex = Builder::new()
            .extract("fill", move |x: Dyn<*mut i64>, n: Dyn<i64>| {
                parallel_for(0, n, |i| x.at(i).set(i * (round + 1)));
            })
            .unwrap();
        let opts = CompileOptions::default().with_backend(Backend::C);
        let f = ex.compile_with(&opts).unwrap();
        let mut x = vec![0i64; 1000];
        // SAFETY: `fill` writes n elements of x.
        unsafe { f.get()(x.as_mut_ptr(), 1000) };
        assert!(x
            .iter()
            .enumerate()
            .all(|(i, v)| *v == i as i64 * (round + 1)));
        drop(f);
    }
}

#[test]
#[augur::staged]
fn the_ir_text_of_a_parallel_loop_reads_back() {
    let ex = Builder::new().extract("stats", stats).unwrap();
    let text = ex.ir().to_string();
    assert!(
        text.contains("#[parallel(sum sum, min min, max max, sum sum_1)]"),
        "{text}"
    );
    let back = augur::ir::parse(&text).unwrap();
    assert_eq!(back.to_string(), text);
    augur::ir::verify::verify(&back).unwrap();
}

#[test]
fn a_branching_body_staged_by_unannotated_code_names_the_fix() {
    // Not annotated: plain state at the loop's end is out of view, so the
    // paths through the body cannot be joined there.
    let e = Builder::new()
        .extract("unannotated", |x: Dyn<*mut i64>, n: Dyn<i64>| {
            let s = Reducer::sum(0i64);
            parallel(0, n).reduce(&s).run(|i| {
                if x.at(i).gt(0).is_true() {
                    s.add(x.at(i));
                }
            });
            s.value()
        })
        .unwrap_err();
    let (message, _) = parallel_error(e);
    assert!(message.contains("#[augur::staged]"), "{message}");
}

#[test]
#[augur::staged]
fn the_jit_says_which_pragmas_it_ignores() {
    let ex = Builder::new()
        .extract("fill", |x: Dyn<*mut i32>, n: Dyn<i32>| {
            // The pragma goes on the loop's first statement, its counter.
            augur::annotate("pragma: omp parallel for");
            let i = Dyn::new(0);
            while i.lt(n).is_true() {
                x.at(i).set(i);
                i.set(i + 1);
            }
            parallel_for(0, n, |j| x.at(j).set(x.at(j) + 1));
        })
        .unwrap();
    let [c, jit] = backends();
    let (c, jit) = (ex.compile_with(&c).unwrap(), ex.compile_with(&jit).unwrap());
    assert!(c.notes().is_empty(), "{:?}", c.notes());
    let notes = jit.notes();
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(
        notes[0].contains("omp parallel for") && notes[0].contains("one thread"),
        "{notes:?}"
    );
    for f in [c, jit] {
        let mut x = vec![0i32; 100];
        // SAFETY: `fill` writes n elements of x.
        unsafe { f.get()(x.as_mut_ptr(), 100) };
        assert!(x.iter().enumerate().all(|(i, v)| *v == i as i32 + 1));
    }
}

/// The last positive value: associative, not commutative.
fn later(a: Dyn<i32>, b: Dyn<i32>) -> Dyn<i32> {
    Dyn::select(b.gt(0), b, a)
}

/// The value of greater magnitude, the earlier one on ties: a decision
/// inside the combiner.
#[augur::staged]
fn wider(a: Dyn<i64>, b: Dyn<i64>) -> Dyn<i64> {
    let out = Dyn::new(a);
    let (ma, mb) = (Dyn::select(a.lt(0), -a, a), Dyn::select(b.lt(0), -b, b));
    if mb.gt(ma).is_true() {
        out.set(b);
    }
    out + 0
}

#[test]
#[augur::staged]
fn custom_reducers_combine_in_index_order_on_every_backend() {
    let ex = Builder::new()
        .extract(
            "custom",
            |x: Dyn<*mut i32>, n: Dyn<i64>, out: Dyn<*mut i64>| {
                let last = Reducer::custom(-1, 0, later);
                let widest = Reducer::custom(0i64, 0i64, wider);
                let sum = Reducer::sum(0i64);
                parallel(0, n)
                    .reduce(&last)
                    .reduce(&widest)
                    .reduce(&sum)
                    .run(|i| {
                        let v = x.at(i);
                        last.add(v);
                        widest.add(v.cast::<i64>());
                        sum.add(v.cast::<i64>());
                    });
                out.at(0).set(last.value().cast::<i64>());
                out.at(1).set(widest.value());
                out.at(2).set(sum.value());
            },
        )
        .unwrap();
    let rust = |x: &[i32]| {
        let last = x.iter().fold(-1, |a, &b| if b > 0 { b } else { a });
        let widest = x.iter().fold(0i64, |a, &b| {
            let b = b as i64;
            if b.abs() > a.abs() {
                b
            } else {
                a
            }
        });
        [last as i64, widest, x.iter().map(|&v| v as i64).sum()]
    };
    for n in [0i64, 1, 5, 63, 64, 65, 1000, 4099] {
        let x: Vec<i32> = (0..n).map(|i| ((i * 7919) % 201 - 100) as i32).collect();
        let want = rust(&x);
        for opts in backends() {
            let f = ex.compile_with(&opts).unwrap();
            let (mut xs, mut out) = (x.clone(), [0i64; 3]);
            // SAFETY: `custom` reads n values of x and writes 3 of out.
            unsafe { f.get()(xs.as_mut_ptr(), n, out.as_mut_ptr()) };
            assert_eq!(out, want, "{:?}, n = {n}", opts.backend);
        }
        let mut it = Interpreter::new();
        let xs = it.memory_mut().alloc_slice(&x);
        let out = it.memory_mut().alloc_slice(&[0i64; 3]);
        ex.interpret_in(&mut it, &[xs, n.into(), out]).unwrap();
        assert_eq!(
            it.memory().read_slice::<i64>(out, 3).unwrap(),
            want,
            "n = {n}"
        );
    }
}

#[test]
#[augur::staged]
fn reading_a_custom_reducer_inside_its_loop_is_an_error() {
    let e = Builder::new()
        .extract("peek", |x: Dyn<*mut i32>, n: Dyn<i64>| {
            let last = Reducer::custom(-1, 0, later);
            parallel(0, n)
                .reduce(&last)
                .run(|i| x.at(i).set(last.value()));
        })
        .unwrap_err();
    let (message, _) = parallel_error(e);
    assert!(message.contains("after the loop"), "{message}");
}
