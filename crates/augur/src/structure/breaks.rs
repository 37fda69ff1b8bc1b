//! Forward jumps as `break`s: a `goto` to a label later in an enclosing
//! statement list becomes a `break` out of a one-turn loop around the
//! statements in between (`while (1) { ...; if (c) break; ...; break; }`).
//!
//! This is what a plain Rust loop unrolled by the first stage needs when a
//! turn `break`s out of it: the jump skips the remaining turns, which are
//! too long to copy into each branch (node splitting) and are no loop of
//! the generated code. Where the `goto` sits inside a loop of the region
//! (another such one-turn loop: a turn that also `continue`s, which skips
//! the rest of its own turn), it sets a flag and `break`s, and each loop
//! around it is followed by `if (flag) break;`. A `goto` stays where the
//! region in between holds a `break` or `continue` of an enclosing loop
//! (the one-turn loop would catch it).

use crate::ir::{
    Block, Const, Expr, ExprId, Function, LabelId, Scalar, Stmt, StmtKind, Type, VarData, VarId,
    VarKind,
};

/// Rewrites the forward gotos of `func`'s body it can, and drops the labels
/// no `goto` targets any more; returns how many gotos it removed.
pub fn forward_breaks(func: &mut Function, truth: ExprId) -> u64 {
    let mut body = std::mem::take(&mut func.body);
    let mut flags = Vec::new();
    let removed = rewrite(&mut body, func, truth, &mut flags);
    // Flags are declared once, at the top: a `goto` may enter a region in
    // the middle, and must find its flag down (see `rewrite`).
    let decls: Vec<Stmt> = flags
        .into_iter()
        .map(|var| {
            let init = func.expr(Expr::Const(Const::Bool(false)), bool_ty());
            Stmt::new(StmtKind::Decl {
                var,
                init: Some(init),
            })
        })
        .collect();
    body.splice(0..0, decls);
    func.body = body;
    let body = &mut func.body;
    if removed > 0 {
        let mut targets = Vec::new();
        goto_targets(body, &mut targets);
        drop_labels(body, &targets);
    }
    removed
}

pub(super) fn goto_targets(b: &Block, out: &mut Vec<LabelId>) {
    for s in b {
        if let StmtKind::Goto(l) = s.kind {
            out.push(l);
        }
        s.kind.blocks().for_each(|inner| goto_targets(inner, out));
    }
}

pub(super) fn drop_labels(b: &mut Block, targets: &[LabelId]) {
    b.retain(|s| !matches!(s.kind, StmtKind::Label(l) if !targets.contains(&l)));
    for s in b.iter_mut() {
        s.kind
            .blocks_mut()
            .for_each(|inner| drop_labels(inner, targets));
    }
}

fn rewrite(body: &mut Block, func: &mut Function, truth: ExprId, flags: &mut Vec<VarId>) -> u64 {
    let mut removed = 0;
    for s in body.iter_mut() {
        for inner in s.kind.blocks_mut() {
            removed += rewrite(inner, func, truth, flags);
        }
    }
    let mut j = 0;
    while j < body.len() {
        if let StmtKind::Label(l) = body[j].kind {
            if let Some(i) = (0..j).find(|&i| jumps_to(&body[i], l)) {
                if body[i..j].iter().all(|s| !frees_loop_exits(s)) {
                    let flagged = !body[i..j].iter().all(|s| loops_hold_no_jump(s, l));
                    let mut region: Block = body.drain(i..j).collect();
                    let flag = flagged.then(|| new_flag(func));
                    removed += match flag {
                        Some(f) => to_flagged_breaks(&mut region, l, f, func, false),
                        None => to_breaks(&mut region, l),
                    };
                    flags.extend(flag);
                    region.push(Stmt::new(StmtKind::Break));
                    body.insert(
                        i,
                        Stmt::new(StmtKind::While {
                            cond: truth,
                            body: region,
                        }),
                    );
                    j = i + 1;
                    if let Some(f) = flag {
                        // The flag is down again wherever the region is
                        // left: a later `goto` into it finds it down.
                        body.insert(j, set_flag(func, f, false));
                        j += 1;
                    }
                }
            }
        }
        j += 1;
    }
    removed
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

fn bool_ty() -> Type {
    Type::Scalar(Scalar::Bool)
}

/// A fresh local `bool` that says a `goto` left the loops around it.
fn new_flag(func: &mut Function) -> VarId {
    func.vars.push(VarData {
        ty: bool_ty(),
        kind: VarKind::Local,
        hint: Some("leave".into()),
        name: None,
        addr_taken: false,
        loc: None,
    })
}

/// `flag = on;`
fn set_flag(func: &mut Function, flag: VarId, on: bool) -> Stmt {
    let place = func.expr(Expr::Var(flag), bool_ty());
    let value = func.expr(Expr::Const(Const::Bool(on)), bool_ty());
    Stmt::new(StmtKind::Assign { place, value })
}

/// Replaces each `goto l` in `b` with a `break` out of the region's
/// one-turn loop: `break` where no loop of the region encloses it (`in_loop`
/// false), else `flag = true; break;`, with `if (flag) break;` after every
/// loop that holds one. Returns how many it replaced.
fn to_flagged_breaks(
    b: &mut Block,
    l: LabelId,
    flag: VarId,
    func: &mut Function,
    in_loop: bool,
) -> u64 {
    let mut n = 0;
    let mut out = Vec::with_capacity(b.len());
    for mut s in std::mem::take(b) {
        if matches!(s.kind, StmtKind::Goto(m) if m == l) {
            if in_loop {
                out.push(set_flag(func, flag, true));
            }
            out.push(Stmt::new(StmtKind::Break));
            n += 1;
            continue;
        }
        let is_loop = matches!(s.kind, StmtKind::While { .. } | StmtKind::For { .. });
        let mut inside = 0;
        for inner in s.kind.blocks_mut() {
            inside += to_flagged_breaks(inner, l, flag, func, in_loop || is_loop);
        }
        n += inside;
        out.push(s);
        if is_loop && inside > 0 {
            let cond = func.expr(Expr::Var(flag), bool_ty());
            out.push(Stmt::new(StmtKind::If {
                cond,
                then_: vec![Stmt::new(StmtKind::Break)],
                else_: Vec::new(),
            }));
        }
    }
    *b = out;
    n
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
