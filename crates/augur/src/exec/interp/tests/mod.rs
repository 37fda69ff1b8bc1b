//! Tests: functions built by hand with a small builder.

mod arith;
mod control;
mod memory;
mod printf;

use super::{Interpreter, Value};
use crate::ir::{
    BinOp, Const, Expr, ExprId, ExternDecl, Function, Scalar, Stmt, StmtKind, Type, UnOp, VarData,
    VarId, VarKind,
};

const BOOL: Type = Type::Scalar(Scalar::Bool);
const I8: Type = Type::Scalar(Scalar::I8);
const I32: Type = Type::Scalar(Scalar::I32);
const I64: Type = Type::Scalar(Scalar::I64);
const U32: Type = Type::Scalar(Scalar::U32);
const U64: Type = Type::Scalar(Scalar::U64);
const F32: Type = Type::Scalar(Scalar::F32);
const F64: Type = Type::Scalar(Scalar::F64);
const CHAR: Type = Type::Scalar(Scalar::Char);

fn ptr(to: Type) -> Type {
    Type::ptr(to)
}

/// Builds a [`Function`] tersely: variables, then expressions, then the body.
struct B {
    f: Function,
}

impl B {
    fn new(ret: Type) -> B {
        B {
            f: Function::new("test", ret),
        }
    }

    fn var(&mut self, name: &str, ty: Type, kind: VarKind, addr_taken: bool) -> VarId {
        self.f.vars.push(VarData {
            ty,
            kind,
            hint: None,
            name: Some(name.into()),
            addr_taken,
            loc: None,
        })
    }

    fn param(&mut self, name: &str, ty: Type) -> VarId {
        let v = self.var(name, ty, VarKind::Param(self.f.params.len() as u32), false);
        self.f.params.push(v);
        v
    }

    fn local(&mut self, name: &str, ty: Type) -> VarId {
        self.var(name, ty, VarKind::Local, false)
    }

    /// A local whose address is taken (it lives in memory).
    fn addressed(&mut self, name: &str, ty: Type) -> VarId {
        self.var(name, ty, VarKind::Local, true)
    }

    fn v(&mut self, v: VarId) -> ExprId {
        let ty = self.f.vars[v].ty;
        self.f.expr(Expr::Var(v), ty)
    }

    fn int(&mut self, ty: Type, v: i64) -> ExprId {
        self.f.expr(Expr::Const(Const::Int(v)), ty)
    }

    fn i32(&mut self, v: i32) -> ExprId {
        self.int(I32, v as i64)
    }

    fn c(&mut self, c: Const, ty: Type) -> ExprId {
        self.f.expr(Expr::Const(c), ty)
    }

    fn str(&mut self, s: &str) -> ExprId {
        self.c(Const::Str(s.into()), ptr(CHAR))
    }

    /// `a op b`, typed `bool` for comparisons and like `a` otherwise.
    fn bin(&mut self, op: BinOp, a: ExprId, b: ExprId) -> ExprId {
        let ty = if op.is_comparison() {
            BOOL
        } else {
            *self.f.ty(a)
        };
        self.f.expr(Expr::Binary(op, a, b), ty)
    }

    fn un(&mut self, op: UnOp, a: ExprId) -> ExprId {
        let ty = *self.f.ty(a);
        self.f.expr(Expr::Unary(op, a), ty)
    }

    fn cast(&mut self, a: ExprId, ty: Type) -> ExprId {
        self.f.expr(Expr::Cast(a), ty)
    }

    fn index(&mut self, base: ExprId, i: ExprId) -> ExprId {
        let ty = *self.f.ty(base).element().expect("indexable");
        self.f.expr(Expr::Index(base, i), ty)
    }

    fn deref(&mut self, p: ExprId) -> ExprId {
        let ty = *self.f.ty(p).element().expect("a pointer");
        self.f.expr(Expr::Deref(p), ty)
    }

    fn addr(&mut self, place: ExprId) -> ExprId {
        let ty = ptr(*self.f.ty(place));
        self.f.expr(Expr::AddrOf(place), ty)
    }

    fn select(&mut self, c: ExprId, a: ExprId, b: ExprId) -> ExprId {
        let ty = *self.f.ty(a);
        self.f.expr(Expr::Select(c, a, b), ty)
    }

    /// A call of the extern `name`, declared on first use.
    fn call(&mut self, name: &str, params: &[Type], ret: Type, args: &[ExprId]) -> ExprId {
        let existing = self
            .f
            .externs
            .iter()
            .find(|(_, d)| d.name == name)
            .map(|(k, _)| k);
        let func = existing.unwrap_or_else(|| {
            self.f.externs.push(ExternDecl {
                name: name.into(),
                params: params.to_vec(),
                ret,
                variadic: name == "printf",
                header: None,
                indirect: false,
            })
        });
        self.f.expr(Expr::Call(func, args.to_vec()), ret)
    }

    fn printf(&mut self, fmt: &str, args: &[ExprId]) -> ExprId {
        let mut all = vec![self.str(fmt)];
        all.extend_from_slice(args);
        self.call("printf", &[ptr(CHAR)], I32, &all)
    }

    /// Finishes the function with `body`.
    fn build(mut self, body: Vec<Stmt>) -> Function {
        self.f.body = body;
        if let Err(e) = crate::ir::verify::verify(&self.f) {
            panic!("test function does not verify: {e}\n{}", self.f);
        }
        self.f
    }
}

fn s(kind: StmtKind) -> Stmt {
    Stmt::new(kind)
}

fn decl(var: VarId, init: Option<ExprId>) -> Stmt {
    s(StmtKind::Decl { var, init })
}

fn assign(place: ExprId, value: ExprId) -> Stmt {
    s(StmtKind::Assign { place, value })
}

fn eval(e: ExprId) -> Stmt {
    s(StmtKind::Eval(e))
}

fn ret(e: ExprId) -> Stmt {
    s(StmtKind::Return(Some(e)))
}

fn while_(cond: ExprId, body: Vec<Stmt>) -> Stmt {
    s(StmtKind::While { cond, body })
}

fn for_(init: Stmt, cond: ExprId, step: Stmt, body: Vec<Stmt>) -> Stmt {
    s(StmtKind::For {
        init: Box::new(init),
        cond,
        step: Box::new(step),
        body,
    })
}

/// `for (i = 0; i < n; i = i + 1)` over an `i32` counter `i` declared by the
/// loop, with the bound an expression.
fn count(b: &mut B, i: VarId, n: ExprId, body: Vec<Stmt>) -> Stmt {
    let zero = b.i32(0);
    let init = decl(i, Some(zero));
    let iv = b.v(i);
    let cond = b.bin(BinOp::Lt, iv, n);
    let (iv, one, place) = (b.v(i), b.i32(1), b.v(i));
    let next = b.bin(BinOp::Add, iv, one);
    for_(init, cond, assign(place, next), body)
}

/// Runs `f` on a fresh interpreter.
fn run(f: &Function, args: &[Value]) -> crate::Result<Value> {
    Interpreter::new().call(f, args)
}

/// The message of an interpreter error, panicking on success.
fn fails(r: crate::Result<Value>) -> String {
    match r {
        Err(crate::Error::Interp { message }) => message,
        other => panic!("expected an interpreter error, got {other:?}"),
    }
}

/// `fn(a: ta, b: tb) -> ret { return a op b; }` applied to `x`, `y`.
fn binop(op: BinOp, x: Value, y: Value) -> crate::Result<Value> {
    let mut b = B::new(Type::Void);
    let (pa, pb) = (b.param("a", x.ty()), b.param("b", y.ty()));
    let (ea, eb) = (b.v(pa), b.v(pb));
    let e = b.bin(op, ea, eb);
    b.f.ret = *b.f.ty(e);
    let f = b.build(vec![ret(e)]);
    run(&f, &[x, y])
}

/// `fn(a) -> to { return (to) a; }` applied to `x`.
fn cast(x: Value, to: Type) -> crate::Result<Value> {
    let mut b = B::new(to);
    let pa = b.param("a", x.ty());
    let ea = b.v(pa);
    let e = b.cast(ea, to);
    let f = b.build(vec![ret(e)]);
    run(&f, &[x])
}
