//! The compile cache on a shared machine: what somebody else left in it is
//! never run, whatever it is and wherever it is.
//!
//! Each attack plants a library whose constructor writes a marker file and
//! whose `add` answers 42, with a sum that matches it, where augur would
//! look for the library of `ADD`. Where the planted entry passes every check
//! but the one under test, the test also shows that without that check it
//! would have run, so each test can fail.

use augur::exec::{compile, Cache, CompileOptions};
use augur::Error;
use sha2::{Digest, Sha256};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

const ADD: &str = "#include <stdint.h>\nint32_t add(int32_t a, int32_t b) { return a + b; }\n";

/// A fresh directory under the temp directory, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir =
            std::env::temp_dir().join(format!("augur-cache-test-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::set_permissions(&dir, PermissionsExt::from_mode(0o700)).unwrap();
        Scratch(dir)
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::set_permissions(&self.0, PermissionsExt::from_mode(0o700));
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn opts(dir: &Path) -> CompileOptions {
    CompileOptions {
        cache_dir: Some(dir.to_path_buf()),
        ..CompileOptions::default()
    }
}

/// Compiles `ADD` with the cache in `dir` and calls `add(2, 3)`; says
/// whether the library came from the cache.
fn add_2_3(dir: &Path) -> augur::Result<(i32, bool)> {
    let lib = compile(ADD, &opts(dir))?;
    // SAFETY: `add` is `int32_t add(int32_t, int32_t)` in ADD and in the
    // planted library.
    let add: extern "C" fn(i32, i32) -> i32 = unsafe { lib.symbol("add") }?;
    Ok((add(2, 3), lib.cache_hit()))
}

/// The one file in `dir` whose name ends in `end`.
fn entry(dir: &Path, end: &str) -> PathBuf {
    let found: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(end))
        .collect();
    assert_eq!(found.len(), 1, "{found:?}");
    found[0].clone()
}

/// A planted library: its constructor writes `marker`; its `add` answers 42.
fn planted(dir: &Path, marker: &Path) -> PathBuf {
    let src = dir.join("planted.c");
    let text = format!(
        "#include <stdio.h>\n#include <stdint.h>\n\
         __attribute__((constructor)) static void planted(void) {{\n\
           FILE *f = fopen(\"{}\", \"w\"); if (f) {{ fputs(\"ran\", f); fclose(f); }}\n}}\n\
         int32_t add(int32_t a, int32_t b) {{ return 42; }}\n",
        marker.display()
    );
    std::fs::write(&src, text).unwrap();
    let out = dir.join("planted.so");
    let status = Command::new("cc")
        .args(["-shared", "-fPIC", "-o"])
        .arg(&out)
        .arg(&src)
        .status()
        .unwrap();
    assert!(status.success());
    out
}

/// Puts the planted library in place of `dir`'s library of `ADD`, with a
/// sum that matches it: only checks beyond the sum can stop it.
fn plant(dir: &Path, planted: &Path) -> PathBuf {
    let lib = entry(dir, ".so");
    std::fs::copy(planted, &lib).unwrap();
    std::fs::set_permissions(&lib, PermissionsExt::from_mode(0o600)).unwrap();
    let bytes = std::fs::read(&lib).unwrap();
    let sum: String = Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    std::fs::write(entry(dir, ".so.sum"), sum).unwrap();
    lib
}

/// An attack's setting: a scratch area with the planted library and a
/// marker path, and a cache directory in it holding `ADD`'s entry.
struct Attack {
    scratch: Scratch,
    cache: PathBuf,
    marker: PathBuf,
    planted: PathBuf,
}

impl Attack {
    fn new(name: &str) -> Attack {
        let scratch = Scratch::new(name);
        let marker = scratch.path().join("marker");
        let planted = planted(scratch.path(), &marker);
        let cache = scratch.path().join("cache");
        assert_eq!(add_2_3(&cache).unwrap(), (5, false));
        Attack {
            scratch,
            cache,
            marker,
            planted,
        }
    }

    fn ran(&self) -> bool {
        self.marker.exists()
    }
}

/// Extracts the cache error's message, or fails.
fn refused(result: augur::Result<(i32, bool)>) -> String {
    match result {
        Err(e @ Error::Cache { .. }) => e.to_string(),
        other => panic!("expected a cache error, got {other:?}"),
    }
}

#[test]
fn a_planted_library_with_its_sum_is_loaded_when_nothing_else_stops_it() {
    // The premise of the tests below: the sum alone stops nobody who can
    // write to the directory.
    let a = Attack::new("premise");
    plant(&a.cache, &a.planted);
    assert_eq!(add_2_3(&a.cache).unwrap(), (42, true));
    assert!(a.ran());
}

#[test]
fn a_directory_owned_by_another_user_is_refused() {
    let a = Attack::new("owner");
    plant(&a.cache, &a.planted);
    let me = my_uid();
    let other = if me == 0 { 65534 } else { 0 };
    if me == 0 {
        chown_all(&a.cache, other);
    } else {
        // Not root: a directory root owns stands for another user's.
        let e = refused(add_2_3(Path::new("/usr")));
        assert!(e.contains("owned by uid 0"), "{e}");
        return;
    }
    let e = refused(add_2_3(&a.cache));
    assert!(
        e.contains("owned by uid 65534") && e.contains("cache"),
        "{e}"
    );
    assert!(!a.ran(), "the planted library ran");
    chown_all(&a.cache, me);
    assert_eq!(add_2_3(&a.cache).unwrap(), (42, true), "the test is void");
}

#[test]
fn a_directory_writable_by_others_is_refused() {
    for mode in [0o777, 0o1777, 0o770] {
        let a = Attack::new(&format!("mode-{mode:o}"));
        plant(&a.cache, &a.planted);
        if mode == 0o770 {
            if my_uid() != 0 {
                continue; // Only root can give the directory a group of others.
            }
            // A group others are in (nogroup), not the user's own.
            std::os::unix::fs::chown(&a.cache, None, Some(65534)).unwrap();
        }
        std::fs::set_permissions(&a.cache, PermissionsExt::from_mode(mode)).unwrap();
        let e = refused(add_2_3(&a.cache));
        assert!(e.contains("writable by group or others"), "{e}");
        assert!(e.contains(&a.cache.display().to_string()), "{e}");
        assert!(!a.ran(), "the planted library ran under mode {mode:o}");
        std::fs::set_permissions(&a.cache, PermissionsExt::from_mode(0o700)).unwrap();
        assert_eq!(add_2_3(&a.cache).unwrap(), (42, true), "the test is void");
    }
}

#[test]
fn a_directory_below_one_others_can_write_is_refused() {
    let a = Attack::new("parent");
    plant(&a.cache, &a.planted);
    // Others could rename `cache` away and put their own in its place.
    std::fs::set_permissions(a.scratch.path(), PermissionsExt::from_mode(0o777)).unwrap();
    let e = refused(add_2_3(&a.cache));
    assert!(e.contains("above it is writable by others"), "{e}");
    assert!(!a.ran());
    // Sticky, as /tmp is: only an entry's owner may rename it.
    std::fs::set_permissions(a.scratch.path(), PermissionsExt::from_mode(0o1777)).unwrap();
    assert_eq!(add_2_3(&a.cache).unwrap(), (42, true), "the test is void");
}

#[test]
fn a_symlinked_entry_is_not_loaded() {
    let a = Attack::new("symlink");
    let lib = plant(&a.cache, &a.planted);
    // The link points at a copy whose sum matches: only not following the
    // link stops it.
    std::fs::rename(&lib, a.scratch.path().join("elsewhere.so")).unwrap();
    std::os::unix::fs::symlink(a.scratch.path().join("elsewhere.so"), &lib).unwrap();
    assert_eq!(add_2_3(&a.cache).unwrap(), (5, false));
    assert!(!a.ran(), "the planted library ran");
    // Rebuilt in its place: a file, not the link.
    assert!(lib.symlink_metadata().unwrap().is_file());
    assert_eq!(add_2_3(&a.cache).unwrap(), (5, true));
}

#[test]
fn a_replaced_or_truncated_library_is_not_loaded() {
    let a = Attack::new("replaced");
    let lib = entry(&a.cache, ".so");
    // Replaced, with the old sum: the bytes do not match.
    std::fs::copy(&a.planted, &lib).unwrap();
    assert_eq!(add_2_3(&a.cache).unwrap(), (5, false));
    assert!(!a.ran(), "the planted library ran");
    // Truncated, as by a full disk.
    let len = std::fs::metadata(&lib).unwrap().len();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&lib)
        .unwrap()
        .set_len(len / 2)
        .unwrap();
    assert_eq!(add_2_3(&a.cache).unwrap(), (5, false));
    assert_eq!(add_2_3(&a.cache).unwrap(), (5, true));
    // No sum: not loaded either.
    std::fs::remove_file(entry(&a.cache, ".so.sum")).unwrap();
    assert_eq!(add_2_3(&a.cache).unwrap(), (5, false));
}

#[test]
fn an_entry_others_can_write_is_not_loaded() {
    let a = Attack::new("entry-mode");
    let lib = plant(&a.cache, &a.planted);
    std::fs::set_permissions(&lib, PermissionsExt::from_mode(0o666)).unwrap();
    assert_eq!(add_2_3(&a.cache).unwrap(), (5, false));
    assert!(!a.ran(), "the planted library ran");
}

/// Run by `two_processes_compile_the_same_key_at_once` in its children
/// (`AUGUR_CACHE_TEST_CHILD` names the cache); on its own it does nothing.
#[test]
fn child_compiles_add() {
    let Some(dir) = std::env::var_os("AUGUR_CACHE_TEST_CHILD") else {
        return;
    };
    let start: u128 = std::env::var("AUGUR_CACHE_TEST_START")
        .unwrap()
        .parse()
        .unwrap();
    // All children begin together.
    while now_ms() < start {
        std::thread::yield_now();
    }
    let (sum, _) = add_2_3(Path::new(&dir)).unwrap();
    println!("child result {sum}");
}

fn now_ms() -> u128 {
    let since = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
    since.unwrap().as_millis()
}

#[test]
fn two_processes_compile_the_same_key_at_once() {
    let scratch = Scratch::new("processes");
    let cache = scratch.path().join("cache");
    let start = now_ms() + 1500;
    let spawned: Vec<_> = (0..4)
        .map(|_| {
            Command::new(std::env::current_exe().unwrap())
                .args([
                    "--exact",
                    "compile_cache::child_compiles_add",
                    "--nocapture",
                ])
                .env("AUGUR_CACHE_TEST_CHILD", &cache)
                .env("AUGUR_CACHE_TEST_START", start.to_string())
                .stdout(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in spawned {
        let out = child.wait_with_output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && text.contains("child result 5"),
            "{text}"
        );
    }
    let mut names: Vec<String> = std::fs::read_dir(&cache)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    let ends: Vec<&str> = names.iter().map(|n| &n[32..]).collect();
    assert_eq!(ends, [".c", ".so", ".so.sum"], "{names:?}");
    assert_eq!(add_2_3(&cache).unwrap(), (5, true));
}

#[test]
fn the_least_recently_used_entries_are_evicted() {
    let scratch = Scratch::new("evict");
    let dir = scratch.path().join("cache");
    let source = |n: i32| format!("int f(void) {{ return {n}; }}\n");
    let call = |n: i32, limit: u64| {
        let opts = CompileOptions {
            cache_limit: Some(limit),
            ..opts(&dir)
        };
        let lib = compile(&source(n), &opts).unwrap();
        // SAFETY: `f` is `int f(void)`.
        let f: extern "C" fn() -> i32 = unsafe { lib.symbol("f") }.unwrap();
        assert_eq!(f(), n);
        lib.cache_hit()
    };
    assert!(!call(1, u64::MAX));
    let cache = Cache::at(&dir, u64::MAX).unwrap();
    let one = cache.usage().unwrap().bytes;
    // Room for two entries and a half.
    let limit = one * 5 / 2;
    assert!(!call(2, limit));
    assert!(call(1, limit), "1 is used again: 2 is now the oldest");
    assert!(!call(3, limit));
    let usage = cache.usage().unwrap();
    assert_eq!(usage.entries, 2);
    assert!(usage.bytes <= limit, "{usage:?} over {limit}");
    assert!(call(1, limit), "the entry used last was kept");
    assert!(call(3, limit), "the newest entry was kept");
    assert!(!call(2, limit), "the least recently used entry was evicted");
    let removed = cache.clean().unwrap();
    assert_eq!(removed.entries, 2);
    assert_eq!(cache.usage().unwrap().entries, 0);
}

fn my_uid() -> u32 {
    use std::os::unix::fs::MetadataExt;
    // The owner of a file this process just made is its effective user.
    let probe = std::env::temp_dir().join(format!("augur-uid-{}", std::process::id()));
    std::fs::write(&probe, "").unwrap();
    let uid = std::fs::metadata(&probe).unwrap().uid();
    std::fs::remove_file(&probe).unwrap();
    uid
}

fn chown_all(dir: &Path, uid: u32) {
    std::os::unix::fs::chown(dir, Some(uid), Some(uid)).unwrap();
    for e in std::fs::read_dir(dir).unwrap() {
        std::os::unix::fs::lchown(e.unwrap().path(), Some(uid), Some(uid)).unwrap();
    }
}

#[test]
fn a_link_on_the_way_that_somebody_else_owns_is_refused() {
    let a = Attack::new("link");
    plant(&a.cache, &a.planted);
    let link = a.scratch.path().join("link");
    std::os::unix::fs::symlink(&a.cache, &link).unwrap();
    // The user's own link is followed, and the path used resolved.
    let cache = Cache::at(&link, u64::MAX).unwrap();
    assert_eq!(cache.path(), a.cache.canonicalize().unwrap());
    if my_uid() != 0 {
        return; // Only root can give a link to somebody else.
    }
    // A link somebody else owns could be re-pointed at any time.
    std::os::unix::fs::lchown(&link, Some(65534), Some(65534)).unwrap();
    let e = refused(add_2_3(&link));
    assert!(e.contains("the link") && e.contains("uid 65534"), "{e}");
    assert!(!a.ran());
}

#[test]
fn nothing_is_created_under_a_directory_of_somebody_elses() {
    if my_uid() != 0 {
        return; // Only root can make a directory of somebody else's.
    }
    // Root with another user's HOME must not leave root-owned directories
    // in it (the user could not use them afterwards).
    let scratch = Scratch::new("foreign-home");
    let home = scratch.path().join("home");
    std::fs::create_dir(&home).unwrap();
    std::os::unix::fs::chown(&home, Some(65534), Some(65534)).unwrap();
    let e = refused(add_2_3(&home.join(".cache").join("augur")));
    assert!(e.contains("owned by uid 65534"), "{e}");
    assert!(
        !home.join(".cache").exists(),
        "created under another's home"
    );
}

#[test]
fn eviction_leaves_what_a_process_is_writing() {
    let scratch = Scratch::new("busy");
    let dir = scratch.path().join("cache");
    assert_eq!(add_2_3(&dir).unwrap(), (5, false));
    // Another process is compiling a key right now.
    let busy = "0123456789abcdef0123456789abcdef";
    std::fs::write(dir.join(format!("{busy}.c")), "int f(void);\n").unwrap();
    std::fs::write(dir.join(format!("{busy}.so.1-1-0.tmp")), "").unwrap();
    let cache = Cache::at(&dir, u64::MAX).unwrap();
    assert_eq!(cache.clean().unwrap().entries, 1);
    assert!(
        dir.join(format!("{busy}.c")).exists(),
        "work in progress removed"
    );
    assert_eq!(cache.usage().unwrap().entries, 1);
}
