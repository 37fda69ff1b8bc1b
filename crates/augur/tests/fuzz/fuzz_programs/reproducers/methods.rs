//! Plain state changed through methods and adapters' closures (the shapes
//! `Mutate`, `Branch`, `Use`, `Machine` and `Adapter`): what the fuzzer
//! found open under `#[augur::staged]`, and the shapes that make a wrong
//! join show.

use super::check_ast;
use crate::common;
use crate::fuzz_programs::language::{
    Adapter, AdapterKind, Bound, ClosureForm, CmpOp, Cond, Decide, Expr, Init, Machine, Mutation,
    Program, Source, Stmt, VARS,
};
use crate::fuzz_programs::staged::Walk;
use augur::Dyn;

fn program(counters: usize, body: Stmt) -> Program {
    Program {
        inits: vec![Init::Zero; VARS],
        counters,
        body,
    }
}

/// The fuzzer's smallest program for the bug below (seed 1047, when its
/// shapes were generated only on request):
///
/// ```text
/// c0 = 0; phase = 0;
/// while (c0 < 1) { c0 = c0 + 1; bump(&mut phase, 3, 6); v2 = op(phase, v2); v3 = 0; }
/// ```
///
/// with the walk's step written as a `match` arm's tail expression
/// (`Machine::Counter(by, period) => bump(&mut phase, *by, *period),`).
fn machine_program(tail: bool) -> Program {
    program(
        1,
        Stmt::Machine {
            counter: VARS,
            bound: Bound::Const(1),
            machine: Machine::Counter(3, 6),
            var: 2,
            body: Box::new(Stmt::Assign(3, Expr::Const(0))),
            tail,
        },
    )
}

/// With `;` after the step, the machine's local is re-hashed and the dyn
/// loop closes over its states.
#[test]
#[augur::staged]
fn a_machine_stepped_by_a_statement_closes() {
    check_ast(&machine_program(false), Walk::Plain);
}

/// Was open: `#[augur::staged]` re-hashed a tracked local after a call
/// that may change it through a method or `&mut` only when the call was a
/// statement of its own (`x.push(1);`) or sat in a `let` or a condition. A
/// call that is the tail expression of a `match` arm or an `if` block
/// (`Ring => ring.rotate_left(1),`, `if c { v.push(1) }`), in a
/// `match`/`if` statement without `;`, got no update: the local changed
/// unseen, and a dyn loop stepping a machine that way never closed
/// (`Error::LoopNeverCloses`). Such a statement, and a loop body's or a
/// `()` closure body's tail, are now statements like any other, re-hashed
/// after; a closure's value tail re-hashes the captured locals it changes
/// before the call ends.
#[test]
#[augur::staged]
fn a_machine_stepped_by_a_tail_expression_closes() {
    check_ast(&machine_program(true), Walk::Plain);
}

#[augur::staged]
fn ring_in_tail_position(n: Dyn<i32>) -> Dyn<i32> {
    let x = Dyn::new(0);
    let c = Dyn::new(0);
    let mut ring = vec![1, 2, 3];
    let left = std::hint::black_box(true);
    while c.lt(n).is_true() {
        c.set(c + 1);
        match left {
            true => ring.rotate_left(1),
            false => ring.rotate_right(1),
        }
        x.set(x * 3 + ring[0]);
    }
    x
}

#[augur::staged]
fn ring_in_tail_position_ref(&mut (n,): &mut (i32,)) -> i32 {
    let mut ring = [1, 2, 3];
    let mut x = 0i32;
    for _ in 0..n.max(0) {
        ring.rotate_left(1);
        x = x.wrapping_mul(3).wrapping_add(ring[0]);
    }
    x
}

/// The same bug in plain staged Rust: a ring rotated in a `match` arm's
/// tail expression inside a dyn loop.
#[test]
#[augur::staged]
fn a_ring_rotated_in_a_match_arm_closes() {
    common::check(
        "ring_in_tail_position",
        ring_in_tail_position,
        ring_in_tail_position_ref,
        &[(0,), (1,), (2,), (3,), (7,), (-1,)],
    );
}

/// `while (c0 < 1) { c0 = c0 + 1; (0..2).for_each(f); }` with `f` a named
/// closure (`let each = |i| { c1 = i + 1; if (0 >= 0) v3 += i + 1; };`).
fn named_closure_program(form: ClosureForm) -> Program {
    program(
        2,
        Stmt::While {
            counter: VARS,
            bound: Bound::Const(1),
            body: Box::new(Stmt::Adapter(Box::new(Adapter {
                kind: AdapterKind::ForEach,
                form,
                k: 2,
                counter: VARS + 1,
                var: 3,
                body: Stmt::Block(vec![]),
                cond: Cond::Cmp(CmpOp::Ge, Expr::Const(0), Expr::Const(0)),
            }))),
        },
    )
}

/// The closure written in the call: its calls are counted, the dyn loop
/// closes.
#[test]
#[augur::staged]
fn an_inline_closure_in_a_dyn_loop_closes() {
    check_ast(&named_closure_program(ClosureForm::Inline), Walk::Plain);
}

/// Found by the fuzzer when a named closure's calls were not counted (and
/// a closure an unannotated helper called was not either): the engine found
/// the calls repeat with state it could not see and kept paths apart for
/// the rest of the run, so the dyn loop around them never closed
/// (`LoopNeverCloses`). Every closure now counts its calls.
#[test]
#[augur::staged]
fn a_named_closure_in_a_dyn_loop_closes() {
    check_ast(&named_closure_program(ClosureForm::Named), Walk::Plain);
}

/// A flag set through methods on one side of a dyn `if`, read only on one
/// combination of two later dyn decisions (`Decide::Nested`): a join of the
/// two paths would show only there, where neither the linking path nor the
/// check run that takes the other sides goes (with a `PlainState` hash that
/// left the set out, the fuzzer found wrong code on programs of this
/// shape); the tracked local keeps the paths apart.
#[test]
#[augur::staged]
fn a_set_changed_on_a_branch_decides_on_one_combination_of_later_sides() {
    let lt = |a: Expr, k: i32| Cond::Cmp(CmpOp::Lt, a, Expr::Const(k));
    let p = program(
        0,
        Stmt::Block(vec![
            Stmt::Branch(
                lt(Expr::Param(0), 0),
                Mutation::Mark(0),
                Mutation::Unmark(0),
                false,
            ),
            Stmt::Use(Source::Has(0), 0, Decide::Nested),
        ]),
    );
    check_ast(&p, Walk::Plain);
}

/// Found by the 100,000-program run from seed 9000000 (seed 9079527,
/// shrunk): under the attribute this dyn loop, whose body changes the
/// plain state on a dyn branch, stopped with `LoopNeverCloses` although
/// its state repeats after one turn on either side:
///
/// ```text
/// slot.replace(0);
/// c1 = 0;
/// while (c1 < 1) { c1 = c1 + 1; if (0 == 0) { map.insert(0, 0) } else { slot.take() } }
/// ```
///
/// The state's hash collided: FxHash takes a leading zero word for no
/// input, so `None` with `{0: 0}` (words 0, 1, 0, 0) hashed as `Some(0)`
/// with `{}` (1, 0, 0). The turn after the one that emptied the slot then
/// had the tag of the turn before the loop, its check found other code,
/// and the loop was taken for a plain one. Values are now hashed with
/// SipHash (`trace::tag::state_hash`).
#[test]
#[augur::staged]
fn a_slot_emptied_on_a_dyn_branch_in_a_dyn_loop_closes() {
    let zero = || Expr::Const(0);
    let p = program(
        3,
        Stmt::Block(vec![
            Stmt::Mutate(Mutation::Replace(0), false),
            Stmt::While {
                counter: VARS + 1,
                bound: Bound::Const(1),
                body: Box::new(Stmt::Branch(
                    Cond::Cmp(CmpOp::Eq, zero(), zero()),
                    Mutation::Insert(0, 0),
                    Mutation::Take,
                    true,
                )),
            },
        ]),
    );
    check_ast(&p, Walk::Plain);
}
