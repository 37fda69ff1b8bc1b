//! Why each prophecy ended at its value: the report of
//! [`Extracted::explain`](crate::Extracted::explain).

use crate::ir::SrcLoc;
use std::fmt;

/// Which handle type made a cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CellKind {
    /// A [`Prophecy`](super::Prophecy): read first, required later.
    Prophecy,
    /// A [`History`](super::History): recorded first, read later.
    History,
}

/// One join: a requirement that raised a value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JoinEvent {
    /// The attempt (1-based) in which it was required.
    pub attempt: u32,
    /// Where it was required (the user's line when the DSL's functions are
    /// `#[track_caller]`).
    pub location: SrcLoc,
    /// The required value (`Debug` text).
    pub required: String,
    /// The value after the join (`Debug` text).
    pub value: String,
    /// Collect mode: the join waited for the end of its sweep (the value had
    /// been read in that attempt).
    pub deferred: bool,
}

/// What happened to one prophecy or history.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CellReport {
    /// Prophecy or history.
    pub kind: CellKind,
    /// The name given at creation, if any.
    pub name: Option<String>,
    /// Where it was created.
    pub created: SrcLoc,
    /// The lattice type.
    pub type_name: &'static str,
    /// The initial prediction (`Debug` text).
    pub initial: String,
    /// The final value (`Debug` text).
    pub value: String,
    /// Every join that raised the value, in order: the requirements that
    /// made the value what it is.
    pub joins: Vec<JoinEvent>,
    /// Every place that required or recorded a value in the final attempt,
    /// including those the value already satisfied.
    pub sites: Vec<SrcLoc>,
}

impl CellReport {
    /// The name, or the creation site when there is none.
    pub fn label(&self) -> String {
        match &self.name {
            Some(n) => format!("`{n}`"),
            None => format!("created at {}", self.created),
        }
    }
}

/// Every prophecy and history of one extraction, in creation order.
///
/// Its `Display` is a readable text report:
///
/// ```text
/// prophecy `B.gpu_read` (bool, created at src/main.rs:40:9): true
///   initial false
///   attempt 1: required true at src/main.rs:71:13 -> true
///   required at src/main.rs:71:13
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Explanation {
    /// One report per cell.
    pub cells: Vec<CellReport>,
}

impl Explanation {
    /// The report of the cell with this name (the first, if several share it).
    pub fn find(&self, name: &str) -> Option<&CellReport> {
        self.cells.iter().find(|c| c.name.as_deref() == Some(name))
    }

    /// The reports of one kind.
    pub fn of_kind(&self, kind: CellKind) -> impl Iterator<Item = &CellReport> {
        self.cells.iter().filter(move |c| c.kind == kind)
    }

    /// The report with at most `keep` joins shown per cell (the first and
    /// last halves), for error messages.
    pub(crate) fn abridged(&self, keep: usize) -> String {
        let mut out = String::new();
        for c in &self.cells {
            write_cell(&mut out, c, keep).expect("writing to a String");
        }
        out
    }
}

fn write_cell(f: &mut impl fmt::Write, c: &CellReport, keep: usize) -> fmt::Result {
    let kind = match c.kind {
        CellKind::Prophecy => "prophecy",
        CellKind::History => "history",
    };
    let name = match &c.name {
        Some(n) => format!(
            "`{n}` ({}, created at {})",
            short_type(c.type_name),
            c.created
        ),
        None => format!("({}, created at {})", short_type(c.type_name), c.created),
    };
    writeln!(f, "{kind} {name}: {}", c.value)?;
    writeln!(f, "  initial {}", c.initial)?;
    let verb = match c.kind {
        CellKind::Prophecy => "required",
        CellKind::History => "recorded",
    };
    let n = c.joins.len();
    for (i, j) in c.joins.iter().enumerate() {
        if n > keep && i == keep / 2 {
            writeln!(f, "  ... {} more joins ...", n - keep)?;
        }
        if n > keep && i >= keep / 2 && i < n - (keep - keep / 2) {
            continue;
        }
        writeln!(
            f,
            "  attempt {}: {verb} {} at {} -> {}{}",
            j.attempt,
            j.required,
            j.location,
            j.value,
            if j.deferred {
                " (at the end of the sweep)"
            } else {
                ""
            }
        )?;
    }
    if !c.sites.is_empty() {
        let sites: Vec<String> = c.sites.iter().map(|s| s.to_string()).collect();
        writeln!(f, "  {verb} at {}", sites.join(", "))?;
    }
    Ok(())
}

/// `augur::prophecy::builtin::Flat<f32>` → `Flat<f32>`.
fn short_type(t: &str) -> String {
    let mut out = String::new();
    let mut word = String::new();
    for ch in t.chars() {
        if ch.is_alphanumeric() || ch == '_' || ch == ':' {
            word.push(ch);
        } else {
            out.push_str(word.rsplit("::").next().unwrap_or(""));
            word.clear();
            out.push(ch);
        }
    }
    out.push_str(word.rsplit("::").next().unwrap_or(""));
    out
}

impl fmt::Display for Explanation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.cells.is_empty() {
            return writeln!(f, "no prophecies or histories");
        }
        for c in &self.cells {
            write_cell(f, c, usize::MAX)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::short_type;

    #[test]
    fn short_type_names() {
        assert_eq!(
            short_type("augur::prophecy::builtin::Flat<f32>"),
            "Flat<f32>"
        );
        assert_eq!(
            short_type("(bool, augur::prophecy::builtin::Set<u32>)"),
            "(bool, Set<u32>)"
        );
        assert_eq!(short_type("bool"), "bool");
    }
}
