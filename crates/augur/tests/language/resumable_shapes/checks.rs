//! Check runs through machines: a check run that goes around a cycle of
//! members ends there (nothing more can show), but one that enters a
//! machine again, or leaves it, still compares what follows.

use super::check_with;
use augur::{resumable, Builder, Dyn};
use std::cell::Cell;

/// A link at `if x > 0` joins two paths whose hidden `mode` (a `Cell`,
/// which tags cannot see) differs. The difference shows only on the
/// `else` side of `y > 50`, which the linking run's audit does not follow
/// (it takes first sides), and there only in the second turn of the dyn
/// loop around a machine (`turn`, which tags see, gives its turns a period
/// of two). The link's check run takes the other sides (it stays in the
/// loop), so it reaches that turn only by leaving the machine, entering
/// it again and jumping to the members it jumped to in the first turn:
/// had it ended there, the two paths would share the first one's code and
/// `acc * 3` would be lost.
#[augur::staged]
fn later_turn(x: Dyn<i64>, y: Dyn<i64>) -> Dyn<i64> {
    let mode = Cell::new(0u8);
    let turns = Cell::new(0u8);
    let mut turn = 0u8;
    let acc = Dyn::named("acc", y);
    if x.gt(0).is_true() {
        mode.set(1);
    }
    let t = Dyn::named("t", 0i64);
    if y.gt(50).is_true() {
        acc.set(acc + 1);
    } else {
        loop {
            if t.ge(4).is_true() {
                break;
            }
            resumable(0u8, |k| {
                acc.set(acc + i64::from(k) + 1);
                (k < 2).then_some(k + 1)
            });
            turn = (turn + 1) % 2;
            turns.set(turns.get() + 1);
            if mode.get() == 0 && turns.get() == 3 {
                acc.set(acc * 3);
            }
            t.set(t + 1);
        }
    }
    acc
}

fn later_turn_plain(x: i64, y: i64) -> i64 {
    if y > 50 {
        return y + 1;
    }
    let mut acc = y;
    for turn in 1..=4 {
        acc = acc.wrapping_add(6);
        if x <= 0 && turn == 3 {
            acc = acc.wrapping_mul(3);
        }
    }
    acc
}

#[test]
fn a_link_check_enters_a_machine_again_and_sees_a_later_turn() {
    let inputs = [(1, 0), (-1, 0), (5, 60), (-5, 60), (0, -7), (3, 7)];
    check_with(
        Builder::new(),
        "later_turn",
        |x: Dyn<i64>, y: Dyn<i64>| later_turn(x, y),
        &later_turn_plain,
        &inputs,
    );
}
