//! Errors in einsum programs: shape errors fail the extraction with
//! `augur::Error::Dsl` carrying a `ShapeError` the caller can match, at the
//! user's statement, and a message naming the problem, the tensors and
//! indices and the statement (file and line); nested kernels and use after
//! `finish` fail with `augur::Error::Panic`; the builder extracts good
//! programs after a failure.

use augur::{Builder, Error, Extracted};
use augur_einsum::{
    compile_cpu, compile_simulated, Config, Dim, Einsum, Index, ShapeError, Tensor,
};
use std::cell::Cell;

type Native = unsafe extern "C" fn(*mut f32, *mut f32, *mut f32, *mut f32);

/// What a program here sees: A 3×4, B 4×3, S 3×3 and v 3 over the caller's
/// buffers, indices i, j, k, and where to note the statement's line.
struct T<'a> {
    ein: Einsum,
    a: Tensor<f32>,
    b: Tensor<f32>,
    s: Tensor<f32>,
    v: Tensor<f32>,
    i: Index,
    j: Index,
    k: Index,
    line: &'a Cell<u32>,
}

/// `$e`, after noting in `$t.line` the line it is on.
macro_rules! here {
    ($t:expr, $e:expr) => {{
        $t.line.set(line!());
        $e
    }};
}

/// Extracts `stage` under `config`; inside a `run_on_gpu` when `kernel`.
/// Also returns the line `stage` noted.
#[augur::staged]
fn extract(
    builder: &Builder,
    config: Config,
    kernel: bool,
    stage: fn(&T),
) -> (augur::Result<Extracted<Native>>, u32) {
    let line = Cell::new(0);
    let ex = builder.extract("prog", |a, b, s, v| {
        let ein = Einsum::new(config);
        let (i, j, k) = (ein.index("i"), ein.index("j"), ein.index("k"));
        let (a, b) = (ein.tensor_on("A", [3, 4], a), ein.tensor_on("B", [4, 3], b));
        let (s, v) = (ein.tensor_on("S", [3, 3], s), ein.tensor_on("v", [3], v));
        let t = T {
            ein: ein.clone(),
            a,
            b,
            s,
            v,
            i,
            j,
            k,
            line: &line,
        };
        if kernel {
            ein.run_on_gpu(|| stage(&t));
        } else {
            stage(&t);
        }
        ein.finish();
    });
    (ex, line.get())
}

/// The ways a statement is tried: on the CPU, and in a kernel on the GPU.
#[augur::staged]
fn ways() -> [(Config, bool); 2] {
    [(Config::cpu(), false), (Config::default(), true)]
}

/// Expects `stage` to fail both ways with `Error::Dsl` at the noted line
/// of this file, whose message has every one of `parts`; returns its
/// `ShapeError`.
fn fails(stage: fn(&T), parts: &[&str]) -> ShapeError {
    let mut last = None;
    for (config, kernel) in ways() {
        let (ex, line) = extract(&Builder::new(), config, kernel, stage);
        let e = ex.map(|_| ()).expect_err("a shape error");
        let Error::Dsl { location, .. } = &e else {
            panic!("expected a DSL error under {config:?}, got {e}")
        };
        assert_eq!((location.file, location.line), (file!(), line));
        let message = e.to_string();
        for part in parts {
            assert!(message.contains(part), "{part:?} not in {message:?}");
        }
        assert!(message.ends_with(&format!(" at {location}")), "{message}");
        last = Some(e.dsl_error::<ShapeError>().expect("a ShapeError").clone());
    }
    last.expect("two ways")
}

#[augur::staged]
fn dim(tensor: &str, dimension: usize, extent: usize) -> Dim {
    Dim {
        tensor: tensor.to_string(),
        dimension,
        extent,
    }
}

#[test]
#[augur::staged]
fn index_bound_to_two_ranges() {
    let error = fails(
        |t| here!(t, t.v.at([t.i]).set(t.a.at([t.j, t.i]))),
        &["einsum: index `i` is bound to 3 by dimension 0 of `v` and to 4 by dimension 1 of `A`, in `v[i] = ...`"],
    );
    let ShapeError::Extents {
        statement,
        index,
        first,
        second,
    } = error
    else {
        panic!("{error:?}")
    };
    assert_eq!((&statement[..], index), ("v[i] = ...", "i"));
    assert_eq!((first, second), (dim("v", 0, 3), dim("A", 1, 4)));
    // A product whose inner dimensions differ.
    let error = fails(
        |t| {
            let aa = t.a.at([t.i, t.k]) * t.a.at([t.k, t.j]);
            here!(t, t.s.at([t.i, t.j]).set(aa))
        },
        &["index `k` is bound to 4 by dimension 1 of `A` and to 3 by dimension 0 of `A`"],
    );
    assert!(
        matches!(&error, ShapeError::Extents { index: "k", first, second, .. }
            if first.extent == 4 && second.extent == 3),
        "{error:?}"
    );
}

#[test]
#[augur::staged]
fn wrong_number_of_indices() {
    let error = fails(
        |t| here!(t, t.a.at([t.i]).set(1.0f32)),
        &["`A` has 2 dimensions (shape [3, 4]) but is indexed with 1 (i)"],
    );
    let expected = ShapeError::Rank {
        tensor: "A".into(),
        shape: vec![3, 4],
        indices: vec!["i"],
    };
    assert_eq!(error, expected);
    fails(
        |t| here!(t, t.v.at([t.i]).add_to(t.v.at([t.i, t.j, t.k]))),
        &["`v` has 1 dimension (shape [3]) but is indexed with 3 (i, j, k)"],
    );
    let error = fails(
        |t| here!(t, t.s.at([]).set(0.0f32)),
        &["`S` has 2 dimensions (shape [3, 3]) but is indexed with 0 ()"],
    );
    assert!(
        matches!(&error, ShapeError::Rank { indices, .. } if indices.is_empty()),
        "{error:?}"
    );
}

#[test]
#[augur::staged]
fn index_that_indexes_no_tensor() {
    let error = fails(
        |t| here!(t, t.v.at([t.i]).set(t.a.at([t.i, t.j]) + t.k)),
        &["index `k` has no range: it indexes no tensor of the statement, in `v[i] = ...`"],
    );
    let expected = ShapeError::Unbound {
        statement: "v[i] = ...".into(),
        index: "k",
    };
    assert_eq!(error, expected);
    let error = fails(
        |t| here!(t, t.v.at([t.i]).add_to(t.j)),
        &["index `j` has no range", "in `v[i] += ...`"],
    );
    assert!(
        matches!(&error, ShapeError::Unbound { index: "j", .. }),
        "{error:?}"
    );
}

#[test]
#[augur::staged]
fn reading_the_written_tensor_elsewhere() {
    fails(
        |t| here!(t, t.s.at([t.i, t.j]).set(t.s.at([t.j, t.i]))),
        &["the right side reads `S[j][i]` while the statement writes `S[i][j]`"],
    );
    let error = fails(
        |t| here!(t, t.s.at([t.i, t.j]).mul_by(t.s.at([t.i, t.k]))),
        &[
            "the right side reads `S[i][k]` while the statement writes `S[i][j]`",
            "in `S[i][j] *= ...`",
        ],
    );
    let expected = ShapeError::Overwritten {
        statement: "S[i][j] *= ...".into(),
        read: "S[i][k]".into(),
        written: "S[i][j]".into(),
    };
    assert_eq!(error, expected);
}

#[test]
#[augur::staged]
fn run_on_gpu_inside_run_on_gpu() {
    let nested: fn(&T) = |t| here!(t, t.ein.run_on_gpu(|| t.v.at([t.i]).set(1.0f32)));
    let (ex, line) = extract(&Builder::new(), Config::default(), true, nested);
    let Err(Error::Panic { message, .. }) = ex else {
        panic!("expected a panic, got {:?}", ex.map(|_| ()))
    };
    let expected = format!("run_on_gpu inside run_on_gpu at {}:{line}:", file!());
    assert!(message.contains(&expected), "{message}");
}

/// Nesting is an error also when `run_on_gpu` runs on the CPU
/// (`Config::gpu` false); it used to go unchecked there.
#[test]
#[augur::staged]
fn run_on_gpu_inside_run_on_gpu_on_the_cpu() {
    let nested: fn(&T) = |t| here!(t, t.ein.run_on_gpu(|| t.v.at([t.i]).set(1.0f32)));
    let (ex, line) = extract(&Builder::new(), Config::cpu(), true, nested);
    let Err(Error::Panic { message, .. }) = ex else {
        panic!("expected a panic, got {:?}", ex.map(|_| ()))
    };
    let expected = format!("run_on_gpu inside run_on_gpu at {}:{line}:", file!());
    assert!(message.contains(&expected), "{message}");
}

/// A statement's shape error is located at the user's statement, not in
/// the library (it used to be raised in a closure without
/// `#[track_caller]`).
#[test]
#[augur::staged]
fn statement_errors_are_located_at_the_statement() {
    let stage: fn(&T) = |t| here!(t, t.v.at([t.i]).set(t.a.at([t.j, t.i])));
    let (ex, line) = extract(&Builder::new(), Config::cpu(), false, stage);
    let Err(Error::Dsl { location, .. }) = ex else {
        panic!("expected a DSL error, got {:?}", ex.map(|_| ()))
    };
    assert_eq!((location.file, location.line), (file!(), line));
}

#[test]
#[augur::staged]
fn at_and_run_on_gpu_errors_are_located_at_the_call() {
    let stages: [fn(&T); 2] = [
        |t| here!(t, t.a.at([t.i]).set(1.0f32)),
        |t| here!(t, t.ein.run_on_gpu(|| t.v.at([t.i]).set(1.0f32))),
    ];
    for stage in stages {
        let (ex, line) = extract(&Builder::new(), Config::default(), true, stage);
        let location = match ex {
            Err(Error::Dsl { location, .. }) => location,
            Err(Error::Panic { location, .. }) => location.expect("a location"),
            other => panic!("expected an error, got {:?}", other.map(|_| ())),
        };
        assert_eq!((location.file, location.line), (file!(), line));
    }
}

#[test]
#[augur::staged]
fn the_builder_extracts_after_a_failure() {
    // S[i][j] = 2 S[i][j] + A[i][k] B[k][j] + v[i], all summed over k:
    // reading the written tensor at the written position is fine.
    let good: fn(&T) = |t| {
        let (i, j, k) = (t.i, t.j, t.k);
        let ab = t.a.at([i, k]) * t.b.at([k, j]);
        t.s.at([i, j])
            .set(t.s.at([i, j]) * 2.0f32 + ab + t.v.at([i]));
    };
    let bad: [fn(&T); 4] = [
        |t| t.v.at([t.i]).set(t.a.at([t.j, t.i])),
        |t| drop(t.a.at([t.i])),
        |t| t.v.at([t.i]).set(t.a.at([t.i, t.j]) + t.k),
        |t| t.s.at([t.i, t.j]).set(t.s.at([t.j, t.i])),
    ];
    let builder = Builder::new();
    for (config, kernel) in ways() {
        for stage in bad {
            let (ex, _) = extract(&builder, config, kernel, stage);
            assert!(matches!(ex, Err(Error::Dsl { .. })), "{config:?}");
            let (ex, _) = extract(&builder, config, kernel, good);
            let ex = ex.unwrap_or_else(|e| panic!("{config:?}: {e}"));
            let p = if kernel {
                compile_simulated(&ex)
            } else {
                compile_cpu(&ex, false)
            };
            let p = p.unwrap();
            let mut a: Vec<f32> = (0..12).map(|x| x as f32).collect();
            let mut b: Vec<f32> = (0..12).map(|x| (x % 5) as f32 - 2.0).collect();
            let mut s: Vec<f32> = (0..9).map(|x| x as f32).collect();
            let mut v = vec![1.0f32, -1.0, 10.0];
            let mut want = s.clone();
            for (e, w) in want.iter_mut().enumerate() {
                let (i, j) = (e / 3, e % 3);
                let ab: f32 = (0..4).map(|q| a[i * 4 + q] * b[q * 3 + j]).sum();
                *w = 4.0 * (*w * 2.0 + v[i]) + ab;
            }
            let bufs = [&mut a, &mut b, &mut s, &mut v].map(|x| x.as_mut_ptr());
            // SAFETY: the buffers hold 12, 12, 9 and 3 floats, as the shapes say.
            unsafe { (p.get())(bufs[0], bufs[1], bufs[2], bufs[3]) };
            assert_eq!(s, want, "{config:?}");
        }
    }
}

/// The extraction error's `Display` is the shape error's message at the
/// user's line.
#[test]
#[augur::staged]
fn the_error_displays_its_message() {
    let (ex, line) = extract(&Builder::new(), Config::cpu(), false, |t| {
        here!(t, t.v.at([t.i]).set(t.a.at([t.j, t.i])))
    });
    let text = ex.map(|_| ()).unwrap_err().to_string();
    assert!(
        text.starts_with("einsum: index `i` is bound to 3"),
        "{text}"
    );
    assert!(text.contains(&format!(" at {}:{line}:", file!())), "{text}");
}

/// After `Einsum::finish` (which frees the buffers) the DSL refuses
/// statements, new tensors, kernels and a second `finish`, naming the line.
#[test]
#[augur::staged]
fn using_the_dsl_after_finish() {
    type One = unsafe extern "C" fn(*mut f32);
    type Late = fn(&Einsum, &Tensor<f32>, Index);
    let cases: [(Late, &str); 4] = [
        (
            |_, v, i| v.at([i]).set(1.0f32),
            "a statement after Einsum::finish",
        ),
        (
            |e, _, _| drop(e.tensor::<f32>("w", [2])),
            "tensor `w` made after Einsum::finish",
        ),
        (
            |e, _, _| e.run_on_gpu(|| {}),
            "run_on_gpu after Einsum::finish",
        ),
        (|e, _, _| e.finish(), "finish called twice"),
    ];
    for (after, expected) in cases {
        let r: augur::Result<Extracted<One>> = Builder::new().extract("late", |x| {
            let ein = Einsum::new(Config::default());
            let i = ein.index("i");
            let v = ein.tensor_on::<f32>("v", [2], x);
            ein.finish();
            after(&ein, &v, i);
        });
        let Err(Error::Panic { message, .. }) = r else {
            panic!("{expected}: expected a panic, got {:?}", r.map(|_| ()))
        };
        assert!(message.contains(expected), "{message}");
        assert!(message.contains(file!()), "{message}");
    }
}

/// Sizes the generated code's `int32_t` indices cannot reach: a tensor of
/// more than 2^31 - 1 elements, and a loop whose last step would overflow.
#[test]
#[augur::staged]
fn sizes_beyond_int32_indices() {
    type One = unsafe extern "C" fn(*mut f32);
    let huge = [
        (
            1 << 31,
            ShapeError::TooLarge {
                tensor: "v".into(),
                shape: vec![1 << 31],
            },
        ),
        (
            i32::MAX as usize,
            ShapeError::TooLong {
                index: "i",
                extent: i32::MAX as usize,
                step: 1,
            },
        ),
    ];
    for (n, expected) in huge {
        let r: augur::Result<Extracted<One>> = Builder::new().extract("huge", |x| {
            let ein = Einsum::new(Config::cpu());
            let i = ein.index("i");
            let v = ein.tensor_on::<f32>("v", [n], x);
            v.at([i]).set(1.0f32);
            ein.finish();
        });
        let e = r.map(|_| ()).unwrap_err();
        // The step is the loop's: 1 in the paper's loops, a register
        // tile's width in the blocked ones `Schedule::Auto` gives.
        let got = match e.dsl_error::<ShapeError>() {
            Some(ShapeError::TooLong { index, extent, .. }) => Some(ShapeError::TooLong {
                index,
                extent: *extent,
                step: 1,
            }),
            other => other.cloned(),
        };
        assert_eq!(got.as_ref(), Some(&expected), "{n}: {e}");
        assert!(e.to_string().contains(file!()), "{e}");
    }
}
