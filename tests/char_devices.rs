//! Character devices as targets (`/dev/null` for writes, `/dev/zero` for reads), against
//! fio 3.33: the same I/O counts, fio's "you need to specify size=" when no size is given,
//! and the device nodes untouched by anything a job does (unlink, engines that remove names).

use crate::common;
use common::*;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::Path;

/// Per direction (read, write): total_ios and io_bytes of the first job, and its error.
fn counts(r: &Run, what: &str) -> ([u64; 4], u64) {
    assert_eq!(r.code, 0, "{what}: {}{}", r.stdout, r.stderr);
    let j = json_of(&r.stdout);
    let job = &j["jobs"][0];
    let n = |d: &str, k: &str| job[d][k].as_u64().unwrap_or(u64::MAX);
    (
        [
            n("read", "total_ios"),
            n("read", "io_bytes"),
            n("write", "total_ios"),
            n("write", "io_bytes"),
        ],
        job["error"].as_u64().unwrap_or(u64::MAX),
    )
}

/// The identity of a device node: type, device number, inode.
fn node(p: &str) -> (bool, u64, u64) {
    let m = std::fs::symlink_metadata(p).unwrap();
    (m.file_type().is_char_device(), m.rdev(), m.ino())
}

#[test]
fn dev_null_and_dev_zero_counts_equal_fio() {
    let cases: &[&[&str]] = &[
        &["--filename=/dev/null", "--rw=write", "--size=1M"],
        &["--filename=/dev/null", "--rw=randwrite", "--size=1M"],
        &["--filename=/dev/zero", "--rw=read", "--size=1M"],
        &["--filename=/dev/zero", "--rw=randread", "--size=1M"],
        // The device is as large as size=: the offset moves the start inside it.
        &[
            "--filename=/dev/zero",
            "--rw=read",
            "--size=1M",
            "--offset=512k",
        ],
        &[
            "--filename=/dev/zero",
            "--rw=read",
            "--size=1M",
            "--offset=25%",
        ],
        &[
            "--filename=/dev/zero",
            "--rw=read",
            "--size=1M",
            "--io_size=3M",
        ],
        &["--filename=/dev/null:/dev/zero", "--rw=write", "--size=1M"],
        &[
            "--filename=/dev/null",
            "--rw=write",
            "--size=256k",
            "--loops=3",
        ],
        &[
            "--filename=/dev/null",
            "--rw=write",
            "--size=1M",
            "--ioengine=libaio",
            "--iodepth=8",
        ],
        &[
            "--filename=/dev/null",
            "--rw=write",
            "--size=1M",
            "--unlink=1",
            "--invalidate=1",
        ],
    ];
    let before = (node("/dev/null"), node("/dev/zero"));
    for c in cases {
        let mut a = vec!["--name=c", "--bs=4k", "--output-format=json"];
        a.extend_from_slice(c);
        let Some((fio, ours)) = both(&a) else { return };
        let want = counts(&fio, &format!("fio {c:?}"));
        let got = counts(&ours, &format!("flexio {c:?}"));
        assert!(want.0.iter().any(|n| *n > 0), "{c:?}: fio did nothing");
        assert_eq!(got, want, "{c:?}: (ios, bytes) per direction, error");
    }
    assert_eq!(
        (node("/dev/null"), node("/dev/zero")),
        before,
        "a device node was replaced"
    );
}

#[test]
fn numjobs_with_offset_increment_equal_fio() {
    let a = [
        "--name=c",
        "--bs=4k",
        "--filename=/dev/zero",
        "--rw=read",
        "--size=1M",
        "--numjobs=2",
        "--offset_increment=256k",
        "--group_reporting",
        "--output-format=json",
    ];
    let Some((fio, ours)) = both(&a) else { return };
    let want = counts(&fio, "fio");
    assert_eq!(want.0[0], 256 + 192, "fio's count changed");
    assert_eq!(counts(&ours, "flexio"), want);
}

#[test]
fn a_character_device_needs_size() {
    let d = tempfile::tempdir().unwrap();
    for extra in [&[][..], &["--size=50%"]] {
        let mut a = vec!["--name=c", "--filename=/dev/zero", "--rw=read"];
        a.extend_from_slice(extra);
        let r = flexio(&a, d.path());
        assert_eq!(r.code, 1, "{extra:?}: {}", r.stderr);
        assert!(
            r.stderr.contains("you need to specify size=")
                && r.stderr.contains("'/dev/zero' is a character device"),
            "{extra:?}: {}",
            r.stderr
        );
        if let Some(fio) = fio_bin() {
            let f = run_in(&fio, &a, d.path());
            assert_eq!(f.code, 1, "fio {extra:?}");
            assert!(
                format!("{}{}", f.stdout, f.stderr).contains("you need to specify size="),
                "{}{}",
                f.stdout,
                f.stderr
            );
        }
    }
}

#[test]
fn engines_that_remove_names_refuse_device_nodes() {
    let d = tempfile::tempdir().unwrap();
    let before = node("/dev/null");
    for engine in ["filedelete", "filecreate", "filestat", "dirdelete"] {
        let r = flexio(
            &[
                "--name=c",
                "--filename=/dev/null",
                "--size=1M",
                "--bs=4k",
                &format!("--ioengine={engine}"),
            ],
            d.path(),
        );
        assert_eq!(r.code, 1, "{engine}: {}", r.stderr);
        assert!(
            r.stderr.contains("is not run on device nodes"),
            "{engine}: {}",
            r.stderr
        );
    }
    assert_eq!(node("/dev/null"), before);
}

#[test]
fn filetype_char_takes_every_file_as_a_character_device() {
    let d = tempfile::tempdir().unwrap();
    let r = flexio(
        &[
            "--name=c",
            "--filename=/dev/zero",
            "--filetype=char",
            "--rw=read",
            "--bs=4k",
            "--size=64k",
            "--output-format=json",
        ],
        d.path(),
    );
    assert_eq!(counts(&r, "filetype=char").0[0], 16);
    // A regular file taken for a character device is not laid out: the job needs size=.
    let f = d.path().join("f");
    std::fs::write(&f, vec![0u8; 8192]).unwrap();
    let r = flexio(
        &[
            "--name=c",
            &format!("--filename={}", f.display()),
            "--filetype=char",
            "--rw=read",
        ],
        d.path(),
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("is a character device"), "{}", r.stderr);
    assert!(Path::new(&f).is_file());
}
