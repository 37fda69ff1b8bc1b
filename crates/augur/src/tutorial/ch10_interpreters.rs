//! # 10. Staging an interpreter
//!
//! An interpreter specialised to a fixed program is a compiler for that
//! program: Futamura's first projection, and the oldest use of staging.
//! With augur it is the interpreter you would write anyway, with the
//! program as first-stage data and the machine's state as `Dyn` values.
//! This chapter writes one for a small register machine, shows why the
//! form of chapter 3 grows with the square of the program, and teaches the
//! form that grows with the program: a loop over *resumable points*.
//!
//! # The machine and its interpreter
//!
//! Four registers; `r0` holds the argument and `r1` the result:
//!
//! ```
//! #[derive(Clone, Copy, Debug)]
//! enum Op {
//!     Set(usize, i64),   // r[a] = k
//!     AddI(usize, i64),  // r[a] += k
//!     Mul(usize, usize), // r[a] *= r[b]
//!     Jnz(usize, usize), // if r[a] != 0 { goto t }
//!     Jmp(usize),        // goto t
//!     Halt,
//! }
//!
//! fn run(prog: &[Op], arg: i64) -> i64 {
//!     let (mut r, mut pc) = ([arg, 0, 0, 0], 0);
//!     while pc < prog.len() {
//!         match prog[pc] {
//!             Op::Set(a, k) => r[a] = k,
//!             Op::AddI(a, k) => r[a] = r[a].wrapping_add(k),
//!             Op::Mul(a, b) => r[a] = r[a].wrapping_mul(r[b]),
//!             Op::Jnz(a, t) if r[a] != 0 => { pc = t; continue; }
//!             Op::Jnz(..) => {}
//!             Op::Jmp(t) => { pc = t; continue; }
//!             Op::Halt => break,
//!         }
//!         pc += 1;
//!     }
//!     r[1]
//! }
//!
//! // r1 = 1; while r0 != 0 { r1 *= r0; r0 -= 1 }
//! use Op::*;
//! let fact = [Set(1, 1), Jnz(0, 3), Halt, Mul(1, 0), AddI(0, -1), Jmp(1)];
//! assert_eq!(run(&fact, 5), 120);
//! ```
//!
//! # Staged, as chapter 3 would
//!
//! Make the registers `Dyn`s and the program counter a `Static`, and the
//! same loop generates the program: every instruction becomes its
//! statement, a `Jnz` becomes a dyn decision, and jumping back to an
//! instruction with the same `pc` closes a loop.
//!
//! ```
//! # #[derive(Clone, Copy, Debug)]
//! # enum Op { Set(usize, i64), AddI(usize, i64), Mul(usize, usize), Jnz(usize, usize), Jmp(usize), Halt }
//! use augur::{Builder, Dyn, Static};
//!
//! #[augur::staged]
//! fn stage(prog: &[Op], arg: Dyn<i64>) -> Dyn<i64> {
//!     let r = [0; 4].map(|_| Dyn::new(0i64));
//!     r[0].set(arg);
//!     let mut pc = Static::new(0usize);
//!     while *pc < prog.len() {
//!         match prog[*pc] {
//!             Op::Set(a, k) => r[a].set(k),
//!             Op::AddI(a, k) => r[a].set(r[a] + k),
//!             Op::Mul(a, b) => r[a].set(r[a] * r[b]),
//!             Op::Jnz(a, t) if r[a].ne(0).is_true() => { pc.set(t); continue; }
//!             Op::Jnz(..) => {}
//!             Op::Jmp(t) => { pc.set(t); continue; }
//!             Op::Halt => break,
//!         }
//!         pc += 1;
//!     }
//!     r[1]
//! }
//!
//! # #[augur::staged]
//! # fn main() -> augur::Result<()> {
//! use Op::*;
//! let fact = [Set(1, 1), Jnz(0, 3), Halt, Mul(1, 0), AddI(0, -1), Jmp(1)];
//! let f = Builder::new().extract("fact", |x: Dyn<i64>| stage(&fact, x))?;
//! assert!(f.c_code().contains("while"));
//! assert_eq!(f.interpret(&[5i64.into()])?, 120i64.into());
//! # Ok(())
//! # }
//! ```
//!
//! That is exact, and for small programs it is all you need. But think of
//! what the engine does. A run executes the closure from its start; at a
//! new decision it takes one side and schedules a run for the other, and
//! that run *replays* everything before the decision to get there. A
//! program of `n` instructions with a loop every few instructions has
//! about `n` decisions, each explored by a run that replays the program up
//! to it: work that grows as `n²`. Programs of a thousand instructions
//! take milliseconds; of forty thousand, tens of seconds.
//!
//! # The linear form: resumable points
//!
//! The cure is to tell the engine where it may *resume*. An interpreter's
//! state between instructions is its program counter (and the `Dyn`
//! registers, which live in the generated code). If the code from `pc` on
//! depends only on `pc`, a run that explores a decision at instruction
//! 4,000 need not replay instructions 0 to 3,999: it can start at the
//! point that contains the decision. [`augur::resumable`](crate::resumable)
//! is that loop:
//!
//! ```text
//! augur::resumable(start, |k| -> Option<K> { ... })
//! // means: let mut at = Some(start); while let Some(k) = at { at = body(k) }
//! ```
//!
//! The body runs from point `k` to the next one and returns it, or `None`
//! when the machine is done. For an interpreter the points are the
//! targets of jumps: straight-line code runs inside the body, and each
//! jump returns its target.
//!
//! ```
//! # #[derive(Clone, Copy, Debug)]
//! # enum Op { Set(usize, i64), AddI(usize, i64), Mul(usize, usize), Jnz(usize, usize), Jmp(usize), Halt }
//! use augur::{Builder, Dyn, Static};
//!
//! #[augur::staged]
//! fn stage(prog: &[Op], arg: Dyn<i64>) -> Dyn<i64> {
//!     let r = [0; 4].map(|_| Dyn::new(0i64));
//!     r[0].set(arg);
//!     augur::resumable(0usize, |mut pc| {
//!         while pc < prog.len() {
//!             match prog[pc] {
//!                 Op::Set(a, k) => r[a].set(k),
//!                 Op::AddI(a, k) => r[a].set(r[a] + k),
//!                 Op::Mul(a, b) => r[a].set(r[a] * r[b]),
//!                 Op::Jnz(a, t) => {
//!                     let taken = r[a].ne(0).is_true();
//!                     return Some(if taken { t } else { pc + 1 });
//!                 }
//!                 Op::Jmp(t) => return Some(t),
//!                 Op::Halt => return None,
//!             }
//!             pc += 1;
//!         }
//!         None
//!     });
//!     r[1]
//! }
//!
//! # #[augur::staged]
//! # fn main() -> augur::Result<()> {
//! use Op::*;
//! let fact = [Set(1, 1), Jnz(0, 3), Halt, Mul(1, 0), AddI(0, -1), Jmp(1)];
//! let f = Builder::new().extract("fact", |x: Dyn<i64>| stage(&fact, x))?;
//! let c = f.c_code();
//! assert!(c.contains("while") && !c.contains("goto"), "{c}");
//! assert_eq!(f.interpret(&[5i64.into()])?, 120i64.into());
//! // One point per jump target reached, and one for leaving the machine.
//! assert_eq!(f.stats().points, 5);
//! # Ok(())
//! # }
//! ```
//!
//! Each point's code is recorded once, the first time a run reaches it;
//! a later jump to it is an edge in the generated code, so jumping back
//! makes the loop. A decision inside a point is explored by a run that
//! starts *at that point*: the engine kept its key, replays only what led
//! to the machine, and hands the body the key. The code that comes out is
//! the same as the `Static` form's: a point with one way in is straight
//! code, the others become loops and joins.
//!
//! # What it buys
//!
//! Loops in sequence make the difference plain: each has a decision, and
//! in the `Static` form each is explored by a run that replays all loops
//! before it. [`Stats::operations`](crate::Stats::operations) counts the
//! first stage's whole work:
//!
//! ```
//! # #[derive(Clone, Copy, Debug, Hash)]
//! # enum Op { Set(usize, i64), AddI(usize, i64), Mul(usize, usize), Jnz(usize, usize), Jmp(usize), Halt }
//! # use augur::{Builder, Dyn, Static};
//! # #[augur::staged]
//! # fn linear(prog: &[Op], arg: Dyn<i64>) -> Dyn<i64> {
//! #     let r = [0; 4].map(|_| Dyn::new(0i64));
//! #     r[0].set(arg);
//! #     augur::resumable(0usize, |mut pc| {
//! #         while pc < prog.len() {
//! #             match prog[pc] {
//! #                 Op::Set(a, k) => r[a].set(k),
//! #                 Op::AddI(a, k) => r[a].set(r[a] + k),
//! #                 Op::Mul(a, b) => r[a].set(r[a] * r[b]),
//! #                 Op::Jnz(a, t) => { let j = r[a].ne(0).is_true(); return Some(if j { t } else { pc + 1 }); }
//! #                 Op::Jmp(t) => return Some(t),
//! #                 Op::Halt => return None,
//! #             }
//! #             pc += 1;
//! #         }
//! #         None
//! #     });
//! #     r[1]
//! # }
//! # #[augur::staged]
//! # fn quadratic(prog: &[Op], arg: Dyn<i64>) -> Dyn<i64> {
//! #     let r = [0; 4].map(|_| Dyn::new(0i64));
//! #     r[0].set(arg);
//! #     let mut pc = Static::new(0usize);
//! #     while *pc < prog.len() {
//! #         match prog[*pc] {
//! #             Op::Set(a, k) => r[a].set(k),
//! #             Op::AddI(a, k) => r[a].set(r[a] + k),
//! #             Op::Mul(a, b) => r[a].set(r[a] * r[b]),
//! #             Op::Jnz(a, t) if r[a].ne(0).is_true() => { pc.set(t); continue; }
//! #             Op::Jnz(..) => {}
//! #             Op::Jmp(t) => { pc.set(t); continue; }
//! #             Op::Halt => break,
//! #         }
//! #         pc += 1;
//! #     }
//! #     r[1]
//! # }
//! # #[augur::staged]
//! # fn main() -> augur::Result<()> {
//! use Op::*;
//! // `loops` countdown loops in sequence, each adding its turns to r1.
//! let program = |loops: usize| {
//!     let mut p = Vec::new();
//!     for _ in 0..loops {
//!         let head = p.len();
//!         p.extend([Set(2, 3), Jnz(2, head + 3), Jmp(head + 6), AddI(1, 1), AddI(2, -1), Jmp(head + 1)]);
//!     }
//!     p
//! };
//! let work = |loops: usize, points: bool| -> augur::Result<u64> {
//!     let prog = program(loops);
//!     let f = Builder::new().extract("loops", move |x: Dyn<i64>| {
//!         if points { linear(&prog, x) } else { quadratic(&prog, x) }
//!     })?;
//!     assert_eq!(f.interpret(&[0i64.into()])?, (3 * loops as i64).into());
//!     Ok(f.stats().operations)
//! };
//! let (p100, p400) = (work(100, true)?, work(400, true)?);
//! let (s100, s400) = (work(100, false)?, work(400, false)?);
//! assert!(p400 < 5 * p100);  // four times the program, four times the work
//! assert!(s400 > 12 * s100); // four times the program, sixteen times
//! # Ok(())
//! # }
//! ```
//!
//! `augur bench interp` measures a Brainf*** compiler written this way
//! (the crate `augur-bf`): a program of 100,000 commands extracts in about
//! a second and a half over points, where the `Static` form takes seconds
//! at 4,000.
//!
//! # The rule: a point is a function of its key
//!
//! The engine shares a point's code among every jump to it, so the body
//! must compute the same code from the same key. The body is a `Fn`, so it
//! cannot change what it captures; beyond that:
//!
//! * **Carry in the key whatever decides the code.** A machine with calls
//!   keeps its return stack in the key (`(pc, Vec<usize>)`); one that
//!   specialises on a first-stage mode keeps the mode there. Keys are
//!   compared with `Eq`, so two keys never share code by accident.
//! * **Second-stage state lives in `Dyn` variables declared before the
//!   machine** (the registers above), which the generated code carries
//!   from point to point.
//! * **Do not change first-stage state the engine sees inside a body.** A
//!   `Static` or a DSL's [`dsl::Seen`](crate::dsl::Seen) changed there is
//!   an error at the machine (a run that starts at a point could not
//!   recreate it); state it does not see (a `Cell`, a global) must not
//!   change what a point does.
//! * **A cycle of points must pass a dyn decision.** Jumping back to a
//!   point with no decision since would loop forever, as the plain loop
//!   does: an error, unless [`Builder::allow_infinite_loops`](crate::Builder::allow_infinite_loops).
//!
//! # A state machine: the key is the state
//!
//! A state machine over second-stage input is the same shape: its state is
//! first-stage, each input byte a second-stage test. Written as chapter 3
//! would (the state in a `Static` inside a dyn loop over the input), it is
//! exact, but each new state is found by a run that replays the path to
//! it from the start: the cost is states times the path's length, and a
//! machine of thousands of states spends its time replaying. Keyed by the
//! state, each state's code is recorded once, by a run that starts there:
//!
//! ```
//! use augur::{Builder, Dyn};
//!
//! /// The DFA of "contains `ab`": 0 nothing yet, 1 just read `a`, 2 found.
//! fn next(state: u8, b: u8) -> u8 {
//!     match (state, b) {
//!         (2, _) => 2,
//!         (_, b'a') => 1,
//!         (1, b'b') => 2,
//!         _ => 0,
//!     }
//! }
//!
//! #[augur::staged]
//! fn main() -> augur::Result<()> {
//!     let f = Builder::new().extract("contains_ab", |hay: Dyn<*const u8>, len: Dyn<i64>| {
//!         let (i, found) = (Dyn::named("i", 0i64), Dyn::named("found", 0i64));
//!         augur::resumable(0u8, |state| {
//!             if state == 2 {
//!                 found.set(1);
//!                 return None;
//!             }
//!             if i.ge(len).is_true() {
//!                 return None;
//!             }
//!             let b = hay.at(i);
//!             i.set(i + 1);
//!             // A test for each byte that goes elsewhere than the rest do.
//!             let rest = next(state, 0);
//!             for byte in [b'a', b'b'] {
//!                 if next(state, byte) != rest && b.eq(byte).is_true() {
//!                     return Some(next(state, byte));
//!                 }
//!             }
//!             Some(rest)
//!         });
//!         found
//!     })?;
//!     let m = f.compile()?;
//!     for (s, want) in [(&b"xxab"[..], 1), (b"aab", 1), (b"ba", 0), (b"", 0)] {
//!         // SAFETY: the code reads `s[i]` for `i < len` only.
//!         assert_eq!(unsafe { m.get()(s.as_ptr(), s.len() as i64) }, want);
//!     }
//!     Ok(())
//! }
//! ```
//!
//! The generated function is the DFA itself (here two loops and a test a
//! byte, as a hand-written matcher would have). Which form
//! when: a `Static` state is the simplest and fine for a handful of
//! states; keyed points are the form for automata, whose states number in
//! the thousands (`augur-regex` keys its points by the set of threads its
//! NFA simulation holds, so the code is the pattern's DFA, built only as
//! far as the search reaches). Past 64 points the code is structured a
//! point at a time, flat, as a hand-written state machine is.
//!
//! # The first stage is the optimizer
//!
//! The first stage runs once per compile, so it can afford to look at the
//! program. `augur-bf` folds runs of `+` into one addition, keeps pointer
//! moves as first-stage offsets (moved into the `Dyn` pointer only before
//! a point), and turns loops that only move and add (`[->+<]`) into
//! multiply-adds: the generated C then runs a loop-heavy program 12 times
//! faster than a folding interpreter, and the JIT's within 3× of gcc.
//! Such folding is ordinary Rust over the program; keep its results
//! (like the offset) local to a point's body, or in the key.
//!
//! The chapter's program, `cargo run -p augur-staging --example
//! tutorial_10_interpreters`, stages the machine both ways, checks both
//! against the plain interpreter on C, the JIT and the interpreter, and
//! prints their first-stage work side by side.
