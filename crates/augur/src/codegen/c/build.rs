//! What a generated unit needs from its compiler, decided from its IR.
//!
//! One function, [`needs`], reads it off the functions of a unit: whether
//! their pragmas are OpenMP's, whether they call `<math.h>` functions,
//! which local headers they include. The C and CUDA writers print it as the
//! build comment every unit starts with ([`BuildNeeds::c_header`],
//! [`BuildNeeds::cuda_header`]), and the compiler driver adds the same flags
//! when augur builds the unit itself
//! ([`CompileOptions::with_needs`](crate::exec::CompileOptions::with_needs)),
//! so the line a unit shows and the line augur runs cannot drift apart.
//!
//! ```
//! #[augur::staged]
//! fn main() -> augur::Result<()> {
//!     use augur::codegen::c::build::{needs, BuildNeeds, OpenMp};
//!     use augur::{Builder, Dyn};
//!
//!     let ex = Builder::new().extract("neg", |x: Dyn<i32>| -x)?;
//!     let n = needs(&[ex.ir()]);
//!     assert_eq!(n.openmp, OpenMp::None);
//!     assert!(ex.c_code().starts_with(&n.c_header()));
//!     assert_eq!(n.c_object_line(), "cc -std=c99 -O2 -fwrapv -c unit.c");
//!     // A unit with `omp parallel for` pragmas:
//!     let omp = BuildNeeds { openmp: OpenMp::Parallel, ..n };
//!     assert_eq!(omp.c_object_line(), "cc -std=c99 -O2 -fwrapv -fopenmp -c unit.c");
//!     Ok(())
//! }
//! ```

use crate::ir::{Annotation, Block, Function};
use std::collections::BTreeSet;

/// The flags every C unit is built with: C99 (`_Pragma`, `restrict`,
/// declarations anywhere), optimized, and `-fwrapv`: signed arithmetic
/// wraps, as the IR (and so its interpreter) defines it.
/// [`DEFAULT_FLAGS`](crate::exec::compile::DEFAULT_FLAGS) holds them.
pub const C_FLAGS: [&str; 3] = ["-std=c99", "-O2", "-fwrapv"];

/// The flags every CUDA unit is built with (what
/// [`Nvcc::executable`](crate::exec::cuda::Nvcc::executable) passes too).
pub const NVCC_FLAGS: [&str; 2] = ["-std=c++17", "-O3"];

/// The file name the build lines give the unit.
pub const UNIT: &str = "unit";

/// How a unit uses OpenMP.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub enum OpenMp {
    /// No `omp` pragma.
    #[default]
    None,
    /// Only `omp simd` (and `omp declare simd`) pragmas: hints that
    /// `-fopenmp-simd` reads, without OpenMP's runtime.
    Simd,
    /// Other `omp` pragmas (`omp parallel for`): `-fopenmp` and its runtime.
    Parallel,
}

/// What a unit needs beyond a C99 compiler and the standard headers.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BuildNeeds {
    /// Its OpenMP pragmas.
    pub openmp: OpenMp,
    /// Whether it calls `<math.h>` functions (linked with `-lm`).
    pub libm: bool,
    /// Headers it includes as `"name.h"`: the user's, found on the include
    /// path (`-I DIR`), sorted.
    pub local_headers: Vec<String>,
    /// The functions it defines, in order.
    pub functions: Vec<String>,
}

/// What the unit of `fs` needs.
pub fn needs(fs: &[&Function]) -> BuildNeeds {
    let mut n = BuildNeeds {
        functions: fs.iter().map(|f| f.name.clone()).collect(),
        ..BuildNeeds::default()
    };
    let mut local = BTreeSet::new();
    for f in fs {
        n.openmp = n.openmp.max(openmp_in(&f.body));
        let headers = f
            .externs
            .iter()
            .filter_map(|(_, d)| d.header.as_deref())
            .chain(
                super::writer::opaque_types(f)
                    .into_iter()
                    .filter_map(|o| o.header.as_deref()),
            );
        for h in headers {
            let bare = h.trim_matches(['<', '>', '"']);
            n.libm |= bare == "math.h";
            if h.starts_with('"') {
                local.insert(h.to_string());
            }
        }
    }
    n.local_headers = local.into_iter().collect();
    n
}

/// The strongest OpenMP use of the pragmas in `b`.
fn openmp_in(b: &Block) -> OpenMp {
    let mut most = OpenMp::None;
    for s in b {
        for a in &s.annotations {
            match a {
                Annotation::Pragma(p) => most = most.max(pragma_openmp(p)),
                // `augur::parallel_for`: printed as `omp parallel for`.
                Annotation::Parallel(_) => most = OpenMp::Parallel,
                _ => {}
            }
        }
        for inner in s.kind.blocks() {
            most = most.max(openmp_in(inner));
        }
    }
    most
}

/// What the pragma `p` (the text after `#pragma`) asks of OpenMP.
fn pragma_openmp(p: &str) -> OpenMp {
    let mut words = p.split_whitespace();
    if words.next() != Some("omp") {
        return OpenMp::None;
    }
    let directive: Vec<&str> = words
        .take(2)
        .map(|w| w.split('(').next().unwrap_or(w))
        .collect();
    match directive.as_slice() {
        ["simd", ..] | ["declare", "simd"] => OpenMp::Simd,
        _ => OpenMp::Parallel,
    }
}

impl BuildNeeds {
    /// The compile flags a C unit needs beyond [`C_FLAGS`]: `-fopenmp`, or
    /// `-fopenmp-simd` for `simd` hints alone.
    pub fn compile_flags(&self) -> Vec<&'static str> {
        match self.openmp {
            OpenMp::None => vec![],
            OpenMp::Simd => vec!["-fopenmp-simd"],
            OpenMp::Parallel => vec!["-fopenmp"],
        }
    }

    /// The flags a shared library of the unit needs after its sources:
    /// `-lm` for `<math.h>` functions, and under `-fopenmp`
    /// `-Wl,-z,nodelete`: OpenMP's worker threads outlive any call, so a
    /// library that pulled in its runtime must never be unloaded under them.
    pub fn library_flags(&self) -> Vec<&'static str> {
        let mut out = vec![];
        if self.libm {
            out.push("-lm");
        }
        if self.openmp == OpenMp::Parallel {
            out.push("-Wl,-z,nodelete");
        }
        out
    }

    /// Whether `flags` already give what `flag` (one of
    /// [`compile_flags`](BuildNeeds::compile_flags) or
    /// [`library_flags`](BuildNeeds::library_flags)) gives.
    pub fn satisfied(flag: &str, flags: &[String]) -> bool {
        let has = |f: &str| flags.iter().any(|g| g == f);
        match flag {
            "-fopenmp-simd" => has("-fopenmp-simd") || has("-fopenmp"),
            f => has(f),
        }
    }

    /// The object build line: `cc -std=c99 -O2 -fwrapv [-fopenmp] -c unit.c`.
    pub fn c_object_line(&self) -> String {
        let mut words = vec!["cc"];
        words.extend(C_FLAGS);
        words.extend(self.compile_flags());
        words.extend(["-c", "unit.c"]);
        words.join(" ")
    }

    /// The shared library line:
    /// `cc ... -fPIC -shared -o unit.so unit.c [-lm] [-Wl,-z,nodelete]`.
    pub fn c_library_line(&self) -> String {
        let mut words = vec!["cc"];
        words.extend(C_FLAGS);
        words.extend(self.compile_flags());
        words.extend(["-fPIC", "-shared", "-o", "unit.so", "unit.c"]);
        words.extend(self.library_flags());
        words.join(" ")
    }

    /// Why each flag is there, as sentences (flags of `-I` included).
    fn reasons(&self, cuda: bool) -> Vec<String> {
        let mut out = vec![];
        if !cuda {
            out.push("-fwrapv: signed arithmetic wraps, as the IR defines it".to_string());
        }
        match self.openmp {
            OpenMp::None => {}
            OpenMp::Simd => out.push(
                "-fopenmp-simd: the `omp simd` hints (no OpenMP runtime; without it \
                 -Wall warns of unknown pragmas)"
                    .to_string(),
            ),
            OpenMp::Parallel => out.push(
                "-fopenmp: the `omp` pragmas run loops on several threads (without it \
                 they are unknown pragmas to -Wall)"
                    .to_string(),
            ),
        }
        if !cuda && self.libm {
            out.push("-lm: the <math.h> functions".to_string());
        }
        if !cuda && self.openmp == OpenMp::Parallel {
            out.push(
                "-Wl,-z,nodelete: OpenMP's threads outlive a call, so the library must \
                 stay loaded"
                    .to_string(),
            );
        }
        for h in &self.local_headers {
            out.push(format!("{h} is the user's: add -I with its directory"));
        }
        out
    }

    /// The comment a C unit starts with: the object and library build
    /// lines (`unit.c` is the unit's file), and what the flags are for.
    pub fn c_header(&self) -> String {
        let mut out = format!(
            "/* C99 generated by augur from {}.\n * build:   {}\n * library: {}\n",
            self.names(),
            self.c_object_line(),
            self.c_library_line()
        );
        push_reasons(&mut out, " * ", &self.reasons(false));
        out.push_str(" */\n");
        out
    }

    /// The nvcc line of a CUDA unit:
    /// `nvcc -std=c++17 -O3 -arch=native [-Xcompiler -fopenmp] -c unit.cu`.
    pub fn cuda_object_line(&self) -> String {
        let mut words = vec!["nvcc"];
        words.extend(NVCC_FLAGS);
        words.push("-arch=native");
        for f in self.compile_flags() {
            words.extend(["-Xcompiler", f]);
        }
        words.extend(["-c", "unit.cu"]);
        words.join(" ")
    }

    /// The comment lines a CUDA unit starts with (after its first line):
    /// the nvcc line, and what `-arch` is.
    pub fn cuda_header(&self) -> String {
        let mut out = format!("// build: {}\n", self.cuda_object_line());
        let mut reasons = vec![
            "-arch=native: for this machine's GPU; elsewhere name one (-arch=sm_90: H100, H200)"
                .to_string(),
        ];
        reasons.extend(self.reasons(true));
        push_reasons(&mut out, "// ", &reasons);
        out
    }

    /// `` `f` `` or `` `f`, `g` ``.
    fn names(&self) -> String {
        let quoted: Vec<String> = self.functions.iter().map(|f| format!("`{f}`")).collect();
        quoted.join(", ")
    }
}

/// The sentences of `reasons` joined by `; `, wrapped at 96 columns, each
/// line after `prefix`; a full stop at the end.
fn push_reasons(out: &mut String, prefix: &str, reasons: &[String]) {
    if reasons.is_empty() {
        return;
    }
    let text = format!("{}.", reasons.join("; "));
    let mut line = String::new();
    for word in text.split(' ') {
        if !line.is_empty() && prefix.len() + line.len() + 1 + word.len() > 96 {
            out.push_str(prefix);
            out.push_str(&line);
            out.push('\n');
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    out.push_str(prefix);
    out.push_str(&line);
    out.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pragmas_and_their_openmp() {
        assert_eq!(pragma_openmp("omp parallel for"), OpenMp::Parallel);
        assert_eq!(
            pragma_openmp("omp simd safelen(1) simdlen(1)"),
            OpenMp::Simd
        );
        assert_eq!(pragma_openmp("omp simd(x)"), OpenMp::Simd);
        assert_eq!(pragma_openmp("omp declare simd"), OpenMp::Simd);
        assert_eq!(pragma_openmp("omp  for"), OpenMp::Parallel);
        assert_eq!(pragma_openmp("GCC ivdep"), OpenMp::None);
        assert_eq!(pragma_openmp("ompx"), OpenMp::None);
    }

    #[test]
    fn flags_and_lines() {
        let plain = BuildNeeds {
            functions: vec!["f".into()],
            ..BuildNeeds::default()
        };
        assert_eq!(plain.c_object_line(), "cc -std=c99 -O2 -fwrapv -c unit.c");
        assert_eq!(
            plain.c_library_line(),
            "cc -std=c99 -O2 -fwrapv -fPIC -shared -o unit.so unit.c"
        );
        assert_eq!(
            plain.c_header(),
            "/* C99 generated by augur from `f`.\n\
             \x20* build:   cc -std=c99 -O2 -fwrapv -c unit.c\n\
             \x20* library: cc -std=c99 -O2 -fwrapv -fPIC -shared -o unit.so unit.c\n\
             \x20* -fwrapv: signed arithmetic wraps, as the IR defines it.\n\
             \x20*/\n"
        );
        let omp = BuildNeeds {
            openmp: OpenMp::Parallel,
            libm: true,
            ..plain.clone()
        };
        assert_eq!(
            omp.c_library_line(),
            "cc -std=c99 -O2 -fwrapv -fopenmp -fPIC -shared -o unit.so unit.c -lm -Wl,-z,nodelete"
        );
        assert_eq!(
            omp.cuda_object_line(),
            "nvcc -std=c++17 -O3 -arch=native -Xcompiler -fopenmp -c unit.cu"
        );
        for line in omp.c_header().lines().chain(omp.cuda_header().lines()) {
            assert!(line.len() <= 100, "{line}");
        }
        let flags = |fs: &[&str]| fs.iter().map(|f| f.to_string()).collect::<Vec<_>>();
        assert!(BuildNeeds::satisfied(
            "-fopenmp-simd",
            &flags(&["-O2", "-fopenmp"])
        ));
        assert!(!BuildNeeds::satisfied(
            "-fopenmp",
            &flags(&["-fopenmp-simd"])
        ));
    }

    /// The flags every unit gets are augur's own defaults, and the header's
    /// nvcc flags are what `Nvcc::executable` passes.
    #[test]
    fn base_flags_are_the_drivers() {
        let defaults = crate::exec::compile::DEFAULT_FLAGS;
        for f in C_FLAGS {
            assert!(defaults.contains(&f), "{f} is not in DEFAULT_FLAGS");
        }
        for f in ["-fPIC", "-shared"] {
            assert!(defaults.contains(&f), "{f} is not in DEFAULT_FLAGS");
        }
    }
}
