//! The programs the experiments measure. Here, the program shapes of the
//! first-stage comparison with BuildIt, as staged functions with the plain
//! Rust they mean beside them: straight-line code, sequential ifs, nested
//! dyn loops, a dyn loop full of ifs, and prophecies violated one after
//! another; `augur bench scaling` and the `extraction` and `prophecy` cargo
//! benches measure them. [`einsum`] and [`nn`] hold the DSLs' benchmark
//! programs from the paper.

pub mod einsum;
pub mod nn;

use augur::prophecy::Prophecy;
use augur::{range, Builder, Dyn, Extracted, ProphecyMode, Result, Static};

/// `fn(i64) -> i64`.
pub type Fn1 = unsafe extern "C" fn(i64) -> i64;
/// `fn(i64, i64) -> i64`.
pub type Fn2 = unsafe extern "C" fn(i64, i64) -> i64;

/// `n` statements `x = x + 1` from a plain Rust loop: one run, linear.
#[augur::staged]
pub fn straight_line(n: usize) -> Result<Extracted<Fn1>> {
    Builder::new().extract("straight", move |a: Dyn<i64>| {
        let x = Dyn::new(a);
        for _ in 0..n {
            x.set(x + 1);
        }
        x
    })
}

/// Straight-line statements between two of [`sequential_ifs`]' ifs.
pub const FILLER: usize = 20;

/// `n` ifs `if (x < k) y += 1`, each followed by [`FILLER`] statements.
/// `plain` iterates with a plain Rust `for` (the engine detects the loop
/// candidate and restarts once); otherwise with [`augur::range`].
#[augur::staged]
pub fn sequential_ifs(n: i64, plain: bool) -> Result<Extracted<Fn1>> {
    let body = move |k: i64, x: Dyn<i64>, y: Dyn<i64>, z: Dyn<i64>| {
        if x.lt(k).is_true() {
            y.set(y + 1);
        }
        for _ in 0..FILLER {
            z.set(z + 3);
        }
    };
    Builder::new().extract("sequential_ifs", move |x: Dyn<i64>| {
        let y = Dyn::new(0i64);
        let z = Dyn::new(0i64);
        if plain {
            for k in 0..n {
                body(k, x, y, z);
            }
        } else {
            for k in range(0..n) {
                body(k, x, y, z);
            }
        }
        y + z
    })
}

/// BuildIt's sample18 shape: `n` ifs `if (x < k) y += 1` with nothing
/// between them (`augur::range` unrolls them).
#[augur::staged]
pub fn unrolled_ifs(n: i64) -> Result<Extracted<Fn1>> {
    Builder::new().extract("unrolled_ifs", move |x: Dyn<i64>| {
        let y = Dyn::new(0i64);
        for k in range(0..n) {
            if x.lt(k).is_true() {
                y.set(y + 1);
            }
        }
        y
    })
}

/// What [`unrolled_ifs`] computes.
#[augur::staged]
pub fn unrolled_ifs_ref(n: i64, x: i64) -> i64 {
    (0..n).filter(|&k| x < k).count() as i64
}

/// A state machine over first-stage states: a dyn loop whose `Static`
/// state cycles through `n` values, so the generated loop holds one copy
/// of the body per state (`acc += state`) before it closes.
#[augur::staged]
pub fn state_machine(n: u32) -> Result<Extracted<Fn1>> {
    // A run passes the loop's sites once per state before it closes.
    let visits = u64::from(n) + 1;
    let builder = Builder::new().max_loop_iterations(visits.max(10_000));
    builder.extract("state_machine", move |x: Dyn<i64>| {
        let acc = Dyn::new(0i64);
        let i = Dyn::new(0i64);
        let mut state = Static::new(0u32);
        while i.lt(x).is_true() {
            acc.set(acc + state.get() as i64);
            state.set((state.get() + 1) % n);
            i.set(i + 1);
        }
        acc
    })
}

/// The state machine of [`state_machine`] written as a keyed family of
/// staged functions, one per state: `state_k(x, i, acc)` returns `acc`
/// when `i >= x` and otherwise calls the next state's function in tail
/// position. Each member is extracted on its own, from its key, so the
/// first stage's work grows with the number of states (a dyn loop over a
/// `Static` replays every earlier turn to reach each state's exit: see
/// docs/extraction.md, "Cost and limits"). The entry is `state_0`; C compilers turn the
/// tail calls into jumps.
#[augur::staged]
pub fn state_machine_keyed(n: u32) -> Result<(augur::ExtractedModule, StateFn)> {
    let mut m = Builder::new().module().max_functions(n as usize + 1);
    let state = m.declare_keyed::<u32, fn(i64, i64, i64) -> i64>("state");
    m.define_keyed(
        state,
        move |s: u32, x: Dyn<i64>, i: Dyn<i64>, acc: Dyn<i64>| {
            if i.lt(x).is_true() {
                return state.at((s + 1) % n).call(x, i + 1, acc + s as i64);
            }
            acc
        },
    );
    m.export(state.at(0));
    Ok((m.extract()?, state.at(0)))
}

/// The entry of [`state_machine_keyed`]: `state_0(x, i, acc)`.
pub type StateFn = augur::Instance<fn(i64, i64, i64) -> i64, u32>;

/// What [`state_machine`] computes.
#[augur::staged]
pub fn state_machine_ref(n: u32, x: i64) -> i64 {
    (0..x.max(0)).map(|k| k % n as i64).sum()
}

/// What [`sequential_ifs`] computes.
#[augur::staged]
pub fn sequential_ifs_ref(n: i64, x: i64) -> i64 {
    (0..n).filter(|&k| x < k).count() as i64 + 3 * FILLER as i64 * n
}

/// `depth` dyn loops nested by plain recursion (each level is another call
/// path, so another program point).
#[augur::staged]
fn nest(depth: u32, n: Dyn<i64>, acc: Dyn<i64>) {
    if depth == 0 {
        acc.set(acc + 1);
        return;
    }
    let i = Dyn::new(0i64);
    while i.lt(n).is_true() {
        nest(depth - 1, n, acc);
        i.set(i + 1);
    }
}

/// `d` nested `while (i < n)` loops around `acc += 1`: computes `n^d`.
#[augur::staged]
pub fn nested_loops(d: u32) -> Result<Extracted<Fn1>> {
    Builder::new().extract("nested", move |n: Dyn<i64>| {
        let acc = Dyn::new(0i64);
        nest(d, n, acc);
        acc
    })
}

/// One dyn loop over `i < m` holding `n` ifs `(x + i) % (k + 2) == 0`.
#[augur::staged]
pub fn loop_with_ifs(n: i64) -> Result<Extracted<Fn2>> {
    Builder::new().extract("loop_ifs", move |x: Dyn<i64>, m: Dyn<i64>| {
        let r = Dyn::new(0i64);
        let i = Dyn::new(0i64);
        while i.lt(m).is_true() {
            for k in range(0..n) {
                if ((x + i) % (k + 2)).eq(0).is_true() {
                    r.set(r + (k + 1));
                }
            }
            i.set(i + 1);
        }
        r
    })
}

/// What [`loop_with_ifs`] computes.
#[augur::staged]
pub fn loop_with_ifs_ref(n: i64, x: i64, m: i64) -> i64 {
    (0..m)
        .map(|i| {
            (0..n)
                .filter(|k| (x + i) % (k + 2) == 0)
                .map(|k| k + 1)
                .sum::<i64>()
        })
        .sum()
}

/// `k` prophecies, each read (its prediction decides a statement), then a
/// dyn `if`, then required: after the `if` (`late == false`: every
/// requirement is reached whatever the predictions) or on its `else` side,
/// which exploration reaches last.
#[augur::staged]
pub fn prophecies_in_sequence(mode: ProphecyMode, k: usize, late: bool) -> Result<Extracted<Fn1>> {
    Builder::new()
        .prophecy_mode(mode)
        .extract("in_sequence", move |x: Dyn<i64>| {
            let r = Dyn::new(x);
            for i in range(0..k) {
                let p = Prophecy::new(false);
                if p.get() {
                    r.set(r + (i as i64 + 1));
                }
                if x.gt(i as i64).is_true() {
                    r.set(r * 3);
                } else if late {
                    p.require(true);
                }
                if !late {
                    p.require(true);
                }
            }
            r
        })
}

/// What [`prophecies_in_sequence`] computes once every prophecy settled
/// (all true: every addition is generated).
#[augur::staged]
pub fn prophecies_in_sequence_ref(k: usize, x: i64) -> i64 {
    let mut r = x;
    for i in 0..k as i64 {
        r = r.wrapping_add(i + 1);
        if x > i {
            r = r.wrapping_mul(3);
        }
    }
    r
}

/// `k` predictions read first; prophecy `i + 1` is required only where
/// prophecy `i` is predicted true, so each attempt can discover only the
/// next one: no mode can do better than `k` restarts.
#[augur::staged]
pub fn prophecies_chained(mode: ProphecyMode, k: usize) -> Result<Extracted<Fn1>> {
    Builder::new()
        .prophecy_mode(mode)
        .extract("chained", move |x: Dyn<i64>| {
            let ps: Vec<Prophecy<bool>> = (0..k).map(|_| Prophecy::new(false)).collect();
            let predicted: Vec<bool> = ps.iter().map(|p| p.get()).collect();
            let r = Dyn::new(x);
            ps[0].require(true);
            for i in range(0..k) {
                if predicted[i] {
                    r.set(r + 1);
                    if i + 1 < k {
                        ps[i + 1].require(true);
                    }
                }
                if x.gt(i as i64).is_true() {
                    r.set(r * 2);
                }
            }
            r
        })
}

/// What [`prophecies_chained`] computes.
#[augur::staged]
pub fn prophecies_chained_ref(k: usize, x: i64) -> i64 {
    let mut r = x;
    for i in 0..k as i64 {
        r = r.wrapping_add(1);
        if x > i {
            r = r.wrapping_mul(2);
        }
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[augur::staged]
    fn run1(e: &Extracted<Fn1>, x: i64) -> i64 {
        match e.interpret(&[x.into()]).expect("interprets") {
            augur::Value::I64(v) => v,
            other => panic!("not an i64: {other:?}"),
        }
    }

    #[test]
    #[augur::staged]
    fn programs_mean_what_their_references_say() {
        assert_eq!(run1(&straight_line(50).unwrap(), 7), 57);
        for plain in [false, true] {
            let e = sequential_ifs(9, plain).unwrap();
            for x in [-1, 3, 20] {
                assert_eq!(run1(&e, x), sequential_ifs_ref(9, x));
            }
        }
        assert_eq!(run1(&nested_loops(3).unwrap(), 4), 64);
        let e = loop_with_ifs(5).unwrap();
        let got = e.interpret(&[3i64.into(), 11i64.into()]).unwrap();
        assert_eq!(got, loop_with_ifs_ref(5, 3, 11).into());
        for mode in [ProphecyMode::Paper, ProphecyMode::Adaptive] {
            for late in [false, true] {
                let e = prophecies_in_sequence(mode, 5, late).unwrap();
                assert_eq!(run1(&e, 2), prophecies_in_sequence_ref(5, 2));
            }
            let e = prophecies_chained(mode, 5).unwrap();
            assert_eq!(run1(&e, 2), prophecies_chained_ref(5, 2));
        }
    }
}
