//! Parse errors: each names what was expected and what was found, at the
//! line and column (in characters) where it went wrong; integer overflow
//! and deep nesting are errors, not crashes.

use augur_imp::parse::parse;
use augur_imp::{BExpr, Cmd, Pos};

use crate::common;
use common::*;

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
