//! augur-imp: the paper's labelled core language (§3), its standard and
//! extended semantics, the prophecy analysis by repeated execution
//! (Algorithms Execute, Solve, Driver), a classic backward dataflow solver
//! to check it against, and a staged interpreter built on augur.
#![warn(missing_docs)]

pub mod analysis;
pub mod ast;
pub mod check;
pub mod dataflow;
pub mod error;
pub mod execute;
pub mod extended;
pub mod parse;
pub mod print;
pub mod random;
pub mod semantics;
pub mod staged;

pub use analysis::{Analysis, ExprId, LiveVariables, VeryBusyExpressions};
pub use ast::{BExpr, Cmd, Expr, Label, Labelled, Pos, Program, Var};
pub use error::{Diagnostic, DiagnosticKind, Severity, SyntaxError};
pub use execute::{driver, Prophecy};
pub use semantics::{Outcome, State};
