//! Backward may-analyses as data, in the form of §3.4's extended semantics.
//!
//! An analysis gives, for each label `l`, a prophecy variable precondition
//! `S1 ⊆ π` (checked before `l` executes) and, for each edge `l → l'`, a
//! prediction `π' ⊆ π ∪ S2`. Read as constraints on the analysis result,
//! `β_l ⊇ S1(l)` and `β_l' ⊆ β_l ∪ S2(l, l')`; the least solution is
//!
//! ```text
//! β_l = S1(l) ∪ ⋃_{l' ∈ succ(l)} (β_l' − S2(l, l'))
//! ```
//!
//! which is the usual backward may-equation with `gen = S1`, `kill = S2`.
//! Both [`crate::execute`] (re-execution) and [`crate::dataflow`] (worklist)
//! solve exactly these constraints.
//!
//! Very busy expressions is a *must* analysis (greatest solution). It fits
//! the framework through its complement: [`VeryBusyExpressions`] predicts
//! the expressions that are *not* very busy, a may-analysis, and
//! [`VeryBusyExpressions::very_busy`] complements the result. The framework
//! stays the paper's (least solutions of `⊆` constraints); the duality is
//! local to the instance.

use std::collections::BTreeSet;
use std::collections::HashMap;

use crate::ast::{BExpr, Cmd, Expr, Program, Var};

/// A backward may-analysis given by its prophecy variable preconditions and
/// predictions. Labels are command indices.
pub trait Analysis {
    /// What the prophecy variable `π` is a set of.
    type Item: Ord + Clone + std::fmt::Debug;

    /// `S1`: the items that must be in `π` before `l` executes.
    fn precondition(&self, p: &Program, l: usize) -> BTreeSet<Self::Item>;

    /// `S2`: the transition `l → l_next` predicts `π' ⊆ π ∪ S2`.
    fn prediction(&self, p: &Program, l: usize, l_next: usize) -> BTreeSet<Self::Item>;

    /// A short name, for reports.
    fn name(&self) -> &'static str;
}

/// Live variables (Fig. "Program Execution Rules for Live Variable
/// Prediction"): a variable read by `l` must be predicted live before `l`;
/// `l : v := e` may predict `v` live afterwards without it being live
/// before, since the assignment overwrites it.
#[derive(Clone, Copy, Debug, Default)]
pub struct LiveVariables;

impl Analysis for LiveVariables {
    type Item = Var;

    fn precondition(&self, p: &Program, l: usize) -> BTreeSet<Var> {
        p.cmds[l].cmd.reads()
    }

    fn prediction(&self, p: &Program, l: usize, _l_next: usize) -> BTreeSet<Var> {
        match &p.cmds[l].cmd {
            Cmd::Assign(v, _) => BTreeSet::from([v.clone()]),
            _ => BTreeSet::new(),
        }
    }

    fn name(&self) -> &'static str {
        "live variables"
    }
}

/// A non-trivial arithmetic expression (`+`, `-`, `*`) of one program, as
/// an index into its [`VeryBusyExpressions`] table. Interned because the
/// analyses compare and copy sets of them constantly ([`Expr`] is not even
/// `Ord`); [`VeryBusyExpressions::expr`] gives the expression back.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ExprId(pub u32);

/// Very busy expressions. An expression `e` is very busy before `l` if on
/// every path from `l`, `e` is evaluated before any variable it reads is
/// written (a path that ends without evaluating `e` disqualifies it). That
/// is a must-analysis:
///
/// ```text
/// VB(l) = gen(l) ∪ (⋂_{l' ∈ succ(l)} VB(l') − kill(l))     (greatest; ⋂∅ = ∅)
/// ```
///
/// with `gen(l)` the non-trivial subexpressions `l` evaluates and
/// `kill(l)` those reading the variable `l` assigns. As prophecy items this
/// instance uses the complement `NVB(l) = U − VB(l)` (`U`: every non-trivial
/// subexpression of the program), the least solution of
///
/// ```text
/// NVB(l) = (kill(l) − gen(l)) ∪ ⋃_{l'} (NVB(l') − gen(l))    (l has successors)
/// NVB(l) = U − gen(l)                                       (l has none)
/// ```
///
/// So the precondition is "an expression `l` kills without evaluating it
/// (or, at an exit, any expression `l` does not evaluate) must be predicted
/// not very busy", and the prediction is `π' ⊆ π ∪ gen(l)`: evaluating `e`
/// at `l` is the only way a not-very-busy prediction can appear afresh.
///
/// Unlike [`LiveVariables`], the instance is built for one program: it
/// interns the expressions and keeps `gen`, `kill` and the preconditions,
/// which re-execution asks for at every visit.
#[derive(Clone, Debug)]
pub struct VeryBusyExpressions {
    exprs: Vec<Expr>,
    ids: HashMap<Expr, ExprId>,
    gen: Vec<BTreeSet<ExprId>>,
    kill: Vec<BTreeSet<ExprId>>,
    pre: Vec<BTreeSet<ExprId>>,
}

impl VeryBusyExpressions {
    /// The analysis of `p`; its methods must be given `p` again.
    pub fn new(p: &Program) -> Self {
        let mut vbe = VeryBusyExpressions {
            exprs: Vec::new(),
            ids: HashMap::new(),
            gen: Vec::new(),
            kill: Vec::new(),
            pre: Vec::new(),
        };
        vbe.gen = p.cmds.iter().map(|c| vbe.intern_cmd(&c.cmd)).collect();
        let reads: Vec<_> = vbe.exprs.iter().map(Expr::reads).collect();
        vbe.kill = p.cmds.iter().map(|c| killed_by(&c.cmd, &reads)).collect();
        vbe.pre = (0..p.cmds.len()).map(|l| vbe.required(p, l)).collect();
        vbe
    }

    /// `U`: every non-trivial subexpression in the program.
    pub fn universe(&self) -> BTreeSet<ExprId> {
        (0..self.exprs.len() as u32).map(ExprId).collect()
    }

    /// The expression `id` stands for.
    pub fn expr(&self, id: ExprId) -> &Expr {
        &self.exprs[id.0 as usize]
    }

    /// The id of `e`, if it is a non-trivial subexpression of the program.
    pub fn id(&self, e: &Expr) -> Option<ExprId> {
        self.ids.get(e).copied()
    }

    /// `gen(l)`: the non-trivial subexpressions command `l` evaluates.
    pub fn gen(&self, l: usize) -> &BTreeSet<ExprId> {
        &self.gen[l]
    }

    /// `kill(l)`: the expressions reading the variable `l` assigns.
    pub fn kill(&self, l: usize) -> &BTreeSet<ExprId> {
        &self.kill[l]
    }

    /// Turns a result of this analysis (not-very-busy sets) into the very
    /// busy expressions before each label.
    pub fn very_busy(&self, not_busy: &[BTreeSet<ExprId>]) -> Vec<BTreeSet<ExprId>> {
        let u = self.universe();
        not_busy
            .iter()
            .map(|n| u.difference(n).copied().collect())
            .collect()
    }

    /// `S1(l)`: `kill(l) − gen(l)`, or `U − gen(l)` where no path goes on.
    fn required(&self, p: &Program, l: usize) -> BTreeSet<ExprId> {
        let must = match p.successors(l).is_empty() {
            true => self.universe(),
            false => self.kill[l].clone(),
        };
        must.difference(&self.gen[l]).copied().collect()
    }

    fn intern_cmd(&mut self, c: &Cmd) -> BTreeSet<ExprId> {
        let mut out = BTreeSet::new();
        match c {
            Cmd::Assign(_, e) => self.intern(e, &mut out),
            Cmd::IfGoto(b, _) => self.intern_b(b, &mut out),
            _ => {}
        }
        out
    }

    /// Adds the non-trivial subexpressions of `e`, innermost first.
    fn intern(&mut self, e: &Expr, out: &mut BTreeSet<ExprId>) {
        if let Expr::Add(a, b) | Expr::Sub(a, b) | Expr::Mul(a, b) = e {
            self.intern(a, out);
            self.intern(b, out);
            let next = ExprId(self.exprs.len() as u32);
            let id = *self.ids.entry(e.clone()).or_insert(next);
            if id == next {
                self.exprs.push(e.clone());
            }
            out.insert(id);
        }
    }

    fn intern_b(&mut self, b: &BExpr, out: &mut BTreeSet<ExprId>) {
        match b {
            BExpr::True | BExpr::False => {}
            BExpr::Eq(x, y) | BExpr::Le(x, y) => {
                self.intern(x, out);
                self.intern(y, out);
            }
            BExpr::Not(x) => self.intern_b(x, out),
            BExpr::And(x, y) | BExpr::Or(x, y) => {
                self.intern_b(x, out);
                self.intern_b(y, out);
            }
        }
    }
}

/// The ids of the expressions (given by what they read) that read the
/// variable `c` assigns.
fn killed_by(c: &Cmd, reads: &[BTreeSet<Var>]) -> BTreeSet<ExprId> {
    let Cmd::Assign(v, _) = c else {
        return BTreeSet::new();
    };
    let ids = (0..reads.len()).filter(|&i| reads[i].contains(v));
    ids.map(|i| ExprId(i as u32)).collect()
}

impl Analysis for VeryBusyExpressions {
    type Item = ExprId;

    fn precondition(&self, p: &Program, l: usize) -> BTreeSet<ExprId> {
        debug_assert_eq!(p.cmds.len(), self.pre.len(), "built for another program");
        self.pre[l].clone()
    }

    fn prediction(&self, _p: &Program, l: usize, _l_next: usize) -> BTreeSet<ExprId> {
        self.gen[l].clone()
    }

    fn name(&self) -> &'static str {
        "very busy expressions (as not-very-busy predictions)"
    }
}
