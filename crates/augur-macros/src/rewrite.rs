//! The rewriting: a `VisitMut` over the item that keeps a stack of scopes
//! telling, for each name, whether it is a tracked local.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote_spanned, ToTokens};
use syn::spanned::Spanned;
use syn::visit_mut::{self, VisitMut};
use syn::{parse_quote, parse_quote_spanned, Block, Expr, Ident, Item, Local, Pat, Stmt};

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

fn impl_block(i: &mut syn::ItemImpl) {
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
fn function(attrs: &mut Vec<syn::Attribute>, sig: &syn::Signature, body: &mut Block) {
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
fn changing_params(sig: &syn::Signature) -> Vec<Ident> {
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
fn frame_ident() -> Ident {
    format_ident!("__augur_frame", span = Span::mixed_site())
}

/// A closure's body, entering its `Frame` first; the guard ends it when the
/// body returns, telling the engine whether the body evidently returns `()`
/// (see `augur::trace::frames`).
/// Wraps the value of every `return` of a closure body (not of the
/// closures, `async` blocks and items nested in it) in
/// `__private::value`, as its tail's is.
struct Returns<'a>(&'a Ident);

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

fn closure_body(region: &TokenStream, body: &Expr, updates: &[Stmt]) -> Expr {
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
fn returns_unit(e: &Expr) -> bool {
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
fn has_impl_trait(ty: &syn::Type) -> bool {
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
fn region(start: Span, end: Span, head: &TokenStream) -> TokenStream {
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
fn region_of(tokens: TokenStream, head: &TokenStream) -> TokenStream {
    match (leaf(tokens.clone(), false), leaf(tokens, true)) {
        (Some(start), Some(end)) => region(start, end, head),
        _ => region(Span::call_site(), Span::call_site(), head),
    }
}

/// The span of the first (or `last`) token that is not a group, searching
/// into groups.
fn leaf(tokens: TokenStream, last: bool) -> Option<Span> {
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
fn frame_closure(region: &TokenStream) -> Stmt {
    let frame = frame_ident();
    parse_quote! {
        let #frame = ::augur::__private::Frame::closure(#region).guard(false);
    }
}

/// True if an item carries `#[augur::staged]` itself.
fn staged_itself(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        let p = a.path();
        p.segments.last().is_some_and(|s| s.ident == "staged")
    })
}

/// Names in scope: `true` for a tracked local.
#[derive(Default)]
struct Rewriter {
    scopes: Vec<Vec<(Ident, Track, u32)>>,
    /// For each block being rewritten, the names its statements after the
    /// current one mention (see `used_later`).
    later: Vec<std::collections::HashSet<String>>,
    /// Loops and closures around the code being rewritten.
    loops: u32,
    /// Per block being rewritten: tracked locals a `let` changed (and may
    /// hold a `&mut` borrow of), re-hashed before the block's next
    /// statement that names them; until then their trackers are poisoned.
    deferred: Vec<Vec<Ident>>,
    /// The item's own `macro_rules!` macros that need no guard.
    local: std::collections::HashSet<String>,
    /// Set just before visiting a block whose value is `()` (a loop's
    /// body, a closure body evidently `()`): its tail expression is then a
    /// statement like any other, after which changed locals are re-hashed.
    unit_block: bool,
    /// The body of a `const fn`: values handed to calls are not held.
    plain: bool,
    /// A value was held in the statement being rewritten (see
    /// [`allow_unreachable`]).
    held: bool,
    /// Per block being rewritten: the trackers its `let`s made so far, as
    /// expressions that borrow them. The block ends them where it ends,
    /// and a `break` or `continue` that leaves it before it leaves.
    blocks: Vec<Vec<TokenStream>>,
    /// The loops and labelled blocks a `break` or `continue` in the code
    /// being rewritten may leave, innermost last (none across a closure).
    targets: Vec<Target>,
    /// Trackers renamed so far (see [`Rewriter::keep_shadowed`]).
    shadowed: u32,
    /// Scopes below this one are outside the `move` closure being
    /// rewritten: it changes its own copies of their locals.
    barrier: usize,
}

/// What a `break` or `continue` may leave.
struct Target {
    /// Its label, without the quote.
    label: Option<String>,
    /// A loop (else a labelled block, which only a labelled `break`
    /// leaves).
    is_loop: bool,
    /// How many blocks were open around it: those above are left.
    blocks: usize,
}

/// Allows `unreachable_code` on a statement where a value was held: a
/// call that diverges (`dsl::fail(e, Location::caller())`) makes the
/// `__private::call` around it unreachable, which the lint would report
/// on the user's line. Outer attributes stand on a `let` or on an
/// expression statement that is a call, a block-like expression or a
/// macro (on any other, they would attach to its first operand).
fn allow_unreachable(st: &mut Stmt) {
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
fn allow_diverging() -> syn::Attribute {
    parse_quote!(#[allow(unreachable_code, clippy::diverging_sub_expression)])
}

/// The outer attributes of an expression that can carry them as a
/// statement: a call, a block-like expression.
fn outer_attrs(e: &mut Expr) -> Option<&mut Vec<syn::Attribute>> {
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

/// The name a `let` binds, if it binds one name.
fn let_ident(st: &Stmt) -> Option<&Ident> {
    match st {
        Stmt::Local(Local {
            pat: Pat::Ident(p), ..
        }) => Some(&p.ident),
        _ => None,
    }
}

/// True if evaluating `e` runs no code of the user's: a literal, a path, a
/// closure (an operator may be a call: `x + 0` on `Dyn`s is an operation).
fn runs_nothing(e: &Expr) -> bool {
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
fn ending(stmts: &mut Vec<Stmt>, trackers: &[TokenStream]) {
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

/// The tracker variable of local `x`.
fn tracker(x: &Ident) -> Ident {
    format_ident!("__augur_tracked_{}", x, span = Span::mixed_site())
}

/// `Some(hash of x)` for `Hash` types, else `None`.
fn hash_of(x: &Ident) -> TokenStream {
    quote_spanned! {Span::mixed_site()=> {
        #[allow(unused_imports)]
        use ::augur::__private::{ViaHash as _, ViaNone as _, ViaSeen as _};
        (&&::augur::__private::Probe(&#x)).augur_hash()
    }}
}

/// How the rewriting tracks a local.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Track {
    /// Not tracked: its value follows from what tags see.
    No,
    /// Tracked, and never changed after its `let`.
    Fixed,
    /// Tracked, and may change (`let mut`, or `let x;` assigned later).
    Changes,
}

/// True if evaluating `e` may call code (and so take a decision): a call,
/// a method call or a macro outside any closure it holds.
fn has_call(e: &Expr) -> bool {
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
fn is_place(e: &Expr) -> bool {
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
fn may_decide(e: &Expr) -> bool {
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
fn holds_receiver(m: &syn::ExprMethodCall) -> bool {
    may_decide(&m.receiver) && !is_place(&m.receiver) && !evident_method(&m.method)
}

/// True if `p` binds a name (lower case: `None` and constants are
/// patterns of one identifier too).
fn binds(p: &Pat) -> bool {
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
fn held_argument(v: &Expr) -> Expr {
    let v = unparenthesized(v);
    parse_quote_spanned!(v.span()=> ::augur::__private::arg(::augur::__private::mark(), #v))
}

/// A call whose arguments were held, releasing them when it returns.
///
/// The tokens the rewriting adds around an expression carry its span: a
/// method called on it (`f(g(x)).m()`) is `#[track_caller]` in annotated
/// code, and its caller's location is where the expression before the dot
/// begins, which must be the user's line, not the attribute's.
fn releasing(e: &Expr) -> Expr {
    parse_quote_spanned!(e.span()=> ::augur::__private::call(::augur::__private::mark(), #e))
}

/// `e` without the parentheses around it.
fn unparenthesized(e: &Expr) -> &Expr {
    match e {
        Expr::Paren(p) if p.attrs.is_empty() => unparenthesized(&p.expr),
        e => e,
    }
}

/// `v` held while the `match` (`if let`, `while let` turn, `for` loop)
/// whose scrutinee it is runs: the guard is a temporary of the scrutinee,
/// dropped when the construct ends, however it ends. A place (`v[i]`,
/// `*r`) is matched through a reference to it.
fn held_scrutinee(v: &mut Expr) {
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
fn held_part(e: &mut Expr) -> Option<&mut Expr> {
    match e {
        Expr::Field(f) => called_value(&mut f.base),
        Expr::Paren(p) => held_part(&mut p.expr),
        Expr::Path(_) => None,
        e => Some(e),
    }
}

/// The call under the fields of `e`, if the fields are of a call's value.
fn called_value(e: &mut Expr) -> Option<&mut Expr> {
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
fn type_evident(e: &Expr) -> bool {
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
fn evident_method(name: &Ident) -> bool {
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
fn mutable_bindings(p: &Pat, out: &mut Vec<(Ident, bool)>) {
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
fn bindings(p: &Pat, out: &mut Vec<Ident>) {
    let mut all = Vec::new();
    mutable_bindings(p, &mut all);
    out.extend(all.into_iter().map(|(x, _)| x));
}

/// The local an assignment's left side writes (`x`, `x.f`, `x[i]`, `(x.f).g`,
/// `*x`: through a `&mut` the local holds, such as a parameter's).
fn assigned_local(e: &Expr) -> Option<&Ident> {
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

    /// Poisonings of the trackers of the tracked locals among `xs`.
    fn poisons(&self, xs: &[Ident]) -> Vec<Stmt> {
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

    /// Rewrites a macro's arguments where they are expressions, or returns
    /// the guard an opaque macro runs under (see `macros.rs`).
    fn invocation(&mut self, mac: &mut syn::Macro) -> Option<TokenStream> {
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

    fn bind(&mut self, names: Vec<Ident>, track: Track) {
        let depth = self.loops;
        let scope = self.scopes.last_mut().expect("a scope");
        scope.extend(names.into_iter().map(|n| (n, track, depth)));
    }

    /// True if `x` is tracked and may change (an immutable tracked local
    /// keeps the value it was bound with: no update follows its uses).
    fn is_tracked(&self, x: &Ident) -> bool {
        self.binding(x).is_some_and(|(t, _)| t == Track::Changes)
    }

    /// How `x` is tracked, and the loop depth it was bound at.
    fn binding(&self, x: &Ident) -> Option<(Track, u32)> {
        for (i, scope) in self.scopes.iter().enumerate().rev() {
            if let Some((_, t, d)) = scope.iter().rev().find(|(n, _, _)| n == x) {
                let t = if i < self.barrier { Track::No } else { *t };
                return Some((t, *d));
            }
        }
        None
    }

    /// Before `let`s that make `trackers`, keeps a tracker of the current
    /// block that one of them shadows reachable under another name (a
    /// borrow: closures may borrow it), so that the block still ends it.
    fn keep_shadowed(&mut self, trackers: &[Stmt], out: &mut Vec<Stmt>) {
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
    fn left_by(&self, label: Option<&syn::Lifetime>, is_break: bool) -> Vec<TokenStream> {
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
    fn targeting(&mut self, label: Option<&syn::Label>, is_loop: bool, f: impl FnOnce(&mut Self)) {
        self.targets.push(Target {
            label: label.map(|l| l.name.ident.to_string()),
            is_loop,
            blocks: self.blocks.len(),
        });
        f(self);
        self.targets.pop();
    }

    /// True if code after the current statement may read `x` again: a
    /// later statement of an enclosing block names it, or a loop (or a
    /// closure, which may be called again) lies between the statement and
    /// `x`'s binding. A local changed by a call and never read again needs
    /// no re-hash (whatever the call did to it cannot decide anything), and
    /// must not get one when the call consumed it (`m.extract()`).
    fn used_later(&self, x: &Ident) -> bool {
        let name = x.to_string();
        let looped = self.binding(x).is_some_and(|(_, d)| self.loops > d);
        looped || self.later.iter().any(|l| l.contains(&name))
    }

    /// The captured locals a closure body's tail expression changes that
    /// anything may read afterwards: a later statement around the closure,
    /// or the body's own statements before the tail (the closure may be
    /// called again). A local only the tail names may be consumed there
    /// (`|| m.extract()`): no re-hash may follow it.
    fn closure_tail_changes(&self, body: &Expr) -> Vec<Ident> {
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
    fn scoped<'p>(&mut self, pats: impl IntoIterator<Item = &'p Pat>, f: impl FnOnce(&mut Self)) {
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
    fn track_local(&mut self, local: &Local) -> (Option<Stmt>, Vec<Stmt>) {
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
    fn hold_arguments<'a>(&mut self, args: impl Iterator<Item = &'a mut Expr>) -> bool {
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
    fn hold_scrutinee(&mut self, pat: &Pat, e: &mut Expr) {
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
    fn updated(x: &Ident, assign: &Expr) -> Expr {
        let t = tracker(x);
        let hash = hash_of(x);
        parse_quote! {{ #assign; #t.update(#hash); }}
    }
}

impl VisitMut for Rewriter {
    fn visit_block_mut(&mut self, b: &mut Block) {
        let unit = std::mem::take(&mut self.unit_block);
        let last = b.stmts.len().saturating_sub(1);
        self.scopes.push(Vec::new());
        let mut out = Vec::with_capacity(b.stmts.len());
        // The names each statement's successors mention, last first.
        let mut suffix = vec![std::collections::HashSet::new()];
        for st in b.stmts.iter().rev() {
            let mut names = suffix.last().cloned().unwrap_or_default();
            match st {
                // After a `let`, its names are another binding.
                Stmt::Local(l) => {
                    let mut bound = Vec::new();
                    bindings(&l.pat, &mut bound);
                    for x in bound {
                        names.remove(&x.to_string());
                    }
                    if let Some(init) = &l.init {
                        idents(init.expr.to_token_stream(), &mut names);
                        if let Some((_, e)) = &init.diverge {
                            idents(e.to_token_stream(), &mut names);
                        }
                    }
                }
                st => idents(st.to_token_stream(), &mut names),
            }
            suffix.push(names);
        }
        suffix.pop();
        self.later.push(Default::default());
        self.deferred.push(Vec::new());
        self.blocks.push(Vec::new());
        let held_before = std::mem::take(&mut self.held);
        let mut any_held = false;
        for (i, mut s) in std::mem::take(&mut b.stmts).into_iter().enumerate() {
            *self.later.last_mut().expect("pushed above") = suffix.pop().unwrap_or_default();
            // A local a `let` above changed is re-hashed before the first
            // statement that names it: any borrow the `let` kept has ended.
            let mut names = std::collections::HashSet::new();
            idents(s.to_token_stream(), &mut names);
            let due: Vec<Ident> = {
                let d = self.deferred.last_mut().expect("pushed above");
                let (due, keep) = d.drain(..).partition(|x| names.contains(&x.to_string()));
                *d = keep;
                due
            };
            out.extend(self.updates(&due));
            // Locals the statement may change through methods or `&mut`
            // are re-hashed after it (a tail expression's block gives its
            // value: the statement around the block re-hashes them).
            let (tracker, changed) = match &mut s {
                Stmt::Local(l) => {
                    // What the `let` is tracked by is read from the user's
                    // code, before the rewriting adds calls to it.
                    let original = l.clone();
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
                    changed.retain(|x| !bound.contains(x) && self.used_later(x));
                    // The new binding may hold a `&mut` borrow of what the
                    // initialiser changed (`let m = it.memory_mut();`), so
                    // no re-hash can follow at once: poison the tracker
                    // (the engine shares no code while one is poisoned) and
                    // re-hash before the block next names the local.
                    let poisons = self.poisons(&changed);
                    let tracked: Vec<Ident> =
                        changed.into_iter().filter(|x| self.is_tracked(x)).collect();
                    self.deferred
                        .last_mut()
                        .expect("pushed above")
                        .extend(tracked);
                    let (mark, trackers) = self.track_local(&original);
                    out.extend(mark);
                    (trackers, poisons)
                }
                Stmt::Item(i) => {
                    self.visit_item_mut(i);
                    (Vec::new(), Vec::new())
                }
                Stmt::Macro(m) => match self.invocation(&mut m.mac) {
                    Some(guard) if m.semi_token.is_some() => {
                        out.push(parse_quote!(let __augur_macro = #guard;));
                        (
                            Vec::new(),
                            vec![parse_quote!(::core::mem::drop(__augur_macro);)],
                        )
                    }
                    Some(guard) => {
                        let mac = &m.mac;
                        s = Stmt::Expr(parse_quote!({ let __augur_macro = #guard; #mac }), None);
                        (Vec::new(), Vec::new())
                    }
                    None => (Vec::new(), Vec::new()),
                },
                // A block-like expression statement before the block's
                // end has the type `()`, as has a unit block's tail: both
                // are statements, whose changes are re-hashed after them.
                Stmt::Expr(e, semi) if semi.is_some() || i < last || unit => {
                    self.visit_expr_mut(e);
                    let mut changed = changed_through(e);
                    changed.retain(|x| self.used_later(x));
                    let updates = self.updates(&changed);
                    if !updates.is_empty() {
                        semi.get_or_insert_with(Default::default);
                    }
                    (Vec::new(), updates)
                }
                other => {
                    self.visit_stmt_mut(other);
                    (Vec::new(), Vec::new())
                }
            };
            if std::mem::take(&mut self.held) {
                allow_unreachable(&mut s);
                self.held = false;
                any_held = true;
            }
            out.push(s);
            self.keep_shadowed(&tracker, &mut out);
            let block = self.blocks.last_mut().expect("pushed above");
            block.extend(
                tracker
                    .iter()
                    .filter_map(let_ident)
                    .map(|t| quote::quote!(&#t)),
            );
            out.extend(tracker);
            out.extend(changed);
        }
        self.held = held_before || any_held;
        let trackers = self.blocks.pop().expect("pushed above");
        ending(&mut out, &trackers);
        b.stmts = out;
        self.deferred.pop();
        self.later.pop();
        self.scopes.pop();
    }

    fn visit_expr_mut(&mut self, e: &mut Expr) {
        match e {
            Expr::ForLoop(f) => {
                self.visit_expr_mut(&mut f.expr);
                self.hold_scrutinee(&f.pat, &mut f.expr);
                let pat = (*f.pat).clone();
                self.loops += 1;
                self.targeting(f.label.as_ref(), true, |r| {
                    r.scoped([&pat], |r| {
                        r.unit_block = true;
                        r.visit_block_mut(&mut f.body)
                    })
                });
                self.loops -= 1;
                let iterable = &f.expr;
                let span = iterable.span();
                *f.expr = parse_quote_spanned!(span=> ::augur::__private::turns(#iterable));
            }
            Expr::Closure(c) => {
                let pats: Vec<Pat> = c.inputs.iter().cloned().collect();
                let region = region_of(c.body.to_token_stream(), &quote::quote!(0, 0));
                self.loops += 1;
                let unit = returns_unit(&c.body);
                let mut updates = Vec::new();
                // No `break` leaves a closure; a `move` one changes its own
                // copies of the locals it names.
                let targets = std::mem::take(&mut self.targets);
                let barrier = self.barrier;
                if c.capture.is_some() {
                    self.barrier = self.scopes.len();
                }
                self.scoped(&pats, |r| {
                    r.unit_block = unit && matches!(&*c.body, Expr::Block(_));
                    r.visit_expr_mut(&mut c.body);
                    r.unit_block = false;
                    // A value's tail may change captured locals
                    // (`|i| v.push(i)`): re-hashed before the call ends.
                    // (A `move` closure owns what it captured: nothing
                    // outside sees it change.)
                    if !unit && c.capture.is_none() {
                        updates = r.updates(&r.closure_tail_changes(&c.body));
                    }
                });
                self.loops -= 1;
                self.targets = targets;
                self.barrier = barrier;
                if c.asyncness.is_none() {
                    *c.body = closure_body(&region, &c.body, &updates);
                }
            }
            Expr::Macro(m) => {
                if let Some(guard) = self.invocation(&mut m.mac) {
                    let mac = &m.mac;
                    *e = parse_quote!({ let __augur_macro = #guard; #mac });
                }
            }
            Expr::Match(m) => {
                self.visit_expr_mut(&mut m.expr);
                if let Some(arm) = m.arms.iter().find(|a| binds(&a.pat)) {
                    let pat = arm.pat.clone();
                    self.hold_scrutinee(&pat, &mut m.expr);
                }
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
                self.hold_scrutinee(&l.pat, &mut l.expr);
                let mut names = Vec::new();
                bindings(&l.pat, &mut names);
                self.bind(names, Track::No);
            }
            Expr::Call(c) => {
                visit_mut::visit_expr_call_mut(self, c);
                if self.hold_arguments(c.args.iter_mut()) {
                    *e = releasing(e);
                }
            }
            Expr::MethodCall(m) => {
                visit_mut::visit_expr_method_call_mut(self, m);
                let mut held = self.hold_arguments(m.args.iter_mut());
                if !self.plain && holds_receiver(m) {
                    *m.receiver = held_argument(&m.receiver);
                    held = true;
                    self.held = true;
                }
                if held {
                    *e = releasing(e);
                }
            }
            // A repeat's length is a constant: only `const fn`s.
            Expr::Repeat(r) => self.visit_expr_mut(&mut r.expr),
            Expr::Const(_) => {}
            Expr::If(i) if !matches!(&*i.cond, Expr::Let(_)) => {
                visit_mut::visit_expr_if_mut(self, i);
                self.condition(&mut i.cond);
            }
            Expr::While(w) if !matches!(&*w.cond, Expr::Let(_)) => {
                self.loops += 1;
                self.targeting(w.label.as_ref(), true, |r| {
                    r.visit_expr_mut(&mut w.cond);
                    r.unit_block = true;
                    r.visit_block_mut(&mut w.body);
                });
                self.loops -= 1;
                self.condition(&mut w.cond);
            }
            Expr::Loop(l) => {
                self.loops += 1;
                self.targeting(l.label.as_ref(), true, |r| {
                    r.unit_block = true;
                    r.visit_block_mut(&mut l.body);
                });
                self.loops -= 1;
            }
            Expr::Block(b) if b.label.is_some() => {
                let label = b.label.clone();
                self.targeting(label.as_ref(), false, |r| r.visit_block_mut(&mut b.block));
            }
            Expr::Async(a) => {
                let targets = std::mem::take(&mut self.targets);
                let barrier = self.barrier;
                if a.capture.is_some() {
                    self.barrier = self.scopes.len();
                }
                self.visit_block_mut(&mut a.block);
                self.targets = targets;
                self.barrier = barrier;
            }
            Expr::Break(b) => {
                if let Some(v) = &mut b.expr {
                    self.visit_expr_mut(v);
                }
                let left = self.left_by(b.label.as_ref(), true);
                if left.is_empty() {
                    return;
                }
                match &mut b.expr {
                    // The value is computed while the locals live.
                    Some(v) => **v = parse_quote!(::augur::__private::ended(#v, &[#(#left),*])),
                    None => *e = parse_quote!({ ::augur::__private::end(&[#(#left),*]); #e }),
                }
            }
            Expr::Continue(c) => {
                let left = self.left_by(c.label.as_ref(), false);
                if !left.is_empty() {
                    *e = parse_quote!({ ::augur::__private::end(&[#(#left),*]); #e });
                }
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
                self.loops += 1;
                self.scopes.push(Vec::new());
                self.targeting(w.label.as_ref(), true, |r| {
                    r.visit_expr_mut(&mut w.cond);
                    r.unit_block = true;
                    r.visit_block_mut(&mut w.body);
                });
                self.scopes.pop();
                self.loops -= 1;
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

    // Types and generic arguments hold no code that runs (an array's
    // length, a const argument: constants).
    fn visit_type_mut(&mut self, _: &mut syn::Type) {}
    fn visit_generic_argument_mut(&mut self, _: &mut syn::GenericArgument) {}

    // A function or `impl` block nested in a body lies inside the body's
    // region, so it is rewritten too (as its own activation), unless it
    // carries the attribute itself.
    fn visit_item_mut(&mut self, i: &mut Item) {
        match i {
            Item::Fn(f) if !staged_itself(&f.attrs) => function(&mut f.attrs, &f.sig, &mut f.block),
            Item::Impl(b) if !staged_itself(&b.attrs) => impl_block(b),
            _ => {}
        }
    }
}

/// Adds every identifier in `tokens` (macro arguments included) to `out`.
fn idents(tokens: TokenStream, out: &mut std::collections::HashSet<String>) {
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
