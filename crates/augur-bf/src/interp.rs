//! Plain interpreters: the reference the staged code is tested against,
//! and a folding interpreter, the strongest thing a user would write
//! without a compiler (runs of `+ - < >` folded, clearing and moving loops
//! done at once, brackets as jumps).

use crate::fold::{self, Step};
use crate::Program;

/// What went wrong running a program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fault {
    /// The data pointer left the tape.
    Tape { pc: usize },
    /// A `,` past the end of the input.
    Input { pc: usize },
    /// A `.` past the end of the output buffer.
    Output { pc: usize },
}

impl std::fmt::Display for Fault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Fault::Tape { pc } => write!(f, "the data pointer left the tape at command {pc}"),
            Fault::Input { pc } => write!(f, "`,` past the end of the input at command {pc}"),
            Fault::Output { pc } => write!(f, "`.` past the end of the output at command {pc}"),
        }
    }
}

impl std::error::Error for Fault {}

/// Runs `prog` one command at a time; returns the bytes written to `out`.
///
/// ```
/// let p = augur_bf::Program::parse(augur_bf::HELLO).unwrap();
/// let (mut tape, mut out) = ([0u8; 16], [0u8; 16]);
/// let n = augur_bf::run(&p, &mut tape, &[], &mut out).unwrap();
/// assert_eq!(&out[..n], b"Hello World!\n");
/// ```
pub fn run(prog: &Program, tape: &mut [u8], input: &[u8], out: &mut [u8]) -> Result<usize, Fault> {
    let code = prog.code();
    let (mut pc, mut p, mut inp, mut n) = (0, 0usize, 0, 0);
    while pc < code.len() {
        let fault = Fault::Tape { pc };
        match code[pc] {
            b'>' => p += 1,
            b'<' => p = p.checked_sub(1).ok_or(fault)?,
            b'+' => *cell(tape, p, pc)? = cell(tape, p, pc)?.wrapping_add(1),
            b'-' => *cell(tape, p, pc)? = cell(tape, p, pc)?.wrapping_sub(1),
            b'.' => {
                *out.get_mut(n).ok_or(Fault::Output { pc })? = *cell(tape, p, pc)?;
                n += 1;
            }
            b',' => {
                *cell(tape, p, pc)? = *input.get(inp).ok_or(Fault::Input { pc })?;
                inp += 1;
            }
            b'[' if *cell(tape, p, pc)? == 0 => pc = prog.matching(pc),
            b']' if *cell(tape, p, pc)? != 0 => pc = prog.matching(pc),
            _ => {}
        }
        pc += 1;
    }
    Ok(n)
}

fn cell(tape: &mut [u8], p: usize, pc: usize) -> Result<&mut u8, Fault> {
    tape.get_mut(p).ok_or(Fault::Tape { pc })
}

/// A program folded once into steps ([`fold::steps`]), then run by a
/// loop over them: what an interpreter written for speed does.
pub struct Folded {
    steps: Vec<(usize, Step)>,
}

impl Folded {
    /// Folds `prog`.
    pub fn new(prog: &Program) -> Folded {
        Folded {
            steps: fold::steps(prog),
        }
    }

    /// Runs the folded program; the same results as [`run`].
    pub fn run(&self, tape: &mut [u8], input: &[u8], out: &mut [u8]) -> Result<usize, Fault> {
        let (mut i, mut p, mut inp, mut n) = (0, 0i64, 0, 0);
        let at = |p: i64, pc: usize| usize::try_from(p).map_err(|_| Fault::Tape { pc });
        while i < self.steps.len() {
            let (pc, step) = &self.steps[i];
            let pc = *pc;
            match step {
                Step::Add(off, k) => {
                    let c = tape.get_mut(at(p + off, pc)?).ok_or(Fault::Tape { pc })?;
                    *c = c.wrapping_add(*k);
                }
                Step::Move(k) => p += k,
                Step::Out(off) => {
                    let c = *tape.get(at(p + off, pc)?).ok_or(Fault::Tape { pc })?;
                    *out.get_mut(n).ok_or(Fault::Output { pc })? = c;
                    n += 1;
                }
                Step::In(off) => {
                    let v = *input.get(inp).ok_or(Fault::Input { pc })?;
                    *tape.get_mut(at(p + off, pc)?).ok_or(Fault::Tape { pc })? = v;
                    inp += 1;
                }
                Step::MulAdd(off, terms) => {
                    let c0 = *tape.get(at(p + off, pc)?).ok_or(Fault::Tape { pc })?;
                    if c0 != 0 {
                        for &(o, k) in terms.iter() {
                            let c = tape
                                .get_mut(at(p + off + o, pc)?)
                                .ok_or(Fault::Tape { pc })?;
                            *c = c.wrapping_add(c0.wrapping_mul(k));
                        }
                    }
                    tape[at(p + off, pc)?] = 0;
                }
                Step::Open(end) => {
                    if *tape.get(at(p, pc)?).ok_or(Fault::Tape { pc })? == 0 {
                        i = *end;
                    }
                }
                Step::Close(start) => {
                    if *tape.get(at(p, pc)?).ok_or(Fault::Tape { pc })? != 0 {
                        i = *start;
                    }
                }
            }
            i += 1;
        }
        Ok(n)
    }
}
