//! The DSL kit (`augur::dsl`): state tags see keeps program points apart
//! (after joins and across dyn loops' back edges), a keyed field shows tags
//! only its key, state is fresh in every run and extraction, and DSL
//! errors reach the caller typed.

use crate::common;

use augur::prophecy::Prophecy;
use augur::{dsl, Builder, Dyn, Error};
use common::{check, count};
use std::cell::{Cell, RefCell};
use std::panic::Location;

/// A DSL of one accumulator: `add` adds `x` and scales, and the scale the
/// program set last (state the tags see) decides `add`'s code. `plain`
/// keeps the same value where tags cannot see it, for contrast.
struct Acc {
    scale: dsl::Seen<i32>,
    plain: Cell<i32>,
    adds: Cell<u32>,
}

#[derive(Clone)]
struct Scaler(dsl::State<Acc>);

impl Scaler {
    #[track_caller]
    #[augur::staged]
    fn new() -> Scaler {
        Scaler(dsl::State::new(Acc {
            scale: dsl::Seen::new(2),
            plain: Cell::new(2),
            adds: Cell::new(0),
        }))
    }

    /// Sets the scale tags see, or the plain one.
    #[augur::staged]
    fn scale(&self, s: i32, seen: bool) {
        if seen {
            self.0.scale.set(s);
        } else {
            self.0.plain.set(s);
        }
    }

    /// `acc = (acc + x) * scale`, by the scale tags see or by the plain one.
    #[augur::staged]
    fn add(&self, acc: Dyn<i32>, x: Dyn<i32>, seen: bool) {
        let s = if seen {
            self.0.scale.get()
        } else {
            self.0.plain.get()
        };
        acc.set((acc + x) * s);
        self.0.adds.set(self.0.adds.get() + 1);
    }
}

/// The scale differs between the sides of a dyn `if`; the `add` after the
/// join is one call site with two states. Tags tell the two apart, so the
/// code after the join is generated per state at once. The plain value is
/// out of view in its cell, but `add` is annotated and binds it to a local
/// (`let s = if ..`), which the attribute tracks: tags see it there too,
/// so neither needs a link audit to find the difference. (Unannotated, the
/// engine shares no code there; trusted, it finds the difference by a link
/// audit: `language::state_across_joins`.)
#[test]
#[augur::staged]
fn two_states_at_one_call_site_are_not_merged() {
    for seen in [true, false] {
        let ex = check(
            "scaled",
            move |x: Dyn<i32>| {
                let d = Scaler::new();
                let acc = Dyn::named("acc", 1);
                if x.gt(0).is_true() {
                    d.scale(3, seen);
                }
                d.add(acc, x, seen);
                acc
            },
            |&mut (x,): &mut (i32,)| (1 + x) * if x > 0 { 3 } else { 2 },
            &[(i32::MIN / 4,), (-5,), (0,), (1,), (7,), (i32::MAX / 4,)],
        );
        let code = ex.c_code();
        assert!(code.contains("* 3") && code.contains("* 2"), "{code}");
        let audits = ex.stats().link_audit_failures;
        assert_eq!(audits, 0, "seen {seen}: {audits} audit failures");
    }
}

/// The same state on both sides (reached another way on each): the code
/// after the join is shared.
#[test]
#[augur::staged]
fn equal_states_share_code() {
    let ex = check(
        "same",
        |x: Dyn<i32>| {
            let d = Scaler::new();
            let acc = Dyn::named("acc", 1);
            if x.gt(0).is_true() {
                d.scale(3, true);
            } else {
                d.scale(5, true);
                d.scale(3, true);
            }
            d.add(acc, x, true);
            acc
        },
        |&mut (x,): &mut (i32,)| (1 + x) * 3,
        &[(i32::MIN / 4,), (-5,), (0,), (7,), (i32::MAX / 4,)],
    );
    assert_eq!(count(&ex.c_code(), "* 3"), 1, "{}", ex.c_code());
}

/// A dyn loop whose turns flip the scale between two values: tags see the
/// state across the back edge, so the loop closes once the state repeats
/// (after two turns) and each turn has its scale's code.
#[test]
#[augur::staged]
fn a_dyn_loop_closes_when_the_state_repeats() {
    let ex = check(
        "flip",
        |n: Dyn<i32>| {
            let d = Scaler::new();
            let acc = Dyn::named("acc", 0);
            let i = Dyn::named("i", 0);
            while i.lt(n).is_true() {
                d.add(acc, i, true);
                d.scale(if d.0.scale.get() == 2 { 5 } else { 2 }, true);
                i.set(i + 1);
            }
            acc
        },
        |&mut (n,): &mut (i32,)| {
            (0..n).fold(0, |acc, i| (acc + i) * if i % 2 == 0 { 2 } else { 5 })
        },
        &[(0,), (1,), (2,), (5,), (8,)],
    );
    let code = ex.c_code();
    assert!(code.contains("* 2") && code.contains("* 5"), "{code}");
    assert!(ex.stats().back_edges >= 1, "{code}");
}

/// A record of the last operation: its kind decides code, its number
/// grows with every operation (as a DSL's tensor ids do).
type Last = Option<(&'static str, u32)>;

/// A dyn loop whose turns number their operations anew (as a DSL numbers
/// its tensors), recording the last one in a field tags see by `key`.
#[augur::staged]
fn numbering_loop<K: Clone + std::hash::Hash + Eq + 'static>(
    key: fn(&Last) -> K,
) -> impl Fn(Dyn<i32>) -> Dyn<i32> + Clone {
    move |n: Dyn<i32>| {
        let last = dsl::Seen::keyed(None, key);
        let count = Cell::new(0u32);
        let acc = Dyn::named("acc", 0);
        let i = Dyn::named("i", 0);
        while i.lt(n).is_true() {
            count.set(count.get() + 1);
            last.set(Some(("add", count.get())));
            acc.set(acc + i);
            i.set(i + 1);
        }
        acc
    }
}

/// Keyed by the kind only, the loop closes; the whole value seen, the
/// numbers keep every turn apart and the loop never closes.
#[test]
#[augur::staged]
fn a_keyed_field_shows_tags_only_its_key() {
    let keyed = numbering_loop(|l| l.map(|l| l.0));
    let ex = Builder::new().extract("keyed", keyed).unwrap();
    assert_eq!(ex.interpret(&[4.into()]).unwrap(), 6.into());
    assert_eq!(ex.stats().back_edges, 1, "{}", ex.c_code());
    let whole = Builder::new()
        .max_loop_iterations(40)
        .extract("whole", numbering_loop(|l| *l));
    assert!(
        matches!(whole, Err(Error::LoopNeverCloses { .. })),
        "{:?}",
        whole.map(|_| ())
    );
}

/// Each run makes its state anew: the `adds` count starts at 0 in every
/// run and extraction, so the generated names and code are the same.
#[test]
#[augur::staged]
fn state_is_fresh_in_every_run_and_extraction() {
    let counts = RefCell::new(Vec::new());
    let stage = |x: Dyn<i32>| {
        let d = Scaler::new();
        let acc = Dyn::named("acc", 0);
        if x.gt(0).is_true() {
            d.add(acc, x, true);
        }
        d.add(acc, x, true);
        counts.borrow_mut().push(d.0.adds.get());
        acc
    };
    let a = Builder::new().extract("fresh", stage).unwrap();
    let b = Builder::new().extract("fresh", stage).unwrap();
    assert_eq!(a.c_code(), b.c_code());
    let counts = counts.into_inner();
    assert!(counts.iter().all(|&c| c == 1 || c == 2), "{counts:?}");
    assert!(counts.contains(&2) && counts.len() >= 4, "{counts:?}");
}

/// State made outside the closure, or kept from an earlier run, is refused
/// where it is used, naming where it was made.
#[test]
#[augur::staged]
fn state_from_outside_the_run_is_refused() {
    let outside = Scaler::new();
    let made = line!() - 1;
    let r = Builder::new().extract("outside", |x: Dyn<i32>| {
        let acc = Dyn::named("acc", 0);
        outside.add(acc, x, true);
        acc
    });
    let e = r.map(|_| ()).unwrap_err();
    let text = e.to_string();
    assert!(matches!(e, Error::Misuse { .. }), "{text}");
    assert!(text.contains(&format!("{}:{made}:", file!())), "{text}");
    assert!(text.contains("outside the extraction"), "{text}");

    let kept: RefCell<Option<Scaler>> = RefCell::new(None);
    let r = Builder::new().extract("kept", |x: Dyn<i32>| {
        let d = kept.borrow_mut().get_or_insert_with(Scaler::new).clone();
        let acc = Dyn::named("acc", 0);
        if x.gt(0).is_true() {
            acc.set(1);
        }
        d.add(acc, x, true);
        acc
    });
    let text = r.map(|_| ()).unwrap_err().to_string();
    assert!(text.contains("by an earlier run of the closure"), "{text}");
    // Outside an extraction the state is a plain shared value.
    assert_eq!(outside.0.adds.get(), 0);
    assert_eq!(outside.0.scale.get(), 2);
}

#[test]
#[augur::staged]
fn ids_weak_handles() {
    let (a, b) = (Scaler::new(), Scaler::new());
    assert_ne!(a.0.id(), b.0.id());
    assert_eq!(a.clone().0.id(), a.0.id());
    let weak = a.0.downgrade();
    assert_eq!(weak.upgrade().map(|s| s.id()), Some(a.0.id()));
    drop(a);
    assert!(weak.upgrade().is_none());
}

/// A DSL's error type.
#[derive(Debug, PartialEq)]
enum ScaleError {
    Zero,
    Negative(i32),
}

impl std::fmt::Display for ScaleError {
    #[augur::staged]
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ScaleError::Zero => write!(f, "scaler: a scale of 0"),
            ScaleError::Negative(s) => write!(f, "scaler: a negative scale {s}"),
        }
    }
}

impl std::error::Error for ScaleError {}

#[track_caller]
#[augur::staged]
fn checked_scale(d: &Scaler, s: i32) {
    match s {
        0 => dsl::fail(ScaleError::Zero, Location::caller()),
        s if s < 0 => dsl::fail(ScaleError::Negative(s), Location::caller()),
        s => d.scale(s, true),
    }
}

/// The error reaches the caller as `Error::Dsl`, typed, at the user's line,
/// on whichever path raises it; the builder works on after it.
#[test]
#[augur::staged]
fn dsl_errors_are_typed_data_at_the_users_line() {
    let builder = Builder::new();
    for scale in [0, -4] {
        let line = line!() + 5;
        let r = builder.extract("bad", |x: Dyn<i32>| {
            let d = Scaler::new();
            let acc = Dyn::named("acc", 0);
            if x.gt(0).is_true() {
                checked_scale(&d, scale);
            }
            d.add(acc, x, true);
            acc
        });
        let e = r.map(|_| ()).unwrap_err();
        let Error::Dsl { location, .. } = &e else {
            panic!("not a DSL error: {e}")
        };
        assert_eq!((location.file, location.line), (file!(), line));
        match e.dsl_error::<ScaleError>() {
            Some(ScaleError::Zero) => assert_eq!(scale, 0),
            Some(ScaleError::Negative(s)) => assert_eq!(*s, scale),
            None => panic!("not a ScaleError: {e}"),
        }
        assert!(e.dsl_error::<std::fmt::Error>().is_none());
        let text = e.to_string();
        assert!(text.starts_with("scaler: a "), "{text}");
        assert!(text.ends_with(&format!(" at {location}")), "{text}");
        let source = std::error::Error::source(&e).map(|s| s.to_string());
        assert_eq!(
            source.as_deref(),
            text.strip_suffix(&format!(" at {location}"))
        );
        let ok = builder.extract("good", |x: Dyn<i32>| x + 1).unwrap();
        assert_eq!(ok.interpret(&[1.into()]).unwrap(), 2.into());
    }
}

/// A DSL error raised under a prediction that a requirement of the same
/// attempt has already corrected starts the next attempt, as a panic
/// does; under the settled prediction the program extracts.
#[test]
#[augur::staged]
fn a_dsl_error_under_a_corrected_prediction_retries() {
    let ex = Builder::new()
        .extract("retry", |x: Dyn<i32>| {
            let d = Scaler::new();
            let wide = Prophecy::named("wide", false);
            let predicted = wide.get();
            wide.require(true);
            checked_scale(&d, if predicted { 3 } else { 0 });
            let acc = Dyn::named("acc", 0);
            d.add(acc, x, true);
            acc
        })
        .unwrap();
    assert_eq!(ex.interpret(&[2.into()]).unwrap(), 6.into());
}

/// Outside an extraction, `dsl::fail` panics with the error's message.
#[test]
#[augur::staged]
fn fail_outside_an_extraction_panics_with_the_message() {
    let p = std::panic::catch_unwind(|| dsl::fail(ScaleError::Zero, Location::caller()));
    let message = p.unwrap_err().downcast::<String>().unwrap();
    assert!(message.starts_with("scaler: a scale of 0 at "), "{message}");
}
