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
    find(f, &f.body, &mut Scopes::new(f), &mut out_of_scope);
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

/// The declarations in force while [`find`] walks the body: for each
/// variable, how many scopes now open declared it, and each open scope's
/// declarations (what closing it takes back). An array rather than a set
/// per scope: a use is one load, however deep the nest.
struct Scopes {
    visible: Vec<u32>,
    open: Vec<Vec<VarId>>,
}

impl Scopes {
    fn new(f: &Function) -> Scopes {
        let mut s = Scopes {
            visible: vec![0; f.vars.len()],
            open: Vec::new(),
        };
        s.push();
        f.params.iter().for_each(|&p| s.declare(p));
        s
    }

    fn push(&mut self) {
        self.open.push(Vec::new());
    }

    fn pop(&mut self) {
        for v in self.open.pop().expect("a scope") {
            self.visible[v.0 as usize] -= 1;
        }
    }

    fn declare(&mut self, v: VarId) {
        self.visible[v.0 as usize] += 1;
        self.open.last_mut().expect("a scope").push(v);
    }

    /// Adds to `bad` each variable `x` reads that no open scope declares.
    fn check(&self, f: &Function, x: crate::ir::ExprId, bad: &mut HashSet<VarId>) {
        f.for_each_var(x, &mut |v| {
            if self.visible[v.0 as usize] == 0 {
                bad.insert(v);
            }
        })
    }
}

fn find(f: &Function, b: &[Stmt], scopes: &mut Scopes, bad: &mut HashSet<VarId>) {
    scopes.push();
    for s in b {
        match &s.kind {
            StmtKind::Decl { var, init } => {
                if let Some(i) = init {
                    scopes.check(f, *i, bad);
                }
                scopes.declare(*var);
            }
            StmtKind::Assign { place, value } => {
                scopes.check(f, *place, bad);
                scopes.check(f, *value, bad);
            }
            StmtKind::Eval(x) | StmtKind::Return(Some(x)) => scopes.check(f, *x, bad),
            StmtKind::If { cond, then_, else_ } => {
                scopes.check(f, *cond, bad);
                find(f, then_, scopes, bad);
                find(f, else_, scopes, bad);
            }
            StmtKind::While { cond, body } => {
                scopes.check(f, *cond, bad);
                find(f, body, scopes, bad);
            }
            StmtKind::For {
                init,
                cond,
                step,
                body,
            } => {
                scopes.push();
                find(f, std::slice::from_ref(init), scopes, bad);
                if let StmtKind::Decl { var, .. } = init.kind {
                    scopes.declare(var);
                }
                scopes.check(f, *cond, bad);
                if let StmtKind::Assign { place, value } = step.kind {
                    scopes.check(f, place, bad);
                    scopes.check(f, value, bad);
                }
                find(f, body, scopes, bad);
                scopes.pop();
            }
            StmtKind::Launch(l) => {
                scopes.push();
                scopes.declare(l.bid);
                scopes.declare(l.tid);
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
