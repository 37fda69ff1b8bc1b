//! Tutorial chapter 2: loops and branches.
//!
//! `Dyn<bool>::is_true` turns Rust `if` and `while` into C `if` and
//! `while`; plain Rust loops run in the first stage and unroll;
//! `augur::range`, or any `for` in a function under `#[augur::staged]`, is
//! the first-stage loop to use around dyn branches.
//!
//! Run with `cargo run -p augur-staging --example tutorial_2_loops`
//! (see `augur::tutorial::ch2_loops`).

use augur::exec::interp::Value;
use augur::{range, Builder, Dyn};

#[augur::staged]
fn gcd_ref(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// Sums the values of `xs` that are not multiples of 3, stopping before the
/// running sum would pass `limit`.
#[augur::staged]
fn capped_sum_ref(xs: &[i32], limit: i32) -> i32 {
    let mut s = 0;
    for &x in xs {
        if x % 3 == 0 {
            continue;
        }
        if s + x > limit {
            break;
        }
        s += x;
    }
    s
}

#[augur::staged]
fn buckets_ref(xs: &[i32]) -> i32 {
    xs.iter()
        .map(|&x| (0..3).filter(|&k| x > k * 10).count() as i32)
        .sum()
}

/// For each element, whether it exceeds one of `limits`: a plain loop
/// with a dyn exit, inside a dyn loop.
#[augur::staged]
fn first_over(xs: Dyn<*mut i32>, n: Dyn<i32>, limits: &[i32]) -> Dyn<i32> {
    let hits = Dyn::named("hits", 0);
    let i = Dyn::named("i", 0);
    while i.lt(n).is_true() {
        for &limit in limits {
            if xs.at(i).gt(limit).is_true() {
                hits.set(hits + 1);
                break;
            }
        }
        i.set(i + 1);
    }
    hits
}

#[augur::staged]
fn main() -> augur::Result<()> {
    let builder = Builder::new();

    // 1. A dyn loop: Euclid's algorithm.
    let gcd = builder.extract("gcd", |a: Dyn<u64>, b: Dyn<u64>| {
        let (a, b) = (a.name("a"), b.name("b"));
        while b.ne(0).is_true() {
            let r = a % b;
            a.set(b);
            b.set(r);
        }
        a
    })?;
    println!("== gcd ==\n{}stats: {}\n", gcd.c_code(), gcd.stats());
    let compiled = gcd.compile()?;
    for (a, b) in [(0, 0), (12, 18), (17, 5), (1 << 40, 6 << 20)] {
        // SAFETY: two uint64_t in, one out.
        let c = unsafe { (compiled.get())(a, b) };
        assert_eq!(c, gcd_ref(a, b));
        assert_eq!(gcd.interpret(&[a.into(), b.into()])?, Value::U64(c));
        println!("gcd({a}, {b}) = {c}");
    }

    // 2. Arrays, `continue` and `break`.
    let capped = builder.extract(
        "capped_sum",
        |xs: Dyn<*mut i32>, n: Dyn<i32>, limit: Dyn<i32>| {
            let s = Dyn::named("s", 0);
            let i = Dyn::named("i", 0);
            while i.lt(n).is_true() {
                let x = Dyn::named("x", xs.at(i));
                i.set(i + 1);
                if (x % 3).eq(0).is_true() {
                    continue;
                }
                if (s + x).gt(limit).is_true() {
                    break;
                }
                s.set(s + x);
            }
            s
        },
    )?;
    println!("\n== capped_sum ==\n{}", capped.c_code());
    let compiled = capped.compile()?;
    let inputs: [(&[i32], i32); 4] = [
        (&[], 10),
        (&[1, 2, 3, 4, 5, 6, 7], 100),
        (&[1, 2, 3, 4, 5, 6, 7], 8),
        (&[9, -4, 8, 30, 1], 20),
    ];
    for (xs, limit) in inputs {
        let mut buf = xs.to_vec();
        // SAFETY: `buf` holds the `n` int32_t the function reads.
        let c = unsafe { (compiled.get())(buf.as_mut_ptr(), xs.len() as i32, limit) };
        assert_eq!(c, capped_sum_ref(xs, limit));
        println!("capped_sum({xs:?}, {limit}) = {c}");
    }

    // 3. Plain Rust loops run in the first stage: this one unrolls into
    //    straight-line code (Horner's rule with fixed coefficients).
    let horner = builder.extract("horner", |x: Dyn<i64>| {
        let acc = Dyn::named("acc", 0i64);
        for c in [2i64, -3, 0, 5] {
            acc.set(acc * x + c);
        }
        acc
    })?;
    println!("\n== horner ==\n{}", horner.c_code());
    for x in [-2i64, 0, 3] {
        let want = ((2 * x - 3) * x) * x + 5;
        assert_eq!(horner.interpret(&[x.into()])?, Value::I64(want));
    }

    // 4. A first-stage loop around dyn branches, inside a dyn loop: count,
    //    for each x, how many of 0, 10, 20 it exceeds. `augur::range`
    //    makes each turn of the inner loop its own program point.
    let buckets = builder.extract("buckets", |xs: Dyn<*mut i32>, n: Dyn<i32>| {
        let count = Dyn::named("count", 0);
        let i = Dyn::named("i", 0);
        while i.lt(n).is_true() {
            for k in range(0..3) {
                if xs.at(i).gt(k * 10).is_true() {
                    count.set(count + 1);
                }
            }
            i.set(i + 1);
        }
        count
    })?;
    println!("\n== buckets ==\n{}", buckets.c_code());
    let code = buckets.c_code();
    assert_eq!(code.matches("if (").count(), 3, "three unrolled ifs");
    let compiled = buckets.compile()?;
    for xs in [vec![], vec![-1, 5, 15, 25], vec![100; 7]] {
        let mut buf = xs.clone();
        // SAFETY: `buf` holds the `n` int32_t the function reads.
        let c = unsafe { (compiled.get())(buf.as_mut_ptr(), xs.len() as i32) };
        assert_eq!(c, buckets_ref(&xs));
        println!("buckets({xs:?}) = {c}");
    }

    // 5. The same with plain Rust loops: a `for` over 20 limits, with a dyn
    //    `break`, inside the dyn loop, in a function under
    //    `#[augur::staged]`.
    let limits: Vec<i32> = (0..20).map(|k| 100 - 5 * k).collect();
    let over = builder.extract("first_over", |xs: Dyn<*mut i32>, n: Dyn<i32>| {
        first_over(xs, n, &limits)
    })?;
    println!("\n== first_over ==\n{}", over.c_code());
    assert_eq!(
        over.c_code().matches("if (").count(),
        20,
        "one test per limit"
    );
    let compiled = over.compile()?;
    for xs in [vec![], vec![3, 1000, -7, 50], vec![6; 5]] {
        let mut buf = xs.clone();
        // SAFETY: `buf` holds the `n` int32_t the function reads.
        let c = unsafe { (compiled.get())(buf.as_mut_ptr(), xs.len() as i32) };
        let want = xs
            .iter()
            .filter(|&&x| limits.iter().any(|&l| x > l))
            .count() as i32;
        assert_eq!(c, want);
        println!("first_over({xs:?}) = {c}");
    }

    println!("\nall results agree with plain Rust");
    Ok(())
}
