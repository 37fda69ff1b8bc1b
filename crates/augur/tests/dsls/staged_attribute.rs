//! `#[augur::staged]`: plain Rust loops and locals in annotated functions
//! are first-stage state tags see, so programs the engine cannot tell apart
//! without it (plain loops with dyn exits, plain loops inside dyn loops,
//! plain values set on one side of a dyn `if` and read far after the join,
//! state machines in a plain local) give exact code. Each is compiled,
//! interpreted and compared with plain Rust.

use crate::common;

use augur::prophecy::Prophecy;
use augur::{Builder, Dyn, Error};
use common::check;

/// A plain `for` whose body has its own dyn exit, running far longer than
/// any loop audit: unrolled, and the statements after it kept.
#[augur::staged]
fn plain_loop_with_dyn_exit(x: Dyn<i32>, turns: i32) -> Dyn<i32> {
    let r = Dyn::new(0);
    for _ in 0..turns {
        if x.le(r).is_true() {
            break;
        }
        r.set(r + 1);
    }
    r.set(r * 10);
    r
}

#[test]
#[augur::staged]
fn a_plain_loop_with_a_dyn_break_unrolls_exactly() {
    for turns in [1, 17, 100] {
        let ex = check(
            "plain_break",
            move |x: Dyn<i32>| plain_loop_with_dyn_exit(x, turns),
            move |&mut (x,): &mut (i32,)| x.clamp(0, turns) * 10,
            &[(-1,), (0,), (5,), (16,), (17,), (99,), (100,), (1000,)],
        );
        assert_eq!(ex.stats().back_edges, 0, "{}", ex.c_code());
    }
}

/// A plain loop over layers inside a dyn batch loop, the body of each layer
/// holding a dyn loop of its own.
#[augur::staged]
fn batches(x: Dyn<*mut i32>, n: Dyn<i32>, layers: &[i32]) {
    let b = Dyn::new(0);
    while b.lt(n).is_true() {
        for w in layers {
            let i = Dyn::new(0);
            while i.lt(*w).is_true() {
                if x.at(b).lt(1000).is_true() {
                    x.at(b).set(x.at(b) * 2 + *w);
                }
                i.set(i + 1);
            }
        }
        b.set(b + 1);
    }
}

#[test]
#[augur::staged]
fn a_plain_loop_inside_a_dyn_loop_closes_the_dyn_loop() {
    let layers = vec![1, 3, 2];
    let l2 = layers.clone();
    let ex = check(
        "batches",
        move |x: Dyn<*mut i32>, n: Dyn<i32>| batches(x, n, &layers),
        move |(x, n): &mut (common::Buf<i32>, i32)| {
            for b in 0..(*n).max(0) as usize {
                for &w in &l2 {
                    for _ in 0..w {
                        if x.0[b] < 1000 {
                            x.0[b] = x.0[b] * 2 + w;
                        }
                    }
                }
            }
        },
        &[
            (common::Buf(vec![0, 0, 0]), 0),
            (common::Buf(vec![1, 2, 3]), 3),
            (common::Buf(vec![500, -7, 9]), 2),
            (common::Buf(vec![999, 1000, 4]), 3),
            (common::Buf(vec![-3, 5, 70]), 1),
        ],
    );
    // The batch loop and each layer's loop close: 1 + 3 loops, no copies of
    // the batch loop's body per turn.
    assert_eq!(ex.stats().back_edges, 4, "{}", ex.c_code());
}

/// `turns` turns of a plain loop around a dyn `if`, inside a dyn loop.
#[augur::staged]
fn long_plain_loop(x: Dyn<i32>, m: Dyn<i32>, turns: i32) -> Dyn<i32> {
    let r = Dyn::new(0);
    let i = Dyn::new(0);
    while i.lt(m).is_true() {
        for k in 0..turns {
            if x.gt(k).is_true() {
                r.set(r + 1);
            }
        }
        i.set(i + 1);
    }
    r
}

#[test]
#[augur::staged]
fn long_plain_loops_inside_a_dyn_loop() {
    check(
        "long_plain",
        |x: Dyn<i32>, m: Dyn<i32>| long_plain_loop(x, m, 100),
        |&mut (x, m): &mut (i32, i32)| m.max(0) * x.clamp(0, 100),
        &[(0, 3), (-5, 2), (50, 2), (2000, 1), (7, 0)],
    );
    // 1000 turns: interpreted only (a C compiler takes long over 1000 ifs).
    let ex = Builder::new()
        .extract("long_plain", |x: Dyn<i32>, m: Dyn<i32>| {
            long_plain_loop(x, m, 1000)
        })
        .unwrap();
    for (x, m) in [(0, 3), (500, 2), (2000, 1)] {
        let want = m * x.clamp(0, 1000);
        assert_eq!(ex.interpret(&[x.into(), m.into()]).unwrap(), want.into());
    }
    assert_eq!(ex.stats().back_edges, 1, "{}", ex.stats());
}

/// A plain value set on each side of a dyn `if` and read 200 operations
/// after the join, on the else side of a later dyn `if` only.
#[augur::staged]
fn far_plain_value(x: Dyn<i32>, y: Dyn<i32>) -> Dyn<i32> {
    let r = Dyn::new(x);
    let mut k = 1;
    if x.gt(0).is_true() {
        k = 3;
    }
    let d = if y.gt(x).is_true() { 5 } else { 7 };
    for _ in 0..100 {
        r.set(r + 1);
    }
    if y.gt(0).is_true() {
        r.set(r + 10);
    } else {
        r.set(r * k + d);
    }
    r
}

#[test]
#[augur::staged]
fn a_plain_value_read_far_after_the_join_on_a_later_side() {
    check(
        "far_plain",
        far_plain_value,
        |&mut (x, y): &mut (i32, i32)| {
            let k = if x > 0 { 3 } else { 1 };
            let d = if y > x { 5 } else { 7 };
            let r = x + 100;
            if y > 0 {
                r + 10
            } else {
                r * k + d
            }
        },
        &[(0, 0), (1, 0), (0, 1), (1, 1), (-1, -1), (5, -5), (-5, -9)],
    );
}

/// A hand-written state machine: a plain `u8` state carried across the turns
/// of a dyn loop decides what each turn generates. The loop closes once the
/// state repeats: a loop over the three states' code.
#[augur::staged]
fn state_machine(x: Dyn<*mut i32>, n: Dyn<i32>) -> Dyn<i32> {
    let acc = Dyn::new(0);
    let i = Dyn::new(0);
    let mut state: u8 = 0;
    while i.lt(n).is_true() {
        match state {
            0 => {
                acc.set(acc + x.at(i));
                state = 1;
            }
            1 => {
                if x.at(i).gt(0).is_true() {
                    acc.set(acc * 2);
                    state = 2;
                } else {
                    state = 0;
                }
            }
            _ => {
                acc.set(acc - 1);
                state = 0;
            }
        }
        i.set(i + 1);
    }
    acc
}

#[test]
#[augur::staged]
fn a_plain_state_machine_in_a_dyn_loop_closes_over_its_states() {
    let ex = check(
        "state_machine",
        state_machine,
        |(x, n): &mut (common::Buf<i32>, i32)| {
            let (mut acc, mut state) = (0i32, 0u8);
            for i in 0..(*n).max(0) as usize {
                match state {
                    0 => {
                        acc += x.0[i];
                        state = 1;
                    }
                    1 if x.0[i] > 0 => {
                        acc *= 2;
                        state = 2;
                    }
                    1 => state = 0,
                    _ => {
                        acc -= 1;
                        state = 0;
                    }
                }
            }
            acc
        },
        &[
            (common::Buf(vec![1, 2, 3, 4, 5, 6]), 6),
            (common::Buf(vec![1, -2, 3, 4, -5, 6]), 6),
            (common::Buf(vec![0; 6]), 0),
            (common::Buf(vec![-1, 1, 1, 1, 1, 1]), 5),
            (common::Buf(vec![9, 9, 9, 9, 9, 9]), 4),
        ],
    );
    assert!(ex.stats().back_edges >= 1, "{}", ex.c_code());
}

/// State a turn changes through methods (`push`, `clear`, `get_or_insert`,
/// `replace`, `take`) rather than by assignment: each statement or
/// condition that may change a local re-hashes it, so the dyn loop closes
/// over the states as it does for assigned ones.
#[augur::staged]
fn vec_period(x: Dyn<i32>) -> Dyn<i32> {
    let mut seen: Vec<u8> = Vec::new();
    let i = Dyn::new(0);
    let acc = Dyn::new(0);
    while i.lt(x).is_true() {
        if seen.len() % 2 == 0 {
            acc.set(acc + 1)
        } else {
            acc.set(acc + 10)
        }
        seen.push(1);
        if seen.len() > 3 {
            seen.clear();
        }
        i.set(i + 1);
    }
    acc
}

#[augur::staged]
fn option_state(x: Dyn<i32>) -> Dyn<i32> {
    let mut st: Option<u8> = None;
    let i = Dyn::new(0);
    let acc = Dyn::new(0);
    while i.lt(x).is_true() {
        let s = *st.get_or_insert(0);
        if s == 0 {
            acc.set(acc + 1);
        } else {
            acc.set(acc * 2);
        }
        if (i % 2).eq(0).is_true() {
            st.replace((s + 1) % 3);
        }
        i.set(i + 1);
    }
    acc
}

/// A flag taken in a condition: what the branch generates sees it taken.
#[augur::staged]
fn taken_in_a_condition(x: Dyn<i32>) -> Dyn<i32> {
    let mut pending: Option<u8> = Some(2);
    let i = Dyn::new(0);
    let acc = Dyn::new(0);
    while i.lt(x).is_true() {
        if pending.take().is_some() && pending.is_none() {
            acc.set(acc + 100);
        }
        acc.set(acc + 1);
        if (i % 3).eq(1).is_true() {
            pending.replace(1);
        }
        i.set(i + 1);
    }
    acc
}

#[test]
#[augur::staged]
fn state_changed_through_methods_closes_over_its_states() {
    let ex = check(
        "vec_period",
        vec_period,
        |(x,): &mut (i32,)| {
            let (mut n, mut acc) = (0usize, 0i32);
            for _ in 0..(*x).max(0) {
                acc += if n % 2 == 0 { 1 } else { 10 };
                n += 1;
                if n > 3 {
                    n = 0;
                }
            }
            acc
        },
        &[(0,), (1,), (2,), (3,), (4,), (5,), (7,), (10,), (13,)],
    );
    assert!(ex.stats().back_edges >= 1, "{}", ex.c_code());
    check(
        "option_state",
        option_state,
        |(x,): &mut (i32,)| {
            let (mut s, mut acc) = (0u8, 0i32);
            for i in 0..(*x).max(0) {
                acc = if s == 0 { acc + 1 } else { acc.wrapping_mul(2) };
                if i % 2 == 0 {
                    s = (s + 1) % 3;
                }
            }
            acc
        },
        &[(0,), (1,), (2,), (3,), (4,), (5,), (7,), (10,), (13,)],
    );
    check(
        "taken_in_a_condition",
        taken_in_a_condition,
        |(x,): &mut (i32,)| {
            let (mut pending, mut acc) = (true, 0i32);
            for i in 0..(*x).max(0) {
                if std::mem::take(&mut pending) {
                    acc += 100;
                }
                acc += 1;
                if i % 3 == 1 {
                    pending = true;
                }
            }
            acc
        },
        &[(0,), (1,), (2,), (3,), (4,), (5,), (7,), (10,), (13,)],
    );
}

/// A closure handed to an iterator adapter is called from the standard
/// library's frames: each call counts itself, so an adapter with a dyn
/// early exit (`any`) unrolls as exactly as the `for` loop it replaces
/// (it used to close into a loop after the audit's turns: wrong code from
/// 18 turns).
#[augur::staged]
fn any_exit(x: Dyn<i32>, turns: usize) -> Dyn<i32> {
    let found = (0..turns).any(|_| {
        if x.gt(5).is_true() {
            return true;
        }
        x.set(x + 1);
        false
    });
    if found {
        x
    } else {
        x * 2
    }
}

#[test]
#[augur::staged]
fn a_closure_of_an_iterator_adapter_counts_its_calls() {
    for turns in [3usize, 18, 40] {
        check(
            "any_exit",
            move |x: Dyn<i32>| any_exit(x, turns),
            |(x,): &mut (i32,)| {
                let mut x = *x;
                let found = (0..turns).any(|_| {
                    if x > 5 {
                        return true;
                    }
                    x += 1;
                    false
                });
                if found {
                    x
                } else {
                    x.wrapping_mul(2)
                }
            },
            &[(-100,), (-3,), (0,), (3,), (6,), (40,)],
        );
    }
}

/// A plain counter carried across a dyn loop never repeats: a clear error
/// naming the loop, never a loop compiled with the first turn's value.
#[augur::staged]
fn counting(x: Dyn<i32>) -> Dyn<i32> {
    let r = Dyn::new(0);
    let mut turns = 0u32;
    while r.lt(x).is_true() {
        turns += 1;
        r.set(r + turns as i32);
    }
    r
}

#[test]
#[augur::staged]
fn a_plain_counter_across_a_dyn_loop_is_an_error() {
    let err = Builder::new()
        .max_loop_iterations(200)
        .extract("counting", counting)
        .unwrap_err();
    assert!(matches!(err, Error::LoopNeverCloses { .. }), "{err:?}");
}

/// A prophecy requirement that a plain flag decides, on the else side of a
/// later dyn `if`, far after the join where the flag was set.
#[augur::staged]
fn far_requirement(x: Dyn<i32>) -> Dyn<i32> {
    let p = Prophecy::named("x saved", false);
    let saved = Dyn::new(0);
    if p.get() {
        saved.set(x);
    }
    let mut needs = false;
    let r = Dyn::new(0);
    if x.gt(0).is_true() {
        r.set(1);
    } else {
        r.set(2);
        needs = true;
    }
    if x.lt(-100).is_true() {
        r.set(r * 2);
    } else {
        for _ in 0..80 {
            r.set(r + 1);
        }
        if needs {
            p.require(true);
        }
    }
    r + saved
}

#[test]
#[augur::staged]
fn a_requirement_decided_by_a_plain_flag_far_after_the_join() {
    check(
        "far_requirement",
        far_requirement,
        |&mut (x,): &mut (i32,)| {
            let r = if x > 0 { 1 } else { 2 };
            x + if x < -100 { 2 * r } else { r + 80 }
        },
        &[(-500,), (-5,), (0,), (3,), (-101,)],
    );
}

/// Plain recursion whose calls are tail calls in an optimized build: the
/// attribute keeps each level's frame, so nested `if`s stay apart.
#[augur::staged]
fn nested(x: Dyn<i32>, r: Dyn<i32>, depth: u32) {
    if depth == 0 {
        return;
    }
    if x.gt(depth as i32).is_true() {
        r.set(r + depth as i32);
        nested(x, r, depth - 1)
    } else {
        nested(x, r, depth - 1)
    }
}

#[test]
#[augur::staged]
fn tail_recursion_keeps_its_levels_apart() {
    check(
        "nested",
        |x: Dyn<i32>| {
            let r = Dyn::new(0);
            nested(x, r, 6);
            r
        },
        |&mut (x,): &mut (i32,)| (1..=6).filter(|d| x > *d).sum::<i32>(),
        &[(0,), (3,), (6,), (7,), (-2,)],
    );
}

/// Outside an extraction the annotated function is plain Rust.
#[augur::staged]
fn plain_sum(xs: &[i32]) -> i32 {
    let mut s = 0;
    for x in xs {
        s += x;
    }
    s
}

#[test]
#[augur::staged]
fn annotated_code_runs_outside_extraction() {
    assert_eq!(plain_sum(&[1, 2, 3]), 6);
}

/// A plain flag each turn of a dyn loop flips, read after the loop: under
/// the attribute the flag is first-stage state tags see, so the loop closes
/// over two turns and leaving after an odd number multiplies by 10 (without
/// the attribute, `loops::same_operation_from_alternating_call_sites`).
#[augur::staged]
fn parity(n: Dyn<i64>) -> Dyn<i64> {
    let acc = Dyn::new(0i64);
    let i = Dyn::new(0i64);
    let mut flip = false;
    while i.lt(n).is_true() {
        acc.set(acc + 1);
        flip = !flip;
        i.set(i + 1);
    }
    if flip {
        acc.set(acc * 10);
    }
    acc
}

#[test]
#[augur::staged]
fn a_flag_flipped_each_turn_decides_what_follows_the_loop() {
    let ex = check(
        "parity",
        parity,
        |&mut (n,): &mut (i64,)| {
            let turns = n.max(0);
            if turns % 2 == 1 {
                turns * 10
            } else {
                turns
            }
        },
        &[(0,), (1,), (2,), (3,), (8,), (9,)],
    );
    assert_eq!(ex.stats().back_edges, 1, "{}", ex.c_code());
}

/// A plain loop whose turns both `continue` and `break`, with a tail after
/// the loop too long to copy: each `continue` skips the rest of its turn
/// (a one-turn loop around it), and each `break` leaves every turn at once
/// (a one-turn loop around all of them, the inner ones left through a flag).
/// No `goto` (fuzz seeds 9700039431 and 9700068351 found two gotos here).
#[augur::staged]
fn continue_and_break(a: Dyn<i32>, b: Dyn<i32>) -> Dyn<i32> {
    let v = Dyn::new(0);
    for k in 0..3 {
        if a.lt(b).is_true() {
            if a.eq(b + k).is_true() {
                continue;
            }
        } else {
            v.set(v + 1);
        }
        if a.ne(k).is_true() {
            break;
        }
    }
    let mut r = v * 3 + a;
    for k in 0..12 {
        r = r * 5 - b + k;
    }
    r
}

#[test]
#[augur::staged]
fn a_plain_loop_that_continues_and_breaks_needs_no_goto() {
    let reference = |&mut (a, b): &mut (i32, i32)| {
        let mut v = 0i32;
        for k in 0..3 {
            if a < b {
                if a == b.wrapping_add(k) {
                    continue;
                }
            } else {
                v += 1;
            }
            if a != k {
                break;
            }
        }
        let mut r = v.wrapping_mul(3).wrapping_add(a);
        for k in 0..12 {
            r = r.wrapping_mul(5).wrapping_sub(b).wrapping_add(k);
        }
        r
    };
    let ex = check(
        "continue_and_break",
        continue_and_break,
        reference,
        &[
            (0, 0),
            (0, 1),
            (1, 0),
            (1, 1),
            (2, 1),
            (-1, -1),
            (2, 2),
            (-3, 5),
        ],
    );
    assert_eq!(ex.stats().gotos, 0, "{}", ex.c_code());
}
