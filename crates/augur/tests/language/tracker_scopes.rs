//! Where a tracked local's tracker ends under `#[augur::staged]`: at the end
//! of its block, before a `break` or `continue` that leaves the block, and,
//! for a `return`, a `?` or a caught panic, with the activation that owns
//! it. A tracker that outlived its local would keep its last value in every
//! tag: a dyn loop whose body binds one would never repeat a state, and
//! paths that differ only in a dead local would share no code.

use crate::common::Check;
use augur::Dyn;

const INPUTS: [(i32,); 6] = [(-5,), (0,), (1,), (7,), (12,), (30,)];

fn check() -> Check {
    Check::default()
}

/// A dyn loop whose body binds tracked locals and leaves by `continue`
/// before the body's end.
#[augur::staged]
fn skips(n: Dyn<i32>) -> Dyn<i32> {
    let acc = Dyn::new(0);
    let i = Dyn::new(0);
    while i.lt(n).is_true() {
        i.set(i + 1);
        let mut w = 1;
        if (i % 3).eq(0).is_true() {
            w += 1;
            let mut again = w;
            again += 1;
            if (i % 2).eq(0).is_true() {
                continue;
            }
            w = again;
        }
        acc.set(acc + i * w);
    }
    acc
}

fn skips_rust(n: i32) -> i32 {
    let (mut acc, mut i) = (0, 0);
    while i < n {
        i += 1;
        let mut w = 1;
        if i % 3 == 0 {
            w += 1;
            if i % 2 == 0 {
                continue;
            }
            w += 1;
        }
        acc += i * w;
    }
    acc
}

#[test]
fn a_continue_past_tracked_locals_leaves_the_loop_closable() {
    let ex = check().run("skips", skips, |a: &mut (i32,)| skips_rust(a.0), &INPUTS);
    assert!(ex.stats().back_edges >= 1, "{}", ex.c_code());
}

/// A dyn loop whose body holds a plain loop that leaves it by a labelled
/// `continue` and a `break`, past tracked locals of both bodies.
#[augur::staged]
fn labelled(n: Dyn<i32>) -> Dyn<i32> {
    let acc = Dyn::new(0);
    let i = Dyn::new(0);
    'turns: while i.lt(n).is_true() {
        i.set(i + 1);
        let mut k = 0;
        loop {
            let mut j = k;
            j += 1;
            k += 1;
            if k > 3 {
                break;
            }
            if (i % 4).eq(j).is_true() {
                acc.set(acc + j);
                continue 'turns;
            }
        }
        acc.set(acc + 100);
    }
    acc
}

fn labelled_rust(n: i32) -> i32 {
    let (mut acc, mut i) = (0, 0);
    'turns: while i < n {
        i += 1;
        for j in 1..=3 {
            if i % 4 == j {
                acc += j;
                continue 'turns;
            }
        }
        acc += 100;
    }
    acc
}

#[test]
fn a_labelled_continue_and_a_break_past_tracked_locals_leave_the_loop_closable() {
    let ex = check().run(
        "labelled",
        labelled,
        |a: &mut (i32,)| labelled_rust(a.0),
        &INPUTS,
    );
    assert!(ex.stats().back_edges >= 1, "{}", ex.c_code());
}

/// A `break` with a value computed from a tracked local of the block it
/// leaves (on the plain loop's second turn): the value is computed while
/// the local's tracker lives.
#[augur::staged]
fn broken(n: Dyn<i32>) -> Dyn<i32> {
    let acc = Dyn::new(0);
    let i = Dyn::new(0);
    while i.lt(n).is_true() {
        i.set(i + 1);
        let mut tries = 0;
        let found = loop {
            tries += 1;
            let mut m = 2;
            if (i % 5).eq(0).is_true() {
                m = 7;
            }
            if tries == 2 {
                break i * m;
            }
        };
        acc.set(acc + found);
    }
    acc
}

fn broken_rust(n: i32) -> i32 {
    (1..=n.max(0))
        .map(|i| if i % 5 == 0 { i * 7 } else { i * 2 })
        .sum()
}

#[test]
fn a_break_with_a_value_of_a_tracked_local_is_exact_and_closes() {
    let ex = check().run("broken", broken, |a: &mut (i32,)| broken_rust(a.0), &INPUTS);
    assert!(ex.stats().back_edges >= 1, "{}", ex.c_code());
}

/// Returns from inside nested blocks with tracked locals: the activation
/// ends them.
#[augur::staged]
fn weighed(x: Dyn<i32>) -> Dyn<i32> {
    let mut m = 2;
    if x.gt(5).is_true() {
        let mut k = 3;
        k += 1;
        if x.gt(10).is_true() {
            return x * k;
        }
        m = k + 1;
    }
    x * m
}

#[augur::staged]
fn weighed_sum(n: Dyn<i32>) -> Dyn<i32> {
    let acc = Dyn::new(0);
    let i = Dyn::new(0);
    while i.lt(n).is_true() {
        i.set(i + 1);
        acc.set(acc + weighed(i));
    }
    acc
}

fn weighed_sum_rust(n: i32) -> i32 {
    let w = |x: i32| match x {
        x if x > 10 => x * 4,
        x if x > 5 => x * 5,
        x => x * 2,
    };
    (1..=n.max(0)).map(w).sum()
}

#[test]
fn a_return_from_nested_blocks_ends_their_trackers() {
    let ex = check().run(
        "weighed",
        weighed_sum,
        |a: &mut (i32,)| weighed_sum_rust(a.0),
        &INPUTS,
    );
    assert!(ex.stats().back_edges >= 1, "{}", ex.c_code());
}

/// `?` in a closure an adapter calls, past a tracked local of the
/// closure's body: the closure's activation ends it.
#[augur::staged]
fn tried(n: Dyn<i32>) -> Dyn<i32> {
    let acc = Dyn::new(0);
    let i = Dyn::new(0);
    while i.lt(n).is_true() {
        i.set(i + 1);
        let r: Result<(), ()> = (1..4).try_for_each(|d| {
            let mut hit = false;
            if (i % d).eq(0).is_true() {
                hit = true;
            }
            hit.then_some(()).ok_or(())?;
            acc.set(acc + d);
            Ok(())
        });
        if r.is_err() {
            acc.set(acc + 1000);
        }
    }
    acc
}

fn tried_rust(n: i32) -> i32 {
    let mut acc = 0;
    for i in 1..=n.max(0) {
        let r: Result<(), ()> = (1..4).try_for_each(|d| {
            (i % d == 0).then_some(()).ok_or(())?;
            acc += d;
            Ok(())
        });
        if r.is_err() {
            acc += 1000;
        }
    }
    acc
}

#[test]
fn a_question_mark_in_a_closure_ends_its_trackers() {
    let ex = check().run("tried", tried, |a: &mut (i32,)| tried_rust(a.0), &INPUTS);
    assert!(ex.stats().back_edges >= 1, "{}", ex.c_code());
}

/// A tracked local shadowed in the same block: both trackers end with the
/// block.
#[augur::staged]
fn shadowed(n: Dyn<i32>) -> Dyn<i32> {
    let acc = Dyn::new(0);
    let i = Dyn::new(0);
    while i.lt(n).is_true() {
        i.set(i + 1);
        let mut s = 1;
        if (i % 2).eq(0).is_true() {
            s = 2;
        }
        let mut s = s * 10;
        if (i % 3).eq(0).is_true() {
            s += 1;
        }
        acc.set(acc + s);
    }
    acc
}

fn shadowed_rust(n: i32) -> i32 {
    (1..=n.max(0))
        .map(|i| (if i % 2 == 0 { 2 } else { 1 }) * 10 + i32::from(i % 3 == 0))
        .sum()
}

#[test]
fn a_tracked_local_shadowed_in_its_block_leaves_the_loop_closable() {
    let ex = check().run(
        "shadowed",
        shadowed,
        |a: &mut (i32,)| shadowed_rust(a.0),
        &INPUTS,
    );
    assert!(ex.stats().back_edges >= 1, "{}", ex.c_code());
}

/// A `move` closure changes its own copy of a tracked local: the local
/// outside keeps its value (and its tracker stays with it).
#[augur::staged]
fn copied(x: Dyn<i32>) -> Dyn<i32> {
    let mut n = 1;
    let mut bump = move |v: Dyn<i32>| {
        n += 10;
        v + n
    };
    let y = bump(x);
    let z = bump(y);
    if x.gt(0).is_true() {
        n += 1;
    }
    z + n
}

fn copied_rust(x: i32) -> i32 {
    let z = x + 11 + 21;
    z + if x > 0 { 2 } else { 1 }
}

#[test]
fn a_move_closure_changes_its_own_copy_of_a_tracked_local() {
    check().run("copied", copied, |a: &mut (i32,)| copied_rust(a.0), &INPUTS);
}

/// A block's tail that performs an operation (an operator on `Dyn`s is a
/// call) and then reads a tracked local of the block: the local's tracker
/// lives until the tail's value is computed, so the two paths do not share
/// the operation.
#[augur::staged]
fn tail_reads(x: Dyn<i32>) -> Dyn<i32> {
    let y = {
        let mut k = 1;
        if x.gt(0).is_true() {
            k = 2;
        }
        (x + 1) * k
    };
    y + 0
}

fn tail_reads_rust(x: i32) -> i32 {
    (x + 1) * if x > 0 { 2 } else { 1 }
}

#[test]
fn a_tail_that_operates_before_reading_a_tracked_local_is_exact() {
    // Links taken without a link check, so that equal tags alone decide.
    let unaudited = Check {
        builder: augur::Builder::new().link_audit_ops(0),
        ..Check::default()
    };
    unaudited.run(
        "tail_reads",
        tail_reads,
        |a: &mut (i32,)| tail_reads_rust(a.0),
        &INPUTS,
    );
}
