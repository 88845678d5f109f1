//! verify_policy (the newest fio, after 3.42): `fsynced` verifies only the writes issued
//! before the submission of the last fsync that completed, online and through a saved
//! verify state (whose numberio is then that threshold); without a completed fsync nothing
//! is verified. fio 3.33 has no such option: `--compat=3.33` refuses it as fio 3.33 does.
//! The newest fio is not installed, so the documented semantics are checked directly.

use crate::common;
use common::*;
use std::path::Path;

const BS: u64 = 4096;

/// A sequential write job of `blocks` 4 KiB blocks that verifies, with extra options.
fn write_job(blocks: u64, extra: &[&str]) -> Vec<String> {
    let mut a: Vec<String> = [
        "--name=j",
        "--filename=f",
        "--bs=4k",
        "--rw=write",
        "--verify=crc32c",
        "--output-format=json",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    a.push(format!("--size={}", blocks * BS));
    a.extend(extra.iter().map(|s| s.to_string()));
    a
}

fn run(args: &[String], dir: &Path) -> Run {
    let a: Vec<&str> = args.iter().map(|s| s.as_str()).collect();
    let r = flexio(&a, dir);
    assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
    r
}

/// Reads (the verify phase's), writes and fsyncs of the job.
fn counts(r: &Run) -> (u64, u64, u64) {
    let j = &json_of(&r.stdout)["jobs"][0];
    let n = |v: &serde_json::Value| v.as_u64().unwrap_or(0);
    (
        n(&j["read"]["total_ios"]),
        n(&j["write"]["total_ios"]),
        n(&j["sync"]["total_ios"]),
    )
}

/// The offsets `--debug=verify` says were checked, in order.
fn verified_offsets(text: &str) -> Vec<u64> {
    text.lines()
        .filter_map(|l| l.split("verify: off=0x").nth(1))
        .map(|rest| u64::from_str_radix(rest.split(',').next().unwrap(), 16).unwrap())
        .collect()
}

/// The writes an fsync every `k` writes covers when `n` are written: an fsync is submitted
/// once `k` writes are issued since the last, before the next write (none after the
/// job's last write: its loop ends first).
fn covered(n: u64, k: u64) -> u64 {
    (n - 1).checked_div(k).map_or(0, |q| q * k)
}

#[test]
fn online_verify_checks_the_writes_the_last_completed_fsync_covered() {
    let d = tempfile::tempdir().unwrap();
    let n = 16;
    for k in [0u64, 1, 3, 5, 8, 16, 20] {
        let fsync = format!("--fsync={k}");
        let all = run(
            &write_job(n, &[&fsync, "--verify_policy=completed"]),
            d.path(),
        );
        let pol = run(
            &write_job(n, &[&fsync, "--verify_policy=fsynced"]),
            d.path(),
        );
        let (reads_all, writes, syncs) = counts(&all);
        assert_eq!((reads_all, writes), (n, n), "completed, fsync={k}");
        let (reads, writes, syncs_f) = counts(&pol);
        assert_eq!(writes, n, "fsync={k}");
        assert_eq!(syncs_f, syncs, "fsync={k}: the policy changes no fsync");
        assert_eq!(
            syncs,
            covered(n, k).checked_div(k).unwrap_or(0),
            "fsync={k}: fsyncs issued"
        );
        assert_eq!(reads, covered(n, k), "fsync={k}: verify reads");
    }
    // The blocks checked are exactly the first ones written: 15 of 16 with fsync=5.
    let mut a = write_job(
        n,
        &["--fsync=5", "--verify_policy=fsynced", "--debug=verify"],
    );
    a.retain(|x| x != "--output-format=json");
    let r = run(&a, d.path());
    let want: Vec<u64> = (0..15).map(|i| i * BS).collect();
    assert_eq!(verified_offsets(&r.stdout), want, "{}", r.stdout);
}

#[test]
fn without_a_completed_fsync_nothing_is_verified() {
    let d = tempfile::tempdir().unwrap();
    for extra in [
        &["--verify_policy=fsynced"][..],
        &["--verify_policy=fsynced", "--fsync=64"],
        // sync_file_range is not an fsync.
        &["--verify_policy=fsynced", "--sync_file_range=wait_after:2"],
    ] {
        let r = run(&write_job(32, extra), d.path());
        let (reads, writes, _) = counts(&r);
        assert_eq!((reads, writes), (0, 32), "{extra:?}");
    }
    // fdatasync covers the data as fsync does; so does end_fsync, after every write.
    let r = run(
        &write_job(32, &["--verify_policy=fsynced", "--fdatasync=10"]),
        d.path(),
    );
    assert_eq!(counts(&r).0, 30);
    let r = run(
        &write_job(32, &["--verify_policy=fsynced", "--end_fsync=1"]),
        d.path(),
    );
    assert_eq!(counts(&r).0, 32);
}

#[test]
fn queued_engines_cover_the_writes_submitted_before_the_fsync() {
    let d = tempfile::tempdir().unwrap();
    // Random writes at depth 8: the threshold is the number of writes submitted when the
    // fsync was, whatever completes first.
    for engine in ["posixaio", "libaio", "io_uring"] {
        let r = flexio(
            &[
                "--name=j",
                "--filename=f",
                "--size=256k",
                "--bs=4k",
                "--rw=randwrite",
                &format!("--ioengine={engine}"),
                "--iodepth=8",
                "--verify=crc32c",
                "--fsync=7",
                "--verify_policy=fsynced",
                "--output-format=json",
            ],
            d.path(),
        );
        if r.code != 0 && r.stderr.contains("not built into this flexio") {
            eprintln!("SKIP: {engine}: {}", r.stderr.trim());
            continue;
        }
        if r.code != 0 && engine == "io_uring" && r.stderr.contains("io_uring") {
            eprintln!("SKIP: io_uring unavailable: {}", r.stderr.trim());
            continue;
        }
        assert_eq!(r.code, 0, "{engine}: {}", r.stderr);
        let (reads, writes, syncs) = counts(&r);
        assert_eq!(writes, 64, "{engine}");
        assert_eq!(syncs, 9, "{engine}");
        assert_eq!(reads, covered(64, 7), "{engine}");
    }
}

fn corrupt(path: &Path, offset: u64) {
    use std::os::unix::fs::FileExt;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .unwrap();
    let mut b = [0u8; 1];
    // Past the block's header: the checksum, not the header, finds it.
    f.read_exact_at(&mut b, offset + 200).unwrap();
    b[0] ^= 0x5a;
    f.write_all_at(&b, offset + 200).unwrap();
}

#[test]
fn a_saved_state_holds_the_fsync_threshold_and_the_load_stops_there() {
    let d = tempfile::tempdir().unwrap();
    let n = 16;
    let state = d.path().join("local-j-0-verify.state");
    let write = |extra: &[&str]| {
        let mut e = vec!["--do_verify=0", "--verify_state_save=1"];
        e.extend_from_slice(extra);
        run(&write_job(n, &e), d.path());
        let b = std::fs::read(&state).unwrap();
        // Header (version, size, crc), then the record: depth, padding, numberio.
        assert_eq!(u64::from_le_bytes(b[0..8].try_into().unwrap()), 7);
        u64::from_le_bytes(b[32..40].try_into().unwrap())
    };
    let load = || {
        let r = flexio(
            &write_job(
                n,
                // A verify_only run saves its own state too (as fio does), which would
                // replace the written one: the loads here keep it.
                &[
                    "--verify_only=1",
                    "--verify_state_load=1",
                    "--verify_fatal=1",
                    "--verify_state_save=0",
                ],
            )
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>(),
            d.path(),
        );
        let reads = json_of(&r.stdout)["jobs"][0]["read"]["total_ios"]
            .as_u64()
            .unwrap();
        (r, reads)
    };
    // Without the policy the state names every write.
    assert_eq!(write(&["--fsync=5"]), n);
    assert_eq!(write(&["--fsync=5", "--verify_policy=fsynced"]), 15);
    let (r, reads) = load();
    assert_eq!((r.code, reads), (0, 15), "{}", r.stderr);
    // fio's note (on stderr beside a JSON document).
    let said = format!("{}{}", r.stdout, r.stderr);
    assert!(said.contains("Stop verify because seq 15 >= 15"), "{said}");
    // The block after the threshold is not checked: damage there goes unseen ...
    corrupt(&d.path().join("f"), 15 * BS);
    let (r, reads) = load();
    assert_eq!((r.code, reads), (0, 15), "{}", r.stderr);
    // ... and damage to the last covered block is found.
    write(&["--fsync=5", "--verify_policy=fsynced"]);
    corrupt(&d.path().join("f"), 14 * BS);
    let (r, _) = load();
    assert_ne!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("verify"), "{}", r.stderr);
    // No fsync completed: the threshold is 0 and nothing is checked.
    assert_eq!(write(&["--verify_policy=fsynced"]), 0);
    corrupt(&d.path().join("f"), 0);
    let (r, reads) = load();
    assert_eq!((r.code, reads), (0, 0), "{}", r.stderr);
}

#[test]
fn fio_333_has_no_verify_policy() {
    let d = tempfile::tempdir().unwrap();
    for v in ["fsynced", "completed"] {
        let mut a = write_job(4, &[&format!("--verify_policy={v}")]);
        a.insert(0, "--compat=3.33".into());
        let a: Vec<&str> = a.iter().map(|s| s.as_str()).collect();
        let r = flexio(&a, d.path());
        assert_eq!(r.code, 1, "{v}: {}", r.stdout);
        assert!(
            r.stderr.contains("unrecognized option '--verify_policy'"),
            "{v}: {}",
            r.stderr
        );
        // The installed fio 3.33 refuses it the same way.
        if let Some(fio) = fio_bin() {
            let f = run_in(&fio, &a[1..], d.path());
            assert_eq!(f.code, 1, "{}", f.stdout);
            assert!(
                f.stderr.contains("unrecognized option '--verify_policy"),
                "{}",
                f.stderr
            );
        }
    }
    // And in a job file, at its line.
    std::fs::write(
        d.path().join("j.fio"),
        "[j]\nfilename=f\nsize=16k\nrw=write\nverify=crc32c\nverify_policy=fsynced\n",
    )
    .unwrap();
    let r = flexio(&["--compat=3.33", "j.fio"], d.path());
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("j.fio:6"), "{}", r.stderr);
    // The newest fio's values are both accepted by default; others are not.
    let r = flexio(
        &[
            "--name=j",
            "--filename=f",
            "--size=16k",
            "--verify_policy=sometimes",
        ],
        d.path(),
    );
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("completed, fsynced"), "{}", r.stderr);
}
