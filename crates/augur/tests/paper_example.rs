//! The paper's §2 example ("Prophecy Variables Predict Tensors Accessed by
//! GPU Computations"), on the CPU.
//!
//! A small tensor library is written below the way a DSL author would write
//! it: tensors live in user-supplied host buffers, each has a "device"
//! buffer carved out of one device arena, and `run_on_gpu` runs a kernel
//! with a first-stage flag saying "this code is for the GPU". Which tensors
//! to copy to the device *before* the kernel is only known once the kernel
//! has run in the first stage: each tensor's `gpu_read` prophecy predicts
//! it, and each read on the GPU requires it. Which tensors to copy back
//! *after* the kernel is a fact about the past: `gpu_written` is a history.
//!
//! The "device" is plain memory and the copies are runtime functions given
//! as C source (and as Rust twins for the interpreter), so every program is
//! compiled and run, interpreted, and compared with plain Rust that
//! simulates the host and the device, arena included: a tensor copied when
//! it should not be (or not copied when it should) shows up in the arena,
//! in the host results, or in the count of moved elements the staged
//! function returns.

mod common;

use augur::exec::compile::CompileOptions;
use augur::exec::interp::Memory;
use augur::prophecy::{CellKind, History, Prophecy};
use augur::{Builder, Dyn, ExternFn, Extracted, Interpreter, ProphecyMode, Static, Value};
use common::{count, Args, Buf, Check, HostArg, Invoke};
use std::cell::{Cell, RefCell};

// ---------------------------------------------------------------------------
// The harness for eight arguments (four host tensors, the device arena and
// three dimensions); `common` stops at four.

impl<A, B, C, D, E, F, G, H> Args for (A, B, C, D, E, F, G, H)
where
    A: HostArg,
    B: HostArg,
    C: HostArg,
    D: HostArg,
    E: HostArg,
    F: HostArg,
    G: HostArg,
    H: HostArg,
{
    fn values(&self, mem: &mut Memory) -> Vec<Value> {
        vec![
            self.0.to_value(mem),
            self.1.to_value(mem),
            self.2.to_value(mem),
            self.3.to_value(mem),
            self.4.to_value(mem),
            self.5.to_value(mem),
            self.6.to_value(mem),
            self.7.to_value(mem),
        ]
    }
    fn read_back(&mut self, mem: &Memory, vals: &[Value]) {
        self.0.read_back(mem, vals[0]);
        self.1.read_back(mem, vals[1]);
        self.2.read_back(mem, vals[2]);
        self.3.read_back(mem, vals[3]);
        self.4.read_back(mem, vals[4]);
        self.5.read_back(mem, vals[5]);
        self.6.read_back(mem, vals[6]);
        self.7.read_back(mem, vals[7]);
    }
}

impl<R, A, B, C, D, E, F, G, H> Invoke<(A, B, C, D, E, F, G, H)>
    for unsafe extern "C" fn(A::Abi, B::Abi, C::Abi, D::Abi, E::Abi, F::Abi, G::Abi, H::Abi) -> R
where
    A: HostArg,
    B: HostArg,
    C: HostArg,
    D: HostArg,
    E: HostArg,
    F: HostArg,
    G: HostArg,
    H: HostArg,
{
    type Out = R;
    unsafe fn invoke(self, a: &mut (A, B, C, D, E, F, G, H)) -> R {
        (self)(
            a.0.abi(),
            a.1.abi(),
            a.2.abi(),
            a.3.abi(),
            a.4.abi(),
            a.5.abi(),
            a.6.abi(),
            a.7.abi(),
        )
    }
}

/// Host buffers of A, B, C, D, the device arena, and M, N, O.
type Inputs = (
    Buf<f32>,
    Buf<f32>,
    Buf<f32>,
    Buf<f32>,
    Buf<f32>,
    i32,
    i32,
    i32,
);

/// A staged host pointer.
type Ptr = Dyn<*mut f32>;

/// The compiled functions' type.
type Native =
    unsafe extern "C" fn(*mut f32, *mut f32, *mut f32, *mut f32, *mut f32, i32, i32, i32) -> i32;

// ---------------------------------------------------------------------------
// The "CUDA runtime": two copy functions, in C for the compiled code and in
// Rust for the interpreter. Distinct names (rather than `memcpy`) let the
// tests count each direction in the generated C.

/// `cudaMemcpyHostToDevice`.
const TO_DEVICE: ExternFn<fn(*mut f32, *mut f32, i32)> = ExternFn::new("host_to_device");
/// `cudaMemcpyDeviceToHost`.
const TO_HOST: ExternFn<fn(*mut f32, *mut f32, i32)> = ExternFn::new("device_to_host");

const RUNTIME_C: &str = "#include <stdint.h>\n\
    void host_to_device(float *dev, float *host, int32_t n) { for (int32_t i = 0; i < n; i++) dev[i] = host[i]; }\n\
    void device_to_host(float *host, float *dev, int32_t n) { for (int32_t i = 0; i < n; i++) host[i] = dev[i]; }\n";

/// `copy(dst, src, n)` in the interpreter's memory.
fn copy_f32(mem: &mut Memory, a: &[Value]) -> augur::Result<Value> {
    let n = a[2].as_i64().expect("an int count") as usize;
    let data: Vec<f32> = mem.read_slice(a[1], n)?;
    mem.write_slice(a[0], &data)?;
    Ok(Value::Void)
}

fn runtime(it: &mut Interpreter) {
    it.register("host_to_device", copy_f32);
    it.register("device_to_host", copy_f32);
}

/// The check for programs that call the runtime, with this builder.
fn gpu_check(builder: Builder) -> Check {
    Check {
        builder,
        opts: CompileOptions {
            extra_c: vec![RUNTIME_C.to_string()],
            ..CompileOptions::default()
        },
        setup: runtime,
    }
}

// ---------------------------------------------------------------------------
// The tensor library.

/// Elements of the device arena reserved for each tensor (tensor `t` lives
/// at `t * SLOT`): the inputs keep every tensor at or under 8x8.
const SLOT: usize = 64;
/// The arena holds this many tensors.
const TENSORS: usize = 4;

/// How `run_on_gpu` decides what to move.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Policy {
    /// What the paper does: copy in what the kernel reads (a prophecy),
    /// copy out what it wrote (a history).
    Predict,
    /// The baseline without prophecies: every tensor in and out.
    CopyAll,
    /// `Predict`, with `gpu_written` a `Static<bool>` (as in the paper's
    /// C++) instead of a history. A `Static` is part of every tag, so one
    /// that changes inside the kernel's loops peels them.
    StaticWritten,
}

/// One tensor's state in the library.
struct State {
    name: &'static str,
    host: Ptr,
    dev: Ptr,
    rows: Dyn<i32>,
    cols: Dyn<i32>,
    /// Made fresh by each `run_on_gpu`, as the paper's `new prophecy_var`.
    gpu_read: Option<Prophecy<bool>>,
    gpu_written: Option<History<bool>>,
    written_static: Option<Static<bool>>,
}

/// The library's context: the tensors, where code is being generated for,
/// and how many elements the generated code moved.
struct Gpu {
    /// The paper's `current_execution_device`: a plain first-stage value.
    /// It is set and cleared in straight-line code around the kernel, and
    /// the code that reads it inside and outside the kernel is at different
    /// call paths anyway, so tags need not see it (no `Static`).
    on_gpu: Cell<bool>,
    arena: Ptr,
    /// Elements copied either way, counted by the generated code.
    moved: Dyn<i32>,
    tensors: RefCell<Vec<State>>,
    policy: Policy,
}

/// A tensor handle: what the user's code holds.
#[derive(Clone, Copy)]
struct Tensor<'g> {
    gpu: &'g Gpu,
    id: usize,
}

impl Gpu {
    fn new(arena: Ptr, policy: Policy) -> Gpu {
        Gpu {
            on_gpu: Cell::new(false),
            arena,
            moved: Dyn::new(0),
            tensors: RefCell::new(Vec::new()),
            policy,
        }
    }

    /// A `rows` x `cols` tensor in `host` (row-major); its device copy gets
    /// the next arena slot.
    fn tensor(&self, name: &'static str, host: Ptr, rows: Dyn<i32>, cols: Dyn<i32>) -> Tensor<'_> {
        let mut ts = self.tensors.borrow_mut();
        let id = ts.len();
        assert!(id < TENSORS, "the arena holds {TENSORS} tensors");
        ts.push(State {
            name,
            host,
            dev: self.arena.offset(id * SLOT),
            rows,
            cols,
            gpu_read: None,
            gpu_written: None,
            written_static: None,
        });
        Tensor { gpu: self, id }
    }

    /// Runs `kernel` "on the GPU", moving tensors in before and out after.
    /// `#[track_caller]`: the prophecies are reported as created at the
    /// user's `run_on_gpu` line.
    #[track_caller]
    fn run_on_gpu(&self, kernel: impl FnOnce()) {
        let n = self.tensors.borrow().len();
        // A plain loop over all tensors, as in the paper: one prophecy and
        // one history per tensor and per `run_on_gpu` call.
        for id in 0..n {
            let mut ts = self.tensors.borrow_mut();
            let t = &mut ts[id];
            let read = Prophecy::named(format!("{}.gpu_read", t.name), false);
            t.gpu_read = Some(read);
            t.gpu_written = Some(History::named(format!("{}.gpu_written", t.name), false));
            if self.policy == Policy::StaticWritten {
                t.written_static = Some(Static::new(false));
            }
            if self.policy == Policy::CopyAll || read.get() {
                let size = t.rows * t.cols;
                TO_DEVICE.call(t.dev, t.host, size);
                self.moved.set(self.moved + size);
            }
        }
        self.on_gpu.set(true);
        kernel();
        self.on_gpu.set(false);
        for id in 0..n {
            let mut ts = self.tensors.borrow_mut();
            let t = &mut ts[id];
            let written = match self.policy {
                Policy::CopyAll => true,
                Policy::Predict => t.gpu_written.expect("made above").get(),
                // Dropped here, as the paper resets `gpu_written = false`.
                Policy::StaticWritten => t.written_static.take().expect("made above").get(),
            };
            if written {
                let size = t.rows * t.cols;
                TO_HOST.call(t.host, t.dev, size);
                self.moved.set(self.moved + size);
            }
        }
    }
}

impl Tensor<'_> {
    /// The buffer this code touches, after the first-stage bookkeeping: on
    /// the GPU, a read requires the prediction "the kernel reads me" and a
    /// write records "the kernel wrote me".
    #[track_caller]
    fn place(self, i: Dyn<i32>, j: Dyn<i32>, write: bool) -> Dyn<f32> {
        let mut ts = self.gpu.tensors.borrow_mut();
        let t = &mut ts[self.id];
        let index = i * t.cols + j;
        if !self.gpu.on_gpu.get() {
            return t.host.at(index);
        }
        if write {
            t.gpu_written.expect("inside run_on_gpu").record(true);
            if let Some(s) = t.written_static.as_mut() {
                s.set(true);
            }
        } else {
            t.gpu_read.expect("inside run_on_gpu").require(true);
        }
        t.dev.at(index)
    }

    /// `t[i][j]`.
    #[track_caller]
    fn get(self, i: Dyn<i32>, j: Dyn<i32>) -> Dyn<f32> {
        self.place(i, j, false)
    }

    /// `t[i][j] = v`.
    #[track_caller]
    fn set(self, i: Dyn<i32>, j: Dyn<i32>, v: Dyn<f32>) {
        self.place(i, j, true).set(v);
    }

    /// `t[i][j] += v`: a read, then a write.
    #[track_caller]
    fn add(self, i: Dyn<i32>, j: Dyn<i32>, v: Dyn<f32>) {
        let old = self.get(i, j);
        self.set(i, j, old + v);
    }
}

/// `for i in 0..n` as a dyn loop, so the generated code has a real loop.
fn dyn_for(n: Dyn<i32>, mut body: impl FnMut(Dyn<i32>)) {
    let i = Dyn::new(0);
    while i.lt(n).is_true() {
        body(i);
        i.set(i + 1);
    }
}

/// `i` as a float (the einsum examples fill tensors from their indices).
fn float(i: Dyn<i32>) -> Dyn<f32> {
    i.cast::<f32>()
}

// ---------------------------------------------------------------------------
// The programs, and their plain-Rust meaning.

/// The paper's `matrix_mul`, with an unrelated tensor D used only on the
/// CPU (before the kernel, and after it, where it reads C's result back on
/// the host). Returns the number of elements moved.
#[allow(clippy::too_many_arguments)]
fn matrix_mul(
    a: Ptr,
    b: Ptr,
    c: Ptr,
    d: Ptr,
    dev: Ptr,
    m: Dyn<i32>,
    n: Dyn<i32>,
    o: Dyn<i32>,
    policy: Policy,
) -> Dyn<i32> {
    let gpu = Gpu::new(dev, policy);
    let [a, b, c, d] = tensors_on_cpu(&gpu, [a, b, c, d], m, n, o);
    // RUN_ON_GPU: the prophecies of this call are created "here".
    gpu.run_on_gpu(|| {
        dyn_for(m, |i| {
            dyn_for(o, |j| {
                dyn_for(n, |k| {
                    c.add(i, j, a.get(i, k) * b.get(k, j)); // KERNEL: C[i][j] += A[i][k] * B[k][j]
                })
            })
        })
    });
    // Back on the CPU: needs C's result on the host.
    dyn_for(m, |i| dyn_for(o, |j| d.add(i, j, c.get(i, j))));
    gpu.moved
}

/// The tensors A (m×n), B (n×o), C and D (m×o) on the host buffers, and
/// the CPU part both programs share: A[i][j] = A[i][j] + i - j;
/// B[i][j] = 4 + i + j; D *= 2.
fn tensors_on_cpu(
    gpu: &Gpu,
    [a, b, c, d]: [Ptr; 4],
    m: Dyn<i32>,
    n: Dyn<i32>,
    o: Dyn<i32>,
) -> [Tensor<'_>; 4] {
    let (a, b, c, d) = (
        gpu.tensor("A", a, m, n),
        gpu.tensor("B", b, n, o),
        gpu.tensor("C", c, m, o),
        gpu.tensor("D", d, m, o),
    );
    dyn_for(m, |i| {
        dyn_for(n, |j| a.set(i, j, a.get(i, j) + float(i) - float(j)))
    });
    dyn_for(n, |i| {
        dyn_for(o, |j| b.set(i, j, float(i) + float(j) + 4.0))
    });
    dyn_for(m, |i| dyn_for(o, |j| d.set(i, j, d.get(i, j) * 2.0)));
    [a, b, c, d]
}

/// [`matrix_mul`] as a staged closure.
#[allow(clippy::type_complexity)] // the signature is the staged function's
fn matrix_mul_staged(
    policy: Policy,
) -> impl Fn(Ptr, Ptr, Ptr, Ptr, Ptr, Dyn<i32>, Dyn<i32>, Dyn<i32>) -> Dyn<i32> + Clone {
    move |a, b, c, d, dev, m, n, o| matrix_mul(a, b, c, d, dev, m, n, o, policy)
}

/// The device, simulated: each tensor's slot in the arena, and the count of
/// moved elements.
struct Device<'a> {
    arena: &'a mut [f32],
    moved: i32,
}

impl Device<'_> {
    fn slot(&mut self, t: usize, len: usize) -> &mut [f32] {
        &mut self.arena[t * SLOT..t * SLOT + len]
    }
    fn copy_in(&mut self, t: usize, host: &[f32]) {
        self.slot(t, host.len()).copy_from_slice(host);
        self.moved += host.len() as i32;
    }
    fn copy_out(&mut self, t: usize, host: &mut [f32]) {
        host.copy_from_slice(self.slot(t, host.len()));
        self.moved += host.len() as i32;
    }
}

/// The CPU part of `matrix_mul` before the kernel.
fn cpu_prologue(a: &mut [f32], b: &mut [f32], d: &mut [f32], m: usize, n: usize, o: usize) {
    for i in 0..m {
        for j in 0..n {
            a[i * n + j] = a[i * n + j] + i as f32 - j as f32;
        }
    }
    for i in 0..n {
        for j in 0..o {
            b[i * o + j] = i as f32 + j as f32 + 4.0;
        }
    }
    for x in d.iter_mut() {
        *x *= 2.0;
    }
}

/// `c += a * b` on the arena slots 0 (A), 1 (B), 2 (C).
fn device_matmul(arena: &mut [f32], m: usize, n: usize, o: usize) {
    for i in 0..m {
        for j in 0..o {
            for k in 0..n {
                let p = arena[i * n + k] * arena[SLOT + k * o + j];
                arena[2 * SLOT + i * o + j] += p;
            }
        }
    }
}

/// The meaning of [`matrix_mul`]: which tensors move is spelled out here,
/// independently of the library.
fn matrix_mul_reference(policy: Policy) -> impl Fn(&mut Inputs) -> i32 {
    move |(a, b, c, d, arena, m, n, o)| {
        let (m, n, o) = (*m as usize, *n as usize, *o as usize);
        let (a, b, c, d) = (&mut a.0, &mut b.0, &mut c.0, &mut d.0);
        cpu_prologue(a, b, d, m, n, o);
        let mut dev = Device {
            arena: &mut arena.0,
            moved: 0,
        };
        let all = policy == Policy::CopyAll;
        // In: what the kernel reads (C too: `+=` reads it).
        dev.copy_in(0, a);
        dev.copy_in(1, b);
        dev.copy_in(2, c);
        if all {
            dev.copy_in(3, d);
        }
        device_matmul(dev.arena, m, n, o);
        // Out: what it wrote.
        if all {
            dev.copy_out(0, a);
            dev.copy_out(1, b);
        }
        dev.copy_out(2, c);
        if all {
            dev.copy_out(3, d);
        }
        for (x, y) in d.iter_mut().zip(c.iter()) {
            *x += *y;
        }
        dev.moved
    }
}

/// Two kernels in one function: `C += A * B`, then `D += C`. The first
/// reads A, B, C and writes C; the second reads C, D and writes D.
#[allow(clippy::too_many_arguments)]
fn two_kernels(
    a: Ptr,
    b: Ptr,
    c: Ptr,
    d: Ptr,
    dev: Ptr,
    m: Dyn<i32>,
    n: Dyn<i32>,
    o: Dyn<i32>,
) -> Dyn<i32> {
    let gpu = Gpu::new(dev, Policy::Predict);
    let [a, b, c, d] = tensors_on_cpu(&gpu, [a, b, c, d], m, n, o);
    gpu.run_on_gpu(|| {
        dyn_for(m, |i| {
            dyn_for(o, |j| {
                dyn_for(n, |k| c.add(i, j, a.get(i, k) * b.get(k, j)))
            })
        })
    });
    gpu.run_on_gpu(|| dyn_for(m, |i| dyn_for(o, |j| d.add(i, j, c.get(i, j)))));
    gpu.moved
}

fn two_kernels_reference((a, b, c, d, arena, m, n, o): &mut Inputs) -> i32 {
    let (m, n, o) = (*m as usize, *n as usize, *o as usize);
    let (a, b, c, d) = (&mut a.0, &mut b.0, &mut c.0, &mut d.0);
    cpu_prologue(a, b, d, m, n, o);
    let mut dev = Device {
        arena: &mut arena.0,
        moved: 0,
    };
    dev.copy_in(0, a);
    dev.copy_in(1, b);
    dev.copy_in(2, c);
    device_matmul(dev.arena, m, n, o);
    dev.copy_out(2, c);
    // Second kernel: C and D in (C again: the library does not track what
    // is still on the device), D out.
    dev.copy_in(2, c);
    dev.copy_in(3, d);
    for x in 0..m * o {
        dev.arena[3 * SLOT + x] += dev.arena[2 * SLOT + x];
    }
    dev.copy_out(3, d);
    dev.moved
}

/// Host buffers of the right sizes filled with small integers (so every
/// sum and product is exact in `f32`, whatever order or contraction the C
/// compiler picks), and an arena of sentinels.
fn inputs() -> Vec<Inputs> {
    let fill = |len: usize, seed: usize| -> Buf<f32> {
        Buf((0..len)
            .map(|x| ((x * 7 + seed * 3) % 11) as f32 - 5.0)
            .collect())
    };
    let dims = [
        (1, 1, 1),
        (2, 3, 4),
        (3, 2, 1),
        (4, 4, 4),
        (5, 3, 2),
        (1, 7, 3),
        (8, 8, 8),
        // Empty tensors: copies of nothing.
        (0, 3, 2),
        (2, 0, 3),
    ];
    dims.iter()
        .enumerate()
        .map(|(s, &(m, n, o))| {
            let (mu, nu, ou) = (m as usize, n as usize, o as usize);
            (
                fill(mu * nu, s),
                fill(nu * ou, s + 1),
                fill(mu * ou, s + 2),
                fill(mu * ou, s + 3),
                Buf(vec![-100.0 - s as f32; SLOT * TENSORS]),
                m,
                n,
                o,
            )
        })
        .collect()
}

/// Elements a `(m, n, o)` input's tensors hold: |A|, |B|, |C| (= |D|).
fn sizes(input: &Inputs) -> (i32, i32, i32) {
    let (m, n, o) = (input.5, input.6, input.7);
    (m * n, n * o, m * o)
}

/// Extracts, compiles, runs and interprets `matrix_mul` with `policy` in
/// `mode`, against the reference.
fn run_matrix_mul(name: &str, policy: Policy, mode: ProphecyMode) -> Extracted<Native> {
    gpu_check(Builder::new().prophecy_mode(mode)).run(
        name,
        matrix_mul_staged(policy),
        matrix_mul_reference(policy),
        &inputs(),
    )
}

/// The line of this file with `marker` on it.
fn line_of(marker: &str) -> u32 {
    let src = include_str!("paper_example.rs");
    let lines: Vec<usize> = src
        .lines()
        .enumerate()
        .filter(|(_, l)| l.contains(marker) && !l.contains("line_of("))
        .map(|(i, _)| i + 1)
        .collect();
    assert_eq!(lines.len(), 1, "one line marked {marker:?}");
    lines[0] as u32
}

// ---------------------------------------------------------------------------
// The tests.

/// The paper's program: the copies in and out are exactly those the kernel
/// needs, the results are the reference matmul, and `explain` says why,
/// naming the kernel's line.
#[test]
fn paper_matrix_mul_moves_what_the_kernel_uses() {
    let ex = run_matrix_mul("matrix_mul", Policy::Predict, ProphecyMode::default());
    let code = ex.c_code();
    // A, B, C in; C out; nothing for D.
    let want = |f, host: &str| (f, host.to_string());
    assert_eq!(
        copies(&code),
        [
            want("host_to_device", "arg0"),
            want("host_to_device", "arg1"),
            want("host_to_device", "arg2"),
            want("device_to_host", "arg2"),
        ],
        "{code}"
    );
    // The element count: |A| + |B| + |C| in, |C| out (checked against
    // the reference above; restated here from the sizes).
    let compiled = ex.compile_with(&gpu_check(Builder::new()).opts).unwrap();
    for mut input in inputs() {
        let (sa, sb, sc) = sizes(&input);
        // SAFETY: the function touches the buffers it gets, in bounds.
        let moved = unsafe { compiled.get().invoke(&mut input) };
        assert_eq!(moved, sa + sb + 2 * sc);
    }

    let why = ex.explain();
    let value = |name: &str| {
        why.find(name)
            .unwrap_or_else(|| panic!("no cell {name} in\n{why}"))
            .value
            .clone()
    };
    for (name, want) in [
        ("A.gpu_read", "true"),
        ("B.gpu_read", "true"),
        ("C.gpu_read", "true"),
        ("D.gpu_read", "false"),
        ("A.gpu_written", "false"),
        ("B.gpu_written", "false"),
        ("C.gpu_written", "true"),
        ("D.gpu_written", "false"),
    ] {
        assert_eq!(value(name), want, "{name} in\n{why}");
    }
    assert_eq!(why.of_kind(CellKind::Prophecy).count(), 4);
    assert_eq!(why.of_kind(CellKind::History).count(), 4);
    // Every requirement and record points at the user's expression on the
    // kernel line, not at the library: `c.add` for C (its read and its
    // write), `a.get` and `b.get` for A and B.
    let kernel = line_of("// KERNEL:");
    let src: Vec<&str> = include_str!("paper_example.rs").lines().collect();
    for (name, expr) in [
        ("A.gpu_read", "get(i, k)"),
        ("B.gpu_read", "get(k, j)"),
        ("C.gpu_read", "add(i, j"),
        ("C.gpu_written", "add(i, j"),
    ] {
        let cell = why.find(name).unwrap();
        assert_eq!(cell.joins.len(), 1, "{name}:\n{why}");
        for site in cell
            .joins
            .iter()
            .map(|j| j.location)
            .chain(cell.sites.iter().copied())
        {
            assert!(
                site.file.ends_with("paper_example.rs") && site.line == kernel,
                "{name} required at {site}, not on the kernel line {kernel}:\n{why}"
            );
            let at = &src[kernel as usize - 1][site.col as usize - 1..];
            assert!(at.starts_with(expr), "{name} required at `{at}`:\n{why}");
        }
    }
    // The cells are created at the user's `run_on_gpu` call (the statement
    // after the marker), not inside the library.
    let call = line_of("// RUN_ON_GPU:") + 1;
    for cell in &why.cells {
        assert_eq!(cell.created.line, call, "{}:\n{why}", cell.label());
    }
    let text = why.to_string();
    assert!(
        text.contains(&format!("paper_example.rs:{kernel}:")),
        "the report does not name line {kernel}:\n{text}"
    );
    println!("{text}");
}

/// Paper mode restarts at each violated prediction, collect mode once per
/// sweep; both end with the same predictions, hence the same C.
#[test]
fn paper_and_collect_modes_agree() {
    let paper = run_matrix_mul("matrix_mul", Policy::Predict, ProphecyMode::Paper);
    let collect = run_matrix_mul("matrix_mul", Policy::Predict, ProphecyMode::Collect);
    assert_eq!(paper.c_code(), collect.c_code());
    let (p, c) = (paper.stats(), collect.stats());
    println!(
        "paper: {} restarts, {} attempts, runs {:?}\ncollect: {} restarts, {} attempts, runs {:?}",
        p.prophecy_restarts,
        p.attempts,
        p.runs_per_attempt,
        c.prophecy_restarts,
        c.attempts,
        c.runs_per_attempt
    );
    assert!(c.attempts <= p.attempts);
    // Paper mode finds A, B and C one restart at a time; collect mode sees
    // all three in its first sweep.
    assert_eq!(p.prophecy_restarts, 3);
    assert_eq!(c.prophecy_restarts, 1);
    assert_eq!(p.attempts, p.prophecy_restarts + 1);
    assert_eq!(c.attempts, c.prophecy_restarts + 1);
    assert_eq!(p.runs_per_attempt.len() as u64, p.attempts);
    assert_eq!(c.runs_per_attempt.len() as u64, c.attempts);
}

/// Without prophecies, every tensor goes in and out: same host results
/// (the reference checks them), more elements moved.
#[test]
fn copy_all_baseline_moves_more() {
    let predict = run_matrix_mul("matrix_mul", Policy::Predict, ProphecyMode::default());
    let all = run_matrix_mul("copy_all", Policy::CopyAll, ProphecyMode::default());
    let code = all.c_code();
    assert_eq!(copy_counts(&code), (4, 4), "{code}");
    let opts = gpu_check(Builder::new()).opts;
    let (p, a) = (
        predict.compile_with(&opts).unwrap(),
        all.compile_with(&opts).unwrap(),
    );
    for input in inputs() {
        let (sa, sb, sc) = sizes(&input);
        let (mut i1, mut i2) = (input.clone(), input.clone());
        // SAFETY: the functions touch the buffers they get, in bounds.
        let (moved_p, moved_a) = unsafe { (p.get().invoke(&mut i1), a.get().invoke(&mut i2)) };
        assert_eq!(moved_p, sa + sb + 2 * sc);
        assert_eq!(moved_a, 2 * (sa + sb + 2 * sc));
        // Same host tensors; only the arena differs (D's slot).
        assert_eq!((&i1.0, &i1.1, &i1.2, &i1.3), (&i2.0, &i2.1, &i2.2, &i2.3));
    }
}

/// Two `run_on_gpu` calls: each makes its own prophecies, so the first
/// kernel does not copy D (only the second reads it) and the second does
/// not copy A or B.
#[test]
fn each_run_on_gpu_has_its_own_prophecies() {
    let ex =
        gpu_check(Builder::new()).run("two_kernels", two_kernels, two_kernels_reference, &inputs());
    let code = ex.c_code();
    // The copies in the order the C makes them: kernel 1 takes A, B, C
    // in and C out; kernel 2 takes C, D in and D out.
    let want = |f, host: &str| (f, host.to_string());
    assert_eq!(
        copies(&code),
        [
            want("host_to_device", "arg0"),
            want("host_to_device", "arg1"),
            want("host_to_device", "arg2"),
            want("device_to_host", "arg2"),
            want("host_to_device", "arg2"),
            want("host_to_device", "arg3"),
            want("device_to_host", "arg3"),
        ],
        "{code}"
    );

    // Two cells per name, in call order.
    let why = ex.explain();
    let values = |name: &str| -> Vec<String> {
        why.cells
            .iter()
            .filter(|c| c.name.as_deref() == Some(name))
            .map(|c| c.value.clone())
            .collect()
    };
    assert_eq!(values("A.gpu_read"), ["true", "false"], "{why}");
    assert_eq!(values("B.gpu_read"), ["true", "false"], "{why}");
    assert_eq!(values("C.gpu_read"), ["true", "true"], "{why}");
    assert_eq!(values("D.gpu_read"), ["false", "true"], "{why}");
    assert_eq!(values("C.gpu_written"), ["true", "false"], "{why}");
    assert_eq!(values("D.gpu_written"), ["false", "true"], "{why}");
    let compiled = ex.compile_with(&gpu_check(Builder::new()).opts).unwrap();
    for mut input in inputs() {
        let (sa, sb, sc) = sizes(&input);
        // SAFETY: the function touches the buffers it gets, in bounds.
        let moved = unsafe { compiled.get().invoke(&mut input) };
        assert_eq!(moved, (sa + sb + 2 * sc) + (sc + 2 * sc));
    }
}

/// The copy calls in `code`, in order, as (function, host argument): the
/// host argument names the tensor (`arg0`..`arg3` are A..D). Prototypes
/// are not calls.
fn copies(code: &str) -> Vec<(&'static str, String)> {
    code.lines()
        .filter(|l| !l.starts_with("void "))
        .filter_map(|l| {
            let (f, host_pos) = [("host_to_device", 1), ("device_to_host", 0)]
                .into_iter()
                .find(|(f, _)| l.contains(&format!("{f}(")))?;
            let args = l.split_once(&format!("{f}(")).unwrap().1;
            let host = args.split(", ").nth(host_pos).expect("three arguments");
            Some((f, host.to_string()))
        })
        .collect()
}

/// How many copies `code` makes in each direction: (in, out).
fn copy_counts(code: &str) -> (usize, usize) {
    let c = copies(code);
    let ins = c.iter().filter(|(f, _)| *f == "host_to_device").count();
    (ins, c.len() - ins)
}

/// The kernel's three loops stay three loops: `gpu_written` is recorded in
/// the innermost body, and a history is not part of any tag, so the first
/// turn looks like every other turn and nothing is peeled.
#[test]
fn kernel_loops_stay_loops() {
    let ex = run_matrix_mul("matrix_mul", Policy::Predict, ProphecyMode::default());
    let code = ex.c_code();
    // A, B, D on the CPU (two each), the kernel (three), D += C (two):
    // every one a `for`, none peeled into an `if` before a `while`.
    assert_eq!(count(&code, "for ("), 2 + 2 + 2 + 3 + 2, "{code}");
    assert_eq!(count(&code, "while ("), 0, "{code}");
    assert_eq!(count(&code, "if ("), 0, "{code}");
    // The kernel body once (the only product of two loads).
    assert_eq!(count(&code, "] * var"), 1, "{code}");
    assert_eq!(ex.stats().back_edges, 11);
}

/// With `gpu_written` a `Static<bool>` (the paper's C++), the flag is part
/// of every tag: it flips in the kernel's innermost body, so the first
/// turns of the kernel's loops are peeled (the code after the flip is
/// another program point), and C goes back to the host only on paths where
/// the kernel body ran. The extraction must still be right: BuildIt's
/// fails here, and ours did before the engine told "the same operation on
/// other variables" (a peeled turn) from a plain Rust loop. The peeled
/// nest leaves its loops from the inside, which C can only say with
/// `goto`, so this program is compiled and run but not interpreted.
#[test]
fn a_static_written_flag_peels_the_kernel_but_stays_right() {
    let opts = gpu_check(Builder::new()).opts;
    let ex = Builder::new()
        .extract("static_written", matrix_mul_staged(Policy::StaticWritten))
        .unwrap_or_else(|e| panic!("{e}"));
    let code = ex.c_code();
    let predicted = run_matrix_mul("predicted", Policy::Predict, ProphecyMode::default());
    assert!(
        count(&code, "] * var") > count(&predicted.c_code(), "] * var"),
        "peeled:\n{code}"
    );
    let compiled = ex
        .compile_with(&opts)
        .unwrap_or_else(|e| panic!("{e}\n{code}"));
    let reference = matrix_mul_reference(Policy::StaticWritten);
    for input in inputs() {
        let mut host = input.clone();
        // SAFETY: the kernel touches the buffers it is given, in bounds
        // (the arena holds every tensor's slot).
        let got = unsafe { compiled.get().invoke(&mut host) };
        let mut want = input.clone();
        let mut moved = reference(&mut want);
        // A `Static` is path-sensitive: C is copied back only on paths
        // where the kernel body ran (and so set the flag).
        let (m, n, o) = (input.5, input.6, input.7);
        if m * n * o == 0 {
            moved -= m * o;
        }
        assert_eq!(got, moved, "{input:?}\n{code}");
        assert_eq!(format!("{host:?}"), format!("{want:?}"), "{code}");
    }
}
