//! Calls of externs: direct C calls through the callee's address, calls of
//! the module's own functions, calls through function pointers, variadic
//! calls through the shims of `symbols.rs`; and functions' addresses.

use super::lower::Lower;
use super::symbols::{self, Words};
use super::types::{self, PTR};
use super::{jit_error, Callee};
use crate::ir::{EntityId, ExprId, FuncId, Intrinsic, Scalar, Type};
use crate::Result;
use cranelift_codegen::ir::{self, types as cl, AbiParam, InstBuilder, MemFlags, Signature};

impl Lower<'_, '_> {
    /// Calls extern `func` with `args`; `None` for a void one.
    pub(super) fn call(&mut self, func: FuncId, args: &[ExprId]) -> Result<Option<ir::Value>> {
        let r = self.call_any(func, args);
        // The callee may have written any memory.
        self.known.clear();
        r
    }

    fn call_any(&mut self, func: FuncId, args: &[ExprId]) -> Result<Option<ir::Value>> {
        let f = self.f;
        let d = &f.externs[func];
        let fixed = d.params.len();
        if args.len() < fixed || (!d.variadic && args.len() > fixed) {
            return Err(jit_error(&format!(
                "a call of `{}` with {} arguments (it takes {fixed})",
                d.name,
                args.len()
            )));
        }
        let callee = match &self.callees[func.index()] {
            Callee::Missing => {
                return Err(jit_error(&format!(
                    "a call of the extern `{}`, which is neither a function of the module, \
                     nor registered with CompileOptions::with_symbol, nor a symbol of this process",
                    d.name
                )))
            }
            c => *c,
        };
        if d.variadic {
            let Callee::Address(addr) = callee else {
                return Err(jit_error(&format!(
                    "a variadic call of the module's own `{}`",
                    d.name
                )));
            };
            return self.variadic(func, addr, args);
        }
        let mut values = Vec::with_capacity(args.len());
        for (&a, p) in args.iter().zip(&d.params) {
            let x = self.expr(a)?;
            values.push(self.convert(x, f.ty(a), p)?);
        }
        let inst = match callee {
            Callee::Local(fref) => self.b.ins().call(fref, &values),
            Callee::Address(addr) => {
                let sig = self.signature(&d.params, &d.ret)?;
                let target = self.b.ins().iconst(PTR, addr as i64);
                self.b.ins().call_indirect(sig, target, &values)
            }
            Callee::Indirect => {
                let sig = self.signature(&d.params[1..], &d.ret)?;
                self.b.ins().call_indirect(sig, values[0], &values[1..])
            }
            Callee::Missing => unreachable!("reported above"),
        };
        Ok(self.b.inst_results(inst).first().copied())
    }

    /// The C signature of a function taking `params` and returning `ret`,
    /// imported into the function being built.
    fn signature(&mut self, params: &[Type], ret: &Type) -> Result<ir::SigRef> {
        let mut sig = Signature::new(self.b.func.signature.call_conv);
        for p in params {
            sig.params.push(types::abi(p)?);
        }
        if *ret != Type::Void {
            sig.returns.push(types::abi(ret)?);
        }
        Ok(self.b.import_signature(sig))
    }

    /// Runs intrinsic `op` on `args` with result type `ty` by a call of
    /// its Rust function; `None` for a void one.
    pub(super) fn intrinsic(
        &mut self,
        op: Intrinsic,
        args: &[ExprId],
        ty: &Type,
    ) -> Result<Option<ir::Value>> {
        let Some(addr) = symbols::intrinsic(op, ty) else {
            return Err(jit_error(&format!(
                "@{} in compiled code: a kernel that meets at a barrier or uses shared memory \
                 runs only simulated",
                op.name()
            )));
        };
        let params: Vec<Type> = args.iter().map(|&a| *self.f.ty(a)).collect();
        let mut values = Vec::with_capacity(args.len());
        for &a in args {
            values.push(self.expr(a)?);
        }
        let sig = self.signature(&params, ty)?;
        let target = self.b.ins().iconst(PTR, addr as i64);
        let inst = self.b.ins().call_indirect(sig, target, &values);
        self.known.clear();
        Ok(self.b.inst_results(inst).first().copied())
    }

    /// The address of extern `func`: a function of the module or a C
    /// function found by name.
    pub(super) fn func_addr(&mut self, func: FuncId) -> Result<ir::Value> {
        match self.callees[func.index()] {
            Callee::Local(fref) => Ok(self.b.ins().func_addr(PTR, fref)),
            Callee::Address(addr) => Ok(self.b.ins().iconst(PTR, addr as i64)),
            Callee::Missing | Callee::Indirect => Err(jit_error(&format!(
                "the address of the extern `{}`, which is neither a function of the module, \
                 nor registered with CompileOptions::with_symbol, nor a symbol of this process",
                self.f.externs[func].name
            ))),
        }
    }

    /// A variadic call: the arguments are sorted into the words the shim
    /// passes in registers and on the stack ([`Words`]).
    fn variadic(
        &mut self,
        func: FuncId,
        addr: usize,
        args: &[ExprId],
    ) -> Result<Option<ir::Value>> {
        let f = self.f;
        let d = &f.externs[func];
        if symbols::shim(false) == 0 {
            return Err(jit_error(&format!(
                "the variadic call of `{}`: the JIT makes variadic calls only on x86-64 and aarch64 Linux and BSD",
                d.name
            )));
        }
        let words = self.b.create_sized_stack_slot(ir::StackSlotData::new(
            ir::StackSlotKind::ExplicitSlot,
            (Words::LEN * 8) as u32,
            3,
        ));
        let mut used = [false; Words::LEN];
        let (mut ints, mut floats, mut stack) = (0, 0, 0);
        for (i, &a) in args.iter().enumerate() {
            let at = *f.ty(a);
            let x = self.expr(a)?;
            // A named parameter gets its declared type; the rest C's
            // default promotions (narrow integers to int, float to double).
            let (x, float) = match d.params.get(i) {
                Some(p) => (self.convert(x, &at, p)?, types::is_float(p)),
                None if at == Type::Scalar(Scalar::F32) => {
                    (self.convert(x, &at, &Type::Scalar(Scalar::F64))?, true)
                }
                None if types::is_float(&at) => (x, true),
                None => {
                    let wide = if types::value(&at)?.bits() < 32 {
                        Type::Scalar(Scalar::I32)
                    } else {
                        at
                    };
                    (self.convert(x, &at, &wide)?, false)
                }
            };
            let slot = if float && floats < symbols::FLOAT_REGS {
                floats += 1;
                Words::FLOATS + floats - 1
            } else if !float && ints < symbols::INT_REGS {
                ints += 1;
                ints - 1
            } else if stack < symbols::STACK_WORDS {
                stack += 1;
                Words::STACK + stack - 1
            } else {
                return Err(jit_error(&format!(
                    "the variadic call of `{}` with {} arguments (the JIT passes at most {} on the stack)",
                    d.name,
                    args.len(),
                    symbols::STACK_WORDS
                )));
            };
            // Integers narrower than a word are extended to one, floats
            // narrower than one sit in its low half above a zero.
            let x = match self.b.func.dfg.value_type(x) {
                cl::I8 | cl::I16 | cl::I32 => {
                    let from = if float {
                        at
                    } else {
                        self.int_word_type(&at, d.params.get(i))
                    };
                    self.extend_word(x, &from)
                }
                cl::F32 => {
                    let zero = self.b.ins().iconst(cl::I64, 0);
                    self.b.ins().stack_store(zero, words, (slot * 8) as i32);
                    x
                }
                _ => x,
            };
            self.b.ins().stack_store(x, words, (slot * 8) as i32);
            used[slot] = true;
        }
        for (slot, _) in used.iter().enumerate().filter(|(_, u)| !**u) {
            let zero = self.b.ins().iconst(cl::I64, 0);
            self.b.ins().stack_store(zero, words, (slot * 8) as i32);
        }
        let float_ret = types::is_float(&d.ret);
        let shim = symbols::shim(float_ret);
        let mut sig = Signature::new(self.b.func.signature.call_conv);
        sig.params.push(AbiParam::new(PTR));
        sig.params.push(AbiParam::new(PTR));
        sig.returns
            .push(AbiParam::new(if float_ret { cl::F64 } else { cl::I64 }));
        let sig = self.b.import_signature(sig);
        let target = self.b.ins().iconst(PTR, shim as i64);
        let callee = self.b.ins().iconst(PTR, addr as i64);
        let words_addr = self.b.ins().stack_addr(PTR, words, 0);
        let inst = self
            .b
            .ins()
            .call_indirect(sig, target, &[callee, words_addr]);
        let r = self.b.inst_results(inst)[0];
        Ok(match d.ret {
            Type::Void => None,
            Type::Scalar(Scalar::F64) => Some(r),
            Type::Scalar(Scalar::F32) => {
                let bits = self.b.ins().bitcast(cl::I64, MemFlags::new(), r);
                let low = self.b.ins().ireduce(cl::I32, bits);
                Some(self.b.ins().bitcast(cl::F32, MemFlags::new(), low))
            }
            t => {
                let ty = types::value(&t)?;
                Some(if ty == cl::I64 {
                    r
                } else {
                    self.b.ins().ireduce(ty, r)
                })
            }
        })
    }

    /// The type whose signedness extends an integer argument to a word.
    fn int_word_type(&self, arg: &Type, param: Option<&Type>) -> Type {
        *param.unwrap_or(arg)
    }

    /// An integer narrower than 64 bits, extended by the signedness of `t`.
    fn extend_word(&mut self, x: ir::Value, t: &Type) -> ir::Value {
        if types::is_signed(t) {
            self.b.ins().sextend(cl::I64, x)
        } else {
            self.b.ins().uextend(cl::I64, x)
        }
    }
}
