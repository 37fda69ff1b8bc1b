//! Reads the text form back into a [`Function`] (see the [module docs](super)).

use super::inferred;
use super::lex::{lex, Tok, Token};
use crate::ir::{
    Annotation, BinOp, Block, Const, Expr, ExprId, ExternDecl, Function, Intrinsic, LabelId,
    Launch, Scalar, Stmt, StmtKind, Type, UnOp, VarData, VarId, VarKind,
};
use std::collections::HashMap;
use std::fmt;

/// What is wrong with a text, and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub col: usize,
    /// What was expected or found.
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "line {}, column {}: {}",
            self.line, self.col, self.message
        )
    }
}

impl std::error::Error for ParseError {}

/// Reads a function in the text form: its syntax, names (each declared
/// once, before its first use in the text) and types. It does not check
/// the IR's invariants, since passes are tested on IR that breaks them
/// (scope repair's input reads variables outside their block): run
/// [`verify`](crate::ir::verify::verify) for those.
///
/// ```
/// let f = augur::ir::parse("fn inc(x: i32) -> i32 {\n  return x + 1;\n}\n").unwrap();
/// assert_eq!(f.to_string(), "fn inc(x: i32) -> i32 {\n  return x + 1;\n}\n");
/// let e = augur::ir::parse("fn f() {\n  return y;\n}\n").unwrap_err();
/// assert_eq!(e.to_string(), "line 2, column 10: unknown variable `y`");
/// ```
pub fn parse(text: &str) -> Result<Function, ParseError> {
    let mut p = Parser {
        toks: lex(text)?,
        pos: 0,
        f: Function::new("", Type::Void),
        vars: HashMap::new(),
        structs: HashMap::new(),
    };
    p.file()?;
    Ok(p.f)
}

struct Parser {
    toks: Vec<Token>,
    pos: usize,
    f: Function,
    vars: HashMap<String, VarId>,
    /// The structs the text defines, by name.
    structs: HashMap<String, Type>,
}

type R<T> = Result<T, ParseError>;

impl Parser {
    fn err<T>(&self, message: impl Into<String>) -> R<T> {
        let (line, col) = match self.toks.get(self.pos).or(self.toks.last()) {
            Some(t) => (t.line, t.col),
            None => (1, 1),
        };
        Err(ParseError {
            line,
            col,
            message: message.into(),
        })
    }

    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos).map(|t| &t.tok)
    }

    fn peek_at(&self, k: usize) -> Option<&Tok> {
        self.toks.get(self.pos + k).map(|t| &t.tok)
    }

    fn is(&self, p: &str) -> bool {
        matches!(self.peek(), Some(Tok::Punct(q)) if *q == p)
    }

    fn is_word(&self, w: &str) -> bool {
        matches!(self.peek(), Some(Tok::Ident(x)) if x == w)
    }

    fn eat(&mut self, p: &str) -> bool {
        let yes = self.is(p) || self.is_word(p);
        self.pos += usize::from(yes);
        yes
    }

    fn expect(&mut self, p: &str) -> R<()> {
        if self.eat(p) {
            return Ok(());
        }
        self.err(format!("expected `{p}`"))
    }

    fn ident(&mut self) -> R<String> {
        match self.peek() {
            Some(Tok::Ident(x)) => {
                let x = x.clone();
                self.pos += 1;
                Ok(x)
            }
            _ => self.err("expected a name"),
        }
    }

    fn string(&mut self) -> R<String> {
        match self.peek() {
            Some(Tok::Str(x)) => {
                let x = x.clone();
                self.pos += 1;
                Ok(x)
            }
            _ => self.err("expected a string"),
        }
    }

    fn number<T: std::str::FromStr>(&mut self) -> R<T> {
        match self.peek() {
            Some(Tok::Num(x)) => match x.parse() {
                Ok(v) => {
                    self.pos += 1;
                    Ok(v)
                }
                Err(_) => self.err(format!("`{x}` is not a number here")),
            },
            _ => self.err("expected a number"),
        }
    }

    fn file(&mut self) -> R<()> {
        while self.eat("struct") {
            self.struct_def()?;
        }
        while self.eat("extern") {
            self.extern_decl()?;
        }
        self.expect("fn")?;
        self.f.name = self.ident()?;
        self.expect("(")?;
        while !self.eat(")") {
            if !self.f.params.is_empty() {
                self.expect(",")?;
            }
            let restrict = self.eat("restrict");
            let kind = VarKind::Param(self.f.params.len() as u32);
            let v = self.binding(kind)?;
            self.f.params.push(v);
            if restrict {
                self.f.restrict.push(v);
            }
        }
        if self.eat("->") {
            self.f.ret = self.ty()?;
        }
        self.f.body = self.block()?;
        if self.pos < self.toks.len() {
            return self.err("text after the function");
        }
        Ok(())
    }

    /// `struct S { x: f32, y: f32 }`.
    fn struct_def(&mut self) -> R<()> {
        let name = self.ident()?;
        self.expect("{")?;
        let mut fields = Vec::new();
        while !self.eat("}") {
            if !fields.is_empty() {
                self.expect(",")?;
            }
            let f = self.ident()?;
            self.expect(":")?;
            fields.push((f, self.ty()?));
        }
        self.structs
            .insert(name.clone(), Type::structure(&name, fields));
        Ok(())
    }

    fn extern_decl(&mut self) -> R<()> {
        // `extern *(fn(A) -> R, A) -> R;`: calls through pointers of a type.
        let indirect = self.eat("*");
        let name = if indirect {
            String::new()
        } else {
            self.ident()?
        };
        self.expect("(")?;
        let (mut params, mut variadic) = (Vec::new(), false);
        while !self.eat(")") {
            if !params.is_empty() || variadic {
                self.expect(",")?;
            }
            if self.eat("...") {
                variadic = true;
            } else {
                params.push(self.ty()?);
            }
        }
        self.expect("->")?;
        let ret = self.ty()?;
        let header = if self.eat("in") {
            match self.peek() {
                Some(Tok::Str(h)) => {
                    let h = h.clone();
                    self.pos += 1;
                    Some(h)
                }
                _ => return self.err("expected the header's name"),
            }
        } else {
            None
        };
        self.expect(";")?;
        if indirect {
            let decl = params
                .first()
                .and_then(|&p| ExternDecl::indirect(p))
                .filter(|d| d.params == params && d.ret == ret && !variadic && header.is_none());
            let Some(decl) = decl else {
                return self.err("an indirect extern's parameters are a function pointer type and its parameters, and it returns that type's result");
            };
            self.f.externs.push(decl);
            return Ok(());
        }
        self.f.externs.push(ExternDecl {
            name,
            params,
            ret,
            variadic,
            header,
            indirect: false,
        });
        Ok(())
    }

    fn ty(&mut self) -> R<Type> {
        if self.eat("*") {
            let mutable = if self.eat("mut") {
                true
            } else {
                self.expect("const")?;
                false
            };
            let to = self.ty()?;
            return Ok(if mutable {
                Type::ptr(to)
            } else {
                Type::cptr(to)
            });
        }
        if self.eat("[") {
            let of = self.ty()?;
            let len = if self.eat(";") {
                Some(self.number()?)
            } else {
                None
            };
            self.expect("]")?;
            return Ok(Type::array(of, len));
        }
        if self.eat("fn") {
            // `fn(A, B) -> R`, `fn(A)` for one that returns nothing.
            self.expect("(")?;
            let mut params = Vec::new();
            while !self.eat(")") {
                if !params.is_empty() {
                    self.expect(",")?;
                }
                params.push(self.ty()?);
            }
            let ret = if self.eat("->") {
                self.ty()?
            } else {
                Type::Void
            };
            return Ok(Type::fn_ptr(params, ret));
        }
        if self.eat("struct") {
            let name = self.ident()?;
            return match self.structs.get(&name) {
                Some(t) => Ok(*t),
                None => {
                    self.pos -= 1;
                    self.err(format!("unknown struct `{name}`"))
                }
            };
        }
        if self.eat("opaque") {
            // `opaque("FILE" in "stdio.h")`, `opaque("struct counter")`.
            self.expect("(")?;
            let name = self.string()?;
            let header = if self.eat("in") {
                Some(self.string()?)
            } else {
                None
            };
            self.expect(")")?;
            return Ok(Type::opaque(&name, header.as_deref()));
        }
        let name = self.ident()?;
        if name == "void" {
            return Ok(Type::Void);
        }
        match scalar(&name) {
            Some(s) => Ok(Type::Scalar(s)),
            None => {
                self.pos -= 1;
                self.err(format!("unknown type `{name}`"))
            }
        }
    }

    /// `[&]name: T`, declared as a new variable of `kind`.
    fn binding(&mut self, kind: VarKind) -> R<VarId> {
        let addr_taken = self.eat("&");
        let at = self.pos;
        let name = self.ident()?;
        self.expect(":")?;
        let ty = self.ty()?;
        self.declare((at, name), ty, kind, addr_taken)
    }

    /// Declares `name`, whose token is at `at`.
    fn declare(
        &mut self,
        (at, name): (usize, String),
        ty: Type,
        kind: VarKind,
        addr_taken: bool,
    ) -> R<VarId> {
        if self.vars.contains_key(&name) {
            self.pos = at;
            return self.err(format!("`{name}` is declared twice"));
        }
        let v = self.f.vars.push(VarData {
            ty,
            kind,
            // The name is also the hint, so that naming keeps what it can.
            hint: Some(name.clone()),
            name: Some(name.clone()),
            addr_taken,
            loc: None,
        });
        self.vars.insert(name, v);
        Ok(v)
    }

    fn block(&mut self) -> R<Block> {
        self.expect("{")?;
        let mut out = Vec::new();
        while !self.eat("}") {
            if self.peek().is_none() {
                return self.err("expected `}`");
            }
            out.push(self.stmt()?);
        }
        Ok(out)
    }

    fn stmt(&mut self) -> R<Stmt> {
        let mut annotations = Vec::new();
        while self.eat("#") {
            self.expect("[")?;
            let what = self.ident()?;
            if what == "threads" {
                self.expect("]")?;
                annotations.push(Annotation::Threads);
                continue;
            }
            if what == "parallel" {
                annotations.push(Annotation::Parallel(self.reductions()?));
                self.expect("]")?;
                continue;
            }
            self.expect("(")?;
            let Some(Tok::Str(text)) = self.peek().cloned() else {
                return self.err("expected the annotation's text");
            };
            self.pos += 1;
            annotations.push(match what.as_str() {
                "pragma" => Annotation::Pragma(text),
                "note" => Annotation::Comment(text),
                _ => return self.err(format!("unknown annotation `{what}`")),
            });
            self.expect(")")?;
            self.expect("]")?;
        }
        let kind = self.stmt_kind()?;
        Ok(Stmt {
            kind,
            annotations,
            loc: None,
        })
    }

    fn stmt_kind(&mut self) -> R<StmtKind> {
        if let Some(l) = self.label() {
            if self.peek_at(1) == Some(&Tok::Punct(":")) {
                self.pos += 2;
                return Ok(StmtKind::Label(l));
            }
        }
        if self.eat("if") {
            return self.if_rest();
        }
        if self.eat("while") {
            let cond = self.paren_expr()?;
            let body = self.block()?;
            return Ok(StmtKind::While { cond, body });
        }
        if self.eat("for") {
            self.expect("(")?;
            let init = Box::new(Stmt::new(self.simple()?));
            self.expect(";")?;
            let cond = self.expr()?;
            self.expect(";")?;
            let step = Box::new(Stmt::new(self.simple()?));
            self.expect(")")?;
            let body = self.block()?;
            return Ok(StmtKind::For {
                init,
                cond,
                step,
                body,
            });
        }
        if self.eat("launch") {
            return self.launch();
        }
        let kind = if self.eat("break") {
            StmtKind::Break
        } else if self.eat("continue") {
            StmtKind::Continue
        } else if self.eat("return") {
            StmtKind::Return((!self.is(";")).then(|| self.expr()).transpose()?)
        } else if self.eat("goto") {
            match self.label() {
                Some(l) => {
                    self.pos += 1;
                    StmtKind::Goto(l)
                }
                None => return self.err("expected a label"),
            }
        } else {
            self.simple()?
        };
        self.expect(";")?;
        Ok(kind)
    }

    /// The label `Lk` the next token names, if it is one.
    fn label(&self) -> Option<LabelId> {
        match self.peek() {
            Some(Tok::Ident(x)) => x.strip_prefix('L')?.parse().ok().map(LabelId),
            _ => None,
        }
    }

    fn if_rest(&mut self) -> R<StmtKind> {
        let cond = self.paren_expr()?;
        let then_ = self.block()?;
        let else_ = if !self.eat("else") {
            Vec::new()
        } else if self.eat("if") {
            vec![Stmt::new(self.if_rest()?)]
        } else {
            self.block()?
        };
        Ok(StmtKind::If { cond, then_, else_ })
    }

    fn launch(&mut self) -> R<StmtKind> {
        self.expect("(")?;
        let grid = self.number()?;
        self.expect(",")?;
        let block = self.number()?;
        self.expect(";")?;
        let int = Type::Scalar(Scalar::I32);
        let index = |p: &mut Parser| -> R<VarId> {
            let addr = p.eat("&");
            let at = p.pos;
            let name = p.ident()?;
            p.declare((at, name), int, VarKind::Local, addr)
        };
        let bid = index(self)?;
        self.expect(",")?;
        let tid = index(self)?;
        self.expect(")")?;
        let body = self.block()?;
        Ok(StmtKind::Launch(Launch {
            grid,
            block,
            bid,
            tid,
            body,
        }))
    }

    /// `(op var, ...)` of a `#[parallel]` mark: variables declared before it.
    fn reductions(&mut self) -> R<Vec<crate::ir::Reduction>> {
        self.expect("(")?;
        let mut out = Vec::new();
        while !self.eat(")") {
            if !out.is_empty() {
                self.expect(",")?;
            }
            let op = self.ident()?;
            let Some(op) = crate::ir::ReduceOp::from_name(&op) else {
                return self.err(format!("unknown reduction `{op}`"));
            };
            let name = self.ident()?;
            let Some(&var) = self.vars.get(&name) else {
                return self.err(format!("unknown variable `{name}` in a reduction"));
            };
            out.push(crate::ir::Reduction { var, op });
        }
        Ok(out)
    }

    /// A declaration, an assignment or an expression, without its `;`.
    fn simple(&mut self) -> R<StmtKind> {
        let kind = if self.eat("let") {
            Some(VarKind::Temp)
        } else if self.eat("var") {
            Some(VarKind::Local)
        } else {
            None
        };
        if let Some(kind) = kind {
            // The initialiser cannot see the variable it initialises.
            let addr = self.eat("&");
            let at = self.pos;
            let name = self.ident()?;
            self.expect(":")?;
            let ty = self.ty()?;
            let init = self.eat("=").then(|| self.expr()).transpose()?;
            let var = self.declare((at, name), ty, kind, addr)?;
            return Ok(StmtKind::Decl { var, init });
        }
        let e = self.expr()?;
        if self.eat("=") {
            let value = self.expr()?;
            return Ok(StmtKind::Assign { place: e, value });
        }
        Ok(StmtKind::Eval(e))
    }

    fn paren_expr(&mut self) -> R<ExprId> {
        self.expect("(")?;
        let e = self.expr()?;
        self.expect(")")?;
        Ok(e)
    }

    /// A node of kind `kind`, typed as the text form says.
    fn node(&mut self, kind: Expr) -> ExprId {
        let ty = inferred(&self.f, &kind);
        self.f.expr(kind, ty)
    }

    fn expr(&mut self) -> R<ExprId> {
        let c = self.binary(super::SELECT + 1)?;
        if !self.eat("?") {
            return Ok(c);
        }
        let a = self.binary(super::SELECT + 1)?;
        self.expect(":")?;
        let b = self.expr()?;
        Ok(self.node(Expr::Select(c, a, b)))
    }

    /// Binary operators of precedence `min` and above, left-associative.
    fn binary(&mut self, min: u8) -> R<ExprId> {
        let mut a = self.unary()?;
        loop {
            let op = match self.peek() {
                Some(Tok::Punct(p)) => binop(p),
                _ => None,
            };
            let Some(op) = op.filter(|&op| super::prec(op) >= min) else {
                return Ok(a);
            };
            self.pos += 1;
            let b = self.binary(super::prec(op) + 1)?;
            a = self.node(Expr::Binary(op, a, b));
        }
    }

    fn unary(&mut self) -> R<ExprId> {
        let Some(Tok::Punct(p)) = self.peek().cloned() else {
            return self.postfix();
        };
        // `-5` with nothing between is a negative literal.
        let glued = self.toks.get(self.pos + 1).is_some_and(|t| !t.spaced);
        if p == "-" && glued && matches!(self.peek_at(1), Some(Tok::Num(_))) {
            self.pos += 1;
            return self.literal(true);
        }
        if p == "-" && glued && matches!(self.peek_at(1), Some(Tok::Ident(x)) if is_float_word(x)) {
            self.pos += 1;
            return self.literal(true);
        }
        let make = |a| match p {
            "-" => Some(Expr::Unary(UnOp::Neg, a)),
            "~" => Some(Expr::Unary(UnOp::BitNot, a)),
            "!" => Some(Expr::Unary(UnOp::Not, a)),
            "*" => Some(Expr::Deref(a)),
            "&" => Some(Expr::AddrOf(a)),
            _ => None,
        };
        if make(ExprId(0)).is_none() {
            return self.postfix();
        }
        // `&f` of an extern that is not a variable: the function's address.
        if let (true, Some(Tok::Ident(x))) = (p == "&", self.peek_at(1).cloned()) {
            let function = (!self.vars.contains_key(&x))
                .then(|| {
                    self.f
                        .externs
                        .iter()
                        .find(|(_, d)| d.name == x && !d.indirect)
                })
                .flatten()
                .map(|(g, _)| g);
            if let Some(g) = function {
                self.pos += 2;
                return Ok(self.node(Expr::FuncAddr(g)));
            }
        }
        self.pos += 1;
        let a = self.unary()?;
        let kind = make(a).expect("checked above");
        Ok(self.node(kind))
    }

    fn postfix(&mut self) -> R<ExprId> {
        let mut e = self.atom()?;
        loop {
            if self.eat("[") {
                let i = self.expr()?;
                self.expect("]")?;
                e = self.node(Expr::Index(e, i));
            } else if self.is("(") {
                e = self.indirect_call(e)?;
            } else if self.is(".") {
                e = self.field(e)?;
            } else {
                return Ok(e);
            }
        }
    }

    /// `s.x`: a field of the struct `s`.
    fn field(&mut self, s: ExprId) -> R<ExprId> {
        self.expect(".")?;
        let name = self.ident()?;
        let Type::Struct(st) = self.f.exprs[s].ty else {
            return self.err(format!(
                "field `{name}` of a value of type {}",
                self.f.exprs[s].ty
            ));
        };
        let Some(i) = st.field(&name) else {
            return self.err(format!("`struct {}` has no field `{name}`", st.name));
        };
        Ok(self.node(Expr::Field(s, i as u32)))
    }

    /// `(p)(a, b)`: a call through the function pointer `p`, declared by
    /// the indirect extern of `p`'s type (added if the text has none).
    fn indirect_call(&mut self, p: ExprId) -> R<ExprId> {
        let ty = self.f.exprs[p].ty;
        let Some(decl) = ExternDecl::indirect(ty) else {
            return self.err(format!(
                "a call of a value of type {ty}, which is not a function pointer"
            ));
        };
        self.expect("(")?;
        let mut args = vec![p];
        while !self.eat(")") {
            if args.len() > 1 {
                self.expect(",")?;
            }
            args.push(self.expr()?);
        }
        let existing = self
            .f
            .externs
            .iter()
            .find(|(_, d)| **d == decl)
            .map(|(g, _)| g);
        let g = existing.unwrap_or_else(|| self.f.externs.push(decl));
        Ok(self.node(Expr::Call(g, args)))
    }

    fn atom(&mut self) -> R<ExprId> {
        if self.eat("(") {
            let e = self.expr()?;
            if self.eat("as") {
                let ty = self.ty()?;
                self.expect(")")?;
                return Ok(self.f.expr(Expr::Cast(e), ty));
            }
            if self.eat(":") {
                let ty = self.ty()?;
                self.f.exprs[e].ty = ty;
            }
            self.expect(")")?;
            return Ok(e);
        }
        match self.peek().cloned() {
            Some(Tok::Num(_)) => self.literal(false),
            Some(Tok::Str(s)) => {
                self.pos += 1;
                Ok(self.node(Expr::Const(Const::Str(s))))
            }
            Some(Tok::Ident(x)) => self.name(x),
            Some(Tok::Punct("@")) => self.intrinsic(),
            _ => self.err("expected an expression"),
        }
    }

    /// `@name(a, b)`: an intrinsic, whose operands must fit its signature.
    fn intrinsic(&mut self) -> R<ExprId> {
        self.pos += 1;
        let Some(Tok::Ident(name)) = self.peek().cloned() else {
            return self.err("expected an intrinsic's name after `@`");
        };
        let Some(op) = Intrinsic::from_name(&name) else {
            return self.err(format!("unknown intrinsic `@{name}`"));
        };
        self.pos += 1;
        self.expect("(")?;
        let args = self.arguments()?;
        let types: Vec<Type> = args.iter().map(|&a| *self.f.ty(a)).collect();
        let Some(ty) = op.result_type(&types) else {
            let shown: Vec<String> = types.iter().map(Type::to_string).collect();
            return self.err(format!(
                "`@{name}` does not take operands of types ({})",
                shown.join(", ")
            ));
        };
        Ok(self.f.expr(Expr::Intrinsic(op, args), ty))
    }

    /// Comma-separated expressions up to and including `)`.
    fn arguments(&mut self) -> R<Vec<ExprId>> {
        let mut args = Vec::new();
        while !self.eat(")") {
            if !args.is_empty() {
                self.expect(",")?;
            }
            args.push(self.expr()?);
        }
        Ok(args)
    }

    /// A variable, a call, or a word literal (`true`, `null`, `nan`, `inf`).
    fn name(&mut self, x: String) -> R<ExprId> {
        let word = match x.as_str() {
            "true" => Some(Const::Bool(true)),
            "false" => Some(Const::Bool(false)),
            "null" => Some(Const::Null),
            _ => None,
        };
        if let Some(c) = word {
            self.pos += 1;
            return Ok(self.node(Expr::Const(c)));
        }
        if is_float_word(&x) {
            return self.literal(false);
        }
        if self.peek_at(1) == Some(&Tok::Punct("(")) {
            let Some((g, _)) = self.f.externs.iter().find(|(_, d)| d.name == x) else {
                return self.err(format!("unknown function `{x}`"));
            };
            self.pos += 2;
            let args = self.arguments()?;
            return Ok(self.node(Expr::Call(g, args)));
        }
        match self.vars.get(&x) {
            Some(&v) => {
                self.pos += 1;
                Ok(self.node(Expr::Var(v)))
            }
            None => self.err(format!("unknown variable `{x}`")),
        }
    }

    /// A number (or `nan`/`inf`) with its suffix, negated if `neg`.
    fn literal(&mut self, neg: bool) -> R<ExprId> {
        let (Some(Tok::Num(text)) | Some(Tok::Ident(text))) = self.peek().cloned() else {
            return self.err("expected a number");
        };
        let digits_end = text
            .find(|c: char| c.is_ascii_alphabetic() && !matches!(c, 'e' | 'E'))
            .filter(|_| !text.starts_with("nan") && !text.starts_with("inf"))
            .unwrap_or(text.len());
        let (digits, suffix) = if text.starts_with("nan") || text.starts_with("inf") {
            (&text[..3], &text[3..])
        } else {
            text.split_at(digits_end)
        };
        let float = digits.contains(['.', 'e', 'E']) || digits == "nan" || digits == "inf";
        let sign = if neg { "-" } else { "" };
        let bad = || format!("`{sign}{text}` is not a literal");
        let (c, ty) = match suffix {
            "" | "f64" | "f32" if float => {
                let x: f64 = format!("{sign}{digits}")
                    .parse()
                    .map_err(|_| ())
                    .or_else(|_| self.err(bad()))?;
                if suffix == "f32" {
                    (Const::F32(x as f32), Scalar::F32)
                } else {
                    (Const::F64(x), Scalar::F64)
                }
            }
            _ => {
                let s = if suffix.is_empty() {
                    Scalar::I32
                } else {
                    int_scalar(suffix).map_or_else(|| self.err(bad()), Ok)?
                };
                let v = if s.is_signed() || s == Scalar::Char {
                    format!("{sign}{digits}").parse::<i64>().ok()
                } else {
                    digits
                        .parse::<u64>()
                        .ok()
                        .filter(|_| !neg)
                        .map(|u| u as i64)
                };
                (Const::Int(v.map_or_else(|| self.err(bad()), Ok)?), s)
            }
        };
        self.pos += 1;
        Ok(self.f.expr(Expr::Const(c), Type::Scalar(ty)))
    }
}

/// `nan` and `inf`, `f64` or with the `f32` suffix.
fn is_float_word(x: &str) -> bool {
    matches!(x, "nan" | "inf" | "nanf32" | "inff32")
}

fn scalar(name: &str) -> Option<Scalar> {
    Scalar::ALL.into_iter().find(|s| s.rust_name() == name)
}

/// The integer scalar a literal suffix names.
fn int_scalar(suffix: &str) -> Option<Scalar> {
    scalar(suffix).filter(|s| s.is_int())
}

fn binop(p: &str) -> Option<BinOp> {
    use BinOp::*;
    [
        Add, Sub, Mul, Div, Rem, BitAnd, BitOr, BitXor, Shl, Shr, And, Or, Eq, Ne, Lt, Le, Gt, Ge,
    ]
    .into_iter()
    .find(|op| op.symbol() == p)
}
