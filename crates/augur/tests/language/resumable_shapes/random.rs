//! Random machines: plain, large, with colliding keys, uniform, in a dyn
//! loop.

use super::*;

#[derive(Clone, Debug)]
struct St {
    mul: i64,
    add: i64,
    kind: u8,
    m: i64,
    c: i64,
    t: Option<usize>,
    f: Option<usize>,
    g: Option<usize>,
}

fn random_machine(seed: u64, n: usize) -> Vec<St> {
    let mut r = augur_rng::Rng(seed);
    let target = |r: &mut augur_rng::Rng| {
        if r.chance(8) {
            None
        } else {
            Some(r.below(n as u64) as usize)
        }
    };
    (0..n)
        .map(|_| St {
            mul: r.below(5) as i64 - 2,
            add: r.below(21) as i64 - 10,
            kind: r.below(4) as u8,
            m: r.below(5) as i64 + 2,
            c: r.below(3) as i64,
            t: target(&mut r),
            f: target(&mut r),
            g: target(&mut r),
        })
        .collect()
}

const MODULUS: i64 = 1_000_003;

/// One state's step in plain Rust.
fn step_plain(st: &St, acc: &mut i64, fuel: &mut i64) -> Option<usize> {
    *fuel -= 1;
    if *fuel <= 0 {
        return None;
    }
    *acc = (*acc * st.mul + st.add) % MODULUS;
    match st.kind {
        0 => {
            if *acc % st.m == st.c {
                st.t
            } else {
                st.f
            }
        }
        1 => st.t,
        2 => {
            if *acc > st.c * 10 {
                if *acc % 2 == 0 {
                    st.t
                } else {
                    st.f
                }
            } else {
                st.g
            }
        }
        _ => {
            let mut j = 0;
            while j < *acc % 4 {
                *acc += j;
                j += 1;
            }
            if *acc % st.m == st.c {
                st.t
            } else {
                st.g
            }
        }
    }
}

#[augur::staged]
fn step_staged(st: &St, acc: Dyn<i64>, fuel: Dyn<i64>) -> Option<usize> {
    fuel.set(fuel - 1);
    if fuel.le(0).is_true() {
        return None;
    }
    acc.set((acc * st.mul + st.add) % MODULUS);
    match st.kind {
        0 => {
            if (acc % st.m).eq(st.c).is_true() {
                st.t
            } else {
                st.f
            }
        }
        1 => st.t,
        2 => {
            if acc.gt(st.c * 10).is_true() {
                if (acc % 2).eq(0).is_true() {
                    st.t
                } else {
                    st.f
                }
            } else {
                st.g
            }
        }
        _ => {
            let j = Dyn::new(0i64);
            while j.lt(acc % 4).is_true() {
                acc.set(acc + j);
                j.set(j + 1);
            }
            if (acc % st.m).eq(st.c).is_true() {
                st.t
            } else {
                st.g
            }
        }
    }
}

fn machine_plain(a: &[St], b: &[St], x: i64, y: i64) -> i64 {
    let mut acc = x;
    let mut fuel = y % 64;
    let mut at = Some(0);
    while let Some(k) = at {
        at = step_plain(&a[k], &mut acc, &mut fuel);
    }
    if acc % 2 == 0 {
        acc += 7;
    }
    fuel = 40;
    let mut at = Some(0);
    while let Some(k) = at {
        at = step_plain(&b[k], &mut acc, &mut fuel);
    }
    acc
}

#[augur::staged]
fn machine_staged(a: &[St], b: &[St], x: Dyn<i64>, y: Dyn<i64>) -> Dyn<i64> {
    let acc = Dyn::named("acc", x);
    let fuel = Dyn::named("fuel", y % 64);
    resumable(0usize, |k| step_staged(&a[k], acc, fuel));
    if (acc % 2).eq(0).is_true() {
        acc.set(acc + 7);
    }
    fuel.set(40);
    resumable(0usize, |k| step_staged(&b[k], acc, fuel));
    acc
}

fn random_inputs(seed: u64) -> Vec<(i64, i64)> {
    let mut r = augur_rng::Rng(seed ^ 0xabcdef);
    (0..12)
        .map(|_| (r.below(200) as i64 - 100, r.below(70) as i64))
        .collect()
}

#[test]
#[augur::staged]
fn random_machines() {
    let cases: u64 = std::env::var("AUGUR_RESUMABLE_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(30);
    for seed in 0..cases {
        let n = 3 + (seed as usize * 7) % 30;
        let a = random_machine(seed, n);
        let b = random_machine(seed + 1000, 1 + n / 2);
        let (a2, b2) = (a.clone(), b.clone());
        let f = move |x: Dyn<i64>, y: Dyn<i64>| machine_staged(&a2, &b2, x, y);
        let plain = |x: i64, y: i64| machine_plain(&a, &b, x, y);
        let b0 = if seed % 3 == 1 {
            Builder::new().audit()
        } else {
            Builder::new()
        };
        eprintln!("seed {seed} n {n}");
        check_with(
            b0,
            &format!("machine{seed}"),
            f,
            &plain,
            &random_inputs(seed),
        );
    }
}

#[test]
#[augur::staged]
fn a_large_random_machine() {
    let a = random_machine(777, 300);
    let b = random_machine(778, 50);
    let (a2, b2) = (a.clone(), b.clone());
    let f = move |x: Dyn<i64>, y: Dyn<i64>| machine_staged(&a2, &b2, x, y);
    let plain = |x: i64, y: i64| machine_plain(&a, &b, x, y);
    check_with(Builder::new(), "large", f, &plain, &random_inputs(777));
}

// ---------------------------------------------------------------------------
// A machine in a dyn loop whose first run never leaves it (it jumps back
// first), so the code after it is recorded by a run that jumped into a
// member.

#[derive(Clone, PartialEq, Eq, Debug)]
struct CK(usize);
impl Hash for CK {
    fn hash<H: Hasher>(&self, _h: &mut H) {}
}

#[augur::staged]
fn machine_staged_ck(a: &[St], b: &[St], x: Dyn<i64>, y: Dyn<i64>) -> Dyn<i64> {
    let acc = Dyn::named("acc", x);
    let fuel = Dyn::named("fuel", y % 64);
    resumable(CK(0), |CK(k)| step_staged(&a[k], acc, fuel).map(CK));
    if (acc % 2).eq(0).is_true() {
        acc.set(acc + 7);
    }
    fuel.set(40);
    resumable(CK(0), |CK(k)| step_staged(&b[k], acc, fuel).map(CK));
    acc
}

fn uniform(mut m: Vec<St>, seed: u64) -> Vec<St> {
    let kind = (seed % 3) as u8;
    let first = m[0].clone();
    let n = m.len();
    for (i, st) in m.iter_mut().enumerate() {
        st.mul = first.mul;
        st.add = first.add;
        st.kind = if kind == 1 { 0 } else { kind };
        st.m = first.m;
        st.c = first.c;
        // The last state exits on every side but does the same work.
        if i == n - 1 {
            st.t = None;
            st.f = None;
            st.g = None;
        }
    }
    m
}

#[test]
#[augur::staged]
fn random_machines_with_colliding_keys() {
    let cases: u64 = std::env::var("AUGUR_RESUMABLE_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(30);
    for seed in 0..cases {
        let n = 3 + (seed as usize * 7) % 20;
        let (mut a, mut b) = (
            random_machine(seed, n),
            random_machine(seed + 1000, 1 + n / 2),
        );
        if seed % 2 == 0 {
            a = uniform(a, seed);
            b = uniform(b, seed + 1);
        }
        let (a2, b2) = (a.clone(), b.clone());
        let f = move |x: Dyn<i64>, y: Dyn<i64>| machine_staged_ck(&a2, &b2, x, y);
        let plain = |x: i64, y: i64| machine_plain(&a, &b, x, y);
        eprintln!("ck seed {seed} n {n}");
        check_with(
            Builder::new(),
            &format!("ck{seed}"),
            f,
            &plain,
            &random_inputs(seed),
        );
    }
}

#[test]
#[augur::staged]
fn random_uniform_machines() {
    let cases: u64 = std::env::var("AUGUR_RESUMABLE_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(30);
    for seed in 0..cases {
        let n = 3 + (seed as usize * 7) % 20;
        let a = uniform(random_machine(seed, n), seed);
        let b = uniform(random_machine(seed + 1000, 1 + n / 2), seed + 1);
        let (a2, b2) = (a.clone(), b.clone());
        let f = move |x: Dyn<i64>, y: Dyn<i64>| machine_staged(&a2, &b2, x, y);
        let plain = |x: i64, y: i64| machine_plain(&a, &b, x, y);
        eprintln!("uniform seed {seed} n {n}");
        check_with(
            Builder::new(),
            &format!("u{seed}"),
            f,
            &plain,
            &random_inputs(seed),
        );
    }
}

// ---------------------------------------------------------------------------
// Random machines inside a dyn loop.

fn looped_plain(a: &[St], x: i64, y: i64) -> i64 {
    let mut acc = x;
    let mut i = 0;
    while i < y % 5 {
        let mut fuel = 30;
        let mut at = Some(0);
        while let Some(k) = at {
            at = step_plain(&a[k], &mut acc, &mut fuel);
        }
        if acc % 2 == 0 {
            acc += 7;
        }
        i += 1;
    }
    acc
}

#[augur::staged]
fn looped_staged(a: &[St], x: Dyn<i64>, y: Dyn<i64>) -> Dyn<i64> {
    let acc = Dyn::named("acc", x);
    let fuel = Dyn::named("fuel", 0i64);
    let i = Dyn::named("i", 0i64);
    while i.lt(y % 5).is_true() {
        fuel.set(30);
        resumable(0usize, |k| step_staged(&a[k], acc, fuel));
        if (acc % 2).eq(0).is_true() {
            acc.set(acc + 7);
        }
        i.set(i + 1);
    }
    acc
}

#[test]
#[augur::staged]
fn random_machines_in_a_dyn_loop() {
    let cases: u64 = std::env::var("AUGUR_RESUMABLE_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20);
    let mut failed = Vec::new();
    for seed in 0..cases {
        let n = 2 + (seed as usize * 5) % 12;
        let a = random_machine(seed, n);
        let a2 = a.clone();
        let f = move |x: Dyn<i64>, y: Dyn<i64>| looped_staged(&a2, x, y);
        let plain = |x: i64, y: i64| looped_plain(&a, x, y);
        // Without memoization (`audit`) runs that start inside a machine
        // close the dyn loop around it too.
        for (mode, b) in [
            ("default", Builder::new()),
            ("audit", Builder::new().audit()),
        ] {
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                let name = format!("loop{seed}_{mode}");
                check_with(b, &name, f.clone(), &plain, &random_inputs(seed));
            }));
            if r.is_err() {
                failed.push((seed, mode));
            }
        }
    }
    assert!(failed.is_empty(), "failed seeds: {failed:?}");
}

// ---------------------------------------------------------------------------
// Minimal variants of a dyn loop around a machine.
