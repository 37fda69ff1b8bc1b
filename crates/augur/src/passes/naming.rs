//! Names variables: user hints first (made unique and C-safe), parameters
//! `arg0…`, the rest `var0…` in order of declaration.

use crate::codegen::c::keywords::{HELPERS, RESERVED, RESERVED_CUDA};
use crate::ir::{Block, Function, StmtKind, VarId, VarKind};
use crate::trace::tag::FastSet as HashSet;

/// Assigns `VarData::name` to every variable.
pub fn run(f: &mut Function) {
    let mut taken: HashSet<String> = RESERVED
        .iter()
        .chain(RESERVED_CUDA)
        .chain(HELPERS)
        .chain(crate::libm::NAMES)
        .map(|s| s.to_string())
        .collect();
    for (_, e) in f.externs.iter() {
        taken.insert(e.name.clone());
    }
    taken.insert(f.name.clone());
    let mut order: Vec<VarId> = f.params.clone();
    let body = std::mem::take(&mut f.body);
    declared(&body, &mut order);
    f.body = body;
    // Hinted names claim their spelling first, so `var3` never steals `x`.
    let mut names = vec![None; f.vars.len()];
    for &v in &order {
        if let Some(h) = f.vars[v].hint.clone() {
            names[v.0 as usize] = Some(unique(&sanitize(&h), &mut taken));
        }
    }
    let mut next = 0;
    for &v in &order {
        if names[v.0 as usize].is_some() {
            continue;
        }
        let base = match f.vars[v].kind {
            VarKind::Param(i) => format!("arg{i}"),
            _ => {
                next += 1;
                format!("var{}", next - 1)
            }
        };
        names[v.0 as usize] = Some(unique(&base, &mut taken));
    }
    for (i, n) in names.into_iter().enumerate() {
        f.vars[VarId(i as u32)].name = n;
    }
}

fn declared(b: &Block, out: &mut Vec<VarId>) {
    for s in b {
        if let StmtKind::Decl { var, .. } = s.kind {
            out.push(var);
        }
        if let StmtKind::For { init, .. } = &s.kind {
            if let StmtKind::Decl { var, .. } = init.kind {
                out.push(var);
            }
        }
        if let StmtKind::Launch(l) = &s.kind {
            out.extend([l.bid, l.tid]);
        }
        for inner in s.kind.blocks() {
            declared(inner, out);
        }
    }
}

fn sanitize(h: &str) -> String {
    let mut s: String = h
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.is_empty() || s.starts_with(|c: char| c.is_ascii_digit()) || macro_like(&s) {
        s.insert(0, 'v');
    }
    s
}

/// Names C reserves for the implementation (`__x`, `_X`) or that the
/// standard headers define as macros (`INT32_MAX`, `SIZE_MAX`, `INT64_C`).
fn macro_like(s: &str) -> bool {
    let b = s.as_bytes();
    let reserved = b.len() >= 2 && b[0] == b'_' && (b[1] == b'_' || b[1].is_ascii_uppercase());
    let upper = s
        .bytes()
        .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == b'_');
    let limit = upper
        && ["_MAX", "_MIN", "_C", "_WIDTH"]
            .iter()
            .any(|t| s.ends_with(t));
    reserved || limit || matches!(s, "EOF" | "BUFSIZ" | "FILENAME_MAX" | "RAND_MAX")
}

fn unique(base: &str, taken: &mut HashSet<String>) -> String {
    let mut name = base.to_string();
    let mut k = 1;
    while taken.contains(&name) {
        name = format!("{base}_{k}");
        k += 1;
    }
    taken.insert(name.clone());
    name
}
