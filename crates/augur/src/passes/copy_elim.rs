//! Copy elimination (BuildIt's RCE): every first-stage operation made a
//! temporary; a temporary read exactly once is folded into its reader when
//! nothing in between changes what it reads, so `t1 = x + 1; y = t1;`
//! prints as `y = x + 1;`.

use super::effects::{read_counts, shallow, top_exprs, Effects};
use crate::ir::{BinOp, Block, Expr, ExprId, Function, StmtKind, VarId, VarKind};

/// How far ahead to look for the single reader (keeps the pass linear).
const WINDOW: usize = 64;

/// Runs the pass over the whole function.
pub fn run(f: &mut Function) {
    run_counted(f, &mut read_counts(f));
}

/// [`run`] with `counts`, the function's [`read_counts`], kept equal to
/// them: a folded temporary's one read moves into its reader with the
/// expression it read, so the only count that changes is the temporary's
/// own (to 0, its declaration gone).
pub fn run_counted(f: &mut Function, counts: &mut [u32]) {
    let mut body = std::mem::take(&mut f.body);
    block(f, &mut body, counts, &mut Buffers::default());
    f.body = body;
    debug_assert_eq!(counts, &read_counts(f)[..], "copy elimination's counts");
}

/// The buffers of one run's blocks, kept for the next block: a large
/// function has a block per branch of its code, and allocating three
/// buffers for each was a good part of the pass.
#[derive(Default)]
struct Buffers {
    /// Each statement's effects and whether it was folded away: a block's
    /// are in use while its nested blocks are folded, so each depth of the
    /// nest takes a pair of its own.
    free: Vec<(Vec<Effects>, Vec<bool>)>,
    /// The variables a candidate reads.
    reads: Vec<VarId>,
}

/// Folds the temporaries of `b` and its nested blocks; returns what `b`
/// does, so that each statement's effects are summed up once, bottom-up.
fn block(f: &mut Function, b: &mut Block, counts: &mut [u32], bufs: &mut Buffers) -> Effects {
    let (mut fx, mut removed) = bufs.free.pop().unwrap_or_default();
    fx.clear();
    for s in b.iter_mut() {
        let mut e = shallow(f, s);
        for inner in s.kind.blocks_mut() {
            e.merge(&block(f, inner, counts, bufs));
        }
        fx.push(e);
    }
    removed.clear();
    removed.resize(b.len(), false);
    let mut reads = std::mem::take(&mut bufs.reads);
    for i in 0..b.len() {
        let StmtKind::Decl { var, init: Some(e) } = b[i].kind else {
            continue;
        };
        if f.vars[var].kind != VarKind::Temp
            || counts[var.0 as usize] != 1
            || f.vars[var].addr_taken
        {
            continue;
        }
        // Folding without bound would build one expression per chain of
        // single-use temporaries (`acc = acc + 1` in a long Rust loop), deep
        // enough to overflow stacks here and in the C compiler.
        if !within(f, e, &mut 48) {
            continue;
        }
        let found = find_reader(f, b, &fx, &removed, (i, var, e), &mut reads);
        if let Some((j, use_node)) = found {
            f.exprs[use_node] = f.exprs[e].clone();
            counts[var.0 as usize] = 0;
            removed[i] = true;
            let notes = std::mem::take(&mut b[i].annotations);
            b[j].annotations.splice(0..0, notes);
            // A return's own location is only the `extract` call: the
            // returned expression's line says more.
            if matches!(b[j].kind, StmtKind::Return(_)) {
                b[j].loc = b[i].loc;
            }
        }
    }
    let mut k = 0;
    b.retain(|_| {
        k += 1;
        !removed[k - 1]
    });
    // A folded temporary's write stays in the sum: more than the block
    // does, which only ever keeps a fold from happening.
    let mut all = Effects::default();
    fx.iter().for_each(|e| all.merge(e));
    bufs.reads = reads;
    bufs.free.push((fx, removed));
    all
}

/// True if the tree under `e` has at most `budget` nodes.
fn within(f: &Function, e: ExprId, budget: &mut u32) -> bool {
    if *budget == 0 {
        return false;
    }
    *budget -= 1;
    let mut ok = true;
    f.for_each_child(e, |c| ok = ok && within(f, c, budget));
    ok
}

/// Finds the statement that reads `var` (defined as `e` at `i`) and checks
/// that moving `e` there keeps its value and the order of effects (`reads`:
/// scratch space for the variables `e` reads).
fn find_reader(
    f: &Function,
    b: &Block,
    fx: &[Effects],
    removed: &[bool],
    (i, var, e): (usize, VarId, ExprId),
    reads: &mut Vec<VarId>,
) -> Option<(usize, ExprId)> {
    reads.clear();
    f.for_each_var(e, &mut |v| reads.push(v));
    let e_mem = f.reads_memory(e);
    let e_call = f.has_call(e);
    let mut between = 0;
    for j in i + 1..b.len().min(i + 1 + WINDOW) {
        if removed[j] {
            continue;
        }
        if let Some((node, conditional)) = find_top_use(f, &b[j], var) {
            // A call must run whenever the first stage made it: never move
            // it under `&&`, `||` or `?:`, where C may skip it.
            let ok = reader_ok(f, &b[j], e_mem, e_call, between) && !(e_call && conditional);
            return ok.then_some((j, node));
        }
        let k = &fx[j];
        let clobbers = k.writes_any(reads) || (e_mem && (k.writes_memory || k.calls)) || k.jumps;
        if clobbers || e_call || k.calls && e_mem {
            return None;
        }
        between += 1;
    }
    None
}

/// Within the reader itself, C leaves the order of evaluation open: a moved
/// call must not meet another call or a memory read, a moved memory read
/// must not meet a call.
fn reader_ok(f: &Function, s: &crate::ir::Stmt, e_mem: bool, e_call: bool, between: usize) -> bool {
    if e_call && between > 0 {
        return false;
    }
    let mut calls = false;
    let mut mem = false;
    top_exprs(s, &mut |x, is_place| {
        calls |= f.has_call(x);
        // The place's own store is not a read.
        mem |= if is_place {
            let mut m = false;
            f.for_each_child(x, |c| m |= f.reads_memory(c));
            m
        } else {
            f.reads_memory(x)
        };
    });
    !(e_call && (calls || mem) || e_mem && calls)
}

/// The `Var(var)` node in a top-level expression of `s`, if any, and
/// whether C evaluates it only conditionally.
fn find_top_use(f: &Function, s: &crate::ir::Stmt, var: VarId) -> Option<(ExprId, bool)> {
    let mut found = None;
    top_exprs(s, &mut |x, is_place| {
        if found.is_none() {
            found = if is_place {
                let mut r = None;
                f.for_each_child(x, |c| r = r.or_else(|| find_var(f, c, var, false)));
                r
            } else {
                find_var(f, x, var, false)
            };
        }
    });
    found
}

fn find_var(f: &Function, x: ExprId, var: VarId, conditional: bool) -> Option<(ExprId, bool)> {
    match &f.exprs[x].kind {
        Expr::Var(v) => (*v == var).then_some((x, conditional)),
        Expr::Binary(BinOp::And | BinOp::Or, a, b) => {
            find_var(f, *a, var, conditional).or_else(|| find_var(f, *b, var, true))
        }
        Expr::Select(c, a, b) => find_var(f, *c, var, conditional)
            .or_else(|| find_var(f, *a, var, true))
            .or_else(|| find_var(f, *b, var, true)),
        _ => {
            let mut r = None;
            f.for_each_child(x, |c| r = r.or_else(|| find_var(f, c, var, conditional)));
            r
        }
    }
}
