//! IR passes, each a module: copy elimination, dead code, control-flow
//! cleanup and `for` recovery, scope repair, naming. [`run`] applies them
//! in order and verifies the IR after each.

mod control;
mod copy_elim;
mod dead;
pub(crate) mod effects;
mod fold;
mod naming;
mod scope;

use crate::error::Error;
use crate::ir::{verify::verify, Function};

/// Runs every pass in order, verifying after each in debug builds and
/// after the last one always.
pub fn run(f: &mut Function) -> Result<(), Error> {
    type Pass = (&'static str, fn(&mut Function));
    let passes: [Pass; 9] = [
        ("scope repair", scope::run),
        ("copy elimination", copy_elim::run),
        ("dead code", dead::run),
        ("copy elimination after dead code", copy_elim::run),
        ("constant folding", fold::run),
        ("control cleanup", control::run),
        ("dead code after cleanup", dead::run),
        ("scope repair again", scope::run),
        ("naming", naming::run),
    ];
    let last = passes.len() - 1;
    for (i, (name, pass)) in passes.into_iter().enumerate() {
        pass(f);
        if cfg!(debug_assertions) || i == last {
            verify(f).map_err(|message| Error::Internal {
                message: format!("IR invalid after {name}: {message}\n{f}"),
            })?;
        }
    }
    Ok(())
}
