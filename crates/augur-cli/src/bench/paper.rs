//! `augur bench paper`: the paper's evaluation tables regenerated, the
//! paper's numbers beside ours. The first-stage tables ("einsum-reruns",
//! "convolutionrelu-reruns") and the conv/ReLU table ("mlfusion") are
//! measured on this machine; the GPU tables ("matrixmatrix",
//! "matrixvector") are measured when this machine has a GPU, and otherwise
//! shown as last recorded on an H100, labelled so.

use super::{first_stage, fusion, gpu, Ctx, Outcome};
use crate::Result;

/// Runs the experiment.
pub fn run(ctx: &Ctx) -> Result<Outcome> {
    let mut out = Outcome::default();
    let parts: [(&str, Outcome); 2] = [
        ("first-stage", first_stage::run(ctx)?),
        ("conv-relu", fusion::run(ctx)?),
    ];
    for (prefix, part) in parts {
        absorb(&mut out, prefix, part);
    }
    // A GPU machine that cannot build or run the program (no network for
    // nvcc's install, a driver problem) still gets the other tables.
    let gpu_part = match gpu::gpu_name().map(|_| gpu::run(ctx)) {
        Some(Ok(measured)) => measured,
        Some(Err(e)) => {
            let mut recorded = gpu::recorded()?;
            for t in &mut recorded.tables {
                t.note(format!("not measured here: {e}"));
            }
            recorded
        }
        None => gpu::recorded()?,
    };
    absorb(&mut out, "gpu", gpu_part);
    Ok(out)
}

/// Adds a part's tables and plots, their names prefixed so files differ.
fn absorb(out: &mut Outcome, prefix: &str, part: Outcome) {
    for mut t in part.tables {
        t.name = format!("{prefix}-{}", t.name);
        out.tables.push(t);
    }
    for mut p in part.plots {
        p.name = format!("{prefix}-{}", p.name);
        out.plots.push(p);
    }
}
