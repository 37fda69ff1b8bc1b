//! Random well-formed programs, for property tests and cross-checks.

use crate::ast::{BExpr, Cmd, Expr, Program};

/// The generator: splitmix64, shared with augur's other tests and fuzzers;
/// the seed reproduces a program.
pub use augur_rng::Rng;

/// Shape of the generated programs.
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    /// Commands before the final `halt; done`.
    pub commands: u64,
    /// Variables `a`, `b`, … used.
    pub variables: u64,
    /// Assign every variable first, so that no execution reads an unset one.
    pub initialise: bool,
}

impl Default for Shape {
    fn default() -> Self {
        Shape {
            commands: 12,
            variables: 4,
            initialise: true,
        }
    }
}

fn var(r: &mut Rng, s: Shape) -> String {
    ((b'a' + r.below(s.variables) as u8) as char).to_string()
}

fn expr(r: &mut Rng, s: Shape, depth: u32) -> Expr {
    match r.below(if depth == 0 { 2 } else { 5 }) {
        0 => Expr::Num(r.below(21) as i64 - 10),
        1 => Expr::Var(var(r, s)),
        k => {
            let (a, b) = (
                Box::new(expr(r, s, depth - 1)),
                Box::new(expr(r, s, depth - 1)),
            );
            match k {
                2 => Expr::Add(a, b),
                3 => Expr::Sub(a, b),
                _ => Expr::Mul(a, b),
            }
        }
    }
}

fn bexpr(r: &mut Rng, s: Shape, depth: u32) -> BExpr {
    match r.below(if depth == 0 { 4 } else { 7 }) {
        0 => BExpr::True,
        1 => BExpr::False,
        2 => BExpr::Eq(expr(r, s, 1), expr(r, s, 1)),
        3 => BExpr::Le(expr(r, s, 1), expr(r, s, 1)),
        4 => BExpr::Not(Box::new(bexpr(r, s, depth - 1))),
        5 => BExpr::And(
            Box::new(bexpr(r, s, depth - 1)),
            Box::new(bexpr(r, s, depth - 1)),
        ),
        _ => BExpr::Or(
            Box::new(bexpr(r, s, depth - 1)),
            Box::new(bexpr(r, s, depth - 1)),
        ),
    }
}

/// A random well-formed program: labels `l0`, `l1`, …; every goto target
/// exists; the last two commands are `halt` and `done`. Loops (backward
/// gotos) are common, so executions may not terminate.
pub fn program(r: &mut Rng, s: Shape) -> Program {
    let inits = if s.initialise { s.variables } else { 0 };
    let n = inits + s.commands + 2;
    let label = |i: u64| format!("l{i}");
    let mut cmds = Vec::new();
    for i in 0..inits {
        let v = ((b'a' + i as u8) as char).to_string();
        cmds.push((label(i), Cmd::Assign(v, Expr::Num(r.below(7) as i64))));
    }
    for i in inits..inits + s.commands {
        let target = label(r.below(n));
        let cmd = match r.below(10) {
            0 => Cmd::Skip,
            1..=5 => Cmd::Assign(var(r, s), expr(r, s, 2)),
            6..=8 => Cmd::IfGoto(bexpr(r, s, 2), target),
            _ => Cmd::Goto(target),
        };
        cmds.push((label(i), cmd));
    }
    cmds.push((label(n - 2), Cmd::Halt));
    cmds.push((label(n - 1), Cmd::Done));
    Program::from_cmds(cmds)
}
