//! Generating a distributed statement: for every rank, the messages it
//! posts, the pieces it computes, in one SPMD function.
//!
//! The plan (`plan.rs`) says which blocks each rank needs. Whether a
//! message is sent is decided the way the paper decides what a GPU kernel
//! reads: one prophecy per message, "rank `to` reads this block", made
//! before any rank's code. The sender's code sends the block only when the
//! prophecy holds; the receiver's computation requires it where it reads
//! the block. A first attempt predicts nothing, every read corrects its
//! prophecy, and the first stage runs again until every prediction holds:
//! the program sends exactly what some computation reads.
//!
//! Each rank's code posts its receives, packs and posts its sends, then
//! computes its pieces local ones first, waiting for each remote block
//! only where a piece reads it, so messages travel while local work runs.
//! Under a partial-sums plan it first computes and sends the parts other
//! owners add, then its own block, then adds the parts it receives in
//! rank order; a part is read when its owner adds it, one prophecy each
//! as for input blocks.

use super::copy;
use super::layout::Split;
use super::plan::{self, Block, Carries, Pairs, Piece, RankPlan, SlotIn, StatementPlan};
use super::runtime as rt;
use super::WorldInfo;
use crate::elem::Elem;
use crate::error::ShapeError;
use crate::index::Index;
use crate::plan::{Op, Plan};
use crate::statement::describe;
use crate::tensor::{Access, Tensor};
use crate::term::Term;
use augur::prophecy::Prophecy;
use augur::stage::libc;
use augur::{dsl, Dyn};

/// The code of `plan` (a checked statement with a distributed tensor) on
/// every rank of `world`.
#[augur::staged]
pub(crate) fn statement<E: Elem>(plan: &Plan<E>, world: WorldInfo) {
    let loc = plan.loc;
    let what = describe(plan.lhs, plan.op);
    let fail = |problem: String| -> ! {
        dsl::fail(
            ShapeError::Distribution {
                what: what.clone(),
                problem,
            },
            loc,
        )
    };
    if plan.lhs_indices.len() != plan.lhs.indices.len() {
        fail(
            "the left side of a distributed statement repeats an index (a diagonal); \
              write it over a tensor every rank holds"
                .to_string(),
        );
    }
    if let Some((x, _)) = plan
        .ranges
        .iter()
        .find(|(x, n)| plan.reduced.contains(x) && *n == 0)
    {
        fail(format!("index `{}` reduces over an empty range", x.name));
    }
    let grid = world.grid;
    let split_of = |t: &Tensor<E>| -> Split {
        t.state.split.clone().unwrap_or_else(|| {
            Split::new(super::Layout::Replicated, t.shape(), grid).expect("any shape")
        })
    };
    let accesses: Vec<&Access<E>> = plan.rhs.accesses();
    let lhs_split = split_of(&plan.lhs.tensor);
    let splits: Vec<Split> = accesses.iter().map(|a| split_of(&a.tensor)).collect();
    for (a, s) in accesses.iter().zip(&splits) {
        if s.grid != grid {
            fail(format!("`{}` is laid out on another grid", a.tensor.name()));
        }
    }
    let slots: Vec<SlotIn> = accesses
        .iter()
        .zip(&splits)
        .map(|(a, s)| SlotIn {
            indices: &a.indices,
            split: s,
            is_lhs: a.tensor.same(&plan.lhs.tensor),
        })
        .collect();
    let reads_lhs = slots.iter().any(|s| s.is_lhs);
    let sp = plan::plan(
        grid.ranks(),
        (&plan.lhs.indices, &lhs_split),
        &slots,
        &plan.reduced,
        &plan.ranges,
        !reads_lhs && matches!(plan.op, Op::Assign | Op::Add),
        reads_lhs,
    );
    // Each piece would read the left side again.
    debug_assert!(!reads_lhs || sp.ranks.iter().all(|r| r.pieces.len() <= 1));
    let size = std::mem::size_of::<E>();
    record(plan, &sp, size);
    if let Some(m) = sp
        .messages
        .iter()
        .find(|m| m.elements * size > i32::MAX as usize)
    {
        fail(format!(
            "a message of {} bytes from rank {} to rank {}: MPI counts in int (2^31 - 1); \
             use more ranks or a block-cyclic layout",
            m.elements * size,
            m.from,
            m.to
        ));
    }
    // One prophecy per message: "its receiver reads it".
    let reads: Vec<Prophecy<bool>> = sp
        .messages
        .iter()
        .map(|m| {
            let what = match m.carries {
                Carries::Input { buffer, block } => format!(
                    "rank {} reads `{}` block {block} from rank {}",
                    m.to,
                    accesses[sp.ranks[m.to].buffers[buffer].slot].tensor.name(),
                    m.from
                ),
                Carries::Partial { .. } => format!(
                    "rank {} adds rank {}'s partial sums of `{}`",
                    m.to,
                    m.from,
                    plan.lhs.tensor.name()
                ),
            };
            Prophecy::named(what, false)
        })
        .collect();
    let code = RankCode {
        plan,
        sp: &sp,
        accesses: &accesses,
        splits: &splits,
        reads: &reads,
    };
    for r in 0..grid.ranks() {
        if !code.has_work(r) {
            continue;
        }
        if world.rank.eq(r as i32).is_true() {
            code.emit(r);
        }
    }
}

/// Records the plan for [`World::plans`](super::World::plans).
fn record<E: Elem>(plan: &Plan<E>, sp: &StatementPlan, size: usize) {
    let Some(ctx) = plan.lhs.tensor.state.ctx.upgrade() else {
        return;
    };
    let mut received = vec![0u64; sp.ranks.len()];
    for m in &sp.messages {
        received[m.to] += (m.elements * size) as u64;
    }
    ctx.planned.borrow_mut().push(super::Planned {
        statement: describe(plan.lhs, plan.op),
        location: plan.loc.to_string(),
        rule: sp.rule,
        sent_bytes: sp.sent().iter().map(|&e| (e * size) as u64).collect(),
        received_bytes: received,
    });
}

/// What generating one rank's part reads.
struct RankCode<'a, 'p, E: Elem> {
    plan: &'a Plan<'p, E>,
    sp: &'a StatementPlan,
    accesses: &'a [&'a Access<E>],
    splits: &'a [Split],
    reads: &'a [Prophecy<bool>],
}

/// A posted receive: its request, and the buffer it lands in when that is
/// not the piece's buffer itself.
#[derive(Clone, Copy)]
struct Posted<E: Elem> {
    request: Dyn<i32>,
    staging: Option<Dyn<*mut E>>,
}

impl<E: Elem> RankCode<'_, '_, E> {
    fn has_work(&self, r: usize) -> bool {
        self.sp.ranks[r].computes() || self.sp.messages.iter().any(|m| m.from == r)
    }

    #[augur::staged]
    fn emit(&self, r: usize) {
        let rp: &RankPlan = &self.sp.ranks[r];
        let size = std::mem::size_of::<E>();
        let mut allocated: Vec<Dyn<*mut E>> = Vec::new();
        rt::BEGIN.call();
        // Buffers of the pieces this rank computes.
        let idle = !rp.computes();
        let buffers: Vec<Dyn<*mut E>> = rp
            .buffers
            .iter()
            .map(|b| {
                let host = self.accesses[b.slot].tensor.state.host;
                if idle || b.direct {
                    host
                } else {
                    let name = format!("{}_in", self.accesses[b.slot].tensor.name());
                    alloc::<E>(b.shape.iter().product(), &name)
                }
            })
            .collect();
        allocated.extend(
            (0..buffers.len())
                .filter(|&b| !(idle || rp.buffers[b].direct))
                .map(|b| buffers[b]),
        );
        // Receives first, so every send that arrives finds its buffer.
        let mut posted: Vec<Option<Posted<E>>> = vec![None; self.sp.messages.len()];
        for (id, m) in self.sp.messages.iter().enumerate() {
            if m.to != r || !self.reads[id].get() {
                continue;
            }
            let (target, staging) = match m.carries {
                Carries::Input { buffer, block } => {
                    let buf = &rp.buffers[buffer];
                    if covers(&buf.blocks[block].dims, &buf.shape, |p| p.0) {
                        (buffers[buffer], None)
                    } else {
                        let s = alloc::<E>(m.elements, "recv");
                        allocated.push(s);
                        (s, Some(s))
                    }
                }
                Carries::Partial { .. } => {
                    let s = alloc::<E>(m.elements, "part_in");
                    allocated.push(s);
                    (s, Some(s))
                }
            };
            let request = rt::IRECV.call(
                target.cast_ptr::<*mut u8>(),
                (m.elements * size) as i64,
                m.from as i32,
                tag(id),
            );
            let request = Dyn::named("request", request);
            posted[id] = Some(Posted { request, staging });
        }
        // Sends: pack each block another rank reads.
        let mut sends: Vec<Dyn<i32>> = Vec::new();
        for (id, m) in self.sp.messages.iter().enumerate() {
            let Carries::Input { buffer, block } = m.carries else {
                continue; // parts are sent once computed
            };
            if m.from != r || !self.reads[id].get() {
                continue;
            }
            let buf = &self.sp.ranks[m.to].buffers[buffer];
            let block = &buf.blocks[block];
            let access = self.accesses[buf.slot];
            let local_shape = self.splits[buf.slot].local_shape(r);
            let host = access.tensor.state.host;
            let data = if covers(&block.dims, &local_shape, |p| p.1) {
                host
            } else {
                let packed = alloc::<E>(m.elements, "send");
                allocated.push(packed);
                let pairs: Vec<Pairs> = block
                    .dims
                    .iter()
                    .map(|d| d.iter().enumerate().map(|(i, &(_, l))| (i, l)).collect())
                    .collect();
                let lens: Vec<usize> = block.dims.iter().map(Vec::len).collect();
                copy::emit(&copy::describe(&pairs, &lens, &local_shape), packed, host);
                packed
            };
            let request = rt::ISEND.call(
                data.cast_ptr::<*mut u8>(),
                (m.elements * size) as i64,
                m.to as i32,
                tag(id),
            );
            sends.push(Dyn::named("request", request));
        }
        let mut filled = vec![false; rp.buffers.len()];
        let mut fill_for = |piece: &Piece| {
            for &b in &piece.buffers {
                if !filled[b] {
                    filled[b] = true;
                    self.fill(r, b, buffers[b], &posted);
                }
            }
        };
        // Parts first, so their sums travel while this rank computes its own.
        for part in &rp.parts {
            if !self.reads[part.message].get() {
                continue;
            }
            let elements = part.elements();
            let out = alloc::<E>(elements, "part");
            allocated.push(out);
            for (k, piece) in part.pieces.iter().enumerate() {
                fill_for(piece);
                self.compute(r, (&part.free, piece, k), Op::Assign, out, &buffers);
            }
            let request = rt::ISEND.call(
                out.cast_ptr::<*mut u8>(),
                (elements * size) as i64,
                part.owner as i32,
                tag(part.message),
            );
            sends.push(Dyn::named("request", request));
        }
        if !rp.idle() {
            let host = self.plan.lhs.tensor.state.host;
            for (k, piece) in rp.pieces.iter().enumerate() {
                fill_for(piece);
                self.compute(r, (&rp.free, piece, k), self.plan.op, host, &buffers);
            }
        }
        for &id in &rp.adds {
            self.reads[id].require(true);
            // Posted unless this attempt predicted no read (as in `fill`).
            if let Some(p) = posted[id] {
                rt::WAIT.call(p.request);
                self.add(r, p.staging.expect("a part lands in its own buffer"));
            }
        }
        for s in sends {
            rt::WAIT.call(s);
        }
        for p in allocated {
            libc::FREE.call(p.cast_ptr::<*mut u8>());
        }
    }

    /// Fills buffer `b` of rank `r`: local blocks copied, remote ones
    /// waited for (the read that makes their prophecy true).
    #[augur::staged]
    fn fill(&self, r: usize, b: usize, target: Dyn<*mut E>, posted: &[Option<Posted<E>>]) {
        let buf = &self.sp.ranks[r].buffers[b];
        if buf.direct {
            return;
        }
        let host = self.accesses[buf.slot].tensor.state.host;
        let local_shape = self.splits[buf.slot].local_shape(r);
        for block in &buf.blocks {
            match block.message {
                None => {
                    if block.elements() > 0 {
                        copy::emit(
                            &copy::describe(&block.dims, &buf.shape, &local_shape),
                            target,
                            host,
                        );
                    }
                }
                Some(id) => {
                    self.reads[id].require(true);
                    // Posted unless this attempt predicted no read; the
                    // requirement above starts a new attempt then.
                    if let Some(p) = posted[id] {
                        rt::WAIT.call(p.request);
                        if let Some(staging) = p.staging {
                            unpack(block, &buf.shape, target, staging);
                        }
                    }
                }
            }
        }
    }

    /// Piece `k` of the block of left-side values `free` on rank `r`: the
    /// statement over local views, the block stored at `target` (the
    /// left side's local array, or a part's buffer) and `op` the block's
    /// (its first piece does `op`, later ones add their part in).
    #[augur::staged]
    fn compute(
        &self,
        r: usize,
        (free, piece, k): (&[(Index, Vec<usize>)], &Piece, usize),
        op: Op,
        target: Dyn<*mut E>,
        buffers: &[Dyn<*mut E>],
    ) {
        let rp = &self.sp.ranks[r];
        let plan = self.plan;
        let lhs_tensor = &plan.lhs.tensor;
        let lhs_view = lhs_tensor.view(lhs_tensor.name(), plan::shape(free), target);
        let mut slot = 0;
        let offset = |x: Index| -> Option<usize> {
            let values = free
                .iter()
                .chain(piece.reduced.iter())
                .find(|(j, _)| *j == x)
                .map(|(_, v)| v)?;
            let first = *values.first()?;
            values
                .iter()
                .enumerate()
                .all(|(i, &g)| g == first + i)
                .then_some(first)
        };
        let rhs = rebuild(
            &plan.rhs,
            &mut |a: &Access<E>| {
                let b = &rp.buffers[piece.buffers[slot]];
                slot += 1;
                let t = if a.tensor.same(lhs_tensor) {
                    lhs_view.clone()
                } else {
                    a.tensor.view(
                        a.tensor.name(),
                        b.shape.clone(),
                        buffers[piece.buffers[slot - 1]],
                    )
                };
                Access {
                    tensor: t,
                    indices: a.indices.clone(),
                    loc: a.loc,
                }
            },
            &mut |x| match offset(x) {
                Some(0) => Term::Index(x),
                Some(o) => Term::Sum(
                    Box::new(Term::Index(x)),
                    Box::new(Term::Value(E::from_index(Dyn::lit(o as i32)))),
                ),
                None => dsl::fail(
                    ShapeError::Distribution {
                        what: describe(plan.lhs, plan.op),
                        problem: format!(
                            "the value of index `{}` is used, and rank {r} holds no contiguous \
                         range of it (a block-cyclic layout): use a block layout",
                            x.name
                        ),
                    },
                    plan.loc,
                ),
            },
        );
        // The first piece does what the statement does; later ones add
        // (or multiply) their part of the reduction in.
        let op = match (op, k) {
            (Op::Assign, 0) => Op::Assign,
            (Op::Mul, _) => Op::Mul,
            _ => Op::Add,
        };
        let lhs = Access {
            tensor: lhs_view,
            indices: plan.lhs.indices.clone(),
            loc: plan.lhs.loc,
        };
        crate::statement::local(&lhs, op, rhs, plan.loc);
    }

    /// Adds a part received into rank `r`'s left side: the part is the
    /// whole local array, in its order.
    #[augur::staged]
    fn add(&self, r: usize, part: Dyn<*mut E>) {
        let plan = self.plan;
        let lhs = &plan.lhs;
        let shape = plan::shape(&self.sp.ranks[r].free);
        let local = |name: &str, at: Dyn<*mut E>| Access {
            tensor: lhs.tensor.view(name, shape.clone(), at),
            indices: lhs.indices.clone(),
            loc: lhs.loc,
        };
        let dst = local(lhs.tensor.name(), lhs.tensor.state.host);
        let src = local("part", part);
        crate::statement::local(&dst, Op::Add, Term::Access(src), plan.loc);
    }
}

/// A buffer of `elements` from `malloc`, named `name` in the C.
#[augur::staged]
fn alloc<E: Elem>(elements: usize, name: &str) -> Dyn<*mut E> {
    let bytes = (elements.max(1) * std::mem::size_of::<E>()) as u64;
    Dyn::named(name, libc::MALLOC.call(bytes).cast_ptr::<*mut E>())
}

/// Copies a received block from its staging buffer into its place.
#[augur::staged]
fn unpack<E: Elem>(block: &Block, shape: &[usize], target: Dyn<*mut E>, staging: Dyn<*mut E>) {
    let pairs: Vec<Pairs> = block
        .dims
        .iter()
        .map(|d| d.iter().enumerate().map(|(i, &(p, _))| (p, i)).collect())
        .collect();
    let lens: Vec<usize> = block.dims.iter().map(Vec::len).collect();
    copy::emit(&copy::describe(&pairs, shape, &lens), target, staging);
}

/// True when the pairs' `pick` side is `0..shape[d]` in order on every
/// dimension: the block is the whole array there.
fn covers(dims: &[Pairs], shape: &[usize], pick: impl Fn(&(usize, usize)) -> usize) -> bool {
    dims.iter()
        .zip(shape)
        .all(|(d, &n)| d.len() == n && d.iter().enumerate().all(|(i, p)| pick(p) == i))
}

/// The MPI tag of message `id` (tags below 32,768 are always valid).
fn tag(id: usize) -> i32 {
    (id % 32_768) as i32
}

/// `term` with every access replaced by `access(a)` and every index value
/// by `index(x)`, visiting accesses in `Term::accesses` order.
fn rebuild<E: Elem>(
    term: &Term<E>,
    access: &mut impl FnMut(&Access<E>) -> Access<E>,
    index: &mut impl FnMut(crate::index::Index) -> Term<E>,
) -> Term<E> {
    match term {
        Term::Access(a) => Term::Access(access(a)),
        Term::Index(x) => index(*x),
        Term::Const(c) => Term::Const(*c),
        Term::Value(v) => Term::Value(*v),
        Term::Sum(a, b) => {
            let a = Box::new(rebuild(a, access, index));
            Term::Sum(a, Box::new(rebuild(b, access, index)))
        }
        Term::Diff(a, b) => {
            let a = Box::new(rebuild(a, access, index));
            Term::Diff(a, Box::new(rebuild(b, access, index)))
        }
        Term::Product(a, b) => {
            let a = Box::new(rebuild(a, access, index));
            Term::Product(a, Box::new(rebuild(b, access, index)))
        }
        Term::Neg(a) => Term::Neg(Box::new(rebuild(a, access, index))),
    }
}
