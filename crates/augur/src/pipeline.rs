//! The whole pipeline after the runs, as one function (Cranelift's
//! `Context::compile`): [`finish`] takes a trace through structuring, the
//! passes, `restrict` and the bounds pass to a verified function. Every
//! extraction goes through it: a single function ([`Builder::extract`](crate::Builder::extract))
//! and each function of a module ([`Module::extract`](crate::Module::extract)),
//! with the same [`Options`].

use crate::error::Error;
use crate::ir::{Function, SrcLoc, Stmt, StmtKind, Type, VarId};
use crate::prophecy::Explanation;
use crate::trace::engine::Trace;
use crate::trace::Config;
use crate::trace::Stats;
use std::time::Instant;

/// What a [`Builder`](crate::Builder) asks of each function besides the
/// first stage's limits: the same for a single function and for every
/// function of a module.
#[derive(Clone, Debug, Default)]
pub(crate) struct Options {
    /// Parameters to declare `restrict` (see `Builder::restrict`).
    pub(crate) restrict: Vec<usize>,
    /// `(pointer, length)` parameter positions (see `Builder::slice`).
    pub(crate) slices: Vec<(usize, usize)>,
    /// Bounds-checked (see `Builder::checked`).
    pub(crate) checked: bool,
}

impl Options {
    /// True if functions are checked: asked for, or implied by a slice.
    fn is_checked(&self) -> bool {
        self.checked || !self.slices.is_empty()
    }
}

/// One finished function: what an extraction gives.
#[derive(Clone, Debug)]
pub(crate) struct Part {
    pub(crate) func: Function,
    pub(crate) stats: Stats,
    pub(crate) explanation: Explanation,
    /// Where its body was given (`extract`, `Module::define`).
    pub(crate) loc: SrcLoc,
    /// The declared slices of a checked function; `None` if unchecked.
    pub(crate) slices: Option<Vec<(usize, usize)>>,
}

/// Turns a trace into a verified, optimised, named function: structure →
/// passes (verified after each in debug builds, after the last always) →
/// `restrict` → bounds checks (verified).
pub(crate) fn finish(
    mut trace: Trace,
    config: &Config,
    options: &Options,
    loc: SrcLoc,
) -> Result<Part, Error> {
    let explanation = std::mem::take(&mut trace.explanation);
    let mut stats = trace.stats.clone();
    let t = Instant::now();
    let (mut func, gotos) = crate::structure::structure(trace, config)?;
    stats.gotos = gotos;
    stats.time_structure = t.elapsed();
    let t = Instant::now();
    crate::passes::run(&mut func)?;
    stats.time_passes = t.elapsed();
    stats.statements = count(&func.body);
    func.restrict = restricted(&func, &options.restrict, loc)?;
    let checked = options.is_checked();
    if checked {
        crate::passes::bounds::run(&mut func, &options.slices, loc)?;
        crate::passes::verified(&func, "bounds")?;
    }
    crate::dump::function(&func);
    Ok(Part {
        func,
        stats,
        explanation,
        loc,
        slices: checked.then(|| options.slices.clone()),
    })
}

/// The parameters at positions `positions`, checked to be pointers.
fn restricted(func: &Function, positions: &[usize], loc: SrcLoc) -> Result<Vec<VarId>, Error> {
    let mut out = Vec::new();
    for &i in positions {
        let param = func.params.get(i).copied();
        let ty = param.map(|p| func.vars[p].ty);
        match (param, ty) {
            (Some(p), Some(Type::Ptr { .. })) if !out.contains(&p) => out.push(p),
            (Some(_), Some(Type::Ptr { .. })) => {}
            _ => {
                return Err(Error::Misuse {
                    message: format!(
                        "Builder::restrict names parameter {i} of `{}`, which is {}: only \
                         pointer parameters can be restrict",
                        func.name,
                        match ty {
                            Some(t) => format!("of type {t}"),
                            None => format!("not one of the {}", func.params.len()),
                        }
                    ),
                    location: Some(loc),
                })
            }
        }
    }
    Ok(out)
}

fn count(b: &[Stmt]) -> u64 {
    b.iter()
        .map(|s| {
            1 + match &s.kind {
                StmtKind::If { then_, else_, .. } => count(then_) + count(else_),
                StmtKind::While { body, .. } | StmtKind::For { body, .. } => count(body),
                _ => 0,
            }
        })
        .sum()
}
