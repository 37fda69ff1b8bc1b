//! The IR's text form: what [`Function`]'s `Display` prints and [`parse`]
//! reads back, so that tests and file tests (`crates/augur/filetests/`)
//! can write IR by hand.
//!
//! ```text
//! extern printf(*const char, ...) -> i32 in "stdio.h";
//! fn sum(p: *mut f32, n: i32) -> f32 {
//!   var acc: f32 = 0.0f32;
//!   for (var i: i32 = 0; i < n; i = i + 1) {
//!     let t: f32 = p[i];
//!     acc = acc + t;
//!   }
//!   #[pragma("omp simd")]
//!   #[note("why")]
//!   launch (2, 4; bid, tid) {
//!     p[bid * 4 + tid] = (bid as f32);
//!   }
//!   return acc;
//! }
//! ```
//!
//! * `extern` lines declare the function's externs in order (`...` for a
//!   variadic one, `in "header"` for one a header declares; `extern *(fn(A)
//!   -> R, A) -> R` declares calls through pointers of type `fn(A) -> R`,
//!   and is added by the first such call if the text has none).
//! * `struct S { x: f32, y: f32 }` lines define the structs the function
//!   uses (each after those it uses), named `struct S` as types; `s.x` is a
//!   field.
//! * A function pointer's type is `fn(A, B) -> R` (`fn(A)` returning
//!   nothing); `&f` of an extern `f` is its address, `(p)(a, b)` a call
//!   through pointer `p`.
//! * `@name(a, b)` applies an [intrinsic](super::Intrinsic) (`@sync_threads()`,
//!   `@atomic_add(p, v)`), typed by its signature.
//! * Variables are declared by `let` (a temporary: assigned once, at its
//!   declaration), `var` (a user's variable), the parameters, and a
//!   launch's two indices (`int32_t` locals). `&name` marks a variable
//!   whose address is taken. Each name is declared once; read back, it is
//!   the variable's name and hint.
//! * Every expression's type follows from its parts: an integer literal is
//!   `i32` and a float one `f64` unless suffixed (`7u8`, `1.5f32`,
//!   `65char`), a string `*const char`, `null` `*const void`; comparisons,
//!   `&&`, `||` and `!` give `bool`, other operators their left operand's
//!   type, `e as T` is a cast, `a[i]` and `*p` the element, `&x` a `*mut`
//!   to it, a call its extern's return type, an intrinsic its signature's
//!   type, `c ? a : b` `a`'s type. Where
//!   a node's type differs from that, it is written `(e : T)`.
//! * `#[pragma("..")]`, `#[note("..")]` and `#[threads]` lines are the
//!   annotations of the statement after them; `Lk:` is a label; `//` starts a comment.
//!
//! Source locations and variable hints are not part of the text form: a
//! function read back prints the same text and behaves the same.

mod lex;
mod parse;

pub use parse::{parse, ParseError};

use super::write_c_string;
use super::{
    Annotation, BinOp, Block, Const, Expr, ExprId, Function, Scalar, Stmt, StmtKind, Type, UnOp,
    VarId, VarKind,
};
use std::fmt::Write;

/// The type the text form gives an expression of kind `e` in `f` (see the
/// module docs); `None` where it gives none (a call of an unknown extern).
pub(crate) fn inferred(f: &Function, e: &Expr) -> Type {
    let ty = |x: ExprId| *f.ty(x);
    let bool_ = Type::Scalar(Scalar::Bool);
    match e {
        Expr::Var(v) => f.vars[*v].ty,
        Expr::Const(c) => match c {
            Const::Int(_) => Type::Scalar(Scalar::I32),
            Const::F32(_) => Type::Scalar(Scalar::F32),
            Const::F64(_) => Type::Scalar(Scalar::F64),
            Const::Bool(_) => bool_,
            Const::Str(_) => Type::cptr(Type::Scalar(Scalar::Char)),
            Const::Null => Type::cptr(Type::Void),
        },
        Expr::Unary(UnOp::Not, _) => bool_,
        Expr::Unary(_, a) => ty(*a),
        Expr::Binary(op, a, _) => {
            if op.is_comparison() || matches!(op, BinOp::And | BinOp::Or) {
                bool_
            } else {
                ty(*a)
            }
        }
        // The printer writes the target type; this is only its default.
        Expr::Cast(a) => ty(*a),
        Expr::Index(a, _) | Expr::Deref(a) => ty(*a).element().copied().unwrap_or(Type::Void),
        Expr::AddrOf(a) => Type::ptr(ty(*a)),
        Expr::Field(a, i) => match ty(*a) {
            Type::Struct(s) => s.fields[*i as usize].1,
            _ => Type::Void,
        },
        Expr::Call(g, _) => f.externs[*g].ret,
        Expr::FuncAddr(g) => {
            let d = &f.externs[*g];
            Type::fn_ptr(d.params.clone(), d.ret)
        }
        Expr::Select(_, a, _) => ty(*a),
        Expr::Intrinsic(i, args) => {
            let types: Vec<Type> = args.iter().map(|&a| ty(a)).collect();
            i.result_type(&types).unwrap_or(Type::Void)
        }
    }
}

impl std::fmt::Display for Function {
    /// The text form, which [`parse`] reads back.
    fn fmt(&self, out: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        out.write_str(&print(self))
    }
}

/// Prints `f` in the text form.
pub fn print(f: &Function) -> String {
    let mut p = Printer {
        f,
        out: String::new(),
    };
    p.function();
    p.out
}

struct Printer<'a> {
    f: &'a Function,
    out: String,
}

// Precedence of a binary operator (higher binds tighter), as in C.
use super::binop_prec as prec;
const SELECT: u8 = 3;
const UNARY: u8 = 14;
const ATOM: u8 = 16;

impl Printer<'_> {
    fn function(&mut self) {
        let f = self.f;
        for s in super::struct_types(&[f]) {
            let fields: Vec<String> = s.fields.iter().map(|(n, t)| format!("{n}: {t}")).collect();
            let _ = writeln!(self.out, "struct {} {{ {} }}", s.name, fields.join(", "));
        }
        for (_, d) in f.externs.iter() {
            let mut params: Vec<String> = d.params.iter().map(|t| t.to_string()).collect();
            if d.variadic {
                params.push("...".into());
            }
            // Calls through pointers of a type: `extern *(fn(A) -> R, A) -> R`.
            let name = if d.indirect { "*" } else { &d.name };
            let _ = write!(
                self.out,
                "extern {}({}) -> {}",
                name,
                params.join(", "),
                d.ret
            );
            if let Some(h) = &d.header {
                self.out.push_str(" in ");
                let _ = write_c_string(&mut self.out, h);
            }
            self.out.push_str(";\n");
        }
        let params: Vec<String> = f
            .params
            .iter()
            .map(|&p| {
                let restrict = if f.restrict.contains(&p) {
                    "restrict "
                } else {
                    ""
                };
                format!("{restrict}{}", self.binding(p))
            })
            .collect();
        let _ = write!(self.out, "fn {}({})", f.name, params.join(", "));
        if f.ret != Type::Void {
            let _ = write!(self.out, " -> {}", f.ret);
        }
        self.out.push_str(" {\n");
        self.block(&f.body, 1);
        self.out.push_str("}\n");
    }

    /// `name: T` (with `&` when its address is taken).
    fn binding(&self, v: VarId) -> String {
        let d = &self.f.vars[v];
        let amp = if d.addr_taken { "&" } else { "" };
        format!("{amp}{}: {}", self.f.var_name(v), d.ty)
    }

    fn name(&self, v: VarId) -> String {
        let amp = if self.f.vars[v].addr_taken { "&" } else { "" };
        format!("{amp}{}", self.f.var_name(v))
    }

    fn indent(&mut self, depth: usize) {
        for _ in 0..depth {
            self.out.push_str("  ");
        }
    }

    fn block(&mut self, b: &Block, depth: usize) {
        for s in b {
            self.stmt(s, depth);
        }
    }

    fn stmt(&mut self, s: &Stmt, depth: usize) {
        for a in &s.annotations {
            self.indent(depth);
            let (what, text) = match a {
                Annotation::Pragma(t) => ("pragma", t),
                Annotation::Comment(t) => ("note", t),
                Annotation::Threads => {
                    self.out.push_str("#[threads]\n");
                    continue;
                }
                Annotation::Parallel(reductions) => {
                    let list: Vec<String> = reductions
                        .iter()
                        .map(|r| format!("{} {}", r.op.name(), self.name(r.var)))
                        .collect();
                    let _ = writeln!(self.out, "#[parallel({})]", list.join(", "));
                    continue;
                }
            };
            let _ = write!(self.out, "#[{what}(");
            let _ = write_c_string(&mut self.out, text);
            self.out.push_str(")]\n");
        }
        self.indent(depth);
        let line = match &s.kind {
            StmtKind::If { cond, then_, else_ } => {
                let _ = writeln!(self.out, "if ({}) {{", self.expr(*cond));
                self.block(then_, depth + 1);
                self.else_chain(else_, depth);
                return;
            }
            StmtKind::While { cond, .. } => format!("while ({}) {{", self.expr(*cond)),
            StmtKind::For {
                init, cond, step, ..
            } => format!(
                "for ({}; {}; {}) {{",
                self.simple(init),
                self.expr(*cond),
                self.simple(step)
            ),
            StmtKind::Launch(l) => format!(
                "launch ({}, {}; {}, {}) {{",
                l.grid,
                l.block,
                self.name(l.bid),
                self.name(l.tid)
            ),
            StmtKind::Break => "break;".into(),
            StmtKind::Continue => "continue;".into(),
            StmtKind::Return(None) => "return;".into(),
            StmtKind::Return(Some(e)) => format!("return {};", self.expr(*e)),
            StmtKind::Label(l) => format!("{l}:"),
            StmtKind::Goto(l) => format!("goto {l};"),
            _ => format!("{};", self.simple(s)),
        };
        self.out.push_str(&line);
        self.out.push('\n');
        if let Some(body) = s.kind.blocks().next() {
            self.block(body, depth + 1);
            self.indent(depth);
            self.out.push_str("}\n");
        }
    }

    /// `} else if (c) {` chains print flat; `} else {` otherwise.
    fn else_chain(&mut self, mut else_: &Block, depth: usize) {
        while let [only] = else_.as_slice() {
            let StmtKind::If {
                cond,
                then_,
                else_: rest,
            } = &only.kind
            else {
                break;
            };
            if !only.annotations.is_empty() {
                break;
            }
            self.indent(depth);
            let _ = writeln!(self.out, "}} else if ({}) {{", self.expr(*cond));
            self.block(then_, depth + 1);
            else_ = rest;
        }
        self.indent(depth);
        if !else_.is_empty() {
            self.out.push_str("} else {\n");
            self.block(else_, depth + 1);
            self.indent(depth);
        }
        self.out.push_str("}\n");
    }

    /// A declaration, assignment or call, without its `;`.
    fn simple(&self, s: &Stmt) -> String {
        match &s.kind {
            StmtKind::Decl { var, init } => {
                let kw = match self.f.vars[*var].kind {
                    VarKind::Temp => "let",
                    _ => "var",
                };
                let init = init.map(|e| format!(" = {}", self.expr(e)));
                format!("{kw} {}{}", self.binding(*var), init.unwrap_or_default())
            }
            StmtKind::Assign { place, value } => {
                format!("{} = {}", self.expr(*place), self.expr(*value))
            }
            StmtKind::Eval(e) => self.expr(*e),
            _ => String::from("/* not a simple statement */"),
        }
    }

    fn expr(&self, e: ExprId) -> String {
        self.expr_at(e, 0)
    }

    /// `e`, parenthesised if it binds less tightly than `min`.
    fn expr_at(&self, e: ExprId, min: u8) -> String {
        let f = self.f;
        let data = &f.exprs[e];
        let (p, text) = match &data.kind {
            Expr::Var(v) => (ATOM, f.var_name(*v)),
            Expr::Const(c) => literal(c, &data.ty),
            Expr::Unary(op, a) => {
                let sym = match op {
                    UnOp::Neg => "-",
                    UnOp::BitNot => "~",
                    UnOp::Not => "!",
                };
                // `-(5)`: a negative literal is `-5`, which reads back as one.
                let inner = if matches!(f.exprs[*a].kind, Expr::Const(_)) {
                    format!("({})", self.expr(*a))
                } else {
                    self.expr_at(*a, UNARY)
                };
                (UNARY, format!("{sym}{inner}"))
            }
            Expr::Binary(op, a, b) => {
                let p = prec(*op);
                let text = format!(
                    "{} {} {}",
                    self.expr_at(*a, p),
                    op.symbol(),
                    self.expr_at(*b, p + 1)
                );
                (p, text)
            }
            Expr::Cast(a) => (
                ATOM,
                format!("({} as {})", self.expr_at(*a, UNARY), data.ty),
            ),
            Expr::Index(a, i) => (
                ATOM,
                format!("{}[{}]", self.expr_at(*a, ATOM), self.expr(*i)),
            ),
            Expr::Deref(a) => (UNARY, format!("*{}", self.expr_at(*a, UNARY))),
            Expr::AddrOf(a) => (UNARY, format!("&{}", self.expr_at(*a, UNARY))),
            Expr::Call(g, args) if f.externs[*g].indirect => {
                // `(p)(a, b)`: the pointer, then its arguments.
                let rest: Vec<String> = args[1..].iter().map(|&a| self.expr(a)).collect();
                (
                    ATOM,
                    format!("({})({})", self.expr(args[0]), rest.join(", ")),
                )
            }
            Expr::Call(g, args) => {
                let args: Vec<String> = args.iter().map(|&a| self.expr(a)).collect();
                (ATOM, format!("{}({})", f.externs[*g].name, args.join(", ")))
            }
            Expr::FuncAddr(g) => (ATOM, format!("&{}", f.externs[*g].name)),
            Expr::Intrinsic(i, args) => {
                let args: Vec<String> = args.iter().map(|&a| self.expr(a)).collect();
                (ATOM, format!("@{}({})", i.name(), args.join(", ")))
            }
            Expr::Field(a, i) => {
                let name = match f.ty(*a) {
                    Type::Struct(s) => s.fields[*i as usize].0.clone(),
                    t => format!("<field {i} of {t}>"),
                };
                (ATOM, format!("{}.{name}", self.expr_at(*a, ATOM)))
            }
            Expr::Select(c, a, b) => {
                let text = format!(
                    "{} ? {} : {}",
                    self.expr_at(*c, SELECT + 1),
                    self.expr_at(*a, SELECT + 1),
                    self.expr_at(*b, SELECT)
                );
                (SELECT, text)
            }
        };
        let typed = match &data.kind {
            Expr::Cast(_) => true,
            Expr::Const(c) => literal_type(c, &data.ty) == data.ty,
            kind => inferred(f, kind) == data.ty,
        };
        match (typed, p < min) {
            (true, false) => text,
            (true, true) => format!("({text})"),
            (false, _) => format!("({text} : {})", data.ty),
        }
    }
}

/// The type the text of constant `c` of type `ty` gives it: a suffixed
/// integer or float literal carries its own.
fn literal_type(c: &Const, ty: &Type) -> Type {
    match (c, ty.as_scalar()) {
        (Const::Int(_), Some(s)) if s.is_int() => *ty,
        (Const::Int(_), _) => Type::Scalar(Scalar::I64),
        (Const::F32(_), _) => Type::Scalar(Scalar::F32),
        (Const::F64(_), _) => Type::Scalar(Scalar::F64),
        (Const::Bool(_), _) => Type::Scalar(Scalar::Bool),
        (Const::Str(_), _) => Type::cptr(Type::Scalar(Scalar::Char)),
        (Const::Null, _) => Type::cptr(Type::Void),
    }
}

/// A constant of type `ty`, with the suffix its type needs; and its
/// precedence (a negative literal is a unary minus to the reader).
fn literal(c: &Const, ty: &Type) -> (u8, String) {
    let text = match (c, ty.as_scalar()) {
        (Const::Int(v), Some(s)) if s.is_int() => int_literal(*v, s),
        (Const::Int(v), _) => format!("{v}i64"),
        (Const::Bool(b), _) => b.to_string(),
        (Const::F32(x), _) => format!("{}f32", float(format!("{x:?}"))),
        (Const::F64(x), _) => float(format!("{x:?}")),
        (Const::Str(s), _) => {
            let mut t = String::new();
            let _ = write_c_string(&mut t, s);
            t
        }
        (Const::Null, _) => "null".into(),
    };
    let p = if text.starts_with('-') { UNARY } else { ATOM };
    (p, text)
}

/// An integer literal of scalar type `s` (its value as the type reads it).
fn int_literal(v: i64, s: Scalar) -> String {
    let suffix = match s {
        Scalar::I32 => "",
        Scalar::Char => "char",
        other => other.rust_name(),
    };
    let value = match s {
        Scalar::U8 => (v as u8).to_string(),
        Scalar::U16 => (v as u16).to_string(),
        Scalar::U32 => (v as u32).to_string(),
        Scalar::U64 => (v as u64).to_string(),
        _ => v.to_string(),
    };
    format!("{value}{suffix}")
}

/// A float's `Debug` text (the shortest that reads back to it) with a
/// `.` or `e` always; `nan`, `inf` and `-inf` as they are.
fn float(t: String) -> String {
    if t == "NaN" {
        return "nan".into();
    }
    if t.contains(['.', 'e', 'E', 'n']) {
        t
    } else {
        format!("{t}.0")
    }
}
