//! Tuning: the first stage takes milliseconds, so a program can be staged
//! under a few schedules, each compiled and timed, and the fastest kept;
//! the choice is cached per program and machine, so later runs stage once.

use crate::schedule::{Blocking, Schedule};
use augur::exec::compile::CompileOptions;
use augur::exec::Cache;
use augur::{Error, Result};
use std::hash::{Hash, Hasher};
use std::os::unix::fs::DirBuilderExt;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::{Duration, Instant};

/// What [`tune`] found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tuned {
    /// The fastest schedule.
    pub best: Schedule,
    /// Each candidate's minimum time (empty when `cached`).
    pub times: Vec<(Schedule, Duration)>,
    /// True when the choice came from the cache (nothing was timed).
    pub cached: bool,
}

impl Schedule {
    /// The schedules [`tune`] tries for elements of `E`: the default, and
    /// register and cache tiles around [`Blocking::matmul_for`] (for 32-
    /// and 64-byte vectors) and [`Blocking::lanes`].
    pub fn candidates<E>() -> Vec<Schedule> {
        let m = Blocking::matmul::<E>();
        let v = m.cols / 2;
        let blocked = [
            m,
            m.row_tile(36),
            m.row_tile(144),
            m.depth(256),
            Blocking {
                rows: 4,
                row_tile: 64,
                ..m
            },
            Blocking {
                rows: 8,
                cols: v,
                depth: 256,
                row_tile: 64,
                pack: true,
            },
            // For 64-byte vectors (AVX-512's 32 registers).
            Blocking::matmul_for::<E>(64),
            Blocking {
                rows: 8,
                cols: 4 * v,
                row_tile: 64,
                ..m
            },
        ];
        let l = Blocking::lanes::<E>();
        let lanes = [l, Blocking { cols: v, ..l }, Blocking { cols: 8 * v, ..l }];
        let mut out = vec![Schedule::Auto];
        out.extend(blocked.map(Schedule::Blocked));
        out.extend(lanes.map(Schedule::Blocked));
        out
    }
}

/// Stages `program` under each of `candidates` (`build`: extract and
/// compile it), times `run` on each (the minimum of `reps` calls after a
/// warm-up) and returns the fastest; cached under `key` (name the program
/// and its sizes) and this machine, so a second call builds nothing. With
/// no candidates the answer is [`Schedule::Auto`].
///
/// `run` returns what the call computed (a copy of its output, say): every
/// candidate's must equal the first's, or tuning stops with an error that
/// names both schedules (return `()` to check nothing). On a shared
/// machine one candidate's minimum can be another's noise, so the
/// candidates within [`RETIME_MARGIN`] of the fastest are timed again, in
/// turn, for [`RETIME_ROUNDS`] rounds, and each keeps its minimum over all.
///
/// ```
/// use augur::{Builder, Dyn};
/// use augur_einsum::{compile_cpu, einsum, tune, Config, Einsum, Schedule};
///
/// #[augur::staged]
/// fn tune_matvec() {
///     let build = |s: Schedule| {
///         let ex = Builder::new().extract("mv", move |a: Dyn<*mut f32>, x: Dyn<*mut f32>, y: Dyn<*mut f32>| {
///             let ein = Einsum::new(Config { schedule: s, ..Config::cpu() });
///             let (i, j) = (ein.index("i"), ein.index("j"));
///             let (a, x, y) = (ein.tensor_on::<f32>("A", [64, 64], a), ein.tensor_on::<f32>("x", [64], x), ein.tensor_on::<f32>("y", [64], y));
///             einsum!(y[i] = a[i, j] * x[j]);
///             ein.finish();
///         })?;
///         compile_cpu(&ex, false)
///     };
///     let (mut a, mut x, mut y) = (vec![1f32; 64 * 64], vec![2f32; 64], vec![0f32; 64]);
///     let candidates = [Schedule::naive(), Schedule::Auto];
///     let key = format!("doc-matvec-64-{}", std::process::id());
///     let tuned = tune(&key, &candidates, 3, build, |p| {
///         unsafe { (p.get())(a.as_mut_ptr(), x.as_mut_ptr(), y.as_mut_ptr()) };
///         y.clone()
///     })
///     .unwrap();
///     assert!(candidates.contains(&tuned.best) && !tuned.cached);
///     assert_eq!(y[0], 128.0);
/// }
/// # tune_matvec();
/// ```
pub fn tune<P, R: PartialEq>(
    key: &str,
    candidates: &[Schedule],
    reps: usize,
    mut build: impl FnMut(Schedule) -> Result<P>,
    mut run: impl FnMut(&P) -> R,
) -> Result<Tuned> {
    // The cache is an optimisation: without one (a cache directory that
    // is not private is refused), tuning runs every time.
    let cached = cache_path(key, candidates).ok();
    if let Some(best) = (cached.as_ref())
        .and_then(|(_, path)| std::fs::read_to_string(path).ok())
        .and_then(|s| s.trim().parse::<Schedule>().ok())
        .filter(|s| candidates.contains(s))
    {
        return Ok(Tuned {
            best,
            times: Vec::new(),
            cached: true,
        });
    }
    let time = |p: &P, run: &mut dyn FnMut(&P) -> R| {
        (0..reps.max(1))
            .map(|_| {
                let t = Instant::now();
                run(p);
                t.elapsed()
            })
            .min()
            .expect("at least one turn")
    };
    let mut built: Vec<(Schedule, P, Duration)> = Vec::new();
    let mut first: Option<(Schedule, R)> = None;
    for &s in candidates {
        let p = build(s)?;
        let result = run(&p);
        match &first {
            None => first = Some((s, result)),
            Some((f, want)) if *want != result => {
                return Err(Error::Internal {
                    message: format!(
                        "einsum tuning `{key}`: the schedule {s} computes another result than {f}"
                    ),
                })
            }
            Some(_) => {}
        }
        let t = time(&p, &mut run);
        built.push((s, p, t));
    }
    let fastest = built.iter().map(|b| b.2).min().unwrap_or_default();
    let close = |t: Duration| t.as_secs_f64() <= fastest.as_secs_f64() * (1.0 + RETIME_MARGIN);
    for _ in 0..RETIME_ROUNDS {
        for (_, p, best) in built.iter_mut().filter(|b| close(b.2)) {
            *best = (*best).min(time(p, &mut run));
        }
    }
    let times: Vec<(Schedule, Duration)> = built.iter().map(|b| (b.0, b.2)).collect();
    let best = (times.iter().min_by_key(|t| t.1)).map_or(Schedule::Auto, |t| t.0);
    // A failed write only costs a re-tune.
    if let Some((cache, path)) = cached {
        if let Some(dir) = path.parent() {
            let _ = std::fs::DirBuilder::new()
                .mode(0o700)
                .recursive(true)
                .create(dir);
        }
        let _ = cache.write_new(&path, format!("{best}\n").as_bytes());
    }
    Ok(Tuned {
        best,
        times,
        cached: false,
    })
}

/// Candidates whose first minimum is within this fraction of the fastest
/// one's are timed again ([`tune`]).
pub const RETIME_MARGIN: f64 = 0.15;

/// Rounds of timing again, each candidate in turn ([`tune`]).
pub const RETIME_ROUNDS: usize = 3;

/// The cache file of `key` and `candidates` on this machine (its CPU model,
/// core count and C compiler) and for this generator: the crate's version
/// and the running executable (its size and modification time), so a
/// rebuilt program, whose schedules may generate other code, tunes again.
/// It is in the user's compile cache ([`Cache`]), which is checked to be
/// private first.
fn cache_path(key: &str, candidates: &[Schedule]) -> Result<(Cache, PathBuf)> {
    let opts = CompileOptions::default();
    let cache = Cache::open(&opts)?;
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .map(String::from)
        })
        .unwrap_or_default();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut h = std::collections::hash_map::DefaultHasher::new();
    let generator = std::env::current_exe()
        .and_then(std::fs::metadata)
        .map(|m| (m.len(), m.modified().ok()))
        .ok();
    let version = env!("CARGO_PKG_VERSION");
    (
        key,
        candidates,
        cpu,
        cores,
        opts.resolved_cc(),
        version,
        generator,
    )
        .hash(&mut h);
    let file = format!("{:016x}", h.finish());
    let path = cache.path().join("einsum-tune").join(file);
    Ok((cache, path))
}

/// Parses what `Display` prints: `naive`, `auto`, `8x8/k256/m64/pack`.
impl FromStr for Schedule {
    type Err = String;

    fn from_str(s: &str) -> std::result::Result<Schedule, String> {
        let bad = || format!("not a schedule: {s:?} (naive, auto, or like 8x8/k256/m64/pack)");
        match s {
            "naive" => return Ok(Schedule::Naive),
            "auto" => return Ok(Schedule::Auto),
            _ => {}
        }
        let parts: Vec<&str> = s.split('/').collect();
        let (tile, rest) = parts.split_first().ok_or_else(bad)?;
        let (rows, cols) = tile.split_once('x').ok_or_else(bad)?;
        let num = |t: &str| t.parse::<usize>().map_err(|_| bad());
        let mut b = Blocking {
            rows: num(rows)?,
            cols: num(cols)?,
            depth: 0,
            row_tile: 1,
            pack: false,
        };
        for p in rest {
            match (p.get(..1), p.get(1..)) {
                (Some("k"), Some(n)) => b.depth = num(n)?,
                (Some("m"), Some(n)) => b.row_tile = num(n)?,
                _ if *p == "pack" => b.pack = true,
                _ => return Err(bad()),
            }
        }
        Ok(Schedule::Blocked(b))
    }
}
