//! Tutorial chapter 3: static specialization.
//!
//! First-stage values (`Static`, captured constants, tables) are computed
//! away: the generated code is specialised to them. A `History` carries a
//! fact about every path to later code.
//!
//! Run with `cargo run -p augur-staging --example tutorial_3_static`
//! (see `augur::tutorial::ch3_static`).

use augur::exec::interp::Value;
use augur::prophecy::History;
use augur::{Builder, Dyn, Static};

/// `x^exp` by repeated squaring; `exp` is first-stage, so the loop and its
/// tests run now and only the multiplications remain.
#[augur::staged]
fn power(x: Dyn<i64>, exp: u32) -> Dyn<i64> {
    let res = Dyn::named("res", 1i64);
    let base = Dyn::named("base", x);
    let mut e = Static::new(exp);
    while *e > 0 {
        if *e % 2 == 1 {
            res.set(res * base);
        }
        e.set(*e / 2);
        if *e > 0 {
            base.set(base * base);
        }
    }
    res
}

/// A tiny accumulator machine, interpreted in the first stage.
#[derive(Clone, Copy, Debug)]
enum Ins {
    Add(i32),
    Mul(i32),
    /// `n = n - 1`.
    Dec,
    /// Jump to an instruction if `n > 0`.
    JumpIfPos(usize),
}

#[augur::staged]
fn run_ref(prog: &[Ins], mut acc: i32, mut n: i32) -> i32 {
    let mut pc = 0;
    while pc < prog.len() {
        match prog[pc] {
            Ins::Add(k) => acc = acc.wrapping_add(k),
            Ins::Mul(k) => acc = acc.wrapping_mul(k),
            Ins::Dec => n -= 1,
            Ins::JumpIfPos(t) if n > 0 => {
                pc = t;
                continue;
            }
            Ins::JumpIfPos(_) => {}
        }
        pc += 1;
    }
    acc
}

const WEIGHTS: [i32; 6] = [3, 0, 1, -1, 0, 2];

#[augur::staged]
fn main() -> augur::Result<()> {
    let builder = Builder::new();

    // 1. One program per exponent.
    for exp in [0u32, 1, 5, 15] {
        let f = builder.extract(&format!("power{exp}"), move |x: Dyn<i64>| power(x, exp))?;
        println!("== power{exp} ==\n{}", f.c_code());
        let compiled = f.compile()?;
        for x in [-3i64, 0, 2, 7] {
            // SAFETY: int64_t in, int64_t out.
            let c = unsafe { (compiled.get())(x) };
            assert_eq!(c, x.wrapping_pow(exp));
            assert_eq!(f.interpret(&[x.into()])?, Value::I64(c));
        }
    }

    // 2. Specialising on a first-stage table: zero weights vanish, and
    //    weights of 1 and -1 need no multiplication.
    let dot = builder.extract("dot_weights", |p: Dyn<*mut i32>| {
        let s = Dyn::named("s", 0);
        for (i, &w) in WEIGHTS.iter().enumerate() {
            match w {
                0 => {}
                1 => s.set(s + p.at(i)),
                -1 => s.set(s - p.at(i)),
                _ => s.set(s + p.at(i) * w),
            }
        }
        s
    })?;
    println!("== dot_weights ==\n{}", dot.c_code());
    assert!(!dot.c_code().contains("[1]"), "a zero weight reads nothing");
    let compiled = dot.compile()?;
    let mut xs = [5, 6, 7, 8, 9, 10];
    // SAFETY: `xs` holds the six int32_t the function reads.
    let c = unsafe { (compiled.get())(xs.as_mut_ptr()) };
    let want: i32 = WEIGHTS.iter().zip(xs).map(|(w, x)| w * x).sum();
    assert_eq!(c, want);
    println!("dot_weights({xs:?}) = {c}\n");

    // 3. Specialising an interpreter on its program: the program counter is
    //    a `Static`, so the first stage runs the interpreter's dispatch; the
    //    backward jump, a dyn decision whose state repeats, becomes a loop.
    let prog = [
        Ins::Mul(2),
        Ins::Add(1),
        Ins::Dec,
        Ins::JumpIfPos(0),
        Ins::Add(100),
    ];
    let run = builder.extract("run_prog", move |acc: Dyn<i32>, n: Dyn<i32>| {
        let acc = Dyn::named("acc", acc);
        let n = Dyn::named("n", n);
        let mut pc = Static::new(0usize);
        while *pc < prog.len() {
            match prog[*pc] {
                Ins::Add(k) => acc.set(acc + k),
                Ins::Mul(k) => acc.set(acc * k),
                Ins::Dec => n.set(n - 1),
                Ins::JumpIfPos(t) => {
                    if n.gt(0).is_true() {
                        pc.set(t);
                        continue;
                    }
                }
            }
            pc += 1;
        }
        acc
    })?;
    println!("== run_prog ==\n{}", run.c_code());
    println!("stats: {}\n", run.stats());
    assert!(!run.c_code().contains("switch"), "no dispatch is left");
    let compiled = run.compile()?;
    for (acc, n) in [(0, 1), (1, 3), (5, 0), (-2, 10)] {
        // SAFETY: two int32_t in, one out.
        let c = unsafe { (compiled.get())(acc, n) };
        assert_eq!(c, run_ref(&prog, acc, n));
        println!("run_prog({acc}, {n}) = {c}");
    }

    // 4. A history: after the loop, the code knows whether any path made
    //    `acc` negative, so the final clamp is generated only when needed.
    for allow_negative in [false, true] {
        let f = builder.extract("clamped_total", move |xs: Dyn<*mut i32>, n: Dyn<i32>| {
            let may_be_negative = History::named("acc may be negative", false);
            let acc = Dyn::named("acc", 0);
            let i = Dyn::named("i", 0);
            while i.lt(n).is_true() {
                let x = xs.at(i);
                if x.gt(0).is_true() {
                    acc.set(acc + x);
                } else if allow_negative {
                    may_be_negative.record(true); // inside a dyn loop: no peeling
                    acc.set(acc + x);
                }
                i.set(i + 1);
            }
            if may_be_negative.get() {
                Dyn::select(acc.lt(0), 0, acc)
            } else {
                acc
            }
        })?;
        println!("\n== clamped_total, allow_negative = {allow_negative} ==");
        println!("{}{}", f.c_code(), f.explain());
        assert_eq!(f.c_code().contains('?'), allow_negative);
        assert_eq!(
            f.c_code().matches("for (").count(),
            1,
            "one loop, not peeled"
        );
        let compiled = f.compile()?;
        for xs in [vec![], vec![1, -5, 2], vec![-9, 3]] {
            let mut buf = xs.clone();
            // SAFETY: `buf` holds the `n` int32_t the function reads.
            let c = unsafe { (compiled.get())(buf.as_mut_ptr(), xs.len() as i32) };
            let want = if allow_negative {
                xs.iter().sum::<i32>().max(0)
            } else {
                xs.iter().filter(|&&x| x > 0).sum()
            };
            assert_eq!(c, want);
            println!("clamped_total({xs:?}) = {c}");
        }
    }

    println!("\nall results agree with plain Rust");
    Ok(())
}
