//! The arguments of `run` and `cc` steps, and the one form both report a
//! run in.

use super::Fail;
use augur::ir::{Function, Scalar, Type};

/// One argument: a scalar of the parameter's type, or an array for a
/// pointer parameter.
pub(super) enum Arg {
    Scalar(Type, String),
    Array(Type, Vec<String>),
}

/// The arguments in `text` (`3, [1, 2]`), one per parameter of `f`.
pub(super) fn parse(f: &Function, text: &str) -> Result<Vec<Arg>, Fail> {
    let texts: Vec<String> = split_outside_brackets(text, |c| c == ',')
        .iter()
        .map(|t| t.trim().to_string())
        .collect();
    if texts.len() != f.params.len() {
        return Err(Fail::Case(format!(
            "{} arguments for {} parameters",
            texts.len(),
            f.params.len()
        )));
    }
    let mut out = Vec::new();
    for (k, (t, &p)) in texts.iter().zip(&f.params).enumerate() {
        let ty = f.vars[p].ty;
        let arg = match t.strip_prefix('[').and_then(|t| t.strip_suffix(']')) {
            Some(items) => {
                let elem = *ty.element().ok_or(Fail::Case(format!(
                    "an array for parameter {k}, of type {ty}"
                )))?;
                check_type(elem)?;
                let items = items.split(',').map(str::trim).filter(|s| !s.is_empty());
                Arg::Array(elem, items.map(str::to_string).collect())
            }
            None => {
                check_type(ty)?;
                Arg::Scalar(ty, t.clone())
            }
        };
        out.push(arg);
    }
    Ok(out)
}

/// The scalar types arguments and array elements may have.
pub(super) const TYPES: [Scalar; 8] = [
    Scalar::Bool,
    Scalar::I32,
    Scalar::I64,
    Scalar::U8,
    Scalar::U32,
    Scalar::U64,
    Scalar::F32,
    Scalar::F64,
];

#[augur::staged]
fn check_type(ty: Type) -> Result<(), Fail> {
    match ty {
        Type::Scalar(s) if TYPES.contains(&s) => Ok(()),
        t => Err(Fail::Case(format!(
            "no arguments of type {t} in file tests"
        ))),
    }
}

/// `text` split where `at` accepts a character outside brackets, empty
/// pieces dropped: the steps of a case (at white space: `run=[1, 2]` is
/// one step) and a step's arguments (at commas: `a, [1, 2], b`).
#[augur::staged]
pub(super) fn split_outside_brackets(text: &str, at: impl Fn(char) -> bool) -> Vec<String> {
    let mut out = Vec::new();
    let (mut depth, mut cur) = (0, String::new());
    for c in text.chars() {
        match c {
            '[' => depth += 1,
            ']' => depth -= 1,
            c if depth == 0 && at(c) => {
                out.push(std::mem::take(&mut cur));
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    out.push(cur);
    out.retain(|p| !p.trim().is_empty());
    out
}

/// A run's report: the result (or the error), each array argument's
/// elements after the run, what the program printed.
#[augur::staged]
pub(super) fn report(
    result: Result<String, String>,
    arrays: &[(usize, Vec<String>)],
    printed: &str,
) -> String {
    let mut out = match result {
        Ok(v) => format!("result: {v}\n"),
        Err(e) => format!("error: {e}\n"),
    };
    for (k, items) in arrays {
        out.push_str(&format!("arg{k}: [{}]\n", items.join(", ")));
    }
    if !printed.is_empty() {
        out.push_str("printed:\n");
        out.push_str(printed);
        if !printed.ends_with('\n') {
            out.push('\n');
        }
    }
    out
}
