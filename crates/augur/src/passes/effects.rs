//! What statements read, write and call: the facts copy elimination and
//! dead-code removal rely on.

use crate::ir::{Expr, ExprId, Function, Stmt, StmtKind, VarId};

/// Effects of a statement (including nested blocks).
#[derive(Clone, Debug)]
pub struct Effects {
    /// Variables assigned or declared: the first `written` entries (at
    /// most [`WRITES_KEPT`], kept inline: copy elimination sums one per
    /// statement; see `many_writes`).
    writes: [VarId; WRITES_KEPT],
    written: u8,
    /// Writes more variables than `writes` lists: assume it writes any.
    pub many_writes: bool,
    /// Stores through pointers or into arrays.
    pub writes_memory: bool,
    /// Contains a call (which may write memory and address-taken variables).
    pub calls: bool,
    /// Contains `break`, `continue`, `return` or `goto`.
    pub jumps: bool,
}

/// How many written variables an [`Effects`] lists before it gives up and
/// sets `many_writes`. Keeps the summaries of compound statements small, so
/// that summing them up level by level stays linear in deep nests (a state
/// machine's copies of a loop body nest one `if` per copy).
pub const WRITES_KEPT: usize = 16;

impl Default for Effects {
    fn default() -> Effects {
        Effects {
            writes: [VarId(0); WRITES_KEPT],
            written: 0,
            many_writes: false,
            writes_memory: false,
            calls: false,
            jumps: false,
        }
    }
}

impl Effects {
    /// True if this writes any of `vars`.
    pub fn writes_any(&self, vars: &[VarId]) -> bool {
        !vars.is_empty() && (self.many_writes || self.written().iter().any(|w| vars.contains(w)))
    }

    fn written(&self) -> &[VarId] {
        &self.writes[..self.written as usize]
    }

    /// Adds what `other` does.
    pub fn merge(&mut self, other: &Effects) {
        self.writes_memory |= other.writes_memory;
        self.calls |= other.calls;
        self.jumps |= other.jumps;
        self.many_writes |= other.many_writes;
        for &w in other.written() {
            self.write(w);
        }
    }

    fn write(&mut self, v: VarId) {
        if self.many_writes || self.written().contains(&v) {
            return;
        }
        if self.written as usize == WRITES_KEPT {
            self.many_writes = true;
            self.written = 0;
        } else {
            self.writes[self.written as usize] = v;
            self.written += 1;
        }
    }
}

/// The effects of `s` itself, without the statements of its nested blocks
/// (a `for`'s init and step included): callers that walk the nested blocks
/// anyway merge their effects in.
pub fn shallow(f: &Function, s: &Stmt) -> Effects {
    let mut e = Effects::default();
    add(f, s, &mut e);
    e
}

fn add(f: &Function, s: &Stmt, e: &mut Effects) {
    let expr = |x: ExprId, e: &mut Effects| e.calls |= f.has_call(x);
    match &s.kind {
        StmtKind::Decl { var, init } => {
            e.write(*var);
            // Reads through `&var` see this write.
            e.writes_memory |= f.vars[*var].addr_taken;
            if let Some(i) = init {
                expr(*i, e);
            }
        }
        StmtKind::Assign { place, value } => {
            match f.exprs[*place].kind {
                Expr::Var(v) => {
                    e.write(v);
                    e.writes_memory |= f.vars[v].addr_taken;
                }
                _ => {
                    e.writes_memory = true;
                    // `s.x = ..` writes the struct variable `s` too.
                    if let Some(v) = struct_root(f, *place) {
                        e.write(v);
                    }
                }
            }
            expr(*place, e);
            expr(*value, e);
        }
        StmtKind::Eval(x) => expr(*x, e),
        StmtKind::If { cond, .. } | StmtKind::While { cond, .. } => expr(*cond, e),
        StmtKind::For {
            init, cond, step, ..
        } => {
            add(f, init, e);
            expr(*cond, e);
            add(f, step, e);
        }
        StmtKind::Return(x) => {
            e.jumps = true;
            if let Some(x) = x {
                expr(*x, e);
            }
        }
        StmtKind::Break | StmtKind::Continue | StmtKind::Goto(_) => e.jumps = true,
        // A launch declares its indices; its body's effects are its blocks'.
        StmtKind::Launch(l) => {
            e.write(l.bid);
            e.write(l.tid);
        }
        StmtKind::Label(_) => {}
    }
}

/// The variable a field place `s.a.b` lies in, if any.
fn struct_root(f: &Function, place: ExprId) -> Option<VarId> {
    match f.exprs[place].kind {
        Expr::Field(b, _) => match f.exprs[b].kind {
            Expr::Var(v) => Some(v),
            _ => struct_root(f, b),
        },
        _ => None,
    }
}

/// Calls `visit` on every expression root of `s` that is evaluated at the
/// statement itself (not in nested blocks, not a `while` condition), with
/// a flag telling whether it is an assignment's place.
pub fn top_exprs(s: &Stmt, visit: &mut impl FnMut(ExprId, bool)) {
    match &s.kind {
        StmtKind::Decl { init: Some(i), .. } => visit(*i, false),
        StmtKind::Assign { place, value } => {
            visit(*place, true);
            visit(*value, false);
        }
        StmtKind::Eval(x) | StmtKind::If { cond: x, .. } | StmtKind::Return(Some(x)) => {
            visit(*x, false)
        }
        _ => {}
    }
}

/// Calls `visit` on every expression root anywhere in `s`, nested blocks
/// included, with the place flag.
pub fn all_exprs(s: &Stmt, visit: &mut impl FnMut(ExprId, bool)) {
    match &s.kind {
        StmtKind::Decl { init: Some(i), .. } => visit(*i, false),
        StmtKind::Decl { init: None, .. } => {}
        StmtKind::Assign { place, value } => {
            visit(*place, true);
            visit(*value, false);
        }
        StmtKind::Eval(x) | StmtKind::Return(Some(x)) => visit(*x, false),
        StmtKind::If { cond, then_, else_ } => {
            visit(*cond, false);
            then_.iter().chain(else_).for_each(|s| all_exprs(s, visit));
        }
        StmtKind::While { cond, body } => {
            visit(*cond, false);
            body.iter().for_each(|s| all_exprs(s, visit));
        }
        StmtKind::Launch(l) => l.body.iter().for_each(|s| all_exprs(s, visit)),
        StmtKind::For {
            init,
            cond,
            step,
            body,
        } => {
            all_exprs(init, visit);
            visit(*cond, false);
            all_exprs(step, visit);
            body.iter().for_each(|s| all_exprs(s, visit));
        }
        StmtKind::Return(None)
        | StmtKind::Break
        | StmtKind::Continue
        | StmtKind::Label(_)
        | StmtKind::Goto(_) => {}
    }
}

/// Counts reads of every variable (an assignment's target variable is a
/// write, not a read).
pub fn read_counts(f: &Function) -> Vec<u32> {
    let mut counts = vec![0u32; f.vars.len()];
    for s in &f.body {
        all_exprs(s, &mut |x, is_place| count(f, x, is_place, &mut counts));
    }
    counts
}

/// An assignment's target variable is a write; any other place (`a[i]`,
/// `*p`, `s.x`) reads what it is built from.
fn count(f: &Function, x: ExprId, is_place: bool, counts: &mut [u32]) {
    if !(is_place && matches!(f.exprs[x].kind, Expr::Var(_))) {
        count_reads(f, x, counts, true);
    }
}

/// Adds the reads of `x` (an expression that is not a place) to `counts`,
/// as [`read_counts`] counts them, or takes them off (`add` false).
pub fn count_reads(f: &Function, x: ExprId, counts: &mut [u32], add: bool) {
    match &f.exprs[x].kind {
        Expr::Var(v) if add => counts[v.0 as usize] += 1,
        Expr::Var(v) => counts[v.0 as usize] -= 1,
        _ => f.for_each_child(x, |c| count_reads(f, c, counts, add)),
    }
}

#[cfg(test)]
mod tests {
    use super::{Effects, WRITES_KEPT};
    use crate::ir::VarId;

    #[test]
    fn a_summary_of_many_writes_writes_anything() {
        let mut inner = Effects::default();
        (0..WRITES_KEPT as u32).for_each(|v| inner.write(VarId(v)));
        assert!(inner.writes_any(&[VarId(3)]));
        assert!(!inner.writes_any(&[VarId(1000)]));
        let mut outer = Effects::default();
        outer.write(VarId(1000));
        outer.merge(&inner);
        assert!(outer.many_writes);
        assert!(
            outer.writes_any(&[VarId(5000)]),
            "past the cap any variable"
        );
        assert!(!outer.writes_any(&[]), "a constant reads nothing");
    }
}
