//! Tutorial chapter 7: GPU kernels.
//!
//! A tiled matrix product: each block computes a 4 × 4 tile of `C`, staging
//! 4 × 4 tiles of `A` and `B` in shared memory between two block barriers,
//! the accumulator kept per thread across them. The CPU simulation runs it
//! with the C compiler and in the interpreter (which checks every phase for
//! races), both compared with plain Rust; the CUDA is printed.
//!
//! Run with `cargo run -p augur-staging --example tutorial_7_kernels`
//! (see `augur::tutorial::ch7_kernels`).

use augur::exec::Interpreter;
use augur::{stage::gpu, Builder, Dyn};

const N: i32 = 12;
const T: i32 = 4;

#[augur::staged]
fn main() -> augur::Result<()> {
    let ex = Builder::new().extract(
        "tiled",
        |a: Dyn<*mut f32>, b: Dyn<*mut f32>, c: Dyn<*mut f32>| {
            let tiles = N / T;
            gpu::launch((tiles * tiles) as u32, (T * T) as u32, |bid, tid| {
                let (a_s, b_s) = (
                    gpu::shared::<f32>((T * T) as u32),
                    gpu::shared::<f32>((T * T) as u32),
                );
                let (ty, tx) = (tid / T, tid % T);
                let row = bid / tiles * T + ty;
                let col = bid % tiles * T + tx;
                let acc = Dyn::new(0.0f32);
                // A plain Rust loop: each step along k is its own code.
                for k0 in (0..N).step_by(T as usize) {
                    a_s.at(tid).set(a.at(row * N + k0 + tx));
                    b_s.at(tid).set(b.at((k0 + ty) * N + col));
                    gpu::sync_threads();
                    for k in 0..T {
                        acc.set(acc + a_s.at(ty * T + k) * b_s.at(k * T + tx));
                    }
                    gpu::sync_threads();
                }
                c.at(row * N + col).set(acc);
            });
        },
    )?;
    println!("{}", ex.cuda_code("")?);

    let n = N as usize;
    let a: Vec<f32> = (0..n * n).map(|i| (i % 7) as f32 - 3.0).collect();
    let b: Vec<f32> = (0..n * n).map(|i| (i % 5) as f32 - 2.0).collect();
    let want: Vec<f32> = (0..n * n)
        .map(|e| (0..n).map(|k| a[e / n * n + k] * b[k * n + e % n]).sum())
        .collect();

    let sim = ex.simulated()?;
    let lib = sim.compile()?;
    let (mut x, mut y, mut z) = (a.clone(), b.clone(), vec![0.0f32; n * n]);
    // SAFETY: three N × N matrices.
    unsafe { lib.get()(x.as_mut_ptr(), y.as_mut_ptr(), z.as_mut_ptr()) };
    assert_eq!(z, want, "compiled simulation");

    let mut it = Interpreter::new();
    let (ap, bp, cp) = {
        let m = it.memory_mut();
        (
            m.alloc_slice(&a),
            m.alloc_slice(&b),
            m.alloc_slice(&vec![0.0f32; n * n]),
        )
    };
    sim.interpret_in(&mut it, &[ap, bp, cp])?;
    assert_eq!(
        it.memory().read_slice::<f32>(cp, n * n)?,
        want,
        "interpreter"
    );
    println!("// the simulation (C and interpreter) agrees with plain Rust");
    Ok(())
}
