//! The staged interpreter: the same AST walked over `Dyn<i32>` variables,
//! the way a DSL author would write it, under two walks (the *plain* walk,
//! under `#[augur::staged]`, and the *indexed* walk, without it), and which
//! programs need the attribute.

use crate::fuzz_programs::language::{
    Adapter, AdapterKind, BinOp, Bind, Bound, ClosureForm, CmpOp, Cond, Decide, Expr, Flow, Hidden,
    Init, Machine, Mutation, Pass, PlainState, Program, Read, Source, Stmt, STACK_CAP,
};
use augur::Dyn;
use std::ops::ControlFlow;

/// A value chosen by a decision, as a field of what a call returns
/// (`Pass::Field`).
#[derive(Clone, Copy)]
struct Picked {
    k: i32,
}

/// A staged operand: a `Dyn` or a first-stage constant, so that literals end
/// up on either side of operators (`x + 3`, `3 - x`) as they would in
/// hand-written staged code.
#[derive(Clone, Copy)]
enum Val {
    D(Dyn<i32>),
    C(i32),
}

#[augur::staged]
impl Val {
    fn dyn_(self) -> Dyn<i32> {
        match self {
            Val::D(d) => d,
            Val::C(c) => Dyn::lit(c),
        }
    }
}

/// Annotated: both walks call it; an unannotated helper's operations are
/// points where the engine cannot see the plain state, so it would share no
/// code at them even in the annotated walk.
#[augur::staged]
fn staged_bin(op: BinOp, a: Val, b: Val) -> Val {
    macro_rules! apply {
        ($op:tt) => {
            match (a, b) {
                (Val::D(x), Val::D(y)) => x $op y,
                (Val::D(x), Val::C(y)) => x $op y,
                (Val::C(x), Val::D(y)) => x $op y,
                // Two constants: a `Dyn` on the left, so the C does the
                // arithmetic (and the engine sees a literal operand).
                (Val::C(x), Val::C(y)) => Dyn::lit(x) $op y,
            }
        };
    }
    Val::D(match op {
        BinOp::Add => apply!(+),
        BinOp::Sub => apply!(-),
        BinOp::Mul => apply!(*),
        BinOp::And => apply!(&),
        BinOp::Or => apply!(|),
        BinOp::Xor => apply!(^),
    })
}

/// How the staged walk goes through the statements of a block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Walk {
    /// A plain Rust `for`, in functions under `#[augur::staged]`: every
    /// statement of a block is walked from the same call path, so only the
    /// attribute's turn counters tell them apart, and the plain value lives
    /// in tracked locals. Every program must extract exactly.
    Plain,
    /// `augur::range` over the statement index, without the attribute: the
    /// index is part of every tag (like the program counter of a staged
    /// bytecode interpreter), but the walk's frames are not covered, so
    /// under the sound rule (the default) the engine shares no code in it.
    /// Every program must be exact or stop with `Error::Unannotated`.
    Indexed,
    /// The indexed walk with `Builder::trust_unannotated(true)`, the
    /// opt-out: the engine shares code after observing it repeat, and only
    /// `Repeat` leaves it a plain loop to detect by itself. Programs with
    /// plain values or long plain loops are not walked this way (their
    /// plain state is invisible); the others must be exact or stop with the
    /// documented error for a plain loop inside a dyn loop.
    Trusted,
}

/// Everything a walk needs: the variables and parameters.
struct Vars {
    vars: Vec<Dyn<i32>>,
    params: [Dyn<i32>; 2],
}

// Handles only, the same on every path: nothing in it decides code, so a
// `let` bound to one out of a `match` (`stage`) is no state to track.
impl augur::dsl::Visible for Vars {}

#[augur::staged]
impl Vars {
    fn expr(&self, e: &Expr) -> Val {
        match e {
            Expr::Var(v) => Val::D(self.vars[*v]),
            Expr::Param(p) => Val::D(self.params[*p]),
            Expr::Const(c) => Val::C(*c),
            Expr::Bin(op, a, b) => staged_bin(*op, self.expr(a), self.expr(b)),
        }
    }

    fn cond(&self, c: &Cond) -> Dyn<bool> {
        match c {
            Cond::Cmp(op, a, b) => {
                let (a, b) = (self.expr(a).dyn_(), self.expr(b));
                macro_rules! with_rhs {
                    ($m:ident) => {
                        match b {
                            Val::D(y) => a.$m(y),
                            Val::C(y) => a.$m(y),
                        }
                    };
                }
                match op {
                    CmpOp::Lt => with_rhs!(lt),
                    CmpOp::Le => with_rhs!(le),
                    CmpOp::Gt => with_rhs!(gt),
                    CmpOp::Ge => with_rhs!(ge),
                    CmpOp::Eq => with_rhs!(eq),
                    CmpOp::Ne => with_rhs!(ne),
                }
            }
            Cond::Not(c) => !self.cond(c),
            Cond::And(a, b) => self.cond(a).and(self.cond(b)),
            Cond::Or(a, b) => self.cond(a).or(self.cond(b)),
        }
    }

    /// `x = op(k, x)`: the operation the plain `k` decides (`Decide::Op`).
    fn op(&self, x: Dyn<i32>, k: i32) {
        match k.rem_euclid(3) {
            0 => x.set(x + k),
            1 => x.set(x * 2 - k),
            _ => x.set(x ^ k.wrapping_mul(5).wrapping_add(1)),
        }
    }

    /// The code for `x` the plain `k` decides, `how` (as `Use` does).
    fn decide(&self, x: Dyn<i32>, k: i32, how: Decide) {
        match how {
            Decide::Op => self.op(x, k),
            Decide::Branch if k & 1 == 1 => {
                if x.lt(k).is_true() {
                    x.set(x + 1);
                } else {
                    x.set(x - k);
                }
            }
            Decide::Branch => x.set(x ^ k),
            Decide::Nested => {
                let [a, b] = self.params;
                if a.lt(b).is_true() {
                    if b.lt(0).is_true() {
                        x.set(x + 1);
                    } else {
                        self.op(x, k);
                    }
                }
            }
            Decide::Bound => {
                let t = Dyn::new(0);
                while t.lt(k.rem_euclid(4)).is_true() {
                    t.set(t + 1);
                    x.set(x * 3 + t);
                }
            }
        }
    }
}

/// `x` or `y` by `b`, decided inside (`Bind::Call` under the attribute):
/// the decision is the callee's, and the `let` around the call sees it
/// through the value returned.
#[augur::staged]
fn pick(b: Dyn<bool>, x: i32, y: i32) -> i32 {
    if b.is_true() {
        x
    } else {
        y
    }
}

/// `x` or `y` by `b`, decided by the caller, without the attribute.
fn choose(b: bool, x: i32, y: i32) -> i32 {
    if b {
        x
    } else {
        y
    }
}

/// `(x, y)` or `(y, x)` by `b` (`Bind::Tuple`).
fn pair(b: bool, x: i32, y: i32) -> (i32, i32) {
    if b {
        (x, y)
    } else {
        (y, x)
    }
}

/// `x / 4` or `y / 4` by `b`: a value that is not `Hash` (`Bind::Weight`).
fn weight(b: bool, x: i32, y: i32) -> f64 {
    f64::from(if b { x } else { y }) * 0.25
}

/// A struct that is not `Hash` (`Bind::Struct`, `Bind::MutStruct`): the
/// attribute can hash neither it nor its `f64`.
pub(crate) struct W(f64);

/// Its twin, `Hash` (`hash` in those bindings): tracked by its hash where
/// the `let` names its type or builds it.
#[derive(Hash)]
pub(crate) struct H(i32);

/// `W(x)` or `W(y)` by `b`, decided inside (`Bind::Struct`): the `let`
/// around the call sees the decision only through a value it cannot hash.
/// Where `x + y` is odd, a closure decides, changing a local the value is
/// made of (`for_each(|b| if b.is_true() { n = x })`, then `W(n)`).
#[augur::staged]
fn choose_w(b: Dyn<bool>, x: i32, y: i32) -> W {
    if (x + y) % 2 != 0 {
        let mut n = y;
        [b].iter().for_each(|b| {
            if b.is_true() {
                n = x;
            }
        });
        return W(f64::from(n));
    }
    if b.is_true() {
        W(f64::from(x))
    } else {
        W(f64::from(y))
    }
}

/// `H(x)` or `H(y)` by `b`, decided inside (`Bind::Struct`'s twin).
#[augur::staged]
fn choose_h(b: Dyn<bool>, x: i32, y: i32) -> H {
    if b.is_true() {
        H(x)
    } else {
        H(y)
    }
}

/// What a statement did: how it ended, and the plain state after it.
type Out = (Flow<Dyn<i32>>, PlainState);

/// Adds `by` to the counter behind `p`, modulo `period`: plain state
/// changed through a `&mut` argument of a helper (without the attribute:
/// it stages nothing).
fn bump(p: &mut i32, by: i32, period: i32) {
    *p = (*p + by) % period;
}

/// A change of the plain state, through the methods of its fields (an
/// unannotated helper: it stages nothing).
fn apply(st: &mut PlainState, m: &Mutation) {
    match *m {
        Mutation::Push(c) => {
            if st.stack.len() == STACK_CAP {
                st.stack.remove(0);
            }
            st.stack.push(c);
        }
        Mutation::Pop => {
            st.stack.pop();
        }
        Mutation::Truncate(n) => st.stack.truncate(n),
        Mutation::Take => {
            st.slot.take();
        }
        Mutation::GetOrInsert(c) => {
            st.slot.get_or_insert(c);
        }
        Mutation::Replace(c) => {
            st.slot.replace(c);
        }
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
        Mutation::Bump(by, period) => bump(&mut st.phase, by, period),
    }
}

impl PlainState {
    /// [`apply`] as a method: the walk changes its local through it.
    fn change(&mut self, m: &Mutation) {
        apply(self, m);
    }
}

/// Calls `f(0)`, ..., `f(n - 1)`: a small helper of the test, without the
/// attribute, that calls a closure repeatedly.
fn call_n(n: u32, f: &mut dyn FnMut(u32)) {
    for i in 0..n {
        f(i);
    }
}

/// Calls `f(0)`, `f(1)`, ... while it returns true, at most `n` times;
/// true if it stopped early (without the attribute, as `call_n`).
fn call_while(n: u32, f: &mut dyn FnMut(u32) -> bool) -> bool {
    for i in 0..n {
        if !f(i) {
            return true;
        }
    }
    false
}

/// The staged walk, written the way a DSL author would write an
/// interpreter: plain Rust recursion, the plain state passed down and
/// handed back up, `st = ...` in the callers' locals; the plain state's own
/// statements change the local of the block that walks them in place,
/// through methods. `$walk` says how a block's statements are walked;
/// `$attr` is the attribute (or nothing).
macro_rules! staged_walk {
    ($name:ident, $key:ident, $walk:expr, $(#[$attr:meta])*) => {
        struct $name(Vars);

        /// A chosen value as the receiver of a method of the walk
        /// (`Pass::Receiver`).
        #[derive(Clone, Copy)]
        struct $key(i32);

        $(#[$attr])*
        impl $key {
            /// Walks `body` with the value held only by `self`, then hands
            /// `self.0` to `then` (unless `body` left the statement).
            fn carry(
                self,
                w: &$name,
                body: &Stmt,
                st: PlainState,
                then: impl FnOnce(i32, PlainState) -> Out,
            ) -> Out {
                let (flow, st) = w.stmt(body, st);
                if !matches!(flow, Flow::Normal) {
                    return (flow, st);
                }
                then(self.0, st)
            }
        }

        $(#[$attr])*
        impl $name {
            /// Walks `s`. Without the attribute, the recursive calls must
            /// not be tail calls: in an optimized build a tail call reuses
            /// its caller's frame, so an `if` nested in an `if` would take
            /// its tags from its parent's return addresses (the attribute's
            /// frame guard does the same; `black_box` keeps both walks the
            /// same program).
            fn stmt(&self, s: &Stmt, st: PlainState) -> Out {
                let out = self.stmt_inner(s, st);
                std::hint::black_box(&out);
                out
            }

            /// Walks `items` in order with a plain `for`, carrying the
            /// plain state in a local; stops at the first that does not end
            /// normally. `Mutate` and `Branch` change the local in place.
            fn sequence<'s>(&self, items: impl Iterator<Item = &'s Stmt>, st: PlainState) -> Out {
                let v = &self.0;
                let mut st = st;
                for s in items {
                    match s {
                        Stmt::Mutate(m, false) => match m {
                            Mutation::Push(c) => {
                                if st.stack.len() == STACK_CAP {
                                    st.stack.remove(0);
                                }
                                st.stack.push(*c);
                            }
                            Mutation::Pop => {
                                st.stack.pop();
                            }
                            Mutation::Truncate(n) => {
                                st.stack.truncate(*n);
                            }
                            Mutation::Take => {
                                st.slot.take();
                            }
                            Mutation::GetOrInsert(c) => {
                                st.slot.get_or_insert_with(|| *c);
                            }
                            Mutation::Replace(c) => {
                                st.slot.replace(*c);
                            }
                            Mutation::Insert(k, c) => {
                                st.map.insert(*k, *c);
                            }
                            Mutation::Remove(k) => {
                                st.map.remove(k);
                            }
                            Mutation::Mark(k) => {
                                st.set.insert(*k);
                            }
                            Mutation::Unmark(k) => {
                                st.set.remove(k);
                            }
                            Mutation::Bump(by, period) => {
                                bump(&mut st.phase, *by, *period);
                            }
                        },
                        // The same calls as tail expressions of the arms,
                        // as rustfmt leaves them.
                        Stmt::Mutate(m, true) => match m {
                            Mutation::Push(c) => {
                                if st.stack.len() == STACK_CAP {
                                    st.stack.remove(0);
                                }
                                st.stack.push(*c)
                            }
                            Mutation::Pop => st.change(m),
                            Mutation::Truncate(n) => st.stack.truncate(*n),
                            Mutation::Take | Mutation::GetOrInsert(_) | Mutation::Replace(_) => {
                                st.change(m)
                            }
                            Mutation::Insert(..) | Mutation::Remove(_) => apply(&mut st, m),
                            Mutation::Mark(..) | Mutation::Unmark(_) => st.change(m),
                            Mutation::Bump(by, period) => bump(&mut st.phase, *by, *period),
                        },
                        // A flag set on a dyn branch, through methods.
                        Stmt::Branch(c, t, e, false) => {
                            if v.cond(c).is_true() {
                                st.change(t);
                            } else {
                                apply(&mut st, e);
                            }
                        }
                        Stmt::Branch(c, t, e, true) => {
                            if v.cond(c).is_true() {
                                st.change(t)
                            } else {
                                apply(&mut st, e)
                            }
                        }
                        s => {
                            let (flow, after) = self.stmt(s, st);
                            st = after;
                            if !matches!(flow, Flow::Normal) {
                                return (flow, st);
                            }
                        }
                    }
                }
                (Flow::Normal, st)
            }

            fn stmt_inner(&self, s: &Stmt, st: PlainState) -> Out {
                let v = &self.0;
                match s {
                    Stmt::Assign(x, e) => match v.expr(e) {
                        Val::D(d) => v.vars[*x].set(d),
                        Val::C(c) => v.vars[*x].set(c),
                    },
                    Stmt::If(c, t, e) => {
                        return if v.cond(c).is_true() {
                            self.stmt(t, st)
                        } else {
                            self.stmt(e, st)
                        }
                    }
                    Stmt::While {
                        counter,
                        bound,
                        body,
                    } => {
                        let ctr = v.vars[*counter];
                        ctr.set(0);
                        // A dyn loop: the Rust `loop` repeats the same
                        // decision, and the engine closes it into a C loop.
                        let mut st = st;
                        loop {
                            let go = match bound {
                                Bound::Param(p) => ctr.lt(v.params[*p]),
                                Bound::Const(c) => ctr.lt(*c),
                            };
                            if !go.is_true() {
                                break;
                            }
                            ctr.set(ctr + 1);
                            let (flow, after) = self.stmt(body, st);
                            st = after;
                            match flow {
                                Flow::Normal | Flow::Continue => {}
                                Flow::Break => break,
                                r @ Flow::Return(_) => return (r, st),
                            }
                        }
                        return (Flow::Normal, st);
                    }
                    Stmt::Break => return (Flow::Break, st),
                    Stmt::Continue => return (Flow::Continue, st),
                    Stmt::Return(e) => return (Flow::Return(v.expr(e).dyn_()), st),
                    Stmt::Block(ss) if $walk == Walk::Plain => return self.sequence(ss.iter(), st),
                    Stmt::Block(ss) => {
                        return self.sequence(augur::range(0..ss.len()).map(|i| &ss[i]), st)
                    }
                    // A plain Rust loop around (possibly) dyn branches.
                    Stmt::Repeat(k, body) => {
                        return self.sequence(std::iter::repeat_n(&**body, *k as usize), st)
                    }
                    // The same with the counter visible to tags.
                    Stmt::StaticRepeat(k, body) => {
                        return self.sequence(augur::range(0..*k).map(|_| &**body), st)
                    }
                    // A plain loop with its own (dyn) exits.
                    Stmt::PlainLoop(k, body) => {
                        let mut st = st;
                        for _ in 0..*k {
                            let (flow, after) = self.stmt(body, st);
                            st = after;
                            match flow {
                                Flow::Normal | Flow::Continue => {}
                                Flow::Break => break,
                                r @ Flow::Return(_) => return (r, st),
                            }
                        }
                        return (Flow::Normal, st);
                    }
                    Stmt::SetPlain(c) => {
                        let mut st = st;
                        st.plain = *c;
                        return (Flow::Normal, st);
                    }
                    Stmt::UsePlain(x) => v.vars[*x].set(v.vars[*x] + st.plain),
                    // Not in a block: walked as a block of one.
                    Stmt::Mutate(..) | Stmt::Branch(..) => {
                        return self.sequence(std::iter::once(s), st)
                    }
                    Stmt::Use(src, x, how) => {
                        let k = match src {
                            Source::Plain => st.plain,
                            Source::Len => st.stack.len() as i32,
                            Source::Top => st.stack.last().copied().unwrap_or(-1),
                            Source::Slot => st.slot.unwrap_or(-2),
                            Source::Get(key) => st.map.get(key).copied().unwrap_or(0),
                            Source::Keys => st.map.len() as i32,
                            Source::Has(key) => i32::from(st.set.contains(key)),
                            Source::Phase => st.phase,
                        };
                        v.decide(v.vars[*x], k, *how);
                    }
                    Stmt::Machine {
                        counter,
                        bound,
                        machine,
                        var,
                        body,
                        tail,
                    } => {
                        let m = (*counter, *bound, machine, *var, *tail);
                        return self.machine(m, body, st);
                    }
                    Stmt::Adapter(a) => return self.adapter(a, st),
                    Stmt::Hidden(h) => return self.hidden(h, st),
                }
                (Flow::Normal, st)
            }

            /// `Hidden`: the first binding in `bind`'s frame, the second
            /// (if any) in a frame below it; the key is read at the end,
            /// in the innermost.
            fn hidden(&self, h: &Hidden, st: PlainState) -> Out {
                self.bind(&h.first, &h.between, st, |k, st| match &h.second {
                    Some(b) => self.bind(b, &h.after, st, |m, st| {
                        self.read(h, k.wrapping_mul(10).wrapping_add(m), st)
                    }),
                    None => {
                        let (flow, st) = self.stmt(&h.after, st);
                        if !matches!(flow, Flow::Normal) {
                            return (flow, st);
                        }
                        self.read(h, k, st)
                    }
                })
            }

            /// Binds what `b` chooses with an immutable `let` in this
            /// frame (or hands it on, for `Bind::Pass`), walks `body`,
            /// then reads the binding (as its key) and hands it to `then`
            /// (unless `body` left the statement).
            fn bind(
                &self,
                b: &Bind,
                body: &Stmt,
                st: PlainState,
                then: impl FnOnce(i32, PlainState) -> Out,
            ) -> Out {
                let v = &self.0;
                match b {
                    Bind::Call(c, x, y, true) => {
                        let k = pick(v.cond(c), *x, *y);
                        let (flow, st) = self.stmt(body, st);
                        if !matches!(flow, Flow::Normal) {
                            return (flow, st);
                        }
                        then(k, st)
                    }
                    Bind::Call(c, x, y, false) => {
                        let k = choose(v.cond(c).is_true(), *x, *y);
                        let (flow, st) = self.stmt(body, st);
                        if !matches!(flow, Flow::Normal) {
                            return (flow, st);
                        }
                        then(k, st)
                    }
                    Bind::Bool(c) => {
                        let k = v.cond(c).is_true();
                        let (flow, st) = self.stmt(body, st);
                        if !matches!(flow, Flow::Normal) {
                            return (flow, st);
                        }
                        then(i32::from(k), st)
                    }
                    Bind::Tuple(c, x, y) => {
                        let (p, q) = pair(v.cond(c).is_true(), *x, *y);
                        let (flow, st) = self.stmt(body, st);
                        if !matches!(flow, Flow::Normal) {
                            return (flow, st);
                        }
                        then(p.wrapping_mul(5).wrapping_sub(q), st)
                    }
                    // Derived from a tracked local, which is then reset:
                    // the local no longer tells the paths apart.
                    Bind::Reset(c, x) => {
                        let mut s = 0;
                        if v.cond(c).is_true() {
                            s = *x;
                        }
                        let k = s.wrapping_mul(2);
                        s = 0;
                        let (flow, st) = self.stmt(body, st);
                        if !matches!(flow, Flow::Normal) {
                            return (flow, st);
                        }
                        then(k + s, st)
                    }
                    Bind::Take(c, x) => {
                        let mut o = None;
                        if v.cond(c).is_true() {
                            o = Some(*x);
                        }
                        let p = o.take();
                        let (flow, st) = self.stmt(body, st);
                        if !matches!(flow, Flow::Normal) {
                            return (flow, st);
                        }
                        then(p.unwrap_or(-1), st)
                    }
                    Bind::TakeSlot => {
                        let mut st = st;
                        let p = st.slot.take();
                        let (flow, st) = self.stmt(body, st);
                        if !matches!(flow, Flow::Normal) {
                            return (flow, st);
                        }
                        then(p.unwrap_or(-2), st)
                    }
                    Bind::Pass(..) => self.pass(b, body, st, then),
                    // Not `Hash`, chosen inside the callee, bound without
                    // a type.
                    Bind::Struct(c, x, y, false) => {
                        let w = choose_w(v.cond(c), *x, *y);
                        let (flow, st) = self.stmt(body, st);
                        if !matches!(flow, Flow::Normal) {
                            return (flow, st);
                        }
                        then(w.0 as i32, st)
                    }
                    Bind::Struct(c, x, y, true) => {
                        let w: H = choose_h(v.cond(c), *x, *y);
                        let (flow, st) = self.stmt(body, st);
                        if !matches!(flow, Flow::Normal) {
                            return (flow, st);
                        }
                        then(w.0, st)
                    }
                    // A `let mut` changed on a dyn branch, not `Hash`.
                    Bind::MutStruct(c, x, false) => {
                        let mut w = W(0.0);
                        if v.cond(c).is_true() {
                            w.0 += f64::from(*x);
                        }
                        let (flow, st) = self.stmt(body, st);
                        if !matches!(flow, Flow::Normal) {
                            return (flow, st);
                        }
                        then(w.0 as i32, st)
                    }
                    Bind::MutStruct(c, x, true) => {
                        let mut w = H(0);
                        if v.cond(c).is_true() {
                            w.0 += *x;
                        }
                        let (flow, st) = self.stmt(body, st);
                        if !matches!(flow, Flow::Normal) {
                            return (flow, st);
                        }
                        then(w.0, st)
                    }
                    // Not `Hash`: turned into a literal, or compared.
                    Bind::Weight(c, x, y, false) => {
                        let w = weight(v.cond(c).is_true(), *x, *y);
                        let (flow, st) = self.stmt(body, st);
                        if !matches!(flow, Flow::Normal) {
                            return (flow, st);
                        }
                        then(w as i32, st)
                    }
                    Bind::Weight(c, x, y, true) => {
                        let w = weight(v.cond(c).is_true(), *x, *y);
                        let (flow, st) = self.stmt(body, st);
                        if !matches!(flow, Flow::Normal) {
                            return (flow, st);
                        }
                        if w > 1.5 {
                            then(1, st)
                        } else {
                            then(0, st)
                        }
                    }
                }
            }

            /// `Bind::Pass`: `pick(..)` handed on as its `Pass` says, or,
            /// where `typed`, first bound by `let k: i32` here (tracked by
            /// its hash while this frame lives) and handed on the same way.
            fn pass(
                &self,
                b: &Bind,
                body: &Stmt,
                st: PlainState,
                then: impl FnOnce(i32, PlainState) -> Out,
            ) -> Out {
                let Bind::Pass(c, x, y, _, typed) = b else {
                    unreachable!("a Pass binding")
                };
                if *typed {
                    let k: i32 = pick(self.0.cond(c), *x, *y);
                    return self.hand(Some(k), b, body, st, then);
                }
                self.hand(None, b, body, st, then)
            }

            /// `bound`, or `pick(c, x, y)` (deciding inside) where none:
            /// an argument or a scrutinee, never bound by a `let`.
            fn chosen(&self, bound: Option<i32>, c: &Cond, x: i32, y: i32) -> i32 {
                match bound {
                    Some(k) => k,
                    None => pick(self.0.cond(c), x, y),
                }
            }

            /// `chosen`'s value as a field of the value a call returns
            /// (`Pass::Field`).
            fn picked(&self, bound: Option<i32>, c: &Cond, x: i32, y: i32) -> Picked {
                Picked { k: self.chosen(bound, c, x, y) }
            }

            /// Hands the value `chosen` gives to the code that walks `body`
            /// and then reads it (`then`), as `b`'s `Pass` says: as an
            /// argument, a receiver, or an arm's binding.
            #[allow(clippy::match_single_binding, clippy::never_loop)]
            fn hand(
                &self,
                bound: Option<i32>,
                b: &Bind,
                body: &Stmt,
                st: PlainState,
                then: impl FnOnce(i32, PlainState) -> Out,
            ) -> Out {
                let Bind::Pass(c, x, y, how, _) = b else {
                    unreachable!("a Pass binding")
                };
                match how {
                    Pass::Argument => self.carry(self.chosen(bound, c, *x, *y), body, st, then),
                    Pass::Receiver => $key(self.chosen(bound, c, *x, *y)).carry(self, body, st, then),
                    Pass::Match => match self.chosen(bound, c, *x, *y) {
                        k => {
                            let (flow, st) = self.stmt(body, st);
                            if !matches!(flow, Flow::Normal) {
                                return (flow, st);
                            }
                            then(k, st)
                        }
                    },
                    Pass::Field => match self.picked(bound, c, *x, *y).k {
                        k => {
                            let (flow, st) = self.stmt(body, st);
                            if !matches!(flow, Flow::Normal) {
                                return (flow, st);
                            }
                            then(k, st)
                        }
                    },
                    Pass::IfLet => {
                        if let Some(k) = Some(self.chosen(bound, c, *x, *y)) {
                            let (flow, st) = self.stmt(body, st);
                            if !matches!(flow, Flow::Normal) {
                                return (flow, st);
                            }
                            then(k, st)
                        } else {
                            unreachable!("Some")
                        }
                    }
                    Pass::WhileLet => {
                        while let Some(k) = Some(self.chosen(bound, c, *x, *y)) {
                            let (flow, st) = self.stmt(body, st);
                            if !matches!(flow, Flow::Normal) {
                                return (flow, st);
                            }
                            return then(k, st);
                        }
                        unreachable!("left in its first turn")
                    }
                }
            }

            /// Walks `body` with `k` held only by this parameter
            /// (`Pass::Argument`), then hands it to `then` (unless `body`
            /// left the statement).
            fn carry(
                &self,
                k: i32,
                body: &Stmt,
                st: PlainState,
                then: impl FnOnce(i32, PlainState) -> Out,
            ) -> Out {
                let (flow, st) = self.stmt(body, st);
                if !matches!(flow, Flow::Normal) {
                    return (flow, st);
                }
                then(k, st)
            }

            /// The key of `h`'s bindings decides the code for its
            /// variable.
            #[allow(clippy::collapsible_if)]
            fn read(&self, h: &Hidden, key: i32, st: PlainState) -> Out {
                let v = &self.0;
                let x = v.vars[h.var];
                match &h.read {
                    Read::Decide(how) => v.decide(x, key, *how),
                    Read::Guarded(c, target) => {
                        if v.cond(c).is_true() {
                            if key == *target {
                                x.set(x + 100);
                            }
                        }
                    }
                }
                (Flow::Normal, st)
            }

            /// A dyn loop that steps a plain machine, held in locals of
            /// this frame and changed only through methods, every turn.
            fn machine(
                &self,
                (counter, bound, machine, var, tail): (usize, Bound, &Machine, usize, bool),
                body: &Stmt,
                st: PlainState,
            ) -> Out {
                let v = &self.0;
                let (ctr, x) = (v.vars[counter], v.vars[var]);
                ctr.set(0);
                let mut st = st;
                let mut ring: Vec<i32> = Vec::new();
                let mut slot: Option<i32> = None;
                let mut phase = 0;
                if let Machine::Ring(r) = machine {
                    ring.extend_from_slice(r);
                }
                loop {
                    let go = match bound {
                        Bound::Param(p) => ctr.lt(v.params[p]),
                        Bound::Const(c) => ctr.lt(c),
                    };
                    if !go.is_true() {
                        break;
                    }
                    ctr.set(ctr + 1);
                    if !tail {
                        match machine {
                            Machine::Ring(_) => {
                                ring.rotate_left(1);
                            }
                            Machine::Toggle(c) => {
                                if slot.take().is_none() {
                                    slot.get_or_insert_with(|| *c);
                                }
                            }
                            Machine::Counter(by, period) => {
                                bump(&mut phase, *by, *period);
                            }
                        }
                    } else {
                        // The same, as rustfmt leaves arms that are calls.
                        match machine {
                            Machine::Ring(_) => ring.rotate_left(1),
                            Machine::Toggle(c) => {
                                if slot.take().is_none() {
                                    slot.get_or_insert_with(|| *c);
                                }
                            }
                            Machine::Counter(by, period) => bump(&mut phase, *by, *period),
                        }
                    }
                    let k = match machine {
                        Machine::Ring(_) => ring[0],
                        Machine::Toggle(_) => match slot {
                            Some(c) => c,
                            None => -1,
                        },
                        Machine::Counter(..) => phase,
                    };
                    v.op(x, k);
                    let (flow, after) = self.stmt(body, st);
                    st = after;
                    match flow {
                        Flow::Normal | Flow::Continue => {}
                        Flow::Break => break,
                        r @ Flow::Return(_) => return (r, st),
                    }
                }
                (Flow::Normal, st)
            }

            /// `(0..k).adapter(closure)` (see `Adapter`): the closure
            /// walks the body with the plain state and the adapter's exit
            /// in this frame's locals, and takes the dyn decision.
            fn adapter(&self, a: &Adapter, st: PlainState) -> Out {
                let v = &self.0;
                let (ctr, x) = (v.vars[a.counter], v.vars[a.var]);
                let n = a.k;
                let mut st = st;
                // How the body ended the adapter (`break`, `return`).
                let mut exit: Option<Flow<Dyn<i32>>> = None;
                // What the adapter found. Results are assigned, not bound
                // by a `let` of the adapter: such a `let` poisons `st`'s
                // tracker (its closure changes `st`) until the block names
                // `st` again (see `reproducers/methods.rs`).
                let mut found: Option<i32> = None;
                match (a.kind, a.form) {
                    (AdapterKind::ForEach, ClosureForm::Inline) => (0..n).for_each(|i| {
                        if exit.is_some() {
                            return;
                        }
                        ctr.set(i as i32 + 1);
                        let (flow, after) = self.stmt(&a.body, st.clone());
                        st = after;
                        match flow {
                            Flow::Normal => {}
                            Flow::Continue => return,
                            f => {
                                exit = Some(f);
                                return;
                            }
                        }
                        if v.cond(&a.cond).is_true() {
                            x.set(x + (i as i32 + 1));
                        }
                    }),
                    (AdapterKind::ForEach, ClosureForm::Named) => {
                        let each = |i: u32| {
                            ctr.set(i as i32 + 1);
                            if v.cond(&a.cond).is_true() {
                                x.set(x + (i as i32 + 1));
                            }
                        };
                        (0..n).for_each(each);
                    }
                    (AdapterKind::ForEach, ClosureForm::Helper) => call_n(n, &mut |i| {
                        if exit.is_some() {
                            return;
                        }
                        ctr.set(i as i32 + 1);
                        let (flow, after) = self.stmt(&a.body, st.clone());
                        st = after;
                        match flow {
                            Flow::Normal => {}
                            Flow::Continue => return,
                            f => {
                                exit = Some(f);
                                return;
                            }
                        }
                        if v.cond(&a.cond).is_true() {
                            x.set(x + (i as i32 + 1));
                        }
                    }),
                    (AdapterKind::TryForEach, ClosureForm::Helper) => {
                        let stopped;
                        stopped = call_while(n, &mut |i| {
                            ctr.set(i as i32 + 1);
                            let (flow, after) = self.stmt(&a.body, st.clone());
                            st = after;
                            match flow {
                                Flow::Normal => {}
                                Flow::Continue => return true,
                                f => {
                                    exit = Some(f);
                                    return false;
                                }
                            }
                            if v.cond(&a.cond).is_true() {
                                return false;
                            }
                            x.set(x ^ (i as i32 + 1));
                            true
                        });
                        found = Some(i32::from(stopped));
                    }
                    (AdapterKind::TryForEach, _) => {
                        let stopped;
                        stopped = (0..n)
                            .try_for_each(|i| {
                            ctr.set(i as i32 + 1);
                            let (flow, after) = self.stmt(&a.body, st.clone());
                            st = after;
                            match flow {
                                Flow::Normal => {}
                                Flow::Continue => return ControlFlow::Continue(()),
                                f => {
                                    exit = Some(f);
                                    return ControlFlow::Break(());
                                }
                            }
                            if v.cond(&a.cond).is_true() {
                                return ControlFlow::Break(());
                            }
                            x.set(x ^ (i as i32 + 1));
                            ControlFlow::Continue(())
                        })
                        .is_break();
                        found = Some(i32::from(stopped));
                    }
                    (AdapterKind::Any, ClosureForm::Named) => {
                        let hit = |i: u32| {
                            ctr.set(i as i32 + 1);
                            v.cond(&a.cond).is_true()
                        };
                        found = Some(i32::from((0..n).any(&hit)));
                    }
                    (AdapterKind::Any, _) => {
                        found = Some(i32::from((0..n).any(|i| {
                            ctr.set(i as i32 + 1);
                            let (flow, after) = self.stmt(&a.body, st.clone());
                            st = after;
                            match flow {
                                Flow::Normal => v.cond(&a.cond).is_true(),
                                Flow::Continue => false,
                                f => {
                                    exit = Some(f);
                                    true
                                }
                            }
                        })))
                    }
                    (AdapterKind::All, _) => {
                        found = Some(i32::from((0..n).all(|i| {
                            ctr.set(i as i32 + 1);
                            let (flow, after) = self.stmt(&a.body, st.clone());
                            st = after;
                            match flow {
                                Flow::Normal => v.cond(&a.cond).is_true(),
                                Flow::Continue => true,
                                f => {
                                    exit = Some(f);
                                    false
                                }
                            }
                        })))
                    }
                    (AdapterKind::Count, ClosureForm::Named) => {
                        let keep = |i: &u32| {
                            ctr.set(*i as i32 + 1);
                            v.cond(&a.cond).is_true()
                        };
                        found = Some((0..n).filter(keep).count() as i32);
                    }
                    (AdapterKind::Count, _) => {
                        let count;
                        count = (0..n)
                            .filter(|&i| {
                                if exit.is_some() {
                                    return false;
                                }
                                ctr.set(i as i32 + 1);
                                let (flow, after) = self.stmt(&a.body, st.clone());
                                st = after;
                                match flow {
                                    Flow::Normal => v.cond(&a.cond).is_true(),
                                    Flow::Continue => false,
                                    f => {
                                        exit = Some(f);
                                        false
                                    }
                                }
                            })
                            .count();
                        found = Some(count as i32);
                    }
                    (AdapterKind::Position, _) => {
                        found = (0..n)
                            .position(|i| {
                                ctr.set(i as i32 + 1);
                                let (flow, after) = self.stmt(&a.body, st.clone());
                                st = after;
                                match flow {
                                    Flow::Normal => v.cond(&a.cond).is_true(),
                                    Flow::Continue => false,
                                    f => {
                                        exit = Some(f);
                                        true
                                    }
                                }
                            })
                            .map(|p| p as i32)
                            .or(Some(-1));
                    }
                    (AdapterKind::Fold, _) => {
                        found = Some((0..n).fold(0, |acc, i| {
                            if exit.is_some() {
                                return acc;
                            }
                            ctr.set(i as i32 + 1);
                            let (flow, after) = self.stmt(&a.body, st.clone());
                            st = after;
                            match flow {
                                Flow::Normal if v.cond(&a.cond).is_true() => acc + 2,
                                Flow::Normal => acc - 1,
                                Flow::Continue => acc,
                                f => {
                                    exit = Some(f);
                                    acc
                                }
                            }
                        }));
                    }
                    (AdapterKind::MapCollect, _) => {
                        let vals: Vec<Dyn<i32>>;
                        vals = (0..n)
                            .map(|i| {
                                if exit.is_some() {
                                    return Dyn::lit(i as i32);
                                }
                                ctr.set(i as i32 + 1);
                                let (flow, after) = self.stmt(&a.body, st.clone());
                                st = after;
                                match flow {
                                    Flow::Normal if v.cond(&a.cond).is_true() => x + (i as i32 + 1),
                                    Flow::Normal => x * 3,
                                    Flow::Continue => Dyn::lit(i as i32),
                                    f => {
                                        exit = Some(f);
                                        Dyn::lit(i as i32)
                                    }
                                }
                            })
                            .collect();
                        for d in vals {
                            x.set(x * 5 + d);
                        }
                    }
                    (AdapterKind::MapSum, _) => {
                        found = (0..n)
                            .map(|i| {
                                if exit.is_some() {
                                    return 0;
                                }
                                ctr.set(i as i32 + 1);
                                let (flow, after) = self.stmt(&a.body, st.clone());
                                st = after;
                                match flow {
                                    Flow::Normal if v.cond(&a.cond).is_true() => i as i32 + 1,
                                    Flow::Normal | Flow::Continue => 0,
                                    f => {
                                        exit = Some(f);
                                        0
                                    }
                                }
                            })
                            .sum::<i32>()
                            .into();
                    }
                }
                if let Some(Flow::Return(r)) = exit {
                    return (Flow::Return(r), st);
                }
                if let Some(r) = found {
                    v.op(x, r);
                    st.slot.replace(r & 1);
                }
                (Flow::Normal, st)
            }
        }
    };
}

staged_walk!(Annotated, AnnotatedKey, Walk::Plain, #[augur::staged]);
staged_walk!(Bare, BareKey, Walk::Indexed,);

/// The staged program: declares every variable up front, runs the walk,
/// returns what the program returns or the combination of its variables.
/// Annotated, so that paths that end in different plain states (which die
/// with the walk) can share the combination at the end: the walk under it
/// is what each walk says it is (the bare walk's frames stay uncovered).
#[augur::staged]
pub(crate) fn stage(p: &Program, walk: Walk, a: Dyn<i32>, b: Dyn<i32>) -> Dyn<i32> {
    let params = [a, b];
    let mut vars: Vec<Dyn<i32>> = p
        .inits
        .iter()
        .map(|i| match i {
            Init::Zero => Dyn::new(0),
            Init::Param(k) => Dyn::new(params[*k]),
            Init::Const(c) => Dyn::new(*c),
        })
        .collect();
    vars.extend((0..p.counters).map(|_| Dyn::new(0)));
    let v = Vars { vars, params };
    let (flow, v) = match walk {
        Walk::Plain => {
            let w = Annotated(v);
            (w.stmt(&p.body, PlainState::default()).0, w.0)
        }
        Walk::Indexed | Walk::Trusted => {
            let w = Bare(v);
            (w.stmt(&p.body, PlainState::default()).0, w.0)
        }
    };
    match flow {
        Flow::Return(r) => r,
        _ => {
            let mut h = Dyn::lit(17);
            for x in &v.vars {
                h = h * 31 + *x;
            }
            h
        }
    }
}

/// Does `s` set the plain state anywhere (the plain value, or the state
/// methods change: an adapter pushes what it finds)?
pub(crate) fn sets_plain_values(s: &Stmt) -> bool {
    match s {
        Stmt::SetPlain(_) | Stmt::Mutate(..) | Stmt::Branch(..) | Stmt::Adapter(_) => true,
        Stmt::If(_, t, e) => sets_plain_values(t) || sets_plain_values(e),
        Stmt::While { body, .. }
        | Stmt::Repeat(_, body)
        | Stmt::StaticRepeat(_, body)
        | Stmt::PlainLoop(_, body)
        | Stmt::Machine { body, .. } => sets_plain_values(body),
        Stmt::Block(ss) => ss.iter().any(sets_plain_values),
        Stmt::Hidden(h) => {
            h.first == Bind::TakeSlot
                || h.second == Some(Bind::TakeSlot)
                || sets_plain_values(&h.between)
                || sets_plain_values(&h.after)
        }
        _ => false,
    }
}

/// Programs only the annotated walk extracts exactly: plain values, plain
/// state changed through methods, plain machines, adapters' closures,
/// immutable bindings of what dyn decisions chose and long plain loops with
/// dyn exits are invisible to tags without it.
pub(crate) fn needs_attribute(s: &Stmt) -> bool {
    match s {
        Stmt::PlainLoop(..)
        | Stmt::SetPlain(_)
        | Stmt::UsePlain(_)
        | Stmt::Mutate(..)
        | Stmt::Branch(..)
        | Stmt::Use(..)
        | Stmt::Machine { .. }
        | Stmt::Adapter(_)
        | Stmt::Hidden(_) => true,
        Stmt::If(_, t, e) => needs_attribute(t) || needs_attribute(e),
        Stmt::While { body, .. } | Stmt::Repeat(_, body) | Stmt::StaticRepeat(_, body) => {
            needs_attribute(body)
        }
        Stmt::Block(ss) => ss.iter().any(needs_attribute),
        _ => false,
    }
}
