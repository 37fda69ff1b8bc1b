//! Dyn loops around machines: runs that start inside a machine and come
//! back to its entry, under every builder.

use super::*;

#[augur::staged]
fn first_run_loops(n: Dyn<i64>, y: Dyn<i64>, exit_on: bool) -> Dyn<i64> {
    let i = Dyn::named("i", 0i64);
    let acc = Dyn::named("acc", y);
    while i.lt(n).is_true() {
        resumable(0u8, |s| match s {
            0 => {
                if (acc % 3).eq(0).is_true() == exit_on {
                    None
                } else {
                    Some(1)
                }
            }
            _ => {
                acc.set(acc + 1);
                Some(0)
            }
        });
        acc.set(acc + 1);
        i.set(i + 1);
    }
    acc
}

fn first_run_loops_plain(n: i64, y: i64) -> i64 {
    let (mut i, mut acc) = (0i64, y);
    while i < n {
        while acc % 3 != 0 {
            acc += 1;
        }
        acc += 1;
        i += 1;
    }
    acc
}

fn first_run_loops_plain_neg(n: i64, y: i64) -> i64 {
    let (mut i, mut acc) = (0i64, y);
    while i < n {
        while acc % 3 == 0 {
            acc += 1;
        }
        acc += 1;
        i += 1;
    }
    acc
}

#[test]
#[augur::staged]
fn dyn_loop_around_a_machine_whose_first_run_jumps_back() {
    check_all(
        "first_run_loops_t",
        |x: Dyn<i64>, y: Dyn<i64>| first_run_loops(x, y, true),
        &first_run_loops_plain,
    );
    check_all(
        "first_run_loops_f",
        |x: Dyn<i64>, y: Dyn<i64>| first_run_loops(x, y, false),
        &first_run_loops_plain_neg,
    );
}

// ---------------------------------------------------------------------------
// Minimal dyn-loop variants.

#[augur::staged]
fn dl1(n: Dyn<i64>, y: Dyn<i64>) -> Dyn<i64> {
    let i = Dyn::named("i", 0i64);
    let acc = Dyn::named("acc", 0i64);
    while i.lt(n).is_true() {
        resumable(0u8, |s| {
            if s == 1 {
                return None;
            }
            if acc.gt(y).is_true() {
                acc.set(acc - 1);
            }
            Some(1)
        });
        acc.set(acc + 2);
        i.set(i + 1);
    }
    acc
}

fn dl1_plain(n: i64, y: i64) -> i64 {
    let (mut i, mut acc) = (0i64, 0i64);
    while i < n {
        if acc > y {
            acc -= 1;
        }
        acc += 2;
        i += 1;
    }
    acc
}

#[test]
#[augur::staged]
fn dl1_decision_in_member() {
    check("dl1", |x: Dyn<i64>, y: Dyn<i64>| dl1(x, y), &dl1_plain);
}

#[augur::staged]
fn dl2(n: Dyn<i64>, y: Dyn<i64>) -> Dyn<i64> {
    let i = Dyn::named("i", 0i64);
    let acc = Dyn::named("acc", 0i64);
    while i.lt(n).is_true() {
        resumable(0u8, |s| {
            acc.set(acc + 1);
            if s == 1 {
                return None;
            }
            if acc.gt(y).is_true() {
                Some(1)
            } else {
                None
            }
        });
        i.set(i + 1);
    }
    acc
}

fn dl2_plain(n: i64, y: i64) -> i64 {
    let (mut i, mut acc) = (0i64, 0i64);
    while i < n {
        acc += 1;
        if acc > y {
            acc += 1;
        }
        i += 1;
    }
    acc
}

#[test]
#[augur::staged]
fn dl2_decision_picks_next_key() {
    check("dl2", |x: Dyn<i64>, y: Dyn<i64>| dl2(x, y), &dl2_plain);
}

/// The decision inside the first member, no second member.
#[augur::staged]
fn dl3(n: Dyn<i64>, y: Dyn<i64>) -> Dyn<i64> {
    let i = Dyn::named("i", 0i64);
    let acc = Dyn::named("acc", 0i64);
    while i.lt(n).is_true() {
        resumable(0u8, |_| {
            if acc.gt(y).is_true() {
                acc.set(acc - 1);
            }
            None
        });
        acc.set(acc + 2);
        i.set(i + 1);
    }
    acc
}

#[test]
#[augur::staged]
fn dl3_decision_in_the_only_member() {
    check("dl3", |x: Dyn<i64>, y: Dyn<i64>| dl3(x, y), &dl1_plain);
}

// ---------------------------------------------------------------------------
// Colliding keys over random machines; machines whose states all do the
// same operations (only the transitions differ).

/// The first run jumps back (state 1 to state 0) before any run leaves.
#[augur::staged]
fn jb(n: Dyn<i64>, y: Dyn<i64>) -> Dyn<i64> {
    let i = Dyn::named("i", 0i64);
    let acc = Dyn::named("acc", y);
    while i.lt(n).is_true() {
        resumable(0u8, |s| {
            if s == 1 {
                acc.set(acc + 1);
                return Some(0);
            }
            if (acc % 3).eq(0).is_true() {
                Some(1)
            } else {
                None
            }
        });
        i.set(i + 1);
    }
    acc
}

fn jb_plain(n: i64, y: i64) -> i64 {
    let (mut i, mut acc) = (0i64, y);
    while i < n {
        while acc % 3 == 0 {
            acc += 1;
        }
        i += 1;
    }
    acc
}

#[test]
#[augur::staged]
fn jb_first_run_jumps_back() {
    check("jb", |x: Dyn<i64>, y: Dyn<i64>| jb(x, y), &jb_plain);
}

/// The same without the dyn loop around: passes?
#[augur::staged]
fn jb_once(n: Dyn<i64>, y: Dyn<i64>) -> Dyn<i64> {
    let acc = Dyn::named("acc", y);
    resumable(0u8, |s| {
        if s == 1 {
            acc.set(acc + 1);
            return Some(0);
        }
        if (acc % 3).eq(0).is_true() {
            Some(1)
        } else {
            None
        }
    });
    if n.gt(0).is_true() {
        acc.set(acc + 100);
    }
    acc
}

fn jb_once_plain(n: i64, y: i64) -> i64 {
    let mut acc = y;
    while acc % 3 == 0 {
        acc += 1;
    }
    if n > 0 {
        acc += 100;
    }
    acc
}

#[test]
#[augur::staged]
fn jb_once_without_a_loop() {
    check(
        "jb_once",
        |x: Dyn<i64>, y: Dyn<i64>| jb_once(x, y),
        &jb_once_plain,
    );
}

/// `in_dyn_loop` with two states and no decision after the machine.
#[augur::staged]
fn idl2(n: Dyn<i64>, _y: Dyn<i64>) -> Dyn<i64> {
    let i = Dyn::named("i", 0i64);
    let acc = Dyn::named("acc", 0i64);
    while i.lt(n).is_true() {
        resumable(0u8, |s| {
            acc.set(acc + i64::from(s) + 1);
            if s >= 2 {
                return None;
            }
            if (acc % 3).eq(0).is_true() {
                Some(2)
            } else {
                Some(s + 1)
            }
        });
        i.set(i + 1);
    }
    acc
}

fn idl2_plain(n: i64, _y: i64) -> i64 {
    let (mut i, mut acc) = (0i64, 0i64);
    while i < n {
        let mut s = 0i64;
        loop {
            acc += s + 1;
            if s >= 2 {
                break;
            }
            s = if acc % 3 == 0 { 2 } else { s + 1 };
        }
        i += 1;
    }
    acc
}

#[test]
#[augur::staged]
fn idl2_skip_ahead_in_a_dyn_loop() {
    check("idl2", |x: Dyn<i64>, y: Dyn<i64>| idl2(x, y), &idl2_plain);
}

// ---------------------------------------------------------------------------
// Variants of `in_dyn_loop`.

#[augur::staged]
fn idl_v(n: Dyn<i64>, y: Dyn<i64>, top: u8, post: bool) -> Dyn<i64> {
    let i = Dyn::named("i", 0i64);
    let acc = Dyn::named("acc", 0i64);
    while i.lt(n).is_true() {
        resumable(0u8, |s| {
            acc.set(acc + i64::from(s) + 1);
            if s >= top {
                return None;
            }
            if (acc % 3).eq(0).is_true() {
                Some(s + 2)
            } else {
                Some(s + 1)
            }
        });
        if post && (acc % 2).eq(0).is_true() {
            acc.set(acc + y);
        }
        i.set(i + 1);
    }
    acc
}

fn idl_v_plain(n: i64, y: i64, top: i64, post: bool) -> i64 {
    let (mut i, mut acc) = (0i64, 0i64);
    while i < n {
        let mut s = 0i64;
        loop {
            acc += s + 1;
            if s >= top {
                break;
            }
            s += if acc % 3 == 0 { 2 } else { 1 };
        }
        if post && acc % 2 == 0 {
            acc += y;
        }
        i += 1;
    }
    acc
}

#[test]
#[augur::staged]
fn idl_variants() {
    let mut failed = Vec::new();
    for top in 1..=3u8 {
        for post in [false, true] {
            let r = std::panic::catch_unwind(|| {
                check(
                    &format!("idl_{top}_{post}"),
                    move |x: Dyn<i64>, y: Dyn<i64>| idl_v(x, y, top, post),
                    &move |x, y| idl_v_plain(x, y, i64::from(top), post),
                )
            });
            if r.is_err() {
                failed.push((top, post));
            }
        }
    }
    assert!(failed.is_empty(), "failed: {failed:?}");
}

#[test]
#[augur::staged]
fn jb_under_audit_and_trust() {
    let r1 = std::panic::catch_unwind(|| {
        check_with(
            Builder::new().audit(),
            "jb_a",
            |x: Dyn<i64>, y: Dyn<i64>| jb(x, y),
            &jb_plain,
            &pairs(),
        )
    })
    .is_ok();
    let r2 = std::panic::catch_unwind(|| {
        check_with(
            Builder::new().trust_unannotated(true),
            "jb_t",
            |x: Dyn<i64>, y: Dyn<i64>| jb(x, y),
            &jb_plain,
            &pairs(),
        )
    })
    .is_ok();
    assert!(r1 && r2, "audit ok: {r1}, trust ok: {r2}");
}

// ---------------------------------------------------------------------------
// Unannotated code around a machine: a plain `for` loop the engine cannot
// see, read inside the body.
