//! Who may write where: the checks that make a directory or a file safe to
//! take code from.
//!
//! A directory is private when it is owned by the current (effective) user
//! and not writable by others, and every directory above it is owned by the
//! user or root and not writable by others unless it is sticky (in a sticky
//! directory, such as `/tmp`, only an entry's owner may rename or remove
//! it). Then only the user and root can change what the directory holds:
//! the rule OpenSSH applies to `~/.ssh`. "Others" are group and world,
//! except that a group that is the user's own private group (named after
//! the user, with no other member: Debian's default under umask 002) is the
//! user. A path given with symbolic links in it is refused where a link is
//! owned by somebody else (who could re-point it); the path is then resolved
//! once and used resolved.

use super::cache_error;
use crate::Result;
use std::collections::HashSet;
use std::fs::{DirBuilder, File, Metadata};
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

/// The sticky bit of a mode.
const STICKY: u32 = 0o1000;
/// Write permission for the group.
const GROUP_WRITE: u32 = 0o020;
/// Write permission for others.
const WORLD_WRITE: u32 = 0o002;

/// The current effective user id.
pub(super) fn me() -> u32 {
    rustix::process::geteuid().as_raw()
}

/// `dir`, created if missing (mode 0700, and so are missing directories
/// above it, once what exists above is checked), resolved, and checked to
/// be private.
pub(super) fn private_dir(dir: &Path) -> Result<PathBuf> {
    let fail = |why: String| cache_error(dir, untrusted(&why));
    let given = std::path::absolute(dir).map_err(|e| cache_error(dir, e.to_string()))?;
    check_links(&given).map_err(fail)?;
    if !given.exists() {
        // Nothing is created under a directory that is not ours to use.
        if let Some(existing) = given.ancestors().find(|a| a.exists()) {
            let existing = existing.canonicalize().map_err(|e| fail(e.to_string()))?;
            check_above(&existing, true).map_err(fail)?;
        }
        let made = DirBuilder::new().recursive(true).mode(0o700).create(&given);
        made.map_err(|e| cache_error(dir, format!("cannot create it: {e}")))?;
    }
    let resolved = given
        .canonicalize()
        .map_err(|e| cache_error(dir, format!("cannot resolve it: {e}")))?;
    check_private(&resolved).map_err(fail)?;
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
    check_above(dir, false)
}

/// Checks the directories above `path` (and `path` itself if `itself`):
/// owned by the user or root, not writable by others unless sticky.
fn check_above(path: &Path, itself: bool) -> std::result::Result<(), String> {
    for above in path.ancestors().skip(usize::from(!itself)) {
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
        if shared_write(&meta) && meta.mode() & STICKY == 0 {
            return Err(format!(
                "{} above it is writable by others and not sticky (mode {:o}), \
                 so they could replace it",
                above.display(),
                meta.mode() & 0o7777
            ));
        }
    }
    Ok(())
}

/// Checks the symbolic links on the way to the absolute path `path`, as
/// given: each must be owned by the user or root.
fn check_links(path: &Path) -> std::result::Result<(), String> {
    let mut prefix = PathBuf::new();
    for part in path.components() {
        prefix.push(part);
        let Ok(meta) = std::fs::symlink_metadata(&prefix) else {
            // What does not exist yet is created, not followed.
            break;
        };
        if meta.file_type().is_symlink() && meta.uid() != me() && meta.uid() != 0 {
            return Err(format!(
                "the link {} on the way to it is owned by uid {}, who could re-point it",
                prefix.display(),
                meta.uid()
            ));
        }
    }
    Ok(())
}

/// Checks an open file: a regular file, owned by the user, not writable by
/// others. Returns its size.
pub(super) fn check_file(file: &File) -> std::result::Result<u64, String> {
    let meta = file.metadata().map_err(|e| e.to_string())?;
    if !meta.is_file() {
        return Err("not a regular file".into());
    }
    owned_by_me(&meta, "the file")?;
    not_shared(&meta, "the file")?;
    Ok(meta.len())
}

/// Checks an installation this process runs programs from (nvcc, cuBLAS)
/// and returns it resolved: every directory above it as for a cache, and
/// everything in it (not following links) owned by the user or root and
/// not writable by others. Each installation is walked once per process.
pub(crate) fn check_installation(dir: &Path) -> std::result::Result<PathBuf, String> {
    static CHECKED: Mutex<Option<HashSet<PathBuf>>> = Mutex::new(None);
    let given = std::path::absolute(dir).map_err(|e| e.to_string())?;
    check_links(&given)?;
    let dir = given.canonicalize().map_err(|e| e.to_string())?;
    let mut checked = CHECKED.lock().unwrap_or_else(|e| e.into_inner());
    if checked.get_or_insert_with(HashSet::new).contains(&dir) {
        return Ok(dir);
    }
    check_above(&dir, false)?;
    check_tree(&dir)?;
    checked.get_or_insert_with(HashSet::new).insert(dir.clone());
    Ok(dir)
}

/// Checks `path` and, for a directory, everything in it (links are checked
/// as links, not followed).
fn check_tree(path: &Path) -> std::result::Result<(), String> {
    let meta = std::fs::symlink_metadata(path).map_err(|e| e.to_string())?;
    if meta.uid() != me() && meta.uid() != 0 {
        return Err(format!("{} is owned by uid {}", path.display(), meta.uid()));
    }
    if meta.file_type().is_symlink() {
        return Ok(());
    }
    if shared_write(&meta) {
        return Err(format!(
            "{} is writable by others (mode {:o})",
            path.display(),
            meta.mode() & 0o7777
        ));
    }
    if meta.is_dir() {
        let entries = std::fs::read_dir(path).map_err(|e| e.to_string())?;
        for entry in entries {
            check_tree(&entry.map_err(|e| e.to_string())?.path())?;
        }
    }
    Ok(())
}

/// Removes write permission for group and others from everything under
/// `path` (not following links): what pip installed under the umask.
#[cfg(feature = "cuda-install")]
pub(crate) fn make_private(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let meta = std::fs::symlink_metadata(path)?;
    if meta.file_type().is_symlink() {
        return Ok(());
    }
    let mode = meta.mode() & 0o7777;
    if mode & (GROUP_WRITE | WORLD_WRITE) != 0 {
        let private = std::fs::Permissions::from_mode(mode & !(GROUP_WRITE | WORLD_WRITE));
        std::fs::set_permissions(path, private)?;
    }
    if meta.is_dir() {
        for entry in std::fs::read_dir(path)? {
            make_private(&entry?.path())?;
        }
    }
    Ok(())
}

/// `$TMPDIR/augur-UID`: the user's cache when there is no home directory,
/// created exclusively (mode 0700) or, if there, checked.
pub(super) fn temp_dir_of_user() -> std::result::Result<PathBuf, String> {
    let dir = std::env::temp_dir().join(format!("augur-{}", me()));
    match DirBuilder::new().mode(0o700).create(&dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(format!("cannot create {}: {e}", dir.display())),
    }
    let resolved = dir.canonicalize().map_err(|e| e.to_string())?;
    check_private(&resolved).map_err(|why| format!("{}: {why}", dir.display()))?;
    Ok(resolved)
}

fn metadata(path: &Path) -> std::result::Result<Metadata, String> {
    std::fs::metadata(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}

/// Whether somebody other than the owner may write (see the module docs
/// for the user's private group).
fn shared_write(meta: &Metadata) -> bool {
    meta.mode() & WORLD_WRITE != 0
        || (meta.mode() & GROUP_WRITE != 0 && !is_private_group(meta.gid()))
}

fn not_shared(meta: &Metadata, what: &str) -> std::result::Result<(), String> {
    if !shared_write(meta) {
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

/// True if `gid` is the user's private group: the user's primary group,
/// named after the user, with no other member (listed in `/etc/group` or
/// having it as their primary group in `/etc/passwd`). Anything these files
/// do not show plainly counts as shared.
fn is_private_group(gid: u32) -> bool {
    static PRIVATE: OnceLock<Option<u32>> = OnceLock::new();
    *PRIVATE.get_or_init(private_group) == Some(gid)
}

fn private_group() -> Option<u32> {
    let passwd = std::fs::read_to_string("/etc/passwd").ok()?;
    let group = std::fs::read_to_string("/etc/group").ok()?;
    private_group_in(&passwd, &group, me())
}

/// The private group of user `uid` by the texts of `/etc/passwd` and
/// `/etc/group`.
fn private_group_in(passwd: &str, group: &str, uid: u32) -> Option<u32> {
    let fields = |line: &str| line.split(':').map(str::to_string).collect::<Vec<_>>();
    let users: Vec<Vec<String>> = passwd.lines().map(fields).collect();
    let uid = uid.to_string();
    let mine = users.iter().find(|u| u.len() > 3 && u[2] == uid)?;
    let (name, gid) = (&mine[0], &mine[3]);
    let entry = group
        .lines()
        .map(fields)
        .find(|g| g.len() > 3 && &g[2] == gid)?;
    let members_ok = entry[3].split(',').all(|m| m.is_empty() || m == name);
    let alone = users
        .iter()
        .all(|u| u.len() <= 3 || &u[3] != gid || &u[0] == name);
    (entry[0] == *name && members_ok && alone).then(|| gid.parse().ok())?
}

#[cfg(test)]
mod tests {
    use super::private_group_in;

    const PASSWD: &str = "root:x:0:0::/root:/bin/sh\nann:x:1000:1000::/home/ann:/bin/sh\n\
                          bob:x:1001:100::/home/bob:/bin/sh\ncid:x:1002:100::/home/cid:/bin/sh\n";

    #[test]
    fn a_group_named_after_its_only_member_is_private() {
        let group = "root:x:0:\nann:x:1000:\nusers:x:100:\n";
        assert_eq!(private_group_in(PASSWD, group, 1000), Some(1000));
        assert_eq!(private_group_in(PASSWD, group, 0), Some(0));
        // Shared as primary group, and not named after the user.
        assert_eq!(private_group_in(PASSWD, group, 1001), None);
    }

    #[test]
    fn a_group_with_another_member_is_shared() {
        let listed = "ann:x:1000:ann,bob\n";
        assert_eq!(private_group_in(PASSWD, listed, 1000), None);
        let primary = format!("{PASSWD}dan:x:1003:1000::/home/dan:/bin/sh\n");
        assert_eq!(private_group_in(&primary, "ann:x:1000:\n", 1000), None);
        assert_eq!(
            private_group_in(PASSWD, "ann:x:1000:ann\n", 1000),
            Some(1000)
        );
        assert_eq!(private_group_in(PASSWD, "", 1000), None);
    }
}
