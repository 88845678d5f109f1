//! How often flexio looks at each file of a many-file job (issue: planning stat'ed every
//! file three times, and the provenance and disk discovery read /sys and the mount table
//! again for every file). Counted with strace: each file is looked at once when planned,
//! and the run-level steps (disk discovery, provenance) once more each, however many files
//! share a device.

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
fn count(engine: &str, files: u32, dir: &std::path::Path) -> (usize, usize) {
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
    (stats, sys)
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
    let (stats, sys_new) = count("filecreate", n, d.path());
    assert!(
        stats <= n as usize + 10,
        "filecreate of {n} files: {stats} stat calls on the files (at most one each)"
    );
    // Existing files (filestat): planning, disk discovery, provenance and the layout check
    // once each, and the engine's own stat, which is the measured operation.
    let (stats, sys_old) = count("filestat", n, d.path());
    assert!(
        stats <= 5 * n as usize + 10,
        "filestat of {n} files: {stats} stat calls on the files (at most five each)"
    );
    // /sys and the mount table are read per device, not per file.
    assert!(
        sys_new < 200 && sys_old < 200,
        "{sys_new} and {sys_old} opens of /sys files and mountinfo for {n} files on one device"
    );
}
