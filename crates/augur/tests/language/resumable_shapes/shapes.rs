//! Colliding keys, machines in dyn loops, after joins, nested, and over
//! first-stage state.

use super::*;

#[derive(Clone, PartialEq, Eq, Debug)]
struct K(u8);
impl Hash for K {
    fn hash<H: Hasher>(&self, _h: &mut H) {}
}

/// Every state does the same operations; only the transitions differ, and
/// the exit state does something different.
#[augur::staged]
fn collide(x: Dyn<i64>, y: Dyn<i64>) -> Dyn<i64> {
    let acc = Dyn::named("acc", x);
    resumable(K(0), |K(s)| {
        if s == 4 {
            acc.set(acc * 100);
            return None;
        }
        acc.set(acc + 1);
        if acc.gt(y).is_true() {
            Some(K([1, 2, 3, 4][s as usize]))
        } else {
            Some(K([2, 4, 1, 0][s as usize]))
        }
    });
    acc
}

fn collide_plain(x: i64, y: i64) -> i64 {
    let mut acc = x;
    let mut s = 0u8;
    let mut fuel = 0;
    loop {
        fuel += 1;
        if fuel > 1000 {
            return -1;
        }
        if s == 4 {
            return acc * 100;
        }
        acc += 1;
        s = if acc > y {
            [1, 2, 3, 4][s as usize]
        } else {
            [2, 4, 1, 0][s as usize]
        };
    }
}

#[test]
#[augur::staged]
fn colliding_key_hashes() {
    check(
        "collide",
        |x: Dyn<i64>, y: Dyn<i64>| collide(x, y),
        &collide_plain,
    );
}

/// Colliding keys whose members do different arithmetic.
#[augur::staged]
fn collide2(x: Dyn<i64>, y: Dyn<i64>) -> Dyn<i64> {
    let acc = Dyn::named("acc", x);
    resumable(K(0), |K(s)| {
        acc.set(acc + i64::from(s) * 10 + 1);
        if s >= 3 {
            return None;
        }
        if acc.gt(y).is_true() {
            Some(K(s + 1))
        } else {
            Some(K(s + 2))
        }
    });
    acc
}

fn collide2_plain(x: i64, y: i64) -> i64 {
    let mut acc = x;
    let mut s = 0i64;
    loop {
        acc += s * 10 + 1;
        if s >= 3 {
            return acc;
        }
        s += if acc > y { 1 } else { 2 };
    }
}

#[test]
#[augur::staged]
fn colliding_key_hashes_different_code() {
    check_all(
        "collide2",
        |x: Dyn<i64>, y: Dyn<i64>| collide2(x, y),
        &collide2_plain,
    );
}

// ---------------------------------------------------------------------------
// Machines with decisions inside a dyn loop, decisions after the exit.

#[augur::staged]
pub(super) fn in_dyn_loop(n: Dyn<i64>, y: Dyn<i64>) -> Dyn<i64> {
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

pub(super) fn in_dyn_loop_plain(n: i64, y: i64) -> i64 {
    let (mut i, mut acc) = (0i64, 0i64);
    while i < n {
        let mut s = 0i64;
        loop {
            acc += s + 1;
            if s >= 3 {
                break;
            }
            s += if acc % 3 == 0 { 2 } else { 1 };
        }
        if acc % 2 == 0 {
            acc += y;
        }
        i += 1;
    }
    acc
}

#[test]
#[augur::staged]
fn machine_with_decisions_in_a_dyn_loop() {
    check_all(
        "in_dyn_loop",
        |x: Dyn<i64>, y: Dyn<i64>| in_dyn_loop(x, y),
        &in_dyn_loop_plain,
    );
}

// ---------------------------------------------------------------------------
// A machine after a dyn branch that rejoins; exit reached from many
// members, followed by a dyn decision and another machine.

#[augur::staged]
fn after_join(x: Dyn<i64>, y: Dyn<i64>) -> Dyn<i64> {
    let a = Dyn::named("a", x);
    if x.gt(y).is_true() {
        a.set(a - y);
    } else {
        a.set(a + y);
    }
    resumable(0u8, |s| {
        a.set(a * 2 + i64::from(s));
        if s == 5 {
            return None;
        }
        if (a % 5).eq(1).is_true() {
            return None;
        }
        if a.gt(50).is_true() {
            Some(s + 1)
        } else {
            Some((s + 2).min(5))
        }
    });
    if (a % 2).eq(0).is_true() {
        a.set(a + 1000);
    }
    resumable(10u8, |s| {
        a.set(a - i64::from(s));
        if a.lt(0).is_true() {
            return None;
        }
        (s < 13).then_some(s + 1)
    });
    a
}

fn after_join_plain(x: i64, y: i64) -> i64 {
    let mut a = x;
    if x > y {
        a -= y;
    } else {
        a += y;
    }
    let mut s = 0i64;
    loop {
        a = a.wrapping_mul(2).wrapping_add(s);
        if s == 5 || a % 5 == 1 {
            break;
        }
        s = if a > 50 { s + 1 } else { (s + 2).min(5) };
    }
    if a % 2 == 0 {
        a += 1000;
    }
    let mut s = 10i64;
    loop {
        a -= s;
        if a < 0 {
            break;
        }
        if s < 13 {
            s += 1;
        } else {
            break;
        }
    }
    a
}

#[test]
#[augur::staged]
fn machines_after_a_join_and_after_each_other() {
    check_all(
        "after_join",
        |x: Dyn<i64>, y: Dyn<i64>| after_join(x, y),
        &after_join_plain,
    );
}

// ---------------------------------------------------------------------------
// Nested machines with decisions before and after the inner one.

#[augur::staged]
fn nested(x: Dyn<i64>, y: Dyn<i64>) -> Dyn<i64> {
    let r = Dyn::named("r", 0i64);
    resumable(0u8, |outer| {
        if r.gt(y).is_true() {
            r.set(r - 3);
        }
        resumable(0u8, |inner| {
            r.set(r + x * i64::from(inner + 1) + i64::from(outer));
            if r.gt(y).is_true() {
                None
            } else if (r % 2).eq(0).is_true() {
                (inner < 2).then_some(inner + 1)
            } else {
                (inner < 2).then_some(2)
            }
        });
        if (r % 3).eq(0).is_true() {
            r.set(r + 1);
            return (outer < 3).then_some(outer + 1);
        }
        r.set(r - i64::from(outer));
        (outer < 2).then_some(outer + 2)
    });
    r
}

fn nested_plain(x: i64, y: i64) -> i64 {
    let mut r = 0i64;
    let mut outer = 0i64;
    loop {
        if r > y {
            r -= 3;
        }
        let mut inner = 0i64;
        loop {
            r = r
                .wrapping_add(x.wrapping_mul(inner + 1))
                .wrapping_add(outer);
            if r > y {
                break;
            } else if r % 2 == 0 {
                if inner < 2 {
                    inner += 1
                } else {
                    break;
                }
            } else if inner < 2 {
                inner = 2;
            } else {
                break;
            }
        }
        if r % 3 == 0 {
            r += 1;
            if outer < 3 {
                outer += 1;
                continue;
            }
            break;
        }
        r -= outer;
        if outer < 2 {
            outer += 2;
        } else {
            break;
        }
    }
    r
}

#[test]
#[augur::staged]
fn nested_machines_with_decisions_around() {
    check_all(
        "nested",
        |x: Dyn<i64>, y: Dyn<i64>| nested(x, y),
        &nested_plain,
    );
}

// ---------------------------------------------------------------------------
// Statics and tracked locals read inside; staged functions called twice.

#[augur::staged]
fn helper(a: Dyn<i64>, y: Dyn<i64>, bias: i64) -> Dyn<i64> {
    let r = Dyn::new(a);
    resumable(0i64, |s| {
        r.set(r + s + bias);
        if r.gt(y).is_true() {
            return None;
        }
        (s < 3).then_some(s + 1)
    });
    r
}

fn helper_plain(a: i64, y: i64, bias: i64) -> i64 {
    let mut r = a;
    for s in 0..4 {
        r += s + bias;
        if r > y {
            break;
        }
    }
    r
}

#[augur::staged]
fn statics_and_calls(x: Dyn<i64>, y: Dyn<i64>) -> Dyn<i64> {
    let st = Static::new(3i64);
    let tracked = 5i64;
    let acc = Dyn::named("acc", x);
    for round in 0..2i64 {
        resumable(0i64, |s| {
            acc.set(acc + *st * s + tracked + round);
            if acc.gt(y).is_true() {
                return None;
            }
            (s < 2).then_some(s + 1)
        });
        acc.set(helper(acc, y, round) + helper(acc, y, 7));
        if acc.lt(0).is_true() {
            acc.set(0 - acc);
        }
    }
    acc
}

fn statics_and_calls_plain(x: i64, y: i64) -> i64 {
    let mut acc = x;
    for round in 0..2 {
        for s in 0..3 {
            acc += 3 * s + 5 + round;
            if acc > y {
                break;
            }
        }
        acc = helper_plain(acc, y, round) + helper_plain(acc, y, 7);
        if acc < 0 {
            acc = -acc;
        }
    }
    acc
}

#[test]
#[augur::staged]
fn statics_tracked_locals_and_repeated_calls() {
    check_all(
        "statics_and_calls",
        |x: Dyn<i64>, y: Dyn<i64>| statics_and_calls(x, y),
        &statics_and_calls_plain,
    );
}

// ---------------------------------------------------------------------------
// Random state machines.
