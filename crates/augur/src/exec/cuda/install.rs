//! Installing nvcc from NVIDIA's pip wheels (the `cuda-install` feature).
//!
//! Behind a feature because it downloads and runs code: a library that
//! generates CUDA should not fetch a compiler unless its user asked for it.
//! The `augur` command and this workspace's tests ask.

use super::{install_dir, installed_nvcc, missing, Nvcc, CUDA_VERSION, PIP_PACKAGES};
use crate::exec::cache;
use crate::Result;
use std::path::Path;
use std::process::Command;
use std::sync::Mutex;

impl Nvcc {
    /// Like [`find`](Nvcc::find), but if no `nvcc` is found, installs
    /// [`PIP_PACKAGES`] with `python3 -m pip install --target DIR` (a 125 MB
    /// download, 350 MB installed) and uses the `nvcc` there. `DIR` is
    /// [`install_dir`]: the `AUGUR_CUDA_HOME` environment variable, else
    /// `~/.cache/augur/cuda-13.5.37`. Concurrent callers are safe: pip
    /// installs into a private directory that is renamed to `DIR` when
    /// complete, and the first rename wins.
    ///
    /// Needs the `cuda-install` feature.
    ///
    /// Errors: [`Error::CompilerMissing`](crate::Error::CompilerMissing) if
    /// pip fails or installs no `nvcc`.
    pub fn find_or_install() -> Result<Nvcc> {
        static INSTALL: Mutex<()> = Mutex::new(());
        let found = Nvcc::find();
        // An explicit AUGUR_NVCC is not overridden by an install.
        if found.is_ok() || std::env::var_os("AUGUR_NVCC").is_some_and(|p| !p.is_empty()) {
            return found;
        }
        let _one_install_per_process = INSTALL.lock().unwrap_or_else(|e| e.into_inner());
        let dir = install_dir()?;
        if installed_nvcc(&dir)?.is_none() {
            let what = format!("nvcc {CUDA_VERSION}");
            pip_install(&dir, PIP_PACKAGES, &what, "350 MB")?;
        }
        match installed_nvcc(&dir)? {
            Some(path) => Nvcc::at(&path),
            None => Err(missing("nvcc", format!("no nvcc in {}", dir.display()))),
        }
    }
}

/// Installs the pip requirements `packages` (NVIDIA's wheels: `what`,
/// about `size` installed) into `dir`, through a private sibling directory
/// renamed to `dir` when complete, so concurrent callers are safe; says so
/// on standard error first. Nothing is done to a `dir` that exists. The
/// directory above `dir` is created if missing (mode 0700) and must be
/// private to this user, as a cache directory is
/// ([`Cache`](crate::exec::Cache)); what pip installed is made private
/// (no write permission for group or others) before it is renamed into
/// place.
///
/// Needs the `cuda-install` feature.
///
/// Errors: [`Error::CompilerMissing`](crate::Error::CompilerMissing) (named
/// after `what`) if pip cannot run or fails.
pub fn pip_install(dir: &Path, packages: &[&str], what: &str, size: &str) -> Result<()> {
    if dir.exists() {
        return Ok(());
    }
    let parent = dir.parent().unwrap_or(Path::new("."));
    let fail = |message| missing(what, message);
    // The parent is made and checked as a cache directory is (private to
    // this user, nothing created under somebody else's) and used resolved.
    let parent = cache::Cache::at(parent, cache::DEFAULT_LIMIT)
        .map_err(|e| fail(e.to_string()))?
        .path()
        .to_path_buf();
    let dir = parent.join(dir.file_name().unwrap_or(dir.as_os_str()));
    let tmp = cache::temporary(&dir);
    eprintln!(
        "augur: installing {what} with pip into {} ({size}, once)",
        dir.display()
    );
    let result = Command::new("python3")
        .args("-m pip install --quiet --no-cache-dir --no-input".split(' '))
        .args(["--disable-pip-version-check", "--target"])
        .arg(&tmp)
        .args(packages)
        .env("PIP_ROOT_USER_ACTION", "ignore")
        .output();
    let failure = match result {
        Err(e) => Some(format!("cannot run `python3 -m pip`: {e}")),
        Ok(out) if !out.status.success() => Some(format!(
            "`python3 -m pip install` failed ({}):\n{}{}",
            out.status,
            String::from_utf8_lossy(&out.stderr),
            String::from_utf8_lossy(&out.stdout)
        )),
        Ok(_) => None,
    };
    // pip made what it installed under the umask: make it private.
    let failure = failure.or_else(|| {
        cache::make_private(&tmp)
            .err()
            .map(|e| format!("cannot make {} private: {e}", tmp.display()))
    });
    if let Some(message) = failure {
        let _ = std::fs::remove_dir_all(&tmp);
        return Err(fail(message));
    }
    // Another process may have finished first: then its install stays. (If
    // `dir` is a non-empty directory of something else, no nvcc is found.)
    if std::fs::rename(&tmp, &dir).is_err() {
        let _ = std::fs::remove_dir_all(&tmp);
    }
    Ok(())
}
