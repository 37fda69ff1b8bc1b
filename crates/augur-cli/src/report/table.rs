//! Result tables: one type that prints on the terminal, writes CSV and
//! serialises to JSON, so every experiment reports the same way.

use serde::Serialize;
use std::fmt::Write;

/// One value of a table.
#[derive(Clone, Debug, PartialEq)]
pub enum Cell {
    /// Text (program names, strategies, notes).
    Text(String),
    /// A count (runs, bytes).
    Int(i64),
    /// A measurement, shown with `digits` decimals.
    Float {
        /// The value.
        value: f64,
        /// Decimals shown on the terminal and in CSV.
        digits: usize,
    },
    /// Not measured here (a paper figure we have none for, a GPU cell on a
    /// machine without one).
    Missing,
}

impl Cell {
    /// A measurement with `digits` decimals.
    pub fn float(value: f64, digits: usize) -> Cell {
        Cell::Float { value, digits }
    }

    /// The number in this cell, if it holds one.
    pub fn number(&self) -> Option<f64> {
        match self {
            Cell::Int(n) => Some(*n as f64),
            Cell::Float { value, .. } => Some(*value),
            Cell::Text(_) | Cell::Missing => None,
        }
    }

    /// The cell as plain text (CSV): no thousands separators, and numbers
    /// with three more decimals than shown (trailing zeros dropped), so
    /// ratios can be recomputed from the file.
    pub fn plain(&self) -> String {
        match self {
            Cell::Text(s) => s.clone(),
            Cell::Int(n) => n.to_string(),
            Cell::Float { value, digits } => {
                let s = format!("{value:.*}", digits + 3);
                s.trim_end_matches('0').trim_end_matches('.').to_string()
            }
            Cell::Missing => String::new(),
        }
    }

    /// The cell for people: numbers with thousands separators, `-` for
    /// missing values.
    pub fn pretty(&self) -> String {
        match self {
            Cell::Int(n) => group_thousands(&n.to_string()),
            Cell::Float { value, digits } => group_thousands(&format!("{value:.digits$}")),
            Cell::Missing => "-".into(),
            Cell::Text(s) => s.clone(),
        }
    }

    fn is_numeric(&self) -> bool {
        matches!(self, Cell::Int(_) | Cell::Float { .. } | Cell::Missing)
    }
}

/// JSON keeps numbers as numbers and missing values as `null`.
impl Serialize for Cell {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Cell::Text(t) => s.serialize_str(t),
            Cell::Int(n) => s.serialize_i64(*n),
            Cell::Float { value, .. } => s.serialize_f64(*value),
            Cell::Missing => s.serialize_none(),
        }
    }
}

impl From<&str> for Cell {
    fn from(s: &str) -> Cell {
        Cell::Text(s.into())
    }
}

impl From<String> for Cell {
    fn from(s: String) -> Cell {
        Cell::Text(s)
    }
}

impl From<i64> for Cell {
    fn from(n: i64) -> Cell {
        Cell::Int(n)
    }
}

impl From<u64> for Cell {
    fn from(n: u64) -> Cell {
        Cell::Int(i64::try_from(n).unwrap_or(i64::MAX))
    }
}

impl From<usize> for Cell {
    fn from(n: usize) -> Cell {
        Cell::Int(i64::try_from(n).unwrap_or(i64::MAX))
    }
}

impl<T: Into<Cell>> From<Option<T>> for Cell {
    fn from(v: Option<T>) -> Cell {
        v.map_or(Cell::Missing, Into::into)
    }
}

/// `1234567.5` → `1,234,567.5` (the integer part only; a sign is kept).
fn group_thousands(s: &str) -> String {
    let (sign, rest) = s.strip_prefix('-').map_or(("", s), |r| ("-", r));
    let (int, frac) = rest.split_at(rest.find('.').unwrap_or(rest.len()));
    if !int.bytes().all(|b| b.is_ascii_digit()) {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len() + int.len() / 3);
    for (i, c) in int.chars().enumerate() {
        if i > 0 && (int.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    format!("{sign}{out}{frac}")
}

/// `comfy-table`'s style for [`Table::render`]: every border and line off
/// but the one under the header (the preset's sixth character).
const RULE_UNDER_HEADER: &str = "     ─             ";

/// A table of results: a name for files, a title for people, column
/// headers and rows.
#[derive(Clone, Debug, Serialize)]
pub struct Table {
    /// File-name part: `<experiment>-<name>.csv`.
    pub name: String,
    /// One line saying what is measured, how and where.
    pub title: String,
    /// Column headers (with units).
    pub columns: Vec<String>,
    /// Rows, each as long as `columns`.
    pub rows: Vec<Vec<Cell>>,
    /// Notes printed under the table (sources of the paper's figures,
    /// checks that ran).
    pub notes: Vec<String>,
}

impl Table {
    /// An empty table.
    pub fn new(name: &str, title: &str, columns: &[&str]) -> Table {
        Table {
            name: name.into(),
            title: title.into(),
            columns: columns.iter().map(|c| c.to_string()).collect(),
            rows: Vec::new(),
            notes: Vec::new(),
        }
    }

    /// Appends a row.
    ///
    /// # Panics
    /// If the row's length differs from the number of columns (a bug in the
    /// experiment, not in its input).
    pub fn push(&mut self, row: Vec<Cell>) {
        assert_eq!(
            row.len(),
            self.columns.len(),
            "table {}: row of {} cells for {} columns",
            self.name,
            row.len(),
            self.columns.len()
        );
        self.rows.push(row);
    }

    /// Adds a note.
    pub fn note(&mut self, text: impl Into<String>) {
        self.notes.push(text.into());
    }

    /// The column called `name`.
    pub fn column(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|c| c == name)
    }

    /// The numbers of column `name`, one per row (`None` where a row has
    /// none).
    pub fn numbers(&self, name: &str) -> Vec<Option<f64>> {
        match self.column(name) {
            Some(c) => self.rows.iter().map(|r| r[c].number()).collect(),
            None => vec![None; self.rows.len()],
        }
    }

    /// The table as aligned text for a terminal (numbers right-aligned),
    /// laid out by `comfy-table`: no borders, one rule under the header,
    /// two spaces between columns, never wrapped (no terminal is asked for
    /// its width, so the text is the same everywhere).
    pub fn render(&self) -> String {
        let mut t = comfy_table::Table::new();
        t.load_preset(RULE_UNDER_HEADER)
            .set_header(&self.columns)
            .add_rows(self.rows.iter().map(|r| r.iter().map(Cell::pretty)));
        let last = self.columns.len().saturating_sub(1);
        for c in 0..self.columns.len() {
            let column = t.column_mut(c).expect("a column per header");
            column.set_padding((0, if c == last { 0 } else { 2 }));
            if self.numeric_column(c) {
                column.set_cell_alignment(comfy_table::CellAlignment::Right);
            }
        }
        let mut out = format!("{}\n", self.title);
        for line in t.lines() {
            let _ = writeln!(out, "  {}", line.trim_end());
        }
        for n in &self.notes {
            let _ = writeln!(out, "  · {n}");
        }
        out
    }

    /// The table as markdown (for the README and issue notes).
    pub fn markdown(&self) -> String {
        let mut out = format!("**{}**\n\n| {} |\n|", self.title, self.columns.join(" | "));
        for c in 0..self.columns.len() {
            out.push_str(if self.numeric_column(c) {
                "---:|"
            } else {
                "---|"
            });
        }
        out.push('\n');
        for r in &self.rows {
            let cells: Vec<String> = r.iter().map(Cell::pretty).collect();
            let _ = writeln!(out, "| {} |", cells.join(" | "));
        }
        for n in &self.notes {
            let _ = write!(out, "\n{n}\n");
        }
        out
    }

    /// The table as CSV (RFC 4180 quoting).
    pub fn csv(&self) -> String {
        let mut out = String::new();
        let line = |cells: Vec<String>| cells.iter().map(|c| csv_quote(c)).collect::<Vec<_>>();
        let _ = writeln!(out, "{}", line(self.columns.clone()).join(","));
        for r in &self.rows {
            let _ = writeln!(
                out,
                "{}",
                line(r.iter().map(Cell::plain).collect()).join(",")
            );
        }
        out
    }

    /// A column is numeric when every cell in it is a number or missing.
    fn numeric_column(&self, c: usize) -> bool {
        !self.rows.is_empty() && self.rows.iter().all(|r| r[c].is_numeric())
    }
}

fn csv_quote(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Table {
        let mut t = Table::new("t", "A table", &["program", "runs", "time (ms)"]);
        t.push(vec![
            "a, b".into(),
            1234567i64.into(),
            Cell::float(1.125, 2),
        ]);
        t.push(vec!["c".into(), 7i64.into(), Cell::Missing]);
        t
    }

    #[test]
    fn groups_thousands() {
        assert_eq!(group_thousands("1234567"), "1,234,567");
        assert_eq!(group_thousands("-1234.25"), "-1,234.25");
        assert_eq!(group_thousands("123"), "123");
        assert_eq!(group_thousands("n/a"), "n/a");
    }

    #[test]
    fn csv_quotes_and_leaves_numbers_plain() {
        assert_eq!(
            sample().csv(),
            "program,runs,time (ms)\n\"a, b\",1234567,1.125\nc,7,\n"
        );
    }

    #[test]
    fn renders_aligned_columns() {
        let text = sample().render();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "A table");
        assert!(lines[1].starts_with("  program"), "{text}");
        let rule = lines[2].trim_start();
        assert!(!rule.is_empty() && rule.chars().all(|c| c == '─'), "{text}");
        assert!(lines[3].ends_with("1,234,567       1.12"), "{text}");
        assert!(lines[4].ends_with("        7          -"), "{text}");
    }

    #[test]
    fn json_keeps_numbers_as_numbers() {
        let j = serde_json::to_value(sample()).unwrap();
        assert_eq!(j["rows"][0][1], 1234567);
        assert_eq!(j["rows"][0][2], 1.125);
        assert!(j["rows"][1][2].is_null());
    }

    #[test]
    #[should_panic(expected = "row of 1 cells for 3 columns")]
    fn rejects_short_rows() {
        sample().push(vec![Cell::Missing]);
    }
}
