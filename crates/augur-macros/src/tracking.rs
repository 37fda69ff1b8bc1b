//! How the rewriting tracks plain locals: which `let`s get a tracker, and
//! the updates and poisonings that follow changes.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote_spanned, ToTokens};
use syn::spanned::Spanned;
use syn::visit_mut::VisitMut;
use syn::{parse_quote, parse_quote_spanned, Expr, Ident, Local, Pat, Stmt};

use crate::rewriter::Rewriter;
use crate::syntax::*;

/// The tracker variable of local `x`.
pub(crate) fn tracker(x: &Ident) -> Ident {
    format_ident!("__augur_tracked_{}", x, span = Span::mixed_site())
}

/// `Some(hash of x)` for `Hash` types, else `None`.
pub(crate) fn hash_of(x: &Ident) -> TokenStream {
    quote_spanned! {Span::mixed_site()=> {
        #[allow(unused_imports)]
        use ::augur::__private::{ViaHash as _, ViaNone as _, ViaSeen as _};
        (&&::augur::__private::Probe(&#x)).augur_hash()
    }}
}

/// How the rewriting tracks a local.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Track {
    /// Not tracked: its value follows from what tags see.
    No,
    /// Tracked, and never changed after its `let`.
    Fixed,
    /// Tracked, and may change (`let mut`, or `let x;` assigned later).
    Changes,
}

impl Rewriter {
    /// Updates of the trackers of the tracked locals among `xs`.
    pub(crate) fn updates(&self, xs: &[Ident]) -> Vec<Stmt> {
        xs.iter()
            .filter(|x| self.is_tracked(x))
            .map(|x| {
                let t = tracker(x);
                let hash = hash_of(x);
                parse_quote! { #t.update(#hash); }
            })
            .collect()
    }

    /// Poisonings of the trackers of the tracked locals among `xs`.
    pub(crate) fn poisons(&self, xs: &[Ident]) -> Vec<Stmt> {
        xs.iter()
            .filter(|x| self.is_tracked(x))
            .map(|x| {
                let t = tracker(x);
                parse_quote! { #t.poison(); }
            })
            .collect()
    }

    /// `cond` re-hashing, right after it is evaluated, the tracked locals
    /// it may change (`if flag.take().is_some()`): what the branch decides
    /// next sees their new values.
    pub(crate) fn condition(&self, cond: &mut Expr) {
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

    /// Rewrites a macro's arguments where they are expressions, or returns
    /// the guard an opaque macro runs under (see `macros.rs`).
    pub(crate) fn invocation(&mut self, mac: &mut syn::Macro) -> Option<TokenStream> {
        use crate::macros::{kind, rewrite_arguments, Kind};
        match kind(mac, &self.local) {
            Kind::Transparent => None,
            Kind::Expressions if rewrite_arguments(mac, |e| self.visit_expr_mut(e)) => None,
            Kind::Expressions | Kind::Opaque => {
                let span = mac.path.span();
                Some(quote_spanned!(span=> ::augur::__private::MacroGuard::enter()))
            }
        }
    }

    pub(crate) fn bind(&mut self, names: Vec<Ident>, track: Track) {
        let depth = self.loops;
        let scope = self.scopes.last_mut().expect("a scope");
        scope.extend(names.into_iter().map(|n| (n, track, depth)));
    }

    /// True if `x` is tracked and may change (an immutable tracked local
    /// keeps the value it was bound with: no update follows its uses).
    pub(crate) fn is_tracked(&self, x: &Ident) -> bool {
        self.binding(x).is_some_and(|(t, _)| t == Track::Changes)
    }

    /// How `x` is tracked, and the loop depth it was bound at.
    pub(crate) fn binding(&self, x: &Ident) -> Option<(Track, u32)> {
        for (i, scope) in self.scopes.iter().enumerate().rev() {
            if let Some((_, t, d)) = scope.iter().rev().find(|(n, _, _)| n == x) {
                let t = if i < self.barrier { Track::No } else { *t };
                return Some((t, *d));
            }
        }
        None
    }

    /// True if code after the current statement may read `x` again: a
    /// later statement of an enclosing block names it, or a loop (or a
    /// closure, which may be called again) lies between the statement and
    /// `x`'s binding. A local changed by a call and never read again needs
    /// no re-hash (whatever the call did to it cannot decide anything), and
    /// must not get one when the call consumed it (`m.extract()`).
    pub(crate) fn used_later(&self, x: &Ident) -> bool {
        let name = x.to_string();
        let looped = self.binding(x).is_some_and(|(_, d)| self.loops > d);
        looped || self.later.iter().any(|l| l.contains(&name))
    }

    /// The captured locals a closure body's tail expression changes that
    /// anything may read afterwards: a later statement around the closure,
    /// or the body's own statements before the tail (the closure may be
    /// called again). A local only the tail names may be consumed there
    /// (`|| m.extract()`): no re-hash may follow it.
    pub(crate) fn closure_tail_changes(&self, body: &Expr) -> Vec<Ident> {
        let (before, tail) = match body {
            Expr::Block(b) => match b.block.stmts.split_last() {
                Some((Stmt::Expr(tail, None), before)) => (before, tail),
                _ => return Vec::new(),
            },
            other => (&[][..], other),
        };
        let mut named = std::collections::HashSet::new();
        for st in before {
            idents(st.to_token_stream(), &mut named);
        }
        let mut changed = changed_through(tail);
        changed.retain(|x| {
            let name = x.to_string();
            named.contains(&name) || self.later.iter().any(|l| l.contains(&name))
        });
        changed
    }

    /// Visits `f` in a new scope that first binds the names of `pats`.
    pub(crate) fn scoped<'p>(
        &mut self,
        pats: impl IntoIterator<Item = &'p Pat>,
        f: impl FnOnce(&mut Self),
    ) {
        let mut names = Vec::new();
        for p in pats {
            bindings(p, &mut names);
        }
        let depth = self.loops;
        self.scopes
            .push(names.into_iter().map(|n| (n, Track::No, depth)).collect());
        f(self);
        self.scopes.pop();
    }

    /// The trackers of the locals a `let` binds: the statement that marks
    /// where its initialiser starts (if it needs one) and those that follow
    /// the `let`. A `let mut` local, one bound to an `if` or `match`, and one
    /// whose initialiser reads a local that may change later (`let p =
    /// o.take();`) are tracked from the start; any other one whose
    /// initialiser holds a call is tracked if a decision was taken in it
    /// (`let k = pick(x.gt(0).is_true());`, see `Tracked::bound`).
    pub(crate) fn track_local(&mut self, local: &Local) -> (Option<Stmt>, Vec<Stmt>) {
        let mut names = Vec::new();
        bindings(&local.pat, &mut names);
        let Some(init) = &local.init else {
            // `let x;`: whatever assigns it later decides its value.
            let out = (names.iter())
                .map(|x| {
                    let t = tracker(x);
                    parse_quote! { let #t = ::augur::__private::Tracked::unset(); }
                })
                .collect();
            self.bind(names, Track::Changes);
            return (None, out);
        };
        if matches!(&*init.expr, Expr::Closure(_)) {
            // A closure value: its calls are counted where they happen.
            self.bind(names, Track::No);
            return (None, Vec::new());
        }
        let decided = matches!(&*init.expr, Expr::If(_) | Expr::Match(_));
        let mut read = std::collections::HashSet::new();
        idents(init.expr.to_token_stream(), &mut read);
        if let Some((_, e)) = &init.diverge {
            idents(e.to_token_stream(), &mut read);
        }
        let reads_changing = (self.scopes.iter().flatten())
            .any(|(n, t, _)| *t == Track::Changes && read.contains(&n.to_string()));
        let calls = has_call(&init.expr) || init.diverge.as_ref().is_some_and(|(_, e)| has_call(e));
        let mark = format_ident!("__augur_mark", span = Span::mixed_site());
        let (before, mark_expr) = if calls {
            let st: Stmt = parse_quote! { let #mark = ::augur::__private::mark(); };
            (Some(st), quote::quote!(#mark))
        } else {
            (None, quote::quote!(::augur::__private::Mark::NONE))
        };
        let probe = matches!(local.pat, Pat::Type(_)) || type_evident(&init.expr);
        let mut bound = Vec::new();
        mutable_bindings(&local.pat, &mut bound);
        let mut after = Vec::new();
        for (x, mutable) in bound {
            let always = mutable || decided || reads_changing;
            if !always && !calls {
                self.bind(vec![x], Track::No);
                continue;
            }
            let t = tracker(&x);
            after.push(if mutable {
                // By its hash where its type is `Hash`; one of another type
                // as an immutable one until it changes, and from then on
                // the engine shares no code while it lives.
                let hash = hash_of(&x);
                let always = decided || reads_changing;
                // Spanned at the name: the location an error names.
                parse_quote_spanned! {x.span()=>
                    let #t = ::augur::__private::Tracked::changing(
                        #mark_expr,
                        #always,
                        ::augur::__private::varies(&#x),
                        #hash,
                    );
                }
            } else if decided {
                // By its hash where its type is `Hash`, else by what
                // determines it.
                // A `Dyn` or `()` is tracked only where its initialiser
                // decided (see `varies`).
                let hash = hash_of(&x);
                parse_quote! {
                    let #t = ::augur::__private::Tracked::bound(
                        #mark_expr,
                        ::augur::__private::varies(&#x),
                        #hash,
                    );
                }
            } else {
                // By its hash where its type is known here and `Hash`, else
                // by what determines it (the state, and the sides its own
                // code decided).
                let hash = if probe {
                    hash_of(&x)
                } else {
                    quote::quote!(::core::option::Option::None)
                };
                let always = if always {
                    quote::quote!(::augur::__private::varies(&#x))
                } else {
                    quote::quote!(false)
                };
                parse_quote! {
                    let #t = ::augur::__private::Tracked::bound(#mark_expr, #always, #hash);
                }
            });
            let track = if mutable {
                Track::Changes
            } else {
                Track::Fixed
            };
            self.bind(vec![x], track);
        }
        if after.is_empty() {
            return (None, after);
        }
        (before, after)
    }

    /// Holds the arguments that may come out of a decision while the call
    /// runs (`f(pick(x.gt(0).is_true()))`: what `f` does with its
    /// parameter after further decisions must not be shared between
    /// paths that passed different values). Returns true if any is held:
    /// the call then releases them when it returns.
    pub(crate) fn hold_arguments<'a>(&mut self, args: impl Iterator<Item = &'a mut Expr>) -> bool {
        let mut held = false;
        for a in args.filter(|a| !self.plain && may_decide(a)) {
            *a = held_argument(a);
            held = true;
        }
        self.held |= held;
        held
    }

    /// Holds the scrutinee of a `match`, `if let`, `while let` or `for`
    /// whose pattern `pat` binds names, if it may come out of a decision
    /// (`match pick(x.gt(0).is_true()) { k => .. }`): the names are bound
    /// from it as a `let`'s are from its initialiser. Of a field of a
    /// call's value (`f().x.y`), the call's value is held (`f()`): the
    /// field stays a place in it, so the arms may bind by reference and
    /// nothing moves out of the value.
    pub(crate) fn hold_scrutinee(&mut self, pat: &Pat, e: &mut Expr) {
        if self.plain || !binds(pat) {
            return;
        }
        let held = held_part(e);
        if let Some(v) = held.filter(|v| may_decide(v)) {
            held_scrutinee(v);
            self.held = true;
        }
    }

    /// `assign` followed by an update of `x`'s tracker.
    pub(crate) fn updated(x: &Ident, assign: &Expr) -> Expr {
        let t = tracker(x);
        let hash = hash_of(x);
        parse_quote! {{ #assign; #t.update(#hash); }}
    }
}
