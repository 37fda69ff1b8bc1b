//! Structs (`#[derive(augur::Staged)]`): fields read, set and updated
//! through variables, pointers, arrays and nested structs; structs copied
//! whole, passed and returned by value between functions. Every program
//! runs compiled by the C compiler and by the JIT (by-value struct
//! parameters: the C compiler only, the JIT says why) and interpreted,
//! against plain Rust on `#[repr(C)]` data the host passes in.

use augur::exec::{Backend, CompileOptions};
use augur::{Builder, Dyn, Func, Interpreter, Staged, Value};

#[derive(Clone, Copy, Debug, Default, PartialEq, Staged)]
#[repr(C)]
struct Point {
    x: f32,
    y: f32,
}

/// A `u8` then an `f64`: padding in C's layout.
#[derive(Clone, Copy, Debug, Default, PartialEq, Staged)]
#[repr(C)]
struct Tagged {
    tag: u8,
    value: f64,
    corner: Point,
}

#[derive(Clone, Copy, Debug, PartialEq, Staged)]
#[repr(C)]
struct Rect {
    min: Point,
    max: Point,
}

/// A buffer and its length, as a library would hand one over.
#[derive(Clone, Copy, Debug, Staged)]
#[repr(C)]
struct Buf {
    data: *mut f32,
    len: i32,
    scale: [f32; 2],
}

const BACKENDS: [Backend; 2] = [Backend::C, Backend::Jit];

#[augur::staged]
fn opts(b: Backend) -> CompileOptions {
    CompileOptions::default().with_backend(b)
}

/// Host bytes of `xs`, for the interpreter's memory.
#[augur::staged]
fn bytes<T: Copy>(xs: &[T]) -> Vec<u8> {
    let n = std::mem::size_of_val(xs);
    // SAFETY: `T` is a `#[repr(C)]` struct of plain numbers with no
    // padding the tests read; reading its bytes is reading initialised
    // memory of `n` bytes.
    unsafe { std::slice::from_raw_parts(xs.as_ptr().cast::<u8>(), n) }.to_vec()
}

#[test]
#[augur::staged]
fn layout_matches_repr_c() {
    for (ty, size, align) in [
        (
            <Point as augur::CType>::ty(),
            std::mem::size_of::<Point>(),
            std::mem::align_of::<Point>(),
        ),
        (
            <Tagged as augur::CType>::ty(),
            std::mem::size_of::<Tagged>(),
            std::mem::align_of::<Tagged>(),
        ),
        (
            <Rect as augur::CType>::ty(),
            std::mem::size_of::<Rect>(),
            std::mem::align_of::<Rect>(),
        ),
        (
            <Buf as augur::CType>::ty(),
            std::mem::size_of::<Buf>(),
            std::mem::align_of::<Buf>(),
        ),
    ] {
        assert_eq!(
            (ty.size(), ty.align()),
            (Some(size as u64), Some(align as u64)),
            "{ty}"
        );
    }
    let augur::ir::Type::Struct(t) = <Tagged as augur::CType>::ty() else {
        unreachable!()
    };
    assert_eq!((t.offset(0), t.offset(1), t.offset(2)), (0, 8, 16));
}

/// Grows every rectangle by `d` on each side, through nested fields of
/// array elements and compound assignment.
#[augur::staged]
fn grow() -> augur::Extracted<unsafe extern "C" fn(*mut Rect, i32, f32)> {
    Builder::new()
        .extract("grow", |rs: Dyn<*mut Rect>, n: Dyn<i32>, d: Dyn<f32>| {
            let i = Dyn::new(0);
            while i.lt(n).is_true() {
                let r = rs.at(i);
                let mut lx = r.min().x();
                lx -= d;
                r.min().y().set(r.min().y() - d);
                r.max().x().set(r.max().x() + d);
                let mut hy = r.max().y();
                hy += d;
                i.set(i + 1);
            }
        })
        .unwrap()
}

#[test]
#[augur::staged]
fn nested_fields_of_array_elements_are_read_and_set() {
    let ex = grow();
    let c = ex.c_code();
    assert!(
        c.contains("typedef struct Point {\n  float x;\n  float y;\n} Point;\n"),
        "{c}"
    );
    assert!(
        c.contains("typedef struct Rect {\n  Point min;\n  Point max;\n} Rect;\n"),
        "{c}"
    );
    assert!(
        c.find("} Point;").unwrap() < c.find("} Rect;").unwrap(),
        "{c}"
    );
    assert!(
        c.contains("var1[var2].min.y = var1[var2].min.y - arg2;"),
        "{c}"
    );
    assert!(
        c.contains("Point *var3 = &var1[var2].min;\n    var3->x = var3->x - arg2;"),
        "{c}"
    );
    let start = [
        Rect {
            min: Point { x: 0.0, y: 1.0 },
            max: Point { x: 2.0, y: 3.0 },
        },
        Rect {
            min: Point { x: -1.0, y: -2.0 },
            max: Point { x: 5.0, y: 8.0 },
        },
    ];
    let want: Vec<Rect> = start
        .iter()
        .map(|r| Rect {
            min: Point {
                x: r.min.x - 0.5,
                y: r.min.y - 0.5,
            },
            max: Point {
                x: r.max.x + 0.5,
                y: r.max.y + 0.5,
            },
        })
        .collect();
    for b in BACKENDS {
        let mut rs = start;
        let f = ex.compile_with(&opts(b)).unwrap();
        // SAFETY: `grow` updates `n` rectangles at `rs`.
        unsafe { f.get()(rs.as_mut_ptr(), 2, 0.5) };
        assert_eq!(rs.to_vec(), want, "{b:?}");
    }
    let mut it = Interpreter::new();
    let p = it.memory_mut().alloc_slice(&bytes(&start));
    ex.interpret_in(&mut it, &[p, 2.into(), 0.5f32.into()])
        .unwrap();
    let got = it.memory().read_slice::<f32>(p, 8).unwrap();
    let want_f: Vec<f32> = want
        .iter()
        .flat_map(|r| [r.min.x, r.min.y, r.max.x, r.max.y])
        .collect();
    assert_eq!(got, want_f);
}

#[test]
#[augur::staged]
fn local_structs_and_arrays_of_them_are_copied_whole() {
    let ex = Builder::new()
        .extract("spread", |x: Dyn<f64>| {
            let t = Dyn::<Tagged>::uninit();
            t.tag().set(7u8);
            t.value().set(x);
            t.corner().x().set(1.5f32);
            t.corner().y().set(2.5f32);
            let ts = Dyn::<[Tagged; 3]>::uninit();
            ts.at(0).set(t);
            let copy = Dyn::new(t); // a copy: later changes to `t` do not reach it
            t.value().set(x * 2.0);
            ts.at(1).set(t);
            ts.at(2).set(copy);
            ts.at(0).value()
                + ts.at(1).value() * 10.0
                + ts.at(2).value() * 100.0
                + ts.at(2).tag().cast::<f64>()
                + ts.at(1).corner().y().cast::<f64>()
        })
        .unwrap();
    let want = |x: f64| x + 2.0 * x * 10.0 + x * 100.0 + 7.0 + 2.5;
    for b in BACKENDS {
        let f = ex.compile_with(&opts(b)).unwrap();
        // SAFETY: `double spread(double)`.
        assert_eq!(unsafe { f.get()(3.0) }, want(3.0), "{b:?}");
    }
    assert_eq!(ex.interpret(&[3.0.into()]).unwrap(), want(3.0).into());
    // The text form reads it back.
    let back = augur::ir::parse(&ex.ir().to_string()).unwrap();
    assert_eq!(augur::codegen::write_function(&back), ex.c_code());
}

#[test]
#[augur::staged]
fn a_struct_holding_a_pointer_and_an_array() {
    let ex = Builder::new()
        .extract("total", |b: Dyn<*const Buf>| {
            let buf = b.deref();
            let s = Dyn::new(0.0f32);
            let i = Dyn::new(0);
            while i.lt(buf.len()).is_true() {
                s.set(s + buf.data().at(i));
                i.set(i + 1);
            }
            s * buf.scale().at(0) + buf.scale().at(1)
        })
        .unwrap();
    let mut data = [1.0f32, 2.0, 3.0, 4.0];
    let buf = Buf {
        data: data.as_mut_ptr(),
        len: 4,
        scale: [2.0, 0.5],
    };
    for b in BACKENDS {
        let f = ex.compile_with(&opts(b)).unwrap();
        // SAFETY: `total` reads `len` floats at `data`.
        assert_eq!(unsafe { f.get()(&buf) }, 20.5, "{b:?}");
    }
    let mut it = Interpreter::new();
    let d = it.memory_mut().alloc_slice(&data);
    let b = it.memory_mut().alloc(24);
    let Value::Ptr(base) = b else { unreachable!() };
    it.memory_mut().store(b, d).unwrap();
    it.memory_mut()
        .store(Value::Ptr(base + 8), 4i32.into())
        .unwrap();
    it.memory_mut()
        .store(Value::Ptr(base + 12), 2.0f32.into())
        .unwrap();
    it.memory_mut()
        .store(Value::Ptr(base + 16), 0.5f32.into())
        .unwrap();
    assert_eq!(ex.interpret_in(&mut it, &[b]).unwrap(), 20.5f32.into());
}

type Add = Func<fn(Point, Point) -> Point>;

type Sum = Func<fn(*mut Point, i32) -> f32>;

#[augur::staged]
fn add_module() -> (augur::Module<'static>, Add, Sum) {
    let mut m = Builder::new().module();
    let add: Add = m.declare("add");
    m.define(add, |a: Dyn<Point>, b: Dyn<Point>| {
        let r = Dyn::<Point>::uninit();
        r.x().set(a.x() + b.x());
        r.y().set(a.y() + b.y());
        a.x().set(0.0f32); // the parameter is a copy: the caller's point keeps its value
        r
    });
    let sum: Sum = m.declare("sum");
    m.define(sum, move |ps: Dyn<*mut Point>, n: Dyn<i32>| {
        let acc = Dyn::<Point>::uninit();
        acc.x().set(0.0f32);
        acc.y().set(0.0f32);
        let i = Dyn::new(0);
        while i.lt(n).is_true() {
            acc.set(add.call(acc, ps.at(i)));
            i.set(i + 1);
        }
        let first = add.call(ps.at(0), acc);
        first.x() + acc.y() + ps.at(0).x()
    });
    (m, add, sum)
}

#[test]
#[augur::staged]
fn structs_pass_and_return_by_value_between_functions() {
    let (m, add, sum) = add_module();
    let ex = m.extract().unwrap();
    let c = ex.c_code();
    assert!(c.contains("Point add(Point arg0, Point arg1) {"), "{c}");
    let ps = [Point { x: 1.0, y: 2.0 }, Point { x: 3.0, y: 4.0 }];
    // acc = (4, 6); first = (1 + 4, ..); 5 + 6 + 1.
    let want = 12.0f32;
    let lib = ex.compile_with(&opts(Backend::C)).unwrap();
    let mut host = ps;
    // SAFETY: `sum` reads `n` points at `ps`.
    assert_eq!(unsafe { lib.get(sum).unwrap()(host.as_mut_ptr(), 2) }, want);
    // SAFETY: `Point add(Point, Point)`, the Rust struct being `#[repr(C)]`.
    assert_eq!(
        unsafe { lib.get(add).unwrap()(ps[0], ps[1]) },
        Point { x: 4.0, y: 6.0 }
    );
    assert_eq!(host, ps);
    let e = ex
        .compile_with(&opts(Backend::Jit))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("`struct Point` passed or returned by value"),
        "{e}"
    );
    let mut it = Interpreter::new();
    let p = it.memory_mut().alloc_slice(&bytes(&ps));
    assert_eq!(
        ex.interpret_in(&mut it, sum, &[p, 2.into()]).unwrap(),
        want.into()
    );
    assert_eq!(
        it.memory().read_slice::<f32>(p, 4).unwrap(),
        [1.0, 2.0, 3.0, 4.0]
    );
}

#[test]
#[augur::staged]
fn a_field_of_a_computed_struct_is_read_only_and_uninitialised_fields_are_caught() {
    let (mut m, add, _) = add_module();
    let bad: Func<fn(f32) -> f32> = m.declare("bad");
    let line = line!() + 4;
    m.define(bad, move |x: Dyn<f32>| {
        let p = Dyn::<Point>::uninit();
        p.x().set(x);
        add.call(p, p).y().set(1.0f32);
        x
    });
    let e = m.extract().unwrap_err().to_string();
    assert!(e.contains("cannot assign to a computed value"), "{e}");
    assert!(e.contains(&format!("structs.rs:{line}")), "{e}");
    let ex = Builder::new()
        .extract("half", |x: Dyn<f32>| {
            let p = Dyn::<Point>::uninit();
            p.x().set(x);
            p.y() + p.x()
        })
        .unwrap();
    let e = ex.interpret(&[1.0f32.into()]).unwrap_err().to_string();
    assert!(
        e.contains("uninitialised") || e.contains("uninitialized"),
        "{e}"
    );
}

/// A kernel reading and writing fields of an array of structs: its CUDA
/// declares the struct for host and device code (nvcc compiles it), and
/// its CPU simulation gives what plain Rust gives.
#[test]
#[augur::staged]
fn kernels_use_struct_fields() {
    use augur::stage::gpu;
    let ex = Builder::new()
        .extract("flip", |ps: Dyn<*mut Point>| {
            gpu::launch(2, 4, |b, t| {
                let p = ps.at(b * 4 + t);
                let x = Dyn::new(p.x());
                p.x().set(p.y() * 2.0f32);
                p.y().set(x);
            });
        })
        .unwrap();
    let cu = ex.cuda_code("").unwrap();
    let decl = cu
        .find("typedef struct Point {")
        .expect("the struct is declared");
    assert!(decl < cu.find("__global__").unwrap(), "{cu}");
    let ptx = augur::exec::cuda::Nvcc::find_or_install()
        .unwrap()
        .ptx(&cu, "sm_80")
        .unwrap();
    assert_eq!(ptx.matches(".entry flip_k0").count(), 1, "{ptx}");
    let start: Vec<Point> = (0..8)
        .map(|i| Point {
            x: i as f32,
            y: -(i as f32),
        })
        .collect();
    let want: Vec<Point> = start
        .iter()
        .map(|p| Point {
            x: p.y * 2.0,
            y: p.x,
        })
        .collect();
    let sim = ex.simulated().unwrap();
    for b in BACKENDS {
        let mut ps = start.clone();
        let f = sim.compile_with(&opts(b)).unwrap();
        // SAFETY: `flip` updates the 8 points at `ps`.
        unsafe { f.get()(ps.as_mut_ptr()) };
        assert_eq!(ps, want, "{b:?}");
    }
    let mut it = Interpreter::new();
    let p = it.memory_mut().alloc_slice(&bytes(&start));
    ex.interpret_in(&mut it, &[p]).unwrap();
    let got = it.memory().read_slice::<f32>(p, 16).unwrap();
    assert_eq!(
        got,
        want.iter().flat_map(|p| [p.x, p.y]).collect::<Vec<_>>()
    );
}
