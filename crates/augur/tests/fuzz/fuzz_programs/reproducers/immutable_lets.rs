//! Immutable `let`s of plain values a dyn decision chose (the shape
//! `Hidden`), not through `let x = if ..`/`match ..` syntax: the attribute
//! tracks `let mut` locals and `let x = if ..`, but not these, so two paths
//! that chose differently were joined at the next dyn operation, and the
//! code the first path staged was used for both. Each test below binds
//! two such values and reads them later, on one combination of the
//! decisions only (under a later dyn `if`), where neither the path that
//! links nor the check run that takes the other sides goes.
//!
//! Each but the last gave wrong code until such `let`s were tracked (a
//! decision counter read around the initialiser, `Tracked::bound`; see
//! `docs/extraction.md`, "Exactness").

// The nested `if`s are the point: the plain test under the dyn one.
#![allow(clippy::collapsible_if)]

use super::check_ast;
use crate::common;
use crate::fuzz_programs::language::{
    Bind, Bound, CmpOp, Cond, Decide, Expr, Hidden, Init, Program, Read, Stmt, VARS,
};
use crate::fuzz_programs::staged::Walk;
use augur::Dyn;

/// `(a, b, c)` inputs: every combination of the three signs, and `a < b`.
const INPUTS: &[(i32, i32, i32)] = &[
    (-1, -1, 1),
    (-1, 2, 3),
    (1, -1, 1),
    (-1, 1, 1),
    (1, 1, 1),
    (-1, -1, -1),
    (1, -1, -1),
    (-1, 1, -1),
    (1, 1, -1),
    (0, 0, 0),
];

/// `1` or `2` by `b`: a plain value chosen through a call.
#[augur::staged]
fn pick(b: bool) -> i32 {
    if b {
        1
    } else {
        2
    }
}

/// What each program below computes: `c + 100` where `c > 0` and the
/// first decision held and the second did not, else `c`.
fn one_combination(&mut (a, b, c): &mut (i32, i32, i32)) -> i32 {
    if c > 0 && a > 0 && b <= 0 {
        c + 100
    } else {
        c
    }
}

/// `let k = pick(..)`: the value comes back from a call.
#[augur::staged]
fn hidden_pair(a: Dyn<i32>, b: Dyn<i32>, c: Dyn<i32>) -> Dyn<i32> {
    let k = pick(a.gt(0).is_true());
    let m = pick(b.gt(0).is_true());
    let r = Dyn::new(c);
    if c.gt(0).is_true() {
        if k * 10 + m == 12 {
            r.set(r + 100);
        }
    }
    r
}

/// Found by the fuzzer's `Hidden` statements (`Bind::Call`): for
/// `(a, b, c) = (-1, -1, 1)`, C gave 101 where Rust gives 1.
#[test]
fn a_value_returned_by_a_call_keeps_paths_apart() {
    common::check("hidden_pair", hidden_pair, one_combination, INPUTS);
}

/// `let k = a.gt(0).is_true();`: a `bool` bound straight from the decision.
#[augur::staged]
fn hidden_bools(a: Dyn<i32>, b: Dyn<i32>, c: Dyn<i32>) -> Dyn<i32> {
    let k = a.gt(0).is_true();
    let m = b.gt(0).is_true();
    let r = Dyn::new(c);
    if c.gt(0).is_true() {
        if k && !m {
            r.set(r + 100);
        }
    }
    r
}

#[test]
fn a_bool_bound_from_is_true_keeps_paths_apart() {
    common::check("hidden_bools", hidden_bools, one_combination, INPUTS);
}

/// `(1, 2)` or `(2, 1)` by `b`.
fn pair(b: bool) -> (i32, i32) {
    if b {
        (1, 2)
    } else {
        (2, 1)
    }
}

/// `let (p, q) = pair(..)`: a tuple pattern.
#[augur::staged]
fn hidden_tuples(a: Dyn<i32>, b: Dyn<i32>, c: Dyn<i32>) -> Dyn<i32> {
    let (p, q) = pair(a.gt(0).is_true());
    let (s, t) = pair(b.gt(0).is_true());
    let r = Dyn::new(c);
    if c.gt(0).is_true() {
        if p * 10 + t == 11 && q * 10 + s == 22 {
            r.set(r + 100);
        }
    }
    r
}

#[test]
fn a_tuple_pattern_keeps_paths_apart() {
    common::check("hidden_tuples", hidden_tuples, one_combination, INPUTS);
}

/// `let k = s * 2; s = 0;`: derived from a tracked `let mut` local that is
/// then reset, so the local no longer tells the paths apart.
#[augur::staged]
fn hidden_resets(a: Dyn<i32>, b: Dyn<i32>, c: Dyn<i32>) -> Dyn<i32> {
    let mut s = 0;
    if a.gt(0).is_true() {
        s = 1;
    }
    let k = s * 2;
    s = 0;
    if b.gt(0).is_true() {
        s = 1;
    }
    let m = s * 2;
    s = 0;
    let r = Dyn::new(c);
    if c.gt(0).is_true() {
        if k * 10 + m + s == 20 {
            r.set(r + 100);
        }
    }
    r
}

#[test]
fn a_value_derived_from_a_reset_local_keeps_paths_apart() {
    common::check("hidden_resets", hidden_resets, one_combination, INPUTS);
}

/// `let p = o.take();`: the tracked `Option` is emptied as the value
/// moves out.
#[augur::staged]
fn hidden_takes(a: Dyn<i32>, b: Dyn<i32>, c: Dyn<i32>) -> Dyn<i32> {
    let mut o = None;
    if a.gt(0).is_true() {
        o = Some(1);
    }
    let p = o.take();
    if b.gt(0).is_true() {
        o = Some(2);
    }
    let q = o.take();
    let r = Dyn::new(c);
    if c.gt(0).is_true() {
        if p == Some(1) && q.is_none() {
            r.set(r + 100);
        }
    }
    r
}

#[test]
fn a_value_taken_from_a_tracked_option_keeps_paths_apart() {
    common::check("hidden_takes", hidden_takes, one_combination, INPUTS);
}

/// `2.0` or `0.5` by `b`: a value that is not `Hash`.
fn weight(b: bool) -> f64 {
    if b {
        2.0
    } else {
        0.5
    }
}

/// `let w = weight(..)`, compared (`w > 1.5`).
#[augur::staged]
fn hidden_weights(a: Dyn<i32>, b: Dyn<i32>, c: Dyn<i32>) -> Dyn<i32> {
    let w = weight(a.gt(0).is_true());
    let u = weight(b.gt(0).is_true());
    let r = Dyn::new(c);
    if c.gt(0).is_true() {
        if w > 1.5 && u < 1.5 {
            r.set(r + 100);
        }
    }
    r
}

#[test]
fn an_f64_compared_keeps_paths_apart() {
    common::check("hidden_weights", hidden_weights, one_combination, INPUTS);
}

/// `let w = weight(..)`, turned into a literal (`Dyn::lit(w as i32)`):
/// exact already, even read on one combination of later decisions, since
/// the literal is an operand of the staged code, which the engine compares
/// where it links paths. What goes wrong is a plain decision on the value
/// (above).
#[augur::staged]
fn hidden_weight_literals(a: Dyn<i32>, b: Dyn<i32>, c: Dyn<i32>) -> Dyn<i32> {
    let w = weight(a.gt(0).is_true());
    let u = weight(b.gt(0).is_true());
    let r = Dyn::new(c);
    if c.gt(0).is_true() {
        if a.lt(b).is_true() {
            r.set(r * Dyn::lit((w * 10.0 + u * 2.0) as i32));
        }
    }
    r
}

#[test]
fn an_f64_turned_into_a_literal_keeps_paths_apart() {
    common::check(
        "hidden_weight_literals",
        hidden_weight_literals,
        |&mut (a, b, c): &mut (i32, i32, i32)| {
            let w = if a > 0 { 2.0 } else { 0.5 };
            let u = if b > 0 { 2.0 } else { 0.5 };
            if c > 0 && a < b {
                c * (w * 10.0 + u * 2.0) as i32
            } else {
                c
            }
        },
        INPUTS,
    );
}

/// `{ let k = c.is_true(); v2 = 0; decide_nested(v0, k); }` (`Hidden`):
/// the fuzzer's smallest programs for the bug.
fn hidden_program(counters: usize, first: Bind, between: Stmt) -> Program {
    Program {
        inits: vec![Init::Zero; VARS],
        counters,
        body: Stmt::Hidden(Box::new(Hidden {
            first,
            between,
            second: None,
            after: Stmt::Block(vec![]),
            var: 0,
            read: Read::Decide(Decide::Nested),
        })),
    }
}

/// Seed 357 (`AUGUR_FUZZ_SEED=123`, shrunk from 25 statements):
///
/// ```text
/// { let k = (a == 0).is_true(); v2 = 0; decide_nested(v0, k); }
/// ```
///
/// wrong for `(a, b) = (-4, 5)` (with no loop counters, as here, the
/// interpreter gives 15670066 where the reference gives 15699857).
#[test]
fn a_bool_read_on_one_combination_of_later_decisions_is_exact() {
    let a_is_0 = Cond::Cmp(CmpOp::Eq, Expr::Param(0), Expr::Const(0));
    let p = hidden_program(0, Bind::Bool(a_is_0), Stmt::Assign(2, Expr::Const(0)));
    check_ast(&p, Walk::Plain);
}

/// Seed 256 (shrunk from 25 statements): the same in a dyn loop, with a
/// value returned by a plain helper,
///
/// ```text
/// c0 = 0;
/// while (c0 < 1) {
///   c0 = c0 + 1;
///   { let k = choose(0 >= 0, -1, 2); v0 = 0; decide_nested(v0, k); }
/// }
/// ```
///
/// never closed: extraction stopped at the operation limit (100,000, in
/// the fuzz run; `Error::LoopNeverCloses` here), saying a plain value
/// changes between the loop's turns.
#[test]
fn a_value_returned_by_a_call_in_a_dyn_loop_closes() {
    let always = Cond::Cmp(CmpOp::Ge, Expr::Const(0), Expr::Const(0));
    let Program { body, .. } = hidden_program(
        0,
        Bind::Call(always, -1, 2, false),
        Stmt::Assign(0, Expr::Const(0)),
    );
    let p = Program {
        inits: vec![Init::Zero; VARS],
        counters: 1,
        body: Stmt::While {
            counter: VARS,
            bound: Bound::Const(1),
            body: Box::new(body),
        },
    };
    check_ast(&p, Walk::Plain);
}
