//! The function an attempt builds, beside its graph: the variables the
//! runs declare (parameters first), the externs they call, and for each
//! temporary loaded from a place, that place. Structuring gives it a body.

use super::graph::Place;
use super::tag::FastMap;
use crate::error::Error;
use crate::ir::{ExternSig, FuncId, Type, VarId};

/// The function an attempt builds: variables (parameters first) and
/// externs; the body comes from structuring the graph.
pub(crate) struct Output {
    pub(super) func: crate::ir::Function,
    /// Each extern's id by name.
    extern_ids: FastMap<String, FuncId>,
    /// For temporaries loaded from a place: the place, so `set` can store to it.
    pub(super) var_place: FastMap<VarId, Place>,
}

impl Output {
    /// A function `name` with parameters of types `params`, returning `ret`.
    pub(super) fn new(name: &str, params: &[Type], ret: Type) -> Output {
        let mut func = crate::ir::Function::new(name, ret);
        for (i, ty) in params.iter().enumerate() {
            let v = func.vars.push(crate::ir::VarData {
                ty: *ty,
                kind: crate::ir::VarKind::Param(i as u32),
                hint: None,
                name: None,
                addr_taken: false,
                loc: None,
            });
            func.params.push(v);
        }
        Output {
            func,
            extern_ids: FastMap::default(),
            var_place: FastMap::default(),
        }
    }

    /// The same signature, nothing recorded: for a new attempt.
    pub(super) fn fresh(&self) -> Output {
        let f = &self.func;
        let params: Vec<Type> = f.params.iter().map(|&p| f.vars[p].ty).collect();
        Output::new(&f.name, &params, f.ret)
    }

    /// The id of an extern, declaring it on first use. `sig` is borrowed:
    /// calls to a declared extern (most of them) allocate nothing.
    pub(super) fn extern_id(&mut self, sig: &ExternSig<'_>) -> Result<FuncId, Error> {
        if let Some(&id) = self.extern_ids.get(sig.name) {
            if !sig.declares(&self.func.externs[id]) {
                return Err(Error::Misuse {
                    message: format!(
                        "extern function `{}` is used with two different signatures",
                        sig.name
                    ),
                    location: None,
                });
            }
            return Ok(id);
        }
        if crate::codegen::c::keywords::HELPERS.contains(&sig.name) {
            return Err(Error::Misuse {
                message: format!(
                    "extern function `{}` has the name of a helper augur's C and CUDA \
                     define for its device operations and bounds checks; rename it",
                    sig.name
                ),
                location: None,
            });
        }
        let id = self.func.externs.push(sig.to_decl());
        self.extern_ids.insert(sig.name.to_string(), id);
        Ok(id)
    }
}
