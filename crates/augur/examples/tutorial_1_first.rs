//! Tutorial chapter 1: the first staged function.
//!
//! A closure over `Dyn` values is extracted into a C function, which is
//! printed, compiled and called, and run in the IR interpreter. Every
//! result is checked against the same computation in plain Rust.
//!
//! Run with `cargo run -p augur-staging --example tutorial_1_first`
//! (see `augur::tutorial::ch1_first_function`).

use augur::exec::interp::Value;
use augur::{Builder, Dyn, Interpreter};

/// The computation both stages perform, in plain Rust.
#[augur::staged]
fn poly_ref(x: i64, y: i64) -> i64 {
    let t = x * x;
    t + 3 * y - 1
}

#[augur::staged]
fn main() -> augur::Result<()> {
    let builder = Builder::new();

    // 1. Scalars in, a scalar out.
    let poly = builder.extract("poly", |x: Dyn<i64>, y: Dyn<i64>| {
        let x = x.name("x");
        let y = y.name("y");
        let t = Dyn::named("t", x * x); // int64_t t = x * x;
        t.set(t + 3 * y); // a literal on either side
        t - 1 // the returned value
    })?;
    println!("== poly ==\n{}", poly.c_code());
    println!("stats: {}\n", poly.stats());

    let compiled = poly.compile()?;
    for (x, y) in [(0, 0), (4, 5), (-7, 2), (1 << 20, -3)] {
        // SAFETY: `poly` takes two int64_t and returns one: no pointers.
        let c = unsafe { (compiled.get())(x, y) };
        let i = poly.interpret(&[x.into(), y.into()])?;
        println!("poly({x}, {y}) = {c} compiled, {i:?} interpreted");
        assert_eq!(c, poly_ref(x, y));
        assert_eq!(i, Value::I64(poly_ref(x, y)));
    }

    // 2. A `Dyn` result is the value at the point it was computed.
    let snapshot = builder.extract("snapshot", |x: Dyn<i32>| {
        let e = x + 1; // the value of x + 1 now
        x.set(5);
        e * 10 + x // (old x + 1) * 10 + 5
    })?;
    println!("\n== snapshot ==\n{}", snapshot.c_code());
    let compiled = snapshot.compile()?;
    // SAFETY: int32_t in, int32_t out.
    let c = unsafe { (compiled.get())(7) };
    assert_eq!(c, (7 + 1) * 10 + 5);
    assert_eq!(snapshot.interpret(&[7.into()])?, Value::I32(85));
    println!("snapshot(7) = {c}");

    // 3. Other types: floats, casts, a select without a branch.
    let mean = builder.extract("mean_clamped", |a: Dyn<i32>, b: Dyn<i32>| {
        let m = (a + b).cast::<f64>() / 2.0;
        Dyn::select(m.gt(100.0), 100.0, m)
    })?;
    println!("\n== mean_clamped ==\n{}", mean.c_code());
    let compiled = mean.compile()?;
    for (a, b) in [(1, 2), (150, 100), (-5, 4)] {
        // SAFETY: two int32_t in, a double out.
        let c = unsafe { (compiled.get())(a, b) };
        let want = ((a + b) as f64 / 2.0).min(100.0);
        assert_eq!(c, want);
        assert_eq!(mean.interpret(&[a.into(), b.into()])?, Value::F64(want));
        println!("mean_clamped({a}, {b}) = {c}");
    }

    // 4. Pointers: the function reads and writes the caller's memory.
    let rotate = builder.extract("rotate3", |p: Dyn<*mut i32>| {
        let first = Dyn::named("first", p.at(0));
        p.at(0).set(p.at(1));
        p.at(1).set(p.at(2));
        p.at(2).set(first);
    })?;
    println!("\n== rotate3 ==\n{}", rotate.c_code());
    let compiled = rotate.compile()?;
    let mut data = [10, 20, 30];
    // SAFETY: `data` holds the three int32_t that rotate3 reads and writes.
    unsafe { (compiled.get())(data.as_mut_ptr()) };
    assert_eq!(data, [20, 30, 10]);

    // The interpreter has its own, checked memory.
    let mut interp = Interpreter::new();
    let buf = interp.memory_mut().alloc_slice(&[10i32, 20, 30]);
    rotate.interpret_in(&mut interp, &[buf])?;
    let after: Vec<i32> = interp.memory().read_slice(buf, 3)?;
    assert_eq!(after, [20, 30, 10]);
    println!("rotate3([10, 20, 30]) = {data:?} compiled, {after:?} interpreted");

    println!("\nall results agree with plain Rust");
    Ok(())
}
