//! Tutorial chapter 10: staging an interpreter.
//!
//! A register machine's interpreter staged twice: with a `Static` program
//! counter (chapter 3's form, quadratic extraction) and over resumable
//! points (linear). Both are checked against the plain interpreter on C,
//! the JIT and augur's interpreter, and their first-stage work is printed
//! side by side as the program grows. Then a state machine keyed by its
//! state: the DFA of "contains `ab`", checked against Rust on C and the
//! JIT.
//!
//! Run with `cargo run -p augur-staging --example tutorial_10_interpreters`
//! (see `augur::tutorial::ch10_interpreters`).

use augur::exec::{Backend, CompileOptions};
use augur::{Builder, Dyn, Static};
use std::time::Instant;

#[derive(Clone, Copy, Debug, Hash)]
enum Op {
    Set(usize, i64),
    AddI(usize, i64),
    Mul(usize, usize),
    Jnz(usize, usize),
    Jmp(usize),
    Halt,
}

fn run(prog: &[Op], arg: i64) -> i64 {
    let (mut r, mut pc) = ([arg, 0, 0, 0], 0);
    while pc < prog.len() {
        match prog[pc] {
            Op::Set(a, k) => r[a] = k,
            Op::AddI(a, k) => r[a] = r[a].wrapping_add(k),
            Op::Mul(a, b) => r[a] = r[a].wrapping_mul(r[b]),
            Op::Jnz(a, t) if r[a] != 0 => {
                pc = t;
                continue;
            }
            Op::Jnz(..) => {}
            Op::Jmp(t) => {
                pc = t;
                continue;
            }
            Op::Halt => break,
        }
        pc += 1;
    }
    r[1]
}

/// Chapter 3's form: the program counter in a `Static`.
#[augur::staged]
fn stage_static(prog: &[Op], arg: Dyn<i64>) -> Dyn<i64> {
    let r = [0; 4].map(|_| Dyn::new(0i64));
    r[0].set(arg);
    let mut pc = Static::new(0usize);
    while *pc < prog.len() {
        match prog[*pc] {
            Op::Set(a, k) => r[a].set(k),
            Op::AddI(a, k) => r[a].set(r[a] + k),
            Op::Mul(a, b) => r[a].set(r[a] * r[b]),
            Op::Jnz(a, t) if r[a].ne(0).is_true() => {
                pc.set(t);
                continue;
            }
            Op::Jnz(..) => {}
            Op::Jmp(t) => {
                pc.set(t);
                continue;
            }
            Op::Halt => break,
        }
        pc += 1;
    }
    r[1]
}

/// The linear form: jump targets are resumable points.
#[augur::staged]
fn stage_points(prog: &[Op], arg: Dyn<i64>) -> Dyn<i64> {
    let r = [0; 4].map(|_| Dyn::new(0i64));
    r[0].set(arg);
    augur::resumable(0usize, |mut pc| {
        while pc < prog.len() {
            match prog[pc] {
                Op::Set(a, k) => r[a].set(k),
                Op::AddI(a, k) => r[a].set(r[a] + k),
                Op::Mul(a, b) => r[a].set(r[a] * r[b]),
                Op::Jnz(a, t) => {
                    let taken = r[a].ne(0).is_true();
                    return Some(if taken { t } else { pc + 1 });
                }
                Op::Jmp(t) => return Some(t),
                Op::Halt => return None,
            }
            pc += 1;
        }
        None
    });
    r[1]
}

/// `loops` loops in sequence, then `Halt`; the first computes the
/// factorial of the argument into r1, each later one adds three to it.
fn program(loops: usize) -> Vec<Op> {
    use Op::*;
    let mut p = vec![Set(1, 1), Jnz(0, 3), Jmp(6), Mul(1, 0), AddI(0, -1), Jmp(1)];
    for _ in 1..loops {
        let head = p.len();
        p.extend([
            Set(2, 3),
            Jnz(2, head + 3),
            Jmp(head + 6),
            AddI(1, 1),
            AddI(2, -1),
            Jmp(head + 1),
        ]);
    }
    p.push(Halt);
    p
}

type Native = unsafe extern "C" fn(i64) -> i64;

/// The DFA of "contains `ab`": 0 nothing yet, 1 just read `a`, 2 found.
fn next(state: u8, b: u8) -> u8 {
    match (state, b) {
        (2, _) => 2,
        (_, b'a') => 1,
        (1, b'b') => 2,
        _ => 0,
    }
}

/// The DFA over resumable points keyed by its state.
#[augur::staged]
fn contains_ab(hay: Dyn<*const u8>, len: Dyn<i64>) -> Dyn<i64> {
    let (i, found) = (Dyn::named("i", 0i64), Dyn::named("found", 0i64));
    augur::resumable(0u8, |state| {
        if state == 2 {
            found.set(1);
            return None;
        }
        if i.ge(len).is_true() {
            return None;
        }
        let b = hay.at(i);
        i.set(i + 1);
        // A test for each byte that goes elsewhere than the rest do.
        let rest = next(state, 0);
        for byte in [b'a', b'b'] {
            if next(state, byte) != rest && b.eq(byte).is_true() {
                return Some(next(state, byte));
            }
        }
        Some(rest)
    });
    found
}

/// The DFA staged, against the plain one on C and the JIT.
#[augur::staged]
fn state_machine(jit: &CompileOptions) -> augur::Result<()> {
    let f = Builder::new().extract("contains_ab", contains_ab)?;
    println!("== a state machine ==\n{}", f.c_code());
    let (c, j) = (f.compile()?, f.compile_with(jit)?);
    for s in [&b"xxab"[..], b"aab", b"ba", b"", b"abab", b"bbbbba"] {
        let want = s.iter().fold(0, |st, &b| next(st, b)) == 2;
        for g in [c.get(), j.get()] {
            // SAFETY: the code reads `s[i]` for `i < len` only.
            assert_eq!(unsafe { g(s.as_ptr(), s.len() as i64) }, i64::from(want));
        }
    }
    Ok(())
}

#[augur::staged]
fn main() -> augur::Result<()> {
    let jit = CompileOptions::default().with_backend(Backend::Jit);
    for (name, points) in [("static pc", false), ("points", true)] {
        let prog = program(3);
        let f = Builder::new().extract("machine", move |x: Dyn<i64>| {
            if points {
                stage_points(&prog, x)
            } else {
                stage_static(&prog, x)
            }
        })?;
        println!("== {name} ==\n{}", f.c_code());
        let (c, j) = (f.compile()?, f.compile_with(&jit)?);
        for x in [0i64, 1, 5, 10, 20] {
            let want = run(&program(3), x);
            let native: [Native; 2] = [c.get(), j.get()];
            for g in native {
                // SAFETY: `int64_t machine(int64_t)`, no memory.
                assert_eq!(unsafe { g(x) }, want);
            }
            assert_eq!(f.interpret(&[x.into()])?, want.into());
        }
    }
    println!("loops  instructions  form       operations  time (ms)");
    for loops in [50usize, 200, 800] {
        for (name, points) in [("static pc", false), ("points", true)] {
            let prog = program(loops);
            let len = prog.len();
            let start = Instant::now();
            let f = Builder::new().extract("machine", move |x: Dyn<i64>| {
                if points {
                    stage_points(&prog, x)
                } else {
                    stage_static(&prog, x)
                }
            })?;
            let ms = start.elapsed().as_secs_f64() * 1e3;
            assert_eq!(f.interpret(&[4i64.into()])?, run(&program(loops), 4).into());
            let ops = f.stats().operations;
            println!("{loops:>5}  {len:>12}  {name:<9}  {ops:>10}  {ms:>9.1}");
        }
    }
    state_machine(&jit)
}
