//! What can go wrong, from the pattern to the compiled matcher.

use std::fmt;

/// An error of augur-regex.
#[derive(Debug)]
pub enum Error {
    /// The pattern does not parse (regex-syntax's message, which shows
    /// where).
    Syntax(String),
    /// The pattern uses syntax augur-regex does not compile (named).
    Unsupported {
        /// The syntax.
        what: String,
    },
    /// The pattern's automaton or DFA passes a limit.
    TooLarge {
        /// Which limit.
        what: String,
    },
    /// Staging or compiling failed.
    Staging(augur::Error),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Syntax(m) => write!(f, "regex syntax error: {m}"),
            Error::Unsupported { what } => write!(f, "augur-regex does not support {what}"),
            Error::TooLarge { what } => write!(f, "the pattern is too large: {what}"),
            Error::Staging(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Staging(e) => Some(e),
            _ => None,
        }
    }
}

impl From<augur::Error> for Error {
    fn from(e: augur::Error) -> Error {
        Error::Staging(e)
    }
}
