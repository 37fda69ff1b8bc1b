//! What staged code means: value semantics of handles, plain Rust loops
//! and recursion around dyn branches, taggers and audit mode.

use crate::common;

use augur::{Builder, Dyn, Static, Tagger};
use common::{check, count, extract_with, Buf, Check};

/// `let e = x + 1; x.set(5); y.set(e)` gives the old `x + 1`.
#[test]
#[augur::staged]
fn values_are_snapshots() {
    check(
        "snapshot",
        |x: Dyn<i32>| {
            let y = Dyn::new(0);
            let e = x + 1;
            let c = Dyn::new(x);
            x.set(5);
            y.set(e);
            y * 100 + c + x
        },
        |&mut (x,): &mut (i32,)| {
            (x.wrapping_add(1))
                .wrapping_mul(100)
                .wrapping_add(x)
                .wrapping_add(5)
        },
        &[(0,), (1,), (-1,), (i32::MAX,), (12345,)],
    );
}

/// Copies of a variable's handle all see later assignments.
#[test]
#[augur::staged]
fn handles_alias_their_variable() {
    check(
        "alias",
        |x: Dyn<i64>| {
            let v = Dyn::new(x);
            let w = v;
            v.set(v * 2);
            w.set(w + 1);
            v
        },
        |&mut (x,): &mut (i64,)| x.wrapping_mul(2).wrapping_add(1),
        &[(0,), (1,), (-1,), (i64::MIN,), (99,)],
    );
}

/// `set` on an element read with `at` stores back to that element.
#[test]
#[augur::staged]
fn set_on_loaded_value_stores_back() {
    check(
        "store_back",
        |p: Dyn<*mut i32>, i: Dyn<i32>| {
            let v = p.at(i);
            v.set(v * 2);
            let d = p.offset(1).deref();
            d.set(d - 1);
        },
        |(p, i): &mut (Buf<i32>, i32)| {
            p.0[*i as usize] *= 2;
            p.0[1] -= 1;
        },
        &[
            (Buf(vec![1, 2, 3]), 0),
            (Buf(vec![1, 2, 3]), 1),
            (Buf(vec![1, 2, 3]), 2),
            (Buf(vec![-4, 0, 9]), 0),
            (Buf(vec![0, 0, 0]), 2),
        ],
    );
}

/// Parameters are variables: they can be assigned.
#[test]
#[augur::staged]
fn parameters_are_variables() {
    check(
        "param_set",
        |x: Dyn<u16>, y: Dyn<u16>| {
            x.set(y);
            y.set(7);
            x * 10 + y
        },
        |&mut (_, y): &mut (u16, u16)| y.wrapping_mul(10).wrapping_add(7),
        &[(0, 0), (1, 2), (65535, 65535), (9, 6553), (3, 100)],
    );
}

/// A plain Rust `for` over integers around dyn branches, with `break`:
/// the iterations are told apart and unrolled.
#[test]
#[augur::staged]
fn plain_for_with_break() {
    let ex = check(
        "plain_break",
        |x: Dyn<i32>| {
            let r = Dyn::new(0);
            for k in 0..5 {
                if x.gt(k).is_true() {
                    r.set(r + k + 1);
                } else {
                    break;
                }
            }
            r
        },
        |&mut (x,): &mut (i32,)| (0..5).take_while(|k| x > *k).map(|k| k + 1).sum(),
        &[(-1,), (0,), (1,), (2,), (4,), (5,), (100,)],
    );
    assert_eq!(ex.stats().back_edges, 0, "{}", ex.c_code());
}

/// A plain Rust `for` around dyn branches, with `return` inside.
#[test]
#[augur::staged]
fn plain_for_with_return() {
    let ex = check(
        "plain_return",
        |x: Dyn<i32>| {
            for k in 0..6 {
                if x.eq(k * k).is_true() {
                    return Dyn::lit(k);
                }
            }
            Dyn::lit(-1)
        },
        |&mut (x,): &mut (i32,)| (0..6).find(|k| k * k == x).unwrap_or(-1),
        &[(0,), (1,), (4,), (5,), (25,), (36,), (-1,)],
    );
    assert_eq!(count(&ex.c_code(), "if ("), 6, "{}", ex.c_code());
}

/// A plain Rust loop whose iterations are identical (nothing first-stage
/// changes), at the audit bound of 16 iterations.
#[test]
#[augur::staged]
fn plain_loop_identical_iterations() {
    check(
        "plain_same",
        |x: Dyn<u32>| {
            let r = Dyn::new(x);
            for _ in 0..16 {
                if (r & 1).eq(1).is_true() {
                    r.set(r / 2 + 100);
                } else {
                    r.set(r / 2);
                }
            }
            r
        },
        |&mut (x,): &mut (u32,)| {
            (0..16).fold(x, |r, _| if r & 1 == 1 { r / 2 + 100 } else { r / 2 })
        },
        &[(0,), (1,), (255,), (u32::MAX,), (0xdead_beef,)],
    );
}

/// A plain Rust loop of more iterations than the audit rounds, with a
/// builder that audits longer.
#[test]
#[augur::staged]
fn plain_loop_longer_than_default_audit() {
    let c = Check {
        builder: Builder::new().loop_audit_rounds(40),
        ..Check::default()
    };
    c.run(
        "plain_long",
        |x: Dyn<i32>| {
            let r = Dyn::new(0);
            for _ in 0..30 {
                if x.gt(r).is_true() {
                    r.set(r + 1);
                }
            }
            r
        },
        |&mut (x,): &mut (i32,)| x.clamp(0, 30),
        &[(-5,), (0,), (1,), (29,), (30,), (31,), (1000,)],
    );
}

/// Recursion over a plain parameter, depth 10, without dyn branches:
/// straight-line code.
#[test]
#[augur::staged]
fn plain_recursion_straight_line() {
    #[augur::staged]
    fn rec(x: Dyn<i64>, d: i64) -> Dyn<i64> {
        if d == 0 {
            x
        } else {
            rec(x * 3 + d, d - 1)
        }
    }
    #[augur::staged]
    fn reference(x: i64, d: i64) -> i64 {
        if d == 0 {
            x
        } else {
            reference(x.wrapping_mul(3).wrapping_add(d), d - 1)
        }
    }
    let ex = check(
        "rec_plain",
        |x: Dyn<i64>| rec(x, 10),
        |&mut (x,): &mut (i64,)| reference(x, 10),
        &[(0,), (1,), (-1,), (i64::MAX,), (777,)],
    );
    assert_eq!(count(&ex.c_code(), "* 3"), 10, "{}", ex.c_code());
}

/// Recursion over a plain parameter, depth 10, with a dyn branch at each
/// level: ten sequential ifs.
#[test]
#[augur::staged]
fn plain_recursion_with_branches() {
    #[augur::staged]
    fn rec(x: Dyn<u32>, acc: Dyn<u32>, d: u32) {
        if d == 0 {
            return;
        }
        if ((x >> d) & 1).eq(1).is_true() {
            acc.set(acc + d);
        } else {
            acc.set(acc * 2);
        }
        rec(x, acc, d - 1);
    }
    #[augur::staged]
    fn reference(x: u32, acc: u32, d: u32) -> u32 {
        if d == 0 {
            acc
        } else if (x >> d) & 1 == 1 {
            reference(x, acc + d, d - 1)
        } else {
            reference(x, acc.wrapping_mul(2), d - 1)
        }
    }
    let ex = check(
        "rec_branch",
        |x: Dyn<u32>| {
            let acc = Dyn::new(1u32);
            rec(x, acc, 10);
            acc
        },
        |&mut (x,): &mut (u32,)| reference(x, 1, 10),
        &[
            (0,),
            (u32::MAX,),
            (0b10101010100,),
            (0b01010101010,),
            (1 << 10,),
            (2,),
        ],
    );
    assert_eq!(count(&ex.c_code(), "if ("), 10, "{}", ex.c_code());
}

/// A function with no parameters.
#[test]
#[augur::staged]
fn no_parameters() {
    let ex = check(
        "answer",
        || {
            let r = Dyn::new(6);
            r.set(r * 7);
            r
        },
        |_: &mut ()| 42,
        &[(), (), (), (), ()],
    );
    assert!(ex.c_code().contains("answer(void)"), "{}", ex.c_code());
}

/// Audit mode (no memoization) computes the same function on loop-free
/// code; the unwinder tagger gives the same C as frame pointers.
#[test]
#[augur::staged]
fn audit_mode_and_unwinder_agree() {
    let f = |x: Dyn<i32>, y: Dyn<i32>| {
        let r = Dyn::new(0);
        for k in 0..3 {
            if x.gt(k).is_true() {
                r.set(r + 1);
            }
            if y.lt(k).is_true() {
                r.set(r * 3);
            }
        }
        r
    };
    let reference = |&mut (x, y): &mut (i32, i32)| {
        (0..3).fold(0, |r, k| {
            let r = if x > k { r + 1 } else { r };
            if y < k {
                r * 3
            } else {
                r
            }
        })
    };
    let inputs = [(0, 0), (1, 2), (5, -5), (-5, 5), (2, 1), (3, 3)];
    let normal = check("audited", f, reference, &inputs);
    let audit = Check {
        builder: Builder::new().audit(),
        ..Check::default()
    };
    audit.run("audited", f, reference, &inputs);
    let unwound = extract_with(&Builder::new().tagger(Tagger::Unwinder), "audited", f);
    assert_eq!(normal.c_code(), unwound.c_code());
    assert_eq!(unwound.stats().tagger_used(), "unwinder");
}

/// `in_extraction` and `Static` outside an extraction.
#[test]
#[augur::staged]
fn outside_an_extraction() {
    assert!(!augur::in_extraction());
    let mut s = Static::new(3);
    s += 4;
    assert_eq!(*s, 7);
    let ex = check(
        "inside",
        |x: Dyn<bool>| {
            assert!(augur::in_extraction());
            !x
        },
        |&mut (x,): &mut (bool,)| !x,
        &[(true,), (false,), (true,), (false,), (true,)],
    );
    assert_eq!(ex.location().file, file!());
}

/// A value computed before a loop keeps its value inside the loop while
/// the variable it was computed from changes.
#[test]
#[augur::staged]
fn snapshot_survives_a_loop() {
    check(
        "snap_loop",
        |x: Dyn<i32>, n: Dyn<i32>| {
            let e = x + 1;
            let s = Dyn::new(0);
            let i = Dyn::new(0);
            while i.lt(n).is_true() {
                x.set(x * 2);
                s.set(s + e);
                i.set(i + 1);
            }
            s + x
        },
        |&mut (x, n): &mut (i32, i32)| {
            let e = x + 1;
            let (mut x, mut s) = (x, 0);
            for _ in 0..n {
                x = x.wrapping_mul(2);
                s += e;
            }
            s.wrapping_add(x)
        },
        &[(0, 0), (1, 3), (5, 1), (-3, 4), (7, 10)],
    );
}

/// A loaded element used in a branch after the element was overwritten.
#[test]
#[augur::staged]
fn snapshot_of_memory_survives_a_store() {
    check(
        "snap_mem",
        |p: Dyn<*mut i32>, n: Dyn<i32>| {
            let e = p.at(0) + 1;
            p.at(0).set(n);
            let r = Dyn::new(0);
            if n.gt(0).is_true() {
                r.set(e);
            }
            r + p.at(0)
        },
        |(p, n): &mut (Buf<i32>, i32)| {
            let e = p.0[0] + 1;
            p.0[0] = *n;
            (if *n > 0 { e } else { 0 }) + *n
        },
        &[
            (Buf(vec![3]), 0),
            (Buf(vec![3]), 1),
            (Buf(vec![-3]), 5),
            (Buf(vec![0]), -4),
            (Buf(vec![9]), 9),
        ],
    );
}

/// A `Static<String>` scoped to a dyn loop's body: made and dropped every
/// iteration, its state at the loop head repeats, so the loop closes.
#[test]
#[augur::staged]
fn scoped_static_in_loop_body() {
    let ex = check(
        "scoped_static",
        |x: Dyn<i32>, n: Dyn<i32>| {
            let s = Dyn::new(0);
            let i = Dyn::new(0);
            while i.lt(n).is_true() {
                {
                    let mut st = Static::new(String::from("a"));
                    if x.gt(i).is_true() {
                        st.update(|v| v.push('b'));
                    }
                    s.set(s + st.len() as i32);
                }
                i.set(i + 1);
            }
            s
        },
        |&mut (x, n): &mut (i32, i32)| (0..n).map(|i| if x > i { 2 } else { 1 }).sum(),
        &[(0, 0), (1, 3), (5, 1), (-3, 4), (7, 10)],
    );
    assert_eq!(ex.stats().back_edges, 1);
}

/// A plain Rust loop around a dyn loop: two loops, one after the other.
#[test]
#[augur::staged]
fn plain_loop_around_dyn_loop() {
    let ex = check(
        "plain_around",
        |n: Dyn<i32>| {
            let s = Dyn::new(0);
            for _ in 0..2 {
                let i = Dyn::new(0);
                while i.lt(n).is_true() {
                    s.set(s + i);
                    i.set(i + 1);
                }
            }
            s
        },
        |&mut (n,): &mut (i32,)| 2 * (0..n).sum::<i32>(),
        &[(0,), (1,), (2,), (5,), (-1,)],
    );
    assert_eq!(count(&ex.c_code(), "for ("), 2, "{}", ex.c_code());
}

/// `Stats::back_edges` ("loops closed") counts the loops of the result,
/// not loops closed in attempts that were started over.
#[test]
#[augur::staged]
fn back_edges_count_the_final_loops() {
    let ex = augur::Builder::new()
        .extract("plain_around", |n: Dyn<i32>| {
            let s = Dyn::new(0);
            for _ in 0..2 {
                let i = Dyn::new(0);
                while i.lt(n).is_true() {
                    s.set(s + i);
                    i.set(i + 1);
                }
            }
            s
        })
        .unwrap();
    // Debug builds see the same tag in both iterations and restart once;
    // release builds may unroll the plain loop (distinct tags, no restart).
    assert!(ex.stats().loop_restarts <= 1, "{}", ex.stats());
    assert_eq!(ex.stats().back_edges, 2, "{}", ex.stats());
}

/// `Stats::operations` counts every staging operation of every run: one
/// run of straight-line code performs each recorded operation once (the
/// return included); an `if` adds a second run that replays the prefix.
#[test]
#[augur::staged]
fn operations_count_the_first_stages_work() {
    let straight = Builder::new()
        .extract("straight", |x: Dyn<i64>| {
            let y = Dyn::new(x);
            for _ in 0..10 {
                y.set(y + 1);
            }
            y
        })
        .unwrap();
    let s = straight.stats();
    assert_eq!((s.total_runs, s.operations), (1, s.nodes), "{s}");
    let branchy = Builder::new()
        .extract("branchy", |x: Dyn<i64>| {
            let y = Dyn::new(x);
            if x.lt(0).is_true() {
                y.set(-x);
            }
            y
        })
        .unwrap();
    let s = branchy.stats();
    assert!(s.total_runs >= 2 && s.operations > s.nodes, "{s}");
}
