//! The distributed product under real MPI: the standalone program from
//! `dist::summa` (and `dist::summa_transposed`, whose plan sums partial
//! blocks), built with `mpicc` and run with `mpirun` on 1 to 4 ranks
//! (`--oversubscribe`), checks itself against a single-process product and
//! sends exactly the plan's bytes. Without MPI installed the test says so
//! and passes, except under CI (`CI` set), which installs OpenMPI and must
//! run it.

use augur_einsum::dist::{self, Grid, Layout};
use std::process::Command;

fn mpi_present() -> bool {
    let found = |tool: &str| {
        Command::new(tool)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    };
    found("mpicc") && found("mpirun")
}

/// Builds and runs the program; its standard output.
fn run(source: &str, ranks: usize, dir: &std::path::Path) -> String {
    let c = dir.join("summa.c");
    let exe = dir.join("summa");
    std::fs::write(&c, source).unwrap();
    let out = Command::new("mpicc")
        .args(["-O2", "-std=c99", "-o"])
        .arg(&exe)
        .arg(&c)
        .arg("-lm")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "mpicc: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = Command::new("timeout")
        .arg("120")
        .arg("mpirun")
        .args(["--oversubscribe", "-n", &ranks.to_string()])
        .arg(&exe)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("OMPI_MCA_btl_vader_single_copy_mechanism", "none")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "mpirun -n {ranks}: {text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

fn bytes_sent(output: &str) -> Vec<u64> {
    let line = output
        .lines()
        .find_map(|l| l.strip_prefix("bytes sent per rank:"))
        .unwrap_or_else(|| panic!("no byte counts in {output}"));
    line.split_whitespace()
        .map(|x| x.parse().unwrap())
        .collect()
}

#[test]
fn the_standalone_product_checks_itself_on_one_to_four_mpi_ranks() {
    if !mpi_present() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must run the MPI tests: install openmpi-bin and libopenmpi-dev (.ci/run does)"
        );
        eprintln!("skipped: no mpicc/mpirun (apt-get install openmpi-bin libopenmpi-dev)");
        return;
    }
    let dir = std::env::temp_dir().join(format!("augur-mpi-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for ranks in 1..=4 {
        for (m, n, k) in [(7, 6, 5), (16, 12, 9), (64, 64, 64)] {
            for layout in [Layout::Block2D, Layout::BlockCyclic { rows: 2, cols: 3 }] {
                let source = dist::summa(m, n, k, ranks, layout).unwrap();
                let out = run(&source, ranks, &dir);
                assert!(out.contains("check: ok"), "{ranks} ranks {layout:?}: {out}");
                let sent = bytes_sent(&out);
                assert_eq!(sent.len(), ranks);
                if layout == Layout::Block2D {
                    assert_eq!(
                        sent,
                        dist::matmul_plan_bytes(m, n, k, Grid::for_ranks(ranks), 8),
                        "{out}"
                    );
                }
            }
        }
        // A Bᵀ: partial sums, pdgemm's plan, on more than one rank.
        for (m, n, k) in [(7, 6, 5), (64, 64, 64)] {
            let source = dist::summa_transposed(m, n, k, ranks, Layout::Block2D).unwrap();
            let out = run(&source, ranks, &dir);
            assert!(out.contains("check: ok"), "{ranks} ranks, A B^T: {out}");
            let plan = dist::matmul_transposed_plan_bytes(m, n, k, Grid::for_ranks(ranks), 8);
            assert_eq!(bytes_sent(&out), plan, "{out}");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
