//! What folding knows of a program, as first-stage data: runs of `+ -`
//! and `< >` are one change each, and a loop whose body only adds and
//! moves, comes back to where it began and steps its own cell by one is a
//! multiply-add (`[-]` clears, `[->+<]` moves, `[->++>+++<<]` scales).
//! The folding interpreter and the staged interpreter read the same
//! pieces.

use crate::Program;

/// One piece of a program, from a command on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Piece {
    /// `+` and `-` commands: add this to the cell (wrapping).
    Add(u8),
    /// `>` and `<` commands: move the pointer by this much.
    Move(i64),
    /// `.`
    Out,
    /// `,`
    In,
    /// A loop that adds `cell * k` to the cell at each offset `o` of
    /// `(o, k)`, then clears its own cell (no terms: `[-]`).
    MulAdd(Vec<(i64, u8)>),
    /// Another loop's `[`.
    Open,
    /// Its `]`.
    Close,
}

/// The piece at `pc` (with folding: as long as it goes), and the command
/// after it.
pub fn piece(prog: &Program, pc: usize, fold: bool) -> (Piece, usize) {
    let code = prog.code();
    let run = |a: u8, b: u8| {
        let end = (pc..code.len())
            .find(|&i| code[i] != a && code[i] != b)
            .unwrap_or(code.len());
        let up = code[pc..end].iter().filter(|&&c| c == a).count() as i64;
        (up - (end - pc) as i64 + up, end)
    };
    match code[pc] {
        b'+' | b'-' if fold => {
            let (net, end) = run(b'+', b'-');
            (Piece::Add(net as u8), end)
        }
        b'>' | b'<' if fold => {
            let (net, end) = run(b'>', b'<');
            (Piece::Move(net), end)
        }
        b'+' => (Piece::Add(1), pc + 1),
        b'-' => (Piece::Add(255), pc + 1),
        b'>' => (Piece::Move(1), pc + 1),
        b'<' => (Piece::Move(-1), pc + 1),
        b'.' => (Piece::Out, pc + 1),
        b',' => (Piece::In, pc + 1),
        b'[' => match fold.then(|| mul_add(prog, pc)).flatten() {
            Some(terms) => (Piece::MulAdd(terms), prog.matching(pc) + 1),
            None => (Piece::Open, pc + 1),
        },
        _ => (Piece::Close, pc + 1),
    }
}

/// The terms of the loop at `pc` if it is a multiply-add.
fn mul_add(prog: &Program, pc: usize) -> Option<Vec<(i64, u8)>> {
    let body = &prog.code()[pc + 1..prog.matching(pc)];
    let (mut at, mut deltas) = (0i64, Vec::<(i64, u8)>::new());
    for &c in body {
        match c {
            b'>' => at += 1,
            b'<' => at -= 1,
            b'+' | b'-' => {
                let d = if c == b'+' { 1 } else { 255 };
                match deltas.iter_mut().find(|(o, _)| *o == at) {
                    Some((_, k)) => *k = k.wrapping_add(d),
                    None => deltas.push((at, d)),
                }
            }
            _ => return None,
        }
    }
    let own = deltas.iter().find(|(o, _)| *o == 0).map_or(0, |&(_, k)| k);
    // Stepping by -1 the loop turns `cell` times; by +1, `-cell` times.
    let times: u8 = match own {
        255 => 1,
        1 => 255,
        _ => return None,
    };
    (at == 0).then(|| {
        deltas
            .into_iter()
            .filter(|&(o, k)| o != 0 && k != 0)
            .map(|(o, k)| (o, k.wrapping_mul(times)))
            .collect()
    })
}

/// A step of the folding interpreter: a piece at an offset from the
/// pointer, which moves only at loops' brackets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    Add(i64, u8),
    Move(i64),
    Out(i64),
    In(i64),
    MulAdd(i64, Vec<(i64, u8)>),
    /// Jump past the step at this index if the cell is zero.
    Open(usize),
    /// Jump back past the step at this index if the cell is not zero.
    Close(usize),
}

/// The whole program as steps, each with the command it starts at.
pub fn steps(prog: &Program) -> Vec<(usize, Step)> {
    let (mut steps, mut open, mut off, mut pc) = (Vec::new(), Vec::new(), 0i64, 0);
    while pc < prog.len() {
        let (piece, next) = piece(prog, pc, true);
        let flush = |steps: &mut Vec<(usize, Step)>, off: &mut i64| {
            if *off != 0 {
                steps.push((pc, Step::Move(*off)));
                *off = 0;
            }
        };
        match piece {
            Piece::Add(k) => steps.push((pc, Step::Add(off, k))),
            Piece::Move(k) => off += k,
            Piece::Out => steps.push((pc, Step::Out(off))),
            Piece::In => steps.push((pc, Step::In(off))),
            Piece::MulAdd(terms) => steps.push((pc, Step::MulAdd(off, terms))),
            Piece::Open => {
                flush(&mut steps, &mut off);
                open.push(steps.len());
                steps.push((pc, Step::Open(0)));
            }
            Piece::Close => {
                flush(&mut steps, &mut off);
                let start = open.pop().expect("a parsed program is balanced");
                let end = steps.len();
                steps[start].1 = Step::Open(end);
                steps.push((pc, Step::Close(start)));
            }
        }
        pc = next;
    }
    if off != 0 {
        steps.push((pc, Step::Move(off)));
    }
    steps
}
