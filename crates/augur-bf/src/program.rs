//! A parsed program: its commands, with each bracket's match, and the
//! programs the tests and benchmarks use.

use std::fmt;

/// A Brainf*** program: the eight commands of its source (everything else
/// is a comment), each bracket's match precomputed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Program {
    code: Vec<u8>,
    matching: Vec<usize>,
}

/// A bracket without its match.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    /// The unmatched bracket.
    pub bracket: char,
    /// Its line and column in the source (1-based).
    pub line: usize,
    pub col: usize,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unmatched `{}` at {}:{}",
            self.bracket, self.line, self.col
        )
    }
}

impl std::error::Error for ParseError {}

impl Program {
    /// Parses `src`; an unmatched bracket is an error naming its place.
    ///
    /// ```
    /// let p = augur_bf::Program::parse("+[->+<] comment")?;
    /// assert_eq!(p.len(), 7);
    /// let e = augur_bf::Program::parse("+\n+]").unwrap_err();
    /// assert_eq!(e.to_string(), "unmatched `]` at 2:2");
    /// # Ok::<(), augur_bf::ParseError>(())
    /// ```
    pub fn parse(src: &str) -> Result<Program, ParseError> {
        let (mut code, mut places, mut open) = (Vec::new(), Vec::new(), Vec::new());
        let mut matching = Vec::new();
        for (line, text) in src.lines().enumerate() {
            for (col, c) in text.chars().enumerate() {
                let place = (line + 1, col + 1);
                match c {
                    '[' => open.push(code.len()),
                    ']' => {
                        let Some(o) = open.pop() else {
                            return Err(ParseError {
                                bracket: ']',
                                line: place.0,
                                col: place.1,
                            });
                        };
                        matching[o] = code.len();
                        matching.push(o);
                        code.push(b']');
                        places.push(place);
                        continue;
                    }
                    '+' | '-' | '<' | '>' | '.' | ',' => {}
                    _ => continue,
                }
                code.push(c as u8);
                matching.push(0);
                places.push(place);
            }
        }
        if let Some(&o) = open.last() {
            let (line, col) = places[o];
            return Err(ParseError {
                bracket: '[',
                line,
                col,
            });
        }
        Ok(Program { code, matching })
    }

    /// The commands.
    pub fn code(&self) -> &[u8] {
        &self.code
    }

    /// The number of commands.
    pub fn len(&self) -> usize {
        self.code.len()
    }

    /// True for a program of no commands.
    pub fn is_empty(&self) -> bool {
        self.code.is_empty()
    }

    /// The index of the bracket matching the one at `pc`.
    pub fn matching(&self, pc: usize) -> usize {
        self.matching[pc]
    }
}

/// `n` commands or fewer of loops in sequence, nested three deep, each
/// printing a cell: the shape whose extraction the benchmarks time
/// against program length.
pub fn nested_loops(n: usize) -> Program {
    const UNIT: &str = "+++[>++[>+++[>+<-]<-]<-]>>>.[-]<<<";
    let src = UNIT.repeat(n / UNIT.len());
    Program::parse(&src).expect("balanced")
}

/// A loop-heavy program: prints `(i * i) mod 256` for each `i` below
/// 10,000, keeping the square and the next odd number in cells and adding
/// one to the other by moving loops (about 2.6 million turns of them).
/// Cells: 0 and 1 count 100 × 100, 2 holds the square, 3 the odd number,
/// 4 is scratch.
pub fn squares() -> Program {
    let src = format!(
        "{hundred}>>>+<<<[>{hundred}[>.>[->+<<+>]>[-<+>]<++<<-]<-]",
        hundred = "+".repeat(100)
    );
    Program::parse(&src).expect("balanced")
}

/// The classic greeting: prints `Hello World!\n`.
pub const HELLO: &str = "++++++++[>++++[>++>+++>+++>+<<<<-]>+>+>->>+[<]<-]>>.>---.+++++++..+++.>>.<-.<.+++.------.--------.>>+.>++.";
