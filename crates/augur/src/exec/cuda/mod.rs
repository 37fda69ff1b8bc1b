//! Checking and building generated CUDA with `nvcc`, on machines without a GPU.
//!
//! [`Nvcc::find`] finds a CUDA compiler: one named by `AUGUR_NVCC`, on
//! `PATH`, in `/usr/local/cuda`, or NVIDIA's pip wheels of it ([`PIP_PACKAGES`],
//! no GPU, driver or root needed) installed in [`install_dir`]. When none is
//! there, its error says how to install one. With the `cuda-install` feature
//! (off by default; the `augur` command and this workspace's tests turn it
//! on), `Nvcc::find_or_install` installs the wheels itself, once, with pip:
//! a library that only generates CUDA never downloads a compiler unasked.
//!
//! [`Nvcc::ptx`] compiles a `.cu` source to PTX, which checks it;
//! [`Nvcc::executable`] builds a program with the CUDA runtime linked
//! statically, so that it needs only the GPU driver (`libcuda.so`) on the
//! machine that runs it.
//!
//! As in [`compile`](mod@super::compile), outputs are cached under a hash of
//! everything that affects them, in the user's private [`Cache`], checked
//! there before they are used.

#[cfg(feature = "cuda-install")]
mod install;
#[cfg(feature = "cuda-install")]
pub use install::pip_install;

use super::cache::{self, io_error, rename, Cache};
use super::compile::CompileOptions;
use crate::{Error, Result};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The CUDA release of [`PIP_PACKAGES`], which names [`install_dir`].
pub const CUDA_VERSION: &str = "13.5.37";

/// The pip requirements of a CUDA compiler in [`install_dir`] (what
/// `Nvcc::find_or_install` installs): the compiler (which pulls in
/// `nvidia-nvvm` and `nvidia-cuda-crt`), the runtime of the same release
/// (headers, `libcudart_static.a`) and CCCL, whose `<nv/target>`
/// `<cooperative_groups.h>` includes.
pub const PIP_PACKAGES: &[&str] = &[
    "nvidia-cuda-nvcc==13.5.37",
    "nvidia-cuda-runtime==13.5.37",
    "nvidia-cuda-cccl==13.3.5.0.6",
];

/// Bumped whenever the cache layout or key changes, so old entries are ignored.
const CACHE_VERSION: &str = "augur-cuda-cache-2";

/// A CUDA compiler driver that runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Nvcc {
    path: PathBuf,
    version: String,
}

impl Nvcc {
    /// The `nvcc` executable.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Its version, as `nvcc --version` reports it (`13.5.37`).
    pub fn version(&self) -> &str {
        &self.version
    }

    /// Finds `nvcc`: the `AUGUR_NVCC` environment variable (which, when set,
    /// must name a working `nvcc`), else `nvcc` on `PATH`, else
    /// `/usr/local/cuda/bin/nvcc`, else the pip wheels in [`install_dir`].
    /// Installs nothing.
    ///
    /// Errors: [`Error::CompilerMissing`] if none of them runs, saying how
    /// to install one.
    pub fn find() -> Result<Nvcc> {
        if let Some(path) = std::env::var_os("AUGUR_NVCC").filter(|p| !p.is_empty()) {
            return Nvcc::at(Path::new(&path));
        }
        let path = std::env::var_os("PATH").unwrap_or_default();
        let found = std::env::split_paths(&path)
            .map(|dir| dir.join("nvcc"))
            .chain([PathBuf::from("/usr/local/cuda/bin/nvcc")])
            .filter(|p| p.is_file())
            .find_map(|p| Nvcc::at(&p).ok());
        if let Some(nvcc) = found {
            return Ok(nvcc);
        }
        let dir = install_dir()?;
        let installed = installed_nvcc(&dir)?.and_then(|p| Nvcc::at(&p).ok());
        installed.ok_or_else(|| not_found(&dir))
    }

    /// The `nvcc` at `path`, if `nvcc --version` runs.
    fn at(path: &Path) -> Result<Nvcc> {
        let fail = |message| missing(&path.display().to_string(), message);
        let out = Command::new(path).arg("--version").output();
        let out = out.map_err(|e| fail(e.to_string()))?;
        let text = String::from_utf8_lossy(&out.stdout);
        if !out.status.success() {
            return Err(fail(format!("`--version` failed ({}): {text}", out.status)));
        }
        // The last line but one reads "Cuda compilation tools, release 13.5, V13.5.37".
        let version = text
            .split_whitespace()
            .filter_map(|w| w.strip_prefix('V'))
            .find(|v| v.starts_with(|c: char| c.is_ascii_digit()))
            .unwrap_or("unknown");
        Ok(Nvcc {
            path: path.to_path_buf(),
            version: version.to_string(),
        })
    }

    /// Compiles `source` (a CUDA translation unit) for `arch` (such as
    /// `sm_80`) with `--ptx -std=c++17` and returns the PTX, from the cache
    /// ([`Cache::open`] with the default [`CompileOptions`]) when it is
    /// there. Grid-wide synchronisation (`this_grid().sync()`) needs no
    /// `-rdc=true` since CUDA 11, so the PTX is a whole program. Only a
    /// driver at least as new as nvcc loads it (PTX ISA 9.5 for nvcc 13.5;
    /// an R580 driver, CUDA 13.0, rejects it).
    ///
    /// nvcc picks its host compiler (`gcc` on `PATH`, else `NVCC_CCBIN`) and
    /// adds `NVCC_PREPEND_FLAGS` and `NVCC_APPEND_FLAGS` by itself.
    ///
    /// Errors: [`Error::Compile`] (naming the cached `.cu` file) if nvcc
    /// rejects the source, [`Error::CompilerMissing`] if it does not start,
    /// [`Error::Load`] if the cache cannot be written.
    pub fn ptx(&self, source: &str, arch: &str) -> Result<String> {
        let cache = Cache::open(&CompileOptions::default())?;
        self.ptx_in(&cache, source, arch).map(|(ptx, _)| ptx)
    }

    /// [`ptx`](Nvcc::ptx) with `cache`; also says whether it hit.
    fn ptx_in(&self, cache: &Cache, source: &str, arch: &str) -> Result<(String, bool)> {
        let flags = ["--ptx".into(), format!("-arch={arch}"), "-std=c++17".into()];
        let (entry, hit) = self.build(cache, source, &flags, "ptx")?;
        let ptx = String::from_utf8(entry.bytes).map_err(|e| Error::Compile {
            path: entry.path,
            output: format!("nvcc wrote PTX that is not UTF-8: {e}"),
        })?;
        Ok((ptx, hit))
    }

    /// Builds `source` into the executable `out` for `arch`, with `-std=c++17
    /// -O3 -cudart static` and, for `arch` = `sm_NN`, `-gencode
    /// arch=compute_NN,code=[sm_NN,compute_NN]`: machine code for `sm_NN`
    /// and PTX that newer GPUs compile when loading (another `arch`, such as
    /// `native`, is passed as `-arch`). The program needs only the GPU
    /// driver (CUDA 13.0, R580, or newer) at run time; a driver older than
    /// nvcc cannot compile the PTX, so the machine code must match the GPU. `extra_flags` come last (`-lcublas`, `-rdc=true`,
    /// `-DN=4`). The executable is cached like [`ptx`](Nvcc::ptx)'s output
    /// and copied to `out`.
    ///
    /// Errors: as for [`ptx`](Nvcc::ptx); [`Error::Load`] if `out` cannot
    /// be written.
    pub fn executable(
        &self,
        source: &str,
        arch: &str,
        out: &Path,
        extra_flags: &[&str],
    ) -> Result<()> {
        // The flags the unit's build comment names.
        let mut flags: Vec<String> = crate::codegen::c::build::NVCC_FLAGS
            .iter()
            .map(|f| f.to_string())
            .collect();
        match arch.strip_prefix("sm_") {
            Some(n) => flags.extend([
                "-gencode".into(),
                format!("arch=compute_{n},code=[sm_{n},compute_{n}]"),
            ]),
            None => flags.push(format!("-arch={arch}")),
        }
        flags.extend(["-cudart".into(), "static".into()]);
        flags.extend(extra_flags.iter().map(|f| f.to_string()));
        let cache = Cache::open(&CompileOptions::default())?;
        let (built, _) = self.build(&cache, source, &flags, "exe")?;
        // The checked bytes, not the entry's path, become the program.
        let tmp = cache::temporary(out);
        let written = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o755)
            .open(&tmp)
            .and_then(|mut f| f.write_all(&built.bytes));
        if let Err(e) = written {
            let _ = std::fs::remove_file(&tmp);
            return Err(io_error(&tmp, "cannot write", e));
        }
        rename(&tmp, out)
    }

    /// Runs `nvcc flags -o DIR/KEY.ext DIR/KEY.cu` unless that output is
    /// cached (and checks); returns the output and whether it was.
    fn build(
        &self,
        cache: &Cache,
        source: &str,
        flags: &[String],
        ext: &str,
    ) -> Result<(cache::Entry, bool)> {
        let mut h = cache::KeyHasher::new();
        let path = self.path.to_string_lossy();
        for part in [CACHE_VERSION, ext, &path, &self.version] {
            h.part(part.as_bytes());
        }
        // Environment variables that nvcc itself reads.
        for var in ["NVCC_CCBIN", "NVCC_PREPEND_FLAGS", "NVCC_APPEND_FLAGS"] {
            h.part(std::env::var_os(var).unwrap_or_default().as_encoded_bytes());
        }
        h.part(&(flags.len() as u64).to_le_bytes());
        flags.iter().for_each(|f| h.part(f.as_bytes()));
        h.part(source.as_bytes());
        let key = h.finish();
        if let Some(entry) = cache.find(&key, ext) {
            return Ok((entry, true));
        }
        let cu = cache.entry_path(&key, "cu");
        cache.write_new(&cu, source.as_bytes())?;
        let tmp = cache.temporary(&key, ext);
        let result = Command::new(&self.path)
            .args(flags)
            .arg("-o")
            .arg(&tmp)
            .arg(&cu)
            .output()
            .map_err(|e| missing(&self.path.display().to_string(), e.to_string()))?;
        if !result.status.success() {
            let _ = std::fs::remove_file(&tmp);
            let mut output = String::from_utf8_lossy(&result.stderr).into_owned();
            output.push_str(&String::from_utf8_lossy(&result.stdout));
            if output.trim().is_empty() {
                output = format!("nvcc failed ({}) without output", result.status);
            }
            return Err(Error::Compile { path: cu, output });
        }
        Ok((cache.put(&key, ext, &tmp)?, false))
    }
}

/// Where [`Nvcc::find`] looks for the pip wheels of [`PIP_PACKAGES`] (and
/// `Nvcc::find_or_install` installs them): the `AUGUR_CUDA_HOME`
/// environment variable, else `cuda-13.5.37` in the user's cache directory
/// ([`cache::default_dir`]: `~/.cache/augur`).
///
/// Errors: [`Error::Cache`] if there is no home directory and no private
/// directory can be made.
pub fn install_dir() -> Result<PathBuf> {
    if let Some(dir) = std::env::var_os("AUGUR_CUDA_HOME").filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    Ok(cache::default_dir()?.join(format!("cuda-{CUDA_VERSION}")))
}

/// Checks that the installation in `dir` (programs this process will run)
/// can be written only by this user or root, and returns it resolved, to be
/// used resolved: everything in it (not following links) is owned by one of
/// them and not writable by others, and so is every directory above it (or
/// it is sticky, as `/tmp` is), and no link on the way to it is somebody
/// else's. Walked once per process.
///
/// Errors: [`Error::CompilerMissing`] naming `dir`, why, and what to do.
pub fn check_installation(dir: &Path, what: &str) -> Result<PathBuf> {
    super::cache::check_installation(dir).map_err(|why| {
        missing(
            what,
            format!(
                "the installation in {} is not used: {why}. Anybody who can write there \
                 could run code as you; remove it, or name another directory only you or \
                 root can write to",
                dir.display()
            ),
        )
    })
}

/// The `nvcc` of a pip install in `dir` (resolved and checked: see
/// [`check_installation`]): `nvidia/cu13/bin/nvcc` for CUDA 13
/// (`nvidia/cuda_nvcc/bin/nvcc` for 12). Its `nvcc.profile` adds the
/// headers (`-I include`, `-isystem include/cccl`) and libraries.
fn installed_nvcc(dir: &Path) -> Result<Option<PathBuf>> {
    if !dir.exists() {
        return Ok(None);
    }
    let dir = check_installation(dir, "nvcc")?;
    let Ok(entries) = std::fs::read_dir(dir.join("nvidia")) else {
        return Ok(None);
    };
    Ok(entries
        .filter_map(|e| Some(e.ok()?.path().join("bin").join("nvcc")))
        .find(|p| p.is_file()))
}

/// The error of [`Nvcc::find`] when no `nvcc` runs: where it looked and
/// how to install one where it looks last.
fn not_found(dir: &Path) -> Error {
    missing(
        "nvcc",
        format!(
            "not in AUGUR_NVCC, PATH, /usr/local/cuda/bin or {dir}; install the CUDA \
             toolkit, or NVIDIA's pip wheels of nvcc with \
             `python3 -m pip install --target {dir} {packages}` \
             (what Nvcc::find_or_install does with augur's `cuda-install` feature)",
            dir = dir.display(),
            packages = PIP_PACKAGES.join(" ")
        ),
    )
}

fn missing(compiler: &str, message: String) -> Error {
    let compiler = compiler.to_string();
    Error::CompilerMissing { compiler, message }
}

#[cfg(test)]
mod tests {
    use super::super::compile::test_support::TestDir;
    use super::*;

    /// The cache in a test's directory.
    fn cache(dir: &TestDir) -> Cache {
        Cache::at(dir.path(), cache::DEFAULT_LIMIT).unwrap()
    }

    /// Prints 1049600 on a GPU.
    const GRID_SYNC: &str = r#"#include <cstdio>
#include <cuda_runtime.h>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void step(int *x, int n) {
    cg::grid_group grid = cg::this_grid();
    int i = (int)grid.thread_rank();
    if (i < n) x[i] += 1;
    grid.sync();
    int v = i < n ? x[(i + 1) % n] : 0;
    grid.sync();
    if (i < n) x[i] += v;
}
int main() {
    static int h[1024];
    int n = 1024, *d = 0;
    for (int i = 0; i < n; i++) h[i] = i;
    if (cudaMalloc(&d, sizeof h) != cudaSuccess) { printf("no device\n"); return 1; }
    cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice);
    void *args[] = {&d, &n};
    cudaError_t e = cudaLaunchCooperativeKernel((void *)step, dim3(4), dim3(256), args, 0, 0);
    if (e == cudaSuccess) e = cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    if (e != cudaSuccess) { printf("error: %s\n", cudaGetErrorString(e)); return 1; }
    long sum = 0;
    for (int i = 0; i < n; i++) sum += h[i];
    printf("checksum %ld\n", sum);
    return 0;
}
"#;

    /// This workspace's tests turn on `cuda-install` (augur's
    /// dev-dependency on itself), so they find or install nvcc.
    fn nvcc() -> Nvcc {
        Nvcc::find_or_install().unwrap_or_else(|e| panic!("{e}"))
    }

    /// An installation is run from only if nobody else can write any of
    /// it, and is used resolved.
    #[test]
    fn an_installation_others_can_write_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = TestDir::new("cuda-install-check");
        let install = dir.path().join("wheels");
        let bin = install.join("nvidia").join("cu13").join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::write(bin.join("nvcc"), "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&bin, PermissionsExt::from_mode(0o777)).unwrap();
        let e = installed_nvcc(&install).unwrap_err().to_string();
        assert!(e.contains("bin is writable by others"), "{e}");
        std::fs::set_permissions(&bin, PermissionsExt::from_mode(0o755)).unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&install, &link).unwrap();
        let nvcc = installed_nvcc(&link).unwrap().unwrap();
        assert_eq!(
            nvcc,
            install.canonicalize().unwrap().join("nvidia/cu13/bin/nvcc")
        );
    }

    #[test]
    fn a_missing_nvcc_says_how_to_install_one() {
        let e = not_found(Path::new("/opt/wheels")).to_string();
        let pip = "python3 -m pip install --target /opt/wheels nvidia-cuda-nvcc==13.5.37 ";
        assert!(
            e.contains(pip) && e.contains("`cuda-install` feature"),
            "{e}"
        );
        assert!(!e.contains("set CC"), "{e}");
    }

    #[test]
    fn grid_sync_kernel_compiles_to_ptx() {
        let dir = TestDir::new("cuda-ptx");
        let nvcc = nvcc();
        assert!(nvcc.path().is_file() && nvcc.version().starts_with(char::is_numeric));
        let (ptx, hit) = nvcc.ptx_in(&cache(&dir), GRID_SYNC, "sm_80").unwrap();
        assert!(!hit);
        assert!(ptx.contains(".target sm_80"), "{ptx}");
        assert!(ptx.contains(".entry _Z4stepPii("), "{ptx}");
        assert!(!ptx.contains(".extern"), "not self-contained: {ptx}");
    }

    #[test]
    fn syntax_error_names_the_line() {
        let dir = TestDir::new("cuda-syntax");
        let src = "__global__ void k(int *x) {\n    x[0] = 1 +;\n}\n";
        match nvcc().ptx_in(&cache(&dir), src, "sm_80").unwrap_err() {
            Error::Compile { path, output } => {
                assert!(path.exists() && path.extension().unwrap() == "cu");
                assert!(output.contains(".cu(2): error"), "{output}");
            }
            e => panic!("unexpected {e:?}"),
        }
        let files = std::fs::read_dir(dir.path()).unwrap().count();
        assert_eq!(files, 1, "only the .cu file remains");
    }

    #[test]
    fn executable_links_the_runtime_statically() {
        use std::os::unix::fs::PermissionsExt;
        let dir = TestDir::new("cuda-exe");
        let out = dir.path().join("grid_sync");
        nvcc().executable(GRID_SYNC, "sm_90", &out, &[]).unwrap();
        let meta = std::fs::metadata(&out).unwrap();
        assert!(meta.is_file() && meta.permissions().mode() & 0o111 != 0);
        let ldd = Command::new("ldd").arg(&out).output().unwrap();
        let libs = String::from_utf8_lossy(&ldd.stdout);
        assert!(ldd.status.success() && libs.contains("libc.so"), "{libs}");
        // libcudart is linked in; the driver, libcuda, is opened at run time.
        assert!(!libs.contains("libcuda"), "{libs}");
    }

    #[test]
    fn second_ptx_comes_from_the_cache() {
        let dir = TestDir::new("cuda-cache");
        let (nvcc, src) = (
            nvcc(),
            "__global__ void k(float *x) { x[threadIdx.x] *= 2; }\n",
        );
        let (first, hit) = nvcc.ptx_in(&cache(&dir), src, "sm_80").unwrap();
        assert!(!hit);
        let ptx_times = || -> Vec<_> {
            let files = std::fs::read_dir(dir.path())
                .unwrap()
                .map(|e| e.unwrap().path());
            let ptx = files.filter(|p| p.extension().unwrap() == "ptx");
            ptx.map(|p| std::fs::metadata(p).unwrap().modified().unwrap())
                .collect()
        };
        let before = ptx_times();
        assert_eq!(before.len(), 1);
        let (second, hit) = nvcc.ptx_in(&cache(&dir), src, "sm_80").unwrap();
        assert!(hit && first == second, "nvcc ran again");
        assert_eq!(before, ptx_times());
        let (_, hit) = nvcc.ptx_in(&cache(&dir), src, "sm_90").unwrap();
        assert!(!hit, "another arch is another entry");
    }
}
