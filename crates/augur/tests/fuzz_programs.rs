//! Randomized differential test: random programs of a tiny structured
//! language are run three ways and must agree.
//!
//! * a plain Rust evaluator of the AST (wrapping `i32` arithmetic) is the
//!   reference;
//! * a *staged interpreter* walks the same AST over `Dyn<i32>` variables, so
//!   extraction turns each program into a C function (extracted twice: the
//!   C must be the same, without gotos); its IR is run in the IR
//!   interpreter (every program) and its C is compiled and called (one
//!   program in eight, since a C compile costs far more than an extraction).
//!
//! The staged walk is written the way a DSL author would write it: a plain
//! Rust recursion that carries a plain first-stage value (`SetPlain`,
//! `UsePlain`: set on one side of a dyn `if`, read any distance later).
//! `Repeat` is a plain Rust `for`, `PlainLoop` a plain `for` of up to 100
//! turns with its own dyn `break`/`continue`, `StaticRepeat` uses
//! `augur::range`. Every program is extracted under the *plain* walk (a
//! plain `for` over a block's statements, in functions under
//! `#[augur::staged]`: exact for every program), and programs without plain
//! values or long plain loops also under the *indexed* walk (`augur::range`
//! over the statement index, no attribute: the engine finds `Repeat`'s plain
//! loops by itself).
//!
//! Environment: `AUGUR_FUZZ_CASES=N` runs N programs instead of the
//! default, `AUGUR_FUZZ_SEED=S` starts at seed S. Case `i` uses seed `S + i`
//! alone, so a failing case is reproduced by `AUGUR_FUZZ_SEED=<its seed>
//! AUGUR_FUZZ_CASES=1`. A failure prints the seed, the program (as pseudo-C
//! and as Rust `Debug`), the generated C and the inputs, then the smallest
//! failing program the shrinker found. Every failure fails: the one outcome
//! other than exact code that is accepted is the specified error of
//! [`documented_limit`].
//! `AUGUR_FUZZ_VERBOSE=1` prints one line per program (with `--nocapture`).

mod common;

use common::Rng;

use augur::{Builder, Dyn, Extracted, Stats, Value};
use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};

// ---------------------------------------------------------------------------
// The language.

/// General-purpose variables `v0..v3`; loop counters come after them.
const VARS: usize = 4;
/// Largest nesting depth of statements.
const MAX_DEPTH: u32 = 4;
/// Largest number of statements in a program.
const MAX_STMTS: usize = 25;
/// Largest product of the counts of nested plain `Repeat`s. The engine tells
/// a plain Rust loop around a dyn branch from a dyn loop by auditing 16 more
/// turns (`Builder::loop_audit_rounds`): nested `Repeat`s whose counts
/// multiply past 17 would present more identical turns than that, which is
/// the documented limit, not a bug. 4 × 4 = 16 stays inside it.
const MAX_PLAIN_UNROLL: u32 = 16;
/// Largest product of all nested repetition counts, to bound code size.
const MAX_UNROLL: u32 = 32;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BinOp {
    Add,
    Sub,
    Mul,
    And,
    Or,
    Xor,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum CmpOp {
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Expr {
    /// A variable: `v0..v3`, or a loop counter (`VARS + n`).
    Var(usize),
    /// A parameter: `a` (0) or `b` (1).
    Param(usize),
    Const(i32),
    Bin(BinOp, Box<Expr>, Box<Expr>),
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Cond {
    Cmp(CmpOp, Expr, Expr),
    Not(Box<Cond>),
    And(Box<Cond>, Box<Cond>),
    Or(Box<Cond>, Box<Cond>),
}

/// What a `while` counts up to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Bound {
    Param(usize),
    Const(i32),
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Stmt {
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
enum Init {
    Zero,
    Param(usize),
    Const(i32),
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Program {
    /// One per general variable.
    inits: Vec<Init>,
    /// Loop counters, all declared up front (starting at 0).
    counters: usize,
    body: Stmt,
}

/// How a statement ended; `Return` carries the value (`i32` in the
/// reference, `Dyn<i32>` in the staged walk).
enum Flow<V> {
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

/// Where a statement is generated.
#[derive(Clone)]
struct Ctx {
    depth: u32,
    /// Counters of the enclosing `while`s, readable in expressions.
    counters: Vec<usize>,
    /// Inside a `while` or a plain loop: an `if` there may `break`.
    in_loop: bool,
    /// Under an `if` inside the innermost loop: `break`/`continue` allowed.
    loop_guarded: bool,
    /// Plain-value statements may be made.
    plain_values: bool,
    /// Under an `if`: `return` allowed.
    guarded: bool,
    plain_unroll: u32,
    unroll: u32,
}

struct Gen {
    rng: Rng,
    stmts_left: usize,
    counters: usize,
}

impl Gen {
    fn constant(&mut self) -> i32 {
        if self.rng.chance(80) {
            self.rng.below(13) as i32 - 4
        } else {
            // Values that make wrapping and bit operations matter.
            self.rng.pick(&[
                i32::MIN,
                i32::MAX,
                -1,
                0x5555_5555,
                0x0f0f,
                1 << 16,
                1000,
                -77,
            ])
        }
    }

    fn expr(&mut self, ctx: &Ctx, depth: u32) -> Expr {
        if depth == 0 || self.rng.chance(40) {
            return match self.rng.below(10) {
                0..=4 => {
                    // Counters of enclosing loops are readable too.
                    let n = VARS + ctx.counters.len();
                    let i = self.rng.below(n as u64) as usize;
                    Expr::Var(if i < VARS { i } else { ctx.counters[i - VARS] })
                }
                5..=6 => Expr::Param(self.rng.below(2) as usize),
                _ => Expr::Const(self.constant()),
            };
        }
        let op = self.rng.pick(&[
            BinOp::Add,
            BinOp::Sub,
            BinOp::Mul,
            BinOp::And,
            BinOp::Or,
            BinOp::Xor,
        ]);
        Expr::Bin(
            op,
            Box::new(self.expr(ctx, depth - 1)),
            Box::new(self.expr(ctx, depth - 1)),
        )
    }

    fn cond(&mut self, ctx: &Ctx, depth: u32) -> Cond {
        match self.rng.below(10) {
            0 if depth > 0 => Cond::Not(Box::new(self.cond(ctx, depth - 1))),
            1 if depth > 0 => Cond::And(
                Box::new(self.cond(ctx, depth - 1)),
                Box::new(self.cond(ctx, depth - 1)),
            ),
            2 if depth > 0 => Cond::Or(
                Box::new(self.cond(ctx, depth - 1)),
                Box::new(self.cond(ctx, depth - 1)),
            ),
            _ => {
                let op = self.rng.pick(&[
                    CmpOp::Lt,
                    CmpOp::Le,
                    CmpOp::Gt,
                    CmpOp::Ge,
                    CmpOp::Eq,
                    CmpOp::Ne,
                ]);
                Cond::Cmp(op, self.expr(ctx, 2), self.expr(ctx, 1))
            }
        }
    }

    fn block(&mut self, ctx: &Ctx) -> Vec<Stmt> {
        let n = 1 + self.rng.below(4) as usize;
        let mut v = Vec::new();
        for _ in 0..n {
            if self.stmts_left == 0 {
                break;
            }
            v.push(self.stmt(ctx));
        }
        v
    }

    fn stmt(&mut self, ctx: &Ctx) -> Stmt {
        self.stmts_left = self.stmts_left.saturating_sub(1);
        let inner = Ctx {
            depth: ctx.depth + 1,
            ..ctx.clone()
        };
        // Early exits only under an `if`, so they do not make the rest of
        // their block dead on every path.
        let roll = self.rng.below(100);
        if ctx.loop_guarded && roll < 10 {
            return if roll < 5 {
                Stmt::Break
            } else {
                Stmt::Continue
            };
        }
        if ctx.guarded && roll >= 96 {
            return Stmt::Return(self.expr(ctx, 2));
        }
        if ctx.plain_values && roll < 25 {
            return if self.rng.chance(50) {
                Stmt::SetPlain(self.rng.below(7) as i32 - 3)
            } else {
                Stmt::UsePlain(self.rng.below(VARS as u64) as usize)
            };
        }
        if ctx.depth >= MAX_DEPTH || self.stmts_left == 0 {
            return Stmt::Assign(self.rng.below(VARS as u64) as usize, self.expr(ctx, 3));
        }
        // A long plain loop with dyn exits, where nothing else repeats (so
        // the code stays small).
        if ctx.plain_values && ctx.unroll == 1 && self.rng.chance(8) {
            let k = 1 + self.rng.below(100) as u32;
            let body_ctx = Ctx {
                in_loop: true,
                loop_guarded: false,
                plain_unroll: MAX_PLAIN_UNROLL,
                // Past the bound: nothing repeats inside.
                unroll: MAX_UNROLL + 1,
                ..inner
            };
            return Stmt::PlainLoop(k, Box::new(Stmt::Block(self.block(&body_ctx))));
        }
        match self.rng.below(100) {
            0..=29 => Stmt::Assign(self.rng.below(VARS as u64) as usize, self.expr(ctx, 3)),
            30..=54 => {
                let then_ctx = Ctx {
                    loop_guarded: ctx.in_loop,
                    guarded: true,
                    ..inner
                };
                let c = self.cond(ctx, 1);
                let t = self.stmt(&then_ctx);
                let e = if self.rng.chance(40) && self.stmts_left > 0 {
                    self.stmt(&then_ctx)
                } else {
                    Stmt::Block(vec![])
                };
                Stmt::If(c, Box::new(t), Box::new(e))
            }
            // No dyn loops inside a long plain loop: they are covered
            // inside `Repeat`s, and a hundred of them make programs of tens
            // of thousands of operations.
            55..=69 if ctx.unroll <= MAX_UNROLL => {
                let counter = VARS + self.counters;
                self.counters += 1;
                let bound = if self.rng.chance(60) {
                    Bound::Param(self.rng.below(2) as usize)
                } else {
                    Bound::Const(self.rng.below(5) as i32)
                };
                let mut counters = ctx.counters.clone();
                counters.push(counter);
                let body_ctx = Ctx {
                    counters,
                    in_loop: true,
                    loop_guarded: false,
                    ..inner
                };
                let body = Stmt::Block(self.block(&body_ctx));
                Stmt::While {
                    counter,
                    bound,
                    body: Box::new(body),
                }
            }
            70..=79 => Stmt::Block(self.block(&inner)),
            80..=89 if ctx.plain_unroll * 2 <= MAX_PLAIN_UNROLL && ctx.unroll * 2 <= MAX_UNROLL => {
                let room = (MAX_PLAIN_UNROLL / ctx.plain_unroll).min(MAX_UNROLL / ctx.unroll);
                let k = 1 + self.rng.below(room.min(4) as u64) as u32;
                let body_ctx = Ctx {
                    plain_unroll: ctx.plain_unroll * k,
                    unroll: ctx.unroll * k,
                    ..inner
                };
                Stmt::Repeat(k, Box::new(Stmt::Block(self.block(&body_ctx))))
            }
            90..=99 if ctx.unroll * 2 <= MAX_UNROLL => {
                let k = 1 + self.rng.below((MAX_UNROLL / ctx.unroll).min(4) as u64) as u32;
                let body_ctx = Ctx {
                    unroll: ctx.unroll * k,
                    ..inner
                };
                Stmt::StaticRepeat(k, Box::new(Stmt::Block(self.block(&body_ctx))))
            }
            _ => Stmt::Assign(self.rng.below(VARS as u64) as usize, self.expr(ctx, 3)),
        }
    }
}

/// The program of seed `seed`.
fn generate(seed: u64) -> Program {
    let mut g = Gen {
        rng: Rng(seed),
        stmts_left: MAX_STMTS,
        counters: 0,
    };
    let inits = (0..VARS)
        .map(|_| match g.rng.below(4) {
            0 | 1 => Init::Zero,
            2 => Init::Param(g.rng.below(2) as usize),
            _ => Init::Const(g.constant()),
        })
        .collect();
    // One program in three uses the plain-value statements and long plain
    // loops, which only the annotated walk extracts exactly.
    let plain_values = g.rng.chance(33);
    let ctx = Ctx {
        depth: 1,
        counters: vec![],
        in_loop: false,
        loop_guarded: false,
        plain_values,
        guarded: false,
        plain_unroll: 1,
        unroll: 1,
    };
    let mut body = Vec::new();
    while g.stmts_left > 0 && body.len() < 6 {
        body.push(g.stmt(&ctx));
        if g.rng.chance(20) {
            break;
        }
    }
    Program {
        inits,
        counters: g.counters,
        body: Stmt::Block(body),
    }
}

// ---------------------------------------------------------------------------
// The reference evaluator.

fn bin(op: BinOp, a: i32, b: i32) -> i32 {
    match op {
        BinOp::Add => a.wrapping_add(b),
        BinOp::Sub => a.wrapping_sub(b),
        BinOp::Mul => a.wrapping_mul(b),
        BinOp::And => a & b,
        BinOp::Or => a | b,
        BinOp::Xor => a ^ b,
    }
}

fn cmp(op: CmpOp, a: i32, b: i32) -> bool {
    match op {
        CmpOp::Lt => a < b,
        CmpOp::Le => a <= b,
        CmpOp::Gt => a > b,
        CmpOp::Ge => a >= b,
        CmpOp::Eq => a == b,
        CmpOp::Ne => a != b,
    }
}

struct Reference {
    vars: Vec<i32>,
    params: [i32; 2],
    plain: i32,
}

impl Reference {
    fn expr(&self, e: &Expr) -> i32 {
        match e {
            Expr::Var(v) => self.vars[*v],
            Expr::Param(p) => self.params[*p],
            Expr::Const(c) => *c,
            Expr::Bin(op, a, b) => bin(*op, self.expr(a), self.expr(b)),
        }
    }

    fn cond(&self, c: &Cond) -> bool {
        match c {
            Cond::Cmp(op, a, b) => cmp(*op, self.expr(a), self.expr(b)),
            Cond::Not(c) => !self.cond(c),
            Cond::And(a, b) => self.cond(a) && self.cond(b),
            Cond::Or(a, b) => self.cond(a) || self.cond(b),
        }
    }

    fn stmt(&mut self, s: &Stmt) -> Flow<i32> {
        match s {
            Stmt::Assign(v, e) => self.vars[*v] = self.expr(e),
            Stmt::If(c, t, e) => {
                return if self.cond(c) {
                    self.stmt(t)
                } else {
                    self.stmt(e)
                }
            }
            Stmt::While {
                counter,
                bound,
                body,
            } => {
                self.vars[*counter] = 0;
                let bound = match bound {
                    Bound::Param(p) => self.params[*p],
                    Bound::Const(c) => *c,
                };
                while self.vars[*counter] < bound {
                    self.vars[*counter] += 1;
                    match self.stmt(body) {
                        Flow::Normal | Flow::Continue => {}
                        Flow::Break => break,
                        r @ Flow::Return(_) => return r,
                    }
                }
            }
            Stmt::Break => return Flow::Break,
            Stmt::Continue => return Flow::Continue,
            Stmt::Return(e) => return Flow::Return(self.expr(e)),
            Stmt::Block(ss) => {
                for s in ss {
                    match self.stmt(s) {
                        Flow::Normal => {}
                        other => return other,
                    }
                }
            }
            Stmt::Repeat(k, body) | Stmt::StaticRepeat(k, body) => {
                for _ in 0..*k {
                    match self.stmt(body) {
                        Flow::Normal => {}
                        other => return other,
                    }
                }
            }
            Stmt::PlainLoop(k, body) => {
                for _ in 0..*k {
                    match self.stmt(body) {
                        Flow::Normal | Flow::Continue => {}
                        Flow::Break => break,
                        r @ Flow::Return(_) => return r,
                    }
                }
            }
            Stmt::SetPlain(c) => self.plain = *c,
            Stmt::UsePlain(v) => self.vars[*v] = self.vars[*v].wrapping_add(self.plain),
        }
        Flow::Normal
    }
}

/// What a program returns when it does not `return`: every variable,
/// counters included, folded together.
fn combine(vars: &[i32]) -> i32 {
    vars.iter()
        .fold(17i32, |h, &v| h.wrapping_mul(31).wrapping_add(v))
}

fn initial(p: &Program, params: [i32; 2]) -> Vec<i32> {
    let mut vars: Vec<i32> = p
        .inits
        .iter()
        .map(|i| match i {
            Init::Zero => 0,
            Init::Param(k) => params[*k],
            Init::Const(c) => *c,
        })
        .collect();
    vars.resize(VARS + p.counters, 0);
    vars
}

fn evaluate(p: &Program, a: i32, b: i32) -> i32 {
    let mut r = Reference {
        vars: initial(p, [a, b]),
        params: [a, b],
        plain: 0,
    };
    match r.stmt(&p.body) {
        Flow::Return(v) => v,
        _ => combine(&r.vars),
    }
}

// ---------------------------------------------------------------------------
// The staged interpreter.

/// A staged operand: a `Dyn` or a first-stage constant, so that literals end
/// up on either side of operators (`x + 3`, `3 - x`) as they would in
/// hand-written staged code.
#[derive(Clone, Copy)]
enum Val {
    D(Dyn<i32>),
    C(i32),
}

impl Val {
    fn dyn_(self) -> Dyn<i32> {
        match self {
            Val::D(d) => d,
            Val::C(c) => Dyn::lit(c),
        }
    }
}

fn staged_bin(op: BinOp, a: Val, b: Val) -> Val {
    macro_rules! apply {
        ($op:tt) => {
            match (a, b) {
                (Val::D(x), Val::D(y)) => x $op y,
                (Val::D(x), Val::C(y)) => x $op y,
                (Val::C(x), Val::D(y)) => x $op y,
                // Two constants: a `Dyn` on the left, so the C does the
                // arithmetic (and the engine sees a literal operand).
                (Val::C(x), Val::C(y)) => Dyn::lit(x) $op y,
            }
        };
    }
    Val::D(match op {
        BinOp::Add => apply!(+),
        BinOp::Sub => apply!(-),
        BinOp::Mul => apply!(*),
        BinOp::And => apply!(&),
        BinOp::Or => apply!(|),
        BinOp::Xor => apply!(^),
    })
}

/// How the staged walk goes through the statements of a block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Walk {
    /// A plain Rust `for`, in functions under `#[augur::staged]`: every
    /// statement of a block is walked from the same call path, so only the
    /// attribute's turn counters tell them apart, and the plain value lives
    /// in tracked locals. Every program must extract exactly.
    Plain,
    /// `augur::range` over the statement index, without the attribute: the
    /// index is part of every tag (like the program counter of a staged
    /// bytecode interpreter), so only `Repeat` leaves the engine a plain
    /// loop to detect by itself. Programs with plain values or long plain
    /// loops are not walked this way (their plain state is invisible).
    Indexed,
}

/// Everything a walk needs: the variables and parameters.
struct Vars {
    vars: Vec<Dyn<i32>>,
    params: [Dyn<i32>; 2],
}

impl Vars {
    fn expr(&self, e: &Expr) -> Val {
        match e {
            Expr::Var(v) => Val::D(self.vars[*v]),
            Expr::Param(p) => Val::D(self.params[*p]),
            Expr::Const(c) => Val::C(*c),
            Expr::Bin(op, a, b) => staged_bin(*op, self.expr(a), self.expr(b)),
        }
    }

    fn cond(&self, c: &Cond) -> Dyn<bool> {
        match c {
            Cond::Cmp(op, a, b) => {
                let (a, b) = (self.expr(a).dyn_(), self.expr(b));
                macro_rules! with_rhs {
                    ($m:ident) => {
                        match b {
                            Val::D(y) => a.$m(y),
                            Val::C(y) => a.$m(y),
                        }
                    };
                }
                match op {
                    CmpOp::Lt => with_rhs!(lt),
                    CmpOp::Le => with_rhs!(le),
                    CmpOp::Gt => with_rhs!(gt),
                    CmpOp::Ge => with_rhs!(ge),
                    CmpOp::Eq => with_rhs!(eq),
                    CmpOp::Ne => with_rhs!(ne),
                }
            }
            Cond::Not(c) => !self.cond(c),
            Cond::And(a, b) => self.cond(a).and(self.cond(b)),
            Cond::Or(a, b) => self.cond(a).or(self.cond(b)),
        }
    }
}

/// What a statement did: how it ended, and the plain value after it.
type Out = (Flow<Dyn<i32>>, i32);

/// The staged walk, written the way a DSL author would write an
/// interpreter: plain Rust recursion, the plain value passed down and
/// handed back up, `plain = ...` in the callers' locals. `$walk` says how a
/// block's statements are walked; `$attr` is the attribute (or nothing).
macro_rules! staged_walk {
    ($name:ident, $walk:expr, $(#[$attr:meta])*) => {
        struct $name(Vars);

        $(#[$attr])*
        impl $name {
            /// Walks `s`. Without the attribute, the recursive calls must
            /// not be tail calls: in an optimized build a tail call reuses
            /// its caller's frame, so an `if` nested in an `if` would take
            /// its tags from its parent's return addresses (the attribute's
            /// frame guard does the same; `black_box` keeps both walks the
            /// same program).
            fn stmt(&self, s: &Stmt, plain: i32) -> Out {
                let out = self.stmt_inner(s, plain);
                std::hint::black_box(&out);
                out
            }

            /// Walks `items` in order with a plain `for`, carrying the
            /// plain value; stops at the first that does not end normally.
            fn sequence<'s>(&self, items: impl Iterator<Item = &'s Stmt>, plain: i32) -> Out {
                let mut plain = plain;
                for s in items {
                    let (flow, after) = self.stmt(s, plain);
                    plain = after;
                    if !matches!(flow, Flow::Normal) {
                        return (flow, plain);
                    }
                }
                (Flow::Normal, plain)
            }

            fn stmt_inner(&self, s: &Stmt, plain: i32) -> Out {
                let v = &self.0;
                match s {
                    Stmt::Assign(x, e) => match v.expr(e) {
                        Val::D(d) => v.vars[*x].set(d),
                        Val::C(c) => v.vars[*x].set(c),
                    },
                    Stmt::If(c, t, e) => {
                        return if v.cond(c).is_true() {
                            self.stmt(t, plain)
                        } else {
                            self.stmt(e, plain)
                        }
                    }
                    Stmt::While {
                        counter,
                        bound,
                        body,
                    } => {
                        let ctr = v.vars[*counter];
                        ctr.set(0);
                        // A dyn loop: the Rust `loop` repeats the same
                        // decision, and the engine closes it into a C loop.
                        let mut plain = plain;
                        loop {
                            let go = match bound {
                                Bound::Param(p) => ctr.lt(v.params[*p]),
                                Bound::Const(c) => ctr.lt(*c),
                            };
                            if !go.is_true() {
                                break;
                            }
                            ctr.set(ctr + 1);
                            let (flow, after) = self.stmt(body, plain);
                            plain = after;
                            match flow {
                                Flow::Normal | Flow::Continue => {}
                                Flow::Break => break,
                                r @ Flow::Return(_) => return (r, plain),
                            }
                        }
                        return (Flow::Normal, plain);
                    }
                    Stmt::Break => return (Flow::Break, plain),
                    Stmt::Continue => return (Flow::Continue, plain),
                    Stmt::Return(e) => return (Flow::Return(v.expr(e).dyn_()), plain),
                    Stmt::Block(ss) if $walk == Walk::Plain => {
                        return self.sequence(ss.iter(), plain)
                    }
                    Stmt::Block(ss) => {
                        return self.sequence(augur::range(0..ss.len()).map(|i| &ss[i]), plain)
                    }
                    // A plain Rust loop around (possibly) dyn branches.
                    Stmt::Repeat(k, body) => {
                        return self.sequence(std::iter::repeat_n(&**body, *k as usize), plain)
                    }
                    // The same with the counter visible to tags.
                    Stmt::StaticRepeat(k, body) => {
                        return self.sequence(augur::range(0..*k).map(|_| &**body), plain)
                    }
                    // A plain loop with its own (dyn) exits.
                    Stmt::PlainLoop(k, body) => {
                        let mut plain = plain;
                        for _ in 0..*k {
                            let (flow, after) = self.stmt(body, plain);
                            plain = after;
                            match flow {
                                Flow::Normal | Flow::Continue => {}
                                Flow::Break => break,
                                r @ Flow::Return(_) => return (r, plain),
                            }
                        }
                        return (Flow::Normal, plain);
                    }
                    Stmt::SetPlain(c) => return (Flow::Normal, *c),
                    Stmt::UsePlain(x) => v.vars[*x].set(v.vars[*x] + plain),
                }
                (Flow::Normal, plain)
            }
        }
    };
}

staged_walk!(Annotated, Walk::Plain, #[augur::staged]);
staged_walk!(Bare, Walk::Indexed,);

/// The staged program: declares every variable up front, runs the walk,
/// returns what the program returns or the combination of its variables.
fn stage(p: &Program, walk: Walk, a: Dyn<i32>, b: Dyn<i32>) -> Dyn<i32> {
    let params = [a, b];
    let mut vars: Vec<Dyn<i32>> = p
        .inits
        .iter()
        .map(|i| match i {
            Init::Zero => Dyn::new(0),
            Init::Param(k) => Dyn::new(params[*k]),
            Init::Const(c) => Dyn::new(*c),
        })
        .collect();
    vars.extend((0..p.counters).map(|_| Dyn::new(0)));
    let v = Vars { vars, params };
    let (flow, v) = match walk {
        Walk::Plain => {
            let w = Annotated(v);
            (w.stmt(&p.body, 0).0, w.0)
        }
        Walk::Indexed => {
            let w = Bare(v);
            (w.stmt(&p.body, 0).0, w.0)
        }
    };
    match flow {
        Flow::Return(r) => r,
        _ => {
            let mut h = Dyn::lit(17);
            for x in &v.vars {
                h = h * 31 + *x;
            }
            h
        }
    }
}

/// Does `s` set the plain value anywhere?
fn sets_plain_values(s: &Stmt) -> bool {
    match s {
        Stmt::SetPlain(_) => true,
        Stmt::If(_, t, e) => sets_plain_values(t) || sets_plain_values(e),
        Stmt::While { body, .. }
        | Stmt::Repeat(_, body)
        | Stmt::StaticRepeat(_, body)
        | Stmt::PlainLoop(_, body) => sets_plain_values(body),
        Stmt::Block(ss) => ss.iter().any(sets_plain_values),
        _ => false,
    }
}

/// Programs only the annotated walk extracts exactly: plain values and long
/// plain loops with dyn exits are invisible to tags without it.
fn needs_attribute(s: &Stmt) -> bool {
    match s {
        Stmt::PlainLoop(..) | Stmt::SetPlain(_) | Stmt::UsePlain(_) => true,
        Stmt::If(_, t, e) => needs_attribute(t) || needs_attribute(e),
        Stmt::While { body, .. } | Stmt::Repeat(_, body) | Stmt::StaticRepeat(_, body) => {
            needs_attribute(body)
        }
        Stmt::Block(ss) => ss.iter().any(needs_attribute),
        _ => false,
    }
}

// ---------------------------------------------------------------------------
// The differential check.

type Native = unsafe extern "C" fn(i32, i32) -> i32;

/// Runs of the closure one extraction may take (over all its attempts).
/// An extraction needs about two runs per dyn decision it explores (one
/// exploring, one checking): up to about a thousand for a plain loop of 100
/// turns around a dyn `if`, about 6,500 for the largest program of a
/// 100,000-program run (seed 9400072330: a plain loop of 97 turns with two
/// `if`s and a tracked plain value, in a dyn loop; 35,000 operations).
/// Runs cost more and more as the graph grows, so the default limit (a
/// million) would let a blow-up run for hours in a debug build.
const MAX_RUNS: u64 = 10_000;
/// Operations one attempt may record: these programs need a few thousand
/// (long plain loops, copied per plain value). A second bound on blow-ups,
/// which grow the graph fast.
const MAX_OPERATIONS: usize = 100_000;

/// How long the C compiler may take on one program.
const COMPILE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

/// Inputs: zero, negatives (loops that never run, `i32::MIN` as a bound),
/// small bounds. Nothing large and positive, since both parameters can
/// bound nested loops.
const INPUTS: &[(i32, i32)] = &[
    (0, 0),
    (1, -1),
    (3, 2),
    (-4, 5),
    (2, 7),
    (6, 1),
    (i32::MIN, 4),
    (5, -1_000_000),
];

/// Why a program failed.
#[derive(Debug)]
struct Failure {
    /// The kind of failure ("wrong result", the error's variant...): the
    /// shrinker keeps it, so it cannot wander off to another bug.
    kind: String,
    what: String,
    code: Option<String>,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{}", self.what)?;
        if let Some(code) = &self.code {
            writeln!(f, "generated C:\n{code}")?;
        }
        Ok(())
    }
}

fn failure(kind: &str, what: String, code: Option<&str>) -> Failure {
    Failure {
        kind: kind.to_string(),
        what,
        code: code.map(str::to_string),
    }
}

fn extract(p: &Program, walk: Walk) -> Result<Extracted<Native>, Failure> {
    let p = p.clone();
    // Engine panics (as opposed to errors) are failures of the program too.
    let r = catch_unwind(AssertUnwindSafe(|| {
        // The indexed walk's programs have no long plain loops: a tighter
        // bound ends its documented-limit blow-ups sooner.
        let (runs, ops) = match walk {
            Walk::Plain => (MAX_RUNS, MAX_OPERATIONS),
            Walk::Indexed => (MAX_RUNS / 5, MAX_OPERATIONS / 20),
        };
        Builder::new()
            .max_runs(runs)
            .max_operations(ops)
            .extract("fuzz", move |a: Dyn<i32>, b: Dyn<i32>| {
                stage(&p, walk, a, b)
            })
    }))
    .map_err(|e| {
        let what = format!("extraction panicked: {}", panic_text(&e));
        failure("extraction panicked", what, None)
    })?;
    r.map_err(|e| {
        // The variant's name, from `Debug`.
        let debug = format!("{e:?}");
        let variant = debug.split([' ', '{', '(']).next().unwrap_or("");
        failure(variant, format!("extraction failed: {e}"), None)
    })
}

fn panic_text(e: &Box<dyn std::any::Any + Send>) -> String {
    e.downcast_ref::<String>()
        .cloned()
        .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "(not a string)".into())
}

/// Extracts `p` twice, checks the C, then compares interpreter (and C when
/// `compile`) with the reference on every input. Returns the extraction's
/// statistics.
///
/// Gotos and a C compile error are failures, but the results are checked
/// first (by the interpreter when the C does not compile), so that a wrong
/// result is never hidden behind them.
fn check_program(p: &Program, walk: Walk, compile: bool) -> Result<Stats, Failure> {
    let ex = extract(p, walk)?;
    let code = ex.c_code();
    let again = extract(p, walk).map_err(|f| Failure {
        what: format!("second {}", f.what),
        code: Some(code.clone()),
        ..f
    })?;
    if again.c_code() != code {
        let what = format!(
            "the C differs between two extractions; the second:\n{}",
            again.c_code()
        );
        return Err(failure("nondeterministic C", what, Some(&code)));
    }
    let gotos = ex.stats().gotos;
    let mut soft = None;
    // Code from structured Rust is structured. Plain values make copies of
    // a dyn loop per value that enter each other in the middle (irreducible
    // flow, a state machine), which C can only say with a `goto` (or a
    // loop over a switch): allowed there. Forward jumps between copies are
    // guards, not gotos (a 3,000-program run that failed on any goto found
    // only loops entered in the middle, all in the plain walk).
    if gotos != 0 && !sets_plain_values(&p.body) {
        soft = Some(failure("gotos", format!("{gotos} gotos"), Some(&code)));
    }
    // Programs with gotos are always compiled too.
    let compiled = if compile || gotos != 0 {
        // A compiler that runs for minutes on generated C is a failure to
        // report, not a run to wait for (gcc -O2 took over half an hour on
        // the code of seed 9980021677).
        let opts = augur::exec::CompileOptions {
            timeout: COMPILE_TIMEOUT,
            ..Default::default()
        };
        match ex.compile_with(&opts) {
            Ok(c) => Some(c),
            Err(e) => {
                let what = format!("C compile failed: {e}");
                soft = soft.or(Some(failure("C compile", what, Some(&code))));
                None
            }
        }
    } else {
        None
    };
    for &(a, b) in INPUTS {
        let want = evaluate(p, a, b);
        let at = format!("inputs ({a}, {b})");
        {
            let got = catch_unwind(AssertUnwindSafe(|| ex.interpret(&[a.into(), b.into()])));
            let got = match got {
                Ok(Ok(v)) => v,
                Ok(Err(e)) => {
                    let what = format!("{at}: interpreter error: {e}; expected {want}");
                    return Err(failure("interpreter error", what, Some(&code)));
                }
                Err(e) => {
                    let what = format!("{at}: interpreter panicked: {}", panic_text(&e));
                    return Err(failure("interpreter panicked", what, Some(&code)));
                }
            };
            if got != Value::from(want) {
                let what = format!("{at}: interpreter gives {got}, expected {want}");
                return Err(failure("wrong result", what, Some(&code)));
            }
        }
        if let Some(c) = &compiled {
            // SAFETY: the function takes and returns `int32_t` and touches
            // no memory.
            let from_c = unsafe { (c.get())(a, b) };
            if from_c != want {
                let what = format!("{at}: C gives {from_c}, expected {want}");
                return Err(failure("wrong result", what, Some(&code)));
            }
        }
    }
    match soft {
        Some(f) => Err(f),
        None => Ok(ex.stats().clone()),
    }
}

/// The one outcome other than exact code that a walk may give, because it is
/// the specified behaviour for its input: without `#[augur::staged]`, a
/// plain Rust loop around dyn code inside a dyn loop keeps the dyn loop from
/// closing, and extraction stops with an error that names the plain loop and
/// the two ways to make it visible (`LoopNeverCloses`, or a run or operation
/// limit). Anything else (a wrong result, another error, an error without
/// that explanation, or this error for a program without that shape) fails.
fn documented_limit(p: &Program, walk: Walk, f: &Failure) -> bool {
    /// Does `s` contain a dyn decision?
    fn decides(s: &Stmt) -> bool {
        match s {
            Stmt::If(..) | Stmt::While { .. } => true,
            Stmt::Block(ss) => ss.iter().any(decides),
            Stmt::Repeat(_, b) | Stmt::StaticRepeat(_, b) | Stmt::PlainLoop(_, b) => decides(b),
            _ => false,
        }
    }
    /// A plain `Repeat` around a decision inside a `while`?
    fn plain_in_dyn(s: &Stmt, in_while: bool) -> bool {
        let go = |s| plain_in_dyn(s, in_while);
        match s {
            Stmt::If(_, t, e) => go(t) || go(e),
            Stmt::While { body, .. } => plain_in_dyn(body, true),
            Stmt::Repeat(k, b) => (in_while && *k >= 2 && decides(b)) || go(b),
            Stmt::StaticRepeat(_, b) | Stmt::PlainLoop(_, b) => go(b),
            Stmt::Block(ss) => ss.iter().any(go),
            _ => false,
        }
    }
    walk == Walk::Indexed
        && matches!(f.kind.as_str(), "LoopNeverCloses" | "Limit")
        && f.what.contains("#[augur::staged]")
        && plain_in_dyn(&p.body, false)
}

// ---------------------------------------------------------------------------
// Shrinking: greedy, one simplification at a time, kept while the program
// still fails (in any way).

fn exprs_smaller(e: &Expr) -> Vec<Expr> {
    let mut out = Vec::new();
    if let Expr::Bin(op, a, b) = e {
        out.push((**a).clone());
        out.push((**b).clone());
        for x in exprs_smaller(a) {
            out.push(Expr::Bin(*op, Box::new(x), b.clone()));
        }
        for y in exprs_smaller(b) {
            out.push(Expr::Bin(*op, a.clone(), Box::new(y)));
        }
    }
    if !matches!(e, Expr::Const(0)) {
        out.push(Expr::Const(0));
    }
    out
}

fn conds_smaller(c: &Cond) -> Vec<Cond> {
    let mut out = Vec::new();
    match c {
        Cond::Cmp(op, a, b) => {
            for x in exprs_smaller(a) {
                out.push(Cond::Cmp(*op, x, b.clone()));
            }
            for y in exprs_smaller(b) {
                out.push(Cond::Cmp(*op, a.clone(), y));
            }
        }
        Cond::Not(x) => {
            out.push((**x).clone());
            out.extend(conds_smaller(x).into_iter().map(|x| Cond::Not(Box::new(x))));
        }
        Cond::And(x, y) | Cond::Or(x, y) => {
            out.push((**x).clone());
            out.push((**y).clone());
        }
    }
    out
}

/// Simpler variants of a statement: removed children, unwrapped bodies,
/// smaller counts and expressions.
fn stmts_smaller(s: &Stmt) -> Vec<Stmt> {
    let mut out = Vec::new();
    let boxed = |s: Stmt| Box::new(s);
    match s {
        Stmt::Assign(v, e) => out.extend(exprs_smaller(e).into_iter().map(|e| Stmt::Assign(*v, e))),
        Stmt::Return(e) => out.extend(exprs_smaller(e).into_iter().map(Stmt::Return)),
        Stmt::Break | Stmt::Continue => {}
        Stmt::If(c, t, e) => {
            out.push((**t).clone());
            out.push((**e).clone());
            for c2 in conds_smaller(c) {
                out.push(Stmt::If(c2, t.clone(), e.clone()));
            }
            for t2 in stmts_smaller(t) {
                out.push(Stmt::If(c.clone(), boxed(t2), e.clone()));
            }
            for e2 in stmts_smaller(e) {
                out.push(Stmt::If(c.clone(), t.clone(), boxed(e2)));
            }
        }
        Stmt::While {
            counter,
            bound,
            body,
        } => {
            out.push((**body).clone());
            if *bound != Bound::Const(1) {
                out.push(Stmt::While {
                    counter: *counter,
                    bound: Bound::Const(1),
                    body: body.clone(),
                });
            }
            for b2 in stmts_smaller(body) {
                out.push(Stmt::While {
                    counter: *counter,
                    bound: *bound,
                    body: boxed(b2),
                });
            }
        }
        Stmt::Block(ss) => {
            if ss.len() == 1 {
                out.push(ss[0].clone());
            }
            for i in 0..ss.len() {
                let mut v = ss.clone();
                v.remove(i);
                out.push(Stmt::Block(v));
            }
            for i in 0..ss.len() {
                for s2 in stmts_smaller(&ss[i]) {
                    let mut v = ss.clone();
                    v[i] = s2;
                    out.push(Stmt::Block(v));
                }
            }
        }
        Stmt::SetPlain(_) | Stmt::UsePlain(_) => {}
        Stmt::Repeat(k, body) | Stmt::StaticRepeat(k, body) | Stmt::PlainLoop(k, body) => {
            let make = |k: u32, b: Box<Stmt>| match s {
                Stmt::Repeat(..) => Stmt::Repeat(k, b),
                Stmt::PlainLoop(..) => Stmt::PlainLoop(k, b),
                _ => Stmt::StaticRepeat(k, b),
            };
            if *k > 2 {
                out.push(make(k / 2, body.clone()));
            }
            if !matches!(s, Stmt::PlainLoop(..)) {
                out.push((**body).clone());
            }
            if *k > 1 {
                out.push(make(k - 1, body.clone()));
            }
            if matches!(s, Stmt::Repeat(..)) {
                out.push(Stmt::StaticRepeat(*k, body.clone()));
            }
            for b2 in stmts_smaller(body) {
                out.push(make(*k, boxed(b2)));
            }
        }
    }
    out
}

/// `break`/`continue` only inside a `while` (the shrinker may unwrap one).
fn valid(s: &Stmt, in_loop: bool) -> bool {
    match s {
        Stmt::Break | Stmt::Continue => in_loop,
        Stmt::Assign(..) | Stmt::Return(_) | Stmt::SetPlain(_) | Stmt::UsePlain(_) => true,
        Stmt::If(_, t, e) => valid(t, in_loop) && valid(e, in_loop),
        Stmt::While { body, .. } | Stmt::PlainLoop(_, body) => valid(body, true),
        Stmt::Block(ss) => ss.iter().all(|s| valid(s, in_loop)),
        Stmt::Repeat(_, b) | Stmt::StaticRepeat(_, b) => valid(b, in_loop),
    }
}

fn size(s: &Stmt) -> usize {
    match s {
        Stmt::If(_, t, e) => 1 + size(t) + size(e),
        Stmt::While { body, .. }
        | Stmt::Repeat(_, body)
        | Stmt::StaticRepeat(_, body)
        | Stmt::PlainLoop(_, body) => 1 + size(body),
        Stmt::Block(ss) => ss.iter().map(size).sum(),
        _ => 1,
    }
}

/// How long one failure may be shrunk.
const SHRINK_TIME: std::time::Duration = std::time::Duration::from_secs(60);

/// The smallest variant of `p` found greedily that still fails in the same
/// way as `first`.
fn shrink(p: &Program, walk: Walk, compile: bool, first: Failure) -> (Program, Failure) {
    let kind = first.kind.clone();
    let same = |q: &Program, f: &Failure| f.kind == kind && !documented_limit(q, walk, f);
    let mut best = p.clone();
    let mut failure = first;
    // Bounded, since a check can take seconds (a run-limit failure).
    let started = std::time::Instant::now();
    'outer: while started.elapsed() < SHRINK_TIME {
        // Fewer variables first: initial values to zero.
        let mut candidates: Vec<Program> = Vec::new();
        for i in 0..VARS {
            if best.inits[i] != Init::Zero {
                let mut q = best.clone();
                q.inits[i] = Init::Zero;
                candidates.push(q);
            }
        }
        for body in stmts_smaller(&best.body) {
            if valid(&body, false) {
                candidates.push(Program {
                    body,
                    ..best.clone()
                });
            }
        }
        for q in candidates {
            if started.elapsed() > SHRINK_TIME {
                break 'outer;
            }
            match check_program(&q, walk, compile) {
                Err(f) if same(&q, &f) => {
                    best = q;
                    failure = f;
                    continue 'outer;
                }
                _ => {}
            }
        }
        break;
    }
    (best, failure)
}

// ---------------------------------------------------------------------------
// The fuzz tests.

fn env_u64(name: &str) -> Option<u64> {
    let v = std::env::var(name).ok()?;
    Some(
        v.parse()
            .unwrap_or_else(|_| panic!("{name}={v} is not a number")),
    )
}

/// Programs per run by default: every one interpreted under both walks,
/// one in `COMPILE_EVERY` also compiled.
const DEFAULT_CASES: u64 = 400;
const COMPILE_EVERY: u64 = 8;
/// Failures shrunk per shard.
const MAX_SHRUNK: usize = 3;
/// Independent tests share the cases, so the test harness runs them in
/// parallel (the engine is thread-local).
const SHARDS: u64 = 4;

fn fuzz_shard(shard: u64) {
    let cases = env_u64("AUGUR_FUZZ_CASES").unwrap_or(DEFAULT_CASES);
    let base = env_u64("AUGUR_FUZZ_SEED").unwrap_or(0x00a0_9e5e_ed00);
    let verbose = std::env::var_os("AUGUR_FUZZ_VERBOSE").is_some();
    let mut failures = Vec::new();
    let (mut limits, mut walked, mut executions, mut max_executions) = (0u64, 0u64, 0u64, 0u64);
    for i in (shard..cases).step_by(SHARDS as usize) {
        let seed = base.wrapping_add(i);
        let p = generate(seed);
        let compile = i % COMPILE_EVERY == 0;
        for walk in [Walk::Indexed, Walk::Plain] {
            if walk == Walk::Indexed && needs_attribute(&p.body) {
                continue;
            }
            walked += 1;
            let started = std::time::Instant::now();
            let result = check_program(&p, walk, compile);
            if verbose {
                let r = match &result {
                    Ok(st) => format!(
                        "ok: runs {} (check runs {}, total {}, restarts {}), nodes {}",
                        st.runs, st.check_runs, st.total_runs, st.loop_restarts, st.nodes
                    ),
                    Err(f) => format!("FAILED ({})", f.kind),
                };
                eprintln!("seed {seed} {walk:?}: {:?} {r}", started.elapsed());
            }
            let f = match result {
                Ok(st) => {
                    executions += st.total_runs;
                    max_executions = max_executions.max(st.total_runs);
                    continue;
                }
                Err(f) if documented_limit(&p, walk, &f) => {
                    limits += 1;
                    continue;
                }
                Err(f) => f,
            };
            eprintln!(
                "FAILED seed {seed}, {walk:?} walk (AUGUR_FUZZ_SEED={seed} AUGUR_FUZZ_CASES=1)\n\
                 program:\n{p}{p:?}\n{f}"
            );
            // Shrinking takes up to a minute: only the first few.
            if failures.len() < MAX_SHRUNK {
                let (small, sf) = shrink(&p, walk, compile, f);
                eprintln!(
                    "seed {seed}, {walk:?} walk, shrunk (size {} from {}):\n{small}{small:?}\n{sf}",
                    size(&small.body),
                    size(&p.body)
                );
            }
            failures.push((seed, walk));
        }
    }
    // Shown with --nocapture (or when the shard fails).
    let ok = walked - limits - failures.len() as u64;
    eprintln!(
        "shard {shard}: {walked} extractions, {ok} exact (executions of the closure: mean {:.1}, \
         max {max_executions}), {limits} stopped with the documented error for a plain loop \
         inside a dyn loop without #[augur::staged], {} failed",
        executions as f64 / ok.max(1) as f64,
        failures.len()
    );
    assert!(failures.is_empty(), "failing seeds: {failures:?}");
}

#[test]
fn fuzz_shard_0() {
    fuzz_shard(0);
}

#[test]
fn fuzz_shard_1() {
    fuzz_shard(1);
}

#[test]
fn fuzz_shard_2() {
    fuzz_shard(2);
}

#[test]
fn fuzz_shard_3() {
    fuzz_shard(3);
}

/// The generator stays inside its bounds and makes the constructs the test
/// is about (a generator that silently stopped making loops would pass).
#[test]
fn generator_covers_the_language() {
    fn walk(s: &Stmt, depth: u32, seen: &mut [bool; 12], max_depth: &mut u32) {
        *max_depth = (*max_depth).max(depth);
        let i = match s {
            Stmt::Assign(..) => 0,
            Stmt::If(..) => 1,
            Stmt::While { .. } => 2,
            Stmt::Break => 3,
            Stmt::Continue => 4,
            Stmt::Return(_) => 5,
            Stmt::Block(_) => 6,
            Stmt::Repeat(..) => 7,
            Stmt::StaticRepeat(..) => 8,
            Stmt::PlainLoop(..) => 9,
            Stmt::SetPlain(_) => 10,
            Stmt::UsePlain(_) => 11,
        };
        seen[i] = true;
        match s {
            Stmt::If(_, t, e) => {
                walk(t, depth + 1, seen, max_depth);
                walk(e, depth + 1, seen, max_depth);
            }
            Stmt::While { body, .. }
            | Stmt::Repeat(_, body)
            | Stmt::StaticRepeat(_, body)
            | Stmt::PlainLoop(_, body) => walk(body, depth + 1, seen, max_depth),
            Stmt::Block(ss) => ss.iter().for_each(|s| walk(s, depth, seen, max_depth)),
            _ => {}
        }
    }
    let mut seen = [false; 12];
    for seed in 0..200 {
        let p = generate(seed);
        let mut depth = 0;
        walk(&p.body, 0, &mut seen, &mut depth);
        assert!(depth <= MAX_DEPTH, "seed {seed}: depth {depth}");
        assert!(size(&p.body) <= MAX_STMTS, "seed {seed}: {p:#?}");
        assert!(valid(&p.body, false), "seed {seed}: {p:#?}");
    }
    assert!(seen.iter().all(|s| *s), "constructs seen: {seen:?}");
}

/// Prints the program of `AUGUR_FUZZ_SEED` (`cargo test --test fuzz_programs
/// print_program -- --ignored --nocapture`).
#[test]
#[ignore = "a tool: prints the program of AUGUR_FUZZ_SEED"]
fn print_program() {
    let seed = env_u64("AUGUR_FUZZ_SEED").expect("set AUGUR_FUZZ_SEED");
    let p = generate(seed);
    println!("{p}{p:?}");
}

// ---------------------------------------------------------------------------
// Engine bugs found by this test: minimal reproducers, written as plain
// staged Rust where the bug shows there too, checked with the suite's
// differential harness (extract twice, no gotos, C = interpreter = Rust).
// Fixed, they stay as regression tests.

/// Checks a fuzz program under one walk, printing it on failure.
#[track_caller]
fn check_ast(p: &Program, walk: Walk) {
    if let Err(f) = check_program(p, walk, true) {
        panic!("{walk:?} walk:\n{p}{f}");
    }
}

/// Defines `$annotated` under `#[augur::staged]` and `$bare` without it,
/// from one body: the same staged program, with and without the attribute.
macro_rules! with_and_without_attribute {
    ($annotated:ident, $bare:ident, |$n:ident| $body:block) => {
        #[augur::staged]
        fn $annotated($n: Dyn<i32>) -> Dyn<i32> $body

        fn $bare($n: Dyn<i32>) -> Dyn<i32> $body
    };
}

/// Where the plain loop below starts its turns (its `if`'s line).
const PLAIN_IN_DYN_LINE: u32 = line!() + 11;

// A plain Rust `for` of two turns around a dyn `if`, inside a dyn loop.
with_and_without_attribute!(plain_in_dyn, plain_in_dyn_bare, |n| {
    let c = Dyn::new(0);
    let x = Dyn::new(0);
    while c.lt(n).is_true() {
        c.set(c + 1);
        // `black_box`: an optimized build would unroll a constant two-turn
        // loop.
        for _ in 0..std::hint::black_box(2) {
            if x.lt(c).is_true() {
                x.set(x + 1);
            }
        }
    }
    x
});

fn plain_in_dyn_ref(&mut (n,): &mut (i32,)) -> i32 {
    let (mut c, mut x) = (0, 0);
    while c < n {
        c += 1;
        for _ in 0..2 {
            if x < c {
                x += 1;
            }
        }
    }
    x
}

/// Under `#[augur::staged]` the plain loop's turns are a `Static` that ends
/// with the loop, so the dyn loop closes: two ifs in its body.
#[test]
fn plain_loop_in_dyn_loop_closes_under_the_attribute() {
    let ex = common::check(
        "plain_in_dyn",
        plain_in_dyn,
        plain_in_dyn_ref,
        &[(0,), (1,), (2,), (5,), (-3,)],
    );
    assert_eq!(common::count(&ex.c_code(), "if ("), 2, "{}", ex.c_code());
}

/// Without the attribute the engine finds the plain loop by itself, but
/// keeps its turns apart for the rest of the run, so the dyn loop never
/// repeats its state: the error names the plain loop and the two fixes.
#[test]
fn plain_loop_in_dyn_loop_without_the_attribute_is_a_clear_error() {
    let line = PLAIN_IN_DYN_LINE;
    let err = Builder::new()
        .extract("plain_in_dyn", plain_in_dyn_bare)
        .unwrap_err();
    let m = err.to_string();
    assert!(matches!(err, augur::Error::LoopNeverCloses { .. }), "{m}");
    assert!(m.contains(&format!("{}:{line}:", file!())), "{m}");
    assert!(
        m.contains("#[augur::staged]") && m.contains("augur::range"),
        "{m}"
    );
}

// A dyn `while` run twice by a plain `for`, inside a dyn `while`: three
// loops under the attribute; without it, the run limit with the same
// explanation.
with_and_without_attribute!(loops_in_plain_in_dyn, loops_in_plain_in_dyn_bare, |n| {
    let c = Dyn::new(0);
    let d = Dyn::new(0);
    let x = Dyn::new(0);
    while c.lt(n).is_true() {
        c.set(c + 1);
        for _ in 0..std::hint::black_box(2) {
            d.set(0);
            while d.lt(n).is_true() {
                d.set(d + 1);
                x.set(x + 1);
            }
        }
    }
    x
});

#[test]
fn dyn_loops_in_a_plain_loop_in_a_dyn_loop() {
    let ex = common::check(
        "loops_in_plain_in_dyn",
        loops_in_plain_in_dyn,
        |&mut (n,): &mut (i32,)| 2 * n.max(0) * n.max(0),
        &[(0,), (1,), (2,), (5,), (-3,)],
    );
    assert_eq!(ex.stats().back_edges, 3, "{}", ex.c_code());
    let err = Builder::new()
        .max_runs(500)
        .extract("bare", loops_in_plain_in_dyn_bare)
        .unwrap_err();
    assert!(err.to_string().contains("#[augur::staged]"), "{err}");
}

/// The fuzz test's smallest program for that limit:
///
/// ```text
/// c0 = 0;
/// while (c0 < 1) { c0 = c0 + 1; v3 = v3; if (0 <= 0) { break; } v1 = a; }
/// ```
///
/// exact under both walks (the plain walk is annotated).
#[test]
fn plain_loop_in_dyn_loop_fuzz_program() {
    let c0 = VARS;
    let p = Program {
        inits: vec![Init::Zero; VARS],
        counters: 1,
        body: Stmt::While {
            counter: c0,
            bound: Bound::Const(1),
            body: Box::new(Stmt::Block(vec![
                Stmt::Assign(3, Expr::Var(3)),
                Stmt::If(
                    Cond::Cmp(CmpOp::Le, Expr::Const(0), Expr::Const(0)),
                    Box::new(Stmt::Break),
                    Box::new(Stmt::Block(vec![])),
                ),
                Stmt::Assign(1, Expr::Param(0)),
            ])),
        },
    };
    check_ast(&p, Walk::Indexed);
    check_ast(&p, Walk::Plain);
}

enum Node {
    If(i32, Box<Node>, Box<Node>),
    Add(i32),
    Stop,
}

/// A recursive walk whose recursive calls are tail calls.
#[augur::staged]
fn walk_tail(n: &Node, x: Dyn<i32>) -> Option<Dyn<i32>> {
    match n {
        Node::If(k, t, e) => {
            if x.gt(*k).is_true() {
                walk_tail(t, x)
            } else {
                walk_tail(e, x)
            }
        }
        Node::Add(k) => {
            x.set(x + *k);
            None
        }
        Node::Stop => Some(x),
    }
}

/// In an optimized build the tail calls of a recursive tree walk would
/// reuse the caller's frame, so an `if` nested in an `if` would take its
/// tags from the same return addresses as its parent (a plain loop to the
/// engine, and inside a dyn loop a loop that never closes). The
/// attribute's frame guard keeps every call a real call.
#[test]
fn tail_recursive_walk_in_dyn_loop() {
    use Node::*;
    let prog = If(
        0,
        Box::new(If(0, Box::new(Add(1)), Box::new(Stop))),
        Box::new(Stop),
    );
    let prog = &prog;
    common::check(
        "tail_walk",
        move |n: Dyn<i32>| {
            let c = Dyn::new(0);
            let x = Dyn::new(0);
            while c.lt(n).is_true() {
                c.set(c + 1);
                if let Some(v) = walk_tail(prog, x) {
                    x.set(v + 1);
                }
            }
            x
        },
        |&mut (n,): &mut (i32,)| n.max(0),
        &[(0,), (1,), (2,), (5,), (-3,)],
    );
}

/// `-Wall -Werror` (the default compile flags) used to turn GCC's
/// `-Wtautological-compare` into errors: `if (arg0 == arg0)` and
/// `if ((arg0 | 8) == 0)` are valid C (and valid staged code). The default
/// flags now keep that warning off.
#[test]
fn c_accepts_tautological_compare() {
    common::check(
        "self_compare",
        |a: Dyn<i32>| {
            let x = Dyn::new(0);
            if a.eq(a).is_true() {
                x.set(1);
            }
            x
        },
        |_: &mut (i32,)| 1,
        &[(0,), (1,), (-1,), (7,), (i32::MIN,)],
    );
    common::check(
        "or_compare",
        |a: Dyn<i32>| {
            let x = Dyn::new(0);
            if (a | 8).eq(0).is_true() {
                x.set(1);
            }
            x
        },
        |_: &mut (i32,)| 0,
        &[(0,), (1,), (-1,), (7,), (i32::MIN,)],
    );
}

/// Constant arithmetic that wraps (`2147483647 + 5`, which `-fwrapv`
/// defines) used to be rejected by `-Werror=overflow`; the C writer keeps
/// such sums valid now.
#[test]
fn c_accepts_constant_overflow() {
    common::check(
        "const_wrap",
        |a: Dyn<i32>| {
            let x = Dyn::new(a);
            x.set(Dyn::lit(i32::MAX) + 5);
            x
        },
        |_: &mut (i32,)| i32::MAX.wrapping_add(5),
        &[(0,), (1,), (-1,), (7,), (i32::MIN,)],
    );
}

/// Found by this test: `INT_MIN * (-1 | x)`, which gcc folds to a constant
/// product that wraps, was rejected by `-Werror=overflow`; `-fwrapv`
/// defines it, and the default flags keep that warning off.
#[test]
fn c_accepts_constant_products_that_wrap() {
    common::check(
        "wrap_mul",
        |a: Dyn<i32>| {
            let x = Dyn::new(a);
            x.set(Dyn::lit(i32::MIN) * (Dyn::lit(-1) | a));
            x
        },
        |_: &mut (i32,)| i32::MIN.wrapping_mul(-1),
        &[(0,), (1,), (-1,), (7,), (i32::MIN,)],
    );
}

/// Found by this test (fixed since, at a482896): the simplest loop with an
/// early exit after an assignment,
/// `while (c < a) { c = c + 1; if (a >= 3) { x = 0; break; } }`, came out
/// with 2 gotos (`goto L3` out of the loop and over the assignment).
#[test]
fn goto_break_after_assignment() {
    common::check(
        "assign_break",
        |a: Dyn<i32>| {
            let c = Dyn::new(0);
            let x = Dyn::new(5);
            while c.lt(a).is_true() {
                c.set(c + 1);
                if a.ge(3).is_true() {
                    x.set(0);
                    break;
                }
            }
            x + c
        },
        |&mut (a,): &mut (i32,)| {
            let (mut c, mut x) = (0, 5);
            while c < a {
                c += 1;
                if a >= 3 {
                    x = 0;
                    break;
                }
            }
            x + c
        },
        &[(0,), (1,), (2,), (3,), (5,), (-3,)],
    );
}

/// A `return` from a dyn loop on the `else` side of a dyn `if` (found by
/// this test: 1 goto, the loop's exit to the code after the `if` taken for
/// a jump out of it while the `return` was the loop's follow). Structured:
/// the loop `break`s out of the arm, the `return` is emitted in place.
#[test]
fn return_from_a_loop_in_an_else_arm_is_structured() {
    common::check(
        "ret_loop_else",
        |a: Dyn<i32>| {
            let c = Dyn::new(0);
            let x = Dyn::new(0);
            if a.ge(0).is_true() {
                x.set(1);
            } else {
                while c.lt(1).is_true() {
                    c.set(c + 1);
                    if a.le(-5).is_true() {
                        x.set(2);
                    } else {
                        return Dyn::lit(9);
                    }
                }
            }
            x + c
        },
        |&mut (a,): &mut (i32,)| match a {
            0.. => 1,
            ..=-5 => 3,
            _ => 9,
        },
        &[(0,), (1,), (-1,), (-5,), (-9,)],
    );
}

/// `return` from the inner of two nested dyn loops, in the `else` branch
/// of a dyn `if` (found by this test: 1 goto).
#[test]
// The inner loop returns in its first turn: that is the fuzz test's shrunk
// program, and the shape the structurer gets wrong.
#[allow(clippy::never_loop)]
fn return_from_nested_loops_in_an_else_arm_is_structured() {
    common::check(
        "ret_nested_else",
        |a: Dyn<i32>| {
            let x = Dyn::new(0);
            let i = Dyn::new(0);
            let j = Dyn::new(0);
            if a.ne(0).is_true() {
                x.set(1);
            } else {
                while i.lt(1).is_true() {
                    i.set(i + 1);
                    while j.lt(1).is_true() {
                        j.set(j + 1);
                        return Dyn::lit(7);
                    }
                }
            }
            x + i + j
        },
        |&mut (a,): &mut (i32,)| if a != 0 { 1 } else { 7 },
        &[(0,), (1,), (-1,), (5,), (i32::MIN,)],
    );
}

/// Found by this test (fixed since, at a482896): two unrolled `if`s whose
/// `else` returns, inside a dyn `if`, gave 1 goto.
#[test]
fn goto_return_in_unrolled_ifs() {
    common::check(
        "ret_unrolled",
        |a: Dyn<i32>| {
            let x = Dyn::new(0);
            let y = Dyn::new(100);
            if a.ge(0).is_true() {
                for _ in augur::range(0..2) {
                    if a.le(5).is_true() {
                        x.set(x + 1);
                    } else {
                        return y;
                    }
                }
            }
            x + y
        },
        |&mut (a,): &mut (i32,)| match a {
            ..=-1 => 100,
            0..=5 => 102,
            _ => 100,
        },
        &[(0,), (1,), (-1,), (5,), (6,)],
    );
}

/// Found by this test (seed 9100010556): a join block that computes its
/// condition into temporaries, reached from a `break`'s `else` side and
/// from the other arm, with the loop's exit after it:
///
/// ```text
/// while (c1 < 1) {
///   c1 = c1 + 1;
///   if (0 < 0) { v3 = 0; } else { if (0 >= 0) { break; } }
///   if (0 <= 0) { break; } else { break; }
/// }
/// ```
///
/// gave 1 goto: node splitting refused blocks that declare temporaries.
/// Copies now get their own temporaries.
#[test]
fn join_with_temporaries_after_a_break_is_split() {
    let p = Program {
        inits: vec![Init::Zero; VARS],
        counters: 2,
        body: Stmt::While {
            counter: VARS + 1,
            bound: Bound::Const(1),
            body: Box::new(Stmt::Block(vec![
                Stmt::If(
                    Cond::Cmp(CmpOp::Lt, Expr::Const(0), Expr::Const(0)),
                    Box::new(Stmt::Assign(3, Expr::Const(0))),
                    Box::new(Stmt::If(
                        Cond::Cmp(CmpOp::Ge, Expr::Const(0), Expr::Const(0)),
                        Box::new(Stmt::Break),
                        Box::new(Stmt::Block(vec![])),
                    )),
                ),
                Stmt::If(
                    Cond::Cmp(CmpOp::Le, Expr::Const(0), Expr::Const(0)),
                    Box::new(Stmt::Break),
                    Box::new(Stmt::Break),
                ),
            ])),
        },
    };
    check_ast(&p, Walk::Indexed);
    check_ast(&p, Walk::Plain);
}

/// Found by this test (seed 9200028829): two dyn loops that `return` in
/// their first turn share one `return` node (returns are shared by value),
/// and the next `if` joins both arms of the first:
///
/// ```text
/// if (0 > 0) { static_repeat 2 { c0 = 0; while (c0 < 1) { c0 = c0 + 1; return c0; } } }
/// if (0 > 0) { c1 = 0; while (c1 < 1) { c1 = c1 + 1; v3 = 0; } }
/// v2 = ((0 | 0) & 0);
/// ```
///
/// Copying the shared `return` removes the goto; copying the join as well
/// (one round of node splitting took every candidate) gave 2. Splitting
/// now keeps a copy only where it removes gotos.
#[test]
fn splitting_keeps_only_copies_that_remove_gotos() {
    let when_zero_gt_zero = || Cond::Cmp(CmpOp::Gt, Expr::Const(0), Expr::Const(0));
    let p = Program {
        inits: vec![Init::Zero; VARS],
        counters: 2,
        body: Stmt::Block(vec![
            Stmt::If(
                when_zero_gt_zero(),
                Box::new(Stmt::StaticRepeat(
                    2,
                    Box::new(Stmt::While {
                        counter: VARS,
                        bound: Bound::Const(1),
                        body: Box::new(Stmt::Return(Expr::Var(VARS))),
                    }),
                )),
                Box::new(Stmt::Block(vec![])),
            ),
            Stmt::If(
                when_zero_gt_zero(),
                Box::new(Stmt::While {
                    counter: VARS + 1,
                    bound: Bound::Const(1),
                    body: Box::new(Stmt::Assign(3, Expr::Const(0))),
                }),
                Box::new(Stmt::Block(vec![])),
            ),
            Stmt::Assign(
                2,
                Expr::Bin(
                    BinOp::And,
                    Box::new(Expr::Bin(
                        BinOp::Or,
                        Box::new(Expr::Const(0)),
                        Box::new(Expr::Const(0)),
                    )),
                    Box::new(Expr::Const(0)),
                ),
            ),
        ]),
    };
    check_ast(&p, Walk::Indexed);
    check_ast(&p, Walk::Plain);
}

/// Found by this test (seed 9300011012, and fixed at once): a plain loop
/// of 9 turns whose `continue` skips the turn's last statement. Copying
/// that statement into each branch structures the jump; copying the next
/// turn too (allowed since copies get their own temporaries) left 9
/// gotos. Node splitting now tries the joins in between first.
#[test]
fn continue_over_a_turns_last_statement_is_split() {
    let p = Program {
        inits: vec![Init::Zero; VARS],
        counters: 0,
        body: Stmt::PlainLoop(
            9,
            Box::new(Stmt::Block(vec![
                Stmt::If(
                    Cond::Cmp(CmpOp::Gt, Expr::Const(0), Expr::Const(0)),
                    Box::new(Stmt::Assign(3, Expr::Const(0))),
                    Box::new(Stmt::If(
                        Cond::Cmp(CmpOp::Ne, Expr::Const(0), Expr::Const(0)),
                        Box::new(Stmt::Continue),
                        Box::new(Stmt::Block(vec![])),
                    )),
                ),
                Stmt::Assign(1, Expr::Const(0)),
            ])),
        ),
    };
    check_ast(&p, Walk::Plain);
}

/// Found by this test (seed 9300087909): a dyn loop with two `return`s of
/// the same value (one shared return node) and an exit to the code after
/// an enclosing `if`. The shared return was taken for the loop's follow
/// and the exit became a goto; a short returning tail is now copied to
/// each of its edges, and the follow is the join.
#[test]
fn shared_return_in_a_loop_is_not_its_follow() {
    let p = Program {
        inits: vec![Init::Zero; VARS],
        counters: 5,
        body: Stmt::If(
            Cond::Cmp(CmpOp::Le, Expr::Const(0), Expr::Const(0)),
            Box::new(Stmt::While {
                counter: VARS + 1,
                bound: Bound::Const(1),
                body: Box::new(Stmt::Block(vec![
                    Stmt::If(
                        Cond::Cmp(CmpOp::Ne, Expr::Const(0), Expr::Const(0)),
                        Box::new(Stmt::Return(Expr::Var(0))),
                        Box::new(Stmt::Assign(0, Expr::Const(0))),
                    ),
                    Stmt::If(
                        Cond::Cmp(CmpOp::Le, Expr::Const(0), Expr::Const(0)),
                        Box::new(Stmt::Return(Expr::Var(0))),
                        Box::new(Stmt::Block(vec![])),
                    ),
                ])),
            }),
            Box::new(Stmt::Assign(2, Expr::Const(0))),
        ),
    };
    check_ast(&p, Walk::Indexed);
    check_ast(&p, Walk::Plain);
}

/// Found by this test (seed 9300051941): a plain loop of 17 turns (under
/// `#[augur::staged]`, unrolled) whose `break` in a nested `if` skips the
/// remaining turns, too long to copy: 16 gotos. A forward jump is now a
/// `break` out of a one-turn loop around the code it skips.
#[test]
fn break_out_of_an_unrolled_plain_loop_is_a_break() {
    let p = Program {
        inits: vec![Init::Zero; VARS],
        counters: 2,
        body: Stmt::PlainLoop(
            17,
            Box::new(Stmt::If(
                Cond::Cmp(CmpOp::Gt, Expr::Const(0), Expr::Const(0)),
                Box::new(Stmt::If(
                    Cond::Cmp(CmpOp::Le, Expr::Const(0), Expr::Const(0)),
                    Box::new(Stmt::Assign(2, Expr::Const(0))),
                    Box::new(Stmt::Break),
                )),
                Box::new(Stmt::Block(vec![])),
            )),
        ),
    };
    check_ast(&p, Walk::Plain);
}

/// Found by this test (seeds 9700039431 and 9700068351): a plain loop whose
/// turns both `continue` (skipping the rest of the turn) and `break`
/// (skipping every later turn), with the program's long tail after it. The
/// `continue`s became `break`s out of one-turn loops around each turn's
/// rest, which then held the `break`s' gotos: 9 gotos. Those now set a flag
/// and leave, each inner loop followed by `if (flag) break;`.
#[test]
fn continue_and_break_in_an_unrolled_plain_loop_are_breaks() {
    let p = Program {
        inits: vec![Init::Zero; VARS],
        counters: 0,
        body: Stmt::PlainLoop(
            9,
            Box::new(Stmt::Block(vec![
                Stmt::If(
                    Cond::Cmp(CmpOp::Lt, Expr::Const(0), Expr::Const(0)),
                    Box::new(Stmt::If(
                        Cond::Cmp(CmpOp::Eq, Expr::Const(0), Expr::Const(0)),
                        Box::new(Stmt::Continue),
                        Box::new(Stmt::Block(vec![])),
                    )),
                    Box::new(Stmt::Assign(2, Expr::Const(0))),
                ),
                Stmt::If(
                    Cond::Cmp(CmpOp::Ne, Expr::Const(0), Expr::Const(0)),
                    Box::new(Stmt::Break),
                    Box::new(Stmt::Block(vec![])),
                ),
            ])),
        ),
    };
    check_ast(&p, Walk::Plain);
}
