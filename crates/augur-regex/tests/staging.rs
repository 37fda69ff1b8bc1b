//! `Regex::stage` extracts its three functions on threads of their own:
//! the code is the same at every staging, a limit is an error (the first
//! function's), an engine panic reaches the caller, and the process stays
//! usable after each.

use augur::Builder;
use augur_regex::{Error, Regex};

const PATTERNS: [&str; 4] = [
    "[a-q][^u-z]{5}x",
    "Tom.{2,4}river|river.{2,4}Tom",
    "(a|b)*abb",
    "^ab+c$",
];

/// C of every function of `p`'s matcher.
fn code(p: &str, b: &Builder) -> Result<String, Error> {
    Ok(Regex::new(p)?.stage(b)?.c_code())
}

#[test]
fn staging_on_threads_gives_the_same_code_every_time() {
    for p in PATTERNS {
        let first = code(p, &Builder::new()).unwrap_or_else(|e| panic!("{p}: {e}"));
        for _ in 0..3 {
            assert_eq!(
                code(p, &Builder::new()).expect("staged before"),
                first,
                "{p}"
            );
        }
        // From a thread of the caller's, too.
        let other = std::thread::spawn(move || code(p, &Builder::new()).expect("staged before"));
        assert_eq!(other.join().expect("no panic"), first, "{p}");
    }
}

#[test]
fn a_limit_in_a_staging_thread_is_the_callers_error() {
    let tight = Builder::new().max_runs(3);
    let e = code("[a-q][^u-z]{5}x", &tight).expect_err("3 runs are too few");
    assert!(matches!(e, Error::Staging(_)), "{e}");
    assert!(e.to_string().contains("runs of the closure"), "{e}");
    // Nothing is left behind: the next staging works.
    code("[a-q][^u-z]{5}x", &Builder::new()).expect("stages after the error");
}

#[test]
fn an_engine_panic_in_a_staging_thread_reaches_the_caller() {
    let faulty = Builder::new().panic_before_run(2);
    let outcome = std::panic::catch_unwind(|| code("(a|b)*abb", &faulty));
    match outcome {
        Err(p) => {
            let msg = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            assert!(msg.contains("injected internal panic"), "{msg}");
        }
        Ok(r) => {
            let e = r.expect_err("an injected panic is never a matcher");
            assert!(e.to_string().contains("injected internal panic"), "{e}");
        }
    }
    code("(a|b)*abb", &Builder::new()).expect("stages after the panic");
}
