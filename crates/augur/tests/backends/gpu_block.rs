//! What block-level GPU kernels need: shared memory, block barriers and
//! atomics. Each kernel runs in the CPU simulation (compiled C and the
//! interpreter, whose race check watches every phase) and is compared with
//! plain Rust; its CUDA compiles to PTX with nvcc. Inputs are small
//! integers held in floats, so every sum is exact whatever its order.

use augur::exec::{Backend, CompileOptions, Interpreter};
use augur::stage::gpu;
use augur::{Builder, Dyn, Error, Extracted};

/// The simulation of `ex` run by the interpreter on `bufs` (allocated from
/// the slices), returning the buffers afterwards.
#[augur::staged]
fn interpret_f32(ex: &Extracted<impl Copy>, bufs: &[&[f32]], extra: &[i64]) -> Vec<Vec<f32>> {
    let sim = ex.simulated().expect("simulation");
    let mut interp = Interpreter::new();
    let ptrs: Vec<_> = bufs
        .iter()
        .map(|b| interp.memory_mut().alloc_slice(b))
        .collect();
    let mut args = ptrs.clone();
    args.extend(extra.iter().map(|&k| augur::Value::I64(k)));
    sim.interpret_in(&mut interp, &args)
        .unwrap_or_else(|e| panic!("interpreting the simulation: {e}\n{}", sim.c_code()));
    ptrs.iter()
        .zip(bufs)
        .map(|(&p, b)| interp.memory().read_slice(p, b.len()).unwrap())
        .collect()
}

/// The CUDA of `ex` compiles to PTX with one entry per kernel name given.
#[augur::staged]
fn compiles_to_ptx(ex: &Extracted<impl Copy>, kernels: &[&str]) -> String {
    let cu = ex.cuda_code("").expect("CUDA");
    let ptx = augur::exec::cuda::Nvcc::find_or_install()
        .expect("nvcc")
        .ptx(&cu, "sm_80")
        .unwrap_or_else(|e| panic!("nvcc: {e}\n{cu}"));
    for k in kernels {
        assert_eq!(ptx.matches(&format!(".entry {k}")).count(), 1, "{ptx}");
    }
    cu
}

const N: i32 = 32;
const TILE: i32 = 8;

/// `C = A B` for `N × N` matrices, one thread per element of `C`, in
/// `TILE × TILE` blocks that stage tiles of `A` and `B` in shared memory.
/// The tile loop is a dyn loop over `tiles` (uniform: every thread takes
/// it alike), so the accumulator lives across barriers in a host loop.
type MatmulFn = unsafe extern "C" fn(*mut f32, *mut f32, *mut f32, i64);

#[augur::staged]
fn tiled_matmul() -> Extracted<MatmulFn> {
    Builder::new()
        .extract(
            "tiled",
            |a: Dyn<*mut f32>, b: Dyn<*mut f32>, c: Dyn<*mut f32>, tiles: Dyn<i64>| {
                let per_row = (N / TILE) as u32;
                gpu::launch(per_row * per_row, (TILE * TILE) as u32, |bid, tid| {
                    let a_s = gpu::shared::<f32>((TILE * TILE) as u32);
                    let b_s = gpu::shared::<f32>((TILE * TILE) as u32);
                    let (ty, tx) = (tid / TILE, tid % TILE);
                    let row = (bid / (N / TILE)) * TILE + ty;
                    let col = (bid % (N / TILE)) * TILE + tx;
                    let acc = Dyn::new(0.0f32);
                    let t = Dyn::new(0i64);
                    while t.lt(tiles).is_true() {
                        let k0 = t.cast::<i32>() * TILE;
                        a_s.at(tid).set(a.at(row * N + k0 + tx));
                        b_s.at(tid).set(b.at((k0 + ty) * N + col));
                        gpu::sync_threads();
                        for k in 0..TILE {
                            acc.set(acc + a_s.at(ty * TILE + k) * b_s.at(k * TILE + tx));
                        }
                        gpu::sync_threads();
                        t.set(t + 1);
                    }
                    c.at(row * N + col).set(acc);
                });
            },
        )
        .unwrap()
}

#[augur::staged]
fn inputs() -> (Vec<f32>, Vec<f32>) {
    let n = N as usize;
    let a = (0..n * n).map(|i| ((i * 7) % 5) as f32 - 2.0).collect();
    let b = (0..n * n).map(|i| ((i * 3) % 7) as f32 - 3.0).collect();
    (a, b)
}

#[augur::staged]
fn matmul_ref(a: &[f32], b: &[f32]) -> Vec<f32> {
    let n = N as usize;
    let mut c = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..n {
            c[i * n + j] = (0..n).map(|k| a[i * n + k] * b[k * n + j]).sum();
        }
    }
    c
}

#[test]
#[augur::staged]
fn tiled_matmul_in_shared_memory_matches_rust() {
    let ex = tiled_matmul();
    let (a, b) = inputs();
    let want = matmul_ref(&a, &b);
    let zero = vec![0.0f32; (N * N) as usize];
    // The interpreter: every phase race-checked, every read initialised.
    let out = interpret_f32(&ex, &[&a, &b, &zero], &[(N / TILE) as i64]);
    assert_eq!(out[2], want);
    // Compiled C and the JIT, both of the simulation.
    let sim = ex.simulated().unwrap();
    for backend in [Backend::C, Backend::Jit] {
        let lib = sim
            .compile_with(&CompileOptions::default().with_backend(backend))
            .unwrap();
        let (mut a, mut b, mut c) = (a.clone(), b.clone(), zero.clone());
        // SAFETY: three N × N matrices and the tile count that covers them.
        unsafe {
            lib.get()(
                a.as_mut_ptr(),
                b.as_mut_ptr(),
                c.as_mut_ptr(),
                (N / TILE) as i64,
            )
        };
        assert_eq!(c, want, "{backend:?}");
    }
    // Fewer tiles than the matrix has: the partial products, exactly.
    let half = interpret_f32(&ex, &[&a, &b, &zero], &[2]);
    let n = N as usize;
    for (i, got) in half[2].iter().enumerate() {
        let (r, c) = (i / n, i % n);
        let want: f32 = (0..16).map(|k| a[r * n + k] * b[k * n + c]).sum();
        assert_eq!(*got, want, "element {i}");
    }
    let cu = compiles_to_ptx(&ex, &["tiled_k0"]);
    assert!(cu.contains("__syncthreads()"), "{cu}");
    // Two tiles of 64 floats per block.
    assert!(cu.contains("tiled_k0<<<16, 64, 512>>>("), "{cu}");
}

#[test]
#[augur::staged]
fn block_sum_by_tree_reduction() {
    const BLOCK: i32 = 64;
    let ex = Builder::new()
        .extract("block_sum", |x: Dyn<*mut f32>, sums: Dyn<*mut f32>| {
            gpu::launch(4, BLOCK as u32, |bid, tid| {
                let part = gpu::shared::<f32>(BLOCK as u32);
                part.at(tid).set(x.at(bid * BLOCK + tid));
                gpu::sync_threads();
                let mut stride = BLOCK / 2;
                while stride > 0 {
                    if tid.lt(stride).is_true() {
                        part.at(tid).set(part.at(tid) + part.at(tid + stride));
                    }
                    gpu::sync_threads();
                    stride /= 2;
                }
                if tid.eq(0).is_true() {
                    sums.at(bid).set(part.at(0));
                }
            });
        })
        .unwrap();
    let x: Vec<f32> = (0..4 * BLOCK).map(|i| (i % 9) as f32).collect();
    let want: Vec<f32> = x.chunks(BLOCK as usize).map(|c| c.iter().sum()).collect();
    let out = interpret_f32(&ex, &[&x, &[0.0; 4]], &[]);
    assert_eq!(out[1], want);
    let sim = ex.simulated().unwrap().compile().unwrap();
    let (mut xs, mut sums) = (x.clone(), vec![0.0f32; 4]);
    // SAFETY: 4 blocks of 64 inputs, 4 sums.
    unsafe { sim.get()(xs.as_mut_ptr(), sums.as_mut_ptr()) };
    assert_eq!(sums, want);
    compiles_to_ptx(&ex, &["block_sum_k0"]);
}

#[test]
fn atomics_count_into_shared_bins() {
    // Integer, unsigned and float bins, each updated by every thread.
    let ex = Builder::new()
        .extract(
            "histo",
            |x: Dyn<*mut i32>, bins: Dyn<*mut i64>, total: Dyn<*mut u32>, sum: Dyn<*mut f32>| {
                gpu::launch(3, 32, |bid, tid| {
                    let v = x.at(bid * 32 + tid);
                    gpu::atomic_add(bins.at(v).addr(), 1i64);
                    gpu::atomic_add(total, 1u32);
                    let old = gpu::atomic_add(sum, v.cast::<f32>());
                    // The old value is a real result: at least zero.
                    let _ = old;
                });
            },
        )
        .unwrap();
    let x: Vec<i32> = (0..96).map(|i| (i * 5) % 8).collect();
    let mut want = vec![0i64; 8];
    for &v in &x {
        want[v as usize] += 1;
    }
    let want_sum: f32 = x.iter().map(|&v| v as f32).sum();
    // A loop nest runs atomics as they are: the original, with C and the JIT.
    for backend in [Backend::C, Backend::Jit] {
        let lib = ex
            .compile_with(&CompileOptions::default().with_backend(backend))
            .unwrap();
        let (mut xs, mut bins, mut total, mut sum) = (x.clone(), vec![0i64; 8], 0u32, 0.0f32);
        // SAFETY: 96 inputs in 0..8, 8 bins, one counter, one sum.
        unsafe { lib.get()(xs.as_mut_ptr(), bins.as_mut_ptr(), &mut total, &mut sum) };
        assert_eq!(
            (bins, total, sum),
            (want.clone(), 96, want_sum),
            "{backend:?}"
        );
    }
    // The interpreter's race check lets atomic updates of one element pass.
    let sim = ex.simulated().unwrap();
    let mut interp = Interpreter::new();
    let m = interp.memory_mut();
    let (xp, bp, tp, sp) = (
        m.alloc_slice(&x),
        m.alloc_slice(&[0i64; 8]),
        m.alloc_slice(&[0u32]),
        m.alloc_slice(&[0.0f32]),
    );
    sim.interpret_in(&mut interp, &[xp, bp, tp, sp]).unwrap();
    let m = interp.memory();
    assert_eq!(m.read_slice::<i64>(bp, 8).unwrap(), want);
    assert_eq!(m.read_slice::<u32>(tp, 1).unwrap(), [96]);
    assert_eq!(m.read_slice::<f32>(sp, 1).unwrap(), [want_sum]);
    let cu = compiles_to_ptx(&ex, &["histo_k0"]);
    assert!(cu.contains("atomicAdd((unsigned long long *)p"), "{cu}");
}

/// Shared memory read where another thread wrote it, with no barrier in
/// between: the interpreter names the race (thread 0 writes, the others
/// read), or the read of what no thread has written yet.
#[test]
#[augur::staged]
fn a_missing_barrier_is_an_error() {
    let run = |racy: fn(Dyn<i32>, Dyn<*mut i32>, Dyn<*mut i32>)| {
        let ex = Builder::new()
            .extract("racy", move |x: Dyn<*mut i32>| {
                gpu::launch(1, 4, move |_bid, tid| racy(tid, gpu::shared::<i32>(4), x));
            })
            .unwrap();
        let sim = ex.simulated().unwrap();
        let mut interp = Interpreter::new();
        let x = interp.memory_mut().alloc_slice(&[0i32; 4]);
        sim.interpret_in(&mut interp, &[x]).unwrap_err().to_string()
    };
    let err = run(|tid, s, x| {
        if tid.eq(0).is_true() {
            s.at(0).set(7);
        }
        x.at(tid).set(s.at(0));
    });
    assert!(err.contains("tid = 0") && err.contains("tid = 1"), "{err}");
    let err = run(|tid, s, x| {
        s.at(tid).set(tid);
        x.at(tid).set(s.at(3 - tid));
    });
    assert!(err.contains("uninitialized"), "{err}");
}

#[test]
#[augur::staged]
fn block_level_misuse_is_an_error_at_its_line() {
    // A barrier some threads of a block skip.
    let err = Builder::new()
        .extract("skip", |x: Dyn<*mut i32>| {
            gpu::launch(1, 4, |_bid, tid| {
                if tid.lt(2).is_true() {
                    gpu::sync_threads();
                }
                x.at(tid).set(tid);
            });
        })
        .unwrap()
        .simulated()
        .unwrap_err();
    assert!(matches!(err, Error::Kernel { .. }), "{err}");
    assert!(
        err.to_string().contains("threads may take differently"),
        "{err}"
    );
    // The CUDA backend refuses it too: on a GPU it would hang.
    let err = Builder::new()
        .extract("skip", |x: Dyn<*mut i32>| {
            gpu::launch(2, 4, |bid, tid| {
                // A block barrier under a condition on the block is fine.
                if bid.lt(1).is_true() {
                    gpu::sync_threads();
                }
                if tid.lt(2).is_true() {
                    gpu::sync_threads();
                }
                x.at(tid).set(tid);
            });
        })
        .unwrap()
        .cuda_code("")
        .unwrap_err()
        .to_string();
    assert!(err.contains("threads may take differently"), "{err}");
    // A grid sync under a condition on the block is not.
    let err = Builder::new()
        .extract("grid", |x: Dyn<*mut i32>| {
            gpu::launch(2, 4, |bid, tid| {
                x.at(bid * 4 + tid).set(tid);
                if bid.lt(1).is_true() {
                    gpu::grid_sync();
                }
                x.at(bid * 4 + tid).set(bid);
            });
        })
        .unwrap()
        .cuda_code("")
        .unwrap_err()
        .to_string();
    assert!(err.contains("threads may take differently"), "{err}");
    // A value computed per block for the control flow around a block
    // barrier, used again after a grid sync: the simulation keeps no
    // per-block values across grid syncs, and says so.
    let ex = Builder::new()
        .extract("kept", |x: Dyn<*mut i32>| {
            gpu::launch(2, 4, |bid, tid| {
                let turns = Dyn::new(bid + 1);
                let t = Dyn::new(0);
                while t.lt(turns).is_true() {
                    gpu::sync_threads();
                    t.set(t + 1);
                }
                gpu::grid_sync();
                x.at(bid * 4 + tid).set(turns);
            });
        })
        .unwrap();
    compiles_to_ptx(&ex, &["kept_k0"]);
    let err = ex.simulated().unwrap_err().to_string();
    assert!(err.contains("used again after a grid sync"), "{err}");

    // Shared memory outside a launch.
    let ex = Builder::new()
        .extract("outside", |x: Dyn<*mut i32>| {
            let s = gpu::shared::<i32>(4);
            x.at(0).set(s.at(0));
        })
        .unwrap();
    let err = ex.simulated().unwrap_err().to_string();
    assert!(err.contains("shared outside a GPU launch"), "{err}");
    let err = ex.cuda_code("").unwrap_err().to_string();
    assert!(err.contains("shared outside a GPU launch"), "{err}");

    // More shared memory than a block has.
    let line = line!() + 4;
    let err = Builder::new()
        .extract("big", |x: Dyn<*mut f64>| {
            gpu::launch(1, 1, |_bid, _tid| {
                let s = gpu::shared::<f64>(7000);
                x.at(0).set(s.at(0));
            });
        })
        .unwrap_err();
    let text = err.to_string();
    assert!(text.contains("49152 bytes"), "{text}");
    assert!(text.contains(&format!("gpu_block.rs:{line}")), "{text}");

    // A loop nest cannot run a kernel that meets at a barrier.
    let ex = tiled_matmul();
    let err = match ex.compile() {
        Ok(_) => panic!("compiled a kernel with barriers as a loop nest"),
        Err(e) => e.to_string(),
    };
    assert!(err.contains("simulation"), "{err}");
}

/// Barriers inside a loop whose trip count depends on the block (each
/// block walks its own tiles: 3 for block 0, 2 for block 1), which CUDA
/// allows: every thread of a block takes it alike. The simulation runs
/// each block's phases in turn, so the loop runs once per block.
#[test]
#[augur::staged]
fn barriers_in_a_loop_over_a_blocks_tiles() {
    const T: i32 = 4;
    let ex = Builder::new()
        .extract("tiles", |x: Dyn<*mut i32>, tiles: Dyn<i32>| {
            gpu::launch(2, T as u32, |bid, tid| {
                let s = gpu::shared::<i32>(T as u32);
                let tile = Dyn::new(bid);
                while tile.lt(tiles).is_true() {
                    s.at(tid).set(x.at(tile * T + tid));
                    gpu::sync_threads();
                    x.at(tile * T + tid).set(s.at(T - 1 - tid) * 10);
                    gpu::sync_threads();
                    tile.set(tile + 2);
                }
            });
        })
        .unwrap();
    let x: Vec<i32> = (0..20).collect();
    let want: Vec<i32> = x
        .chunks(T as usize)
        .flat_map(|c| c.iter().rev().map(|v| v * 10))
        .collect();
    let sim = ex.simulated().unwrap();
    let mut interp = Interpreter::new();
    let p = interp.memory_mut().alloc_slice(&x);
    sim.interpret_in(&mut interp, &[p, 5i32.into()]).unwrap();
    assert_eq!(interp.memory().read_slice::<i32>(p, 20).unwrap(), want);
    let lib = sim.compile().unwrap();
    let mut xs = x.clone();
    // SAFETY: 5 tiles of 4 ints.
    unsafe { lib.get()(xs.as_mut_ptr(), 5) };
    assert_eq!(xs, want);
    compiles_to_ptx(&ex, &["tiles_k0"]);
}

/// A loop around barriers that tests at its bottom (`if (tile >= n)
/// break;` after the turn's work, the shape a rotated `while` takes): the
/// exit is control flow around the barriers, so the simulation runs it
/// once per block, never inside a phase's loop over threads (where the
/// `break` would leave that loop instead: the interpreter stopped there,
/// and compiled C ran on past the last tile). With a grid sync after the
/// loop the same exit leaves the stretch's loop over blocks.
#[test]
#[augur::staged]
fn a_loop_that_exits_at_its_bottom_around_barriers() {
    const T: i32 = 4;
    for grid_sync in [false, true] {
        let ex = Builder::new()
            .extract("bottom", |x: Dyn<*mut i32>, tiles: Dyn<i32>| {
                gpu::launch(2, T as u32, |bid, tid| {
                    let s = gpu::shared::<i32>(T as u32);
                    let tile = Dyn::new(bid);
                    if tile.lt(tiles).is_true() {
                        loop {
                            s.at(tid).set(x.at(tile * T + tid));
                            gpu::sync_threads();
                            x.at(tile * T + tid).set(s.at(T - 1 - tid) * 10);
                            gpu::sync_threads();
                            tile.set(tile + 2);
                            if tile.ge(tiles).is_true() {
                                break;
                            }
                        }
                    }
                    if grid_sync {
                        gpu::grid_sync();
                    }
                });
            })
            .unwrap();
        let x: Vec<i32> = (0..20).collect();
        let want: Vec<i32> = x
            .chunks(T as usize)
            .flat_map(|c| c.iter().rev().map(|v| v * 10))
            .collect();
        let sim = ex.simulated().unwrap();
        let ir = sim.ir().to_string();
        let mut interp = Interpreter::new();
        let p = interp.memory_mut().alloc_slice(&x);
        sim.interpret_in(&mut interp, &[p, 5i32.into()])
            .unwrap_or_else(|e| panic!("grid sync {grid_sync}: {e}\n{ir}"));
        assert_eq!(interp.memory().read_slice::<i32>(p, 20).unwrap(), want);
        let lib = sim.compile().unwrap();
        let mut xs = x.clone();
        // SAFETY: 5 tiles of 4 ints.
        unsafe { lib.get()(xs.as_mut_ptr(), 5) };
        assert_eq!(xs, want, "grid sync {grid_sync}");
    }
}

/// Blocks run at once: two blocks writing one element race, barriers or not.
#[test]
#[augur::staged]
fn blocks_writing_one_element_race() {
    let ex = Builder::new()
        .extract("clash", |x: Dyn<*mut i32>| {
            gpu::launch(2, 2, |bid, tid| {
                x.at(tid).set(bid);
                gpu::sync_threads();
            });
        })
        .unwrap();
    let sim = ex.simulated().unwrap();
    let mut interp = Interpreter::new();
    let p = interp.memory_mut().alloc_slice(&[0i32; 2]);
    let err = sim.interpret_in(&mut interp, &[p]).unwrap_err().to_string();
    assert!(err.contains("bid = 1") && err.contains("bid = 0"), "{err}");
}

/// Block barriers in a loop over each block's tiles, between grid syncs
/// that read what other blocks wrote: the simulation runs the stretches
/// between grid syncs one after another, each block by block.
#[test]
#[augur::staged]
fn block_tiles_between_grid_syncs() {
    const T: i32 = 4;
    let ex = Builder::new()
        .extract("two_level", |x: Dyn<*mut i32>, y: Dyn<*mut i32>| {
            gpu::launch(2, T as u32, |bid, tid| {
                let s = gpu::shared::<i32>(T as u32);
                // Block 0 reverses tiles 0 and 2, block 1 tile 1.
                let tile = Dyn::new(bid);
                while tile.lt(3).is_true() {
                    s.at(tid).set(x.at(tile * T + tid));
                    gpu::sync_threads();
                    x.at(tile * T + tid).set(s.at(T - 1 - tid));
                    gpu::sync_threads();
                    tile.set(tile + 2);
                }
                gpu::grid_sync();
                // Every thread reads a tile another block reversed.
                let i = bid * T + tid;
                y.at(i).set(x.at((i + T) % (3 * T)) * 10);
            });
        })
        .unwrap();
    let x: Vec<i32> = (0..12).collect();
    let reversed: Vec<i32> = x
        .chunks(T as usize)
        .flat_map(|c| c.iter().rev().copied())
        .collect();
    let want_y: Vec<i32> = (0..8).map(|i| reversed[(i + 4) % 12] * 10).collect();
    let sim = ex.simulated().unwrap();
    let mut interp = Interpreter::new();
    let (xp, yp) = (
        interp.memory_mut().alloc_slice(&x),
        interp.memory_mut().alloc_slice(&[0i32; 8]),
    );
    sim.interpret_in(&mut interp, &[xp, yp]).unwrap();
    assert_eq!(interp.memory().read_slice::<i32>(xp, 12).unwrap(), reversed);
    assert_eq!(interp.memory().read_slice::<i32>(yp, 8).unwrap(), want_y);
    let lib = sim.compile().unwrap();
    let (mut xs, mut ys) = (x.clone(), vec![0i32; 8]);
    // SAFETY: 12 and 8 ints.
    unsafe { lib.get()(xs.as_mut_ptr(), ys.as_mut_ptr()) };
    assert_eq!((xs, ys), (reversed, want_y));
    let cu = compiles_to_ptx(&ex, &["two_level_k0"]);
    assert!(cu.contains("cudaLaunchCooperativeKernel"), "{cu}");
}
