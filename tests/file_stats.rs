//! How often flexio looks at each file of a many-file job (issue: planning, disk discovery,
//! the provenance and the layout check each stat'ed every file, and the provenance read
//! /sys and the mount table again for every file). Counted with strace: each file is looked
//! at once, when planned; the run-level steps go by what planning saw and look at one file
//! per device. The provenance lists one target per device, with how many files it stands
//! for.

use crate::common;
use common::*;
use std::process::Command;

fn strace() -> bool {
    let ok = Command::new("strace")
        .arg("-V")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !ok {
        eprintln!("SKIP: strace is not installed (apt-get install strace)");
    }
    ok
}

/// Run flexio under strace, counting the stat-family calls that name one of the job's files
/// (`bench.0.N`), and the reads of sysfs and the mount table.
fn count(engine: &str, files: u32, dir: &std::path::Path) -> (usize, usize, serde_json::Value) {
    let trace = dir.join("trace");
    let out = Command::new("strace")
        .args([
            "-f",
            "-qq",
            "-e",
            "trace=stat,lstat,newfstatat,statx,openat",
            "-o",
        ])
        .arg(&trace)
        .arg(flexio_bin())
        .args([
            "--name=bench",
            &format!("--ioengine={engine}"),
            &format!("--nrfiles={files}"),
            "--filesize=4k",
            "--bs=4k",
            "--directory=d",
            "--output-format=json",
        ])
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&trace).unwrap();
    let stats = text
        .lines()
        .filter(|l| !l.contains("openat("))
        .filter(|l| l.contains("\"d/bench.0."))
        .count();
    let sys = text
        .lines()
        .filter(|l| l.contains("openat(") && (l.contains("\"/sys/") || l.contains("mountinfo")))
        .count();
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    (stats, sys, json)
}

/// The provenance's targets: one, standing for all `n` files.
fn one_target(json: &serde_json::Value, n: u32) {
    let targets = json["flexio"]["provenance"]["targets"].as_array().unwrap();
    assert_eq!(targets.len(), 1, "{targets:?}");
    assert_eq!(targets[0]["files"], n, "{targets:?}");
    assert!(
        targets[0]["path"]
            .as_str()
            .unwrap()
            .ends_with("d/bench.0.0"),
        "{targets:?}"
    );
}

#[test]
fn each_file_is_looked_at_once_per_step() {
    if !strace() {
        return;
    }
    let n = 300;
    let d = tempfile::tempdir().unwrap();
    std::fs::create_dir(d.path().join("d")).unwrap();
    // New files (filecreate): planning looks once; the engine's open creates them.
    let (stats, sys_new, json) = count("filecreate", n, d.path());
    assert!(
        stats <= n as usize + 10,
        "filecreate of {n} files: {stats} stat calls on the files (at most one each)"
    );
    one_target(&json, n);
    // filecreate left them empty: give them their size, so that nothing is laid out (a
    // file planning saw too small is looked at again before its layout).
    for i in 0..n {
        std::fs::write(d.path().join(format!("d/bench.0.{i}")), [0u8; 4096]).unwrap();
    }
    // Existing files of their full size (filestat): planning once, and the engine's own stat, which is the
    // measured operation (disk discovery, the provenance and the layout check take
    // planning's answer).
    let (stats, sys_old, json) = count("filestat", n, d.path());
    assert!(
        stats <= 2 * n as usize + 10,
        "filestat of {n} files: {stats} stat calls on the files (at most two each)"
    );
    one_target(&json, n);
    // /sys and the mount table are read per device, not per file.
    assert!(
        sys_new < 200 && sys_old < 200,
        "{sys_new} and {sys_old} opens of /sys files and mountinfo for {n} files on one device"
    );
}
