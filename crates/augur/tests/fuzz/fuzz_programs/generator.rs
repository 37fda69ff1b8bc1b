//! The generator: the random program of a seed, inside the language's
//! bounds (depth, statement count, unrolled sizes), with early exits only
//! where they leave their block live.

use crate::common::Rng;
use crate::fuzz_programs::language::{
    BinOp, Bound, CmpOp, Cond, Expr, Init, Program, Stmt, MAX_DEPTH, MAX_PLAIN_UNROLL, MAX_STMTS,
    MAX_UNROLL, VARS,
};

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
pub(crate) fn generate(seed: u64) -> Program {
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
