//! The reference: a direct evaluator of the AST in plain Rust (wrapping
//! `i32` arithmetic), whose results every extraction must reproduce.

use crate::fuzz_programs::language::{
    BinOp, Bound, CmpOp, Cond, Expr, Flow, Init, Program, Stmt, VARS,
};

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

pub(crate) fn evaluate(p: &Program, a: i32, b: i32) -> i32 {
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
