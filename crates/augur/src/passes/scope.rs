//! Scope repair: C declarations are block-scoped, dominance is not. A value
//! defined in a loop's head and read after the loop is declared at the top
//! of the function instead (zero-initialised, which keeps `-Wall -O2` quiet)
//! and assigned where it was defined.

use crate::ir::{Block, Const, Expr, Function, Scalar, Stmt, StmtKind, Type, VarId};
use crate::trace::tag::FastMap as HashMap;
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
    // A variable of a parallel loop's body is hoisted to the top of that
    // body, not of the function: each iteration keeps its own.
    let mut owner = HashMap::default();
    owners(&body, None, &out_of_scope, &mut owner);
    demote(f, &mut body, &out_of_scope);
    let mut hoisted: Vec<VarId> = out_of_scope.into_iter().collect();
    hoisted.sort();
    place(f, &mut body, &hoisted, &owner);
    let decls = zero_decls(f, &hoisted, &owner, None);
    f.body = decls.into_iter().chain(body).collect();
}

/// For each variable of `vars` declared in `b`: the index of the innermost
/// parallel loop whose body declares it (`None`: no parallel loop).
fn owners(
    b: &[Stmt],
    owner: Option<VarId>,
    vars: &HashSet<VarId>,
    out: &mut HashMap<VarId, Option<VarId>>,
) {
    for s in b {
        if let StmtKind::Decl { var, .. } = s.kind {
            if vars.contains(&var) {
                out.insert(var, owner);
            }
        }
        if let StmtKind::For { init, .. } = &s.kind {
            if let StmtKind::Decl { var, .. } = init.kind {
                if vars.contains(&var) {
                    out.insert(var, owner);
                }
            }
        }
        let inner = match crate::ir::parallel::reductions(s) {
            Some(_) => for_index(s).or(owner),
            None => owner,
        };
        for block in s.kind.blocks() {
            owners(block, inner, vars, out);
        }
    }
}

fn for_index(s: &Stmt) -> Option<VarId> {
    match &s.kind {
        StmtKind::For { init, .. } => match init.kind {
            StmtKind::Decl { var, .. } => Some(var),
            _ => None,
        },
        _ => None,
    }
}

/// The zero-initialised declarations of the variables of `hoisted` that
/// `owner` gives to `loop_index`.
fn zero_decls(
    f: &mut Function,
    hoisted: &[VarId],
    owner: &HashMap<VarId, Option<VarId>>,
    loop_index: Option<VarId>,
) -> Vec<Stmt> {
    (hoisted.iter())
        .filter(|v| owner.get(v).copied().flatten() == loop_index)
        .map(|&v| {
            let init = zero(f, &f.vars[v].ty.clone());
            Stmt::new(StmtKind::Decl { var: v, init })
        })
        .collect()
}

/// Declares each parallel loop's hoisted variables at the top of its body.
fn place(
    f: &mut Function,
    b: &mut Block,
    hoisted: &[VarId],
    owner: &HashMap<VarId, Option<VarId>>,
) {
    for s in b.iter_mut() {
        let index = crate::ir::parallel::reductions(s).and(for_index(s));
        for inner in s.kind.blocks_mut() {
            place(f, inner, hoisted, owner);
        }
        if let (Some(index), StmtKind::For { body, .. }) = (index, &mut s.kind) {
            let decls = zero_decls(f, hoisted, owner, Some(index));
            body.splice(0..0, decls);
        }
    }
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
