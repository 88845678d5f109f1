//! `invalidate` is fio's: the page cache of a job's files is dropped when they are opened,
//! again every time a time-based job starts a file over, and again for every loop.

use crate::common;
use common::*;

fn iops(args: &[&str], dir: &std::path::Path) -> f64 {
    let mut a = vec![
        "--output-format=json",
        "--name=c",
        "--ioengine=psync",
        "--filename=f",
        "--size=4m",
        "--bs=4k",
        "--rw=randread",
    ];
    a.extend_from_slice(args);
    let r = flexio(&a, dir);
    assert_eq!(r.code, 0, "{}", r.stderr);
    json_of(&r.stdout)["jobs"][0]["read"]["iops"]
        .as_f64()
        .unwrap()
}

/// A directory on a file system with a page cache that can be dropped (not tmpfs).
fn disk_dir() -> Option<tempfile::TempDir> {
    let d = tempfile::tempdir_in(
        std::env::var_os("FLEXIO_DISK_DIR").unwrap_or_else(|| "/var/tmp".into()),
    )
    .ok()?;
    let st = rustix::fs::statfs(d.path()).ok()?;
    const TMPFS_MAGIC: i64 = 0x0102_1994;
    if st.f_type as i64 == TMPFS_MAGIC {
        eprintln!(
            "SKIP: {} is on tmpfs, whose pages cannot be dropped",
            d.path().display()
        );
        return None;
    }
    Some(d)
}

#[test]
fn invalidate_drops_the_cache_at_every_pass() {
    let Some(d) = disk_dir() else { return };
    // Lay the file out once.
    iops(&["--size=4m", "--io_size=4k"], d.path());
    for pass in [&["--runtime=1", "--time_based"][..], &["--loops=30"][..]] {
        let dropped = iops(&[&["--invalidate=1"], pass].concat(), d.path());
        let cached = iops(&[&["--invalidate=0"], pass].concat(), d.path());
        // Reading a 4 MiB file from the device on every pass is many times slower than
        // reading it from memory after the first pass.
        assert!(
            cached > 4.0 * dropped,
            "{pass:?}: invalidate=1 {dropped:.0} IOPS vs invalidate=0 {cached:.0} IOPS"
        );
    }
}
