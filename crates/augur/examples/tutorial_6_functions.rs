//! Tutorial chapter 6: several functions.
//!
//! A module of staged functions that call each other: a recursive `gcd`,
//! `power` specialised on its exponent (one C function per exponent), and
//! a tree walk specialised on a first-stage expression tree, called
//! through a table of function pointers.
//!
//! Run with `cargo run -p augur-staging --example tutorial_6_functions`
//! (see `augur::tutorial::ch6_functions`).

use augur::{Builder, Dyn, FnPtr, Func, Module};

/// A first-stage expression over `x`; node `i`'s children come after it.
#[derive(Clone, Copy, Debug)]
enum Node {
    X,
    Lit(i64),
    Add(usize, usize),
    Mul(usize, usize),
}

/// `(x + 1) * (x + 1) + 2`, the `x + 1` node shared.
const TREE: [Node; 6] = [
    Node::Add(1, 5),
    Node::Mul(2, 2),
    Node::Add(3, 4),
    Node::X,
    Node::Lit(1),
    Node::Lit(2),
];

#[augur::staged]
fn eval(i: usize, x: i64) -> i64 {
    match TREE[i] {
        Node::X => x,
        Node::Lit(c) => c,
        Node::Add(a, b) => eval(a, x) + eval(b, x),
        Node::Mul(a, b) => eval(a, x) * eval(b, x),
    }
}

/// The module's exported functions.
struct Handles {
    gcd: Func<fn(u64, u64) -> u64>,
    power: Func<fn(f64) -> f64, u32>,
    run: Func<fn(i32, i64) -> i64>,
}

#[augur::staged]
fn module() -> (Module<'static>, Handles) {
    let mut m = Builder::new().module();
    let gcd: Func<fn(u64, u64) -> u64> = m.declare("gcd");
    m.define(gcd, move |a: Dyn<u64>, b: Dyn<u64>| {
        let r = Dyn::named("r", a);
        if b.ne(0u64).is_true() {
            r.set(gcd.call(b, a % b));
        }
        r
    });
    let power = m.declare_keyed::<u32, fn(f64) -> f64>("power");
    m.define_keyed(power, move |k: u32, x: Dyn<f64>| {
        if k == 0 {
            Dyn::new(1.0)
        } else if k % 2 == 0 {
            let half = Dyn::named("half", power.at(k / 2).call(x));
            half * half
        } else {
            x * power.at(k - 1).call(x)
        }
    });
    m.export(power.at(10));
    // One function per tree node, shared nodes once.
    let node = m.declare_keyed::<usize, fn(i64) -> i64>("node");
    m.define_keyed(node, move |i: usize, x: Dyn<i64>| match TREE[i] {
        Node::X => x + 0,
        Node::Lit(c) => Dyn::lit(c),
        Node::Add(a, b) => node.at(a).call(x) + node.at(b).call(x),
        Node::Mul(a, b) => node.at(a).call(x) * node.at(b).call(x),
    });
    // `run(which, x)`: the tree, or x squared, through a table.
    let square: Func<fn(i64) -> i64> = m.declare("square");
    m.define(square, |x: Dyn<i64>| x * x);
    let run: Func<fn(i32, i64) -> i64> = m.declare("run");
    m.define(run, move |which: Dyn<i32>, x: Dyn<i64>| {
        let table = Dyn::<[FnPtr<fn(i64) -> i64>; 2]>::uninit_named("table");
        table.at(0).set(node.at(0).addr());
        table.at(1).set(square.addr());
        table.at(which).call(x)
    });
    (m, Handles { gcd, power, run })
}

#[augur::staged]
fn main() -> augur::Result<()> {
    let (m, Handles { gcd, power, run }) = module();
    let ex = m.extract()?;
    println!("{}", ex.c_code());
    let lib = ex.compile()?;
    for x in [-3i64, 0, 5] {
        for (which, want) in [(0, eval(0, x)), (1, x * x)] {
            let got = ex.interpret(run, &[which.into(), x.into()])?;
            assert_eq!(got, want.into());
            // SAFETY: `int64_t run(int32_t, int64_t)`; `which` is 0 or 1.
            assert_eq!(unsafe { lib.get(run)?(which, x) }, want);
        }
    }
    // SAFETY: the signatures are the families'.
    unsafe {
        assert_eq!(lib.get(gcd)?(1071, 462), 21);
        assert_eq!(lib.get(power.at(10))?(1.5), 1.5f64.powi(10));
    }
    println!("// gcd, power_10 and the tree walk agree with plain Rust");
    Ok(())
}
