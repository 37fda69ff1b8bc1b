//! What the engine makes of the staged shapes that sound-by-default is
//! about (issue "sound by default"): each shape, written as a user would,
//! unannotated and under `#[augur::staged]`, extracted with the default
//! builder, run in the interpreter on several inputs and compared with the
//! same code as plain Rust. Each line says `exact`, `WRONG` (with the
//! first input where the generated code differs) or the error.
//!
//! `cargo run --release -p augur-staging --example soundness_shapes`

use augur::exec::Interpreter;
use augur::{Builder, Dyn, Error, Extracted, Value};

/// One body twice: as written (`$plain`) and under `#[augur::staged]`
/// (`$staged`), so the two rows of a shape compare the same code.
macro_rules! plain_and_staged {
    ($plain:ident, $staged:ident, ($($params:tt)*) -> $ret:ty $body:block) => {
        fn $plain($($params)*) -> $ret $body

        #[augur::staged]
        fn $staged($($params)*) -> $ret $body
    };
}

/// How one shape fared.
fn verdict<S: Copy>(
    ex: &Result<Extracted<S>, Error>,
    runs: &[(Vec<Value>, i32)],
    setup: &dyn Fn(&mut Interpreter) -> Vec<Value>,
) -> String {
    let ex = match ex {
        Ok(ex) => ex,
        Err(e) => {
            let debug = format!("{e:?}");
            let variant = debug.split([' ', '{', '(']).next().unwrap_or_default();
            let first = e.to_string();
            let first = first.lines().next().unwrap_or_default();
            let first: String = first.chars().take(100).collect();
            return format!("error ({variant}): {first}");
        }
    };
    for (args, want) in runs {
        let mut it = Interpreter::new();
        let mut all = setup(&mut it);
        all.extend(args.iter().cloned());
        match ex.interpret_in(&mut it, &all) {
            Ok(v) if v == Value::I32(*want) => {}
            Ok(v) => return format!("WRONG: args {args:?} give {v}, Rust gives {want}"),
            Err(e) => return format!("run error: {e}"),
        }
    }
    "exact".to_string()
}

fn no_setup(_: &mut Interpreter) -> Vec<Value> {
    Vec::new()
}

// ----- shape 1: a plain loop with an early return on a value it changes -----

fn early_return_rust(mut x: i32, n: usize) -> i32 {
    for _ in 0..n {
        if x > 5 {
            return x;
        }
        x += 1;
    }
    x.wrapping_mul(2)
}

plain_and_staged!(early_return, early_return_staged, (x: Dyn<i32>, n: usize) -> Dyn<i32> {
    for _ in 0..n {
        if x.gt(5).is_true() {
            return x;
        }
        x.set(x + 1);
    }
    x * 2
});

/// The same loop as an iterator adapter (`any`) with the early exit in its
/// closure: the closure's calls come from the standard library's frames.
#[augur::staged]
fn any_exit_staged(x: Dyn<i32>, n: usize) -> Dyn<i32> {
    let found = (0..n).any(|_| {
        if x.gt(5).is_true() {
            return true;
        }
        x.set(x + 1);
        false
    });
    if found {
        x
    } else {
        x * 2
    }
}

// ----- shape 2: a plain loop whose turns branch on a value they change -----

fn zigzag_rust(mut x: i32, n: usize) -> i32 {
    for _ in 0..n {
        if x > 0 {
            x -= 1
        } else {
            x += 2
        }
    }
    x
}

plain_and_staged!(zigzag, zigzag_staged, (x: Dyn<i32>, n: usize) -> Dyn<i32> {
    for _ in 0..n {
        if x.gt(0).is_true() {
            x.set(x - 1)
        } else {
            x.set(x + 2)
        }
    }
    x
});

// ----- shape 3: a DFA for (a|b)*abb whose state set is plain Rust -----

/// One step of the NFA of `(a|b)*abb` on a set of its states 0..=3.
fn nfa_step(set: u8, a: bool, b: bool) -> u8 {
    let mut next = 0;
    if set & 1 != 0 {
        next |= if a {
            0b11
        } else if b {
            0b1
        } else {
            0
        };
    }
    if set & 2 != 0 && b {
        next |= 0b100;
    }
    if set & 4 != 0 && b {
        next |= 0b1000;
    }
    next
}

fn dfa_rust(text: &[u8]) -> i32 {
    let mut set = 1u8;
    for &c in text {
        set = nfa_step(set, c == b'a', c == b'b');
    }
    i32::from(set & 8 != 0)
}

plain_and_staged!(dfa, dfa_staged, (s: Dyn<*const u8>, n: Dyn<i32>) -> Dyn<i32> {
    let mut set = 1u8;
    let i = Dyn::new(0);
    while i.lt(n).is_true() {
        let c = s.at(i);
        let a = c.eq(b'a').is_true();
        let b = !a && c.eq(b'b').is_true();
        set = nfa_step(set, a, b);
        i.set(i + 1);
    }
    Dyn::new(i32::from(set & 8 != 0))
});

/// The same, with the turn's decisions kept in plain `Option<bool>`s
/// filled by `get_or_insert_with` (changed through a method).
#[augur::staged]
fn dfa_scratch_staged(s: Dyn<*const u8>, n: Dyn<i32>) -> Dyn<i32> {
    let mut set = 1u8;
    let i = Dyn::new(0);
    while i.lt(n).is_true() {
        let c = s.at(i);
        let mut is_a: Option<bool> = None;
        let mut is_b: Option<bool> = None;
        let a = *is_a.get_or_insert_with(|| c.eq(b'a').is_true());
        let b = !a && *is_b.get_or_insert_with(|| c.eq(b'b').is_true());
        set = nfa_step(set, a, b);
        i.set(i + 1);
    }
    Dyn::new(i32::from(set & 8 != 0))
}

// ----- shape 4: a flag set on one side of a dyn `if`, read much later -----

fn flag_rust(x: i32) -> i32 {
    let big = x > 10;
    let mut y = x;
    for k in 0..200 {
        y = y.wrapping_add(k);
    }
    if big {
        y
    } else {
        -y
    }
}

fn flag(x: Dyn<i32>) -> Dyn<i32> {
    let mut big = false;
    if x.gt(10).is_true() {
        big = true;
    }
    let y = Dyn::new(x);
    for k in 0..200 {
        y.set(y + k);
    }
    if big {
        y
    } else {
        -y
    }
}

// ----- shape 5: a plain Vec changed on dyn branches, its length deciding -----

fn vec_len(x: Dyn<i32>) -> Dyn<i32> {
    let mut seen: Vec<i32> = Vec::new();
    let i = Dyn::new(0);
    let acc = Dyn::new(0);
    while i.lt(x).is_true() {
        if (i % 3).eq(0).is_true() {
            seen.push(1);
        } else {
            seen.clear();
        }
        acc.set(acc + seen.len() as i32);
        i.set(i + 1);
    }
    acc
}

fn vec_len_rust(x: i32) -> i32 {
    let (mut seen, mut acc) = (0, 0i32);
    for i in 0..x.max(0) {
        if i % 3 == 0 {
            seen += 1
        } else {
            seen = 0
        }
        acc = acc.wrapping_add(seen);
    }
    acc
}

/// The builders each plain shape is extracted with: augur's opt-out, which
/// trusts observation where it cannot see (`trust_unannotated(true)`), and
/// the sound rule, which shares no code there.
fn modes() -> [(&'static str, Builder); 2] {
    [
        ("plain, trusted", Builder::new().trust_unannotated(true)),
        ("plain, sound  ", Builder::new().trust_unannotated(false)),
    ]
}

fn main() {
    let xs = [-100, -3, 0, 3, 6, 40];
    println!("shape                                                       verdict");
    for n in [10usize, 17, 18, 20, 40, 100] {
        let runs: Vec<(Vec<Value>, i32)> = xs
            .iter()
            .map(|&x| (vec![Value::I32(x)], early_return_rust(x, n)))
            .collect();
        for (mode, b) in modes() {
            let plain = b.extract("f", move |x: Dyn<i32>| early_return(x, n));
            println!(
                "early return, {n:3} turns, {mode}         {}",
                verdict(&plain, &runs, &no_setup)
            );
        }
        let staged = Builder::new().extract("f", move |x: Dyn<i32>| early_return_staged(x, n));
        println!(
            "early return, {n:3} turns, #[augur::staged]         {}",
            verdict(&staged, &runs, &no_setup)
        );
        let adapter = Builder::new().extract("f", move |x: Dyn<i32>| any_exit_staged(x, n));
        println!(
            "early return, {n:3} turns, `any`, staged            {}",
            verdict(&adapter, &runs, &no_setup)
        );
    }
    for n in [10usize, 18, 20, 40] {
        let runs: Vec<(Vec<Value>, i32)> = xs
            .iter()
            .map(|&x| (vec![Value::I32(x)], zigzag_rust(x, n)))
            .collect();
        for (mode, b) in modes() {
            let plain = b.extract("f", move |x: Dyn<i32>| zigzag(x, n));
            println!(
                "zigzag, {n:3} turns, {mode}               {}",
                verdict(&plain, &runs, &no_setup)
            );
        }
        let staged = Builder::new().extract("f", move |x: Dyn<i32>| zigzag_staged(x, n));
        println!(
            "zigzag, {n:3} turns, #[augur::staged]               {}",
            verdict(&staged, &runs, &no_setup)
        );
    }
    let texts: [&[u8]; 6] = [b"abb", b"aabb", b"ab", b"", b"babb", b"abba"];
    let [(trusted, tb), (sound, sb)] = modes();
    for (name, ex) in [
        (
            format!("DFA, state set in a plain u8, {trusted}"),
            tb.extract("f", dfa),
        ),
        (
            format!("DFA, state set in a plain u8, {sound}"),
            sb.extract("f", dfa),
        ),
        (
            "DFA, state set in a plain u8, #[augur::staged]".into(),
            Builder::new().extract("f", dfa_staged),
        ),
        (
            "DFA, scratch through get_or_insert_with, staged".into(),
            Builder::new().extract("f", dfa_scratch_staged),
        ),
    ] {
        let mut line = "exact".to_string();
        for t in texts {
            let runs = vec![(vec![Value::I32(t.len() as i32)], dfa_rust(t))];
            let setup =
                |it: &mut Interpreter| vec![it.memory_mut().alloc_slice(&[t, &[0u8]].concat())];
            let v = verdict(&ex, &runs, &setup);
            if v != "exact" {
                line = format!("{v} (text {:?})", String::from_utf8_lossy(t));
                break;
            }
        }
        println!("{name:<47}             {line}");
    }
    let runs: Vec<(Vec<Value>, i32)> = xs
        .iter()
        .map(|&x| (vec![Value::I32(x)], flag_rust(x)))
        .collect();
    for (mode, b) in modes() {
        println!(
            "flag set on a dyn branch, read 200 statements on, {mode}  {}",
            verdict(&b.extract("f", flag), &runs, &no_setup)
        );
    }
    let runs: Vec<(Vec<Value>, i32)> = [0, 1, 5, 9]
        .iter()
        .map(|&x| (vec![Value::I32(x)], vec_len_rust(x)))
        .collect();
    for (mode, b) in modes() {
        println!(
            "plain Vec changed on dyn branches, len decides, {mode}    {}",
            verdict(&b.extract("f", vec_len), &runs, &no_setup)
        );
    }
}
