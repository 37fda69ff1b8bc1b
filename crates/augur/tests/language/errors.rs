//! Every error path: the variant, and a message naming the user's line.

use crate::common;

use augur::exec::compile::CompileOptions;
use augur::exec::Backend;
use augur::{Builder, Dyn, Error, ExternFn, Static};
use std::cell::{Cell, RefCell};

/// This file's text, to find the lines the errors must name.
const SRC: &str = include_str!("errors.rs");

/// The line after the comment line `// @tag` in this file (a comment on
/// its own line survives rustfmt).
#[augur::staged]
fn line_of(tag: &str) -> u32 {
    let marker = format!("// @{tag}");
    let hits: Vec<u32> = (1..)
        .zip(SRC.lines())
        .filter(|(_, l)| l.trim() == marker)
        .map(|(n, _)| n + 1)
        .collect();
    assert_eq!(hits.len(), 1, "exactly one line is {marker}");
    hits[0]
}

/// Asserts that `e` displays `file!():line`.
#[track_caller]
#[augur::staged]
fn assert_names_line(e: &Error, line: u32) {
    let text = e.to_string();
    let at = format!("{}:{line}:", file!());
    assert!(text.contains(&at), "`{at}` not in: {text}");
}

/// A panic inside the closure is `Error::Panic` at the panicking line; the
/// builder then extracts a good function.
#[test]
#[augur::staged]
fn panic_in_closure() {
    let b = Builder::new();
    let line = line_of("panic");
    let err = b
        .extract("boom", |x: Dyn<i32>| {
            if x.gt(0).is_true() {
                // @panic
                panic!("no positives");
            }
            x
        })
        .unwrap_err();
    match &err {
        Error::Panic { message, location } => {
            assert!(message.contains("no positives"), "{message}");
            let l = location.expect("a location");
            assert_eq!((l.file, l.line), (file!(), line));
        }
        other => panic!("expected Error::Panic, got {other:?}"),
    }
    assert!(err.to_string().contains("no positives"));
    assert_names_line(&err, line);
    let good = b.extract("good", |x: Dyn<i32>| x + 1).unwrap();
    assert_eq!(good.interpret(&[4.into()]).unwrap(), 5.into());
}

/// A dyn loop whose `Static` state changes every iteration never closes:
/// `Error::LoopNeverCloses` names the `is_true` line (the loop's header)
/// and the line that made the state that changes.
#[test]
#[augur::staged]
fn loop_never_closes() {
    let (line, made) = (line_of("drift"), line_of("drift-state"));
    let err = Builder::new()
        .max_loop_iterations(50)
        .extract("drift", |n: Dyn<i32>| {
            let keep = Static::new(7);
            // @drift-state
            let mut s = Static::new(0);
            let i = Dyn::new(0);
            // @drift
            while i.lt(n).is_true() {
                s += 1;
                i.set(i + *s + *keep);
            }
            i
        })
        .unwrap_err();
    match &err {
        Error::LoopNeverCloses {
            location,
            iterations,
            plain_loops,
            changing,
        } => {
            assert!(plain_loops.is_empty(), "{plain_loops:?}");
            assert_eq!((location.file, location.line), (file!(), line));
            assert!(*iterations >= 50, "{iterations}");
            let lines: Vec<_> = changing.iter().map(|l| (l.file, l.line)).collect();
            assert_eq!(lines, [(file!(), made)], "only the Static that changes");
        }
        other => panic!("expected Error::LoopNeverCloses, got {other:?}"),
    }
    assert_names_line(&err, line);
    assert!(
        err.to_string()
            .contains(&format!("made at {}:{made}:", file!())),
        "{err}"
    );
}

/// The same with the state in a plain local under `#[augur::staged]`: the
/// error names the local's `let`.
#[test]
#[augur::staged]
fn loop_never_closes_names_a_tracked_local() {
    let (line, made) = (line_of("count"), line_of("count-state"));
    let err = Builder::new()
        .max_loop_iterations(50)
        .extract("count", |n: Dyn<i32>| {
            // @count-state
            let mut k = 0;
            let i = Dyn::new(0);
            // @count
            while i.lt(n).is_true() {
                k += 2;
                i.set(i + k);
            }
            i
        })
        .unwrap_err();
    match &err {
        Error::LoopNeverCloses {
            location, changing, ..
        } => {
            assert_eq!((location.file, location.line), (file!(), line));
            let lines: Vec<_> = changing.iter().map(|l| (l.file, l.line)).collect();
            assert_eq!(lines, [(file!(), made)]);
        }
        other => panic!("expected Error::LoopNeverCloses, got {other:?}"),
    }
}

/// A dyn loop whose turns read, through a plain Rust variable, the `Dyn`
/// value the turn before computed can never close (each turn reads another
/// variable of the generated code): `Error::CarriedValue` names the loop,
/// the read and where the value was computed, after a bounded number of
/// runs (the general run limit would take hours).
#[test]
// Rebinding the Rust variable (not `+=`, which would assign the Dyn) is the point.
#[allow(clippy::assign_op_pattern)]
#[augur::staged]
fn dyn_value_carried_across_a_dyn_loop() {
    let (head, read, computed) = (
        line_of("carried_loop"),
        line_of("carried_read"),
        line_of("carried_computed"),
    );
    let err = Builder::new()
        .extract("carried", |n: Dyn<i32>| {
            let mut acc = Dyn::new(0) + 0;
            let k = Dyn::new(0);
            // @carried_loop
            while k.lt(n).is_true() {
                // @carried_read
                if acc.gt(5).is_true() {
                    k.set(k + 2);
                }
                // @carried_computed
                acc = acc + 1;
                k.set(k + 1);
            }
            acc
        })
        .unwrap_err();
    match &err {
        Error::CarriedValue {
            loop_at,
            used,
            computed: at,
            runs,
        } => {
            assert_eq!(
                (loop_at.line, used.line, at.line),
                (head, read, computed),
                "{err}"
            );
            assert!(*runs <= 1001, "{runs}");
        }
        other => panic!("expected Error::CarriedValue, got {other:?}: {other}"),
    }
    assert_names_line(&err, head);
    let m = err.to_string();
    assert!(
        m.contains("Dyn::new") && m.contains("#[augur::staged]"),
        "{m}"
    );
}

/// The same loop with the value in a variable declared before it extracts.
#[test]
#[augur::staged]
fn dyn_value_in_a_variable_across_a_dyn_loop() {
    common::check(
        "carried_var",
        |n: Dyn<i32>| {
            let acc = Dyn::new(0);
            let k = Dyn::new(0);
            while k.lt(n).is_true() {
                if acc.gt(5).is_true() {
                    k.set(k + 2);
                }
                acc.set(acc + 1);
                k.set(k + 1);
            }
            acc
        },
        |&mut (n,): &mut (i32,)| {
            let (mut acc, mut k) = (0, 0);
            while k < n {
                if acc > 5 {
                    k += 2;
                }
                acc += 1;
                k += 1;
            }
            acc
        },
        &[(0,), (1,), (5,), (9,), (20,), (-3,)],
    );
}

/// A closure that does something different on each run (a captured
/// counter changing a constant) is `Error::NonDeterministic`.
#[test]
#[augur::staged]
fn non_deterministic_closure() {
    let runs = Cell::new(0u32);
    let line = line_of("flaky");
    let err = Builder::new()
        .extract("flaky", |x: Dyn<i32>| {
            runs.set(runs.get() + 1);
            let r = Dyn::new(0);
            // @flaky
            let k = Dyn::new(runs.get() as i32);
            if x.gt(0).is_true() {
                r.set(x + k);
            }
            r
        })
        .unwrap_err();
    match &err {
        Error::NonDeterministic {
            recorded, replayed, ..
        } => {
            let l = recorded.or(*replayed).expect("a location");
            assert_eq!((l.file, l.line), (file!(), line));
        }
        other => panic!("expected Error::NonDeterministic, got {other:?}"),
    }
    assert_names_line(&err, line);
    assert!(err.to_string().contains("not deterministic"), "{err}");
}

/// A `Dyn` kept from one extraction and used in the next is
/// `Error::Misuse` at the line that uses it.
#[test]
#[augur::staged]
fn dyn_used_after_its_extraction() {
    let stash: RefCell<Option<Dyn<i32>>> = RefCell::new(None);
    let b = Builder::new();
    b.extract("first", |x: Dyn<i32>| {
        *stash.borrow_mut() = Some(x);
        x
    })
    .unwrap();
    let old = stash.borrow().expect("stashed");
    let line = line_of("stale");
    // @stale
    let err = b.extract("second", |x: Dyn<i32>| x + old).unwrap_err();
    match &err {
        Error::Misuse { message, location } => {
            assert!(message.contains("outside the run"), "{message}");
            let l = location.expect("a location");
            assert_eq!((l.file, l.line), (file!(), line));
        }
        other => panic!("expected Error::Misuse, got {other:?}"),
    }
    assert_names_line(&err, line);
}

/// `set` on a computed value is `Error::Misuse`.
#[test]
#[augur::staged]
fn set_on_computed_value() {
    let line = line_of("bad_set");
    let err = Builder::new()
        .extract("bad_set", |x: Dyn<i32>| {
            let y = x + 1;
            // @bad_set
            y.set(3);
            y
        })
        .unwrap_err();
    match &err {
        Error::Misuse { message, .. } => assert!(message.contains("computed value"), "{message}"),
        other => panic!("expected Error::Misuse, got {other:?}"),
    }
    assert_names_line(&err, line);
}

/// A value bound inside a dyn branch and used after it is
/// A value bound inside a dyn branch and returned after the join: link
/// audits give each path its own code, so the result is right.
#[test]
#[augur::staged]
fn value_bound_in_branch_is_kept_per_path() {
    let ex = Builder::new()
        .extract("perpath", |x: Dyn<i32>| {
            let y = Dyn::new(0);
            let v = if x.gt(0).is_true() { x + 1 } else { x + 2 };
            y.set(7);
            v
        })
        .unwrap();
    assert_eq!(ex.stats().link_audit_failures, 1, "{}", ex.stats());
    for x in [-3, 0, 5] {
        let want = if x > 0 { x + 1 } else { x + 2 };
        assert_eq!(ex.interpret(&[x.into()]).unwrap(), want.into());
    }
}

/// Without link audits the same program is `Error::UndefinedValue`, naming
/// where the value was computed.
#[test]
#[augur::staged]
fn value_bound_in_branch_used_after() {
    let def = line_of("undef");
    let err = Builder::new()
        .link_audit_ops(0)
        .extract("undef", |x: Dyn<i32>| {
            let y = Dyn::new(0);
            // @undef
            let v = if x.gt(0).is_true() { x + 1 } else { x + 2 };
            y.set(7);
            v
        })
        .unwrap_err();
    match &err {
        Error::UndefinedValue { defined, used } => {
            let l = defined.expect("a location");
            assert_eq!(l.file, file!());
            assert_eq!(l.line, def, "{l}");
            // The use is the closure's result: it has no line of its own.
            assert!(used.is_none(), "{used:?}");
        }
        other => panic!("expected Error::UndefinedValue, got {other:?}"),
    }
    assert!(err.to_string().contains(file!()), "{err}");
}

/// A compiler that does not exist is `Error::CompilerMissing` when the C
/// backend is asked for (`Backend::Auto` takes the JIT instead).
#[test]
#[augur::staged]
fn compiler_missing() {
    let ex = Builder::new().extract("id", |x: Dyn<i32>| x).unwrap();
    let opts = CompileOptions {
        cc: Some("/nonexistent/cc".into()),
        ..Default::default()
    };
    assert_eq!(ex.compile_with(&opts).unwrap().backend(), Backend::Jit);
    match ex.compile_with(&opts.with_backend(Backend::C)).unwrap_err() {
        Error::CompilerMissing { compiler, .. } => assert_eq!(compiler, "/nonexistent/cc"),
        other => panic!("expected Error::CompilerMissing, got {other:?}"),
    }
}

/// C that does not compile (an extern whose header does not exist) is
/// `Error::Compile` naming the header, with the C file kept.
#[test]
#[augur::staged]
fn c_that_does_not_compile() {
    const NOPE: ExternFn<fn(i32) -> i32> = ExternFn::new("nope").header("augur_no_such_header.h");
    let ex = Builder::new()
        .extract("calls_nope", |x: Dyn<i32>| NOPE.call(x))
        .unwrap();
    match ex.compile().unwrap_err() {
        Error::Compile { path, output } => {
            assert!(output.contains("augur_no_such_header.h"), "{output}");
            assert!(path.exists(), "{}", path.display());
        }
        other => panic!("expected Error::Compile, got {other:?}"),
    }
}

/// Extraction on four threads at once gives byte-identical C.
#[test]
#[augur::staged]
fn parallel_extraction_is_deterministic() {
    #[augur::staged]
    fn program() -> String {
        Builder::new()
            .extract("par", |x: Dyn<i32>, n: Dyn<i32>| {
                let r = Dyn::new(0);
                let i = Dyn::new(0);
                while i.lt(n).is_true() {
                    for k in augur::range(0..3) {
                        if (x + i).gt(k).is_true() {
                            r.set(r + k);
                        }
                    }
                    i.set(i + 1);
                }
                r
            })
            .unwrap()
            .c_code()
    }
    let codes: Vec<String> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..4).map(|_| s.spawn(program)).collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for c in &codes {
        assert_eq!(c, &codes[0]);
    }
    assert_eq!(codes[0], program());
}

/// A staging operation outside any extraction panics with a message that
/// names the user's line.
#[test]
#[augur::staged]
fn staging_outside_an_extraction() {
    let line = line_of("outside");
    // @outside
    let caught = std::panic::catch_unwind(|| Dyn::<i32>::new(3));
    let payload = caught.expect_err("Dyn::new outside an extraction panics");
    let message = payload
        .downcast_ref::<String>()
        .cloned()
        .unwrap_or_default();
    assert!(message.contains("outside an extraction"), "{message}");
    let at = format!("{}:{line}:", file!());
    assert!(message.contains(&at), "`{at}` not in: {message}");
}

/// `call_with` with the wrong number of arguments is `Error::Misuse`.
#[test]
#[augur::staged]
fn call_with_wrong_arity() {
    let line = line_of("arity");
    let err = Builder::new()
        .extract("arity", |x: Dyn<i32>| {
            // @arity
            augur::libc::ABS.call_with(&[x.into(), x.into()])
        })
        .unwrap_err();
    match &err {
        Error::Misuse { message, .. } => assert!(message.contains("`abs` takes 1"), "{message}"),
        other => panic!("expected Error::Misuse, got {other:?}"),
    }
    assert_names_line(&err, line);
}

/// Indexing a pointer to an array (an array of arrays) is `Error::Misuse`.
#[test]
#[augur::staged]
fn arrays_of_arrays() {
    let line = line_of("nested");
    let err = Builder::new()
        .extract("nested", |p: Dyn<*mut [i32; 4]>| {
            // @nested
            p.at(0).at(1)
        })
        .unwrap_err();
    match &err {
        Error::Misuse { message, .. } => assert!(message.contains("arrays of arrays"), "{message}"),
        other => panic!("expected Error::Misuse, got {other:?}"),
    }
    assert_names_line(&err, line);
}

/// One extern name used with two signatures is `Error::Misuse`.
#[test]
#[augur::staged]
fn extern_with_two_signatures() {
    const F: ExternFn<fn(i32) -> i32> = ExternFn::new("rt_twice");
    const G: ExternFn<fn(i64) -> i32> = ExternFn::new("rt_twice");
    let line = line_of("two_sigs");
    let err = Builder::new()
        .extract("two_sigs", |x: Dyn<i32>| {
            let a = F.call(x);
            // @two_sigs
            a + G.call(x.cast::<i64>())
        })
        .unwrap_err();
    match &err {
        Error::Misuse { message, .. } => assert!(message.contains("rt_twice"), "{message}"),
        other => panic!("expected Error::Misuse, got {other:?}"),
    }
    assert_names_line(&err, line);
}

/// The names of the helpers augur's C and CUDA define for device
/// operations and bounds checks are taken: an extern with one is
/// `Error::Misuse` at its call, and so is a function with one (it would
/// be defined twice in the unit).
#[test]
#[augur::staged]
fn helper_names_are_taken() {
    const F: ExternFn<fn(*mut f32, f32) -> f32> = ExternFn::new("augur_atomic_add_f32");
    let line = line_of("helper_extern");
    let err = Builder::new()
        .extract("helper_extern", |p: Dyn<*mut f32>| {
            // @helper_extern
            F.call(p, 1.0f32)
        })
        .unwrap_err();
    match &err {
        Error::Misuse { message, .. } => {
            assert!(
                message.contains("`augur_atomic_add_f32` has the name of a helper"),
                "{message}"
            )
        }
        other => panic!("expected Error::Misuse, got {other:?}"),
    }
    assert_names_line(&err, line);
    let err = Builder::new()
        .extract("augur_grid_sync", |x: Dyn<i32>| x)
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("`augur_grid_sync` cannot name a C function"),
        "{err}"
    );
}

/// A configured limit is `Error::Limit`: runs and recorded operations.
#[test]
#[augur::staged]
fn limits() {
    let err = Builder::new()
        .max_runs(3)
        .extract("many_runs", |x: Dyn<i32>| {
            let r = Dyn::new(0);
            for k in augur::range(0..8) {
                if x.gt(k).is_true() {
                    r.set(r + 1);
                }
            }
            r
        })
        .unwrap_err();
    assert!(matches!(err, Error::Limit { .. }), "{err:?}");
    assert!(err.to_string().contains("limit"), "{err}");
    let line = line_of("many_ops");
    let err = Builder::new()
        .max_operations(10)
        .extract("many_ops", |x: Dyn<i32>| {
            let r = Dyn::new(x);
            for _ in 0..20 {
                // @many_ops
                r.set(r + 1);
            }
            r
        })
        .unwrap_err();
    assert!(matches!(err, Error::Limit { .. }), "{err:?}");
    assert_names_line(&err, line);
}

/// A real infinite loop is an error unless allowed; allowed, it is a
/// `while (true)` with no exit.
#[test]
#[augur::staged]
fn infinite_loop_allowed_on_request() {
    #[augur::staged]
    fn spin(x: Dyn<i32>) -> Dyn<i32> {
        let r = Dyn::new(0);
        loop {
            if x.gt(r).is_true() {
                r.set(r + 1);
            }
        }
    }
    let err = Builder::new().extract("spin", spin).unwrap_err();
    assert!(matches!(err, Error::LoopNeverExits { .. }), "{err:?}");
    let ex = Builder::new()
        .allow_infinite_loops(true)
        .extract("spin", spin)
        .unwrap();
    let code = ex.c_code();
    assert!(
        code.contains("while (true)") && !code.contains("break"),
        "{code}"
    );
    ex.compile().unwrap();
}

/// The interpreter stops where C would go wrong, naming the user's line:
/// division by zero, out-of-bounds store, uninitialised read; a shift's
/// count is masked, as Rust's is.
#[test]
#[augur::staged]
fn interpreter_errors_name_the_line() {
    let interp_err = |r: augur::Result<augur::Value>, line: u32, what: &str| match r {
        Err(e @ Error::Interp { .. }) => {
            let text = e.to_string();
            assert!(text.contains(what), "{text}");
            assert!(text.contains(&format!("{}:{line}:", file!())), "{text}");
        }
        other => panic!("expected Error::Interp, got {other:?}"),
    };
    let div = Builder::new()
        .extract("div", |x: Dyn<i32>, y: Dyn<i32>| {
            let q = Dyn::new(0);
            // @div
            q.set(x / y);
            q + 1
        })
        .unwrap();
    let r = div.interpret(&[1.into(), 0.into()]);
    interp_err(r, line_of("div"), "division by zero");
    let arr = Builder::new()
        .extract("oob", |i: Dyn<i32>| {
            let a = Dyn::<[i32; 4]>::uninit();
            // @oob
            a.at(i).set(1);
            let v = Dyn::new(0);
            // @uninit
            v.set(a.at(0));
            v
        })
        .unwrap();
    interp_err(arr.interpret(&[4.into()]), line_of("oob"), "offset 16");
    interp_err(
        arr.interpret(&[1.into()]),
        line_of("uninit"),
        "uninitialized",
    );
    let sh = Builder::new()
        .extract("sh", |x: Dyn<i32>, y: Dyn<i32>| {
            let r = Dyn::new(0);
            r.set(x << y);
            r
        })
        .unwrap();
    // A staged shift masks its count as Rust's does (`1 << 32` on an `i32`
    // is `1 << 0`), so it never reaches the interpreter's range check.
    assert_eq!(sh.interpret(&[1.into(), 32.into()]).unwrap(), 1.into());
    assert_eq!(
        sh.interpret(&[1.into(), (-1).into()]).unwrap(),
        i32::MIN.into()
    );
}

/// An interpreter error in the expression a closure returns names that
/// expression's line.
#[test]
#[augur::staged]
fn interpreter_error_in_returned_expression() {
    let div = Builder::new()
        .extract("ret_div", |x: Dyn<i32>, y: Dyn<i32>| {
            // @ret_div
            x / y
        })
        .unwrap();
    let err = div.interpret(&[1.into(), 0.into()]).unwrap_err();
    assert!(matches!(err, Error::Interp { .. }), "{err:?}");
    assert_names_line(&err, line_of("ret_div"));
}

/// Every resource has a limit that stops extraction with a clear error
/// before the machine runs out: here the memory budget, on a first-stage
/// loop that records far more operations than the budget holds.
#[test]
#[augur::staged]
fn memory_budget_stops_extraction_with_a_clear_error() {
    let err = Builder::new()
        .max_memory(1 << 20)
        .extract("big", |x: Dyn<i32>| {
            let r = Dyn::new(x);
            for _ in 0..100_000 {
                r.set(r + 1);
            }
            r
        })
        .unwrap_err();
    assert!(matches!(err, Error::Limit { .. }), "{err:?}");
    let m = err.to_string();
    assert!(
        m.contains("memory budget of 1 MiB") && m.contains("Builder::max_memory"),
        "{m}"
    );
    // The builder is ready for the next extraction.
    let ok = Builder::new()
        .extract("small", |x: Dyn<i32>| x + 1)
        .unwrap();
    assert_eq!(ok.interpret(&[1.into()]).unwrap(), 2.into());
}

/// An internal panic of the engine (injected between runs) reaches the
/// caller, and the thread is ready for the next extraction.
#[test]
#[augur::staged]
fn a_panic_inside_the_engine_leaves_the_thread_ready() {
    let r = std::panic::catch_unwind(|| {
        Builder::new()
            .panic_before_run(2)
            .extract("branches", |x: Dyn<i32>| {
                let r = Dyn::new(0);
                if x.gt(0).is_true() {
                    r.set(1);
                }
                if x.gt(5).is_true() {
                    r.set(r + 2);
                }
                r
            })
    });
    let panic = r.expect_err("the injected panic reaches the caller");
    let text = panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_default();
    assert!(text.contains("injected internal panic"), "{text}");
    assert!(!augur::in_extraction());
    let ok = Builder::new()
        .extract("after", |x: Dyn<i32>| x * 3)
        .unwrap();
    assert_eq!(ok.interpret(&[2.into()]).unwrap(), 6.into());
}

/// An interpreter whose program counter is a `Static`, over a program of
/// many loops in sequence, passes the work limit: each loop's exit is
/// explored by a run that replays everything before it. The error names
/// the decision, the line that made the program counter (the state its
/// runs differ in), and the fix.
#[test]
#[augur::staged]
fn the_work_limit_names_an_interpreter_s_program_counter() {
    let made = line_of("interp-pc");
    let prog: Vec<u8> = b"+[-]".iter().copied().cycle().take(4 * 400).collect();
    // Each `[` at i matches the `]` at i + 2.
    let jump = |pc: usize| if prog[pc] == b'[' { pc + 2 } else { pc - 2 };
    let err = Builder::new()
        .max_work(100_000)
        .extract("interp", |x: Dyn<i32>| {
            let acc = Dyn::new(x);
            // @interp-pc
            let mut pc = Static::new(0usize);
            while *pc < prog.len() {
                match prog[*pc] {
                    b'+' => acc.set(acc + 1),
                    b'-' => acc.set(acc - 1),
                    b'[' => {
                        if acc.eq(0).is_true() {
                            pc.set(jump(*pc));
                        }
                    }
                    _ => {
                        if acc.ne(0).is_true() {
                            pc.set(jump(*pc));
                        }
                    }
                }
                pc += 1;
            }
            acc
        })
        .unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, Error::Limit { .. }), "{text}");
    assert!(
        text.contains(&format!("state made at {}:{made}:", file!())),
        "{text}"
    );
    assert!(text.contains("augur::resumable"), "{text}");
}
