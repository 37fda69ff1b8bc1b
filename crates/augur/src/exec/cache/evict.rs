//! Keeping the cache bounded: its entries grouped by key, each group's last
//! use, and removing the groups used least recently.
//!
//! Every file the cache writes at its top level is named after a key (32 hex
//! digits) and belongs to that key's group: the library, its sum, the C it
//! was compiled from, temporaries. A group's last use is the newest
//! modification time among its files (a hit touches the sum). Files that are
//! not named so, and subdirectories (an nvcc installation, tuning results),
//! are not the cache's and are left alone.

use super::cache_error;
use crate::Result;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// A temporary older than this was left by a process that stopped.
const STALE: Duration = Duration::from_secs(3600);

/// Entries and the bytes they take.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Usage {
    /// How many entries (a key's library, its sum and its sources are one).
    pub entries: usize,
    /// Their files' sizes, together.
    pub bytes: u64,
}

impl std::iter::Sum for Usage {
    fn sum<I: Iterator<Item = Usage>>(iter: I) -> Usage {
        iter.fold(Usage::default(), |a, b| Usage {
            entries: a.entries + b.entries,
            bytes: a.bytes + b.bytes,
        })
    }
}

/// One key's files.
pub(super) struct Group {
    files: Vec<PathBuf>,
    bytes: u64,
    last_use: SystemTime,
    /// A process is writing or loading it (a temporary younger than
    /// [`STALE`] is there): not evicted.
    busy: bool,
}

impl Group {
    pub(super) fn usage(&self) -> Usage {
        Usage {
            entries: 1,
            bytes: self.bytes,
        }
    }
}

/// The groups in `dir`, least recently used first; stale temporaries are
/// removed on the way.
pub(super) fn scan(dir: &Path) -> Result<Vec<Group>> {
    let listing = std::fs::read_dir(dir).map_err(|e| cache_error(dir, e.to_string()))?;
    let mut groups: BTreeMap<String, Group> = BTreeMap::new();
    let now = SystemTime::now();
    for item in listing.flatten() {
        let name = item.file_name().to_string_lossy().into_owned();
        let Some(key) = key_of(&name) else { continue };
        // Not followed: a link is counted (and removed) as itself.
        let Ok(meta) = item.path().symlink_metadata() else {
            continue;
        };
        if meta.is_dir() {
            continue;
        }
        let modified = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
        let temporary = [".tmp", ".load", ".log"].iter().any(|t| name.ends_with(t));
        let stale = now.duration_since(modified).is_ok_and(|age| age > STALE);
        if temporary && stale {
            let _ = std::fs::remove_file(item.path());
            continue;
        }
        let group = groups.entry(key.to_string()).or_insert(Group {
            files: Vec::new(),
            bytes: 0,
            last_use: SystemTime::UNIX_EPOCH,
            busy: false,
        });
        group.busy |= temporary;
        group.files.push(item.path());
        group.bytes += meta.len();
        group.last_use = group.last_use.max(modified);
    }
    let mut groups: Vec<Group> = groups.into_values().collect();
    groups.sort_by_key(|g| g.last_use);
    Ok(groups)
}

/// Removes the groups used least recently until the rest take at most
/// `limit` bytes (groups a process is writing stay); returns what was
/// removed.
pub(super) fn evict(dir: &Path, limit: u64) -> Result<Usage> {
    let groups = scan(dir)?;
    let mut total: u64 = groups.iter().map(|g| g.bytes).sum();
    let mut removed = Usage::default();
    for group in groups.iter().filter(|g| !g.busy) {
        if total <= limit {
            break;
        }
        // A process that has a library loaded keeps its mapping; one about
        // to load it reads the bytes it checked, not the path.
        for file in &group.files {
            let _ = std::fs::remove_file(file);
        }
        total -= group.bytes;
        removed = [removed, group.usage()].into_iter().sum();
    }
    Ok(removed)
}

/// The key a cache file's name starts with: 32 hex digits, then `.` or `_`.
fn key_of(name: &str) -> Option<&str> {
    let key = name.get(..32)?;
    let next = name[32..].chars().next()?;
    (key.bytes().all(|b| b.is_ascii_hexdigit()) && matches!(next, '.' | '_')).then_some(key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_32_hex_digits_then_a_dot_or_underscore() {
        let key = "0123456789abcdef0123456789abcdef";
        assert_eq!(key_of(&format!("{key}.so")), Some(key));
        assert_eq!(key_of(&format!("{key}_extra0.c")), Some(key));
        assert_eq!(key_of(&format!("{key}.so.12-1-0.tmp")), Some(key));
        assert_eq!(key_of(key), None);
        assert_eq!(key_of("einsum-tune"), None);
        assert_eq!(key_of(&format!("{}g.so", &key[..31])), None);
    }
}
