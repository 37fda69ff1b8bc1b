//! Macro invocations inside a covered body.
//!
//! The attribute sees a macro's arguments as tokens, not its expansion, so
//! it cannot rewrite what the macro expands to: a plain loop there keeps no
//! turn counter, a closure there counts no calls. Three kinds of macro are
//! told apart:
//!
//! * the standard library's macros whose arguments are expressions
//!   (`assert!`, `format!`, `vec!`, ...): their arguments are rewritten like
//!   any other code, and they expand to nothing that keeps plain state;
//! * macros that cannot hold code that keeps state (`line!`, `stringify!`),
//!   and `macro_rules!` macros defined in the item whose rules hold no
//!   loop, closure, `let`, item or other macro, called with arguments that
//!   hold none either (a local shorthand for `a + b`): left as they are;
//! * any other macro is *opaque*: the attribute wraps it in a
//!   `MacroGuard`, and the engine takes its own code as not covered, while
//!   the annotated functions it calls stay covered and count their calls
//!   as closures do (see `augur::trace::frames`), so a DSL's macro that
//!   expands to calls (`einsum!`) costs nothing.

use proc_macro2::{TokenStream, TokenTree};
use quote::ToTokens;
use std::collections::HashSet;
use syn::visit::Visit;
use syn::{Block, Expr};

/// What the attribute does with one macro invocation.
pub(crate) enum Kind {
    /// Arguments that are expressions: rewrite each.
    Expressions,
    /// Nothing to do.
    Transparent,
    /// Wrap in a `MacroGuard`.
    Opaque,
}

/// Macros whose arguments are comma-separated expressions (a format string
/// first for some, `name = value` pairs allowed) and whose expansion keeps
/// no state of its own.
const EXPRESSIONS: &[&str] = &[
    "assert",
    "assert_eq",
    "assert_ne",
    "debug_assert",
    "debug_assert_eq",
    "debug_assert_ne",
    "format",
    "format_args",
    "print",
    "println",
    "eprint",
    "eprintln",
    "write",
    "writeln",
    "panic",
    "unreachable",
    "todo",
    "unimplemented",
    "dbg",
    "vec",
];

/// Macros that expand to constants or to their arguments evaluated once.
const TRANSPARENT: &[&str] = &[
    "line",
    "column",
    "file",
    "module_path",
    "stringify",
    "concat",
    "env",
    "option_env",
    "include_str",
    "include_bytes",
    "cfg",
    "compile_error",
    "matches",
];

/// Classifies an invocation; `local` holds the item's own safe macros.
pub(crate) fn kind(mac: &syn::Macro, local: &HashSet<String>) -> Kind {
    let Some(name) = mac.path.segments.last().map(|s| s.ident.to_string()) else {
        return Kind::Opaque;
    };
    // A path (`std::println!`) still names the standard macro; a crate's
    // macro of the same name is rare, and its arguments are expressions
    // anyway where it parses as such.
    if EXPRESSIONS.contains(&name.as_str()) {
        Kind::Expressions
    } else if TRANSPARENT.contains(&name.as_str())
        || (mac.path.segments.len() == 1 && local.contains(&name) && plain(&mac.tokens, true))
    {
        Kind::Transparent
    } else {
        Kind::Opaque
    }
}

/// The `macro_rules!` macros defined anywhere in `body` whose rules are
/// [`plain`].
pub(crate) fn local_macros(body: &Block) -> HashSet<String> {
    struct Finder(HashSet<String>);
    impl Visit<'_> for Finder {
        fn visit_item_macro(&mut self, m: &syn::ItemMacro) {
            if m.mac.path.is_ident("macro_rules") {
                if let Some(name) = &m.ident {
                    if plain(&m.mac.tokens, false) {
                        self.0.insert(name.to_string());
                    }
                }
            }
        }
    }
    let mut f = Finder(HashSet::new());
    f.visit_block(body);
    f.0
}

/// True if `tokens` hold nothing that could keep plain state or hide a
/// closure: no loop, `let`, `mut`, item, closure bar or macro call. As the
/// arguments of a call (`args`), a lone token (`apply!(|)`, an operator)
/// is fine.
fn plain(tokens: &TokenStream, args: bool) -> bool {
    const KEYWORDS: &[&str] = &[
        "for", "while", "loop", "let", "mut", "fn", "impl", "move", "async", "static",
    ];
    let all: Vec<TokenTree> = tokens.clone().into_iter().collect();
    if args && matches!(all.as_slice(), [TokenTree::Punct(_)]) {
        return true;
    }
    let mut prev_ident = false;
    for t in all {
        match t {
            TokenTree::Ident(i) => {
                if KEYWORDS.contains(&i.to_string().as_str()) {
                    return false;
                }
                prev_ident = true;
                continue;
            }
            TokenTree::Punct(p) if p.as_char() == '|' => return false,
            TokenTree::Punct(p) if p.as_char() == '!' && prev_ident => return false,
            TokenTree::Group(g) if !plain(&g.stream(), false) => return false,
            _ => {}
        }
        prev_ident = false;
    }
    true
}

/// Rewrites the expression arguments of `mac` with `f` (the value of a
/// `name = value` pair only); false if they do not parse as expressions
/// (the caller then treats the macro as opaque).
pub(crate) fn rewrite_arguments(mac: &mut syn::Macro, mut f: impl FnMut(&mut Expr)) -> bool {
    let mut out = TokenStream::new();
    let mut segment = TokenStream::new();
    let mut flush = |segment: &mut TokenStream, out: &mut TokenStream| -> bool {
        if segment.is_empty() {
            return true;
        }
        let Ok(mut e) = syn::parse2::<Expr>(std::mem::take(segment)) else {
            return false;
        };
        match &mut e {
            Expr::Assign(a) if matches!(&*a.left, Expr::Path(_)) => f(&mut a.right),
            e => f(e),
        }
        e.to_tokens(out);
        true
    };
    for t in mac.tokens.clone() {
        match &t {
            TokenTree::Punct(p) if p.as_char() == ',' || p.as_char() == ';' => {
                if !flush(&mut segment, &mut out) {
                    return false;
                }
                out.extend([t]);
            }
            _ => segment.extend([t]),
        }
    }
    if !flush(&mut segment, &mut out) {
        return false;
    }
    mac.tokens = out;
    true
}
