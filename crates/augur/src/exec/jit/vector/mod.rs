//! Loop vectorization: a counted loop whose body is element-wise
//! straight-line code (`t[i] = x[i] * w0 + x[i + 1] * w1 ...`, selects
//! included) runs 128 bits of iterations at a time: four `f32` or `i32`
//! lanes, two `f64` or `i64`.
//!
//! The vector code computes what the scalar loop computes, bit for bit:
//! each lane does one iteration's operations in the same order (no sum is
//! reassociated, no multiply-add fused), so results equal the C backend's
//! and the interpreter's. Two things could tell the two apart, and both are
//! ruled out:
//! - memory: a lane's store seen by another lane's load. Through one
//!   pointer that is stored to, every access must use the same index
//!   (`plan`); accesses through different pointers are checked at run
//!   time to touch disjoint bytes over the whole loop, and when any pair
//!   overlaps only the scalar loop runs;
//! - work a scalar iteration would skip: a `?:` arm or a `&&` operand that
//!   reads memory keeps the loop scalar (selects evaluate both arms).
//!
//! The scalar loop then runs the iterations left (fewer than a vector's).
//!
//! A lane's address is the first lane's plus its number of elements, and
//! `base[i + c]` is addressed as `base + i * size` with `c * size` as the
//! access's constant offset: both differ from the scalar loop's address
//! only where `i + c` wraps, which puts the scalar access far outside any
//! object (undefined in C too).

mod plan;

pub(super) use plan::plan;
use plan::Plan;

use super::expr::{float_cc, int_cc};
use super::lower::Lower;
use super::types;
use crate::ir::{BinOp, Block, Const, Expr, ExprId, Scalar, Stmt, StmtKind, Type, UnOp, VarId};
use crate::Result;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{self, Endianness, InstBuilder, MemFlags};
use cranelift_frontend::Variable;
use std::collections::HashMap;

const BOOL: Type = Type::Scalar(Scalar::Bool);

impl Lower<'_, '_> {
    /// Runs whole vectors of the loop's iterations from the induction
    /// variable's current value while enough are left and the run-time
    /// checks pass; the scalar loop lowered next runs the rest.
    pub(super) fn vector_loop(&mut self, plan: &Plan, body: &Block) -> Result<()> {
        let header = self.b.create_block();
        let vbody = self.b.create_block();
        let scalar = self.b.create_block();
        let (i0, n) = self.span(plan)?;
        let mut ok = self.enough(i0, n, plan.lanes);
        for &(s, a) in &plan.pairs {
            let disjoint = self.disjoint(plan, s, a, i0, n)?;
            ok = self.b.ins().band(ok, disjoint);
        }
        // Past the checks `n - lanes` cannot wrap: `i0 + lanes <= n`.
        let last = self.b.ins().iadd_imm(n, -i64::from(plan.lanes));
        self.b.ins().brif(ok, header, &[], scalar, &[]);
        self.enter(header);
        let ty = self.f.vars[plan.var].ty;
        let i = self.read_var(plan.var)?;
        let i = self.widen_i64(i, &ty);
        let more = self.b.ins().icmp(IntCC::SignedLessThanOrEqual, i, last);
        self.b.ins().brif(more, vbody, &[], scalar, &[]);
        self.seal(vbody);
        self.enter(vbody);
        let mut vars = HashMap::new();
        for &v in &plan.locals {
            let ty = vector_type(&self.f.vars[v].ty, plan.lanes)?;
            vars.insert(v, self.b.declare_var(ty));
        }
        let mut lanes = Lanes {
            plan,
            vars,
            rows: HashMap::new(),
        };
        for s in body {
            self.vector_stmt(s, &mut lanes)?;
        }
        let i = self.read_var(plan.var)?;
        let next = self.b.ins().iadd_imm(i, i64::from(plan.lanes));
        self.write_var(plan.var, next)?;
        self.b.ins().jump(header, &[]);
        self.seal(header);
        self.seal(scalar);
        self.enter(scalar);
        self.vectorized += 1;
        Ok(())
    }

    /// The induction variable and the bound, as 64-bit integers.
    fn span(&mut self, plan: &Plan) -> Result<(ir::Value, ir::Value)> {
        let ty = self.f.vars[plan.var].ty;
        let i = self.read_var(plan.var)?;
        let n = self.expr(plan.bound)?;
        Ok((self.widen_i64(i, &ty), self.widen_i64(n, &ty)))
    }

    fn widen_i64(&mut self, x: ir::Value, ty: &Type) -> ir::Value {
        if types::scalar(ty.as_scalar().expect("an integer")) == ir::types::I64 {
            x
        } else {
            self.b.ins().sextend(ir::types::I64, x)
        }
    }

    /// `i < n` and at least `lanes` iterations from `i` to `n` (exact in
    /// 64 bits: `n - i` of `n > i` is below 2^64).
    fn enough(&mut self, i: ir::Value, n: ir::Value, lanes: u32) -> ir::Value {
        let ins = self.b.ins();
        let ahead = ins.icmp(IntCC::SignedGreaterThan, n, i);
        let left = self.b.ins().isub(n, i);
        let ge = IntCC::UnsignedGreaterThanOrEqual;
        let room = self.b.ins().icmp_imm(ge, left, i64::from(lanes));
        self.b.ins().band(ahead, room)
    }

    /// True when accesses `s` and `a` touch disjoint bytes in iterations
    /// `i0..n`: access `base[i + off]` covers `base + (i0 + off) * size`
    /// up to `base + (n + off) * size`.
    fn disjoint(
        &mut self,
        plan: &Plan,
        s: usize,
        a: usize,
        i0: ir::Value,
        n: ir::Value,
    ) -> Result<ir::Value> {
        let (s_lo, s_hi) = self.range(plan, s, i0, n)?;
        let (a_lo, a_hi) = self.range(plan, a, i0, n)?;
        let le = IntCC::UnsignedLessThanOrEqual;
        let before = self.b.ins().icmp(le, s_hi, a_lo);
        let after = self.b.ins().icmp(le, a_hi, s_lo);
        Ok(self.b.ins().bor(before, after))
    }

    fn range(
        &mut self,
        plan: &Plan,
        x: usize,
        i0: ir::Value,
        n: ir::Value,
    ) -> Result<(ir::Value, ir::Value)> {
        let acc = &plan.accesses[x];
        let (size, offset) = (acc.size as i64, acc.offset);
        let base = self.read_var(acc.base)?;
        let (lo, hi) = match offset {
            Some(off) => {
                let ty = self.f.vars[plan.var].ty;
                let off = self.expr(off)?;
                let off = self.widen_i64(off, &ty);
                (self.b.ins().iadd(i0, off), self.b.ins().iadd(n, off))
            }
            None => (i0, n),
        };
        let mut at = |x: ir::Value| {
            let bytes = self.b.ins().imul_imm(x, size);
            self.b.ins().iadd(base, bytes)
        };
        Ok((at(lo), at(hi)))
    }

    fn vector_stmt(&mut self, s: &Stmt, lanes: &mut Lanes) -> Result<()> {
        match &s.kind {
            StmtKind::Decl { var, init } => {
                let x = match init {
                    Some(e) => self.vector(*e, lanes)?,
                    None => self.zeros(&self.f.vars[*var].ty, lanes.plan.lanes)?,
                };
                self.b.def_var(lanes.vars[var], x);
            }
            StmtKind::Assign { place, value } => {
                let x = self.vector(*value, lanes)?;
                match self.f.exprs[*place].kind {
                    Expr::Var(v) => self.b.def_var(lanes.vars[&v], x),
                    _ => {
                        let (addr, imm) = self.lane_zero(*place, lanes)?;
                        self.b.ins().store(MemFlags::new(), x, addr, imm);
                        self.known.clear();
                    }
                }
            }
            _ => unreachable!("the plan admits declarations and assignments only"),
        }
        Ok(())
    }

    /// A vector of zeros of `ty`'s lanes.
    fn zeros(&mut self, ty: &Type, lanes: u32) -> Result<ir::Value> {
        let vty = vector_type(ty, lanes)?;
        let zero = if *ty == BOOL {
            self.b.ins().iconst(vty.lane_type(), 0)
        } else {
            self.zero(ty)?
        };
        Ok(self.b.ins().splat(vty, zero))
    }

    /// The lanes of `e` (a mask for a `bool`).
    fn vector(&mut self, e: ExprId, lanes: &mut Lanes) -> Result<ir::Value> {
        let f = self.f;
        let ty = *f.ty(e);
        let n = lanes.plan.lanes;
        if ty == BOOL {
            return self.mask(e, lanes);
        }
        if lanes.plan.invariants.contains(&e) {
            let x = self.expr(e)?;
            return Ok(self.b.ins().splat(vector_type(&ty, n)?, x));
        }
        let float = types::is_float(&ty);
        Ok(match f.exprs[e].kind {
            Expr::Var(v) => self.b.use_var(lanes.vars[&v]),
            Expr::Index(..) => {
                let (addr, imm) = self.lane_zero(e, lanes)?;
                let vty = vector_type(&ty, n)?;
                self.b.ins().load(vty, MemFlags::new(), addr, imm)
            }
            Expr::Unary(op, a) => {
                let x = self.vector(a, lanes)?;
                match op {
                    UnOp::Neg if float => self.b.ins().fneg(x),
                    UnOp::Neg => self.b.ins().ineg(x),
                    _ => self.b.ins().bnot(x),
                }
            }
            Expr::Select(c, a, b) => {
                let m = self.mask(c, lanes)?;
                let x = self.vector(a, lanes)?;
                let y = self.vector(b, lanes)?;
                let vty = vector_type(&ty, n)?;
                let m = if self.b.func.dfg.value_type(m) == vty {
                    m
                } else {
                    let little = MemFlags::new().with_endianness(Endianness::Little);
                    self.b.ins().bitcast(vty, little, m)
                };
                self.b.ins().bitselect(m, x, y)
            }
            Expr::Binary(op, a, b) => {
                let x = self.vector(a, lanes)?;
                let y = self.vector(b, lanes)?;
                let ins = self.b.ins();
                match (op, float) {
                    (BinOp::Add, true) => ins.fadd(x, y),
                    (BinOp::Sub, true) => ins.fsub(x, y),
                    (BinOp::Mul, true) => ins.fmul(x, y),
                    (BinOp::Div, true) => ins.fdiv(x, y),
                    (BinOp::Add, false) => ins.iadd(x, y),
                    (BinOp::Sub, false) => ins.isub(x, y),
                    (BinOp::Mul, false) => ins.imul(x, y),
                    (BinOp::BitAnd, _) => ins.band(x, y),
                    (BinOp::BitOr, _) => ins.bor(x, y),
                    _ => ins.bxor(x, y),
                }
            }
            _ => unreachable!("the plan admits no other vector expression"),
        })
    }

    /// The address of the place `base[i + offset]` for the first lane: for
    /// a constant offset, `base + i * size` (one per pointer and vector
    /// iteration) and the offset's bytes as the access's immediate.
    fn lane_zero(&mut self, e: ExprId, lanes: &mut Lanes) -> Result<(ir::Value, i32)> {
        let f = self.f;
        let Expr::Index(base, index) = f.exprs[e].kind else {
            unreachable!("the plan admits indexed places only")
        };
        let Expr::Var(p) = f.exprs[base].kind else {
            unreachable!("the plan admits pointer variables only")
        };
        let size = f.ty(e).size().expect("a lane type") as i64;
        let constant = |x: ExprId| match f.exprs[x].kind {
            Expr::Const(Const::Int(c)) => i32::try_from(c * size).ok(),
            _ => None,
        };
        let i = |x: ExprId| f.exprs[x].kind == Expr::Var(lanes.plan.var);
        let imm = match f.exprs[index].kind {
            _ if i(index) => Some(0),
            Expr::Binary(BinOp::Add, a, b) if i(a) => constant(b),
            Expr::Binary(BinOp::Add, a, b) if i(b) => constant(a),
            _ => None,
        };
        let Some(imm) = imm else {
            return Ok((self.place_addr(e)?, 0));
        };
        if let Some(&row) = lanes.rows.get(&p) {
            return Ok((row, imm));
        }
        let ty = f.vars[lanes.plan.var].ty;
        let i = self.read_var(lanes.plan.var)?;
        let i = self.widen_i64(i, &ty);
        let bytes = self.b.ins().imul_imm(i, size);
        let start = self.read_var(p)?;
        let row = self.b.ins().iadd(start, bytes);
        lanes.rows.insert(p, row);
        Ok((row, imm))
    }

    /// The lane mask of the `bool` `e`: all ones where it holds.
    fn mask(&mut self, e: ExprId, lanes: &mut Lanes) -> Result<ir::Value> {
        let f = self.f;
        Ok(match f.exprs[e].kind {
            Expr::Var(v) => self.b.use_var(lanes.vars[&v]),
            Expr::Unary(_, a) => {
                let m = self.mask(a, lanes)?;
                self.b.ins().bnot(m)
            }
            Expr::Binary(op @ (BinOp::And | BinOp::Or), a, b) => {
                let x = self.mask(a, lanes)?;
                let y = self.mask(b, lanes)?;
                if op == BinOp::And {
                    self.b.ins().band(x, y)
                } else {
                    self.b.ins().bor(x, y)
                }
            }
            Expr::Binary(op, a, b) => {
                let ty = *f.ty(a);
                let x = self.vector(a, lanes)?;
                let y = self.vector(b, lanes)?;
                if types::is_float(&ty) {
                    self.b.ins().fcmp(float_cc(op), x, y)
                } else {
                    self.b.ins().icmp(int_cc(op, types::is_signed(&ty)), x, y)
                }
            }
            _ => unreachable!("the plan admits no other mask"),
        })
    }
}

/// The vector loop's state: its plan and the body's variables as vectors.
struct Lanes<'p> {
    plan: &'p Plan,
    vars: HashMap<VarId, Variable>,
    /// `base + i * size` per pointer, in this vector iteration.
    rows: HashMap<VarId, ir::Value>,
}

/// `lanes` values of `ty` (a `bool` is a mask of integers as wide as the
/// lanes).
fn vector_type(ty: &Type, lanes: u32) -> Result<ir::Type> {
    let lane = match ty {
        Type::Scalar(Scalar::Bool) => ir::Type::int((128 / lanes) as u16).expect("32 or 64 bits"),
        t => types::value(t)?,
    };
    Ok(lane.by(lanes).expect("128-bit vectors"))
}
