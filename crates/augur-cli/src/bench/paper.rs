//! `augur bench paper`: the paper's evaluation tables regenerated, the
//! paper's numbers beside ours. The first-stage tables ("einsum-reruns",
//! "convolutionrelu-reruns") and the conv/ReLU table ("mlfusion") are
//! measured on this machine; the GPU tables ("matrixmatrix",
//! "matrixvector") are measured when this machine has a GPU, and otherwise
//! shown as last recorded on an H100, labelled so.
//!
//! ## The DSLs' size beside the paper's
//!
//! Lines without blanks and comments.
//!
//! **einsum** (`augur-einsum`): 1,231 lines (1,076 without the 155-line
//! runtime, which BuildIt's listing leaves to a separate header), of which 58 deal with prophecies or the history; the
//! paper's C++ DSL: 608 and 25. The paper's 25 lines do not keep tensors
//! that a kernel writes only in part (or on some paths) intact; the 26
//! lines that do (`gpu_may_write`, `gpu_partial`, `gpu_full`) are most of
//! the difference. The rest is what the listing lacks: three element types
//! and operator impls for Rust (`term.rs`), the `einsum!` macro, shape and
//! misuse errors, rank-0 tensors, OpenMP, `+=`/`*=` that accumulate,
//! freeing. The interpreter runtime adds 112 lines; the benchmark programs
//! (168) and the GPU experiment (174) are this crate's.
//!
//! **nn** (`augur-nn`): 410, of which the fusion protocol (`net.rs`) is 112
//! and 27 more in the layers call it: about 64 deal with the prophecy or the history. The paper's DSL: 161 and 48; ours
//! adds 2-D convolution, fully connected layers, bias add and its fusion,
//! unrolling and the modulo split, and shape errors.

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
