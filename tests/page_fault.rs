//! The page_fault engine (the newest fio, after 3.42): the job's data in an anonymous
//! mapping of its size, reads and writes copying out of and into it, syncs as no-ops, no
//! file created; one file from offset 0 (fio's refusals); unknown under `--compat=3.33`, as
//! in the installed fio 3.33. The newest fio is not installed: its documented behaviour is
//! checked directly.

use crate::common;
use common::*;
use std::path::Path;

fn job(extra: &[&str]) -> Vec<String> {
    let mut a: Vec<String> = ["--name=j", "--ioengine=page_fault", "--output-format=json"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    a.extend(extra.iter().map(|s| s.to_string()));
    a
}

fn run(args: &[String], dir: &Path) -> Run {
    let a: Vec<&str> = args.iter().map(|s| s.as_str()).collect();
    flexio(&a, dir)
}

fn ok_json(args: &[String], dir: &Path) -> serde_json::Value {
    let r = run(args, dir);
    assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
    json_of(&r.stdout)["jobs"][0].clone()
}

fn n(v: &serde_json::Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

/// The directory's entries (names).
fn entries(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn reads_and_writes_move_the_jobs_bytes_and_no_file_appears() {
    let d = tempfile::tempdir().unwrap();
    for (rw, reads, writes) in [
        ("read", true, false),
        ("write", false, true),
        ("randread", true, false),
        ("randwrite", false, true),
        ("randrw", true, true),
    ] {
        let j = ok_json(
            &job(&[
                "--size=4m",
                "--bs=4k",
                &format!("--rw={rw}"),
                "--filename=data",
            ]),
            d.path(),
        );
        assert_eq!(n(&j["error"]), 0, "{rw}");
        let (r, w) = (n(&j["read"]["io_bytes"]), n(&j["write"]["io_bytes"]));
        assert_eq!(r + w, 4 << 20, "{rw}: every block once");
        assert_eq!((r > 0, w > 0), (reads, writes), "{rw}");
    }
    // A diskless engine: no disk statistics either.
    let r = run(&job(&["--size=64k", "--filename=data"]), d.path());
    assert!(
        json_of(&r.stdout)["disk_util"]
            .as_array()
            .map_or(true, |a| a.is_empty()),
        "{}",
        r.stdout
    );
    assert!(entries(d.path()).is_empty(), "{:?}", entries(d.path()));
}

#[test]
fn first_touches_fault_pages_in() {
    let d = tempfile::tempdir().unwrap();
    // Writing 64 MiB fresh memory takes at least one fault per 2 MiB even with transparent
    // huge pages (one per 4 KiB page without); the null engine touches no such memory.
    let size = "--size=64m";
    let pf = ok_json(&job(&[size, "--bs=64k", "--rw=write"]), d.path());
    let null = ok_json(
        &[
            "--name=j",
            "--ioengine=null",
            "--output-format=json",
            size,
            "--bs=64k",
            "--rw=write",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect::<Vec<_>>(),
        d.path(),
    );
    let (faults, base) = (n(&pf["minf"]), n(&null["minf"]));
    assert!(
        faults >= base + 32,
        "page_fault minf={faults}, null minf={base}"
    );
}

#[test]
fn a_job_reads_back_what_it_wrote() {
    let d = tempfile::tempdir().unwrap();
    for (rw, extra) in [
        ("write", "--verify=crc32c"),
        ("randwrite", "--verify=md5"),
        ("write", "--verify_pattern=0xdeadbeef"),
    ] {
        let j = ok_json(
            &job(&[
                "--size=1m",
                "--bs=4k",
                &format!("--rw={rw}"),
                extra,
                "--verify_state_save=0",
            ]),
            d.path(),
        );
        assert_eq!(n(&j["error"]), 0, "{rw} {extra}");
        assert_eq!(n(&j["write"]["total_ios"]), 256, "{rw} {extra}");
        assert_eq!(
            n(&j["read"]["total_ios"]),
            256,
            "{rw} {extra}: every block checked"
        );
    }
    // Loops keep the mapping: the second pass writes and checks again.
    let j = ok_json(
        &job(&[
            "--size=256k",
            "--bs=4k",
            "--rw=write",
            "--verify=crc32c",
            "--loops=2",
            "--verify_state_save=0",
        ]),
        d.path(),
    );
    assert_eq!(n(&j["read"]["total_ios"]), 128);
    assert!(entries(d.path()).is_empty(), "{:?}", entries(d.path()));
}

#[test]
fn syncs_complete_at_once_and_count() {
    let d = tempfile::tempdir().unwrap();
    // 16 writes, an fsync after every 5th (none after the last write): 3, as fio counts
    // the no-op syncs of its page_fault engine; verify_policy=fsynced then checks the 15
    // writes they covered.
    for sync in ["--fsync=5", "--fdatasync=5"] {
        let j = ok_json(
            &job(&[
                "--size=64k",
                "--bs=4k",
                "--rw=write",
                sync,
                "--verify=crc32c",
                "--verify_policy=fsynced",
                "--verify_state_save=0",
            ]),
            d.path(),
        );
        assert_eq!(n(&j["sync"]["total_ios"]), 3, "{sync}");
        assert_eq!(n(&j["read"]["total_ios"]), 15, "{sync}");
    }
}

#[test]
fn one_file_from_offset_zero() {
    let d = tempfile::tempdir().unwrap();
    for (extra, msg) in [
        (
            &["--nrfiles=2"][..],
            "page_fault ioengine does not support multiple files",
        ),
        (
            &["--filename=a:b"],
            "page_fault ioengine does not support multiple files",
        ),
        (
            &["--offset=4k"],
            "page_fault engine does not support start_offset",
        ),
    ] {
        let mut a = job(&["--size=1m"]);
        a.extend(extra.iter().map(|s| s.to_string()));
        let r = run(&a, d.path());
        assert_eq!(r.code, 1, "{extra:?}: {}", r.stdout);
        assert!(r.stderr.contains(msg), "{extra:?}: {}", r.stderr);
    }
    // A percentage offset is not a start offset (fio's check is on the byte value); each
    // clone of offset_increment maps up to where its I/O ends.
    // It moves what the null engine moves with the same options.
    let opts = ["--size=1m", "--offset=50%", "--rw=write"];
    let j = ok_json(&job(&opts), d.path());
    let mut null = job(&opts);
    null[1] = "--ioengine=null".into();
    let k = ok_json(&null, d.path());
    assert_eq!(n(&j["error"]), 0);
    assert_eq!(n(&j["write"]["io_bytes"]), n(&k["write"]["io_bytes"]));
    assert!(n(&j["write"]["io_bytes"]) > 0);
    let r = run(
        &job(&[
            "--size=256k",
            "--rw=write",
            "--numjobs=2",
            "--offset_increment=256k",
            "--group_reporting",
        ]),
        d.path(),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        n(&json_of(&r.stdout)["jobs"][0]["write"]["io_bytes"]),
        512 << 10
    );
    assert!(entries(d.path()).is_empty(), "{:?}", entries(d.path()));
}

#[test]
fn enghelp_lists_it_and_fio_333_does_not_have_it() {
    let d = tempfile::tempdir().unwrap();
    let r = flexio(&["--enghelp"], d.path());
    assert!(r.stdout.contains("\tpage_fault\n"), "{}", r.stdout);
    let r = flexio(&["--enghelp=page_fault"], d.path());
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("IO engine page_fault has no options"),
        "{}",
        r.stdout
    );
    // Under --compat=3.33 it is unknown: not listed, not run, not described.
    let r = flexio(&["--compat=3.33", "--enghelp"], d.path());
    assert!(!r.stdout.contains("page_fault"), "{}", r.stdout);
    assert!(r.stdout.contains("\tmmap\n"), "{}", r.stdout);
    let r = flexio(&["--compat=3.33", "--enghelp=page_fault"], d.path());
    assert_eq!(r.code, 1, "{}", r.stdout);
    let args = ["--name=j", "--ioengine=page_fault", "--size=1m"];
    for r in [
        flexio(&[&["--compat=3.33"][..], &args].concat(), d.path()),
        run_in_env(&flexio_bin(), &args, d.path(), ORACLE_COMPAT),
    ] {
        assert_eq!(r.code, 1, "{}", r.stdout);
        assert!(
            r.stderr.contains("unknown ioengine 'page_fault'"),
            "{}",
            r.stderr
        );
    }
    // The installed fio 3.33 refuses it too, and does not list it.
    if let Some(fio) = fio_bin() {
        let f = run_in(&fio, &args, d.path());
        assert_eq!(f.code, 1, "{}", f.stdout);
        assert!(
            f.stderr.contains("engine page_fault not loadable"),
            "{}",
            f.stderr
        );
        let f = run_in(&fio, &["--enghelp"], d.path());
        assert!(!f.stdout.contains("page_fault"), "{}", f.stdout);
    }
    assert!(entries(d.path()).is_empty(), "{:?}", entries(d.path()));
}
