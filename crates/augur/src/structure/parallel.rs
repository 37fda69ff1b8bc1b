//! Parallel loops as `for` statements.
//!
//! [`parallel_for`](crate::parallel_for) records an
//! [`Op::Parallel`](crate::trace::graph::Op::Parallel), the `Decl` of its
//! index, the body, and an [`Op::ParallelEnd`](crate::trace::graph::Op::ParallelEnd).
//! As with launches the body is one region with a single entry and a single
//! exit, so emission leaves it as one stretch of a statement list between
//! the two markers. [`fold`] turns each stretch into
//!
//! ```text
//! int64_t hi = <hi>;
//! #[parallel(<reductions>)]
//! for (int64_t i = <lo>; i < hi; i = i + 1) { <body> }
//! ```
//!
//! before any pass runs, and checks the rules of
//! [`ir::parallel`](crate::ir::parallel) that are the user's to keep: the
//! body assigns no variable declared outside it but its reductions, and no
//! value made in it is used after it. Each broken rule is an
//! [`Error::Parallel`] at the user's line.

use crate::error::Error;
use crate::ir::parallel::{assigned_vars, declared_vars};
use crate::ir::{
    Block, Expr, ExprId, Function, LabelId, Reduction, Scalar, SrcLoc, Stmt, StmtKind, Type,
    VarData, VarId, VarKind,
};
use crate::trace::tag::FastSet;

/// The label that marks where a parallel loop's body ends (no block has it).
pub const END: LabelId = LabelId(u32::MAX - 1);

/// The marker `lower` makes of a loop's start: a `for` with `lo` as its
/// initialiser's value, `hi` as its condition and no step yet.
pub fn open(lo: ExprId, hi: ExprId) -> StmtKind {
    StmtKind::For {
        init: Box::new(Stmt::new(StmtKind::Eval(lo))),
        cond: hi,
        step: Box::new(Stmt::new(StmtKind::Label(END))),
        body: Vec::new(),
    }
}

fn is_open(s: &Stmt) -> bool {
    matches!(&s.kind, StmtKind::For { step, .. } if step.kind == StmtKind::Label(END))
}

fn is_end(s: &Stmt) -> bool {
    s.kind == StmtKind::Label(END)
}

/// Folds every parallel loop's marked stretch of `f` into its `for` loop
/// and checks the loops' rules.
pub fn fold(f: &mut Function) -> Result<(), Error> {
    // No markers: no loop to fold, and none to check (the loops checked
    // are the ones folded here).
    if !super::any_stmt(&f.body, &|s| is_open(s) || is_end(s)) {
        return Ok(());
    }
    let body = std::mem::take(&mut f.body);
    f.body = fold_block(f, body)?;
    check_all(f, &f.body)
}

fn fold_block(f: &mut Function, b: Block) -> Result<Block, Error> {
    let mut out = Vec::with_capacity(b.len() + 1);
    let mut rest = b.into_iter();
    while let Some(mut s) = rest.next() {
        if is_end(&s) {
            return Err(unstructured(s.loc));
        }
        if !is_open(&s) {
            for inner in s.kind.blocks_mut() {
                *inner = fold_block(f, std::mem::take(inner))?;
            }
            out.push(s);
            continue;
        }
        let index = match rest.next().map(|s| s.kind) {
            Some(StmtKind::Decl { var, init: None }) => var,
            _ => return Err(internal("its index was not recorded after it", s.loc)),
        };
        let body = super::launches::take_region(&mut rest, is_open, is_end)
            .ok_or_else(|| unstructured(s.loc))?;
        let body = fold_block(f, body)?;
        let (hi_decl, kind) = header(f, &s, index, body);
        out.push(hi_decl);
        s.kind = kind;
        out.push(s);
    }
    Ok(out)
}

/// `int64_t hi = <hi>;` and the loop `for (int64_t i = lo; i < hi; i = i + 1)`.
fn header(f: &mut Function, open: &Stmt, index: VarId, body: Block) -> (Stmt, StmtKind) {
    let StmtKind::For { init, cond, .. } = &open.kind else {
        unreachable!("checked by is_open")
    };
    let StmtKind::Eval(lo) = init.kind else {
        unreachable!("made by open")
    };
    let i64t = Type::Scalar(Scalar::I64);
    let hi = f.vars.push(VarData {
        ty: i64t,
        kind: VarKind::Local,
        hint: Some("end".into()),
        name: None,
        addr_taken: false,
        loc: open.loc,
    });
    let hi_decl = Stmt {
        kind: StmtKind::Decl {
            var: hi,
            init: Some(*cond),
        },
        annotations: Vec::new(),
        loc: open.loc,
    };
    let end = f.expr(Expr::Var(hi), i64t);
    let mut kind = crate::ir::parallel::counted_for(f, index, lo, end, body);
    // Every part of the header is the user's line.
    if let StmtKind::For { init, step, .. } = &mut kind {
        (init.loc, step.loc) = (open.loc, open.loc);
    }
    (hi_decl, kind)
}

/// Checks every parallel loop in `b`, outer loops first.
fn check_all(f: &Function, b: &[Stmt]) -> Result<(), Error> {
    for s in b {
        if crate::ir::parallel::reductions(s).is_some() {
            check(f, s)?;
        }
        for inner in s.kind.blocks() {
            check_all(f, inner)?;
        }
    }
    Ok(())
}

/// Checks the user's rules for parallel loop `s`.
fn check(f: &Function, s: &Stmt) -> Result<(), Error> {
    let StmtKind::For { init, body, .. } = &s.kind else {
        unreachable!("a parallel loop is a `for`")
    };
    let reductions = crate::ir::parallel::reductions(s).expect("a parallel loop");
    let mut inside = Vec::new();
    declared_vars(std::slice::from_ref(init), &mut inside);
    declared_vars(body, &mut inside);
    let inside: FastSet<VarId> = inside.into_iter().collect();
    for r in reductions {
        check_reduction(f, r, s.loc)?;
    }
    let mut assigned = Vec::new();
    assigned_vars(f, body, &mut assigned);
    for (v, loc) in assigned {
        if inside.contains(&v) || reductions.iter().any(|r| r.var == v) {
            continue;
        }
        return Err(Error::Parallel {
            message: format!(
                "the body of the parallel loop at {} assigns `{}`, declared outside it{}: \
                 iterations that run at once would all write the one variable. Make it a \
                 reduction (`augur::Reducer`, listed with `.reduce(&r)`), or store each \
                 iteration's value to memory at its own index",
                loc_text(s.loc),
                f.var_name(v),
                f.vars[v]
                    .loc
                    .map(|l| format!(" at {l}"))
                    .unwrap_or_default()
            ),
            location: loc,
        });
    }
    if let Some(loc) = used_outside(f, &f.body, s, &inside) {
        return Err(Error::Parallel {
            message: format!(
                "a value computed in the body of the parallel loop at {} is used after it: \
                 each iteration has its own. Store it to memory, or make it a reduction \
                 (`augur::Reducer`)",
                loc_text(s.loc)
            ),
            location: loc,
        });
    }
    Ok(())
}

fn check_reduction(f: &Function, r: &Reduction, loc: Option<SrcLoc>) -> Result<(), Error> {
    let ty = f.vars[r.var].ty;
    if ty.as_scalar().is_some_and(|s| r.op.applies_to(s)) {
        return Ok(());
    }
    Err(Error::Parallel {
        message: format!(
            "a `{}` reduction of `{}`, of type {ty}",
            r.op.name(),
            f.var_name(r.var)
        ),
        location: loc,
    })
}

/// The location of the first statement outside loop `s` that mentions a
/// variable of `inside`, if any.
fn used_outside(
    f: &Function,
    b: &[Stmt],
    s: &Stmt,
    inside: &FastSet<VarId>,
) -> Option<Option<SrcLoc>> {
    for t in b {
        if std::ptr::eq(t, s) {
            continue;
        }
        let mut found = false;
        crate::ir::each_own_expr(t, &mut |e| {
            f.for_each_var(e, &mut |v| found |= inside.contains(&v))
        });
        if found {
            return Some(t.loc);
        }
        for inner in t.kind.blocks() {
            if let Some(loc) = used_outside(f, inner, s, inside) {
                return Some(loc);
            }
        }
    }
    None
}

fn loc_text(loc: Option<SrcLoc>) -> String {
    loc.map_or_else(|| "an unknown line".into(), |l| l.to_string())
}

fn internal(what: &str, loc: Option<SrcLoc>) -> Error {
    Error::Internal {
        message: format!(
            "a parallel loop: {what}{}",
            loc.map(|l| format!(" (at {l})")).unwrap_or_default()
        ),
    }
}

/// A loop whose body is not one stretch of code: first-stage state set
/// differently on different paths through the body.
fn unstructured(loc: Option<SrcLoc>) -> Error {
    Error::Parallel {
        message: "the loop's body ends in different first-stage states on different paths, \
                  so what follows the loop would depend on the path each iteration took: a \
                  `Static` or DSL state the tags see set under a dyn condition inside the \
                  body (set it the same way on every path), or plain Rust state the engine \
                  cannot see because the code that stages the body is not covered by \
                  `#[augur::staged]` (annotate that function)"
            .to_string(),
        location: loc,
    }
}
