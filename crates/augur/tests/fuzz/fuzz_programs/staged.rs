//! The staged interpreter: the same AST walked over `Dyn<i32>` variables,
//! the way a DSL author would write it, under two walks (the *plain* walk,
//! under `#[augur::staged]`, and the *indexed* walk, without it), and which
//! programs need the attribute.

use crate::fuzz_programs::language::{BinOp, Bound, CmpOp, Cond, Expr, Flow, Init, Program, Stmt};
use augur::Dyn;

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
}

/// What a statement did: how it ended, and the plain value after it.
type Out = (Flow<Dyn<i32>>, i32);

/// The staged walk, written the way a DSL author would write an
/// interpreter: plain Rust recursion, the plain value passed down and
/// handed back up, `plain = ...` in the callers' locals. `$walk` says how a
/// block's statements are walked; `$attr` is the attribute (or nothing).
macro_rules! staged_walk {
    ($name:ident, $walk:expr, $(#[$attr:meta])*) => {
        struct $name(Vars);

        $(#[$attr])*
        impl $name {
            /// Walks `s`. Without the attribute, the recursive calls must
            /// not be tail calls: in an optimized build a tail call reuses
            /// its caller's frame, so an `if` nested in an `if` would take
            /// its tags from its parent's return addresses (the attribute's
            /// frame guard does the same; `black_box` keeps both walks the
            /// same program).
            fn stmt(&self, s: &Stmt, plain: i32) -> Out {
                let out = self.stmt_inner(s, plain);
                std::hint::black_box(&out);
                out
            }

            /// Walks `items` in order with a plain `for`, carrying the
            /// plain value; stops at the first that does not end normally.
            fn sequence<'s>(&self, items: impl Iterator<Item = &'s Stmt>, plain: i32) -> Out {
                let mut plain = plain;
                for s in items {
                    let (flow, after) = self.stmt(s, plain);
                    plain = after;
                    if !matches!(flow, Flow::Normal) {
                        return (flow, plain);
                    }
                }
                (Flow::Normal, plain)
            }

            fn stmt_inner(&self, s: &Stmt, plain: i32) -> Out {
                let v = &self.0;
                match s {
                    Stmt::Assign(x, e) => match v.expr(e) {
                        Val::D(d) => v.vars[*x].set(d),
                        Val::C(c) => v.vars[*x].set(c),
                    },
                    Stmt::If(c, t, e) => {
                        return if v.cond(c).is_true() {
                            self.stmt(t, plain)
                        } else {
                            self.stmt(e, plain)
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
                        let mut plain = plain;
                        loop {
                            let go = match bound {
                                Bound::Param(p) => ctr.lt(v.params[*p]),
                                Bound::Const(c) => ctr.lt(*c),
                            };
                            if !go.is_true() {
                                break;
                            }
                            ctr.set(ctr + 1);
                            let (flow, after) = self.stmt(body, plain);
                            plain = after;
                            match flow {
                                Flow::Normal | Flow::Continue => {}
                                Flow::Break => break,
                                r @ Flow::Return(_) => return (r, plain),
                            }
                        }
                        return (Flow::Normal, plain);
                    }
                    Stmt::Break => return (Flow::Break, plain),
                    Stmt::Continue => return (Flow::Continue, plain),
                    Stmt::Return(e) => return (Flow::Return(v.expr(e).dyn_()), plain),
                    Stmt::Block(ss) if $walk == Walk::Plain => {
                        return self.sequence(ss.iter(), plain)
                    }
                    Stmt::Block(ss) => {
                        return self.sequence(augur::range(0..ss.len()).map(|i| &ss[i]), plain)
                    }
                    // A plain Rust loop around (possibly) dyn branches.
                    Stmt::Repeat(k, body) => {
                        return self.sequence(std::iter::repeat_n(&**body, *k as usize), plain)
                    }
                    // The same with the counter visible to tags.
                    Stmt::StaticRepeat(k, body) => {
                        return self.sequence(augur::range(0..*k).map(|_| &**body), plain)
                    }
                    // A plain loop with its own (dyn) exits.
                    Stmt::PlainLoop(k, body) => {
                        let mut plain = plain;
                        for _ in 0..*k {
                            let (flow, after) = self.stmt(body, plain);
                            plain = after;
                            match flow {
                                Flow::Normal | Flow::Continue => {}
                                Flow::Break => break,
                                r @ Flow::Return(_) => return (r, plain),
                            }
                        }
                        return (Flow::Normal, plain);
                    }
                    Stmt::SetPlain(c) => return (Flow::Normal, *c),
                    Stmt::UsePlain(x) => v.vars[*x].set(v.vars[*x] + plain),
                }
                (Flow::Normal, plain)
            }
        }
    };
}

staged_walk!(Annotated, Walk::Plain, #[augur::staged]);
staged_walk!(Bare, Walk::Indexed,);

/// The staged program: declares every variable up front, runs the walk,
/// returns what the program returns or the combination of its variables.
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
            (w.stmt(&p.body, 0).0, w.0)
        }
        Walk::Indexed | Walk::Trusted => {
            let w = Bare(v);
            (w.stmt(&p.body, 0).0, w.0)
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

/// Does `s` set the plain value anywhere?
pub(crate) fn sets_plain_values(s: &Stmt) -> bool {
    match s {
        Stmt::SetPlain(_) => true,
        Stmt::If(_, t, e) => sets_plain_values(t) || sets_plain_values(e),
        Stmt::While { body, .. }
        | Stmt::Repeat(_, body)
        | Stmt::StaticRepeat(_, body)
        | Stmt::PlainLoop(_, body) => sets_plain_values(body),
        Stmt::Block(ss) => ss.iter().any(sets_plain_values),
        _ => false,
    }
}

/// Programs only the annotated walk extracts exactly: plain values and long
/// plain loops with dyn exits are invisible to tags without it.
pub(crate) fn needs_attribute(s: &Stmt) -> bool {
    match s {
        Stmt::PlainLoop(..) | Stmt::SetPlain(_) | Stmt::UsePlain(_) => true,
        Stmt::If(_, t, e) => needs_attribute(t) || needs_attribute(e),
        Stmt::While { body, .. } | Stmt::Repeat(_, body) | Stmt::StaticRepeat(_, body) => {
            needs_attribute(body)
        }
        Stmt::Block(ss) => ss.iter().any(needs_attribute),
        _ => false,
    }
}
