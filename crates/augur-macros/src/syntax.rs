//! What the rewriting reads off the user's syntax: calls, places, names
//! bound and changed, and the attributes it puts on statements.

use proc_macro2::TokenStream;
use quote::quote_spanned;
use syn::spanned::Spanned;
use syn::{parse_quote, parse_quote_spanned, Expr, Ident, Item, Pat, Stmt};

/// Allows `unreachable_code` on a statement where a value was held: a
/// call that diverges (`dsl::fail(e, Location::caller())`) makes the
/// `__private::call` around it unreachable, which the lint would report
/// on the user's line. Outer attributes stand on a `let` or on an
/// expression statement that is a call, a block-like expression or a
/// macro (on any other, they would attach to its first operand).
pub(crate) fn allow_unreachable(st: &mut Stmt) {
    let allow = allow_diverging();
    let attrs = match st {
        Stmt::Local(l) => &mut l.attrs,
        Stmt::Expr(e, _) => match outer_attrs(e) {
            Some(attrs) => attrs,
            None => return,
        },
        _ => return,
    };
    attrs.push(allow);
}

/// What [`allow_unreachable`] puts on a statement (clippy's lint for a
/// call that diverges inside another reports the same).
pub(crate) fn allow_diverging() -> syn::Attribute {
    parse_quote!(#[allow(unreachable_code, clippy::diverging_sub_expression)])
}

/// The outer attributes of an expression that can carry them as a
/// statement: a call, a block-like expression.
pub(crate) fn outer_attrs(e: &mut Expr) -> Option<&mut Vec<syn::Attribute>> {
    Some(match e {
        Expr::Call(c) => &mut c.attrs,
        Expr::MethodCall(m) => &mut m.attrs,
        Expr::Match(m) => &mut m.attrs,
        Expr::If(i) => &mut i.attrs,
        Expr::Block(b) => &mut b.attrs,
        Expr::Unsafe(u) => &mut u.attrs,
        Expr::Loop(l) => &mut l.attrs,
        Expr::While(w) => &mut w.attrs,
        Expr::ForLoop(f) => &mut f.attrs,
        _ => return None,
    })
}

/// True if evaluating `e` may call code (and so take a decision): a call,
/// a method call or a macro outside any closure it holds.
pub(crate) fn has_call(e: &Expr) -> bool {
    struct Finder(bool);
    impl syn::visit::Visit<'_> for Finder {
        fn visit_expr_call(&mut self, _: &syn::ExprCall) {
            self.0 = true;
        }
        fn visit_expr_method_call(&mut self, _: &syn::ExprMethodCall) {
            self.0 = true;
        }
        fn visit_macro(&mut self, _: &syn::Macro) {
            self.0 = true;
        }
        fn visit_expr_closure(&mut self, _: &syn::ExprClosure) {}
        fn visit_item(&mut self, _: &Item) {}
    }
    let mut f = Finder(false);
    syn::visit::Visit::visit_expr(&mut f, e);
    f.0
}

/// True if `e` is a place expression (a path, a field, an index, a
/// dereference): a value taken from it would move out of the place.
pub(crate) fn is_place(e: &Expr) -> bool {
    match e {
        Expr::Path(_) | Expr::Field(_) | Expr::Index(_) => true,
        Expr::Unary(u) => matches!(u.op, syn::UnOp::Deref(_)),
        Expr::Paren(p) => is_place(&p.expr),
        _ => false,
    }
}

/// True if the value of `e`, handed to a call or matched, may come out of
/// a decision: evaluating it may call code (see [`has_call`]). A closure
/// is a value its calls decide in; a macro that diverges hands nothing.
pub(crate) fn may_decide(e: &Expr) -> bool {
    match e {
        Expr::Closure(_) => false,
        Expr::Macro(m) => {
            let diverges = ["panic", "todo", "unimplemented", "unreachable"];
            !m.mac
                .path
                .segments
                .last()
                .is_some_and(|s| diverges.contains(&&*s.ident.to_string()))
        }
        e => has_call(e),
    }
}

/// True if the receiver of `m` is held while the method runs: a value
/// (not a place, which autoref borrows) that may come out of a decision,
/// handed to a method that may keep using it. The methods whose result
/// type is evident (`is_true`, `is_some`, `len`, see [`evident_method`])
/// only test it.
pub(crate) fn holds_receiver(m: &syn::ExprMethodCall) -> bool {
    may_decide(&m.receiver) && !is_place(&m.receiver) && !evident_method(&m.method)
}

/// True if `p` binds a name (lower case: `None` and constants are
/// patterns of one identifier too).
pub(crate) fn binds(p: &Pat) -> bool {
    let mut names = Vec::new();
    bindings(p, &mut names);
    names.iter().any(|x| {
        let s = x.to_string();
        s.starts_with(|c: char| c.is_lowercase() || c == '_')
    })
}

/// `v` held while the call it is handed to runs (see `__private::arg`).
/// Parentheses around it (a receiver's: `(0..n).map(f)`) would be
/// parentheses around an argument, which `unused_parens` reports on the
/// user's code.
pub(crate) fn held_argument(v: &Expr) -> Expr {
    let v = unparenthesized(v);
    parse_quote_spanned!(v.span()=> ::augur::__private::arg(::augur::__private::mark(), #v))
}

/// A call whose arguments were held, releasing them when it returns.
///
/// The tokens the rewriting adds around an expression carry its span: a
/// method called on it (`f(g(x)).m()`) is `#[track_caller]` in annotated
/// code, and its caller's location is where the expression before the dot
/// begins, which must be the user's line, not the attribute's.
pub(crate) fn releasing(e: &Expr) -> Expr {
    parse_quote_spanned!(e.span()=> ::augur::__private::call(::augur::__private::mark(), #e))
}

/// `e` without the parentheses around it.
pub(crate) fn unparenthesized(e: &Expr) -> &Expr {
    match e {
        Expr::Paren(p) if p.attrs.is_empty() => unparenthesized(&p.expr),
        e => e,
    }
}

/// `v` held while the `match` (`if let`, `while let` turn, `for` loop)
/// whose scrutinee it is runs: the guard is a temporary of the scrutinee,
/// dropped when the construct ends, however it ends. A place (`v[i]`,
/// `*r`) is matched through a reference to it.
pub(crate) fn held_scrutinee(v: &mut Expr) {
    let place = matches!(
        v,
        Expr::Index(_)
            | Expr::Unary(syn::ExprUnary {
                op: syn::UnOp::Deref(_),
                ..
            })
    );
    let inner = unparenthesized(v);
    let span = inner.span();
    let held = quote_spanned!(span=> &::augur::__private::Held::new());
    *v = if place {
        parse_quote_spanned!(span=> *::augur::__private::scrutinee(#held, &#inner))
    } else {
        parse_quote_spanned!(span=> ::augur::__private::scrutinee(#held, #inner))
    };
}

/// The part of a scrutinee to hold: the expression itself, or, for a
/// field of a call's value (`f().x.y`), the call (`f()`); `None` for a
/// path, or a field of a place (a local's state, which its tracker sees).
pub(crate) fn held_part(e: &mut Expr) -> Option<&mut Expr> {
    match e {
        Expr::Field(f) => called_value(&mut f.base),
        Expr::Paren(p) => held_part(&mut p.expr),
        Expr::Path(_) => None,
        e => Some(e),
    }
}

/// The call under the fields of `e`, if the fields are of a call's value.
pub(crate) fn called_value(e: &mut Expr) -> Option<&mut Expr> {
    match e {
        Expr::Field(f) => called_value(&mut f.base),
        Expr::Paren(p) => called_value(&mut p.expr),
        e @ (Expr::Call(_) | Expr::MethodCall(_)) => Some(e),
        _ => None,
    }
}

/// True if `e`'s type is known where it stands, whatever follows: a
/// literal, a cast, a dereference, a negation, a comparison or logical
/// operation, or a call of a method whose result type never comes from
/// later code (`is_true`, `is_some`, `len`, ...). A local bound to such a
/// value may be probed for `Hash` (see `hash_of`); a probe on a type that
/// later code infers (`collect()`, a prophecy's `Flat<_>`) would not
/// compile.
pub(crate) fn type_evident(e: &Expr) -> bool {
    use syn::{BinOp, UnOp};
    match e {
        Expr::Lit(_) | Expr::Cast(_) => true,
        Expr::Unary(u) => matches!(u.op, UnOp::Deref(_) | UnOp::Not(_)),
        Expr::Paren(p) => type_evident(&p.expr),
        Expr::Binary(b) => matches!(
            b.op,
            BinOp::Eq(_)
                | BinOp::Ne(_)
                | BinOp::Lt(_)
                | BinOp::Le(_)
                | BinOp::Gt(_)
                | BinOp::Ge(_)
                | BinOp::And(_)
                | BinOp::Or(_)
        ),
        Expr::MethodCall(m) => evident_method(&m.method),
        _ => false,
    }
}

/// True for a method whose result type never comes from later code.
pub(crate) fn evident_method(name: &Ident) -> bool {
    matches!(
        name.to_string().as_str(),
        "is_true"
            | "is_some"
            | "is_none"
            | "is_ok"
            | "is_err"
            | "is_empty"
            | "len"
            | "contains"
            | "contains_key"
            | "starts_with"
            | "ends_with"
    )
}

/// The identifiers a pattern binds, each with whether it is `mut`.
pub(crate) fn mutable_bindings(p: &Pat, out: &mut Vec<(Ident, bool)>) {
    struct Names<'a>(&'a mut Vec<(Ident, bool)>);
    impl syn::visit::Visit<'_> for Names<'_> {
        fn visit_pat_ident(&mut self, p: &syn::PatIdent) {
            self.0.push((p.ident.clone(), p.mutability.is_some()));
            syn::visit::visit_pat_ident(self, p);
        }
    }
    syn::visit::Visit::visit_pat(&mut Names(out), p);
}

/// The identifiers a pattern binds.
pub(crate) fn bindings(p: &Pat, out: &mut Vec<Ident>) {
    let mut all = Vec::new();
    mutable_bindings(p, &mut all);
    out.extend(all.into_iter().map(|(x, _)| x));
}

/// The local an assignment's left side writes (`x`, `x.f`, `x[i]`, `(x.f).g`,
/// `*x`: through a `&mut` the local holds, such as a parameter's).
pub(crate) fn assigned_local(e: &Expr) -> Option<&Ident> {
    match e {
        Expr::Path(p) if p.qself.is_none() => p.path.get_ident(),
        Expr::Field(f) => assigned_local(&f.base),
        Expr::Index(i) => assigned_local(&i.expr),
        Expr::Paren(p) => assigned_local(&p.expr),
        Expr::Unary(u) if matches!(u.op, syn::UnOp::Deref(_)) => assigned_local(&u.expr),
        _ => None,
    }
}

/// The locals an expression may change without assigning them: receivers
/// of method calls (`x.push(1)`, `x.f.take()`) and places borrowed `&mut`.
/// Which methods take `&mut self` is a question of types the macro cannot
/// ask, so every method call counts (re-hashing an unchanged value costs a
/// hash, never exactness).
pub(crate) fn changed_through(e: &Expr) -> Vec<Ident> {
    struct Changed(Vec<Ident>);
    impl syn::visit::Visit<'_> for Changed {
        fn visit_expr_method_call(&mut self, m: &syn::ExprMethodCall) {
            if let Some(x) = assigned_local(&m.receiver) {
                self.0.push(x.clone());
            }
            syn::visit::visit_expr_method_call(self, m);
        }
        fn visit_expr_reference(&mut self, r: &syn::ExprReference) {
            if r.mutability.is_some() {
                if let Some(x) = assigned_local(&r.expr) {
                    self.0.push(x.clone());
                }
            }
            syn::visit::visit_expr_reference(self, r);
        }
        // Nested items are not this function's code.
        fn visit_item(&mut self, _: &Item) {}
    }
    let mut c = Changed(Vec::new());
    syn::visit::Visit::visit_expr(&mut c, e);
    let mut out: Vec<Ident> = Vec::new();
    for x in c.0 {
        if !out.contains(&x) {
            out.push(x);
        }
    }
    out
}

/// Adds every identifier in `tokens` (macro arguments included) to `out`.
pub(crate) fn idents(tokens: TokenStream, out: &mut std::collections::HashSet<String>) {
    for t in tokens {
        match t {
            proc_macro2::TokenTree::Ident(i) => {
                out.insert(i.to_string());
            }
            proc_macro2::TokenTree::Group(g) => idents(g.stream(), out),
            _ => {}
        }
    }
}

pub(crate) fn is_compound(op: &syn::BinOp) -> bool {
    use syn::BinOp::*;
    matches!(
        op,
        AddAssign(_)
            | SubAssign(_)
            | MulAssign(_)
            | DivAssign(_)
            | RemAssign(_)
            | BitXorAssign(_)
            | BitAndAssign(_)
            | BitOrAssign(_)
            | ShlAssign(_)
            | ShrAssign(_)
    )
}
