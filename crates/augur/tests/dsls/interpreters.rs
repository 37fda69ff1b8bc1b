//! Staged interpreters: the first stage interprets a static program and the
//! generated C is the compiled program (Futamura's first projection).

use crate::common;

use augur::{Dyn, Static};
use common::{assert_lacks, check, Buf, Check};

/// The index of the bracket matching the one at `pc`.
#[augur::staged]
fn matching(prog: &[u8], pc: usize) -> usize {
    let (step, open, close): (isize, u8, u8) = if prog[pc] == b'[' {
        (1, b'[', b']')
    } else {
        (-1, b']', b'[')
    };
    let (mut depth, mut i) = (0, pc as isize);
    loop {
        match prog[i as usize] {
            c if c == open => depth += 1,
            c if c == close => depth -= 1,
            _ => {}
        }
        if depth == 0 {
            return i as usize;
        }
        i += step;
    }
}

/// Staged Brainf***: `cell(p)` is the tape cell `p`; the program counter is
/// a `Static`, so `[`/`]` become dyn loops. Returns the output length.
#[augur::staged]
fn stage_bf(
    prog: &str,
    cell: impl Fn(Dyn<i32>) -> Dyn<u8>,
    input: Dyn<*mut u8>,
    out: Dyn<*mut u8>,
) -> Dyn<i32> {
    let prog = prog.as_bytes();
    let p = Dyn::new(0);
    let inp = Dyn::new(0);
    let outp = Dyn::new(0);
    let mut pc = Static::new(0usize);
    while *pc < prog.len() {
        match prog[*pc] {
            b'>' => p.set(p + 1),
            b'<' => p.set(p - 1),
            b'+' => cell(p).set(cell(p) + 1),
            b'-' => cell(p).set(cell(p) - 1),
            b'.' => {
                out.at(outp).set(cell(p));
                outp.set(outp + 1);
            }
            b',' => {
                cell(p).set(input.at(inp));
                inp.set(inp + 1);
            }
            b'[' if cell(p).eq(0).is_true() => pc.set(matching(prog, *pc)),
            b']' if cell(p).ne(0).is_true() => pc.set(matching(prog, *pc)),
            _ => {}
        }
        pc += 1;
    }
    outp
}

/// Plain Brainf***, the reference: returns the output length.
#[augur::staged]
fn run_bf(prog: &str, tape: &mut [u8], input: &[u8], out: &mut [u8]) -> i32 {
    let prog = prog.as_bytes();
    let (mut pc, mut p, mut inp, mut outp) = (0, 0, 0, 0);
    while pc < prog.len() {
        match prog[pc] {
            b'>' => p += 1,
            b'<' => p -= 1,
            b'+' => tape[p] = tape[p].wrapping_add(1),
            b'-' => tape[p] = tape[p].wrapping_sub(1),
            b'.' => {
                out[outp] = tape[p];
                outp += 1;
            }
            b',' => {
                tape[p] = input[inp];
                inp += 1;
            }
            b'[' if tape[p] == 0 => pc = matching(prog, pc),
            b']' if tape[p] != 0 => pc = matching(prog, pc),
            _ => {}
        }
        pc += 1;
    }
    outp as i32
}

const HELLO: &str = "++++++++[>++++[>++>+++>+++>+<<<<-]>+>+>->>+[<]<-]>>.>---.+++++++..+++.>>.<-.<.+++.------.--------.>>+.>++.";
const ECHO_UPPER: &str = ",[>++++[<-------->-]<.,]";
const ADD: &str = ",>,[<+>-]<.";
const MULTIPLY: &str = ",>,<[>[>+>+<<-]>>[<<+>>-]<<<-]>>.";
const COUNTDOWN: &str = ",[.-]";

type BfArgs = (Buf<u8>, Buf<u8>, Buf<u8>);

/// Tape, input and output buffers for one run.
#[augur::staged]
fn bf_inputs(inputs: &[&[u8]]) -> Vec<BfArgs> {
    inputs
        .iter()
        .map(|i| (Buf(vec![0; 64]), Buf(i.to_vec()), Buf(vec![0; 64])))
        .collect()
}

/// Checks one program with the tape as a `uint8_t *` parameter.
#[augur::staged]
fn check_bf_pointer_tape(name: &str, prog: &'static str, inputs: &[&[u8]]) -> String {
    let ex = check(
        name,
        move |tape: Dyn<*mut u8>, input: Dyn<*mut u8>, out: Dyn<*mut u8>| {
            stage_bf(prog, |p| tape.at(p), input, out)
        },
        move |(tape, input, out): &mut BfArgs| run_bf(prog, &mut tape.0, &input.0, &mut out.0),
        &bf_inputs(inputs),
    );
    ex.c_code()
}

/// Hello World: nested loops, output through a buffer.
#[test]
#[augur::staged]
fn bf_hello_world() {
    let code = check_bf_pointer_tape("bf_hello", HELLO, &[b"", b"x", b"", b"", b""]);
    let mut out = [0u8; 64];
    let n = run_bf(HELLO, &mut [0; 64], &[], &mut out);
    assert_eq!(&out[..n as usize], b"Hello World!\n");
    // The program is gone: only its effect on the tape remains.
    assert_lacks(&code, &["'['", "pc"]);
}

/// Input until a zero byte, each byte minus 32 (lower to upper case).
#[test]
#[augur::staged]
fn bf_echo_upper() {
    check_bf_pointer_tape(
        "bf_upper",
        ECHO_UPPER,
        &[
            b"\0",
            b"abc\0",
            b"hello\0",
            b"z\0",
            b"aaaaaaaaaaaaaaaaaaaa\0",
        ],
    );
}

/// Adding and multiplying two input bytes (wrapping at 256).
#[test]
#[augur::staged]
fn bf_arithmetic() {
    let pairs: &[&[u8]] = &[b"\0\0", b"\x01\x02", b"\x07\x06", b"\xff\x02", b"\x10\x10"];
    check_bf_pointer_tape("bf_add", ADD, pairs);
    check_bf_pointer_tape("bf_mul", MULTIPLY, pairs);
}

/// The tape as a local `uint8_t[64]` zeroed by a dyn loop; output counts
/// down from the input byte.
#[test]
#[augur::staged]
fn bf_local_array_tape() {
    check(
        "bf_local",
        |input: Dyn<*mut u8>, out: Dyn<*mut u8>| {
            let tape = Dyn::<[u8; 64]>::uninit();
            let i = Dyn::new(0);
            while i.lt(64).is_true() {
                tape.at(i).set(0);
                i.set(i + 1);
            }
            stage_bf(COUNTDOWN, |p| tape.at(p), input, out)
        },
        |(input, out): &mut (Buf<u8>, Buf<u8>)| {
            run_bf(COUNTDOWN, &mut [0; 64], &input.0, &mut out.0)
        },
        &[
            (Buf(vec![0]), Buf(vec![0; 64])),
            (Buf(vec![1]), Buf(vec![0; 64])),
            (Buf(vec![5]), Buf(vec![0; 64])),
            (Buf(vec![63]), Buf(vec![0; 64])),
            (Buf(vec![64]), Buf(vec![7; 64])),
        ],
    );
}

/// A register machine with backward and forward jumps over a static
/// program: jumps become loops and ifs.
#[derive(Clone, Copy, Debug)]
enum Insn {
    /// `r[a] = arg`
    Arg(usize),
    /// `r[a] = k`
    Set(usize, i64),
    /// `r[a] += k`
    AddI(usize, i64),
    /// `r[a] += r[b]`
    Add(usize, usize),
    /// `r[a] *= r[b]`
    Mul(usize, usize),
    /// `r[a] -= r[b]`
    Sub(usize, usize),
    /// jump to `t` if `r[a] != 0`
    Jnz(usize, usize),
    /// jump to `t` if `r[a] < r[b]`
    Jlt(usize, usize, usize),
    /// jump to `t`
    Jmp(usize),
}

#[augur::staged]
fn stage_machine(prog: &[Insn], arg: Dyn<i64>) -> Dyn<i64> {
    let r = [0; 4].map(|_| Dyn::new(0i64));
    let mut pc = Static::new(0usize);
    while *pc < prog.len() {
        let next = match prog[*pc] {
            Insn::Arg(a) => {
                r[a].set(arg);
                *pc + 1
            }
            Insn::Set(a, k) => {
                r[a].set(k);
                *pc + 1
            }
            Insn::AddI(a, k) => {
                r[a].set(r[a] + k);
                *pc + 1
            }
            Insn::Add(a, b) => {
                r[a].set(r[a] + r[b]);
                *pc + 1
            }
            Insn::Mul(a, b) => {
                r[a].set(r[a] * r[b]);
                *pc + 1
            }
            Insn::Sub(a, b) => {
                r[a].set(r[a] - r[b]);
                *pc + 1
            }
            Insn::Jnz(a, t) if r[a].ne(0).is_true() => t,
            Insn::Jlt(a, b, t) if r[a].lt(r[b]).is_true() => t,
            Insn::Jmp(t) => t,
            Insn::Jnz(..) | Insn::Jlt(..) => *pc + 1,
        };
        pc.set(next);
    }
    r[0]
}

#[augur::staged]
fn run_machine(prog: &[Insn], arg: i64) -> i64 {
    let (mut r, mut pc) = ([0i64; 4], 0);
    while pc < prog.len() {
        pc = match prog[pc] {
            Insn::Arg(a) => {
                r[a] = arg;
                pc + 1
            }
            Insn::Set(a, k) => {
                r[a] = k;
                pc + 1
            }
            Insn::AddI(a, k) => {
                r[a] = r[a].wrapping_add(k);
                pc + 1
            }
            Insn::Add(a, b) => {
                r[a] = r[a].wrapping_add(r[b]);
                pc + 1
            }
            Insn::Mul(a, b) => {
                r[a] = r[a].wrapping_mul(r[b]);
                pc + 1
            }
            Insn::Sub(a, b) => {
                r[a] = r[a].wrapping_sub(r[b]);
                pc + 1
            }
            Insn::Jnz(a, t) if r[a] != 0 => t,
            Insn::Jlt(a, b, t) if r[a] < r[b] => t,
            Insn::Jmp(t) => t,
            Insn::Jnz(..) | Insn::Jlt(..) => pc + 1,
        };
    }
    r[0]
}

#[augur::staged]
fn check_machine(name: &str, prog: &'static [Insn], inputs: &[(i64,)]) {
    let c = Check {
        builder: augur::Builder::new().max_loop_iterations(200),
        ..Check::default()
    };
    c.run(
        name,
        move |x: Dyn<i64>| stage_machine(prog, x),
        move |&mut (x,): &mut (i64,)| run_machine(prog, x),
        inputs,
    );
}

/// Factorial: one backward jump, a counted loop.
#[test]
#[augur::staged]
fn machine_factorial() {
    use Insn::*;
    // r1 = arg; r0 = 1; if r1 < 1 skip; loop: r0 *= r1; r1 -= 1; jnz r1 loop
    const P: &[Insn] = &[
        Arg(1),
        Set(0, 1),
        Set(2, 1),
        Jlt(1, 2, 7),
        Mul(0, 1),
        AddI(1, -1),
        Jnz(1, 4),
    ];
    check_machine("fact", P, &[(0,), (1,), (2,), (5,), (20,), (-3,)]);
}

/// Fibonacci: a loop with a register shuffle in the body.
#[test]
#[augur::staged]
fn machine_fibonacci() {
    use Insn::*;
    // r0 = 0, r1 = 1, r2 = n; while 0 < r2: (r0, r1) = (r1, r0 + r1); r2 -= 1
    const P: &[Insn] = &[
        Set(0, 0),
        Set(1, 1),
        Arg(2),
        Set(3, 0),
        Jlt(3, 2, 6),
        Jmp(12),
        Set(3, 0),
        Add(3, 0),
        Add(3, 1),
        Sub(0, 0),
        Add(0, 1),
        Jmp(13),
        Jmp(20),
        Sub(1, 1),
        Add(1, 3),
        AddI(2, -1),
        Set(3, 0),
        Jmp(4),
    ];
    check_machine("fib", P, &[(0,), (1,), (2,), (10,), (50,), (-1,)]);
}

/// Integer square root by counting up: a loop whose exit is a forward jump.
#[test]
#[augur::staged]
fn machine_isqrt() {
    use Insn::*;
    // r1 = arg; r0 = 0; loop: r2 = (r0 + 1)^2; if r1 < r2 exit; r0 += 1; jmp loop
    const P: &[Insn] = &[
        Arg(1),
        Set(0, 0),
        Set(2, 1),
        Add(2, 0),
        Set(3, 0),
        Add(3, 2),
        Mul(2, 3),
        Jlt(1, 2, 9),
        Jmp(10),
        Jmp(12),
        AddI(0, 1),
        Jmp(2),
    ];
    check_machine("isqrt", P, &[(0,), (1,), (3,), (4,), (99,), (100,), (-5,)]);
}

// ----- the resumable form: each loop's head and exit are points -----

/// Staged Brainf*** over resumable points (`augur::resumable`): the
/// program counter is the key; a `[` and the instruction after its `]`
/// begin points, so each is recorded once and every run of the
/// extraction starts at the point it explores.
#[augur::staged]
fn stage_bf_points(
    prog: &str,
    tape: Dyn<*mut u8>,
    input: Dyn<*mut u8>,
    out: Dyn<*mut u8>,
) -> Dyn<i32> {
    let prog = prog.as_bytes();
    let p = Dyn::new(0);
    let inp = Dyn::new(0);
    let outp = Dyn::new(0);
    augur::resumable(0usize, |mut pc| {
        while pc < prog.len() {
            match prog[pc] {
                b'>' => p.set(p + 1),
                b'<' => p.set(p - 1),
                b'+' => tape.at(p).set(tape.at(p) + 1),
                b'-' => tape.at(p).set(tape.at(p) - 1),
                b'.' => {
                    out.at(outp).set(tape.at(p));
                    outp.set(outp + 1);
                }
                b',' => {
                    tape.at(p).set(input.at(inp));
                    inp.set(inp + 1);
                }
                b'[' if tape.at(p).eq(0).is_true() => return Some(matching(prog, pc) + 1),
                b'[' => return Some(pc + 1),
                b']' => return Some(matching(prog, pc)),
                _ => {}
            }
            pc += 1;
        }
        None
    });
    outp
}

/// Checks one program in the resumable form on C, the JIT and the
/// interpreter against plain Rust; returns the C.
#[augur::staged]
fn check_bf_points(name: &str, prog: &str, inputs: &[&[u8]]) -> String {
    let (staged, reference) = (prog.to_string(), prog.to_string());
    let ex = check(
        name,
        move |tape: Dyn<*mut u8>, input: Dyn<*mut u8>, out: Dyn<*mut u8>| {
            stage_bf_points(&staged, tape, input, out)
        },
        move |(tape, input, out): &mut BfArgs| {
            run_bf(&reference, &mut tape.0, &input.0, &mut out.0)
        },
        &bf_inputs(inputs),
    );
    let jit = augur::exec::CompileOptions::default().with_backend(augur::exec::Backend::Jit);
    let jit = ex
        .compile_with(&jit)
        .unwrap_or_else(|e| panic!("{name}: JIT: {e}"));
    for (mut tape, mut input, mut out) in bf_inputs(inputs) {
        let (mut tape2, mut out2) = (tape.0.clone(), out.0.clone());
        let want = run_bf(prog, &mut tape2, &input.0, &mut out2);
        let (t, i, o) = (
            tape.0.as_mut_ptr(),
            input.0.as_mut_ptr(),
            out.0.as_mut_ptr(),
        );
        // SAFETY: the programs stay within the 64-cell tape and output.
        let got = unsafe { jit.get()(t, i, o) };
        assert_eq!((got, &tape.0, &out.0), (want, &tape2, &out2), "{name}: JIT");
    }
    ex.c_code()
}

/// The five programs above in the resumable form: the same results, and
/// one point per loop head and loop exit.
#[test]
#[augur::staged]
fn bf_programs_over_resumable_points() {
    let pairs: &[&[u8]] = &[b"\0\0", b"\x01\x02", b"\x07\x06", b"\xff\x02", b"\x10\x10"];
    let hello = check_bf_points("bf_points_hello", HELLO, &[b"", b"x", b"", b"", b""]);
    assert_lacks(&hello, &["goto"]);
    check_bf_points("bf_points_add", ADD, pairs);
    check_bf_points("bf_points_mul", MULTIPLY, pairs);
    let upper: &[&[u8]] = &[
        b"\0",
        b"abc\0",
        b"hello\0",
        b"z\0",
        b"aaaaaaaaaaaaaaaaaaaa\0",
    ];
    check_bf_points("bf_points_upper", ECHO_UPPER, upper);
    check_bf_points(
        "bf_points_countdown",
        COUNTDOWN,
        &[b"\0", b"\x01", b"\x05", b"\x3f", b"\x40"],
    );
}
