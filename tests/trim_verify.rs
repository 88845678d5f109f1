//! Trim verification (trim_percentage, trim_backlog, trim_backlog_batch, trim_verify_zero)
//! on loop devices, against fio 3.33 where fio 3.33 can answer.
//!
//! fio 3.33 aborts a trim-verify job at its first trim (an assertion: the job does not
//! "trim" in its rw mode); the newest fio issues the trims. So the oracle comparisons are:
//! the first trim (after how many writes, and which block the trim generator chose), which
//! fio 3.33 reaches before it aborts, and the jobs where these options lead to no trim at
//! all. The newest fio's behaviour (flexio's default) is checked by its own rules: the
//! share of trims, the batches, the zeros on the device, the read-back.
//!
//! A device that acknowledges discards without zeroing is a loop device over a
//! flexio-faultfs file with `--discard-keeps-data`. Tests needing root, loop devices or
//! FUSE print `SKIP:` unless FLEXIO_REQUIRE_FS=1.
//!
//! Regular files have no discard (fio's trim is BLKDISCARD: ENOTTY on a file, and so in
//! flexio by default); flexio's `trim_mode=punch` punches holes instead, so trim
//! verification works on files (tmpfs and ext4 here) and zeroes ranges of devices.

use crate::common;
use common::faultfs::FaultFs;
use common::fstargets::{FsKind, FsTarget};
use common::loopdev::LoopDev;
use common::*;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;
use std::process::Command;

fn required() -> bool {
    std::env::var("FLEXIO_REQUIRE_FS").as_deref() == Ok("1")
}

fn loopdev(size: u64) -> Option<LoopDev> {
    let d = LoopDev::new(size);
    if d.is_none() && required() {
        panic!("a loop device is required (FLEXIO_REQUIRE_FS=1)");
    }
    d
}

fn skip(why: &str) -> Option<FaultLoop> {
    if required() {
        panic!("{why} (FLEXIO_REQUIRE_FS=1)");
    }
    eprintln!("SKIP: {why}");
    None
}

/// A loop device over a flexio-faultfs file that acknowledges discards but keeps the
/// data. The loop device is detached before the file system is unmounted.
struct FaultLoop {
    dev: String,
    _fs: FaultFs,
}

impl FaultLoop {
    fn new() -> Option<FaultLoop> {
        if let Some(why) = common::loopdev::unavailable() {
            return skip(&why);
        }
        let fs = FaultFs::mount(&["--size", "16m", "--discard-keeps-data"], |why| {
            skip(why);
        })?;
        let o = Command::new("losetup")
            .args(["-f", "--show"])
            .arg(fs.data())
            .output()
            .unwrap();
        if !o.status.success() {
            return skip(&format!(
                "losetup over a FUSE file failed: {}",
                String::from_utf8_lossy(&o.stderr)
            ));
        }
        Some(FaultLoop {
            dev: String::from_utf8_lossy(&o.stdout).trim().to_string(),
            _fs: fs,
        })
    }
}

impl Drop for FaultLoop {
    fn drop(&mut self) {
        // Before the file system goes (its fields are dropped after this).
        let _ = Command::new("losetup").arg("-d").arg(&self.dev).status();
    }
}

fn job(dev: &str, extra: &[&str]) -> Vec<String> {
    let mut a: Vec<String> = [
        "--name=tv",
        &format!("--filename={dev}"),
        "--bs=4k",
        "--size=1m",
        "--verify=crc32c",
        "--ioengine=psync",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    a.extend(extra.iter().map(|s| s.to_string()));
    a
}

fn refs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

fn counts(r: &Run) -> ([u64; 3], i64) {
    let j = json_of(&r.stdout);
    let t = &j["jobs"][0];
    let n = |d: &str| t[d]["total_ios"].as_u64().unwrap();
    (
        [n("read"), n("write"), n("trim")],
        t["error"].as_i64().unwrap(),
    )
}

/// The first trim of a `--debug=io` log (its offset) and how many writes were queued
/// before it.
fn first_trim(log: &str, queue_word: &str) -> Option<(String, usize)> {
    let mut writes = 0;
    for l in log.lines() {
        if l.contains("ddir=2") {
            let off = l.split("off=").nth(1)?.split(',').next()?.to_string();
            return Some((off, writes));
        }
        if l.contains(queue_word) && l.contains("ddir=1") {
            writes += 1;
        }
    }
    None
}

#[test]
fn the_first_trim_comes_where_fio_333_puts_it() {
    let Some(fio) = fio_bin() else { return };
    let Some(lo) = loopdev(4 << 20) else { return };
    let d = tempfile::tempdir().unwrap();
    // (rw, trim_percentage, trim_backlog, randseed): the chosen block depends on the trim
    // generator's draws, its time on the backlog.
    for (rw, pct, backlog, seed) in [
        ("write", 5, 64, 1),
        ("write", 3, 100, 5),
        ("write", 10, 32, 1234),
        ("randwrite", 20, 24, 11),
        ("randwrite", 7, 40, 3),
        ("randwrite", 50, 8, 0x89),
    ] {
        let args = job(
            lo.path(),
            &[
                &format!("--rw={rw}"),
                &format!("--trim_percentage={pct}"),
                &format!("--trim_backlog={backlog}"),
                &format!("--randseed={seed}"),
                "--debug=io",
            ],
        );
        let f = run_in(&fio, &refs(&args), d.path());
        let all = format!("{}{}", f.stdout, f.stderr);
        let (f_off, f_writes) = first_trim(&all, "queue:")
            .unwrap_or_else(|| panic!("fio 3.33 issued no trim ({rw} {pct} {backlog}): {all}"));
        // fio 3.33 stops there: its own assertion (a trim in a job that does not trim).
        assert!(all.contains("fio_ro_check"), "fio 3.33 went on: {all}");
        let x = run_in_env(&flexio_bin(), &refs(&args), d.path(), ORACLE_COMPAT);
        assert_eq!(x.code, 0, "{}", x.stderr);
        let xall = format!("{}{}", x.stdout, x.stderr);
        let (x_off, x_writes) = first_trim(&xall, "queue:").expect("flexio trims");
        assert_eq!(
            (x_off.as_str(), x_writes),
            (f_off.as_str(), f_writes),
            "{rw} trim_percentage={pct} trim_backlog={backlog} randseed={seed}"
        );
        assert_eq!(
            f_writes as u64, backlog,
            "the first trim after trim_backlog writes"
        );
    }
}

#[test]
fn options_that_lead_to_no_trim_match_fio_333() {
    let Some(fio) = fio_bin() else { return };
    let Some(lo) = loopdev(4 << 20) else { return };
    let d = tempfile::tempdir().unwrap();
    let cases: [&[&str]; 4] = [
        // No backlog: nothing asks for the trims.
        &["--rw=write", "--trim_percentage=50"],
        // No share to trim.
        &["--rw=randwrite", "--trim_backlog=4"],
        // Without verify there is no log of written blocks to trim from.
        &[
            "--rw=write",
            "--verify=0",
            "--trim_percentage=50",
            "--trim_backlog=4",
        ],
        &[
            "--rw=randwrite",
            "--trim_percentage=100",
            "--trim_backlog_batch=2",
            "--trim_verify_zero=0",
        ],
    ];
    for extra in cases {
        let mut args = job(lo.path(), extra);
        args.push("--output-format=json".into());
        let f = run_in(&fio, &refs(&args), d.path());
        let x = run_in_env(&flexio_bin(), &refs(&args), d.path(), ORACLE_COMPAT);
        assert_eq!(f.code, 0, "fio {extra:?}: {}", f.stderr);
        assert_eq!(x.code, 0, "flexio {extra:?}: {}", x.stderr);
        let (fc, xc) = (counts(&f), counts(&x));
        assert_eq!(xc, fc, "{extra:?}: [read, write, trim] ios and error");
        assert_eq!(xc.0[2], 0, "{extra:?}: no trim");
    }
}

fn zero_blocks(dev: &str, blocks: u64) -> u64 {
    let mut f = std::fs::File::open(dev).unwrap();
    f.seek(SeekFrom::Start(0)).unwrap();
    let mut b = vec![0u8; 4096];
    (0..blocks)
        .filter(|_| {
            f.read_exact(&mut b).unwrap();
            b.iter().all(|x| *x == 0)
        })
        .count() as u64
}

#[test]
fn trims_take_their_share_and_read_back_as_zeros() {
    let Some(lo) = loopdev(4 << 20) else { return };
    let d = tempfile::tempdir().unwrap();
    let dev = lo.path();
    // Fill the device so a block reads zero only if it was trimmed.
    let fill = flexio(
        &[
            "--name=fill",
            &format!("--filename={dev}"),
            "--rw=write",
            "--bs=64k",
            "--size=1m",
            "--buffer_pattern=0x5a",
        ],
        d.path(),
    );
    assert_eq!(fill.code, 0, "{}", fill.stderr);
    for (pct, backlog, batch) in [(100, 1, 0), (50, 1, 0), (50, 16, 0), (30, 16, 4)] {
        let mut extra = vec![
            "--rw=randwrite".to_string(),
            format!("--trim_percentage={pct}"),
            format!("--trim_backlog={backlog}"),
            "--output-format=json".to_string(),
        ];
        if batch > 0 {
            extra.push(format!("--trim_backlog_batch={batch}"));
        }
        let args = job(dev, &refs(&extra));
        let x = flexio(&refs(&args), d.path());
        assert_eq!(x.code, 0, "{pct}/{backlog}: {}", x.stderr);
        let ([r, w, t], err) = counts(&x);
        assert_eq!(err, 0);
        // The loop's bytes: writes and trims together fill the 1 MiB budget.
        assert_eq!(w + t, 256, "{pct}/{backlog}: writes {w} trims {t}");
        if batch == 0 {
            // The newest fio's own test: trims are write ios x percentage, within 10%.
            let want = w as f64 * pct as f64 / 100.0;
            assert!(
                (t as f64 - want).abs() <= 0.1 * want,
                "{pct}/{backlog}: {t} trims for {w} writes"
            );
        } else {
            // Smaller batches than the backlog's share trim fewer blocks: at most one
            // batch per trim_backlog writes.
            assert!(t <= (w / backlog + 1) * batch, "{t} trims for {w} writes");
            assert!(t > 0);
        }
        // Every logged block is read back, the trimmed ones checked for zeros.
        assert_eq!(r, w, "{pct}/{backlog}");
        // Random writes with a random map touch each block once: the trimmed ones are
        // the zero blocks of the region.
        assert_eq!(zero_blocks(dev, 256), t, "{pct}/{backlog}");
        let j = json_of(&x.stdout);
        assert!(j["jobs"][0]["trim"]["runtime"].as_u64().unwrap() > 0);
    }
    // The normal output shows the trims, as the newest fio does.
    let args = job(
        dev,
        &["--rw=write", "--trim_percentage=50", "--trim_backlog=8"],
    );
    let x = flexio(&refs(&args), d.path());
    assert_eq!(x.code, 0, "{}", x.stderr);
    assert!(x.stdout.contains("\n  trim: IOPS="), "{}", x.stdout);
    assert!(x.stdout.contains("\n   TRIM: bw="), "{}", x.stdout);
}

#[test]
fn batches_follow_trim_backlog_and_trim_backlog_batch() {
    let Some(lo) = loopdev(4 << 20) else { return };
    let d = tempfile::tempdir().unwrap();
    let args = job(
        lo.path(),
        &[
            "--rw=write",
            "--trim_percentage=50",
            "--trim_backlog=16",
            "--trim_backlog_batch=3",
            "--debug=io",
        ],
    );
    let x = flexio(&refs(&args), d.path());
    assert_eq!(x.code, 0, "{}", x.stderr);
    let log = format!("{}{}", x.stdout, x.stderr);
    // The sequence of queued writes and trims before the read-back.
    let seq: Vec<u8> = log
        .lines()
        .filter(|l| l.contains("queue:"))
        .map(|l| {
            if l.contains("ddir=2") {
                b't'
            } else if l.contains("ddir=1") {
                b'w'
            } else {
                b'r'
            }
        })
        .take_while(|c| *c != b'r')
        .collect();
    let mut writes = 0;
    let mut run = 0;
    let mut batches = 0;
    for c in &seq {
        if *c == b'w' {
            writes += 1;
            run = 0;
        } else {
            run += 1;
            assert!(run <= 3, "a batch longer than trim_backlog_batch");
            if run == 1 {
                batches += 1;
                // With trim_verify_zero the log keeps every write: a batch starts at
                // multiples of trim_backlog writes.
                assert_eq!(writes % 16, 0, "batch at {writes} writes");
            }
        }
    }
    assert!(batches >= 5, "{batches} batches");
}

#[test]
fn without_the_zero_check_and_without_the_read_back() {
    let Some(lo) = loopdev(4 << 20) else { return };
    let d = tempfile::tempdir().unwrap();
    let base = ["--rw=write", "--trim_percentage=50", "--trim_backlog=1"];
    let mut a = base.to_vec();
    a.extend(["--trim_verify_zero=0", "--output-format=json"]);
    let x = flexio(&refs(&job(lo.path(), &a)), d.path());
    assert_eq!(x.code, 0, "{}", x.stderr);
    let ([r, w, t], _) = counts(&x);
    assert!(t > 0);
    assert_eq!(r, w - t, "trimmed blocks are not read back");
    // do_verify=0: the newest fio trims all the same, and reads nothing.
    let mut a = base.to_vec();
    a.extend(["--do_verify=0", "--output-format=json"]);
    let x = flexio(&refs(&job(lo.path(), &a)), d.path());
    assert_eq!(x.code, 0, "{}", x.stderr);
    let ([r, w, t], _) = counts(&x);
    assert_eq!((r, w + t), (0, 256));
    assert!(t > 0);
    // Asynchronous engines at depth 8 make the same choices.
    let mut want = None;
    for e in ["psync", "libaio", "io_uring"] {
        let a = [
            "--rw=randwrite",
            "--trim_percentage=30",
            "--trim_backlog=16",
            "--trim_backlog_batch=4",
            "--iodepth=8",
            "--direct=1",
            "--output-format=json",
        ];
        let mut args = job(lo.path(), &a);
        args.push(format!("--ioengine={e}"));
        let x = flexio(&refs(&args), d.path());
        if e == "io_uring" && x.code != 0 && x.stderr.contains("io_uring") {
            eprintln!("SKIP: io_uring: {}", x.stderr.lines().next().unwrap_or(""));
            continue;
        }
        assert_eq!(x.code, 0, "{e}: {}", x.stderr);
        let c = counts(&x);
        assert_eq!(c.1, 0, "{e}");
        assert_eq!(*want.get_or_insert(c), c, "{e}");
    }
}

#[test]
fn a_trimmed_block_that_keeps_its_data_is_a_verify_failure() {
    let Some(fl) = FaultLoop::new() else { return };
    let d = tempfile::tempdir().unwrap();
    // direct=1: the data reaches the device before the discard (a buffered write still
    // in the page cache is dropped by the discard, and the kept data would be zeros).
    let base = [
        "--rw=write",
        "--size=256k",
        "--direct=1",
        "--trim_percentage=50",
        "--trim_backlog=8",
    ];
    let first_trim = |stderr: &str| {
        stderr
            .lines()
            .find(|l| l.contains("verify failed"))
            .map(str::to_string)
    };
    // The newest fio's message, then fio 3.33's wording under --compat=3.33.
    for (env, what) in [
        (&[][..], "verify failed for zeroed data at"),
        (ORACLE_COMPAT, "trim: verify failed at"),
    ] {
        let x = run_in_env(&flexio_bin(), &refs(&job(&fl.dev, &base)), d.path(), env);
        assert_eq!(x.code, 1, "{what}: {}{}", x.stdout, x.stderr);
        let line = first_trim(&x.stderr).unwrap_or_else(|| panic!("{}", x.stderr));
        // The first block chosen for trimming (seed 0x89): its header's first byte is not
        // zero.
        assert!(
            line.starts_with(&format!("{what} file {} offset ", fl.dev))
                && line.ends_with(", length 4096, block offset 0"),
            "{line}"
        );
        assert!(x.stdout.contains("err=84"), "{}", x.stdout);
    }
    // continue_on_error=verify: every trimmed block is reported, and counted.
    let mut a = base.to_vec();
    a.extend(["--continue_on_error=verify", "--output-format=json"]);
    let x = flexio(&refs(&job(&fl.dev, &a)), d.path());
    let ([r, w, t], _) = counts(&x);
    let failures = x
        .stderr
        .lines()
        .filter(|l| l.starts_with("verify failed for zeroed data"))
        .count() as u64;
    assert_eq!((failures, r), (t, w), "{}", x.stderr);
    let j = json_of(&x.stdout);
    assert_eq!(j["jobs"][0]["total_err"].as_u64(), Some(t));
    // Without trim_verify_zero the trimmed blocks are not checked: the job passes.
    let mut a = base.to_vec();
    a.extend(["--trim_verify_zero=0", "--output-format=json"]);
    let x = flexio(&refs(&job(&fl.dev, &a)), d.path());
    assert_eq!(x.code, 0, "{}", x.stderr);
    let ([r, w, t], err) = counts(&x);
    assert_eq!((err, r), (0, w - t));
}

#[test]
fn trims_that_cannot_be_done_fail_clearly() {
    let d = tempfile::tempdir().unwrap();
    let base = ["--rw=write", "--trim_percentage=50", "--trim_backlog=8"];
    // A regular file has no discard: the first trim fails with ENOTTY (fio's os_trim is
    // BLKDISCARD), after trim_backlog writes.
    let mut a = base.to_vec();
    a.push("--output-format=json");
    let x = flexio(&refs(&job("plain.dat", &a)), d.path());
    assert_eq!(x.code, 1, "{}", x.stderr);
    let ([_, w, t], err) = counts(&x);
    assert_eq!((err, w, t), (25, 8, 1), "{}", x.stderr);
    assert!(
        x.stderr.contains(
            "fio: io_u error on file plain.dat: Inappropriate ioctl for device: trim offset="
        ),
        "{}",
        x.stderr
    );
    // An engine that cannot trim is refused before the job runs.
    let mut a = base.to_vec();
    a.push("--ioengine=splice");
    let x = flexio(&refs(&job("plain.dat", &a)), d.path());
    assert_ne!(x.code, 0);
    assert!(
        x.stderr
            .contains("trims written blocks, which ioengine splice cannot do"),
        "{}",
        x.stderr
    );
    // --readonly refuses trim verification, even of a read job (the newest fio does).
    let x = flexio(
        &refs(&job(
            "plain.dat",
            &[
                "--readonly",
                "--rw=read",
                "--trim_percentage=100",
                "--trim_backlog=1",
            ],
        )),
        d.path(),
    );
    assert_ne!(x.code, 0);
    assert!(x.stderr.contains("--readonly"), "{}", x.stderr);
}

/// Blocks of 4 KiB of `path` that are all zeros, and the bytes the file has allocated.
fn zeros_and_allocated(path: &Path, blocks: u64) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    let zeros = zero_blocks(&path.display().to_string(), blocks);
    (zeros, std::fs::metadata(path).unwrap().blocks() * 512)
}

#[test]
fn trim_mode_punch_verifies_trims_on_files() {
    for kind in [FsKind::Tmpfs, FsKind::Ext4Loop] {
        let Some(t) = FsTarget::new(kind, 64 << 20) else {
            continue;
        };
        let d = tempfile::tempdir().unwrap();
        let f = t.path().join("t.dat");
        let fname = f.display().to_string();
        for (rw, pct, backlog, direct) in [
            ("randwrite", 50, 1, "0"),
            ("write", 30, 16, "1"),
            ("randwrite", 100, 4, "1"),
        ] {
            let what = format!(
                "{}: {rw} {pct}% backlog {backlog} direct={direct}",
                kind.name()
            );
            // Fill the file so a block reads zeros only if it was punched.
            let _ = std::fs::remove_file(&f);
            let fill = flexio(
                &[
                    "--name=fill",
                    &format!("--filename={fname}"),
                    "--rw=write",
                    "--bs=64k",
                    "--size=1m",
                    "--buffer_pattern=0x5a",
                ],
                d.path(),
            );
            assert_eq!(fill.code, 0, "{what}: {}", fill.stderr);
            let args = job(
                &fname,
                &[
                    &format!("--rw={rw}"),
                    &format!("--trim_percentage={pct}"),
                    &format!("--trim_backlog={backlog}"),
                    &format!("--direct={direct}"),
                    "--trim_mode=punch",
                    "--output-format=json",
                ],
            );
            let x = flexio(&refs(&args), d.path());
            assert_eq!(x.code, 0, "{what}: {}", x.stderr);
            let ([r, w, tr], err) = counts(&x);
            assert_eq!(err, 0, "{what}");
            assert!(tr > 0, "{what}: no trim");
            assert_eq!(w + tr, 256, "{what}: writes {w} trims {tr}");
            // Every write read back: the punched ones checked for zeros, the rest verified.
            assert_eq!(r, w, "{what}");
            // Each block written once: the punched ones are the zero blocks, and holes.
            let (zeros, allocated) = zeros_and_allocated(&f, 256);
            assert_eq!(zeros, tr, "{what}");
            assert!(
                allocated <= (256 - tr) * 4096 + (64 << 10),
                "{what}: {allocated} bytes allocated after {tr} of 256 blocks were punched"
            );
        }
        // The default is fio's: BLKDISCARD, which a regular file answers with ENOTTY.
        let args = job(
            &fname,
            &["--rw=write", "--trim_percentage=50", "--trim_backlog=8"],
        );
        let x = flexio(&refs(&args), d.path());
        assert_eq!(x.code, 1, "{}", x.stderr);
        assert!(
            x.stderr
                .contains("Inappropriate ioctl for device: trim offset="),
            "{}",
            x.stderr
        );
        // A punched block that does not read back as zeros is a verify failure: block 0
        // is written and punched first; the test writes into it while the (paced) write
        // phase goes on, before the read-back.
        let _ = std::fs::remove_file(&f);
        let args = job(
            &fname,
            &[
                "--rw=write",
                "--size=512k",
                "--rate_iops=,100",
                "--trim_percentage=100",
                "--trim_backlog=1",
                "--trim_mode=punch",
            ],
        );
        let child = spawn_flexio(&refs(&args), d.path(), &[]);
        std::thread::sleep(std::time::Duration::from_millis(500));
        {
            use std::os::unix::fs::FileExt;
            let h = std::fs::OpenOptions::new().write(true).open(&f).unwrap();
            h.write_all_at(&[0x77], 1000).unwrap();
        }
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{}: {stderr}", kind.name());
        assert!(
            stderr.contains(&format!(
                "verify failed for zeroed data at file {fname} offset 0, length 4096, block offset 1000"
            )),
            "{}: {stderr}",
            kind.name()
        );
    }
}

/// trim_mode=punch on a block device: fallocate zeroes the range (the kernel's
/// write-zeroes), so trim verification passes there too.
#[test]
fn trim_mode_punch_zeroes_device_ranges() {
    let Some(lo) = loopdev(4 << 20) else { return };
    let d = tempfile::tempdir().unwrap();
    let dev = lo.path();
    let fill = flexio(
        &[
            "--name=fill",
            &format!("--filename={dev}"),
            "--rw=write",
            "--bs=64k",
            "--size=1m",
            "--buffer_pattern=0x5a",
        ],
        d.path(),
    );
    assert_eq!(fill.code, 0, "{}", fill.stderr);
    for engine in ["psync", "libaio"] {
        let args = job(
            dev,
            &[
                "--rw=randwrite",
                "--trim_percentage=40",
                "--trim_backlog=4",
                "--trim_mode=punch",
                "--direct=1",
                "--iodepth=8",
                &format!("--ioengine={engine}"),
                "--output-format=json",
            ],
        );
        let x = flexio(&refs(&args), d.path());
        assert_eq!(x.code, 0, "{engine}: {}", x.stderr);
        let ([r, w, t], err) = counts(&x);
        assert_eq!((err, r, w + t), (0, w, 256), "{engine}");
        assert!(t > 0);
        assert_eq!(zero_blocks(dev, 256), t, "{engine}");
    }
    // An engine without file descriptors cannot punch: refused before the job runs.
    let x = flexio(
        &refs(&job(
            "x",
            &[
                "--ioengine=null",
                "--rw=write",
                "--trim_percentage=50",
                "--trim_backlog=8",
                "--trim_mode=punch",
            ],
        )),
        d.path(),
    );
    assert_eq!(x.code, 1, "{}", x.stderr);
    assert!(
        x.stderr.contains("trim_mode=punch punches holes"),
        "{}",
        x.stderr
    );
}
