//! The CPU layouts beyond a plain product: index fusion, row tiles
//! balanced over the threads (the short tile inside the parallel loop),
//! a batch index as the parallel loop, a product whose operands are both
//! innermost along the reduction, statements without a reduction. Each
//! statement is run in the interpreter with OpenMP (whose check fails on
//! two parallel iterations touching the same memory) under blockings and
//! thread counts drawn at random, and compared with plain Rust; the
//! default layouts are compiled to C at sizes where they are parallel, and
//! `Einsum::chosen` is checked to say what was generated.

use augur::{Builder, Dyn, Extracted};
use augur_einsum::{
    compile_cpu, einsum, Blocking, Chosen, Config, Einsum, Schedule, SimInterpreter, Tensor,
};

type Four = unsafe extern "C" fn(*mut f32, *mut f32, *mut f32, *mut f32);
type P = Dyn<*mut f32>;

/// Plain Rust: a statement's output from its inputs and the shapes.
type Reference = fn(&[Vec<f32>], &[Vec<usize>]) -> Vec<f32>;

/// A case's name, extents, the fused indices and the parallel loop.
type Expected = (
    &'static str,
    [usize; 4],
    &'static [&'static str],
    Option<&'static str>,
);

/// A statement over up to three inputs and an output.
struct Case {
    name: &'static str,
    stage: fn(&Einsum, &[Tensor<f32>]),
    /// Plain Rust: the output from the inputs.
    rust: Reference,
}

#[augur::staged]
fn ttm(ein: &Einsum, t: &[Tensor<f32>]) {
    let (i, j, k, r) = (
        ein.index("i"),
        ein.index("j"),
        ein.index("k"),
        ein.index("r"),
    );
    let (x, u, y) = (&t[0], &t[1], &t[2]);
    einsum!(y[i, j, r] = x[i, j, k] * u[k, r]);
}

fn ttm_rust(v: &[Vec<f32>], s: &[Vec<usize>]) -> Vec<f32> {
    let (ij, k, r) = (s[0][0] * s[0][1], s[0][2], s[1][1]);
    (0..ij * r)
        .map(|e| {
            (0..k)
                .map(|q| v[0][e / r * k + q] * v[1][q * r + e % r])
                .sum()
        })
        .collect()
}

#[augur::staged]
fn batched(ein: &Einsum, t: &[Tensor<f32>]) {
    let (n, i, j, k) = (
        ein.index("n"),
        ein.index("i"),
        ein.index("j"),
        ein.index("k"),
    );
    let (a, b, c) = (&t[0], &t[1], &t[2]);
    einsum!(c[n, i, j] = a[n, i, k] * b[n, k, j]);
}

fn batched_rust(v: &[Vec<f32>], s: &[Vec<usize>]) -> Vec<f32> {
    let (nb, m, k, n) = (s[0][0], s[0][1], s[0][2], s[1][2]);
    (0..nb * m * n)
        .map(|e| {
            let (b, i, j) = (e / (m * n), e / n % m, e % n);
            (0..k)
                .map(|q| v[0][(b * m + i) * k + q] * v[1][(b * k + q) * n + j])
                .sum()
        })
        .collect()
}

#[augur::staged]
fn abt(ein: &Einsum, t: &[Tensor<f32>]) {
    let (i, j, l) = (ein.index("i"), ein.index("j"), ein.index("l"));
    let (a, b, c) = (&t[0], &t[1], &t[2]);
    einsum!(c[i, j] = a[i, l] * b[j, l]);
}

fn abt_rust(v: &[Vec<f32>], s: &[Vec<usize>]) -> Vec<f32> {
    let (m, k, n) = (s[0][0], s[0][1], s[1][0]);
    (0..m * n)
        .map(|e| {
            (0..k)
                .map(|q| v[0][e / n * k + q] * v[1][e % n * k + q])
                .sum()
        })
        .collect()
}

#[augur::staged]
fn mttkrp(ein: &Einsum, t: &[Tensor<f32>]) {
    let (i, j, k, r) = (
        ein.index("i"),
        ein.index("j"),
        ein.index("k"),
        ein.index("r"),
    );
    let (x, b, c, m) = (&t[0], &t[1], &t[2], &t[3]);
    einsum!(m[i, r] = x[i, j, k] * b[j, r] * c[k, r]);
}

fn mttkrp_rust(v: &[Vec<f32>], s: &[Vec<usize>]) -> Vec<f32> {
    let (ni, nj, nk, nr) = (s[0][0], s[0][1], s[0][2], s[1][1]);
    (0..ni * nr)
        .map(|e| {
            let (i, r) = (e / nr, e % nr);
            let mut sum = 0.0;
            for j in 0..nj {
                for k in 0..nk {
                    sum += v[0][(i * nj + j) * nk + k] * v[1][j * nr + r] * v[2][k * nr + r];
                }
            }
            sum
        })
        .collect()
}

#[augur::staged]
fn transpose(ein: &Einsum, t: &[Tensor<f32>]) {
    let (i, j) = (ein.index("i"), ein.index("j"));
    let (a, b) = (&t[0], &t[1]);
    einsum!(b[j, i] = a[i, j]);
}

fn transpose_rust(v: &[Vec<f32>], s: &[Vec<usize>]) -> Vec<f32> {
    let (m, n) = (s[0][0], s[0][1]);
    (0..m * n).map(|e| v[0][e % m * n + e / m]).collect()
}

#[augur::staged]
fn outer(ein: &Einsum, t: &[Tensor<f32>]) {
    let (i, j) = (ein.index("i"), ein.index("j"));
    let (a, b, c) = (&t[0], &t[1], &t[2]);
    einsum!(c[i, j] = a[i] * b[j]);
}

fn outer_rust(v: &[Vec<f32>], s: &[Vec<usize>]) -> Vec<f32> {
    let n = s[1][0];
    (0..s[0][0] * n)
        .map(|e| v[0][e / n] * v[1][e % n])
        .collect()
}

/// Three indices that fuse into one, with an accumulation.
#[augur::staged]
fn elementwise(ein: &Einsum, t: &[Tensor<f32>]) {
    let (i, j, k) = (ein.index("i"), ein.index("j"), ein.index("k"));
    let (a, b, c) = (&t[0], &t[1], &t[2]);
    einsum!(c[i, j, k] += a[i, j, k] * b[i, j, k] + 2.0f32);
}

fn elementwise_rust(v: &[Vec<f32>], _: &[Vec<usize>]) -> Vec<f32> {
    (0..v[0].len())
        .map(|e| 1.0 + v[0][e] * v[1][e] + 2.0)
        .collect()
}

const CASES: [Case; 7] = [
    Case {
        name: "ttm",
        stage: ttm,
        rust: ttm_rust,
    },
    Case {
        name: "batched",
        stage: batched,
        rust: batched_rust,
    },
    Case {
        name: "abt",
        stage: abt,
        rust: abt_rust,
    },
    Case {
        name: "mttkrp",
        stage: mttkrp,
        rust: mttkrp_rust,
    },
    Case {
        name: "transpose",
        stage: transpose,
        rust: transpose_rust,
    },
    Case {
        name: "outer",
        stage: outer,
        rust: outer_rust,
    },
    Case {
        name: "elementwise",
        stage: elementwise,
        rust: elementwise_rust,
    },
];

/// The shapes of `case` (inputs then output) from four extents.
fn shapes(case: &str, [a, b, c, d]: [usize; 4]) -> Vec<Vec<usize>> {
    match case {
        "ttm" => vec![vec![a, b, c], vec![c, d], vec![a, b, d]],
        "batched" => vec![vec![a, b, c], vec![a, c, d], vec![a, b, d]],
        "abt" => vec![vec![a, c], vec![b, c], vec![a, b]],
        "mttkrp" => vec![vec![a, b, c], vec![b, d], vec![c, d], vec![a, d]],
        "transpose" => vec![vec![a, b], vec![b, a]],
        "outer" => vec![vec![a], vec![b], vec![a, b]],
        _ => vec![vec![a, b, c], vec![a, b, c], vec![a, b, c]],
    }
}

/// `case` over `shapes`, extracted, with what `Einsum::chosen` said.
#[augur::staged]
fn extract(case: &Case, shapes: &[Vec<usize>], config: Config) -> (Extracted<Four>, Vec<Chosen>) {
    let stage = case.stage;
    let shapes = shapes.to_vec();
    let seen = std::cell::RefCell::new(Vec::new());
    let seen_ref = &seen;
    let ex = Builder::new()
        .extract(case.name, move |x: P, y: P, z: P, w: P| {
            let ein = Einsum::new(config);
            let ptrs = [x, y, z];
            let last = shapes.len() - 1;
            let tensor = |(n, s): (usize, &Vec<usize>)| {
                let p = if n == last { w } else { ptrs[n] };
                ein.tensor_on::<f32>(["X", "Y", "Z", "OUT"][n.min(3)], s, p)
            };
            let tensors: Vec<Tensor<f32>> = shapes.iter().enumerate().map(tensor).collect();
            stage(&ein, &tensors);
            *seen_ref.borrow_mut() = ein.chosen();
            ein.finish();
        })
        .unwrap();
    (ex, seen.into_inner())
}

fn inputs(shapes: &[Vec<usize>]) -> Vec<Vec<f32>> {
    let last = shapes.len() - 1;
    (shapes.iter().enumerate())
        .map(|(n, s)| {
            let len = s.iter().product::<usize>();
            let fill = if n == last { 1.0 } else { 0.0 };
            (0..len)
                .map(|e| {
                    if n == last {
                        fill
                    } else {
                        ((e * (n + 2)) % 7) as f32 - 3.0
                    }
                })
                .collect()
        })
        .collect()
}

/// Runs `ex` in the interpreter and compares its output with `case.rust`.
fn interpret(case: &Case, ex: &Extracted<Four>, shapes: &[Vec<usize>]) -> Result<(), String> {
    let mut it = SimInterpreter::new();
    let data = inputs(shapes);
    let memory = it.interp.memory_mut();
    let mut bufs: Vec<_> = data.iter().map(|v| memory.alloc_slice(v)).collect();
    let out = bufs.pop().expect("an output");
    while bufs.len() < 3 {
        bufs.push(memory.alloc_slice(&[0f32]));
    }
    bufs.push(out);
    ex.interpret_in(&mut it.interp, &bufs)
        .map_err(|e| e.to_string())?;
    let n = data.last().expect("an output").len();
    let got = it.interp.memory().read_slice::<f32>(out, n).unwrap();
    let want = (case.rust)(&data[..data.len() - 1], shapes);
    match (0..n).find(|&e| got[e] != want[e]) {
        Some(e) => Err(format!("element {e}: {}, want {}", got[e], want[e])),
        None => Ok(()),
    }
}

#[test]
#[augur::staged]
fn random_blockings_and_thread_counts_are_exact_and_free_of_races() {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut draw = move |n: usize| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x % n as u64) as usize
    };
    for round in 0..12 {
        for case in &CASES {
            let extents = [1 + draw(9), 1 + draw(9), 1 + draw(9), 1 + draw(9)];
            let shapes = shapes(case.name, extents);
            let blocking = Blocking::tile(1 + draw(4), 1 + draw(6))
                .depth(draw(6))
                .row_tile(1 + draw(8))
                .pack(draw(2) == 0);
            let config = Config {
                openmp: true,
                cpu_threads: 1 + draw(4),
                schedule: Schedule::Blocked(blocking),
                ..Config::cpu()
            };
            let (ex, _) = extract(case, &shapes, config);
            let what = format!(
                "round {round}, {} {shapes:?} under {blocking} on {} threads",
                case.name, config.cpu_threads
            );
            interpret(case, &ex, &shapes)
                .unwrap_or_else(|e| panic!("{what}: {e}\n{}", ex.c_code()));
        }
    }
}

/// At sizes where `Schedule::Auto` is parallel: the C is exact, and
/// `Einsum::chosen` names the fused indices and the parallel loop.
#[test]
#[augur::staged]
fn default_layouts_are_exact_in_c_and_say_what_they_chose() {
    let expect: [Expected; 7] = [
        ("ttm", [10, 9, 64, 50], &["ij"], Some("ij")),
        ("batched", [6, 20, 48, 50], &[], Some("n")),
        ("abt", [70, 60, 64, 1], &[], Some("i")),
        ("mttkrp", [20, 12, 30, 40], &[], Some("i")),
        ("transpose", [600, 500, 1, 1], &[], Some("i")),
        ("outer", [600, 500, 1, 1], &[], Some("i")),
        ("elementwise", [60, 70, 70, 1], &["ijk"], Some("ijk")),
    ];
    for (case, (name, extents, fused, parallel)) in CASES.iter().zip(expect) {
        assert_eq!(case.name, name);
        let shapes = shapes(name, extents);
        let config = Config {
            openmp: true,
            cpu_threads: 3,
            ..Config::cpu()
        };
        let (ex, chosen) = extract(case, &shapes, config);
        assert_eq!(chosen.len(), 1, "{name}: {chosen:?}");
        let c = &chosen[0];
        assert!(matches!(c.schedule, Schedule::Blocked(_)), "{name}: {c}");
        let want: Vec<String> = fused.iter().map(|s| s.to_string()).collect();
        assert!(want.iter().all(|f| c.fused.contains(f)), "{name}: {c}");
        assert_eq!(c.parallel.as_deref(), parallel, "{name}: {c}");
        let p = compile_cpu(&ex, true).unwrap();
        let mut data = inputs(&shapes);
        let want = (case.rust)(&data[..data.len() - 1], &shapes);
        let mut ptrs: Vec<*mut f32> = data.iter_mut().map(|v| v.as_mut_ptr()).collect();
        let out = ptrs.pop().unwrap();
        ptrs.resize(3, std::ptr::null_mut());
        // SAFETY: the buffers hold the shapes' element counts; the null
        // arguments are parameters the statement does not read.
        unsafe { (p.get())(ptrs[0], ptrs[1], ptrs[2], out) };
        assert_eq!(data.last().unwrap(), &want, "{name}");
    }
}
