//! Scope repair: C declarations are block-scoped, dominance is not. A value
//! defined in a loop's head and read after the loop is declared at the top
//! of the function instead (zero-initialised, which keeps `-Wall -O2` quiet)
//! and assigned where it was defined.

use crate::ir::{Block, Const, Expr, Function, Scalar, Stmt, StmtKind, Type, VarId};
use crate::trace::tag::FastSet as HashSet;

/// Hoists every declaration some use cannot see.
pub fn run(f: &mut Function) {
    let mut out_of_scope = HashSet::default();
    let mut scopes: Vec<HashSet<VarId>> = vec![f.params.iter().copied().collect()];
    find(f, &f.body, &mut scopes, &mut out_of_scope);
    if out_of_scope.is_empty() {
        return;
    }
    let mut body = std::mem::take(&mut f.body);
    demote(f, &mut body, &out_of_scope);
    let mut hoisted: Vec<VarId> = out_of_scope.into_iter().collect();
    hoisted.sort();
    let decls: Vec<Stmt> = hoisted
        .into_iter()
        .map(|v| {
            let init = zero(f, &f.vars[v].ty.clone());
            Stmt::new(StmtKind::Decl { var: v, init })
        })
        .collect();
    f.body = decls.into_iter().chain(body).collect();
}

fn zero(f: &mut Function, ty: &Type) -> Option<crate::ir::ExprId> {
    let c = match ty {
        Type::Scalar(Scalar::Bool) => Const::Bool(false),
        Type::Scalar(Scalar::F32) => Const::F32(0.0),
        Type::Scalar(Scalar::F64) => Const::F64(0.0),
        Type::Scalar(_) => Const::Int(0),
        Type::Ptr { .. } | Type::FnPtr(_) => Const::Null,
        _ => return None,
    };
    Some(f.expr(Expr::Const(c), *ty))
}

fn find(f: &Function, b: &[Stmt], scopes: &mut Vec<HashSet<VarId>>, bad: &mut HashSet<VarId>) {
    scopes.push(HashSet::default());
    for s in b {
        let mut check = |x| {
            f.for_each_var(x, &mut |v| {
                if !scopes.iter().any(|sc| sc.contains(&v)) {
                    bad.insert(v);
                }
            })
        };
        match &s.kind {
            StmtKind::Decl { var, init } => {
                if let Some(i) = init {
                    check(*i);
                }
                scopes.last_mut().expect("scope").insert(*var);
            }
            StmtKind::Assign { place, value } => {
                check(*place);
                check(*value);
            }
            StmtKind::Eval(x) | StmtKind::Return(Some(x)) => check(*x),
            StmtKind::If { cond, then_, else_ } => {
                check(*cond);
                find(f, then_, scopes, bad);
                find(f, else_, scopes, bad);
            }
            StmtKind::While { cond, body } => {
                check(*cond);
                find(f, body, scopes, bad);
            }
            StmtKind::For {
                init,
                cond,
                step,
                body,
            } => {
                scopes.push(HashSet::default());
                find(f, std::slice::from_ref(init), scopes, bad);
                if let StmtKind::Decl { var, .. } = init.kind {
                    scopes.last_mut().expect("scope").insert(var);
                }
                let mut check = |x| {
                    f.for_each_var(x, &mut |v| {
                        if !scopes.iter().any(|sc| sc.contains(&v)) {
                            bad.insert(v);
                        }
                    })
                };
                check(*cond);
                if let StmtKind::Assign { place, value } = step.kind {
                    check(place);
                    check(value);
                }
                find(f, body, scopes, bad);
                scopes.pop();
            }
            StmtKind::Launch(l) => {
                scopes.push(HashSet::from_iter([l.bid, l.tid]));
                find(f, &l.body, scopes, bad);
                scopes.pop();
            }
            _ => {}
        }
    }
    scopes.pop();
}

fn demote(f: &mut Function, b: &mut Block, vars: &HashSet<VarId>) {
    let mut out = Vec::with_capacity(b.len());
    for mut s in std::mem::take(b) {
        match &mut s.kind {
            StmtKind::Decl { var, init } if vars.contains(var) => {
                if let Some(i) = *init {
                    let ty = f.vars[*var].ty;
                    let place = f.expr(Expr::Var(*var), ty);
                    s.kind = StmtKind::Assign { place, value: i };
                } else {
                    continue;
                }
            }
            kind => kind.blocks_mut().for_each(|inner| demote(f, inner, vars)),
        }
        out.push(s);
    }
    *b = out;
}
