//! Errors of the text syntax ([`SyntaxError`]) and findings of the
//! well-formedness check ([`Diagnostic`]).

use crate::ast::{Label, Pos};
use std::fmt;

/// A syntax error: what went wrong and where (1-based line and column,
/// counted in characters).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SyntaxError {
    /// What went wrong.
    pub message: String,
    /// Where it went wrong.
    pub pos: Pos,
}

impl SyntaxError {
    /// A syntax error at `pos`.
    pub fn new(pos: Pos, message: impl Into<String>) -> SyntaxError {
        SyntaxError {
            message: message.into(),
            pos,
        }
    }
}

impl fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.pos.line, self.pos.col, self.message)
    }
}

impl std::error::Error for SyntaxError {}

/// How serious a [`Diagnostic`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// The program breaks a rule of the paper's §3.2; it is not well-formed.
    Error,
    /// The program is well-formed but probably not what was meant.
    Warning,
}

/// What a [`Diagnostic`] is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum DiagnosticKind {
    /// The program has no commands, so there is no `first(P)` to start at.
    EmptyProgram,
    /// A label is used by more than one command (labels must be unique).
    DuplicateLabel,
    /// A `goto` or `if` names a label no command has.
    MissingTarget,
    /// A `halt` is not followed by a `done` (the paper requires
    /// `next(l) : done` for every `l : halt`).
    HaltWithoutDone,
    /// A skip, assignment or `if` is the last command, so `next(l)` is
    /// undefined and execution would get stuck after it.
    FallsOffEnd,
    /// A `done` is reached other than from the `halt` just before it: by
    /// falling through, by a jump, or by being the first command. The
    /// execution rules have no step from `done`, so the program stops there
    /// as after a halt; that is allowed but probably not meant.
    DoneWithoutHalt,
    /// On some path from the first command a variable is read before any
    /// command writes it (its value is then the initial state's).
    ReadBeforeWrite,
}

impl DiagnosticKind {
    /// Whether this kind makes a program ill-formed or is only a warning.
    pub fn severity(self) -> Severity {
        match self {
            DiagnosticKind::DoneWithoutHalt | DiagnosticKind::ReadBeforeWrite => Severity::Warning,
            _ => Severity::Error,
        }
    }
}

/// One finding of [`crate::check::check`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// What it is about.
    pub kind: DiagnosticKind,
    /// A sentence for people, naming the labels and variables involved.
    pub message: String,
    /// Where the offending command is (`Pos::default()` when the program
    /// was built rather than parsed, or for an empty program).
    pub pos: Pos,
    /// The offending command's label (`None` for an empty program).
    pub label: Option<Label>,
}

impl Diagnostic {
    /// How serious it is (from its kind).
    pub fn severity(&self) -> Severity {
        self.kind.severity()
    }

    /// Whether it makes the program ill-formed.
    pub fn is_error(&self) -> bool {
        self.severity() == Severity::Error
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Built programs have no positions; "0:0" would only mislead.
        if self.pos != Pos::default() {
            write!(f, "{}:{}: ", self.pos.line, self.pos.col)?;
        }
        let severity = match self.severity() {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        write!(f, "{severity}: {}", self.message)
    }
}
