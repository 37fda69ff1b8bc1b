//! The harness of the ops suite: a [`Case`] is one program (its first
//! stage, shapes, plain-Rust reference and kernels) built every way and
//! checked (results, byte counters, C text, races in the interpreter).

use augur::exec::{Backend, Pod};
use augur::{Builder, Dyn, Value};
use augur_einsum::{compile_cpu_with, compile_simulated_with};
use augur_einsum::{Blocking, Config, Counters, Einsum, Elem};
use augur_einsum::{Movement, Schedule, SimInterpreter, Tensor};
use std::ops::{Add, Mul, Sub};

/// Element types with plain-Rust arithmetic for the references.
pub trait Num: Elem + Pod + Add<Output = Self> + Sub<Output = Self> + Mul<Output = Self> {
    fn of(v: i64) -> Self;
}
macro_rules! num {
    ($($t:ty),*) => {$(impl Num for $t { fn of(v: i64) -> $t { v as $t } })*};
}
num!(f32, i32, i64);

/// Every test program: the buffers of tensors A, B, C, D, a scalar, a flag.
pub type Native<E> = unsafe extern "C" fn(*mut E, *mut E, *mut E, *mut E, f32, i32);
/// A program's first stage: the DSL; A, B, C, D over the caller's buffers
/// then W, X, ... that the DSL allocates; the scalar; the flag.
pub type Body<E> = dyn Fn(&Einsum, &[Tensor<E>], Dyn<f32>, Dyn<i32>);
/// Plain Rust: the caller's buffers after a call, from before it.
pub type Reference<E> = dyn Fn(&mut [Vec<E>], f32, i32);
/// Counted: (bytes to device, to host, device allocations, device bytes),
/// unified bytes.
pub type Moves = ([i64; 4], i64);

pub const NAMES: [&str; 6] = ["A", "B", "C", "D", "W", "X"];
/// The simulated GPU versions: every strategy on a small grid (4 blocks of
/// 8 threads), and the paper's grid (40 of 512).
pub const GPUS: [(u32, u32, Movement); 4] = [
    (4, 8, Movement::CopyAll),
    (4, 8, Movement::Unified),
    (4, 8, Movement::Prophecy),
    (40, 512, Movement::Prophecy),
];

/// The CPU versions' schedules: the paper's loops, the default, and
/// blocked layouts small enough that every shape has remainder tiles
/// (rows, columns and reduction tiles), packed or not, untiled.
#[augur::staged]
pub fn schedules() -> [Schedule; 5] {
    let (tiles, untiled) = (Blocking::tile(3, 4), Blocking::tile(2, 3).pack(false));
    [
        Schedule::Naive,
        Schedule::Auto,
        Schedule::Blocked(tiles.depth(5).row_tile(6)),
        Schedule::Blocked(untiled.depth(0).row_tile(4)),
        Schedule::Blocked(Blocking::tile(1, 5).depth(2).row_tile(1)),
    ]
}

/// The tensors a kernel reads, and those it writes (numbers into `shapes`).
pub type Kernel = (Vec<usize>, Vec<usize>);

/// One program and what it must do.
pub struct Case<E: Num> {
    pub name: String,
    /// Shapes of A, B, C, D, then of the DSL-allocated tensors.
    pub shapes: Vec<Vec<usize>>,
    pub body: Box<Body<E>>,
    pub reference: Box<Reference<E>>,
    /// Each kernel's tensors read and written (numbers into `shapes`).
    pub kernels: Vec<Kernel>,
    /// How often each kernel runs in a call with the flag.
    pub runs_of: fn(i32) -> Vec<i64>,
    /// The (scalar, flag) arguments of each call.
    pub args: Vec<(f32, i32)>,
    /// Whether the OpenMP version has a parallel loop.
    pub pragma: bool,
    /// Grid syncs in the GPU versions (statements after a kernel's first).
    pub syncs: usize,
    /// Initial values are in `-range..=range`, 0 excluded.
    pub range: i64,
}

/// A case over A, B, C, D of these shapes (`[1]` for those left out), then
/// tensors W, X the DSL allocates.
#[augur::staged]
pub fn case<E: Num>(
    name: String,
    shapes: &[&[usize]],
    body: impl Fn(&Einsum, &[Tensor<E>], Dyn<f32>, Dyn<i32>) + 'static,
    reference: impl Fn(&mut [Vec<E>], f32, i32) + 'static,
) -> Case<E> {
    let mut shapes: Vec<Vec<usize>> = shapes.iter().map(|s| s.to_vec()).collect();
    shapes.resize(shapes.len().max(4), vec![1]);
    let name = format!("{name}_{}", E::C_NAME);
    let (body, reference) = (Box::new(body), Box::new(reference));
    let (kernels, runs_of, args) = (Vec::new(), |_| vec![1; 4], vec![(3.0, 1)]);
    let (pragma, syncs, range) = (true, 0, 4);
    Case {
        name,
        shapes,
        body,
        reference,
        kernels,
        runs_of,
        args,
        pragma,
        syncs,
        range,
    }
}

impl<E: Num> Case<E> {
    /// A kernel reading and writing these tensors.
    #[augur::staged]
    pub fn kernel(mut self, reads: &[usize], writes: &[usize]) -> Self {
        self.kernels.push((reads.to_vec(), writes.to_vec()));
        self
    }

    #[augur::staged]
    pub fn bytes(&self, ts: impl IntoIterator<Item = usize>) -> i64 {
        let size = |t: usize| self.shapes[t].iter().product::<usize>() * size_of::<E>();
        ts.into_iter().map(|t| size(t) as i64).sum()
    }

    #[augur::staged]
    pub fn used_on_gpu(&self, t: usize) -> bool {
        self.kernels
            .iter()
            .any(|(r, w)| r.contains(&t) || w.contains(&t))
    }

    /// What the simulated GPU must count in one call with `flag`.
    #[augur::staged]
    pub fn expected(&self, movement: Movement, flag: i32) -> Moves {
        let runs = (self.runs_of)(flag);
        let all = 0..self.shapes.len();
        match movement {
            Movement::Unified => ([0; 4], self.bytes(4..self.shapes.len())),
            Movement::CopyAll => {
                let launches: i64 = runs[..self.kernels.len()].iter().sum();
                let (n, b) = (all.len() as i64, self.bytes(all));
                ([launches * b, launches * b, n, b], 0)
            }
            Movement::Prophecy => {
                let used: Vec<usize> = all.filter(|&t| self.used_on_gpu(t)).collect();
                let moved = |rw: fn(&Kernel) -> &Vec<usize>| {
                    let per = self.kernels.iter().zip(&runs);
                    per.map(|(k, n)| n * self.bytes(rw(k).iter().copied()))
                        .sum()
                };
                let (n, b) = (used.len() as i64, self.bytes(used));
                ([moved(|k| &k.0), moved(|k| &k.1), n, b], 0)
            }
        }
    }

    /// Pseudo-random contents of A, B, C, D (a xorshift seeded by the name).
    #[augur::staged]
    pub fn inputs(&self) -> Vec<Vec<E>> {
        let fnv = |h: u64, b: u8| (h ^ b as u64).wrapping_mul(0x100_0000_01b3);
        let mut x = self.name.bytes().fold(0xcbf2_9ce4_8422_2325, fnv);
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let v = (x % (2 * self.range as u64)) as i64 - self.range;
            E::of(if v >= 0 { v + 1 } else { v })
        };
        let len = |s: &Vec<usize>| s.iter().product::<usize>();
        let buf = |s| (0..len(s)).map(|_| next()).collect();
        self.shapes[..4].iter().map(buf).collect()
    }

    /// Extracts the program under `config`.
    #[augur::staged]
    pub fn extract(&self, config: Config) -> augur::Extracted<Native<E>> {
        let stage = |a, b, c, d, s: Dyn<f32>, flag: Dyn<i32>| {
            let ein = Einsum::new(config);
            let mut ts: Vec<Tensor<E>> = Vec::new();
            for (n, buf) in [a, b, c, d].into_iter().enumerate() {
                ts.push(ein.tensor_on(NAMES[n], &self.shapes[n], buf));
            }
            for (n, shape) in self.shapes.iter().enumerate().skip(4) {
                ts.push(ein.tensor(NAMES[n], shape));
            }
            (self.body)(&ein, &ts, s, flag);
            ein.finish();
        };
        let ex = Builder::new().extract(&self.name, stage);
        ex.unwrap_or_else(|e| panic!("{} under {config:?}: {e}", self.name))
    }

    /// Builds and runs every version; checks results, counters, C text.
    pub fn check(self) {
        let mut versions = Vec::new();
        for schedule in schedules() {
            for openmp in [false, true] {
                let config = Config {
                    schedule,
                    openmp,
                    ..Config::cpu()
                };
                versions.push((config, None));
            }
        }
        for (blocks, threads, m) in GPUS {
            let mut config = Config::with(m);
            (config.blocks, config.threads) = (blocks, threads);
            versions.push((config, Some(m)));
        }
        for (config, movement) in versions {
            let what = format!("{} under {config:?}", self.name);
            let ex = self.extract(config);
            let c = ex.c_code();
            let pragma = c.contains("_Pragma(\"omp parallel for\")");
            if config.schedule == Schedule::naive() {
                assert_eq!(pragma, config.openmp && self.pragma, "{what}:\n{c}");
            } else {
                // Blocked loops are parallel over tiles, where there are several.
                assert!(!pragma || config.openmp, "{what}:\n{c}");
            }
            // Barriers between statements (the one after a kernel's last
            // statement is dropped by the CUDA backend).
            let cu = augur::codegen::cuda::write_cuda(ex.ir(), "").unwrap();
            let syncs = cu.matches("augur_grid_sync();").count();
            assert_eq!(syncs, self.syncs * config.gpu as usize, "{what}:\n{cu}");
            if movement == Some(Movement::Prophecy) {
                // A device buffer only for the tensors some kernel uses.
                for (t, name) in NAMES.iter().enumerate().take(self.shapes.len()) {
                    let has = c.contains(&format!("{name}_gpu"));
                    assert_eq!(has, self.used_on_gpu(t), "{what}: {name}:\n{c}");
                }
            }
            // The interpreter checks what runs at once: OpenMP loops, and
            // the threads of each phase of the simulated GPU (on the small
            // grid: the paper's 20,480 threads take minutes in debug).
            match movement {
                None if config.openmp => self.interpret(&ex, &what, None),
                Some(m) if config.blocks * config.threads <= 32 => {
                    self.interpret(&ex.simulated().unwrap(), &what, Some(m))
                }
                _ => {}
            }
            for backend in [Backend::Auto, Backend::Jit] {
                let p = match movement {
                    None => compile_cpu_with(&ex, config.openmp, backend),
                    Some(_) => compile_simulated_with(&ex, backend),
                };
                let what = format!("{what} ({backend:?})");
                let p = p.unwrap_or_else(|e| panic!("{what}: {e}"));
                for &(s, flag) in &self.args {
                    let mut bufs = self.inputs();
                    let mut want = bufs.clone();
                    (self.reference)(&mut want, s, flag);
                    p.reset().unwrap();
                    let b: Vec<*mut E> = bufs.iter_mut().map(|b| b.as_mut_ptr()).collect();
                    // SAFETY: each buffer holds its shape's element count.
                    unsafe { (p.get())(b[0], b[1], b[2], b[3], s, flag) };
                    for (t, (got, want)) in bufs.iter().zip(&want).enumerate() {
                        let at = got.iter().zip(want).position(|(g, w)| g != w);
                        let name = NAMES[t];
                        assert!(at.is_none(), "{what} (s {s}, flag {flag}): {name}[{at:?}]");
                    }
                    let c: Counters = p.counters().unwrap();
                    let counted = [c.to_device, c.to_host, c.device_allocs, c.device_bytes];
                    let counted = (counted, c.unified_bytes);
                    let expected = movement.map_or(([0; 4], 0), |m| self.expected(m, flag));
                    assert_eq!(counted, expected, "{what} (flag {flag}): {c:?}");
                }
            }
        }
    }
}

impl<E: Num> Case<E> {
    /// Runs an OpenMP version, or the simulation of a GPU one (moving data
    /// as `movement` says), in the interpreter, whose check of what runs at
    /// once finds any two iterations or threads that touch the same memory
    /// (compiled runs show such a race only by chance, if ever).
    pub fn interpret(
        &self,
        ex: &augur::Extracted<Native<E>>,
        what: &str,
        movement: Option<Movement>,
    ) {
        for &(s, flag) in &self.args {
            let what = format!("{what} (interpreted, s {s}, flag {flag})");
            let mut want = self.inputs();
            (self.reference)(&mut want, s, flag);
            let mut it = SimInterpreter::new();
            let memory = it.interp.memory_mut();
            let bufs: Vec<Value> = self
                .inputs()
                .iter()
                .map(|b| memory.alloc_slice(b))
                .collect();
            let args = [&bufs[..], &[Value::F32(s), Value::I32(flag)]].concat();
            let r = ex.interpret_in(&mut it.interp, &args);
            r.unwrap_or_else(|e| panic!("{what}: {e}"));
            for (t, want) in want.iter().enumerate() {
                let got: Vec<E> = it.interp.memory().read_slice(bufs[t], want.len()).unwrap();
                assert!(&got == want, "{what}: {} differs", NAMES[t]);
            }
            assert_eq!(it.live_buffers(), 0, "{what}");
            let c = it.counters();
            let counted = (
                [c.to_device, c.to_host, c.device_allocs, c.device_bytes],
                c.unified_bytes,
            );
            let expected = movement.map_or(([0; 4], 0), |m| self.expected(m, flag));
            assert_eq!(counted, expected, "{what}: {c:?}");
        }
    }
}
