//! Where a tracker ends: a tracker has no destructor (see the runtime's
//! `Tracked`), so the rewriting ends it where its block ends, and where a
//! `break` or `continue` leaves the block.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, ToTokens};
use syn::{parse_quote, Expr, Ident, Local, Pat, Stmt};

use crate::rewriter::Rewriter;
use crate::syntax::{allow_diverging, outer_attrs};

/// What a `break` or `continue` may leave.
pub(crate) struct Target {
    /// Its label, without the quote.
    pub(crate) label: Option<String>,
    /// A loop (else a labelled block, which only a labelled `break`
    /// leaves).
    pub(crate) is_loop: bool,
    /// How many blocks were open around it: those above are left.
    pub(crate) blocks: usize,
}

/// The name a `let` binds, if it binds one name.
pub(crate) fn let_ident(st: &Stmt) -> Option<&Ident> {
    match st {
        Stmt::Local(Local {
            pat: Pat::Ident(p), ..
        }) => Some(&p.ident),
        _ => None,
    }
}

/// True if evaluating `e` runs no code of the user's: a literal, a path, a
/// closure (an operator may be a call: `x + 0` on `Dyn`s is an operation).
pub(crate) fn runs_nothing(e: &Expr) -> bool {
    match e {
        Expr::Lit(_) | Expr::Path(_) | Expr::Closure(_) => true,
        Expr::Paren(p) => runs_nothing(&p.expr),
        Expr::Reference(r) => runs_nothing(&r.expr),
        _ => false,
    }
}

/// Ends `trackers` (the block's own, rewritten into `stmts`) where the
/// block ends: after its tail's value is computed where computing it may
/// run code (an operator may: see [`runs_nothing`]), else before it; after its last statement when it has no
/// tail (unreachable after one that diverges, which the `allow` keeps the
/// lint from reporting on the user's line).
pub(crate) fn ending(stmts: &mut Vec<Stmt>, trackers: &[TokenStream]) {
    if trackers.is_empty() {
        return;
    }
    let end: Stmt = parse_quote! {
        #[allow(unreachable_code)]
        ::augur::__private::end(&[#(#trackers),*]);
    };
    let tail = match stmts.pop() {
        Some(Stmt::Expr(e, None)) => e,
        Some(Stmt::Macro(m)) if m.semi_token.is_none() => Expr::Macro(syn::ExprMacro {
            attrs: m.attrs,
            mac: m.mac,
        }),
        other => {
            stmts.extend(other);
            stmts.push(end);
            return;
        }
    };
    if runs_nothing(&tail) {
        stmts.push(end);
        stmts.push(Stmt::Expr(tail, None));
        return;
    }
    // The tail becomes an argument, where attributes cannot stand: the
    // `allow` a held value gave it stands on the expression around it.
    let mut tail = tail;
    if let Some(attrs) = outer_attrs(&mut tail) {
        let allow = allow_diverging().to_token_stream().to_string();
        attrs.retain(|a| a.to_token_stream().to_string() != allow);
    }
    stmts.push(Stmt::Expr(
        parse_quote! {
            #[allow(unreachable_code, clippy::diverging_sub_expression)]
            ::augur::__private::ended(#tail, &[#(#trackers),*])
        },
        None,
    ));
}

impl Rewriter {
    /// Before `let`s that make `trackers`, keeps a tracker of the current
    /// block that one of them shadows reachable under another name (a
    /// borrow: closures may borrow it), so that the block still ends it.
    pub(crate) fn keep_shadowed(&mut self, trackers: &[Stmt], out: &mut Vec<Stmt>) {
        for st in trackers {
            let Some(t) = let_ident(st) else { continue };
            let current = quote::quote!(&#t).to_string();
            let block = self.blocks.last_mut().expect("a block");
            if let Some(kept) = block.iter_mut().find(|k| k.to_string() == current) {
                self.shadowed += 1;
                let alias = format_ident!(
                    "__augur_shadowed_{}",
                    self.shadowed,
                    span = Span::mixed_site()
                );
                out.push(parse_quote!(let #alias = &#t;));
                *kept = quote::quote!(#alias);
            }
        }
    }

    /// The trackers a `break` or `continue` (to `label`) leaves the
    /// blocks of: those opened inside its target.
    pub(crate) fn left_by(
        &self,
        label: Option<&syn::Lifetime>,
        is_break: bool,
    ) -> Vec<TokenStream> {
        let name = label.map(|l| l.ident.to_string());
        let target = self.targets.iter().rev().find(|t| match &name {
            Some(n) => t.label.as_ref() == Some(n),
            None => t.is_loop,
        });
        let Some(t) = target.filter(|t| is_break || t.is_loop) else {
            return Vec::new();
        };
        self.blocks[t.blocks..]
            .iter()
            .flatten()
            .rev()
            .cloned()
            .collect()
    }

    /// Visits `f` with `target` as what a `break` or `continue` may leave.
    pub(crate) fn targeting(
        &mut self,
        label: Option<&syn::Label>,
        is_loop: bool,
        f: impl FnOnce(&mut Self),
    ) {
        self.targets.push(Target {
            label: label.map(|l| l.name.ident.to_string()),
            is_loop,
            blocks: self.blocks.len(),
        });
        f(self);
        self.targets.pop();
    }
}
