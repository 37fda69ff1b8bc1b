//! Turning an extracted einsum function into runnable code: the CPU
//! version (optionally OpenMP), the CPU-simulated GPU version, the CUDA
//! source.

use crate::runtime::{cuda_prelude, sim_c, Counters};
use crate::runtime_jit;
use augur::exec::compile::{Backend, CompileOptions};
use augur::{Compiled, Extracted, Result};

/// A compiled einsum function with the runtime linked in.
#[derive(Clone, Debug)]
pub struct Program<S> {
    compiled: Compiled<S>,
}

impl<S: Copy> Program<S> {
    /// The function pointer (see [`Compiled::get`]).
    pub fn get(&self) -> S {
        self.compiled.get()
    }

    /// The runtime's counters on this thread since the last [`reset`](Program::reset).
    /// (The JIT's runtime keeps one set per thread for all JIT-compiled programs.)
    pub fn counters(&self) -> Result<Counters> {
        match self.compiled.library() {
            Some(lib) => Counters::read(lib),
            None => Ok(Counters::from_array(runtime_jit::stats())),
        }
    }

    /// Zeroes the runtime's counters on this thread.
    pub fn reset(&self) -> Result<()> {
        match self.compiled.library() {
            Some(lib) => Counters::reset(lib),
            None => {
                runtime_jit::reset();
                Ok(())
            }
        }
    }

    /// The CPU version of `ex` (its GPU kernels simulated) compiled with
    /// `opts`, which must link the runtime: start from [`options`].
    pub fn compile(ex: &Extracted<S>, opts: &CompileOptions) -> Result<Program<S>> {
        Ok(Program {
            compiled: ex.simulated()?.compile_with(opts)?,
        })
    }

    /// The loaded C library, when a C compiler built it (not the JIT).
    pub(crate) fn library(&self) -> Option<&augur::exec::Library> {
        self.compiled.library()
    }

    /// The backend that compiled it.
    pub fn backend(&self) -> Backend {
        self.compiled.backend()
    }
}

/// Compile options that link the C runtime, optimize for this machine
/// (`-O3 -march=native -fopenmp-simd`: the blocked schedules' register
/// tiles become vector code), plus `-fopenmp` when asked; and register the runtime's
/// Rust twin for the JIT (which ignores the flags and runs OpenMP loops on
/// one thread).
pub fn options(openmp: bool) -> CompileOptions {
    let mut opts = runtime_jit::register(CompileOptions {
        extra_c: vec![sim_c()],
        ..CompileOptions::default()
    });
    opts.flags.push("-O3".to_string());
    opts.flags.push("-march=native".to_string());
    // Products and sums fuse into FMAs (as C compilers do outside ISO
    // mode); results differ from separate roundings only when the product
    // is inexact.
    opts.flags.push("-ffp-contract=fast".to_string());
    // The register tiles' `omp simd` hints (`tile::REGISTER_TILE_LOOP`).
    opts.flags.push("-fopenmp-simd".to_string());
    if openmp {
        opts.flags.push("-fopenmp".to_string());
        // libgomp's worker threads outlive any call: a library that pulled
        // it in must never be unloaded under them.
        opts.flags.push("-Wl,-z,nodelete".to_string());
    }
    opts
}

/// The CPU version (OpenMP when asked). A program with `run_on_gpu`
/// kernels gets their CPU simulation, as from [`compile_simulated`].
pub fn compile_cpu<S: Copy>(ex: &Extracted<S>, openmp: bool) -> Result<Program<S>> {
    compile_cpu_with(ex, openmp, Backend::Auto)
}

/// [`compile_cpu`] with the given backend.
pub fn compile_cpu_with<S: Copy>(
    ex: &Extracted<S>,
    openmp: bool,
    backend: Backend,
) -> Result<Program<S>> {
    Program::compile(ex, &options(openmp).with_backend(backend))
}

/// The CPU-simulated GPU version: kernels run as loops phase by phase,
/// device memory is host memory, every transfer is counted
/// ([`Program::counters`]).
pub fn compile_simulated<S: Copy>(ex: &Extracted<S>) -> Result<Program<S>> {
    compile_simulated_with(ex, Backend::Auto)
}

/// [`compile_simulated`] with the given backend.
pub fn compile_simulated_with<S: Copy>(ex: &Extracted<S>, backend: Backend) -> Result<Program<S>> {
    Program::compile(ex, &options(false).with_backend(backend))
}

/// The C of the simulated version (for reading; [`compile_simulated`] builds it).
pub fn simulated_c<S: Copy>(ex: &Extracted<S>) -> Result<String> {
    Ok(ex.simulated()?.c_code())
}

/// The CUDA translation unit, runtime included: build it with
/// `nvcc -arch=sm_XX` (see [`augur::exec::cuda::Nvcc`]).
pub fn cuda_source<S: Copy>(ex: &Extracted<S>) -> Result<String> {
    ex.cuda_code(&cuda_prelude())
}
