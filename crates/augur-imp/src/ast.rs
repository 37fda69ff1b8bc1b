//! The core language of the paper's §3.2: arithmetic expressions `E`,
//! boolean expressions `B`, and labelled commands `C`.
//!
//! ```text
//! E ::= n | v | E0 + E1 | E0 - E1 | E0 * E1
//! B ::= true | false | E0 = E1 | E0 <= E1 | not B | B0 and B1 | B0 or B1
//! C ::= skip | v := E | if B then g | goto g | halt | done
//! ```
//!
//! A [`Program`] is a sequence of labelled commands `l : c` with unique
//! labels; `next(l)` is the command after `l` in the sequence. Integers are
//! `i64` with wrapping arithmetic (the paper's `N` is unbounded; wrapping
//! keeps every execution defined and deterministic).

use std::collections::{BTreeSet, HashMap};

/// A variable name.
pub type Var = String;

/// A label name.
pub type Label = String;

/// Where something is in the program text: 1-based line and column.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Pos {
    /// Line, from 1.
    pub line: u32,
    /// Column, from 1.
    pub col: u32,
}

/// An arithmetic expression.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Expr {
    /// An integer literal `n`.
    Num(i64),
    /// A variable `v`.
    Var(Var),
    /// `E0 + E1`.
    Add(Box<Expr>, Box<Expr>),
    /// `E0 - E1`.
    Sub(Box<Expr>, Box<Expr>),
    /// `E0 * E1`.
    Mul(Box<Expr>, Box<Expr>),
}

/// A boolean expression.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum BExpr {
    /// `true`.
    True,
    /// `false`.
    False,
    /// `E0 = E1`.
    Eq(Expr, Expr),
    /// `E0 <= E1`.
    Le(Expr, Expr),
    /// `not B`.
    Not(Box<BExpr>),
    /// `B0 and B1`.
    And(Box<BExpr>, Box<BExpr>),
    /// `B0 or B1`.
    Or(Box<BExpr>, Box<BExpr>),
}

/// A command.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Cmd {
    /// `skip`.
    Skip,
    /// `v := E`.
    Assign(Var, Expr),
    /// `if B then g`.
    IfGoto(BExpr, Label),
    /// `goto g`.
    Goto(Label),
    /// `halt`: the program stops (the next command must be `done`).
    Halt,
    /// `done`: the final state after a `halt`.
    Done,
}

/// A labelled command `l : c`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Labelled {
    /// Its label `l`.
    pub label: Label,
    /// Its command `c`.
    pub cmd: Cmd,
    /// Where it is in the source (`Pos::default()` for built programs).
    pub pos: Pos,
}

/// A program: labelled commands in sequence. Command `i` is identified by
/// its index; [`Program::index`] maps labels to indices.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Program {
    /// The commands, in order.
    pub cmds: Vec<Labelled>,
    index: HashMap<Label, usize>,
}

impl Program {
    /// A program of these commands. Duplicate labels keep their first
    /// index; [`crate::check`] reports them.
    pub fn new(cmds: Vec<Labelled>) -> Program {
        let mut index = HashMap::new();
        for (i, c) in cmds.iter().enumerate() {
            index.entry(c.label.clone()).or_insert(i);
        }
        Program { cmds, index }
    }

    /// A program from `(label, command)` pairs (no source positions).
    pub fn from_cmds(cmds: impl IntoIterator<Item = (impl Into<Label>, Cmd)>) -> Program {
        Program::new(
            cmds.into_iter()
                .map(|(l, cmd)| Labelled {
                    label: l.into(),
                    cmd,
                    pos: Pos::default(),
                })
                .collect(),
        )
    }

    /// The index of the command labelled `l`.
    pub fn index(&self, l: &str) -> Option<usize> {
        self.index.get(l).copied()
    }

    /// `first(P)`: the index of the first command (0), if any.
    pub fn first(&self) -> Option<usize> {
        (!self.cmds.is_empty()).then_some(0)
    }

    /// `next(l)`: the index after `i`, if there is a command there.
    pub fn next(&self, i: usize) -> Option<usize> {
        (i + 1 < self.cmds.len()).then_some(i + 1)
    }

    /// `succ(l)`, as indices: `next` for skip, assignment and halt, `g` for
    /// goto, both for `if` (next first); none for `done`. Missing targets
    /// are left out ([`crate::check`] reports them).
    pub fn successors(&self, i: usize) -> Vec<usize> {
        let next = self.next(i);
        match &self.cmds[i].cmd {
            Cmd::Skip | Cmd::Assign(..) | Cmd::Halt => next.into_iter().collect(),
            Cmd::Goto(g) => self.index(g).into_iter().collect(),
            Cmd::IfGoto(_, g) => {
                let mut s: Vec<usize> = next.into_iter().collect();
                if let Some(t) = self.index(g) {
                    if !s.contains(&t) {
                        s.push(t);
                    }
                }
                s
            }
            Cmd::Done => Vec::new(),
        }
    }

    /// `pred(l)`, as indices, for every command.
    pub fn predecessors(&self) -> Vec<Vec<usize>> {
        let mut preds = vec![Vec::new(); self.cmds.len()];
        for i in 0..self.cmds.len() {
            for s in self.successors(i) {
                preds[s].push(i);
            }
        }
        preds
    }

    /// Every variable the program mentions, sorted.
    pub fn variables(&self) -> BTreeSet<Var> {
        let mut vs = BTreeSet::new();
        for c in &self.cmds {
            if let Cmd::Assign(v, _) = &c.cmd {
                vs.insert(v.clone());
            }
            vs.extend(c.cmd.reads());
        }
        vs
    }
}

impl Expr {
    /// `vars(e)`: the variables `e` reads.
    pub fn reads(&self) -> BTreeSet<Var> {
        let mut out = BTreeSet::new();
        self.collect(&mut out);
        out
    }

    fn collect(&self, out: &mut BTreeSet<Var>) {
        match self {
            Expr::Num(_) => {}
            Expr::Var(v) => {
                out.insert(v.clone());
            }
            Expr::Add(a, b) | Expr::Sub(a, b) | Expr::Mul(a, b) => {
                a.collect(out);
                b.collect(out);
            }
        }
    }
}

impl BExpr {
    /// `vars(b)`: the variables `b` reads.
    pub fn reads(&self) -> BTreeSet<Var> {
        let mut out = BTreeSet::new();
        self.collect(&mut out);
        out
    }

    fn collect(&self, out: &mut BTreeSet<Var>) {
        match self {
            BExpr::True | BExpr::False => {}
            BExpr::Eq(a, b) | BExpr::Le(a, b) => {
                a.collect(out);
                b.collect(out);
            }
            BExpr::Not(b) => b.collect(out),
            BExpr::And(a, b) | BExpr::Or(a, b) => {
                a.collect(out);
                b.collect(out);
            }
        }
    }
}

impl Cmd {
    /// `vars(c)`: the variables `c` reads.
    pub fn reads(&self) -> BTreeSet<Var> {
        match self {
            Cmd::Assign(_, e) => e.reads(),
            Cmd::IfGoto(b, _) => b.reads(),
            _ => BTreeSet::new(),
        }
    }
}
