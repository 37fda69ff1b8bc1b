//! augur-regex beside the regex crate: patterns in the spirit of the
//! rebar benchmark over a few MB of generated English-like text, counting
//! matches (`find_iter`), with the time to build each matcher beside the
//! time to search. PCRE2, RE2 and Hyperscan are not measured yet.

use super::{ms, time, Ctx, Outcome};
use crate::report::{Cell, Table};
use crate::Result;
use augur::exec::{Backend, CompileOptions};
use augur_regex::{Options, Regex};
use augur_rng::Rng;
use std::time::Instant;

/// The patterns: (name, pattern, byte-oriented).
const PATTERNS: &[(&str, &str, bool)] = &[
    ("literal", "Sherlock", false),
    ("literal-alt", "Sherlock|Holmes|Watson|Irene|Adler", false),
    ("ignore-case", "(?i)sherlock", false),
    ("suffix", "[a-zA-Z]+ing", false),
    ("bounded", "[A-Za-z]{8,13}", false),
    ("twain-names", "Tom|Sawyer|Huckleberry|Finn", false),
    ("twain-near", "[a-z]+ (Tom|Sawyer|Huckleberry|Finn)", false),
    ("dfa-9", "[a-q][^u-z]{9}x", true),
];

const WORDS: &[&str] = &[
    "the",
    "of",
    "and",
    "to",
    "in",
    "a",
    "was",
    "he",
    "that",
    "it",
    "his",
    "her",
    "with",
    "as",
    "had",
    "for",
    "she",
    "at",
    "said",
    "on",
    "but",
    "be",
    "not",
    "by",
    "which",
    "you",
    "Sherlock",
    "Holmes",
    "Watson",
    "Irene",
    "Adler",
    "Tom",
    "Sawyer",
    "Huckleberry",
    "Finn",
    "running",
    "morning",
    "evening",
    "something",
    "nothing",
    "thinking",
    "Baker",
    "Street",
    "extraordinary",
    "investigation",
    "circumstances",
    "consideration",
    "sherlock",
    "SHERLOCK",
    "river",
    "house",
    "window",
    "letter",
    "doctor",
    "inspector",
    "quite",
    "exactly",
    "upon",
];

/// About `len` bytes of words and punctuation, the same for a seed.
fn text(len: usize) -> Vec<u8> {
    let mut r = Rng(7);
    let mut t = Vec::with_capacity(len + 16);
    while t.len() < len {
        t.extend(r.pick(WORDS).as_bytes());
        t.push(match r.below(20) {
            0 => b'\n',
            1 => b',',
            2 => b'.',
            _ => b' ',
        });
    }
    t
}

/// Runs the experiment.
pub fn run(ctx: &Ctx) -> Result<Outcome> {
    let hay = text(if ctx.quick { 1 << 20 } else { 4 << 20 });
    let mut t = Table::new(
        "regex",
        "augur-regex beside the regex crate: counting matches in generated text",
        &[
            "pattern",
            "matches",
            "DFA states",
            "stage (ms)",
            "cc (ms)",
            "augur C (MB/s)",
            "augur JIT (MB/s)",
            "regex crate (MB/s)",
            "C / regex (time)",
        ],
    );
    let patterns = if ctx.quick { &PATTERNS[..4] } else { PATTERNS };
    let bar = ctx.bar(patterns.len(), "regex");
    let reps = ctx.reps(5);
    let mb = hay.len() as f64 / 1e6;
    let cache = std::env::temp_dir().join(format!("augur-bench-regex-{}", std::process::id()));
    for &(name, pattern, bytes) in patterns {
        bar.set_message(name);
        let opts = Options {
            unicode: !bytes,
            ..Default::default()
        };
        let reference = regex::bytes::RegexBuilder::new(pattern)
            .unicode(!bytes)
            .build()
            .map_err(|e| e.to_string())?;
        let t0 = Instant::now();
        let staged = Regex::with(pattern, &opts)?.stage(&augur::Builder::new())?;
        let stage_ms = ms(t0.elapsed());
        // A cache of its own, empty: cc is timed compiling.
        let cold = CompileOptions {
            cache_dir: Some(cache.clone()),
            ..CompileOptions::default()
        };
        let t1 = Instant::now();
        let c = staged.compile(&cold)?;
        let cc_ms = ms(t1.elapsed());
        let jit = staged.compile(&CompileOptions::default().with_backend(Backend::Jit))?;
        let (ours_c, _, n) = time(reps, || Ok(c.count(&hay)))?;
        let (ours_jit, _, n_jit) = time(reps, || Ok(jit.count(&hay)))?;
        let (theirs, _, want) = time(reps, || Ok(reference.find_iter(&hay).count()))?;
        if n != want || n_jit != want {
            return Err(format!(
                "{name}: {n} (C) and {n_jit} (JIT) matches, the regex crate {want}"
            )
            .into());
        }
        let rate = |d: std::time::Duration| Cell::float(mb / d.as_secs_f64(), 0);
        t.push(vec![
            name.into(),
            (n as i64).into(),
            (staged.states.0 as i64).into(),
            Cell::float(stage_ms, 1),
            Cell::float(cc_ms, 1),
            rate(ours_c),
            rate(ours_jit),
            rate(theirs),
            Cell::float(ours_c.as_secs_f64() / theirs.as_secs_f64(), 2),
        ]);
        bar.inc(1);
    }
    bar.finish_and_clear();
    // Best effort: the directory holds only this run's units.
    let _ = std::fs::remove_dir_all(&cache);
    t.note(format!(
        "{:.1} MB of generated text; best of {reps} runs each, measured in turn in one process; counts checked equal",
        mb
    ));
    t.note("stage: parsing and staging the three functions (is_match, find, rfind); cc: gcc -O2 of the three and loading, from an empty cache");
    Ok(Outcome {
        tables: vec![t],
        plots: vec![],
    })
}
