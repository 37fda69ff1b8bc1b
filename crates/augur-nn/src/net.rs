//! The DSL's first-stage state and the fusion protocol.
//!
//! A *producer* (convolution, fully connected layer) must decide while it
//! generates its loop whether to apply the operations after it as it writes
//! (an *epilogue*): only those operations know. So each producer makes a
//! `Prophecy<Flat<Epilogue>>`, "every operation that immediately follows me
//! is this one", reads it, and generates accordingly; every operation, on
//! entry, requires its own description of the prophecy of the producer
//! that came just before it (the history: "the last operation was a
//! producer", kept by the `Net`). A ReLU or bias add that sees its
//! description predicted was fused and generates nothing; any other
//! follower requires `Conflict`, which unfuses. A fused bias add is itself
//! followed: a producer predicted to absorb a bias add also predicts the
//! operation after it (so conv + bias + ReLU is one loop).

use augur::dsl::{self, Seen};
use augur::prophecy::{Flat, Prophecy};
use std::cell::{Cell, RefCell};
use std::panic::Location;

/// An operation that can run inside a producer's loop.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Epilogue {
    /// `v >= t ? v : 0`, with `t`'s bits (so that equality is exact).
    Relu(u32),
    /// `v + b[i]` for the tensor with this id.
    Bias(u32),
}

/// Shows thresholds as numbers (`Relu(2.0)`), as `explain` prints them.
impl std::fmt::Debug for Epilogue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Epilogue::Relu(bits) => write!(f, "Relu({:?})", f32::from_bits(*bits)),
            Epilogue::Bias(id) => write!(f, "Bias(tensor {id})"),
        }
    }
}

/// What the prophecy of "the operation after this producer" holds.
pub type Next = Flat<Epilogue>;

/// The producer that ran last, and what it was predicted to absorb.
#[derive(Clone, Copy)]
pub(crate) struct Pending {
    /// The producer's output tensor: only an operation on it can be fused.
    pub output: u32,
    /// The prophecy of the operation that follows.
    pub next: Prophecy<Next>,
    /// When `next` predicts a bias add: the prophecy of the operation
    /// after that bias add.
    pub after_bias: Option<Prophecy<Next>>,
    /// The bias tensor the producer added (its id), when it fused one.
    pub fused_bias: Option<u32>,
    /// The producer's call site (or the fused bias add's).
    pub site: &'static Location<'static>,
}

/// What tags see of the producer that ran last: its call site.
type Site = Option<&'static Location<'static>>;

/// A tensor the `Net` made: what a producer needs to add it as a bias.
pub(crate) struct Buffer {
    pub id: u32,
    pub shape: Vec<usize>,
    pub data: augur::Dyn<*mut f32>,
}

pub(crate) struct Ctx {
    pub fusion: bool,
    /// The history: the producer that ran last (`None` after any other
    /// operation). Tags see its call site: the state crosses dyn loops'
    /// back edges (a network in a batch loop) and decides what a turn
    /// generates; a plain value there would hide the first turn's
    /// difference from the engine. Its ids and prophecies stay out of
    /// tags (ids grow from turn to turn).
    pub last: Seen<Option<Pending>, Site>,
    pub next_id: Cell<u32>,
    /// Every tensor's id, shape and buffer, so that a producer can add a
    /// bias tensor it was predicted to absorb.
    pub buffers: RefCell<Vec<Buffer>>,
}

/// The network DSL: make one at the start of a staged function; its
/// operations generate the network's code, fusing where the prophecies
/// allow.
#[derive(Clone)]
pub struct Net {
    pub(crate) ctx: dsl::State<Ctx>,
}

// What decides the code a network generates is in `Ctx`'s `Seen` fields
// (`last`): a `let mut net` may change under `#[augur::staged]`.
impl dsl::Visible for Net {}

impl Net {
    /// A network DSL instance that fuses.
    #[track_caller]
    #[augur::staged]
    pub fn new() -> Net {
        Net::with_fusion(true)
    }

    /// A network DSL instance; `fusion: false` generates every operation
    /// as its own pass (the baseline the benchmark compares with).
    #[track_caller]
    #[augur::staged]
    pub fn with_fusion(fusion: bool) -> Net {
        Net {
            ctx: dsl::State::new(Ctx {
                fusion,
                last: Seen::keyed(None, |p| p.map(|p| p.site)),
                next_id: Cell::new(0),
                buffers: RefCell::new(Vec::new()),
            }),
        }
    }

    /// True when this instance fuses.
    pub fn fuses(&self) -> bool {
        self.ctx.fusion
    }

    #[augur::staged]
    pub(crate) fn fresh_id(&self) -> u32 {
        let id = self.ctx.next_id.get();
        self.ctx.next_id.set(id + 1);
        id
    }

    /// On entry to every operation: tells the producer just before (if any)
    /// what follows it, and forgets it (only the immediate follower
    /// counts). Returns its pending state, for fused followers.
    #[track_caller]
    #[augur::staged]
    pub(crate) fn follow(&self, me: Next) -> Option<Pending> {
        let p = self.ctx.last.replace(None)?;
        p.next.require(me);
        Some(p)
    }

    /// On entry to a pointwise operation on `t`: it may be fused only into
    /// the producer of `t` itself; following any other producer it is just
    /// another operation (`Conflict` for that producer). Returns the
    /// producer's pending state when it made `t`.
    #[track_caller]
    #[augur::staged]
    pub(crate) fn follow_on(&self, me: Next, t: &crate::Tensor) -> Option<Pending> {
        let made_t = self.ctx.last.get().is_some_and(|p| p.output == t.id);
        if made_t {
            self.follow(me)
        } else {
            self.follow(Flat::Conflict);
            None
        }
    }

    /// Records that a producer (or a fused bias add) ran last.
    #[augur::staged]
    pub(crate) fn produced(&self, p: Pending) {
        self.ctx.last.set(Some(p));
    }

    /// The epilogues a producer of `shape` applies: its prophecy, and the
    /// one after a predicted bias add (fused only when the bias tensor
    /// exists already and has the producer's shape). Returns the pending
    /// state and the epilogues with the bias buffers.
    #[track_caller]
    #[augur::staged]
    pub(crate) fn predict(&self, what: &str, out: &crate::Tensor) -> (Option<Pending>, Vec<Fused>) {
        let shape = &out.shape[..];
        if !self.ctx.fusion {
            return (None, Vec::new());
        }
        let next = Prophecy::named(format!("after {what}"), Flat::Unknown);
        let mut epilogues = Vec::new();
        let mut pending = Pending {
            output: out.id,
            next,
            after_bias: None,
            fused_bias: None,
            site: Location::caller(),
        };
        match next.get().exactly() {
            Some(&Epilogue::Relu(t)) => epilogues.push(Fused::Relu(f32::from_bits(t))),
            Some(&Epilogue::Bias(id)) => {
                let buffers = self.ctx.buffers.borrow();
                let bias = buffers.iter().find(|b| b.id == id && b.shape == shape);
                if let Some(data) = bias.map(|b| b.data) {
                    epilogues.push(Fused::Bias(data));
                    pending.fused_bias = Some(id);
                    let after = Prophecy::named(format!("after {what} + bias"), Flat::Unknown);
                    if let Some(&Epilogue::Relu(t)) = after.get().exactly() {
                        epilogues.push(Fused::Relu(f32::from_bits(t)));
                    }
                    pending.after_bias = Some(after);
                }
            }
            None => {}
        }
        (Some(pending), epilogues)
    }
}

/// An epilogue as a producer applies it.
#[derive(Clone, Copy)]
pub(crate) enum Fused {
    Relu(f32),
    Bias(augur::Dyn<*mut f32>),
}

/// Hashes what decides the generated code: the kind and the threshold's
/// bits (a `Dyn` hashes to nothing), so that `#[augur::staged]` tracks a
/// producer's epilogues.
impl std::hash::Hash for Fused {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        match self {
            Fused::Relu(t) => (0u8, t.to_bits()).hash(state),
            Fused::Bias(data) => (1u8, data).hash(state),
        }
    }
}

impl Default for Net {
    #[augur::staged]
    fn default() -> Self {
        Net::new()
    }
}
