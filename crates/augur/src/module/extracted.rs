//! An extracted module ([`ExtractedModule`]): its functions' IR, C and
//! CUDA; interpreted, or compiled into one library ([`CompiledModule`]).

use super::Part;
use crate::codegen::CodegenOptions;
use crate::error::Error;
use crate::exec::compile::{Backend, CompileOptions};
use crate::exec::interp::{Interpreter, Value};
use crate::ir::Function;
use crate::program::{self, Code};
use crate::prophecy::Explanation;
use crate::stage::func::{Handle, Registry, Signature};
use crate::trace::Stats;
use crate::Result;
use std::collections::HashMap;

/// The functions of an extracted [`Module`](super::Module), in the order
/// they were asked for (exported functions first): one C unit.
#[derive(Clone, Debug)]
pub struct ExtractedModule {
    id: u64,
    parts: Vec<Part>,
    /// Family names, by family index.
    families: Vec<String>,
    /// (family, key text) to the part; `None` when two keys of one family
    /// print alike, so the text cannot tell them apart.
    lookup: HashMap<(usize, String), Option<usize>>,
}

impl ExtractedModule {
    /// Keeps the parts marked in `keep`.
    pub(super) fn new(registry: Registry, parts: Vec<Part>, keep: Vec<bool>) -> ExtractedModule {
        let mut lookup = HashMap::new();
        let mut kept = Vec::new();
        for ((part, inst), keep) in parts.into_iter().zip(&registry.instances).zip(keep) {
            if !keep {
                continue;
            }
            let slot = (part.family, inst.key_text.clone());
            let new = lookup.contains_key(&slot);
            lookup.insert(slot, (!new).then_some(kept.len()));
            kept.push(part);
        }
        ExtractedModule {
            id: registry.id,
            parts: kept,
            families: registry.funcs.iter().map(|f| f.name.clone()).collect(),
            lookup,
        }
    }

    /// The part `h` names.
    fn part<S>(&self, h: &impl Handle<S>) -> Result<&Part> {
        let missing = |why: &str| {
            let family = self
                .families
                .get(h.family())
                .map_or("a failed declaration", String::as_str);
            Err(Error::Misuse {
                message: format!(
                    "no function `{family}` at {} in this module: {why}",
                    h.key_text()
                ),
                location: None,
            })
        };
        if h.module_id() != self.id {
            return missing("the handle belongs to another module");
        }
        match self.lookup.get(&(h.family(), h.key_text())) {
            Some(Some(i)) => Ok(&self.parts[*i]),
            Some(None) => missing("two keys of the family print alike, so a key cannot name one"),
            None => missing("no exported function calls it (Module::export adds it)"),
        }
    }

    /// Every function, in the module's order.
    pub fn functions(&self) -> impl Iterator<Item = &Function> {
        self.parts.iter().map(|p| &p.part.func)
    }

    /// The IR of the function `h` names.
    pub fn ir<S>(&self, h: impl Handle<S>) -> Result<&Function> {
        self.part(&h).map(|p| &p.part.func)
    }

    /// The C name of the function `h` names (`power_3`).
    pub fn name<S>(&self, h: impl Handle<S>) -> Result<&str> {
        self.part(&h).map(|p| p.part.func.name.as_str())
    }

    /// What the extraction of the function `h` names did.
    pub fn stats<S>(&self, h: impl Handle<S>) -> Result<&Stats> {
        self.part(&h).map(|p| &p.part.stats)
    }

    /// Why each prophecy of the function `h` names ended at its value.
    pub fn explain<S>(&self, h: impl Handle<S>) -> Result<&Explanation> {
        self.part(&h).map(|p| &p.part.explanation)
    }

    /// Each function's C name, statistics and explanation, in the
    /// module's order.
    pub fn reports(&self) -> impl Iterator<Item = (&str, &Stats, &Explanation)> {
        self.parts.iter().map(|p| {
            (
                p.part.func.name.as_str(),
                &p.part.stats,
                &p.part.explanation,
            )
        })
    }

    fn funcs(&self) -> Vec<&Function> {
        self.functions().collect()
    }

    /// The module as one C99 translation unit: prototypes of every
    /// function called, then the definitions.
    pub fn c_code(&self) -> String {
        self.c_code_with(&CodegenOptions::default())
    }

    /// [`c_code`](ExtractedModule::c_code) with options (source mapping).
    pub fn c_code_with(&self, opts: &CodegenOptions) -> String {
        program::c_code(&self.funcs(), opts)
    }

    /// The module as one CUDA unit ([`Extracted::cuda_code`](crate::Extracted::cuda_code)
    /// for each function). The module's functions are host functions: a
    /// kernel that calls one fails to extract.
    pub fn cuda_code(&self, prelude: &str) -> Result<String> {
        self.cuda_code_with(prelude, &CodegenOptions::default())
    }

    /// [`cuda_code`](ExtractedModule::cuda_code) with options.
    pub fn cuda_code_with(&self, prelude: &str, opts: &CodegenOptions) -> Result<String> {
        program::cuda_code(&self.funcs(), prelude, opts)
    }

    /// The CPU simulation of the GPU program, function by function
    /// ([`Extracted::simulated`](crate::Extracted::simulated)).
    pub fn simulated(&self) -> Result<ExtractedModule> {
        let mut out = self.clone();
        program::simulated(out.parts.iter_mut().map(|p| &mut p.part))?;
        Ok(out)
    }

    /// Runs the function `h` names in a new IR interpreter that knows every
    /// function of the module.
    pub fn interpret<S>(&self, h: impl Handle<S>, args: &[Value]) -> Result<Value> {
        self.interpret_in(&mut Interpreter::new(), h, args)
    }

    /// Runs the function `h` names in `interp` (registered externs, memory
    /// prepared by the caller), after adding the module's functions to it.
    pub fn interpret_in<S>(
        &self,
        interp: &mut Interpreter,
        h: impl Handle<S>,
        args: &[Value],
    ) -> Result<Value> {
        let f = &self.part(&h)?.part.func;
        program::interpret_in(interp, &self.funcs(), f, args)
    }

    /// A safe call of the function `h` names, which must be checked
    /// ([`Builder::slice`](crate::Builder::slice), [`Builder::checked`](crate::Builder::checked)
    /// on the module's builder): compiled with every function of the module,
    /// as [`Extracted::safe`](crate::Extracted::safe) compiles one.
    pub fn safe<S>(&self, h: impl Handle<S>) -> Result<crate::safe::SafeFn> {
        self.safe_with(h, &CompileOptions::default())
    }

    /// [`safe`](ExtractedModule::safe) with compile options.
    pub fn safe_with<S>(
        &self,
        h: impl Handle<S>,
        opts: &CompileOptions,
    ) -> Result<crate::safe::SafeFn> {
        crate::safe::of_part(&self.funcs(), &self.part(&h)?.part, opts)
    }

    /// Compiles the module into one library ([`Backend::Auto`]: the system
    /// C compiler when one is found, else the JIT).
    pub fn compile(&self) -> Result<CompiledModule> {
        self.compile_with(&CompileOptions::default())
    }

    /// [`compile`](ExtractedModule::compile) with options.
    pub fn compile_with(&self, opts: &CompileOptions) -> Result<CompiledModule> {
        let code = program::compile(&self.funcs(), opts)?;
        Ok(CompiledModule {
            code,
            names: self.clone(),
        })
    }
}

/// A compiled and loaded module: one library, a typed function pointer per
/// function.
#[derive(Clone)]
pub struct CompiledModule {
    code: Code,
    /// The extracted module, to look names up.
    names: ExtractedModule,
}

impl CompiledModule {
    /// The function `h` names, as `unsafe extern "C" fn(...) -> ...`.
    /// Calling it runs the generated code, which may dereference the
    /// pointers it is given: the caller guarantees they are valid. The
    /// pointer must not be used after this `CompiledModule` (and its
    /// clones) are dropped.
    pub fn get<S: Signature>(&self, h: impl Handle<S>) -> Result<S::Native> {
        let name = self.names.name(h)?;
        // SAFETY: the module was compiled from C (or IR) generated for the
        // family's signature `S`, whose `Native` is `unsafe extern "C" fn`
        // of the parameters' and result's ABI types, matching the
        // definition of `name`.
        unsafe { self.code.symbol::<S::Native>(name) }
    }

    /// The backend that compiled it.
    pub fn backend(&self) -> Backend {
        self.code.backend()
    }

    /// What the backend could not honour, one line each (the JIT's
    /// pragmas: see [`Compiled::notes`](crate::Compiled::notes)).
    pub fn notes(&self) -> &[String] {
        self.code.notes()
    }

    /// The extracted module it was compiled from.
    pub fn extracted(&self) -> &ExtractedModule {
        &self.names
    }
}

impl std::fmt::Debug for CompiledModule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.names.functions().map(|f| f.name.as_str()).collect();
        write!(f, "CompiledModule({:?}, {names:?})", self.backend())
    }
}
