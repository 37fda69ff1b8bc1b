//! Kernel launches as statements.
//!
//! [`stage::gpu::launch`](crate::stage::gpu::launch) records an
//! [`Op::Launch`](crate::trace::graph::Op::Launch), the `Decl`s of its two
//! indices, the body, and an [`Op::LaunchEnd`]. The body is one region with
//! a single entry and a single exit (a closure that runs to its end), so
//! emission leaves it as a stretch of one statement list between the two
//! markers `lower` makes of them. [`fold`] turns each stretch into a
//! [`Launch`] statement holding it, before any pass runs: a launch is a
//! statement of its own from then on, whatever the passes do around it.

use crate::error::Error;
use crate::ir::{Block, Function, LabelId, Launch, SrcLoc, Stmt, StmtKind, VarId};

/// The indices of a launch marker that `fold` has not filled in yet.
pub const OPEN: VarId = VarId(u32::MAX);

/// The label that marks where a launch's body ends (no block has it).
pub const END: LabelId = LabelId(u32::MAX);

/// Folds every launch's marked stretch of `f` into a `Launch` statement.
pub fn fold(f: &mut Function) -> Result<(), Error> {
    if !super::any_stmt(&f.body, &|s| is_open(s) || is_end(s)) {
        return Ok(());
    }
    let body = std::mem::take(&mut f.body);
    f.body = fold_block(body)?;
    Ok(())
}

fn is_open(s: &Stmt) -> bool {
    matches!(s.kind, StmtKind::Launch(Launch { bid: OPEN, .. }))
}

fn is_end(s: &Stmt) -> bool {
    matches!(s.kind, StmtKind::Label(END))
}

fn fold_block(b: Block) -> Result<Block, Error> {
    let mut out = Vec::with_capacity(b.len());
    let mut rest = b.into_iter();
    while let Some(mut s) = rest.next() {
        if is_end(&s) {
            return Err(unstructured(s.loc));
        }
        if !is_open(&s) {
            for inner in s.kind.blocks_mut() {
                *inner = fold_block(std::mem::take(inner))?;
            }
            out.push(s);
            continue;
        }
        let (bid, tid) = (index(rest.next(), s.loc)?, index(rest.next(), s.loc)?);
        let body = take_region(&mut rest, is_open, is_end).ok_or_else(|| unstructured(s.loc))?;
        let folded = fold_block(body)?;
        if let StmtKind::Launch(l) = &mut s.kind {
            (l.bid, l.tid, l.body) = (bid, tid, folded);
        }
        out.push(s);
    }
    Ok(out)
}

/// The statements of `rest` up to the marker `is_end` that closes the
/// region just opened (regions of the same kind nest); the marker itself is
/// taken too. `None` where `rest` ends first. Launches and parallel loops
/// fold their stretches with it.
pub(super) fn take_region(
    rest: &mut impl Iterator<Item = Stmt>,
    is_open: fn(&Stmt) -> bool,
    is_end: fn(&Stmt) -> bool,
) -> Option<Block> {
    let mut body = Vec::new();
    let mut open = 0u32;
    loop {
        let t = rest.next()?;
        if is_end(&t) {
            if open == 0 {
                return Some(body);
            }
            open -= 1;
        }
        open += u32::from(is_open(&t));
        body.push(t);
    }
}

/// The variable a launch index's `Decl` declares.
fn index(s: Option<Stmt>, loc: Option<SrcLoc>) -> Result<VarId, Error> {
    match s.map(|s| s.kind) {
        Some(StmtKind::Decl { var, init: None }) => Ok(var),
        _ => Err(Error::Internal {
            message: format!(
                "a kernel launch's indices were not recorded after it{}",
                loc.map(|l| format!(" (at {l})")).unwrap_or_default()
            ),
        }),
    }
}

/// A launch whose body is not one stretch of code. A closure runs to its
/// end, so what splits it is first-stage state: paths through the body
/// that end with different `Static` values end at different program
/// points, and the code after the launch is staged once per path.
fn unstructured(loc: Option<SrcLoc>) -> Error {
    Error::Kernel {
        message: "the kernel's body ends in different first-stage states on different paths \
                  (a `Static`, or DSL state the tags see, set under a dyn condition inside \
                  the kernel): what follows the launch would depend on the path each thread \
                  took; set such state the same way on every path before the body ends"
            .to_string(),
        location: loc,
    }
}
