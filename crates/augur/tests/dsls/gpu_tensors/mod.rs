//! The small tensor library of the paper's §2 example (`paper_example.rs`,
//! `paper_example_two_kernels.rs`): tensors in host buffers with device
//! copies in one arena, `run_on_gpu` moving what a `gpu_read` prophecy and
//! a `gpu_written` history say, the "CUDA runtime" of copy functions (C and
//! interpreter twins), the simulated device of the plain-Rust references,
//! and the harness for eight arguments.
#![allow(dead_code)]

use crate::common::{Args, Buf, Check, HostArg, Invoke};
use augur::exec::compile::CompileOptions;
use augur::exec::interp::Memory;
use augur::prophecy::{History, Prophecy};
use augur::{Builder, Dyn, ExternFn, Interpreter, Static, Value};
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
    #[augur::staged]
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
    #[augur::staged]
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
    #[augur::staged]
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
pub type Inputs = (
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
pub type Ptr = Dyn<*mut f32>;

/// The compiled functions' type.
pub type Native =
    unsafe extern "C" fn(*mut f32, *mut f32, *mut f32, *mut f32, *mut f32, i32, i32, i32) -> i32;

// ---------------------------------------------------------------------------
// The "CUDA runtime": two copy functions, in C for the compiled code and in
// Rust for the interpreter. Distinct names (rather than `memcpy`) let the
// tests count each direction in the generated C.

/// `cudaMemcpyHostToDevice`.
pub const TO_DEVICE: ExternFn<fn(*mut f32, *mut f32, i32)> = ExternFn::new("host_to_device");
/// `cudaMemcpyDeviceToHost`.
pub const TO_HOST: ExternFn<fn(*mut f32, *mut f32, i32)> = ExternFn::new("device_to_host");

pub const RUNTIME_C: &str = "#include <stdint.h>\n\
    void host_to_device(float *dev, float *host, int32_t n) { for (int32_t i = 0; i < n; i++) dev[i] = host[i]; }\n\
    void device_to_host(float *host, float *dev, int32_t n) { for (int32_t i = 0; i < n; i++) host[i] = dev[i]; }\n";

/// `copy(dst, src, n)` in the interpreter's memory.
#[augur::staged]
pub fn copy_f32(mem: &mut Memory, a: &[Value]) -> augur::Result<Value> {
    let n = a[2].as_i64().expect("an int count") as usize;
    let data: Vec<f32> = mem.read_slice(a[1], n)?;
    mem.write_slice(a[0], &data)?;
    Ok(Value::Void)
}

#[augur::staged]
pub fn runtime(it: &mut Interpreter) {
    it.register("host_to_device", copy_f32);
    it.register("device_to_host", copy_f32);
}

/// The check for programs that call the runtime, with this builder.
#[augur::staged]
pub fn gpu_check(builder: Builder) -> Check {
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
pub const SLOT: usize = 64;
/// The arena holds this many tensors.
pub const TENSORS: usize = 4;

/// How `run_on_gpu` decides what to move.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Policy {
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
pub struct State {
    pub name: &'static str,
    pub host: Ptr,
    pub dev: Ptr,
    pub rows: Dyn<i32>,
    pub cols: Dyn<i32>,
    /// Made fresh by each `run_on_gpu`, as the paper's `new prophecy_var`.
    pub gpu_read: Option<Prophecy<bool>>,
    pub gpu_written: Option<History<bool>>,
    pub written_static: Option<Static<bool>>,
}

/// The library's context: the tensors, where code is being generated for,
/// and how many elements the generated code moved.
pub struct Gpu {
    /// The paper's `current_execution_device`: a plain first-stage value.
    /// It is set and cleared in straight-line code around the kernel, and
    /// the code that reads it inside and outside the kernel is at different
    /// call paths anyway, so tags need not see it (no `Static`).
    pub on_gpu: Cell<bool>,
    pub arena: Ptr,
    /// Elements copied either way, counted by the generated code.
    pub moved: Dyn<i32>,
    pub tensors: RefCell<Vec<State>>,
    pub policy: Policy,
}

impl Gpu {
    #[augur::staged]
    pub fn new(arena: Ptr, policy: Policy) -> Gpu {
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
    #[augur::staged]
    pub fn tensor(
        &self,
        name: &'static str,
        host: Ptr,
        rows: Dyn<i32>,
        cols: Dyn<i32>,
    ) -> Tensor<'_> {
        let ts = &mut *self.tensors.borrow_mut();
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
    #[augur::staged]
    pub fn run_on_gpu(&self, kernel: impl FnOnce()) {
        let n = self.tensors.borrow().len();
        // A plain loop over all tensors, as in the paper: one prophecy and
        // one history per tensor and per `run_on_gpu` call.
        for id in 0..n {
            let ts = &mut *self.tensors.borrow_mut();
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
            let ts = &mut *self.tensors.borrow_mut();
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

/// A tensor handle: what the user's code holds.
#[derive(Clone, Copy)]
pub struct Tensor<'g> {
    pub gpu: &'g Gpu,
    pub id: usize,
}

impl Tensor<'_> {
    /// The buffer this code touches, after the first-stage bookkeeping: on
    /// the GPU, a read requires the prediction "the kernel reads me" and a
    /// write records "the kernel wrote me".
    #[track_caller]
    #[augur::staged]
    pub fn place(self, i: Dyn<i32>, j: Dyn<i32>, write: bool) -> Dyn<f32> {
        let ts = &mut *self.gpu.tensors.borrow_mut();
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
    #[augur::staged]
    pub fn get(self, i: Dyn<i32>, j: Dyn<i32>) -> Dyn<f32> {
        self.place(i, j, false)
    }

    /// `t[i][j] = v`.
    #[track_caller]
    #[augur::staged]
    pub fn set(self, i: Dyn<i32>, j: Dyn<i32>, v: Dyn<f32>) {
        self.place(i, j, true).set(v);
    }

    /// `t[i][j] += v`: a read, then a write.
    #[track_caller]
    #[augur::staged]
    pub fn add(self, i: Dyn<i32>, j: Dyn<i32>, v: Dyn<f32>) {
        let old = self.get(i, j);
        self.set(i, j, old + v);
    }
}

/// `for i in 0..n` as a dyn loop, so the generated code has a real loop.
#[augur::staged]
pub fn dyn_for(n: Dyn<i32>, mut body: impl FnMut(Dyn<i32>)) {
    let i = Dyn::new(0);
    while i.lt(n).is_true() {
        body(i);
        i.set(i + 1);
    }
}

/// `i` as a float (the einsum examples fill tensors from their indices).
#[augur::staged]
pub fn float(i: Dyn<i32>) -> Dyn<f32> {
    i.cast::<f32>()
}

// ---------------------------------------------------------------------------
// The CPU part of the programs, the simulated device, and the inputs.

/// The tensors A (m×n), B (n×o), C and D (m×o) on the host buffers, and
/// the CPU part both programs share: A[i][j] = A[i][j] + i - j;
/// B[i][j] = 4 + i + j; D *= 2.
#[augur::staged]
pub fn tensors_on_cpu(
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

/// The device, simulated: each tensor's slot in the arena, and the count of
/// moved elements.
pub struct Device<'a> {
    pub arena: &'a mut [f32],
    pub moved: i32,
}

impl Device<'_> {
    #[augur::staged]
    pub fn slot(&mut self, t: usize, len: usize) -> &mut [f32] {
        &mut self.arena[t * SLOT..t * SLOT + len]
    }
    #[augur::staged]
    pub fn copy_in(&mut self, t: usize, host: &[f32]) {
        self.slot(t, host.len()).copy_from_slice(host);
        self.moved += host.len() as i32;
    }
    #[augur::staged]
    pub fn copy_out(&mut self, t: usize, host: &mut [f32]) {
        host.copy_from_slice(self.slot(t, host.len()));
        self.moved += host.len() as i32;
    }
}

/// The CPU part of `matrix_mul` before the kernel.
#[augur::staged]
pub fn cpu_prologue(a: &mut [f32], b: &mut [f32], d: &mut [f32], m: usize, n: usize, o: usize) {
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
#[augur::staged]
pub fn device_matmul(arena: &mut [f32], m: usize, n: usize, o: usize) {
    for i in 0..m {
        for j in 0..o {
            for k in 0..n {
                let p = arena[i * n + k] * arena[SLOT + k * o + j];
                arena[2 * SLOT + i * o + j] += p;
            }
        }
    }
}

/// Host buffers of the right sizes filled with small integers (so every
/// sum and product is exact in `f32`, whatever order or contraction the C
/// compiler picks), and an arena of sentinels.
#[augur::staged]
pub fn inputs() -> Vec<Inputs> {
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
#[augur::staged]
pub fn sizes(input: &Inputs) -> (i32, i32, i32) {
    let (m, n, o) = (input.5, input.6, input.7);
    (m * n, n * o, m * o)
}

/// The copy calls in `code`, in order, as (function, host argument): the
/// host argument names the tensor (`arg0`..`arg3` are A..D). Prototypes
/// are not calls.
#[augur::staged]
pub fn copies(code: &str) -> Vec<(&'static str, String)> {
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
#[augur::staged]
pub fn copy_counts(code: &str) -> (usize, usize) {
    let c = copies(code);
    let ins = c.iter().filter(|(f, _)| *f == "host_to_device").count();
    (ins, c.len() - ins)
}
