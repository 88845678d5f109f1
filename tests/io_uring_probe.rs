//! A kernel that refuses io_uring gives one clear line, not a stack of errors. This binary
//! flips the system-wide sysctl kernel.io_uring_disabled and restores it; cargo runs test
//! binaries one after another, so no other test sees the change.

mod common;
use common::*;

struct Restore(String);

impl Drop for Restore {
    fn drop(&mut self) {
        let _ = std::fs::write("/proc/sys/kernel/io_uring_disabled", &self.0);
    }
}

#[test]
fn disabled_io_uring_is_one_clear_line() {
    let path = "/proc/sys/kernel/io_uring_disabled";
    let Ok(old) = std::fs::read_to_string(path) else {
        eprintln!("SKIP: this kernel has no kernel.io_uring_disabled sysctl");
        return;
    };
    if std::fs::write(path, "2").is_err() {
        eprintln!("SKIP: cannot change kernel.io_uring_disabled (needs root)");
        return;
    }
    let _restore = Restore(old);
    let d = tempfile::tempdir().unwrap();
    let r = flexio(
        &[
            "--name=u",
            "--ioengine=io_uring",
            "--filename=f",
            "--size=1M",
        ],
        d.path(),
    );
    assert_eq!(r.code, 1);
    assert_eq!(r.stdout, "", "nothing runs");
    let lines: Vec<&str> = r.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "one line: {lines:?}");
    assert!(
        lines[0].contains("io_uring is disabled by sysctl kernel.io_uring_disabled=2"),
        "{}",
        lines[0]
    );
}
