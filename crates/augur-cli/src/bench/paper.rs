//! `augur bench paper`: the paper's evaluation tables regenerated, the
//! paper's numbers beside ours. The first-stage tables ("einsum-reruns",
//! "convolutionrelu-reruns") and the conv/ReLU table ("mlfusion") are
//! measured on this machine; the GPU tables ("matrixmatrix",
//! "matrixvector") are measured when this machine has a GPU, and otherwise
//! shown as last recorded on an H100, labelled so.
//!
//! ## The DSLs' size beside the paper's
//!
//! Lines without blanks and comments, and of those the lines that name a
//! prophecy, a history or the fusion protocol, counted by
//!
//! ```sh
//! code() { cat "$@" | grep -v '^\s*$' | grep -v '^\s*//'; }
//! code crates/augur-einsum/src/*.rs | wc -l
//! code crates/augur-einsum/src/*.rs | grep -cE 'Prophecy|History|prophecy|history|require|\.record\(|needs_gpu|gpu_(read|written|may_write|partial|full)|Flat|Pending|follow|predict|produced|\.last|after_bias|fused_bias|Epilogue|Next'
//! ```
//!
//! (and the same for `crates/augur-nn/src/*.rs` or single files).
//!
//! **einsum** (`augur-einsum`): 1,341 lines without the 112-line
//! interpreter runtime (`interp.rs`; 1,453 with it), 1,186 without the
//! 155-line C/CUDA runtime too (`runtime.rs`, which BuildIt's listing
//! leaves to a separate header), of which 53 deal with prophecies or the
//! history; the paper's C++ DSL: 608 and 25. The paper's 25 lines do not
//! keep tensors that a kernel writes only in part (or on some paths)
//! intact; the 21 lines that do (`grep -cE
//! 'may_write|partial|gpu_full|mark_fully_written'`) are most of the
//! difference. The rest is what the listing lacks: three element types and
//! operator impls for Rust (`term.rs`), the `einsum!` macro, shape errors
//! as data (`error.rs`, 102) and misuse errors, rank-0 tensors, OpenMP,
//! `+=`/`*=` that accumulate, freeing. The per-extraction state is an
//! `augur::dsl::State` whose tensor count and "fully overwritten" flags are
//! `dsl::Seen` fields (the kit is augur's: `stage/dsl.rs`, 152 lines). The
//! benchmark programs (`programs/einsum.rs`, 167) and the GPU experiment
//! (`bench/gpu/`, 310) are this crate's.
//!
//! **nn** (`augur-nn`): 526, of which the fusion protocol and the state
//! (`net.rs`) are 130 and 22 more in the layers call it; 57 deal with the
//! prophecy or the history. The paper's DSL: 161 and 48; ours adds 2-D
//! convolution, fully connected layers, bias add and its fusion, unrolling
//! and the modulo split, and shape errors as data (`error.rs`, 57).

use super::{first_stage, fusion, gpu, Ctx, Outcome};
use crate::Result;

/// Runs the experiment.
#[augur::staged]
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
#[augur::staged]
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
