//! Random block-level kernels against a Rust model: shared memory, block
//! barriers (also inside loops whose trip count depends on the block),
//! per-thread values kept across them, conditions on the thread, atomics.
//!
//! The generator makes race-free programs only (a thread writes only its
//! own shared slot; reading another's needs a barrier since the last write,
//! writing needs one since the last such read), so running the steps in
//! lockstep, every thread of a block through one step before the next, is
//! one order the barriers allow and the model's answer is the answer. The
//! simulation runs in the interpreter (which checks races and uninitialised
//! reads) and under the JIT, every case; compiled C one case in four; the
//! CUDA compiles to PTX one case in twenty.
//!
//! `AUGUR_GPU_CASES` (default 60, 25 in debug builds) and `AUGUR_GPU_SEED`
//! run more.

use crate::fuzz_env;

use augur::exec::{Backend, CompileOptions, Interpreter};
use augur::stage::gpu;
use augur::{Builder, Dyn};
use augur_rng::Rng;

/// Bins of the atomic histogram.
const BINS: i32 = 5;
/// Values stay below this, so no arithmetic overflows.
const MOD: i32 = 1009;

#[derive(Clone, Debug)]
enum Step {
    /// `s[tid] = acc % 97 + x[gid] * a`.
    WriteOwn(i32),
    /// `acc = (acc + s[(tid + k) % B]) % MOD`.
    ReadOther(i32),
    /// `gpu::sync_threads()`.
    Sync,
    /// `atomic_add(&bins[acc % BINS], 1)`.
    Atomic,
    /// `y[gid] = acc`.
    Store,
    /// `acc = (acc * 3 + k) % MOD`.
    Mix(i32),
    /// `if (tid % m == r) { .. }`: no barrier inside.
    IfThread(i32, i32, Vec<Step>),
    /// `for (t = 0; t < bid % 2 + reps; t++) { .. }`: the same on every
    /// thread of a block, barriers inside. With `bottom`, tested at its
    /// bottom (`if (t < n) { loop { ..; t++; if (t >= n) break; } }`),
    /// the shape a rotated loop takes: its exit is control flow around the
    /// barriers.
    Loop(i32, bool, Vec<Step>),
    /// `gpu::grid_sync()`.
    GridSync,
    /// `acc = (acc + y[(gid + k) % threads]) % MOD`: what another block
    /// stored, after a grid sync.
    ReadGlobal(i32),
}

/// What the generator tracks to stay race-free: shared slots written, and
/// other threads' slots read, since the last barrier; `y` stored and other
/// threads' `y` read since the last grid sync.
#[derive(Clone, Copy, Default)]
struct Since {
    wrote: bool,
    read: bool,
    stored: bool,
    read_global: bool,
}

impl Since {
    /// A block barrier: shared memory is settled.
    #[augur::staged]
    fn block_barrier(&mut self) {
        (self.wrote, self.read) = (false, false);
    }
}

/// Whether the kernel syncs the grid (then threads read what other blocks
/// stored).
#[derive(Clone, Copy)]
struct Shape {
    grid_sync: bool,
}

fn steps(
    rng: &mut Rng,
    shape: Shape,
    n: usize,
    depth: u32,
    since: &mut Since,
    out: &mut Vec<Step>,
) {
    // Grid syncs and global traffic only at the top of the kernel.
    let top = depth == 2;
    for _ in 0..n {
        let step = match rng.below(12) {
            0 | 1 => {
                if since.read {
                    out.push(Step::Sync);
                    since.block_barrier();
                }
                since.wrote = true;
                Step::WriteOwn(1 + rng.below(3) as i32)
            }
            2 | 3 => {
                if since.wrote {
                    out.push(Step::Sync);
                    since.block_barrier();
                }
                since.read = true;
                Step::ReadOther(rng.below(8) as i32)
            }
            4 => {
                since.block_barrier();
                Step::Sync
            }
            9 if shape.grid_sync && top => {
                *since = Since::default();
                Step::GridSync
            }
            10 if shape.grid_sync && top => {
                if since.stored {
                    out.push(Step::GridSync);
                    *since = Since::default();
                }
                since.read_global = true;
                Step::ReadGlobal(rng.below(16) as i32)
            }
            11 if top => {
                if since.read_global {
                    out.push(Step::GridSync);
                    *since = Since::default();
                }
                since.stored = true;
                Step::Store
            }
            5 => Step::Atomic,
            6 => Step::Mix(rng.below(10) as i32),
            7 if depth > 0 => {
                let m = 1 + rng.below(3) as i32;
                let r = rng.below(m as u64) as i32;
                let mut inner = Vec::new();
                // Inside: no barrier may be inserted, so only what the state
                // allows as it is.
                for _ in 0..1 + rng.below(3) {
                    inner.push(match rng.below(4) {
                        0 if !since.read => {
                            since.wrote = true;
                            Step::WriteOwn(1 + rng.below(3) as i32)
                        }
                        1 if !since.wrote => {
                            since.read = true;
                            Step::ReadOther(rng.below(8) as i32)
                        }
                        2 => Step::Atomic,
                        _ => Step::Mix(rng.below(10) as i32),
                    });
                }
                Step::IfThread(m, r, inner)
            }
            8 if depth > 0 => {
                // Each turn starts and ends at a barrier.
                out.push(Step::Sync);
                let mut fresh = Since::default();
                let mut body = Vec::new();
                let n = 1 + rng.below(4) as usize;
                steps(rng, shape, n, depth - 1, &mut fresh, &mut body);
                body.push(Step::Sync);
                since.block_barrier();
                Step::Loop(1 + rng.below(2) as i32, rng.chance(50), body)
            }
            _ => Step::Mix(rng.below(10) as i32),
        };
        out.push(step);
    }
}

#[derive(Clone, Debug)]
struct Program {
    grid: u32,
    block: u32,
    body: Vec<Step>,
}

#[augur::staged]
fn program(rng: &mut Rng) -> Program {
    let shape = Shape {
        grid_sync: rng.chance(30),
    };
    // Every slot is written first, so no read finds it uninitialised.
    let mut body = vec![Step::WriteOwn(1), Step::Sync];
    let mut since = Since::default();
    let n = 2 + rng.below(8) as usize;
    steps(rng, shape, n, 2, &mut since, &mut body);
    if since.read_global {
        body.push(Step::GridSync);
    }
    body.push(Step::Store);
    Program {
        grid: 1 + rng.below(3) as u32,
        block: 1 + rng.below(8) as u32,
        body,
    }
}

/// A loop's turns on block `bid`.
#[augur::staged]
fn turns(_: &Program, bid: i32, reps: i32) -> i32 {
    bid % 2 + reps
}

// ---------------------------------------------------------------------------
// The model: every thread of the grid through each step, in lockstep.

struct Model<'a> {
    p: &'a Program,
    x: &'a [i32],
    y: Vec<i32>,
    bins: Vec<i32>,
    acc: Vec<i32>,
    /// Per block, its shared slots (`None`: never written).
    shared: Vec<Vec<Option<i32>>>,
}

impl Model<'_> {
    #[augur::staged]
    fn run(p: &Program, x: &[i32]) -> (Vec<i32>, Vec<i32>) {
        let threads = (p.grid * p.block) as usize;
        let mut m = Model {
            p,
            x,
            y: vec![0; threads],
            bins: vec![0; BINS as usize],
            acc: vec![0; threads],
            shared: vec![vec![None; p.block as usize]; p.grid as usize],
        };
        m.steps(&p.body, &vec![true; threads]);
        (m.y, m.bins)
    }

    #[augur::staged]
    fn steps(&mut self, steps: &[Step], on: &[bool]) {
        let (b, threads) = (self.p.block as i32, on.len() as i32);
        for step in steps {
            for gid in 0..threads {
                let (g, bid, tid) = (gid as usize, (gid / b) as usize, gid % b);
                if !on[g] {
                    continue;
                }
                let acc = self.acc[g];
                match step {
                    Step::WriteOwn(a) => {
                        self.shared[bid][tid as usize] = Some(acc % 97 + self.x[g] * a)
                    }
                    Step::ReadOther(k) => {
                        let other = self.shared[bid][((tid + k) % b) as usize].expect("written");
                        self.acc[g] = (acc + other) % MOD;
                    }
                    Step::ReadGlobal(k) => {
                        self.acc[g] = (acc + self.y[((gid + k) % threads) as usize]) % MOD;
                    }
                    Step::Atomic => self.bins[(acc % BINS) as usize] += 1,
                    Step::Store => self.y[g] = acc,
                    Step::Mix(k) => self.acc[g] = (acc * 3 + k) % MOD,
                    _ => {}
                }
            }
            match step {
                Step::IfThread(m, r, inner) => {
                    let on: Vec<bool> = (0..threads)
                        .map(|gid| on[gid as usize] && (gid % b) % m == *r)
                        .collect();
                    self.steps(inner, &on);
                }
                Step::Loop(reps, _, body) => {
                    for turn in 0.. {
                        let on: Vec<bool> = (0..threads)
                            .map(|gid| on[gid as usize] && turn < turns(self.p, gid / b, *reps))
                            .collect();
                        if !on.contains(&true) {
                            break;
                        }
                        self.steps(body, &on);
                    }
                }
                _ => {}
            }
        }
    }
}

// ---------------------------------------------------------------------------
// The staged kernel.

struct Staged {
    threads: i32,
    x: Dyn<*mut i32>,
    y: Dyn<*mut i32>,
    bins: Dyn<*mut i32>,
    s: Dyn<*mut i32>,
    bid: Dyn<i32>,
    tid: Dyn<i32>,
    acc: Dyn<i32>,
    block: i32,
}

impl Staged {
    /// A plain walk of the steps, inside dyn loops: the attribute makes its
    /// `for` visible to the engine, as a DSL's walk would be.
    #[augur::staged]
    fn steps(&self, steps: &[Step]) {
        let (b, tid) = (self.block, self.tid);
        let gid = self.bid * b + tid;
        for step in steps {
            match step {
                Step::WriteOwn(a) => self.s.at(tid).set(self.acc % 97 + self.x.at(gid) * *a),
                Step::ReadOther(k) => {
                    let other = self.s.at((tid + *k) % b);
                    self.acc.set((self.acc + other) % MOD);
                }
                Step::Sync => gpu::sync_threads(),
                Step::Atomic => {
                    gpu::atomic_add(self.bins.at(self.acc % BINS).addr(), 1);
                }
                Step::Store => self.y.at(gid).set(self.acc),
                Step::Mix(k) => self.acc.set((self.acc * 3 + *k) % MOD),
                Step::IfThread(m, r, inner) => {
                    if (tid % *m).eq(*r).is_true() {
                        self.steps(inner);
                    }
                }
                Step::Loop(reps, false, body) => {
                    let t = Dyn::new(0i32);
                    let bound = self.bid % 2 + *reps;
                    while t.lt(bound).is_true() {
                        self.steps(body);
                        t.set(t + 1);
                    }
                }
                Step::Loop(reps, true, body) => {
                    let t = Dyn::new(0i32);
                    let bound = self.bid % 2 + *reps;
                    if t.lt(bound).is_true() {
                        loop {
                            self.steps(body);
                            t.set(t + 1);
                            if t.ge(bound).is_true() {
                                break;
                            }
                        }
                    }
                }
                Step::GridSync => gpu::grid_sync(),
                Step::ReadGlobal(k) => {
                    let other = self.y.at((gid + *k) % self.threads);
                    self.acc.set((self.acc + other) % MOD);
                }
            }
        }
    }
}

type KernelFn = unsafe extern "C" fn(*mut i32, *mut i32, *mut i32);

#[augur::staged]
fn stage(p: &Program) -> augur::Extracted<KernelFn> {
    let q = p.clone();
    Builder::new()
        .extract(
            "fuzz",
            move |x: Dyn<*mut i32>, y: Dyn<*mut i32>, bins: Dyn<*mut i32>| {
                let p = &q;
                gpu::launch(p.grid, p.block, |bid, tid| {
                    let k = Staged {
                        threads: (p.grid * p.block) as i32,
                        x,
                        y,
                        bins,
                        s: gpu::shared::<i32>(p.block),
                        bid,
                        tid,
                        acc: Dyn::new(0i32),
                        block: p.block as i32,
                    };
                    k.steps(&p.body);
                });
            },
        )
        .unwrap_or_else(|e| panic!("extracting {p:?}: {e}"))
}

#[test]
#[augur::staged]
fn random_block_kernels_run_as_their_rust_model() {
    let count = fuzz_env::cases("AUGUR_GPU_CASES");
    let seed = fuzz_env::seed("AUGUR_GPU_SEED", 0x6b10_c4ed);
    // Random kernels compute values nothing uses, which gcc warns of.
    let mut c_opts = CompileOptions::default().with_backend(Backend::C);
    c_opts.flags.retain(|f| f != "-Werror");
    let jit_opts = CompileOptions::default().with_backend(Backend::Jit);
    for case in 0..count {
        let mut rng = Rng(seed.wrapping_add(case));
        let p = program(&mut rng);
        let what = format!(
            "case {case} (AUGUR_GPU_SEED={} AUGUR_GPU_CASES=1): {p:?}",
            seed + case
        );
        let threads = (p.grid * p.block) as usize;
        let x: Vec<i32> = (0..threads).map(|_| rng.below(50) as i32).collect();
        let want = Model::run(&p, &x);
        let ex = stage(&p);
        let sim = ex
            .simulated()
            .unwrap_or_else(|e| panic!("simulating {what}: {e}\n{}", ex.c_code()));
        // The interpreter: races and uninitialised reads are errors.
        let mut interp = Interpreter::new();
        let m = interp.memory_mut();
        let (xp, yp, bp) = (
            m.alloc_slice(&x),
            m.alloc_slice(&vec![0i32; threads]),
            m.alloc_slice(&[0i32; BINS as usize]),
        );
        if let Err(e) = sim.interpret_in(&mut interp, &[xp, yp, bp]) {
            panic!("interpreting {what}: {e}\n{}", sim.c_code());
        }
        let m = interp.memory();
        let got = (
            m.read_slice::<i32>(yp, threads).unwrap(),
            m.read_slice::<i32>(bp, BINS as usize).unwrap(),
        );
        assert_eq!(got, want, "interpreter, {what}\n{}", sim.c_code());
        let mut backends = vec![&jit_opts];
        if case % 4 == 0 {
            backends.push(&c_opts);
        }
        for opts in backends {
            let lib = sim
                .compile_with(opts)
                .unwrap_or_else(|e| panic!("compiling {what}: {e}"));
            let (mut xs, mut y, mut bins) =
                (x.clone(), vec![0i32; threads], vec![0i32; BINS as usize]);
            // SAFETY: the buffers have the sizes the kernel indexes.
            unsafe { lib.get()(xs.as_mut_ptr(), y.as_mut_ptr(), bins.as_mut_ptr()) };
            assert_eq!((y, bins), want, "{:?}, {what}", opts.backend);
        }
        if case % 20 == 0 {
            let cu = ex.cuda_code("").unwrap();
            augur::exec::cuda::Nvcc::find_or_install()
                .expect("nvcc")
                .ptx(&cu, "sm_80")
                .unwrap_or_else(|e| panic!("nvcc, {what}: {e}\n{cu}"));
        }
    }
}
