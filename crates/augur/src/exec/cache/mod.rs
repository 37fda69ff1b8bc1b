//! The on-disk cache of compiled code: where it is, why its contents can be
//! trusted, and how it stays bounded.
//!
//! A library in the cache is code this process runs (its initialisers run
//! when it is loaded), so the cache is trusted only as far as nobody but its
//! user can write to it. What holds that:
//!
//! - **The directory is private.** By default it is per user:
//!   `$XDG_CACHE_HOME/augur`, else `~/.cache/augur` (the platform's user
//!   cache directory), created with mode 0700. Whatever directory is used
//!   (the default, the `AUGUR_CACHE` environment variable, or
//!   [`CompileOptions::cache_dir`]) must be owned by the current user and not
//!   writable by group or others, and every directory above it must be owned
//!   by the user or root and not writable by group or others unless it is
//!   sticky (as `/tmp` is): then nobody but the user and root can add,
//!   replace or rename anything in it. (A group that is the user's own
//!   private group, Debian's default, counts as the user.) A directory
//!   that fails is [`Error::Cache`], naming it and why. A symbolic link on
//!   the way to it must be the user's or root's; the path is resolved once
//!   and used resolved, so no link can be re-pointed later. Nothing is
//!   created under a directory that fails (root with another user's `HOME`
//!   leaves nothing behind), and what is created is created 0700, whatever
//!   the umask. With no home directory at all, the cache is `augur-UID` in
//!   the temp directory, made for the user alone.
//! - **Each entry is checked on the open file.** It is opened without
//!   following a symbolic link, must be a regular file owned by the user and
//!   not writable by group or others, and its bytes must hash (SHA-256) to
//!   the sum written beside it when this user's compiler built it. An entry
//!   that fails any of these (planted, truncated, replaced, a link) is not
//!   used: it is built again and replaces what was there.
//! - **The bytes checked are the bytes loaded.** A library is loaded from a
//!   fresh private copy of the checked bytes (created exclusively, mode
//!   0600), not from the entry's path, so nothing swapped in between the
//!   check and the load is ever run.
//! - **Temporaries are created exclusively** (`O_CREAT | O_EXCL`, which
//!   never follows a link), under names unique to the writer, and enter the
//!   cache by `rename`, so concurrent builds of the same code (parallel tests,
//!   two processes) never see each other's half-written files.
//! - **Keys are SHA-256** of everything that makes an entry, so nobody who
//!   chooses a program to compile (a staged interpreter's input) can make
//!   its key collide with another program's.
//! - **Installations run from** (nvcc and cuBLAS from pip) pass the same
//!   rule all the way down: every file and directory in them owned by the
//!   user or root and writable by nobody else; they are used resolved.
//!
//! The cache is bounded: [`Cache::limit`] bytes (1 GiB unless
//! `AUGUR_CACHE_LIMIT` or [`CompileOptions::cache_limit`] says otherwise),
//! kept by evicting the entries used least recently (a hit counts as a use);
//! an entry a process is writing or loading is left alone. A process checks
//! the bound when it first adds an entry and then after every sixteenth of
//! the limit it adds, so the cache exceeds it by at most that much per
//! process between checks. `augur cache` shows and cleans it.

mod entry;
mod evict;
mod trust;

pub(crate) use entry::{create_new, io_error, rename, temporary, Entry};
pub use evict::Usage;
pub(crate) use trust::check_installation;
#[cfg(feature = "cuda-install")]
pub(crate) use trust::make_private;

use super::compile::CompileOptions;
use crate::{Error, Result};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// The default [`Cache::limit`]: 1 GiB.
pub const DEFAULT_LIMIT: u64 = 1 << 30;

/// A cache directory that has been checked: see the [module
/// documentation](self) for what that means.
///
/// ```
/// use augur::exec::{Cache, CompileOptions};
///
/// let dir = std::env::temp_dir().join(format!("augur-doc-cache-{}", std::process::id()));
/// let opts = CompileOptions { cache_dir: Some(dir.clone()), ..CompileOptions::default() };
/// let cache = Cache::open(&opts).unwrap();
/// assert_eq!(cache.usage().unwrap().entries, 0);
/// # std::fs::remove_dir_all(&dir).unwrap();
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cache {
    dir: PathBuf,
    limit: u64,
}

impl Cache {
    /// The cache `opts` name ([`CompileOptions::cache_dir`], else the
    /// `AUGUR_CACHE` environment variable, else the user's cache directory),
    /// created if missing (mode 0700) and checked.
    ///
    /// Errors: [`Error::Cache`] if the directory cannot be created or
    /// trusted, or `AUGUR_CACHE_LIMIT` cannot be read.
    pub fn open(opts: &CompileOptions) -> Result<Cache> {
        let limit = opts.resolved_cache_limit()?;
        match opts.resolved_cache_dir() {
            Some(dir) => Cache::at(&dir, limit),
            None => Cache::at(&default_dir()?, limit),
        }
    }

    /// The cache in `dir` with `limit` bytes, created if missing (mode 0700)
    /// and checked.
    ///
    /// Errors: [`Error::Cache`] if it cannot be created or trusted.
    pub fn at(dir: &Path, limit: u64) -> Result<Cache> {
        let dir = trust::private_dir(dir)?;
        Ok(Cache { dir, limit })
    }

    /// The directory, resolved.
    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// The most bytes its entries may take.
    pub fn limit(&self) -> u64 {
        self.limit
    }

    /// How many entries there are and the bytes they take (subdirectories,
    /// such as an nvcc installation, are not counted).
    pub fn usage(&self) -> Result<Usage> {
        Ok(evict::scan(&self.dir)?.iter().map(|g| g.usage()).sum())
    }

    /// Removes every entry (and the einsum tuning results), and what they took.
    /// Other subdirectories (an nvcc installation) stay.
    pub fn clean(&self) -> Result<Usage> {
        let removed = evict::evict(&self.dir, 0)?;
        let tune = self.dir.join("einsum-tune");
        if tune.is_dir() {
            std::fs::remove_dir_all(&tune).map_err(|e| cache_error(&tune, e.to_string()))?;
        }
        Ok(removed)
    }

    /// Removes the entries used least recently until the rest take at most
    /// `limit` bytes; returns what was removed.
    pub fn evict_to(&self, limit: u64) -> Result<Usage> {
        evict::evict(&self.dir, limit)
    }

    /// Called after this process added `bytes` to the cache: checks the
    /// bound on the first addition and after each sixteenth of the limit
    /// (one count for the process, whatever cache it added to).
    fn added(&self, bytes: u64) {
        static SINCE_CHECK: AtomicU64 = AtomicU64::new(u64::MAX / 2);
        let since = SINCE_CHECK.fetch_add(bytes, Ordering::Relaxed) + bytes;
        if since >= (self.limit / 16).max(1) {
            SINCE_CHECK.store(0, Ordering::Relaxed);
            // The bound is housekeeping: a failed eviction costs disk, not
            // correctness, and must not fail the compile that triggered it.
            let _ = evict::evict(&self.dir, self.limit);
        }
    }
}

/// The user's cache directory for augur: `$XDG_CACHE_HOME/augur`, else
/// `~/.cache/augur` (the platform's cache directory elsewhere); with no home
/// directory, `augur-UID` in the temp directory, created for this user
/// alone (an error if somebody else made it first).
pub fn default_dir() -> Result<PathBuf> {
    if let Some(base) = dirs::cache_dir() {
        return Ok(base.join("augur"));
    }
    trust::temp_dir_of_user().map_err(|message| cache_error(&std::env::temp_dir(), message))
}

/// A cache key: SHA-256 over length-prefixed parts (so parts cannot run
/// together), its first 128 bits as 32 hex digits. A cryptographic hash,
/// so that nobody who chooses a program to compile can make its key
/// collide with another program's.
pub(crate) struct KeyHasher(sha2::Sha256);

impl KeyHasher {
    pub(crate) fn new() -> KeyHasher {
        KeyHasher(sha2::Digest::new())
    }

    pub(crate) fn part(&mut self, bytes: &[u8]) {
        sha2::Digest::update(&mut self.0, (bytes.len() as u64).to_le_bytes());
        sha2::Digest::update(&mut self.0, bytes);
    }

    pub(crate) fn finish(self) -> String {
        let digest = sha2::Digest::finalize(self.0);
        digest[..16].iter().map(|b| format!("{b:02x}")).collect()
    }
}

/// Reads a byte count: digits with an optional `K`, `M`, `G` or `T` (powers
/// of 1024), or `none` for no limit.
pub(crate) fn parse_limit(text: &str) -> Option<u64> {
    let text = text.trim();
    if text.eq_ignore_ascii_case("none") {
        return Some(u64::MAX);
    }
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (digits, unit) = text.split_at(split);
    let shift = match unit.to_ascii_uppercase().as_str() {
        "" | "B" => 0,
        "K" | "KB" | "KIB" => 10,
        "M" | "MB" | "MIB" => 20,
        "G" | "GB" | "GIB" => 30,
        "T" | "TB" | "TIB" => 40,
        _ => return None,
    };
    digits.parse::<u64>().ok()?.checked_mul(1 << shift)
}

/// [`Error::Cache`] for `path`.
pub(crate) fn cache_error(path: &Path, message: String) -> Error {
    Error::Cache {
        path: path.to_path_buf(),
        message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_read_with_units() {
        assert_eq!(parse_limit("123"), Some(123));
        assert_eq!(parse_limit("4K"), Some(4096));
        assert_eq!(parse_limit("512M"), Some(512 << 20));
        assert_eq!(parse_limit("2g"), Some(2 << 30));
        assert_eq!(parse_limit(" none "), Some(u64::MAX));
        assert_eq!(parse_limit("12 apples"), None);
        assert_eq!(parse_limit(""), None);
        assert_eq!(parse_limit("99999999999T"), None);
    }
}
