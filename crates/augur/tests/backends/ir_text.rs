//! The IR's text form reads back (`augur::ir::parse`): every construct of
//! the text prints again as it was written and runs as it says; bad text
//! gets an error naming its line and column. (Every extraction of the
//! fuzz suite and of the test helpers is also read back and compared.)

use augur::exec::{Interpreter, Value};
use augur::ir::{parse, Const, Expr, StmtKind};

/// Reads `text`, asserting it prints back unchanged.
#[track_caller]
#[augur::staged]
fn round_trip(text: &str) -> augur::ir::Function {
    let f = parse(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(f.to_string(), text);
    f
}

const EVERYTHING: &str = r#"extern printf(*const char, ...) -> i32 in "stdio.h";
extern helper(i32, *mut f32) -> void;
fn everything(p: *mut f32, n: i32, &k: i64) -> i64 {
  var acc: i64 = 0i64;
  let big: u64 = 18446744073709551615u64;
  let small: i64 = -9223372036854775808i64;
  let c: char = 65char;
  let b: u8 = 255u8;
  let h: i16 = -3i16;
  let nan: f32 = nanf32;
  let inf: f64 = -inf;
  let z: f32 = -0.0f32;
  let tiny: f64 = 1e-300;
  let neg: i32 = -(5);
  let s: *const char = "a \"quoted\"\n\ttab \\ ?\?\?";
  var arr: [i32; 4];
  let q: *mut i64 = &k;
  let none: *mut f32 = (null : *mut f32);
  let zero: *mut u8 = (0i64 : *mut u8);
  let pick: i32 = n < 3 && !(n == 1) ? n * (n + 1) : -n % 7 << 2;
  let bits: i32 = ~n & (n | 6) ^ 3;
  let wide: i64 = (n as i64) * (n as i64) - *q;
  arr[n & 3] = (p[n] as i32);
  *p = (acc as f32) / 2.5f32;
  printf("%d\n", n);
  helper(n, p);
  if (n > 0) {
    acc = acc + 1i64;
  } else if (n < -10) {
    acc = acc - 1i64;
  } else {
    #[note("why not")]
    if (n == -5) {
      acc = 9i64;
    }
  }
  #[pragma("GCC unroll 2")]
  #[note("a loop")]
  for (var i: i32 = 0; i < n; i = i + 1) {
    if (i == 3) {
      continue;
    }
    acc = acc + (i as i64);
  }
  while (true) {
    goto L4;
  }
  L4:
  launch (2, 4; bid, &tid) {
    p[bid * 4 + tid] = 1.5f32;
  }
  return acc + wide;
}
"#;

/// Every construct of the text form prints back as written.
#[test]
#[augur::staged]
fn every_construct_reads_back() {
    let f = round_trip(EVERYTHING);
    assert_eq!(f.name, "everything");
    assert_eq!(f.externs.len(), 2);
    let k = f.params[2];
    assert!(f.vars[k].addr_taken);
    // `-(5)` is a negation of 5; `-3i16` a negative literal.
    let lits: Vec<&Expr> = f.exprs.iter().map(|(_, e)| &e.kind).collect();
    assert!(lits.contains(&&Expr::Const(Const::Int(-3))));
    assert!(lits
        .iter()
        .any(|e| matches!(e, Expr::Unary(augur::ir::UnOp::Neg, _))));
    assert!(f.body.iter().any(|s| matches!(s.kind, StmtKind::Launch(_))));
}

/// A function read from text runs as the text says.
#[test]
#[augur::staged]
fn text_runs_as_written() {
    let text = "fn tri(n: i32) -> i32 {
  var acc: i32 = 0;
  for (var i: i32 = 1; i <= n; i = i + 1) {
    if (i % 3 == 0) {
      continue;
    }
    acc = acc + i;
  }
  return acc > 100 ? 100 : acc;
}
";
    let f = round_trip(text);
    let run = |n: i32| Interpreter::new().call(&f, &[Value::I32(n)]).unwrap();
    assert_eq!(run(4), Value::I32(1 + 2 + 4));
    assert_eq!(run(30), Value::I32(100));
}

/// Hand-written text may be spaced and commented as one likes; it prints
/// in the one canonical layout.
#[test]
#[augur::staged]
fn layout_and_comments_are_free() {
    let f = parse("// a comment\nfn   f( x :i32 )->i32{ let  t:i32=x*(2+3) ; // why\n return t;}")
        .unwrap();
    assert_eq!(
        f.to_string(),
        "fn f(x: i32) -> i32 {\n  let t: i32 = x * (2 + 3);\n  return t;\n}\n"
    );
}

/// Bad text: an error that says what and where.
#[test]
#[augur::staged]
fn errors_name_their_line_and_column() {
    let err = |text: &str| parse(text).unwrap_err().to_string();
    assert_eq!(
        err("fn f() {\n  return y;\n}"),
        "line 2, column 10: unknown variable `y`"
    );
    assert_eq!(
        err("fn f() {\n  let x: i32 = 1;\n  let x: i32 = 2;\n}"),
        "line 3, column 7: `x` is declared twice"
    );
    assert_eq!(
        err("fn f() {\n  let x: i33 = 1;\n}"),
        "line 2, column 10: unknown type `i33`"
    );
    assert_eq!(
        err("fn f() {\n  g(1);\n}"),
        "line 2, column 3: unknown function `g`"
    );
    assert_eq!(
        err("fn f() {\n  let x: u8 = -1u8;\n}"),
        "line 2, column 16: `-1u8` is not a literal"
    );
    // Syntax is the parser's; the IR's invariants the verifier's.
    let f = parse("fn f() {\n  break;\n}").unwrap();
    let e = augur::ir::verify::verify(&f).unwrap_err();
    assert_eq!(e, "break or continue outside a loop");
    assert_eq!(
        err("fn f() {\n  x $ 1;\n}"),
        "line 2, column 5: unexpected `$`"
    );
    assert_eq!(
        err("fn f() {\n  return;\n"),
        "line 2, column 9: expected `}`"
    );
    assert_eq!(
        err("fn f() -> i32 {\n  return 1;\n}\nfn g() {\n}"),
        "line 4, column 1: text after the function"
    );
}
