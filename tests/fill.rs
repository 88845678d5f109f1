//! `fill_device` / `fill_fs` against fio 3.33 on small file systems made for the test (ext4
//! on a loop device, tmpfs): each tool gets its own fresh file system of the same size; the
//! job writes until the file system is full, and that ends it cleanly: the same bytes
//! written, exit status 0, fio's "No space left on device" line and no job error.

use crate::common;
use common::fstargets::{FsKind, FsTarget};
use common::*;

/// Run `args` (`@D@` = the file system's directory) through fio and through flexio (as fio
/// 3.33), each on a fresh file system of `kind` and `size`.
fn on_fresh_fs(kind: FsKind, size: u64, args: &[&str]) -> Option<[(Run, u64); 2]> {
    let fio = fio_bin()?;
    let _guard = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let mut out = Vec::new();
    for (bin, env) in [(fio, &[][..]), (flexio_bin(), ORACLE_COMPAT)] {
        let t = FsTarget::new(kind, size)?;
        let a = subst(args, t.path());
        let r = run_in_env(
            &bin,
            &a.iter().map(String::as_str).collect::<Vec<_>>(),
            t.path(),
            env,
        );
        // What the job left in its files.
        let bytes: u64 = std::fs::read_dir(t.path())
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().starts_with("f."))
            .map(|e| e.metadata().unwrap().len())
            .sum();
        out.push((r, bytes));
    }
    let b = out.pop().unwrap();
    let a = out.pop().unwrap();
    Some([a, b])
}

fn io_bytes(out: &str, dir: &str) -> u64 {
    let j = json_of(out);
    j["jobs"][0][dir]["io_bytes"].as_u64().unwrap()
}

#[test]
fn writing_until_the_file_system_is_full_ends_the_job_cleanly() {
    for (kind, bs) in [
        (FsKind::Ext4Loop, "64k"),
        (FsKind::Tmpfs, "64k"),
        (FsKind::Ext4Loop, "4k"),
    ] {
        let b = format!("--bs={bs}");
        let args = [
            "--name=f",
            "--directory=@D@",
            "--fill_device=1",
            "--rw=write",
            &b,
            "--output-format=json",
        ];
        let Some([(f, fbytes), (x, xbytes)]) = on_fresh_fs(kind, 64 << 20, &args) else {
            return;
        };
        let what = format!("{} bs={bs}", kind.name());
        assert_eq!(f.code, 0, "{what}: fio: {}", f.stderr);
        assert_eq!(x.code, 0, "{what}: flexio: {}", x.stderr);
        let line = "No space left on device: write offset=";
        assert!(f.stderr.contains(line), "{what}: fio: {}", f.stderr);
        assert!(x.stderr.contains(line), "{what}: flexio: {}", x.stderr);
        for (who, r) in [("fio", &f), ("flexio", &x)] {
            let j = json_of(&r.stdout);
            assert_eq!(j["jobs"][0]["error"], 0, "{what}: {who}'s job error");
        }
        // The same file system of the same size takes the same data.
        assert!(fbytes > 32 << 20, "{what}: fio filled only {fbytes} bytes");
        assert_eq!(fbytes, xbytes, "{what}: bytes in the file");
        assert_eq!(
            io_bytes(&f.stdout, "write"),
            io_bytes(&x.stdout, "write"),
            "{what}: bytes written"
        );
        // Every write issued, the one that found the end included.
        let issued = |s: &str| {
            json_of(s)["jobs"][0]["write"]["total_ios"]
                .as_u64()
                .unwrap()
        };
        assert_eq!(
            issued(&f.stdout),
            issued(&x.stdout),
            "{what}: writes issued"
        );
    }
}

#[test]
fn output_has_fio_s_structure() {
    let args = [
        "--name=f",
        "--directory=@D@",
        "--fill_fs=1",
        "--rw=write",
        "--bs=64k",
        "--nrfiles=2",
    ];
    // tmpfs: no disk under it, so no disk statistics to differ in (flexio also lists the
    // disk under a loop device).
    let Some([(f, fbytes), (x, xbytes)]) = on_fresh_fs(FsKind::Tmpfs, 64 << 20, &args) else {
        return;
    };
    assert_eq!((f.code, x.code), (0, 0), "{}\n{}", f.stderr, x.stderr);
    assert_same_shape(&f.stdout, &x.stdout, "fill_fs, two files");
    // fio's size for a job without one: "really large" (2^64 - 1 bytes).
    let msg = "f: Laying out IO files (2 files / total 17592186044415MiB)";
    assert!(f.stdout.contains(msg), "{}", f.stdout);
    assert!(x.stdout.contains(msg), "{}", x.stdout);
    assert_eq!(fbytes, xbytes);
}

#[test]
fn a_read_job_fills_the_file_system_first_then_reads_it() {
    let args = [
        "--name=f",
        "--directory=@D@",
        "--fill_device=1",
        "--rw=read",
        "--bs=64k",
        "--output-format=json",
    ];
    let Some([(f, fbytes), (x, xbytes)]) = on_fresh_fs(FsKind::Ext4Loop, 64 << 20, &args) else {
        return;
    };
    assert_eq!((f.code, x.code), (0, 0), "{}\n{}", f.stderr, x.stderr);
    assert!(fbytes > 32 << 20);
    assert_eq!(fbytes, xbytes, "laid out");
    assert_eq!(io_bytes(&f.stdout, "read"), fbytes, "fio read it all");
    assert_eq!(io_bytes(&x.stdout, "read"), xbytes, "flexio read it all");
}

#[test]
fn a_size_still_limits_the_job() {
    let args = [
        "--name=f",
        "--directory=@D@",
        "--fill_device=1",
        "--rw=write",
        "--bs=64k",
        "--size=4M",
        "--output-format=json",
    ];
    let Some([(f, fbytes), (x, xbytes)]) = on_fresh_fs(FsKind::Tmpfs, 16 << 20, &args) else {
        return;
    };
    assert_eq!((f.code, x.code), (0, 0));
    assert_eq!((fbytes, xbytes), (4 << 20, 4 << 20));
    assert!(!f.stderr.contains("No space left"), "{}", f.stderr);
    assert!(!x.stderr.contains("No space left"), "{}", x.stderr);
}
