//! C printing of expressions (precedence, constants, declarators) and
//! statements, for the C writer (and the CUDA writer, which prints C++);
//! the IR's own text form is in [`ir::text`](crate::ir::text).

use crate::ir::{
    binop_prec, write_c_string, Annotation, BinOp, Block, Const, Expr, ExprId, Function, Launch,
    ReduceOp, Reduction, Scalar, SrcLoc, Stmt, StmtKind, Type, UnOp,
};
use std::fmt::{self, Write};

const PREC_SELECT: u8 = 3;
const PREC_UNARY: u8 = 14;
const PREC_POSTFIX: u8 = 15;

/// Prints a constant of type `ty` as C source.
pub(crate) fn write_const(out: &mut dyn Write, c: &Const, ty: &Type) -> fmt::Result {
    match c {
        Const::Bool(b) => out.write_str(if *b { "true" } else { "false" }),
        Const::Null => out.write_str("NULL"),
        Const::Str(s) => write_c_string(out, s),
        Const::F64(v) => write_float(out, *v, ""),
        Const::F32(v) => write_float(out, *v as f64, "f"),
        Const::Int(v) => match ty.as_scalar().unwrap_or(Scalar::I64) {
            Scalar::U64 => write!(out, "{}ull", *v as u64),
            Scalar::U32 => write!(out, "{}u", *v as u64 as u32),
            Scalar::I64 if *v == i64::MIN => out.write_str("(-9223372036854775807ll - 1)"),
            Scalar::I64 if *v > i32::MAX as i64 || *v < i32::MIN as i64 => write!(out, "{v}ll"),
            Scalar::I32 if *v == i32::MIN as i64 => out.write_str("(-2147483647 - 1)"),
            _ => write!(out, "{v}"),
        },
    }
}

fn write_float(out: &mut dyn Write, v: f64, suffix: &str) -> fmt::Result {
    if v.is_nan() {
        return out.write_str("NAN");
    }
    if v.is_infinite() {
        return out.write_str(if v > 0.0 { "INFINITY" } else { "(-INFINITY)" });
    }
    // `{:?}` is the shortest text that reads back to the same value.
    let text = if suffix == "f" {
        format!("{:?}", v as f32)
    } else {
        format!("{v:?}")
    };
    let text = if text.contains(['.', 'e', 'E']) {
        text
    } else {
        format!("{text}.0")
    };
    write!(out, "{text}{suffix}")
}

/// Prints C type declarators: `int32_t x`, `float *p`, `int32_t a[4]`.
pub(crate) fn c_declarator(ty: &Type, name: &str) -> String {
    match ty {
        Type::Void => format!("void {name}").trim_end().to_string(),
        Type::Scalar(s) => format!("{} {name}", s.c_name()).trim_end().to_string(),
        Type::Opaque(o) => format!("{} {name}", o.name).trim_end().to_string(),
        // Each struct is a `typedef struct S {...} S;` of its own name.
        Type::Struct(s) => format!("{} {name}", s.name).trim_end().to_string(),
        // A pointer to a constant pointer: the `const` qualifies the
        // pointee's own `*` (`T *const *p`, `R (*const *p)(A)`), not what
        // that one points to.
        Type::Ptr { to, mutable: false } if matches!(**to, Type::FnPtr(_) | Type::Ptr { .. }) => {
            c_declarator(to, &format!("const *{name}"))
        }
        Type::Ptr { to, mutable } => {
            let inner = if matches!(**to, Type::Array { .. }) {
                format!("(*{name})")
            } else {
                format!("*{name}")
            };
            let d = c_declarator(to, &inner);
            if *mutable {
                d
            } else {
                format!("const {d}")
            }
        }
        // `R (*name)(A, B)`; `void` when it takes nothing.
        Type::FnPtr(sig) => {
            let params: Vec<String> = sig.params.iter().map(|t| c_declarator(t, "")).collect();
            let list = if params.is_empty() {
                "void".to_string()
            } else {
                params.join(", ")
            };
            c_declarator(&sig.ret, &format!("(*{name})({list})"))
        }
        Type::Array { of, len } => {
            let dims = match len {
                Some(n) => format!("{name}[{n}]"),
                None => format!("{name}[]"),
            };
            c_declarator(of, &dims)
        }
    }
}

/// Prints expressions with C precedence; `name` gives variable names.
pub(crate) struct ExprPrinter<'a> {
    pub func: &'a Function,
    pub name: &'a dyn Fn(crate::ir::VarId) -> String,
    /// C promotes 8- and 16-bit operands to `int`; the second stage wraps
    /// at the type's width (like Rust and the interpreter), so C output
    /// casts narrow arithmetic results back: `(int8_t)(a + b)`.
    pub narrow_casts: bool,
}

/// True for integer types narrower than `int`.
fn is_narrow(t: &Type) -> bool {
    matches!(
        t.as_scalar(),
        Some(Scalar::I8 | Scalar::I16 | Scalar::U8 | Scalar::U16 | Scalar::Char)
    )
}

impl ExprPrinter<'_> {
    /// Prints `e`, parenthesised if its precedence is below `min`.
    pub fn write(&self, out: &mut dyn Write, e: ExprId, min: u8) -> fmt::Result {
        let f = self.func;
        let data = &f.exprs[e];
        let (prec, text) = match &data.kind {
            Expr::Var(v) => return out.write_str(&(self.name)(*v)),
            Expr::Const(c) => {
                let mut s = String::new();
                write_const(&mut s, c, &data.ty)?;
                let negative = s.starts_with('-');
                (
                    if negative {
                        PREC_UNARY
                    } else {
                        PREC_POSTFIX + 1
                    },
                    s,
                )
            }
            Expr::Unary(op, a) => {
                let mut s = String::new();
                s.push_str(match op {
                    UnOp::Neg => "-",
                    UnOp::BitNot => "~",
                    UnOp::Not => "!",
                });
                let mut inner = String::new();
                self.write(&mut inner, *a, PREC_UNARY)?;
                if inner.starts_with('-') {
                    s.push(' ');
                }
                s.push_str(&inner);
                (PREC_UNARY, s)
            }
            Expr::Binary(op, a, b) => {
                let p = binop_prec(*op);
                let mut s = String::new();
                // Comparisons and bit operators get clarifying parentheses on
                // their operands (gcc -Wparentheses), the rest are left-associative.
                let (la, lb) = match op {
                    BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor | BinOp::Shl | BinOp::Shr => {
                        (PREC_UNARY, PREC_UNARY)
                    }
                    // `&&` and `||` chain without parentheses; mixed, they
                    // get them (gcc -Wparentheses).
                    BinOp::And | BinOp::Or => {
                        let same =
                            |x: ExprId| matches!(f.exprs[x].kind, Expr::Binary(o, ..) if o == *op);
                        (
                            if same(*a) { p } else { p + 2 },
                            if same(*b) { p } else { p + 2 },
                        )
                    }
                    _ if op.is_comparison() => (p + 1, p + 1),
                    _ => (p, p + 1),
                };
                // A constant takes its C type from its spelling: `5` is an
                // `int` even where the IR says `i64`. Where nothing else
                // converts it (both sides constant, the left of a shift),
                // it is cast to its type.
                let (ca, cb) = (self.is_const(*a), self.is_const(*b));
                let shift = matches!(op, BinOp::Shl | BinOp::Shr);
                self.write_exact(&mut s, *a, la, cb || shift)?;
                write!(s, " {} ", op.symbol())?;
                self.write_exact(&mut s, *b, lb, ca)?;
                (p, s)
            }
            Expr::Cast(a) => {
                let mut s = format!("({})", c_declarator(&data.ty, ""));
                self.write(&mut s, *a, PREC_UNARY)?;
                (PREC_UNARY, s)
            }
            Expr::Index(a, i) => {
                let mut s = String::new();
                self.write(&mut s, *a, PREC_POSTFIX)?;
                s.push('[');
                self.write(&mut s, *i, 0)?;
                s.push(']');
                (PREC_POSTFIX, s)
            }
            Expr::Deref(a) => {
                let mut s = String::from("*");
                self.write(&mut s, *a, PREC_UNARY)?;
                (PREC_UNARY, s)
            }
            Expr::AddrOf(a) => {
                let mut s = String::from("&");
                self.write(&mut s, *a, PREC_UNARY)?;
                (PREC_UNARY, s)
            }
            // A function pointer is called as a function: `p(a, b)`.
            Expr::Call(func, args) if f.externs[*func].indirect => {
                let mut s = String::new();
                self.write(&mut s, args[0], PREC_POSTFIX)?;
                s.push('(');
                for (i, a) in args[1..].iter().enumerate() {
                    if i > 0 {
                        s.push_str(", ");
                    }
                    self.write(&mut s, *a, PREC_SELECT)?;
                }
                s.push(')');
                (PREC_POSTFIX, s)
            }
            // A function's name is its address.
            Expr::FuncAddr(func) => (PREC_POSTFIX, f.externs[*func].name.clone()),
            // `s.x`; `p->x` for `(*p).x`; `s.x` again for `(*&s).x`.
            Expr::Field(base, i) => {
                let name = match self.func.ty(*base) {
                    Type::Struct(s) => s.fields[*i as usize].0.as_str(),
                    _ => "?",
                };
                // `*&x` is `x`.
                let mut base = *base;
                while let Expr::Deref(p) = &f.exprs[base].kind {
                    match &f.exprs[*p].kind {
                        Expr::AddrOf(x) => base = *x,
                        _ => break,
                    }
                }
                let mut s = String::new();
                match &f.exprs[base].kind {
                    Expr::Deref(p) => {
                        self.write(&mut s, *p, PREC_POSTFIX)?;
                        s.push_str("->");
                    }
                    _ => {
                        self.write(&mut s, base, PREC_POSTFIX)?;
                        s.push('.');
                    }
                }
                s.push_str(name);
                (PREC_POSTFIX, s)
            }
            Expr::Call(func, args) => (PREC_POSTFIX, self.call(&f.externs[*func].name, args)?),
            // An intrinsic is a call of the helper each backend defines.
            Expr::Intrinsic(i, args) => (PREC_POSTFIX, self.call(&i.c_name(&data.ty), args)?),
            Expr::Select(c, a, b) => {
                let mut s = String::new();
                self.write(&mut s, *c, PREC_SELECT + 1)?;
                s.push_str(" ? ");
                self.write(&mut s, *a, PREC_SELECT + 1)?;
                s.push_str(" : ");
                self.write(&mut s, *b, PREC_SELECT)?;
                (PREC_SELECT, s)
            }
        };
        let arithmetic = match &data.kind {
            Expr::Binary(op, ..) => !op.is_comparison() && !matches!(op, BinOp::And | BinOp::Or),
            Expr::Unary(op, _) => *op != UnOp::Not,
            _ => false,
        };
        if self.narrow_casts && arithmetic && is_narrow(&data.ty) {
            let cast = format!("({})({text})", c_declarator(&data.ty, ""));
            return if PREC_UNARY < min {
                write!(out, "({cast})")
            } else {
                out.write_str(&cast)
            };
        }
        if prec < min {
            write!(out, "({text})")
        } else {
            out.write_str(&text)
        }
    }

    fn is_const(&self, e: ExprId) -> bool {
        matches!(self.func.exprs[e].kind, Expr::Const(_))
    }

    /// Prints `e`; a 64-bit integer constant that C would type as `int` is
    /// cast when `exact` (its type must not depend on the context).
    fn write_exact(&self, out: &mut dyn Write, e: ExprId, min: u8, exact: bool) -> fmt::Result {
        let data = &self.func.exprs[e];
        let small_i64 = matches!(
            (&data.kind, data.ty.as_scalar()),
            (Expr::Const(Const::Int(v)), Some(Scalar::I64)) if i32::try_from(*v).is_ok()
        );
        if exact && small_i64 && self.narrow_casts {
            let mut text = String::from("(int64_t)");
            self.write(&mut text, e, PREC_UNARY)?;
            return if PREC_UNARY < min {
                write!(out, "({text})")
            } else {
                out.write_str(&text)
            };
        }
        self.write(out, e, min)
    }

    /// `name(args)`.
    fn call(&self, name: &str, args: &[ExprId]) -> Result<String, fmt::Error> {
        let mut s = format!("{name}(");
        for (i, a) in args.iter().enumerate() {
            if i > 0 {
                s.push_str(", ");
            }
            // Variadic arguments get no conversion at all.
            self.write_exact(&mut s, *a, PREC_SELECT, true)?;
        }
        s.push(')');
        Ok(s)
    }

    /// Prints `e` as a whole expression.
    pub fn to_string(&self, e: ExprId) -> String {
        let mut s = String::new();
        self.write(&mut s, e, 0).expect("writing to a String");
        s
    }
}

/// Where each printed line comes from. The C writer turns this into
/// `#line` directives or comments (source mapping); `Display` ignores it.
///
/// Every call announces the line printed next, so an implementation always
/// writes whole lines and finds `out` at the start of a line.
pub(crate) trait LineMarks {
    /// The next line starts a statement from `loc` (`None`: the engine's).
    fn statement(&self, out: &mut String, loc: Option<SrcLoc>, depth: usize);
    /// The next line is the printer's own syntax: a closing brace, `else`.
    fn syntax(&self, out: &mut String);
}

/// Prints a block; shared by `Display` and the C backend, which passes its own
/// hooks for declarations and source mapping.
pub(crate) struct BlockPrinter<'a> {
    pub exprs: ExprPrinter<'a>,
    /// Text of a declaration of `var` (without `;`).
    pub decl: &'a dyn Fn(crate::ir::VarId) -> String,
    /// Told where each line comes from before it is printed.
    pub marks: &'a dyn LineMarks,
}

impl BlockPrinter<'_> {
    pub fn block(&self, out: &mut String, b: &Block, depth: usize) {
        for s in b {
            self.stmt(out, s, depth);
        }
    }

    fn indent(out: &mut String, depth: usize) {
        for _ in 0..depth {
            out.push_str("  ");
        }
    }

    /// Prints a statement without the trailing `;` (used by `for` headers).
    pub fn simple(&self, s: &Stmt) -> String {
        let e = |x| self.exprs.to_string(x);
        match &s.kind {
            StmtKind::Decl { var, init: Some(i) } => format!("{} = {}", (self.decl)(*var), e(*i)),
            StmtKind::Decl { var, init: None } => (self.decl)(*var),
            StmtKind::Assign { place, value } => format!("{} = {}", e(*place), e(*value)),
            StmtKind::Eval(x) => e(*x),
            _ => String::from("/* not a simple statement */"),
        }
    }

    /// Prints `_Pragma` lines for the pragmas of `s` and returns its
    /// comments (printed on the statement's line).
    fn pragmas<'s>(&self, out: &mut String, s: &'s Stmt, depth: usize) -> Vec<&'s str> {
        let mut comments = Vec::new();
        for a in &s.annotations {
            let p = match a {
                Annotation::Comment(c) => {
                    comments.push(c.as_str());
                    continue;
                }
                Annotation::Threads => {
                    comments.push("each iteration a GPU thread");
                    continue;
                }
                Annotation::Parallel(reductions) => {
                    self.parallel_pragmas(out, s, depth, reductions);
                    continue;
                }
                Annotation::Pragma(p) => p,
            };
            // The pragma is the user's: a diagnostic about it names their line.
            self.marks.statement(out, s.loc, depth);
            Self::indent(out, depth);
            let mut lit = String::new();
            let _ = write_c_string(&mut lit, p);
            let _ = writeln!(out, "_Pragma({lit})");
        }
        comments
    }

    /// `_Pragma("omp parallel for reduction(..)")` for a parallel loop; a
    /// float `min` or `max` gets a reduction of its own first (OpenMP's
    /// built-in ones leave NaN to the implementation; these ignore NaN
    /// values as every other backend does), named after the loop's index and
    /// the reduction's place, so that no two in one block share a name.
    fn parallel_pragmas(&self, out: &mut String, s: &Stmt, depth: usize, reductions: &[Reduction]) {
        let f = self.exprs.func;
        let index = match &s.kind {
            StmtKind::For { init, .. } => match init.kind {
                StmtKind::Decl { var, .. } => (self.exprs.name)(var),
                _ => String::new(),
            },
            _ => String::new(),
        };
        let mut pragma = String::from("omp parallel for");
        for (k, r) in reductions.iter().enumerate() {
            let ty = f.vars[r.var].ty;
            let name = (self.exprs.name)(r.var);
            let float = ty.as_scalar().filter(|s| s.is_float());
            let id = match (r.op, float) {
                (ReduceOp::Min | ReduceOp::Max, Some(sc)) => {
                    let id = format!("augur_{}_{index}_{k}", r.op.name());
                    let better = if r.op == ReduceOp::Min { '<' } else { '>' };
                    let mut identity = String::new();
                    let _ = write_const(&mut identity, &r.op.identity(sc), &ty);
                    let decl = format!(
                        "omp declare reduction({id} : {} : omp_out = omp_in {better} omp_out ? \
                         omp_in : omp_out) initializer(omp_priv = {identity})",
                        sc.c_name()
                    );
                    self.pragma_line(out, s, depth, &decl);
                    id
                }
                (op, _) => op.openmp().to_string(),
            };
            let _ = write!(pragma, " reduction({id}:{name})");
        }
        self.pragma_line(out, s, depth, &pragma);
    }

    /// One `_Pragma("..")` line before statement `s`.
    fn pragma_line(&self, out: &mut String, s: &Stmt, depth: usize, text: &str) {
        self.marks.statement(out, s.loc, depth);
        Self::indent(out, depth);
        let mut lit = String::new();
        let _ = write_c_string(&mut lit, text);
        let _ = writeln!(out, "_Pragma({lit})");
    }

    pub fn stmt(&self, out: &mut String, s: &Stmt, depth: usize) {
        let comments = self.pragmas(out, s, depth);
        self.marks.statement(out, s.loc, depth);
        Self::indent(out, depth);
        let e = |x| self.exprs.to_string(x);
        match &s.kind {
            StmtKind::Decl { .. } | StmtKind::Assign { .. } | StmtKind::Eval(_) => {
                out.push_str(&self.simple(s));
                out.push(';');
            }
            StmtKind::If { cond, then_, else_ } => {
                let _ = write!(out, "if ({}) {{", e(*cond));
                Self::comments(out, &comments);
                out.push('\n');
                self.block(out, then_, depth + 1);
                self.else_chain(out, else_, depth);
                return;
            }
            StmtKind::While { cond, body } => {
                let _ = write!(out, "while ({}) {{", e(*cond));
                Self::comments(out, &comments);
                out.push('\n');
                self.block(out, body, depth + 1);
                self.close(out, depth);
                return;
            }
            StmtKind::For {
                init,
                cond,
                step,
                body,
            } => {
                let _ = write!(
                    out,
                    "for ({}; {}; {}) {{",
                    self.simple(init),
                    e(*cond),
                    self.simple(step)
                );
                Self::comments(out, &comments);
                out.push('\n');
                self.block(out, body, depth + 1);
                self.close(out, depth);
                return;
            }
            StmtKind::Launch(Launch {
                grid,
                block,
                bid,
                tid,
                body,
            }) => {
                // C runs a launch as its loop nest; the comment says what it is.
                let mut comments = comments;
                let what = format!("launch: {grid} blocks of {block} threads");
                comments.insert(0, what.as_str());
                self.counted_for(out, *bid, *grid);
                Self::comments(out, &comments);
                out.push('\n');
                self.marks.statement(out, s.loc, depth + 1);
                Self::indent(out, depth + 1);
                self.counted_for(out, *tid, *block);
                out.push('\n');
                self.block(out, body, depth + 2);
                self.close(out, depth + 1);
                self.close(out, depth);
                return;
            }
            StmtKind::Break => out.push_str("break;"),
            StmtKind::Continue => out.push_str("continue;"),
            StmtKind::Return(None) => out.push_str("return;"),
            StmtKind::Return(Some(x)) => {
                let _ = write!(out, "return {};", e(*x));
            }
            StmtKind::Label(l) => {
                let _ = write!(out, "{l}:;");
            }
            StmtKind::Goto(l) => {
                let _ = write!(out, "goto {l};");
            }
        }
        Self::comments(out, &comments);
        out.push('\n');
    }

    /// `for (int32_t v = 0; v < n; v = v + 1) {` (a launch's loops).
    fn counted_for(&self, out: &mut String, v: crate::ir::VarId, n: u32) {
        let name = (self.exprs.name)(v);
        let _ = write!(
            out,
            "for ({} = 0; {name} < {n}; {name} = {name} + 1) {{",
            (self.decl)(v)
        );
    }

    /// The rest of an `if` after its `then` block: `else if` chains print
    /// flat, each `} else if (c) {` line belonging to its own statement.
    fn else_chain(&self, out: &mut String, mut else_: &Block, depth: usize) {
        let e = |x| self.exprs.to_string(x);
        while let [only] = else_.as_slice() {
            match &only.kind {
                StmtKind::If {
                    cond,
                    then_,
                    else_: rest,
                } if only.annotations.is_empty() => {
                    self.marks.statement(out, only.loc, depth);
                    Self::indent(out, depth);
                    let _ = writeln!(out, "}} else if ({}) {{", e(*cond));
                    self.block(out, then_, depth + 1);
                    else_ = rest;
                }
                _ => break,
            }
        }
        if !else_.is_empty() {
            self.marks.syntax(out);
            Self::indent(out, depth);
            out.push_str("} else {\n");
            self.block(out, else_, depth + 1);
        }
        self.close(out, depth);
    }

    /// The closing brace of a compound statement.
    fn close(&self, out: &mut String, depth: usize) {
        self.marks.syntax(out);
        Self::indent(out, depth);
        out.push_str("}\n");
    }

    fn comments(out: &mut String, comments: &[&str]) {
        for c in comments {
            let _ = write!(out, " // {}", comment_text(c));
        }
    }
}

/// One line of comment text. A trailing `\` (or the trigraph `??/`) would
/// splice the next line of C into the comment, so it gets a `.` after it.
pub(crate) fn comment_text(c: &str) -> String {
    let text = c.replace(['\n', '\r'], " ");
    let trimmed = text.trim_end();
    if trimmed.ends_with('\\') || trimmed.ends_with("??/") {
        format!("{trimmed}.")
    } else {
        text
    }
}
