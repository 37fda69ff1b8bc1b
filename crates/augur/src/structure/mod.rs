//! Structuring: the trace graph becomes a structured statement tree.
//!
//! `cfg` groups nodes into basic blocks and computes dominators and loops;
//! `emit` walks the dominator tree to produce `if`/`while`/`break`/
//! `continue`/`return`; `lower` turns each recorded operation into IR.
//! `breaks` turns forward gotos that remain into `break`s out of one-turn
//! loops, and `guards` those left after node splitting into guards on a
//! `jump` variable. Before emitting, two checks turn first-stage mistakes
//! into errors: a value used where its definition does not dominate the use
//! (a `Dyn` bound inside a dyn branch and used after it), and a loop with no
//! exit.

mod breaks;
mod cfg;
mod emit;
mod guards;
mod launches;
mod lower;
mod parallel;
mod regions;

use crate::error::Error;
use crate::ir::{Arena, Const, Expr, Function, Scalar, SecondaryMap, Type, VarId};
use crate::trace::engine::Trace;
use crate::trace::graph::{Node, NodeId, Op};
use crate::trace::Config;
use cfg::{BlockId, BlockSet, Cfg};

/// Builds the function's body from its trace; returns the `goto` count.
pub fn structure(trace: Trace, config: &Config) -> Result<(Function, u64), Error> {
    let func = trace.func;
    let mut nodes = trace.nodes;
    let Some(entry) = trace.entry else {
        return Err(Error::Internal {
            message: "the closure was never run".into(),
        });
    };
    // Only a graph with points is walked for them.
    let points = match trace.stats.points {
        0 => Vec::new(),
        _ => regions::points(&nodes, entry),
    };
    if points.len() > regions::WHOLE_MAX_POINTS {
        return regions::structure(&mut nodes, entry, &points, func, config);
    }
    let cfg = Cfg::build(&nodes, entry)?;
    check_definitions(&cfg, &nodes, &func)?;
    if !config.allow_infinite_loops {
        check_exits(&cfg, &nodes)?;
    }
    let (body, gotos, mut func) = emit_all(cfg, &mut nodes, func)?;
    func.body = body;
    Ok((func, gotos))
}

/// Emits `cfg` as a statement tree; returns it, the `goto`s left in it,
/// and the function (whose variables and expressions it added to).
fn emit_all(
    cfg: Cfg,
    nodes: &mut Arena<NodeId, Node>,
    func: Function,
) -> Result<(crate::ir::Block, u64, Function), Error> {
    // Where a join cannot be reached structurally, small join blocks are
    // copied into each predecessor and the emission is tried again, as long
    // as that removes gotos.
    let mut emitted = Emission::new(cfg, nodes, func)?;
    for _ in 0..8 {
        if emitted.gotos == 0 {
            break;
        }
        match emitted.split(nodes) {
            Some(better) => emitted = better,
            None => break,
        }
    }
    let mut func = emitted.func;
    let mut gotos = emitted.gotos;
    if gotos > 0 {
        gotos -= guards::forward_guards(&mut func);
    }
    let body = std::mem::take(&mut func.body);
    Ok((body, gotos, func))
}

/// True if a statement of `b` or of a block nested in it satisfies `p`: a
/// walk that allocates nothing, for folds that most functions give nothing
/// to do (they rebuild every block they walk).
fn any_stmt(b: &[crate::ir::Stmt], p: &dyn Fn(&crate::ir::Stmt) -> bool) -> bool {
    b.iter()
        .any(|s| p(s) || s.kind.blocks().any(|inner| any_stmt(inner, p)))
}

/// A CFG emitted as a statement tree, its forward gotos made `break`s.
struct Emission {
    cfg: Cfg,
    func: Function,
    /// Gotos left after forward breaks: what splitting must lower (copies
    /// can add gotos that forward breaks all remove, as each turn of an
    /// unrolled plain loop that `break`s out of it does).
    gotos: u64,
    /// Blocks gotos jump to.
    targets: BlockSet,
    /// Joins between a goto and its target (see `Emitter::run`).
    joins: BlockSet,
}

impl Emission {
    fn new(cfg: Cfg, nodes: &Arena<NodeId, Node>, mut func: Function) -> Result<Emission, Error> {
        let (body, mut gotos, targets, joins) = emit::Emitter::new(&cfg, nodes, &mut func).run();
        func.body = body;
        launches::fold(&mut func)?;
        parallel::fold(&mut func)?;
        if gotos > 0 {
            let truth = func.expr(Expr::Const(Const::Bool(true)), Type::Scalar(Scalar::Bool));
            gotos -= breaks::forward_breaks(&mut func, truth);
        }
        Ok(Emission {
            cfg,
            func,
            gotos,
            targets,
            joins,
        })
    }

    /// An emission with fewer gotos after splitting, trying in turn: the
    /// joins in between (the classic node splitting), the joins and the
    /// targets, and (when there are few) each one alone, since copying one
    /// block can make another join unreachable. `None` if none is better.
    fn split(&self, nodes: &mut Arena<NodeId, Node>) -> Option<Emission> {
        // Each try is a set of blocks, listed in block order.
        let blocks = || self.cfg.blocks.keys();
        let joins: Vec<BlockId> = blocks().filter(|&b| self.joins[b]).collect();
        let both: Vec<BlockId> = blocks()
            .filter(|&b| self.joins[b] || self.targets[b])
            .collect();
        let singles = both.iter().filter(|_| both.len() > 1 && both.len() <= 16);
        let tries = [joins, both.clone()]
            .into_iter()
            .chain(singles.map(|&b| vec![b]));
        let mut tried: Vec<Vec<BlockId>> = Vec::new();
        for targets in tries {
            if tried.contains(&targets) || targets.is_empty() {
                continue;
            }
            let mut func = self.func.clone();
            let split = self.cfg.split(&targets, nodes, &mut func.vars);
            tried.push(targets);
            let Some(blocks) = split else {
                continue;
            };
            // A copy that splits a launch's body is no better.
            let Ok(next) = Emission::new(Cfg::from_blocks(blocks), nodes, func) else {
                continue;
            };
            if next.gotos < self.gotos {
                return Some(next);
            }
        }
        None
    }
}

/// Every use of a variable must be dominated by its definition.
fn check_definitions(cfg: &Cfg, nodes: &Arena<NodeId, Node>, func: &Function) -> Result<(), Error> {
    // Where each variable is defined: its block and position there. (The
    // lets a branch's condition absorbed are read there only.)
    let mut def: SecondaryMap<VarId, Option<(BlockId, usize)>> = SecondaryMap::new();
    for (b, block) in cfg.blocks.iter() {
        for (i, &n) in block.nodes.iter().enumerate() {
            if let Some(v) = nodes[n].def {
                def[v] = Some((b, i));
            }
        }
    }
    for (b, block) in cfg.blocks.iter() {
        for (i, n) in block.ops().enumerate() {
            let mut undefined = None;
            cfg::for_each_use(&nodes[n].op, |v| {
                let Some((db, di)) = def[v] else {
                    return; // a parameter
                };
                let ok = if db == b {
                    di < i
                } else {
                    cfg.dominates(db, b)
                };
                if !ok {
                    undefined = undefined.or(Some(v));
                }
            });
            if let Some(v) = undefined {
                // A return's location is the `extract` call: say nothing.
                let returned = matches!(nodes[n].op, Op::Return(_));
                return Err(Error::UndefinedValue {
                    defined: func.vars[v].loc,
                    used: (!returned).then_some(nodes[n].loc),
                });
            }
        }
    }
    Ok(())
}

/// Every loop needs an exit edge (a `break`, a `return` or its condition).
fn check_exits(cfg: &Cfg, nodes: &Arena<NodeId, Node>) -> Result<(), Error> {
    for h in cfg.blocks.keys() {
        if !cfg.is_header[h] {
            continue;
        }
        let body = &cfg.loop_body[h];
        let exits = cfg
            .blocks
            .keys()
            .filter(|&b| body[b])
            .any(|b| cfg.succs(b).any(|s| !body[s]));
        if !exits {
            // The loop's first operation says where it is.
            let first = cfg.blocks[h].ops().next();
            return Err(Error::LoopNeverExits {
                location: first.map(|n| nodes[n].loc),
            });
        }
    }
    Ok(())
}

/// Runs the goto-removal step `name` names on IR (`breaks`: forward gotos
/// out of a stretch become `break`s out of one-turn loops; `guards`: the
/// rest become guards on a `jump` variable) and verifies it; returns the
/// gotos removed, `None` if no step has that name. For file tests.
pub fn run_named(name: &str, f: &mut Function) -> Option<Result<u64, Error>> {
    let removed = match name {
        "breaks" => {
            let truth = f.expr(Expr::Const(Const::Bool(true)), Type::Scalar(Scalar::Bool));
            breaks::forward_breaks(f, truth)
        }
        "guards" => guards::forward_guards(f),
        _ => return None,
    };
    Some(
        crate::ir::verify::verify(f)
            .map(|()| removed)
            .map_err(|message| Error::Internal {
                message: format!("IR invalid after {name}: {message}\n{f}"),
            }),
    )
}

#[cfg(test)]
mod tests {
    use crate::ir::{Arena, Function, Scalar, SrcLoc, Stmt, StmtKind, Type, VarData, VarKind};
    use crate::trace::engine::Trace;
    use crate::trace::graph::{Node, NodeId, Op, OpExpr, Operand, Place, Succ};
    use crate::trace::tag::Tag;
    use crate::{Builder, Dyn, Error, Static};

    /// A trace by hand: `if (c) { int64_t v = 1; }` then `&v` after the
    /// join, where the path through the other side never declared `v`.
    fn address_after_join() -> Trace {
        let loc = SrcLoc {
            file: file!(),
            line: 1,
            col: 1,
        };
        let mut func = Function::new("f", Type::Void);
        let var = |kind| VarData {
            ty: Type::Scalar(Scalar::I64),
            kind,
            hint: None,
            name: None,
            addr_taken: false,
            loc: Some(loc),
        };
        let c = func.vars.push(VarData {
            ty: Type::Scalar(Scalar::Bool),
            ..var(VarKind::Param(0))
        });
        func.params.push(c);
        let v = func.vars.push(var(VarKind::Local));
        let p = func.vars.push(VarData {
            ty: Type::ptr(Type::Scalar(Scalar::I64)),
            ..var(VarKind::Temp)
        });
        let mut nodes = Arena::new();
        let mut node = |op, def, succ| {
            nodes.push(Node {
                owns_heap: false,
                op,
                def,
                annotations: Vec::new(),
                loc,
                base: Tag::default(),
                key: Tag::default(),
                occ: 0,
                succ,
            })
        };
        let (decl, addr, ret) = (NodeId(1), NodeId(2), NodeId(3));
        let int = Type::Scalar(Scalar::I64);
        let branch = Succ::Branch(Some(decl), Some(addr));
        node(Op::Branch(Operand::Var(c)), None, branch);
        let init = Some(Operand::Scalar(1, Scalar::I64));
        node(
            Op::Decl {
                ty: int,
                init,
                hint: None,
            },
            Some(v),
            Succ::Next(addr),
        );
        let take = OpExpr::AddrOf(Place::Var(v));
        let ptr = Type::ptr(int);
        node(
            Op::Let {
                ty: ptr,
                expr: take,
            },
            Some(p),
            Succ::Next(ret),
        );
        node(Op::Return(None), None, Succ::Open);
        Trace {
            func,
            nodes,
            entry: Some(NodeId(0)),
            stats: Default::default(),
            explanation: Default::default(),
        }
    }

    /// An address is a use: taken where the declaration does not dominate
    /// it, it names storage one path never declared (C would read an
    /// uninitialised or out-of-scope variable through it). Counting only
    /// reads and assignments let this through to lowering.
    #[test]
    fn an_address_taken_past_a_join_is_an_undefined_value() {
        let got = super::structure(address_after_join(), &Default::default());
        assert!(
            matches!(got, Err(Error::UndefinedValue { .. })),
            "{:?}",
            got.map(|(f, _)| f.to_string())
        );
    }

    fn depth(b: &[Stmt]) -> usize {
        b.iter()
            .map(|s| match &s.kind {
                StmtKind::If { then_, else_, .. } => 1 + depth(then_).max(depth(else_)),
                StmtKind::While { body, .. } | StmtKind::For { body, .. } => 1 + depth(body),
                _ => 0,
            })
            .max()
            .unwrap_or(0)
    }

    /// A dyn loop over a `Static` state of 200 values: each copy of the
    /// body sits behind the loop's condition, whose other side leaves the
    /// loop. The structurer emits each test as a guard (`if (c) {} else
    /// break;`) followed by the copy, so the nesting is the loop and one
    /// `if`, not one `if` per copy (which made the passes after it walk
    /// every level again: quadratic, and deep enough to overflow a stack).
    #[test]
    fn guarded_turns_do_not_nest() {
        let n = 200u32;
        let loc = crate::stage::dyn_val::caller();
        // Trusted: this crate's own tests cannot use `#[augur::staged]`,
        // and what is tested is the structure of the trace.
        let (trace, config) = Builder::new()
            .trust_unannotated(true)
            .trace(
                "state_machine",
                move |x: Dyn<i64>| {
                    let acc = Dyn::new(0i64);
                    let i = Dyn::new(0i64);
                    let mut state = Static::new(0u32);
                    while i.lt(x).is_true() {
                        acc.set(acc + state.get() as i64);
                        state.set((state.get() + 1) % n);
                        i.set(i + 1);
                    }
                    acc
                },
                loc,
            )
            .unwrap();
        let (func, gotos) = super::structure(trace, &config).unwrap();
        assert_eq!(gotos, 0);
        assert_eq!(depth(&func.body), 2, "{func}");
    }
}
