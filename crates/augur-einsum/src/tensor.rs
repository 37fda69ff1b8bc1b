//! Tensors: first-stage shapes over second-stage buffers, and what each
//! tensor does around GPU kernels (copies, prophecies, history).

use crate::context::{Config, Ctx, Einsum, GpuTensor, Movement};
use crate::elem::Elem;
use crate::error::ShapeError;
use crate::index::Index;
use crate::runtime;
use augur::dsl::{self, Seen, WeakState};
use augur::prophecy::{History, Prophecy};
use augur::Dyn;
use std::cell::Cell;
use std::panic::Location;
use std::rc::Rc;

/// A tensor of `E` with a first-stage shape (row-major).
///
/// Cheap to clone (a shared handle). Index it with [`Tensor::at`]; write it
/// with [`Access::set`], `+=`, `*=`.
#[derive(Clone)]
pub struct Tensor<E: Elem> {
    pub(crate) state: Rc<State<E>>,
}

// What decides the code a tensor's statements generate is in `State`'s
// `Seen` fields (`gpu_full`, `resident`) and the instance's; the rest is
// fixed at creation or prophecy handles.
impl<E: Elem> dsl::Visible for Tensor<E> {}

/// `A[i][k]`: a tensor with one index per dimension. On the left of a
/// statement it is written ([`Access::set`], `+=`, `*=`); on the right it is
/// read.
///
/// ```
/// use augur::{Builder, Dyn};
/// use augur_einsum::{compile_cpu, Config, Einsum};
///
/// #[augur::staged]
/// fn row_sums() {
///     let ex = Builder::new()
///         .extract("rows", |m: Dyn<*mut i32>, r: Dyn<*mut i32>| {
///             let ein = Einsum::new(Config::cpu());
///             let (i, j) = (ein.index("i"), ein.index("j"));
///             let m = ein.tensor_on::<i32>("m", [2, 3], m);
///             let r = ein.tensor_on::<i32>("r", [2], r);
///             r.at([i]).set(1);          // r[i] = 1
///             r.at([i]).add_to(m.at([i, j])); // r[i] += sum over j of m[i][j]
///             let mut ri = r.at([i]);             // operators need a place:
///             ri *= 2 + i;                        // r[i] *= 2 + i
///             ein.finish();
///         })
///         .unwrap();
///     let p = compile_cpu(&ex, false).unwrap();
///     let (mut m, mut r) = ([1, 2, 3, 4, 5, 6], [0, 0]);
///     // SAFETY: the buffers hold 6 and 2 ints, as the shapes say.
///     unsafe { (p.get())(m.as_mut_ptr(), r.as_mut_ptr()) };
///     assert_eq!(r, [(1 + 6) * 2, (1 + 15) * 3]);
/// }
/// # row_sums();
/// ```
#[derive(Clone)]
pub struct Access<E: Elem> {
    pub(crate) tensor: Tensor<E>,
    pub(crate) indices: Vec<Index>,
    pub(crate) loc: &'static Location<'static>,
}

// `+=` and `*=` on a place generate a statement; the place stays the same.
impl<E: Elem> dsl::Visible for Access<E> {}

/// One tensor's first-stage state.
pub(crate) struct State<E: Elem> {
    /// The DSL instance (weak: the instance's registry holds the tensor).
    pub ctx: WeakState<Ctx>,
    pub config: Config,
    pub name: String,
    pub shape: Vec<usize>,
    /// Host buffer (unified memory under `Movement::Unified` when the DSL
    /// allocated it).
    pub host: Dyn<*mut E>,
    /// True when the DSL allocated `host` (and frees it).
    pub owned: bool,
    /// Device buffer, when this tensor has one.
    pub device: Cell<Option<Dyn<*mut E>>>,
    /// "Some kernel will use me": decides the device allocation.
    pub needs_gpu: Option<Prophecy<bool>>,
    /// "The current kernel reads me": made by each `run_on_gpu`.
    pub gpu_read: Cell<Option<Prophecy<bool>>>,
    /// "The current kernel wrote me": made by each `run_on_gpu`.
    pub gpu_written: Cell<Option<History<bool>>>,
    /// "The current kernel may write me": decides, with `gpu_partial`, a
    /// copy in of a tensor the kernel writes without reading.
    pub gpu_may_write: Cell<Option<Prophecy<bool>>>,
    /// "Some path through the current kernel leaves elements of me
    /// unwritten": then what is copied out must have been copied in.
    pub gpu_partial: Cell<Option<Prophecy<bool>>>,
    /// "This path through the kernel has overwritten every element of me"
    /// (under `Movement::Prophecy` on the GPU; false outside kernels):
    /// seen by tags, so that paths that differ in it do not share code and
    /// each reaches the kernel's end with its own value.
    pub gpu_full: Option<Seen<bool>>,
    /// Where the current copy is, under [`Config::resident`].
    pub resident: Option<Resident>,
    /// How a distributed tensor is spread over the ranks (`host` is then
    /// this rank's local array); `None` for a tensor every rank holds whole.
    pub split: Option<crate::dist::layout::Split>,
}

/// Which copies of a resident tensor hold its current contents (at least
/// one does). Seen by tags: code after a point is generated for the copies
/// that are current there, so each transfer happens where it must and
/// nowhere else.
pub(crate) struct Resident {
    pub host_current: Seen<bool>,
    pub device_current: Seen<bool>,
}

impl Einsum {
    /// A tensor of the given shape in a buffer the generated code allocates
    /// (and [`finish`](Einsum::finish) frees).
    #[track_caller]
    #[augur::staged]
    pub fn tensor<E: Elem>(&self, name: &str, shape: impl AsRef<[usize]>) -> Tensor<E> {
        self.check_open(name, Location::caller());
        let shape = checked_shape(name, shape.as_ref(), Location::caller());
        let bytes = bytes_of::<E>(&shape);
        let alloc = if self.config().movement == Movement::Unified {
            runtime::UNIFIED_ALLOC
        } else {
            runtime::HOST_ALLOC
        };
        let host = Dyn::named(name, alloc.call(bytes).cast_ptr::<*mut E>());
        self.make(name, shape, host, true)
    }

    /// A tensor over a user-supplied buffer (a parameter of the staged
    /// function) of at least `shape`'s product elements. Under
    /// [`Movement::Unified`] the user makes the buffer GPU-accessible.
    #[track_caller]
    #[augur::staged]
    pub fn tensor_on<E: Elem>(
        &self,
        name: &str,
        shape: impl AsRef<[usize]>,
        buffer: Dyn<*mut E>,
    ) -> Tensor<E> {
        self.check_open(name, Location::caller());
        let shape = checked_shape(name, shape.as_ref(), Location::caller());
        // The buffer's variable takes the tensor's name in the C.
        self.make(name, shape, buffer.name(name), false)
    }

    #[augur::staged]
    fn check_open(&self, name: &str, loc: &Location) {
        if self.ctx.finished.get() {
            panic!("einsum: tensor `{name}` made after Einsum::finish, at {loc}");
        }
        if self.ctx.in_run_on_gpu.get() {
            panic!(
                "einsum: tensor `{name}` made inside run_on_gpu: a kernel cannot allocate; \
                 make it before, at {loc}"
            );
        }
        let n = self.ctx.tensor_count.get();
        if n >= self.ctx.config.max_tensors {
            panic!(
                "einsum: more than {} tensors (Config::max_tensors): is tensor `{name}` made \
                 inside a dyn loop? Each turn would need its own buffer; make it before \
                 the loop, at {loc}",
                self.ctx.config.max_tensors
            );
        }
        self.ctx.tensor_count.set(n + 1);
    }

    #[augur::staged]
    fn make<E: Elem>(
        &self,
        name: &str,
        shape: Vec<usize>,
        host: Dyn<*mut E>,
        owned: bool,
    ) -> Tensor<E> {
        self.make_split(name, shape, host, owned, None)
    }

    /// A distributed tensor: `shape` is the global shape, `host` this
    /// rank's local array of `split`'s local shape.
    #[track_caller]
    #[augur::staged]
    pub(crate) fn distributed_on<E: Elem>(
        &self,
        name: &str,
        shape: &[usize],
        split: crate::dist::layout::Split,
        buffer: Dyn<*mut E>,
    ) -> Tensor<E> {
        self.check_open(name, Location::caller());
        let shape = checked_shape(name, shape, Location::caller());
        self.make_split(name, shape, buffer.name(name), false, Some(split))
    }

    #[augur::staged]
    fn make_split<E: Elem>(
        &self,
        name: &str,
        shape: Vec<usize>,
        host: Dyn<*mut E>,
        owned: bool,
        split: Option<crate::dist::layout::Split>,
    ) -> Tensor<E> {
        let (movement, gpu) = (self.config().movement, self.config().gpu);
        let needs_gpu = (gpu && movement == Movement::Prophecy)
            .then(|| Prophecy::named(format!("{name}.needs_gpu"), false));
        let device = gpu
            && match movement {
                Movement::CopyAll => true,
                Movement::Unified => false,
                Movement::Prophecy => needs_gpu.expect("made above").get(),
            };
        let device = device.then(|| {
            let p = runtime::DEVICE_ALLOC
                .call(bytes_of::<E>(&shape))
                .cast_ptr::<*mut E>();
            Dyn::named(&format!("{name}_gpu"), p)
        });
        let state = Rc::new(State {
            ctx: self.ctx.downgrade(),
            config: self.config(),
            name: name.to_string(),
            shape,
            host,
            owned,
            device: Cell::new(device),
            needs_gpu,
            gpu_read: Cell::new(None),
            gpu_written: Cell::new(None),
            gpu_may_write: Cell::new(None),
            gpu_partial: Cell::new(None),
            gpu_full: (gpu && movement == Movement::Prophecy).then(|| Seen::new(false)),
            resident: (gpu && movement == Movement::Prophecy && self.config().resident).then(
                || Resident {
                    host_current: Seen::new(true),
                    device_current: Seen::new(false),
                },
            ),
            split,
        });
        self.register(state.clone());
        Tensor { state }
    }
}

/// The shape, after checking the element count fits the generated code's
/// `int32_t` indices.
fn checked_shape(name: &str, shape: &[usize], loc: &'static Location<'static>) -> Vec<usize> {
    let total = shape.iter().try_fold(1usize, |a, &d| a.checked_mul(d));
    match total {
        Some(n) if n <= i32::MAX as usize => shape.to_vec(),
        _ => dsl::fail(
            ShapeError::TooLarge {
                tensor: name.to_string(),
                shape: shape.to_vec(),
            },
            loc,
        ),
    }
}

fn bytes_of<E: Elem>(shape: &[usize]) -> i64 {
    (shape.iter().product::<usize>() * std::mem::size_of::<E>()) as i64
}

impl<E: Elem> Tensor<E> {
    /// `T[i][j]...`: one index per dimension.
    #[track_caller]
    pub fn at(&self, indices: impl AsRef<[Index]>) -> Access<E> {
        let indices = indices.as_ref().to_vec();
        let loc = Location::caller();
        if indices.len() != self.state.shape.len() {
            let error = ShapeError::Rank {
                tensor: self.state.name.clone(),
                shape: self.state.shape.clone(),
                indices: indices.iter().map(|i| i.name).collect(),
            };
            dsl::fail(error, loc);
        }
        Access {
            tensor: self.clone(),
            indices,
            loc,
        }
    }

    /// The name it was made with.
    pub fn name(&self) -> &str {
        &self.state.name
    }

    /// Its shape.
    pub fn shape(&self) -> &[usize] {
        &self.state.shape
    }

    /// Elements.
    pub fn len(&self) -> usize {
        self.state.shape.iter().product()
    }

    /// True when it has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The host buffer. Under [`Config::resident`], outside kernels, this
    /// is where code of your own may touch the tensor: the host copy is
    /// brought up to date here and the device copy counts as stale (it is
    /// copied in again before a kernel that reads it).
    #[augur::staged]
    pub fn host(&self) -> Dyn<*mut E> {
        let on_gpu = self
            .state
            .ctx
            .upgrade()
            .is_some_and(|c| c.thread.get().is_some());
        if !on_gpu {
            self.state.host_access(true);
        }
        self.state.host
    }

    /// True when it is the same tensor as `other`.
    pub(crate) fn same(&self, other: &Tensor<E>) -> bool {
        Rc::ptr_eq(&self.state, &other.state)
    }

    /// The buffer the code being generated reads; on the GPU this requires
    /// the predictions "some kernel uses me" and "this kernel reads me".
    #[augur::staged]
    pub(crate) fn read_buffer(&self, loc: &'static Location<'static>) -> Dyn<*mut E> {
        self.buffer(false, loc)
    }

    /// Records that this path through the current kernel has overwritten
    /// every element (a statement with distinct indices on the left).
    #[augur::staged]
    pub(crate) fn mark_fully_written(&self) {
        if let Some(f) = &self.state.gpu_full {
            f.set(true);
        }
    }

    /// The buffer the code being generated writes; on the GPU this records
    /// "this kernel wrote me".
    #[augur::staged]
    pub(crate) fn write_buffer(&self, loc: &'static Location<'static>) -> Dyn<*mut E> {
        self.buffer(true, loc)
    }

    #[augur::staged]
    fn buffer(&self, write: bool, loc: &'static Location<'static>) -> Dyn<*mut E> {
        let s = &self.state;
        let Some(ctx) = s.ctx.upgrade() else {
            panic!(
                "einsum: `{}` used after its Einsum was dropped, at {loc}",
                s.name
            )
        };
        crate::context::check_kernel_owner(&ctx, &s.name, loc);
        let on_gpu = ctx.thread.get().is_some();
        if !on_gpu || s.config.movement == Movement::Unified {
            return s.host;
        }
        if let Some(p) = s.needs_gpu {
            p.require(true);
        }
        if s.config.movement == Movement::Prophecy {
            if write {
                s.gpu_written
                    .get()
                    .expect("made by run_on_gpu")
                    .record(true);
                s.gpu_may_write
                    .get()
                    .expect("made by run_on_gpu")
                    .require(true);
            } else {
                s.gpu_read.get().expect("made by run_on_gpu").require(true);
            }
        }
        match s.device.get() {
            Some(d) => d,
            // Only under a prediction about to be corrected: `needs_gpu`
            // was false in this attempt and the requirement above joined it.
            None => panic!(
                "einsum: `{}` has no device buffer under this attempt's predictions, at {loc}",
                s.name
            ),
        }
    }
}

impl<E: Elem> GpuTensor for State<E> {
    #[augur::staged]
    fn before_kernel(&self, movement: Movement) {
        match movement {
            Movement::Unified => {}
            Movement::CopyAll => self.copy_in(),
            Movement::Prophecy => {
                let name = &self.name;
                let read = Prophecy::named(format!("{name}.gpu_read"), false);
                let may_write = Prophecy::named(format!("{name}.gpu_may_write"), false);
                let partial = Prophecy::named(format!("{name}.gpu_partial"), false);
                self.gpu_read.set(Some(read));
                self.gpu_may_write.set(Some(may_write));
                self.gpu_partial.set(Some(partial));
                self.gpu_written
                    .set(Some(History::named(format!("{name}.gpu_written"), false)));
                // What the kernel reads must be there; so must what it
                // writes only in part (or on some paths), since all of it
                // is copied out.
                let needed = read.get() || (may_write.get() && partial.get());
                match &self.resident {
                    Some(r) if needed && !r.device_current.get() => {
                        self.copy_in();
                        r.device_current.set(true);
                    }
                    Some(_) => {}
                    None if needed => self.copy_in(),
                    None => {}
                }
            }
        }
    }

    #[augur::staged]
    fn after_kernel(&self, movement: Movement) {
        let written = match movement {
            Movement::Unified => false,
            Movement::CopyAll => true,
            Movement::Prophecy => self.gpu_written.get().is_some_and(|h| h.get()),
        };
        match &self.resident {
            // The device copy is the current one; the host's goes stale.
            Some(r) if written => {
                r.device_current.set(true);
                r.host_current.set(false);
            }
            Some(_) => {}
            None if written => self.copy_out(),
            None => {}
        }
        self.gpu_read.set(None);
        self.gpu_written.set(None);
        self.gpu_may_write.set(None);
        self.gpu_partial.set(None);
    }

    #[augur::staged]
    fn end_of_kernel_path(&self) {
        let Some(f) = &self.gpu_full else { return };
        // Only a tensor the kernel may write needs to be whole on the device.
        let may_write = self.gpu_may_write.get().is_some_and(|w| w.get());
        if !f.get() && may_write {
            if let Some(p) = self.gpu_partial.get() {
                p.require(true);
            }
        }
        // Back to the value each thread starts with, so that the paths
        // through the kernel's body end in the same first-stage state and
        // join: the code after the launch is staged once, not per path.
        f.set(false);
    }

    #[augur::staged]
    fn finish_resident(&self) {
        // A buffer the DSL allocated dies here: nobody reads it after.
        if !self.owned {
            self.host_access(false);
        }
    }

    #[augur::staged]
    fn free(&self) {
        if let Some(d) = self.device.take() {
            runtime::DEVICE_FREE.call(d.cast_ptr::<*mut u8>());
        }
        if self.owned {
            let free = if self.config.movement == Movement::Unified {
                runtime::UNIFIED_FREE
            } else {
                runtime::HOST_FREE
            };
            free.call(self.host.cast_ptr::<*mut u8>());
        }
    }
}

impl<E: Elem> State<E> {
    /// The CPU reads (or, with `write`, writes) the tensor: under
    /// [`Config::resident`] the host copy must be current first, and a
    /// write leaves the device copy stale.
    #[augur::staged]
    pub(crate) fn host_access(&self, write: bool) {
        let Some(r) = &self.resident else { return };
        if !r.host_current.get() {
            self.copy_out();
            r.host_current.set(true);
        }
        if write {
            r.device_current.set(false);
        }
    }

    #[augur::staged]
    fn bytes(&self) -> i64 {
        bytes_of::<E>(&self.shape)
    }

    #[augur::staged]
    fn copy_in(&self) {
        if let Some(d) = self.device.get() {
            runtime::TO_DEVICE.call(
                d.cast_ptr::<*mut u8>(),
                self.host.cast_ptr::<*mut u8>(),
                self.bytes(),
            );
        } else if let Some(p) = self.needs_gpu {
            // A kernel reads me but this attempt predicted no kernel would:
            // the requirement corrects the prediction.
            p.require(true);
        }
    }

    #[augur::staged]
    fn copy_out(&self) {
        if let Some(d) = self.device.get() {
            runtime::TO_HOST.call(
                self.host.cast_ptr::<*mut u8>(),
                d.cast_ptr::<*mut u8>(),
                self.bytes(),
            );
        } else if let Some(p) = self.needs_gpu {
            p.require(true);
        }
    }
}

impl<E: Elem> Tensor<E> {
    /// A tensor of this one's instance with `shape` over `buffer`, for the
    /// local part of a distributed statement: CPU only, not registered
    /// (nothing to free or move) and not counted against
    /// [`Config::max_tensors`], so a distributed statement may sit in a
    /// dyn loop.
    pub(crate) fn view(&self, name: &str, shape: Vec<usize>, buffer: Dyn<*mut E>) -> Tensor<E> {
        let s = &self.state;
        Tensor {
            state: Rc::new(State {
                ctx: s.ctx.clone(),
                config: s.config,
                name: name.to_string(),
                shape,
                host: buffer,
                owned: false,
                device: Cell::new(None),
                needs_gpu: None,
                gpu_read: Cell::new(None),
                gpu_written: Cell::new(None),
                gpu_may_write: Cell::new(None),
                gpu_partial: Cell::new(None),
                gpu_full: None,
                resident: None,
                split: None,
            }),
        }
    }
}
