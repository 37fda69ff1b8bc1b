//! The well-formedness check: each kind of diagnostic (empty program,
//! duplicate labels, missing targets, halt without done, falling off the
//! end, done without halt, reads before writes), its position, message
//! and severity, and the order in which they are reported.

use augur_imp::check::{check, is_well_formed};
use augur_imp::{Cmd, DiagnosticKind as Kind, Pos, Program, Severity};

use crate::common;
use common::*;

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
