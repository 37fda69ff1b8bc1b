//! Plain Rust loops around dyn code inside dyn loops, with and without
//! `#[augur::staged]`: what the attribute makes exact, the clear error
//! without it, and tail-recursive walks.

use super::check_ast;
use crate::common;
use crate::fuzz_programs::language::{Bound, CmpOp, Cond, Expr, Init, Program, Stmt, VARS};
use crate::fuzz_programs::staged::Walk;
use augur::{Builder, Dyn};

/// Defines `$annotated` under `#[augur::staged]` and `$bare` without it,
/// from one body: the same staged program, with and without the attribute.
macro_rules! with_and_without_attribute {
    ($annotated:ident, $bare:ident, |$n:ident| $body:block) => {
        #[augur::staged]
        fn $annotated($n: Dyn<i32>) -> Dyn<i32> $body

        fn $bare($n: Dyn<i32>) -> Dyn<i32> $body
    };
}

/// Where the plain loop below starts its turns (its `if`'s line).
const PLAIN_IN_DYN_LINE: u32 = line!() + 11;

// A plain Rust `for` of two turns around a dyn `if`, inside a dyn loop.
with_and_without_attribute!(plain_in_dyn, plain_in_dyn_bare, |n| {
    let c = Dyn::new(0);
    let x = Dyn::new(0);
    while c.lt(n).is_true() {
        c.set(c + 1);
        // `black_box`: an optimized build would unroll a constant two-turn
        // loop.
        for _ in 0..std::hint::black_box(2) {
            if x.lt(c).is_true() {
                x.set(x + 1);
            }
        }
    }
    x
});

#[augur::staged]
fn plain_in_dyn_ref(&mut (n,): &mut (i32,)) -> i32 {
    let (mut c, mut x) = (0, 0);
    while c < n {
        c += 1;
        for _ in 0..2 {
            if x < c {
                x += 1;
            }
        }
    }
    x
}

/// Under `#[augur::staged]` the plain loop's turns are a `Static` that ends
/// with the loop, so the dyn loop closes: two ifs in its body.
#[test]
fn plain_loop_in_dyn_loop_closes_under_the_attribute() {
    let ex = common::check(
        "plain_in_dyn",
        plain_in_dyn,
        plain_in_dyn_ref,
        &[(0,), (1,), (2,), (5,), (-3,)],
    );
    assert_eq!(common::count(&ex.c_code(), "if ("), 2, "{}", ex.c_code());
}

/// Without the attribute, by default, the engine shares no code in the
/// closure and the dyn loop stops with `Error::Unannotated`. Trusted, it
/// finds the plain loop by itself, but keeps its turns apart for the rest
/// of the run, so the dyn loop never repeats its state: the error names the
/// plain loop and the two fixes.
#[test]
fn plain_loop_in_dyn_loop_without_the_attribute_is_a_clear_error() {
    let err = Builder::new()
        .trust_unannotated(false)
        .extract("plain_in_dyn", plain_in_dyn_bare)
        .unwrap_err();
    assert!(matches!(err, augur::Error::Unannotated { .. }), "{err}");
    let line = PLAIN_IN_DYN_LINE;
    let err = Builder::new()
        .trust_unannotated(true)
        .extract("plain_in_dyn", plain_in_dyn_bare)
        .unwrap_err();
    let m = err.to_string();
    assert!(matches!(err, augur::Error::LoopNeverCloses { .. }), "{m}");
    assert!(m.contains(&format!("{}:{line}:", file!())), "{m}");
    assert!(
        m.contains("#[augur::staged]") && m.contains("augur::range"),
        "{m}"
    );
}

// A dyn `while` run twice by a plain `for`, inside a dyn `while`: three
// loops under the attribute; without it, the run limit with the same
// explanation.
with_and_without_attribute!(loops_in_plain_in_dyn, loops_in_plain_in_dyn_bare, |n| {
    let c = Dyn::new(0);
    let d = Dyn::new(0);
    let x = Dyn::new(0);
    while c.lt(n).is_true() {
        c.set(c + 1);
        for _ in 0..std::hint::black_box(2) {
            d.set(0);
            while d.lt(n).is_true() {
                d.set(d + 1);
                x.set(x + 1);
            }
        }
    }
    x
});

#[test]
#[augur::staged]
fn dyn_loops_in_a_plain_loop_in_a_dyn_loop() {
    let ex = common::check(
        "loops_in_plain_in_dyn",
        loops_in_plain_in_dyn,
        |&mut (n,): &mut (i32,)| 2 * n.max(0) * n.max(0),
        &[(0,), (1,), (2,), (5,), (-3,)],
    );
    assert_eq!(ex.stats().back_edges, 3, "{}", ex.c_code());
    let err = Builder::new()
        .max_runs(500)
        .extract("bare", loops_in_plain_in_dyn_bare)
        .unwrap_err();
    assert!(err.to_string().contains("#[augur::staged]"), "{err}");
}

/// The fuzz test's smallest program for that limit:
///
/// ```text
/// c0 = 0;
/// while (c0 < 1) { c0 = c0 + 1; v3 = v3; if (0 <= 0) { break; } v1 = a; }
/// ```
///
/// exact under both walks (the plain walk is annotated).
#[test]
#[augur::staged]
fn plain_loop_in_dyn_loop_fuzz_program() {
    let c0 = VARS;
    let p = Program {
        inits: vec![Init::Zero; VARS],
        counters: 1,
        body: Stmt::While {
            counter: c0,
            bound: Bound::Const(1),
            body: Box::new(Stmt::Block(vec![
                Stmt::Assign(3, Expr::Var(3)),
                Stmt::If(
                    Cond::Cmp(CmpOp::Le, Expr::Const(0), Expr::Const(0)),
                    Box::new(Stmt::Break),
                    Box::new(Stmt::Block(vec![])),
                ),
                Stmt::Assign(1, Expr::Param(0)),
            ])),
        },
    };
    check_ast(&p, Walk::Trusted);
    check_ast(&p, Walk::Plain);
}

enum Node {
    If(i32, Box<Node>, Box<Node>),
    Add(i32),
    Stop,
}

/// A recursive walk whose recursive calls are tail calls.
#[augur::staged]
fn walk_tail(n: &Node, x: Dyn<i32>) -> Option<Dyn<i32>> {
    match n {
        Node::If(k, t, e) => {
            if x.gt(*k).is_true() {
                walk_tail(t, x)
            } else {
                walk_tail(e, x)
            }
        }
        Node::Add(k) => {
            x.set(x + *k);
            None
        }
        Node::Stop => Some(x),
    }
}

/// In an optimized build the tail calls of a recursive tree walk would
/// reuse the caller's frame, so an `if` nested in an `if` would take its
/// tags from the same return addresses as its parent (a plain loop to the
/// engine, and inside a dyn loop a loop that never closes). The
/// attribute's frame guard keeps every call a real call.
#[test]
#[augur::staged]
fn tail_recursive_walk_in_dyn_loop() {
    use Node::*;
    let prog = If(
        0,
        Box::new(If(0, Box::new(Add(1)), Box::new(Stop))),
        Box::new(Stop),
    );
    let prog = &prog;
    common::check(
        "tail_walk",
        move |n: Dyn<i32>| {
            let c = Dyn::new(0);
            let x = Dyn::new(0);
            while c.lt(n).is_true() {
                c.set(c + 1);
                if let Some(v) = walk_tail(prog, x) {
                    x.set(v + 1);
                }
            }
            x
        },
        |&mut (n,): &mut (i32,)| n.max(0),
        &[(0,), (1,), (2,), (5,), (-3,)],
    );
}
