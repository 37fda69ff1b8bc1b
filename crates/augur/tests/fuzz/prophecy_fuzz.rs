//! Random programs with prophecies, in every mode: the modes must give the
//! same code, every prediction must end at the join of all requirements
//! the program makes (all are reachable: both sides of every branch are
//! explored), and the generated code, interpreted, must compute what a
//! direct evaluator with those final predictions computes.
//!
//! `AUGUR_PROPHECY_FUZZ_CASES` (default 150) and `AUGUR_PROPHECY_FUZZ_SEED`
//! replay or widen the search; the seed is in every failure.

use crate::common;

use augur::exec::{Backend, CompileOptions};
use augur::prophecy::{Max, Prophecy};
use augur::{range, Builder, Dyn, ProphecyMode};
use common::Rng;

/// A statement of the generated programs over one accumulator `r`, the
/// parameter `x`, and prophecies `p0..pk` (`Max<i32>`).
#[derive(Clone, Debug)]
enum Stmt {
    /// `r = (r & 0xffff) * 3 + pk.get()` (no overflow, no UB in C).
    Read(usize),
    /// `pk.require(v)`.
    Require(usize, i32),
    /// `r = r + c`.
    Add(i32),
    /// `if x > c { … } else { … }`.
    If(i32, Vec<Stmt>, Vec<Stmt>),
    /// `for i in 0..(x & 3) { … }` as a dyn loop.
    Loop(Vec<Stmt>),
}

#[augur::staged]
fn gen_block(r: &mut Rng, k: usize, depth: u32, len: u64) -> Vec<Stmt> {
    (0..1 + r.below(len))
        .map(|_| match r.below(if depth == 0 { 3 } else { 5 }) {
            0 => Stmt::Read(r.below(k as u64) as usize),
            1 => Stmt::Require(r.below(k as u64) as usize, r.below(20) as i32),
            2 => Stmt::Add(r.below(7) as i32 - 3),
            3 => Stmt::If(
                r.below(6) as i32 - 2,
                gen_block(r, k, depth - 1, len),
                gen_block(r, k, depth - 1, len),
            ),
            _ => Stmt::Loop(gen_block(r, k, depth - 1, len)),
        })
        .collect()
}

/// Runs a block in the first stage. Statements are walked with `range`, so
/// each has its own program point even inside dyn loops.
#[augur::staged]
fn stage(block: &[Stmt], ps: &[Prophecy<Max<i32>>], x: Dyn<i32>, acc: Dyn<i32>) {
    for i in range(0..block.len()) {
        match &block[i] {
            Stmt::Read(p) => acc.set((acc & 0xffff) * 3 + ps[*p].get().0),
            Stmt::Require(p, v) => ps[*p].require(Max(*v)),
            Stmt::Add(c) => acc.set(acc + *c),
            Stmt::If(c, t, e) => {
                if x.gt(*c).is_true() {
                    stage(t, ps, x, acc);
                } else {
                    stage(e, ps, x, acc);
                }
            }
            Stmt::Loop(body) => {
                let j = Dyn::new(0);
                while j.lt(x & 3).is_true() {
                    stage(body, ps, x, acc);
                    j.set(j + 1);
                }
            }
        }
    }
}

/// What the program computes when every prediction is `final_[p]`.
#[augur::staged]
fn eval(block: &[Stmt], final_: &[i32], x: i32, acc: &mut i32) {
    for s in block {
        match s {
            Stmt::Read(p) => *acc = (*acc & 0xffff) * 3 + final_[*p],
            Stmt::Require(..) => {}
            Stmt::Add(c) => *acc += *c,
            Stmt::If(c, t, e) => eval(if x > *c { t } else { e }, final_, x, acc),
            Stmt::Loop(body) => {
                for _ in 0..(x & 3) {
                    eval(body, final_, x, acc);
                }
            }
        }
    }
}

/// The join of every requirement of each prophecy (initial value 0).
#[augur::staged]
fn expected(block: &[Stmt], out: &mut [i32]) {
    for s in block {
        match s {
            Stmt::Require(p, v) => out[*p] = out[*p].max(*v),
            Stmt::If(_, t, e) => {
                expected(t, out);
                expected(e, out);
            }
            Stmt::Loop(body) => expected(body, out),
            _ => {}
        }
    }
}

#[augur::staged]
fn env(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[test]
#[augur::staged]
fn random_prophecy_programs_agree_in_every_mode() {
    let cases = env("AUGUR_PROPHECY_FUZZ_CASES", 150);
    let first = env("AUGUR_PROPHECY_FUZZ_SEED", 0x5eed_0000);
    for seed in first..first + cases {
        let mut r = Rng(seed);
        let k = 1 + r.below(4) as usize;
        let program = gen_block(&mut r, k, 2, 4);
        let mut want = vec![0; k];
        expected(&program, &mut want);
        let extract = |mode| {
            let program = &program;
            Builder::new()
                .prophecy_mode(mode)
                .extract("fuzzed", move |x: Dyn<i32>| {
                    let ps: Vec<Prophecy<Max<i32>>> =
                        (0..k).map(|_| Prophecy::new(Max(0))).collect();
                    let acc = Dyn::new(1);
                    stage(program, &ps, x, acc);
                    acc
                })
                .unwrap_or_else(|e| panic!("seed {seed}, {mode:?}: {e}\n{program:#?}"))
        };
        let paper = extract(ProphecyMode::Paper);
        let values: Vec<String> = paper
            .explain()
            .cells
            .iter()
            .map(|c| c.value.clone())
            .collect();
        let want_text: Vec<String> = want.iter().map(|v| format!("Max({v})")).collect();
        assert_eq!(values, want_text, "seed {seed}: predictions\n{program:#?}");
        for mode in [ProphecyMode::Collect, ProphecyMode::Adaptive] {
            let other = extract(mode);
            assert_eq!(
                paper.c_code(),
                other.c_code(),
                "seed {seed}: {mode:?} differs from paper mode\n{program:#?}"
            );
        }
        // Every program interpreted (unless the structurer needed a goto,
        // which the interpreter does not run) and run by the JIT; one in
        // eight, and every one with a goto, compiled by C and run too.
        let gotos = paper.stats().gotos > 0;
        let compiled = (seed % 8 == 0 || gotos).then(|| paper.compile().expect("compiles"));
        // The JIT compiles in well under a millisecond: every program.
        let jit = CompileOptions::default().with_backend(Backend::Jit);
        let jitted = paper.compile_with(&jit).expect("the JIT compiles");
        for x in [-3, 0, 1, 2, 3, 7] {
            let mut acc = 1;
            eval(&program, &want, x, &mut acc);
            let code = paper.c_code();
            if !gotos {
                let got = paper
                    .interpret(&[x.into()])
                    .unwrap_or_else(|e| panic!("seed {seed}, x = {x}: {e}\n{code}"));
                assert_eq!(
                    got,
                    acc.into(),
                    "seed {seed}, x = {x}\n{code}\n{program:#?}"
                );
            }
            // SAFETY: an integer in, an integer out.
            let from_jit = unsafe { (jitted.get())(x) };
            assert_eq!(from_jit, acc, "seed {seed}, x = {x}, JIT\n{code}");
            if let Some(c) = &compiled {
                // SAFETY: an integer in, an integer out.
                let from_c = unsafe { (c.get())(x) };
                assert_eq!(from_c, acc, "seed {seed}, x = {x}, compiled\n{code}");
            }
        }
    }
}
