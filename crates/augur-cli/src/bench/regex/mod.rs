//! augur-regex beside the regex crate, PCRE2 with its JIT, RE2 and
//! Hyperscan: patterns in the spirit of the rebar benchmark over a few MB
//! of generated English-like text, in three modes (counting matches as
//! `find_iter` gives them, summing their lengths, counting the lines that
//! match), with the time to build each matcher beside the time to search.
//!
//! The regex crate and augur run in this process; the C and C++ engines in
//! one run of a harness built for them (the `engines` module). Every result is
//! checked against the regex crate's: augur's must agree (or the bench
//! fails), another engine's that differs is left out and said so.

mod engines;
mod text;

use super::{time, Ctx, Outcome};
use crate::report::{Cell, Plot, Table};
use crate::Result;
use augur::exec::{Backend, CompileOptions};
use augur_regex::{Matcher, Options, Regex};
use std::collections::HashMap;
use std::time::Instant;

/// The patterns: (name, pattern, Unicode). The dictionary's is built.
const PATTERNS: &[(&str, &str, bool)] = &[
    ("literal", "Sherlock", true),
    ("literal-alt", "Sherlock|Holmes|Watson|Irene|Adler", true),
    ("ignore-case", "(?i)sherlock", true),
    ("suffix", "[a-zA-Z]+ing", true),
    ("dictionary", "", true),
    ("bounded", "[A-Za-z]{8,13}", true),
    ("twain-names", "Tom|Sawyer|Huckleberry|Finn", true),
    ("twain-near", "[a-z]+ (Tom|Sawyer|Huckleberry|Finn)", true),
    ("twain-prefix", "Huck[a-zA-Z]+|Saw[a-zA-Z]+", true),
    ("twain-before", ".{0,2}(Tom|Sawyer|Huckleberry|Finn)", true),
    (
        "twain-before-2",
        ".{2,4}(Tom|Sawyer|Huckleberry|Finn)",
        true,
    ),
    ("twain-ing", r"\s[a-zA-Z]{0,12}ing\s", true),
    ("twain-suffix", r"([A-Za-z]awyer|[A-Za-z]inn)\s", true),
    ("twain-quote", r#"["'][^"']{0,30}[?!.]["']"#, true),
    ("dfa-9", "[a-q][^u-z]{9}x", false),
];

/// The search modes, as the harness names them.
const MODES: &[&str] = &["count", "spans", "lines"];

/// The engines of the search table after augur's two, in order.
const OTHERS: &[&str] = &["regex crate", "PCRE2-JIT", "RE2", "Hyperscan"];

/// One pattern's measurements.
struct Row {
    name: &'static str,
    states: (usize, usize),
    /// engine → mode → (result, seconds).
    search: HashMap<&'static str, HashMap<&'static str, (i64, f64)>>,
    /// engine → build seconds.
    build: HashMap<&'static str, f64>,
}

/// `mode`'s result over `hay` by a `find_iter` and a match test.
fn search_mode(
    mode: &str,
    hay: &[u8],
    lines: &[(usize, usize)],
    spans: impl Iterator<Item = (usize, usize)>,
    is_match: impl Fn(&[u8]) -> bool,
) -> i64 {
    match mode {
        "count" => spans.count() as i64,
        "spans" => spans.map(|(s, e)| (e - s) as i64).sum(),
        _ => lines.iter().filter(|&&(s, e)| is_match(&hay[s..e])).count() as i64,
    }
}

/// The patterns measured, with the dictionary's built.
fn patterns(quick: bool) -> Vec<(&'static str, String, bool)> {
    let all = PATTERNS.iter().map(|&(name, p, unicode)| {
        let p = if name == "dictionary" {
            text::dictionary(text::DICTIONARY_WORDS).join("|")
        } else {
            p.to_string()
        };
        (name, p, unicode)
    });
    all.take(if quick { 4 } else { PATTERNS.len() }).collect()
}

/// Builds and times augur's matchers and the regex crate on one pattern.
fn measure(
    ctx: &Ctx,
    (name, pattern, unicode): &(&'static str, String, bool),
    hay: &[u8],
    lines: &[(usize, usize)],
    cache: &std::path::Path,
) -> Result<Row> {
    let reps = ctx.reps(5);
    let opts = Options {
        unicode: *unicode,
        ..Default::default()
    };
    let mut build = HashMap::new();
    let t = Instant::now();
    let reference = regex::bytes::RegexBuilder::new(pattern)
        .unicode(*unicode)
        .build()
        .map_err(|e| e.to_string())?;
    build.insert("regex crate", t.elapsed().as_secs_f64());
    let t = Instant::now();
    let staged = Regex::with(pattern, &opts)?.stage(&augur::Builder::new())?;
    build.insert("stage", t.elapsed().as_secs_f64());
    // A cache of its own, empty: cc is timed compiling.
    let cold = CompileOptions {
        cache_dir: Some(cache.to_path_buf()),
        ..CompileOptions::default()
    };
    let t = Instant::now();
    let c = staged.compile(&cold)?;
    build.insert("cc", t.elapsed().as_secs_f64());
    let t = Instant::now();
    let jit = staged.compile(&CompileOptions::default().with_backend(Backend::Jit))?;
    build.insert("JIT", t.elapsed().as_secs_f64());
    let mut search = HashMap::new();
    for &mode in MODES {
        let ours = |m: &Matcher| {
            time(reps, || {
                Ok(search_mode(mode, hay, lines, m.find_iter(hay), |h| {
                    m.is_match(h)
                }))
            })
        };
        let (tc, _, rc) = ours(&c)?;
        let (tj, _, rj) = ours(&jit)?;
        let (tr, _, want) = time(reps, || {
            Ok(search_mode(
                mode,
                hay,
                lines,
                reference.find_iter(hay).map(|m| (m.start(), m.end())),
                |h| reference.is_match(h),
            ))
        })?;
        if rc != want || rj != want {
            return Err(format!(
                "{name} ({mode}): {rc} (C) and {rj} (JIT), the regex crate {want}"
            )
            .into());
        }
        for (engine, t, r) in [
            ("augur C", tc, rc),
            ("augur JIT", tj, rj),
            ("regex crate", tr, want),
        ] {
            let per: &mut HashMap<_, _> = search.entry(engine).or_default();
            per.insert(mode, (r, t.as_secs_f64()));
        }
    }
    Ok(Row {
        name,
        states: staged.states,
        search,
        build,
    })
}

/// Adds the harness's engines to the rows; a result that differs from the
/// regex crate's is left out, and named in `notes`.
fn merge(rows: &mut [Row], results: engines::Results, notes: &mut Vec<String>) {
    for row in rows.iter_mut() {
        for &engine in engines::ENGINES {
            let Some(o) = results.by.get(&(row.name.to_string(), engine.to_string())) else {
                continue;
            };
            if let Some(e) = &o.error {
                notes.push(format!("{engine} refused {}: {e}", row.name));
                continue;
            }
            if let Some(&(_, ns)) = o.modes.get("compile") {
                row.build.insert(engine, ns as f64 / 1e9);
            }
            for &mode in MODES {
                let want = row.search["regex crate"][mode].0;
                match o.modes.get(mode) {
                    Some(&(r, ns)) if r == want => {
                        let per = row.search.entry(engine).or_default();
                        per.insert(mode, (r, ns as f64 / 1e9));
                    }
                    Some(&(r, _)) => notes.push(format!(
                        "{engine} on {} ({mode}) gives {r}, not {want}: left out",
                        row.name
                    )),
                    None => notes.push(format!("{engine} on {} ({mode}): not run", row.name)),
                }
            }
        }
    }
}

/// The search table: one row per pattern and mode.
fn search_table(rows: &[Row], mb: f64, reps: usize) -> Table {
    let mut cols = vec![
        "pattern",
        "mode",
        "result",
        "augur C (MB/s)",
        "augur JIT (MB/s)",
    ];
    let named: Vec<String> = OTHERS.iter().map(|e| format!("{e} (MB/s)")).collect();
    cols.extend(named.iter().map(String::as_str));
    cols.push("C / regex crate (time)");
    let mut t = Table::new(
        "regex",
        "augur-regex beside the regex crate, PCRE2-JIT, RE2 and Hyperscan: searching generated text",
        &cols,
    );
    for row in rows {
        for &mode in MODES {
            let rate = |engine: &str| match row.search.get(engine).and_then(|m| m.get(mode)) {
                Some(&(_, s)) => Cell::float(mb / s, 0),
                None => Cell::Missing,
            };
            let (result, c) = row.search["augur C"][mode];
            let r = row.search["regex crate"][mode].1;
            let mut cells: Vec<Cell> = vec![row.name.into(), mode.into(), result.into()];
            cells.extend(
                ["augur C", "augur JIT"]
                    .iter()
                    .chain(OTHERS)
                    .map(|e| rate(e)),
            );
            cells.push(Cell::float(c / r, 2));
            t.push(cells);
        }
    }
    t.note(format!(
        "{mb:.1} MB of generated text; best of {reps} runs each; results checked against the regex crate's"
    ));
    t.note("count: matches, leftmost-first, as find_iter gives them; spans: the sum of their lengths; lines: the lines that hold a match (a match test per line)");
    t
}

/// The build table: one row per pattern.
fn build_table(rows: &[Row]) -> Table {
    let mut t = Table::new(
        "regex-build",
        "Building each matcher (ms): augur's staging, gcc and JIT beside the other engines' compilers",
        &[
            "pattern",
            "DFA states",
            "augur stage",
            "augur cc",
            "augur JIT",
            "regex crate",
            "PCRE2-JIT",
            "RE2",
            "Hyperscan",
        ],
    );
    for row in rows {
        let b = |k: &str| {
            row.build
                .get(k)
                .map_or(Cell::Missing, |&s| Cell::float(s * 1e3, 1))
        };
        let keys = [
            "stage",
            "cc",
            "JIT",
            "regex crate",
            "PCRE2-JIT",
            "RE2",
            "Hyperscan",
        ];
        let mut cells: Vec<Cell> = vec![
            row.name.into(),
            ((row.states.0 + row.states.1) as i64).into(),
        ];
        cells.extend(keys.iter().map(|k| b(k)));
        t.push(cells);
    }
    t.note("DFA states: forward and backward, as far as the staged searches reach; stage: parsing and staging is_match, find and rfind; cc: gcc of the three (-O2, -O1 past 256 states) and loading, from an empty cache; JIT: the three compiled by the JIT");
    t.note("Hyperscan: its database for the match test (each engine compiles one pattern)");
    t
}

/// The geometric mean of each engine's time over augur C's, per mode and
/// over all modes: above 1, augur C is faster.
fn summary_table(rows: &[Row]) -> Table {
    let mut t = Table::new(
        "regex-summary",
        "Geometric mean of each engine's search time over augur C's (above 1: augur C is faster)",
        &["engine", "count", "spans", "lines", "all", "searches"],
    );
    for &engine in ["augur JIT"].iter().chain(OTHERS) {
        let mut all = Vec::new();
        let mut cells: Vec<Cell> = vec![engine.into()];
        for &mode in MODES {
            let ratios: Vec<f64> = rows
                .iter()
                .filter_map(|r| {
                    let theirs = r.search.get(engine)?.get(mode)?.1;
                    Some(theirs / r.search["augur C"][mode].1)
                })
                .collect();
            cells.push(geomean(&ratios).map_or(Cell::Missing, |g| Cell::float(g, 2)));
            all.extend(ratios);
        }
        cells.push(geomean(&all).map_or(Cell::Missing, |g| Cell::float(g, 2)));
        cells.push((all.len() as i64).into());
        t.push(cells);
    }
    t.note("searches: the (pattern, mode) pairs the engine ran with results equal to the regex crate's");
    t
}

fn geomean(xs: &[f64]) -> Option<f64> {
    (!xs.is_empty()).then(|| (xs.iter().map(|x| x.ln()).sum::<f64>() / xs.len() as f64).exp())
}

/// Count mode's throughput per pattern and engine.
fn plot(rows: &[Row], mb: f64) -> Plot {
    let cats: Vec<String> = rows.iter().map(|r| r.name.to_string()).collect();
    let mut p =
        Plot::bars("count", "Counting matches (MB/s, log scale)", &cats, "MB/s").log(false, true);
    for &engine in ["augur C", "augur JIT"].iter().chain(OTHERS) {
        p = p.series(
            engine,
            rows.iter().enumerate().filter_map(|(i, r)| {
                let s = r.search.get(engine)?.get("count")?.1;
                Some((i as f64, mb / s))
            }),
        );
    }
    p
}

/// Runs the experiment.
pub fn run(ctx: &Ctx) -> Result<Outcome> {
    let hay = text::haystack(if ctx.quick { 1 << 20 } else { 4 << 20 });
    let lines = text::lines(&hay);
    let patterns = patterns(ctx.quick);
    let bar = ctx.bar(patterns.len() + 1, "regex");
    let dir = std::env::temp_dir().join(format!("augur-bench-regex-{}", std::process::id()));
    let mut rows = Vec::new();
    for p in &patterns {
        bar.set_message(p.0);
        rows.push(measure(ctx, p, &hay, &lines, &dir.join("cache"))?);
        bar.inc(1);
    }
    bar.set_message("PCRE2, RE2, Hyperscan");
    let reps = ctx.reps(5);
    let results = engines::run(&dir.join("engines"), &hay, &patterns, reps);
    // Best effort: the directory holds only this run's files.
    let _ = std::fs::remove_dir_all(&dir);
    let mut results = results?;
    bar.finish_and_clear();
    let mut notes = std::mem::take(&mut results.notes);
    merge(&mut rows, results, &mut notes);
    let mb = hay.len() as f64 / 1e6;
    let mut search = search_table(&rows, mb, reps);
    for n in notes {
        search.note(n);
    }
    Ok(Outcome {
        tables: vec![search, build_table(&rows), summary_table(&rows)],
        plots: vec![plot(&rows, mb)],
    })
}
