//! Forward jumps as guards: the forward gotos that splitting and forward breaks
//! leave become assignments to one variable, `jump`, and the code they skip
//! runs only while it is 0.
//!
//! A `goto L` whose label comes later in a statement list enclosing it becomes
//! `jump = k;` (k the label's number). Every statement a set `jump` must skip
//! is guarded: in each list on the way out, the statements after one that may
//! set it run inside `if (jump == 0) { .. }`, a loop body that may end with it
//! set is followed, inside the loop, by `if (jump != 0) break;`, and at the
//! label `if (jump == k) jump = 0;` resumes. (A declaration now in a guard that
//! later code reads is hoisted by the scope repair pass, as for any block.)
//! Between a set and its label the variable is the only state that changes, so
//! every path does what the `goto` did; outside those stretches it is 0. It is
//! declared in the innermost statement list that holds all its uses (in a
//! kernel's loop nest when the jumps are there), or at the top where a `goto`
//! is left that could land past that declaration.
//!
//! Its tests are file tests (`crates/augur/filetests/structure/guards_*.ir`):
//! each runs a function before and after the pass on several inputs.
//!
//! Why: a plain Rust loop unrolled by the first stage whose turns set a plain
//! flag on a dyn branch (`found = true`) gives two chains of turns, one per
//! flag value, with an edge from each turn of the first into the next turn of
//! the second. C says that with one `goto` a turn; gcc -O2's jump threading
//! takes time exponential in the number of such gotos (over half an hour for 62
//! turns), and on the guarded form well under a second, while the code runs as
//! fast (both measured in the closing note of the exact-extraction issue). A
//! `goto` from one side of an `if` into the middle of the other (the jumping
//! side ends in the jump) is made such a jump first, by moving the other side
//! after the `if`. Gotos into loops and backward gotos (irreducible loops)
//! stay.

use crate::ir::{
    BinOp, Block, Const, Expr, ExprId, Function, LabelId, Scalar, Stmt, StmtKind, Type, UnOp,
    VarData, VarId, VarKind,
};
use std::collections::{BTreeSet, HashMap, VecDeque};

/// Rewrites the forward gotos of `func`'s body into guards; returns how
/// many gotos it removed.
pub fn forward_guards(func: &mut Function) -> u64 {
    let mut body = std::mem::take(&mut func.body);
    let mut g = Guards {
        func,
        jump: None,
        numbers: HashMap::new(),
    };
    let removed = g.number(&mut body);
    if removed > 0 {
        let pending = g.guard(&mut body, false);
        debug_assert!(pending.is_empty(), "a forward goto left its function");
        let jump = g.jump.expect("a removed goto set the variable");
        let init = g.int(0);
        let decl = Stmt::new(StmtKind::Decl {
            var: jump,
            init: Some(init),
        });
        let mut targets = Vec::new();
        super::breaks::goto_targets(&body, &mut targets);
        // A `goto` left (into a loop: irreducible flow) may land past a
        // declaration in a nested list, leaving the variable unset: then it
        // is declared where every path passes it, at the top.
        let home = if targets.is_empty() {
            innermost_user(g.func, &mut body, jump)
        } else {
            &mut body
        };
        home.insert(0, decl);
        super::breaks::drop_labels(&mut body, &targets);
    }
    func.body = body;
    removed
}

struct Guards<'a> {
    func: &'a mut Function,
    /// The `jump` variable, made at the first goto removed.
    jump: Option<VarId>,
    /// The labels numbered so far, from 1.
    numbers: HashMap<LabelId, i64>,
}

impl Guards<'_> {
    /// Replaces every `goto L` that sits (at any depth) in a statement
    /// before `L` in one of `b`'s lists with `jump = k;`, numbering `L`;
    /// returns how many it replaced.
    fn number(&mut self, b: &mut Block) -> u64 {
        self.open_branches(b);
        let mut removed = 0;
        for s in b.iter_mut() {
            for inner in s.kind.blocks_mut() {
                removed += self.number(inner);
            }
        }
        // The labels each statement jumps to, found once (a list with
        // thousands of labels, a DFA's, would walk its statements per label).
        let mut jumps: Option<Vec<Vec<LabelId>>> = None;
        for j in 0..b.len() {
            let StmtKind::Label(l) = b[j].kind else {
                continue;
            };
            let jumps =
                jumps.get_or_insert_with(|| b.iter().map(super::breaks::jumps_of).collect());
            let k = self.numbers.len() as i64 + 1;
            let mut n = 0;
            for (s, js) in b[..j].iter_mut().zip(jumps.iter()) {
                if js.binary_search(&l).is_ok() {
                    n += self.replace(s, l, k);
                }
            }
            if n > 0 {
                self.numbers.insert(l, k);
                removed += n;
            }
        }
        removed
    }

    /// Where one side of an `if` ends in a jump and the other holds a label
    /// (the jump's side may `goto` it: into the middle of the other side),
    /// the side with the label follows the `if` instead of sitting in it:
    /// `if (c) { ..; goto L; } else { E; L: .. }` is `if (c) { ..; goto L; }
    /// E; L: ..`, the same code, whose label now sits in a list enclosing
    /// the `goto` (the control cleanup hoists such sides anyway).
    fn open_branches(&mut self, b: &mut Block) {
        let mut i = 0;
        while i < b.len() {
            let StmtKind::If { cond, then_, else_ } = &mut b[i].kind else {
                i += 1;
                continue;
            };
            let rest = if ends_in_jump(then_) && holds_label(else_) {
                std::mem::take(else_)
            } else if ends_in_jump(else_) && holds_label(then_) {
                let c = *cond;
                let ty = Type::Scalar(Scalar::Bool);
                *cond = self.func.expr(Expr::Unary(UnOp::Not, c), ty);
                let jumps = std::mem::take(else_);
                std::mem::replace(then_, jumps)
            } else {
                Vec::new()
            };
            // The statements moved out are looked at in turn (one may be
            // another such `if`).
            i += 1;
            b.splice(i..i, rest);
        }
    }

    /// Replaces each `goto l` in `s` with `jump = k;`.
    fn replace(&mut self, s: &mut Stmt, l: LabelId, k: i64) -> u64 {
        if matches!(s.kind, StmtKind::Goto(m) if m == l) {
            s.kind = self.set(k);
            return 1;
        }
        let mut n = 0;
        for inner in s.kind.blocks_mut() {
            for t in inner.iter_mut() {
                n += self.replace(t, l, k);
            }
        }
        n
    }

    /// Guards the statements of `b` that a set `jump` skips (see the module
    /// docs); returns the numbers that may still be set when `b` ends.
    fn guard(&mut self, b: &mut Block, loop_body: bool) -> BTreeSet<i64> {
        let mut pending = BTreeSet::new();
        let mut out = Vec::with_capacity(b.len());
        let mut group: Block = Vec::new();
        let mut queue: VecDeque<Stmt> = std::mem::take(b).into();
        while let Some(mut s) = queue.pop_front() {
            self.hoist_else(&mut s, &mut queue);
            if let StmtKind::Label(l) = s.kind {
                if let Some(k) = self.number_of(l).filter(|k| pending.contains(k)) {
                    self.flush(&mut group, &mut out);
                    pending.remove(&k);
                    out.push(s);
                    out.push(self.resume(k));
                    continue;
                }
            }
            let sets = self.sets(&mut s);
            if pending.is_empty() {
                out.push(s);
            } else {
                group.push(s);
                if !sets.is_empty() {
                    // What follows must be guarded again: it runs only
                    // while this statement did not set `jump` either.
                    self.flush(&mut group, &mut out);
                }
            }
            pending.extend(sets);
        }
        self.flush(&mut group, &mut out);
        if loop_body && !pending.is_empty() {
            let set = self.compare(BinOp::Ne, 0);
            out.push(Stmt::new(StmtKind::If {
                cond: set,
                then_: vec![Stmt::new(StmtKind::Break)],
                else_: Vec::new(),
            }));
        }
        *b = out;
        pending
    }

    /// `if (c) { ..; jump = k; } else { R }` is `if (c) { ..; jump = k; }`
    /// followed by `R`, which the guards then skip when `jump` is set: a
    /// chain of such jumps stays a flat list, as its gotos were (a `goto`
    /// ends its branch, and the control cleanup hoists what follows), not
    /// one `else` nested in the last.
    fn hoist_else(&self, s: &mut Stmt, queue: &mut VecDeque<Stmt>) {
        let StmtKind::If { then_, else_, .. } = &mut s.kind else {
            return;
        };
        let then_sets = then_.last().is_some_and(|t| self.set_number(t).is_some());
        if else_.is_empty() || !then_sets {
            return;
        }
        for t in std::mem::take(else_).into_iter().rev() {
            queue.push_front(t);
        }
    }

    /// The numbers `s` may leave with `jump` set to, guarding inside it.
    fn sets(&mut self, s: &mut Stmt) -> BTreeSet<i64> {
        if let Some(k) = self.set_number(s) {
            return BTreeSet::from([k]);
        }
        let is_loop = matches!(s.kind, StmtKind::While { .. } | StmtKind::For { .. });
        let mut sets = BTreeSet::new();
        for inner in s.kind.blocks_mut() {
            sets.extend(self.guard(inner, is_loop));
        }
        sets
    }

    /// Ends a guarded group: `if (jump == 0) { group }`. A declaration in
    /// it that a later statement reads is hoisted by scope repair.
    fn flush(&mut self, group: &mut Block, out: &mut Block) {
        if group.is_empty() {
            return;
        }
        let cond = self.compare(BinOp::Eq, 0);
        out.push(Stmt::new(StmtKind::If {
            cond,
            then_: std::mem::take(group),
            else_: Vec::new(),
        }));
    }

    fn number_of(&self, l: LabelId) -> Option<i64> {
        self.numbers.get(&l).copied()
    }

    /// `k` if `s` is `jump = k;`.
    fn set_number(&self, s: &Stmt) -> Option<i64> {
        let StmtKind::Assign { place, value } = s.kind else {
            return None;
        };
        match (&self.func.exprs[place].kind, &self.func.exprs[value].kind) {
            (Expr::Var(v), Expr::Const(Const::Int(k))) if Some(*v) == self.jump => Some(*k),
            _ => None,
        }
    }

    /// `jump = k;`
    fn set(&mut self, k: i64) -> StmtKind {
        let jump = self.jump();
        let place = self.func.expr(Expr::Var(jump), int_ty());
        let value = self.int(k);
        StmtKind::Assign { place, value }
    }

    /// `if (jump == k) jump = 0;`
    fn resume(&mut self, k: i64) -> Stmt {
        let cond = self.compare(BinOp::Eq, k);
        Stmt::new(StmtKind::If {
            cond,
            then_: vec![Stmt::new(self.set(0))],
            else_: Vec::new(),
        })
    }

    /// `jump op k`.
    fn compare(&mut self, op: BinOp, k: i64) -> ExprId {
        let jump = self.jump();
        let var = self.func.expr(Expr::Var(jump), int_ty());
        let k = self.int(k);
        self.func
            .expr(Expr::Binary(op, var, k), Type::Scalar(Scalar::Bool))
    }

    fn int(&mut self, k: i64) -> ExprId {
        self.func.expr(Expr::Const(Const::Int(k)), int_ty())
    }

    fn jump(&mut self) -> VarId {
        *self.jump.get_or_insert_with(|| {
            self.func.vars.push(VarData {
                ty: int_ty(),
                kind: VarKind::Local,
                hint: Some("jump".into()),
                name: None,
                addr_taken: false,
                loc: None,
            })
        })
    }
}

/// The innermost statement list that holds every use of `jump`, where it
/// is declared when no `goto` is left: inside a kernel's loop nest when the
/// jumps are (a kernel writes no host variable), and in a loop body at most
/// once a turn, where it is 0 at every turn's start anyway.
fn innermost_user<'b>(f: &Function, b: &'b mut Block, jump: VarId) -> &'b mut Block {
    let users: Vec<usize> = (0..b.len()).filter(|&i| uses(f, &b[i], jump)).collect();
    if let [i] = users[..] {
        if !own_exprs(&b[i]).any(|e| mentions(f, e, jump)) {
            let inner = b[i]
                .kind
                .blocks()
                .filter(|blk| blk.iter().any(|s| uses(f, s, jump)))
                .count();
            if inner == 1 {
                let blk = b[i]
                    .kind
                    .blocks_mut()
                    .find(|blk| blk.iter().any(|s| uses(f, s, jump)))
                    .expect("counted above");
                return innermost_user(f, blk, jump);
            }
        }
    }
    b
}

/// True if `s` reads or writes `v` anywhere in it.
fn uses(f: &Function, s: &Stmt, v: VarId) -> bool {
    own_exprs(s).any(|e| mentions(f, e, v)) || s.kind.blocks().flatten().any(|t| uses(f, t, v))
}

/// The expressions of `s` itself, not of the blocks nested in it.
fn own_exprs(s: &Stmt) -> impl Iterator<Item = ExprId> + '_ {
    let mut out = Vec::new();
    let mut of = |k: &StmtKind| match k {
        StmtKind::Decl { init, .. } => out.extend(*init),
        StmtKind::Assign { place, value } => out.extend([*place, *value]),
        StmtKind::Eval(e) | StmtKind::If { cond: e, .. } | StmtKind::While { cond: e, .. } => {
            out.push(*e)
        }
        StmtKind::Return(e) => out.extend(*e),
        _ => {}
    };
    of(&s.kind);
    if let StmtKind::For {
        init, cond, step, ..
    } = &s.kind
    {
        of(&init.kind);
        of(&step.kind);
        out.push(*cond);
    }
    out.into_iter()
}

/// True if expression `e` reads `v`.
fn mentions(f: &Function, e: ExprId, v: VarId) -> bool {
    match &f.exprs[e].kind {
        Expr::Var(w) => *w == v,
        Expr::Const(_) | Expr::FuncAddr(_) => false,
        Expr::Unary(_, a)
        | Expr::Cast(a)
        | Expr::Deref(a)
        | Expr::AddrOf(a)
        | Expr::Field(a, _) => mentions(f, *a, v),
        Expr::Binary(_, a, b) | Expr::Index(a, b) => mentions(f, *a, v) || mentions(f, *b, v),
        Expr::Select(a, b, c) => [a, b, c].iter().any(|x| mentions(f, **x, v)),
        Expr::Call(_, args) | Expr::Intrinsic(_, args) => args.iter().any(|x| mentions(f, *x, v)),
    }
}

/// True if `b`'s last statement leaves it by a jump: control never falls
/// out of its end.
fn ends_in_jump(b: &Block) -> bool {
    matches!(
        b.last().map(|s| &s.kind),
        Some(StmtKind::Goto(_) | StmtKind::Return(_) | StmtKind::Break | StmtKind::Continue)
    )
}

/// True if a label sits directly in `b`.
fn holds_label(b: &Block) -> bool {
    b.iter().any(|s| matches!(s.kind, StmtKind::Label(_)))
}

fn int_ty() -> Type {
    Type::Scalar(Scalar::I32)
}
