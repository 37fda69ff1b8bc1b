//! Kernel extraction: launch loop nests become kernel functions.
//!
//! A launch ([`stage::gpu::launch`](crate::stage::gpu::launch)) reaches the IR
//! as a [`StmtKind::Launch`] whatever the passes did around it. [`split`]
//! lifts each one's body `K` into a [`Kernel`] whose parameters are `bid`,
//! `tid` and every variable `K` reads from outside (by value), and replaces
//! the launch in the host function with a call of the kernel's launch stub.

use crate::error::Error;
pub(crate) use crate::ir::device::find_intrinsic;
pub(crate) use crate::ir::{each_expr, each_own_expr};
use crate::ir::{
    verify, Block, Expr, ExprId, ExternDecl, FuncId, Function, Intrinsic, Launch, SrcLoc, Stmt,
    StmtKind, Type, VarId, VarKind,
};
use std::collections::BTreeSet;

/// One kernel lifted out of a host function.
#[derive(Clone, Debug)]
pub struct Kernel {
    /// The `__global__` function: parameters `bid`, `tid`, then the captured
    /// variables in [`Kernel::captured`] order; the body is the launch's.
    pub func: Function,
    /// The host variables the kernel reads (its arguments at the launch).
    pub captured: Vec<VarId>,
    /// Blocks in the grid.
    pub grid: u32,
    /// Threads per block.
    pub block: u32,
    /// True when the body calls the grid-wide barrier: such a kernel needs a
    /// cooperative launch.
    pub cooperative: bool,
    /// Bytes of shared memory per block ([`gpu::shared`](crate::stage::gpu::shared)).
    pub shared_bytes: u32,
    /// The launch's line in the user's first-stage code.
    pub loc: Option<SrcLoc>,
}

impl Kernel {
    /// The name of the host function that launches it.
    pub fn launcher(&self) -> String {
        format!("{}_launch", self.func.name)
    }
}

/// A host function whose launches call kernel launchers, and the kernels.
#[derive(Clone, Debug)]
pub struct Split {
    /// The host function; each launch is a call of `Kernel::launcher`.
    pub host: Function,
    /// The kernels in launch order.
    pub kernels: Vec<Kernel>,
}

/// A launch statement and its line, borrowed from the IR.
pub(crate) struct Nest<'a> {
    pub launch: &'a Launch,
    pub loc: Option<SrcLoc>,
}

impl std::ops::Deref for Nest<'_> {
    type Target = Launch;
    fn deref(&self) -> &Launch {
        self.launch
    }
}

/// The launch `s` is, if it is one.
pub(crate) fn nest(s: &Stmt) -> Option<Nest<'_>> {
    match &s.kind {
        StmtKind::Launch(launch) => Some(Nest { launch, loc: s.loc }),
        _ => None,
    }
}

pub(crate) fn kernel_error(loc: Option<SrcLoc>, message: String) -> Error {
    Error::Kernel {
        message,
        location: loc,
    }
}

/// Lifts every launch of `f` into a kernel.
///
/// Errors ([`Error::Kernel`]): a launch nest in another shape, a body that
/// assigns or takes the address of a host variable, returns, jumps out,
/// calls a host function, or launches again; a grid sync outside a launch.
pub fn split(f: &Function) -> Result<Split, Error> {
    let mut host = f.clone();
    let mut kernels = Vec::new();
    let body = std::mem::take(&mut host.body);
    host.body = lift_block(&mut host, body, &mut kernels)?;
    if let Some((op, loc)) = find_intrinsic(&host, &host.body, Intrinsic::is_device_only) {
        return Err(outside_launch(op, loc));
    }
    check(&host)?;
    for k in &kernels {
        check(&k.func)?;
    }
    Ok(Split { host, kernels })
}

fn check(f: &Function) -> Result<(), Error> {
    verify::verify(f).map_err(|e| Error::Internal {
        message: format!("kernel extraction broke `{}`: {e}", f.name),
    })
}

fn lift_block(host: &mut Function, b: Block, out: &mut Vec<Kernel>) -> Result<Block, Error> {
    rewrite_launches(host, b, &mut |host, n| {
        let k = lift(host, n, out.len())?;
        let call = launch_call(host, &k, n.loc);
        out.push(k);
        Ok(vec![call])
    })
}

/// Type of the launch rewriters of [`rewrite_launches`].
pub(crate) type Rewrite<'a> = dyn FnMut(&mut Function, &Nest) -> Result<Block, Error> + 'a;

/// `b` with each launch statement (at any depth) replaced by what
/// `replace` makes of it.
pub(crate) fn rewrite_launches(
    f: &mut Function,
    b: Block,
    replace: &mut Rewrite,
) -> Result<Block, Error> {
    let mut res = Vec::with_capacity(b.len());
    for mut s in b {
        if let Some(n) = nest(&s) {
            res.extend(replace(f, &n)?);
            continue;
        }
        for blk in s.kind.blocks_mut() {
            *blk = rewrite_launches(f, std::mem::take(blk), replace)?;
        }
        res.push(s);
    }
    Ok(res)
}

/// The kernel of one launch statement.
fn lift(host: &Function, n: &Nest, index: usize) -> Result<Kernel, Error> {
    let captured = captured(host, n)?;
    let mut func = host.clone();
    func.name = format!("{}_k{index}", host.name);
    func.ret = Type::Void;
    func.params = [n.bid, n.tid].into_iter().chain(captured.clone()).collect();
    for (i, &p) in func.params.clone().iter().enumerate() {
        func.vars[p].kind = VarKind::Param(i as u32);
    }
    let mut body = n.body.clone();
    strip_tail_syncs(host, &mut body);
    func.body = body;
    Ok(Kernel {
        cooperative: find_intrinsic(host, &func.body, |i| i == Intrinsic::GridSync).is_some(),
        shared_bytes: shared_bytes(host, &func.body),
        func,
        captured,
        grid: n.grid,
        block: n.block,
        loc: n.loc,
    })
}

/// The host variables the body reads, in `VarId` order, after checking the
/// body can run as a kernel.
pub(crate) fn captured(f: &Function, n: &Nest) -> Result<Vec<VarId>, Error> {
    super::uniform::check_barriers(f, &n.body, n.bid, n.tid, n.loc)?;
    let mut c = Collect {
        f,
        loc: n.loc,
        declared: BTreeSet::from([n.bid, n.tid]),
        used: BTreeSet::new(),
        assigned: Vec::new(),
        loops: 0,
    };
    c.block(&n.body)?;
    let captured: Vec<VarId> = c.used.difference(&c.declared).copied().collect();
    if let Some(&v) = captured
        .iter()
        .find(|&&v| matches!(f.vars[v].ty, Type::Array { .. }))
    {
        return Err(kernel_error(
            f.vars[v].loc.or(n.loc),
            format!(
                "the kernel reads `{}`, an array of the host code: a kernel gets host \
                 values by value and an array would arrive as a host pointer; put it \
                 in device memory and pass the pointer",
                f.var_name(v)
            ),
        ));
    }
    if let Some((v, loc)) = c.assigned.iter().find(|(v, _)| !c.declared.contains(v)) {
        return Err(kernel_error(
            loc.or(n.loc),
            format!(
                "the kernel assigns `{}`, a variable of the host code; kernels write \
                 memory (through pointers), not host variables",
                f.var_name(*v)
            ),
        ));
    }
    Ok(captured)
}

struct Collect<'a> {
    f: &'a Function,
    loc: Option<SrcLoc>,
    declared: BTreeSet<VarId>,
    used: BTreeSet<VarId>,
    /// Variables assigned directly or through `&v`.
    assigned: Vec<(VarId, Option<SrcLoc>)>,
    loops: u32,
}

impl Collect<'_> {
    fn block(&mut self, b: &Block) -> Result<(), Error> {
        b.iter().try_for_each(|s| self.stmt(s))
    }

    fn stmt(&mut self, s: &Stmt) -> Result<(), Error> {
        let here = s.loc.or(self.loc);
        let bad = |what: &str| Err(kernel_error(here, format!("a kernel cannot {what}")));
        match &s.kind {
            StmtKind::Decl { var, init } => {
                self.declared.insert(*var);
                if let Some(e) = init {
                    self.expr(*e, s.loc)?;
                }
            }
            StmtKind::Assign { place, value } => {
                if let Expr::Var(v) = self.f.exprs[*place].kind {
                    self.assigned.push((v, s.loc));
                }
                self.expr(*place, s.loc)?;
                self.expr(*value, s.loc)?;
            }
            StmtKind::Eval(e) => self.expr(*e, s.loc)?,
            StmtKind::If { cond, then_, else_ } => {
                self.expr(*cond, s.loc)?;
                self.block(then_)?;
                self.block(else_)?;
            }
            StmtKind::While { cond, body } => {
                self.expr(*cond, s.loc)?;
                self.loop_body(body)?;
            }
            StmtKind::For {
                init,
                cond,
                step,
                body,
            } => {
                self.stmt(init)?;
                self.expr(*cond, s.loc)?;
                self.stmt(step)?;
                self.loop_body(body)?;
            }
            StmtKind::Break | StmtKind::Continue if self.loops == 0 => {
                return bad("leave the launch with break or continue")
            }
            StmtKind::Break | StmtKind::Continue => {}
            StmtKind::Return(_) => return bad("return from the host function"),
            StmtKind::Label(_) | StmtKind::Goto(_) => {
                return bad("contain control flow that needs a goto")
            }
            StmtKind::Launch(_) => return bad("launch another kernel"),
        }
        Ok(())
    }

    fn loop_body(&mut self, b: &Block) -> Result<(), Error> {
        self.loops += 1;
        let r = self.block(b);
        self.loops -= 1;
        r
    }

    fn expr(&mut self, e: ExprId, loc: Option<SrcLoc>) -> Result<(), Error> {
        match &self.f.exprs[e].kind {
            Expr::Var(v) => {
                self.used.insert(*v);
            }
            Expr::AddrOf(p) => {
                if let Expr::Var(v) = self.f.exprs[*p].kind {
                    self.assigned.push((v, loc));
                }
            }
            Expr::Call(fid, _) if self.f.externs[*fid].indirect => {
                return Err(kernel_error(
                    loc.or(self.loc),
                    "the kernel calls through a function pointer, which points to a host \
                     function (call it outside the launch)"
                        .into(),
                ));
            }
            Expr::FuncAddr(fid) => {
                return Err(kernel_error(
                    loc.or(self.loc),
                    format!(
                        "the kernel takes the address of `{}`, a host function (take it \
                         outside the launch)",
                        self.f.externs[*fid].name
                    ),
                ));
            }
            Expr::Call(fid, _) => {
                let d = &self.f.externs[*fid];
                if !runs_on_device(d) {
                    return Err(kernel_error(
                        loc.or(self.loc),
                        format!(
                            "the kernel calls `{}`, a host function (only augur's device \
                             helpers, <math.h> functions and printf run on the GPU)",
                            d.name
                        ),
                    ));
                }
            }
            // The check stops the host process; a kernel (and its
            // simulation, which follows it) has no such helper.
            Expr::Intrinsic(Intrinsic::Checked, _) => {
                return Err(kernel_error(
                    loc.or(self.loc),
                    "the kernel indexes a slice of a checked function (Builder::slice, \
                     Builder::checked): bounds checks run only in the launch's loop nest \
                     (compile, interpret); extract the CUDA or simulated version without \
                     slices"
                        .into(),
                ));
            }
            // The CUDA writer defines the search for the host only.
            Expr::Intrinsic(Intrinsic::FindPair, _) => {
                return Err(kernel_error(
                    loc.or(self.loc),
                    "the kernel calls bytes::find_pair, which runs in host code only: \
                     search before the launch, or test the bytes in the kernel"
                        .into(),
                ));
            }
            _ => {}
        }
        let mut r = Ok(());
        self.f.for_each_child(e, |c| {
            if r.is_ok() {
                r = self.expr(c, loc);
            }
        });
        r
    }
}

/// True for externs a kernel may call: `<math.h>` (CUDA gives every math
/// function a device version) and `printf` (so does it).
fn runs_on_device(d: &ExternDecl) -> bool {
    match d.header.as_deref() {
        Some("math.h" | "<math.h>") => true,
        Some("stdio.h" | "<stdio.h>") => d.name == "printf",
        _ => false,
    }
}

/// The host statement that replaces a launch: `kernel_launch(captured...)`.
fn launch_call(host: &mut Function, k: &Kernel, loc: Option<SrcLoc>) -> Stmt {
    let params: Vec<Type> = k.captured.iter().map(|&v| host.vars[v].ty).collect();
    let fid: FuncId = host.externs.push(ExternDecl {
        name: k.launcher(),
        params,
        ret: Type::Void,
        variadic: false,
        header: None,
        indirect: false,
    });
    let args: Vec<ExprId> = k
        .captured
        .iter()
        .map(|&v| {
            let ty = host.vars[v].ty;
            host.expr(Expr::Var(v), ty)
        })
        .collect();
    let call = host.expr(Expr::Call(fid, args), Type::Void);
    Stmt {
        kind: StmtKind::Eval(call),
        annotations: Vec::new(),
        loc,
    }
}

/// The location of the first barrier call in `b`, if any (`Some(None)`
/// when it has no location).
pub(crate) fn find_sync(f: &Function, b: &[Stmt]) -> Option<Option<SrcLoc>> {
    find_intrinsic(f, b, Intrinsic::is_barrier).map(|(_, loc)| loc)
}

/// A device operation outside any launch.
pub(crate) fn outside_launch(op: Intrinsic, loc: Option<SrcLoc>) -> Error {
    kernel_error(loc, format!("{} outside a GPU launch", op.user_name()))
}

/// The shared memory a kernel body uses per block: the end of the furthest
/// [`Intrinsic::Shared`] area it asks for (each call's offset and size are constants).
pub(crate) fn shared_bytes(f: &Function, b: &[Stmt]) -> u32 {
    let mut end = 0u32;
    fn walk(f: &Function, e: ExprId, end: &mut u32) {
        if let Some((off, bytes)) = shared_area(f, e) {
            *end = (*end).max(off + bytes);
        }
        f.for_each_child(e, |c| walk(f, c, end));
    }
    for s in b {
        each_expr(s, &mut |e| walk(f, e, &mut end));
    }
    end
}

/// The offset and size of an [`Intrinsic::Shared`] area, if `e` is one.
pub(crate) fn shared_area(f: &Function, e: ExprId) -> Option<(u32, u32)> {
    let Expr::Intrinsic(Intrinsic::Shared, args) = &f.exprs[e].kind else {
        return None;
    };
    let constant = |a: &ExprId| match f.exprs[*a].kind {
        Expr::Const(crate::ir::Const::Int(k)) => u32::try_from(k).ok(),
        _ => None,
    };
    Some((constant(args.first()?)?, constant(args.get(1)?)?))
}

/// Drops the barriers a kernel meets last on every path (at the end of the
/// body, or at the end of both sides of an `if` there): they wait for
/// nothing. A DSL may end every statement with a barrier.
pub(crate) fn strip_tail_syncs(f: &Function, b: &mut Block) {
    while b.last().is_some_and(|s| is_sync(f, s)) {
        b.pop();
    }
    if let Some(StmtKind::If { then_, else_, .. }) = b.last_mut().map(|s| &mut s.kind) {
        strip_tail_syncs(f, then_);
        strip_tail_syncs(f, else_);
    }
}

/// True if `s` is exactly a barrier (the grid's or the block's).
pub(crate) fn is_sync(f: &Function, s: &Stmt) -> bool {
    match &s.kind {
        StmtKind::Eval(e) => matches!(&f.exprs[*e].kind, Expr::Intrinsic(i, _) if i.is_barrier()),
        _ => false,
    }
}

/// The externs the statements of `b` call or take the address of.
pub(crate) fn called(f: &Function, b: &Block) -> BTreeSet<FuncId> {
    fn walk(f: &Function, e: ExprId, out: &mut BTreeSet<FuncId>) {
        if let Expr::Call(fid, _) | Expr::FuncAddr(fid) = &f.exprs[e].kind {
            out.insert(*fid);
        }
        f.for_each_child(e, |c| walk(f, c, out));
    }
    let mut out = BTreeSet::new();
    for s in b {
        each_expr(s, &mut |e| walk(f, e, &mut out));
    }
    out
}
