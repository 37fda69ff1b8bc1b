//! The text syntax of the core language: one labelled command per line.
//!
//! For example:
//!
//! ```text
//! # s := 1 + 2 + ... + n
//! l0: i := 1
//! l1: s := 0
//! l2: if not i <= n then l6   # loop test
//! l3: s := s + i
//! l4: i := i + 1
//!     # (comments and blank lines may go anywhere)
//! l5: goto l2
//! l6: halt
//! l7: done
//! ```
//!
//! * A line is blank, a comment (`#` to the end of the line), or
//!   `label: command`, optionally followed by a comment.
//! * Commands: `skip`, `v := E`, `if B then g`, `goto g`, `halt`, `done`.
//! * `E`: integer literals, variables, `+ - *` (`*` binds tighter; all
//!   left-associative) and parentheses. A literal may be negative: `-3`,
//!   with the minus right before the digits; `x -3` is `x - 3`.
//! * `B`: `true`, `false`, `E = E`, `E <= E`, `not B`, `B and B`,
//!   `B or B` (`not` binds tightest, then `and`, then `or`; both
//!   left-associative) and parentheses.
//! * Variables and labels are identifiers `[A-Za-z_][A-Za-z0-9_]*` other
//!   than the keywords `skip if then goto halt done true false not and or`;
//!   a label may also be a natural number such as `10`.
//!
//! Positions are 1-based lines and columns, counting characters. Labels
//! are not checked for uniqueness here; [`crate::check::check`] reports that.

use crate::ast::{BExpr, Cmd, Expr, Label, Labelled, Pos, Program};
use crate::error::SyntaxError;

/// Words that cannot be variables or labels.
pub const KEYWORDS: [&str; 11] = [
    "skip", "if", "then", "goto", "halt", "done", "true", "false", "not", "and", "or",
];

/// Parentheses and `not`s nest at most this deep, so that hostile input
/// fails with an error instead of overflowing the stack.
const MAX_DEPTH: usize = 256;

type Result<T> = std::result::Result<T, SyntaxError>;

/// Parses a whole program (see the module documentation for the syntax).
pub fn parse(text: &str) -> Result<Program> {
    let mut cmds = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let tokens = lex(line, line_number(i))?;
        // Only the end-of-line token: a blank or comment-only line.
        if tokens.len() > 1 {
            cmds.push(Parser::new(tokens).labelled()?);
        }
    }
    Ok(Program::new(cmds))
}

/// Parses one arithmetic expression written on one line.
pub fn parse_expr(text: &str) -> Result<Expr> {
    let mut p = Parser::new(lex(text, 1)?);
    let e = p.expr()?;
    p.end("after the expression")?;
    Ok(e)
}

/// Parses one boolean expression written on one line.
pub fn parse_bexpr(text: &str) -> Result<BExpr> {
    let mut p = Parser::new(lex(text, 1)?);
    let b = p.bexpr()?;
    p.end("after the condition")?;
    Ok(b)
}

/// Whether `word` is reserved.
pub fn is_keyword(word: &str) -> bool {
    KEYWORDS.contains(&word)
}

fn line_number(index: usize) -> u32 {
    u32::try_from(index + 1).unwrap_or(u32::MAX)
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Tok {
    Ident(String),
    /// The digits of an unsigned literal, range-checked by the parser so
    /// that `-9223372036854775808` is accepted.
    Int(String),
    Colon,
    Assign,
    Plus,
    Minus,
    Star,
    LParen,
    RParen,
    Eq,
    Le,
    End,
}

impl Tok {
    fn describe(&self) -> String {
        let text = match self {
            Tok::Ident(s) | Tok::Int(s) => s.as_str(),
            Tok::Colon => ":",
            Tok::Assign => ":=",
            Tok::Plus => "+",
            Tok::Minus => "-",
            Tok::Star => "*",
            Tok::LParen => "(",
            Tok::RParen => ")",
            Tok::Eq => "=",
            Tok::Le => "<=",
            Tok::End => return "end of line".to_string(),
        };
        format!("`{text}`")
    }

    fn is_word(&self, word: &str) -> bool {
        matches!(self, Tok::Ident(s) if s == word)
    }
}

#[derive(Clone, Debug)]
struct Token {
    tok: Tok,
    pos: Pos,
}

/// Splits one line into tokens, ending with `End` at the end of the line
/// or at the `#` of a comment.
fn lex(line: &str, line_no: u32) -> Result<Vec<Token>> {
    let chars: Vec<char> = line.chars().collect();
    let pos = |i: usize| Pos {
        line: line_no,
        col: u32::try_from(i + 1).unwrap_or(u32::MAX),
    };
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < chars.len() && chars[i] != '#' {
        let c = chars[i];
        if c == ' ' || c == '\t' || c == '\r' {
            i += 1;
            continue;
        }
        let (tok, len) = lex_token(&chars[i..]).ok_or_else(|| {
            SyntaxError::new(
                pos(i),
                format!("unexpected character `{}`", c.escape_debug()),
            )
        })?;
        tokens.push(Token { tok, pos: pos(i) });
        i += len;
    }
    tokens.push(Token {
        tok: Tok::End,
        pos: pos(i),
    });
    Ok(tokens)
}

/// The token at the start of `rest` and its length in characters.
fn lex_token(rest: &[char]) -> Option<(Tok, usize)> {
    let run = |pred: fn(char) -> bool| rest.iter().take_while(|&&c| pred(c)).count();
    let second = rest.get(1).copied();
    Some(match rest[0] {
        c if c.is_ascii_alphabetic() || c == '_' => {
            let n = run(|c| c.is_ascii_alphanumeric() || c == '_');
            (Tok::Ident(rest[..n].iter().collect()), n)
        }
        c if c.is_ascii_digit() => {
            let n = run(|c| c.is_ascii_digit());
            (Tok::Int(rest[..n].iter().collect()), n)
        }
        ':' if second == Some('=') => (Tok::Assign, 2),
        ':' => (Tok::Colon, 1),
        '<' if second == Some('=') => (Tok::Le, 2),
        '+' => (Tok::Plus, 1),
        '-' => (Tok::Minus, 1),
        '*' => (Tok::Star, 1),
        '(' => (Tok::LParen, 1),
        ')' => (Tok::RParen, 1),
        '=' => (Tok::Eq, 1),
        _ => return None,
    })
}

/// A recursive-descent parser over the tokens of one line.
struct Parser {
    tokens: Vec<Token>,
    at: usize,
    depth: usize,
}

impl Parser {
    fn new(tokens: Vec<Token>) -> Parser {
        Parser {
            tokens,
            at: 0,
            depth: 0,
        }
    }

    fn peek(&self) -> &Token {
        &self.tokens[self.at]
    }

    fn peek_at(&self, ahead: usize) -> &Token {
        let last = self.tokens.len() - 1;
        &self.tokens[(self.at + ahead).min(last)]
    }

    /// The current token, moving past it (but never past `End`).
    fn bump(&mut self) -> Token {
        let t = self.tokens[self.at].clone();
        if t.tok != Tok::End {
            self.at += 1;
        }
        t
    }

    /// An error at the current token: "expected X, found Y".
    fn expected<T>(&self, what: &str) -> Result<T> {
        let t = self.peek();
        let message = format!("expected {what}, found {}", t.tok.describe());
        Err(SyntaxError::new(t.pos, message))
    }

    fn end(&self, after: &str) -> Result<()> {
        let t = self.peek();
        if t.tok == Tok::End {
            return Ok(());
        }
        let message = format!("unexpected {} {after}", t.tok.describe());
        Err(SyntaxError::new(t.pos, message))
    }

    /// Runs `f` one level deeper, failing past [`MAX_DEPTH`].
    fn nested<T>(&mut self, f: impl FnOnce(&mut Parser) -> Result<T>) -> Result<T> {
        if self.depth >= MAX_DEPTH {
            let message = format!("nesting deeper than {MAX_DEPTH} levels");
            return Err(SyntaxError::new(self.peek().pos, message));
        }
        self.depth += 1;
        let r = f(self);
        self.depth -= 1;
        r
    }

    /// `label: command` and the end of the line.
    fn labelled(&mut self) -> Result<Labelled> {
        let first = self.peek().clone();
        let label = self.label_def()?;
        if self.peek().tok != Tok::Colon {
            return self.expected(&format!("`:` after label `{label}`"));
        }
        self.bump();
        let cmd = self.command()?;
        self.end("after the command")?;
        Ok(Labelled {
            label,
            cmd,
            pos: first.pos,
        })
    }

    /// The label that starts a line, with tailored errors for the usual
    /// mistake of leaving it out.
    fn label_def(&mut self) -> Result<Label> {
        let t = self.peek().clone();
        let missing = |what: String| Err(SyntaxError::new(t.pos, format!("missing label {what}")));
        match &t.tok {
            Tok::Ident(w) if is_keyword(w) => missing(format!("before `{w}`")),
            Tok::Ident(v) if self.peek_at(1).tok == Tok::Assign => {
                missing(format!("before the assignment to `{v}`"))
            }
            Tok::Ident(_) | Tok::Int(_) => self.label_ref(),
            _ => missing(format!("at {}", t.tok.describe())),
        }
    }

    /// A label: an identifier that is not a keyword, or a natural number.
    fn label_ref(&mut self) -> Result<Label> {
        match &self.peek().tok {
            Tok::Ident(w) if !is_keyword(w) => {}
            Tok::Int(_) => {}
            _ => return self.expected("a label"),
        }
        match self.bump().tok {
            Tok::Ident(s) | Tok::Int(s) => Ok(s),
            _ => unreachable!("checked above"),
        }
    }

    fn command(&mut self) -> Result<Cmd> {
        let t = self.peek().clone();
        let Tok::Ident(word) = &t.tok else {
            return self.expected("a command");
        };
        match word.as_str() {
            "skip" | "halt" | "done" | "goto" | "if" => {
                self.bump();
                self.keyword_command(word)
            }
            w if is_keyword(w) => self.expected("a command"),
            v => {
                if self.peek_at(1).tok != Tok::Assign {
                    let message = format!("unknown command `{v}` (an assignment is `{v} := E`)");
                    return Err(SyntaxError::new(t.pos, message));
                }
                self.bump();
                self.bump();
                Ok(Cmd::Assign(v.to_string(), self.expr()?))
            }
        }
    }

    /// The rest of a command that starts with `word`, which was consumed.
    fn keyword_command(&mut self, word: &str) -> Result<Cmd> {
        Ok(match word {
            "skip" => Cmd::Skip,
            "halt" => Cmd::Halt,
            "done" => Cmd::Done,
            "goto" => Cmd::Goto(self.label_ref()?),
            _ => {
                let b = self.bexpr()?;
                if !self.peek().tok.is_word("then") {
                    return self.expected("`then`");
                }
                self.bump();
                Cmd::IfGoto(b, self.label_ref()?)
            }
        })
    }

    /// `E ::= T (('+' | '-') T)*`, left-associative.
    fn expr(&mut self) -> Result<Expr> {
        let mut e = self.term()?;
        loop {
            let make: fn(Box<Expr>, Box<Expr>) -> Expr = match self.peek().tok {
                Tok::Plus => Expr::Add,
                Tok::Minus => Expr::Sub,
                _ => return Ok(e),
            };
            self.bump();
            e = make(Box::new(e), Box::new(self.term()?));
        }
    }

    /// `T ::= A ('*' A)*`, left-associative.
    fn term(&mut self) -> Result<Expr> {
        let mut e = self.atom()?;
        while self.peek().tok == Tok::Star {
            self.bump();
            e = Expr::Mul(Box::new(e), Box::new(self.atom()?));
        }
        Ok(e)
    }

    /// `A ::= n | -n | v | '(' E ')'`.
    fn atom(&mut self) -> Result<Expr> {
        let t = self.peek().clone();
        match &t.tok {
            Tok::Int(digits) => {
                self.bump();
                Ok(Expr::Num(number(digits, false, t.pos)?))
            }
            Tok::Minus => self.negative(t.pos),
            Tok::Ident(v) if !is_keyword(v) => {
                self.bump();
                Ok(Expr::Var(v.clone()))
            }
            Tok::LParen => {
                self.bump();
                let e = self.nested(Parser::expr)?;
                self.close()?;
                Ok(e)
            }
            _ => self.expected("an expression"),
        }
    }

    /// A negative literal: `-` immediately followed by digits. Requiring
    /// adjacency keeps `- 3` from silently meaning something.
    fn negative(&mut self, minus: Pos) -> Result<Expr> {
        let next = self.peek_at(1).clone();
        let adjacent = next.pos.line == minus.line && next.pos.col == minus.col + 1;
        match &next.tok {
            Tok::Int(digits) if adjacent => {
                self.bump();
                self.bump();
                Ok(Expr::Num(number(digits, true, minus)?))
            }
            _ => self.expected("an expression (a negative literal is written `-3`)"),
        }
    }

    fn close(&mut self) -> Result<()> {
        if self.peek().tok != Tok::RParen {
            return self.expected("`)`");
        }
        self.bump();
        Ok(())
    }

    /// `B ::= C ('or' C)*`, left-associative.
    fn bexpr(&mut self) -> Result<BExpr> {
        let mut b = self.conj()?;
        while self.peek().tok.is_word("or") {
            self.bump();
            b = BExpr::Or(Box::new(b), Box::new(self.conj()?));
        }
        Ok(b)
    }

    /// `C ::= N ('and' N)*`, left-associative.
    fn conj(&mut self) -> Result<BExpr> {
        let mut b = self.negation()?;
        while self.peek().tok.is_word("and") {
            self.bump();
            b = BExpr::And(Box::new(b), Box::new(self.negation()?));
        }
        Ok(b)
    }

    /// `N ::= 'not' N | true | false | '(' B ')' | E '=' E | E '<=' E`.
    fn negation(&mut self) -> Result<BExpr> {
        let t = self.peek().tok.clone();
        if t.is_word("not") {
            self.bump();
            return Ok(BExpr::Not(Box::new(self.nested(Parser::negation)?)));
        }
        if t.is_word("true") || t.is_word("false") {
            self.bump();
            return Ok(if t.is_word("true") {
                BExpr::True
            } else {
                BExpr::False
            });
        }
        if t == Tok::LParen {
            return self.paren_or_comparison();
        }
        self.comparison()
    }

    /// A `(` starts either a parenthesised condition, `(x = 1 or b <= 2)`,
    /// or a comparison whose left side is parenthesised, `(x + 1) * 2 = y`.
    /// An arithmetic expression cannot contain `=`, `<=`, `not`, `true` or
    /// `false`, so at most one reading succeeds: try the condition, then
    /// back up and try the comparison, and if both fail report the error
    /// that got further, as that reading is likelier what was meant.
    fn paren_or_comparison(&mut self) -> Result<BExpr> {
        let start = self.at;
        let as_condition = self.nested(|p| {
            p.bump();
            let b = p.bexpr()?;
            p.close()?;
            Ok(b)
        });
        let Err(e1) = as_condition else {
            return as_condition;
        };
        self.at = start;
        self.comparison()
            .map_err(|e2| if e2.pos > e1.pos { e2 } else { e1 })
    }

    /// `E '=' E` or `E '<=' E`.
    fn comparison(&mut self) -> Result<BExpr> {
        let left = self.expr()?;
        let make: fn(Expr, Expr) -> BExpr = match self.peek().tok {
            Tok::Eq => BExpr::Eq,
            Tok::Le => BExpr::Le,
            _ => return self.expected("`=` or `<=`"),
        };
        self.bump();
        Ok(make(left, self.expr()?))
    }
}

/// The value of a literal's digits, negated if `negative`, or an error at
/// `pos` if it does not fit in an `i64`.
fn number(digits: &str, negative: bool, pos: Pos) -> Result<i64> {
    let sign = if negative { "-" } else { "" };
    let overflow = || {
        let message = format!("integer `{sign}{digits}` does not fit in 64 bits");
        SyntaxError::new(pos, message)
    };
    let magnitude: u64 = digits.parse().map_err(|_| overflow())?;
    let value = if negative {
        0i64.checked_sub_unsigned(magnitude)
    } else {
        i64::try_from(magnitude).ok()
    };
    value.ok_or_else(overflow)
}
