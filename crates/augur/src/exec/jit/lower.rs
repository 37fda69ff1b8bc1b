//! One IR function as a Cranelift function: variables, statements and
//! control flow. Expressions are in `expr.rs`, calls in `call.rs`.

use super::types::{self, PTR};
use super::{jit_error, vector, Callee};
use crate::ir::{
    Block, EntityId, Expr, ExprId, Function, LabelId, Launch, Stmt, StmtKind, Type, VarId, VarKind,
};
use crate::Result;
use cranelift_codegen::ir::{
    self, types as cl, InstBuilder, MemFlags, StackSlotData, StackSlotKind,
};
use cranelift_frontend::{FunctionBuilder, Variable};
use std::collections::HashMap;

/// Where a variable lives.
#[derive(Clone, Copy)]
pub(super) enum Home {
    /// An SSA variable of the frontend (its address is never taken).
    Reg(Variable),
    /// A stack slot holding the scalar or pointer (its address is taken).
    Slot(ir::StackSlot),
    /// A stack slot holding the local array's elements.
    Array(ir::StackSlot),
}

/// The targets of `break` and `continue` in one loop.
struct LoopTargets {
    exit: ir::Block,
    next: ir::Block,
}

/// The state of lowering one function.
pub(super) struct Lower<'a, 'b> {
    pub(super) f: &'a Function,
    pub(super) b: FunctionBuilder<'b>,
    pub(super) homes: Vec<Home>,
    /// How each extern of `f` is called.
    pub(super) callees: &'a [Callee],
    /// String literals: their bytes, NUL-terminated, owned by the code.
    pub(super) strings: &'a mut Vec<Box<[u8]>>,
    loops: Vec<LoopTargets>,
    labels: HashMap<LabelId, ir::Block>,
    /// Blocks are sealed as soon as all their predecessors are known,
    /// except in functions with labels (a `goto` may come from anywhere):
    /// those are sealed at the end.
    eager_seal: bool,
    /// The current block has its terminator: what follows is unreachable.
    closed: bool,
    /// Loops given a vector version so far.
    pub(super) vectorized: usize,
    /// What the block being built knows of memory (`memory.rs`).
    pub(super) known: super::memory::Known,
}

impl<'a, 'b> Lower<'a, 'b> {
    /// Declares the variables and parameters of `f` in `b`, whose entry
    /// block takes the parameters.
    pub(super) fn new(
        f: &'a Function,
        mut b: FunctionBuilder<'b>,
        callees: &'a [Callee],
        strings: &'a mut Vec<Box<[u8]>>,
    ) -> Result<Lower<'a, 'b>> {
        let mut homes = Vec::with_capacity(f.vars.len());
        for (v, d) in f.vars.iter() {
            // A struct, like a local array, lives in a slot and is its address.
            let array_local = (matches!(d.ty, Type::Array { .. })
                && !matches!(d.kind, VarKind::Param(_)))
                || matches!(d.ty, Type::Struct(_));
            let home = if array_local {
                let size = match d.ty.size() {
                    Some(n) => n,
                    None => {
                        return Err(jit_error(&format!(
                            "the variable-length array `{}` of type {} (C99 VLAs are not lowered)",
                            f.var_name(v),
                            d.ty
                        )))
                    }
                };
                Home::Array(slot(&mut b, size, types::align(&d.ty), f, v)?)
            } else if d.ty == Type::Void {
                return Err(jit_error(&format!("the void variable `{}`", f.var_name(v))));
            } else if d.addr_taken {
                let size = d.ty.size().unwrap_or(8);
                Home::Slot(slot(&mut b, size, types::align(&d.ty), f, v)?)
            } else {
                Home::Reg(b.declare_var(types::value(&d.ty)?))
            };
            homes.push(home);
        }
        let entry = b.create_block();
        b.append_block_params_for_function_params(entry);
        b.switch_to_block(entry);
        b.seal_block(entry);
        let mut labels = HashMap::new();
        collect_labels(&f.body, &mut |l| {
            labels.entry(l).or_insert_with(|| b.create_block());
        });
        let mut lower = Lower {
            f,
            b,
            homes,
            callees,
            strings,
            loops: Vec::new(),
            eager_seal: labels.is_empty(),
            labels,
            closed: false,
            vectorized: 0,
            known: super::memory::Known::default(),
        };
        let params: Vec<ir::Value> = lower.b.block_params(entry).to_vec();
        for (&p, x) in f.params.iter().zip(params) {
            lower.write_var(p, x)?;
        }
        Ok(lower)
    }

    /// Lowers the body and finishes the function; gives the number of
    /// loops vectorized.
    pub(super) fn body(mut self) -> Result<usize> {
        let f = self.f;
        self.block(&f.body)?;
        if !self.closed {
            // Falling off the end: C leaves the value of a non-void
            // function undefined; return zero.
            match f.ret {
                Type::Void => {
                    self.b.ins().return_(&[]);
                }
                t => {
                    let zero = self.zero(&t)?;
                    self.b.ins().return_(&[zero]);
                }
            }
        }
        self.b.seal_all_blocks();
        self.b.finalize();
        Ok(self.vectorized)
    }

    /// A zero of type `t`.
    pub(super) fn zero(&mut self, t: &Type) -> Result<ir::Value> {
        Ok(match types::value(t)? {
            ir::types::F32 => self.b.ins().f32const(0.0),
            ir::types::F64 => self.b.ins().f64const(0.0),
            ty => self.b.ins().iconst(ty, 0),
        })
    }

    /// Seals `block` now when sealing is eager.
    pub(super) fn seal(&mut self, block: ir::Block) {
        if self.eager_seal {
            self.b.seal_block(block);
        }
    }

    /// Makes `block` current (it is open: code may follow).
    pub(super) fn enter(&mut self, block: ir::Block) {
        self.known.leave();
        self.b.switch_to_block(block);
        self.closed = false;
    }

    /// After a terminator: what follows goes into an unreachable block.
    fn reopen(&mut self) {
        if self.closed {
            let dead = self.b.create_block();
            self.known.leave();
            self.b.switch_to_block(dead);
            self.b.seal_block(dead);
            self.closed = false;
        }
    }

    /// Jumps to `target` unless the current block already ended.
    fn fall_to(&mut self, target: ir::Block) {
        if !self.closed {
            self.b.ins().jump(target, &[]);
            self.closed = true;
        }
    }

    /// The value of variable `v` (an array's address).
    pub(super) fn read_var(&mut self, v: VarId) -> Result<ir::Value> {
        Ok(match self.homes[v.index()] {
            Home::Reg(var) => self.b.use_var(var),
            Home::Array(ss) => self.b.ins().stack_addr(PTR, ss, 0),
            Home::Slot(ss) => {
                let ty = types::value(&self.f.vars[v].ty)?;
                self.b.ins().stack_load(ty, ss, 0)
            }
        })
    }

    /// Stores `x` (already of `v`'s type) into variable `v`.
    pub(super) fn write_var(&mut self, v: VarId, x: ir::Value) -> Result<()> {
        match self.homes[v.index()] {
            Home::Reg(var) => {
                self.known.assigned(v);
                self.b.def_var(var, x)
            }
            Home::Slot(ss) => {
                // A pointer may point at the slot.
                self.known.clear();
                self.b.ins().stack_store(x, ss, 0);
            }
            Home::Array(_) => {
                return Err(jit_error(&format!(
                    "assignment to the array `{}`",
                    self.f.var_name(v)
                )))
            }
        }
        Ok(())
    }

    /// The address of variable `v` (`&v`).
    pub(super) fn var_addr(&mut self, v: VarId) -> Result<ir::Value> {
        match self.homes[v.index()] {
            Home::Slot(ss) | Home::Array(ss) => Ok(self.b.ins().stack_addr(PTR, ss, 0)),
            Home::Reg(_) => Err(jit_error(&format!(
                "the address of `{}`, which is not marked address-taken",
                self.f.var_name(v)
            ))),
        }
    }

    fn block(&mut self, stmts: &Block) -> Result<()> {
        for s in stmts {
            self.stmt(s)?;
        }
        Ok(())
    }

    fn stmt(&mut self, s: &Stmt) -> Result<()> {
        let dfg = &self.b.func.dfg;
        within_cranelift(dfg.num_values(), dfg.num_insts())?;
        if let StmtKind::Label(l) = &s.kind {
            let target = self.labels[l];
            self.fall_to(target);
            self.enter(target);
            return Ok(());
        }
        self.reopen();
        match &s.kind {
            StmtKind::Decl { var, init } => match init {
                Some(_) if matches!(self.f.vars[*var].ty, Type::Array { .. }) => {
                    Err(jit_error(&format!(
                        "the array `{}` declared with an initializer",
                        self.f.var_name(*var)
                    )))
                }
                Some(e) => self.assign_var(*var, *e),
                None => Ok(()),
            },
            StmtKind::Assign { place, value } => self.assign(*place, *value),
            StmtKind::Eval(e) => self.effect(*e),
            StmtKind::If { cond, then_, else_ } => self.if_(*cond, then_, else_),
            StmtKind::While { cond, body } => self.while_(*cond, body),
            StmtKind::For {
                init,
                cond,
                step,
                body,
            } => {
                self.stmt(init)?;
                let homes = &self.homes;
                let reg = |v: VarId| matches!(homes[v.index()], Home::Reg(_));
                if let Some(plan) = vector::plan(self.f, *cond, step, body, &reg) {
                    self.vector_loop(&plan, body)?;
                }
                self.for_(*cond, step, body)
            }
            StmtKind::Break | StmtKind::Continue => {
                let Some(l) = self.loops.last() else {
                    return Err(jit_error("`break` or `continue` outside a loop"));
                };
                let target = if matches!(s.kind, StmtKind::Break) {
                    l.exit
                } else {
                    l.next
                };
                self.fall_to(target);
                Ok(())
            }
            StmtKind::Return(e) => {
                let values = match e {
                    Some(e) => {
                        let x = self.expr(*e)?;
                        let from = *self.f.ty(*e);
                        vec![self.convert(x, &from, &self.f.ret)?]
                    }
                    None => Vec::new(),
                };
                self.b.ins().return_(&values);
                self.closed = true;
                Ok(())
            }
            StmtKind::Goto(l) => {
                let target = *self
                    .labels
                    .get(l)
                    .ok_or_else(|| jit_error(&format!("`goto {l}` without its label")))?;
                self.fall_to(target);
                Ok(())
            }
            StmtKind::Launch(launch) => self.launch(launch),
            StmtKind::Label(_) => unreachable!("handled above"),
        }
    }

    fn assign_var(&mut self, v: VarId, e: ExprId) -> Result<()> {
        if let Type::Struct(_) = self.f.vars[v].ty {
            let dst = self.var_addr(v)?;
            return self.copy_struct(dst, e);
        }
        let x = self.expr(e)?;
        let from = *self.f.ty(e);
        let x = self.convert(x, &from, &self.f.vars[v].ty)?;
        self.write_var(v, x)?;
        if matches!(self.homes[v.index()], Home::Reg(_)) {
            self.defined(v, e);
        }
        Ok(())
    }

    fn assign(&mut self, place: ExprId, value: ExprId) -> Result<()> {
        if let Expr::Var(v) = self.f.exprs[place].kind {
            return self.assign_var(v, value);
        }
        let to = *self.f.ty(place);
        if let Type::Struct(_) = to {
            let dst = self.place_addr(place)?;
            return self.copy_struct(dst, value);
        }
        if matches!(to, Type::Array { .. } | Type::Void) {
            return Err(jit_error(&format!("a store into a place of type {to}")));
        }
        let x = self.expr(value)?;
        let from = *self.f.ty(value);
        let x = self.convert(x, &from, &to)?;
        self.store_place(place, x)
    }

    /// Copies the struct `e` (its value is its address) to `dst`, in
    /// 8-byte words and then smaller pieces.
    fn copy_struct(&mut self, dst: ir::Value, e: ExprId) -> Result<()> {
        let size = self.f.ty(e).size().unwrap_or(0);
        let src = self.expr(e)?;
        self.known.clear();
        let mut at = 0u64;
        for (bytes, ty) in [(8, cl::I64), (4, cl::I32), (2, cl::I16), (1, cl::I8)] {
            while size - at >= bytes {
                let x = self.b.ins().load(ty, MemFlags::new(), src, at as i32);
                self.b.ins().store(MemFlags::new(), x, dst, at as i32);
                at += bytes;
            }
        }
        Ok(())
    }

    /// Evaluates `e` for its effects.
    fn effect(&mut self, e: ExprId) -> Result<()> {
        match &self.f.exprs[e].kind {
            Expr::Call(func, args) => self.call(*func, args).map(|_| ()),
            Expr::Intrinsic(op, args) => self.intrinsic(*op, args, self.f.ty(e)).map(|_| ()),
            Expr::Cast(a) if *self.f.ty(e) == Type::Void => self.effect(*a),
            _ if *self.f.ty(e) == Type::Void => {
                Err(jit_error("a void expression that is not a call"))
            }
            _ => self.expr(e).map(|_| ()),
        }
    }

    fn if_(&mut self, cond: ExprId, then_: &Block, else_: &Block) -> Result<()> {
        let c = self.cond(cond)?;
        let then_b = self.b.create_block();
        let join = self.b.create_block();
        let else_b = if else_.is_empty() {
            join
        } else {
            self.b.create_block()
        };
        self.b.ins().brif(c, then_b, &[], else_b, &[]);
        self.closed = true;
        self.seal(then_b);
        self.enter(then_b);
        self.block(then_)?;
        self.fall_to(join);
        if !else_.is_empty() {
            self.seal(else_b);
            self.enter(else_b);
            self.block(else_)?;
            self.fall_to(join);
        }
        self.seal(join);
        self.enter(join);
        Ok(())
    }

    /// A loop: `header` tests `cond`, `body` runs `run`, then `latch` (or,
    /// without one, the header) comes next; `continue` goes to `latch`.
    fn loop_(&mut self, cond: ExprId, body: &Block, latch: Option<&Stmt>) -> Result<()> {
        let header = self.b.create_block();
        let body_b = self.b.create_block();
        let exit = self.b.create_block();
        let step_b = latch.map(|_| self.b.create_block());
        self.fall_to(header);
        self.enter(header);
        let c = self.cond(cond)?;
        self.b.ins().brif(c, body_b, &[], exit, &[]);
        self.closed = true;
        self.seal(body_b);
        self.enter(body_b);
        let next = step_b.unwrap_or(header);
        self.loops.push(LoopTargets { exit, next });
        let r = self.block(body);
        self.loops.pop();
        r?;
        self.fall_to(next);
        if let (Some(step_b), Some(step)) = (step_b, latch) {
            self.seal(step_b);
            self.enter(step_b);
            self.stmt(step)?;
            self.fall_to(header);
        }
        self.seal(header);
        self.seal(exit);
        self.enter(exit);
        Ok(())
    }

    fn while_(&mut self, cond: ExprId, body: &Block) -> Result<()> {
        self.loop_(cond, body, None)
    }

    fn for_(&mut self, cond: ExprId, step: &Stmt, body: &Block) -> Result<()> {
        self.loop_(cond, body, Some(step))
    }

    /// A launch runs as its loop nest: `bid` over the grid, `tid` over the
    /// block, as the C backend prints it.
    fn launch(&mut self, l: &Launch) -> Result<()> {
        let outer = std::mem::take(&mut self.loops);
        let r = self.counted(l.bid, l.grid, &mut |me| {
            me.counted(l.tid, l.block, &mut |me| me.block(&l.body))
        });
        self.loops = outer;
        r
    }

    /// `for (int32_t v = 0; v < n; v = v + 1) { run }`.
    fn counted(
        &mut self,
        v: VarId,
        n: u32,
        run: &mut dyn FnMut(&mut Self) -> Result<()>,
    ) -> Result<()> {
        let i32_ = ir::types::I32;
        let zero = self.b.ins().iconst(i32_, 0);
        self.write_var(v, zero)?;
        let header = self.b.create_block();
        let body = self.b.create_block();
        let exit = self.b.create_block();
        self.fall_to(header);
        self.enter(header);
        let i = self.read_var(v)?;
        let c = self
            .b
            .ins()
            .icmp_imm(ir::condcodes::IntCC::SignedLessThan, i, i64::from(n));
        self.b.ins().brif(c, body, &[], exit, &[]);
        self.closed = true;
        self.seal(body);
        self.enter(body);
        run(self)?;
        if !self.closed {
            let i = self.read_var(v)?;
            let next = self.b.ins().iadd_imm(i, 1);
            self.write_var(v, next)?;
        }
        self.fall_to(header);
        self.seal(header);
        self.seal(exit);
        self.enter(exit);
        Ok(())
    }
}

/// A stack slot of `size` bytes aligned to `align` for variable `v`.
fn slot(
    b: &mut FunctionBuilder,
    size: u64,
    align: u32,
    f: &Function,
    v: VarId,
) -> Result<ir::StackSlot> {
    let shift = align.max(1).trailing_zeros() as u8;
    // Cranelift sizes slots in u32; such locals would not fit a stack anyway.
    let size = u32::try_from(size)
        .map_err(|_| jit_error(&format!("the local `{}` of {size} bytes", f.var_name(v))))?;
    let data = StackSlotData::new(StackSlotKind::ExplicitSlot, size, shift);
    Ok(b.create_sized_stack_slot(data))
}

/// Calls `f` on every label `stmts` define, nested ones included.
fn collect_labels(stmts: &Block, f: &mut impl FnMut(LabelId)) {
    for s in stmts {
        if let StmtKind::Label(l) = s.kind {
            f(l);
        }
        for b in s.kind.blocks() {
            collect_labels(b, f);
        }
    }
}

/// The most values (and instructions) one Cranelift function holds: it
/// packs their numbers in 24 bits, and past that its values alias wrongly
/// (it panicked in its optimiser on a function of 30 million values).
const CRANELIFT_MAX: usize = (1 << 24) - 1;

/// The most a function may reach while it is lowered, an early stop:
/// Cranelift's optimiser adds values of its own (a fuzz program lowered to
/// fewer than this grew to 30 million in it), which [`fits_cranelift`]
/// counts after it.
const LOWERED_MAX: usize = CRANELIFT_MAX / 4;

/// What one statement may add at most before the next check: an
/// expression of the IR's largest size and the copies around it.
const STATEMENT_HEADROOM: usize = 1 << 20;

/// A clear error, instead of Cranelift's panic, for a function too large
/// for it: `values` and `insts` lowered so far (a check that stops
/// lowering early; [`fits_cranelift`] is the one that counts).
fn within_cranelift(values: usize, insts: usize) -> Result<()> {
    if values.max(insts) + STATEMENT_HEADROOM <= LOWERED_MAX {
        return Ok(());
    }
    Err(too_large(values.max(insts)))
}

/// A clear error for a function Cranelift compiled past its limits:
/// `values`, `insts` and `blocks` after its optimiser.
pub(super) fn fits_cranelift(values: usize, insts: usize, blocks: usize) -> Result<()> {
    let most = values.max(insts).max(blocks);
    if most <= CRANELIFT_MAX {
        return Ok(());
    }
    Err(too_large(most))
}

fn too_large(n: usize) -> crate::Error {
    crate::Error::Jit {
        message: format!(
            "the function is too large for the JIT: it needs more than {} Cranelift values, \
             which its optimiser multiplies ({CRANELIFT_MAX} is the most one function holds); \
             compile it with the C backend (`CompileOptions::with_backend(Backend::C)`) or \
             run it in the interpreter",
            n
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_function_too_large_for_cranelift_is_a_clear_error() {
        assert!(within_cranelift(0, 0).is_ok());
        assert!(within_cranelift(3_000_000, 2_000_000).is_ok());
        let err = within_cranelift(3_500_000, 1_000_000)
            .unwrap_err()
            .to_string();
        assert!(err.contains("too large for the JIT"), "{err}");
        assert!(err.contains("C backend"), "{err}");
        assert!(within_cranelift(100, 3_500_000).is_err());
        assert!(fits_cranelift(16_000_000, 9_000_000, 10).is_ok());
        assert!(fits_cranelift(17_000_000, 9_000_000, 10).is_err());
        assert!(fits_cranelift(10, 10, 17_000_000).is_err());
    }
}
