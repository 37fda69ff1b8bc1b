//! Structuring: the trace graph becomes a structured statement tree.
//!
//! `cfg` groups nodes into basic blocks and computes dominators and loops;
//! `emit` walks the dominator tree to produce `if`/`while`/`break`/
//! `continue`/`return`; `lower` turns each recorded operation into IR.
//! Before emitting, two checks turn first-stage mistakes into errors: a
//! value used where its definition does not dominate the use (a `Dyn` bound
//! inside a dyn branch and used after it), and a loop with no exit.

mod cfg;
mod emit;
mod lower;

use crate::error::Error;
use crate::ir::{Function, SrcLoc};
use crate::trace::engine::{Config, Trace};
use crate::trace::graph::{Node, NodeId};
use cfg::{Cfg, Term};

/// Builds the function's body from its trace; returns the `goto` count.
pub fn structure(trace: Trace, config: &Config) -> Result<(Function, u64), Error> {
    let mut func = trace.func;
    let mut nodes = trace.nodes;
    let Some(entry) = trace.entry else {
        return Err(Error::Internal {
            message: "the closure was never run".into(),
        });
    };
    let cfg = Cfg::build(&nodes, entry)?;
    check_definitions(&cfg, &nodes, &func)?;
    if !config.allow_infinite_loops {
        check_exits(&cfg, &nodes)?;
    }
    // Where a join cannot be reached structurally, small join blocks are
    // copied into each predecessor and the emission is tried again.
    let mut cfg = cfg;
    for _ in 0..8 {
        let (body, gotos, targets) = emit::Emitter::new(&cfg, &nodes, &mut func).run();
        func.body = body;
        if gotos == 0 {
            return Ok((func, 0));
        }
        match cfg.split(&targets, &mut nodes, &mut func.vars) {
            Some(blocks) => cfg = Cfg::from_blocks(blocks),
            None => return Ok((func, gotos)),
        }
    }
    let (body, gotos, _) = emit::Emitter::new(&cfg, &nodes, &mut func).run();
    func.body = body;
    Ok((func, gotos))
}

/// Every use of a variable must be dominated by its definition.
fn check_definitions(
    cfg: &Cfg,
    nodes: &crate::ir::Arena<NodeId, Node>,
    func: &Function,
) -> Result<(), Error> {
    let mut def = vec![None; func.vars.len()];
    for (b, block) in cfg.blocks.iter().enumerate() {
        for (i, &n) in block.nodes.iter().enumerate() {
            if let Some(v) = nodes[n].def {
                def[v.0 as usize] = Some((b, i));
            }
        }
    }
    let mut uses = Vec::new();
    for (b, block) in cfg.blocks.iter().enumerate() {
        let mut term_nodes = Vec::new();
        match &block.term {
            Term::Branch(c, ..) => c.nodes(&mut term_nodes),
            Term::Return(n) => term_nodes.push(*n),
            Term::Goto(_) => {}
        }
        let all = block
            .nodes
            .iter()
            .copied()
            .enumerate()
            .chain(term_nodes.into_iter().map(|n| (usize::MAX, n)));
        for (i, n) in all {
            uses.clear();
            lower::uses(&nodes[n].op, &mut uses);
            for v in &uses {
                let Some((db, di)) = def[v.0 as usize] else {
                    continue; // a parameter
                };
                let ok = if db == b {
                    di < i
                } else {
                    cfg.dominates(db, b)
                };
                if !ok {
                    // A return's location is the `extract` call: say nothing.
                    let returned = matches!(nodes[n].op, crate::trace::graph::Op::Return(_));
                    return Err(Error::UndefinedValue {
                        defined: func.vars[*v].loc,
                        used: (!returned).then_some(nodes[n].loc),
                    });
                }
            }
        }
    }
    Ok(())
}

/// Every loop needs an exit edge (a `break`, a `return` or its condition).
fn check_exits(cfg: &Cfg, nodes: &crate::ir::Arena<NodeId, Node>) -> Result<(), Error> {
    for h in 0..cfg.blocks.len() {
        if !cfg.is_header[h] {
            continue;
        }
        let body = &cfg.loop_body[h];
        let exits = (0..cfg.blocks.len())
            .filter(|&b| body[b])
            .any(|b| cfg.succs(b).iter().any(|&s| !body[s]));
        if !exits {
            return Err(Error::LoopNeverExits {
                location: first_loc(cfg, nodes, h),
            });
        }
    }
    Ok(())
}

fn first_loc(cfg: &Cfg, nodes: &crate::ir::Arena<NodeId, Node>, b: usize) -> Option<SrcLoc> {
    let block = &cfg.blocks[b];
    let n = block.nodes.first().copied().or(match &block.term {
        Term::Branch(c, ..) => Some(c.first()),
        Term::Return(n) => Some(*n),
        Term::Goto(_) => None,
    })?;
    Some(nodes[n].loc)
}
