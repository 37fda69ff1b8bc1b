//! Printing in the syntax of [`crate::parse`], with the fewest parentheses
//! that keep the tree: `parse(&p.to_string())` gives back `p`'s labels and
//! commands for every program whose variables and labels are valid names
//! (identifiers that are not keywords; labels may also be naturals).
//!
//! Negative literals print as `-3`, which the parser reads back as
//! `Num(-3)` wherever an operand may stand: `x - -3`, `-3 * x`,
//! `x := -9223372036854775808`.

use crate::ast::{BExpr, Cmd, Expr, Labelled, Program};
use std::fmt::{self, Formatter};

/// Binding strength of an expression's top operator; operands that bind
/// more loosely than their position needs get parentheses.
fn expr_level(e: &Expr) -> u8 {
    match e {
        Expr::Add(..) | Expr::Sub(..) => 1,
        Expr::Mul(..) => 2,
        Expr::Num(_) | Expr::Var(_) => 3,
    }
}

/// Writes `e` where an operand of at least `level` is needed.
fn write_expr(f: &mut Formatter<'_>, e: &Expr, level: u8) -> fmt::Result {
    if expr_level(e) < level {
        f.write_str("(")?;
        write_expr(f, e, 0)?;
        return f.write_str(")");
    }
    // Operators are left-associative, so a right operand at the same level
    // needs parentheses: `a - (b - c)`, `a + (b + c)`.
    let binary = |f: &mut Formatter<'_>, a, op, b, level| {
        write_expr(f, a, level)?;
        f.write_str(op)?;
        write_expr(f, b, level + 1)
    };
    match e {
        Expr::Num(n) => write!(f, "{n}"),
        Expr::Var(v) => f.write_str(v),
        Expr::Add(a, b) => binary(f, a, " + ", b, 1),
        Expr::Sub(a, b) => binary(f, a, " - ", b, 1),
        Expr::Mul(a, b) => binary(f, a, " * ", b, 2),
    }
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write_expr(f, self, 0)
    }
}

/// Binding strength of a condition's top operator, as for [`expr_level`].
fn bexpr_level(b: &BExpr) -> u8 {
    match b {
        BExpr::Or(..) => 1,
        BExpr::And(..) => 2,
        BExpr::Not(_) => 3,
        BExpr::True | BExpr::False | BExpr::Eq(..) | BExpr::Le(..) => 4,
    }
}

/// Writes `b` where an operand of at least `level` is needed.
fn write_bexpr(f: &mut Formatter<'_>, b: &BExpr, level: u8) -> fmt::Result {
    if bexpr_level(b) < level {
        f.write_str("(")?;
        write_bexpr(f, b, 0)?;
        return f.write_str(")");
    }
    let binary = |f: &mut Formatter<'_>, a, op, b, level| {
        write_bexpr(f, a, level)?;
        f.write_str(op)?;
        write_bexpr(f, b, level + 1)
    };
    match b {
        BExpr::True => f.write_str("true"),
        BExpr::False => f.write_str("false"),
        // Arithmetic binds tighter than `=` and `<=`: no parentheses.
        BExpr::Eq(x, y) => write!(f, "{x} = {y}"),
        BExpr::Le(x, y) => write!(f, "{x} <= {y}"),
        BExpr::Not(a) => {
            f.write_str("not ")?;
            write_bexpr(f, a, 3)
        }
        BExpr::And(a, c) => binary(f, a, " and ", c, 2),
        BExpr::Or(a, c) => binary(f, a, " or ", c, 1),
    }
}

impl fmt::Display for BExpr {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write_bexpr(f, self, 0)
    }
}

impl fmt::Display for Cmd {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Cmd::Skip => f.write_str("skip"),
            Cmd::Assign(v, e) => write!(f, "{v} := {e}"),
            Cmd::IfGoto(b, g) => write!(f, "if {b} then {g}"),
            Cmd::Goto(g) => write!(f, "goto {g}"),
            Cmd::Halt => f.write_str("halt"),
            Cmd::Done => f.write_str("done"),
        }
    }
}

impl fmt::Display for Labelled {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.label, self.cmd)
    }
}

/// One command per line, each line ending in a newline.
impl fmt::Display for Program {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        for c in &self.cmds {
            writeln!(f, "{c}")?;
        }
        Ok(())
    }
}
