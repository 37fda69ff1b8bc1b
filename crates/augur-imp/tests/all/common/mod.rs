//! Helpers the syntax tests share: expression and condition builders, and
//! parsing that panics with the text on failure.
#![allow(dead_code)] // each test file uses part of this module

use augur_imp::check::check;
use augur_imp::parse::{parse, parse_bexpr, parse_expr};
use augur_imp::{BExpr, Cmd, DiagnosticKind as Kind, Expr, Program};

pub fn num(n: i64) -> Expr {
    Expr::Num(n)
}

pub fn var(v: &str) -> Expr {
    Expr::Var(v.to_string())
}

pub fn add(a: Expr, b: Expr) -> Expr {
    Expr::Add(Box::new(a), Box::new(b))
}

pub fn sub(a: Expr, b: Expr) -> Expr {
    Expr::Sub(Box::new(a), Box::new(b))
}

pub fn mul(a: Expr, b: Expr) -> Expr {
    Expr::Mul(Box::new(a), Box::new(b))
}

pub fn not(b: BExpr) -> BExpr {
    BExpr::Not(Box::new(b))
}

pub fn and(a: BExpr, b: BExpr) -> BExpr {
    BExpr::And(Box::new(a), Box::new(b))
}

pub fn or(a: BExpr, b: BExpr) -> BExpr {
    BExpr::Or(Box::new(a), Box::new(b))
}

pub fn e(text: &str) -> Expr {
    parse_expr(text).unwrap_or_else(|err| panic!("{text:?}: {err}"))
}

pub fn b(text: &str) -> BExpr {
    parse_bexpr(text).unwrap_or_else(|err| panic!("{text:?}: {err}"))
}

pub fn p(text: &str) -> Program {
    parse(text).unwrap_or_else(|err| panic!("{text:?}: {err}"))
}

/// A program's labels and commands, without positions.
pub fn pairs(p: &Program) -> Vec<(String, Cmd)> {
    p.cmds
        .iter()
        .map(|c| (c.label.clone(), c.cmd.clone()))
        .collect()
}

/// The error `text` gives, as "line:col: message".
pub fn err(text: &str) -> String {
    match parse(text) {
        Ok(p) => panic!("{text:?} parsed as {p:?}"),
        Err(e) => e.to_string(),
    }
}

/// The kinds of `check`'s diagnostics, in order.
pub fn kinds(p: &Program) -> Vec<Kind> {
    check(p).iter().map(|d| d.kind).collect()
}
