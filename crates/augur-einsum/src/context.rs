//! The DSL's first-stage state: configuration, the tensors, where code is
//! being generated for, and `run_on_gpu`.

use crate::index::Index;
use crate::schedule::Schedule;
use augur::dsl::{self, Seen};
use augur::stage::gpu;
use augur::Dyn;
use std::cell::{Cell, RefCell};
use std::panic::Location;
use std::rc::Rc;

/// How tensors reach the GPU (the paper's three strategies).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Movement {
    /// Every tensor has a device buffer; before each kernel every tensor is
    /// copied in, after it every tensor is copied out.
    CopyAll,
    /// Every tensor the DSL allocates is in CUDA unified memory; the driver
    /// moves pages on demand, the generated code copies nothing.
    Unified,
    /// Prophecies decide: a device buffer only for tensors some kernel uses
    /// (`needs_gpu`), a copy in only of what the next kernel reads
    /// (`gpu_read`), a copy out only of what it wrote (`gpu_written`, a
    /// history).
    Prophecy,
}

impl Movement {
    /// All three, in the paper's table order.
    pub const ALL: [Movement; 3] = [Movement::CopyAll, Movement::Unified, Movement::Prophecy];

    /// A short name for tables and function names.
    pub fn name(self) -> &'static str {
        match self {
            Movement::CopyAll => "copy_all",
            Movement::Unified => "unified",
            Movement::Prophecy => "prophecy",
        }
    }
}

/// How the DSL generates code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Config {
    /// Data movement for `run_on_gpu`.
    pub movement: Movement,
    /// Mark each CPU statement's outer loop `#pragma omp parallel for`.
    pub openmp: bool,
    /// Blocks per kernel launch (the paper's `max_bid`: 40).
    pub blocks: u32,
    /// Threads per block (the paper's `max_tid`: 512).
    pub threads: u32,
    /// When false, `run_on_gpu` runs its statements on the CPU (the same
    /// program as CPU code, for comparison).
    pub gpu: bool,
    /// The most tensors one program may make (1024). A tensor made inside
    /// a dyn loop would need a buffer per turn; the count it drives up is
    /// how such a program is stopped with a clear error.
    pub max_tensors: u32,
    /// How CPU statements lay out their loops ([`Schedule::Auto`]: blocked
    /// for products large enough to gain, the paper's loops otherwise;
    /// [`Schedule::naive`] keeps the paper's loops everywhere, kernels
    /// included). Inside `run_on_gpu`, matrix products go through shared
    /// memory under every schedule but [`Schedule::naive`].
    pub schedule: Schedule,
    /// Under [`Movement::Prophecy`] on the GPU: keep tensors on the device
    /// between kernels. A kernel's results go out only when the CPU next
    /// touches the tensor (an einsum statement, [`Tensor::host`](crate::Tensor::host)) or, for a
    /// caller's buffer, at [`Einsum::finish`]; a tensor goes in only when
    /// the device copy is not current. The bytes moved over a sequence of
    /// kernels are then the fewest that give the same results.
    ///
    /// The contract it needs: between kernels, code of your own that reads
    /// or writes a tensor's buffer through a pointer of its own (the one
    /// given to [`Einsum::tensor_on`]) must first call [`Tensor::host`](crate::Tensor::host),
    /// which brings the host copy up to date and marks the device copy
    /// stale. Off by default: without it every kernel's results are on the
    /// host as soon as the kernel ends.
    pub resident: bool,
    /// The width in bytes of the vectors that [`Schedule::Auto`] shapes
    /// CPU register tiles for ([`Blocking::matmul_for`](crate::Blocking::matmul_for)):
    /// by default [`native_vector_bytes`](crate::native_vector_bytes), 64
    /// on a machine with AVX-512 and 32 otherwise, as einsum programs
    /// compile with `-march=native`. Set it to generate for another
    /// machine; the same program and configuration give the same code.
    pub vector_bytes: usize,
    /// The OpenMP threads that [`Schedule::Auto`] balances CPU row tiles
    /// for: as many tiles as a multiple of it, of sizes that differ by at
    /// most one register tile. By default `OMP_NUM_THREADS` (its first
    /// value) where set, otherwise the machine's cores. Code generated for
    /// one count is correct under any other, only less balanced.
    pub cpu_threads: usize,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            movement: Movement::Prophecy,
            openmp: false,
            blocks: 40,
            threads: 512,
            gpu: true,
            max_tensors: 1024,
            schedule: Schedule::Auto,
            resident: false,
            vector_bytes: crate::schedule::native_vector_bytes(),
            cpu_threads: crate::schedule::default_threads(),
        }
    }
}

impl Config {
    /// The default configuration with `movement`.
    pub fn with(movement: Movement) -> Config {
        Config {
            movement,
            ..Config::default()
        }
    }

    /// CPU code only: `run_on_gpu` runs on the CPU, no device buffers.
    pub fn cpu() -> Config {
        Config {
            gpu: false,
            movement: Movement::Prophecy,
            ..Config::default()
        }
    }
}

/// What a registered tensor does around a kernel (type-erased: the
/// registry holds tensors of every element type).
pub(crate) trait GpuTensor {
    /// Before a kernel: make this kernel's prophecy and history, and copy in.
    fn before_kernel(&self, movement: Movement);
    /// After a kernel: copy out.
    fn after_kernel(&self, movement: Movement);
    /// At the end of one path through the kernel's body (still inside it).
    fn end_of_kernel_path(&self);
    /// Frees what the DSL allocated.
    fn free(&self);
    /// At [`Einsum::finish`]: a resident kernel result the host has not
    /// seen goes out to a caller's buffer.
    fn finish_resident(&self);
}

/// The instance whose kernel is being generated on this thread: tensors
/// of other instances have no device buffers there. Kept in the
/// extraction's context ([`dsl::local`]), so an extraction that ends
/// anywhere leaves none behind.
#[derive(Clone, Default)]
struct KernelOwner(Option<dsl::Id>);

fn kernel_owner() -> Option<dsl::Id> {
    dsl::local_copy::<KernelOwner>().0
}

/// Sets the kernel owner for its lifetime; dropped on unwinding too (runs
/// end by unwinding, anywhere).
struct OwnerGuard;

impl OwnerGuard {
    fn new(ctx: &dsl::State<Ctx>) -> OwnerGuard {
        dsl::local(|o: &mut KernelOwner| o.0 = Some(ctx.id()));
        OwnerGuard
    }
}

impl Drop for OwnerGuard {
    fn drop(&mut self) {
        dsl::local(|o: &mut KernelOwner| o.0 = None);
    }
}

/// Panics when a kernel of another instance is being generated: `ctx`'s
/// tensors would be read through host pointers there.
pub(crate) fn check_kernel_owner(ctx: &dsl::State<Ctx>, tensor: &str, loc: &Location) {
    let owner = kernel_owner();
    if owner.is_some_and(|o| o != ctx.id()) {
        panic!(
            "einsum: tensor `{tensor}` belongs to another Einsum than the one whose \
             run_on_gpu is running: it has no device buffer there; make all tensors \
             a kernel uses with one Einsum, at {loc}"
        );
    }
}

/// The GPU thread a kernel statement is being generated for.
#[derive(Clone, Copy)]
pub(crate) struct Thread {
    pub bid: Dyn<i32>,
    pub tid: Dyn<i32>,
}

pub(crate) struct Ctx {
    pub config: Config,
    pub tensors: RefCell<Vec<Rc<dyn GpuTensor>>>,
    /// `Some` while generating a kernel's body (the paper's
    /// `current_device == device_gpu`). A plain value: set and cleared in
    /// straight-line code around the kernel, whose code lies at other call
    /// paths anyway.
    pub thread: Cell<Option<Thread>>,
    pub next_index: Cell<u32>,
    pub finished: Cell<bool>,
    /// True inside `run_on_gpu`, on the GPU or (with `gpu: false`) not.
    pub in_run_on_gpu: Cell<bool>,
    /// Tensors made so far. Tags see it: a tensor made in a dyn loop
    /// changes it on every turn, so the engine reports the loop (it can
    /// never close: each turn would need a buffer of its own) instead of
    /// running on.
    pub tensor_count: Seen<u32>,
    /// The schedule of the CPU statements staged now ([`Einsum::with_schedule`]).
    pub schedule: Cell<Schedule>,
    /// The MPI ranks this program runs on, once [`Einsum::distribute`] made them.
    pub world: Cell<Option<crate::dist::WorldInfo>>,
    /// The CPU statements staged so far and how ([`Einsum::chosen`]).
    pub chosen: RefCell<Vec<Chosen>>,
    /// The distributed statements staged so far and their plans
    /// ([`World::plans`](crate::dist::World::plans)).
    pub planned: RefCell<Vec<crate::dist::Planned>>,
}

/// How one CPU statement was generated ([`Einsum::chosen`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chosen {
    /// The statement, as `C[i][j] = ...`.
    pub statement: String,
    /// Its line in the program (`file:line:column`).
    pub location: String,
    /// Its layout: [`Schedule::Naive`] for the paper's loops, otherwise
    /// the [`Schedule::Blocked`] layout that [`Schedule::Auto`] (or the
    /// schedule given) resolved to.
    pub schedule: Schedule,
    /// Indices fused into one ([`Schedule::Auto`]'s doc): `ij` for `i`
    /// and `j`.
    pub fused: Vec<String>,
    /// The index whose loop runs in parallel under OpenMP (`None`: one
    /// thread).
    pub parallel: Option<String>,
}

impl std::fmt::Display for Chosen {
    /// `C[i][j] = ... at file:line: 8x48/k512/m72/pack, parallel over i`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} at {}: {}",
            self.statement, self.location, self.schedule
        )?;
        if !self.fused.is_empty() {
            write!(f, ", fused {}", self.fused.join(", "))?;
        }
        match &self.parallel {
            Some(i) => write!(f, ", parallel over {i}"),
            None => write!(f, ", one thread"),
        }
    }
}

/// The DSL: make one at the start of a staged function, then tensors and
/// indices from it, and write einsum statements.
///
/// ```
/// use augur::{Builder, Dyn};
/// use augur_einsum::{Config, Einsum};
///
/// #[augur::staged]
/// fn scale() {
///     let f = Builder::new()
///         .extract("scale", |x: Dyn<*mut f32>| {
///             let ein = Einsum::new(Config::default());
///             let i = ein.index("i");
///             let v = ein.tensor_on::<f32>("v", [8], x);
///             v.at([i]).mul_by(2.0f32);
///             ein.finish();
///         })
///         .unwrap();
///     assert!(f.c_code().contains("v[i] = v[i] * 2.0f"));
/// }
/// # scale();
/// ```
#[derive(Clone)]
pub struct Einsum {
    pub(crate) ctx: dsl::State<Ctx>,
}

// What decides the code an instance generates is in `Ctx`'s `Seen` fields.
impl dsl::Visible for Einsum {}

impl Einsum {
    /// A DSL instance generating code as `config` says.
    ///
    /// Panics (an extraction error) when the grid is empty, a block has
    /// more than 1024 threads (CUDA's limit) or the grid more than
    /// 2^31 - 1 threads (the generated loops count in `int32_t`).
    #[track_caller]
    #[augur::staged]
    pub fn new(config: Config) -> Einsum {
        let (b, t) = (config.blocks as u64, config.threads as u64);
        if b == 0 || t == 0 || t > 1024 || b * t > i32::MAX as u64 {
            panic!(
                "einsum: a grid of {b} blocks of {t} threads: blocks and threads must be \
                 at least 1, threads at most 1024 and blocks * threads below 2^31, at {}",
                Location::caller()
            );
        }
        Einsum {
            ctx: dsl::State::new(Ctx {
                config,
                tensors: RefCell::new(Vec::new()),
                thread: Cell::new(None),
                next_index: Cell::new(0),
                finished: Cell::new(false),
                in_run_on_gpu: Cell::new(false),
                tensor_count: Seen::new(0),
                schedule: Cell::new(config.schedule),
                world: Cell::new(None),
                chosen: RefCell::new(Vec::new()),
                planned: RefCell::new(Vec::new()),
            }),
        }
    }

    /// Its configuration.
    pub fn config(&self) -> Config {
        self.ctx.config
    }

    /// A new index named `name` (the loop variable's name in the C).
    #[augur::staged]
    pub fn index(&self, name: &'static str) -> Index {
        let id = self.ctx.next_index.get();
        self.ctx.next_index.set(id + 1);
        Index { id, name }
    }

    /// Runs `kernel` on the GPU: its statements become one CUDA kernel (a
    /// cooperative one with grid syncs between statements when there are
    /// several). Tensors move as [`Config::movement`] says.
    ///
    /// `kernel` is staged again while the engine checks the kernel's loops,
    /// hence `FnMut`. Nested `run_on_gpu` is an error.
    #[track_caller]
    #[augur::staged]
    pub fn run_on_gpu(&self, mut kernel: impl FnMut()) {
        let loc = Location::caller();
        if self.ctx.finished.get() {
            panic!("einsum: run_on_gpu after Einsum::finish, at {loc}");
        }
        if self.ctx.in_run_on_gpu.get() {
            panic!("einsum: run_on_gpu inside run_on_gpu at {loc}");
        }
        self.ctx.in_run_on_gpu.set(true);
        if self.ctx.config.gpu {
            self.launch(&mut kernel);
        } else {
            kernel();
        }
        self.ctx.in_run_on_gpu.set(false);
    }

    #[augur::staged]
    fn launch(&self, kernel: &mut dyn FnMut()) {
        let movement = self.ctx.config.movement;
        let tensors: Vec<Rc<dyn GpuTensor>> = self.ctx.tensors.borrow().clone();
        for t in &tensors {
            t.before_kernel(movement);
        }
        let (blocks, threads) = (self.ctx.config.blocks, self.ctx.config.threads);
        let _owner = OwnerGuard::new(&self.ctx);
        gpu::launch(blocks, threads, |bid, tid| {
            self.ctx.thread.set(Some(Thread { bid, tid }));
            kernel();
            for t in &tensors {
                t.end_of_kernel_path();
            }
            self.ctx.thread.set(None);
        });
        if movement == Movement::Unified {
            // Kernels run asynchronously, and with unified memory nothing
            // else waits for them before the host touches the same memory.
            crate::runtime::SYNC.call();
        }
        for t in &tensors {
            t.after_kernel(movement);
        }
    }

    /// Stages `statements` with CPU statements laid out by `schedule`
    /// instead of [`Config::schedule`] (the schedule of one statement, or
    /// of a few).
    ///
    /// ```
    /// use augur::{Builder, Dyn};
    /// use augur_einsum::{compile_cpu, einsum, Blocking, Config, Einsum, Schedule};
    ///
    /// #[augur::staged]
    /// fn blocked_product() {
    ///     let ex = Builder::new()
    ///         .extract("mm", |a: Dyn<*mut f32>, b: Dyn<*mut f32>, c: Dyn<*mut f32>| {
    ///             let ein = Einsum::new(Config::cpu());
    ///             let (i, j, k) = (ein.index("i"), ein.index("j"), ein.index("k"));
    ///             let a = ein.tensor_on::<f32>("A", [5, 7], a);
    ///             let b = ein.tensor_on::<f32>("B", [7, 6], b);
    ///             let c = ein.tensor_on::<f32>("C", [5, 6], c);
    ///             // 2 x 4 register tiles, reduction tiles of 3, packed.
    ///             let tiles = Schedule::Blocked(Blocking::tile(2, 4).depth(3));
    ///             ein.with_schedule(tiles, || einsum!(c[i, j] = a[i, k] * b[k, j]));
    ///             ein.finish();
    ///         })
    ///         .unwrap();
    ///     let p = compile_cpu(&ex, false).unwrap();
    ///     let mut a: Vec<f32> = (0..35).map(|x| (x % 5) as f32).collect();
    ///     let mut b: Vec<f32> = (0..42).map(|x| (x % 3) as f32).collect();
    ///     let mut c = vec![0f32; 30];
    ///     // SAFETY: the buffers hold 35, 42 and 30 floats, as the shapes say.
    ///     unsafe { (p.get())(a.as_mut_ptr(), b.as_mut_ptr(), c.as_mut_ptr()) };
    ///     for (e, got) in c.iter().enumerate() {
    ///         let want: f32 = (0..7).map(|q| a[e / 6 * 7 + q] * b[q * 6 + e % 6]).sum();
    ///         assert_eq!(*got, want);
    ///     }
    /// }
    /// # blocked_product();
    /// ```
    #[augur::staged]
    pub fn with_schedule<R>(&self, schedule: Schedule, statements: impl FnOnce() -> R) -> R {
        let before = self.ctx.schedule.replace(schedule);
        let out = statements();
        self.ctx.schedule.set(before);
        out
    }

    /// How each CPU statement staged so far was generated, in order (each
    /// once, however often a dyn loop stages it): the layout
    /// [`Schedule::Auto`] chose, the indices it fused, the loop that runs
    /// in parallel. It covers the statements this run of the first stage
    /// reached; call it at the end of the staged function.
    ///
    /// ```
    /// use augur::{Builder, Dyn};
    /// use augur_einsum::{einsum, Config, Einsum, Schedule};
    ///
    /// #[augur::staged]
    /// fn report() {
    ///     let seen = std::cell::RefCell::new(Vec::new());
    ///     Builder::new()
    ///         .extract("ttm", |x: Dyn<*mut f32>, u: Dyn<*mut f32>, y: Dyn<*mut f32>| {
    ///             let ein = Einsum::new(Config { openmp: true, ..Config::cpu() });
    ///             let (i, j, k, r) = (ein.index("i"), ein.index("j"), ein.index("k"), ein.index("r"));
    ///             let x = ein.tensor_on::<f32>("X", [64, 64, 64], x);
    ///             let u = ein.tensor_on::<f32>("U", [64, 64], u);
    ///             let y = ein.tensor_on::<f32>("Y", [64, 64, 64], y);
    ///             einsum!(y[i, j, r] = x[i, j, k] * u[k, r]);
    ///             *seen.borrow_mut() = ein.chosen();
    ///             ein.finish();
    ///         })
    ///         .unwrap();
    ///     let chosen = seen.borrow();
    ///     assert_eq!(chosen.len(), 1);
    ///     assert_eq!(chosen[0].fused, ["ij"]);
    ///     assert!(matches!(chosen[0].schedule, Schedule::Blocked(_)));
    ///     assert_eq!(chosen[0].parallel.as_deref(), Some("ij"));
    /// }
    /// # report();
    /// ```
    pub fn chosen(&self) -> Vec<Chosen> {
        self.ctx.chosen.borrow().clone()
    }

    /// Starts the runtime's timer (the paper's `start_time`); with
    /// [`timer_stop`](Einsum::timer_stop) it times a region of the
    /// generated code, waiting for the GPU at both ends.
    #[augur::staged]
    pub fn timer_start(&self) {
        crate::runtime::TIMER_START.call();
    }

    /// Stops the runtime's timer; the runtime keeps the shortest region and
    /// the total ([`Counters`](crate::Counters)).
    #[augur::staged]
    pub fn timer_stop(&self) {
        crate::runtime::TIMER_STOP.call();
    }

    /// Frees every buffer the DSL allocated (not user buffers). Call it at
    /// the end of the staged function; tensors must not be used after it.
    #[track_caller]
    #[augur::staged]
    pub fn finish(&self) {
        if self.ctx.finished.replace(true) {
            panic!("einsum: finish called twice, at {}", Location::caller());
        }
        for t in self.ctx.tensors.borrow().iter() {
            t.finish_resident();
            t.free();
        }
    }

    #[augur::staged]
    pub(crate) fn register(&self, t: Rc<dyn GpuTensor>) {
        self.ctx.tensors.borrow_mut().push(t);
    }
}
