//! Well-formedness of programs (the requirements of the paper's §3.2) and
//! a warning for reads of variables that may not have been written.
//!
//! Errors ([`Severity::Error`]): an empty program, duplicate labels, jumps
//! to missing labels, a `halt` not followed by `done`, and a skip,
//! assignment or `if` as the last command (its `next(l)` is undefined, so
//! execution would get stuck).
//!
//! Warnings ([`Severity::Warning`]):
//! * a `done` reached other than from the `halt` just before it. The paper
//!   only requires that every `halt` be followed by `done`; its rules have
//!   no step from `done`, so reaching it by falling through or jumping
//!   ends the program just as a halt would. That is legal (the random
//!   programs of [`crate::random`] jump to `done`), but often a mistake.
//! * a variable that may be read before it is written on some path from
//!   the first command (a forward "definitely assigned" analysis). The
//!   read then sees the initial state, which is legal but often unmeant.
//!
//! [`Severity::Error`]: crate::error::Severity::Error
//! [`Severity::Warning`]: crate::error::Severity::Warning

use crate::ast::{Cmd, Pos, Program};
use crate::error::{Diagnostic, DiagnosticKind as Kind};
use std::collections::HashMap;

/// Every finding for `p`: errors first, in command order within each
/// kind, then warnings.
pub fn check(p: &Program) -> Vec<Diagnostic> {
    if p.cmds.is_empty() {
        return vec![Diagnostic {
            kind: Kind::EmptyProgram,
            message: "the program has no commands".to_string(),
            pos: Pos::default(),
            label: None,
        }];
    }
    let mut out = Vec::new();
    duplicate_labels(p, &mut out);
    missing_targets(p, &mut out);
    halts_and_end(p, &mut out);
    done_without_halt(p, &mut out);
    read_before_write(p, &mut out);
    out
}

/// Whether `p` has no errors (warnings allowed).
pub fn is_well_formed(p: &Program) -> bool {
    check(p).iter().all(|d| !d.is_error())
}

/// A finding about command `i`.
fn at(p: &Program, i: usize, kind: Kind, message: String) -> Diagnostic {
    let c = &p.cmds[i];
    Diagnostic {
        kind,
        message,
        pos: c.pos,
        label: Some(c.label.clone()),
    }
}

/// Where command `i` is, for messages: its line if parsed, else its
/// 1-based number.
fn place(p: &Program, i: usize) -> String {
    match p.cmds[i].pos {
        pos if pos == Pos::default() => format!("command {}", i + 1),
        pos => format!("line {}", pos.line),
    }
}

fn duplicate_labels(p: &Program, out: &mut Vec<Diagnostic>) {
    let mut first: HashMap<&str, usize> = HashMap::new();
    for (i, c) in p.cmds.iter().enumerate() {
        if let Some(&j) = first.get(c.label.as_str()) {
            let message = format!("duplicate label `{}` (first at {})", c.label, place(p, j));
            out.push(at(p, i, Kind::DuplicateLabel, message));
        } else {
            first.insert(&c.label, i);
        }
    }
}

fn missing_targets(p: &Program, out: &mut Vec<Diagnostic>) {
    for (i, c) in p.cmds.iter().enumerate() {
        if let Cmd::Goto(g) | Cmd::IfGoto(_, g) = &c.cmd {
            if p.index(g).is_none() {
                let message = format!("`{}` jumps to `{g}`, which no command has", c.label);
                out.push(at(p, i, Kind::MissingTarget, message));
            }
        }
    }
}

/// `halt` must be followed by `done`; nothing else that continues to
/// `next(l)` may be last.
fn halts_and_end(p: &Program, out: &mut Vec<Diagnostic>) {
    for (i, c) in p.cmds.iter().enumerate() {
        let next = p.next(i).map(|j| &p.cmds[j].cmd);
        match (&c.cmd, next) {
            (Cmd::Halt, Some(Cmd::Done)) => {}
            (Cmd::Halt, _) => {
                let message = format!("`{}: halt` is not followed by `done`", c.label);
                out.push(at(p, i, Kind::HaltWithoutDone, message));
            }
            (Cmd::Skip | Cmd::Assign(..) | Cmd::IfGoto(..), None) => {
                let message = format!("`{}` is the last command but continues past it", c.label);
                out.push(at(p, i, Kind::FallsOffEnd, message));
            }
            _ => {}
        }
    }
}

fn done_without_halt(p: &Program, out: &mut Vec<Diagnostic>) {
    let preds = p.predecessors();
    for (i, c) in p.cmds.iter().enumerate() {
        if c.cmd != Cmd::Done {
            continue;
        }
        let halt_before = |j: usize| j + 1 == i && p.cmds[j].cmd == Cmd::Halt;
        let mut from: Vec<String> = preds[i]
            .iter()
            .filter(|&&j| !halt_before(j))
            .map(|&j| format!("`{}`", p.cmds[j].label))
            .collect();
        if i == 0 {
            from.insert(0, "the start".to_string());
        }
        if !from.is_empty() {
            let message = format!(
                "`{}: done` is reached without a halt, from {}",
                c.label,
                from.join(", ")
            );
            out.push(at(p, i, Kind::DoneWithoutHalt, message));
        }
    }
}

fn read_before_write(p: &Program, out: &mut Vec<Diagnostic>) {
    let vars: Vec<String> = p.variables().into_iter().collect();
    let assigned = definitely_assigned(p, &vars);
    for (i, c) in p.cmds.iter().enumerate() {
        // Unreachable commands have no path from the start: nothing to say.
        let Some(set) = &assigned[i] else { continue };
        for v in c.cmd.reads() {
            if !set[var_index(&vars, &v)] {
                let message = format!("`{v}` may be read at `{}` before it is written", c.label);
                out.push(at(p, i, Kind::ReadBeforeWrite, message));
            }
        }
    }
}

fn var_index(vars: &[String], v: &str) -> usize {
    vars.binary_search_by(|w| w.as_str().cmp(v))
        .expect("variables() lists every read")
}

/// For each command, the variables (by index in `vars`) written on every
/// path from the first command to it, or `None` if no path reaches it.
/// `None` is the top of the must-analysis lattice; sets only shrink, so
/// the worklist terminates.
fn definitely_assigned(p: &Program, vars: &[String]) -> Vec<Option<Vec<bool>>> {
    let mut ins: Vec<Option<Vec<bool>>> = vec![None; p.cmds.len()];
    // The entry also meets the initial state, where nothing is written.
    ins[0] = Some(vec![false; vars.len()]);
    let mut work = vec![0];
    while let Some(i) = work.pop() {
        let mut after = ins[i].clone().expect("only reached commands are queued");
        if let Cmd::Assign(v, _) = &p.cmds[i].cmd {
            after[var_index(vars, v)] = true;
        }
        for s in p.successors(i) {
            let met = match &ins[s] {
                None => after.clone(),
                Some(old) => old.iter().zip(&after).map(|(a, b)| *a && *b).collect(),
            };
            if ins[s].as_ref() != Some(&met) {
                ins[s] = Some(met);
                work.push(s);
            }
        }
    }
    ins
}
