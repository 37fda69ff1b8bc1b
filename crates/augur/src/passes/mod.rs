//! IR passes, each a module: copy elimination, dead code, control-flow
//! cleanup and `for` recovery, scope repair, naming. [`run`] applies them
//! in order and verifies the IR after each.

pub mod bounds;
mod control;
mod copy_elim;
mod dead;
pub(crate) mod effects;
mod fold;
mod naming;
mod scope;

use crate::error::Error;
use crate::ir::{verify::verify, Function};

type Pass = (&'static str, fn(&mut Function));

/// Each pass by the short name file tests (`crates/augur/filetests/`) give it.
const NAMED: [Pass; 6] = [
    ("scope", scope::run),
    ("copy_elim", copy_elim::run),
    ("dead", dead::run),
    ("fold", fold::run),
    ("control", control::run),
    ("naming", naming::run),
];

/// Runs the one pass `name` names (`scope`, `copy_elim`, `dead`, `fold`,
/// `control`, `naming`) and verifies the IR after it; `None` if no pass
/// has that name. For file tests and tools: [`run`] is the pipeline.
pub fn run_named(name: &str, f: &mut Function) -> Option<Result<(), Error>> {
    let (_, pass) = NAMED.iter().find(|(n, _)| *n == name)?;
    pass(f);
    Some(verify(f).map_err(|message| Error::Internal {
        message: format!("IR invalid after {name}: {message}\n{f}"),
    }))
}

/// Verifies `f` after the pass `name`, as [`run`] does.
pub(crate) fn verified(f: &Function, name: &str) -> Result<(), Error> {
    verify(f).map_err(|message| Error::Internal {
        message: format!("IR invalid after {name}: {message}\n{f}"),
    })
}

/// Runs every pass in order, verifying after each in debug builds and
/// after the last one always. Copy elimination and dead code removal
/// both need every variable's read count; the first three passes after
/// scope repair share one count, each keeping it up to date (every pass
/// reads the whole function: on a large one, each sweep is a walk through
/// memory the caches do not hold).
pub fn run(f: &mut Function) -> Result<(), Error> {
    let mut i = 0;
    let mut after = |f: &Function, name: &str, last: bool| {
        let checked = if cfg!(debug_assertions) || last {
            verify(f).map_err(|message| Error::Internal {
                message: format!("IR invalid after pass {i} ({name}): {message}\n{f}"),
            })
        } else {
            Ok(())
        };
        i += 1;
        checked
    };
    scope::run(f);
    after(f, "scope", false)?;
    let mut counts = effects::read_counts(f);
    copy_elim::run_counted(f, &mut counts);
    after(f, "copy_elim", false)?;
    dead::run_counted(f, &mut counts);
    after(f, "dead", false)?;
    copy_elim::run_counted(f, &mut counts);
    after(f, "copy_elim", false)?;
    for (name, pass) in [
        ("fold", fold::run as fn(&mut Function)),
        ("control", control::run),
        ("dead", dead::run),
        ("scope", scope::run),
    ] {
        pass(f);
        after(f, name, false)?;
    }
    naming::run(f);
    after(f, "naming", true)
}
