//! What C the structurer gives for jumps that no `if` nesting says: the
//! forward ones are guards on a `jump` variable, never a `goto` (gotos are
//! left only for loops entered in the middle).

use crate::common;

use augur::Dyn;
use common::{check, count};

/// The staged function of `forward_jumps_from_a_long_plain_loop_are_guards`
/// (fuzz seed 9980021677's shape): a plain flag set on a dyn branch in
/// each of `turns` turns of a plain loop, read after it, inside a dyn loop
/// (the attribute scopes the plain loop, so the dyn loop closes).
#[augur::staged]
fn flag_ladder(a: Dyn<i32>, b: Dyn<i32>, turns: u32) -> Dyn<i32> {
    let v0 = Dyn::new(0);
    let v3 = Dyn::new(0);
    let c = Dyn::new(0);
    while c.lt(b).is_true() {
        c.set(c + 1);
        let mut flag = 0;
        for _ in 0..turns {
            v0.set(a & ((b & 1000) ^ (a & v0)));
            if v0.eq(c - v0).is_true() {
                flag = 1;
            } else {
                v3.set(v3 + 2);
            }
            // What a turn does depends on the flag: the turns after the
            // first set are a second chain of code.
            v3.set(v3 * 3 + flag);
        }
        v3.set(v3 + flag * 7);
    }
    v3 + v0
}

/// What [`flag_ladder`] computes.
#[augur::staged]
fn flag_ladder_ref(a: i32, b: i32, turns: u32) -> i32 {
    let (mut v0, mut v3, mut c) = (0i32, 0i32, 0i32);
    while c < b {
        c += 1;
        let mut flag = 0;
        for _ in 0..turns {
            v0 = a & ((b & 1000) ^ (a & v0));
            if v0 == c.wrapping_sub(v0) {
                flag = 1;
            } else {
                v3 = v3.wrapping_add(2);
            }
            v3 = v3.wrapping_mul(3).wrapping_add(flag);
        }
        v3 = v3.wrapping_add(flag * 7);
    }
    v3.wrapping_add(v0)
}

/// Each turn of the plain loop that sets the flag jumps from the chain of
/// turns without it into the chain with it, at the next turn: forward
/// jumps no `if` nesting says. As `goto`s they made gcc -O2 run for over
/// half an hour at 62 turns (its jump threading is exponential in them);
/// they are guards on a `jump` variable now: no goto, compiled, run and
/// compared with plain Rust.
#[test]
#[augur::staged]
fn forward_jumps_from_a_long_plain_loop_are_guards() {
    const TURNS: u32 = 62;
    let inputs: Vec<(i32, i32)> = [(0, 0), (0, 3), (2, 4), (6, 9), (-1, 5), (7, 2), (1000, 8)]
        .into_iter()
        .collect();
    let ex = check(
        "flag_ladder",
        |a: Dyn<i32>, b: Dyn<i32>| flag_ladder(a, b, std::hint::black_box(TURNS)),
        |&mut (a, b): &mut (i32, i32)| flag_ladder_ref(a, b, TURNS),
        &inputs,
    );
    let code = ex.c_code();
    assert_eq!(ex.stats().gotos, 0, "{code}");
    // One guard resumes each chain entry.
    assert!(count(&code, "jump == 0") > TURNS as usize / 2, "{code}");
}
