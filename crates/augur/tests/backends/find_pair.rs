//! `bytes::find_pair` (`@find_pair`) in every backend: C (SSE2 blocks and
//! the plain tail), the JIT and the interpreter give the answer of the
//! plain search on random buffers, the interpreter refuses a length past
//! the allocation, and a CUDA kernel may not call it.

use augur::codegen::cuda::write_cuda;
use augur::exec::{Backend, CompileOptions, Interpreter};
use augur::stage::gpu::launch;
use augur::{bytes, Builder, Dyn};

type Find = unsafe extern "C" fn(*const u8, i64, u8, u8, i64) -> i64;

#[augur::staged]
fn staged() -> augur::Extracted<Find> {
    Builder::new()
        .extract(
            "find",
            |s: Dyn<*const u8>, n: Dyn<i64>, a: Dyn<u8>, b: Dyn<u8>, d: Dyn<i64>| {
                bytes::find_pair(s, n, a, b, d)
            },
        )
        .unwrap()
}

/// Random buffers of 0 to 99 bytes over three letters (pairs show often,
/// in 16-byte blocks and in the tail), random distances (negative and past
/// the end included), bytes 128 and up (signed `char` in SSE2's compare).
#[test]
fn every_backend_agrees_with_the_plain_search() {
    let ex = staged();
    assert!(
        ex.c_code()
            .contains("augur_find_pair(arg0, arg1, arg2, arg3, arg4)"),
        "{}",
        ex.c_code()
    );
    crate::common::assert_text_round_trip(ex.ir());
    let c = ex
        .compile_with(&CompileOptions::default().with_backend(Backend::C))
        .unwrap();
    let jit = ex
        .compile_with(&CompileOptions::default().with_backend(Backend::Jit))
        .unwrap();
    let mut r = augur_rng::Rng(0x2545_f491_4f6c_dd1d);
    let letters = [b'a', b'b', 0xe9];
    let mut found = 0;
    for n in 0..100usize {
        for _ in 0..12 {
            let hay: Vec<u8> = (0..n).map(|_| r.pick(&letters)).collect();
            let d = r.below(24) as i64 - 3;
            let (a, b) = (r.pick(&letters), r.pick(&letters));
            let want = bytes::find_pair_in(&hay, a, b, d);
            found += usize::from(want >= 0);
            let mut it = Interpreter::new();
            let s = it.memory_mut().alloc_slice(&hay);
            let args = [s, (n as i64).into(), a.into(), b.into(), d.into()];
            assert_eq!(
                ex.interpret_in(&mut it, &args).unwrap(),
                want.into(),
                "{hay:?} {a} {b} {d}"
            );
            for (name, f) in [("C", c.get()), ("JIT", jit.get())] {
                // SAFETY: `find` reads the `n` bytes of `hay`.
                let got = unsafe { f(hay.as_ptr(), n as i64, a, b, d) };
                assert_eq!(got, want, "{name}: {hay:?} {a} {b} {d}");
            }
        }
    }
    assert!(found > 300, "too few pairs found to test much: {found}");
}

/// Compiled code may read any of the `n` bytes: a length past the
/// allocation is an interpreter error even where the pair lies before it.
#[test]
fn the_interpreter_refuses_a_length_past_the_buffer() {
    let ex = staged();
    let mut it = Interpreter::new();
    let s = it.memory_mut().alloc_slice(b"xxabxx");
    let ok = [s, 6i64.into(), b'a'.into(), b'b'.into(), 1i64.into()];
    assert_eq!(ex.interpret_in(&mut it, &ok).unwrap(), 2i64.into());
    let past = [s, 40i64.into(), b'a'.into(), b'b'.into(), 1i64.into()];
    let e = ex.interpret_in(&mut it, &past).unwrap_err();
    assert!(e.to_string().contains("@find_pair read"), "{e}");
    // The interpreter stays usable.
    assert_eq!(ex.interpret_in(&mut it, &ok).unwrap(), 2i64.into());
}

#[test]
#[augur::staged]
fn a_kernel_may_not_search() {
    let ex = Builder::new()
        .extract("k", |x: Dyn<*mut i64>, s: Dyn<*const u8>| {
            launch(1, 2, |_bid, tid| {
                x.at(tid).set(bytes::find_pair(s, 8i64, b'a', b'b', 1i64));
            });
        })
        .unwrap();
    match write_cuda(ex.ir(), "") {
        Err(augur::Error::Kernel { message, .. }) => {
            assert!(message.contains("bytes::find_pair"), "{message}")
        }
        other => panic!("expected Error::Kernel, got {other:?}"),
    }
}
