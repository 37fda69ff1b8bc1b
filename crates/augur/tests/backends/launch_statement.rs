//! Kernel launches are statements of the IR (`StmtKind::Launch`): staged
//! once, whatever the control flow in their body or around them, they reach
//! every backend as one statement with their grid, block and indices. The
//! verifier keeps control flow from leaving a launch's body. Each program is
//! run by the interpreter and compared with what the first stage means.

use augur::exec::{Interpreter, Value};
use augur::ir::{
    verify::verify, BinOp, Const, Expr, Function, LabelId, Launch, Scalar, Stmt, StmtKind, Type,
    VarData, VarKind,
};
use augur::stage::gpu::launch;
use augur::{Builder, Dyn, Extracted, Static};

type F2 = unsafe extern "C" fn(*mut i32, i32);

/// `(grid, block)` of every launch in `b`, outermost first, with the depth
/// of loops around each.
#[augur::staged]
fn launches(b: &[Stmt], loops: usize, out: &mut Vec<(u32, u32, usize)>) {
    for s in b {
        if let StmtKind::Launch(l) = &s.kind {
            out.push((l.grid, l.block, loops));
        }
        let inner = loops + usize::from(s.kind.is_loop());
        for blk in s.kind.blocks() {
            launches(blk, inner, out);
        }
    }
}

#[augur::staged]
fn launches_of(f: &Function) -> Vec<(u32, u32, usize)> {
    let mut out = Vec::new();
    launches(&f.body, 0, &mut out);
    out
}

/// Runs `ex` in the interpreter on a buffer of `len` zeros and `n`.
#[augur::staged]
fn interpret(ex: &Extracted<F2>, len: usize, n: i32) -> Vec<i32> {
    let mut it = Interpreter::new();
    let x = it.memory_mut().alloc_slice(&vec![0i32; len]);
    ex.interpret_in(&mut it, &[x, Value::I32(n)])
        .unwrap_or_else(|e| panic!("{e}\n{}", ex.c_code()));
    it.memory().read_slice(x, len).unwrap()
}

/// A thread's work with a dyn loop, a plain Rust loop and a dyn `if`.
#[augur::staged]
fn branchy(x: Dyn<*mut i32>, n: Dyn<i32>, bid: Dyn<i32>, tid: Dyn<i32>) {
    let i = bid * 4 + tid;
    let acc = Dyn::new(0i32);
    let k = Dyn::new(0i32);
    while k.lt(n).is_true() {
        acc.set(acc + k);
        k.set(k + 1);
    }
    for w in [1, 10, 100] {
        acc.set(acc + i * w);
    }
    if (i % 2).eq(0).is_true() {
        acc.set(-acc);
    }
    x.at(i).set(acc);
}

/// A body with a dyn `if`, a dyn loop and a plain Rust loop is one launch
/// statement; the interpreter runs it on every thread, and the launch costs
/// no run beyond what its body costs as host code.
#[test]
#[augur::staged]
fn a_launch_with_branches_and_loops_inside_is_one_statement() {
    let ex: Extracted<F2> = Builder::new()
        .extract("branchy", |x: Dyn<*mut i32>, n: Dyn<i32>| {
            launch(3, 4, |bid, tid| branchy(x, n, bid, tid));
        })
        .unwrap();
    assert_eq!(launches_of(ex.ir()), [(3, 4, 0)], "{}", ex.ir());
    let split = augur::codegen::cuda::split(ex.ir()).unwrap();
    assert_eq!(split.kernels.len(), 1);
    for n in [0, 1, 5] {
        let want: Vec<i32> = (0..12)
            .map(|i| {
                let acc = (0..n).sum::<i32>() + 111 * i;
                if i % 2 == 0 {
                    -acc
                } else {
                    acc
                }
            })
            .collect();
        assert_eq!(interpret(&ex, 12, n), want, "n = {n}\n{}", ex.c_code());
    }
    let host: Extracted<F2> = Builder::new()
        .extract("host", |x: Dyn<*mut i32>, n: Dyn<i32>| {
            branchy(x, n, Dyn::new(0), Dyn::new(1));
        })
        .unwrap();
    assert_eq!(ex.stats().total_runs, host.stats().total_runs);
}

/// A straight-line body is staged once: one run, no loop to audit.
#[test]
#[augur::staged]
fn a_straight_line_body_is_staged_once() {
    let stagings = std::cell::Cell::new(0);
    let ex: Extracted<F2> = Builder::new()
        .extract("once", |x: Dyn<*mut i32>, n: Dyn<i32>| {
            launch(2, 8, |bid, tid| {
                stagings.set(stagings.get() + 1);
                x.at(bid * 8 + tid).set(bid * 100 + tid + n);
            });
        })
        .unwrap();
    assert_eq!(stagings.get(), 1);
    assert_eq!(ex.stats().total_runs, 1);
    let want: Vec<i32> = (0..16).map(|i| (i / 8) * 100 + i % 8 + 7).collect();
    assert_eq!(interpret(&ex, 16, 7), want);
}

/// Launches made by a plain Rust loop over layers inside a dyn loop: each
/// layer's launch is its own statement inside the generated loop.
#[test]
#[augur::staged]
fn launches_from_a_plain_loop_inside_a_dyn_loop() {
    let layers = [(1u32, 4u32, 1i32), (2, 2, 10), (4, 1, 100)];
    let ex: Extracted<F2> = Builder::new()
        .extract("layers", move |x: Dyn<*mut i32>, n: Dyn<i32>| {
            let t = Dyn::new(0i32);
            while t.lt(n).is_true() {
                for &(grid, block, w) in &layers {
                    launch(grid, block, |bid, tid| {
                        let i = bid * block as i32 + tid;
                        x.at(i).set(x.at(i) + w * (t + 1));
                    });
                }
                t.set(t + 1);
            }
        })
        .unwrap();
    let found = launches_of(ex.ir());
    assert_eq!(found, [(1, 4, 1), (2, 2, 1), (4, 1, 1)], "{}", ex.ir());
    for n in [0, 1, 3] {
        let per_turn: i32 = (1..=n).sum();
        assert_eq!(interpret(&ex, 4, n), vec![111 * per_turn; 4], "n = {n}");
    }
}

/// A launch under a dyn `if` and one in a dyn loop that reads its counter.
#[test]
#[augur::staged]
fn launches_under_a_dyn_if_and_in_a_staged_loop() {
    let ex: Extracted<F2> = Builder::new()
        .extract("placed", |x: Dyn<*mut i32>, n: Dyn<i32>| {
            if n.gt(2).is_true() {
                launch(1, 4, |_, tid| x.at(tid).set(x.at(tid) + 1000));
            }
            let k = Dyn::new(0i32);
            while k.lt(n).is_true() {
                launch(1, 4, |_, tid| x.at(tid).set(x.at(tid) + k));
                k.set(k + 1);
            }
        })
        .unwrap();
    let found = launches_of(ex.ir());
    assert_eq!(found.len(), 2, "{}", ex.ir());
    for n in [0, 2, 4] {
        let want = if n > 2 { 1000 } else { 0 } + (0..n).sum::<i32>();
        assert_eq!(interpret(&ex, 4, n), vec![want; 4], "n = {n}");
    }
}

/// A `Static` set on one side of a dyn `if` inside a kernel: the code after
/// the launch would depend on each thread's path, which a GPU has no
/// meaning for. A clear error at the launch, never code for one path.
#[test]
#[augur::staged]
fn first_stage_state_that_differs_at_a_bodys_end_is_an_error() {
    // `wrote` is set where a thread writes, or (`every_path`) by all.
    let program = |every_path: bool| {
        move |x: Dyn<*mut i32>, n: Dyn<i32>| {
            let mut wrote = Static::new(false);
            launch(1, 4, |_, tid| {
                if tid.lt(n).is_true() {
                    x.at(tid).set(1);
                    wrote.set(true);
                }
                if every_path {
                    wrote.set(true);
                }
            });
            if wrote.get() {
                x.at(0).set(7);
            }
        }
    };
    let err = Builder::new()
        .extract("split", program(false))
        .map(|ex: Extracted<F2>| ex.c_code())
        .unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, augur::Error::Kernel { .. }), "{text}");
    assert!(text.contains("different first-stage states"), "{text}");
    assert!(text.contains("launch_statement.rs"), "{text}");
    // Set alike on every path, the same program extracts.
    let ex: Extracted<F2> = Builder::new().extract("joined", program(true)).unwrap();
    assert_eq!(interpret(&ex, 4, 2), [7, 1, 0, 0]);
}

/// A function with one launch whose body is `body`, built by hand.
#[augur::staged]
fn with_launch(body: impl FnOnce(&mut Function) -> Vec<Stmt>) -> Function {
    let mut f = Function::new("hand", Type::Void);
    let int = Type::Scalar(Scalar::I32);
    let var = |f: &mut Function, name: &str| {
        f.vars.push(VarData {
            ty: int,
            kind: VarKind::Local,
            hint: Some(name.into()),
            name: None,
            addr_taken: false,
            loc: None,
        })
    };
    let (bid, tid) = (var(&mut f, "bid"), var(&mut f, "tid"));
    let body = body(&mut f);
    f.body.push(Stmt::new(StmtKind::Launch(Launch {
        grid: 2,
        block: 2,
        bid,
        tid,
        body,
    })));
    f
}

/// The verifier accepts a launch whose body loops and breaks inside, and
/// names each way out of a launch's body.
#[test]
#[augur::staged]
fn the_verifier_keeps_control_flow_inside_a_launch() {
    let inner_loop = |f: &mut Function| {
        let t = f.expr(Expr::Const(Const::Bool(true)), Type::Scalar(Scalar::Bool));
        let brk = Stmt::new(StmtKind::Break);
        vec![Stmt::new(StmtKind::While {
            cond: t,
            body: vec![brk],
        })]
    };
    verify(&with_launch(inner_loop)).unwrap();
    let err = |f: Function| verify(&f).unwrap_err();
    let e = err(with_launch(|_| vec![Stmt::new(StmtKind::Break)]));
    assert!(e.contains("break or continue outside a loop"), "{e}");
    // A loop around the launch is not one its body can leave.
    let mut looped = with_launch(|_| vec![Stmt::new(StmtKind::Continue)]);
    let t = looped.expr(Expr::Const(Const::Bool(true)), Type::Scalar(Scalar::Bool));
    let launch = looped.body.pop().unwrap();
    looped.body.push(Stmt::new(StmtKind::While {
        cond: t,
        body: vec![launch, Stmt::new(StmtKind::Break)],
    }));
    let e = err(looped);
    assert!(e.contains("break or continue outside a loop"), "{e}");
    let e = err(with_launch(|_| vec![Stmt::new(StmtKind::Return(None))]));
    assert!(e.contains("return inside a kernel launch"), "{e}");
    let mut out = with_launch(|_| vec![Stmt::new(StmtKind::Goto(LabelId(0)))]);
    out.body.push(Stmt::new(StmtKind::Label(LabelId(0))));
    let e = err(out);
    assert!(e.contains("crosses a kernel launch's boundary"), "{e}");
    // Its indices are `int32_t` variables it declares itself.
    let mut twice = with_launch(|_| Vec::new());
    let StmtKind::Launch(Launch { bid, .. }) = twice.body[0].kind else {
        unreachable!()
    };
    twice.body.insert(
        0,
        Stmt::new(StmtKind::Decl {
            var: bid,
            init: None,
        }),
    );
    let e = err(twice);
    assert!(e.contains("declared twice"), "{e}");
    let mut wide = with_launch(|_| Vec::new());
    wide.vars[bid].ty = Type::Scalar(Scalar::I64);
    let e = err(wide);
    assert!(e.contains("not an int32_t"), "{e}");
    // The interpreter runs a launch as its loop nest, with each index.
    let mut sum = with_launch(|_| Vec::new());
    let out_var = sum.vars.push(VarData {
        ty: Type::Scalar(Scalar::I32),
        kind: VarKind::Local,
        hint: Some("out".into()),
        name: None,
        addr_taken: false,
        loc: None,
    });
    sum.ret = Type::Scalar(Scalar::I32);
    let StmtKind::Launch(Launch { bid, tid, .. }) = sum.body[0].kind else {
        unreachable!()
    };
    let i32t = Type::Scalar(Scalar::I32);
    let (o, b, t) = (
        sum.expr(Expr::Var(out_var), i32t),
        sum.expr(Expr::Var(bid), i32t),
        sum.expr(Expr::Var(tid), i32t),
    );
    let ten = sum.expr(Expr::Const(Const::Int(10)), i32t);
    let b10 = sum.expr(Expr::Binary(BinOp::Mul, b, ten), i32t);
    let bt = sum.expr(Expr::Binary(BinOp::Add, b10, t), i32t);
    let value = sum.expr(Expr::Binary(BinOp::Add, o, bt), i32t);
    let place = sum.expr(Expr::Var(out_var), i32t);
    if let StmtKind::Launch(l) = &mut sum.body[0].kind {
        l.body.push(Stmt::new(StmtKind::Assign { place, value }));
    }
    let zero = sum.expr(Expr::Const(Const::Int(0)), i32t);
    sum.body.insert(
        0,
        Stmt::new(StmtKind::Decl {
            var: out_var,
            init: Some(zero),
        }),
    );
    let ret = sum.expr(Expr::Var(out_var), i32t);
    sum.body.push(Stmt::new(StmtKind::Return(Some(ret))));
    verify(&sum).unwrap();
    // Every thread adds into one host variable: on a GPU, a data race
    // (the CUDA backend refuses it too), which the interpreter names.
    let e = Interpreter::new().call(&sum, &[]).unwrap_err().to_string();
    assert!(
        e.contains("data race in a GPU kernel: thread bid = 0, tid = 0 assigns `out"),
        "{e}"
    );
}
