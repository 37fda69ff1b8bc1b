//! The staged interpreter (the first Futamura projection): an interpreter
//! for the core language written with augur's `Dyn`/`Static` values. Run
//! under [`augur::Builder`], it turns a program into a C function over the
//! program's variables.
//!
//! * The program counter and "which assignment last wrote each variable"
//!   are first-stage (`Static`) state: the program's structure is unrolled
//!   into C, and a backward `goto` whose state repeats becomes a loop.
//! * Variable values are second-stage (`Dyn<i64>` locals, read from and
//!   written back to the state array the function gets).
//! * Arithmetic on constants is folded in the first stage; the rest wraps
//!   like the reference semantics (computed in `uint64_t`, so C has no
//!   signed overflow).
//! * With liveness on, each assignment has a `Prophecy<bool>` "the value
//!   written here is read later". Reading a variable requires the prophecy
//!   of the assignment that last wrote it; `halt` reads every variable (the
//!   final state is the output). An assignment predicted dead generates no
//!   code. Reads inside a dropped assignment's right-hand side require
//!   nothing (they are dead too), so chains of dead assignments all go.
//!
//! ```
//! use augur_imp::{staged, Cmd, Expr, Program};
//! let p = Program::from_cmds([
//!     ("l0", Cmd::Assign("t".into(), Expr::Num(5))),           // dead: overwritten
//!     ("l1", Cmd::Assign("t".into(), Expr::Var("x".into()))),
//!     ("l2", Cmd::Halt),
//!     ("l3", Cmd::Done),
//! ]);
//! let s = staged::stage(&p, true).unwrap();
//! assert_eq!(s.dropped, ["l0"]);
//! let mut state = vec![0, 7]; // t, x
//! s.run_interpreted(&mut state).unwrap();
//! assert_eq!(state, [7, 7]);
//! ```

use crate::ast::{BExpr, Cmd, Expr, Program, Var};
use augur::prophecy::Prophecy;
use augur::{Builder, Dyn, Extracted, Static};
use std::collections::HashMap;

/// The compiled function: takes the state array (one `int64_t` per
/// variable, in [`Staged::vars`] order), runs the program, writes the final
/// state back.
pub type Native = unsafe extern "C" fn(*mut i64);

/// A staged program.
pub struct Staged {
    /// The extracted function (C code, IR, stats, `explain`).
    pub extracted: Extracted<Native>,
    /// The program's variables, in state-array order (sorted).
    pub vars: Vec<Var>,
    /// Labels of the assignments that generated no code (dead).
    pub dropped: Vec<String>,
}

/// A value known in the first stage, or computed by the second.
#[derive(Clone, Copy)]
enum Val<T: augur::CScalar> {
    Known(T),
    Dyn(Dyn<T>),
}

impl Val<i64> {
    #[augur::staged]
    fn dyn_(self) -> Dyn<i64> {
        match self {
            Val::Known(n) => Dyn::new(n),
            Val::Dyn(d) => d,
        }
    }
}

/// The first-stage interpreter's view of the running program.
struct Interp<'a> {
    p: &'a Program,
    /// Variable index by name.
    slot: HashMap<&'a str, usize>,
    /// Variable names, in slot order.
    names: &'a [Var],
    vars: Vec<Dyn<i64>>,
    /// Per command: the liveness prophecy of an assignment.
    live: Vec<Option<Prophecy<bool>>>,
    /// Per variable: the command that last assigned it on this path.
    last: Static<Vec<Option<usize>>>,
}

/// Stages `p` into a C function (`liveness`: drop dead assignments).
///
/// A program that can enter a loop without any test in it (`l: goto l`)
/// cannot be staged: the error names the label.
#[augur::staged]
pub fn stage(p: &Program, liveness: bool) -> augur::Result<Staged> {
    stage_with(&Builder::new(), "imp_program", p, liveness)
}

/// [`stage`] with a given builder (limits, prophecy mode) and C function
/// name.
#[augur::staged]
pub fn stage_with(
    builder: &Builder,
    name: &str,
    p: &Program,
    liveness: bool,
) -> augur::Result<Staged> {
    let vars: Vec<Var> = p.variables().into_iter().collect();
    // A loop with tests in it may still never exit (`l1: if x <= 9 then
    // l1` with x fixed): that is the program's meaning, not a mistake.
    let builder = builder.clone().allow_infinite_loops(true);
    let extracted = builder.extract(name, |state: Dyn<*mut i64>| {
        let mut it = Interp::new(p, &vars, state, liveness);
        it.run();
        for (i, v) in it.vars.iter().enumerate() {
            state.at(i).set(*v);
        }
    })?;
    let dropped = extracted
        .explain()
        .cells
        .iter()
        .filter(|c| c.value == "false")
        .filter_map(|c| c.name.as_deref()?.strip_suffix(" live").map(str::to_string))
        .collect();
    Ok(Staged {
        extracted,
        vars,
        dropped,
    })
}

impl<'a> Interp<'a> {
    #[augur::staged]
    fn new(p: &'a Program, vars: &'a [Var], state: Dyn<*mut i64>, liveness: bool) -> Self {
        let slot = vars
            .iter()
            .enumerate()
            .map(|(i, v)| (v.as_str(), i))
            .collect();
        let values = vars
            .iter()
            .enumerate()
            .map(|(i, v)| Dyn::named(v, state.at(i)))
            .collect();
        // One prophecy per assignment, made before any decision, so each
        // is its own cell (creation order = command order).
        let live = p
            .cmds
            .iter()
            .map(|c| {
                let assigns = matches!(c.cmd, Cmd::Assign(..));
                (liveness && assigns).then(|| Prophecy::named(format!("{} live", c.label), false))
            })
            .collect();
        Interp {
            p,
            slot,
            names: vars,
            vars: values,
            live,
            last: Static::new(vec![None; vars.len()]),
        }
    }

    /// Runs from the first command to `halt` (or falling off the end).
    ///
    /// A first-stage state that comes back with no dyn test in between is
    /// a loop the program can never leave (`l: goto l`): staging stops with
    /// a panic naming the label (an `Error::Panic` from `extract`), since C
    /// has no faithful form for it (a side-effect-free infinite loop is
    /// undefined behaviour there).
    #[augur::staged]
    fn run(&mut self) {
        // `pc` is a `Static` (tags see it), so the attribute need not track
        // the binding; a tracked binding's update after `pc.set(next)` would
        // be the body's last token, which ends its region.
        let pc = &mut Static::new(self.p.first());
        let mut since_test = std::collections::BTreeSet::new();
        while let Some(i) = **pc {
            if !since_test.insert((i, self.last.get())) {
                panic!(
                    "the program loops forever at `{}` without testing anything",
                    self.p.cmds[i].label
                );
            }
            let next = match &self.p.cmds[i].cmd {
                Cmd::Skip => self.p.next(i),
                Cmd::Assign(v, e) => {
                    self.assign(i, v, e);
                    self.p.next(i)
                }
                Cmd::Goto(g) => self.p.index(g),
                Cmd::IfGoto(b, g) => {
                    let taken = match self.bexpr(b) {
                        Val::Known(t) => t,
                        Val::Dyn(c) => {
                            since_test.clear();
                            c.is_true()
                        }
                    };
                    if taken {
                        self.p.index(g)
                    } else {
                        self.p.next(i)
                    }
                }
                Cmd::Halt | Cmd::Done => {
                    self.read_all();
                    None
                }
            };
            pc.set(next);
        }
    }

    #[augur::staged]
    fn assign(&mut self, i: usize, v: &str, e: &Expr) {
        let k = self.slot[v];
        let emit = self.live[i].is_none_or(|p| p.get());
        if emit {
            let value = self.expr(e).dyn_();
            self.vars[k].set(value);
        }
        self.last.update(|l| l[k] = Some(i));
    }

    /// A variable read: the assignment that wrote it must be live.
    #[augur::staged]
    fn read(&self, v: &str) -> Dyn<i64> {
        let k = self.slot[v];
        if let Some(Some(p)) = self.last[k].map(|a| self.live[a]) {
            p.require(true);
        }
        self.vars[k]
    }

    /// The final state is the output: every variable is read.
    #[augur::staged]
    fn read_all(&self) {
        for v in self.names {
            self.read(v);
        }
    }

    #[augur::staged]
    fn expr(&self, e: &Expr) -> Val<i64> {
        let bin =
            |a: &Expr, b: &Expr, f: fn(i64, i64) -> i64, g: fn(Dyn<u64>, Dyn<u64>) -> Dyn<u64>| {
                match (self.expr(a), self.expr(b)) {
                    (Val::Known(x), Val::Known(y)) => Val::Known(f(x, y)),
                    (x, y) => Val::Dyn(g(x.dyn_().cast(), y.dyn_().cast()).cast()),
                }
            };
        match e {
            Expr::Num(n) => Val::Known(*n),
            Expr::Var(v) => Val::Dyn(self.read(v)),
            Expr::Add(a, b) => bin(a, b, i64::wrapping_add, |x, y| x + y),
            Expr::Sub(a, b) => bin(a, b, i64::wrapping_sub, |x, y| x - y),
            Expr::Mul(a, b) => bin(a, b, i64::wrapping_mul, |x, y| x * y),
        }
    }

    #[augur::staged]
    fn bexpr(&self, b: &BExpr) -> Val<bool> {
        let cmp = |a: &Expr,
                   c: &Expr,
                   f: fn(&i64, &i64) -> bool,
                   g: fn(Dyn<i64>, Dyn<i64>) -> Dyn<bool>| {
            match (self.expr(a), self.expr(c)) {
                (Val::Known(x), Val::Known(y)) => Val::Known(f(&x, &y)),
                (x, y) => Val::Dyn(g(x.dyn_(), y.dyn_())),
            }
        };
        let logic = |a: &BExpr,
                     c: &BExpr,
                     f: fn(bool, bool) -> bool,
                     g: fn(Dyn<bool>, Dyn<bool>) -> Dyn<bool>| {
            match (self.bexpr(a), self.bexpr(c)) {
                (Val::Known(x), Val::Known(y)) => Val::Known(f(x, y)),
                (x, y) => Val::Dyn(g(x.dyn_bool(), y.dyn_bool())),
            }
        };
        match b {
            BExpr::True => Val::Known(true),
            BExpr::False => Val::Known(false),
            BExpr::Eq(x, y) => cmp(x, y, i64::eq, |a, b| a.eq(b)),
            BExpr::Le(x, y) => cmp(x, y, i64::le, |a, b| a.le(b)),
            BExpr::Not(x) => match self.bexpr(x) {
                Val::Known(t) => Val::Known(!t),
                Val::Dyn(d) => Val::Dyn(!d),
            },
            BExpr::And(x, y) => logic(x, y, |a, b| a && b, |a, b| a.and(b)),
            BExpr::Or(x, y) => logic(x, y, |a, b| a || b, |a, b| a.or(b)),
        }
    }
}

impl Val<bool> {
    #[augur::staged]
    fn dyn_bool(self) -> Dyn<bool> {
        match self {
            Val::Known(t) => Dyn::new(t),
            Val::Dyn(d) => d,
        }
    }
}

impl Staged {
    /// Runs the function in augur's IR interpreter on `state`.
    pub fn run_interpreted(&self, state: &mut [i64]) -> augur::Result<()> {
        let mut it = augur::Interpreter::new();
        let ptr = it.memory_mut().alloc_slice(state);
        self.extracted.interpret_in(&mut it, &[ptr])?;
        let out: Vec<i64> = it.memory().read_slice(ptr, state.len())?;
        state.copy_from_slice(&out);
        Ok(())
    }
}
