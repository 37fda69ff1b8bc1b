//! Einsum operations built three ways (plain C and OpenMP C under each
//! schedule of `schedules()`, the CPU-simulated
//! GPU under each data-movement strategy on a small grid, and under
//! prophecies on the paper's 40 × 512 grid), run on pseudo-random inputs and
//! compared with plain Rust; the simulated runtime's counters against
//! exactly what each strategy must move, and the generated C text.
//!
//! Inputs are small nonzero integers, so every sum and product is exact in
//! `f32` and results are equal whatever the summation order.

use augur::{Builder, Dyn};
use augur_einsum::compile_cpu;
use augur_einsum::{Access, Config, Einsum};
use augur_einsum::{Index, Tensor, Term};

mod case;

use case::*;

/// Plain Rust, row-major: `C = A B` (`+=` when `acc`) for `batch` A m×k
/// and B k×n (a vector B and C are k×1 and m×1).
#[augur::staged]
fn product<E: Num>(v: &mut [Vec<E>], batch: usize, (m, k, n): Mkn, acc: bool) {
    let [a, b, c, _] = v else { unreachable!() };
    c.iter_mut().filter(|_| !acc).for_each(|x| *x = E::zero());
    for (r, i, j) in (0..batch * m * n).map(|e| (e / (m * n), e / n % m, e % n)) {
        let (a, b) = (&a[r * m * k + i * k..], &b[r * k * n + j..]);
        let s = (0..k).fold(E::zero(), |s, q| s + a[q] * b[q * n]);
        c[r * m * n + i * n + j] = c[r * m * n + i * n + j] + s;
    }
}

#[augur::staged]
fn idx<const N: usize>(ein: &Einsum, names: [&'static str; N]) -> [Index; N] {
    names.map(|n| ein.index(n))
}

type Mkn = (usize, usize, usize);

/// A product: `C[i][j] = A[i][k] * B[k][j]` (`form` 'm'), the same with
/// `+=` ('a'), `C[i] = A[i][k] * B[k]` ('v', n = 1), or
/// `C[b][i][j] = A[b][i][k] * B[b][k][j]` ('b').
#[augur::staged]
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
#[augur::staged]
fn matmul() {
    for s in SHAPES {
        product_case::<f32>('m', 1, s);
    }
    product_case::<i64>('m', 1, SHAPES[1]);
    product_case::<i64>('m', 1, SHAPES[3]);
}

#[test]
#[augur::staged]
fn accumulate_into_initialised() {
    product_case::<f32>('a', 1, (6, 6, 6));
    product_case::<i32>('a', 1, (45, 3, 600));
}

#[test]
#[augur::staged]
fn matvec() {
    for (m, k) in [(8, 8), (1, 5), (13, 1), (600, 45)] {
        product_case::<f32>('v', 1, (m, k, 1));
    }
    product_case::<i32>('v', 1, (1, 5, 1));
    product_case::<i32>('v', 1, (600, 45, 1));
}

#[test]
#[augur::staged]
fn batched_contraction() {
    product_case::<f32>('b', 3, (5, 4, 7));
    product_case::<i32>('b', 45, (1, 2, 600));
}

#[test]
#[augur::staged]
fn transpose() {
    #[augur::staged]
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
#[augur::staged]
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
#[augur::staged]
fn elementwise_arithmetic() {
    ew::<f32>("sum", S, &[0, 1], |x| x.a + x.b, |x| x.a + x.b);
    ew::<f32>("diff", S, &[0, 1], |x| x.a - x.b, |x| x.a - x.b);
    ew::<f32>("product", S, &[0, 1], |x| x.a * x.b, |x| x.a * x.b);
    ew::<f32>("neg", S, &[1], |x| -x.b, |x| -x.b);
}

#[test]
#[augur::staged]
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
#[augur::staged]
fn elementwise_ints() {
    let r: RefOp<i32> = |x| 4 + (x.i + x.j) as i32 - x.a;
    ew::<i32>("index", (6, 9), &[0], |x| 4 + x.i + x.j - x.a, r);
    let all: Op<i64> = |x| -(x.a.clone() * 3i64 - x.b) * x.i + x.a;
    let r: RefOp<i64> = |x| -(x.a * 3 - x.b) * x.i as i64 + x.a;
    ew::<i64>("all", (45, 600), &[0, 1], all, r);
}

/// `B[i]` (`by` 0), `B[j]` (1) or `B[]` (2) `=` (`op` 0), `+=` (1) or `*=`
/// (2) `A[i][j]`, for A m×n.
#[augur::staged]
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
#[augur::staged]
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
#[augur::staged]
fn sums() {
    reductions::<f32>((13, 11), "rcfa");
    reductions::<f32>((1, 9), "cf");
}

#[test]
#[augur::staged]
fn sums_past_the_grid() {
    reductions::<f32>((45, 600), "rcf");
    reductions::<i64>((45, 600), "rf");
}

#[test]
#[augur::staged]
fn products() {
    reductions::<f32>((5, 4), "p");
    reductions::<f32>((9, 1), "q");
    reductions::<f32>((3, 600), "q");
    reductions::<i64>((45, 7), "p");
}

#[test]
#[augur::staged]
fn cooperative_kernel() {
    // C = A B, then D = 2 Cᵀ - 1 in the same kernel: D[j][i] needs C[i][j]
    // from another block, so the second statement waits at a grid sync.
    #[augur::staged]
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
#[augur::staged]
fn kernels_in_sequence() {
    // B = row sums of A on the GPU; C = B W on the CPU, with W = i + 1 only
    // ever on the CPU; D = B + 2 C on the GPU.
    #[augur::staged]
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
#[augur::staged]
fn kernel_in_dyn_if() {
    // C = A B on the GPU when flag > 0, C = -(A B) on the CPU otherwise.
    #[augur::staged]
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
#[augur::staged]
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
#[augur::staged]
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
#[augur::staged]
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
#[augur::staged]
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
#[augur::staged]
fn dropping_an_openmp_program_keeps_the_process_alive() {
    if std::env::var_os("AUGUR_EINSUM_OMP_CHILD").is_none() {
        // This test's name in this binary: its module path less the crate.
        let test = concat!(
            module_path!(),
            "::dropping_an_openmp_program_keeps_the_process_alive"
        );
        let test = test.split_once("::").unwrap().1;
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
