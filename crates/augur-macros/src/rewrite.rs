//! The rewriting: a `VisitMut` over the item that keeps a stack of scopes
//! telling, for each name, whether it is a tracked local.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote_spanned, ToTokens};
use syn::spanned::Spanned;
use syn::visit_mut::{self, VisitMut};
use syn::{parse_quote, parse_quote_spanned, Block, Expr, Ident, Item, Local, Pat, Stmt};

/// Rewrites a function or an `impl` block; anything else is an error.
pub fn item(mut item: Item) -> TokenStream {
    let mut r = Rewriter::default();
    match &mut item {
        Item::Fn(f) => r.function(&mut f.block),
        Item::Impl(i) => {
            for it in &mut i.items {
                if let syn::ImplItem::Fn(f) = it {
                    r.function(&mut f.block);
                }
            }
        }
        other => {
            return syn::Error::new(
                other.span(),
                "#[augur::staged] goes on a function or an impl block",
            )
            .to_compile_error();
        }
    }
    item.into_token_stream()
}

/// Names in scope: `true` for a tracked local.
#[derive(Default)]
struct Rewriter {
    scopes: Vec<Vec<(Ident, bool)>>,
    /// The statement being rewritten hands a closure to a call: it gets
    /// the call counter the closure's body enters.
    calls: bool,
}

/// The call counter of a statement's closures (`Calls`).
fn calls_counter() -> Ident {
    format_ident!("__augur_calls", span = Span::mixed_site())
}

/// `body` entering the statement's call counter first.
fn counted(body: &Expr) -> Expr {
    let c = calls_counter();
    parse_quote! {{
        #c.enter();
        #body
    }}
}

/// The tracker variable of local `x`.
fn tracker(x: &Ident) -> Ident {
    format_ident!("__augur_tracked_{}", x, span = Span::mixed_site())
}

/// `Some(hash of x)` for `Hash` types, else `None`.
fn hash_of(x: &Ident) -> TokenStream {
    quote_spanned! {Span::mixed_site()=> {
        #[allow(unused_imports)]
        use ::augur::__private::{ViaHash as _, ViaNone as _};
        (&::augur::__private::Probe(&#x)).augur_hash()
    }}
}

/// The identifiers a pattern binds.
fn bindings(p: &Pat, out: &mut Vec<Ident>) {
    struct Names<'a>(&'a mut Vec<Ident>);
    impl syn::visit::Visit<'_> for Names<'_> {
        fn visit_pat_ident(&mut self, p: &syn::PatIdent) {
            self.0.push(p.ident.clone());
            syn::visit::visit_pat_ident(self, p);
        }
    }
    syn::visit::Visit::visit_pat(&mut Names(out), p);
}

/// The local a `let` binds alone (`x`, `mut x`, `x: T`), and whether `mut`.
fn single_binding(p: &Pat) -> Option<(&Ident, bool)> {
    match p {
        Pat::Ident(i) if i.subpat.is_none() && i.by_ref.is_none() => {
            Some((&i.ident, i.mutability.is_some()))
        }
        Pat::Type(t) => single_binding(&t.pat),
        _ => None,
    }
}

/// The local an assignment's left side writes (`x`, `x.f`, `x[i]`, `(x.f).g`).
fn assigned_local(e: &Expr) -> Option<&Ident> {
    match e {
        Expr::Path(p) if p.qself.is_none() => p.path.get_ident(),
        Expr::Field(f) => assigned_local(&f.base),
        Expr::Index(i) => assigned_local(&i.expr),
        Expr::Paren(p) => assigned_local(&p.expr),
        _ => None,
    }
}

/// The locals an expression may change without assigning them: receivers
/// of method calls (`x.push(1)`, `x.f.take()`) and places borrowed `&mut`.
/// Which methods take `&mut self` is a question of types the macro cannot
/// ask, so every method call counts (re-hashing an unchanged value costs a
/// hash, never exactness).
fn changed_through(e: &Expr) -> Vec<Ident> {
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

impl Rewriter {
    /// Updates of the trackers of the tracked locals among `xs`.
    fn updates(&self, xs: &[Ident]) -> Vec<Stmt> {
        xs.iter()
            .filter(|x| self.is_tracked(x))
            .map(|x| {
                let t = tracker(x);
                let hash = hash_of(x);
                parse_quote! { #t.update(#hash); }
            })
            .collect()
    }

    /// `cond` re-hashing, right after it is evaluated, the tracked locals
    /// it may change (`if flag.take().is_some()`): what the branch decides
    /// next sees their new values.
    fn condition(&self, cond: &mut Expr) {
        let updates = self.updates(&changed_through(cond));
        if updates.is_empty() {
            return;
        }
        let c = format_ident!("__augur_cond", span = Span::mixed_site());
        *cond = parse_quote! {{
            let #c = #cond;
            #(#updates)*
            #c
        }};
    }

    /// Makes the closures among `args` enter the statement's call counter.
    fn count_calls<'a>(&mut self, args: impl Iterator<Item = &'a mut Expr>) {
        for a in args {
            if let Expr::Closure(c) = a {
                *c.body = counted(&c.body);
                self.calls = true;
            }
        }
    }

    fn function(&mut self, body: &mut Block) {
        self.visit_block_mut(body);
        let frame: Stmt = parse_quote! {
            let __augur_frame = ::augur::__private::Frame;
        };
        body.stmts.insert(0, frame);
    }

    fn bind(&mut self, names: Vec<Ident>, tracked: bool) {
        let scope = self.scopes.last_mut().expect("a scope");
        scope.extend(names.into_iter().map(|n| (n, tracked)));
    }

    fn is_tracked(&self, x: &Ident) -> bool {
        for scope in self.scopes.iter().rev() {
            if let Some((_, t)) = scope.iter().rev().find(|(n, _)| n == x) {
                return *t;
            }
        }
        false
    }

    /// Visits `f` in a new scope that first binds the names of `pats`.
    fn scoped<'p>(&mut self, pats: impl IntoIterator<Item = &'p Pat>, f: impl FnOnce(&mut Self)) {
        let mut names = Vec::new();
        for p in pats {
            bindings(p, &mut names);
        }
        self.scopes
            .push(names.into_iter().map(|n| (n, false)).collect());
        f(self);
        self.scopes.pop();
    }

    /// The tracker of a `let`, if it gets one.
    fn track_local(&mut self, local: &Local) -> Option<Stmt> {
        let mut names = Vec::new();
        bindings(&local.pat, &mut names);
        let init = local.init.as_ref().filter(|i| i.diverge.is_none());
        let single = single_binding(&local.pat).filter(|_| init.is_some());
        let Some((x, mutable)) = single else {
            self.bind(names, false);
            return None;
        };
        let decided = matches!(init.map(|i| &*i.expr), Some(Expr::If(_) | Expr::Match(_)));
        if !(mutable || decided) {
            self.bind(names, false);
            return None;
        }
        let x = x.clone();
        let t = tracker(&x);
        let hash = hash_of(&x);
        self.bind(vec![x], true);
        Some(parse_quote! {
            let #t = ::augur::__private::Tracked::new(#hash);
        })
    }

    /// `assign` followed by an update of `x`'s tracker.
    fn updated(x: &Ident, assign: &Expr) -> Expr {
        let t = tracker(x);
        let hash = hash_of(x);
        parse_quote! {{ #assign; #t.update(#hash); }}
    }
}

impl VisitMut for Rewriter {
    fn visit_block_mut(&mut self, b: &mut Block) {
        self.scopes.push(Vec::new());
        let mut out = Vec::with_capacity(b.stmts.len());
        for mut s in std::mem::take(&mut b.stmts) {
            let outer_calls = std::mem::replace(&mut self.calls, false);
            // Locals the statement may change through methods or `&mut`
            // are re-hashed after it (a tail expression's block gives its
            // value: the statement around the block re-hashes them).
            let (tracker, changed) = match &mut s {
                Stmt::Local(l) => {
                    // The initialiser sees the names before this binding.
                    let mut changed = Vec::new();
                    if let Some(init) = &mut l.init {
                        self.visit_expr_mut(&mut init.expr);
                        changed = changed_through(&init.expr);
                        if let Some((_, e)) = &mut init.diverge {
                            self.visit_expr_mut(e);
                        }
                    }
                    // A local this `let` shadows is out of reach after it.
                    let mut bound = Vec::new();
                    bindings(&l.pat, &mut bound);
                    changed.retain(|x| !bound.contains(x));
                    let updates = self.updates(&changed);
                    (self.track_local(l), updates)
                }
                // Items are rewritten only if they carry the attribute.
                Stmt::Item(_) => (None, Vec::new()),
                Stmt::Expr(e, Some(_)) => {
                    self.visit_expr_mut(e);
                    (None, self.updates(&changed_through(e)))
                }
                other => {
                    self.visit_stmt_mut(other);
                    (None, Vec::new())
                }
            };
            if std::mem::replace(&mut self.calls, outer_calls) {
                let c = calls_counter();
                out.push(parse_quote! {
                    let #c = &::augur::__private::Calls::new();
                });
            }
            out.push(s);
            out.extend(tracker);
            out.extend(changed);
        }
        b.stmts = out;
        self.scopes.pop();
    }

    fn visit_expr_mut(&mut self, e: &mut Expr) {
        match e {
            Expr::ForLoop(f) => {
                self.visit_expr_mut(&mut f.expr);
                let pat = (*f.pat).clone();
                self.scoped([&pat], |r| r.visit_block_mut(&mut f.body));
                let iterable = &f.expr;
                let span = iterable.span();
                *f.expr = parse_quote_spanned!(span=> ::augur::__private::turns(#iterable));
            }
            Expr::Closure(c) => {
                let pats: Vec<Pat> = c.inputs.iter().cloned().collect();
                self.scoped(&pats, |r| r.visit_expr_mut(&mut c.body));
            }
            // A closure handed to a call is called by code that may not be
            // annotated (an iterator adapter): each call counts itself.
            Expr::MethodCall(m) => {
                visit_mut::visit_expr_method_call_mut(self, m);
                self.count_calls(m.args.iter_mut());
            }
            Expr::Call(c) => {
                visit_mut::visit_expr_call_mut(self, c);
                self.count_calls(c.args.iter_mut());
            }
            Expr::Match(m) => {
                self.visit_expr_mut(&mut m.expr);
                for arm in &mut m.arms {
                    let pat = arm.pat.clone();
                    self.scoped([&pat], |r| {
                        if let Some((_, g)) = &mut arm.guard {
                            r.visit_expr_mut(g);
                        }
                        r.visit_expr_mut(&mut arm.body);
                    });
                }
            }
            Expr::Let(l) => {
                // `if let` / `while let`: the bindings scope the body, which
                // a tracked name of the same spelling is then not.
                self.visit_expr_mut(&mut l.expr);
                let mut names = Vec::new();
                bindings(&l.pat, &mut names);
                self.bind(names, false);
            }
            Expr::If(i) if !matches!(&*i.cond, Expr::Let(_)) => {
                visit_mut::visit_expr_if_mut(self, i);
                self.condition(&mut i.cond);
            }
            Expr::While(w) if !matches!(&*w.cond, Expr::Let(_)) => {
                visit_mut::visit_expr_while_mut(self, w);
                self.condition(&mut w.cond);
            }
            Expr::If(i) if matches!(&*i.cond, Expr::Let(_)) => {
                self.scopes.push(Vec::new());
                self.visit_expr_mut(&mut i.cond);
                self.visit_block_mut(&mut i.then_branch);
                self.scopes.pop();
                if let Some((_, els)) = &mut i.else_branch {
                    self.visit_expr_mut(els);
                }
            }
            Expr::While(w) if matches!(&*w.cond, Expr::Let(_)) => {
                self.scopes.push(Vec::new());
                self.visit_expr_mut(&mut w.cond);
                self.visit_block_mut(&mut w.body);
                self.scopes.pop();
            }
            Expr::Assign(a) => {
                visit_mut::visit_expr_assign_mut(self, a);
                if let Some(x) = assigned_local(&a.left).filter(|x| self.is_tracked(x)) {
                    let x = x.clone();
                    *e = Self::updated(&x, e);
                }
            }
            Expr::Binary(b) if is_compound(&b.op) => {
                visit_mut::visit_expr_binary_mut(self, b);
                if let Some(x) = assigned_local(&b.left).filter(|x| self.is_tracked(x)) {
                    let x = x.clone();
                    *e = Self::updated(&x, e);
                }
            }
            _ => visit_mut::visit_expr_mut(self, e),
        }
    }

    // Nested items are rewritten only if they carry the attribute.
    fn visit_item_mut(&mut self, _: &mut Item) {}
}

fn is_compound(op: &syn::BinOp) -> bool {
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
