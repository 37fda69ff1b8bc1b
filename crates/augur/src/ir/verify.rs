//! The IR verifier: checks the invariants in the [module docs](super).

use super::{Block, Expr, ExprId, Function, StmtKind, Type, VarId, VarKind};
use std::collections::HashSet;

/// Checks `f`'s invariants; the error names the first violation.
pub fn verify(f: &Function) -> Result<(), String> {
    let mut v = Verifier {
        f,
        scopes: vec![f.params.iter().copied().collect()],
        declared: HashSet::new(),
        loops: 0,
    };
    for &p in &f.params {
        if !matches!(f.vars[p].kind, VarKind::Param(_)) {
            return Err(format!("parameter {p} is not marked as a parameter"));
        }
    }
    v.block(&f.body)
}

struct Verifier<'a> {
    f: &'a Function,
    scopes: Vec<HashSet<VarId>>,
    declared: HashSet<VarId>,
    loops: usize,
}

impl Verifier<'_> {
    fn in_scope(&self, v: VarId) -> bool {
        self.scopes.iter().any(|s| s.contains(&v))
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
        self.scopes.push(HashSet::new());
        for s in b {
            self.stmt(&s.kind)?;
        }
        self.scopes.pop();
        Ok(())
    }

    fn declare(&mut self, var: VarId) -> Result<(), String> {
        if !self.declared.insert(var) {
            return Err(format!("variable {} is declared twice", self.f.var_name(var)));
        }
        self.scopes.last_mut().expect("a scope").insert(var);
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
                self.scopes.push(HashSet::new());
                self.stmt(&init.kind)?;
                self.expr(*cond)?;
                self.loops += 1;
                self.block(body)?;
                self.loops -= 1;
                self.stmt(&step.kind)?;
                self.scopes.pop();
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
