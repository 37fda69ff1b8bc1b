//! Plain values a dyn decision chose that reach later code other than
//! through an immutable `let` in a frame that is still live (the `Hidden`
//! bindings `Bind::Pass`, `Bind::Struct` and `Bind::MutStruct`): passed
//! straight as an argument or as the receiver of an annotated helper that
//! walks what follows, bound by a `match`, `if let` or `while let` arm, a
//! struct that is not `Hash` chosen inside an annotated callee and bound
//! without a type, or a `let mut` struct that is not `Hash` changed on a
//! dyn branch. The attribute tracked none of them (`docs/extraction.md`,
//! "Exactness"), so two paths that chose differently were joined at the
//! next dyn operation, and the code the first path staged was used for
//! both. Now a value handed to a call or matched is held while the call or
//! the construct runs (`__private::arg`, `__private::scrutinee`), a value
//! of a non-`Hash` type a callee chose is stood for by the sides its code
//! took, and a changed non-`Hash` `let mut` lets no code be shared while
//! it lives.
//!
//! Each program below is the fuzzer's smallest for its form (found with
//! `AUGUR_FUZZ_SEED=123 AUGUR_FUZZ_CASES=3000`, the kind restricted by
//! `AUGUR_FUZZ_BINDS` where a seed names one; reproduced by
//! `AUGUR_FUZZ_SEED=<seed> AUGUR_FUZZ_CASES=1` with the same kinds). Each
//! reads the value under `decide_nested`, on one combination of two later
//! dyn decisions only, where neither the path that links nor the check run
//! that takes the other sides goes. They gave wrong code before; the twin
//! of each (the value bound by `let k: i32` first and handed on the same
//! way, or a `Hash` struct), exact before too, is checked beside it.

use super::check_ast;
use crate::fuzz_programs::check::{check_program, documented_limit};
use crate::fuzz_programs::language::{
    Bind, CmpOp, Cond, Decide, Expr, Hidden, Init, Pass, Program, Read, Stmt, VARS,
};
use crate::fuzz_programs::staged::Walk;

fn program(counters: usize, body: Stmt) -> Program {
    Program {
        inits: vec![Init::Zero; VARS],
        counters,
        body,
    }
}

/// `{ first; v<var> = 0; decide_nested(v<var>, k); }`: the shape the
/// shrinker ends at (as in `immutable_lets.rs`), with a statement after the
/// read in some.
fn hidden(first: Bind, var: usize, after: Stmt) -> Stmt {
    Stmt::Hidden(Box::new(Hidden {
        first,
        between: Stmt::Assign(var, Expr::Const(0)),
        second: None,
        after,
        var,
        read: Read::Decide(Decide::Nested),
    }))
}

fn cmp(op: CmpOp, a: Expr, b: Expr) -> Cond {
    Cond::Cmp(op, a, b)
}

/// Seed 1010 (`AUGUR_FUZZ_BINDS=argument`, shrunk from 24 statements):
///
/// ```text
/// {
///   carry(pick(0 < 0, -3, -2), ..);  // k: the annotated helper's parameter
///   v0 = b;
///   carry(pick(v0 >= 0, 0, -3), ..);  // m: the annotated helper's parameter
///   if (0 != 4) { if (k * 10 + m == -23) v0 = v0 + 100; }
/// }
/// ```
///
/// wrong for `(a, b) = (1, -1)`: the interpreter gives 15670066 where the
/// reference gives 18649166.
fn arguments(typed: bool) -> Program {
    let k = Bind::Pass(
        cmp(CmpOp::Lt, Expr::Const(0), Expr::Const(0)),
        -3,
        -2,
        Pass::Argument,
        typed,
    );
    let m = Bind::Pass(
        cmp(CmpOp::Ge, Expr::Var(0), Expr::Const(0)),
        0,
        -3,
        Pass::Argument,
        typed,
    );
    let body = Stmt::Hidden(Box::new(Hidden {
        first: k,
        between: Stmt::Assign(0, Expr::Param(1)),
        second: Some(m),
        after: Stmt::Block(vec![]),
        var: 0,
        read: Read::Guarded(cmp(CmpOp::Ne, Expr::Const(0), Expr::Const(4)), -23),
    }));
    program(0, body)
}

#[test]
fn a_value_passed_straight_as_an_argument_is_exact() {
    check_ast(&arguments(false), Walk::Plain);
}

#[test]
fn a_value_bound_by_a_typed_let_then_passed_as_an_argument_is_exact() {
    check_ast(&arguments(true), Walk::Plain);
}

/// Seed 160 (the default mix, shrunk from 23 statements):
///
/// ```text
/// {
///   Key::pick(0 <= a, -1, 0).carry(..);  // k: self.0 in the annotated method
///   v0 = 0;
///   decide_nested(v0, k);
/// }
/// ```
///
/// wrong for `(a, b) = (-4, 5)`: the interpreter gives 483001483 where the
/// reference gives 486695567.
fn receivers(typed: bool) -> Program {
    let c = cmp(CmpOp::Le, Expr::Const(0), Expr::Param(0));
    let k = Bind::Pass(c, -1, 0, Pass::Receiver, typed);
    program(1, hidden(k, 0, Stmt::Block(vec![])))
}

#[test]
fn a_value_passed_as_a_receiver_is_exact() {
    check_ast(&receivers(false), Walk::Plain);
}

#[test]
fn a_value_bound_by_a_typed_let_then_passed_as_a_receiver_is_exact() {
    check_ast(&receivers(true), Walk::Plain);
}

/// Seed 1057 (`AUGUR_FUZZ_BINDS=arm`, shrunk from 20 statements; the
/// shrinker makes its `if let` a `match`):
///
/// ```text
/// {
///   match pick(0 < 0, -3, -2) { k => .. }  // the rest in the arm
///   v2 = 0;
///   v2 = 0;
///   decide_nested(v2, k);
/// }
/// ```
///
/// wrong for `(a, b) = (-4, 5)`: the interpreter gives 486692684 where the
/// reference gives 486697489; with `if let Some(k) = Some(pick(..))` and
/// `while let` as well.
fn arms(how: Pass, typed: bool) -> Program {
    let c = cmp(CmpOp::Lt, Expr::Const(0), Expr::Const(0));
    let k = Bind::Pass(c, -3, -2, how, typed);
    program(1, hidden(k, 2, Stmt::Assign(2, Expr::Const(0))))
}

#[test]
fn a_value_bound_by_a_match_arm_is_exact() {
    check_ast(&arms(Pass::Match, false), Walk::Plain);
}

/// The same with the value a field of a call's value (`match
/// picked(pick(..)).k { k => .. }`): the arm's binding was not held,
/// and the join after the call was shared (the attribute held only a
/// scrutinee that was itself a call).
#[test]
fn a_value_bound_by_a_match_on_a_field_of_a_call_is_exact() {
    check_ast(&arms(Pass::Field, false), Walk::Plain);
}

#[test]
fn a_value_bound_by_if_let_is_exact() {
    check_ast(&arms(Pass::IfLet, false), Walk::Plain);
}

#[test]
fn a_value_bound_by_while_let_is_exact() {
    check_ast(&arms(Pass::WhileLet, false), Walk::Plain);
}

#[test]
fn a_value_bound_by_a_typed_let_then_by_arms_is_exact() {
    for how in [Pass::Match, Pass::Field, Pass::IfLet, Pass::WhileLet] {
        check_ast(&arms(how, true), Walk::Plain);
    }
}

/// Seed 1013 (`AUGUR_FUZZ_BINDS=struct`, shrunk from 22 statements):
///
/// ```text
/// {
///   let kw = choose_w(0 > 0, 1, -1);  // W(f64), not Hash, chosen inside; k = kw.0 as i32
///   v2 = 0;
///   decide_branch(v0, k);
/// }
/// {
///   let kw = choose_w(v0 <= 0, 2, -2);  // W(f64), not Hash, chosen inside; k = kw.0 as i32
///   v3 = 0;
///   decide_nested(v0, k);
/// }
/// ```
///
/// wrong for `(a, b) = (-4, 5)`: the interpreter gives -1806015097 where
/// the reference gives -1977790003.
fn structs(hash: bool) -> Program {
    let first = Stmt::Hidden(Box::new(Hidden {
        first: Bind::Struct(cmp(CmpOp::Gt, Expr::Const(0), Expr::Const(0)), 1, -1, hash),
        between: Stmt::Assign(2, Expr::Const(0)),
        second: None,
        after: Stmt::Block(vec![]),
        var: 0,
        read: Read::Decide(Decide::Branch),
    }));
    let second = Stmt::Hidden(Box::new(Hidden {
        first: Bind::Struct(cmp(CmpOp::Le, Expr::Var(0), Expr::Const(0)), 2, -2, hash),
        between: Stmt::Assign(3, Expr::Const(0)),
        second: None,
        after: Stmt::Block(vec![]),
        var: 0,
        read: Read::Decide(Decide::Nested),
    }));
    program(2, Stmt::Block(vec![first, second]))
}

#[test]
fn a_non_hash_value_a_callee_chose_bound_without_a_type_is_exact() {
    check_ast(&structs(false), Walk::Plain);
}

/// Seed 5064 (`AUGUR_FUZZ_BINDS=struct`, shrunk from 20 statements; 5096
/// fails the same):
///
/// ```text
/// {
///   let kw = choose_w(a >= 0, -1, 2);  // W(f64), not Hash, chosen in a closure; k = kw.0 as i32
///   v0 = 0;
///   decide_nested(v3, k);
/// }
/// ```
///
/// wrong for `(a, b) = (-4, 5)`: the interpreter gave -665648883 where
/// the reference gives -651796068. `choose_w` decides in a closure it
/// calls (`for_each(|b| if b.is_true() { n = x })`, then `W(n)`): the
/// sides the closure took were not part of what stood for the value,
/// which then stood for the same on both paths.
#[test]
fn a_non_hash_value_a_callee_chose_in_a_closure_is_exact() {
    let c = cmp(CmpOp::Ge, Expr::Param(0), Expr::Const(0));
    let p = program(
        4,
        Stmt::Hidden(Box::new(Hidden {
            first: Bind::Struct(c, -1, 2, false),
            between: Stmt::Assign(0, Expr::Const(0)),
            second: None,
            after: Stmt::Block(vec![]),
            var: 3,
            read: Read::Decide(Decide::Nested),
        })),
    );
    check_ast(&p, Walk::Plain);
}

#[test]
fn a_hash_value_a_callee_chose_bound_with_its_type_is_exact() {
    check_ast(&structs(true), Walk::Plain);
}

/// Seed 1002 (`AUGUR_FUZZ_BINDS=mut_struct`, shrunk from 14 statements):
///
/// ```text
/// {
///   let mut kw = W(0.0); if (0 != 0) { kw.0 += 1.0; }  // not Hash; k = kw.0 as i32
///   v0 = 0;
///   v1 = 0;
///   decide_nested(v1, k);
/// }
/// ```
///
/// wrong for `(a, b) = (-4, 5)`: the interpreter gives 486665776 where the
/// reference gives 486695567.
fn changed_structs(hash: bool) -> Program {
    let c = cmp(CmpOp::Ne, Expr::Const(0), Expr::Const(0));
    let body = Stmt::Hidden(Box::new(Hidden {
        first: Bind::MutStruct(c, 1, hash),
        between: Stmt::Assign(0, Expr::Const(0)),
        second: None,
        after: Stmt::Assign(1, Expr::Const(0)),
        var: 1,
        read: Read::Decide(Decide::Nested),
    }));
    program(1, body)
}

/// A changed `let mut` that is not `Hash` may also be refused with a
/// clear error naming the `let` (the fuzzer's `documented_limit`), never
/// given wrong code.
#[test]
fn a_changed_non_hash_let_mut_is_exact_or_refused() {
    let p = changed_structs(false);
    match check_program(&p, Walk::Plain, true) {
        Ok(_) => {}
        Err(f) if documented_limit(&p, Walk::Plain, &f) => {}
        Err(f) => panic!("Plain walk:\n{p}{f}"),
    }
}

#[test]
fn a_changed_hash_let_mut_is_exact() {
    check_ast(&changed_structs(true), Walk::Plain);
}
