//! One pipeline: every `Builder` option applies to a single function and to
//! each function of a module the same way. For each option, a program
//! whose extraction the option changes is extracted both ways with it; the
//! outcomes (C and counters, or the error) must be equal, and must differ
//! from the outcome without the option (so a path that ignored it fails).

use augur::{Builder, Dyn, Error, Func, Prophecy, ProphecyMode, Stats, Tagger};

/// `s += x[i]` for `i < n`.
#[augur::staged]
fn sum(x: Dyn<*mut i64>, n: Dyn<i64>) -> Dyn<i64> {
    let s = Dyn::new(0i64);
    let i = Dyn::new(0i64);
    while i.lt(n).is_true() {
        s.set(s + x.at(i));
        i.set(i + 1);
    }
    s
}

/// Three sequential ifs joined after each.
#[augur::staged]
fn ifs(x: Dyn<*mut i64>, n: Dyn<i64>) -> Dyn<i64> {
    let r = Dyn::new(n);
    for k in 1..4i64 {
        if x.at(k).gt(n).is_true() {
            r.set(r + k);
        }
    }
    r
}

/// A plain Rust loop of 20 turns around a dyn exit (unannotated: the
/// audit rounds decide it only where observation is trusted).
fn plain_loop(x: Dyn<*mut i64>, n: Dyn<i64>) -> Dyn<i64> {
    let v = Dyn::new(n);
    for _ in 0..20 {
        if v.gt(5).is_true() {
            return v + x.at(0);
        }
        v.set(v + 1);
    }
    v * 2
}

/// A prophecy read before the requirement that settles it.
#[augur::staged]
fn prophecy(x: Dyn<*mut i64>, n: Dyn<i64>) -> Dyn<i64> {
    let read = Prophecy::named("read", false);
    let b = Dyn::new(0i64);
    if read.get() {
        b.set(x.at(0) * 2);
    }
    read.require(true);
    b + n
}

/// A loop with no exit.
#[augur::staged]
fn spin(_x: Dyn<*mut i64>, n: Dyn<i64>) -> Dyn<i64> {
    let r = Dyn::new(0i64);
    loop {
        if n.gt(r).is_true() {
            r.set(r + 1);
        }
    }
}

/// Reads through a pointer: refused in checked functions.
#[augur::staged]
fn deref(x: Dyn<*mut i64>, _n: Dyn<i64>) -> Dyn<i64> {
    x.deref() + 1
}

type Sig = fn(*mut i64, i64) -> i64;
type Body = fn(Dyn<*mut i64>, Dyn<i64>) -> Dyn<i64>;

/// What an extraction gave: its C and the counters that do not time, or
/// its error with this file's locations erased (a single function's
/// errors name the `extract` call, a module's its `define`).
#[augur::staged]
fn outcome(r: augur::Result<(String, Stats)>) -> String {
    match r {
        Ok((c, s)) => format!(
            "{c}\nruns {} checks {} total {} restarts {}/{} attempts {} memo {} loops {} \
             audits {} link failures {} unwinder {}",
            s.runs,
            s.check_runs,
            s.total_runs,
            s.loop_restarts,
            s.prophecy_restarts,
            s.attempts,
            s.memo_hits,
            s.back_edges,
            s.loop_audits,
            s.link_audit_failures,
            s.tags_unwinder > 0
        ),
        Err(e) => erase_locations(&format!("{:?}: {e}", std::mem::discriminant(&e))),
    }
}

#[augur::staged]
fn erase_locations(text: &str) -> String {
    let file = file!();
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find(file) {
        out.push_str(&rest[..i]);
        out.push_str("HERE");
        rest = rest[i + file.len()..].trim_start_matches(|c: char| c == ':' || c.is_ascii_digit());
    }
    out + rest
}

#[augur::staged]
fn single(b: &Builder, f: Body) -> String {
    outcome(
        b.extract("f", f)
            .map(|ex| (ex.c_code(), ex.stats().clone())),
    )
}

#[augur::staged]
fn module(b: &Builder, f: Body) -> String {
    let mut m = b.module();
    let h: Func<Sig> = m.declare("f");
    m.define(h, f);
    outcome(
        m.extract()
            .map(|ex| (ex.c_code(), ex.stats(h).unwrap().clone())),
    )
}

/// The option changes `f`'s extraction, the same way for both.
#[augur::staged]
fn applies(option: &str, b: Builder, f: Body) {
    let (one, all) = (single(&b, f), module(&b, f));
    assert_eq!(one, all, "{option}: a single function and a module differ");
    let default = single(&Builder::new(), f);
    assert_ne!(one, default, "{option}: the option changed nothing");
}

#[test]
#[augur::staged]
fn restrict() {
    applies("restrict", Builder::new().restrict([0]), sum);
    applies("restrict of a scalar", Builder::new().restrict([1]), sum);
}

#[test]
#[augur::staged]
fn slice_and_checked() {
    applies("slice", Builder::new().slice(0, 1), sum);
    applies("checked", Builder::new().checked(), deref);
}

#[test]
#[augur::staged]
fn loop_limits() {
    applies(
        "max_loop_iterations",
        Builder::new().close_loops(false).max_loop_iterations(3),
        sum,
    );
    applies("close_loops", Builder::new().close_loops(false), sum);
    let trusted = Builder::new().trust_unannotated(true);
    let rounds = trusted.clone().loop_audit_rounds(40);
    let (one, all) = (single(&rounds, plain_loop), module(&rounds, plain_loop));
    assert_eq!(
        one, all,
        "loop_audit_rounds: a single function and a module differ"
    );
    assert_ne!(
        one,
        single(&trusted, plain_loop),
        "loop_audit_rounds changed nothing"
    );
    applies(
        "allow_infinite_loops",
        Builder::new().allow_infinite_loops(true),
        spin,
    );
}

#[test]
#[augur::staged]
fn run_and_work_limits() {
    applies("max_runs", Builder::new().max_runs(2), ifs);
    applies("max_memory", Builder::new().max_memory(64), ifs);
    applies("max_work", Builder::new().max_work(5), ifs);
    applies("max_operations", Builder::new().max_operations(3), ifs);
    applies("max_attempts", Builder::new().max_attempts(1), prophecy);
}

#[test]
#[augur::staged]
fn sharing_and_audits() {
    applies("memoize", Builder::new().memoize(false), ifs);
    applies("audit", Builder::new().audit(), ifs);
    applies("link_audit_ops", Builder::new().link_audit_ops(0), ifs);
    applies("tagger", Builder::new().tagger(Tagger::Unwinder), ifs);
}

#[test]
#[augur::staged]
fn prophecies() {
    applies(
        "max_prophecy_restarts",
        Builder::new().max_prophecy_restarts(0),
        prophecy,
    );
    applies(
        "prophecy_mode",
        Builder::new().prophecy_mode(ProphecyMode::Collect),
        two_prophecies,
    );
}

/// Two prophecies violated on different paths: the modes restart
/// differently.
#[augur::staged]
fn two_prophecies(x: Dyn<*mut i64>, n: Dyn<i64>) -> Dyn<i64> {
    let a = Prophecy::named("a", false);
    let b = Prophecy::named("b", false);
    let r = Dyn::new(n);
    if a.get() {
        r.set(r + 1);
    }
    if b.get() {
        r.set(r + 2);
    }
    if x.at(0).gt(0).is_true() {
        a.require(true);
    } else {
        b.require(true);
    }
    r
}

/// A module's builder checks each of its functions: each gets its bounds
/// checks and a safe call, compiled with the whole module.
#[test]
#[augur::staged]
fn checked_module_is_called_safely() {
    let mut m = Builder::new().slice(0, 1).module();
    let total: Func<Sig> = m.declare("total");
    let last: Func<Sig> = m.declare("last");
    m.define(total, sum);
    m.define(last, |x: Dyn<*mut i64>, n: Dyn<i64>| x.at(n - 1));
    let ex = m.extract().unwrap();
    for f in ex.functions() {
        let c = augur::codegen::c::write_function(f);
        assert!(c.contains("augur_checked("), "{c}");
    }
    let mut xs = [1i64, 2, 3, 4];
    let f = ex.safe(total).unwrap();
    assert_eq!(f.call(&mut [(&mut xs[1..]).into()]).unwrap(), 9i64.into());
    let f = ex.safe(last).unwrap();
    assert_eq!(f.call(&mut [(&mut xs[..]).into()]).unwrap(), 4i64.into());
    // Out of bounds: the check stops the program (here, in the interpreter).
    let mut interp = augur::Interpreter::new();
    let p = interp.memory_mut().alloc_slice(&xs);
    let err = ex
        .interpret_in(&mut interp, last, &[p, 0i64.into()])
        .unwrap_err();
    assert!(err.to_string().contains("out of bounds"), "{err}");
    // Indexing a pointer that is not a declared slice is refused in a
    // checked module as in a checked function.
    let mut m = Builder::new().checked().module();
    let total: Func<Sig> = m.declare("total");
    m.define(total, sum);
    let err = m.extract().unwrap_err();
    assert!(matches!(err, Error::Misuse { .. }), "{err:?}");
}

/// An unchecked module function has no safe call.
#[test]
#[augur::staged]
fn unchecked_module_function_is_not_safe() {
    let mut m = Builder::new().module();
    let total: Func<Sig> = m.declare("total");
    m.define(total, sum);
    let err = m.extract().unwrap().safe(total).unwrap_err();
    assert!(err.to_string().contains("is not checked"), "{err}");
}

/// `restrict` on a module covers the calls between its functions: one
/// that passes one buffer as two restricted parameters is refused at the
/// call, and distinct buffers pass.
#[test]
#[augur::staged]
fn a_module_call_that_aliases_restricted_parameters_is_refused() {
    type Pair = fn(*mut i64, *mut i64) -> i64;
    let build = |alias: bool| {
        let mut m = Builder::new().restrict([0, 1]).module();
        let add: Func<Pair> = m.declare("add_into");
        let caller: Func<Pair> = m.declare("caller");
        m.define(add, |x: Dyn<*mut i64>, y: Dyn<*mut i64>| {
            x.at(0).set(x.at(0) + y.at(0));
            x.at(0)
        });
        m.define(caller, move |x: Dyn<*mut i64>, y: Dyn<*mut i64>| {
            if alias {
                add.call(x, x) // @aliased_call
            } else {
                add.call(x, y)
            }
        });
        m.extract()
    };
    let err = build(true).unwrap_err();
    assert!(matches!(err, Error::Misuse { .. }), "{err:?}");
    let text = err.to_string();
    assert!(text.contains("they would alias"), "{text}");
    let line = include_str!("builder_options.rs")
        .lines()
        .position(|l| l.trim_end().ends_with("// @aliased_call"))
        .unwrap()
        + 1;
    assert!(
        text.contains(&format!("builder_options.rs:{line}:")),
        "{text}"
    );
    let ok = build(false).unwrap();
    assert!(
        ok.c_code()
            .contains("int64_t *restrict arg0, int64_t *restrict arg1"),
        "{}",
        ok.c_code()
    );
}
