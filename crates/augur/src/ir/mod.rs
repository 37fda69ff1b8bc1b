//! The intermediate representation of one extracted function.
//!
//! # Specification
//!
//! A [`Function`] owns three arenas and a body:
//!
//! * [`Function::vars`]: every second-stage variable (parameters, user
//!   variables made with [`Dyn::new`](crate::Dyn::new), and temporaries that
//!   hold the result of each first-stage operation). A [`VarId`] names one.
//! * Types ([`Type`]): scalars, pointers, arrays, function pointers, opaque
//!   C types (behind pointers only) and structs with C layout
//!   ([`Type::Struct`]; a field is [`Expr::Field`], a place when its
//!   struct is one).
//! * [`Function::exprs`]: expression trees ([`Expr`]), each node typed. A
//!   node may be shared by several parents only if it is pure; passes that
//!   rewrite a node in place must copy shared nodes first (they do not occur
//!   in code the engine produces: every use gets its own node).
//! * [`Function::externs`]: the C functions the body calls or takes the
//!   address of ([`ExternDecl`]; [`Expr::FuncAddr`] is a function's
//!   address, of a [`Type::FnPtr`] type). A call through a function
//!   pointer is a [`Expr::Call`] of an *indirect* declaration
//!   ([`ExternDecl::indirect`]) whose first argument is the pointer, so every
//!   walk over a call's operands sees the pointer too. Functions of one
//!   module call each other as externs of their names.
//! * [`Function::body`]: a structured statement tree ([`Stmt`]) of
//!   declarations, assignments, calls, `if`, `while`, `for`, `break`,
//!   `continue`, `return` and GPU kernel launches
//!   ([`Launch`]: a body run by every thread of a grid, with its
//!   block and thread indices); a `for` may be a parallel loop
//!   ([`parallel`]). `Label`/`Goto` appear only as a fallback
//!   for control flow that has no structured form.
//!
//! Invariants (checked by [`verify`](verify::verify) after every pass):
//! 1. every variable other than a parameter is declared exactly once, and
//!    every use lies inside the block of its declaration, after it;
//! 2. `break` and `continue` lie inside a loop;
//! 3. assignment targets are places (`Var`, `Index`, `Deref`, `Field`);
//! 4. a `return` carries a value iff [`Function::ret`] is not `Void`;
//! 5. every `goto` names a label the function defines once;
//! 6. a launch declares its two `int32_t` indices for its body, which no
//!    `break`, `continue`, `return` or `goto` leaves (a loop around a launch
//!    is not one its body can leave);
//! 7. every [`restrict`](Function::restrict) variable is a parameter of
//!    pointer type;
//! 8. every [intrinsic](Intrinsic) fits its signature (operands' types and
//!    its node's type; `@shared`'s operands are constants within
//!    [`MAX_SHARED_BYTES`]), and a barrier is the whole value of an `Eval`
//!    statement;
//! 9. a `for` loop marked [`Annotation::Parallel`] keeps the rules of
//!    [`parallel`]: the header `for (int64_t i = lo; i < hi; i = i + 1)`
//!    with `hi` a variable, reductions of fitting scalar types declared
//!    outside it, a body that assigns no other variable declared outside
//!    it, and that no `break`, `return` or `goto` leaves.
//!
//! The text form ([`Display`](std::fmt::Display), specified in [`text`]) is
//! what file tests and error messages show, and [`parse`] reads it back; the
//! C backend lives in [`codegen`](crate::codegen).

pub(crate) mod device;
mod entity;
mod expr;
mod intrinsic;
pub mod parallel;
mod stmt;
pub mod text;
mod types;
pub mod verify;

pub use entity::{Arena, EntityId, SecondaryMap};
pub(crate) use expr::{binop_prec, write_c_string};
pub use expr::{BinOp, Const, Expr, ExprData, ExprId, UnOp};
pub use intrinsic::{atomic_suffix, Intrinsic, ATOMIC_SCALARS, MAX_SHARED_BYTES};
pub use parallel::{ReduceOp, Reduction};
pub(crate) use stmt::{each_expr, each_own_expr};
pub use stmt::{Annotation, Block, LabelId, Launch, SrcLoc, Stmt, StmtKind};
pub use text::{parse, ParseError};
pub use types::{FnSig, OpaqueType, Scalar, StructType, Type};

pub(crate) use entity::entity;

entity!(
    /// Handle of a variable in [`Function::vars`].
    VarId,
    "v"
);
entity!(
    /// Handle of an extern function in [`Function::externs`].
    FuncId,
    "f"
);

/// What role a variable plays; passes treat them differently.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum VarKind {
    /// The `n`-th parameter.
    Param(u32),
    /// A variable the user declared (it may be assigned many times).
    Local,
    /// The result of one first-stage operation: assigned once, at its
    /// declaration. Copy elimination inlines these.
    Temp,
}

/// A variable.
#[derive(Clone, Debug, PartialEq)]
pub struct VarData {
    /// Its type.
    pub ty: Type,
    /// Role.
    pub kind: VarKind,
    /// The name the user asked for, if any.
    pub hint: Option<String>,
    /// The name chosen by the naming pass (`None` before it runs).
    pub name: Option<String>,
    /// True when its address is taken (`&v`); such variables may change
    /// through any store to memory or call.
    pub addr_taken: bool,
    /// Where it was declared.
    pub loc: Option<SrcLoc>,
}

/// An extern's signature as a call site has it, borrowed: compared with
/// the declaration on every call, turned into one on the first.
#[derive(Clone, Copy, Debug)]
pub struct ExternSig<'a> {
    /// Its C name.
    pub name: &'a str,
    /// Parameter types (the fixed ones, for variadic functions).
    pub params: &'a [Type],
    /// Return type (`Void` for none).
    pub ret: Type,
    /// True for `printf`-like functions.
    pub variadic: bool,
    /// The header that declares it, if any.
    pub header: Option<&'a str>,
    /// A call through a function pointer (see [`ExternDecl::indirect`]).
    pub indirect: bool,
}

impl ExternSig<'_> {
    /// True if `d` is this signature's declaration.
    pub fn declares(&self, d: &ExternDecl) -> bool {
        d.name == self.name
            && d.params == self.params
            && d.ret == self.ret
            && d.variadic == self.variadic
            && d.header.as_deref() == self.header
            && d.indirect == self.indirect
    }

    /// The declaration, owned.
    pub fn to_decl(&self) -> ExternDecl {
        ExternDecl {
            name: self.name.to_string(),
            params: self.params.to_vec(),
            ret: self.ret,
            variadic: self.variadic,
            header: self.header.map(str::to_string),
            indirect: self.indirect,
        }
    }
}

/// An extern C function the body calls.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ExternDecl {
    /// Its C name.
    pub name: String,
    /// Parameter types (the fixed ones, for variadic functions).
    pub params: Vec<Type>,
    /// Return type (`Void` for none).
    pub ret: Type,
    /// True for `printf`-like functions.
    pub variadic: bool,
    /// The header that declares it (`stdio.h`); `None` means the generated C
    /// declares a prototype itself.
    pub header: Option<String>,
    /// Not a function but a call through a function pointer: the call's
    /// first argument is the pointer (of type `params[0]`, a
    /// [`Type::FnPtr`]), the others its arguments. `name` is the pointer
    /// type's text ([`ExternDecl::indirect`] makes one); no prototype is
    /// written for it.
    pub indirect: bool,
}

impl ExternDecl {
    /// The declaration of calls through pointers of type `ptr` (a
    /// [`Type::FnPtr`]).
    pub fn indirect(ptr: Type) -> Option<ExternDecl> {
        let sig = ptr.fn_sig()?;
        let mut params = vec![ptr];
        params.extend(sig.params.iter().copied());
        Some(ExternDecl {
            name: ptr.to_string(),
            params,
            ret: sig.ret,
            variadic: false,
            header: None,
            indirect: true,
        })
    }
}

/// One extracted function.
#[derive(Clone, Debug)]
pub struct Function {
    /// Its C name.
    pub name: String,
    /// Parameters, in order.
    pub params: Vec<VarId>,
    /// Return type.
    pub ret: Type,
    /// Variables.
    pub vars: Arena<VarId, VarData>,
    /// Expression nodes.
    pub exprs: Arena<ExprId, ExprData>,
    /// Called externs.
    pub externs: Arena<FuncId, ExternDecl>,
    /// The body.
    pub body: Block,
    /// Pointer parameters declared `restrict` (C99 6.7.3.1): the caller
    /// promises that an object reached through one of them and modified
    /// while the function runs is reached through no other pointer. C
    /// prints `T *restrict p`, CUDA `T *__restrict__ p`; the interpreter
    /// and the kernels extracted from a GPU program do not use it.
    pub restrict: Vec<VarId>,
}

impl Function {
    /// An empty function.
    pub fn new(name: impl Into<String>, ret: Type) -> Function {
        Function {
            name: name.into(),
            params: Vec::new(),
            ret,
            vars: Arena::new(),
            exprs: Arena::new(),
            externs: Arena::new(),
            body: Vec::new(),
            restrict: Vec::new(),
        }
    }

    /// Adds an expression node.
    pub fn expr(&mut self, kind: Expr, ty: Type) -> ExprId {
        self.exprs.push(ExprData { kind, ty })
    }

    /// The type of an expression.
    pub fn ty(&self, e: ExprId) -> &Type {
        &self.exprs[e].ty
    }

    /// The printed name of a variable: its chosen name, else its hint, else `v<N>`.
    pub fn var_name(&self, v: VarId) -> String {
        let d = &self.vars[v];
        match (&d.name, &d.hint) {
            (Some(n), _) => n.clone(),
            (None, Some(h)) => format!("{h}_{}", v.0),
            _ => format!("{v}"),
        }
    }

    /// Copies the tree under `e` into fresh nodes (for passes that duplicate code).
    pub fn deep_copy(&mut self, e: ExprId) -> ExprId {
        let data = self.exprs[e].clone();
        let kind = match data.kind {
            Expr::Unary(op, a) => Expr::Unary(op, self.deep_copy(a)),
            Expr::Binary(op, a, b) => {
                let a = self.deep_copy(a);
                Expr::Binary(op, a, self.deep_copy(b))
            }
            Expr::Cast(a) => Expr::Cast(self.deep_copy(a)),
            Expr::Index(a, b) => {
                let a = self.deep_copy(a);
                Expr::Index(a, self.deep_copy(b))
            }
            Expr::Deref(a) => Expr::Deref(self.deep_copy(a)),
            Expr::AddrOf(a) => Expr::AddrOf(self.deep_copy(a)),
            Expr::Field(a, i) => Expr::Field(self.deep_copy(a), i),
            Expr::Call(f, args) => Expr::Call(f, args.iter().map(|&a| self.deep_copy(a)).collect()),
            Expr::Intrinsic(i, args) => {
                Expr::Intrinsic(i, args.iter().map(|&a| self.deep_copy(a)).collect())
            }
            Expr::Select(c, a, b) => {
                let c = self.deep_copy(c);
                let a = self.deep_copy(a);
                Expr::Select(c, a, self.deep_copy(b))
            }
            k @ (Expr::Var(_) | Expr::Const(_) | Expr::FuncAddr(_)) => k,
        };
        self.expr(kind, data.ty)
    }

    /// Calls `f` on every direct child of expression `e`.
    pub fn for_each_child(&self, e: ExprId, mut f: impl FnMut(ExprId)) {
        match &self.exprs[e].kind {
            Expr::Var(_) | Expr::Const(_) | Expr::FuncAddr(_) => {}
            Expr::Unary(_, a)
            | Expr::Cast(a)
            | Expr::Deref(a)
            | Expr::AddrOf(a)
            | Expr::Field(a, _) => f(*a),
            Expr::Binary(_, a, b) | Expr::Index(a, b) => {
                f(*a);
                f(*b)
            }
            Expr::Call(_, args) | Expr::Intrinsic(_, args) => args.iter().for_each(|&a| f(a)),
            Expr::Select(c, a, b) => {
                f(*c);
                f(*a);
                f(*b)
            }
        }
    }

    /// Calls `f` on every variable read or named anywhere in the tree under `e`.
    pub fn for_each_var(&self, e: ExprId, f: &mut impl FnMut(VarId)) {
        if let Expr::Var(v) = self.exprs[e].kind {
            f(v);
        }
        self.for_each_child(e, |c| self.for_each_var(c, f));
    }

    /// True if the tree under `e` contains a call or an intrinsic (passes
    /// treat both alike: they stay where they are, in order).
    pub fn has_call(&self, e: ExprId) -> bool {
        if matches!(self.exprs[e].kind, Expr::Call(..) | Expr::Intrinsic(..)) {
            return true;
        }
        let mut any = false;
        self.for_each_child(e, |c| any |= self.has_call(c));
        any
    }

    /// True if the tree under `e` reads memory (`Index`, `Deref`) or an
    /// address-taken variable: such reads depend on every store and call.
    pub fn reads_memory(&self, e: ExprId) -> bool {
        match &self.exprs[e].kind {
            Expr::Index(..) | Expr::Deref(_) => return true,
            Expr::Var(v) if self.vars[*v].addr_taken => return true,
            Expr::AddrOf(p) => {
                // &a[i] computes an address, it reads only what the index reads.
                return match &self.exprs[*p].kind {
                    Expr::Var(_) => false,
                    Expr::Index(b, i) => {
                        let base_is_array_var = matches!(self.exprs[*b].kind, Expr::Var(_))
                            && matches!(self.exprs[*b].ty, Type::Array { .. });
                        (!base_is_array_var && self.reads_memory(*b)) || self.reads_memory(*i)
                    }
                    Expr::Deref(q) => self.reads_memory(*q),
                    _ => true,
                };
            }
            _ => {}
        }
        let mut any = false;
        self.for_each_child(e, |c| any |= self.reads_memory(c));
        any
    }
}

/// The structs `fs` use, each after the structs its fields use (by value
/// or through pointers).
pub fn struct_types(fs: &[&Function]) -> Vec<&'static StructType> {
    fn visit(t: &Type, out: &mut Vec<&'static StructType>) {
        match t {
            Type::Struct(s) => {
                if out.contains(s) {
                    return;
                }
                s.fields.iter().for_each(|(_, t)| visit(t, out));
                out.push(s);
            }
            Type::Ptr { to, .. } => visit(to, out),
            Type::Array { of, .. } => visit(of, out),
            Type::FnPtr(sig) => {
                sig.params.iter().for_each(|t| visit(t, out));
                visit(&sig.ret, out);
            }
            Type::Void | Type::Scalar(_) | Type::Opaque(_) => {}
        }
    }
    let mut out = Vec::new();
    for f in fs {
        f.vars.iter().for_each(|(_, v)| visit(&v.ty, &mut out));
        f.exprs.iter().for_each(|(_, e)| visit(&e.ty, &mut out));
        for (_, d) in f.externs.iter() {
            d.params.iter().for_each(|t| visit(t, &mut out));
            visit(&d.ret, &mut out);
        }
        visit(&f.ret, &mut out);
    }
    out
}
