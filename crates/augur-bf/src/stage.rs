//! The staged interpreters: the program is first-stage data, the tape, the
//! input and the output second-stage, so the code generated is the program
//! compiled (the first Futamura projection).
//!
//! Two forms, code that behaves alike (the same C where the program has
//! at most 64 points):
//! * [`Form::Points`], the one to write: the interpreter's loop over
//!   [`augur::resumable`] points, a point at each loop's `[` and after
//!   each `]`. Each point is recorded once and every run of the extraction
//!   starts at the point it explores: extraction is linear in the program.
//!   Past 64 points its code is flat, a label per point and jumps
//!   between them.
//! * [`Form::StaticPc`], the tutorial's chapter 3 form: the program
//!   counter in a `Static`, brackets as dyn decisions. Exact, but each
//!   loop's exit is explored by a run that replays the whole program
//!   before it: quadratic.

use crate::fold::{self, Piece};
use crate::Program;
use augur::{Builder, Dyn, Extracted, Static};

/// The generated function: `tape`, `input`, `out` in; bytes written out.
pub type BfFn = unsafe extern "C" fn(*mut u8, *mut u8, *mut u8) -> i32;

/// How the interpreter is written (see the module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Form {
    /// Over resumable points (linear extraction).
    #[default]
    Points,
    /// With a `Static` program counter (quadratic extraction).
    StaticPc,
}

/// What to stage.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    pub form: Form,
    /// Fold while staging ([`fold::piece`]): runs of commands, pointer
    /// moves as offsets, clearing and moving loops as multiply-adds.
    pub fold: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            form: Form::Points,
            fold: true,
        }
    }
}

/// The machine's second-stage state.
#[derive(Clone, Copy)]
struct Machine {
    tape: Dyn<*mut u8>,
    input: Dyn<*mut u8>,
    out: Dyn<*mut u8>,
    p: Dyn<i64>,
    inp: Dyn<i64>,
    n: Dyn<i32>,
}

#[augur::staged]
impl Machine {
    /// The cell `off` to the right of the pointer.
    fn cell(&self, off: i64) -> Dyn<u8> {
        if off == 0 {
            self.tape.at(self.p)
        } else {
            self.tape.at(self.p + off)
        }
    }

    /// Moves the pointer by the offset the first stage kept.
    fn flush(&self, off: i64) {
        if off != 0 {
            self.p.set(self.p + off);
        }
    }

    /// Does `piece` (neither bracket) at offset `off`; the new offset.
    fn apply(&self, piece: &Piece, off: i64) -> i64 {
        match piece {
            Piece::Add(k) => self.cell(off).set(self.cell(off) + *k),
            Piece::Move(k) => return off + k,
            Piece::Out => {
                self.out.at(self.n).set(self.cell(off));
                self.n.set(self.n + 1);
            }
            Piece::In => {
                self.cell(off).set(self.input.at(self.inp));
                self.inp.set(self.inp + 1);
            }
            Piece::MulAdd(terms) => {
                for &(o, k) in terms {
                    let c = self.cell(off + o);
                    c.set(c + self.cell(off) * k);
                }
                self.cell(off).set(0);
            }
            Piece::Open | Piece::Close => unreachable!("brackets are the caller's"),
        }
        off
    }
}

/// The interpreter over resumable points.
#[augur::staged]
fn points(prog: &Program, fold: bool, m: Machine) {
    augur::resumable(0usize, |start| {
        let (mut pc, mut off) = (start, 0i64);
        while pc < prog.len() {
            let (piece, next) = fold::piece(prog, pc, fold);
            match piece {
                Piece::Open => {
                    m.flush(off);
                    let skip = m.cell(0).eq(0).is_true();
                    return Some(if skip { prog.matching(pc) + 1 } else { next });
                }
                Piece::Close => {
                    m.flush(off);
                    return Some(prog.matching(pc));
                }
                other => off = m.apply(&other, off),
            }
            pc = next;
        }
        m.flush(off);
        None
    });
}

/// The interpreter with a `Static` program counter.
#[augur::staged]
fn static_pc(prog: &Program, fold: bool, m: Machine) {
    let mut pc = Static::new(0usize);
    let mut off = 0i64;
    while *pc < prog.len() {
        let (piece, next) = fold::piece(prog, *pc, fold);
        match piece {
            Piece::Open | Piece::Close => {
                m.flush(off);
                off = 0;
                let jump = if piece == Piece::Open {
                    m.cell(0).eq(0).is_true()
                } else {
                    m.cell(0).ne(0).is_true()
                };
                if jump {
                    pc.set(prog.matching(*pc) + 1);
                    continue;
                }
            }
            other => off = m.apply(&other, off),
        }
        pc.set(next);
    }
    m.flush(off);
}

/// Stages `prog` with `builder`: a function `int32_t bf(uint8_t *tape,
/// uint8_t *input, uint8_t *out)` that runs it and returns the bytes
/// written. The caller gives a tape as long as the program goes, input
/// for each `,` and room for each `.`, as for any compiled Brainf***.
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use augur_bf::{extract, Options, Program, HELLO};
/// let f = extract(&Program::parse(HELLO)?, Options::default(), &augur::Builder::new())?;
/// let (mut tape, mut out) = ([0u8; 16], [0u8; 16]);
/// // SAFETY: the greeting uses 7 cells, reads nothing and writes 13 bytes.
/// let n = unsafe { f.compile()?.get()(tape.as_mut_ptr(), [0u8].as_mut_ptr(), out.as_mut_ptr()) };
/// assert_eq!(&out[..n as usize], b"Hello World!\n");
/// # Ok(())
/// # }
/// ```
#[augur::staged]
pub fn extract(prog: &Program, opts: Options, builder: &Builder) -> augur::Result<Extracted<BfFn>> {
    let prog = prog.clone();
    builder.extract(
        "bf",
        move |tape: Dyn<*mut u8>, input: Dyn<*mut u8>, out: Dyn<*mut u8>| {
            let m = Machine {
                tape,
                input,
                out,
                p: Dyn::named("p", 0i64),
                inp: Dyn::named("inp", 0i64),
                n: Dyn::named("n", 0i32),
            };
            match opts.form {
                Form::Points => points(&prog, opts.fold, m),
                Form::StaticPc => static_pc(&prog, opts.fold, m),
            }
            m.n
        },
    )
}
