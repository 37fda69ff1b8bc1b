//! Forward jumps as `break`s: a `goto` to a label later in an enclosing
//! statement list becomes a `break` out of a one-turn loop around the
//! statements in between (`while (1) { ...; if (c) break; ...; break; }`).
//!
//! This is what a plain Rust loop unrolled by the first stage needs when a
//! turn `break`s out of it: the jump skips the remaining turns, which are
//! too long to copy into each branch (node splitting) and are no loop of
//! the generated code. A `goto` stays where the region in between holds a
//! `break` or `continue` of an enclosing loop (the one-turn loop would
//! catch it) or where a loop of the region holds the `goto` (a `break`
//! there would leave that loop): `guards.rs` takes those after splitting.
//! (Breaking out of nested loops with flags made one-turn loops nest one
//! per turn of a ladder of such jumps, 89 deep in fuzz seed 9996063496,
//! which gcc -O2 did not compile within a minute.)

use crate::ir::{Block, ExprId, Function, LabelId, Stmt, StmtKind};

/// Rewrites the forward gotos of `func`'s body it can, and drops the labels
/// no `goto` targets any more; returns how many gotos it removed.
pub fn forward_breaks(func: &mut Function, truth: ExprId) -> u64 {
    let removed = rewrite(&mut func.body, truth);
    if removed > 0 {
        let mut targets = Vec::new();
        goto_targets(&func.body, &mut targets);
        drop_labels(&mut func.body, &targets);
    }
    removed
}

pub(super) fn goto_targets(b: &[Stmt], out: &mut Vec<LabelId>) {
    for s in b {
        if let StmtKind::Goto(l) = s.kind {
            out.push(l);
        }
        s.kind.blocks().for_each(|inner| goto_targets(inner, out));
    }
}

/// Drops the labels of `b` that no `goto` in `targets` names (a set: a
/// machine of many points has a label and gotos per point).
pub(super) fn drop_labels(b: &mut Block, targets: &[LabelId]) {
    let targets: std::collections::HashSet<LabelId> = targets.iter().copied().collect();
    drop_unnamed(b, &targets);
}

fn drop_unnamed(b: &mut Block, targets: &std::collections::HashSet<LabelId>) {
    b.retain(|s| !matches!(s.kind, StmtKind::Label(l) if !targets.contains(&l)));
    for s in b.iter_mut() {
        s.kind
            .blocks_mut()
            .for_each(|inner| drop_unnamed(inner, targets));
    }
}

fn rewrite(body: &mut Block, truth: ExprId) -> u64 {
    let mut removed = 0;
    for s in body.iter_mut() {
        for inner in s.kind.blocks_mut() {
            removed += rewrite(inner, truth);
        }
    }
    // The labels each statement jumps to, found once and kept up to date
    // (a list with thousands of labels, a DFA's, would walk its statements
    // per label).
    let mut jumps: Option<Vec<Vec<LabelId>>> = None;
    let mut j = 0;
    while j < body.len() {
        if let StmtKind::Label(l) = body[j].kind {
            let js = jumps.get_or_insert_with(|| body.iter().map(jumps_of).collect());
            let region = (0..j)
                .find(|&i| js[i].binary_search(&l).is_ok())
                .filter(|&i| {
                    body[i..j]
                        .iter()
                        .all(|s| !frees_loop_exits(s) && loops_hold_no_jump(s, l))
                });
            if let Some(i) = region {
                let mut region: Block = body.drain(i..j).collect();
                removed += to_breaks(&mut region, l);
                region.push(Stmt::new(StmtKind::Break));
                let mut joined: Vec<LabelId> =
                    js.drain(i..j).flatten().filter(|&m| m != l).collect();
                joined.sort_unstable();
                joined.dedup();
                js.insert(i, joined);
                body.insert(
                    i,
                    Stmt::new(StmtKind::While {
                        cond: truth,
                        body: region,
                    }),
                );
                j = i + 1;
            }
        }
        j += 1;
    }
    removed
}

/// The labels `s` jumps to (at any depth), sorted.
pub(super) fn jumps_of(s: &Stmt) -> Vec<LabelId> {
    let mut v = Vec::new();
    goto_targets(std::slice::from_ref(s), &mut v);
    v.sort_unstable();
    v.dedup();
    v
}

/// True if `s` holds a `goto l` (at any depth).
fn jumps_to(s: &Stmt, l: LabelId) -> bool {
    matches!(s.kind, StmtKind::Goto(m) if m == l)
        || s.kind.blocks().flatten().any(|t| jumps_to(t, l))
}

/// True if `s` holds a `break` or `continue` outside every loop within it
/// (one that leaves a loop enclosing `s`).
fn frees_loop_exits(s: &Stmt) -> bool {
    match &s.kind {
        StmtKind::Break | StmtKind::Continue => true,
        StmtKind::While { .. } | StmtKind::For { .. } => false,
        k => k.blocks().flatten().any(frees_loop_exits),
    }
}

/// True if no loop within `s` holds a `goto l` (a `break` there would
/// leave that loop instead).
fn loops_hold_no_jump(s: &Stmt, l: LabelId) -> bool {
    match &s.kind {
        StmtKind::While { .. } | StmtKind::For { .. } => !jumps_to(s, l),
        k => k.blocks().flatten().all(|t| loops_hold_no_jump(t, l)),
    }
}

/// Replaces each `goto l` in `b` (none is inside a loop) with `break`.
fn to_breaks(b: &mut Block, l: LabelId) -> u64 {
    let mut n = 0;
    for s in b.iter_mut() {
        if matches!(s.kind, StmtKind::Goto(m) if m == l) {
            s.kind = StmtKind::Break;
            n += 1;
        } else {
            for inner in s.kind.blocks_mut() {
                n += to_breaks(inner, l);
            }
        }
    }
    n
}
