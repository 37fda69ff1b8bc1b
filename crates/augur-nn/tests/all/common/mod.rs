//! What the fusion test files share: `check` builds a network fused and
//! unfused, compiles both with C and with the JIT, runs them on inputs that are multiples of 1/16 (so every sum
//! is exact) and compares them with plain Rust; the plain-Rust layers;
//! `loops` counts the loops of generated C. (Each test file uses a part.)

#![allow(dead_code, clippy::type_complexity)]

use augur::exec::{Backend, CompileOptions};
use augur::{Builder, Dyn, Extracted};
use augur_nn::Net;

thread_local! { pub static AUDIT: std::cell::Cell<bool> = const { std::cell::Cell::new(false) }; }

type Native = unsafe extern "C" fn(*mut f32, *mut f32, *mut f32, *mut f32, *mut f32, i32);

#[augur::staged]
pub fn conv1d(x: &[f32], w: &[f32]) -> Vec<f32> {
    let n = x.len();
    (0..n)
        .map(|i| (0..w.len()).fold(0.0, |s, j| s + x[(i + j) % n] * w[j]))
        .collect()
}
#[augur::staged]
pub fn relu(v: Vec<f32>, t: f32) -> Vec<f32> {
    v.into_iter()
        .map(|a| if a >= t { a } else { 0.0 })
        .collect()
}
#[augur::staged]
pub fn add(a: Vec<f32>, b: &[f32]) -> Vec<f32> {
    a.iter().zip(b).map(|(a, b)| a + b).collect()
}

#[augur::staged]
pub fn inputs(n: usize, seed: u64) -> Vec<f32> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((s >> 33) % 128) as f32 / 16.0 - 4.0
        })
        .collect()
}

/// Extracts `body(net, x, w1, w2, b, y, flag)` fused and unfused; runs both
/// on the given input sizes for each flag and compares with `reference`.
#[augur::staged]
pub fn check(
    sizes: [usize; 5],
    flags: &[i32],
    body: impl Fn(
            &Net,
            Dyn<*mut f32>,
            Dyn<*mut f32>,
            Dyn<*mut f32>,
            Dyn<*mut f32>,
            Dyn<*mut f32>,
            Dyn<i32>,
        ) + Clone
        + 'static,
    reference: impl Fn(&[Vec<f32>; 4], i32) -> Vec<f32>,
) -> (String, String) {
    let ex = |fusion: bool| -> Extracted<Native> {
        let body = body.clone();
        let builder = if AUDIT.with(|a| a.get()) {
            Builder::new().audit()
        } else {
            Builder::new()
        };
        builder
            .extract(
                "probe",
                move |x: Dyn<*mut f32>, w1, w2, b, y, flag: Dyn<i32>| {
                    let net = Net::with_fusion(fusion);
                    body(&net, x, w1, w2, b, y, flag);
                },
            )
            .unwrap()
    };
    let (f, u) = (ex(true), ex(false));
    let jit = CompileOptions::default().with_backend(Backend::Jit);
    let (pf, pu) = (f.compile().unwrap(), u.compile().unwrap());
    let (jf, ju) = (f.compile_with(&jit).unwrap(), u.compile_with(&jit).unwrap());
    for round in 0..3u64 {
        let ins = [
            inputs(sizes[0], round * 4 + 1),
            inputs(sizes[1], round * 4 + 2),
            inputs(sizes[2], round * 4 + 3),
            inputs(sizes[3], round * 4 + 4),
        ];
        for &flag in flags {
            let want = reference(&ins, flag);
            let builds = [
                ("fused", &pf, &f),
                ("unfused", &pu, &u),
                ("fused (JIT)", &jf, &f),
                ("unfused (JIT)", &ju, &u),
            ];
            for (name, p, ex) in builds {
                let mut ins = ins.clone();
                let mut y = vec![f32::NAN; sizes[4]];
                unsafe {
                    (p.get())(
                        ins[0].as_mut_ptr(),
                        ins[1].as_mut_ptr(),
                        ins[2].as_mut_ptr(),
                        ins[3].as_mut_ptr(),
                        y.as_mut_ptr(),
                        flag,
                    )
                };
                assert_eq!(
                    y,
                    want,
                    "{name}, round {round}, flag {flag}\n{}",
                    ex.c_code()
                );
            }
        }
    }
    (f.c_code(), u.c_code())
}

#[augur::staged]
pub fn loops(c: &str) -> usize {
    c.matches("for (").count()
}
