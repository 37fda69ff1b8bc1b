//! What checking the compile cache costs a hit: `compile` of a library
//! that is cached (open without following links, check the open file, hash
//! it against its sum, load a private copy of the checked bytes), side by
//! side with loading the same entry by its path with no check at all (what
//! the cache did before it was made private), and a miss (the compiler
//! runs) for scale.
//!
//! `cargo bench -p augur-cli --bench compile_cache` prints a markdown
//! table; `-- --quick` takes fewer repetitions. Times are the minimum over
//! rounds (noise only adds time) of the mean over a round's hits.
//!
//! ## Recorded (2-core x86-64 with SHA extensions, gcc 12, one run)
//!
//! | library | size (bytes) | miss: cc + load (ms) | hit, checked (µs) | load by path, unchecked (µs) | checked / unchecked |
//! |---|---:|---:|---:|---:|---:|
//! | 1 function | 15040 | 66.0 | 74.9 | 24.0 | 3.13 |
//! | 3,000 functions | 452064 | 9241.3 | 700.7 | 28.3 | 24.74 |
//!
//! The check costs 50 µs on a small library and 0.7 ms on a large one,
//! against 66 ms and 9 s to compile them: hashing the bytes and writing the
//! private copy the library is loaded from (the same file loaded again by
//! path is mapped from pages already cached).

use augur::exec::{compile, CompileOptions};
use std::time::{Duration, Instant};

/// A small library (one function) and a large one (`n` functions).
fn source(functions: usize) -> String {
    let mut s = String::from("#include <stdint.h>\n");
    for i in 0..functions {
        s.push_str(&format!(
            "int32_t f{i}(int32_t a) {{ int32_t s = 0; \
             for (int32_t j = 0; j < a; j++) s += j * {i} ^ (s >> 3); return s; }}\n"
        ));
    }
    s
}

/// The minimum over `rounds` of the mean time of `per_round` calls of `f`.
fn best(rounds: usize, per_round: usize, mut f: impl FnMut()) -> Duration {
    (0..rounds)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..per_round {
                f();
            }
            t.elapsed() / per_round as u32
        })
        .min()
        .expect("at least one round")
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let (rounds, per_round) = if quick { (2, 20) } else { (7, 200) };
    let dir = std::env::temp_dir().join(format!("augur-bench-cache-{}", std::process::id()));
    let opts = CompileOptions {
        cache_dir: Some(dir.clone()),
        ..CompileOptions::default()
    };
    println!("| library | size (bytes) | miss: cc + load (ms) | hit, checked (µs) | load by path, unchecked (µs) | checked / unchecked |");
    println!("|---|---:|---:|---:|---:|---:|");
    for (name, functions) in [("1 function", 1), ("3,000 functions", 3000)] {
        let src = source(functions);
        let t = Instant::now();
        let lib = compile(&src, &opts).expect("compiles");
        let miss = t.elapsed();
        let (path, size) = (
            lib.path().to_path_buf(),
            std::fs::metadata(lib.path()).unwrap().len(),
        );
        drop(lib);
        let checked = best(rounds, per_round, || {
            let lib = compile(&src, &opts).expect("hits");
            assert!(lib.cache_hit());
        });
        let unchecked = best(rounds, per_round, || {
            // SAFETY: the library was compiled above from `src`, which has
            // no initialisers.
            let lib = unsafe { libloading::Library::new(&path) }.expect("loads");
            drop(lib);
        });
        println!(
            "| {name} | {size} | {:.1} | {:.1} | {:.1} | {:.2} |",
            miss.as_secs_f64() * 1e3,
            checked.as_secs_f64() * 1e6,
            unchecked.as_secs_f64() * 1e6,
            checked.as_secs_f64() / unchecked.as_secs_f64()
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
