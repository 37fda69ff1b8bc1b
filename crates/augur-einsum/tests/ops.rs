//! Einsum operations built three ways (plain C and OpenMP C under each
//! schedule of `schedules()`, the CPU-simulated
//! GPU under each data-movement strategy on a small grid, and under
//! prophecies on the paper's 40 × 512 grid), run on pseudo-random inputs and
//! compared with plain Rust; the simulated runtime's counters against
//! exactly what each strategy must move, and the generated C text.
//!
//! Inputs are small nonzero integers, so every sum and product is exact in
//! `f32` and results are equal whatever the summation order.

use augur::exec::{Backend, Pod};
use augur::{Builder, Dyn, Value};
use augur_einsum::{compile_cpu, compile_cpu_with, compile_simulated_with};
use augur_einsum::{Access, Blocking, Config, Counters, Einsum, Elem};
use augur_einsum::{Index, Movement, Schedule, SimInterpreter, Tensor, Term};
use std::ops::{Add, Mul, Sub};

/// Element types with plain-Rust arithmetic for the references.
trait Num: Elem + Pod + Add<Output = Self> + Sub<Output = Self> + Mul<Output = Self> {
    fn of(v: i64) -> Self;
}
macro_rules! num {
    ($($t:ty),*) => {$(impl Num for $t { fn of(v: i64) -> $t { v as $t } })*};
}
num!(f32, i32, i64);

/// Every test program: the buffers of tensors A, B, C, D, a scalar, a flag.
type Native<E> = unsafe extern "C" fn(*mut E, *mut E, *mut E, *mut E, f32, i32);
/// A program's first stage: the DSL; A, B, C, D over the caller's buffers
/// then W, X, ... that the DSL allocates; the scalar; the flag.
type Body<E> = dyn Fn(&Einsum, &[Tensor<E>], Dyn<f32>, Dyn<i32>);
/// Plain Rust: the caller's buffers after a call, from before it.
type Reference<E> = dyn Fn(&mut [Vec<E>], f32, i32);
/// Counted: (bytes to device, to host, device allocations, device bytes),
/// unified bytes.
type Moves = ([i64; 4], i64);

const NAMES: [&str; 6] = ["A", "B", "C", "D", "W", "X"];
/// The simulated GPU versions: every strategy on a small grid (4 blocks of
/// 8 threads), and the paper's grid (40 of 512).
const GPUS: [(u32, u32, Movement); 4] = [
    (4, 8, Movement::CopyAll),
    (4, 8, Movement::Unified),
    (4, 8, Movement::Prophecy),
    (40, 512, Movement::Prophecy),
];

/// The CPU versions' schedules: the paper's loops, the default, and
/// blocked layouts small enough that every shape has remainder tiles
/// (rows, columns and reduction tiles), packed or not, untiled.
fn schedules() -> [Schedule; 5] {
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
type Kernel = (Vec<usize>, Vec<usize>);

/// One program and what it must do.
struct Case<E: Num> {
    name: String,
    /// Shapes of A, B, C, D, then of the DSL-allocated tensors.
    shapes: Vec<Vec<usize>>,
    body: Box<Body<E>>,
    reference: Box<Reference<E>>,
    /// Each kernel's tensors read and written (numbers into `shapes`).
    kernels: Vec<Kernel>,
    /// How often each kernel runs in a call with the flag.
    runs_of: fn(i32) -> Vec<i64>,
    /// The (scalar, flag) arguments of each call.
    args: Vec<(f32, i32)>,
    /// Whether the OpenMP version has a parallel loop.
    pragma: bool,
    /// Grid syncs in the GPU versions (statements after a kernel's first).
    syncs: usize,
    /// Initial values are in `-range..=range`, 0 excluded.
    range: i64,
}

/// A case over A, B, C, D of these shapes (`[1]` for those left out), then
/// tensors W, X the DSL allocates.
fn case<E: Num>(
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
    fn kernel(mut self, reads: &[usize], writes: &[usize]) -> Self {
        self.kernels.push((reads.to_vec(), writes.to_vec()));
        self
    }

    fn bytes(&self, ts: impl IntoIterator<Item = usize>) -> i64 {
        let size = |t: usize| self.shapes[t].iter().product::<usize>() * size_of::<E>();
        ts.into_iter().map(|t| size(t) as i64).sum()
    }

    fn used_on_gpu(&self, t: usize) -> bool {
        self.kernels
            .iter()
            .any(|(r, w)| r.contains(&t) || w.contains(&t))
    }

    /// What the simulated GPU must count in one call with `flag`.
    fn expected(&self, movement: Movement, flag: i32) -> Moves {
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
    fn inputs(&self) -> Vec<Vec<E>> {
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
    fn extract(&self, config: Config) -> augur::Extracted<Native<E>> {
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
    fn check(self) {
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
    fn interpret(&self, ex: &augur::Extracted<Native<E>>, what: &str, movement: Option<Movement>) {
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

/// Plain Rust, row-major: `C = A B` (`+=` when `acc`) for `batch` A m×k
/// and B k×n (a vector B and C are k×1 and m×1).
fn product<E: Num>(v: &mut [Vec<E>], batch: usize, (m, k, n): Mkn, acc: bool) {
    let [a, b, c, _] = v else { unreachable!() };
    c.iter_mut().filter(|_| !acc).for_each(|x| *x = E::zero());
    for (r, i, j) in (0..batch * m * n).map(|e| (e / (m * n), e / n % m, e % n)) {
        let (a, b) = (&a[r * m * k + i * k..], &b[r * k * n + j..]);
        let s = (0..k).fold(E::zero(), |s, q| s + a[q] * b[q * n]);
        c[r * m * n + i * n + j] = c[r * m * n + i * n + j] + s;
    }
}

fn idx<const N: usize>(ein: &Einsum, names: [&'static str; N]) -> [Index; N] {
    names.map(|n| ein.index(n))
}

type Mkn = (usize, usize, usize);

/// A product: `C[i][j] = A[i][k] * B[k][j]` (`form` 'm'), the same with
/// `+=` ('a'), `C[i] = A[i][k] * B[k]` ('v', n = 1), or
/// `C[b][i][j] = A[b][i][k] * B[b][k][j]` ('b').
fn product_case<E: Num>(form: char, batch: usize, (m, k, n): Mkn) {
    let body = move |ein: &Einsum, t: &[Tensor<E>], _, _| {
        let [b, i, j, q] = idx(ein, ["b", "i", "j", "k"]);
        let (c, ab) = match form {
            'v' => (t[2].at([i]), t[0].at([i, q]) * t[1].at([q])),
            'b' => (t[2].at([b, i, j]), t[0].at([b, i, q]) * t[1].at([b, q, j])),
            _ => (t[2].at([i, j]), t[0].at([i, q]) * t[1].at([q, j])),
        };
        let acc = form == 'a';
        ein.run_on_gpu(|| {
            if acc {
                c.add_to(ab.clone())
            } else {
                c.set(ab.clone())
            }
        });
    };
    let reference = move |v: &mut [Vec<E>], _, _| product(v, batch, (m, k, n), form == 'a');
    let shapes: &[&[usize]] = match form {
        'v' => &[&[m, k], &[k], &[m]],
        'b' => &[&[batch, m, k], &[batch, k, n], &[batch, m, n]],
        _ => &[&[m, k], &[k, n], &[m, n]],
    };
    let kind = [
        ("matmul", 'm'),
        ("accumulate", 'a'),
        ("matvec", 'v'),
        ("batched", 'b'),
    ];
    let kind = kind.iter().find(|k| k.1 == form).expect("a form").0;
    let c = case(
        format!("{kind}_{batch}x{m}x{k}x{n}"),
        shapes,
        body,
        reference,
    );
    let reads: &[usize] = if form == 'a' { &[0, 1, 2] } else { &[0, 1] };
    c.kernel(reads, &[2]).check();
}

const SHAPES: [Mkn; 4] = [(6, 6, 6), (1, 7, 3), (13, 1, 11), (45, 3, 600)];

#[test]
fn matmul() {
    for s in SHAPES {
        product_case::<f32>('m', 1, s);
    }
    product_case::<i64>('m', 1, SHAPES[1]);
    product_case::<i64>('m', 1, SHAPES[3]);
}

#[test]
fn accumulate_into_initialised() {
    product_case::<f32>('a', 1, (6, 6, 6));
    product_case::<i32>('a', 1, (45, 3, 600));
}

#[test]
fn matvec() {
    for (m, k) in [(8, 8), (1, 5), (13, 1), (600, 45)] {
        product_case::<f32>('v', 1, (m, k, 1));
    }
    product_case::<i32>('v', 1, (1, 5, 1));
    product_case::<i32>('v', 1, (600, 45, 1));
}

#[test]
fn batched_contraction() {
    product_case::<f32>('b', 3, (5, 4, 7));
    product_case::<i32>('b', 45, (1, 2, 600));
}

#[test]
fn transpose() {
    fn transpose<E: Num>((m, n): (usize, usize)) {
        let body = |ein: &Einsum, t: &[Tensor<E>], _, _| {
            let [i, j] = idx(ein, ["i", "j"]);
            ein.run_on_gpu(|| t[1].at([j, i]).set(t[0].at([i, j])));
        };
        let reference = move |v: &mut [Vec<E>], _, _| {
            (0..m * n).for_each(|e| v[1][(e % n) * m + e / n] = v[0][e]);
        };
        let name = format!("transpose_{m}x{n}");
        let c = case(name, &[&[m, n], &[n, m]], body, reference);
        c.kernel(&[0], &[1]).check();
    }
    for shape in [(7, 7), (1, 9), (45, 600)] {
        transpose::<f32>(shape);
    }
    transpose::<i64>((5, 3));
}

/// What an elementwise right side sees: `A[i][j]`, `B[i][j]`, `i`, `j`, the scalar.
struct Ew<T, I, S> {
    a: T,
    b: T,
    i: I,
    j: I,
    s: S,
}
type Op<E> = fn(Ew<Access<E>, Index, Dyn<f32>>) -> Term<E>;
type RefOp<E> = fn(Ew<E, usize, f32>) -> E;

/// `C[i][j] = op(...)` for A, B, C m×n; the kernel reads `reads`.
fn ew<E: Num>(name: &str, (m, n): (usize, usize), reads: &[usize], op: Op<E>, r: RefOp<E>) {
    let body = move |ein: &Einsum, t: &[Tensor<E>], s, _| {
        let [i, j] = idx(ein, ["i", "j"]);
        let (a, b) = (t[0].at([i, j]), t[1].at([i, j]));
        let rhs = op(Ew { a, b, i, j, s });
        ein.run_on_gpu(|| t[2].at([i, j]).set(rhs.clone()));
    };
    let reference = move |v: &mut [Vec<E>], s, _| {
        let [a, b, c, _] = v else { unreachable!() };
        for (e, c) in c.iter_mut().enumerate() {
            let (a, b, i, j) = (a[e], b[e], e / n, e % n);
            *c = r(Ew { a, b, i, j, s });
        }
    };
    let shapes: &[&[usize]] = &[&[m, n], &[m, n], &[m, n]];
    let mut c = case(format!("{name}_{m}x{n}"), shapes, body, reference);
    c.args = vec![(3.0, 1), (-2.0, 1)];
    c.kernel(reads, &[2]).check();
}

const S: (usize, usize) = (13, 11);

#[test]
fn elementwise_arithmetic() {
    ew::<f32>("sum", S, &[0, 1], |x| x.a + x.b, |x| x.a + x.b);
    ew::<f32>("diff", S, &[0, 1], |x| x.a - x.b, |x| x.a - x.b);
    ew::<f32>("product", S, &[0, 1], |x| x.a * x.b, |x| x.a * x.b);
    ew::<f32>("neg", S, &[1], |x| -x.b, |x| -x.b);
}

#[test]
fn elementwise_values() {
    let r: RefOp<f32> = |x| 2.0 * x.a - 3.0;
    ew::<f32>("consts", S, &[0], |x| 2.0 * x.a - 3.0f32, r);
    ew::<f32>("only_const", S, &[], |_| 7.5f32.into(), |_| 7.5);
    let r: RefOp<f32> = |x| 4.0 + (x.i + x.j) as f32;
    ew::<f32>("index", S, &[], |x| 4.0f32 + x.i + x.j, r);
    ew::<f32>("scalar", S, &[0], |x| x.a * x.s + x.s, |x| x.a * x.s + x.s);
    // Everything at once, at a size with a 1 and one past the default grid.
    let all: Op<f32> = |x| {
        let diff = x.a.clone() - x.b.clone() * 2.0f32;
        -diff * (x.i * 3.0f32 + x.j) + x.a * x.b * x.s - 1.0f32
    };
    let r: RefOp<f32> =
        |x| -(x.a - x.b * 2.0) * (x.i as f32 * 3.0 + x.j as f32) + x.a * x.b * x.s - 1.0;
    ew::<f32>("all", (1, 9), &[0, 1], all, r);
    ew::<f32>("all", (45, 600), &[0, 1], all, r);
}

#[test]
fn elementwise_ints() {
    let r: RefOp<i32> = |x| 4 + (x.i + x.j) as i32 - x.a;
    ew::<i32>("index", (6, 9), &[0], |x| 4 + x.i + x.j - x.a, r);
    let all: Op<i64> = |x| -(x.a.clone() * 3i64 - x.b) * x.i + x.a;
    let r: RefOp<i64> = |x| -(x.a * 3 - x.b) * x.i as i64 + x.a;
    ew::<i64>("all", (45, 600), &[0, 1], all, r);
}

/// `B[i]` (`by` 0), `B[j]` (1) or `B[]` (2) `=` (`op` 0), `+=` (1) or `*=`
/// (2) `A[i][j]`, for A m×n.
fn reduction<E: Num>(name: &str, (m, n): (usize, usize), by: usize, op: usize) {
    let body = move |ein: &Einsum, t: &[Tensor<E>], _, _| {
        let [i, j] = idx(ein, ["i", "j"]);
        let mut lhs = match by {
            0 => t[1].at([i]),
            1 => t[1].at([j]),
            _ => t[1].at([]),
        };
        ein.run_on_gpu(|| match op {
            0 => lhs.set(t[0].at([i, j])),
            1 => lhs.add_to(t[0].at([i, j])),
            _ => lhs *= t[0].at([i, j]),
        });
    };
    let reference = move |v: &mut [Vec<E>], _, _| {
        v[1].iter_mut()
            .filter(|_| op == 0)
            .for_each(|x| *x = E::zero());
        for e in 0..m * n {
            let (o, a) = ([e / n, e % n, 0][by], v[0][e]);
            v[1][o] = if op == 2 { v[1][o] * a } else { v[1][o] + a };
        }
    };
    let out = [vec![m], vec![n], vec![]][by].clone();
    let mut c = case(format!("{name}_{m}x{n}"), &[&[m, n], &out], body, reference);
    (c.pragma, c.range) = (by < 2, if op == 2 { 2 } else { 4 });
    c.kernel(if op == 0 { &[0] } else { &[0, 1] }, &[1]).check();
}

/// Reductions by letter: `r`ow sums, `c`olumn sums, `f`ull sum, `a`dded
/// row sums, row `p`roducts, column products (`q`).
fn reductions<E: Num>(shape: (usize, usize), which: &str) {
    for w in which.chars() {
        let (name, by, op) = match w {
            'r' => ("row_sums", 0, 0),
            'c' => ("column_sums", 1, 0),
            'f' => ("full_sum", 2, 0),
            'a' => ("add_row_sums", 0, 1),
            'p' => ("row_products", 0, 2),
            _ => ("column_products", 1, 2),
        };
        reduction::<E>(name, shape, by, op);
    }
}

#[test]
fn sums() {
    reductions::<f32>((13, 11), "rcfa");
    reductions::<f32>((1, 9), "cf");
}

#[test]
fn sums_past_the_grid() {
    reductions::<f32>((45, 600), "rcf");
    reductions::<i64>((45, 600), "rf");
}

#[test]
fn products() {
    reductions::<f32>((5, 4), "p");
    reductions::<f32>((9, 1), "q");
    reductions::<f32>((3, 600), "q");
    reductions::<i64>((45, 7), "p");
}

#[test]
fn cooperative_kernel() {
    // C = A B, then D = 2 Cᵀ - 1 in the same kernel: D[j][i] needs C[i][j]
    // from another block, so the second statement waits at a grid sync.
    fn coop<E: Num>((m, k, n): Mkn) {
        let body = |ein: &Einsum, t: &[Tensor<E>], _, _| {
            let [i, j, q] = idx(ein, ["i", "j", "k"]);
            ein.run_on_gpu(|| {
                t[2].at([i, j]).set(t[0].at([i, q]) * t[1].at([q, j]));
                t[3].at([j, i]).set(t[2].at([i, j]) * E::of(2) - E::one());
            });
        };
        let reference = move |v: &mut [Vec<E>], _, _| {
            product(v, 1, (m, k, n), false);
            let [_, _, c, d] = v else { unreachable!() };
            (0..m * n).for_each(|e| d[(e % n) * m + e / n] = c[e] * E::of(2) - E::one());
        };
        let shapes: &[&[usize]] = &[&[m, k], &[k, n], &[m, n], &[n, m]];
        let mut c = case(format!("coop_{m}x{k}x{n}"), shapes, body, reference);
        c.syncs = 1;
        c.kernel(&[0, 1, 2], &[2, 3]).check();
    }
    coop::<f32>((13, 3, 11));
    coop::<i64>((45, 2, 600));
}

#[test]
fn kernels_in_sequence() {
    // B = row sums of A on the GPU; C = B W on the CPU, with W = i + 1 only
    // ever on the CPU; D = B + 2 C on the GPU.
    fn seq<E: Num>((m, n): (usize, usize)) {
        let body = |ein: &Einsum, t: &[Tensor<E>], _, _| {
            let [i, j] = idx(ein, ["i", "j"]);
            t[4].at([i]).set(i + E::one());
            ein.run_on_gpu(|| t[1].at([i]).set(t[0].at([i, j])));
            t[2].at([i]).set(t[1].at([i]) * t[4].at([i]));
            ein.run_on_gpu(|| t[3].at([i]).set(t[1].at([i]) + t[2].at([i]) * E::of(2)));
        };
        let reference = move |v: &mut [Vec<E>], _, _| {
            for r in 0..m {
                let b = (0..n).fold(E::zero(), |s, q| s + v[0][r * n + q]);
                let c = b * E::of(r as i64 + 1);
                (v[1][r], v[2][r], v[3][r]) = (b, c, b + c * E::of(2));
            }
        };
        let shapes: &[&[usize]] = &[&[m, n], &[m], &[m], &[m], &[m]];
        let c = case(format!("sequence_{m}x{n}"), shapes, body, reference);
        c.kernel(&[0], &[1]).kernel(&[1, 2], &[3]).check();
    }
    seq::<f32>((13, 5));
    seq::<i32>((600, 3));
}

#[test]
fn kernel_in_dyn_if() {
    // C = A B on the GPU when flag > 0, C = -(A B) on the CPU otherwise.
    fn branch<E: Num + std::ops::Neg<Output = E>>((m, k, n): Mkn) {
        let body = |ein: &Einsum, t: &[Tensor<E>], _, flag: Dyn<i32>| {
            let [i, j, q] = idx(ein, ["i", "j", "k"]);
            let (c, ab) = (t[2].at([i, j]), t[0].at([i, q]) * t[1].at([q, j]));
            if flag.gt(0).is_true() {
                ein.run_on_gpu(|| c.set(ab.clone()));
            } else {
                c.set(-ab);
            }
        };
        let reference = move |v: &mut [Vec<E>], _, flag| {
            product(v, 1, (m, k, n), false);
            v[2].iter_mut().filter(|_| flag <= 0).for_each(|x| *x = -*x);
        };
        let shapes: &[&[usize]] = &[&[m, k], &[k, n], &[m, n]];
        let mut c = case(format!("branch_{m}x{k}x{n}"), shapes, body, reference);
        c.args = vec![(1.0, 1), (1.0, 0), (1.0, -3)];
        c.runs_of = |flag| vec![(flag > 0) as i64];
        c.kernel(&[0, 1], &[2]).check();
    }
    branch::<f32>((5, 3, 4));
    branch::<i64>((45, 2, 600));
}

#[test]
fn kernel_in_dyn_loop() {
    // `flag` turns of B += A on the GPU; W (never on the GPU) counts them.
    let body = |ein: &Einsum, t: &[Tensor<i32>], _, flag: Dyn<i32>| {
        let [i, j] = idx(ein, ["i", "j"]);
        t[4].at([]).set(0);
        let turn = Dyn::named("turn", 0i32);
        while turn.lt(flag).is_true() {
            ein.run_on_gpu(|| t[1].at([i, j]).add_to(t[0].at([i, j])));
            t[4].at([]).add_to(1);
            turn.set(turn + 1);
        }
    };
    let reference = |v: &mut [Vec<i32>], _, flag: i32| {
        for _ in 0..flag.max(0) {
            (0..v[1].len()).for_each(|e| v[1][e] += v[0][e]);
        }
    };
    let shapes: &[&[usize]] = &[&[9, 7], &[9, 7], &[1], &[1], &[]];
    let mut c = case("loop_9x7".into(), shapes, body, reference);
    c.args = vec![(0.0, 3), (0.0, 0), (0.0, 1)];
    c.runs_of = |flag| vec![flag.max(0) as i64];
    c.kernel(&[0, 1], &[1]).check();
}

#[test]
fn index_patterns() {
    // v[i] = S[i][i] and t[] = S[i][i] (diagonal and trace) in one kernel,
    // then the outer product O[i][j] = v[i] v[j] in another.
    let body = |ein: &Einsum, t: &[Tensor<i32>], _, _| {
        let [i, j] = idx(ein, ["i", "j"]);
        ein.run_on_gpu(|| {
            t[1].at([i]).set(t[0].at([i, i]));
            t[2].at([]).set(t[0].at([i, i]));
        });
        ein.run_on_gpu(|| t[3].at([i, j]).set(t[1].at([i]) * t[1].at([j])));
    };
    let reference = |v: &mut [Vec<i32>], _, _| {
        let n = v[1].len();
        v[1] = (0..n).map(|i| v[0][i * n + i]).collect();
        v[2][0] = v[1].iter().sum();
        v[3] = (0..n * n).map(|e| v[1][e / n] * v[1][e % n]).collect();
    };
    for n in [7, 45] {
        let shapes: &[&[usize]] = &[&[n, n], &[n], &[], &[n, n]];
        let mut c = case(format!("patterns_{n}"), shapes, body, reference);
        c.syncs = 1;
        c.kernel(&[0], &[1, 2]).kernel(&[1], &[3]).check();
    }
}

/// Under prophecies, a kernel that writes only part of a tensor it does
/// not read (a repeated index on the left, `S[i][i] = v[i]`) must copy it
/// in, since the whole device buffer is copied out (the paper's scheme, and
/// ours at first, brought the other elements back as the device
/// allocation's poison).
#[test]
fn partly_written_tensor_keeps_its_other_elements() {
    let body = |ein: &Einsum, t: &[Tensor<i32>], _, _| {
        let [i] = idx(ein, ["i"]);
        ein.run_on_gpu(|| t[0].at([i, i]).set(t[1].at([i])));
    };
    let reference = |v: &mut [Vec<i32>], _, _| (0..9).for_each(|i| v[0][i * 10] = v[1][i]);
    let c = case("diagonal_write".into(), &[&[9, 9], &[9]], body, reference);
    c.kernel(&[0, 1], &[0]).check();
}

/// The same when the kernel writes a tensor on some paths only (a dyn `if`
/// inside `run_on_gpu`): the `gpu_written` history is path-insensitive, so
/// the tensor must be copied in for the paths that do not write it.
#[test]
fn tensor_written_on_some_paths_keeps_its_elements_on_the_others() {
    let body = |ein: &Einsum, t: &[Tensor<i32>], _, flag: Dyn<i32>| {
        let [i] = idx(ein, ["i"]);
        let (c, a) = (t[2].at([i]), t[0].at([i]));
        ein.run_on_gpu(|| {
            if flag.gt(0).is_true() {
                c.set(a.clone());
            }
        });
    };
    let reference = |v: &mut [Vec<i32>], _, flag: i32| {
        if flag > 0 {
            v[2] = v[0].clone();
        }
    };
    let mut c = case("some_paths".into(), &[&[9], &[1], &[9]], body, reference);
    c.args = vec![(0.0, 0), (0.0, 1)];
    c.kernel(&[0, 2], &[2]).check();
}

/// An OpenMP program's library must stay loaded after its last `Program`
/// is dropped: libgomp's idle worker threads outlive it (unloading killed
/// the process with SIGSEGV). Runs in a child process so that a failure is
/// a failed test, not a dead harness.
#[test]
fn dropping_an_openmp_program_keeps_the_process_alive() {
    if std::env::var_os("AUGUR_EINSUM_OMP_CHILD").is_none() {
        let test = "dropping_an_openmp_program_keeps_the_process_alive";
        let mut child = std::process::Command::new(std::env::current_exe().unwrap());
        child.args([test, "--exact", "--nocapture"]);
        let status = child.env("AUGUR_EINSUM_OMP_CHILD", "1").status().unwrap();
        assert!(status.success(), "the child process: {status}");
        return;
    }
    let mut config = Config::cpu();
    config.openmp = true;
    let stage = |x: Dyn<*mut f32>| {
        let ein = Einsum::new(config);
        let i = ein.index("i");
        ein.tensor_on::<f32>("v", [1000], x).at([i]).set(i * 2.0f32);
        ein.finish();
    };
    let p = compile_cpu(&Builder::new().extract("fill", stage).unwrap(), true).unwrap();
    let mut v = vec![0f32; 1000];
    // SAFETY: v holds 1000 floats.
    unsafe { (p.get())(v.as_mut_ptr()) };
    assert_eq!(v[999], 1998.0);
    drop(p);
    std::thread::sleep(std::time::Duration::from_millis(300));
}
