//! The IR verifier: checks the invariants in the [module docs](super).

use super::{Block, Expr, ExprId, Function, LabelId, StmtKind, Type, VarId, VarKind};

/// Checks `f`'s invariants; the error names the first violation.
pub fn verify(f: &Function) -> Result<(), String> {
    let mut v = Verifier {
        f,
        scopes: vec![Vec::new()],
        visible: vec![0; f.vars.len()],
        declared: vec![false; f.vars.len()],
        loops: 0,
        defined: Vec::new(),
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
    v.block(&f.body)?;
    match v.gotos.iter().find(|l| !v.defined.contains(l)) {
        Some(l) => Err(format!(
            "goto {l:?} names a label the function does not define"
        )),
        None => Ok(()),
    }
}

/// Scopes are lists of the variables they declare; `visible` counts, per
/// variable, the open scopes declaring it, so a lookup is O(1).
struct Verifier<'a> {
    f: &'a Function,
    scopes: Vec<Vec<VarId>>,
    visible: Vec<u32>,
    declared: Vec<bool>,
    loops: usize,
    /// Every label defined (each at most once).
    defined: Vec<LabelId>,
    /// Every `goto`'s label: each must be defined somewhere.
    gotos: Vec<LabelId>,
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
        let mut err = Ok(());
        self.f.for_each_var(e, &mut |v| {
            if err.is_ok() && !self.in_scope(v) {
                err = Err(format!(
                    "variable {} is used outside the scope of its declaration",
                    self.f.var_name(v)
                ));
            }
        });
        err
    }

    fn block(&mut self, b: &Block) -> Result<(), String> {
        self.push_scope();
        for s in b {
            if let StmtKind::Label(l) = s.kind {
                if self.defined.contains(&l) {
                    return Err(format!("label {l:?} is defined twice"));
                }
                self.defined.push(l);
            }
            if let StmtKind::Goto(l) = s.kind {
                self.gotos.push(l);
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
                    Expr::Var(_) | Expr::Index(..) | Expr::Deref(_)
                ) {
                    return Err(format!("assignment to a non-place expression {place}"));
                }
                self.expr(*place)?;
                self.expr(*value)?;
            }
            StmtKind::Eval(e) => self.expr(*e)?,
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
            StmtKind::Break | StmtKind::Continue if self.loops == 0 => {
                return Err("break or continue outside a loop".into());
            }
            StmtKind::Break | StmtKind::Continue | StmtKind::Label(_) | StmtKind::Goto(_) => {}
            StmtKind::Return(r) => match (r, &self.f.ret) {
                (None, Type::Void) => {}
                (Some(e), t) if *t != Type::Void => self.expr(*e)?,
                _ => return Err("return value does not match the return type".into()),
            },
        }
        Ok(())
    }
}
