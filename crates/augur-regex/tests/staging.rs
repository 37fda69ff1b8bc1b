//! `Regex::stage` extracts its three functions on threads of their own:
//! its outcome is `Regex::stage_here`'s (one after the other on the
//! caller's thread) under every limit and injected panic, the code is the
//! same at every staging, and the process stays usable after each.

use augur::Builder;
use augur_regex::{Error, Regex, Staged};
use std::panic::{catch_unwind, AssertUnwindSafe};

const PATTERNS: [&str; 4] = [
    "[a-q][^u-z]{5}x",
    "Tom.{2,4}river|river.{2,4}Tom",
    "(a|b)*abb",
    "^ab+c$",
];

/// How a staging ended, as text: the C of every function, the error, or
/// the panic's message.
fn outcome(stage: impl FnOnce() -> Result<Staged, Error>) -> String {
    match catch_unwind(AssertUnwindSafe(stage)) {
        Ok(Ok(s)) => s.c_code(),
        Ok(Err(e)) => format!("error: {e}"),
        Err(p) => {
            let msg = p.downcast_ref::<String>().cloned();
            let msg = msg.or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()));
            format!("panic: {}", msg.unwrap_or_default())
        }
    }
}

/// Builders whose limits and injected panics stop each of the three
/// functions at some point (the functions' runs are numbered apart).
fn builders() -> Vec<(String, Builder)> {
    let mut out = vec![("default".to_string(), Builder::new())];
    for w in [300, 2_000, 5_000, 20_000, 100_000] {
        out.push((format!("max_work {w}"), Builder::new().max_work(w)));
    }
    for r in [3, 40, 200] {
        out.push((format!("max_runs {r}"), Builder::new().max_runs(r)));
    }
    for j in [1, 50, 100, 200] {
        out.push((
            format!("panic before run {j}"),
            Builder::new().panic_before_run(j),
        ));
        let both = Builder::new().max_work(2_000).panic_before_run(j);
        out.push((format!("max_work 2000, panic before run {j}"), both));
    }
    out
}

#[test]
fn staging_side_by_side_ends_as_staging_one_after_the_other() {
    let mut stopped = 0;
    for p in PATTERNS {
        let re = Regex::new(p).expect("parses");
        for (what, b) in builders() {
            let here = outcome(|| re.stage_here(&b));
            let side = outcome(|| re.stage(&b));
            assert_eq!(side, here, "{p} under {what}");
            stopped += usize::from(here.starts_with("error") || here.starts_with("panic"));
        }
    }
    // The builders do stop stagings (the comparison covers errors and
    // panics, not only code).
    assert!(stopped >= 20, "only {stopped} stagings stopped");
}

#[test]
fn staging_on_threads_gives_the_same_code_every_time() {
    for p in PATTERNS {
        let re = Regex::new(p).expect("parses");
        let first = outcome(|| re.stage(&Builder::new()));
        assert!(
            !first.starts_with("error") && !first.starts_with("panic"),
            "{p}: {first}"
        );
        for _ in 0..3 {
            assert_eq!(outcome(|| re.stage(&Builder::new())), first, "{p}");
        }
        // From a thread of the caller's, too.
        let other = std::thread::spawn(move || outcome(|| re.stage(&Builder::new())));
        assert_eq!(other.join().expect("no panic"), first, "{p}");
    }
}

#[test]
fn staging_inside_an_extraction_is_staging_one_after_the_other() {
    let re = Regex::new("(a|b)*abb").expect("parses");
    let seen = std::cell::RefCell::new(Vec::new());
    let outer = Builder::new().extract("outer", |x: augur::Dyn<i64>| {
        let side = outcome(|| re.stage(&Builder::new()));
        let here = outcome(|| re.stage_here(&Builder::new()));
        seen.borrow_mut().push((side, here));
        x
    });
    assert!(outer.is_ok(), "the outer extraction: {:?}", outer.err());
    let seen = seen.into_inner();
    assert!(!seen.is_empty());
    let (side, here) = &seen[0];
    assert_eq!(side, here);
    assert!(side.contains("inside another extraction"), "{side}");
}
