//! Issue 28's log items: per-I/O bandwidth and IOPS logs hold every I/O, trimwrite's trims
//! logged before their writes, syncs on the null engine, and output into a closed pipe.

mod common;
use common::*;
use std::path::Path;

/// Lines of `name` in `dir`.
fn line_count(dir: &Path, name: &str) -> usize {
    std::fs::read_to_string(dir.join(name))
        .unwrap_or_else(|e| panic!("{name}: {e}"))
        .lines()
        .count()
}

/// The job of issue 28 item 7 (`filesize` / `bs` I/Os of the null engine), per-I/O bw and
/// IOPS logs without per-job suffixes, with offsets.
fn per_io_job(filesize: &str, extra: &[&str]) -> Vec<String> {
    let mut a: Vec<String> = [
        "--name=job",
        "--ioengine=null",
        "--bs=128K",
        "--rw=write",
        "--iodepth=1",
        "--write_bw_log=test",
        "--write_iops_log=test",
        "--per_job_logs=0",
        "--log_offset=1",
        "--output-format=json",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    a.push(format!("--filesize={filesize}"));
    a.extend(extra.iter().map(|s| s.to_string()));
    a
}

fn strs(a: &[String]) -> Vec<&str> {
    a.iter().map(String::as_str).collect()
}

/// bw and IOPS logs and sample counts of a per-I/O job: one line and one sample per I/O.
fn assert_one_line_per_io(dir: &Path, stdout: &str, ios: usize, what: &str) {
    let bw = line_count(dir, "test_bw.log");
    let iops = line_count(dir, "test_iops.log");
    assert_eq!((bw, iops), (ios, ios), "{what}: bw and iops log lines");
    let j = json_of(stdout);
    let w = &j["jobs"][0]["write"];
    assert_eq!(w["total_ios"], ios as u64, "{what}");
    // log_avg_msec=0 turns the job's bw/IOPS statistics into per-I/O samples too.
    assert_eq!(w["bw_samples"], ios as u64, "{what}: bw samples");
    assert_eq!(w["iops_samples"], ios as u64, "{what}: iops samples");
}

#[test]
fn per_io_bw_and_iops_logs_hold_every_io() {
    // Issue 28's own job: 1000 MiB in 128 KiB writes, 8000 I/Os (7,792 bw lines before).
    let d = tempfile::tempdir().unwrap();
    let r = flexio(&strs(&per_io_job("1000M", &[])), d.path());
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_one_line_per_io(d.path(), &r.stdout, 8000, "default clock");

    // A microsecond clock makes nearly every null I/O complete within one tick (clat 0):
    // fio logs those with rate 0; none may be skipped.
    let d = tempfile::tempdir().unwrap();
    let r = flexio(
        &strs(&per_io_job("100M", &["--clocksource=gettimeofday"])),
        d.path(),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_one_line_per_io(d.path(), &r.stdout, 800, "gettimeofday");
    let bw = std::fs::read_to_string(d.path().join("test_bw.log")).unwrap();
    let zeros = bw
        .lines()
        .filter(|l| l.split(", ").nth(1) == Some("0"))
        .count();
    assert!(zeros > 0, "clat 0 gives rate 0 lines:\n{bw}");
    for l in bw.lines() {
        let c: Vec<&str> = l.split(", ").collect();
        assert_eq!(c.len(), 6, "{l}");
        assert_eq!(&c[2..4], ["1", "131072"], "{l}");
    }
    let j = json_of(&r.stdout);
    assert_eq!(j["jobs"][0]["write"]["bw_min"], 0, "rate 0 samples count");
}

#[test]
fn per_io_log_line_counts_equal_fios() {
    let Some(fio) = fio_bin() else { return };
    for (size, ios, extra) in [
        ("1000M", 8000, &[][..]),
        ("100M", 800, &["--clocksource=gettimeofday"][..]),
    ] {
        let a = per_io_job(size, extra);
        let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let (d1, d2) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let r1 = run_in(&fio, &strs(&a), d1.path());
        assert_eq!(r1.code, 0, "fio {a:?}: {}", r1.stderr);
        let r2 = flexio_oracle(&strs(&a), d2.path());
        assert_eq!(r2.code, 0, "flexio {a:?}: {}", r2.stderr);
        assert_one_line_per_io(d1.path(), &r1.stdout, ios, "fio 3.33");
        assert_one_line_per_io(d2.path(), &r2.stdout, ios, "flexio --compat=3.33");
    }
}
