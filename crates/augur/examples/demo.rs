//! The main demo: stages a few programs, prints their C, compiles and runs
//! them, and shows what extraction did.
//!
//! Run with `cargo run -p augur --example demo`.

use augur::prophecy::{History, Prophecy};
use augur::{range, Builder, Dyn, Static};

fn main() -> augur::Result<()> {
    let builder = Builder::new();

    // 1. Power with a first-stage exponent: repeated squaring unrolls.
    let power = builder.extract("power15", |base: Dyn<i64>| {
        let res = Dyn::named("res", 1i64);
        let x = Dyn::named("x", base);
        let mut exponent = Static::new(15u32);
        while *exponent > 1 {
            if *exponent % 2 == 1 {
                res.set(res * x);
            }
            x.set(x * x);
            exponent.set(*exponent / 2);
        }
        res * x
    })?;
    show(
        "power with a static exponent",
        &power.c_code(),
        power.stats(),
    );
    let compiled = power.compile()?;
    // SAFETY: power15 takes and returns plain integers.
    let v = unsafe { (compiled.get())(3) };
    println!("power15(3) = {v} (Rust: {})\n", 3i64.pow(15));

    // 2. Data-dependent control flow: a dyn loop with a branch inside.
    let collatz = builder.extract("collatz_steps", |n: Dyn<u64>| {
        let n = Dyn::named("n", n);
        let mut steps = Dyn::named("steps", 0u32);
        while n.ne(1).is_true() {
            if (n % 2).eq(0).is_true() {
                n.set(n / 2);
            } else {
                n.set(3 * n + 1);
            }
            steps += 1;
        }
        steps
    })?;
    show(
        "a dyn loop with a dyn branch",
        &collatz.c_code(),
        collatz.stats(),
    );
    let compiled = collatz.compile()?;
    // SAFETY: plain integers in and out.
    let v = unsafe { (compiled.get())(27) };
    let interp = collatz.interpret(&[27u64.into()])?;
    println!("collatz_steps(27) = {v} compiled, {interp:?} interpreted\n");

    // 3. A first-stage loop around dyn branches: `range` keeps iterations apart.
    let clamp = builder.extract("count_above", |x: Dyn<i32>| {
        let mut count = Dyn::named("count", 0);
        for k in range(0..4) {
            if x.gt(k * 10).is_true() {
                count += 1;
            }
        }
        count
    })?;
    show(
        "a static loop around dyn branches",
        &clamp.c_code(),
        clamp.stats(),
    );

    // 4. Prophecies: decide now what later code needs. The copy is made
    //    only because the loop below reads it; the history knows, after
    //    the loop, that some path changed `r` (without peeling the loop).
    let predicted = builder.extract("predicted", |x: Dyn<i32>| {
        let needs_copy = Prophecy::named("x copied", false);
        let copy = Dyn::named("copy", 0);
        if needs_copy.get() {
            copy.set(x);
        }
        let wrote = History::named("r may change", false);
        let r = Dyn::named("r", 1);
        while r.lt(x).is_true() {
            wrote.record(true);
            needs_copy.require(true);
            r.set(r + copy);
        }
        // Had no path changed `r`, it would be the constant 1.
        if wrote.get() {
            r
        } else {
            Dyn::new(1)
        }
    })?;
    show(
        "a prophecy and a history",
        &predicted.c_code(),
        predicted.stats(),
    );
    println!("why:\n{}", predicted.explain());
    let compiled = predicted.compile()?;
    // SAFETY: plain integers in and out.
    let v = unsafe { (compiled.get())(5) };
    println!(
        "predicted(5) = {v}, interpreted {:?}",
        predicted.interpret(&[5.into()])?
    );
    Ok(())
}

fn show(title: &str, code: &str, stats: &augur::Stats) {
    println!("== {title} ==");
    println!("{code}");
    println!("stats: {stats}\n");
}
