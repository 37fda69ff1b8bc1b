//! Expressions: values, places, operators and casts, with the meaning the
//! C backend's output has under `-fwrapv` (see `exec::interp::ops` for the
//! same rules in the interpreter).

use super::jit_error;
use super::lower::Lower;
use super::types::{self, PTR};
use crate::ir::{BinOp, Const, Expr, ExprId, Scalar, Type, UnOp};
use crate::Result;
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{self, BlockArg, InstBuilder};

impl Lower<'_, '_> {
    /// The value of `e`: its type's Cranelift type (an array's address).
    pub(super) fn expr(&mut self, e: ExprId) -> Result<ir::Value> {
        let f = self.f;
        let data = &f.exprs[e];
        match &data.kind {
            Expr::Var(v) => self.read_var(*v),
            Expr::Const(c) => self.constant(c, &data.ty),
            Expr::Unary(op, a) => self.unary(*op, *a, &data.ty),
            Expr::Binary(op, a, b) => self.binary(*op, *a, *b, &data.ty),
            Expr::Cast(a) => {
                let x = self.expr(*a)?;
                self.convert(x, f.ty(*a), &data.ty)
            }
            Expr::Index(..) | Expr::Deref(_) | Expr::Field(..) => {
                match data.ty {
                    // An element that is an array decays to its address; a
                    // struct's value is its address.
                    Type::Array { .. } | Type::Struct(_) => self.place_addr(e),
                    t => {
                        let ty = types::value(&t)?;
                        self.load_place(e, ty)
                    }
                }
            }
            Expr::AddrOf(p) => self.place_addr(*p),
            Expr::Call(func, args) => self
                .call(*func, args)?
                .ok_or_else(|| jit_error("the value of a call of a void function")),
            Expr::FuncAddr(func) => self.func_addr(*func),
            Expr::Intrinsic(op, args) => self
                .intrinsic(*op, args, &data.ty)?
                .ok_or_else(|| jit_error("the value of a void intrinsic")),
            Expr::Select(c, a, b) => self.select(*c, *a, *b, &data.ty),
        }
    }

    /// A condition: 1 when `e` holds (as C tests it: non-zero, non-null).
    pub(super) fn cond(&mut self, e: ExprId) -> Result<ir::Value> {
        let x = self.expr(e)?;
        let t = *self.f.ty(e);
        if t == Type::Scalar(Scalar::Bool) {
            return Ok(x);
        }
        self.truth(x, &t)
    }

    /// `(bool) x` for `x` of type `t`.
    fn truth(&mut self, x: ir::Value, t: &Type) -> Result<ir::Value> {
        Ok(match t {
            Type::Scalar(Scalar::Bool) => x,
            t if types::is_float(t) => {
                let zero = self.zero(t)?;
                // NaN is true, as in C (`!=` is unordered-or-not-equal).
                self.b.ins().fcmp(FloatCC::NotEqual, x, zero)
            }
            Type::Scalar(_) | Type::Ptr { .. } | Type::Array { .. } | Type::FnPtr(_) => {
                self.b.ins().icmp_imm(IntCC::NotEqual, x, 0)
            }
            Type::Void | Type::Opaque(_) | Type::Struct(_) => {
                return Err(jit_error(&format!("a {t} value used as a condition")))
            }
        })
    }

    fn constant(&mut self, c: &Const, ty: &Type) -> Result<ir::Value> {
        let ins = self.b.ins();
        Ok(match (c, ty) {
            (Const::Int(i), Type::Scalar(s)) if s.is_int() => ins.iconst(types::scalar(*s), *i),
            (Const::Int(i), Type::Ptr { .. } | Type::FnPtr(_)) => ins.iconst(PTR, *i),
            (Const::Int(i), Type::Scalar(Scalar::F32)) => ins.f32const(*i as f32),
            (Const::Int(i), Type::Scalar(Scalar::F64)) => ins.f64const(*i as f64),
            (Const::Int(i), Type::Scalar(Scalar::Bool)) => {
                ins.iconst(ir::types::I8, i64::from(*i != 0))
            }
            (Const::F32(x), Type::Scalar(Scalar::F32)) => ins.f32const(*x),
            (Const::F64(x), Type::Scalar(Scalar::F64)) => ins.f64const(*x),
            (Const::Bool(b), Type::Scalar(Scalar::Bool)) => {
                ins.iconst(ir::types::I8, i64::from(*b))
            }
            (Const::Null, Type::Ptr { .. } | Type::FnPtr(_)) => ins.iconst(PTR, 0),
            (Const::Str(s), Type::Ptr { .. }) => {
                let mut bytes = s.as_bytes().to_vec();
                bytes.push(0);
                let bytes = bytes.into_boxed_slice();
                // The boxed bytes never move: the code owns them.
                let addr = bytes.as_ptr() as i64;
                self.strings.push(bytes);
                self.b.ins().iconst(PTR, addr)
            }
            _ => return Err(jit_error(&format!("the constant {c:?} of type {ty}"))),
        })
    }

    /// The address of a place: a variable, `base[i]` or `*p`.
    pub(super) fn place_addr(&mut self, e: ExprId) -> Result<ir::Value> {
        let f = self.f;
        match &f.exprs[e].kind {
            Expr::Var(v) => self.var_addr(*v),
            Expr::Index(base, i) => {
                let p = self.expr(*base)?;
                let size = types::elem_size(f.ty(*base))?;
                let i_ty = *f.ty(*i);
                let i = self.expr(*i)?;
                self.offset(p, i, &i_ty, size, false)
            }
            Expr::Deref(p) => self.expr(*p),
            Expr::Field(base, i) => {
                let Type::Struct(s) = f.ty(*base) else {
                    return Err(jit_error("a field of a value that is not a struct"));
                };
                let offset = s.offset(*i as usize) as i64;
                let p = self.expr(*base)?;
                Ok(self.b.ins().iadd_imm(p, offset))
            }
            _ => Err(jit_error(
                "the address of an expression that is not a place",
            )),
        }
    }

    /// `p + i * size` (minus when `neg`), with `i` of integer type `i_ty`
    /// widened as C converts it (signed ones sign-extended).
    fn offset(
        &mut self,
        p: ir::Value,
        i: ir::Value,
        i_ty: &Type,
        size: u64,
        neg: bool,
    ) -> Result<ir::Value> {
        let i = self.widen(i, i_ty, PTR)?;
        let scaled = if size.is_power_of_two() {
            let shift = size.trailing_zeros();
            if shift == 0 {
                i
            } else {
                self.b.ins().ishl_imm(i, i64::from(shift))
            }
        } else {
            self.b.ins().imul_imm(i, size as i64)
        };
        Ok(if neg {
            self.b.ins().isub(p, scaled)
        } else {
            self.b.ins().iadd(p, scaled)
        })
    }

    /// An integer (or `bool`) `x` of type `t` at width `to`: extended by its
    /// signedness, or truncated.
    fn widen(&mut self, x: ir::Value, t: &Type, to: ir::Type) -> Result<ir::Value> {
        let from = types::value(t)?;
        Ok(match from.bits().cmp(&to.bits()) {
            std::cmp::Ordering::Equal => x,
            std::cmp::Ordering::Greater => self.b.ins().ireduce(to, x),
            std::cmp::Ordering::Less if types::is_signed(t) => self.b.ins().sextend(to, x),
            std::cmp::Ordering::Less => self.b.ins().uextend(to, x),
        })
    }

    fn unary(&mut self, op: UnOp, a: ExprId, ty: &Type) -> Result<ir::Value> {
        let at = *self.f.ty(a);
        let x = self.expr(a)?;
        Ok(match op {
            UnOp::Not => {
                let t = self.truth(x, &at)?;
                self.b.ins().bxor_imm(t, 1)
            }
            UnOp::Neg if types::is_float(&at) => self.b.ins().fneg(x),
            // Wrapping at the type's width is what `(int8_t)-x` gives.
            UnOp::Neg if is_int(&at) => self.b.ins().ineg(x),
            UnOp::BitNot if is_int(&at) => self.b.ins().bnot(x),
            _ => return Err(jit_error(&format!("operator {op:?} on {at} (giving {ty})"))),
        })
    }

    fn binary(&mut self, op: BinOp, a: ExprId, b: ExprId, ty: &Type) -> Result<ir::Value> {
        if matches!(op, BinOp::And | BinOp::Or) {
            return self.logical(op, a, b);
        }
        let (at, bt) = (*self.f.ty(a), *self.f.ty(b));
        let x = self.expr(a)?;
        let y = self.expr(b)?;
        if op.is_comparison() {
            return self.compare(op, x, &at, y, &bt);
        }
        let ptr = |t: &Type| matches!(t, Type::Ptr { .. } | Type::Array { .. });
        match (ptr(&at), ptr(&bt), op) {
            (true, false, BinOp::Add | BinOp::Sub) => {
                let size = types::elem_size(&at)?;
                self.offset(x, y, &bt, size, op == BinOp::Sub)
            }
            (false, true, BinOp::Add) => {
                let size = types::elem_size(&bt)?;
                self.offset(y, x, &at, size, false)
            }
            (true, true, BinOp::Sub) => {
                let size = types::elem_size(&at)?;
                let bytes = self.b.ins().isub(x, y);
                let n = match size {
                    1 => bytes,
                    s if s.is_power_of_two() => {
                        self.b.ins().sshr_imm(bytes, i64::from(s.trailing_zeros()))
                    }
                    s => self.b.ins().sdiv_imm(bytes, s as i64),
                };
                self.widen(n, &Type::Scalar(Scalar::I64), types::value(ty)?)
            }
            (false, false, _) if types::is_float(&at) => {
                let y = self.convert(y, &bt, &at)?;
                let ins = self.b.ins();
                Ok(match op {
                    BinOp::Add => ins.fadd(x, y),
                    BinOp::Sub => ins.fsub(x, y),
                    BinOp::Mul => ins.fmul(x, y),
                    BinOp::Div => ins.fdiv(x, y),
                    _ => return Err(jit_error(&format!("operator {op} on {at}"))),
                })
            }
            (false, false, BinOp::Shl | BinOp::Shr) if is_int(&at) && is_int(&bt) => {
                self.shift(op, x, &at, y, &bt)
            }
            (false, false, _) if is_int(&at) => {
                let y = self.convert(y, &bt, &at)?;
                self.int_arith(op, x, y, &at)
            }
            (false, false, BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor)
                if at == Type::Scalar(Scalar::Bool) =>
            {
                let y = self.convert(y, &bt, &at)?;
                let ins = self.b.ins();
                Ok(match op {
                    BinOp::BitAnd => ins.band(x, y),
                    BinOp::BitOr => ins.bor(x, y),
                    _ => ins.bxor(x, y),
                })
            }
            _ => Err(jit_error(&format!("operator {op} on {at} and {bt}"))),
        }
    }

    /// `+ - * / % & | ^` on integers of type `t`. Narrow types are promoted
    /// to `int` where that changes the result (division and remainder:
    /// `(int8_t)-128 / -1` is 128 in `int`, -128 after the C writer's cast).
    fn int_arith(&mut self, op: BinOp, x: ir::Value, y: ir::Value, t: &Type) -> Result<ir::Value> {
        let signed = types::is_signed(t);
        if types::is_narrow(t) && matches!(op, BinOp::Div | BinOp::Rem) {
            let ty = types::value(t)?;
            let i32_ = ir::types::I32;
            let (x, y) = (self.widen(x, t, i32_)?, self.widen(y, t, i32_)?);
            let r = if op == BinOp::Div {
                self.b.ins().sdiv(x, y)
            } else {
                self.b.ins().srem(x, y)
            };
            return Ok(self.b.ins().ireduce(ty, r));
        }
        let ins = self.b.ins();
        Ok(match op {
            BinOp::Add => ins.iadd(x, y),
            BinOp::Sub => ins.isub(x, y),
            BinOp::Mul => ins.imul(x, y),
            BinOp::Div if signed => ins.sdiv(x, y),
            BinOp::Div => ins.udiv(x, y),
            BinOp::Rem if signed => ins.srem(x, y),
            BinOp::Rem => ins.urem(x, y),
            BinOp::BitAnd => ins.band(x, y),
            BinOp::BitOr => ins.bor(x, y),
            BinOp::BitXor => ins.bxor(x, y),
            _ => return Err(jit_error(&format!("operator {op} on {t}"))),
        })
    }

    /// `x << y`, `x >> y`: narrow types shift as the `int` they promote to
    /// (so `(uint8_t)(x << 9)` is 0), then are truncated back.
    fn shift(
        &mut self,
        op: BinOp,
        x: ir::Value,
        t: &Type,
        y: ir::Value,
        yt: &Type,
    ) -> Result<ir::Value> {
        let ty = types::value(t)?;
        let work = if types::is_narrow(t) {
            ir::types::I32
        } else {
            ty
        };
        let x = self.widen(x, t, work)?;
        let y = self.widen(y, yt, work)?;
        let r = match op {
            BinOp::Shl => self.b.ins().ishl(x, y),
            // A promoted unsigned narrow value is non-negative: its
            // arithmetic shift is the logical one.
            _ if types::is_signed(t) || types::is_narrow(t) => self.b.ins().sshr(x, y),
            _ => self.b.ins().ushr(x, y),
        };
        Ok(if work == ty {
            r
        } else {
            self.b.ins().ireduce(ty, r)
        })
    }

    fn compare(
        &mut self,
        op: BinOp,
        x: ir::Value,
        at: &Type,
        y: ir::Value,
        bt: &Type,
    ) -> Result<ir::Value> {
        if types::is_float(at) {
            let y = self.convert(y, bt, at)?;
            return Ok(self.b.ins().fcmp(float_cc(op), x, y));
        }
        if *at == Type::Void || types::is_float(bt) {
            return Err(jit_error(&format!("comparison {op} of {at} and {bt}")));
        }
        let y = self.convert(y, bt, at)?;
        Ok(self.b.ins().icmp(int_cc(op, types::is_signed(at)), x, y))
    }

    /// `&&` and `||`: the right operand runs only when the left does not
    /// decide (it may read memory the left guards: `p && *p`), unless it
    /// cannot fault.
    fn logical(&mut self, op: BinOp, a: ExprId, b: ExprId) -> Result<ir::Value> {
        let x = self.cond(a)?;
        if self.speculable(b) {
            let y = self.cond(b)?;
            return Ok(if op == BinOp::And {
                self.b.ins().band(x, y)
            } else {
                self.b.ins().bor(x, y)
            });
        }
        let rhs = self.b.create_block();
        let done = self.b.create_block();
        let r = self.b.append_block_param(done, ir::types::I8);
        let decided = [BlockArg::Value(x)];
        if op == BinOp::And {
            self.b.ins().brif(x, rhs, &[], done, &decided);
        } else {
            self.b.ins().brif(x, done, &decided, rhs, &[]);
        }
        self.seal(rhs);
        self.enter(rhs);
        let y = self.cond(b)?;
        self.b.ins().jump(done, &[BlockArg::Value(y)]);
        self.seal(done);
        self.enter(done);
        Ok(r)
    }

    /// `c ? a : b`: only the arm taken runs, unless neither can fault.
    fn select(&mut self, c: ExprId, a: ExprId, b: ExprId, ty: &Type) -> Result<ir::Value> {
        let cv = self.cond(c)?;
        let (at, bt) = (*self.f.ty(a), *self.f.ty(b));
        if self.speculable(a) && self.speculable(b) {
            let x = self.expr(a)?;
            let x = self.convert(x, &at, ty)?;
            let y = self.expr(b)?;
            let y = self.convert(y, &bt, ty)?;
            return Ok(self.b.ins().select(cv, x, y));
        }
        let then_b = self.b.create_block();
        let else_b = self.b.create_block();
        let done = self.b.create_block();
        let r = self.b.append_block_param(done, types::value(ty)?);
        self.b.ins().brif(cv, then_b, &[], else_b, &[]);
        for (arm, block, t) in [(a, then_b, at), (b, else_b, bt)] {
            self.seal(block);
            self.enter(block);
            let x = self.expr(arm)?;
            let x = self.convert(x, &t, ty)?;
            self.b.ins().jump(done, &[BlockArg::Value(x)]);
        }
        self.seal(done);
        self.enter(done);
        Ok(r)
    }

    /// True if evaluating `e` cannot fault or have effects: no memory
    /// reads, calls, or integer division. Such operands may run
    /// unconditionally.
    fn speculable(&self, e: ExprId) -> bool {
        let f = self.f;
        let here = match &f.exprs[e].kind {
            Expr::Index(..) | Expr::Deref(_) | Expr::Call(..) | Expr::Intrinsic(..) => false,
            Expr::Binary(BinOp::Div | BinOp::Rem, ..) => types::is_float(&f.exprs[e].ty),
            Expr::AddrOf(p) => return self.speculable_addr(*p),
            _ => true,
        };
        let mut ok = here;
        f.for_each_child(e, |c| ok = ok && self.speculable(c));
        ok
    }

    /// True if computing the address of place `p` cannot fault.
    fn speculable_addr(&self, p: ExprId) -> bool {
        match &self.f.exprs[p].kind {
            Expr::Var(_) => true,
            Expr::Index(b, i) => {
                let base = matches!(self.f.exprs[*b].kind, Expr::Var(_)) || self.speculable(*b);
                base && self.speculable(*i)
            }
            Expr::Deref(q) => self.speculable(*q),
            _ => false,
        }
    }

    /// `(to) x` for `x` of type `from`, with C's conversions.
    pub(super) fn convert(&mut self, x: ir::Value, from: &Type, to: &Type) -> Result<ir::Value> {
        if from == to {
            return Ok(x);
        }
        let bad = || jit_error(&format!("a cast from {from} to {to}"));
        let fty = self.b.func.dfg.value_type(x);
        Ok(match to {
            Type::Scalar(Scalar::Bool) => self.truth(x, from)?,
            Type::Scalar(s) if s.is_float() => {
                let to_ty = types::scalar(*s);
                match from {
                    _ if types::is_float(from) => {
                        if to_ty.bits() > fty.bits() {
                            self.b.ins().fpromote(to_ty, x)
                        } else {
                            self.b.ins().fdemote(to_ty, x)
                        }
                    }
                    Type::Scalar(_) => {
                        let signed = types::is_signed(from);
                        let wide = if fty.bits() < 32 { ir::types::I32 } else { fty };
                        let x = self.widen(x, from, wide)?;
                        if signed {
                            self.b.ins().fcvt_from_sint(to_ty, x)
                        } else {
                            self.b.ins().fcvt_from_uint(to_ty, x)
                        }
                    }
                    _ => return Err(bad()),
                }
            }
            Type::Scalar(s) => {
                let to_ty = types::scalar(*s);
                match from {
                    _ if types::is_float(from) => {
                        // As gcc converts: through a 32-bit (or 64-bit) integer,
                        // truncated. Out of range is undefined in C; saturated here.
                        let wide = if to_ty.bits() < 32 {
                            ir::types::I32
                        } else {
                            to_ty
                        };
                        let r = if s.is_signed() || to_ty.bits() < 32 {
                            self.b.ins().fcvt_to_sint_sat(wide, x)
                        } else {
                            self.b.ins().fcvt_to_uint_sat(wide, x)
                        };
                        if wide == to_ty {
                            r
                        } else {
                            self.b.ins().ireduce(to_ty, r)
                        }
                    }
                    Type::Scalar(_) | Type::Ptr { .. } | Type::Array { .. } | Type::FnPtr(_) => {
                        self.widen(x, from, to_ty)?
                    }
                    Type::Void | Type::Opaque(_) | Type::Struct(_) => return Err(bad()),
                }
            }
            Type::Ptr { .. } | Type::FnPtr(_) => match from {
                Type::Ptr { .. } | Type::Array { .. } | Type::FnPtr(_) => x,
                Type::Scalar(s) if s.is_int() || *s == Scalar::Bool => self.widen(x, from, PTR)?,
                _ => return Err(bad()),
            },
            Type::Void | Type::Array { .. } | Type::Opaque(_) | Type::Struct(_) => {
                return Err(bad())
            }
        })
    }
}

/// The condition of comparison `op` on floats: ordered, except `!=`
/// (true when either side is NaN, as in C).
pub(super) fn float_cc(op: BinOp) -> FloatCC {
    match op {
        BinOp::Eq => FloatCC::Equal,
        BinOp::Ne => FloatCC::NotEqual,
        BinOp::Lt => FloatCC::LessThan,
        BinOp::Le => FloatCC::LessThanOrEqual,
        BinOp::Gt => FloatCC::GreaterThan,
        _ => FloatCC::GreaterThanOrEqual,
    }
}

/// The condition of comparison `op` on integers (`signed` or not).
pub(super) fn int_cc(op: BinOp, signed: bool) -> IntCC {
    match (op, signed) {
        (BinOp::Eq, _) => IntCC::Equal,
        (BinOp::Ne, _) => IntCC::NotEqual,
        (BinOp::Lt, true) => IntCC::SignedLessThan,
        (BinOp::Le, true) => IntCC::SignedLessThanOrEqual,
        (BinOp::Gt, true) => IntCC::SignedGreaterThan,
        (_, true) => IntCC::SignedGreaterThanOrEqual,
        (BinOp::Lt, false) => IntCC::UnsignedLessThan,
        (BinOp::Le, false) => IntCC::UnsignedLessThanOrEqual,
        (BinOp::Gt, false) => IntCC::UnsignedGreaterThan,
        (_, false) => IntCC::UnsignedGreaterThanOrEqual,
    }
}

/// True for the integer types (not `bool`).
fn is_int(t: &Type) -> bool {
    t.as_scalar().is_some_and(Scalar::is_int)
}
