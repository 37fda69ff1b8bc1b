//! Prophecies that never settle, lattices that break their laws, handles
//! used where they do not belong: each a clear error naming the problem and
//! the line, and the builder stays usable.

use augur::prophecy::{Lattice, Max, Prophecy};
use augur::{Builder, Dyn, Error, History, ProphecyMode};
use std::panic::{catch_unwind, AssertUnwindSafe};

#[augur::staged]
fn ok_extraction(b: &Builder) {
    let ex = b
        .extract("after", |x: Dyn<i32>| {
            let p = Prophecy::new(false);
            p.require(true);
            if p.get() {
                x + 1
            } else {
                x
            }
        })
        .expect("the builder works after a failed extraction");
    assert_eq!(ex.interpret(&[1.into()]).unwrap(), 2.into());
}

/// Each attempt requires one more than it read: an unbounded lattice. The
/// error lists the prophecy's history with the requiring line.
#[test]
#[augur::staged]
fn unbounded_growth_stops_with_each_prophecys_history() {
    for mode in [
        ProphecyMode::Paper,
        ProphecyMode::Collect,
        ProphecyMode::Adaptive,
    ] {
        let b = Builder::new().prophecy_mode(mode).max_prophecy_restarts(20);
        let line = line!() + 5;
        let err = b
            .extract("grows", |x: Dyn<i32>| {
                let p = Prophecy::named("depth", Max(0u64));
                let seen = p.get().0;
                p.require(Max(seen + 1));
                x
            })
            .unwrap_err();
        let Error::ProphecyNotSettled { restarts, history } = &err else {
            panic!("expected ProphecyNotSettled, got {err}");
        };
        assert_eq!(*restarts, 20);
        let text = err.to_string();
        assert!(history.contains("prophecy `depth`"), "{text}");
        assert!(
            history.contains(&format!("prophecy_errors.rs:{line}")),
            "{text}"
        );
        assert!(
            history.contains("more joins"),
            "long histories are abridged: {text}"
        );
        assert!(text.contains("max_prophecy_restarts"), "{text}");
        ok_extraction(&b);
    }
}

/// A "lattice" whose join forgets the old value (not monotone): two
/// requirements would alternate forever; the first join that loses the old
/// value is reported with its line.
#[derive(Clone, Debug, PartialEq)]
struct Latest(i32);

impl Lattice for Latest {
    #[augur::staged]
    fn satisfies(&self, required: &Self) -> bool {
        self.0 == required.0
    }
    #[augur::staged]
    fn join(&mut self, required: &Self) {
        self.0 = required.0;
    }
}

#[test]
#[augur::staged]
fn a_join_that_is_not_monotone_is_reported() {
    let line = line!() + 6;
    let err = Builder::new()
        .extract("flip", |x: Dyn<i32>| {
            let p = Prophecy::new(Latest(0));
            let _ = p.get();
            if x.gt(0).is_true() {
                p.require(Latest(1));
            } else {
                p.require(Latest(2));
            }
            x
        })
        .unwrap_err();
    let Error::Lattice { message, location } = &err else {
        panic!("expected a lattice error, got {err}");
    };
    assert!(
        message.contains("Latest(1)") && message.contains("Latest(0)"),
        "{err}"
    );
    assert_eq!(location.unwrap().line, line);
    assert!(err.to_string().contains("Latest"), "{err}");
}

/// A join that does nothing would restart forever without a check.
#[derive(Clone, Debug)]
struct Stuck;

impl Lattice for Stuck {
    #[augur::staged]
    fn satisfies(&self, _: &Self) -> bool {
        false
    }
    #[augur::staged]
    fn join(&mut self, _: &Self) {}
}

#[test]
#[augur::staged]
fn a_join_that_misses_the_requirement_is_reported() {
    let err = Builder::new()
        .extract("stuck", |x: Dyn<i32>| {
            let p = Prophecy::new(Stuck);
            p.require(Stuck);
            x
        })
        .unwrap_err();
    assert!(matches!(err, Error::Lattice { .. }), "{err}");
    assert!(err.to_string().contains("not a lattice"), "{err}");
}

#[augur::staged]
fn panic_text(r: std::thread::Result<()>) -> String {
    let p = r.expect_err("expected a panic");
    p.downcast_ref::<String>()
        .cloned()
        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

/// Outside an extraction there is nothing to predict: a clear panic.
#[test]
#[augur::staged]
fn prophecies_outside_an_extraction_panic_clearly() {
    let made = panic_text(catch_unwind(|| {
        let _ = Prophecy::new(false);
    }));
    assert!(
        made.contains("Prophecy was created outside an extraction"),
        "{made}"
    );
    let made = panic_text(catch_unwind(|| {
        let _ = History::new(Max(1));
    }));
    assert!(
        made.contains("History was created outside an extraction"),
        "{made}"
    );
}

/// A handle kept from one extraction and used in another (or after it).
#[test]
#[augur::staged]
fn a_handle_from_another_extraction_is_refused() {
    let kept = std::cell::Cell::new(None);
    Builder::new()
        .extract("first", |x: Dyn<i32>| {
            kept.set(Some(Prophecy::new(false)));
            x
        })
        .unwrap();
    let p = kept.get().unwrap();
    let after = panic_text(catch_unwind(AssertUnwindSafe(|| {
        p.get();
    })));
    assert!(
        after.contains("Prophecy was read outside an extraction"),
        "{after}"
    );
    let line = line!() + 4;
    let err = Builder::new()
        .extract("second", |x: Dyn<i32>| {
            let _mine = Prophecy::new(false);
            p.require(true);
            x
        })
        .unwrap_err();
    let Error::Misuse { message, location } = &err else {
        panic!("expected misuse, got {err}");
    };
    assert!(message.contains("in another extraction"), "{err}");
    assert_eq!(location.unwrap().line, line);
    ok_extraction(&Builder::new());
}

/// A prophecy that one path keeps reading while the other keeps raising
/// would never settle; with a bounded lattice it settles, whatever the
/// order the runs take.
#[test]
#[augur::staged]
fn bounded_lattices_always_settle() {
    let ex = Builder::new()
        .prophecy_mode(ProphecyMode::Paper)
        .extract("bounded", |x: Dyn<u8>| {
            let p = Prophecy::new(Max(0u8));
            let v = p.get().0;
            if x.gt(v).is_true() {
                p.require(Max(v.saturating_add(1)));
            }
            x
        })
        .unwrap();
    assert_eq!(ex.stats().prophecy_restarts, 255);
    assert_eq!(ex.explain().cells[0].value, "Max(255)");
}
