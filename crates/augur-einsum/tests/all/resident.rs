//! Resident tensors (`Config::resident`): results stay on the device
//! between kernels and go out only when the CPU needs them. Each program
//! runs on the simulated GPU resident and not, and on the CPU; all leave
//! the same buffers, and the resident build moves exactly the fewest bytes.

use crate::common;

use augur::exec::Backend;
use augur::Dyn;
use augur_einsum::{Config, Einsum, Movement, Tensor};
use common::{all_equal, build, extract, run_all, run_on, seq, small, Body};

/// Bytes of one 8-float tensor.
const T: i64 = 32;

/// Runs `body` with A, B, C of 8 floats (1..=8 each) and `n` under every
/// build of `run_all` (all must leave the buffers the CPU leaves); gives
/// the resident build's and the plain prophecy build's (bytes in, bytes
/// out).
#[augur::staged]
fn run(name: &str, n: i32, body: Body<f32>) -> ((i64, i64), (i64, i64)) {
    let rs = run_all::<f32>(name, [&[8], &[8], &[8]], [seq(8), seq(8), seq(8)], n, body);
    all_equal(&rs);
    let moved = |build: &str| {
        let r = rs.iter().find(|r| r.0 == build).expect("the build");
        let c = r.2.expect("a simulated GPU build");
        (c.to_device, c.to_host)
    };
    (moved("resident"), moved("prophecy"))
}

#[augur::staged]
fn i(ein: &Einsum) -> augur_einsum::Index {
    ein.index("i")
}

#[test]
#[augur::staged]
fn an_intermediate_stays_on_the_device_between_two_kernels() {
    let (resident, plain) = run("two", 1, |ein, [a, b, c], _| {
        let i = i(ein);
        ein.run_on_gpu(|| b.at([i]).set(a.at([i]) * 2.0f32));
        ein.run_on_gpu(|| c.at([i]).set(a.at([i]) + b.at([i])));
    });
    // A goes in once; B and C come out once each, at the end.
    assert_eq!(resident, (T, 2 * T));
    // Without residency: A twice and B in; B after kernel 1, C out.
    assert_eq!(plain, (3 * T, 2 * T));
}

#[test]
#[augur::staged]
fn a_cpu_write_between_kernels_sends_the_tensor_again() {
    let (resident, _) = run("cpu_write", 1, |ein, [a, b, c], _| {
        let i = i(ein);
        ein.run_on_gpu(|| b.at([i]).set(a.at([i]) * 2.0f32));
        a.at([i]).add_to(10.0f32);
        ein.run_on_gpu(|| c.at([i]).set(a.at([i]) + b.at([i])));
    });
    // A in twice (the CPU changed it); B stays; B and C out at the end.
    assert_eq!(resident, (2 * T, 2 * T));
}

#[test]
#[augur::staged]
fn a_cpu_read_between_kernels_brings_a_result_back_once() {
    let (resident, _) = run("cpu_read", 1, |ein, [a, b, c], _| {
        let i = i(ein);
        ein.run_on_gpu(|| b.at([i]).set(a.at([i]) * 2.0f32));
        c.at([i]).set(b.at([i]) * 3.0f32);
        ein.run_on_gpu(|| a.at([i]).set(b.at([i]) + c.at([i])));
    });
    // In: A, then C (written on the CPU). Out: B when the CPU reads it,
    // A at the end; B is current on the device for kernel 2.
    assert_eq!(resident, (2 * T, 2 * T));
}

#[test]
#[augur::staged]
fn a_tensor_the_dsl_allocated_leaves_the_device_only_when_read() {
    let (resident, _) = run("owned", 1, |ein, [a, _, c], _| {
        let i = i(ein);
        let w: Tensor<f32> = ein.tensor("W", [8]);
        ein.run_on_gpu(|| w.at([i]).set(a.at([i]) * 2.0f32));
        ein.run_on_gpu(|| c.at([i]).set(w.at([i]) + a.at([i])));
    });
    // W never goes out (nobody reads it after); A in, C out.
    assert_eq!(resident, (T, T));
}

#[test]
#[augur::staged]
fn kernels_in_a_dyn_loop_move_each_tensor_once() {
    for n in [0, 1, 3] {
        let (resident, plain) = run("loop", n, |ein, [a, b, _], n| {
            let i = i(ein);
            let k = Dyn::new(0);
            while k.lt(n).is_true() {
                ein.run_on_gpu(|| b.at([i]).add_to(a.at([i])));
                k.set(k + 1);
            }
        });
        let turns = i64::from(n);
        // A and B in on the first turn, B out at the end.
        let want = if n == 0 { (0, 0) } else { (2 * T, T) };
        assert_eq!(resident, want, "n = {n}");
        assert_eq!(plain, (2 * T * turns, T * turns), "n = {n}");
    }
}

#[test]
#[augur::staged]
fn each_path_of_a_dyn_if_moves_what_it_must() {
    for n in [1, 5] {
        let (resident, _) = run("branch", n, |ein, [a, b, c], n| {
            let i = i(ein);
            if n.gt(2).is_true() {
                ein.run_on_gpu(|| b.at([i]).set(a.at([i]) * 2.0f32));
            } else {
                b.at([i]).set(a.at([i]) * 3.0f32);
            }
            ein.run_on_gpu(|| c.at([i]).set(b.at([i]) + a.at([i])));
        });
        // n > 2: A in, B stays, B and C out. Else: A and B in, C out.
        let want = if n > 2 { (T, 2 * T) } else { (2 * T, T) };
        assert_eq!(resident, want, "n = {n}");
    }
}

#[test]
#[augur::staged]
fn host_brings_a_result_back_for_code_of_your_own() {
    let (resident, _) = run("host", 1, |ein, [a, b, c], _| {
        let i = i(ein);
        ein.run_on_gpu(|| b.at([i]).set(a.at([i]) * 2.0f32));
        // Plain staged code reads B and writes C through their buffers.
        let (hb, hc) = (b.host(), c.host());
        hc.at(0).set(hb.at(7) + 100.0f32);
        ein.run_on_gpu(|| a.at([i]).set(c.at([i]) - b.at([i])));
    });
    // In: A, then C and B (host() counts as a write of each). Out: B at
    // host(), A at the end.
    assert_eq!(resident, (3 * T, 2 * T));
}

/// One step of a random program: `dst = src * 2 + other` or `dst += src`,
/// on the GPU or the CPU, under `if n > 2` or not.
#[derive(Clone, Copy, Debug)]
struct Step {
    gpu: bool,
    dst: usize,
    src: usize,
    other: usize,
    accumulate: bool,
    branch: bool,
}

thread_local! {
    /// The program `random_body` stages (a `Body` is a plain `fn`).
    static PROGRAM: std::cell::RefCell<Vec<Step>> = const { std::cell::RefCell::new(Vec::new()) };
}

#[augur::staged]
fn random_body(ein: &Einsum, ts: &[Tensor<f32>; 3], n: Dyn<i32>) {
    let i = i(ein);
    let steps = PROGRAM.with(|p| p.borrow().clone());
    for s in steps {
        let (dst, src, other) = (&ts[s.dst], &ts[s.src], &ts[s.other]);
        let statement = || {
            if s.accumulate {
                dst.at([i]).add_to(src.at([i]));
            } else {
                dst.at([i]).set(src.at([i]) * 2.0f32 + other.at([i]));
            }
        };
        let run = || {
            if s.gpu {
                ein.run_on_gpu(statement);
            } else {
                statement();
            }
        };
        if s.branch {
            if n.gt(2).is_true() {
                run();
            }
        } else {
            run();
        }
    }
}

/// Random sequences of kernels and CPU statements over A, B, C (some under
/// a dyn `if`; `AUGUR_RESIDENT_CASES` for more than 60), for `n` on either
/// side of it: every build leaves the
/// buffers the CPU leaves, and the resident build moves no more bytes in
/// either direction than plain prophecies.
#[test]
#[augur::staged]
fn random_programs_leave_what_the_cpu_leaves() {
    let mut x = 0x5851_f42d_4c95_7f2du64;
    let mut draw = move |k: usize| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x % k as u64) as usize
    };
    let cases = std::env::var("AUGUR_RESIDENT_CASES")
        .ok()
        .and_then(|s| s.parse().ok());
    for case in 0..cases.unwrap_or(60) {
        let steps: Vec<Step> = (0..2 + draw(5))
            .map(|_| Step {
                gpu: draw(3) > 0,
                dst: draw(3),
                src: draw(3),
                other: draw(3),
                accumulate: draw(3) == 0,
                branch: draw(4) == 0,
            })
            .collect();
        check_program(case, &steps);
    }
}

/// Builds `steps` (staged by `random_body`) for the CPU, with prophecies
/// and resident, and checks that all leave the CPU's buffers.
#[augur::staged]
fn check_program(case: usize, steps: &[Step]) {
    PROGRAM.with(|p| *p.borrow_mut() = steps.to_vec());
    let plain = small(Movement::Prophecy);
    let resident = Config {
        resident: true,
        ..plain
    };
    // The JIT only: a C compile per program would dominate.
    let make = |config: Config| {
        let ex = extract::<f32>(
            &format!("random_{case}"),
            config,
            [&[8], &[8], &[8]],
            |e, t, n| random_body(e, t, n),
        )
        .unwrap_or_else(|e| panic!("case {case} under {config:?}: {e}\n{steps:?}"));
        build(&ex, config, Backend::Jit).unwrap_or_else(|e| panic!("case {case}: {e}"))
    };
    let builds = [make(Config::cpu()), make(plain), make(resident)];
    for n in [1, 5] {
        let what = format!("case {case}, n {n}: {steps:?}");
        let init = [seq(8), seq(8), seq(8)];
        let out: Vec<_> = builds.iter().map(|p| run_on(p, &init, n)).collect();
        assert_eq!(out[1], out[0], "prophecy differs from the CPU: {what}");
        assert_eq!(out[2], out[0], "resident differs from the CPU: {what}");
        // Bytes are not compared: every kernel here is staged from one
        // line, and a prophecy is told apart by its creation point, so
        // kernels on different paths may share one (conservative in
        // both builds, differently).
    }
}

/// Kernels under several dyn `if`s: paths with different residency facts
/// reached one launch, and a memo link joined them in the middle of its
/// body, which split the launch (an extraction error, found by the random
/// test's case 109 at 1,500 cases). A kernel's body now keys its
/// operations by the launch it was entered by.
#[test]
#[augur::staged]
fn kernels_under_several_dyn_ifs() {
    let step = |gpu, dst, src, other, accumulate, branch| Step {
        gpu,
        dst,
        src,
        other,
        accumulate,
        branch,
    };
    let steps = [
        step(true, 2, 1, 1, false, true),
        step(true, 0, 2, 2, true, true),
        step(false, 2, 0, 0, false, false),
        step(true, 0, 2, 0, true, true),
        step(true, 2, 0, 2, false, false),
        step(true, 2, 2, 1, false, false),
    ];
    check_program(109, &steps);
}
