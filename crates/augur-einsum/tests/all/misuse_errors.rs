//! Programs the einsum DSL refuses with an error instead of building them
//! wrong: a kernel reading a tensor of another `Einsum`, a grid whose
//! blocks * threads overflows `i32`, and tensors made inside a dyn loop or
//! inside `run_on_gpu`. (Shape errors and nested kernels: `errors.rs`.)

use crate::common;

use augur::{Builder, Dyn};
use augur_einsum::{cuda_source, Config, Einsum, Movement};
use common::{extract, small};

/// A kernel of one `Einsum` reading a tensor of another would read its host
/// buffer (an illegal memory access on an H100; right answers in the
/// simulation): it is an error naming the tensor.
#[test]
#[augur::staged]
fn tensors_of_another_instance() {
    let r = Builder::new().extract("two_instances", |a: Dyn<*mut f32>, b: Dyn<*mut f32>| {
        let e1 = Einsum::new(small(Movement::Prophecy));
        let e2 = Einsum::new(small(Movement::Prophecy));
        let i = e1.index("i");
        let a = e1.tensor_on::<f32>("A", [8], a);
        let b = e2.tensor_on::<f32>("B", [8], b);
        e2.run_on_gpu(|| b.at([i]).set(a.at([i]) * 2.0f32));
        e1.finish();
        e2.finish();
    });
    match r {
        Err(augur::Error::Panic { message, .. }) => {
            assert!(
                message.contains("tensor `A` belongs to another Einsum"),
                "{message}"
            )
        }
        other => panic!("expected a panic, got {:?}", other.map(|_| ())),
    }
}

/// blocks * threads over i32::MAX (the one-index GPU loop's stride used to
/// wrap to -2^31): a configuration error.
#[test]
#[augur::staged]
fn grid_product_overflow() {
    // blocks * threads does not fit in i32.
    let config = Config {
        blocks: 1 << 21,
        threads: 1024,
        ..Config::with(Movement::Prophecy)
    };
    let r = std::panic::catch_unwind(|| {
        extract::<f32>(
            "bigGrid",
            config,
            [&[8], &[8], &[8]],
            |ein, [a, b, _c], _n| {
                let i = ein.index("i");
                ein.run_on_gpu(|| b.at([i]).set(a.at([i])));
            },
        )
        .map(|ex| cuda_source(&ex))
    });
    match r {
        Ok(Ok(Ok(src))) => {
            let k = src
                .split("__global__")
                .nth(1)
                .unwrap()
                .split("\n}\n")
                .next()
                .unwrap();
            panic!("accepted; kernel:\n{k}")
        }
        Ok(Ok(Err(e))) | Ok(Err(e)) => eprintln!("error: {e}"),
        Err(p) => eprintln!("panic: {:?}", p.downcast_ref::<String>()),
    }
}

/// A tensor made inside a dyn loop (any config, CPU included) would need a
/// buffer per turn: the tensor count stops it with an error naming the cause.
#[test]
#[augur::staged]
fn tensor_made_inside_dyn_loop() {
    for (cname, config) in [
        ("cpu", Config::cpu()),
        ("prophecy", small(Movement::Prophecy)),
    ] {
        let config = Config {
            max_tensors: 16,
            ..config
        };
        let r = Builder::new().max_runs(5000).extract(
            "til",
            move |a: Dyn<*mut f32>, b: Dyn<*mut f32>, n: Dyn<i32>| {
                let ein = Einsum::new(config);
                let i = ein.index("i");
                let a = ein.tensor_on::<f32>("A", [8], a);
                let b = ein.tensor_on::<f32>("B", [8], b);
                let k = Dyn::new(0i32);
                while k.lt(n).is_true() {
                    let t = ein.tensor::<f32>("T", [8]);
                    ein.run_on_gpu(|| t.at([i]).set(a.at([i]) + 1.0f32));
                    b.at([i]).add_to(t.at([i]));
                    k.set(k + 1);
                }
                ein.finish();
            },
        );
        let m = r.map(|_| ()).unwrap_err().to_string();
        assert!(m.contains("made inside a dyn loop"), "{cname}: {m}");
    }
}

/// A tensor made inside run_on_gpu is an error at the user's line (it used
/// to be an internal `expect`).
#[test]
#[augur::staged]
fn tensor_made_inside_run_on_gpu() {
    let r = extract::<f32>(
        "tensor_in_kernel",
        small(Movement::Prophecy),
        [&[8], &[8], &[8]],
        |ein, [a, _b, _c], _n| {
            let i = ein.index("i");
            ein.run_on_gpu(|| {
                let t = ein.tensor::<f32>("T", [8]);
                t.at([i]).set(a.at([i]) + 1.0f32);
            });
        },
    );
    let e = r.map(|_| ()).expect_err("an error").to_string();
    assert!(
        e.contains("misuse_errors.rs"),
        "not at the user's line: {e}"
    );
}
