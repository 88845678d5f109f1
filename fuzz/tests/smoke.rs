//! Each fuzz target runs for a second and finds no panic. Besides checking the fuzzer
//! itself, this test makes `cargo test --workspace` build the `flexio-fuzz` program with the
//! workspace's features, so `.ci/run`'s 30-second runs use that program instead of building
//! another one.

use std::process::{Command, Stdio};

#[test]
fn every_target_runs_without_a_panic() {
    let crashes = tempfile::tempdir().unwrap();
    let runs: Vec<_> = ["jobs", "packets", "server"]
        .iter()
        .map(|t| {
            let child = Command::new(env!("CARGO_BIN_EXE_flexio-fuzz"))
                .args(["--target", t, "--seconds", "1", "--seed", "7", "--crashes"])
                .arg(crashes.path())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            (t, child)
        })
        .collect();
    for (t, child) in runs {
        let out = child.wait_with_output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && stdout.contains("no panic in"),
            "target {t}: {:?}\n{stdout}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    assert_eq!(std::fs::read_dir(crashes.path()).unwrap().count(), 0);
}
