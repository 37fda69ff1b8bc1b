//! The paper's §2 example with two kernels in one function (`C += A * B`,
//! then `D += C`): each `run_on_gpu` makes its own prophecies and
//! histories, so each kernel moves only the tensors it uses. The tensor
//! library is in `gpu_tensors/`; the program is compiled and run,
//! interpreted, and compared with plain Rust that simulates the device.

use crate::common;
use crate::gpu_tensors;

use augur::{Builder, Dyn};
use common::Invoke;
use gpu_tensors::{
    copies, cpu_prologue, device_matmul, dyn_for, gpu_check, inputs, sizes, tensors_on_cpu, Device,
    Gpu, Inputs, Policy, Ptr, SLOT,
};

/// Two kernels in one function: `C += A * B`, then `D += C`. The first
/// reads A, B, C and writes C; the second reads C, D and writes D.
#[allow(clippy::too_many_arguments)]
#[augur::staged]
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

#[augur::staged]
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

/// Two `run_on_gpu` calls: each makes its own prophecies, so the first
/// kernel does not copy D (only the second reads it) and the second does
/// not copy A or B.
#[test]
#[augur::staged]
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
