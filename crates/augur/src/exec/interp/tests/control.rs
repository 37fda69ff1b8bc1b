//! Statements, variables, calls and limits.

use super::*;
use BinOp::*;
use Value as V;

/// `fn sum(p: ty, n: i32) -> i32 { s = 0; for i in 0..n { s = s + p[i] } return s }`.
fn sum_function(param_ty: Type) -> Function {
    let mut b = B::new(I32);
    let (p, n) = (b.param("p", param_ty), b.param("n", I32));
    let (s, i) = (b.local("s", I32), b.local("i", I32));
    let zero = b.i32(0);
    let nv = b.v(n);
    let (sv, pv, iv) = (b.v(s), b.v(p), b.v(i));
    let elem = b.index(pv, iv);
    let add = b.bin(Add, sv, elem);
    let place = b.v(s);
    let lp = count(&mut b, i, nv, vec![assign(place, add)]);
    let sv = b.v(s);
    b.build(vec![decl(s, Some(zero)), lp, ret(sv)])
}

#[test]
fn pointer_parameter_sums_an_array() {
    for ty in [ptr(I32), array(I32, None)] {
        let f = sum_function(ty);
        let mut it = Interpreter::new();
        let xs = it.memory_mut().alloc_slice(&[1i32, 2, 3, 4, 5]);
        assert_eq!(it.call(&f, &[xs, V::I32(5)]).unwrap(), V::I32(15));
        // One past the end is caught, naming the access.
        let msg = fails(it.call(&f, &[xs, V::I32(6)]));
        assert!(
            msg.contains("load of 4 bytes at offset 20 of allocation 0 (size 20"),
            "{msg}"
        );
    }
}

#[test]
fn call_checks_arguments() {
    let f = sum_function(ptr(I32));
    let msg = fails(run(&f, &[V::I32(1)]));
    assert!(msg.contains("takes 2 arguments, got 1"), "{msg}");
    let msg = fails(run(&f, &[V::Ptr(0), V::I64(1)]));
    assert!(msg.contains("parameter `n` has type i32"), "{msg}");
}

#[test]
fn array_local_with_a_for_loop() {
    // a: [i32; 10]; for i in 0..10 { a[i] = i * i }; s = 0; for j in 0..10 { s += a[j] }
    let mut b = B::new(I32);
    let a = b.local("a", array(I32, Some(10)));
    let (i, j, s) = (b.local("i", I32), b.local("j", I32), b.local("s", I32));
    let ten = b.i32(10);
    let (av, iv, iv2, iv3) = (b.v(a), b.v(i), b.v(i), b.v(i));
    let place = b.index(av, iv);
    let sq = b.bin(Mul, iv2, iv3);
    let fill = count(&mut b, i, ten, vec![assign(place, sq)]);
    let ten = b.i32(10);
    let (sv, av, jv) = (b.v(s), b.v(a), b.v(j));
    let elem = b.index(av, jv);
    let add = b.bin(Add, sv, elem);
    let place = b.v(s);
    let total = count(&mut b, j, ten, vec![assign(place, add)]);
    let (zero, sv) = (b.i32(0), b.v(s));
    let f = b.build(vec![
        decl(a, None),
        fill,
        decl(s, Some(zero)),
        total,
        ret(sv),
    ]);
    assert_eq!(run(&f, &[]).unwrap(), V::I32(285));
}

#[test]
fn while_with_break_and_continue() {
    // i = 0; s = 0; while (true) { i = i + 1; if (i > 20) break; if (i % 2 == 0) continue; s = s + i; }
    let mut b = B::new(I32);
    let (i, sum) = (b.local("i", I32), b.local("s", I32));
    let (z1, z2, t) = (b.i32(0), b.i32(0), b.c(Const::Bool(true), BOOL));
    let (iv, one, place) = (b.v(i), b.i32(1), b.v(i));
    let inc = b.bin(Add, iv, one);
    let (iv, twenty) = (b.v(i), b.i32(20));
    let big = b.bin(Gt, iv, twenty);
    let (iv, two, zero) = (b.v(i), b.i32(2), b.i32(0));
    let m = b.bin(Rem, iv, two);
    let even = b.bin(Eq, m, zero);
    let (sv, iv, splace) = (b.v(sum), b.v(i), b.v(sum));
    let add = b.bin(Add, sv, iv);
    let body = vec![
        assign(place, inc),
        if_(big, vec![s(StmtKind::Break)], vec![]),
        if_(even, vec![s(StmtKind::Continue)], vec![]),
        assign(splace, add),
    ];
    let sv = b.v(sum);
    let f = b.build(vec![
        decl(i, Some(z1)),
        decl(sum, Some(z2)),
        while_(t, body),
        ret(sv),
    ]);
    assert_eq!(run(&f, &[]).unwrap(), V::I32(100)); // 1 + 3 + ... + 19
}

#[test]
fn nested_if() {
    // sign-and-size: x < 0 ? -1 : (x < 10 ? 1 : 2), with statements.
    let mut b = B::new(I32);
    let x = b.param("x", I32);
    let (xv, zero) = (b.v(x), b.i32(0));
    let neg = b.bin(Lt, xv, zero);
    let (xv, ten) = (b.v(x), b.i32(10));
    let small = b.bin(Lt, xv, ten);
    let (m1, one, two) = (b.i32(-1), b.i32(1), b.i32(2));
    let inner = if_(small, vec![ret(one)], vec![ret(two)]);
    let f = b.build(vec![if_(neg, vec![ret(m1)], vec![inner])]);
    assert_eq!(run(&f, &[V::I32(-5)]).unwrap(), V::I32(-1));
    assert_eq!(run(&f, &[V::I32(5)]).unwrap(), V::I32(1));
    assert_eq!(run(&f, &[V::I32(50)]).unwrap(), V::I32(2));
}

#[test]
fn early_return_from_inside_a_loop() {
    // for i in 0..100 { if i * i > 50 { return i } } return -1
    let mut b = B::new(I32);
    let i = b.local("i", I32);
    let (iv, iv2, fifty) = (b.v(i), b.v(i), b.i32(50));
    let sq = b.bin(Mul, iv, iv2);
    let big = b.bin(Gt, sq, fifty);
    let (iv, hundred) = (b.v(i), b.i32(100));
    let lp = count(&mut b, i, hundred, vec![if_(big, vec![ret(iv)], vec![])]);
    let m1 = b.i32(-1);
    let f = b.build(vec![lp, ret(m1)]);
    assert_eq!(run(&f, &[]).unwrap(), V::I32(8));
}

#[test]
fn void_function_returns_void() {
    let f = B::new(Type::Void).build(vec![s(StmtKind::Return(None))]);
    assert_eq!(run(&f, &[]).unwrap(), V::Void);
    let f = B::new(Type::Void).build(vec![]);
    assert_eq!(run(&f, &[]).unwrap(), V::Void);
}

#[test]
fn uninitialized_variable_read_is_an_error() {
    let mut b = B::new(I32);
    let x = b.local("x", I32);
    let xv = b.v(x);
    let f = b.build(vec![decl(x, None), ret(xv)]);
    assert!(fails(run(&f, &[])).contains("uninitialized variable `x`"));
    // The same for a variable in memory.
    let mut b = B::new(I32);
    let x = b.addressed("y", I32);
    let xv = b.v(x);
    let f = b.build(vec![decl(x, None), ret(xv)]);
    assert!(fails(run(&f, &[])).contains("uninitialized variable `y`"));
}

#[test]
fn errors_name_the_source_location() {
    let mut b = B::new(I32);
    let (one, zero) = (b.i32(1), b.i32(0));
    let q = b.bin(Div, one, zero);
    let mut st = ret(q);
    st.loc = Some(crate::ir::SrcLoc {
        file: "src/user.rs",
        line: 12,
        col: 5,
    });
    let f = b.build(vec![st]);
    assert_eq!(
        fails(run(&f, &[])),
        "division by zero (at src/user.rs:12:5)"
    );
}

#[test]
fn user_externs_and_overrides() {
    let mut b = B::new(I32);
    let x = b.param("x", I32);
    let xv = b.v(x);
    let t = b.call("triple", &[I32], I32, &[xv]);
    let a = b.call("abs", &[I32], I32, &[t]);
    let f = b.build(vec![ret(a)]);
    let mut it = Interpreter::new();
    assert!(fails(it.call(&f, &[V::I32(2)])).contains("unknown extern `triple`"));
    it.register("triple", |_, args| {
        Ok(V::I32(args[0].as_i64().unwrap() as i32 * 3))
    });
    assert_eq!(it.call(&f, &[V::I32(-2)]).unwrap(), V::I32(6));
    // A registered name overrides the built-in.
    it.register("abs", |_, _| Ok(V::I32(7)));
    assert_eq!(it.call(&f, &[V::I32(-2)]).unwrap(), V::I32(7));
    it.register("abs", |_, _| Ok(V::I64(7)));
    assert!(fails(it.call(&f, &[V::I32(-2)])).contains("declared to return i32"));
}

#[test]
fn extern_writes_through_memory() {
    // fill(p, n) is a host function; the IR then reads p[2].
    let mut b = B::new(I32);
    let p = b.param("p", ptr(I32));
    let (pv, three) = (b.v(p), b.i32(3));
    let call = b.call("fill", &[ptr(I32), I32], Type::Void, &[pv, three]);
    let (pv, two) = (b.v(p), b.i32(2));
    let elem = b.index(pv, two);
    let f = b.build(vec![eval(call), ret(elem)]);
    let mut it = Interpreter::new();
    it.register("fill", |mem, args| {
        mem.write_slice(args[0], &[10i32, 20, 30])?;
        Ok(V::Void)
    });
    let buf = it.memory_mut().alloc(12);
    assert_eq!(it.call(&f, &[buf]).unwrap(), V::I32(30));
}

#[test]
fn step_limit_stops_endless_loops() {
    let mut b = B::new(Type::Void);
    let t = b.c(Const::Bool(true), BOOL);
    let f = b.build(vec![while_(t, vec![])]);
    let mut it = Interpreter::new();
    it.set_step_limit(1000);
    assert!(fails(it.call(&f, &[])).contains("step limit of 1000"));
}

/// `goto` runs: forward to a label of the same block (skipping what lies
/// between), out of a loop to a label of an enclosing block, and backward.
#[test]
fn goto_jumps_to_labels_of_enclosing_blocks() {
    use crate::ir::LabelId;
    let (done, back) = (LabelId(0), LabelId(1));
    let mut b = B::new(I32);
    let x = b.local("x", I32);
    let zero = b.i32(0);
    let init = decl(x, Some(zero));
    // back: x = x + 1; if (x < 5) goto back; while (true) { if (x >= 5) goto done; }
    let (xv, xr, one) = (b.v(x), b.v(x), b.i32(1));
    let sum = b.bin(BinOp::Add, xr, one);
    let inc = assign(xv, sum);
    let (xr, five) = (b.v(x), b.i32(5));
    let small = b.bin(BinOp::Lt, xr, five);
    let again = if_(small, vec![s(StmtKind::Goto(back))], vec![]);
    let t = b.c(Const::Bool(true), BOOL);
    let (xr, five) = (b.v(x), b.i32(5));
    let big = b.bin(BinOp::Ge, xr, five);
    let out = while_(t, vec![if_(big, vec![s(StmtKind::Goto(done))], vec![])]);
    let (xv, hundred) = (b.v(x), b.i32(100));
    let skipped = assign(xv, hundred);
    let xr = b.v(x);
    let f = b.build(vec![
        init,
        s(StmtKind::Label(back)),
        inc,
        again,
        out,
        skipped,
        s(StmtKind::Label(done)),
        ret(xr),
    ]);
    crate::ir::verify::verify(&f).unwrap();
    assert_eq!(run(&f, &[]).unwrap(), V::I32(5));
}

/// `goto` into a loop body, as C allows: the rest of the body runs, then
/// the loop goes on as usual.
#[test]
fn goto_into_a_loop_body() {
    use crate::ir::LabelId;
    let inside = LabelId(0);
    // x = 0; goto inside; while (x < 3) { x = x + 10; inside: x = x + 1; } return x;
    let mut b = B::new(I32);
    let x = b.local("x", I32);
    let zero = b.i32(0);
    let (xr, three) = (b.v(x), b.i32(3));
    let small = b.bin(BinOp::Lt, xr, three);
    let (xv, xr, ten) = (b.v(x), b.v(x), b.i32(10));
    let add10 = b.bin(BinOp::Add, xr, ten);
    let (xv1, xr, one) = (b.v(x), b.v(x), b.i32(1));
    let add1 = b.bin(BinOp::Add, xr, one);
    let xr = b.v(x);
    let f = b.build(vec![
        decl(x, Some(zero)),
        s(StmtKind::Goto(inside)),
        while_(
            small,
            vec![
                assign(xv, add10),
                s(StmtKind::Label(inside)),
                assign(xv1, add1),
            ],
        ),
        ret(xr),
    ]);
    assert_eq!(run(&f, &[]).unwrap(), V::I32(12));
}

/// A `goto` to a label that does not exist is refused by the verifier.
#[test]
#[should_panic(expected = "names a label the function does not define")]
fn goto_without_a_label_is_invalid() {
    // `build` verifies the function.
    B::new(Type::Void).build(vec![s(StmtKind::Goto(crate::ir::LabelId(0)))]);
}

#[test]
fn missing_return_is_an_error() {
    let f = B::new(I32).build(vec![]);
    assert!(fails(run(&f, &[])).contains("without returning a value"));
}

#[test]
fn millions_of_steps_run_quickly() {
    // s = 0; for i in 0..n { s = s + (i ^ (i >> 3)) }: 4 statements an iteration.
    let mut b = B::new(I64);
    let n = b.param("n", I32);
    let (i, s) = (b.local("i", I32), b.local("s", I64));
    let zero = b.int(I64, 0);
    let (iv, iv2, three) = (b.v(i), b.v(i), b.i32(3));
    let sh = b.bin(Shr, iv2, three);
    let x = b.bin(BitXor, iv, sh);
    let x = b.cast(x, I64);
    let sv = b.v(s);
    let add = b.bin(Add, sv, x);
    let (place, nv) = (b.v(s), b.v(n));
    let lp = count(&mut b, i, nv, vec![assign(place, add)]);
    let sv = b.v(s);
    let f = b.build(vec![decl(s, Some(zero)), lp, ret(sv)]);
    let n = 1_000_000;
    let expect: i64 = (0..n).map(|i| (i ^ (i >> 3)) as i64).sum();
    let start = std::time::Instant::now();
    assert_eq!(run(&f, &[V::I32(n)]).unwrap(), V::I64(expect));
    // Generous even for debug builds (about 0.3 s there).
    assert!(start.elapsed().as_secs() < 20, "took {:?}", start.elapsed());
}
