//! `#[augur::staged]`: plain Rust loops and locals made visible to augur's
//! extraction; and `#[derive(augur::Staged)]`, structs as second-stage
//! types. Use it through the `augur` crate (`augur::staged`); what it
//! expands to is described in `augur::stage::staged`.
//!
//! The attribute goes on a function or an `impl` block. It rewrites, in
//! every function body (closures inside included):
//!
//! * `for pat in e { .. }` into `for pat in ::augur::__private::turns(e) { .. }`;
//! * `let mut x = e;`, and `let x = if ..` / `let x = match ..`, into the
//!   binding followed by a tracker of `x`'s value, and every later
//!   assignment to `x` (`x = ..`, `x += ..`, `x.f = ..`, `x[i] = ..`) into
//!   the assignment followed by an update of the tracker;
//! * any other `let` whose initialiser reads a local that may change later,
//!   or holds a call (and so may decide), into a `mark()` before it and a
//!   `Tracked::bound` after it, which tracks the bindings if a decision
//!   was taken in between (or always, for the first kind);
//! * a function's value into one passed to its `Frame`'s `finish`, which
//!   hashes it if the function decided (the `let` around the call sees
//!   it);
//! * every statement that may change a tracked `x` without assigning it
//!   (a method call on it, `x.push(1)`, `x.f.take()`, or `&mut x`) into
//!   the statement followed by an update (a `match`/`if` statement whose
//!   arms end in such a call, and the tail of a loop body or of a `()`
//!   closure body, are statements too), and every `if`/`while` condition
//!   that may into one that updates right after it is evaluated; a
//!   closure whose value changes a captured local updates it before
//!   returning;
//! * every closure body into one that holds a `Frame` guard first (the
//!   engine counts its calls: code the attribute does not cover may call
//!   it repeatedly);
//! * every macro invocation: the standard library's macros get their
//!   arguments rewritten; any other (but constants and the item's own
//!   simple `macro_rules!`) runs under a `MacroGuard` (see `macros.rs`);
//! * the body into a closure run between a `Frame`'s start and its
//!   `finish`, which ends it after the body's last call (no tail calls; an
//!   explicit call rather than a destructor, so a run the engine ends
//!   early unwinds through no cleanup of ours).

mod derive;
mod ends;
mod macros;
mod rewrite;
mod rewriter;
mod syntax;
mod tracking;

use proc_macro::TokenStream;
use syn::spanned::Spanned;

/// See the crate documentation, and `augur::staged`.
#[proc_macro_attribute]
pub fn staged(attr: TokenStream, item: TokenStream) -> TokenStream {
    if !attr.is_empty() {
        let attr = proc_macro2::TokenStream::from(attr);
        return syn::Error::new(attr.span(), "#[augur::staged] takes no arguments")
            .to_compile_error()
            .into();
    }
    match syn::parse::<syn::Item>(item) {
        Ok(item) => rewrite::item(item).into(),
        Err(e) => e.to_compile_error().into(),
    }
}

/// `#[derive(augur::Staged)]`: see `augur::Staged`.
#[proc_macro_derive(Staged)]
pub fn derive_staged(item: TokenStream) -> TokenStream {
    match syn::parse::<syn::DeriveInput>(item) {
        Ok(input) => derive::staged(input)
            .unwrap_or_else(|e| e.to_compile_error())
            .into(),
        Err(e) => e.to_compile_error().into(),
    }
}
