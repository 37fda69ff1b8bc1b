//! Printing programs, commands, expressions and conditions: minimal
//! parentheses, and round trips through the parser of random expressions
//! and random programs.

use augur_imp::check::{check, is_well_formed};
use augur_imp::parse::{parse, parse_bexpr, parse_expr};
use augur_imp::random::{self, Rng, Shape};
use augur_imp::{BExpr, Cmd, DiagnosticKind as Kind, Expr, Pos, Program};

use crate::common;
use common::*;

// ---------------------------------------------------------------- printing

#[test]
fn printing_uses_minimal_parentheses() {
    let cases = [
        (add(num(1), mul(num(2), num(3))), "1 + 2 * 3"),
        (mul(add(num(1), num(2)), num(3)), "(1 + 2) * 3"),
        (sub(sub(var("a"), var("b")), var("c")), "a - b - c"),
        (sub(var("a"), sub(var("b"), var("c"))), "a - (b - c)"),
        (add(var("a"), add(var("b"), var("c"))), "a + (b + c)"),
        (mul(var("a"), mul(var("b"), var("c"))), "a * (b * c)"),
        (sub(var("a"), num(-3)), "a - -3"),
        (mul(num(-3), num(-4)), "-3 * -4"),
        (num(i64::MIN), "-9223372036854775808"),
    ];
    for (tree, text) in cases {
        assert_eq!(tree.to_string(), text);
        assert_eq!(e(text), tree);
    }
    let (t, f) = (BExpr::True, BExpr::False);
    let bcases = [
        (
            or(and(t.clone(), f.clone()), t.clone()),
            "true and false or true",
        ),
        (
            and(or(t.clone(), f.clone()), t.clone()),
            "(true or false) and true",
        ),
        (
            or(t.clone(), or(f.clone(), t.clone())),
            "true or (false or true)",
        ),
        (not(and(t.clone(), f.clone())), "not (true and false)"),
        (not(not(f.clone())), "not not false"),
        (
            and(not(t.clone()), not(f.clone())),
            "not true and not false",
        ),
        (
            BExpr::Le(mul(add(var("x"), num(1)), num(2)), num(-1)),
            "(x + 1) * 2 <= -1",
        ),
    ];
    for (tree, text) in bcases {
        assert_eq!(tree.to_string(), text);
        assert_eq!(b(text), tree);
    }
}

#[test]
fn printing_commands_and_programs() {
    let prog = Program::from_cmds([
        ("l0", Cmd::Skip),
        ("l1", Cmd::Assign("x".into(), num(-1))),
        ("l2", Cmd::IfGoto(BExpr::Eq(var("x"), num(0)), "l0".into())),
        ("l3", Cmd::Goto("l4".into())),
        ("l4", Cmd::Halt),
        ("l5", Cmd::Done),
    ]);
    let text = "l0: skip\nl1: x := -1\nl2: if x = 0 then l0\nl3: goto l4\nl4: halt\nl5: done\n";
    assert_eq!(prog.to_string(), text);
    assert_eq!(prog.cmds[2].to_string(), "l2: if x = 0 then l0");
    assert_eq!(pairs(&p(text)), pairs(&prog));
    assert_eq!(
        Program::from_cmds(Vec::<(String, Cmd)>::new()).to_string(),
        ""
    );
}

/// Random expressions deeper, and with more extreme literals, than the
/// random programs use.
fn random_expr(r: &mut Rng, depth: u32) -> Expr {
    let literals = [0, 1, -1, 7, -10, i64::MAX, i64::MIN, i64::MIN + 1];
    match r.below(if depth == 0 { 2 } else { 5 }) {
        0 => num(literals[r.below(literals.len() as u64) as usize]),
        1 => var(["x", "y", "z_1"][r.below(3) as usize]),
        k => {
            let (a, b) = (random_expr(r, depth - 1), random_expr(r, depth - 1));
            [add, sub, mul][k as usize - 2](a, b)
        }
    }
}

fn random_bexpr(r: &mut Rng, depth: u32) -> BExpr {
    match r.below(if depth == 0 { 4 } else { 7 }) {
        0 => BExpr::True,
        1 => BExpr::False,
        2 => BExpr::Eq(random_expr(r, 3), random_expr(r, 3)),
        3 => BExpr::Le(random_expr(r, 3), random_expr(r, 3)),
        4 => not(random_bexpr(r, depth - 1)),
        5 => and(random_bexpr(r, depth - 1), random_bexpr(r, depth - 1)),
        _ => or(random_bexpr(r, depth - 1), random_bexpr(r, depth - 1)),
    }
}

/// Every text obtained from `text` by deleting one matching pair of
/// parentheses.
fn without_one_pair(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut open = Vec::new();
    let mut out = Vec::new();
    for (i, &c) in chars.iter().enumerate() {
        match c {
            '(' => open.push(i),
            ')' => {
                let j = open.pop().expect("balanced");
                let kept = chars.iter().enumerate().filter(|&(k, _)| k != i && k != j);
                out.push(kept.map(|(_, c)| c).collect());
            }
            _ => {}
        }
    }
    out
}

#[test]
fn random_expressions_round_trip_with_minimal_parentheses() {
    let mut r = Rng(7);
    for _ in 0..3_000 {
        let tree = random_expr(&mut r, 5);
        let text = tree.to_string();
        assert_eq!(e(&text), tree, "{text}");
        for fewer in without_one_pair(&text) {
            assert_ne!(
                parse_expr(&fewer).ok(),
                Some(tree.clone()),
                "{text} -> {fewer}"
            );
        }
    }
    for _ in 0..3_000 {
        let tree = random_bexpr(&mut r, 4);
        let text = tree.to_string();
        assert_eq!(b(&text), tree, "{text}");
        for fewer in without_one_pair(&text) {
            assert_ne!(
                parse_bexpr(&fewer).ok(),
                Some(tree.clone()),
                "{text} -> {fewer}"
            );
        }
    }
}

#[test]
fn random_programs_round_trip() {
    let mut r = Rng(2024);
    for n in 0..10_000u64 {
        let shape = Shape {
            commands: r.below(40),
            variables: 1 + r.below(8),
            initialise: n % 3 != 0,
        };
        let prog = random::program(&mut r, shape);
        let text = prog.to_string();
        let back = parse(&text).unwrap_or_else(|err| panic!("{err}\n{text}"));
        assert_eq!(pairs(&back), pairs(&prog), "{text}");
        // Printing the parsed program gives the same text again.
        assert_eq!(back.to_string(), text);
        // Parsed positions: command i is on line i + 1, at column 1.
        for (i, c) in back.cmds.iter().enumerate() {
            assert_eq!(
                c.pos,
                Pos {
                    line: i as u32 + 1,
                    col: 1
                }
            );
        }
        assert!(is_well_formed(&back), "{text}\n{:?}", check(&back));
        if shape.initialise {
            assert!(!kinds(&back).contains(&Kind::ReadBeforeWrite), "{text}");
        }
    }
}
