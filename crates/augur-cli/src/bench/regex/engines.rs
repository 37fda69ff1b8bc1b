//! PCRE2 (with its JIT), RE2 and Hyperscan, measured by a C++ harness
//! (`engines.cpp`) that the bench compiles with g++ against the libraries
//! whose headers it finds and runs once over the same haystack and
//! patterns. A library that is missing is named in the table's notes with
//! the package that provides it.

use crate::Result;
use std::collections::HashMap;
use std::path::Path;
use std::process::Command;

/// The harness's source.
const SOURCE: &str = include_str!("engines.cpp");

/// One library: its name in the tables, the macro that turns it on in the
/// harness, the header that says it is installed, what it links, and the
/// Debian package.
struct Library {
    engine: &'static str,
    define: &'static str,
    header: &'static str,
    link: &'static [&'static str],
    package: &'static str,
}

const LIBRARIES: &[Library] = &[
    Library {
        engine: "PCRE2-JIT",
        define: "HAVE_PCRE2",
        header: "#define PCRE2_CODE_UNIT_WIDTH 8\n#include <pcre2.h>",
        link: &["-lpcre2-8"],
        package: "libpcre2-dev",
    },
    Library {
        engine: "RE2",
        define: "HAVE_RE2",
        header: "#include <re2/re2.h>",
        link: &["-lre2"],
        package: "libre2-dev",
    },
    Library {
        engine: "Hyperscan",
        define: "HAVE_HS",
        header: "#include <hs/hs.h>",
        link: &["-lhs"],
        package: "libhyperscan-dev",
    },
];

/// The engines' names, in the tables' order.
pub const ENGINES: &[&str] = &["PCRE2-JIT", "RE2", "Hyperscan"];

/// What one engine did with one pattern: its results and best times per
/// mode (`count`, `spans`, `lines`, and `compile` with result 0), or its
/// error.
#[derive(Default, Debug)]
pub struct Outcome {
    /// mode → (result, nanoseconds).
    pub modes: HashMap<String, (i64, u64)>,
    /// The engine refused the pattern.
    pub error: Option<String>,
}

/// The harness's results: (pattern, engine) → outcome, and the notes on
/// what is missing.
pub struct Results {
    pub by: HashMap<(String, String), Outcome>,
    pub notes: Vec<String>,
}

/// Whether g++ compiles `code` (a header check).
fn compiles(dir: &Path, code: &str) -> bool {
    let src = dir.join("check.cpp");
    std::fs::write(&src, format!("{code}\nint main() {{ return 0; }}\n")).is_ok()
        && Command::new("g++")
            .args(["-fsyntax-only", "-std=c++17"])
            .arg(&src)
            .output()
            .map(|o| o.status.success())
            .unwrap_or(false)
}

/// Builds the harness in `dir` with the libraries found, runs it over
/// `hay` and `patterns` (name, pattern, Unicode), and reads its results.
pub fn run(
    dir: &Path,
    hay: &[u8],
    patterns: &[(&str, String, bool)],
    reps: usize,
) -> Result<Results> {
    let io = |e: std::io::Error| format!("the regex engines' harness in {}: {e}", dir.display());
    std::fs::create_dir_all(dir).map_err(io)?;
    let mut notes = Vec::new();
    let found: Vec<&Library> = LIBRARIES
        .iter()
        .filter(|l| {
            let ok = compiles(dir, l.header);
            if !ok {
                notes.push(format!(
                    "{} not measured: its headers are not installed (apt-get install {})",
                    l.engine, l.package
                ));
            }
            ok
        })
        .collect();
    let mut by = HashMap::new();
    if found.is_empty() {
        return Ok(Results { by, notes });
    }
    let src = dir.join("engines.cpp");
    let exe = dir.join("engines");
    std::fs::write(&src, SOURCE).map_err(io)?;
    let mut cc = Command::new("g++");
    cc.args(["-O2", "-std=c++17"]).arg(&src).arg("-o").arg(&exe);
    for l in &found {
        cc.arg(format!("-D{}", l.define));
    }
    for l in &found {
        cc.args(l.link);
    }
    let out = cc.output().map_err(io)?;
    if !out.status.success() {
        return Err(format!(
            "g++ failed on the regex engines' harness:\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
        .into());
    }
    let hay_path = dir.join("haystack.txt");
    let pat_path = dir.join("patterns.tsv");
    std::fs::write(&hay_path, hay).map_err(io)?;
    let rows: String = patterns
        .iter()
        .map(|(name, p, unicode)| format!("{name}\t{}\t{p}\n", if *unicode { "u" } else { "b" }))
        .collect();
    std::fs::write(&pat_path, rows).map_err(io)?;
    let out = Command::new(&exe)
        .arg(&hay_path)
        .arg(&pat_path)
        .arg(reps.to_string())
        .output()
        .map_err(io)?;
    if !out.status.success() {
        return Err(format!(
            "the regex engines' harness failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
        .into());
    }
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let f: Vec<&str> = line.split('\t').collect();
        let [pattern, engine, mode, result, ns] = f[..] else {
            return Err(format!("the regex engines' harness printed `{line}`").into());
        };
        let o: &mut Outcome = by.entry((pattern.into(), engine.into())).or_default();
        if mode == "error" {
            o.error = Some(result.into());
            continue;
        }
        let bad = || format!("the regex engines' harness printed `{line}`");
        let result: i64 = result.parse().map_err(|_| bad())?;
        let ns: u64 = ns.parse().map_err(|_| bad())?;
        o.modes.insert(mode.into(), (result, ns));
    }
    Ok(Results { by, notes })
}
