//! The reference: a direct evaluator of the AST in plain Rust (wrapping
//! `i32` arithmetic), whose results every extraction must reproduce.

use crate::fuzz_programs::language::{
    Adapter, AdapterKind, BinOp, Bind, Bound, CmpOp, Cond, Decide, Expr, Flow, Hidden, Init,
    Machine, Mutation, PlainState, Program, Read, Source, Stmt, STACK_CAP, VARS,
};

fn bin(op: BinOp, a: i32, b: i32) -> i32 {
    match op {
        BinOp::Add => a.wrapping_add(b),
        BinOp::Sub => a.wrapping_sub(b),
        BinOp::Mul => a.wrapping_mul(b),
        BinOp::And => a & b,
        BinOp::Or => a | b,
        BinOp::Xor => a ^ b,
    }
}

fn cmp(op: CmpOp, a: i32, b: i32) -> bool {
    match op {
        CmpOp::Lt => a < b,
        CmpOp::Le => a <= b,
        CmpOp::Gt => a > b,
        CmpOp::Ge => a >= b,
        CmpOp::Eq => a == b,
        CmpOp::Ne => a != b,
    }
}

/// `v = op(k, v)`: the operation a plain `k` decides (`Decide::Op`).
pub(crate) fn op(k: i32, v: i32) -> i32 {
    match k.rem_euclid(3) {
        0 => v.wrapping_add(k),
        1 => v.wrapping_mul(2).wrapping_sub(k),
        _ => v ^ k.wrapping_mul(5).wrapping_add(1),
    }
}

fn push(stack: &mut Vec<i32>, c: i32) {
    if stack.len() == STACK_CAP {
        stack.remove(0);
    }
    stack.push(c);
}

fn mutate(st: &mut PlainState, m: Mutation) {
    match m {
        Mutation::Push(c) => push(&mut st.stack, c),
        Mutation::Pop => {
            st.stack.pop();
        }
        Mutation::Truncate(n) => st.stack.truncate(n),
        Mutation::Take => st.slot = None,
        Mutation::GetOrInsert(c) => {
            if st.slot.is_none() {
                st.slot = Some(c);
            }
        }
        Mutation::Replace(c) => st.slot = Some(c),
        Mutation::Insert(k, c) => {
            st.map.insert(k, c);
        }
        Mutation::Remove(k) => {
            st.map.remove(&k);
        }
        Mutation::Mark(k) => {
            st.set.insert(k);
        }
        Mutation::Unmark(k) => {
            st.set.remove(&k);
        }
        Mutation::Bump(by, period) => st.phase = (st.phase + by) % period,
    }
}

fn source(st: &PlainState, src: Source) -> i32 {
    match src {
        Source::Plain => st.plain,
        Source::Len => st.stack.len() as i32,
        Source::Top => st.stack.last().copied().unwrap_or(-1),
        Source::Slot => st.slot.unwrap_or(-2),
        Source::Get(k) => st.map.get(&k).copied().unwrap_or(0),
        Source::Keys => st.map.len() as i32,
        Source::Has(k) => i32::from(st.set.contains(&k)),
        Source::Phase => st.phase,
    }
}

/// One call of an adapter's closure, as the adapter sees it.
enum Call {
    /// The condition was decided.
    Go(bool),
    /// The body ended the call (`continue`), or an earlier call ended the
    /// adapter.
    Skip,
    /// The body ended the adapter (`break`, `return`).
    Stop,
}

struct Reference {
    vars: Vec<i32>,
    params: [i32; 2],
    st: PlainState,
}

impl Reference {
    fn expr(&self, e: &Expr) -> i32 {
        match e {
            Expr::Var(v) => self.vars[*v],
            Expr::Param(p) => self.params[*p],
            Expr::Const(c) => *c,
            Expr::Bin(op, a, b) => bin(*op, self.expr(a), self.expr(b)),
        }
    }

    fn cond(&self, c: &Cond) -> bool {
        match c {
            Cond::Cmp(op, a, b) => cmp(*op, self.expr(a), self.expr(b)),
            Cond::Not(c) => !self.cond(c),
            Cond::And(a, b) => self.cond(a) && self.cond(b),
            Cond::Or(a, b) => self.cond(a) || self.cond(b),
        }
    }

    fn stmt(&mut self, s: &Stmt) -> Flow<i32> {
        match s {
            Stmt::Assign(v, e) => self.vars[*v] = self.expr(e),
            Stmt::If(c, t, e) => {
                return if self.cond(c) {
                    self.stmt(t)
                } else {
                    self.stmt(e)
                }
            }
            Stmt::While {
                counter,
                bound,
                body,
            } => {
                self.vars[*counter] = 0;
                let bound = match bound {
                    Bound::Param(p) => self.params[*p],
                    Bound::Const(c) => *c,
                };
                while self.vars[*counter] < bound {
                    self.vars[*counter] += 1;
                    match self.stmt(body) {
                        Flow::Normal | Flow::Continue => {}
                        Flow::Break => break,
                        r @ Flow::Return(_) => return r,
                    }
                }
            }
            Stmt::Break => return Flow::Break,
            Stmt::Continue => return Flow::Continue,
            Stmt::Return(e) => return Flow::Return(self.expr(e)),
            Stmt::Block(ss) => {
                for s in ss {
                    match self.stmt(s) {
                        Flow::Normal => {}
                        other => return other,
                    }
                }
            }
            Stmt::Repeat(k, body) | Stmt::StaticRepeat(k, body) => {
                for _ in 0..*k {
                    match self.stmt(body) {
                        Flow::Normal => {}
                        other => return other,
                    }
                }
            }
            Stmt::PlainLoop(k, body) => {
                for _ in 0..*k {
                    match self.stmt(body) {
                        Flow::Normal | Flow::Continue => {}
                        Flow::Break => break,
                        r @ Flow::Return(_) => return r,
                    }
                }
            }
            Stmt::SetPlain(c) => self.st.plain = *c,
            Stmt::UsePlain(v) => self.vars[*v] = self.vars[*v].wrapping_add(self.st.plain),
            Stmt::Mutate(m, _) => mutate(&mut self.st, *m),
            Stmt::Branch(c, t, e, _) => {
                let m = if self.cond(c) { t } else { e };
                mutate(&mut self.st, *m);
            }
            Stmt::Use(src, v, how) => {
                let k = source(&self.st, *src);
                self.decide(*v, k, *how);
            }
            Stmt::Machine {
                counter,
                bound,
                machine,
                var,
                body,
                tail: _,
            } => {
                self.vars[*counter] = 0;
                let bound = match bound {
                    Bound::Param(p) => self.params[*p],
                    Bound::Const(c) => *c,
                };
                let mut ring = match machine {
                    Machine::Ring(r) => r.clone(),
                    _ => Vec::new(),
                };
                let (mut slot, mut phase) = (None, 0);
                while self.vars[*counter] < bound {
                    self.vars[*counter] += 1;
                    let k = match machine {
                        Machine::Ring(_) => {
                            let first = ring.remove(0);
                            ring.push(first);
                            ring[0]
                        }
                        Machine::Toggle(c) => {
                            slot = if slot.is_none() { Some(*c) } else { None };
                            slot.unwrap_or(-1)
                        }
                        Machine::Counter(by, period) => {
                            phase = (phase + by) % period;
                            phase
                        }
                    };
                    self.vars[*var] = op(k, self.vars[*var]);
                    match self.stmt(body) {
                        Flow::Normal | Flow::Continue => {}
                        Flow::Break => break,
                        r @ Flow::Return(_) => return r,
                    }
                }
            }
            Stmt::Adapter(a) => return self.adapter(a),
            Stmt::Hidden(h) => return self.hidden(h),
        }
        Flow::Normal
    }

    /// `v`'s new value as the plain `k` decides it (`how`).
    fn decide(&mut self, v: usize, k: i32, how: Decide) {
        let x = self.vars[v];
        self.vars[v] = match how {
            Decide::Op => op(k, x),
            Decide::Branch if k & 1 == 1 => {
                if x < k {
                    x.wrapping_add(1)
                } else {
                    x.wrapping_sub(k)
                }
            }
            Decide::Branch => x ^ k,
            Decide::Bound => {
                (1..=k.rem_euclid(4)).fold(x, |x, t| x.wrapping_mul(3).wrapping_add(t))
            }
            Decide::Nested => {
                let [a, b] = self.params;
                match (a < b, b < 0) {
                    (true, true) => x.wrapping_add(1),
                    (true, false) => op(k, x),
                    (false, _) => x,
                }
            }
        };
    }

    /// The key `b` binds (emptying the slot for `TakeSlot`).
    fn bind(&mut self, b: &Bind) -> i32 {
        let held = b.cond().is_some_and(|c| self.cond(c));
        let slot = match b {
            Bind::TakeSlot => self.st.slot.take(),
            _ => None,
        };
        b.key(held, slot)
    }

    fn hidden(&mut self, h: &Hidden) -> Flow<i32> {
        let mut key = self.bind(&h.first);
        match self.stmt(&h.between) {
            Flow::Normal => {}
            other => return other,
        }
        if let Some(b) = &h.second {
            key = key.wrapping_mul(10).wrapping_add(self.bind(b));
        }
        match self.stmt(&h.after) {
            Flow::Normal => {}
            other => return other,
        }
        match &h.read {
            Read::Decide(how) => self.decide(h.var, key, *how),
            Read::Guarded(c, target) => {
                if self.cond(c) && key == *target {
                    self.vars[h.var] = self.vars[h.var].wrapping_add(100);
                }
            }
        }
        Flow::Normal
    }

    /// One call of `a`'s closure (see [`Adapter`]).
    fn call(&mut self, a: &Adapter, i: u32, exit: &mut Option<Flow<i32>>) -> Call {
        if exit.is_some() {
            return Call::Skip;
        }
        self.vars[a.counter] = i as i32 + 1;
        match self.stmt(&a.body) {
            Flow::Normal => Call::Go(self.cond(&a.cond)),
            Flow::Continue => Call::Skip,
            f => {
                *exit = Some(f);
                Call::Stop
            }
        }
    }

    fn adapter(&mut self, a: &Adapter) -> Flow<i32> {
        let mut exit = None;
        let x = a.var;
        let found = match a.kind {
            AdapterKind::ForEach => {
                for i in 0..a.k {
                    if let Call::Go(true) = self.call(a, i, &mut exit) {
                        self.vars[x] = self.vars[x].wrapping_add(i as i32 + 1);
                    }
                }
                None
            }
            AdapterKind::TryForEach => {
                let mut stopped = false;
                for i in 0..a.k {
                    match self.call(a, i, &mut exit) {
                        Call::Go(true) | Call::Stop => {
                            stopped = true;
                            break;
                        }
                        Call::Go(false) => self.vars[x] ^= i as i32 + 1,
                        Call::Skip => {}
                    }
                }
                Some(i32::from(stopped))
            }
            AdapterKind::Any | AdapterKind::Position => {
                let mut at = -1;
                for i in 0..a.k {
                    if let Call::Go(true) | Call::Stop = self.call(a, i, &mut exit) {
                        at = i as i32;
                        break;
                    }
                }
                Some(if a.kind == AdapterKind::Any {
                    i32::from(at >= 0)
                } else {
                    at
                })
            }
            AdapterKind::All => {
                let mut all = true;
                for i in 0..a.k {
                    if let Call::Go(false) | Call::Stop = self.call(a, i, &mut exit) {
                        all = false;
                        break;
                    }
                }
                Some(i32::from(all))
            }
            AdapterKind::Count | AdapterKind::Fold | AdapterKind::MapSum => {
                let mut acc = 0i32;
                for i in 0..a.k {
                    let held = match self.call(a, i, &mut exit) {
                        Call::Go(b) => Some(b),
                        Call::Skip | Call::Stop => None,
                    };
                    acc = match (a.kind, held) {
                        (AdapterKind::Count, Some(true)) => acc + 1,
                        (AdapterKind::Fold, Some(true)) => acc + 2,
                        (AdapterKind::Fold, Some(false)) => acc - 1,
                        (AdapterKind::MapSum, Some(true)) => acc + i as i32 + 1,
                        _ => acc,
                    };
                }
                Some(acc)
            }
            AdapterKind::MapCollect => {
                let mut vals = Vec::new();
                for i in 0..a.k {
                    let d = match self.call(a, i, &mut exit) {
                        Call::Go(true) => self.vars[x].wrapping_add(i as i32 + 1),
                        Call::Go(false) => self.vars[x].wrapping_mul(3),
                        Call::Skip | Call::Stop => i as i32,
                    };
                    vals.push(d);
                }
                for d in vals {
                    self.vars[x] = self.vars[x].wrapping_mul(5).wrapping_add(d);
                }
                None
            }
        };
        if let Some(r @ Flow::Return(_)) = exit {
            return r;
        }
        if let Some(r) = found {
            self.vars[x] = op(r, self.vars[x]);
            self.st.slot = Some(r & 1);
        }
        Flow::Normal
    }
}

/// What a program returns when it does not `return`: every variable,
/// counters included, folded together.
fn combine(vars: &[i32]) -> i32 {
    vars.iter()
        .fold(17i32, |h, &v| h.wrapping_mul(31).wrapping_add(v))
}

fn initial(p: &Program, params: [i32; 2]) -> Vec<i32> {
    let mut vars: Vec<i32> = p
        .inits
        .iter()
        .map(|i| match i {
            Init::Zero => 0,
            Init::Param(k) => params[*k],
            Init::Const(c) => *c,
        })
        .collect();
    vars.resize(VARS + p.counters, 0);
    vars
}

pub(crate) fn evaluate(p: &Program, a: i32, b: i32) -> i32 {
    let mut r = Reference {
        vars: initial(p, [a, b]),
        params: [a, b],
        st: PlainState::default(),
    };
    match r.stmt(&p.body) {
        Flow::Return(v) => v,
        _ => combine(&r.vars),
    }
}
