//! Tutorial chapter 5: a small DSL.
//!
//! In-place operations on integer vectors, called from ordinary Rust with
//! any control flow. An `affine` applies the `clamp` that follows it as it
//! writes, in the same loop, exactly when every path agrees on that clamp:
//! a prophecy per `affine` ("what comes next") decides it.
//!
//! Run with `cargo run -p augur-staging --example tutorial_5_dsl`
//! (see `augur::tutorial::ch5_dsl`).

use augur::prophecy::{Flat, Prophecy};
use augur::{Builder, Dyn, Static};

/// A vector of the pipeline's length in the caller's memory.
#[derive(Clone, Copy)]
struct Vector {
    data: Dyn<*mut i32>,
    id: usize,
}

/// What the operation after an `affine` is: `Exactly(lo)` for a clamp of
/// the same vector at `lo`, `Conflict` for anything else.
type Next = Flat<i32>;

/// The DSL: vectors of length `n` and the operations on them.
struct Pipeline {
    n: Dyn<i32>,
    vectors: usize,
    /// Each `affine`'s prophecy and the vector it wrote.
    producers: Vec<(Prophecy<Next>, usize)>,
    /// The `affine` just before the current operation, if any. A `Static`,
    /// so that paths which disagree on it never share code (and so never
    /// skip each other's requirements).
    last: Static<Option<usize>>,
}

// What decides the code an operation generates is `last`, a `Static`;
// `vectors` and `producers` are registries. So a `let mut` pipeline may
// change under `#[augur::staged]`.
impl augur::dsl::Visible for Pipeline {}

impl Pipeline {
    #[augur::staged]
    fn new(n: Dyn<i32>) -> Pipeline {
        Pipeline {
            n,
            vectors: 0,
            producers: Vec::new(),
            last: Static::new(None),
        }
    }

    #[augur::staged]
    fn vector(&mut self, data: Dyn<*mut i32>) -> Vector {
        self.vectors += 1;
        Vector {
            data,
            id: self.vectors,
        }
    }

    /// Tells the `affine` just before (if any) what follows it, and
    /// returns its prophecy and whether `me` is about its vector.
    #[track_caller]
    #[augur::staged]
    fn follow(&mut self, me: Option<(usize, i32)>) -> Option<Prophecy<Next>> {
        let (p, wrote) = self.producers[(*self.last)?];
        self.last.set(None);
        match me {
            Some((v, lo)) if v == wrote => {
                p.require(Flat::Exactly(lo));
                Some(p)
            }
            _ => {
                p.require(Flat::Conflict);
                None
            }
        }
    }

    /// A loop over `0..n`.
    #[augur::staged]
    fn each(&self, body: impl Fn(Dyn<i32>)) {
        let i = Dyn::named("i", 0);
        while i.lt(self.n).is_true() {
            body(i);
            i.set(i + 1);
        }
    }

    /// `v[i] = a * v[i] + b`, clamped as it writes when every path says
    /// the next operation is the same clamp of `v`.
    #[track_caller]
    #[augur::staged]
    fn affine(&mut self, v: Vector, a: i32, b: i32) {
        self.follow(None);
        let next = Prophecy::named(
            format!("after affine #{}", self.producers.len()),
            Flat::Unknown,
        );
        let fused = next.get().exactly().copied();
        self.each(|i| {
            let y = v.data.at(i) * a + b;
            let y = match fused {
                Some(lo) => Dyn::select(y.lt(lo), lo, y),
                None => y,
            };
            v.data.at(i).set(y);
        });
        self.producers.push((next, v.id));
        self.last.set(Some(self.producers.len() - 1));
    }

    /// `v[i] = max(v[i], lo)`, or nothing if the `affine` before did it.
    #[track_caller]
    #[augur::staged]
    fn clamp(&mut self, v: Vector, lo: i32) {
        if let Some(p) = self.follow(Some((v.id, lo))) {
            // Every read in an attempt agrees with the affine's read.
            if p.get() == Flat::Exactly(lo) {
                return;
            }
        }
        self.each(|i| {
            let x = v.data.at(i);
            v.data.at(i).set(Dyn::select(x.lt(lo), lo, x));
        });
    }

    /// `dst[i] += src[i]`.
    #[track_caller]
    #[augur::staged]
    fn add(&mut self, dst: Vector, src: Vector) {
        self.follow(None);
        self.each(|i| dst.data.at(i).set(dst.data.at(i) + src.data.at(i)));
    }

    /// The end of the program also follows the last operation.
    #[track_caller]
    #[augur::staged]
    fn finish(&mut self) {
        self.follow(None);
    }
}

// The same operations in plain Rust.
#[augur::staged]
fn affine_ref(v: &mut [i32], a: i32, b: i32) {
    v.iter_mut().for_each(|x| *x = a * *x + b);
}
#[augur::staged]
fn clamp_ref(v: &mut [i32], lo: i32) {
    v.iter_mut().for_each(|x| *x = (*x).max(lo));
}
#[augur::staged]
fn add_ref(dst: &mut [i32], src: &[i32]) {
    dst.iter_mut().zip(src).for_each(|(d, s)| *d += s);
}

type Program = unsafe extern "C" fn(*mut i32, *mut i32, i32, i32);

/// Extracts `body`, checks its loop count, runs it on a few inputs and
/// compares with `reference`.
#[augur::staged]
fn check(
    name: &str,
    body: impl Fn(&mut Pipeline, Vector, Vector, Dyn<i32>),
    reference: impl Fn(&mut [i32], &mut [i32], i32),
    loops: usize,
) -> augur::Result<()> {
    let f = Builder::new().extract(
        name,
        |x: Dyn<*mut i32>, y: Dyn<*mut i32>, n: Dyn<i32>, c: Dyn<i32>| {
            let mut p = Pipeline::new(n);
            let (x, y) = (p.vector(x), p.vector(y));
            body(&mut p, x, y, c);
            p.finish();
        },
    )?;
    println!("== {name} ==\n{}{}", f.c_code(), f.explain());
    let found = f.c_code().matches("for (").count();
    assert_eq!(found, loops, "loops in {name}");
    let compiled = f.compile()?;
    let run: Program = compiled.get();
    for c in [0, 1] {
        let x0 = vec![-3, -1, 0, 2, 5];
        let y0 = vec![10, -20, 30, -40, 50];
        let (mut x, mut y) = (x0.clone(), y0.clone());
        // SAFETY: `x` and `y` hold the `n` int32_t the function reads and writes.
        unsafe { run(x.as_mut_ptr(), y.as_mut_ptr(), x.len() as i32, c) };
        let (mut xr, mut yr) = (x0, y0);
        reference(&mut xr, &mut yr, c);
        assert_eq!((&x, &y), (&xr, &yr), "{name}, c = {c}");
        println!("c = {c}: x = {x:?}, y = {y:?}");
    }
    println!();
    Ok(())
}

#[augur::staged]
fn main() -> augur::Result<()> {
    // Every path clamps x at 0 right after the affine: one fused loop (and
    // the add's loop).
    check(
        "agree",
        |p, x, y, c| {
            p.affine(x, 3, -4);
            if c.eq(0).is_true() {
                p.clamp(x, 0);
            } else {
                p.clamp(x, 0);
                p.add(x, y);
            }
        },
        |x, y, c| {
            affine_ref(x, 3, -4);
            clamp_ref(x, 0);
            if c != 0 {
                add_ref(x, y);
            }
        },
        2,
    )?;

    // The paths clamp at different bounds: nothing is fused.
    check(
        "disagree",
        |p, x, _, c| {
            p.affine(x, 3, -4);
            if c.eq(0).is_true() {
                p.clamp(x, 0);
            } else {
                p.clamp(x, 5);
            }
        },
        |x, _, c| {
            affine_ref(x, 3, -4);
            clamp_ref(x, if c == 0 { 0 } else { 5 });
        },
        3,
    )?;

    // One path clamps, the other does nothing: the end of the program
    // follows the affine there, so nothing is fused.
    check(
        "one_path",
        |p, x, _, c| {
            p.affine(x, 2, 1);
            if c.eq(0).is_true() {
                p.clamp(x, 0);
            }
        },
        |x, _, c| {
            affine_ref(x, 2, 1);
            if c == 0 {
                clamp_ref(x, 0);
            }
        },
        2,
    )?;

    // A clamp of another vector does not fuse into x's affine.
    check(
        "other_vector",
        |p, x, y, _| {
            p.affine(x, 2, 1);
            p.clamp(y, 0);
        },
        |x, y, _| {
            affine_ref(x, 2, 1);
            clamp_ref(y, 0);
        },
        2,
    )?;

    println!("all results agree with plain Rust");
    Ok(())
}
