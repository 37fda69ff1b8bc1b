//! Bounds checks, for functions called safely
//! ([`Extracted::safe`](crate::Extracted::safe)).
//!
//! A *checked* function ([`Builder::slice`](crate::Builder::slice),
//! [`Builder::checked`](crate::Builder::checked)) reaches memory only in
//! ways a check can cover: through its slice parameters (a pointer
//! parameter whose length is another, integer parameter) and through local
//! arrays of fixed length, always by indexing. Every index into one is
//! wrapped in a bounds check ([`Intrinsic::Checked`], `@checked(i, len,
//! slice)`), which gives the index back when it lies
//! in `0..len` and otherwise stops the program (C: a message and `abort`;
//! the interpreter: an error naming the slice). The check runs exactly when
//! the index is evaluated, so `i < n && x[i] > 0` checks nothing it would
//! not read.
//!
//! Anything else that could reach memory unchecked is an error naming its
//! line: dereferences, addresses taken, pointer values other than a slice
//! parameter (or a copy of one) being indexed, pointers passed to or
//! returned by calls (string literals excepted), function pointers, and
//! assignments to a slice parameter or its length.

use crate::error::Error;
use crate::ir::{
    Const, Expr, ExprId, Function, Intrinsic, Scalar, SrcLoc, Stmt, StmtKind, Type, VarId,
};
use std::collections::HashMap;

/// The message of a failed check of slice `slice` (its position among the
/// declared slices; -1 for a local array): C, the JIT's helper and the
/// interpreter say the same.
pub fn message(index: i64, len: i64, slice: i32) -> String {
    let what = match slice {
        -1 => "a local array".to_string(),
        k => format!("slice {k}"),
    };
    format!("index {index} is out of bounds of {what} (length {len})")
}

/// What one indexable thing is checked against.
#[derive(Clone, Copy)]
enum Bound {
    /// Slice number `k` (its position among the declared slices), whose
    /// length is variable `len`.
    Slice { k: usize, len: VarId },
    /// A local array of this many elements.
    Array(u64),
}

/// Makes `f` checked: validates the slices (`(pointer parameter, length
/// parameter)` positions) and the rules above, then wraps every index.
pub fn run(f: &mut Function, slices: &[(usize, usize)], loc: SrcLoc) -> Result<(), Error> {
    let mut bounds: HashMap<VarId, Bound> = HashMap::new();
    let mut lens = Vec::new();
    for (k, &(p, n)) in slices.iter().enumerate() {
        let (ptr, len) = declared(f, p, n, loc)?;
        if bounds.insert(ptr, Bound::Slice { k, len }).is_some() {
            return Err(misuse(
                format!("Builder::slice names parameter {p} twice"),
                loc,
            ));
        }
        lens.push(len);
    }
    for (v, d) in f.vars.iter() {
        if let (Type::Array { len: Some(n), .. }, false) = (d.ty, f.params.contains(&v)) {
            bounds.insert(v, Bound::Array(n));
        }
    }
    let mut check = Check {
        f,
        bounds,
        lens,
        indexes: Vec::new(),
    };
    let body = std::mem::take(&mut check.f.body);
    let r = check.block(&body);
    check.f.body = body;
    r?;
    let Check {
        f, bounds, indexes, ..
    } = check;
    wrap(f, &bounds, &indexes);
    Ok(())
}

/// The variables of slice `(p, n)`, checked to be a pointer to a scalar and
/// an integer.
fn declared(f: &Function, p: usize, n: usize, loc: SrcLoc) -> Result<(VarId, VarId), Error> {
    let param = |i: usize| f.params.get(i).copied();
    let (Some(ptr), Some(len)) = (param(p), param(n)) else {
        return Err(misuse(
            format!("Builder::slice({p}, {n}) names a parameter the function does not have ({} parameters)", f.params.len()),
            loc,
        ));
    };
    let to_scalar = matches!(f.vars[ptr].ty, Type::Ptr { to, .. } if to.as_scalar().is_some());
    let int = f.vars[len].ty.as_scalar().is_some_and(Scalar::is_int);
    if !to_scalar || !int || p == n {
        return Err(misuse(
            format!(
                "Builder::slice({p}, {n}): a slice is a pointer to scalars and an integer \
                 length, but the parameters have types {} and {}",
                f.vars[ptr].ty, f.vars[len].ty
            ),
            loc,
        ));
    }
    Ok((ptr, len))
}

fn misuse(message: String, loc: SrcLoc) -> Error {
    Error::Misuse {
        message,
        location: Some(loc),
    }
}

struct Check<'a> {
    f: &'a mut Function,
    /// Slice parameters, copies of them, and local arrays.
    bounds: HashMap<VarId, Bound>,
    lens: Vec<VarId>,
    /// Every `Index` into something of `bounds`.
    indexes: Vec<ExprId>,
}

impl Check<'_> {
    fn block(&mut self, b: &[Stmt]) -> Result<(), Error> {
        b.iter().try_for_each(|s| self.stmt(s))
    }

    fn stmt(&mut self, s: &Stmt) -> Result<(), Error> {
        let loc = s.loc;
        match &s.kind {
            // `let t = x;` of a slice parameter: `t` is the slice too.
            StmtKind::Decl { var, init: Some(i) } if self.copies_slice(*i, *var) => {
                let Expr::Var(x) = self.f.exprs[*i].kind else {
                    unreachable!("checked")
                };
                let b = self.bounds[&x];
                self.bounds.insert(*var, b);
                Ok(())
            }
            StmtKind::Decl { init, .. } => init.map_or(Ok(()), |i| self.expr(i, loc)),
            StmtKind::Assign { place, value } => {
                if let Expr::Var(v) = self.f.exprs[*place].kind {
                    let slice = matches!(self.bounds.get(&v), Some(Bound::Slice { .. }));
                    if slice || self.lens.contains(&v) {
                        return Err(self.refused(
                            loc,
                            format!("assigns `{}`, a slice or its length", self.f.var_name(v)),
                        ));
                    }
                } else {
                    self.expr(*place, loc)?;
                }
                self.expr(*value, loc)
            }
            StmtKind::Eval(x) | StmtKind::Return(Some(x)) => self.expr(*x, loc),
            StmtKind::If { cond, then_, else_ } => {
                self.expr(*cond, loc)?;
                self.block(then_)?;
                self.block(else_)
            }
            StmtKind::While { cond, body } => {
                self.expr(*cond, loc)?;
                self.block(body)
            }
            StmtKind::For {
                init,
                cond,
                step,
                body,
            } => {
                self.stmt(init)?;
                self.expr(*cond, loc)?;
                self.stmt(step)?;
                self.block(body)
            }
            StmtKind::Launch(l) => self.block(&l.body),
            StmtKind::Return(None)
            | StmtKind::Break
            | StmtKind::Continue
            | StmtKind::Label(_)
            | StmtKind::Goto(_) => Ok(()),
        }
    }

    /// True if `init` is a slice parameter (or copy) of `var`'s type.
    fn copies_slice(&self, init: ExprId, var: VarId) -> bool {
        match self.f.exprs[init].kind {
            Expr::Var(x) => {
                matches!(self.bounds.get(&x), Some(Bound::Slice { .. }))
                    && self.f.vars[x].ty == self.f.vars[var].ty
            }
            _ => false,
        }
    }

    fn expr(&mut self, e: ExprId, loc: Option<SrcLoc>) -> Result<(), Error> {
        let data = self.f.exprs[e].clone();
        match &data.kind {
            Expr::Index(base, i) => {
                match self.f.exprs[*base].kind {
                    Expr::Var(v) if self.bounds.contains_key(&v) => self.indexes.push(e),
                    _ => {
                        return Err(self.refused(
                            loc,
                            "indexes a pointer that is not a slice parameter or a local array"
                                .into(),
                        ))
                    }
                }
                return self.expr(*i, loc);
            }
            Expr::Deref(_) => return Err(self.refused(loc, "dereferences a pointer".into())),
            Expr::AddrOf(_) => return Err(self.refused(loc, "takes an address".into())),
            Expr::FuncAddr(_) => return Err(self.refused(loc, "takes a function's address".into())),
            Expr::Call(g, args) => {
                let d = self.f.externs[*g].clone();
                if d.indirect {
                    return Err(self.refused(loc, "calls through a function pointer".into()));
                }
                if is_pointer(&d.ret) {
                    return Err(
                        self.refused(loc, format!("calls `{}`, which returns a pointer", d.name))
                    );
                }
                for &a in args {
                    let literal = matches!(self.f.exprs[a].kind, Expr::Const(Const::Str(_)));
                    if is_pointer(self.f.ty(a)) && !literal {
                        return Err(self.refused(loc, format!("passes a pointer to `{}`", d.name)));
                    }
                    self.expr(a, loc)?;
                }
                return Ok(());
            }
            _ if is_pointer(&data.ty) => {
                let what = match data.kind {
                    Expr::Var(v) => format!(
                        "uses the pointer `{}` other than by indexing it",
                        self.f.var_name(v)
                    ),
                    _ => format!("computes a pointer ({})", data.ty),
                };
                return Err(self.refused(loc, what));
            }
            _ => {}
        }
        let mut children = Vec::new();
        self.f.for_each_child(e, |c| children.push(c));
        children.into_iter().try_for_each(|c| self.expr(c, loc))
    }

    fn refused(&self, loc: Option<SrcLoc>, what: String) -> Error {
        Error::Misuse {
            message: format!(
                "`{}` {what}: a checked function (Builder::slice, Builder::checked) reaches \
                 memory only by indexing its slice parameters and local arrays",
                self.f.name
            ),
            location: loc,
        }
    }
}

/// Pointers and arrays (which decay to pointers), and function pointers.
fn is_pointer(t: &Type) -> bool {
    matches!(t, Type::Ptr { .. } | Type::Array { .. } | Type::FnPtr(_))
}

/// Wraps the index of each of `indexes` in a bounds check.
fn wrap(f: &mut Function, bounds: &HashMap<VarId, Bound>, indexes: &[ExprId]) {
    let mut done = std::collections::HashSet::new();
    let i64_ = Type::Scalar(Scalar::I64);
    for &e in indexes {
        if !done.insert(e) {
            continue;
        }
        let Expr::Index(base, i) = f.exprs[e].kind else {
            unreachable!("an index")
        };
        let Expr::Var(v) = f.exprs[base].kind else {
            unreachable!("checked")
        };
        let (len, k) = match bounds[&v] {
            Bound::Array(n) => {
                let inside = matches!(f.exprs[i].kind, Expr::Const(Const::Int(c)) if c >= 0 && (c as u64) < n);
                if inside {
                    continue;
                }
                (f.expr(Expr::Const(Const::Int(n as i64)), i64_), -1)
            }
            Bound::Slice { k, len } => {
                let n = f.expr(Expr::Var(len), f.vars[len].ty);
                (as_i64(f, n), k as i64)
            }
        };
        let index = as_i64(f, i);
        let k = f.expr(Expr::Const(Const::Int(k)), Type::Scalar(Scalar::I32));
        let checked = f.expr(
            Expr::Intrinsic(Intrinsic::Checked, vec![index, len, k]),
            i64_,
        );
        f.exprs[e].kind = Expr::Index(base, checked);
    }
}

/// `e` as an `int64_t` (cast unless it is one).
fn as_i64(f: &mut Function, e: ExprId) -> ExprId {
    let i64_ = Type::Scalar(Scalar::I64);
    match *f.ty(e) == i64_ {
        true => e,
        false => f.expr(Expr::Cast(e), i64_),
    }
}
