//! Property tests of the built-in lattices: the laws of
//! `augur::prophecy::Lattice` on random samples, join order independence,
//! and `Set` against a `BTreeSet` model.

use crate::common;

use augur::prophecy::{check_laws, Flat, Lattice, Max, Set};
use common::Rng;
use std::collections::BTreeSet;
use std::fmt::Debug;

#[augur::staged]
fn gen_bool(r: &mut Rng) -> bool {
    r.below(2) == 1
}

#[augur::staged]
fn gen_flat(r: &mut Rng) -> Flat<u8> {
    match r.below(4) {
        0 => Flat::Unknown,
        1 => Flat::Conflict,
        // Few distinct values, so equal ones meet often.
        _ => Flat::Exactly(r.below(3) as u8),
    }
}

#[augur::staged]
fn gen_set(r: &mut Rng) -> Set<u8> {
    let n = r.below(5);
    (0..n).map(|_| r.below(8) as u8).collect()
}

#[augur::staged]
fn gen_max(r: &mut Rng) -> Max<i16> {
    Max(r.below(7) as i16 - 3)
}

/// Checks the laws on `rounds` random sample sets of each size.
#[augur::staged]
fn laws<L: Lattice>(name: &str, rounds: u64, gen: impl Fn(&mut Rng) -> L) {
    for seed in 0..rounds {
        let mut r = Rng(seed);
        let samples: Vec<L> = (0..6).map(|_| gen(&mut r)).collect();
        if let Err(e) = check_laws(&samples) {
            panic!("{name}, seed {seed}: {e}");
        }
    }
}

#[test]
#[augur::staged]
fn builtin_lattices_obey_the_laws() {
    laws("bool", 50, gen_bool);
    laws("Flat<u8>", 300, gen_flat);
    laws("Set<u8>", 300, gen_set);
    laws("Max<i16>", 300, gen_max);
    laws("(bool, Flat<u8>)", 300, |r| (gen_bool(r), gen_flat(r)));
    laws("(Set, Max, bool)", 300, |r| {
        (gen_set(r), gen_max(r), gen_bool(r))
    });
    laws("(bool, bool, Flat, Max)", 300, |r| {
        (gen_bool(r), gen_bool(r), gen_flat(r), gen_max(r))
    });
    laws("[Flat<u8>; 3]", 300, |r| {
        [gen_flat(r), gen_flat(r), gen_flat(r)]
    });
}

/// Equivalent under the order: each satisfies the other.
#[augur::staged]
fn equivalent<L: Lattice>(a: &L, b: &L) -> bool {
    a.satisfies(b) && b.satisfies(a)
}

/// Joining the same requirements in any order gives an equivalent value:
/// which run reaches a requirement first cannot change the prediction.
#[augur::staged]
fn order_independent<L: Lattice>(name: &str, gen: impl Fn(&mut Rng) -> L) {
    for seed in 0..300 {
        let mut r = Rng(seed);
        let start = gen(&mut r);
        let reqs: Vec<L> = (0..5).map(|_| gen(&mut r)).collect();
        let mut forward = start.clone();
        reqs.iter().for_each(|q| forward.join(q));
        let mut backward = start.clone();
        reqs.iter().rev().for_each(|q| backward.join(q));
        assert!(
            equivalent(&forward, &backward),
            "{name}, seed {seed}: {forward:?} vs {backward:?}"
        );
        // Joining again changes nothing (idempotent).
        let mut again = forward.clone();
        reqs.iter().for_each(|q| again.join(q));
        assert!(equivalent(&again, &forward), "{name}, seed {seed}");
        assert!(
            reqs.iter().all(|q| forward.satisfies(q)),
            "{name}, seed {seed}"
        );
    }
}

#[test]
#[augur::staged]
fn joins_do_not_depend_on_order() {
    order_independent("bool", gen_bool);
    order_independent("Flat<u8>", gen_flat);
    order_independent("Set<u8>", gen_set);
    order_independent("Max<i16>", gen_max);
    order_independent("(Set, Flat)", |r| (gen_set(r), gen_flat(r)));
}

#[augur::staged]
fn model(s: &Set<u8>) -> BTreeSet<u8> {
    s.iter().copied().collect()
}

/// `Set` is a sorted vector: its answers must be those of a `BTreeSet`.
#[test]
#[augur::staged]
fn set_agrees_with_a_btreeset() {
    for seed in 0..2000 {
        let mut r = Rng(seed);
        let (a, b) = (gen_set(&mut r), gen_set(&mut r));
        let (ma, mb) = (model(&a), model(&b));
        assert_eq!(
            a.satisfies(&b),
            ma.is_superset(&mb),
            "seed {seed}: {a:?} ⊇ {b:?}"
        );
        let mut j = a.clone();
        j.join(&b);
        let mj: BTreeSet<u8> = ma.union(&mb).copied().collect();
        assert_eq!(model(&j), mj, "seed {seed}");
        assert!(
            j.iter().zip(j.iter().skip(1)).all(|(x, y)| x < y),
            "sorted, no duplicates"
        );
        let x = r.below(8) as u8;
        let mut k = a.clone();
        assert_eq!(k.insert(x), !ma.contains(&x), "seed {seed}");
        assert!(k.contains(&x) && k.len() == ma.len() + usize::from(!ma.contains(&x)));
    }
}

/// `check_laws` itself finds broken lattices (a checker that cannot fail
/// would prove nothing).
#[derive(Clone, Debug)]
struct Broken {
    v: u8,
    flaw: Flaw,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Flaw {
    NotReflexive,
    JoinForgets,
    JoinTooHigh,
}

impl Lattice for Broken {
    #[augur::staged]
    fn satisfies(&self, r: &Self) -> bool {
        match self.flaw {
            Flaw::NotReflexive => self.v > r.v,
            _ => self.v >= r.v,
        }
    }
    #[augur::staged]
    fn join(&mut self, r: &Self) {
        self.v = match self.flaw {
            Flaw::JoinForgets => r.v,
            Flaw::JoinTooHigh => self.v.max(r.v).saturating_add(1),
            Flaw::NotReflexive => self.v.max(r.v),
        };
    }
}

#[test]
#[augur::staged]
fn check_laws_finds_broken_lattices() {
    for (flaw, law) in [
        (Flaw::NotReflexive, "not reflexive"),
        (Flaw::JoinForgets, "not an upper bound"),
        (Flaw::JoinTooHigh, "not least"),
    ] {
        let samples: Vec<Broken> = [0, 1, 2].iter().map(|&v| Broken { v, flaw }).collect();
        let err = check_laws(&samples).expect_err("broken lattice passed");
        assert!(err.contains(law), "{flaw:?}: {err}");
    }
}

#[augur::staged]
fn assert_debug<T: Debug>(v: T, want: &str) {
    assert_eq!(format!("{v:?}"), want);
}

#[test]
#[augur::staged]
fn values_print_readably() {
    assert_debug(Set::of([3u8, 1, 3]), "{1, 3}");
    assert_debug(Flat::Exactly(1.5f32), "Exactly(1.5)");
    assert_debug(Max(4), "Max(4)");
}
