//! The IR verifier: checks the invariants in the [module docs](super).

use super::{Block, Expr, ExprId, Function, LabelId, StmtKind, Type, VarId, VarKind};
use std::collections::HashMap;

/// Checks `f`'s invariants; the error names the first violation.
pub fn verify(f: &Function) -> Result<(), String> {
    let mut v = Verifier {
        f,
        scopes: vec![Vec::new()],
        visible: vec![0; f.vars.len()],
        declared: vec![false; f.vars.len()],
        loops: 0,
        region: 0,
        regions: 0,
        defined: HashMap::new(),
        gotos: Vec::new(),
    };
    for &p in &f.params {
        v.visible[p.0 as usize] = 1;
    }
    for &p in &f.params {
        if !matches!(f.vars[p].kind, VarKind::Param(_)) {
            return Err(format!("parameter {p} is not marked as a parameter"));
        }
    }
    for &p in &f.restrict {
        let pointer = matches!(f.vars.get(p).map(|d| d.ty), Some(Type::Ptr { .. }));
        if !f.params.contains(&p) || !pointer {
            return Err(format!("restrict {p} is not a pointer parameter"));
        }
    }
    v.block(&f.body)?;
    for (l, region) in &v.gotos {
        match v.defined.get(l) {
            None => {
                return Err(format!(
                    "goto {l:?} names a label the function does not define"
                ))
            }
            Some(r) if r != region => {
                return Err(format!("goto {l:?} crosses a kernel launch's boundary"))
            }
            Some(_) => {}
        }
    }
    Ok(())
}

/// Scopes are lists of the variables they declare; `visible` counts, per
/// variable, the open scopes declaring it, so a lookup is O(1).
struct Verifier<'a> {
    f: &'a Function,
    scopes: Vec<Vec<VarId>>,
    visible: Vec<u32>,
    declared: Vec<bool>,
    loops: usize,
    /// The launch body being checked (0: the function's own code), and how
    /// many there are: a `goto` stays in its region.
    region: usize,
    regions: usize,
    /// Every label defined (each at most once), with its region: a map, as
    /// a machine of many points has a label and gotos per point.
    defined: HashMap<LabelId, usize>,
    /// Every `goto`'s label and region: each must be defined there.
    gotos: Vec<(LabelId, usize)>,
}

impl Verifier<'_> {
    fn in_scope(&self, v: VarId) -> bool {
        self.visible.get(v.0 as usize).is_some_and(|&c| c > 0)
    }

    fn push_scope(&mut self) {
        self.scopes.push(Vec::new());
    }

    fn pop_scope(&mut self) {
        for v in self.scopes.pop().expect("a scope") {
            self.visible[v.0 as usize] -= 1;
        }
    }

    fn expr(&self, e: ExprId) -> Result<(), String> {
        match &self.f.exprs[e].kind {
            Expr::Var(v) if !self.in_scope(*v) => {
                return Err(format!(
                    "variable {} is used outside the scope of its declaration",
                    self.f.var_name(*v)
                ))
            }
            Expr::Intrinsic(i, args) => {
                if i.is_barrier() {
                    return Err(format!("@{} is not a whole statement", i.name()));
                }
                i.check(self.f, e, args)?
            }
            _ => {}
        }
        let mut err = Ok(());
        self.f.for_each_child(e, |c| {
            if err.is_ok() {
                err = self.expr(c);
            }
        });
        err
    }

    /// An expression statement: a barrier may be its whole value.
    fn eval(&self, e: ExprId) -> Result<(), String> {
        match &self.f.exprs[e].kind {
            Expr::Intrinsic(i, args) if i.is_barrier() => i.check(self.f, e, args),
            _ => self.expr(e),
        }
    }

    fn block(&mut self, b: &Block) -> Result<(), String> {
        self.push_scope();
        for s in b {
            if let StmtKind::Label(l) = s.kind {
                if self.defined.insert(l, self.region).is_some() {
                    return Err(format!("label {l:?} is defined twice"));
                }
            }
            if let StmtKind::Goto(l) = s.kind {
                self.gotos.push((l, self.region));
            }
            if super::parallel::reductions(s).is_some() {
                // A parallel loop's body is a region: no `goto` leaves it.
                super::parallel::verify(self.f, s)?;
                let outer = self.region;
                self.regions += 1;
                self.region = self.regions;
                let r = self.stmt(&s.kind);
                self.region = outer;
                r?;
                continue;
            }
            self.stmt(&s.kind)?;
        }
        self.pop_scope();
        Ok(())
    }

    fn declare(&mut self, var: VarId) -> Result<(), String> {
        let i = var.0 as usize;
        if i >= self.declared.len() {
            return Err(format!("variable {var} is not in the function"));
        }
        if std::mem::replace(&mut self.declared[i], true) {
            return Err(format!(
                "variable {} is declared twice",
                self.f.var_name(var)
            ));
        }
        self.visible[i] += 1;
        self.scopes.last_mut().expect("a scope").push(var);
        Ok(())
    }

    fn stmt(&mut self, s: &StmtKind) -> Result<(), String> {
        match s {
            StmtKind::Decl { var, init } => {
                if let Some(i) = init {
                    self.expr(*i)?;
                }
                self.declare(*var)?;
            }
            StmtKind::Assign { place, value } => {
                if !matches!(
                    self.f.exprs[*place].kind,
                    Expr::Var(_) | Expr::Index(..) | Expr::Deref(_) | Expr::Field(..)
                ) {
                    return Err(format!("assignment to a non-place expression {place}"));
                }
                self.expr(*place)?;
                self.expr(*value)?;
            }
            StmtKind::Eval(e) => self.eval(*e)?,
            StmtKind::If { cond, then_, else_ } => {
                self.expr(*cond)?;
                self.block(then_)?;
                self.block(else_)?;
            }
            StmtKind::While { cond, body } => {
                self.expr(*cond)?;
                self.loops += 1;
                self.block(body)?;
                self.loops -= 1;
            }
            StmtKind::For {
                init,
                cond,
                step,
                body,
            } => {
                self.push_scope();
                self.stmt(&init.kind)?;
                self.expr(*cond)?;
                self.loops += 1;
                self.block(body)?;
                self.loops -= 1;
                self.stmt(&step.kind)?;
                self.pop_scope();
            }
            StmtKind::Launch(l) => self.launch(l.bid, l.tid, &l.body)?,
            StmtKind::Break | StmtKind::Continue if self.loops == 0 => {
                return Err("break or continue outside a loop".into());
            }
            StmtKind::Break | StmtKind::Continue | StmtKind::Label(_) | StmtKind::Goto(_) => {}
            StmtKind::Return(_) if self.region != 0 => {
                return Err("return inside a kernel launch".into());
            }
            StmtKind::Return(r) => match (r, &self.f.ret) {
                (None, Type::Void) => {}
                (Some(e), t) if *t != Type::Void => self.expr(*e)?,
                _ => return Err("return value does not match the return type".into()),
            },
        }
        Ok(())
    }

    /// A launch declares its indices (`int32_t`) for its body, which no
    /// `break`, `continue`, `return` or `goto` leaves.
    fn launch(&mut self, bid: VarId, tid: VarId, body: &Block) -> Result<(), String> {
        for v in [bid, tid] {
            if self.f.vars.get(v).map(|d| d.ty) != Some(Type::Scalar(super::Scalar::I32)) {
                return Err(format!("launch index {v} is not an int32_t variable"));
            }
        }
        self.push_scope();
        self.declare(bid)?;
        self.declare(tid)?;
        let outer = (self.loops, self.region);
        self.loops = 0;
        self.regions += 1;
        self.region = self.regions;
        let r = self.block(body);
        (self.loops, self.region) = outer;
        self.pop_scope();
        r
    }
}
