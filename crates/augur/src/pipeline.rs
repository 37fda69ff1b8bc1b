//! The whole pipeline after the runs, as one function (Cranelift's
//! `context.rs`): structure the trace, run the passes, count.

use crate::error::Error;
use crate::ir::{Function, Stmt, StmtKind};
use crate::trace::engine::Trace;
use crate::trace::Config;
use crate::trace::Stats;
use std::time::Instant;

/// Turns a trace into a verified, optimised, named function.
pub fn compile_trace(trace: Trace, config: &Config) -> Result<(Function, Stats), Error> {
    let mut stats = trace.stats.clone();
    let t = Instant::now();
    let (mut func, gotos) = crate::structure::structure(trace, config)?;
    stats.gotos = gotos;
    stats.time_structure = t.elapsed();
    let t = Instant::now();
    crate::passes::run(&mut func)?;
    stats.time_passes = t.elapsed();
    stats.statements = count(&func.body);
    Ok((func, stats))
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
