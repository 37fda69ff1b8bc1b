//! Which code `#[augur::staged]` covers, and whether the engine can see
//! the plain Rust state at a program point (a leaf).
//!
//! Tags see the call path, `Static`s and the locals the attribute tracks.
//! Plain Rust state in code the attribute does not cover (a loop counter, a
//! flag) is invisible, so two points with one tag may still differ there.
//! Sharing code between them (closing a loop, linking to code another run
//! recorded) is exact only where every frame that is live at the point is
//! covered. The engine knows which are:
//!
//! * every function body the attribute rewrites is an *activation* that
//!   registers its source *region* and the location of its caller (the
//!   attribute makes the function `#[track_caller]`, so the location is
//!   lexical: inlining cannot hide a frame); a closure body inside it is an
//!   activation of its own region;
//! * an activation is *covered* when its caller lies in the region of a
//!   live covered activation, or when it is the run's first activation,
//!   entered before any decision (the closure handed to `extract`, or a
//!   function handed there);
//! * a point is *seen through* when the innermost activation is covered
//!   and the operation's location lies in the region of a live activation.
//!
//! Anything else is [`Hidden`], and by default the engine neither closes a
//! loop nor links there: it unrolls exactly, and a loop that never ends
//! stops with `Error::Unannotated`, naming the line to annotate.
//!
//! What the rule cannot see, and the documentation lists: a closure from
//! covered code handed to uncovered code that calls it repeatedly keeps its
//! caller's state out of view (the closure's calls are counted, which covers
//! the standard library's adapters); an uncovered `#[track_caller]` function
//! reports its caller's lines; code a `macro_rules!` macro expands inside a
//! covered body is not rewritten.

use crate::ir::SrcLoc;

/// A span of source code: a function or closure body the attribute
/// rewrote. The attribute writes one `static` per body.
#[derive(Debug)]
pub struct Region {
    file: &'static str,
    start: (u32, u32),
    end: (u32, u32),
    /// Where the attribute that rewrote a function stands (`(0, 0)` for a
    /// closure): called through a `fn` pointer, a `#[track_caller]`
    /// function gets its own definition as its caller, which for code an
    /// attribute wrote is the attribute.
    head: (u32, u32),
}

impl Region {
    /// The body from `(line, column)` to `(end_line, end_column)` of `file`.
    pub const fn new(
        file: &'static str,
        line: u32,
        col: u32,
        end_line: u32,
        end_col: u32,
    ) -> Region {
        Region {
            file,
            start: (line, col),
            end: (end_line, end_col),
            head: (0, 0),
        }
    }

    /// A function's body, rewritten by the attribute at `(line, col)`.
    pub const fn function(self, line: u32, col: u32) -> Region {
        Region {
            head: (line, col),
            ..self
        }
    }

    /// True if `caller` is this function's own definition: it was called
    /// through a `fn` pointer, from a line no one can know.
    fn is_own_definition(&self, caller: SrcLoc) -> bool {
        self.head != (0, 0)
            && (caller.line, caller.col) == self.head
            && (std::ptr::eq(self.file, caller.file) || self.file == caller.file)
    }

    /// True if `loc` lies inside this body.
    pub fn contains(&self, loc: SrcLoc) -> bool {
        let at = (loc.line, loc.col);
        self.start <= at
            && at <= self.end
            && (std::ptr::eq(self.file, loc.file) || self.file == loc.file)
    }

    /// The body's first line.
    pub fn at(&self) -> SrcLoc {
        SrcLoc {
            file: self.file,
            line: self.start.0,
            col: self.start.1,
        }
    }
}

/// Why the engine cannot see the plain Rust state at a point.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hidden {
    /// No `#[augur::staged]` code is running: the closure handed to
    /// `extract` is not covered.
    NoActivation,
    /// The function whose body starts at `body` was called from `caller`,
    /// which no live covered body contains.
    CalledFrom {
        /// The called function's body.
        body: SrcLoc,
        /// The uncovered call site.
        caller: SrcLoc,
    },
    /// A covered body was entered after the run's covered code had returned
    /// (or after a decision): uncovered code called it.
    Reentered {
        /// The body entered.
        body: SrcLoc,
    },
    /// The operation at this location is outside every live covered body.
    Outside(SrcLoc),
    /// A `let` at this location changed a tracked local and may hold a
    /// `&mut` borrow of it, so its value is unknown until the local is
    /// named again.
    Borrowed(SrcLoc),
}

impl Hidden {
    /// The line a user annotates to fix it, and what to write there.
    pub fn fix(&self) -> String {
        match *self {
            Hidden::NoActivation => "write the closure handed to extract inside a function \
                 with #[augur::staged] (or hand extract a #[augur::staged] function)"
                .into(),
            Hidden::CalledFrom { body, caller } => format!(
                "the function at {body} is called from {caller}, which #[augur::staged] does \
                 not cover: put #[augur::staged] on the function that contains {caller}"
            ),
            Hidden::Reentered { body } => format!(
                "the function at {body} is called by code #[augur::staged] does not cover \
                 (the closure handed to extract?): put #[augur::staged] on the function that \
                 holds that code"
            ),
            Hidden::Borrowed(at) => format!(
                "the `let` at {at} changed a tracked local and may hold a `&mut` borrow of it, \
                 so its value is unknown until the block names the local again: end the \
                 borrow before dyn decisions (name the local, or bind the borrow in a block \
                 of its own)"
            ),
            Hidden::Outside(at) => format!(
                "{at} is in code #[augur::staged] does not cover: put #[augur::staged] on the \
                 function that contains it"
            ),
        }
    }
}

/// One activation: a covered body running now.
#[derive(Clone, Copy, Debug)]
struct Activation {
    region: &'static Region,
    /// `None`: covered (and so is every activation under it).
    hidden: Option<Hidden>,
}

/// The live activations of a run, innermost last.
#[derive(Default)]
pub(super) struct Frames {
    stack: Vec<Activation>,
    /// The run's first activation was entered.
    rooted: bool,
    /// Where tracked locals are borrowed through a `let` now (see
    /// `Tracked::poison`), in order.
    borrowed: Vec<SrcLoc>,
}

impl Frames {
    /// Forgets the previous run's activations.
    pub(super) fn reset(&mut self) {
        self.stack.clear();
        self.rooted = false;
        self.borrowed.clear();
    }

    /// A tracked local is borrowed through a `let` at `at` (`Some`), or
    /// one borrowed local was named again (`None`).
    pub(super) fn borrowed(&mut self, at: Option<SrcLoc>) {
        match at {
            Some(at) => self.borrowed.push(at),
            None => {
                self.borrowed.pop();
            }
        }
    }

    /// A covered body starts; `caller` is where it was called from (`None`
    /// for a closure, or a function called through a `fn` pointer, whose
    /// caller is unknown: it is covered as far as the activation it runs
    /// under is). `decided`: the run took a decision
    /// already. Returns the depth to hand to [`Frames::exit`].
    pub(super) fn enter(
        &mut self,
        region: &'static Region,
        caller: Option<SrcLoc>,
        decided: bool,
    ) -> u32 {
        let caller = caller.filter(|&c| !region.is_own_definition(c));
        let hidden = match self.stack.last() {
            None if self.rooted || decided => Some(Hidden::Reentered { body: region.at() }),
            None => None,
            Some(top) => top.hidden.or_else(|| match caller {
                Some(c) if !self.covers(c) => Some(Hidden::CalledFrom {
                    body: region.at(),
                    caller: c,
                }),
                _ => None,
            }),
        };
        self.rooted = true;
        self.stack.push(Activation { region, hidden });
        (self.stack.len() - 1) as u32
    }

    /// The activation at `depth` (and any left above it) ended.
    pub(super) fn exit(&mut self, depth: u32) {
        self.stack.truncate(depth as usize);
    }

    /// Why the plain Rust state at an operation of `loc` is out of view
    /// (`None`: every live frame is covered).
    pub(super) fn hidden_at(&self, loc: SrcLoc) -> Option<Hidden> {
        let Some(top) = self.stack.last() else {
            return Some(Hidden::NoActivation);
        };
        if let Some(h) = top.hidden {
            return Some(h);
        }
        if let Some(&at) = self.borrowed.first() {
            return Some(Hidden::Borrowed(at));
        }
        if self.covers(loc) {
            None
        } else {
            Some(Hidden::Outside(loc))
        }
    }

    fn covers(&self, loc: SrcLoc) -> bool {
        self.stack.iter().rev().any(|a| a.region.contains(loc))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    static OUTER: Region = Region::new("a.rs", 10, 1, 30, 2);
    static INNER: Region = Region::new("a.rs", 40, 1, 50, 2);

    fn at(line: u32) -> SrcLoc {
        SrcLoc {
            file: "a.rs",
            line,
            col: 5,
        }
    }

    #[test]
    fn the_first_activation_before_any_decision_is_covered() {
        let mut f = Frames::default();
        f.enter(&OUTER, None, false);
        assert_eq!(f.hidden_at(at(12)), None);
        assert_eq!(f.hidden_at(at(35)), Some(Hidden::Outside(at(35))));
    }

    #[test]
    fn a_call_from_covered_code_is_covered_and_from_elsewhere_is_not() {
        let mut f = Frames::default();
        f.enter(&OUTER, None, false);
        let d = f.enter(&INNER, Some(at(20)), true);
        assert_eq!(f.hidden_at(at(45)), None);
        f.exit(d);
        f.enter(&INNER, Some(at(35)), true);
        let h = Some(Hidden::CalledFrom {
            body: INNER.at(),
            caller: at(35),
        });
        assert_eq!(f.hidden_at(at(45)), h);
        // Everything under an uncovered call stays uncovered.
        f.enter(&OUTER, Some(at(45)), true);
        assert_eq!(f.hidden_at(at(12)), h);
    }

    #[test]
    fn a_body_entered_again_after_the_root_returned_is_not_covered() {
        let mut f = Frames::default();
        let d = f.enter(&OUTER, None, false);
        f.exit(d);
        f.enter(&OUTER, None, false);
        assert_eq!(
            f.hidden_at(at(12)),
            Some(Hidden::Reentered { body: OUTER.at() })
        );
        let mut g = Frames::default();
        g.enter(&OUTER, None, true);
        assert!(g.hidden_at(at(12)).is_some());
        assert_eq!(
            Frames::default().hidden_at(at(1)),
            Some(Hidden::NoActivation)
        );
    }
}
