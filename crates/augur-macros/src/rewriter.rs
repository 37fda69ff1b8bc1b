//! The rewriting of a body's statements: a `VisitMut` over the item that
//! keeps a stack of scopes telling, for each name, whether it is a tracked
//! local (its trackers: `tracking.rs`; where they end: `ends.rs`).

use proc_macro2::TokenStream;
use quote::ToTokens;
use syn::spanned::Spanned;
use syn::visit_mut::{self, VisitMut};
use syn::{parse_quote, parse_quote_spanned, Block, Expr, Ident, Item, Pat, Stmt};

use crate::ends::{ending, let_ident, Target};
use crate::rewrite::{closure_body, function, impl_block, region_of, returns_unit, staged_itself};
use crate::syntax::*;
use crate::tracking::Track;

/// Names in scope: `true` for a tracked local.
#[derive(Default)]
pub(crate) struct Rewriter {
    pub(crate) scopes: Vec<Vec<(Ident, Track, u32)>>,
    /// For each block being rewritten, the names its statements after the
    /// current one mention (see `used_later`).
    pub(crate) later: Vec<std::collections::HashSet<String>>,
    /// Loops and closures around the code being rewritten.
    pub(crate) loops: u32,
    /// Per block being rewritten: tracked locals a `let` changed (and may
    /// hold a `&mut` borrow of), re-hashed before the block's next
    /// statement that names them; until then their trackers are poisoned.
    pub(crate) deferred: Vec<Vec<Ident>>,
    /// The item's own `macro_rules!` macros that need no guard.
    pub(crate) local: std::collections::HashSet<String>,
    /// Set just before visiting a block whose value is `()` (a loop's
    /// body, a closure body evidently `()`): its tail expression is then a
    /// statement like any other, after which changed locals are re-hashed.
    pub(crate) unit_block: bool,
    /// The body of a `const fn`: values handed to calls are not held.
    pub(crate) plain: bool,
    /// A value was held in the statement being rewritten (see
    /// [`allow_unreachable`]).
    pub(crate) held: bool,
    /// Per block being rewritten: the trackers its `let`s made so far, as
    /// expressions that borrow them. The block ends them where it ends,
    /// and a `break` or `continue` that leaves it before it leaves.
    pub(crate) blocks: Vec<Vec<TokenStream>>,
    /// The loops and labelled blocks a `break` or `continue` in the code
    /// being rewritten may leave, innermost last (none across a closure).
    pub(crate) targets: Vec<Target>,
    /// Trackers renamed so far (see [`Rewriter::keep_shadowed`]).
    pub(crate) shadowed: u32,
    /// Scopes below this one are outside the `move` closure being
    /// rewritten: it changes its own copies of their locals.
    pub(crate) barrier: usize,
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
