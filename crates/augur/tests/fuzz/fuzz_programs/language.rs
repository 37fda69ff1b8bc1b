//! The fuzzed language: a tiny structured language (`while`, `if`,
//! `break`/`continue`/`return`, plain and static repetitions, plain
//! first-stage values) over wrapping `i32` variables, its bounds, and its
//! pseudo-C `Display` for failure reports.

use std::fmt;

/// General-purpose variables `v0..v3`; loop counters come after them.
pub(crate) const VARS: usize = 4;
/// Largest nesting depth of statements.
pub(crate) const MAX_DEPTH: u32 = 4;
/// Largest number of statements in a program.
pub(crate) const MAX_STMTS: usize = 25;
/// Largest product of the counts of nested plain `Repeat`s. The engine tells
/// a plain Rust loop around a dyn branch from a dyn loop by auditing 16 more
/// turns (`Builder::loop_audit_rounds`): nested `Repeat`s whose counts
/// multiply past 17 would present more identical turns than that, which is
/// the documented limit, not a bug. 4 × 4 = 16 stays inside it.
pub(crate) const MAX_PLAIN_UNROLL: u32 = 16;
/// Largest product of all nested repetition counts, to bound code size.
pub(crate) const MAX_UNROLL: u32 = 32;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BinOp {
    Add,
    Sub,
    Mul,
    And,
    Or,
    Xor,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CmpOp {
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Expr {
    /// A variable: `v0..v3`, or a loop counter (`VARS + n`).
    Var(usize),
    /// A parameter: `a` (0) or `b` (1).
    Param(usize),
    Const(i32),
    Bin(BinOp, Box<Expr>, Box<Expr>),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Cond {
    Cmp(CmpOp, Expr, Expr),
    Not(Box<Cond>),
    And(Box<Cond>, Box<Cond>),
    Or(Box<Cond>, Box<Cond>),
}

/// What a `while` counts up to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Bound {
    Param(usize),
    Const(i32),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Stmt {
    /// `v = e` (never a loop counter, so every loop terminates).
    Assign(usize, Expr),
    If(Cond, Box<Stmt>, Box<Stmt>),
    /// `c = 0; while (c < bound) { c = c + 1; body }`: the increment comes
    /// first so that `continue` cannot skip it.
    While {
        counter: usize,
        bound: Bound,
        body: Box<Stmt>,
    },
    Break,
    Continue,
    Return(Expr),
    Block(Vec<Stmt>),
    /// The body `k` times, unrolled by a plain Rust `for` in the first stage.
    Repeat(u32, Box<Stmt>),
    /// The body `k` times, unrolled by `augur::range` in the first stage.
    StaticRepeat(u32, Box<Stmt>),
    /// `k` turns (up to 100) of a plain Rust `for` whose `break` and
    /// `continue` are its own: a plain loop with dyn exits.
    PlainLoop(u32, Box<Stmt>),
    /// Sets the walk's plain first-stage value (a plain `i32` the staged
    /// walk carries in locals, never a `Dyn`).
    SetPlain(i32),
    /// `v = v + plain`: the plain value decides the operation, however far
    /// after the `if` that set it.
    UsePlain(usize),
}

/// How variable `v` starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Init {
    Zero,
    Param(usize),
    Const(i32),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Program {
    /// One per general variable.
    pub(crate) inits: Vec<Init>,
    /// Loop counters, all declared up front (starting at 0).
    pub(crate) counters: usize,
    pub(crate) body: Stmt,
}

/// How a statement ended; `Return` carries the value (`i32` in the
/// reference, `Dyn<i32>` in the staged walk).
pub(crate) enum Flow<V> {
    Normal,
    Break,
    Continue,
    Return(V),
}

/// Programs print as pseudo-C, for failure reports.
impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expr::Var(v) if *v < VARS => write!(f, "v{v}"),
            Expr::Var(v) => write!(f, "c{}", v - VARS),
            Expr::Param(p) => write!(f, "{}", ["a", "b"][*p]),
            Expr::Const(c) => write!(f, "{c}"),
            Expr::Bin(op, a, b) => {
                let op = match op {
                    BinOp::Add => "+",
                    BinOp::Sub => "-",
                    BinOp::Mul => "*",
                    BinOp::And => "&",
                    BinOp::Or => "|",
                    BinOp::Xor => "^",
                };
                write!(f, "({a} {op} {b})")
            }
        }
    }
}

impl fmt::Display for Cond {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Cond::Cmp(op, a, b) => {
                let op = match op {
                    CmpOp::Lt => "<",
                    CmpOp::Le => "<=",
                    CmpOp::Gt => ">",
                    CmpOp::Ge => ">=",
                    CmpOp::Eq => "==",
                    CmpOp::Ne => "!=",
                };
                write!(f, "{a} {op} {b}")
            }
            Cond::Not(c) => write!(f, "!({c})"),
            Cond::And(a, b) => write!(f, "({a}) && ({b})"),
            Cond::Or(a, b) => write!(f, "({a}) || ({b})"),
        }
    }
}

impl Stmt {
    fn write(&self, f: &mut fmt::Formatter<'_>, indent: usize) -> fmt::Result {
        let pad = "  ".repeat(indent);
        let body = |f: &mut fmt::Formatter<'_>, s: &Stmt| -> fmt::Result {
            match s {
                Stmt::Block(ss) => ss.iter().try_for_each(|s| s.write(f, indent + 1)),
                s => s.write(f, indent + 1),
            }
        };
        match self {
            Stmt::Assign(v, e) => writeln!(f, "{pad}{} = {e};", Expr::Var(*v)),
            Stmt::If(c, t, e) => {
                writeln!(f, "{pad}if ({c}) {{")?;
                body(f, t)?;
                if !matches!(&**e, Stmt::Block(ss) if ss.is_empty()) {
                    writeln!(f, "{pad}}} else {{")?;
                    body(f, e)?;
                }
                writeln!(f, "{pad}}}")
            }
            Stmt::While {
                counter,
                bound,
                body: b,
            } => {
                let c = Expr::Var(*counter);
                let bound = match bound {
                    Bound::Param(p) => Expr::Param(*p),
                    Bound::Const(k) => Expr::Const(*k),
                };
                writeln!(f, "{pad}{c} = 0;")?;
                writeln!(f, "{pad}while ({c} < {bound}) {{")?;
                writeln!(f, "{pad}  {c} = {c} + 1;")?;
                body(f, b)?;
                writeln!(f, "{pad}}}")
            }
            Stmt::Break => writeln!(f, "{pad}break;"),
            Stmt::Continue => writeln!(f, "{pad}continue;"),
            Stmt::Return(e) => writeln!(f, "{pad}return {e};"),
            Stmt::Block(ss) => {
                writeln!(f, "{pad}{{")?;
                ss.iter().try_for_each(|s| s.write(f, indent + 1))?;
                writeln!(f, "{pad}}}")
            }
            Stmt::Repeat(k, b) => {
                writeln!(f, "{pad}repeat {k} {{")?;
                body(f, b)?;
                writeln!(f, "{pad}}}")
            }
            Stmt::StaticRepeat(k, b) => {
                writeln!(f, "{pad}static_repeat {k} {{")?;
                body(f, b)?;
                writeln!(f, "{pad}}}")
            }
            Stmt::PlainLoop(k, b) => {
                writeln!(f, "{pad}plain_loop {k} {{")?;
                body(f, b)?;
                writeln!(f, "{pad}}}")
            }
            Stmt::SetPlain(c) => writeln!(f, "{pad}plain = {c};"),
            Stmt::UsePlain(v) => writeln!(f, "{pad}{0} = {0} + plain;", Expr::Var(*v)),
        }
    }
}

impl fmt::Display for Program {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, init) in self.inits.iter().enumerate() {
            match init {
                Init::Zero => writeln!(f, "v{i} = 0;")?,
                Init::Param(p) => writeln!(f, "v{i} = {};", Expr::Param(*p))?,
                Init::Const(c) => writeln!(f, "v{i} = {c};")?,
            }
        }
        match &self.body {
            Stmt::Block(ss) => ss.iter().try_for_each(|s| s.write(f, 0))?,
            s => s.write(f, 0)?,
        }
        writeln!(
            f,
            "return combine(v0..v3, c0..c{});",
            self.counters.max(1) - 1
        )
    }
}
