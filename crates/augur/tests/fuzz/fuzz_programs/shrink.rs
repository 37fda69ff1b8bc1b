//! Shrinking: greedy, one simplification at a time, kept while the program
//! still fails in the same way (and not with the documented limit); plus
//! the size and validity measures of a program body.

use crate::fuzz_programs::check::{check_program, documented_limit, Failure};
use crate::fuzz_programs::language::{
    Adapter, AdapterKind, Bind, Bound, ClosureForm, Cond, Decide, Expr, Hidden, Init, Machine,
    Pass, Program, Read, Stmt, VARS,
};
use crate::fuzz_programs::staged::Walk;

fn exprs_smaller(e: &Expr) -> Vec<Expr> {
    let mut out = Vec::new();
    if let Expr::Bin(op, a, b) = e {
        out.push((**a).clone());
        out.push((**b).clone());
        for x in exprs_smaller(a) {
            out.push(Expr::Bin(*op, Box::new(x), b.clone()));
        }
        for y in exprs_smaller(b) {
            out.push(Expr::Bin(*op, a.clone(), Box::new(y)));
        }
    }
    if !matches!(e, Expr::Const(0)) {
        out.push(Expr::Const(0));
    }
    out
}

fn conds_smaller(c: &Cond) -> Vec<Cond> {
    let mut out = Vec::new();
    match c {
        Cond::Cmp(op, a, b) => {
            for x in exprs_smaller(a) {
                out.push(Cond::Cmp(*op, x, b.clone()));
            }
            for y in exprs_smaller(b) {
                out.push(Cond::Cmp(*op, a.clone(), y));
            }
        }
        Cond::Not(x) => {
            out.push((**x).clone());
            out.extend(conds_smaller(x).into_iter().map(|x| Cond::Not(Box::new(x))));
        }
        Cond::And(x, y) | Cond::Or(x, y) => {
            out.push((**x).clone());
            out.push((**y).clone());
        }
    }
    out
}

/// Simpler variants of a binding: an arm of a `match` for one of an
/// `if let` or a `while let` (the same form, plainer), smaller conditions.
fn binds_smaller(b: &Bind) -> Vec<Bind> {
    let Some(c) = b.cond() else {
        return vec![];
    };
    let mut out = Vec::new();
    if let Bind::Pass(c, x, y, Pass::Field | Pass::IfLet | Pass::WhileLet, typed) = b {
        out.push(Bind::Pass(c.clone(), *x, *y, Pass::Match, *typed));
    }
    out.extend(conds_smaller(c).into_iter().map(|c| match *b {
        Bind::Call(_, x, y, staged) => Bind::Call(c, x, y, staged),
        Bind::Bool(_) => Bind::Bool(c),
        Bind::Tuple(_, x, y) => Bind::Tuple(c, x, y),
        Bind::Reset(_, x) => Bind::Reset(c, x),
        Bind::Take(_, x) => Bind::Take(c, x),
        Bind::TakeSlot => Bind::TakeSlot,
        Bind::Weight(_, x, y, above) => Bind::Weight(c, x, y, above),
        Bind::Pass(_, x, y, how, typed) => Bind::Pass(c, x, y, how, typed),
        Bind::Struct(_, x, y, hash) => Bind::Struct(c, x, y, hash),
        Bind::MutStruct(_, x, hash) => Bind::MutStruct(c, x, hash),
    }));
    out
}

/// Simpler variants of a `Hidden`: a binding fewer, the bodies alone or
/// smaller, a plainer read.
fn hidden_smaller(h: &Hidden) -> Vec<Stmt> {
    let with = |f: &dyn Fn(&mut Hidden)| {
        let mut g = h.clone();
        f(&mut g);
        Stmt::Hidden(Box::new(g))
    };
    let mut out = vec![
        h.between.clone(),
        h.after.clone(),
        Stmt::Block(vec![h.between.clone(), h.after.clone()]),
    ];
    if h.second.is_some() {
        out.push(with(&|g| g.second = None));
    }
    if h.read != Read::Decide(Decide::Op) {
        out.push(with(&|g| g.read = Read::Decide(Decide::Op)));
    }
    if let Read::Guarded(c, t) = &h.read {
        for c2 in conds_smaller(c) {
            out.push(with(&|g| g.read = Read::Guarded(c2.clone(), *t)));
        }
    }
    for b in binds_smaller(&h.first) {
        out.push(with(&|g| g.first = b.clone()));
    }
    if let Some(second) = &h.second {
        for b in binds_smaller(second) {
            out.push(with(&|g| g.second = Some(b.clone())));
        }
    }
    for b in stmts_smaller(&h.between) {
        out.push(with(&|g| g.between = b.clone()));
    }
    for a in stmts_smaller(&h.after) {
        out.push(with(&|g| g.after = a.clone()));
    }
    out
}

/// Simpler variants of a statement: removed children, unwrapped bodies,
/// smaller counts and expressions.
fn stmts_smaller(s: &Stmt) -> Vec<Stmt> {
    let mut out = Vec::new();
    let boxed = |s: Stmt| Box::new(s);
    match s {
        Stmt::Assign(v, e) => out.extend(exprs_smaller(e).into_iter().map(|e| Stmt::Assign(*v, e))),
        Stmt::Return(e) => out.extend(exprs_smaller(e).into_iter().map(Stmt::Return)),
        Stmt::Break | Stmt::Continue => {}
        Stmt::If(c, t, e) => {
            out.push((**t).clone());
            out.push((**e).clone());
            for c2 in conds_smaller(c) {
                out.push(Stmt::If(c2, t.clone(), e.clone()));
            }
            for t2 in stmts_smaller(t) {
                out.push(Stmt::If(c.clone(), boxed(t2), e.clone()));
            }
            for e2 in stmts_smaller(e) {
                out.push(Stmt::If(c.clone(), t.clone(), boxed(e2)));
            }
        }
        Stmt::While {
            counter,
            bound,
            body,
        } => {
            out.push((**body).clone());
            if *bound != Bound::Const(1) {
                out.push(Stmt::While {
                    counter: *counter,
                    bound: Bound::Const(1),
                    body: body.clone(),
                });
            }
            for b2 in stmts_smaller(body) {
                out.push(Stmt::While {
                    counter: *counter,
                    bound: *bound,
                    body: boxed(b2),
                });
            }
        }
        Stmt::Block(ss) => {
            if ss.len() == 1 {
                out.push(ss[0].clone());
            }
            for i in 0..ss.len() {
                let mut v = ss.clone();
                v.remove(i);
                out.push(Stmt::Block(v));
            }
            for i in 0..ss.len() {
                for s2 in stmts_smaller(&ss[i]) {
                    let mut v = ss.clone();
                    v[i] = s2;
                    out.push(Stmt::Block(v));
                }
            }
        }
        Stmt::SetPlain(_) | Stmt::UsePlain(_) | Stmt::Mutate(..) => {}
        Stmt::Branch(c, t, e, tail) => {
            out.push(Stmt::Mutate(*t, *tail));
            out.push(Stmt::Mutate(*e, *tail));
            for c2 in conds_smaller(c) {
                out.push(Stmt::Branch(c2, *t, *e, *tail));
            }
        }
        Stmt::Use(src, x, how) => {
            if *how != Decide::Op {
                out.push(Stmt::Use(*src, *x, Decide::Op));
            }
        }
        Stmt::Machine {
            counter,
            bound,
            machine,
            var,
            body,
            tail,
        } => {
            let make = |bound: Bound, machine: Machine, body: Box<Stmt>| Stmt::Machine {
                counter: *counter,
                bound,
                machine,
                var: *var,
                body,
                tail: *tail,
            };
            out.push((**body).clone());
            out.push(Stmt::While {
                counter: *counter,
                bound: *bound,
                body: body.clone(),
            });
            if *bound != Bound::Const(1) {
                out.push(make(Bound::Const(1), machine.clone(), body.clone()));
            }
            if let Machine::Ring(r) = machine {
                if r.len() > 1 {
                    out.push(make(
                        *bound,
                        Machine::Ring(r[..r.len() - 1].to_vec()),
                        body.clone(),
                    ));
                }
            }
            for b2 in stmts_smaller(body) {
                out.push(make(*bound, machine.clone(), boxed(b2)));
            }
        }
        Stmt::Adapter(a) => {
            let with = |f: &dyn Fn(&mut Adapter)| {
                let mut b = (**a).clone();
                f(&mut b);
                Stmt::Adapter(Box::new(b))
            };
            out.push(a.body.clone());
            if a.k > 2 {
                out.push(with(&|b| b.k = a.k / 2));
            }
            if a.k > 0 {
                out.push(with(&|b| b.k = a.k - 1));
            }
            if a.form != ClosureForm::Inline {
                out.push(with(&|b| b.form = ClosureForm::Inline));
            }
            if a.kind != AdapterKind::ForEach {
                out.push(with(&|b| b.kind = AdapterKind::ForEach));
            }
            for c2 in conds_smaller(&a.cond) {
                out.push(with(&|b| b.cond = c2.clone()));
            }
            for b2 in stmts_smaller(&a.body) {
                out.push(with(&|b| b.body = b2.clone()));
            }
        }
        Stmt::Hidden(h) => out.extend(hidden_smaller(h)),
        Stmt::Repeat(k, body) | Stmt::StaticRepeat(k, body) | Stmt::PlainLoop(k, body) => {
            let make = |k: u32, b: Box<Stmt>| match s {
                Stmt::Repeat(..) => Stmt::Repeat(k, b),
                Stmt::PlainLoop(..) => Stmt::PlainLoop(k, b),
                _ => Stmt::StaticRepeat(k, b),
            };
            if *k > 2 {
                out.push(make(k / 2, body.clone()));
            }
            if !matches!(s, Stmt::PlainLoop(..)) {
                out.push((**body).clone());
            }
            if *k > 1 {
                out.push(make(k - 1, body.clone()));
            }
            if matches!(s, Stmt::Repeat(..)) {
                out.push(Stmt::StaticRepeat(*k, body.clone()));
            }
            for b2 in stmts_smaller(body) {
                out.push(make(*k, boxed(b2)));
            }
        }
    }
    out
}

/// `break`/`continue` only inside a `while` (the shrinker may unwrap one).
pub(crate) fn valid(s: &Stmt, in_loop: bool) -> bool {
    match s {
        Stmt::Break | Stmt::Continue => in_loop,
        Stmt::Assign(..)
        | Stmt::Return(_)
        | Stmt::SetPlain(_)
        | Stmt::UsePlain(_)
        | Stmt::Mutate(..)
        | Stmt::Branch(..)
        | Stmt::Use(..) => true,
        Stmt::If(_, t, e) => valid(t, in_loop) && valid(e, in_loop),
        Stmt::While { body, .. } | Stmt::PlainLoop(_, body) | Stmt::Machine { body, .. } => {
            valid(body, true)
        }
        // A named closure walks no body; a helper calls only `ForEach` and
        // `TryForEach` closures.
        Stmt::Adapter(a) => {
            valid(&a.body, true)
                && match a.form {
                    ClosureForm::Inline => true,
                    ClosureForm::Named => {
                        a.body == Stmt::Block(vec![])
                            && matches!(
                                a.kind,
                                AdapterKind::ForEach | AdapterKind::Any | AdapterKind::Count
                            )
                    }
                    ClosureForm::Helper => {
                        matches!(a.kind, AdapterKind::ForEach | AdapterKind::TryForEach)
                    }
                }
        }
        Stmt::Block(ss) => ss.iter().all(|s| valid(s, in_loop)),
        Stmt::Repeat(_, b) | Stmt::StaticRepeat(_, b) => valid(b, in_loop),
        Stmt::Hidden(h) => valid(&h.between, in_loop) && valid(&h.after, in_loop),
    }
}

pub(crate) fn size(s: &Stmt) -> usize {
    match s {
        Stmt::If(_, t, e) => 1 + size(t) + size(e),
        Stmt::While { body, .. }
        | Stmt::Repeat(_, body)
        | Stmt::StaticRepeat(_, body)
        | Stmt::PlainLoop(_, body)
        | Stmt::Machine { body, .. } => 1 + size(body),
        Stmt::Adapter(a) => 1 + size(&a.body),
        Stmt::Hidden(h) => 1 + size(&h.between) + size(&h.after),
        Stmt::Block(ss) => ss.iter().map(size).sum(),
        _ => 1,
    }
}

/// How long one failure may be shrunk, in seconds (`AUGUR_FUZZ_SHRINK_SECS`
/// sets it: a program near a limit takes seconds to check).
const SHRINK_SECS: u64 = 60;

/// The smallest variant of `p` found greedily that still fails in the same
/// way as `first`.
pub(crate) fn shrink(p: &Program, walk: Walk, compile: bool, first: Failure) -> (Program, Failure) {
    let kind = first.kind.clone();
    let same = |q: &Program, f: &Failure| f.kind == kind && !documented_limit(q, walk, f);
    let mut best = p.clone();
    let mut failure = first;
    // Bounded, since a check can take seconds (a run-limit failure).
    let started = std::time::Instant::now();
    let secs = std::env::var("AUGUR_FUZZ_SHRINK_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(SHRINK_SECS);
    let shrink_time = std::time::Duration::from_secs(secs);
    'outer: while started.elapsed() < shrink_time {
        // Fewer variables first: initial values to zero.
        let mut candidates: Vec<Program> = Vec::new();
        for i in 0..VARS {
            if best.inits[i] != Init::Zero {
                let mut q = best.clone();
                q.inits[i] = Init::Zero;
                candidates.push(q);
            }
        }
        for body in stmts_smaller(&best.body) {
            if valid(&body, false) {
                candidates.push(Program {
                    body,
                    ..best.clone()
                });
            }
        }
        for q in candidates {
            if started.elapsed() > shrink_time {
                break 'outer;
            }
            match check_program(&q, walk, compile) {
                Err(f) if same(&q, &f) => {
                    best = q;
                    failure = f;
                    continue 'outer;
                }
                _ => {}
            }
        }
        break;
    }
    (best, failure)
}
