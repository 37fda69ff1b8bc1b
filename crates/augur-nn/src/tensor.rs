//! Tensors: `f32` data with a first-stage shape.

use crate::error::ShapeError;
use crate::net::{Buffer, Net};
use augur::libc::{FREE, MALLOC, MEMCPY};
use augur::prophecy::Flat;
use augur::{dsl, Dyn};
use std::panic::Location;

/// A tensor of `f32` with a first-stage shape (row-major), over a buffer
/// of the caller's or one the generated code allocated.
///
/// Operations that work in place (ReLU, bias add) take the tensor by value
/// and hand it back: the value before them is gone, in Rust as in C.
///
/// `Hash`, by what decides the code that uses it (its shape, whether the
/// generated code owns its buffer): `#[augur::staged]` code tracks it by
/// value (`let t = if c.is_true() { net.relu(x, 2.0) } else {
/// net.relu(x, 4.0) }` shares the code after both). Its id and buffer
/// handle are bookkeeping, new with each tensor a loop's turn makes; its
/// net's id is new with each run.
pub struct Tensor {
    /// The `Net` that made it: tensors of two nets do not mix.
    pub(crate) net: dsl::Id,
    pub(crate) id: u32,
    pub(crate) shape: Vec<usize>,
    pub(crate) data: Dyn<*mut f32>,
    pub(crate) owned: bool,
}

impl std::hash::Hash for Tensor {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        (&self.shape, self.owned).hash(h)
    }
}

impl Tensor {
    /// Its shape.
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// Elements.
    pub fn len(&self) -> usize {
        self.shape.iter().product()
    }

    /// True when it has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Net {
    /// A tensor over the caller's buffer (a parameter of the staged function).
    /// The same buffer registered again with the same shape (in each turn of
    /// a dyn loop, say) is the same tensor, so fusion decisions about it hold
    /// in every turn.
    ///
    /// While the network uses it, change its contents only through the
    /// `Net` ([`data`](Net::data), [`copy_to`](Net::copy_to)): a bias, say,
    /// may be read where its producer runs, before a bias add that comes
    /// later, and only the `Net` knows to unfuse around such a write.
    #[track_caller]
    #[augur::staged]
    pub fn tensor_on(&self, shape: impl AsRef<[usize]>, data: Dyn<*mut f32>) -> Tensor {
        let shape = checked(shape.as_ref(), Location::caller());
        self.register(shape, data, false)
    }

    /// A tensor the generated code allocates (`malloc`); give it back with
    /// [`free`](Net::free).
    #[track_caller]
    #[augur::staged]
    pub fn alloc(&self, shape: impl AsRef<[usize]>) -> Tensor {
        let shape = checked(shape.as_ref(), Location::caller());
        let bytes = (shape.iter().product::<usize>() * 4) as u64;
        let data = Dyn::named("t", MALLOC.call(bytes).cast_ptr::<*mut f32>());
        self.register(shape, data, true)
    }

    #[augur::staged]
    fn register(&self, shape: Vec<usize>, data: Dyn<*mut f32>, owned: bool) -> Tensor {
        // The caller's buffer seen again (`tensor_on` in each turn of a
        // dyn loop) is the same tensor: the same id keeps a prediction
        // about it ("a bias add of tensor 2 follows") the same in every
        // turn, so it can hold.
        let buffers = &self.ctx.buffers;
        let seen = buffers
            .borrow()
            .iter()
            .find(|b| !owned && b.data.same_handle(data) && b.shape == shape)
            .map(|b| b.id);
        let id = seen.unwrap_or_else(|| {
            let id = self.fresh_id();
            let shape = shape.clone();
            buffers.borrow_mut().push(Buffer { id, shape, data });
            id
        });
        Tensor {
            net: self.ctx.id(),
            id,
            shape,
            data,
            owned,
        }
    }

    /// Frees a tensor the generated code allocated (a caller's buffer is
    /// left alone).
    #[track_caller]
    #[augur::staged]
    pub fn free(&self, t: Tensor) {
        self.check_own(&t);
        if t.owned {
            FREE.call(t.data.cast_ptr::<*mut u8>());
        }
    }

    /// Copies `t` into the caller's buffer `dst` (at least `t.len()` floats).
    #[track_caller]
    #[augur::staged]
    pub fn copy_to(&self, t: &Tensor, dst: Dyn<*mut f32>) {
        self.check_own(t);
        self.follow(Flat::Conflict);
        let bytes = (t.len() * 4) as u64;
        MEMCPY.call(
            dst.cast_ptr::<*mut u8>(),
            t.data.cast_ptr::<*const u8>(),
            bytes,
        );
    }

    /// The tensor's buffer, for code outside the DSL (reading results,
    /// calling other functions). A producer just before cannot have fused
    /// anything into what is read here.
    #[track_caller]
    #[augur::staged]
    pub fn data(&self, t: &Tensor) -> Dyn<*mut f32> {
        self.check_own(t);
        self.follow(Flat::Conflict);
        t.data
    }
}

impl Net {
    /// Panics when `t` was made by another `Net`: its fusion state is that
    /// other net's.
    #[track_caller]
    pub(crate) fn check_own(&self, t: &Tensor) {
        if t.net != self.ctx.id() {
            panic!(
                "nn: a tensor of another Net used here; make a network's tensors with \
                 the Net that runs it, at {}",
                Location::caller()
            );
        }
    }
}

#[augur::staged]
fn checked(shape: &[usize], loc: &'static Location<'static>) -> Vec<usize> {
    let total = shape.iter().try_fold(1usize, |a, &d| a.checked_mul(d));
    match total {
        Some(n) if n <= i32::MAX as usize => shape.to_vec(),
        _ => dsl::fail(
            ShapeError::TooLarge {
                shape: shape.to_vec(),
            },
            loc,
        ),
    }
}
