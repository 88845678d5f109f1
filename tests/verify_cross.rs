//! Verification jobs end to end against the installed fio 3.33, both directions, with
//! flexio in fio 3.33's formats (`FLEXIO_COMPAT=3.33`): one tool writes (and verifies
//! its own writes), the other replays the same job with `verify_only` and checks exactly
//! what was written, header fields included (numberio, offset, seed), for sequential,
//! random and norandommap writes, blocks written more than once, intervals and header
//! offsets, patterns, iodepth 1 and 32, buffered and O_DIRECT. A byte changed behind both
//! tools' backs is then found by the replay, so the clean runs are not vacuous.
//!
//! The newest formats (flexio's default) get the same no-false-alarm matrix on their
//! own, since only fio 3.33 is installed here. Skips with `SKIP:` when fio is missing,
//! unless FLEXIO_REQUIRE_FIO=1.

mod common;
use common::*;
use std::path::Path;

const SIZE: &str = "--size=1m";

/// The workloads: verify options on top of a 4 KiB block job.
const WORKLOADS: &[&[&str]] = &[
    &["--rw=write", "--verify=crc32c"],
    &["--rw=randwrite", "--verify=md5"],
    &["--rw=randwrite", "--norandommap", "--verify=xxhash"],
    // Blocks written more than once (about 1.6 times on average).
    &[
        "--rw=randwrite",
        "--norandommap",
        "--io_size=3m",
        "--verify=crc64",
    ],
    &[
        "--rw=randwrite",
        "--verify=sha1",
        "--verify_interval=1024",
        "--verify_offset=200",
    ],
    &["--rw=randwrite", "--verify_pattern=0x5a%o\"flex\""],
    &[
        "--rw=write",
        "--verify=pattern",
        "--verify_pattern=0xdeadbeef%o",
    ],
    &["--rw=randrw", "--verify=crc32c"],
];

const ENGINES: &[&[&str]] = &[
    &["--ioengine=psync"],
    &["--ioengine=libaio", "--iodepth=32"],
];

fn args<'a>(file: &'a str, w: &[&'a str], e: &[&'a str], direct: &'a str) -> Vec<&'a str> {
    let mut a = vec!["--name=x", file, "--bs=4k", SIZE, direct];
    a.extend_from_slice(w);
    a.extend_from_slice(e);
    a
}

fn clean(r: &Run, what: &str) {
    assert_eq!(r.code, 0, "{what}: exit {}\n{}", r.code, r.stderr);
    assert!(
        !r.stderr.contains("verify") && !r.stderr.contains("bad "),
        "{what}: {}",
        r.stderr
    );
}

fn flexio333(a: &[&str], d: &Path) -> Run {
    run_in_env(&flexio_bin(), a, d, ORACLE_COMPAT)
}

fn flip(path: &Path, at: u64) {
    use std::os::unix::fs::FileExt;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .unwrap();
    let mut b = [0u8];
    f.read_exact_at(&mut b, at).unwrap();
    b[0] ^= 0x21;
    f.write_all_at(&b, at).unwrap();
}

/// Whether the job writes every block of the file at least once (a damaged byte anywhere
/// is then in a written block).
fn covers_file(w: &[&str]) -> bool {
    !w.contains(&"--norandommap")
}

#[test]
fn fio_333_and_flexio_replay_each_others_verify_jobs() {
    let Some(fio) = fio_bin() else { return };
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("c.dat");
    let fs = format!("--filename={}", f.display());
    for w in WORKLOADS {
        for e in ENGINES {
            for direct in ["--direct=0", "--direct=1"] {
                let job = args(&fs, w, e, direct);
                let what = job[2..].join(" ");
                let mut replay = job.clone();
                replay.push("--verify_only");
                // flexio writes and verifies; fio replays.
                let _ = std::fs::remove_file(&f);
                clean(&flexio333(&job, d.path()), &format!("flexio {what}"));
                clean(
                    &run_in(&fio, &replay, d.path()),
                    &format!("fio replays flexio's {what}"),
                );
                // fio writes and verifies; flexio replays.
                let _ = std::fs::remove_file(&f);
                clean(&run_in(&fio, &job, d.path()), &format!("fio {what}"));
                clean(
                    &flexio333(&replay, d.path()),
                    &format!("flexio replays fio's {what}"),
                );
                // A changed byte is found by both replays (once per workload).
                if direct == "--direct=0" && e.len() == 1 && covers_file(w) {
                    flip(&f, 5 * 4096 + 3000);
                    let a = run_in(&fio, &replay, d.path());
                    let b = flexio333(&replay, d.path());
                    // fio 3.33 prints the failure of an interval after the first and
                    // then exits 0 (the error is lost); flexio fails the job.
                    assert!(
                        a.stderr.contains("verify failed") || a.stderr.contains("bad "),
                        "fio finds the damage in {what}: {}",
                        a.stderr
                    );
                    assert_eq!(b.code, 1, "{what}: {}", b.stderr);
                    assert!(b.stderr.contains("flexio: classification:"), "{}", b.stderr);
                }
            }
        }
    }
}

#[test]
fn newest_format_jobs_verify_clean_where_blocks_are_rewritten() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("n.dat");
    let fs = format!("--filename={}", f.display());
    // The cases that made false alarms (`bad header rand_seed`) before the log kept only
    // each block's last write, and the check switches' automatic rules.
    let extra: &[&[&str]] = &[
        &["--rw=randwrite", "--io_size=4m", "--verify=crc32c"],
        &["--rw=write", "--io_size=3m", "--verify=crc32c"],
        &[
            "--rw=randwrite",
            "--verify=crc32c",
            "--verify_backlog=8",
            "--norandommap",
        ],
        &[
            "--rw=randwrite",
            "--bssplit=4k/50:16k/50",
            "--norandommap",
            "--verify=sha3-256",
        ],
        &[
            "--rw=randwrite",
            "--verify=crc16",
            "--verify_header_seed=1",
            "--verify_write_sequence=1",
        ],
        &[
            "--rw=randwrite",
            "--verify=pattern_hdr",
            "--verify_pattern=%o",
            "--verify_pattern_interval=512",
        ],
    ];
    for w in WORKLOADS.iter().chain(extra) {
        for e in ENGINES {
            for direct in ["--direct=0", "--direct=1"] {
                let job = args(&fs, w, e, direct);
                let what = job[2..].join(" ");
                let _ = std::fs::remove_file(&f);
                clean(&flexio(&job, d.path()), &what);
                let mut replay = job.clone();
                replay.push("--verify_only");
                clean(&flexio(&replay, d.path()), &format!("replay {what}"));
            }
        }
    }
    // fio 3.33 reads the newest format as a generation mismatch, and flexio says so.
    let job = args(&fs, &["--rw=write", "--verify=crc32c"], &[], "--direct=0");
    let _ = std::fs::remove_file(&f);
    clean(&flexio(&job, d.path()), "newest write");
    let mut replay = job.clone();
    replay.push("--verify_only");
    let r = flexio333(&replay, d.path());
    assert_eq!(r.code, 1);
    assert!(
        r.stderr
            .contains("flexio: classification: other generation"),
        "{}",
        r.stderr
    );
}

/// experimental_verify re-generates the written offsets and seeds: clean where fio 3.33 is
/// clean, the same report where fio 3.33 reports (a block rewritten under norandommap,
/// checked against its first write), and clean in the newest format, which switches the
/// write-sequence check off for that case.
#[test]
fn experimental_verify_replays_like_fio() {
    let Some(fio) = fio_bin() else { return };
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("e.dat");
    let fs = format!("--filename={}", f.display());
    let keep = |s: &str| -> Vec<String> {
        s.lines()
            .filter(|l| !l.contains("flexio") && !l.starts_with("fio: pid"))
            .map(String::from)
            .collect()
    };
    for w in [
        &["--rw=randwrite"][..],
        &[
            "--rw=write",
            "--ioengine=libaio",
            "--iodepth=32",
            "--direct=1",
        ][..],
        &["--rw=randwrite", "--bssplit=4k/50:16k/50"][..],
        &["--rw=randwrite", "--norandommap"][..],
    ] {
        let mut job = vec![
            "--name=x",
            fs.as_str(),
            "--bs=4k",
            SIZE,
            "--verify=crc32c",
            "--experimental_verify=1",
        ];
        job.extend_from_slice(w);
        let what = job[2..].join(" ");
        let _ = std::fs::remove_file(&f);
        let a = run_in(&fio, &job, d.path());
        let _ = std::fs::remove_file(&f);
        let b = flexio333(&job, d.path());
        assert_eq!(a.code, b.code, "{what}: {}\n{}", a.stderr, b.stderr);
        assert_eq!(keep(&a.stderr), keep(&b.stderr), "{what}");
        let _ = std::fs::remove_file(&f);
        clean(&flexio(&job, d.path()), &format!("newest {what}"));
    }
    // What the replay cannot reproduce is refused, not verified wrongly.
    let r = flexio(
        &[
            "--name=x",
            &fs,
            "--bs=4k",
            SIZE,
            "--rw=randrw",
            "--verify=md5",
            "--experimental_verify=1",
        ],
        d.path(),
    );
    assert_eq!(r.code, 1);
    assert!(
        r.stderr
            .contains("experimental_verify with a read/write mix is not supported by flexio"),
        "{}",
        r.stderr
    );
}

/// verify_async: the checks run on verifier threads with the same outcome as inline
/// checks: clean runs stay clean (no false alarm with iodepth 32 and rewritten blocks),
/// every damaged block is reported under continue_on_error, and the first failure ends
/// the job otherwise, as fio 3.33 reports it (`func=async_verify`).
#[test]
fn verify_async_checks_on_verifier_threads() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("a.dat");
    let fs = format!("--filename={}", f.display());
    let job = [
        "--name=x",
        fs.as_str(),
        "--bs=4k",
        "--size=4m",
        "--verify=crc32c",
        "--verify_async=2",
    ];
    for w in [
        &["--rw=randwrite"][..],
        &[
            "--rw=randwrite",
            "--norandommap",
            "--io_size=8m",
            "--ioengine=libaio",
            "--iodepth=32",
        ][..],
    ] {
        let mut a = job.to_vec();
        a.extend_from_slice(w);
        let _ = std::fs::remove_file(&f);
        clean(&flexio(&a, d.path()), &a.join(" "));
    }
    // A fully written file, three blocks damaged.
    let mut a = job.to_vec();
    a.push("--rw=write");
    let _ = std::fs::remove_file(&f);
    clean(&flexio(&a, d.path()), "write");
    for at in [8192 + 100, 40960 + 3000, 1_048_576 + 700] {
        flip(&f, at);
    }
    let mut r = job.to_vec();
    r.extend(["--rw=read", "--continue_on_error=verify"]);
    let out = flexio(&r, d.path());
    let found: Vec<&str> = out
        .stderr
        .lines()
        .filter(|l| l.starts_with("crc32c: verify failed"))
        .collect();
    assert_eq!(found.len(), 3, "{}", out.stderr);
    for at in [8192, 40960, 1_048_576] {
        assert!(
            found.iter().any(|l| l.contains(&format!(" offset {at}, "))),
            "{at}: {found:?}"
        );
    }
    let mut r = job.to_vec();
    r.push("--rw=read");
    let out = flexio(&r, d.path());
    assert_eq!(out.code, 1);
    let all = format!("{}{}", out.stdout, out.stderr);
    assert!(all.contains("func=async_verify"), "{all}");
    if let Some(fio) = fio_bin() {
        let a = run_in(&fio, &r, d.path());
        assert_eq!(a.code, 1);
        let all = format!("{}{}", a.stdout, a.stderr);
        assert!(all.contains("func=async_verify"), "{all}");
    }
}
