//! Gotos in the generated C: control flow from structured Rust that the
//! structurer used to emit with `goto`, now structured.

use super::check_ast;
use crate::common;
use crate::fuzz_programs::language::{BinOp, Bound, CmpOp, Cond, Expr, Init, Program, Stmt, VARS};
use crate::fuzz_programs::staged::Walk;
use augur::Dyn;

/// Found by this test (fixed since, at a482896): the simplest loop with an
/// early exit after an assignment,
/// `while (c < a) { c = c + 1; if (a >= 3) { x = 0; break; } }`, came out
/// with 2 gotos (`goto L3` out of the loop and over the assignment).
#[test]
#[augur::staged]
fn goto_break_after_assignment() {
    common::check(
        "assign_break",
        |a: Dyn<i32>| {
            let c = Dyn::new(0);
            let x = Dyn::new(5);
            while c.lt(a).is_true() {
                c.set(c + 1);
                if a.ge(3).is_true() {
                    x.set(0);
                    break;
                }
            }
            x + c
        },
        |&mut (a,): &mut (i32,)| {
            let (mut c, mut x) = (0, 5);
            while c < a {
                c += 1;
                if a >= 3 {
                    x = 0;
                    break;
                }
            }
            x + c
        },
        &[(0,), (1,), (2,), (3,), (5,), (-3,)],
    );
}

/// A `return` from a dyn loop on the `else` side of a dyn `if` (found by
/// this test: 1 goto, the loop's exit to the code after the `if` taken for
/// a jump out of it while the `return` was the loop's follow). Structured:
/// the loop `break`s out of the arm, the `return` is emitted in place.
#[test]
#[augur::staged]
fn return_from_a_loop_in_an_else_arm_is_structured() {
    common::check(
        "ret_loop_else",
        |a: Dyn<i32>| {
            let c = Dyn::new(0);
            let x = Dyn::new(0);
            if a.ge(0).is_true() {
                x.set(1);
            } else {
                while c.lt(1).is_true() {
                    c.set(c + 1);
                    if a.le(-5).is_true() {
                        x.set(2);
                    } else {
                        return Dyn::lit(9);
                    }
                }
            }
            x + c
        },
        |&mut (a,): &mut (i32,)| match a {
            0.. => 1,
            ..=-5 => 3,
            _ => 9,
        },
        &[(0,), (1,), (-1,), (-5,), (-9,)],
    );
}

/// `return` from the inner of two nested dyn loops, in the `else` branch
/// of a dyn `if` (found by this test: 1 goto).
#[test]
// The inner loop returns in its first turn: that is the fuzz test's shrunk
// program, and the shape the structurer gets wrong.
#[allow(clippy::never_loop)]
#[augur::staged]
fn return_from_nested_loops_in_an_else_arm_is_structured() {
    common::check(
        "ret_nested_else",
        |a: Dyn<i32>| {
            let x = Dyn::new(0);
            let i = Dyn::new(0);
            let j = Dyn::new(0);
            if a.ne(0).is_true() {
                x.set(1);
            } else {
                while i.lt(1).is_true() {
                    i.set(i + 1);
                    while j.lt(1).is_true() {
                        j.set(j + 1);
                        return Dyn::lit(7);
                    }
                }
            }
            x + i + j
        },
        |&mut (a,): &mut (i32,)| if a != 0 { 1 } else { 7 },
        &[(0,), (1,), (-1,), (5,), (i32::MIN,)],
    );
}

/// Found by this test (fixed since, at a482896): two unrolled `if`s whose
/// `else` returns, inside a dyn `if`, gave 1 goto.
#[test]
#[augur::staged]
fn goto_return_in_unrolled_ifs() {
    common::check(
        "ret_unrolled",
        |a: Dyn<i32>| {
            let x = Dyn::new(0);
            let y = Dyn::new(100);
            if a.ge(0).is_true() {
                for _ in augur::range(0..2) {
                    if a.le(5).is_true() {
                        x.set(x + 1);
                    } else {
                        return y;
                    }
                }
            }
            x + y
        },
        |&mut (a,): &mut (i32,)| match a {
            ..=-1 => 100,
            0..=5 => 102,
            _ => 100,
        },
        &[(0,), (1,), (-1,), (5,), (6,)],
    );
}

/// Found by this test (seed 9100010556): a join block that computes its
/// condition into temporaries, reached from a `break`'s `else` side and
/// from the other arm, with the loop's exit after it:
///
/// ```text
/// while (c1 < 1) {
///   c1 = c1 + 1;
///   if (0 < 0) { v3 = 0; } else { if (0 >= 0) { break; } }
///   if (0 <= 0) { break; } else { break; }
/// }
/// ```
///
/// gave 1 goto: node splitting refused blocks that declare temporaries.
/// Copies now get their own temporaries.
#[test]
#[augur::staged]
fn join_with_temporaries_after_a_break_is_split() {
    let p = Program {
        inits: vec![Init::Zero; VARS],
        counters: 2,
        body: Stmt::While {
            counter: VARS + 1,
            bound: Bound::Const(1),
            body: Box::new(Stmt::Block(vec![
                Stmt::If(
                    Cond::Cmp(CmpOp::Lt, Expr::Const(0), Expr::Const(0)),
                    Box::new(Stmt::Assign(3, Expr::Const(0))),
                    Box::new(Stmt::If(
                        Cond::Cmp(CmpOp::Ge, Expr::Const(0), Expr::Const(0)),
                        Box::new(Stmt::Break),
                        Box::new(Stmt::Block(vec![])),
                    )),
                ),
                Stmt::If(
                    Cond::Cmp(CmpOp::Le, Expr::Const(0), Expr::Const(0)),
                    Box::new(Stmt::Break),
                    Box::new(Stmt::Break),
                ),
            ])),
        },
    };
    check_ast(&p, Walk::Trusted);
    check_ast(&p, Walk::Plain);
}

/// Found by this test (seed 9200028829): two dyn loops that `return` in
/// their first turn share one `return` node (returns are shared by value),
/// and the next `if` joins both arms of the first:
///
/// ```text
/// if (0 > 0) { static_repeat 2 { c0 = 0; while (c0 < 1) { c0 = c0 + 1; return c0; } } }
/// if (0 > 0) { c1 = 0; while (c1 < 1) { c1 = c1 + 1; v3 = 0; } }
/// v2 = ((0 | 0) & 0);
/// ```
///
/// Copying the shared `return` removes the goto; copying the join as well
/// (one round of node splitting took every candidate) gave 2. Splitting
/// now keeps a copy only where it removes gotos.
#[test]
#[augur::staged]
fn splitting_keeps_only_copies_that_remove_gotos() {
    let when_zero_gt_zero = || Cond::Cmp(CmpOp::Gt, Expr::Const(0), Expr::Const(0));
    let p = Program {
        inits: vec![Init::Zero; VARS],
        counters: 2,
        body: Stmt::Block(vec![
            Stmt::If(
                when_zero_gt_zero(),
                Box::new(Stmt::StaticRepeat(
                    2,
                    Box::new(Stmt::While {
                        counter: VARS,
                        bound: Bound::Const(1),
                        body: Box::new(Stmt::Return(Expr::Var(VARS))),
                    }),
                )),
                Box::new(Stmt::Block(vec![])),
            ),
            Stmt::If(
                when_zero_gt_zero(),
                Box::new(Stmt::While {
                    counter: VARS + 1,
                    bound: Bound::Const(1),
                    body: Box::new(Stmt::Assign(3, Expr::Const(0))),
                }),
                Box::new(Stmt::Block(vec![])),
            ),
            Stmt::Assign(
                2,
                Expr::Bin(
                    BinOp::And,
                    Box::new(Expr::Bin(
                        BinOp::Or,
                        Box::new(Expr::Const(0)),
                        Box::new(Expr::Const(0)),
                    )),
                    Box::new(Expr::Const(0)),
                ),
            ),
        ]),
    };
    check_ast(&p, Walk::Trusted);
    check_ast(&p, Walk::Plain);
}

/// Found by this test (seed 9300011012, and fixed at once): a plain loop
/// of 9 turns whose `continue` skips the turn's last statement. Copying
/// that statement into each branch structures the jump; copying the next
/// turn too (allowed since copies get their own temporaries) left 9
/// gotos. Node splitting now tries the joins in between first.
#[test]
#[augur::staged]
fn continue_over_a_turns_last_statement_is_split() {
    let p = Program {
        inits: vec![Init::Zero; VARS],
        counters: 0,
        body: Stmt::PlainLoop(
            9,
            Box::new(Stmt::Block(vec![
                Stmt::If(
                    Cond::Cmp(CmpOp::Gt, Expr::Const(0), Expr::Const(0)),
                    Box::new(Stmt::Assign(3, Expr::Const(0))),
                    Box::new(Stmt::If(
                        Cond::Cmp(CmpOp::Ne, Expr::Const(0), Expr::Const(0)),
                        Box::new(Stmt::Continue),
                        Box::new(Stmt::Block(vec![])),
                    )),
                ),
                Stmt::Assign(1, Expr::Const(0)),
            ])),
        ),
    };
    check_ast(&p, Walk::Plain);
}

/// Found by this test (seed 9300087909): a dyn loop with two `return`s of
/// the same value (one shared return node) and an exit to the code after
/// an enclosing `if`. The shared return was taken for the loop's follow
/// and the exit became a goto; a short returning tail is now copied to
/// each of its edges, and the follow is the join.
#[test]
#[augur::staged]
fn shared_return_in_a_loop_is_not_its_follow() {
    let p = Program {
        inits: vec![Init::Zero; VARS],
        counters: 5,
        body: Stmt::If(
            Cond::Cmp(CmpOp::Le, Expr::Const(0), Expr::Const(0)),
            Box::new(Stmt::While {
                counter: VARS + 1,
                bound: Bound::Const(1),
                body: Box::new(Stmt::Block(vec![
                    Stmt::If(
                        Cond::Cmp(CmpOp::Ne, Expr::Const(0), Expr::Const(0)),
                        Box::new(Stmt::Return(Expr::Var(0))),
                        Box::new(Stmt::Assign(0, Expr::Const(0))),
                    ),
                    Stmt::If(
                        Cond::Cmp(CmpOp::Le, Expr::Const(0), Expr::Const(0)),
                        Box::new(Stmt::Return(Expr::Var(0))),
                        Box::new(Stmt::Block(vec![])),
                    ),
                ])),
            }),
            Box::new(Stmt::Assign(2, Expr::Const(0))),
        ),
    };
    check_ast(&p, Walk::Trusted);
    check_ast(&p, Walk::Plain);
}

/// Found by this test (seed 9300051941): a plain loop of 17 turns (under
/// `#[augur::staged]`, unrolled) whose `break` in a nested `if` skips the
/// remaining turns, too long to copy: 16 gotos. A forward jump is now a
/// `break` out of a one-turn loop around the code it skips.
#[test]
fn break_out_of_an_unrolled_plain_loop_is_a_break() {
    let p = Program {
        inits: vec![Init::Zero; VARS],
        counters: 2,
        body: Stmt::PlainLoop(
            17,
            Box::new(Stmt::If(
                Cond::Cmp(CmpOp::Gt, Expr::Const(0), Expr::Const(0)),
                Box::new(Stmt::If(
                    Cond::Cmp(CmpOp::Le, Expr::Const(0), Expr::Const(0)),
                    Box::new(Stmt::Assign(2, Expr::Const(0))),
                    Box::new(Stmt::Break),
                )),
                Box::new(Stmt::Block(vec![])),
            )),
        ),
    };
    check_ast(&p, Walk::Plain);
}

/// Found by this test (seeds 9700039431 and 9700068351): a plain loop whose
/// turns both `continue` (skipping the rest of the turn) and `break`
/// (skipping every later turn), with the program's long tail after it. The
/// `continue`s became `break`s out of one-turn loops around each turn's
/// rest, which then held the `break`s' gotos: 9 gotos. Those now set a flag
/// and leave, each inner loop followed by `if (flag) break;`.
#[test]
#[augur::staged]
fn continue_and_break_in_an_unrolled_plain_loop_are_breaks() {
    let p = Program {
        inits: vec![Init::Zero; VARS],
        counters: 0,
        body: Stmt::PlainLoop(
            9,
            Box::new(Stmt::Block(vec![
                Stmt::If(
                    Cond::Cmp(CmpOp::Lt, Expr::Const(0), Expr::Const(0)),
                    Box::new(Stmt::If(
                        Cond::Cmp(CmpOp::Eq, Expr::Const(0), Expr::Const(0)),
                        Box::new(Stmt::Continue),
                        Box::new(Stmt::Block(vec![])),
                    )),
                    Box::new(Stmt::Assign(2, Expr::Const(0))),
                ),
                Stmt::If(
                    Cond::Cmp(CmpOp::Ne, Expr::Const(0), Expr::Const(0)),
                    Box::new(Stmt::Break),
                    Box::new(Stmt::Block(vec![])),
                ),
            ])),
        ),
    };
    check_ast(&p, Walk::Plain);
}

/// Found by this test (seed 9996063496, 100k run at d4a9c4c): a plain loop
/// of 89 turns whose turns clear a plain value on a dyn branch, after a dyn
/// loop. Forward breaks nested one one-turn loop per turn, each jump leaving
/// the ones around it by flags (89 deep); gcc -O2 did not compile the C
/// within the suite's minute. Such jumps are guards now.
#[test]
#[augur::staged]
fn a_ladder_of_jumps_out_of_a_long_plain_loop_compiles() {
    use BinOp::{Add, And, Mul, Or, Sub, Xor};
    let bin = |op, a, b| Expr::Bin(op, Box::new(a), Box::new(b));
    let cmp = |op, a, b| Box::new(Cond::Cmp(op, a, b));
    let skip = || Box::new(Stmt::Block(vec![]));
    let (v, a, b, k) = (Expr::Var, Expr::Param(0), Expr::Param(1), Expr::Const);
    let turn = vec![
        Stmt::Assign(0, bin(Sub, v(2), v(3))),
        Stmt::If(
            Cond::Cmp(CmpOp::Eq, k(8), a.clone()),
            Box::new(Stmt::If(
                Cond::Cmp(
                    CmpOp::Gt,
                    bin(And, v(3), bin(Xor, k(7), k(3))),
                    bin(Add, v(0), v(0)),
                ),
                Box::new(Stmt::Assign(2, v(2))),
                skip(),
            )),
            skip(),
        ),
        Stmt::If(
            Cond::And(
                cmp(CmpOp::Ge, k(5), bin(And, k(-4), b.clone())),
                cmp(
                    CmpOp::Ge,
                    bin(Or, b.clone(), k(3)),
                    bin(Or, v(2), a.clone()),
                ),
            ),
            Box::new(Stmt::SetPlain(0)),
            skip(),
        ),
        Stmt::Assign(
            2,
            bin(
                Add,
                bin(Sub, bin(And, a.clone(), b.clone()), bin(And, v(3), v(2))),
                bin(Add, k(1), bin(Add, v(0), v(2))),
            ),
        ),
    ];
    let p = Program {
        inits: vec![Init::Zero, Init::Const(7), Init::Param(0), Init::Zero],
        counters: 1,
        body: Stmt::Block(vec![
            Stmt::UsePlain(0),
            Stmt::If(
                Cond::And(
                    cmp(CmpOp::Le, bin(Mul, k(0), bin(Mul, v(2), v(2))), v(3)),
                    cmp(
                        CmpOp::Gt,
                        bin(Sub, bin(Xor, v(0), v(1)), bin(Xor, k(1), v(2))),
                        bin(Sub, v(0), k(1000)),
                    ),
                ),
                Box::new(Stmt::Assign(2, b.clone())),
                skip(),
            ),
            Stmt::SetPlain(3),
            Stmt::While {
                counter: VARS,
                bound: Bound::Param(0),
                body: Box::new(Stmt::Block(vec![Stmt::UsePlain(1)])),
            },
            Stmt::PlainLoop(89, Box::new(Stmt::Block(turn))),
            Stmt::Assign(2, v(0)),
        ]),
    };
    check_ast(&p, Walk::Plain);
}
