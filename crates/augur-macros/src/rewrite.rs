//! What the attribute makes of a function or closure body: an activation
//! (`Frame`) around it, its parameters tracked, its region; the body's
//! statements are rewritten by the `Rewriter` (`rewriter.rs`).

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote_spanned, ToTokens};
use syn::spanned::Spanned;
use syn::visit_mut::{self, VisitMut};
use syn::{parse_quote, parse_quote_spanned, Block, Expr, Ident, Item, Pat, Stmt};

use crate::rewriter::Rewriter;
use crate::syntax::{allow_diverging, is_compound, outer_attrs};
use crate::tracking::{hash_of, tracker, Track};

/// Rewrites a function or an `impl` block; anything else is an error.
pub fn item(mut item: Item) -> TokenStream {
    match &mut item {
        Item::Fn(f) => function(&mut f.attrs, &f.sig, &mut f.block),
        Item::Impl(i) => impl_block(i),
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

pub(crate) fn impl_block(i: &mut syn::ItemImpl) {
    for it in &mut i.items {
        if let syn::ImplItem::Fn(f) = it {
            function(&mut f.attrs, &f.sig, &mut f.block);
        }
    }
}

/// Rewrites one function: its body (see [`Rewriter`]), then makes it an
/// activation the engine knows (`Frame`, see `augur::trace::frames`).
///
/// The engine must know the line that called the function, to tell
/// whether the caller is covered; so the function becomes
/// `#[track_caller]`, and its statements move into a closure called at
/// once, so that what they call reports their own lines, not the caller's.
/// A function that is `#[track_caller]` already keeps its statements (its
/// author wants its caller's lines reported); one that cannot be (`const`,
/// `async`, another ABI, an `impl Trait` return type, `main`) registers as
/// a closure does.
pub(crate) fn function(attrs: &mut Vec<syn::Attribute>, sig: &syn::Signature, body: &mut Block) {
    // From the user's tokens, before the rewrite adds tokens of its own.
    // Where the attribute stands: a function called through a `fn` pointer
    // gets its own definition as its caller, and for code the attribute
    // wrote that is the attribute (see `Region::function`).
    let head = quote::quote!(line!(), column!());
    let region = region_of(body.to_token_stream(), &head);
    // A `const fn` may call only `const fn`s.
    let plain = sig.constness.is_some();
    let params = if plain {
        Vec::new()
    } else {
        changing_params(sig)
    };
    Rewriter {
        local: crate::macros::local_macros(body),
        plain,
        scopes: vec![params
            .iter()
            .map(|x| (x.clone(), Track::Changes, 0))
            .collect()],
        ..Rewriter::default()
    }
    .visit_block_mut(body);
    if plain {
        return;
    }
    let trackers = params.iter().map(|x| {
        let (t, hash) = (tracker(x), hash_of(x));
        let st: Stmt = parse_quote_spanned! {x.span()=>
            let #t = ::augur::__private::Tracked::param(::augur::__private::varies(&#x), #hash);
        };
        st
    });
    body.stmts.splice(0..0, trackers);
    let tracked = attrs.iter().any(|a| a.path().is_ident("track_caller"));
    let plain_abi = sig
        .abi
        .as_ref()
        .is_none_or(|a| a.name.as_ref().is_none_or(|n| n.value() == "Rust"));
    // A closure cannot name an `impl Trait` return type, and without it a
    // closure the body returns loses the signature the type gives it.
    let opaque = matches!(&sig.output, syn::ReturnType::Type(_, ty) if has_impl_trait(ty));
    // `main` cannot be `#[track_caller]`; nothing staged calls it.
    let main = sig.ident == "main";
    if sig.asyncness.is_some() || !plain_abi || opaque || main {
        let frame = frame_closure(&region);
        body.stmts.insert(0, frame);
        return;
    }
    let frame = frame_ident();
    let enter = quote::quote! {
        ::augur::__private::Frame::enter(#region, ::core::panic::Location::caller())
    };
    let unit = matches!(sig.output, syn::ReturnType::Default);
    if tracked {
        body.stmts
            .insert(0, parse_quote!(let #frame = #enter.guard(#unit);));
        return;
    }
    attrs.push(parse_quote!(#[track_caller]));
    let stmts = std::mem::take(&mut body.stmts);
    let ret = match &sig.output {
        syn::ReturnType::Type(_, ty) => quote::quote!(-> #ty),
        syn::ReturnType::Default => TokenStream::new(),
    };
    // `move` and `FnOnce` (through `body`) make the closure own the
    // parameters as the function did: it may move out of them and return
    // borrows through them.
    // `finish` ends the frame after the body's last call, so that call is
    // not in tail position (it would reuse the frame, and give its
    // operations the caller's tags); an explicit call rather than a
    // guard's destructor, so that the unwinding that ends a run finds no
    // cleanup here. The body is a closure, so every `return` and `?` in it
    // comes back through `finish`.
    // `finish` hashes the value (where its type is one it knows) only if
    // the function decided or was counted: the `let` around the call sees
    // what the function chose (`let k = choose(x);`, see `Tracked::bound`).
    if unit {
        *body = parse_quote! {{
            let #frame = #enter;
            #frame.finish_unit(::augur::__private::body(move || #ret { #(#stmts)* }))
        }};
        return;
    }
    // The signature gives the value's type, so it can be probed for
    // `Hash` (see `hash_of`).
    let v = format_ident!("__augur_value", span = Span::mixed_site());
    let probe = hash_of(&v);
    *body = parse_quote! {{
        let #frame = #enter;
        #frame.finish(
            ::augur::__private::body(move || #ret { #(#stmts)* }),
            |#v| #probe,
        )
    }};
}

/// The parameters a body may change in place, tracked as `let mut`
/// locals of `Hash` types are from its start (see `Tracked::param`):
/// `&mut self` and `mut self`, and parameters bound by name to a `&mut`
/// reference or `mut` (`st: &mut State`, `mut n: u32`). Changed through
/// them, plain state would otherwise be out of the tags until the
/// caller's tracker sees it after the call returns (`self.phase += 1` on
/// one side of a decision, read after the join).
pub(crate) fn changing_params(sig: &syn::Signature) -> Vec<Ident> {
    let param = |a: &syn::FnArg| match a {
        syn::FnArg::Receiver(r)
            if r.mutability.is_some()
                || matches!(&*r.ty, syn::Type::Reference(t) if t.mutability.is_some()) =>
        {
            Some(Ident::new("self", r.self_token.span))
        }
        syn::FnArg::Typed(t) => match (&*t.pat, &*t.ty) {
            (Pat::Ident(p), _) if p.by_ref.is_some() || p.subpat.is_some() => None,
            (Pat::Ident(p), _) if p.mutability.is_some() => Some(p.ident.clone()),
            (Pat::Ident(p), syn::Type::Reference(r)) if r.mutability.is_some() => {
                Some(p.ident.clone())
            }
            _ => None,
        },
        syn::FnArg::Receiver(_) => None,
    };
    sig.inputs.iter().filter_map(param).collect()
}

/// The name of a body's `Frame`.
pub(crate) fn frame_ident() -> Ident {
    format_ident!("__augur_frame", span = Span::mixed_site())
}

/// A closure's body, entering its `Frame` first; the guard ends it when the
/// body returns, telling the engine whether the body evidently returns `()`
/// (see `augur::trace::frames`).
/// Wraps the value of every `return` of a closure body (not of the
/// closures, `async` blocks and items nested in it) in
/// `__private::value`, as its tail's is.
pub(crate) struct Returns<'a>(&'a Ident);

impl VisitMut for Returns<'_> {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        match e {
            Expr::Closure(_) | Expr::Async(_) => {}
            Expr::Return(r) => {
                if let Some(v) = &mut r.expr {
                    self.visit_expr_mut(v);
                    let frame = self.0;
                    **v = parse_quote!(::augur::__private::value(&mut #frame, #v));
                }
            }
            _ => visit_mut::visit_expr_mut(self, e),
        }
    }

    fn visit_item_mut(&mut self, _: &mut Item) {}
}

pub(crate) fn closure_body(region: &TokenStream, body: &Expr, updates: &[Stmt]) -> Expr {
    let frame = frame_ident();
    let unit = returns_unit(body);
    let enter = quote::quote!(::augur::__private::Frame::closure(#region).guard(#unit));
    if unit {
        return parse_quote! {{
            let #frame = #enter;
            #body
        }};
    }
    // The value goes through `value`, which tells the guard whether its
    // type carries anything to decide on; so does an early `return`'s.
    let mut body = body.clone();
    Returns(&frame).visit_expr_mut(&mut body);
    let (stmts, mut tail) = match &body {
        Expr::Block(b) if b.attrs.is_empty() && b.label.is_none() => {
            let mut stmts = b.block.stmts.clone();
            match stmts.pop() {
                Some(Stmt::Expr(tail, None)) => (stmts, tail),
                _ => unreachable!("a block with no value returns ()"),
            }
        }
        other => (Vec::new(), other.clone()),
    };
    // The tail becomes an argument, where attributes cannot stand: the
    // `allow` a held value gave it stands on the statement around it.
    if let Some(attrs) = outer_attrs(&mut tail) {
        let allow = allow_diverging().to_token_stream().to_string();
        attrs.retain(|a| a.to_token_stream().to_string() != allow);
    }
    if updates.is_empty() {
        return parse_quote! {{
            let mut #frame = #enter;
            #(#stmts)*
            #[allow(unreachable_code)]
            ::augur::__private::value(&mut #frame, #tail)
        }};
    }
    let value = format_ident!("__augur_value", span = Span::mixed_site());
    parse_quote! {{
        let mut #frame = #enter;
        #(#stmts)*
        #[allow(unreachable_code)]
        let #value = #tail;
        #(#updates)*
        ::augur::__private::value(&mut #frame, #value)
    }}
}

/// True if `e` evidently has the type `()` (or diverges): a block with no
/// value, an `if` or `match` whose branches have none, a loop other than
/// `loop`, an assignment. Anything else may carry a value, which the code
/// that called the closure may decide on.
pub(crate) fn returns_unit(e: &Expr) -> bool {
    fn block(b: &Block) -> bool {
        match b.stmts.last() {
            Some(Stmt::Expr(tail, None)) => returns_unit(tail),
            _ => true,
        }
    }
    match e {
        Expr::Block(b) => block(&b.block),
        Expr::Unsafe(b) => block(&b.block),
        Expr::If(i) => {
            block(&i.then_branch) && i.else_branch.as_ref().is_none_or(|(_, e)| returns_unit(e))
        }
        Expr::Match(m) => m.arms.iter().all(|a| returns_unit(&a.body)),
        Expr::While(_) | Expr::ForLoop(_) | Expr::Assign(_) => true,
        Expr::Binary(b) => is_compound(&b.op),
        Expr::Tuple(t) => t.elems.is_empty(),
        Expr::Paren(p) => returns_unit(&p.expr),
        Expr::Return(_) | Expr::Break(_) | Expr::Continue(_) => true,
        _ => false,
    }
}

/// True if `ty` mentions `impl Trait` (a closure cannot name it).
pub(crate) fn has_impl_trait(ty: &syn::Type) -> bool {
    struct Finder(bool);
    impl syn::visit::Visit<'_> for Finder {
        fn visit_type_impl_trait(&mut self, _: &syn::TypeImplTrait) {
            self.0 = true;
        }
    }
    let mut f = Finder(false);
    syn::visit::Visit::visit_type(&mut f, ty);
    f.0
}

/// A `&'static Region` of the source from `start` to `end`: `line!()` and
/// `column!()` spanned there give the user's lines.
pub(crate) fn region(start: Span, end: Span, head: &TokenStream) -> TokenStream {
    let (l0, c0) = (
        quote_spanned!(start=> line!()),
        quote_spanned!(start=> column!()),
    );
    let (l1, c1) = (
        quote_spanned!(end=> line!()),
        quote_spanned!(end=> column!()),
    );
    let file = quote_spanned!(start=> file!());
    // `line!()` and `column!()` expand to literals spanned at user tokens,
    // which lints then read as the user's literals.
    quote::quote! {{
        #[allow(clippy::all)]
        static __AUGUR_REGION: ::augur::__private::Region =
            ::augur::__private::Region::new(#file, #l0, #c0, #l1, #c1).function(#head);
        &__AUGUR_REGION
    }}
}

/// The region of some code: its first token to its last, both leaves (not
/// groups: a group printed back from syntax, as an outer attribute prints
/// the items it holds, carries only one span for both delimiters). Code
/// before the first leaf or after the last performs nothing.
pub(crate) fn region_of(tokens: TokenStream, head: &TokenStream) -> TokenStream {
    match (leaf(tokens.clone(), false), leaf(tokens, true)) {
        (Some(start), Some(end)) => region(start, end, head),
        _ => region(Span::call_site(), Span::call_site(), head),
    }
}

/// The span of the first (or `last`) token that is not a group, searching
/// into groups.
pub(crate) fn leaf(tokens: TokenStream, last: bool) -> Option<Span> {
    let mut all: Vec<proc_macro2::TokenTree> = tokens.into_iter().collect();
    if last {
        all.reverse();
    }
    all.into_iter().find_map(|t| match t {
        proc_macro2::TokenTree::Group(g) => leaf(g.stream(), last),
        t => Some(t.span()),
    })
}

/// The `Frame` of a function whose caller the engine cannot learn and
/// whose value the attribute cannot take (`async`, `main`): a guard.
pub(crate) fn frame_closure(region: &TokenStream) -> Stmt {
    let frame = frame_ident();
    parse_quote! {
        let #frame = ::augur::__private::Frame::closure(#region).guard(false);
    }
}

/// True if an item carries `#[augur::staged]` itself.
pub(crate) fn staged_itself(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        let p = a.path();
        p.segments.last().is_some_and(|s| s.ident == "staged")
    })
}
