//! Expressions: values, places (addresses), operators and calls, with
//! the meaning of C compiled with `-fwrapv` (`ops.rs` has the operators).

use super::{elem_size, err, Callee, Frame, Slot};
use crate::exec::interp::builtins;
use crate::exec::interp::memory::ptr_add;
use crate::exec::interp::ops;
use crate::exec::interp::value::Value;
use crate::ir::{BinOp, Const, EntityId, Expr, ExprId, FuncId, Intrinsic, Type};
use crate::Result;

impl Frame<'_> {
    /// The value of expression `e`.
    pub(super) fn eval(&mut self, e: ExprId) -> Result<Value> {
        let f = self.f;
        let data = &f.exprs[e];
        match &data.kind {
            Expr::Var(v) => self.read_var(*v),
            Expr::Const(c) => self.constant(c, &data.ty),
            Expr::Unary(op, a) => ops::unary(*op, self.eval(*a)?),
            Expr::Binary(op, a, b) => self.binary(*op, *a, *b, &data.ty),
            Expr::Cast(a) => ops::cast(self.eval(*a)?, &data.ty),
            Expr::Index(..) | Expr::Deref(_) | Expr::Field(..) => {
                let p = self.place(e)?;
                match data.ty {
                    // An element of array type decays to its address; a
                    // struct's value is its address.
                    Type::Array { .. } | Type::Struct(_) => Ok(Value::Ptr(p)),
                    _ => self.it.memory.load_at(p, &data.ty),
                }
            }
            Expr::AddrOf(p) => Ok(Value::Ptr(self.place(*p)?)),
            Expr::Call(func, args) => self.call(*func, args),
            Expr::Intrinsic(op, args) => self.intrinsic(*op, args),
            Expr::FuncAddr(func) => {
                let name = &self.f.externs[*func].name;
                Ok(self.it.memory.function_ptr(name))
            }
            Expr::Select(c, a, b) => {
                let arm = if ops::truthy(self.eval(*c)?)? { a } else { b };
                self.eval(*arm)
            }
        }
    }

    fn constant(&mut self, c: &Const, ty: &Type) -> Result<Value> {
        let v = match (c, ty) {
            (Const::Int(i), Type::Scalar(s)) => Value::int_of(*s, *i),
            (Const::Int(i), Type::Ptr { .. } | Type::FnPtr(_)) => Some(Value::Ptr(*i as u64)),
            (Const::F32(x), _) => Some(Value::F32(*x)),
            (Const::F64(x), _) => Some(Value::F64(*x)),
            (Const::Bool(b), _) => Some(Value::Bool(*b)),
            (Const::Null, _) => Some(Value::Ptr(0)),
            (Const::Str(s), _) => Some(Value::Ptr(self.it.memory.literal(s)?)),
            _ => None,
        };
        v.map_or_else(|| err(format!("constant {c:?} of type {ty}")), Ok)
    }

    fn binary(&mut self, op: BinOp, a: ExprId, b: ExprId, ty: &Type) -> Result<Value> {
        use BinOp::{And, Or};
        let x = self.eval(a)?;
        // `&&` and `||` short-circuit (their operands have no effects).
        if let (And | Or, Value::Bool(bx)) = (op, x) {
            if bx == (op == Or) {
                return Ok(x);
            }
        }
        let y = self.eval(b)?;
        let ptr_operand = match (x, y) {
            (Value::Ptr(_), _) => a,
            (_, Value::Ptr(_)) => b,
            _ => return ops::binary(op, x, y),
        };
        // Only arithmetic needs the element size (comparisons work on any pointer).
        let elem = match op {
            BinOp::Add | BinOp::Sub => elem_size(self.f.ty(ptr_operand))?,
            _ => 1,
        };
        ops::ptr_binary(op, x, y, elem, ty)
    }

    /// The address of the place expression `e` (`Var`, `Index`, `Deref`).
    pub(super) fn place(&mut self, e: ExprId) -> Result<u64> {
        let f = self.f;
        let data = &f.exprs[e];
        match &data.kind {
            Expr::Var(v) => match self.slots[v.index()] {
                Slot::Mem(p) => Ok(p),
                _ => err(format!(
                    "address of `{}`, which is not marked addr_taken",
                    f.var_name(*v)
                )),
            },
            Expr::Index(base, i) => {
                let p = self.eval(*base)?;
                let i = self.eval(*i)?;
                let (Value::Ptr(p), Some(i)) = (p, i.as_i64()) else {
                    return err(format!("indexing {p} with {i}"));
                };
                let size = data.ty.size();
                let off = size.and_then(|s| i.checked_mul(s as i64));
                off.map_or_else(
                    || err(format!("index {i} of elements of type {}", data.ty)),
                    |o| ptr_add(p, o),
                )
            }
            Expr::Deref(p) => match self.eval(*p)? {
                Value::Ptr(p) => Ok(p),
                v => err(format!("dereference of the non-pointer {v}")),
            },
            // The struct's address (its value), plus the field's offset.
            Expr::Field(base, i) => match (self.eval(*base)?, f.ty(*base)) {
                (Value::Ptr(p), Type::Struct(s)) => ptr_add(p, s.offset(*i as usize) as i64),
                (v, t) => err(format!("field {i} of {v} of type {t}")),
            },
            _ => err(format!("expression {e} is not a place")),
        }
    }

    fn call(&mut self, func: FuncId, args: &[ExprId]) -> Result<Value> {
        let decl = &self.f.externs[func];
        let mut vals = Vec::with_capacity(args.len());
        for &a in args {
            vals.push(self.eval(a)?);
        }
        let n = decl.params.len();
        if vals.len() < n || (!decl.variadic && vals.len() != n) {
            return err(format!(
                "`{}` takes {n} arguments, got {}",
                decl.name,
                vals.len()
            ));
        }
        let r = match self.callees[func.index()] {
            Callee::Indirect => {
                let name = self.pointee(vals[0])?;
                let callee = super::callee(self.it, &name);
                self.dispatch(callee, &name, &vals[1..])?
            }
            callee => self.dispatch(callee, &decl.name, &vals)?,
        };
        if let (Type::Struct(_), Value::Ptr(q)) = (&decl.ret, r) {
            self.temps.push(q);
        }
        match &decl.ret {
            Type::Void => Ok(Value::Void),
            t if r.fits(t) => Ok(r),
            t => err(format!(
                "extern `{}` returned {r} of type {}, but is declared to return {t}",
                decl.name,
                r.ty()
            )),
        }
    }

    /// Runs intrinsic `op` on the values of `args`.
    fn intrinsic(&mut self, op: Intrinsic, args: &[ExprId]) -> Result<Value> {
        let Some(run) = builtins::intrinsic(op) else {
            return err(format!(
                "@{} in a loop nest: a kernel that meets at a barrier or uses shared memory \
                 runs only simulated",
                op.name()
            ));
        };
        let mut vals = Vec::with_capacity(args.len());
        for &a in args {
            vals.push(self.eval(a)?);
        }
        let it = &mut *self.it;
        run(&mut it.memory, &mut it.output, &vals)
    }

    /// Runs `callee`, which a call of `name` found, on `vals`.
    fn dispatch(&mut self, callee: Callee, name: &str, vals: &[Value]) -> Result<Value> {
        super::dispatch(self.it, callee, name, vals)
    }

    /// The name of the function that `p` points to.
    fn pointee(&self, p: Value) -> Result<String> {
        super::pointee(&self.it.memory, p)
    }
}
