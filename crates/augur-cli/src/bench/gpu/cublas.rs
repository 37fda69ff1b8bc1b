//! cuBLAS for the GPU tables' side-by-side rows: a CUDA toolkit's, or
//! NVIDIA's `nvidia-cublas` wheel of nvcc's CUDA release, installed with
//! pip on first use into [`install_dir`] (as nvcc is); and the nvcc flags
//! that build the experiment's program with it.

use crate::Result;
use augur::exec::cuda::{pip_install, CUDA_VERSION};
use std::path::{Path, PathBuf};

/// The pip requirement: cuBLAS of nvcc's CUDA release (13.5).
pub const PACKAGE: &str = "nvidia-cublas==13.5.1.27";

/// Where the wheel goes: `AUGUR_CUBLAS_HOME`, else
/// `~/.cache/augur/cublas-13.5.1.27` beside nvcc's install.
pub fn install_dir() -> Result<PathBuf> {
    if let Some(dir) = std::env::var_os("AUGUR_CUBLAS_HOME").filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    let nvcc = augur::exec::cuda::install_dir()?;
    let version = PACKAGE.rsplit("==").next().unwrap_or("any");
    Ok(nvcc.with_file_name(format!("cublas-{version}")))
}

/// The library and headers of the install in `dir`
/// (`nvidia/cu13/{lib,include}`), if there.
fn installed(dir: &Path) -> Option<(PathBuf, PathBuf)> {
    let major = CUDA_VERSION.split('.').next().unwrap_or("13");
    let root = dir.join("nvidia").join(format!("cu{major}"));
    let lib = root.join("lib").join(format!("libcublas.so.{major}"));
    let include = root.join("include");
    (lib.is_file() && include.join("cublas_v2.h").is_file()).then_some((lib, include))
}

/// The library and headers of a CUDA toolkit's cuBLAS (`$CUDA_HOME`, else
/// `/usr/local/cuda`: `lib64/libcublas.so`, `include/cublas_v2.h`), if
/// there.
fn toolkit() -> Option<(PathBuf, PathBuf)> {
    let home = std::env::var_os("CUDA_HOME").filter(|d| !d.is_empty());
    let root = home.map_or_else(|| PathBuf::from("/usr/local/cuda"), PathBuf::from);
    let lib = root.join("lib64").join("libcublas.so");
    let include = root.join("include");
    (lib.exists() && include.join("cublas_v2.h").is_file()).then_some((lib, include))
}

/// The nvcc flags that build the experiment's program with cuBLAS
/// (`-DAUGUR_CUBLAS`, its headers, the library by path with an rpath to
/// its directory): the wheel in [`install_dir`], else a CUDA toolkit's,
/// else the wheel installed now (about 550 MB).
pub fn nvcc_flags() -> Result<Vec<String>> {
    let mut dir = install_dir()?;
    if dir.exists() {
        // Used resolved, as checked.
        dir = augur::exec::cuda::check_installation(&dir, "cuBLAS")?;
    }
    let (lib, include) = match installed(&dir).or_else(toolkit) {
        Some(found) => found,
        None => {
            pip_install(&dir, &[PACKAGE], "cuBLAS", "550 MB")?;
            dir = augur::exec::cuda::check_installation(&dir, "cuBLAS")?;
            installed(&dir).ok_or_else(|| {
                format!("no cuBLAS in {} after installing {PACKAGE}", dir.display())
            })?
        }
    };
    let libdir = lib.parent().unwrap_or(Path::new("."));
    Ok(vec![
        "-DAUGUR_CUBLAS".into(),
        format!("-I{}", include.display()),
        "-Xlinker".into(),
        lib.display().to_string(),
        "-Xlinker".into(),
        format!("-rpath={}", libdir.display()),
    ])
}
