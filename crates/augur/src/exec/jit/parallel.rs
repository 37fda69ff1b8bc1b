//! Parallel loops on threads: each outermost parallel loop of a function
//! becomes a function of its own that runs one chunk of the range, and a
//! call of [`run`], which runs the chunks on rayon's threads.
//!
//! For a loop `for (i = lo; i < hi; i++) body` with reductions `r_j` in
//! function `f`, [`outline`] makes `f__augur_par<k>(env, lo, hi, part)`:
//!
//! ```text
//! c = *(T *)&env[k];  ...           // what the body reads from outside
//! r_j = identity(op_j);  ...        // this chunk's partials
//! for (i = lo; i < hi; i = i + 1) body
//! *(R *)&part[j] = r_j;  ...
//! ```
//!
//! and replaces the loop in `f` by
//!
//! ```text
//! uint64_t env[..];  *(T *)&env[k] = c;  ...
//! uint64_t parts[MAX_CHUNKS * nred];
//! n = augur_parallel_for(&f__augur_par<k>, &env[0], lo, hi, &parts[0], nred, MAX_CHUNKS);
//! for (c = 0; c < n; c++) r_j = r_j op *(R *)&parts[c * nred + j];  ...
//! ```
//!
//! so the partials combine in chunk order: the same result for the same
//! number of threads. The body reads scalars and pointers from outside
//! (each an 8-byte word of `env`); a local array or struct declared outside
//! it, or a variable whose address is taken, is an [`Error::Jit`]: threads
//! would need its memory, not a copy. A parallel loop inside the body runs
//! in order in each iteration.

use super::jit_error;
use crate::ir::parallel::{self, declared_vars};
use crate::ir::{
    BinOp, Block, Const, Expr, ExprId, ExternDecl, Function, Reduction, Scalar, Stmt, StmtKind,
    Type, VarData, VarId, VarKind,
};
use crate::Result;
use std::collections::BTreeSet;

/// The most chunks one loop is split into (the partials' buffer is on the
/// caller's stack).
pub(super) const MAX_CHUNKS: i64 = 256;

/// The name of the runtime function outlined loops call.
pub(super) const RUNTIME: &str = "augur_parallel_for";

/// `f` with its parallel loops outlined, and the functions made of them;
/// `None` if `f` has none.
pub(super) fn outline(f: &Function) -> Result<Option<(Function, Vec<Function>)>> {
    if !parallel::has_loops(f) {
        return Ok(None);
    }
    let mut caller = f.clone();
    let mut bodies = Vec::new();
    let body = std::mem::take(&mut caller.body);
    caller.body = rewrite_block(&mut caller, body, &mut bodies)?;
    Ok(Some((caller, bodies)))
}

fn rewrite_block(f: &mut Function, b: Block, bodies: &mut Vec<Function>) -> Result<Block> {
    let mut out = Vec::with_capacity(b.len());
    for mut s in b {
        if parallel::reductions(&s).is_some() {
            out.extend(outline_loop(f, s, bodies)?);
            continue;
        }
        for inner in s.kind.blocks_mut() {
            *inner = rewrite_block(f, std::mem::take(inner), bodies)?;
        }
        out.push(s);
    }
    Ok(out)
}

/// The statements that run loop `s` on threads; adds its body's function.
fn outline_loop(f: &mut Function, s: Stmt, bodies: &mut Vec<Function>) -> Result<Vec<Stmt>> {
    let (index, lo, hi, reductions) = {
        let p = parallel::parts(f, &s)
            .map_err(|e| jit_error(&e))?
            .expect("a parallel loop");
        (p.index, p.lo, p.hi, p.reductions.to_vec())
    };
    let StmtKind::For { body, .. } = s.kind else {
        unreachable!("checked by parts")
    };
    let captures = captures(f, &body, index, &reductions, s.loc)?;
    let name = format!("{}__augur_par{}", f.name, bodies.len());
    bodies.push(body_function(f, &name, index, body, &captures, &reductions));
    Ok(call_site(f, &name, lo, hi, &captures, &reductions, s.loc))
}

/// The variables declared outside the body that it reads, in order.
fn captures(
    f: &Function,
    body: &Block,
    index: VarId,
    reductions: &[Reduction],
    loc: Option<crate::ir::SrcLoc>,
) -> Result<Vec<VarId>> {
    let mut inside = vec![index];
    declared_vars(body, &mut inside);
    let mut used = BTreeSet::new();
    fn walk(f: &Function, b: &Block, used: &mut BTreeSet<VarId>) {
        for s in b {
            crate::ir::each_expr(s, &mut |e| {
                f.for_each_var(e, &mut |v| {
                    used.insert(v);
                })
            });
        }
    }
    walk(f, body, &mut used);
    let mut out = Vec::new();
    for v in used {
        if inside.contains(&v) || reductions.iter().any(|r| r.var == v) {
            continue;
        }
        let d = &f.vars[v];
        let word = matches!(d.ty, Type::Scalar(_) | Type::Ptr { .. } | Type::FnPtr(_));
        if !word || d.addr_taken {
            return Err(jit_error(&format!(
                "the parallel loop{} whose body uses `{}` ({}), declared outside it: the JIT \
                 hands its threads scalars and pointers; keep such data in memory reached \
                 through a pointer, or compile with the C backend",
                loc.map(|l| format!(" at {l}")).unwrap_or_default(),
                f.var_name(v),
                if d.addr_taken {
                    "a variable whose address is taken".to_string()
                } else {
                    format!("of type {}", d.ty)
                }
            )));
        }
        out.push(v);
    }
    Ok(out)
}

fn word_ptr() -> Type {
    Type::ptr(Type::Scalar(Scalar::U64))
}

fn i64t() -> Type {
    Type::Scalar(Scalar::I64)
}

fn new_var(f: &mut Function, ty: Type, kind: VarKind, hint: &str) -> VarId {
    f.vars.push(VarData {
        ty,
        kind,
        hint: Some(hint.to_string()),
        name: None,
        addr_taken: false,
        loc: None,
    })
}

fn var(f: &mut Function, v: VarId) -> ExprId {
    let ty = f.vars[v].ty;
    f.expr(Expr::Var(v), ty)
}

fn int(f: &mut Function, x: i64) -> ExprId {
    f.expr(Expr::Const(Const::Int(x)), i64t())
}

/// `*(T *)&words[at]`, a place of type `ty` in a buffer of words (`words`
/// a pointer or an array of `uint64_t`).
fn word_place(f: &mut Function, words: VarId, at: ExprId, ty: Type) -> ExprId {
    let base = var(f, words);
    let elem = f.expr(Expr::Index(base, at), Type::Scalar(Scalar::U64));
    let addr = f.expr(Expr::AddrOf(elem), word_ptr());
    let cast = f.expr(Expr::Cast(addr), Type::ptr(ty));
    f.expr(Expr::Deref(cast), ty)
}

fn decl(var: VarId, init: Option<ExprId>) -> Stmt {
    Stmt::new(StmtKind::Decl { var, init })
}

fn assign(place: ExprId, value: ExprId) -> Stmt {
    Stmt::new(StmtKind::Assign { place, value })
}

/// `for (v = 0; v < n; v = v + 1) body` over a new `int64_t` `v`.
fn counted(f: &mut Function, v: VarId, n: ExprId, body: Block) -> Stmt {
    let zero = int(f, 0);
    Stmt::new(parallel::counted_for(f, v, zero, n, body))
}

/// The function that runs iterations `lo..hi` of the loop into its partials.
fn body_function(
    f: &Function,
    name: &str,
    index: VarId,
    body: Block,
    captures: &[VarId],
    reductions: &[Reduction],
) -> Function {
    let mut g = f.clone();
    g.name = name.to_string();
    g.ret = Type::Void;
    let params = [
        (word_ptr(), "env"),
        (i64t(), "lo"),
        (i64t(), "hi"),
        (word_ptr(), "part"),
    ];
    g.params = (params.iter().enumerate())
        .map(|(n, &(ty, hint))| new_var(&mut g, ty, VarKind::Param(n as u32), hint))
        .collect();
    let [env, lo, hi, part] = [g.params[0], g.params[1], g.params[2], g.params[3]];
    let mut out = Vec::new();
    for (k, &c) in captures.iter().enumerate() {
        let at = int(&mut g, k as i64);
        let ty = g.vars[c].ty;
        let load = word_place(&mut g, env, at, ty);
        g.vars[c].kind = VarKind::Local;
        out.push(decl(c, Some(load)));
    }
    for r in reductions {
        let ty = g.vars[r.var].ty;
        let s = ty.as_scalar().expect("a scalar reduction");
        let id = g.expr(Expr::Const(r.op.identity(s)), ty);
        g.vars[r.var].kind = VarKind::Local;
        out.push(decl(r.var, Some(id)));
    }
    let (first, end) = (var(&mut g, lo), var(&mut g, hi));
    out.push(Stmt::new(parallel::counted_for(
        &mut g, index, first, end, body,
    )));
    for (j, r) in reductions.iter().enumerate() {
        let at = int(&mut g, j as i64);
        let ty = g.vars[r.var].ty;
        let place = word_place(&mut g, part, at, ty);
        let value = var(&mut g, r.var);
        out.push(assign(place, value));
    }
    g.body = out;
    g.restrict.clear();
    g
}

/// What replaces the loop: the captures stored, the call, the partials
/// combined in chunk order.
fn call_site(
    f: &mut Function,
    name: &str,
    lo: ExprId,
    hi: VarId,
    captures: &[VarId],
    reductions: &[Reduction],
    loc: Option<crate::ir::SrcLoc>,
) -> Vec<Stmt> {
    let words = |n: usize| Type::array(Type::Scalar(Scalar::U64), Some(n.max(1) as u64));
    let body_sig = vec![word_ptr(), i64t(), i64t(), word_ptr()];
    let body_ptr = Type::fn_ptr(body_sig.clone(), Type::Void);
    let body_fn = f.externs.push(ExternDecl {
        name: name.to_string(),
        params: body_sig,
        ret: Type::Void,
        variadic: false,
        header: None,
        indirect: false,
    });
    let runtime = runtime_decl(f, body_ptr);
    let mut out = Vec::new();
    let env = new_var(f, words(captures.len()), VarKind::Local, "env");
    out.push(decl(env, None));
    for (k, &c) in captures.iter().enumerate() {
        let at = int(f, k as i64);
        let ty = f.vars[c].ty;
        let place = word_place(f, env, at, ty);
        let value = var(f, c);
        out.push(assign(place, value));
    }
    let nred = reductions.len();
    let parts = new_var(
        f,
        words(MAX_CHUNKS as usize * nred),
        VarKind::Local,
        "parts",
    );
    out.push(decl(parts, None));
    let first_word = |f: &mut Function, buf: VarId| {
        let base = var(f, buf);
        let zero = int(f, 0);
        let elem = f.expr(Expr::Index(base, zero), Type::Scalar(Scalar::U64));
        f.expr(Expr::AddrOf(elem), word_ptr())
    };
    let fn_addr = f.expr(Expr::FuncAddr(body_fn), body_ptr);
    let args = vec![
        fn_addr,
        first_word(f, env),
        lo,
        var(f, hi),
        first_word(f, parts),
        int(f, nred as i64),
        int(f, MAX_CHUNKS),
    ];
    let call = f.expr(Expr::Call(runtime, args), i64t());
    let chunks = new_var(f, i64t(), VarKind::Local, "chunks");
    out.push(decl(chunks, Some(call)));
    if nred > 0 {
        let c = new_var(f, i64t(), VarKind::Local, "chunk");
        let mut combine = Vec::new();
        for (j, r) in reductions.iter().enumerate() {
            let ty = f.vars[r.var].ty;
            let (cv, stride, jx) = (var(f, c), int(f, nred as i64), int(f, j as i64));
            let row = f.expr(Expr::Binary(BinOp::Mul, cv, stride), i64t());
            let at = f.expr(Expr::Binary(BinOp::Add, row, jx), i64t());
            let partial = word_place(f, parts, at, ty);
            let acc = var(f, r.var);
            let value = r.op.combine(f, acc, partial, ty);
            let place = var(f, r.var);
            combine.push(assign(place, value));
        }
        let n = var(f, chunks);
        out.push(counted(f, c, n, combine));
    }
    for s in &mut out {
        s.loc = loc;
    }
    out
}

fn runtime_decl(f: &mut Function, body_ptr: Type) -> crate::ir::FuncId {
    let params = vec![
        body_ptr,
        word_ptr(),
        i64t(),
        i64t(),
        word_ptr(),
        i64t(),
        i64t(),
    ];
    f.externs.push(ExternDecl {
        name: RUNTIME.to_string(),
        params,
        ret: i64t(),
        variadic: false,
        header: None,
        indirect: false,
    })
}

/// The chunks' body: `fn(env, lo, hi, part)` made by [`outline`].
type Body = unsafe extern "C" fn(*mut u64, i64, i64, *mut u64);

/// Runs `body` over `lo..hi` in at most `max` chunks, one per thread of
/// rayon's pool, chunk `k` writing its partials at `parts + k * stride`;
/// gives the number of chunks.
///
/// # Safety
///
/// `body` is a function [`outline`] made, `env` holds what it reads, and
/// `parts` has room for `max * stride` words.
pub(super) unsafe extern "C" fn run(
    body: Body,
    env: *mut u64,
    lo: i64,
    hi: i64,
    parts: *mut u64,
    stride: i64,
    max: i64,
) -> i64 {
    if hi <= lo {
        return 0;
    }
    let count = i128::from(hi) - i128::from(lo);
    let threads = (rayon::current_num_threads() as i128)
        .min(count)
        .min(i128::from(max.max(1)));
    // Raw pointers are not `Send`: the threads get their addresses, valid
    // until `scope` returns, which waits for all of them.
    let (env, parts) = (env as usize, parts as usize);
    let chunk = move |k: i128| {
        let from = lo as i128 + count * k / threads;
        let to = lo as i128 + count * (k + 1) / threads;
        let part = (parts as *mut u64).wrapping_offset((k as i64 * stride) as isize);
        // SAFETY: the caller vouches for `body`, `env` and `parts`; chunks
        // write disjoint partials, and `from..to` lies in `lo..hi`.
        unsafe { body(env as *mut u64, from as i64, to as i64, part) }
    };
    rayon::scope(|s| {
        for k in 1..threads {
            s.spawn(move |_| chunk(k));
        }
        chunk(0);
    });
    threads as i64
}
