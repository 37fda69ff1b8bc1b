//! Who may write where: the checks that make a directory or a file safe to
//! take code from.
//!
//! A directory is private when it is owned by the current (effective) user
//! and not writable by group or others, and every directory above it is
//! owned by the user or root and not writable by group or others unless it
//! is sticky (in a sticky directory, such as `/tmp`, only an entry's owner
//! may rename or remove it). Then only the user and root can change what the
//! directory holds: the rule OpenSSH applies to `~/.ssh`.

use super::cache_error;
use crate::Result;
use std::fs::{DirBuilder, File, Metadata};
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Path, PathBuf};

/// The sticky bit of a mode.
const STICKY: u32 = 0o1000;
/// Write permission for group and others.
const SHARED_WRITE: u32 = 0o022;

/// The current effective user id.
pub(super) fn me() -> u32 {
    rustix::process::geteuid().as_raw()
}

/// `dir`, created if missing (mode 0700, its parents as usual), resolved,
/// and checked to be private.
pub(super) fn private_dir(dir: &Path) -> Result<PathBuf> {
    if !dir.exists() {
        if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent)
                .map_err(|e| cache_error(dir, format!("cannot create its parent: {e}")))?;
        }
        match DirBuilder::new().mode(0o700).create(dir) {
            Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => {
                return Err(cache_error(dir, format!("cannot create it: {e}")));
            }
            _ => {}
        }
    }
    let resolved = dir
        .canonicalize()
        .map_err(|e| cache_error(dir, format!("cannot resolve it: {e}")))?;
    check_private(&resolved).map_err(|why| cache_error(dir, untrusted(&why)))?;
    Ok(resolved)
}

/// The message of a directory that failed: why, and what to do.
fn untrusted(why: &str) -> String {
    format!(
        "not used as a cache: {why}. Anybody who can write there could make this process \
         load their code. Use a directory only you can write to (AUGUR_CACHE or \
         CompileOptions::cache_dir), or leave both unset for ~/.cache/augur"
    )
}

/// Checks that the resolved directory `dir` is private (module docs).
pub(super) fn check_private(dir: &Path) -> std::result::Result<(), String> {
    let meta = metadata(dir)?;
    if !meta.is_dir() {
        return Err("it is not a directory".into());
    }
    owned_by_me(&meta, "it")?;
    not_shared(&meta, "it")?;
    check_ancestors(dir)
}

/// Checks the directories above `path`: owned by the user or root, not
/// writable by group or others unless sticky.
pub(super) fn check_ancestors(path: &Path) -> std::result::Result<(), String> {
    for above in path.ancestors().skip(1) {
        if above.as_os_str().is_empty() {
            continue;
        }
        let meta = metadata(above)?;
        if meta.uid() != me() && meta.uid() != 0 {
            return Err(format!(
                "{} above it is owned by uid {}, who could replace it",
                above.display(),
                meta.uid()
            ));
        }
        if meta.mode() & SHARED_WRITE != 0 && meta.mode() & STICKY == 0 {
            return Err(format!(
                "{} above it is writable by group or others and not sticky (mode {:o}), \
                 so they could replace it",
                above.display(),
                meta.mode() & 0o7777
            ));
        }
    }
    Ok(())
}

/// Checks an open file: a regular file, owned by the user, not writable by
/// group or others. Returns its size.
pub(super) fn check_file(file: &File) -> std::result::Result<u64, String> {
    let meta = file.metadata().map_err(|e| e.to_string())?;
    if !meta.is_file() {
        return Err("not a regular file".into());
    }
    owned_by_me(&meta, "the file")?;
    not_shared(&meta, "the file")?;
    Ok(meta.len())
}

/// Checks a directory that holds programs this process runs (an nvcc
/// installation): owned by the user or root, not writable by group or
/// others, and the directories above it as for a cache.
pub(crate) fn check_installation(dir: &Path) -> std::result::Result<(), String> {
    let dir = dir.canonicalize().map_err(|e| e.to_string())?;
    let meta = metadata(&dir)?;
    if meta.uid() != me() && meta.uid() != 0 {
        return Err(format!("it is owned by uid {}", meta.uid()));
    }
    not_shared(&meta, "it")?;
    check_ancestors(&dir)
}

/// A new directory in `parent`, made for this process alone (mode 0700,
/// created exclusively under a fresh name), and checked.
pub(super) fn fresh_private_dir(parent: &Path) -> std::result::Result<PathBuf, String> {
    for attempt in 0..100u32 {
        let name = format!("augur-{}-{}-{attempt}", me(), std::process::id());
        let dir = parent.join(name);
        match DirBuilder::new().mode(0o700).create(&dir) {
            Ok(()) => {
                let dir = dir.canonicalize().map_err(|e| e.to_string())?;
                check_private(&dir)?;
                return Ok(dir);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(format!("cannot create a private directory: {e}")),
        }
    }
    Err("no fresh name for a private directory".into())
}

fn metadata(path: &Path) -> std::result::Result<Metadata, String> {
    std::fs::metadata(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}

fn not_shared(meta: &Metadata, what: &str) -> std::result::Result<(), String> {
    if meta.mode() & SHARED_WRITE == 0 {
        return Ok(());
    }
    Err(format!(
        "{what} is writable by group or others (mode {:o})",
        meta.mode() & 0o7777
    ))
}

fn owned_by_me(meta: &Metadata, what: &str) -> std::result::Result<(), String> {
    if meta.uid() == me() {
        return Ok(());
    }
    Err(format!(
        "{what} is owned by uid {}, not by this user (uid {})",
        meta.uid(),
        me()
    ))
}
