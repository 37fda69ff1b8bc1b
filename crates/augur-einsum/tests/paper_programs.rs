//! The paper's benchmark programs, on the CPU and on the CPU-simulated GPU,
//! under every data-movement strategy: results against plain Rust, bytes
//! moved against what each strategy must move.

use augur_einsum::programs::{Accumulate, Benchmark, Kind};
use augur_einsum::{compile_cpu, compile_simulated, Movement};

fn inputs(b: &Benchmark) -> (Vec<f32>, Vec<f32>) {
    let [xs, ys, _] = b.kind.shapes(b.sizes);
    let x = (0..xs.iter().product::<usize>())
        .map(|v| ((v * 7 + 3) % 11) as f32 - 5.0)
        .collect();
    let y = (0..ys.iter().product::<usize>())
        .map(|v| ((v * 5 + 1) % 13) as f32 * 0.5)
        .collect();
    (x, y)
}

fn run(b: &Benchmark, iterations: i32) -> (Vec<f32>, augur_einsum::Counters) {
    let ex = b
        .extract()
        .unwrap_or_else(|e| panic!("{}: {e}", b.function_name()));
    let p = if b.gpu {
        compile_simulated(&ex)
    } else {
        compile_cpu(&ex, false)
    }
    .unwrap();
    let (mut x, mut y) = inputs(b);
    let zlen: usize = b.kind.shapes(b.sizes)[2].iter().product();
    let mut z = vec![f32::NAN; zlen];
    p.reset().unwrap();
    // SAFETY: the buffers hold the shapes' element counts.
    unsafe { (p.get())(x.as_mut_ptr(), y.as_mut_ptr(), z.as_mut_ptr(), iterations) };
    (z, p.counters().unwrap())
}

#[test]
fn every_strategy_computes_the_product_and_moves_what_it_must() {
    for kind in [Kind::MatMul, Kind::MatVec] {
        for sizes in [(4, 4, 4), (5, 7, 3), (1, 9, 2)] {
            for accumulate in [Accumulate::No, Accumulate::Yes] {
                for (movement, gpu) in Movement::ALL
                    .map(|m| (m, true))
                    .into_iter()
                    .chain([(Movement::Prophecy, false)])
                {
                    let b = Benchmark {
                        kind,
                        sizes,
                        movement,
                        accumulate,
                        gpu,
                    };
                    let (z, c) = run(&b, 3);
                    let (x, y) = inputs(&b);
                    assert_eq!(z, b.reference(&x, &y, 3), "{}", b.function_name());
                    assert_eq!(
                        c.moved(),
                        3 * b.expected_bytes_per_turn(),
                        "{}: {c:?}",
                        b.function_name()
                    );
                    assert_eq!(c.timed, 3);
                }
            }
        }
    }
}

/// The same programs in augur's interpreter (no C compiler; every access
/// bounds-checked): same results, same bytes, and every buffer the runtime
/// allocated is freed.
#[test]
fn the_interpreter_agrees_and_nothing_leaks() {
    use augur_einsum::SimInterpreter;
    for kind in [Kind::MatMul, Kind::MatVec] {
        for accumulate in [Accumulate::No, Accumulate::Yes] {
            let modes = Movement::ALL.map(|m| (m, true));
            for (movement, gpu) in modes.into_iter().chain([(Movement::Prophecy, false)]) {
                let b = Benchmark {
                    kind,
                    sizes: (5, 7, 3),
                    movement,
                    accumulate,
                    gpu,
                };
                let ex = b.extract().unwrap().simulated().unwrap();
                let mut it = SimInterpreter::new();
                let (x, y) = inputs(&b);
                let zlen: usize = b.kind.shapes(b.sizes)[2].iter().product();
                let mem = it.interp.memory_mut();
                let args = [
                    mem.alloc_slice(&x),
                    mem.alloc_slice(&y),
                    mem.alloc_slice(&vec![f32::NAN; zlen]),
                    2i32.into(),
                ];
                ex.interpret_in(&mut it.interp, &args)
                    .unwrap_or_else(|e| panic!("{}: {e}", b.function_name()));
                let z: Vec<f32> = it.interp.memory().read_slice(args[2], zlen).unwrap();
                assert_eq!(z, b.reference(&x, &y, 2), "{}", b.function_name());
                let c = it.counters();
                assert_eq!(
                    c.moved(),
                    2 * b.expected_bytes_per_turn(),
                    "{}",
                    b.function_name()
                );
                assert_eq!(c.timed, 2);
                assert_eq!(it.live_buffers(), 0, "{} leaks", b.function_name());
            }
        }
    }
}
