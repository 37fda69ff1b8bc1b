//! The refactoring check: with `AUGUR_DUMP_DIR` set, every function an
//! extraction finishes is appended, as IR text, C, and for GPU programs
//! CUDA and the CPU simulation, to a file in that folder named after the
//! thread (a test's name under the test harness; a thread a DSL starts for
//! its stagings has a file of its own, named as it names the thread:
//! augur-regex's are `<caller>.is_match` and `<caller>.rfind`, so each file
//! keeps one thread's deterministic order). Dumps of a test suite
//! taken before and after a change that should not change behaviour must be
//! byte-identical (`diff -r`); unset, this costs one cached lookup.

use crate::ir::{Block, Function, StmtKind};
use std::io::Write;
use std::path::PathBuf;
use std::sync::OnceLock;

/// Appends `func` to this thread's dump file, if `AUGUR_DUMP_DIR` is set.
pub(crate) fn function(func: &Function) {
    static DIR: OnceLock<Option<PathBuf>> = OnceLock::new();
    let Some(dir) = DIR.get_or_init(|| std::env::var_os("AUGUR_DUMP_DIR").map(PathBuf::from))
    else {
        return;
    };
    let mut text = format!("=== {}\n{func}\n--- C\n", func.name);
    text += &crate::codegen::c::write_function(func);
    if has_launch(&func.body) {
        text += "\n--- CUDA\n";
        match crate::codegen::cuda::write_cuda(func, "") {
            Ok(cuda) => text += &cuda,
            Err(e) => text += &format!("error: {e}"),
        }
        text += "\n--- simulated\n";
        match crate::codegen::cuda::simulate(func) {
            Ok(sim) => text += &format!("{sim}\n{}", crate::codegen::c::write_function(&sim)),
            Err(e) => text += &format!("error: {e}"),
        }
    }
    text.push('\n');
    // The test binary (without cargo's hash) and the test's name.
    let exe = std::env::current_exe().ok();
    let exe = exe
        .as_ref()
        .and_then(|p| p.file_stem())
        .and_then(|s| s.to_str());
    let exe = exe.map_or("unknown", |s| {
        s.rsplit_once('-').map_or(s, |(stem, _)| stem)
    });
    let thread = std::thread::current();
    let file: String = format!("{exe}.{}", thread.name().unwrap_or("unnamed"))
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let written = std::fs::create_dir_all(dir).and_then(|()| {
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(dir.join(file))?
            .write_all(text.as_bytes())
    });
    if let Err(e) = written {
        panic!("AUGUR_DUMP_DIR={}: {e}", dir.display());
    }
}

fn has_launch(b: &Block) -> bool {
    b.iter()
        .any(|s| matches!(s.kind, StmtKind::Launch(_)) || s.kind.blocks().any(has_launch))
}
