//! Entries: finding one and checking it on the open file, putting one in
//! with its sum, writing temporaries exclusively, and loading a library
//! from the bytes that were checked.
//!
//! An entry `KEY.EXT` (32 hex digits of a hash of everything that made it,
//! then what it is: `so`, `ptx`, ...) has its SHA-256 beside it in
//! `KEY.EXT.sum`, written by the process that built it before the entry was
//! renamed into place. The sum's modification time is the entry's last use.

use super::{cache_error, trust, Cache};
use crate::{Error, Result};
use sha2::{Digest, Sha256};
use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// An entry that passed every check: its path and its bytes.
pub(crate) struct Entry {
    /// Where it is in the cache.
    pub(crate) path: PathBuf,
    /// What was checked.
    pub(crate) bytes: Vec<u8>,
}

impl Cache {
    /// The path of the entry `key.ext`.
    pub(crate) fn entry_path(&self, key: &str, ext: &str) -> PathBuf {
        self.dir.join(format!("{key}.{ext}"))
    }

    /// The entry `key.ext`, if it is there and passes every check (module
    /// docs); a hit marks it used.
    pub(crate) fn find(&self, key: &str, ext: &str) -> Option<Entry> {
        let path = self.entry_path(key, ext);
        let (_, bytes) = read_checked(&path).ok()?;
        let sum_path = sum_path(&path);
        let (sum_file, sum) = read_checked(&sum_path).ok()?;
        if sum.trim_ascii() != hex_sha256(&bytes).as_bytes() {
            return None;
        }
        // Least recently used is least recently touched.
        let _ = sum_file.set_modified(std::time::SystemTime::now());
        Some(Entry { path, bytes })
    }

    /// Puts `built` (a file this process made in the cache under a
    /// temporary name) in as `key.ext`, with its sum; returns the entry as
    /// it was checked.
    pub(crate) fn put(&self, key: &str, ext: &str, built: &Path) -> Result<Entry> {
        let path = self.entry_path(key, ext);
        let result = (|| {
            // The compiler made it with the umask's mode: make it private.
            let file = open_no_follow(built).map_err(|e| io_error(built, "cannot open", e))?;
            file.set_permissions(std::fs::Permissions::from_mode(0o600))
                .map_err(|e| io_error(built, "cannot make private", e))?;
            let bytes = read_all(file, built)?;
            self.write_new(&sum_path(&path), hex_sha256(&bytes).as_bytes())?;
            rename(built, &path)?;
            Ok(bytes)
        })();
        let bytes = result.inspect_err(|_| {
            let _ = std::fs::remove_file(built);
        })?;
        self.added(bytes.len() as u64);
        Ok(Entry { path, bytes })
    }

    /// Writes `path` (a file in this cache's directory) through a temporary
    /// created exclusively beside it (`O_EXCL`, mode 0600), renamed into
    /// place, so that a reader sees either nothing or all of it.
    ///
    /// Errors: [`Error::Cache`] if it cannot be written.
    pub fn write_new(&self, path: &Path, bytes: &[u8]) -> Result<()> {
        let tmp = temporary(path);
        let mut file = create_new(&tmp).map_err(|e| io_error(&tmp, "cannot create", e))?;
        if let Err(e) = file.write_all(bytes) {
            let _ = std::fs::remove_file(&tmp);
            return Err(io_error(&tmp, "cannot write", e));
        }
        rename(&tmp, path)
    }

    /// A name for a temporary beside `key.ext`, unique to this process,
    /// thread and call (nothing is created).
    pub(crate) fn temporary(&self, key: &str, ext: &str) -> PathBuf {
        temporary(&self.entry_path(key, ext))
    }

    /// Loads the library `entry` from a private copy of its checked bytes,
    /// which is removed once loaded.
    pub(crate) fn load(&self, entry: &Entry) -> Result<libloading::Library> {
        let copy = temporary(&entry.path).with_extension("load");
        let written = create_new(&copy).and_then(|mut f| f.write_all(&entry.bytes));
        if let Err(e) = written {
            let _ = std::fs::remove_file(&copy);
            return Err(io_error(&copy, "cannot write", e));
        }
        // SAFETY: loading runs the library's initialisers. Its bytes are
        // the ones checked against the sum its builder wrote in a directory
        // only this user (and root) can write to: code compiled by `compile`
        // from generated C plus the user's `extra_c`, whose initialisers (if
        // any) are the user's responsibility. The copy was created
        // exclusively in that directory.
        let lib = unsafe { libloading::Library::new(&copy) };
        let _ = std::fs::remove_file(&copy);
        lib.map_err(|e| Error::Load {
            path: entry.path.clone(),
            message: e.to_string(),
        })
    }
}

/// The sum file of the entry at `path`.
fn sum_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".sum");
    PathBuf::from(name)
}

/// Opens `path` without following a link, checks the open file, reads it.
fn read_checked(path: &Path) -> std::result::Result<(File, Vec<u8>), String> {
    let file = open_no_follow(path).map_err(|e| e.to_string())?;
    trust::check_file(&file)?;
    let mut bytes = Vec::new();
    (&file).read_to_end(&mut bytes).map_err(|e| e.to_string())?;
    Ok((file, bytes))
}

fn read_all(mut file: File, path: &Path) -> Result<Vec<u8>> {
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)
        .map_err(|e| io_error(path, "cannot read", e))?;
    Ok(bytes)
}

fn open_no_follow(path: &Path) -> std::io::Result<File> {
    OpenOptions::new()
        .read(true)
        .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
        .open(path)
}

/// Creates `path` exclusively (`O_EXCL`: never through a link), mode 0600.
pub(crate) fn create_new(path: &Path) -> std::io::Result<File> {
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
}

fn hex_sha256(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// `path` with a suffix unique to this process, thread and call, ending in
/// `.tmp` (eviction removes stale ones).
pub(crate) fn temporary(path: &Path) -> PathBuf {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let thread = format!("{:?}", std::thread::current().id());
    let thread: String = thread.chars().filter(char::is_ascii_digit).collect();
    let mut name = path.as_os_str().to_owned();
    name.push(format!(".{}-{thread}-{n}.tmp", std::process::id()));
    PathBuf::from(name)
}

/// Moves a finished file into place (the temporary goes on failure).
pub(crate) fn rename(from: &Path, to: &Path) -> Result<()> {
    std::fs::rename(from, to).map_err(|e| {
        let _ = std::fs::remove_file(from);
        io_error(to, "cannot move into the cache", e)
    })
}

pub(crate) fn io_error(path: &Path, what: &str, e: std::io::Error) -> Error {
    cache_error(path, format!("{what}: {e}"))
}
