//! The staged interpreter in both forms, folding or not, on C, the JIT
//! and augur's interpreter, against the reference interpreter; the
//! folding interpreter against it too; extraction linear over points.

use augur::exec::{Backend, CompileOptions};
use augur::{Builder, Value};
use augur_bf::{extract, nested_loops, run, squares, Folded, Form, Options, Program, HELLO};

const TAPE: usize = 64;

fn all_options() -> Vec<Options> {
    let mut v = Vec::new();
    for form in [Form::Points, Form::StaticPc] {
        for fold in [true, false] {
            v.push(Options { form, fold });
        }
    }
    v
}

/// Runs `prog` staged with `opts` on C and the JIT (and, if `interpret`,
/// augur's interpreter) with each input, against [`run`].
fn check(prog: &Program, opts: Options, inputs: &[&[u8]], out_len: usize, interpret: bool) {
    let f = extract(prog, opts, &Builder::new()).unwrap_or_else(|e| panic!("{opts:?}: {e}"));
    let again = extract(prog, opts, &Builder::new()).expect("extracts twice");
    assert_eq!(f.c_code(), again.c_code(), "{opts:?}: the same C twice");
    let c = f.compile().expect("C");
    let jit = f
        .compile_with(&CompileOptions::default().with_backend(Backend::Jit))
        .expect("JIT");
    for input in inputs {
        // Programs that read until a zero byte find one.
        let input = &[*input, &[0]].concat();
        let (mut tape, mut out) = (vec![0u8; TAPE], vec![0u8; out_len]);
        let want = run(prog, &mut tape, input, &mut out).expect("the reference runs");
        for (name, code) in [("C", &c), ("JIT", &jit)] {
            let (mut t, mut o, mut i) = (vec![0u8; TAPE], vec![0u8; out_len], input.to_vec());
            // SAFETY: the reference ran within these buffers.
            let n = unsafe { code.get()(t.as_mut_ptr(), i.as_mut_ptr(), o.as_mut_ptr()) };
            assert_eq!(
                (n as usize, &t, &o),
                (want, &tape, &out),
                "{name} {opts:?} on {input:?}"
            );
        }
        if interpret {
            let mut it = augur::Interpreter::new();
            let mem = it.memory_mut();
            let (t, o) = (
                mem.alloc_slice(&[0u8; TAPE]),
                mem.alloc_slice(&vec![0u8; out_len]),
            );
            let i = mem.alloc_slice(input);
            let n = f.interpret_in(&mut it, &[t, i, o]).expect("interpreted");
            assert_eq!(n, Value::I32(want as i32), "interpreter {opts:?}");
            let read = |v: Value, len| it.memory().read_slice::<u8>(v, len).expect("readable");
            assert_eq!(
                (read(t, TAPE), read(o, out_len)),
                (tape.clone(), out.clone())
            );
        }
    }
}

#[test]
fn the_greeting_and_small_programs_in_every_form() {
    let progs = [
        HELLO,
        ",>,[<+>-]<.",
        ",>,<[>[>+>+<<-]>>[<<+>>-]<<<-]>>.",
        ",[.-]",
        ",[>++++[<-------->-]<.,]",
    ];
    let inputs: &[&[u8]] = &[
        b"\x03\x04",
        b"\x00\x00",
        b"\x07\x06",
        b"\x01\x00",
        b"\x02\x02",
    ];
    for src in progs {
        let prog = Program::parse(src).expect("parses");
        for opts in all_options() {
            check(&prog, opts, inputs, 64, true);
        }
    }
}

#[test]
fn loops_in_sequence_in_every_form() {
    let prog = nested_loops(700);
    for opts in all_options() {
        check(&prog, opts, &[b""], 64, opts.fold);
    }
}

#[test]
fn the_loop_heavy_squares_on_c_and_the_jit() {
    let prog = squares();
    for opts in all_options() {
        check(&prog, opts, &[b""], 10_000, false);
    }
    let (mut tape, mut out) = (vec![0u8; 8], vec![0u8; 10_000]);
    assert_eq!(run(&prog, &mut tape, &[], &mut out), Ok(10_000));
    let want: Vec<u8> = (0..10_000u32).map(|i| (i * i % 256) as u8).collect();
    assert_eq!(out, want);
}

/// A random program that ends: every loop is `[-` body `]` whose body
/// moves right, works there and comes back, so only the `-` changes the
/// loop's cell; some bodies are plain multiply-adds.
fn random_program(rng: &mut augur_rng::Rng, depth: u32, at: usize, out: &mut String) {
    for _ in 0..rng.below(5) + 1 {
        match rng.below(if depth == 0 { 4 } else { 7 }) {
            0 => out.push_str(&"+".repeat(rng.below(3) as usize + 1)),
            1 => out.push('-'),
            2 => out.push('.'),
            3 => out.push(','),
            6 => out.push_str(["[-]", "[->+<]", "[->++>+++<<]", "[+>-<]"][rng.below(4) as usize]),
            _ if at + 3 < 60 => {
                let k = rng.below(2) as usize + 1;
                out.push_str("[-");
                out.push_str(&">".repeat(k));
                random_program(rng, depth - 1, at + k, out);
                out.push_str(&"<".repeat(k));
                out.push(']');
            }
            _ => out.push('+'),
        }
    }
}

/// True if the program runs within the tape, the input and 64 bytes of
/// output (loops that print could write past them).
fn ends(prog: &Program, input: &[u8]) -> bool {
    let (mut tape, mut out) = (vec![0u8; TAPE], vec![0u8; 64]);
    Folded::new(prog).run(&mut tape, input, &mut out).is_ok()
}

#[test]
fn random_programs_in_every_form_and_the_folding_interpreter() {
    let cases: u64 = std::env::var("AUGUR_BF_CASES").map_or(30, |v| v.parse().expect("a count"));
    let mut rng = augur_rng::Rng(0xbf);
    let inputs: &[&[u8]] = &[
        b"\x00\x00\x00\x00\x00\x00",
        b"\x01\x02\x03\x01\x02\x03",
        b"\x03\x00\x02\x01\x00\x04",
        b"\x02\x02\x02\x02\x02\x02",
        b"\x04\x01\x00\x03\x01\x02",
    ];
    let mut checked = 0;
    for _ in 0..cases {
        let mut src = String::new();
        random_program(&mut rng, 3, 0, &mut src);
        let prog = Program::parse(&src).expect("balanced");
        if !inputs.iter().all(|i| ends(&prog, i)) {
            continue;
        }
        for input in inputs {
            let (mut t1, mut o1) = (vec![0u8; TAPE], vec![0u8; 64]);
            let (mut t2, mut o2) = (vec![0u8; TAPE], vec![0u8; 64]);
            let a = run(&prog, &mut t1, input, &mut o1);
            let b = Folded::new(&prog).run(&mut t2, input, &mut o2);
            assert_eq!((a, t1, o1), (b, t2, o2), "folded {src}");
        }
        for opts in all_options() {
            check(&prog, opts, inputs, 64, opts.fold);
        }
        checked += 1;
    }
    assert!(
        checked * 3 >= cases,
        "only {checked} of {cases} programs ended"
    );
}

#[test]
fn extraction_over_points_is_linear_in_the_program() {
    let work = |n: usize, form: Form| {
        let opts = Options { form, fold: false };
        extract(&nested_loops(n), opts, &Builder::new())
            .expect("extracts")
            .stats()
            .operations
    };
    let (small, large) = (work(1000, Form::Points), work(4000, Form::Points));
    assert!(large < small * 5, "points: {small} then {large}");
    let quadratic = work(4000, Form::StaticPc);
    assert!(
        large * 50 < quadratic,
        "points {large}, static pc {quadratic}"
    );
}

#[test]
fn unmatched_brackets_are_errors_naming_their_place() {
    assert_eq!(
        Program::parse("[[]").unwrap_err().to_string(),
        "unmatched `[` at 1:1"
    );
    assert_eq!(
        Program::parse("a\n b]").unwrap_err().to_string(),
        "unmatched `]` at 2:3"
    );
    assert!(Program::parse("no commands").expect("parses").is_empty());
}

/// Both forms give the same C, byte for byte, on machines small enough to
/// be structured as a whole; on larger ones they behave alike and the
/// points form's C is flat: a label per point, jumps between them
/// (`structure/regions.rs`).
#[test]
fn both_forms_give_the_same_code_or_flat_code_that_behaves_alike() {
    let c = |prog: &Program, form, fold| {
        extract(prog, Options { form, fold }, &Builder::new()).expect("extracts")
    };
    for prog in [Program::parse(HELLO).expect("parses"), nested_loops(60)] {
        for fold in [true, false] {
            let (p, s) = (c(&prog, Form::Points, fold), c(&prog, Form::StaticPc, fold));
            assert!(p.stats().points <= 64, "{} points", p.stats().points);
            assert_eq!(p.c_code(), s.c_code(), "fold {fold}");
        }
    }
    let mut large = 0;
    for prog in [squares(), nested_loops(600), nested_loops(3000)] {
        for fold in [true, false] {
            let run_form = |form| {
                let f = c(&prog, form, fold);
                let code = f
                    .compile_with(&CompileOptions::default().with_backend(Backend::Jit))
                    .expect("JIT");
                let (mut tape, mut out, mut input) = (vec![0u8; TAPE], vec![0u8; 16384], vec![0u8]);
                // SAFETY: the reference runs these programs within this
                // tape and output.
                let n =
                    unsafe { code.get()(tape.as_mut_ptr(), input.as_mut_ptr(), out.as_mut_ptr()) };
                ((f.c_code(), f.stats().points), n, tape, out)
            };
            let ((code, points), n, tape, out) = run_form(Form::Points);
            let ((code2, _), n2, tape2, out2) = run_form(Form::StaticPc);
            assert_eq!((n, tape, out), (n2, tape2, out2), "fold {fold}");
            if points <= 64 {
                assert_eq!(code, code2, "fold {fold}: {points} points");
                continue;
            }
            large += 1;
            // A label per point but the first, at the top level.
            let labels = code
                .lines()
                .filter(|l| l.starts_with("  L") && l.ends_with(":;"));
            assert!(
                labels.count() as u64 + 1 >= points,
                "fold {fold}: {points} points"
            );
        }
    }
    assert!(large >= 3, "{large} programs past 64 points");
}
