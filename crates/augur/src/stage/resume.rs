//! Resumable points: a loop over first-stage keys whose code is recorded
//! once per key (`augur::resumable`).
//!
//! An interpreter written as `while pc < prog.len() { match prog[pc] .. }`
//! with a `Static` program counter is exact, but each of its dyn loops is
//! explored by a run that replays the whole program up to it, so
//! extraction grows with the square of the program. Written as a machine
//! over resumable points, each point's code is recorded once and every run
//! starts at the point it explores (see `trace/points.rs`): extraction
//! grows with the program.

use crate::ir::SrcLoc;
use crate::trace::driver::{self, with};
use crate::trace::points::{Goto, PointKey, Target};
use crate::trace::tag::state_hash;
use std::any::Any;
use std::hash::Hash;
use std::rc::Rc;

/// What a member adds to tags: its number, mixed.
fn member_term(member: u32) -> u64 {
    crate::trace::tag::mix(0x6d65_6d62_6572, u64::from(member))
}

/// Runs `body` from the point `start`, then from each point it returns,
/// until it returns `None`: in plain Rust,
///
/// ```text
/// let mut at = Some(start);
/// while let Some(k) = at { at = body(k) }
/// ```
///
/// The generated code holds each key's code once, however many places
/// jump to it: `body(k)` is recorded the first time a run reaches `k`, and
/// a later `Some(k)` becomes a jump there (a loop, or a join). Each run of
/// the extraction starts at the point it explores, so a machine of `n`
/// points extracts in time about linear in `n`, where the same loop over a
/// `Static` replays every point before the one it explores; a run that
/// ends at a recorded point goes on as the next run where that one starts
/// in the same machine, without leaving this call
/// ([`Builder::chain_runs`](crate::Builder::chain_runs)).
///
/// **The body must be a function of its key.** It is a `Fn`, so it changes
/// nothing it captures. State the engine sees (a `Static`, a DSL's
/// `dsl::Seen`) changed inside a body is an error at the machine, since a
/// run that starts at a point could not recreate it; state it does not
/// see (a `Cell`, a `RefCell`, a `static`) must not change what a point
/// does. The second-stage state a machine carries from point to point
/// lives in `Dyn` variables declared before it. A key is any
/// `Clone + Eq + Hash` value: a program counter, a pair `(pc, depth)`, a
/// state set (see `docs/extraction.md`, "Resumable points").
///
/// A staged Brainf*** whose every `[` and the instruction after each `]`
/// are points:
///
/// ```
/// #[augur::staged]
/// fn main() -> augur::Result<()> {
///     use augur::{Builder, Dyn};
///
///     /// The index of the bracket matching the one at `pc`.
///     fn matching(prog: &[u8], pc: usize) -> usize {
///         let (step, open) = if prog[pc] == b'[' { (1, b'[') } else { (-1, b']') };
///         let (mut depth, mut i) = (0i64, pc as i64);
///         loop {
///             let c = prog[i as usize];
///             depth += if c == open { 1 } else if c == b'[' || c == b']' { -1 } else { 0 };
///             if depth == 0 {
///                 return i as usize;
///             }
///             i += step;
///         }
///     }
///
///     let prog: &[u8] = b"++++[>+++<-]>.";
///     let f = Builder::new().extract("bf", |tape: Dyn<*mut u8>, out: Dyn<*mut u8>| {
///         let p = Dyn::named("p", 0);
///         let n = Dyn::named("n", 0);
///         augur::resumable(0usize, |mut pc| {
///             while pc < prog.len() {
///                 match prog[pc] {
///                     b'>' => p.set(p + 1),
///                     b'<' => p.set(p - 1),
///                     b'+' => tape.at(p).set(tape.at(p) + 1),
///                     b'-' => tape.at(p).set(tape.at(p) - 1),
///                     b'.' => {
///                         out.at(n).set(tape.at(p));
///                         n.set(n + 1);
///                     }
///                     // A loop's head and what follows its end are points.
///                     b'[' if tape.at(p).eq(0).is_true() => return Some(matching(prog, pc) + 1),
///                     b'[' => return Some(pc + 1),
///                     b']' => return Some(matching(prog, pc)),
///                     _ => {}
///                 }
///                 pc += 1;
///             }
///             None
///         });
///         n
///     })?;
///     let (mut tape, mut out) = ([0u8; 8], [0u8; 8]);
///     // SAFETY: the program stays within 8 cells and prints one byte.
///     let n = unsafe { f.compile()?.get()(tape.as_mut_ptr(), out.as_mut_ptr()) };
///     assert_eq!((n, out[0]), (1, 12));
///     assert_eq!(f.stats().points, 5); // at 0, 4, 5 and 12, and the exit
///     println!("{}", f.c_code());
///     Ok(())
/// }
/// ```
#[track_caller]
pub fn resumable<K, F>(start: K, body: F)
where
    K: Clone + Eq + Hash + 'static,
    F: Fn(K) -> Option<K>,
{
    if !driver::in_extraction() {
        let mut at = Some(start);
        while let Some(k) = at {
            at = body(k);
        }
        return;
    }
    let loc = SrcLoc::from_location(std::panic::Location::caller());
    let copy = |k: &K| -> PointKey { Rc::new(k.clone()) };
    let (hash, same) = (state_hash(&start), |o: &dyn Any| {
        o.downcast_ref::<K>() == Some(&start)
    });
    let to = Target::Member {
        hash,
        same: &same,
        key: &|| copy(&start),
    };
    let (mut member, jump) = with(|r| r.point_enter(to, loc));
    let mut key = match jump {
        Some(k) => k
            .downcast_ref::<K>()
            .expect("a key of this machine")
            .clone(),
        None => start.clone(),
    };
    loop {
        // The member's number is part of every tag in it, as a `Static`
        // would be: exact, where the key's hash could collide.
        let slot = with(|r| Ok(r.static_register(member_term(member), None)));
        let next = body(key);
        with(|r| {
            r.static_drop(slot);
            Ok(())
        });
        let goto = match &next {
            None => with(|r| r.point_goto(Target::Exit, loc)),
            Some(k) => {
                let same = |o: &dyn Any| o.downcast_ref::<K>() == Some(k);
                let to = Target::Member {
                    hash: state_hash(k),
                    same: &same,
                    key: &|| copy(k),
                };
                with(|r| r.point_goto(to, loc))
            }
        };
        match (goto, next) {
            (Goto::Member(m), Some(k)) => {
                member = m;
                key = k;
            }
            // The run is over, and the next one goes on here, at its key.
            (Goto::Jump(m, next), _) => {
                member = m;
                key = next
                    .downcast_ref::<K>()
                    .expect("a key of this machine")
                    .clone();
            }
            // The machine returns (or a run the engine ended leaves).
            _ => return,
        }
    }
}
