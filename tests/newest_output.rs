//! flexio's default output is the newest fio's (fio-3.42-delta.md §5), and `--compat=3.33`
//! (`FLEXIO_COMPAT=3.33`) gives fio 3.33's: each run here is made three times, by flexio,
//! by flexio as fio 3.33 and (where installed) by fio 3.33, and the three are compared.

use crate::common;
use common::*;
use serde_json::Value;
use std::path::Path;

/// flexio with the newest fio's output (the default) and as fio 3.33, in `dir`.
fn newest_and_old(args: &[&str], dir: &Path) -> (Run, Run) {
    let new = run_bounded(&flexio_bin(), args, dir, &[], 60);
    assert_eq!(new.code, 0, "{args:?}: {}", new.stderr);
    let old = run_bounded(&flexio_bin(), args, dir, ORACLE_COMPAT, 60);
    assert_eq!(old.code, 0, "{args:?} as 3.33: {}", old.stderr);
    (new, old)
}

fn line<'a>(text: &'a str, start: &str) -> &'a str {
    text.lines()
        .map(str::trim_start)
        .find(|l| l.starts_with(start))
        .unwrap_or_else(|| panic!("no line starting {start:?} in\n{text}"))
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

/// A write job with fdatasync every 16 writes, on the disk under the temporary directory.
const SYNC_JOB: &[&str] = &[
    "--name=s",
    "--filename=f",
    "--size=4m",
    "--rw=write",
    "--bs=4k",
    "--fdatasync=16",
];

#[test]
fn normal_output_is_the_newest_fios_and_fio_3_33s_under_compat() {
    let d = tempfile::tempdir().unwrap();
    let (new, old) = newest_and_old(SYNC_JOB, d.path());
    let (n, o) = (&new.stdout, &old.stdout);
    // Zone resets only for zonemode=zbd jobs.
    assert!(!line(n, "write: IOPS=").contains("zone resets"), "{n}");
    assert!(line(o, "write: IOPS=").ends_with("; 0 zone resets"), "{o}");
    // Syncs: all four kinds in the fourth total (fio 3.33: fdatasyncs in short=).
    assert_eq!(
        line(n, "issued rwts:"),
        "issued rwts: total=0,1024,0,63 short=0,0,0,0 dropped=0,0,0,0"
    );
    assert_eq!(
        line(o, "issued rwts:"),
        "issued rwts: total=0,1024,0,0 short=63,0,0,0 dropped=0,0,0,0"
    );
    assert!(
        n.contains("\n  fsync/fdatasync/sync_file_range/syncfs:\n"),
        "{n}"
    );
    assert!(o.contains("\n  fsync/fdatasync/sync_file_range:\n"), "{o}");
    assert_eq!(
        line(n, "latency   :"),
        "latency   : target=0.00ns, window=0.00ns, percentile=100.00%, depth=1"
    );
    assert_eq!(
        line(o, "latency   :"),
        "latency   : target=0, window=0, percentile=100.00%, depth=1"
    );
    if n.contains("Disk stats") {
        let disk = regex::Regex::new(r"(?m)^  \S+: ios=\d+/\d+, sectors=\d+/\d+, merge=").unwrap();
        assert!(disk.is_match(n), "{n}");
        assert!(!o.contains("sectors="), "{o}");
    }
    let Some(fio) = fio_bin() else { return };
    let f = run_in(&fio, SYNC_JOB, d.path());
    assert_eq!(f.code, 0, "{}", f.stderr);
    assert_same_shape(&f.stdout, o, "fdatasync job as fio 3.33");
    assert_eq!(line(&f.stdout, "issued rwts:"), line(o, "issued rwts:"));
}

/// The JSON keys the newest fio adds (delta §5.2), and fio 3.33's document under compat.
#[test]
fn json_has_the_newest_fios_keys_and_fio_3_33s_under_compat() {
    let d = tempfile::tempdir().unwrap();
    let mut args = SYNC_JOB.to_vec();
    args.extend(["--time_based", "--runtime=300ms", "--output-format=json"]);
    let before = now_ms();
    let (new, old) = newest_and_old(&args, d.path());
    let after = now_ms();
    let (n, o) = (json_of(&new.stdout), json_of(&old.stdout));
    let (jn, jo) = (&n["jobs"][0], &o["jobs"][0]);
    let start = jn["job_start"].as_u64().expect("job_start");
    assert!(
        (before..=after).contains(&start),
        "{before} <= {start} <= {after}"
    );
    assert!(jo.get("job_start").is_none());
    assert_eq!(jn["latency_target_ns"], 0);
    assert_eq!(jn["latency_window_us"], 0);
    assert!(jo.get("latency_target_ns").is_none() && jo.get("latency_window_us").is_none());
    // A value-less flag keeps its empty value; fio 3.33 drops it.
    assert_eq!(jn["job options"]["time_based"], "");
    assert!(jo["job options"].get("time_based").is_none());
    assert!(jn["sync"]["total_ios"].as_u64().unwrap() > 0);
    assert_eq!(jn["read"]["short_ios"], 0);
    assert_eq!(
        jo["sync"]["total_ios"], 0,
        "fio 3.33 counted fdatasyncs as short reads"
    );
    assert!(jo["read"]["short_ios"].as_u64().unwrap() > 0);
    if let Some(disks) = n["disk_util"].as_array() {
        assert!(disks[0]["read_sectors"].is_u64() && disks[0]["write_sectors"].is_u64());
        assert!(o["disk_util"][0].get("read_sectors").is_none());
    }
    assert_eq!(n["fio version"], "fio-3.42");
    assert_eq!(o["fio version"], "fio-3.33");
    // The two documents differ in exactly those keys (flexio's own sections aside).
    let strip = |v: &Value| {
        let mut v = v.clone();
        v.as_object_mut().unwrap().remove("flexio");
        for j in v["jobs"].as_array_mut().unwrap() {
            j.as_object_mut().unwrap().remove("flexio");
        }
        v
    };
    let mut diffs = Vec::new();
    json_shape_diffs(&strip(&o), &strip(&n), "", &mut diffs);
    assert!(!diffs.is_empty());
    for dline in &diffs {
        let known = [
            "job_start",
            "latency_target_ns",
            "time_based",
            "read_sectors",
        ];
        assert!(
            known.iter().any(|k| dline.contains(k)),
            "unexpected difference: {dline}"
        );
    }
    let Some(fio) = fio_bin() else { return };
    let f = run_in(&fio, &args, d.path());
    assert_eq!(f.code, 0, "{}", f.stderr);
    assert_same_json_shape(&f.stdout, &old.stdout, "JSON as fio 3.33");
}

/// A latency target: the newest fio prints it and its window with units.
#[test]
fn latency_target_line_has_units() {
    let d = tempfile::tempdir().unwrap();
    let args = [
        "--name=t",
        "--ioengine=null",
        "--size=16m",
        "--latency_target=10ms",
        "--latency_window=1s",
        "--latency_percentile=99",
    ];
    let (new, old) = newest_and_old(&args, d.path());
    let lat = regex::Regex::new(
        r"^latency   : target=10\.00ms, window=1000\.00ms, percentile=99\.00%, depth=\d+$",
    )
    .unwrap();
    assert!(
        lat.is_match(line(&new.stdout, "latency   :")),
        "{}",
        new.stdout
    );
    let lat = regex::Regex::new(
        r"^latency   : target=10000000, window=1000000, percentile=99\.00%, depth=\d+$",
    )
    .unwrap();
    assert!(
        lat.is_match(line(&old.stdout, "latency   :")),
        "{}",
        old.stdout
    );
    let Some(fio) = fio_bin() else { return };
    let f = run_in(&fio, &args, d.path());
    assert!(lat.is_match(line(&f.stdout, "latency   :")), "{}", f.stdout);
}

/// `job_start_clock_id` (fio 3.36): the clock of `job_start`; 1 is CLOCK_MONOTONIC, ms since
/// boot. fio 3.33 does not know the option.
#[test]
fn job_start_clock_id_picks_the_clock() {
    let d = tempfile::tempdir().unwrap();
    let args = [
        "--name=t",
        "--ioengine=null",
        "--size=1m",
        "--job_start_clock_id=1",
        "--output-format=json",
    ];
    let uptime = || -> u64 {
        let t = std::fs::read_to_string("/proc/uptime").unwrap();
        (t.split_whitespace().next().unwrap().parse::<f64>().unwrap() * 1000.0) as u64
    };
    let (a, r, b) = (uptime(), flexio(&args, d.path()), uptime());
    assert_eq!(r.code, 0, "{}", r.stderr);
    let start = json_of(&r.stdout)["jobs"][0]["job_start"].as_u64().unwrap();
    // CLOCK_MONOTONIC and /proc/uptime (CLOCK_BOOTTIME) part only by time suspended.
    assert!(
        start <= b + 1000 && start + 86_400_000 > a,
        "{a} {start} {b}"
    );
    assert!(start < now_ms() / 2, "not the wall clock: {start}");
    let old = run_in_env(&flexio_bin(), &args, d.path(), ORACLE_COMPAT);
    assert_eq!(old.code, 1);
    assert!(old.stderr.contains("job_start_clock_id"), "{}", old.stderr);
}

/// A time-limited writer with verify_backlog: the newest fio prints the backlog's reads
/// (with the loop's runtime), fio 3.33 does not (delta §5.1).
#[test]
fn verify_backlog_reads_of_a_time_based_writer() {
    let d = tempfile::tempdir().unwrap();
    let args = [
        "--name=v",
        "--filename=f",
        "--size=4m",
        "--rw=write",
        "--verify=crc32c",
        "--verify_backlog=16",
        "--time_based",
        "--runtime=1",
    ];
    let (new, old) = newest_and_old(&args, d.path());
    let (n, o) = (&new.stdout, &old.stdout);
    let rt = |l: &str| -> u64 {
        let c = regex::Regex::new(r"/(\d+)msec\)")
            .unwrap()
            .captures(l)
            .unwrap();
        c[1].parse().unwrap()
    };
    let (r, w) = (line(n, "read: IOPS="), line(n, "write: IOPS="));
    assert!(rt(r) + 5 >= rt(w) && rt(r) >= 900, "{n}");
    assert!(n.contains("\n   READ: bw="), "{n}");
    assert!(
        !o.contains("read: IOPS=") && !o.contains("READ: bw="),
        "{o}"
    );
    let Some(fio) = fio_bin() else { return };
    let f = run_in(&fio, &args, d.path());
    assert_same_shape(&f.stdout, o, "verify_backlog as fio 3.33");
}

/// unified_rw_reporting=both: the newest fio's mixed line has the numbers without the rate
/// unit, fio 3.33's zeros (delta §5.1).
#[test]
fn unified_both_mixed_line() {
    let d = tempfile::tempdir().unwrap();
    let args = [
        "--name=t",
        "--ioengine=null",
        "--size=1m",
        "--rw=rw",
        "--unified_rw_reporting=both",
    ];
    let (new, old) = newest_and_old(&args, d.path());
    let mixed = regex::Regex::new(
        r"^mixed: IOPS=\S+, BW=[\d.]+[KMGT]?i? \([\d.]+[kMGT]?\)\(1024KiB/\d+msec\)$",
    )
    .unwrap();
    let nl = line(&new.stdout, "mixed: IOPS=");
    assert!(
        mixed.is_match(nl) && !nl.starts_with("mixed: IOPS=0,"),
        "{nl}"
    );
    let ol = line(&old.stdout, "mixed: IOPS=");
    assert!(ol.starts_with("mixed: IOPS=0, BW=0 (0)(0B/"), "{ol}");
    let Some(fio) = fio_bin() else { return };
    let f = run_in(&fio, &args, d.path());
    assert_same_shape(&f.stdout, &old.stdout, "unified both as fio 3.33");
    assert!(line(&f.stdout, "mixed: IOPS=").starts_with("mixed: IOPS=0, BW=0 (0)(0B/"));
}

/// log_prio=1 carries the priority hint (fio 3.36): class << 13 | hint << 3 | level.
#[test]
fn log_prio_carries_the_hint() {
    let d = tempfile::tempdir().unwrap();
    let r = flexio(
        &[
            "--name=p",
            "--ioengine=null",
            "--size=64k",
            "--prioclass=2",
            "--prio=3",
            "--priohint=5",
            "--log_prio=1",
            "--write_lat_log=l",
            "--output-format=terse",
        ],
        d.path(),
    );
    if r.code != 0 && r.stderr.contains("hint") {
        eprintln!("SKIP: this kernel refuses I/O priority hints: {}", r.stderr);
        return;
    }
    assert_eq!(r.code, 0, "{}", r.stderr);
    let log = std::fs::read_to_string(d.path().join("l_lat.1.log")).unwrap();
    assert!(log.lines().count() == 16, "{log}");
    assert!(log.lines().all(|l| l.ends_with(", 0x402b")), "{log}");
}

/// The ids fio's helper scripts and readers key on are unchanged in the newest layout:
/// the json+ bins and percentiles, the log columns (tests/consumers.rs runs the scripts).
#[test]
fn json_plus_of_the_newest_layout_keeps_fios_structure() {
    let d = tempfile::tempdir().unwrap();
    let args = [
        "--name=t",
        "--ioengine=null",
        "--size=4m",
        "--output-format=json+",
    ];
    let (new, old) = newest_and_old(&args, d.path());
    let (n, o): (Value, Value) = (json_of(&new.stdout), json_of(&old.stdout));
    for v in [&n, &o] {
        let clat = &v["jobs"][0]["read"]["clat_ns"];
        let bins = clat["bins"].as_object().expect("bins");
        assert!(!bins.is_empty() && bins.keys().all(|k| k.parse::<u64>().is_ok()));
        assert_eq!(clat["percentile"].as_object().map(|p| p.len()), Some(17));
    }
}
