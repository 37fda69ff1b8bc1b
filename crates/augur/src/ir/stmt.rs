//! Statements: a structured tree.

use super::entity::entity;
use super::{ExprId, VarId};

entity!(
    /// A label for the `goto` fallback (only for control flow that no
    /// structured form expresses, such as a labelled Rust `break 'outer`).
    LabelId,
    "L"
);

/// A list of statements.
pub type Block = Vec<Stmt>;

/// Where a statement came from in the user's first-stage source.
#[derive(Clone, Copy, Debug, Eq)]
pub struct SrcLoc {
    /// File path as `file!()` gives it.
    pub file: &'static str,
    /// 1-based line.
    pub line: u32,
    /// 1-based column.
    pub col: u32,
}

impl SrcLoc {
    /// The location of a `#[track_caller]` caller.
    pub fn from_location(l: &'static std::panic::Location<'static>) -> SrcLoc {
        SrcLoc {
            file: l.file(),
            line: l.line(),
            col: l.column(),
        }
    }
}

/// Line and column first, and the file by address before its text: the
/// engine compares a location for every operation it replays, and one
/// file's `file!()` strings are usually one string.
impl PartialEq for SrcLoc {
    fn eq(&self, other: &SrcLoc) -> bool {
        self.line == other.line
            && self.col == other.col
            && (std::ptr::eq(self.file, other.file) || self.file == other.file)
    }
}

/// Hashes what equality compares (the file by its text).
impl std::hash::Hash for SrcLoc {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.file.hash(h);
        self.line.hash(h);
        self.col.hash(h);
    }
}

impl std::fmt::Display for SrcLoc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.col)
    }
}

/// A note the user attached to an operation with
/// [`annotate`](crate::annotate), kept on the statement made of it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Annotation {
    /// `pragma: X`: printed as `_Pragma("X")` before the statement.
    Pragma(String),
    /// Anything else: printed as a `// ...` comment on its line.
    Comment(String),
    /// On a `for` loop of the GPU simulation: each iteration is a GPU
    /// thread of its own (or, on the outer loop of a nest, a block of
    /// them), so all may run at once. The interpreter checks that no two
    /// touch the same memory where one writes. Printed as a comment.
    Threads,
    /// On a `for` loop: its iterations may run at once, combining these
    /// reductions ([`parallel`](super::parallel) has the rules). Printed
    /// as an OpenMP pragma.
    Parallel(Vec<super::Reduction>),
}

impl Annotation {
    /// The annotation `text` asks for: a pragma after a `pragma:` prefix,
    /// else a comment.
    ///
    /// ```
    /// use augur::ir::Annotation;
    /// assert_eq!(Annotation::parse("pragma: omp simd"), Annotation::Pragma("omp simd".into()));
    /// assert_eq!(Annotation::parse("hot"), Annotation::Comment("hot".into()));
    /// ```
    pub fn parse(text: &str) -> Annotation {
        match text.strip_prefix("pragma:") {
            Some(p) => Annotation::Pragma(p.trim().to_string()),
            None => Annotation::Comment(text.to_string()),
        }
    }
}

/// A statement with its annotations and source location.
#[derive(Clone, Debug, PartialEq)]
pub struct Stmt {
    /// What it does.
    pub kind: StmtKind,
    /// User annotations.
    pub annotations: Vec<Annotation>,
    /// The user's line that produced it, when known.
    pub loc: Option<SrcLoc>,
}

impl Stmt {
    /// A statement without annotations or location.
    pub fn new(kind: StmtKind) -> Stmt {
        Stmt {
            kind,
            annotations: Vec::new(),
            loc: None,
        }
    }
}

/// Statement kinds.
#[derive(Clone, Debug, PartialEq)]
pub enum StmtKind {
    /// Declares `var` (its type is in [`Function::vars`](super::Function::vars)),
    /// optionally initialised.
    Decl {
        /// The variable.
        var: VarId,
        /// Its initial value.
        init: Option<ExprId>,
    },
    /// `place = value`; `place` is a `Var`, `Index` or `Deref` expression.
    Assign {
        /// Where to store.
        place: ExprId,
        /// What to store.
        value: ExprId,
    },
    /// Evaluates an expression for its effects (a call).
    Eval(ExprId),
    /// `if (cond) { then_ } else { else_ }`.
    If {
        /// The condition.
        cond: ExprId,
        /// Runs when it holds.
        then_: Block,
        /// Runs otherwise.
        else_: Block,
    },
    /// `while (cond) { body }`; `while (1)` is a `Const(Bool(true))` condition.
    While {
        /// Checked before each iteration.
        cond: ExprId,
        /// The body.
        body: Block,
    },
    /// `for (init; cond; step) { body }`. `init` is a `Decl` or `Assign`,
    /// `step` an `Assign`; `continue` in `body` runs `step`.
    For {
        /// Runs once first.
        init: Box<Stmt>,
        /// Checked before each iteration.
        cond: ExprId,
        /// Runs after each iteration (and on `continue`).
        step: Box<Stmt>,
        /// The body.
        body: Block,
    },
    /// Leaves the innermost loop.
    Break,
    /// Next iteration of the innermost loop.
    Continue,
    /// Returns from the function.
    Return(Option<ExprId>),
    /// A `goto` target (fallback only).
    Label(LabelId),
    /// A jump (fallback only).
    Goto(LabelId),
    /// A GPU kernel launch ([`Launch`]).
    Launch(Launch),
}

/// A GPU kernel launch: `body` runs once for every thread of `grid` blocks
/// of `block` threads, with `bid` (the block, `0..grid`) and `tid` (the
/// thread in its block, `0..block`) declared by the launch as `int32_t`.
/// The body leaves only by reaching its end: no `break`, `continue`,
/// `return` or `goto` crosses it. The C backend and the interpreter run it
/// as the loop nest `bid`, then `tid`, over it; the CUDA backend makes it a
/// `__global__` function and a launch (and refuses a body that assigns a
/// variable declared outside it: threads write memory).
#[derive(Clone, Debug, PartialEq)]
pub struct Launch {
    /// Blocks in the grid.
    pub grid: u32,
    /// Threads per block.
    pub block: u32,
    /// The block index.
    pub bid: VarId,
    /// The thread index in its block.
    pub tid: VarId,
    /// What each thread runs.
    pub body: Block,
}

impl StmtKind {
    /// The blocks nested directly in this statement: `if` branches, loop bodies.
    pub fn blocks(&self) -> impl Iterator<Item = &Block> {
        let (a, b) = match self {
            StmtKind::If { then_, else_, .. } => (Some(then_), Some(else_)),
            StmtKind::While { body, .. }
            | StmtKind::For { body, .. }
            | StmtKind::Launch(Launch { body, .. }) => (Some(body), None),
            _ => (None, None),
        };
        a.into_iter().chain(b)
    }

    /// [`blocks`](StmtKind::blocks), mutably.
    pub fn blocks_mut(&mut self) -> impl Iterator<Item = &mut Block> {
        let (a, b) = match self {
            StmtKind::If { then_, else_, .. } => (Some(then_), Some(else_)),
            StmtKind::While { body, .. }
            | StmtKind::For { body, .. }
            | StmtKind::Launch(Launch { body, .. }) => (Some(body), None),
            _ => (None, None),
        };
        a.into_iter().chain(b)
    }

    /// True for `while` and `for`: the statements `break` and `continue`
    /// leave. A launch holds a block but is not a loop to them.
    pub fn is_loop(&self) -> bool {
        matches!(self, StmtKind::While { .. } | StmtKind::For { .. })
    }
}

/// Calls `each` on every expression root of `s` and the statements inside it.
pub(crate) fn each_expr(s: &Stmt, each: &mut impl FnMut(ExprId)) {
    each_own_expr(s, each);
    for b in s.kind.blocks() {
        for s in b {
            each_expr(s, each);
        }
    }
}

/// Calls `each` on the expression roots of `s` itself (its condition, a
/// `for`'s header), not of the statements nested in its blocks.
pub(crate) fn each_own_expr(s: &Stmt, each: &mut impl FnMut(ExprId)) {
    match &s.kind {
        StmtKind::Decl { init, .. } => init.iter().for_each(|&e| each(e)),
        StmtKind::Assign { place, value } => {
            each(*place);
            each(*value);
        }
        StmtKind::Eval(e) => each(*e),
        StmtKind::If { cond, .. } | StmtKind::While { cond, .. } => each(*cond),
        StmtKind::For {
            init, cond, step, ..
        } => {
            each_own_expr(init, each);
            each(*cond);
            each_own_expr(step, each);
        }
        StmtKind::Return(e) => e.iter().for_each(|&e| each(e)),
        _ => {}
    }
}
