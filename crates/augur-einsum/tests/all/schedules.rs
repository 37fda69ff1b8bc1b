//! Schedules: what `Schedule::Auto` chooses from first-stage sizes, per
//! statement schedules, the text form, and tuning with its cache. (The
//! ops suite checks every program under several schedules.)

use augur::{Builder, Dyn, Extracted};
use augur_einsum::{compile_cpu, einsum, tune, Blocking, Config, Einsum, Schedule, SimInterpreter};

type Mm = unsafe extern "C" fn(*mut f32, *mut f32, *mut f32, *mut f32);
type P = Dyn<*mut f32>;

/// `C = A B` and `D = A B` for m×k A, k×n B; C under `first`, D under
/// `second`.
#[augur::staged]
fn two_products(
    (m, k, n): (usize, usize, usize),
    config: Config,
    first: Schedule,
    second: Schedule,
) -> Extracted<Mm> {
    Builder::new()
        .extract("two", move |a: P, b: P, c: P, d: P| {
            let ein = Einsum::new(config);
            let (i, j, q) = (ein.index("i"), ein.index("j"), ein.index("k"));
            let a = ein.tensor_on::<f32>("A", [m, k], a);
            let b = ein.tensor_on::<f32>("B", [k, n], b);
            let c = ein.tensor_on::<f32>("C", [m, n], c);
            let d = ein.tensor_on::<f32>("D", [m, n], d);
            ein.with_schedule(first, || einsum!(c[i, j] = a[i, q] * b[q, j]));
            ein.with_schedule(second, || einsum!(d[i, j] = a[i, q] * b[q, j]));
            ein.finish();
        })
        .unwrap()
}

/// Runs `ex` on small-integer inputs; checks C and D against plain Rust.
#[augur::staged]
fn check(ex: &Extracted<Mm>, (m, k, n): (usize, usize, usize), openmp: bool) {
    let p = compile_cpu(ex, openmp).unwrap();
    let mut a: Vec<f32> = (0..m * k).map(|x| (x % 7) as f32 - 3.0).collect();
    let mut b: Vec<f32> = (0..k * n).map(|x| (x % 5) as f32 - 2.0).collect();
    let (mut c, mut d) = (vec![f32::NAN; m * n], vec![f32::NAN; m * n]);
    // SAFETY: the buffers hold the shapes' element counts.
    unsafe {
        (p.get())(
            a.as_mut_ptr(),
            b.as_mut_ptr(),
            c.as_mut_ptr(),
            d.as_mut_ptr(),
        )
    };
    for e in 0..m * n {
        let want: f32 = (0..k).map(|q| a[e / n * k + q] * b[q * n + e % n]).sum();
        assert_eq!((c[e], d[e]), (want, want), "element {e}");
    }
}

#[test]
#[augur::staged]
fn auto_keeps_small_products_naive_and_blocks_large_ones() {
    let config = Config::cpu();
    let small = two_products((5, 6, 7), config, Schedule::Auto, Schedule::Auto);
    assert!(!small.c_code().contains("_pack"), "{}", small.c_code());
    check(&small, (5, 6, 7), false);
    let shape = (67, 70, 75);
    let large = two_products(shape, config, Schedule::Auto, Schedule::naive());
    let c = large.c_code();
    // C is packed and tiled; D keeps the paper's loops (an `acc` per element).
    assert!(c.contains("A_pack") && c.contains("B_pack"), "{c}");
    assert!(c.contains("float acc = 0.0f;"), "{c}");
    check(&large, shape, false);
}

#[test]
#[augur::staged]
fn auto_shapes_register_tiles_for_the_configured_vectors() {
    // 8 × 48 tiles for 64-byte vectors, 6 × 16 for 32-byte ones, whatever
    // this machine has; sizes with remainders in every direction (with
    // depth tiles of 512 only at 600), and the register tiles' loops kept
    // from vectorizing across their turns.
    let tiles = [
        (32, ["j_0 + 16)", "i_1 + 6)"]),
        (64, ["j_0 + 48)", "i_1 + 8)"]),
    ];
    for (vector_bytes, steps) in tiles {
        for shape in [(67, 70, 100), (50, 600, 101)] {
            let config = Config {
                vector_bytes,
                openmp: true,
                ..Config::cpu()
            };
            let ex = two_products(shape, config, Schedule::Auto, Schedule::Auto);
            let c = ex.c_code();
            for step in steps {
                assert!(c.contains(step), "{vector_bytes}-byte vectors, {step}: {c}");
            }
            assert!(c.contains("omp simd safelen(1)"), "{c}");
            check(&ex, shape, true);
        }
    }
}

#[test]
#[augur::staged]
fn each_statement_gets_its_own_schedule_with_and_without_openmp() {
    let tiles = Schedule::Blocked(Blocking::tile(3, 5).depth(4).row_tile(7));
    let lanes = Schedule::Blocked(Blocking::tile(2, 3).depth(0).pack(false));
    for openmp in [false, true] {
        let config = Config {
            openmp,
            ..Config::cpu()
        };
        let shape = (11, 10, 13);
        let ex = two_products(shape, config, tiles, lanes);
        let c = ex.c_code();
        assert_eq!(c.contains("omp parallel for"), openmp, "{c}");
        check(&ex, shape, openmp);
    }
}

#[test]
#[augur::staged]
fn schedules_print_and_parse_back() {
    for s in Schedule::candidates::<f32>().into_iter().chain([
        Schedule::naive(),
        Schedule::Blocked(Blocking::tile(3, 2).pack(false)),
    ]) {
        assert_eq!(s.to_string().parse::<Schedule>(), Ok(s), "{s}");
    }
    assert_eq!(Blocking::matmul::<f32>().to_string(), "6x16/k512/m72/pack");
    assert!("8x/k2".parse::<Schedule>().is_err());
    assert!("fast".parse::<Schedule>().is_err());
}

#[test]
#[augur::staged]
fn tuning_times_each_candidate_once_then_reads_the_cache() {
    let shape = (40, 50, 60);
    let candidates = [
        Schedule::naive(),
        Schedule::Blocked(Blocking::tile(4, 8).depth(16)),
    ];
    let key = format!(
        "test-two-products-{}-{:?}",
        std::process::id(),
        std::time::SystemTime::now()
    );
    let mut built = 0;
    let mut a = vec![1f32; 40 * 50];
    let mut b = vec![2f32; 50 * 60];
    let (mut c, mut d) = (vec![0f32; 40 * 60], vec![0f32; 40 * 60]);
    let mut run = |p: &augur_einsum::Program<Mm>| {
        unsafe {
            (p.get())(
                a.as_mut_ptr(),
                b.as_mut_ptr(),
                c.as_mut_ptr(),
                d.as_mut_ptr(),
            )
        };
        (c.clone(), d.clone())
    };
    let mut build = |s| {
        built += 1;
        compile_cpu(&two_products(shape, Config::cpu(), s, s), false)
    };
    let first = tune(&key, &candidates, 2, &mut build, &mut run).unwrap();
    assert!(!first.cached && first.times.len() == 2);
    assert!(candidates.contains(&first.best));
    let again = tune(&key, &candidates, 2, &mut build, &mut run).unwrap();
    assert!(again.cached && again.times.is_empty());
    assert_eq!(again.best, first.best);
    assert_eq!(built, 2, "the cached answer builds nothing");
    assert_eq!(c[0], 100.0);
}

/// A candidate whose result differs from the first's stops tuning with an
/// error that names both schedules (here `run` says so for the second).
#[test]
#[augur::staged]
fn tuning_refuses_a_candidate_that_computes_another_result() {
    let candidates = [
        Schedule::Auto,
        Schedule::Blocked(Blocking::tile(4, 8).depth(16)),
    ];
    let key = format!(
        "test-wrong-candidate-{}-{:?}",
        std::process::id(),
        std::time::SystemTime::now()
    );
    let build = |s: Schedule| -> augur::Result<Schedule> { Ok(s) };
    let e = tune(&key, &candidates, 1, build, |s| *s == candidates[1]).unwrap_err();
    let text = e.to_string();
    assert!(text.contains("4x8/k16") && text.contains("auto"), "{text}");
    // Nothing was cached: tuning again fails again.
    assert!(tune(&key, &candidates, 1, build, |s| *s == candidates[1]).is_err());
}

/// Blockings drawn at random (a fixed seed) on shapes drawn at random, with
/// OpenMP: each program is run in the interpreter, whose check of `omp
/// parallel for` loops fails on any two iterations touching the same
/// memory, and compared with plain Rust. (A shorter last reduction tile
/// once packed rows into slots that the next row tile's thread used.)
#[test]
#[augur::staged]
fn random_blockings_with_openmp_are_exact_and_free_of_races() {
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let mut draw = move |n: usize| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x % n as u64) as usize
    };
    for case in 0..150 {
        let shape = (1 + draw(20), 1 + draw(12), 1 + draw(20));
        let blocking = Blocking::tile(1 + draw(4), 1 + draw(6))
            .depth(draw(6))
            .row_tile(1 + draw(8))
            .pack(draw(2) == 0);
        let schedule = Schedule::Blocked(blocking);
        let config = Config {
            openmp: true,
            ..Config::cpu()
        };
        let ex = two_products(shape, config, schedule, Schedule::Auto);
        let what = format!("case {case}: {shape:?} under {schedule}");
        interpret(&ex, shape).unwrap_or_else(|e| panic!("{what}: {e}\n{}", ex.c_code()));
    }
}

/// [`check`] in the interpreter (with the einsum runtime).
fn interpret(ex: &Extracted<Mm>, (m, k, n): (usize, usize, usize)) -> Result<(), String> {
    let mut it = SimInterpreter::new();
    let a: Vec<f32> = (0..m * k).map(|x| (x % 7) as f32 - 3.0).collect();
    let b: Vec<f32> = (0..k * n).map(|x| (x % 5) as f32 - 2.0).collect();
    let memory = it.interp.memory_mut();
    let nan = vec![f32::NAN; m * n];
    let bufs = [&a, &b, &nan, &nan].map(|v| memory.alloc_slice(v));
    ex.interpret_in(&mut it.interp, &bufs)
        .map_err(|e| e.to_string())?;
    let read = |p| it.interp.memory().read_slice::<f32>(p, m * n).unwrap();
    let (c, d) = (read(bufs[2]), read(bufs[3]));
    for e in 0..m * n {
        let want: f32 = (0..k).map(|q| a[e / n * k + q] * b[q * n + e % n]).sum();
        if (c[e], d[e]) != (want, want) {
            return Err(format!("element {e}: {:?}, want {want}", (c[e], d[e])));
        }
    }
    Ok(())
}
