//! The paper's §2 example ("Prophecy Variables Predict Tensors Accessed by
//! GPU Computations"), on the CPU.
//!
//! A small tensor library (in `gpu_tensors/`) is written the way a DSL
//! author would write it: tensors live in user-supplied host buffers, each
//! has a "device" buffer carved out of one device arena, and `run_on_gpu`
//! runs a kernel with a first-stage flag saying "this code is for the GPU".
//! Which tensors to copy to the device *before* the kernel is only known
//! once the kernel has run in the first stage: each tensor's `gpu_read`
//! prophecy predicts it, and each read on the GPU requires it. Which
//! tensors to copy back *after* the kernel is a fact about the past:
//! `gpu_written` is a history.
//!
//! The "device" is plain memory and the copies are runtime functions given
//! as C source (and as Rust twins for the interpreter), so every program is
//! compiled and run, interpreted, and compared with plain Rust that
//! simulates the host and the device, arena included: a tensor copied when
//! it should not be (or not copied when it should) shows up in the arena,
//! in the host results, or in the count of moved elements the staged
//! function returns.
//!
//! This file: the paper's `matrix_mul` and what its copies, modes and loops
//! are; two kernels in one function are in `paper_example_two_kernels.rs`.

use crate::common;
use crate::gpu_tensors;

use augur::prophecy::CellKind;
use augur::{Builder, Dyn, Extracted, ProphecyMode};
use common::{count, Invoke};
use gpu_tensors::{
    copies, copy_counts, cpu_prologue, device_matmul, dyn_for, gpu_check, inputs, sizes,
    tensors_on_cpu, Device, Gpu, Inputs, Native, Policy, Ptr,
};

// ---------------------------------------------------------------------------
// The programs, and their plain-Rust meaning.

/// The paper's `matrix_mul`, with an unrelated tensor D used only on the
/// CPU (before the kernel, and after it, where it reads C's result back on
/// the host). Returns the number of elements moved.
#[allow(clippy::too_many_arguments)]
#[augur::staged]
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

/// [`matrix_mul`] as a staged closure.
#[allow(clippy::type_complexity)] // the signature is the staged function's
#[augur::staged]
fn matrix_mul_staged(
    policy: Policy,
) -> impl Fn(Ptr, Ptr, Ptr, Ptr, Ptr, Dyn<i32>, Dyn<i32>, Dyn<i32>) -> Dyn<i32> + Clone {
    move |a, b, c, d, dev, m, n, o| matrix_mul(a, b, c, d, dev, m, n, o, policy)
}

/// The meaning of [`matrix_mul`]: which tensors move is spelled out here,
/// independently of the library.
#[augur::staged]
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

/// Extracts, compiles, runs and interprets `matrix_mul` with `policy` in
/// `mode`, against the reference.
#[augur::staged]
fn run_matrix_mul(name: &str, policy: Policy, mode: ProphecyMode) -> Extracted<Native> {
    gpu_check(Builder::new().prophecy_mode(mode)).run(
        name,
        matrix_mul_staged(policy),
        matrix_mul_reference(policy),
        &inputs(),
    )
}

/// The line of this file with `marker` on it.
#[augur::staged]
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
#[augur::staged]
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
#[augur::staged]
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
#[augur::staged]
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

/// The kernel's three loops stay three loops: `gpu_written` is recorded in
/// the innermost body, and a history is not part of any tag, so the first
/// turn looks like every other turn and nothing is peeled.
#[test]
#[augur::staged]
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
#[augur::staged]
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
