//! Unannotated code, prophecies, parallel loops and keyed functions with
//! machines.

use super::shapes::{in_dyn_loop, in_dyn_loop_plain};
use super::*;

fn unannotated(x: Dyn<i64>, y: Dyn<i64>) -> Dyn<i64> {
    let acc = Dyn::named("acc", x);
    for round in 0..3u8 {
        resumable(0u8, |s| {
            acc.set(acc + 1);
            if s == round {
                return None;
            }
            if acc.gt(y).is_true() {
                Some(s + 1)
            } else {
                Some(round)
            }
        });
        acc.set(acc * 2);
    }
    acc
}

fn unannotated_plain(x: i64, y: i64) -> i64 {
    let mut acc = x;
    for round in 0..3u8 {
        let mut s = 0u8;
        loop {
            acc += 1;
            if s == round {
                break;
            }
            s = if acc > y { s + 1 } else { round };
        }
        acc *= 2;
    }
    acc
}

#[test]
fn unannotated_plain_loop_around_a_machine() {
    let r = std::panic::catch_unwind(|| {
        check_with(
            Builder::new(),
            "unann",
            unannotated,
            &unannotated_plain,
            &pairs(),
        );
    });
    let t = std::panic::catch_unwind(|| {
        check_with(
            Builder::new().trust_unannotated(true),
            "unann_t",
            unannotated,
            &unannotated_plain,
            &pairs(),
        );
    });
    assert!(
        r.is_ok() && t.is_ok(),
        "default ok {}, trust ok {}",
        r.is_ok(),
        t.is_ok()
    );
}

/// Unannotated body helper: a plain loop inside the body's code.
fn unannotated_body(acc: Dyn<i64>, y: Dyn<i64>, s: u8) -> Option<u8> {
    let mut k = 0;
    for j in 0..3 {
        if acc.gt(y + j).is_true() {
            k += 1;
        }
    }
    acc.set(acc + k + i64::from(s));
    (s < 3).then_some(s + 1 + (k % 2) as u8)
}

#[augur::staged]
fn calls_unannotated(x: Dyn<i64>, y: Dyn<i64>) -> Dyn<i64> {
    let acc = Dyn::named("acc", x);
    resumable(0u8, |s| unannotated_body(acc, y, s));
    acc
}

fn calls_unannotated_plain(x: i64, y: i64) -> i64 {
    let mut acc = x;
    let mut s = 0u8;
    loop {
        let mut k = 0;
        for j in 0..3 {
            if acc > y + j {
                k += 1;
            }
        }
        acc += k + i64::from(s);
        if s < 3 {
            s += 1 + (k % 2) as u8;
        } else {
            break;
        }
    }
    acc
}

#[test]
#[augur::staged]
fn a_body_calling_unannotated_code() {
    check_all(
        "calls_unannotated",
        |x: Dyn<i64>, y: Dyn<i64>| calls_unannotated(x, y),
        &calls_unannotated_plain,
    );
}

// ---------------------------------------------------------------------------
// A prophecy read before the machine, required in one member on one path.

#[augur::staged]
fn prophecy_machine(x: Dyn<i64>, y: Dyn<i64>) -> Dyn<i64> {
    let needed = augur::prophecy::Prophecy::named("orig", false);
    let orig = Dyn::named("orig", 0i64);
    if needed.get() {
        orig.set(x);
    }
    let acc = Dyn::named("acc", x);
    resumable(0u8, |s| {
        let p = augur::prophecy::Prophecy::named("inner", false);
        if p.get() {
            acc.set(acc + 1000);
        }
        acc.set(acc + 1);
        if s == 4 {
            if acc.gt(y).is_true() {
                needed.require(true);
                acc.set(acc + orig);
            }
            return None;
        }
        if s == 2 && acc.lt(y).is_true() {
            p.require(true);
        }
        if (acc % 2).eq(0).is_true() {
            Some(s + 1)
        } else {
            Some((s + 2).min(4))
        }
    });
    acc
}

#[test]
#[augur::staged]
fn prophecies_inside_bodies() {
    // The plain meaning with the settled predictions: `orig` is `x`; the
    // inner prophecy of state 2 is true wherever some path required it.
    let ex = Builder::new()
        .extract("proph", |x: Dyn<i64>, y: Dyn<i64>| prophecy_machine(x, y))
        .unwrap();
    let code = ex.c_code();
    let ex2 = Builder::new()
        .extract("proph", |x: Dyn<i64>, y: Dyn<i64>| prophecy_machine(x, y))
        .unwrap();
    assert_eq!(code, ex2.c_code());
    eprintln!("{code}\n{}", ex.explain());
}

// ---------------------------------------------------------------------------
// parallel_for and many decisions inside a body.

#[augur::staged]
fn par_machine(p: Dyn<*mut i64>, n: Dyn<i64>) -> Dyn<i64> {
    let acc = Dyn::named("acc", 0i64);
    resumable(0u8, |s| {
        augur::parallel_for(0i64, n, |i| {
            p.at(i).set(p.at(i) + i64::from(s) + 1);
        });
        acc.set(acc + p.at(0));
        if acc.gt(5).is_true() {
            return None;
        }
        (s < 3).then_some(s + 1)
    });
    acc
}

#[test]
#[augur::staged]
fn parallel_for_inside_a_body() {
    let ex = Builder::new()
        .extract("par", |p: Dyn<*mut i64>, n: Dyn<i64>| par_machine(p, n))
        .unwrap_or_else(|e| panic!("{e}"));
    let c = ex.compile().unwrap();
    let jit = ex
        .compile_with(&CompileOptions::default().with_backend(Backend::Jit))
        .unwrap();
    for n in [1i64, 4, 9] {
        let plain = {
            let mut v = vec![0i64; n as usize];
            let mut acc = 0;
            for s in 0..4i64 {
                for x in v.iter_mut() {
                    *x += s + 1;
                }
                acc += v[0];
                if acc > 5 {
                    break;
                }
            }
            (acc, v)
        };
        for lib in [&c, &jit] {
            let mut v = vec![0i64; n as usize];
            let got = unsafe { lib.get()(v.as_mut_ptr(), n) };
            assert_eq!((got, v), plain.clone());
        }
    }
}

#[augur::staged]
fn many_decisions(x: Dyn<i64>, y: Dyn<i64>) -> Dyn<i64> {
    let acc = Dyn::named("acc", x);
    resumable(0u8, |s| {
        let mut votes = 0u8;
        for b in 0..6i64 {
            if ((acc >> b) & 1).eq(1).is_true() {
                votes += 1;
            }
        }
        acc.set(acc + i64::from(votes) + y);
        if s >= 3 {
            return None;
        }
        Some(s + 1 + votes % 2)
    });
    acc
}

fn many_decisions_plain(x: i64, y: i64) -> i64 {
    let mut acc = x;
    let mut s = 0u8;
    loop {
        let mut votes = 0u8;
        for b in 0..6 {
            if (acc >> b) & 1 == 1 {
                votes += 1;
            }
        }
        acc += i64::from(votes) + y;
        if s >= 3 {
            break;
        }
        s += 1 + votes % 2;
    }
    acc
}

#[test]
#[augur::staged]
fn a_body_with_many_decisions() {
    check_all(
        "many_decisions",
        |x: Dyn<i64>, y: Dyn<i64>| many_decisions(x, y),
        &many_decisions_plain,
    );
}

// ---------------------------------------------------------------------------
// A keyed module function with a machine, calling the family inside a body.

#[augur::staged]
fn mach_rust(k: u32, x: i64) -> i64 {
    let mut acc = x;
    let mut s = 0u32;
    loop {
        acc += i64::from(s);
        if k > 0 && acc % 2 == 0 {
            acc += mach_rust(k - 1, acc / 2);
        }
        if s >= 2 || acc > 50 {
            break;
        }
        s += 1;
    }
    acc
}

#[test]
#[augur::staged]
fn keyed_module_functions_with_machines() {
    let mut m = Builder::new().module();
    let f = m.declare_keyed::<u32, fn(i64) -> i64>("mach");
    m.define_keyed(f, move |k: u32, x: Dyn<i64>| {
        let acc = Dyn::named("acc", x);
        resumable(0u32, |s| {
            acc.set(acc + i64::from(s));
            if k > 0 && (acc % 2).eq(0).is_true() {
                acc.set(acc + f.at(k - 1).call(acc / 2));
            }
            if s >= 2 || acc.gt(50).is_true() {
                return None;
            }
            Some(s + 1)
        });
        acc
    });
    m.export(f.at(3));
    let ex = m.extract().unwrap_or_else(|e| panic!("{e}"));
    for x in [-7i64, 0, 1, 2, 9, 40, 100] {
        let want = mach_rust(3, x);
        assert_eq!(
            ex.interpret(f.at(3), &[x.into()]).unwrap(),
            Value::I64(want),
            "x = {x}"
        );
    }
}

// ---------------------------------------------------------------------------
// `in_dyn_loop` again: a verbatim copy, and under audit and trust.

#[augur::staged]
fn in_dyn_loop_copy(n: Dyn<i64>, y: Dyn<i64>) -> Dyn<i64> {
    let i = Dyn::named("i", 0i64);
    let acc = Dyn::named("acc", 0i64);
    while i.lt(n).is_true() {
        resumable(0u8, |s| {
            acc.set(acc + i64::from(s) + 1);
            if s >= 3 {
                return None;
            }
            if (acc % 3).eq(0).is_true() {
                Some(s + 2)
            } else {
                Some(s + 1)
            }
        });
        if (acc % 2).eq(0).is_true() {
            acc.set(acc + y);
        }
        i.set(i + 1);
    }
    acc
}

#[test]
#[augur::staged]
fn in_dyn_loop_each_builder() {
    let mut ok = Vec::new();
    for (what, b) in [
        ("new", Builder::new()),
        ("audit", Builder::new().audit()),
        ("trust", Builder::new().trust_unannotated(true)),
    ] {
        for copy in [false, true] {
            let b = b.clone();
            let r = std::panic::catch_unwind(move || {
                if copy {
                    check_with(
                        b,
                        "idl_copy",
                        |x: Dyn<i64>, y: Dyn<i64>| in_dyn_loop_copy(x, y),
                        &in_dyn_loop_plain,
                        &pairs(),
                    );
                } else {
                    check_with(
                        b,
                        "idl_orig",
                        |x: Dyn<i64>, y: Dyn<i64>| in_dyn_loop(x, y),
                        &in_dyn_loop_plain,
                        &pairs(),
                    );
                }
            });
            ok.push((what, copy, r.is_ok()));
        }
    }
    assert!(ok.iter().all(|r| r.2), "{ok:?}");
}
