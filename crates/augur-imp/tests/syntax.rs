//! The text syntax: parsing, errors with positions, printing (round
//! trips, minimal parentheses) and the well-formedness check.

use augur_imp::check::{check, is_well_formed};
use augur_imp::parse::{parse, parse_bexpr, parse_expr};
use augur_imp::random::{self, Rng, Shape};
use augur_imp::{BExpr, Cmd, DiagnosticKind as Kind, Expr, Pos, Program, Severity};

// ---------------------------------------------------------------- helpers

fn num(n: i64) -> Expr {
    Expr::Num(n)
}

fn var(v: &str) -> Expr {
    Expr::Var(v.to_string())
}

fn add(a: Expr, b: Expr) -> Expr {
    Expr::Add(Box::new(a), Box::new(b))
}

fn sub(a: Expr, b: Expr) -> Expr {
    Expr::Sub(Box::new(a), Box::new(b))
}

fn mul(a: Expr, b: Expr) -> Expr {
    Expr::Mul(Box::new(a), Box::new(b))
}

fn not(b: BExpr) -> BExpr {
    BExpr::Not(Box::new(b))
}

fn and(a: BExpr, b: BExpr) -> BExpr {
    BExpr::And(Box::new(a), Box::new(b))
}

fn or(a: BExpr, b: BExpr) -> BExpr {
    BExpr::Or(Box::new(a), Box::new(b))
}

fn e(text: &str) -> Expr {
    parse_expr(text).unwrap_or_else(|err| panic!("{text:?}: {err}"))
}

fn b(text: &str) -> BExpr {
    parse_bexpr(text).unwrap_or_else(|err| panic!("{text:?}: {err}"))
}

fn p(text: &str) -> Program {
    parse(text).unwrap_or_else(|err| panic!("{text:?}: {err}"))
}

/// A program's labels and commands, without positions.
fn pairs(p: &Program) -> Vec<(String, Cmd)> {
    p.cmds
        .iter()
        .map(|c| (c.label.clone(), c.cmd.clone()))
        .collect()
}

/// The error `text` gives, as "line:col: message".
fn err(text: &str) -> String {
    match parse(text) {
        Ok(p) => panic!("{text:?} parsed as {p:?}"),
        Err(e) => e.to_string(),
    }
}

fn kinds(p: &Program) -> Vec<Kind> {
    check(p).iter().map(|d| d.kind).collect()
}

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

// ---------------------------------------------------------------- errors

#[test]
fn errors_missing_label_and_unknown_commands() {
    assert_eq!(
        err("x := 1"),
        "1:1: missing label before the assignment to `x`"
    );
    assert_eq!(err("  skip"), "1:3: missing label before `skip`");
    assert_eq!(err("if: skip"), "1:1: missing label before `if`");
    assert_eq!(err(": skip"), "1:1: missing label at `:`");
    assert_eq!(
        err("l0 skip"),
        "1:4: expected `:` after label `l0`, found `skip`"
    );
    assert_eq!(
        err("l0"),
        "1:3: expected `:` after label `l0`, found end of line"
    );
    assert_eq!(
        err("l0: print x"),
        "1:5: unknown command `print` (an assignment is `print := E`)"
    );
    assert_eq!(
        err("l0: x = 1"),
        "1:5: unknown command `x` (an assignment is `x := E`)"
    );
    assert_eq!(err("l0:"), "1:4: expected a command, found end of line");
    assert_eq!(err("l0: then"), "1:5: expected a command, found `then`");
    assert_eq!(err("l0: 3"), "1:5: expected a command, found `3`");
}

#[test]
fn errors_in_expressions() {
    assert_eq!(
        err("l0: x := 1 +"),
        "1:13: expected an expression, found end of line"
    );
    assert_eq!(
        err("l0: x := (1 + 2"),
        "1:16: expected `)`, found end of line"
    );
    assert_eq!(
        err("l0: x := 1 + * 2"),
        "1:14: expected an expression, found `*`"
    );
    assert_eq!(
        err("l0: x := - 3"),
        "1:10: expected an expression (a negative literal is written `-3`), found `-`"
    );
    assert_eq!(
        err("l0: x := skip"),
        "1:10: expected an expression, found `skip`"
    );
    assert_eq!(err("l0: x := 3x"), "1:11: unexpected `x` after the command");
    assert_eq!(
        err("l0: x := (1) (2)"),
        "1:14: unexpected `(` after the command"
    );
}

#[test]
fn errors_integer_overflow() {
    assert_eq!(
        err("l0: x := 9223372036854775808"),
        "1:10: integer `9223372036854775808` does not fit in 64 bits"
    );
    assert_eq!(
        err("l0: x := 1 - -9223372036854775809"),
        "1:14: integer `-9223372036854775809` does not fit in 64 bits"
    );
    assert_eq!(
        err("l0: x := 123456789012345678901234567890"),
        "1:10: integer `123456789012345678901234567890` does not fit in 64 bits"
    );
}

#[test]
fn errors_in_conditions() {
    assert_eq!(
        err("l0: if x then l1"),
        "1:10: expected `=` or `<=`, found `then`"
    );
    assert_eq!(err("l0: if x = 1 l1"), "1:14: expected `then`, found `l1`");
    assert_eq!(
        err("l0: if x = 1 then"),
        "1:18: expected a label, found end of line"
    );
    assert_eq!(
        err("l0: if x = 1 then done"),
        "1:19: expected a label, found `done`"
    );
    assert_eq!(
        err("l0: if not then l0"),
        "1:12: expected an expression, found `then`"
    );
    assert_eq!(
        err("l0: if x = 1 and then l0"),
        "1:18: expected an expression, found `then`"
    );
    assert_eq!(
        err("l0: if x = y = z then l0"),
        "1:14: expected `then`, found `=`"
    );
    // Both readings of `(` fail; the one that got further is reported.
    assert_eq!(
        err("l0: if (x + 1) and y = 2 then l0"),
        "1:16: expected `=` or `<=`, found `and`"
    );
    assert_eq!(
        err("l0: if (x = 1 then l0"),
        "1:15: expected `)`, found `then`"
    );
    assert_eq!(
        err("l0: if (true) = 1 then l0"),
        "1:15: expected `then`, found `=`"
    );
}

#[test]
fn errors_goto_trailing_input_and_characters() {
    assert_eq!(err("l0: goto"), "1:9: expected a label, found end of line");
    assert_eq!(err("l0: goto skip"), "1:10: expected a label, found `skip`");
    assert_eq!(err("l0: goto -1"), "1:10: expected a label, found `-`");
    assert_eq!(
        err("l0: halt done"),
        "1:10: unexpected `done` after the command"
    );
    assert_eq!(
        err("l0: halt: done"),
        "1:9: unexpected `:` after the command"
    );
    assert_eq!(err("l0: x := 1 @"), "1:12: unexpected character `@`");
    assert_eq!(
        err("l0: if x < 2 then l0"),
        "1:10: unexpected character `<`"
    );
    assert_eq!(
        err("l0: x := 1 ; l1: skip"),
        "1:12: unexpected character `;`"
    );
    assert_eq!(err("l0: x := é"), "1:10: unexpected character `é`");
}

#[test]
fn error_lines_count_comments_and_blank_lines() {
    let text = "# program\nl0: skip\n\n   # note\nl1: x := (a +\nl2: halt";
    assert_eq!(err(text), "5:14: expected an expression, found end of line");
    // Columns count characters, not bytes.
    assert_eq!(
        err("l0: skip # é\nl1: skip # ü\nl2: x := 1 +"),
        "3:13: expected an expression, found end of line"
    );
    assert_eq!(
        err("l0: x := 1 # ééé\nl1: x := ééé"),
        "2:10: unexpected character `é`"
    );
}

#[test]
fn errors_are_std_errors_with_positions() {
    let e = parse("l0: skip\nl1: x := ").unwrap_err();
    assert_eq!(e.pos, Pos { line: 2, col: 10 });
    assert_eq!(e.message, "expected an expression, found end of line");
    let boxed: Box<dyn std::error::Error> = Box::new(e);
    assert_eq!(
        boxed.to_string(),
        "2:10: expected an expression, found end of line"
    );
}

#[test]
fn deep_nesting_is_an_error_not_a_crash() {
    let deep = format!("l0: x := {}1{}", "(".repeat(10_000), ")".repeat(10_000));
    assert!(err(&deep).contains("nesting deeper than"));
    let nots = format!("l0: if {}true then l0", "not ".repeat(10_000));
    assert!(err(&nots).contains("nesting deeper than"));
    let fine = format!("l0: x := {}1{}", "(".repeat(100), ")".repeat(100));
    assert_eq!(p(&fine).cmds[0].cmd, Cmd::Assign("x".into(), num(1)));
    let bools = format!("l0: if {}x = 1{} then l0", "(".repeat(100), ")".repeat(100));
    assert_eq!(
        p(&bools).cmds[0].cmd,
        Cmd::IfGoto(BExpr::Eq(var("x"), num(1)), "l0".into())
    );
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

// ---------------------------------------------------------------- check

#[test]
fn check_accepts_a_clean_program() {
    let prog =
        p("l0: x := 0\nl1: if x = 3 then l4\nl2: x := x + 1\nl3: goto l1\nl4: halt\nl5: done");
    assert!(check(&prog).is_empty());
    assert!(is_well_formed(&prog));
}

#[test]
fn check_empty_program() {
    for text in ["", "# nothing\n\n"] {
        let found = check(&p(text));
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].kind, Kind::EmptyProgram);
        assert_eq!(found[0].label, None);
        assert_eq!(found[0].to_string(), "error: the program has no commands");
        assert!(!is_well_formed(&p(text)));
    }
}

#[test]
fn check_duplicate_labels() {
    let prog = p("a: skip\nb: skip\n  a: halt\nc: done");
    let found = check(&prog);
    assert_eq!(found.len(), 1);
    let d = &found[0];
    assert_eq!(
        (d.kind, d.label.as_deref(), d.pos),
        (Kind::DuplicateLabel, Some("a"), Pos { line: 3, col: 3 })
    );
    assert_eq!(
        d.to_string(),
        "3:3: error: duplicate label `a` (first at line 1)"
    );
    assert_eq!(d.severity(), Severity::Error);
    assert!(!is_well_formed(&prog));
    // Built programs have no positions: messages count commands instead.
    let built = Program::from_cmds([("a", Cmd::Halt), ("b", Cmd::Done), ("b", Cmd::Done)]);
    let found = check(&built);
    assert_eq!(
        found[0].to_string(),
        "error: duplicate label `b` (first at command 2)"
    );
}

#[test]
fn check_missing_targets() {
    let prog =
        p("l0: goto nowhere\nl1: if true then gone\nl2: if true then l0\nl3: halt\nl4: done");
    let found = check(&prog);
    let labels: Vec<_> = found
        .iter()
        .map(|d| (d.kind, d.label.clone().unwrap()))
        .collect();
    assert_eq!(
        labels,
        [
            (Kind::MissingTarget, "l0".into()),
            (Kind::MissingTarget, "l1".into())
        ]
    );
    assert_eq!(
        found[1].to_string(),
        "2:1: error: `l1` jumps to `gone`, which no command has"
    );
}

#[test]
fn check_halt_without_done() {
    let last = p("l0: halt");
    assert_eq!(kinds(&last), [Kind::HaltWithoutDone]);
    assert_eq!(
        check(&last)[0].to_string(),
        "1:1: error: `l0: halt` is not followed by `done`"
    );
    let skip_after = p("l0: halt\nl1: skip\nl2: halt\nl3: done");
    assert_eq!(kinds(&skip_after), [Kind::HaltWithoutDone]);
    assert_eq!(check(&skip_after)[0].label.as_deref(), Some("l0"));
    assert!(!is_well_formed(&skip_after));
}

#[test]
fn check_falls_off_the_end() {
    for last in ["skip", "x := 1", "if true then l0"] {
        let prog = p(&format!("l0: {last}"));
        assert_eq!(kinds(&prog), [Kind::FallsOffEnd], "{last}");
        assert!(!is_well_formed(&prog));
    }
    // A final goto or done does not continue past the end.
    assert!(is_well_formed(&p("l0: goto l0")));
    assert_eq!(
        check(&p("l0: x := 1"))[0].to_string(),
        "1:1: error: `l0` is the last command but continues past it"
    );
}

#[test]
fn check_done_without_halt_is_a_warning() {
    let jump = p("l0: if x = 1 then l3\nl1: goto l3\nl2: halt\nl3: done");
    let found = check(&jump);
    assert_eq!(found.len(), 2, "{found:?}");
    assert_eq!(found[0].kind, Kind::DoneWithoutHalt);
    assert_eq!(found[0].severity(), Severity::Warning);
    assert_eq!(
        found[0].to_string(),
        "4:1: warning: `l3: done` is reached without a halt, from `l0`, `l1`"
    );
    assert_eq!(found[1].kind, Kind::ReadBeforeWrite);
    assert!(is_well_formed(&jump));

    let fall = p("l0: skip\nl1: done");
    assert_eq!(kinds(&fall), [Kind::DoneWithoutHalt]);
    assert_eq!(check(&fall)[0].label.as_deref(), Some("l1"));

    let start = p("l0: done");
    assert_eq!(
        check(&start)[0].to_string(),
        "1:1: warning: `l0: done` is reached without a halt, from the start"
    );

    // The halt just before a done is the normal way in.
    assert!(check(&p("l0: halt\nl1: done")).is_empty());
}

#[test]
fn check_read_before_write() {
    // `x` is written on one branch only; `y` on both.
    let prog = p("\
l0: if c = 0 then l3
l1: x := 1
l2: y := 2
l3: y := 3
l4: z := x + y
l5: halt
l6: done");
    let found = check(&prog);
    let got: Vec<String> = found.iter().map(|d| d.to_string()).collect();
    assert_eq!(
        got,
        [
            "1:1: warning: `c` may be read at `l0` before it is written",
            "5:1: warning: `x` may be read at `l4` before it is written",
        ]
    );
    assert_eq!(found[1].label.as_deref(), Some("l4"));
    assert!(is_well_formed(&prog));
}

#[test]
fn check_read_before_write_in_loops() {
    // The first iteration reads `s` before the body writes it.
    let loop_ =
        p("l0: i := 0\nl1: s := s + i\nl2: i := i + 1\nl3: if i <= 9 then l1\nl4: halt\nl5: done");
    let found = check(&loop_);
    assert_eq!(found.len(), 1);
    assert_eq!(
        (found[0].label.as_deref(), found[0].kind),
        (Some("l1"), Kind::ReadBeforeWrite)
    );
    assert!(found[0].message.contains("`s`"));

    // Written before the loop: fine on every path, also via the back edge.
    let ok = p("l0: s := 0\nl1: i := 0\nl2: s := s + i\nl3: i := i + 1\nl4: if i <= 9 then l2\nl5: halt\nl6: done");
    assert!(check(&ok).is_empty());

    // A jump back to the first command meets the empty initial state.
    let back = p("l0: if x = 0 then l2\nl1: x := 1\nl2: goto l0");
    assert_eq!(kinds(&back), [Kind::ReadBeforeWrite]);

    // Unreachable reads have no path from the start.
    let dead = p("l0: goto l2\nl1: x := y\nl2: halt\nl3: done");
    assert!(check(&dead).is_empty());

    // Self-assignment reads before it writes.
    let own = p("l0: x := x + 1\nl1: halt\nl2: done");
    assert_eq!(kinds(&own), [Kind::ReadBeforeWrite]);
}

#[test]
fn check_reports_every_kind_at_once_in_order() {
    let prog = Program::from_cmds([
        ("a", Cmd::Done),
        ("a", Cmd::Goto("zz".into())),
        ("b", Cmd::Halt),
        ("c", Cmd::Assign("x".into(), var("y"))),
    ]);
    let found = kinds(&prog);
    assert_eq!(
        found,
        [
            Kind::DuplicateLabel,
            Kind::MissingTarget,
            Kind::HaltWithoutDone,
            Kind::FallsOffEnd,
            Kind::DoneWithoutHalt,
        ]
    );
    // `c` is unreachable (nothing leads there), so no read warning.
    assert!(!is_well_formed(&prog));
}
