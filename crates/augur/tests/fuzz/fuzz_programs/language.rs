//! The fuzzed language: a tiny structured language (`while`, `if`,
//! `break`/`continue`/`return`, plain and static repetitions, plain
//! first-stage values, plain state changed through methods, iterator
//! adapters whose closures decide) over wrapping `i32` variables, its
//! bounds, and its pseudo-C `Display` for failure reports.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

/// General-purpose variables `v0..v3`; loop counters come after them.
pub(crate) const VARS: usize = 4;
/// Largest nesting depth of statements.
pub(crate) const MAX_DEPTH: u32 = 4;
/// Largest number of statements in a program.
pub(crate) const MAX_STMTS: usize = 25;
/// Largest product of the counts of nested plain `Repeat`s. The engine tells
/// a plain Rust loop around a dyn branch from a dyn loop by auditing 16 more
/// turns (`Builder::loop_audit_rounds`): nested `Repeat`s whose counts
/// multiply past 17 would present more identical turns than that, which is
/// the documented limit, not a bug. 4 × 4 = 16 stays inside it.
pub(crate) const MAX_PLAIN_UNROLL: u32 = 16;
/// Largest product of all nested repetition counts, to bound code size.
pub(crate) const MAX_UNROLL: u32 = 32;
/// Longest the plain stack grows: a push onto a full stack drops its
/// bottom, so the state a dyn loop carries stays finite (and repeats).
pub(crate) const STACK_CAP: usize = 3;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BinOp {
    Add,
    Sub,
    Mul,
    And,
    Or,
    Xor,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CmpOp {
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Expr {
    /// A variable: `v0..v3`, or a loop counter (`VARS + n`).
    Var(usize),
    /// A parameter: `a` (0) or `b` (1).
    Param(usize),
    Const(i32),
    Bin(BinOp, Box<Expr>, Box<Expr>),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Cond {
    Cmp(CmpOp, Expr, Expr),
    Not(Box<Cond>),
    And(Box<Cond>, Box<Cond>),
    Or(Box<Cond>, Box<Cond>),
}

/// What a `while` counts up to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Bound {
    Param(usize),
    Const(i32),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Stmt {
    /// `v = e` (never a loop counter, so every loop terminates).
    Assign(usize, Expr),
    If(Cond, Box<Stmt>, Box<Stmt>),
    /// `c = 0; while (c < bound) { c = c + 1; body }`: the increment comes
    /// first so that `continue` cannot skip it.
    While {
        counter: usize,
        bound: Bound,
        body: Box<Stmt>,
    },
    Break,
    Continue,
    Return(Expr),
    Block(Vec<Stmt>),
    /// The body `k` times, unrolled by a plain Rust `for` in the first stage.
    Repeat(u32, Box<Stmt>),
    /// The body `k` times, unrolled by `augur::range` in the first stage.
    StaticRepeat(u32, Box<Stmt>),
    /// `k` turns (up to 100) of a plain Rust `for` whose `break` and
    /// `continue` are its own: a plain loop with dyn exits.
    PlainLoop(u32, Box<Stmt>),
    /// Sets the walk's plain first-stage value (a plain `i32` the staged
    /// walk carries in locals, never a `Dyn`).
    SetPlain(i32),
    /// `v = v + plain`: the plain value decides the operation, however far
    /// after the `if` that set it.
    UsePlain(usize),
    /// Changes the walk's plain state through a method (`push`, `take`,
    /// `insert`, `bump(&mut ..)`), never an assignment. `tail`: the staged
    /// walk writes the call as a tail expression (no `;`).
    Mutate(Mutation, bool),
    /// `if (c) m1 else m2`: a dyn `if` whose arms change the plain state
    /// through methods, in the frame that holds it (`tail` as for
    /// `Mutate`).
    Branch(Cond, Mutation, Mutation, bool),
    /// What the plain state holds decides the code for `v` (which
    /// operation, whether a dyn branch exists, a loop bound).
    Use(Source, usize, Decide),
    /// A dyn `while` (as `While`) that steps a plain machine held in a
    /// local of the loop's frame, through a method, at the start of every
    /// turn; the machine's value then decides the operation on `var`
    /// (`v = op(k, v)`, as `Decide::Op`) before the body.
    Machine {
        counter: usize,
        bound: Bound,
        machine: Machine,
        var: usize,
        body: Box<Stmt>,
        /// The walk writes the step as a `match` arm's tail expression.
        tail: bool,
    },
    /// `(0..k).adapter(closure)`: see [`Adapter`].
    Adapter(Box<Adapter>),
    /// Plain values a dyn decision chose, bound by immutable `let`s (or
    /// handed on otherwise), read after further statements: see
    /// [`Hidden`].
    Hidden(Box<Hidden>),
}

/// A plain value chosen by a dyn decision, bound by an immutable `let`
/// (never through `let x = if ..`/`match ..` syntax, which the attribute
/// tracks), or reaching the code after it otherwise: as an argument, a
/// receiver or an arm's pattern (`Pass`), a struct that is not `Hash`
/// (`Struct`, `MutStruct`). Its *key*, the `i32` it is read as, is given
/// for each.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Bind {
    /// `let k = pick(cond, x, y);`: a helper returning `x` or `y` by
    /// `cond` (`staged`: under `#[augur::staged]`, deciding inside, else
    /// plain, handed the decided `bool`). Key `k`.
    Call(Cond, i32, i32, bool),
    /// `let k = cond.is_true();`. Key `k as i32`.
    Bool(Cond),
    /// `let (p, q) = pair(cond, x, y);`: `(x, y)` or `(y, x)`. Key
    /// `p * 5 - q`.
    Tuple(Cond, i32, i32),
    /// `let mut s = 0; if (cond) { s = x; } let k = s * 2; s = 0;`: a
    /// value derived from a tracked `let mut` local that is then reset.
    /// Key `k + s`: `2x` or 0.
    Reset(Cond, i32),
    /// `let mut o = None; if (cond) { o = Some(x); } let p = o.take();`.
    /// Key `p.unwrap_or(-1)`.
    Take(Cond, i32),
    /// `let p = st.slot.take();`: the walk's tracked plain state (set on
    /// dyn branches before, or by adapters) reset. Key `p.unwrap_or(-2)`.
    TakeSlot,
    /// `let w = weight(cond, x, y);`: an `f64` (not `Hash`), `x / 4` or
    /// `y / 4`. Key `w as i32` (`above`: `w > 1.5`, as 0 or 1).
    Weight(Cond, i32, i32, bool),
    /// `pick(cond, x, y)` (deciding inside, as `Call`'s staged helper)
    /// reaching the code after it without a `let`: see [`Pass`]. `typed`:
    /// bound by `let k: i32 = pick(..)` first and handed on the same way,
    /// a twin known to be exact. Key `k`.
    Pass(Cond, i32, i32, Pass, bool),
    /// `let w = choose_w(cond, x, y);`: an annotated helper decides inside
    /// (in a closure it calls where `x + y` is odd) and returns a struct
    /// `W(f64)` that is not `Hash`, bound without a type. `hash`: `let w: H = choose_h(..)`, a `Hash` struct `H(i32)`
    /// named at the `let`, the twin known to be exact. Key `w.0 as i32`.
    Struct(Cond, i32, i32, bool),
    /// `let mut w = W(0.0); if (cond) { w.0 += x; }`: a `let mut` of a
    /// struct that is not `Hash`, changed on a dyn branch (`hash`:
    /// `H(0)`, `Hash`, the twin known to be exact). Key `w.0 as i32`: `x`
    /// or 0.
    MutStruct(Cond, i32, bool),
}

/// How a chosen value reaches the code after it other than through an
/// immutable `let` in the frame that reads it (`Bind::Pass`): where the
/// value lives then is a parameter or an arm's pattern, which the
/// attribute does not track by itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Pass {
    /// `carry(pick(..), ..)`: an argument of an annotated helper, which
    /// walks the statements after it and then reads its parameter.
    Argument,
    /// `Key::pick(..).carry(..)`: the receiver (`Key(i32)`) of an
    /// annotated method, which walks the statements after it and then
    /// reads `self.0`.
    Receiver,
    /// `match pick(..) { k => { .. } }`: the statements after it and the
    /// read in the arm.
    Match,
    /// `match picked(pick(..)).k { k => { .. } }`: a field of a
    /// call's value.
    Field,
    /// `if let Some(k) = Some(pick(..)) { .. }`.
    IfLet,
    /// `while let Some(k) = Some(pick(..)) { ..; return }`: a loop left
    /// in its first turn.
    WhileLet,
}

/// How the key of `Hidden`'s bindings decides the code for `var`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Read {
    /// As `Use` does with its plain value.
    Decide(Decide),
    /// `if (cond) { if (key == target) v = v + 100; }`: the key decides
    /// whether an operation is staged at all, under a later dyn decision.
    Guarded(Cond, i32),
}

/// `let k = ..first..; between; [let m = ..second..; after;] read(key)`,
/// the key `k` or `k * 10 + m`: plain values chosen by dyn decisions,
/// bound by immutable `let`s in the walk's frames (or handed on as
/// `Bind::Pass` says, the statements after them walked where the value
/// lives), read after further statements (dyn `if`s among them) and
/// combined. A `break`, `continue` or
/// `return` in `between` or `after` leaves the statement there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Hidden {
    pub(crate) first: Bind,
    pub(crate) between: Stmt,
    pub(crate) second: Option<Bind>,
    pub(crate) after: Stmt,
    pub(crate) var: usize,
    pub(crate) read: Read,
}

impl Bind {
    /// The condition it decides, if any.
    pub(crate) fn cond(&self) -> Option<&Cond> {
        match self {
            Bind::Call(c, ..)
            | Bind::Bool(c)
            | Bind::Tuple(c, ..)
            | Bind::Reset(c, _)
            | Bind::Take(c, _)
            | Bind::Weight(c, ..)
            | Bind::Pass(c, ..)
            | Bind::Struct(c, ..)
            | Bind::MutStruct(c, ..) => Some(c),
            Bind::TakeSlot => None,
        }
    }

    /// The key, given the decision (`held`) and the plain slot (for
    /// `TakeSlot`, which the caller then empties).
    pub(crate) fn key(&self, held: bool, slot: Option<i32>) -> i32 {
        let by = |x: i32, y: i32| if held { x } else { y };
        match *self {
            Bind::Call(_, x, y, _) | Bind::Pass(_, x, y, ..) | Bind::Struct(_, x, y, _) => by(x, y),
            Bind::MutStruct(_, x, _) => by(x, 0),
            Bind::Bool(_) => i32::from(held),
            Bind::Tuple(_, x, y) => {
                let (p, q) = if held { (x, y) } else { (y, x) };
                p.wrapping_mul(5).wrapping_sub(q)
            }
            Bind::Reset(_, x) => by(x, 0).wrapping_mul(2),
            Bind::Take(_, x) => by(x, -1),
            Bind::TakeSlot => slot.unwrap_or(-2),
            Bind::Weight(_, x, y, above) => {
                let w = f64::from(by(x, y)) * 0.25;
                if above {
                    i32::from(w > 1.5)
                } else {
                    w as i32
                }
            }
        }
    }
}

/// A change of the plain state through a method.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mutation {
    /// `stack.push(c)` (a full stack first drops its bottom).
    Push(i32),
    /// `stack.pop()`.
    Pop,
    /// `stack.truncate(n)`.
    Truncate(usize),
    /// `slot.take()`.
    Take,
    /// `slot.get_or_insert_with(|| c)`.
    GetOrInsert(i32),
    /// `slot.replace(c)`.
    Replace(i32),
    /// `map.insert(key, c)`.
    Insert(i32, i32),
    /// `map.remove(&key)`.
    Remove(i32),
    /// `set.insert(key)`.
    Mark(i32),
    /// `set.remove(&key)`.
    Unmark(i32),
    /// `bump(&mut phase, by, period)`: `phase = (phase + by) % period`.
    Bump(i32, i32),
}

/// A plain `i32` read from the plain state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Source {
    /// The plain value (`SetPlain`).
    Plain,
    /// `stack.len()`.
    Len,
    /// `stack.last()`, or -1.
    Top,
    /// `slot`, or -2.
    Slot,
    /// `map.get(&key)`, or 0.
    Get(i32),
    /// `map.len()`.
    Keys,
    /// `set.contains(&key)` (0 or 1).
    Has(i32),
    /// `phase`.
    Phase,
}

/// How a plain value `k` decides the code for a variable `v`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Decide {
    /// The operation: by `k mod 3`, `v + k`, `v * 2 - k` or `v ^ (5k + 1)`.
    Op,
    /// Whether a dyn branch is emitted: odd `k`: `if (v < k) v = v + 1;
    /// else v = v - k;`, even `k`: `v = v ^ k`.
    Branch,
    /// A dyn loop's bound: `t = 0; while (t < k mod 4) { t = t + 1;
    /// v = v * 3 + t; }`.
    Bound,
    /// The operation, on one combination of two dyn decisions only:
    /// `if (a < b) { if (b < 0) v = v + 1; else v = op(k, v); }`. Two
    /// paths wrongly joined before it differ only there, where neither the
    /// path that links nor the check run that takes the other sides goes.
    Nested,
}

/// A plain machine a `Machine` loop steps every turn.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Machine {
    /// `ring.rotate_left(1)`, then `ring[0]`: period `ring.len()` (1 to 7).
    Ring(Vec<i32>),
    /// `if slot.take().is_none() { slot.get_or_insert_with(|| c); }`, then
    /// `slot` or -1: period 2.
    Toggle(i32),
    /// `bump(&mut phase, by, period)`, then `phase`.
    Counter(i32, i32),
}

/// Which standard adapter calls the closure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AdapterKind {
    /// `for_each`: a true condition does `v = v + i + 1`.
    ForEach,
    /// `try_for_each`: a true condition stops; a false one does
    /// `v = v ^ (i + 1)`. Finds whether it stopped early.
    TryForEach,
    /// `any`: finds whether a condition held.
    Any,
    /// `all`: finds whether every condition held.
    All,
    /// `filter(..).count()`: finds how many held.
    Count,
    /// `position`: finds the first that held, or -1.
    Position,
    /// `fold(0, ..)`: `acc + 2` where the condition held, `acc - 1` where
    /// not; finds `acc`.
    Fold,
    /// `map(..).collect::<Vec<Dyn<i32>>>()`: each call gives `v + i + 1`
    /// (condition held) or `v * 3` (not), or `i` (a call that did not get to
    /// its condition); then `v = v * 5 + d` for each, in order.
    MapCollect,
    /// `map(..).sum()`: `i + 1` where the condition held; finds the sum.
    MapSum,
}

/// How the closure reaches the adapter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ClosureForm {
    /// A closure literal in the call (its calls are counted).
    Inline,
    /// A closure bound to a name first (`let f = |i| ..; (0..k).any(&f)`);
    /// it decides but walks no body (`ForEach`, `Any`, `Count`).
    Named,
    /// Handed to an unannotated helper of the test that calls it
    /// repeatedly (`call_n(k, &mut |i| ..)`; `ForEach`, `TryForEach`).
    Helper,
}

/// `(0..k).adapter(|i| { counter = i + 1; body; cond })`: each call sets the
/// counter, walks the body, then decides `cond` (a dyn decision), all in a
/// closure handed to the adapter. The body's `break` and `return` end the
/// adapter (a `return` leaves the statement), and its `continue` ends the
/// call (a `return` from the closure); calls after a `break` or `return`
/// do nothing, where the adapter cannot stop. What an adapter finds (a
/// plain `r`) then decides the code for `var` (`v = op(r, v)`, as
/// `Decide::Op`), and `r & 1` replaces the plain slot, for later
/// statements to decide with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Adapter {
    pub(crate) kind: AdapterKind,
    pub(crate) form: ClosureForm,
    pub(crate) k: u32,
    pub(crate) counter: usize,
    pub(crate) var: usize,
    pub(crate) body: Stmt,
    pub(crate) cond: Cond,
}

/// The plain first-stage state of a walk: what `SetPlain`, `Mutate`,
/// `Branch` and adapters change and `UsePlain` and `Use` read. `Hash`, so
/// that `#[augur::staged]` tracks the locals that hold it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub(crate) struct PlainState {
    pub(crate) plain: i32,
    pub(crate) stack: Vec<i32>,
    pub(crate) slot: Option<i32>,
    pub(crate) map: BTreeMap<i32, i32>,
    pub(crate) set: BTreeSet<i32>,
    pub(crate) phase: i32,
}

/// How variable `v` starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Init {
    Zero,
    Param(usize),
    Const(i32),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Program {
    /// One per general variable.
    pub(crate) inits: Vec<Init>,
    /// Loop counters, all declared up front (starting at 0).
    pub(crate) counters: usize,
    pub(crate) body: Stmt,
}

/// How a statement ended; `Return` carries the value (`i32` in the
/// reference, `Dyn<i32>` in the staged walk). `Hash`: the staged walk keeps
/// an adapter's exit in a tracked local.
#[derive(Clone, Copy, Debug, Hash)]
pub(crate) enum Flow<V> {
    Normal,
    Break,
    Continue,
    Return(V),
}

/// Programs print as pseudo-C, for failure reports.
impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expr::Var(v) if *v < VARS => write!(f, "v{v}"),
            Expr::Var(v) => write!(f, "c{}", v - VARS),
            Expr::Param(p) => write!(f, "{}", ["a", "b"][*p]),
            Expr::Const(c) => write!(f, "{c}"),
            Expr::Bin(op, a, b) => {
                let op = match op {
                    BinOp::Add => "+",
                    BinOp::Sub => "-",
                    BinOp::Mul => "*",
                    BinOp::And => "&",
                    BinOp::Or => "|",
                    BinOp::Xor => "^",
                };
                write!(f, "({a} {op} {b})")
            }
        }
    }
}

impl fmt::Display for Cond {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Cond::Cmp(op, a, b) => {
                let op = match op {
                    CmpOp::Lt => "<",
                    CmpOp::Le => "<=",
                    CmpOp::Gt => ">",
                    CmpOp::Ge => ">=",
                    CmpOp::Eq => "==",
                    CmpOp::Ne => "!=",
                };
                write!(f, "{a} {op} {b}")
            }
            Cond::Not(c) => write!(f, "!({c})"),
            Cond::And(a, b) => write!(f, "({a}) && ({b})"),
            Cond::Or(a, b) => write!(f, "({a}) || ({b})"),
        }
    }
}

impl Stmt {
    fn write(&self, f: &mut fmt::Formatter<'_>, indent: usize) -> fmt::Result {
        let pad = "  ".repeat(indent);
        let body = |f: &mut fmt::Formatter<'_>, s: &Stmt| -> fmt::Result {
            match s {
                Stmt::Block(ss) => ss.iter().try_for_each(|s| s.write(f, indent + 1)),
                s => s.write(f, indent + 1),
            }
        };
        match self {
            Stmt::Assign(v, e) => writeln!(f, "{pad}{} = {e};", Expr::Var(*v)),
            Stmt::If(c, t, e) => {
                writeln!(f, "{pad}if ({c}) {{")?;
                body(f, t)?;
                if !matches!(&**e, Stmt::Block(ss) if ss.is_empty()) {
                    writeln!(f, "{pad}}} else {{")?;
                    body(f, e)?;
                }
                writeln!(f, "{pad}}}")
            }
            Stmt::While {
                counter,
                bound,
                body: b,
            } => {
                let c = Expr::Var(*counter);
                let bound = match bound {
                    Bound::Param(p) => Expr::Param(*p),
                    Bound::Const(k) => Expr::Const(*k),
                };
                writeln!(f, "{pad}{c} = 0;")?;
                writeln!(f, "{pad}while ({c} < {bound}) {{")?;
                writeln!(f, "{pad}  {c} = {c} + 1;")?;
                body(f, b)?;
                writeln!(f, "{pad}}}")
            }
            Stmt::Break => writeln!(f, "{pad}break;"),
            Stmt::Continue => writeln!(f, "{pad}continue;"),
            Stmt::Return(e) => writeln!(f, "{pad}return {e};"),
            Stmt::Block(ss) => {
                writeln!(f, "{pad}{{")?;
                ss.iter().try_for_each(|s| s.write(f, indent + 1))?;
                writeln!(f, "{pad}}}")
            }
            Stmt::Repeat(k, b) => {
                writeln!(f, "{pad}repeat {k} {{")?;
                body(f, b)?;
                writeln!(f, "{pad}}}")
            }
            Stmt::StaticRepeat(k, b) => {
                writeln!(f, "{pad}static_repeat {k} {{")?;
                body(f, b)?;
                writeln!(f, "{pad}}}")
            }
            Stmt::PlainLoop(k, b) => {
                writeln!(f, "{pad}plain_loop {k} {{")?;
                body(f, b)?;
                writeln!(f, "{pad}}}")
            }
            Stmt::SetPlain(c) => writeln!(f, "{pad}plain = {c};"),
            Stmt::UsePlain(v) => writeln!(f, "{pad}{0} = {0} + plain;", Expr::Var(*v)),
            Stmt::Mutate(m, tail) => writeln!(f, "{pad}{m};{}", tail_note(*tail)),
            Stmt::Branch(c, t, e, tail) => writeln!(
                f,
                "{pad}if ({c}) {{ {t}; }} else {{ {e}; }}{}",
                tail_note(*tail)
            ),
            Stmt::Use(src, v, how) => {
                writeln!(
                    f,
                    "{pad}decide_{}({}, {src});",
                    decide_name(*how),
                    Expr::Var(*v)
                )
            }
            Stmt::Hidden(h) => {
                writeln!(
                    f,
                    "{pad}{{  // values chosen by dyn decisions, read at the end"
                )?;
                writeln!(f, "{pad}  {}", bind_text(&h.first, "k"))?;
                body(f, &h.between)?;
                if let Some(m) = &h.second {
                    writeln!(f, "{pad}  {}", bind_text(m, "m"))?;
                }
                body(f, &h.after)?;
                let key = if h.second.is_some() {
                    "k * 10 + m"
                } else {
                    "k"
                };
                let x = Expr::Var(h.var);
                match &h.read {
                    Read::Decide(how) => {
                        writeln!(f, "{pad}  decide_{}({x}, {key});", decide_name(*how))?
                    }
                    Read::Guarded(c, t) => writeln!(
                        f,
                        "{pad}  if ({c}) {{ if ({key} == {t}) {x} = {x} + 100; }}"
                    )?,
                }
                writeln!(f, "{pad}}}")
            }
            Stmt::Machine {
                counter,
                bound,
                machine,
                var,
                body: b,
                tail,
            } => {
                let c = Expr::Var(*counter);
                let bound = match bound {
                    Bound::Param(p) => Expr::Param(*p),
                    Bound::Const(k) => Expr::Const(*k),
                };
                let (init, step, read) = match machine {
                    Machine::Ring(r) => (
                        format!("ring = {r:?}"),
                        "ring.rotate_left(1)".to_string(),
                        "ring[0]",
                    ),
                    Machine::Toggle(k) => (
                        "slot = None".to_string(),
                        format!("if slot.take().is_none() {{ slot.get_or_insert_with(|| {k}); }}"),
                        "slot.unwrap_or(-1)",
                    ),
                    Machine::Counter(by, period) => (
                        "phase = 0".to_string(),
                        format!("bump(&mut phase, {by}, {period})"),
                        "phase",
                    ),
                };
                writeln!(f, "{pad}{c} = 0; {init};")?;
                writeln!(f, "{pad}while ({c} < {bound}) {{")?;
                writeln!(f, "{pad}  {c} = {c} + 1;")?;
                writeln!(f, "{pad}  {step};{}", tail_note(*tail))?;
                writeln!(f, "{pad}  decide_op({}, {read});", Expr::Var(*var))?;
                body(f, b)?;
                writeln!(f, "{pad}}}")
            }
            Stmt::Adapter(a) => {
                let (call, ret) = match a.kind {
                    AdapterKind::ForEach => ("for_each", "if (cond) v += i + 1"),
                    AdapterKind::TryForEach => ("try_for_each", "cond ? Break : (v ^= i + 1)"),
                    AdapterKind::Any => ("any", "cond"),
                    AdapterKind::All => ("all", "cond"),
                    AdapterKind::Count => ("filter(..).count", "cond"),
                    AdapterKind::Position => ("position", "cond"),
                    AdapterKind::Fold => ("fold", "cond ? acc + 2 : acc - 1"),
                    AdapterKind::MapCollect => ("map(..).collect", "cond ? v + i + 1 : v * 3"),
                    AdapterKind::MapSum => ("map(..).sum", "cond ? i + 1 : 0"),
                };
                let form = match a.form {
                    ClosureForm::Inline => "",
                    ClosureForm::Named => " (named closure)",
                    ClosureForm::Helper => " (through an unannotated helper)",
                };
                let c = Expr::Var(a.counter);
                writeln!(
                    f,
                    "{pad}{} <- (0..{}).{call}(|i| {{{form}",
                    Expr::Var(a.var),
                    a.k
                )?;
                writeln!(f, "{pad}  {c} = i + 1;")?;
                body(f, &a.body)?;
                writeln!(f, "{pad}  {ret}  /* cond: {} */", a.cond)?;
                writeln!(f, "{pad}}});")
            }
        }
    }
}

fn decide_name(how: Decide) -> &'static str {
    match how {
        Decide::Op => "op",
        Decide::Branch => "branch",
        Decide::Bound => "bound",
        Decide::Nested => "nested",
    }
}

/// A binding as pseudo-Rust, binding the key to `n`.
fn bind_text(b: &Bind, n: &str) -> String {
    match b {
        Bind::Call(c, x, y, staged) => {
            let helper = if *staged { "pick" } else { "choose" };
            format!("let {n} = {helper}({c}, {x}, {y});")
        }
        Bind::Bool(c) => format!("let {n} = ({c}).is_true();"),
        Bind::Tuple(c, x, y) => {
            format!("let ({n}p, {n}q) = pair({c}, {x}, {y});  // {n} = {n}p * 5 - {n}q")
        }
        Bind::Reset(c, x) => {
            format!("let mut s = 0; if ({c}) {{ s = {x}; }} let {n} = s * 2; s = 0;")
        }
        Bind::Take(c, x) => {
            format!("let mut o = None; if ({c}) {{ o = Some({x}); }} let {n} = o.take();  // or -1")
        }
        Bind::TakeSlot => format!("let {n} = slot.take();  // or -2"),
        Bind::Weight(c, x, y, above) => {
            let (x, y) = (f64::from(*x) * 0.25, f64::from(*y) * 0.25);
            let read = if *above { "w > 1.5" } else { "w as i32" };
            format!("let w = weight({c}, {x:?}, {y:?});  // {n} = {read}")
        }
        Bind::Pass(c, x, y, how, typed) => {
            pass_text(&format!("pick({c}, {x}, {y})"), *how, *typed, n)
        }
        Bind::Struct(c, x, y, false) => {
            let inside = if (x + y) % 2 != 0 {
                "in a closure"
            } else {
                "inside"
            };
            format!("let {n}w = choose_w({c}, {x}, {y});  // W(f64), not Hash, chosen {inside}; {n} = {n}w.0 as i32")
        }
        Bind::Struct(c, x, y, true) => {
            format!("let {n}w: H = choose_h({c}, {x}, {y});  // H(i32), Hash; {n} = {n}w.0")
        }
        Bind::MutStruct(c, x, false) => {
            format!("let mut {n}w = W(0.0); if ({c}) {{ {n}w.0 += {x}.0; }}  // not Hash; {n} = {n}w.0 as i32")
        }
        Bind::MutStruct(c, x, true) => {
            format!("let mut {n}w = H(0); if ({c}) {{ {n}w.0 += {x}; }}  // Hash; {n} = {n}w.0")
        }
    }
}

/// `Bind::Pass` as pseudo-Rust: `value` handed on as `how` says, binding
/// the key to `n` for the statements after it (`typed`: bound by a typed
/// `let` first).
fn pass_text(value: &str, how: Pass, typed: bool, n: &str) -> String {
    let (value, first) = if typed {
        (n.to_string(), format!("let {n}: i32 = {value}; "))
    } else {
        (value.to_string(), String::new())
    };
    let rest = match how {
        Pass::Argument => format!("carry({value}, ..);  // {n}: the annotated helper's parameter"),
        Pass::Receiver if typed => {
            format!("Key({value}).carry(..);  // {n}: self.0 in the annotated method")
        }
        Pass::Receiver => {
            format!("Key::{value}.carry(..);  // {n}: self.0 in the annotated method")
        }
        Pass::Match => format!("match {value} {{ {n} => .. }}  // the rest in the arm"),
        Pass::Field => {
            format!(
                "match picked({value}).k {{ {n} => .. }}  // a call's field; the rest in the arm"
            )
        }
        Pass::IfLet => format!("if let Some({n}) = Some({value}) {{ .. }}  // the rest inside"),
        Pass::WhileLet => {
            format!("while let Some({n}) = Some({value}) {{ ..; return }}  // the rest inside")
        }
    };
    format!("{first}{rest}")
}

fn tail_note(tail: bool) -> &'static str {
    if tail {
        "  // the walk's call is a tail expression (no `;`)"
    } else {
        ""
    }
}

impl fmt::Display for Mutation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Mutation::Push(c) => write!(f, "stack.push({c})"),
            Mutation::Pop => write!(f, "stack.pop()"),
            Mutation::Truncate(n) => write!(f, "stack.truncate({n})"),
            Mutation::Take => write!(f, "slot.take()"),
            Mutation::GetOrInsert(c) => write!(f, "slot.get_or_insert_with(|| {c})"),
            Mutation::Replace(c) => write!(f, "slot.replace({c})"),
            Mutation::Insert(k, c) => write!(f, "map.insert({k}, {c})"),
            Mutation::Remove(k) => write!(f, "map.remove(&{k})"),
            Mutation::Mark(k) => write!(f, "set.insert({k})"),
            Mutation::Unmark(k) => write!(f, "set.remove(&{k})"),
            Mutation::Bump(by, period) => write!(f, "bump(&mut phase, {by}, {period})"),
        }
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Plain => write!(f, "plain"),
            Source::Len => write!(f, "stack.len()"),
            Source::Top => write!(f, "stack.last().unwrap_or(-1)"),
            Source::Slot => write!(f, "slot.unwrap_or(-2)"),
            Source::Get(k) => write!(f, "map.get(&{k}).unwrap_or(0)"),
            Source::Keys => write!(f, "map.len()"),
            Source::Has(k) => write!(f, "set.contains(&{k})"),
            Source::Phase => write!(f, "phase"),
        }
    }
}

impl fmt::Display for Program {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, init) in self.inits.iter().enumerate() {
            match init {
                Init::Zero => writeln!(f, "v{i} = 0;")?,
                Init::Param(p) => writeln!(f, "v{i} = {};", Expr::Param(*p))?,
                Init::Const(c) => writeln!(f, "v{i} = {c};")?,
            }
        }
        match &self.body {
            Stmt::Block(ss) => ss.iter().try_for_each(|s| s.write(f, 0))?,
            s => s.write(f, 0)?,
        }
        writeln!(
            f,
            "return combine(v0..v3, c0..c{});",
            self.counters.max(1) - 1
        )
    }
}
