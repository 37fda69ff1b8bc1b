//! Parsing the text syntax: every command, labels, spacing, comments and
//! positions; the precedence and associativity of expressions and
//! conditions; paper-style programs parsed, checked and printed.

use augur_imp::check::{check, is_well_formed};
use augur_imp::{BExpr, Cmd, DiagnosticKind as Kind, Pos};

use crate::common;
use common::*;

// ---------------------------------------------------------------- commands

#[test]
fn every_command() {
    let prog = p("a: skip\nb: x := 1\nc: if true then a\nd: goto b\ne: halt\nf: done\n");
    let want = vec![
        ("a".to_string(), Cmd::Skip),
        ("b".to_string(), Cmd::Assign("x".into(), num(1))),
        ("c".to_string(), Cmd::IfGoto(BExpr::True, "a".into())),
        ("d".to_string(), Cmd::Goto("b".into())),
        ("e".to_string(), Cmd::Halt),
        ("f".to_string(), Cmd::Done),
    ];
    assert_eq!(pairs(&prog), want);
    assert_eq!(prog.index("d"), Some(3));
}

#[test]
fn labels_identifiers_and_naturals() {
    let prog = p("10: goto _x9\n_x9: goto 10\nL_2: halt\n007: done");
    let labels: Vec<&str> = prog.cmds.iter().map(|c| c.label.as_str()).collect();
    assert_eq!(labels, ["10", "_x9", "L_2", "007"]);
    assert_eq!(prog.cmds[0].cmd, Cmd::Goto("_x9".into()));
    assert_eq!(prog.cmds[1].cmd, Cmd::Goto("10".into()));
}

#[test]
fn spacing_is_free_within_a_line() {
    let tight = p("l0:x:=(a+1)*-2\nl1:if(x)<=3and not(y=1)then l0");
    let loose =
        p("  l0 :  x  :=  ( a + 1 ) * -2\n\tl1\t:\tif ( x ) <= 3 and not ( y = 1 ) then l0");
    assert_eq!(pairs(&tight), pairs(&loose));
    assert_eq!(
        tight.cmds[0].cmd,
        Cmd::Assign("x".into(), mul(add(var("a"), num(1)), num(-2)))
    );
}

#[test]
fn comments_blank_lines_and_crlf() {
    let text = "# header\n\n   \nl0: skip # trailing\r\n# between\r\nl1: halt#tight\n\t# indented\nl2: done";
    let prog = p(text);
    assert_eq!(
        pairs(&prog),
        vec![
            ("l0".into(), Cmd::Skip),
            ("l1".into(), Cmd::Halt),
            ("l2".into(), Cmd::Done)
        ]
    );
    assert!(p("").cmds.is_empty());
    assert!(p("# only a comment\n\n").cmds.is_empty());
}

#[test]
fn positions_are_line_and_column_of_the_label() {
    let prog = p("# c\n\n  l0: skip\nl1: halt\n\t l2: done");
    let pos: Vec<Pos> = prog.cmds.iter().map(|c| c.pos).collect();
    let at = |line, col| Pos { line, col };
    assert_eq!(pos, [at(3, 3), at(4, 1), at(5, 3)]);
}

#[test]
fn duplicate_labels_parse() {
    let prog = p("l: skip\nl: halt");
    assert_eq!(prog.cmds.len(), 2);
    assert_eq!(prog.index("l"), Some(0));
}

// ---------------------------------------------------------------- expressions

#[test]
fn arithmetic_precedence_and_associativity() {
    assert_eq!(e("1 + 2 * 3"), add(num(1), mul(num(2), num(3))));
    assert_eq!(e("1 * 2 + 3"), add(mul(num(1), num(2)), num(3)));
    assert_eq!(e("1 - 2 - 3"), sub(sub(num(1), num(2)), num(3)));
    assert_eq!(e("1 - 2 + 3"), add(sub(num(1), num(2)), num(3)));
    assert_eq!(e("2 * 3 * 4"), mul(mul(num(2), num(3)), num(4)));
    assert_eq!(e("(1 + 2) * 3"), mul(add(num(1), num(2)), num(3)));
    assert_eq!(e("a - (b - c)"), sub(var("a"), sub(var("b"), var("c"))));
    assert_eq!(e("a * (b * c)"), mul(var("a"), mul(var("b"), var("c"))));
    assert_eq!(e("((x))"), var("x"));
    assert_eq!(e("x1_"), var("x1_"));
}

#[test]
fn negative_literals() {
    assert_eq!(e("-3"), num(-3));
    assert_eq!(e("x - -3"), sub(var("x"), num(-3)));
    assert_eq!(e("x--3"), sub(var("x"), num(-3)));
    assert_eq!(e("-3 * x"), mul(num(-3), var("x")));
    assert_eq!(e("x * -3"), mul(var("x"), num(-3)));
    // A minus after an operand is subtraction, even without a space.
    assert_eq!(e("x -3"), sub(var("x"), num(3)));
    assert_eq!(e("(-3)"), num(-3));
    assert_eq!(e("-0"), num(0));
}

#[test]
fn extreme_literals() {
    assert_eq!(e("9223372036854775807"), num(i64::MAX));
    assert_eq!(e("-9223372036854775808"), num(i64::MIN));
    assert_eq!(e("000042"), num(42));
}

// ---------------------------------------------------------------- conditions

#[test]
fn boolean_precedence() {
    let (x1, y2) = (BExpr::Eq(var("x"), num(1)), BExpr::Le(var("y"), num(2)));
    assert_eq!(
        b("not x = 1 and y <= 2 or true"),
        or(and(not(x1.clone()), y2.clone()), BExpr::True)
    );
    assert_eq!(
        b("true or x = 1 and y <= 2"),
        or(BExpr::True, and(x1.clone(), y2.clone()))
    );
    assert_eq!(
        b("true or false or true"),
        or(or(BExpr::True, BExpr::False), BExpr::True)
    );
    assert_eq!(
        b("true and false and true"),
        and(and(BExpr::True, BExpr::False), BExpr::True)
    );
    assert_eq!(b("not not false"), not(not(BExpr::False)));
    assert_eq!(
        b("(true or false) and false"),
        and(or(BExpr::True, BExpr::False), BExpr::False)
    );
    assert_eq!(b("not (x = 1 and y <= 2)"), not(and(x1, y2)));
}

#[test]
fn comparisons_bind_looser_than_arithmetic() {
    assert_eq!(
        b("x + 1 = y * 2"),
        BExpr::Eq(add(var("x"), num(1)), mul(var("y"), num(2)))
    );
    assert_eq!(
        b("-1 <= x - -1"),
        BExpr::Le(num(-1), sub(var("x"), num(-1)))
    );
}

#[test]
fn parenthesis_may_open_an_expression_or_a_condition() {
    let lhs = mul(add(var("x"), num(1)), num(2));
    assert_eq!(b("(x + 1) * 2 = y"), BExpr::Eq(lhs, var("y")));
    assert_eq!(b("(x) = (y)"), BExpr::Eq(var("x"), var("y")));
    assert_eq!(b("((x)) <= 3"), BExpr::Le(var("x"), num(3)));
    assert_eq!(b("((x = 1))"), BExpr::Eq(var("x"), num(1)));
    assert_eq!(b("not (x) <= 3"), not(BExpr::Le(var("x"), num(3))));
    assert_eq!(
        b("(a = 1 or (b) = 2) and ((c + 1)) = 3"),
        and(
            or(BExpr::Eq(var("a"), num(1)), BExpr::Eq(var("b"), num(2))),
            BExpr::Eq(add(var("c"), num(1)), num(3))
        )
    );
    assert_eq!(b("(true)"), BExpr::True);
}

// ---------------------------------------------------------------- paper-style programs

/// `s := 1 + 2 + ... + n`, with a loop test at the top.
const SUM: &str = "\
# s := 1 + 2 + ... + n
l0: i := 1
l1: s := 0
l2: if not i <= n then l6   # loop test
l3: s := s + i
l4: i := i + 1
l5: goto l2
l6: halt
l7: done
";

/// `f := n!` with the test at the bottom and a dead store to `t`.
const FACTORIAL: &str = "\
l1: f := 1
l2: t := f * 2
l3: if n <= 1 then l7
l4: f := f * n
l5: n := n - 1
l6: if not n <= 1 then l4
l7: halt
l8: done
";

#[test]
fn paper_style_programs() {
    let sum = p(SUM);
    assert_eq!(sum.cmds.len(), 8);
    assert_eq!(sum.successors(2), vec![3, 6]);
    assert_eq!(sum.successors(5), vec![2]);
    assert_eq!(sum.successors(6), vec![7]);
    assert!(sum.successors(7).is_empty());
    assert_eq!(
        sum.cmds[2].cmd,
        Cmd::IfGoto(not(BExpr::Le(var("i"), var("n"))), "l6".into())
    );
    // `n` is the program's input: read before any write, on purpose.
    let warnings: Vec<String> = check(&sum).iter().map(|d| d.to_string()).collect();
    assert_eq!(
        warnings,
        ["4:1: warning: `n` may be read at `l2` before it is written"]
    );
    assert!(is_well_formed(&sum));

    let fact = p(FACTORIAL);
    assert_eq!(fact.predecessors()[3], vec![2, 5]);
    assert!(is_well_formed(&fact));
    // The input `n` is read before it is written on the first pass through
    // the loop test, the body, and the decrement.
    let reads: Vec<(Kind, Option<String>)> = check(&fact)
        .into_iter()
        .map(|d| (d.kind, d.label))
        .collect();
    let at = |l: &str| (Kind::ReadBeforeWrite, Some(l.to_string()));
    assert_eq!(reads, [at("l3"), at("l4"), at("l5")]);
}

#[test]
fn paper_style_program_with_every_construct() {
    let text = "\
start: skip
test:  if x <= y and not x = y or false then swap
diff:  d := x - y
       goto out
swap:  d := y - x
out:   halt
end:   done
";
    assert_eq!(err(text), "4:8: missing label before `goto`");
    let fixed = text.replace("       goto out", "jump:  goto out");
    let prog = p(&fixed);
    let cond = or(
        and(
            BExpr::Le(var("x"), var("y")),
            not(BExpr::Eq(var("x"), var("y"))),
        ),
        BExpr::False,
    );
    assert_eq!(prog.cmds[1].cmd, Cmd::IfGoto(cond, "swap".into()));
    assert!(is_well_formed(&prog));
    let printed = prog.to_string();
    assert_eq!(
        printed,
        "start: skip\ntest: if x <= y and not x = y or false then swap\ndiff: d := x - y\n\
         jump: goto out\nswap: d := y - x\nout: halt\nend: done\n"
    );
    assert_eq!(pairs(&p(&printed)), pairs(&prog));
}
