//! Every library crate can be published (`cargo publish --workspace
//! --dry-run --exclude augur-cli` passes; what it needs is checked here from
//! `cargo metadata`, which is fast): a description, a license with its
//! files, a readme, keywords, categories and a documentation link, and a
//! version on every path dependency a user's build resolves. The `augur`
//! command is installed from the repository, and says `publish = false`.

use serde_json::Value;
use std::path::Path;
use std::process::Command;

fn metadata() -> Value {
    let out = Command::new(env!("CARGO"))
        .args(["metadata", "--format-version", "1", "--no-deps"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("cargo metadata prints JSON")
}

fn text<'a>(p: &'a Value, key: &str) -> &'a str {
    p[key].as_str().unwrap_or("")
}

#[test]
fn every_library_crate_can_be_published_and_the_command_is_not() {
    let meta = metadata();
    let packages = meta["packages"].as_array().expect("packages");
    assert!(packages.len() >= 7, "{} packages", packages.len());
    for p in packages {
        let name = text(p, "name");
        let unpublished = p["publish"].as_array().is_some_and(Vec::is_empty);
        let has_lib = (p["targets"].as_array().expect("targets").iter()).any(|t| {
            t["kind"]
                .as_array()
                .is_some_and(|k| k.iter().any(|k| k != "bin"))
        });
        if name == "augur-cli" {
            assert!(unpublished, "augur-cli says publish = false");
            continue;
        }
        assert!(
            has_lib && !unpublished,
            "{name}: a library crate, published"
        );
        for key in ["description", "license", "readme", "documentation"] {
            assert!(!text(p, key).is_empty(), "{name}: no {key}");
        }
        for key in ["keywords", "categories"] {
            let n = p[key].as_array().map_or(0, Vec::len);
            assert!((1..=5).contains(&n), "{name}: {n} {key}");
        }
        let dir = Path::new(text(p, "manifest_path"))
            .parent()
            .expect("a folder");
        for file in ["LICENSE-MIT", "LICENSE-APACHE"] {
            assert!(dir.join(file).is_file(), "{name}: no {file}");
        }
        for d in p["dependencies"].as_array().expect("dependencies") {
            // Dev-dependencies without a version are dropped on publishing.
            let dev = d["kind"].as_str() == Some("dev");
            if d["path"].is_string() && !dev {
                let req = text(d, "req");
                assert!(
                    req != "*",
                    "{name}: path dependency {} has no version",
                    d["name"]
                );
            }
        }
    }
}

/// The name `augur` on crates.io is another project's: the library is
/// published as `augur-staging` and its crate is still `augur`, so that
/// `cargo add augur-staging` gives `use augur::...`.
#[test]
fn the_library_is_published_as_augur_staging_and_imported_as_augur() {
    let meta = metadata();
    let packages = meta["packages"].as_array().expect("packages");
    let lib = packages
        .iter()
        .find(|p| text(p, "name") == "augur-staging")
        .expect("a package augur-staging");
    let targets = lib["targets"].as_array().expect("targets");
    let lib_target = targets
        .iter()
        .find(|t| {
            t["kind"]
                .as_array()
                .is_some_and(|k| k.iter().any(|k| k == "lib"))
        })
        .expect("a library target");
    assert_eq!(text(lib_target, "name"), "augur");
    assert!(
        packages.iter().all(|p| text(p, "name") != "augur"),
        "no package takes the name another project has on crates.io"
    );
}
