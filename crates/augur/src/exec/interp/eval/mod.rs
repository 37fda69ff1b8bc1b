//! The evaluator: a recursive walk over the statement tree (expressions
//! are in `expr.rs`, what runs at once in `parallel.rs`) and the
//! expression arena of one function call.
//!
//! Variables live in a slot vector indexed by [`VarId`]. A variable whose
//! address is taken, and every local array, lives in an allocation of the
//! [`Memory`](super::Memory) instead: the allocation is made by its
//! declaration, goes out of scope when its block ends (pointers to it then
//! fail), is reused when the declaration runs again (the next loop
//! iteration, as a C compiler reuses the stack slot), and is dropped when
//! the call returns.

use super::builtins::{self, Builtin};
use super::memory::Origin;
use super::ops;
use super::races;
use super::value::Value;
use super::Interpreter;
use crate::ir::{
    Block, EntityId, Expr, ExprId, Function, LabelId, Launch, Stmt, StmtKind, Type, VarId, VarKind,
};
use crate::{Error, Result};

mod expr;
mod parallel;

fn err<T>(message: String) -> Result<T> {
    Err(Error::Interp { message })
}

/// The state of one variable.
#[derive(Clone, Copy, Debug)]
enum Slot {
    /// Not declared yet, or declared without a value.
    Uninit,
    /// A variable held in the slot.
    Val(Value),
    /// The variable's storage is this allocation.
    Mem(u64),
}

/// Where a variable lives.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Home {
    /// In its slot.
    Reg,
    /// In memory, as a scalar or pointer (its address is taken).
    Mem,
    /// In memory as an array: the variable names its first element.
    Array,
}

#[derive(Clone, Copy)]
enum Callee {
    /// A function of the module (`Interpreter::add_function`).
    Function(usize),
    User(usize),
    Builtin(Builtin),
    /// A built-in that calls back into the program (`qsort`).
    Calling(builtins::Calling),
    Unknown,
    /// A call through the function pointer that is the first argument.
    Indirect,
}

/// How a statement ended.
enum Flow {
    Next,
    Break,
    Continue,
    Return(Value),
    /// A `goto` on its way up to the block that holds its label.
    Goto(LabelId),
}

struct Frame<'a> {
    it: &'a mut Interpreter,
    f: &'a Function,
    slots: Vec<Slot>,
    homes: Vec<Home>,
    /// Allocations of the memory-homed locals declared in the open blocks,
    /// innermost last.
    scoped: Vec<u64>,
    callees: Vec<Callee>,
    /// The type that memory-homed array parameters (pointers) load as.
    ptr_ty: Type,
    /// Per variable, the data-race log's epoch when it was last declared
    /// (0: outside any checked loop); see [`parallel`].
    decl_epoch: Vec<u32>,
    /// The reductions of the parallel loops running: variables declared
    /// outside them that their iterations may update.
    reducing: Vec<VarId>,
    /// Struct results of calls in the statement running: the statement
    /// copies what it keeps, so they are dropped when the next one starts.
    temps: Vec<u64>,
}

/// Runs `f` (its arguments already checked).
pub(super) fn run(it: &mut Interpreter, f: &Function, args: &[Value]) -> Result<Value> {
    let mut frame = Frame::new(it, f);
    let result = frame.params(args).and_then(|()| frame.body());
    frame.finish();
    result
}

/// Runs function `i` of the module for a call: checked against the depth
/// limit, on a stack grown as the recursion needs (each level of the
/// evaluator takes a few kilobytes of the host's stack).
fn run_callee(it: &mut Interpreter, i: usize, args: &[Value]) -> Result<Value> {
    let g = std::rc::Rc::clone(&it.functions[i]);
    super::check_args(&g, args)?;
    if it.depth >= it.call_depth_limit {
        return err(format!(
            "call depth limit of {} exceeded calling `{}` (Interpreter::set_call_depth_limit \
             raises it)",
            it.call_depth_limit, g.name
        ));
    }
    it.depth += 1;
    let r = stacker::maybe_grow(256 * 1024, 4 * 1024 * 1024, || run(it, &g, args));
    it.depth -= 1;
    r
}

/// What a call of `name` runs: a function of the module, a registered
/// extern or a built-in, in that order.
fn callee(it: &Interpreter, name: &str) -> Callee {
    if let Some(&i) = it.function_index.get(name) {
        return Callee::Function(i);
    }
    match it.extern_index.get(name) {
        Some(&i) => Callee::User(i),
        None => match builtins::lookup(name) {
            Some(b) => Callee::Builtin(b),
            None => builtins::lookup_calling(name).map_or(Callee::Unknown, Callee::Calling),
        },
    }
}

/// Runs `callee`, which a call of `name` found, on `vals`.
fn dispatch(it: &mut Interpreter, callee: Callee, name: &str, vals: &[Value]) -> Result<Value> {
    match callee {
        Callee::Function(i) => run_callee(it, i, vals),
        Callee::User(i) => (it.externs[i])(&mut it.memory, vals),
        Callee::Builtin(b) => b(&mut it.memory, &mut it.output, vals),
        Callee::Calling(b) => b(it, vals),
        Callee::Unknown => err(format!(
            "call of the unknown extern `{name}` (register it with Interpreter::register)"
        )),
        Callee::Indirect => unreachable!("a function pointer names a function"),
    }
}

/// Calls the function called `name` (of the module, a registered extern
/// or a built-in) with `vals`: what a built-in that calls back (`qsort`'s
/// comparator) does.
pub(super) fn call_named(it: &mut Interpreter, name: &str, vals: &[Value]) -> Result<Value> {
    let callee = callee(it, name);
    dispatch(it, callee, name, vals)
}

/// The name of the function that `p` points to.
pub(super) fn pointee(memory: &super::Memory, p: Value) -> Result<String> {
    match p {
        Value::Ptr(0) => err("call through a null function pointer".into()),
        Value::Ptr(q) => match memory.function_at(q) {
            Some(name) => Ok(name.to_string()),
            None => err(format!("call through {p}, which points to no function")),
        },
        v => err(format!("call through the non-pointer {v}")),
    }
}

fn home_of(f: &Function, v: VarId) -> Home {
    let d = &f.vars[v];
    match (&d.ty, d.kind) {
        // A struct lives in memory, even a parameter (a copy of the
        // argument's bytes); its value is its address.
        (Type::Struct(_), _) => Home::Array,
        // An array parameter is a pointer, as in C.
        (_, VarKind::Param(_)) if d.addr_taken => Home::Mem,
        (_, VarKind::Param(_)) => Home::Reg,
        (Type::Array { .. }, _) => Home::Array,
        _ if d.addr_taken => Home::Mem,
        _ => Home::Reg,
    }
}

/// Appends the statement's source location to an interpreter error.
fn at<T>(r: Result<T>, s: &Stmt) -> Result<T> {
    match (r, s.loc) {
        (Err(Error::Interp { message }), Some(loc)) => Err(Error::Interp {
            message: format!("{message} (at {loc})"),
        }),
        (
            Err(Error::Exit {
                status,
                location: None,
            }),
            Some(loc),
        ) => Err(Error::Exit {
            status,
            location: Some(loc),
        }),
        (r, _) => r,
    }
}

/// The size of what a pointer or array of type `ty` points to (`void`
/// counts 1, as in GNU C).
fn elem_size(ty: &Type) -> Result<u64> {
    match ty.element() {
        Some(Type::Void) => Ok(1),
        Some(t) => t
            .size()
            .map_or_else(|| err(format!("pointer arithmetic on {ty}")), Ok),
        None => err(format!("pointer arithmetic on the non-pointer type {ty}")),
    }
}

impl<'a> Frame<'a> {
    fn new(it: &'a mut Interpreter, f: &'a Function) -> Frame<'a> {
        let callees = f
            .externs
            .iter()
            .map(|(_, d)| match d.indirect {
                true => Callee::Indirect,
                false => callee(it, &d.name),
            })
            .collect();
        // A call made in an iteration of a checked loop has its own
        // variables: all of them are that iteration's.
        let epoch = it.memory.races().map_or(0, |r| r.epoch());
        Frame {
            decl_epoch: vec![epoch; f.vars.len()],
            reducing: Vec::new(),
            slots: vec![Slot::Uninit; f.vars.len()],
            homes: f.vars.keys().map(|v| home_of(f, v)).collect(),
            scoped: Vec::new(),
            temps: Vec::new(),
            callees,
            ptr_ty: Type::ptr(Type::Void),
            it,
            f,
        }
    }

    fn params(&mut self, args: &[Value]) -> Result<()> {
        for (&p, &a) in self.f.params.iter().zip(args) {
            self.slots[p.index()] = match self.homes[p.index()] {
                // A struct argument is its address: the parameter is a copy.
                Home::Array => {
                    let size = self.f.vars[p].ty.size().unwrap_or(0);
                    let name = Origin::Local(self.f.var_name(p));
                    let q = self.it.memory.new_alloc(size, name, false)?;
                    let Value::Ptr(src) = a else {
                        return err(format!("a struct argument that is {a}"));
                    };
                    self.it.memory.copy(q, src, size)?;
                    Slot::Mem(q)
                }
                Home::Mem => {
                    let size = a.encode().1 as u64;
                    let name = Origin::Local(self.f.var_name(p));
                    let ptr = self.it.memory.new_alloc(size, name, false)?;
                    self.it.memory.store_at(ptr, a)?;
                    Slot::Mem(ptr)
                }
                _ => Slot::Val(a),
            };
        }
        Ok(())
    }

    fn body(&mut self) -> Result<Value> {
        let f = self.f;
        match self.block(&f.body)? {
            Flow::Return(v) => Ok(v),
            Flow::Goto(l) => err(format!(
                "goto {l:?} left `{}` without finding its label",
                f.name
            )),
            _ if f.ret == Type::Void => Ok(Value::Void),
            _ => err(format!(
                "`{}` reached its end without returning a value",
                f.name
            )),
        }
    }

    /// Drops the struct results of the last statement's calls.
    fn drop_temps(&mut self) {
        for p in self.temps.drain(..) {
            self.it.memory.drop_local(p);
        }
    }

    /// Drops every local's storage: pointers to them are dangling now.
    fn finish(&mut self) {
        self.drop_temps();
        for s in &self.slots {
            if let Slot::Mem(p) = *s {
                self.it.memory.drop_local(p);
            }
        }
    }

    fn tick(&mut self, s: &Stmt) -> Result<()> {
        self.drop_temps();
        self.it.steps += 1;
        if self.it.steps > self.it.step_limit {
            return at(
                err(format!(
                    "step limit of {} statements exceeded (Interpreter::set_step_limit raises it)",
                    self.it.step_limit
                )),
                s,
            );
        }
        Ok(())
    }

    fn block(&mut self, b: &'a Block) -> Result<Flow> {
        self.block_from(b, None)
    }

    /// Runs a block, from the start or from label `from` somewhere inside
    /// it. A `goto` to a label in the block (at any depth: C may jump into
    /// a nested block) goes on there; one to a label elsewhere leaves the
    /// block (the verifier ensures some enclosing block holds it).
    fn block_from(&mut self, b: &'a Block, from: Option<LabelId>) -> Result<Flow> {
        let mark = self.scoped.len();
        let mut flow = Flow::Next;
        let mut next = from;
        let mut i = 0;
        loop {
            if let Some(l) = next.take() {
                let Some(j) = b.iter().position(|s| holds_label(s, l)) else {
                    flow = Flow::Goto(l);
                    break;
                };
                i = j + 1;
                flow = match &b[j].kind {
                    StmtKind::Label(_) => Flow::Next,
                    _ => self.resume(&b[j], l)?,
                };
            } else if let Some(s) = b.get(i) {
                flow = self.stmt(s)?;
                i += 1;
            } else {
                break;
            }
            match flow {
                Flow::Next => {}
                Flow::Goto(l) => next = Some(l),
                _ => break,
            }
        }
        self.close_scope(mark);
        Ok(flow)
    }

    /// Runs statement `s` from label `l` inside it, as C does after a
    /// `goto l`: the rest of the branch or loop body, then (for a loop)
    /// the loop as usual.
    fn resume(&mut self, s: &'a Stmt, l: LabelId) -> Result<Flow> {
        match &s.kind {
            StmtKind::If { then_, else_, .. } => {
                let branch = if then_.iter().any(|s| holds_label(s, l)) {
                    then_
                } else {
                    else_
                };
                self.block_from(branch, Some(l))
            }
            StmtKind::While { cond, body } => match self.block_from(body, Some(l))? {
                Flow::Break => Ok(Flow::Next),
                out @ (Flow::Return(_) | Flow::Goto(_)) => Ok(out),
                Flow::Next | Flow::Continue => self.while_loop(s, *cond, body),
            },
            StmtKind::For {
                cond, step, body, ..
            } => {
                let mark = self.scoped.len();
                let flow = match self.block_from(body, Some(l))? {
                    Flow::Break => Ok(Flow::Next),
                    out @ (Flow::Return(_) | Flow::Goto(_)) => Ok(out),
                    Flow::Next | Flow::Continue => {
                        self.stmt(step)?;
                        self.for_rest(s, *cond, step, body)
                    }
                };
                self.close_scope(mark);
                flow
            }
            _ => err(format!("goto {l:?} into a statement without blocks")),
        }
    }

    fn close_scope(&mut self, mark: usize) {
        while self.scoped.len() > mark {
            let p = self.scoped.pop().expect("above the mark");
            self.it.memory.end_scope(p);
        }
    }

    fn stmt(&mut self, s: &'a Stmt) -> Result<Flow> {
        self.tick(s)?;
        match &s.kind {
            StmtKind::Decl { var, init } => at(self.declare(*var, *init), s)?,
            StmtKind::Assign { place, value } => at(self.assign(*place, *value), s)?,
            StmtKind::Eval(e) => {
                at(self.eval(*e), s)?;
            }
            StmtKind::If { cond, then_, else_ } => {
                let branch = if self.cond(*cond, s)? { then_ } else { else_ };
                return self.block(branch);
            }
            StmtKind::While { cond, body } => return self.while_loop(s, *cond, body),
            StmtKind::For {
                init,
                cond,
                step,
                body,
            } => {
                let mark = self.scoped.len();
                let reductions = crate::ir::parallel::reductions(s);
                let flow = match parallel::clauses(s) {
                    _ if reductions.is_some() => {
                        let reductions = reductions.unwrap_or(&[]);
                        self.reduce_loop(s, init, *cond, step, body, reductions)
                    }
                    Some(clauses) => at(parallel::check_clauses(clauses), s).and_then(|()| {
                        self.parallel_for(s, init, *cond, step, body, races::Kind::OpenMp)
                    }),
                    None if parallel::threads(s) => self.thread_loop(s, init, *cond, step, body),
                    None => self.for_loop(s, init, *cond, step, body),
                };
                self.close_scope(mark);
                return flow;
            }
            StmtKind::Launch(l) => return self.launch(s, l),
            StmtKind::Break => return Ok(Flow::Break),
            StmtKind::Continue => return Ok(Flow::Continue),
            StmtKind::Return(e) => return at(self.ret(*e), s),
            StmtKind::Label(_) => {}
            StmtKind::Goto(l) => return Ok(Flow::Goto(*l)),
        }
        Ok(Flow::Next)
    }

    /// A kernel launch, as the loop nest over its blocks and threads that
    /// C runs: each thread in turn, with its own scope, and with the
    /// data-race check (`parallel.rs`): threads run at once on a GPU.
    fn launch(&mut self, s: &Stmt, l: &'a Launch) -> Result<Flow> {
        let (bid, tid, body) = (l.bid, l.tid, &l.body);
        let checked = self.it.memory.races().is_none();
        if checked {
            let log = races::Races::new(self.it.memory.last_epoch(), races::Kind::Gpu);
            self.it.memory.set_races(Some(log));
        }
        let r = self.threads(s, l.grid, l.block, |me, b, t| {
            let mark = me.scoped.len();
            at(me.declare_value(bid, Some(Value::I32(b as i32))), s)?;
            at(me.declare_value(tid, Some(Value::I32(t as i32))), s)?;
            let flow = me.block(body)?;
            me.close_scope(mark);
            match flow {
                Flow::Next => Ok(()),
                _ => err("control left a kernel launch's body".to_string()),
            }
        });
        if checked {
            let log = self
                .it
                .memory
                .set_races(None)
                .expect("the launch's own log");
            self.it.memory.end_epochs(log.epoch());
        }
        r.map(|()| Flow::Next)
    }

    /// Runs `run(block, thread)` for every thread of a launch, each an
    /// iteration of the running data-race log.
    fn threads(
        &mut self,
        s: &Stmt,
        grid: u32,
        block: u32,
        mut run: impl FnMut(&mut Self, u32, u32) -> Result<()>,
    ) -> Result<()> {
        for b in 0..grid {
            for t in 0..block {
                self.tick(s)?;
                if let Some(r) = self.it.memory.races() {
                    r.next_iteration(format!("bid = {b}, tid = {t}"));
                }
                run(self, b, t)?;
            }
        }
        Ok(())
    }

    fn cond(&mut self, e: ExprId, s: &Stmt) -> Result<bool> {
        at(self.eval(e).and_then(ops::truthy), s)
    }

    fn while_loop(&mut self, s: &Stmt, cond: ExprId, body: &'a Block) -> Result<Flow> {
        self.looping(s, cond, body, None)
    }

    fn for_loop(
        &mut self,
        s: &Stmt,
        init: &'a Stmt,
        cond: ExprId,
        step: &'a Stmt,
        body: &'a Block,
    ) -> Result<Flow> {
        self.stmt(init)?;
        self.for_rest(s, cond, step, body)
    }

    /// A `for` loop after its initialiser (or after a `goto` into its body
    /// and its step).
    fn for_rest(
        &mut self,
        s: &Stmt,
        cond: ExprId,
        step: &'a Stmt,
        body: &'a Block,
    ) -> Result<Flow> {
        self.looping(s, cond, body, Some(step))
    }

    /// A loop from its test: `body` while `cond` holds, then `step` if any.
    fn looping(
        &mut self,
        s: &Stmt,
        cond: ExprId,
        body: &'a Block,
        step: Option<&'a Stmt>,
    ) -> Result<Flow> {
        loop {
            self.tick(s)?;
            if !self.cond(cond, s)? {
                return Ok(Flow::Next);
            }
            match self.block(body)? {
                Flow::Break => return Ok(Flow::Next),
                out @ (Flow::Return(_) | Flow::Goto(_)) => return Ok(out),
                Flow::Next | Flow::Continue => {}
            }
            if let Some(step) = step {
                self.stmt(step)?;
            }
        }
    }

    fn ret(&mut self, e: Option<ExprId>) -> Result<Flow> {
        let v = match e {
            Some(e) => self.eval(e)?,
            None => Value::Void,
        };
        if !v.fits(&self.f.ret) {
            return err(format!(
                "`{}` returns {v} of type {}, but its return type is {}",
                self.f.name,
                v.ty(),
                self.f.ret
            ));
        }
        // A struct result is the address of bytes whose scope is about to
        // end: they are copied, now, to memory the caller owns.
        if let (Value::Ptr(src), Type::Struct(_)) = (v, self.f.ret) {
            let size = self.f.ret.size().unwrap_or(0);
            let origin = Origin::Local(format!("result of `{}`", self.f.name));
            let out = self.it.memory.new_alloc(size, origin, false)?;
            self.it.memory.copy(out, src, size)?;
            return Ok(Flow::Return(Value::Ptr(out)));
        }
        Ok(Flow::Return(v))
    }

    fn declare(&mut self, v: VarId, init: Option<ExprId>) -> Result<()> {
        if let Type::Struct(_) = self.f.vars[v].ty {
            let size = self.f.vars[v].ty.size().unwrap_or(0);
            let p = self.storage(v, size)?;
            return match init {
                Some(e) => self.copy_struct(p, e, size),
                None => Ok(()),
            };
        }
        if self.homes[v.index()] == Home::Array {
            let size = self.array_size(v, init)?;
            self.storage(v, size)?;
            return Ok(());
        }
        let x = init.map(|e| self.checked(v, e)).transpose()?;
        self.declare_value(v, x)
    }

    /// Declares the scalar or pointer `v` with value `x` (or none).
    fn declare_value(&mut self, v: VarId, x: Option<Value>) -> Result<()> {
        match self.homes[v.index()] {
            Home::Reg => {
                self.decl_epoch[v.index()] = self.it.memory.races().map_or(0, |r| r.epoch());
                self.slots[v.index()] = match x {
                    Some(x) => Slot::Val(x),
                    None => Slot::Uninit,
                };
            }
            Home::Mem => {
                let size = self.f.vars[v].ty.size().expect("a sized scalar or pointer");
                let p = self.storage(v, size)?;
                if let Some(x) = x {
                    self.it.memory.store_at(p, x)?;
                }
            }
            Home::Array => unreachable!("arrays are declared by `declare`"),
        }
        Ok(())
    }

    /// Evaluates `e`, which must have `v`'s type.
    fn checked(&mut self, v: VarId, e: ExprId) -> Result<Value> {
        let x = self.eval(e)?;
        let ty = &self.f.vars[v].ty;
        if !x.fits(ty) {
            return err(format!(
                "`{}` of type {ty} is given {x} of type {}",
                self.f.var_name(v),
                x.ty()
            ));
        }
        Ok(x)
    }

    /// Bytes of a local array: from its type, or for `[T]` (a variable-length
    /// array) from the element count its declaration's initialiser gives.
    fn array_size(&mut self, v: VarId, init: Option<ExprId>) -> Result<u64> {
        let f = self.f;
        let ty = &f.vars[v].ty;
        let name = f.var_name(v);
        match (ty, init) {
            (Type::Array { len: Some(_), .. }, None) => ty
                .size()
                .map_or_else(|| err(format!("array `{name}` of unsized type {ty}")), Ok),
            (Type::Array { of, len: None }, Some(n)) => {
                let n = self.eval(n)?;
                let count = n.as_i64().filter(|c| *c >= 0);
                match (count, of.size()) {
                    (Some(c), Some(each)) => Ok(c as u64 * each),
                    _ => err(format!(
                        "array `{name}` of type {ty} declared with length {n}"
                    )),
                }
            }
            (Type::Array { len: None, .. }, None) => err(format!(
                "array `{name}` of unknown length is declared without one"
            )),
            _ => err(format!(
                "array `{name}` of type {ty} cannot have an initializer"
            )),
        }
    }

    /// Makes (or, for a declaration run again, revives) `v`'s allocation.
    fn storage(&mut self, v: VarId, size: u64) -> Result<u64> {
        let p = match self.slots[v.index()] {
            Slot::Mem(p) => {
                self.it.memory.revive(p, size)?;
                p
            }
            _ => {
                let origin = Origin::Local(self.f.var_name(v));
                let p = self.it.memory.new_alloc(size, origin, false)?;
                self.slots[v.index()] = Slot::Mem(p);
                p
            }
        };
        self.scoped.push(p);
        Ok(p)
    }

    /// Copies the struct `e` evaluates to (its address) to `dst`.
    fn copy_struct(&mut self, dst: u64, e: ExprId, size: u64) -> Result<()> {
        match self.eval(e)? {
            // `s = s` copies nothing (C allows exactly that overlap).
            Value::Ptr(src) if src == dst => Ok(()),
            Value::Ptr(src) => self.it.memory.copy(dst, src, size),
            v => err(format!("a struct value that is {v}")),
        }
    }

    fn assign(&mut self, place: ExprId, value: ExprId) -> Result<()> {
        let f = self.f;
        if let Type::Struct(_) = f.ty(place) {
            let size = f.ty(place).size().unwrap_or(0);
            let dst = match f.exprs[place].kind {
                Expr::Var(v) => match self.slots[v.index()] {
                    Slot::Mem(p) => p,
                    _ => {
                        return err(format!(
                            "assignment to `{}` before its declaration",
                            f.var_name(v)
                        ))
                    }
                },
                _ => self.place(place)?,
            };
            return self.copy_struct(dst, value, size);
        }
        if let Expr::Var(v) = f.exprs[place].kind {
            let x = self.checked(v, value)?;
            return match (self.homes[v.index()], self.slots[v.index()]) {
                (Home::Reg, _) => {
                    self.check_shared_write(v)?;
                    self.slots[v.index()] = Slot::Val(x);
                    Ok(())
                }
                (Home::Mem, Slot::Mem(p)) => self.it.memory.store_at(p, x),
                (Home::Mem, _) => err(format!(
                    "assignment to `{}` before its declaration",
                    f.var_name(v)
                )),
                (Home::Array, _) => err(format!("assignment to the array `{}`", f.var_name(v))),
            };
        }
        let x = self.eval(value)?;
        let ty = f.ty(place);
        if !x.fits(ty) || matches!(ty, Type::Array { .. }) {
            return err(format!(
                "store of {x} of type {} into a place of type {ty}",
                x.ty()
            ));
        }
        let p = self.place(place)?;
        self.it.memory.store_at(p, x)
    }

    fn read_var(&self, v: VarId) -> Result<Value> {
        match self.slots[v.index()] {
            Slot::Val(x) => Ok(x),
            Slot::Mem(p) => match self.homes[v.index()] {
                Home::Array => Ok(Value::Ptr(p)),
                _ => {
                    let ty = match &self.f.vars[v].ty {
                        Type::Array { .. } => &self.ptr_ty,
                        t => t,
                    };
                    self.it.memory.load_at(p, ty).map_err(|e| {
                        let n = ty.size().unwrap_or(8);
                        if self.it.memory.is_uninit(p, n) {
                            self.uninit(v)
                        } else {
                            e
                        }
                    })
                }
            },
            Slot::Uninit => Err(self.uninit(v)),
        }
    }

    fn uninit(&self, v: VarId) -> Error {
        Error::Interp {
            message: format!("read of uninitialized variable `{}`", self.f.var_name(v)),
        }
    }
}

/// True if `s` is label `l` or holds it in a nested block.
fn holds_label(s: &Stmt, l: LabelId) -> bool {
    match &s.kind {
        StmtKind::Label(m) => *m == l,
        // No goto crosses into a launch (the verifier checks it).
        StmtKind::Launch(_) => false,
        k => k.blocks().flatten().any(|s| holds_label(s, l)),
    }
}
