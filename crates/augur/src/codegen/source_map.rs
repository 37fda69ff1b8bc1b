//! Source mapping: generated C that points back at the staging code.
//!
//! Every IR statement may carry the user's Rust location ([`SrcLoc`]). With
//! [`LineMarkers::Directives`] the writers put `#line` directives before the
//! statements, so the C compiler's diagnostics and the DWARF line table
//! (under `-g`) name the Rust file and line; with [`LineMarkers::Comments`]
//! they only note the location for a human reader.

use crate::codegen::c::print::{comment_text, LineMarks};
use crate::ir::write_c_string;
use crate::ir::SrcLoc;
use std::cell::RefCell;
use std::fmt::Write;
use std::path::{Path, PathBuf};

/// How generated code names the user's source lines.
///
/// ```
/// #[augur::staged]
/// fn main() -> augur::Result<()> {
///     use augur::codegen::{CodegenOptions, LineMarkers};
///     use augur::{Builder, Dyn};
///
///     let new_line = line!() + 3; // the line of `Dyn::new` below
///     let ex = Builder::new()
///         .extract("twice", |x: Dyn<i32>| {
///             let y = Dyn::new(x * 2);
///             y
///         })
///         .unwrap();
///     let opts = CodegenOptions::default().with_line_markers(LineMarkers::Comments);
///     let c = ex.c_code_with(&opts);
///     let marker = format!("  // {}:{new_line}\n  int32_t var0 = arg0 * 2;\n", file!());
///     assert!(c.contains(&marker), "{c}");
///     Ok(())
/// }
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum LineMarkers {
    /// Nothing: the output of [`write_function`](crate::codegen::write_function).
    #[default]
    None,
    /// A `// file:line` line before each statement from another Rust line
    /// than the statement before it. The C compiler still reports C lines.
    Comments,
    /// `#line N "file"` directives: each line printed for a statement is
    /// presented to the compiler as the statement's Rust line, and every
    /// other line (braces, declarations the engine added, headers) as its
    /// own line of the generated file, so nothing claims a Rust line it does
    /// not come from. Diagnostics and debug line tables then name the Rust
    /// source.
    ///
    /// The generated file names itself through `AUGUR_GENERATED_FILE`, which
    /// the unit defines as `__BASE_FILE__` (gcc, clang: the file on the
    /// command line) unless it is already defined (`-D`), or else as
    /// `"augur-generated.c"`.
    Directives,
}

/// Options of the C and CUDA writers. The default writes plain code.
///
/// ```
/// #[augur::staged]
/// fn main() -> augur::Result<()> {
///     use augur::codegen::{CodegenOptions, LineMarkers};
///     use augur::{Builder, Dyn};
///
///     let new_line = line!() + 3; // the line of `Dyn::new` below
///     let ex = Builder::new()
///         .extract("inc", |x: Dyn<i64>| {
///             let y = Dyn::new(x + 1);
///             y
///         })
///         .unwrap();
///     let opts = CodegenOptions::default()
///         .with_line_markers(LineMarkers::Directives)
///         .with_source_root("/home/me/project");
///     let c = ex.c_code_with(&opts);
///     // `file!()` is relative (to the workspace root), so the root is prepended.
///     let directive = format!("#line {new_line} \"/home/me/project/{}\"\n", file!());
///     assert!(c.contains(&directive), "{c}");
///     assert_eq!(ex.c_code(), ex.c_code_with(&CodegenOptions::default()));
///     Ok(())
/// }
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct CodegenOptions {
    /// Whether and how statements name their Rust lines.
    pub line_markers: LineMarkers,
    /// What relative Rust paths (as `file!()` gives them: relative to the
    /// workspace root, for workspace members) are resolved against, so that
    /// debuggers and editors find the files from anywhere; absolute paths
    /// are kept. `None` keeps every path as given. From a crate of the
    /// workspace: the ancestor of `env!("CARGO_MANIFEST_DIR")` that holds
    /// `file!()`.
    pub source_root: Option<PathBuf>,
}

impl CodegenOptions {
    /// These options with `markers`.
    pub fn with_line_markers(mut self, markers: LineMarkers) -> Self {
        self.line_markers = markers;
        self
    }

    /// These options with relative Rust paths resolved against `root`.
    pub fn with_source_root(mut self, root: impl Into<PathBuf>) -> Self {
        self.source_root = Some(root.into());
        self
    }

    /// The name `file` is given in the output.
    pub fn source_path(&self, file: &str) -> String {
        match &self.source_root {
            Some(root) if Path::new(file).is_relative() => {
                root.join(file).to_string_lossy().into_owned()
            }
            _ => file.to_string(),
        }
    }
}

/// The macro that `#line` directives name the generated file by.
const FILE_MACRO: &str = "AUGUR_GENERATED_FILE";

/// Defines [`FILE_MACRO`] when `opts` asks for directives; nothing otherwise.
/// It must come before the first statement of the unit.
pub(crate) fn write_file_macro(out: &mut String, opts: &CodegenOptions) {
    if opts.line_markers != LineMarkers::Directives {
        return;
    }
    // `__FILE__` would name the Rust file after a `#line`; `__BASE_FILE__`
    // is the file the compiler was given, whatever directives came before.
    let _ = write!(
        out,
        "\n#ifndef {FILE_MACRO}\n#ifdef __BASE_FILE__\n#define {FILE_MACRO} __BASE_FILE__\n\
         #else\n#define {FILE_MACRO} \"augur-generated.c\"\n#endif\n#endif\n"
    );
}

/// Writes the markers of one function body. `out` must hold the whole unit
/// from its first line (line numbers are counted in it), with the compiler's
/// idea of the current line in step with the text (true outside bodies:
/// every body ends by going back to the generated file).
pub(crate) struct Marker<'a> {
    opts: &'a CodegenOptions,
    state: RefCell<State>,
}

/// What the marker knows about the text written so far.
#[derive(Default)]
struct State {
    /// Bytes of the output already scanned for newlines, and how many.
    scanned: usize,
    newlines: usize,
    /// The Rust location the compiler assigns the line after `newlines`
    /// newlines (`None`: the generated file, in step with the text).
    presumed: Option<Presumed>,
    /// The last location noted in a comment.
    commented: Option<(&'static str, u32)>,
}

/// After the directive `#line line "file"`, which ends at newline `newlines`.
#[derive(Clone, Copy)]
struct Presumed {
    file: &'static str,
    line: u32,
    newlines: usize,
}

impl<'a> Marker<'a> {
    pub(crate) fn new(opts: &'a CodegenOptions) -> Marker<'a> {
        Marker {
            opts,
            state: RefCell::new(State::default()),
        }
    }

    /// Newlines in `out` so far (the real number of the next line, minus one).
    fn newlines(&self, out: &str) -> usize {
        let mut st = self.state.borrow_mut();
        let new = out.as_bytes()[st.scanned..]
            .iter()
            .filter(|&&b| b == b'\n')
            .count();
        st.newlines += new;
        st.scanned = out.len();
        st.newlines
    }

    /// Makes the compiler take the next line as `loc`'s line.
    fn direct(&self, out: &mut String, loc: SrcLoc) {
        let now = self.newlines(out);
        let mut st = self.state.borrow_mut();
        // Consecutive lines of the same file need no directive.
        if let Some(p) = st.presumed {
            if p.file == loc.file && p.line as usize + (now - p.newlines) == loc.line as usize {
                return;
            }
        }
        out.push_str("#line ");
        let _ = write!(out, "{} ", loc.line);
        let _ = write_c_string(out, &self.opts.source_path(loc.file));
        out.push('\n');
        st.presumed = Some(Presumed {
            file: loc.file,
            line: loc.line,
            newlines: now + 1,
        });
    }

    /// Makes the compiler take the next line as the generated file's own.
    fn reset(&self, out: &mut String) {
        let now = self.newlines(out);
        let mut st = self.state.borrow_mut();
        if st.presumed.take().is_some() {
            // The directive is line `now + 1`; the one after it `now + 2`.
            let _ = writeln!(out, "#line {} {FILE_MACRO}", now + 2);
        }
    }

    /// A `// file:line` line when `loc` is on another line than the last one noted.
    fn comment(&self, out: &mut String, loc: SrcLoc, depth: usize) {
        let mut st = self.state.borrow_mut();
        if st.commented == Some((loc.file, loc.line)) {
            return;
        }
        st.commented = Some((loc.file, loc.line));
        let text = format!("{}:{}", self.opts.source_path(loc.file), loc.line);
        let _ = writeln!(out, "{:w$}// {}", "", comment_text(&text), w = 2 * depth);
    }

    /// Ends a body: the lines after it (its closing brace, what follows) are
    /// the generated file's again.
    pub(crate) fn finish(&self, out: &mut String) {
        self.syntax(out);
    }
}

/// A location a directive can express (C99 wants a line from 1 to 2^31 - 1).
fn usable(loc: Option<SrcLoc>) -> Option<SrcLoc> {
    loc.filter(|l| (1..=i32::MAX as u32).contains(&l.line))
}

impl LineMarks for Marker<'_> {
    fn statement(&self, out: &mut String, loc: Option<SrcLoc>, depth: usize) {
        match (self.opts.line_markers, usable(loc)) {
            (LineMarkers::None, _) => {}
            (LineMarkers::Comments, Some(l)) => self.comment(out, l, depth),
            (LineMarkers::Comments, None) => {}
            (LineMarkers::Directives, Some(l)) => self.direct(out, l),
            (LineMarkers::Directives, None) => self.reset(out),
        }
    }

    fn syntax(&self, out: &mut String) {
        if self.opts.line_markers == LineMarkers::Directives {
            self.reset(out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const AT: fn(u32) -> Option<SrcLoc> = |line| {
        Some(SrcLoc {
            file: "src/a.rs",
            line,
            col: 1,
        })
    };

    fn directives() -> CodegenOptions {
        CodegenOptions::default().with_line_markers(LineMarkers::Directives)
    }

    /// Lines 5 and 6 in a row need one directive; a brace goes back to the
    /// generated file at its real line number, and so does a statement
    /// without a location; line 0 cannot be expressed.
    #[test]
    fn directives_follow_the_compilers_count() {
        let opts = directives();
        let m = Marker::new(&opts);
        let mut out = String::from("head\n");
        let lines = [
            (AT(5), "a;"),
            (AT(6), "b;"),
            (AT(6), "c;"),
            (None, "d;"),
            (AT(9), "e;"),
            (AT(0), "f;"),
        ];
        for (loc, text) in lines {
            m.statement(&mut out, loc, 1);
            out.push_str(text);
            out.push('\n');
        }
        m.finish(&mut out);
        out.push_str("}\n");
        let expected = "head\n#line 5 \"src/a.rs\"\na;\nb;\n#line 6 \"src/a.rs\"\nc;\n\
                        #line 8 AUGUR_GENERATED_FILE\nd;\n#line 9 \"src/a.rs\"\ne;\n\
                        #line 12 AUGUR_GENERATED_FILE\nf;\n}\n";
        assert_eq!(out, expected);
        assert_eq!(out.lines().nth(7), Some("d;"), "the 8th line");
        assert_eq!(out.lines().nth(11), Some("f;"), "the 12th line");
    }

    #[test]
    fn paths_resolve_against_the_root_and_escape() {
        let opts = directives().with_source_root("/r");
        assert_eq!(opts.source_path("src/a.rs"), "/r/src/a.rs");
        assert_eq!(opts.source_path("/abs/b.rs"), "/abs/b.rs");
        assert_eq!(directives().source_path("src/a.rs"), "src/a.rs");
        let opts = directives().with_source_root("/my \"dir\"");
        let m = Marker::new(&opts);
        let mut out = String::new();
        m.statement(&mut out, AT(3), 0);
        assert_eq!(out, "#line 3 \"/my \\\"dir\\\"/src/a.rs\"\n");
    }

    #[test]
    fn comments_note_changes_of_line_only() {
        let opts = CodegenOptions::default().with_line_markers(LineMarkers::Comments);
        let m = Marker::new(&opts);
        let mut out = String::new();
        for loc in [AT(2), AT(2), None, AT(3)] {
            m.statement(&mut out, loc, 1);
            out.push_str("  s;\n");
        }
        m.finish(&mut out);
        assert_eq!(
            out,
            "  // src/a.rs:2\n  s;\n  s;\n  s;\n  // src/a.rs:3\n  s;\n"
        );
    }
}
