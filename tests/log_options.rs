//! The log options against fio 3.33: compressed logs (`log_compression`,
//! `log_store_compressed`, `--inflate-log`) written by one inflate in the other to the
//! same text; log times from a clock's epoch (`log_unix_epoch`, `log_alternate_epoch`);
//! and fio 3.37/3.38's `log_window_value=both` and `log_issue_time` columns.

use crate::common;
use common::*;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Run with the newest fio's behaviour (flexio's default), requiring success.
fn ok(bin: &Path, args: &[&str], dir: &Path) -> Run {
    let r = run_in(bin, args, dir);
    assert_eq!(
        r.code,
        0,
        "{} {args:?}: {}{}",
        bin.display(),
        r.stdout,
        r.stderr
    );
    r
}

fn names(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".log"))
        .collect()
}

/// Columns 3.. of each line (direction, block size, offset, priority).
fn io_columns(text: &str) -> Vec<String> {
    text.lines()
        .map(|l| l.splitn(3, ", ").nth(2).unwrap_or("").to_string())
        .collect()
}

const JOB: &[&str] = &[
    "--name=j",
    "--rw=randrw",
    "--size=512k",
    "--bs=4k",
    "--write_lat_log=c",
    "--write_bw_log=c",
    "--output-format=terse",
];

#[test]
fn compressed_logs_inflate_the_same_in_both() {
    let Some(fio) = fio_bin() else { return };
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let cases: &[&[&str]] = &[
        &["--log_store_compressed=1"],
        &["--log_store_compressed=1", "--log_offset=1"],
        &[
            "--log_store_compressed=1",
            "--log_compression=1k",
            "--log_offset=1",
            "--log_prio=1",
        ],
        &[
            "--log_store_compressed=1",
            "--log_compression=2k",
            "--log_compression_cpus=0",
        ],
    ];
    for extra in cases {
        let (d1, d2) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let args: Vec<&str> = JOB.iter().chain(extra.iter()).copied().collect();
        let Some(r) = fio_compressing_logs(&fio, &args, d1.path()) else {
            continue;
        };
        assert_eq!(r.code, 0, "fio {args:?}: {}", r.stderr);
        oracle_run(&flexio_bin(), &args, d2.path());
        assert_eq!(names(d1.path()), names(d2.path()), "{extra:?}");
        for name in ["c_clat.1.log.fz", "c_lat.1.log.fz"] {
            // fio's file: flexio inflates it to fio's text, byte for byte.
            let f1 = d1.path().join(name);
            let fio_text = ok(
                &fio,
                &[&format!("--inflate-log={}", f1.display())],
                d1.path(),
            )
            .stdout;
            let ours = ok(
                &flexio_bin(),
                &[&format!("--inflate-log={}", f1.display())],
                d1.path(),
            )
            .stdout;
            assert_eq!(ours, fio_text, "{extra:?} {name}");
            assert!(fio_text.lines().count() >= 100, "{fio_text}");
            // flexio's file: fio inflates it, to the same I/O sequence as fio's own.
            let f2 = d2.path().join(name);
            let fio_of_ours = ok(
                &fio,
                &[&format!("--inflate-log={}", f2.display())],
                d2.path(),
            )
            .stdout;
            let ours_of_ours = ok(
                &flexio_bin(),
                &[&format!("--inflate-log={}", f2.display())],
                d2.path(),
            )
            .stdout;
            assert_eq!(fio_of_ours, ours_of_ours, "{extra:?} {name}");
            assert_eq!(
                io_columns(&fio_of_ours),
                io_columns(&fio_text),
                "{extra:?} {name}"
            );
        }
    }
}

#[test]
fn log_compression_alone_writes_the_plain_log() {
    let Some(fio) = fio_bin() else { return };
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let (d1, d2) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let args: Vec<&str> = JOB
        .iter()
        .copied()
        .chain(["--log_compression=4k", "--log_offset=1"])
        .collect();
    let Some(r) = fio_compressing_logs(&fio, &args, d1.path()) else {
        return;
    };
    assert_eq!(r.code, 0, "fio {args:?}: {}", r.stderr);
    oracle_run(&flexio_bin(), &args, d2.path());
    assert_eq!(names(d1.path()), names(d2.path()));
    let a = std::fs::read_to_string(d1.path().join("c_clat.1.log")).unwrap();
    let b = std::fs::read_to_string(d2.path().join("c_clat.1.log")).unwrap();
    assert_eq!(io_columns(&a), io_columns(&b));
}

fn now_ms(clock: &str) -> u64 {
    match clock {
        "realtime" => std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as u64,
        // CLOCK_BOOTTIME, to the 10 ms of /proc/uptime.
        _ => {
            let s = std::fs::read_to_string("/proc/uptime").unwrap();
            let secs: f64 = s.split_whitespace().next().unwrap().parse().unwrap();
            (secs * 1000.0) as u64
        }
    }
}

#[test]
fn epoch_options_give_clock_times() {
    let Some(fio) = fio_bin() else { return };
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // (options, clock to compare with, slack in ms)
    let cases: &[(&[&str], &str, u64)] = &[
        (&["--log_unix_epoch=1"], "realtime", 0),
        (&["--log_alternate_epoch=1"], "realtime", 0),
        (
            &[
                "--log_alternate_epoch=1",
                "--log_alternate_epoch_clock_id=7",
            ],
            "boottime",
            50,
        ),
    ];
    for (extra, clock, slack) in cases {
        for bin in [fio.as_path(), flexio_bin().as_path()] {
            let d = tempfile::tempdir().unwrap();
            let args: Vec<&str> = JOB.iter().chain(extra.iter()).copied().collect();
            let before = now_ms(clock);
            oracle_run(bin, &args, d.path());
            let after = now_ms(clock);
            let text = std::fs::read_to_string(d.path().join("c_clat.1.log")).unwrap();
            for l in text.lines() {
                let t: u64 = l.split(", ").next().unwrap().parse().unwrap();
                assert!(
                    t + slack >= before && t <= after + slack,
                    "{} {extra:?}: {t} not within {before}..{after}",
                    bin.display()
                );
            }
        }
    }
    let d = tempfile::tempdir().unwrap();
    let r = flexio(
        &[
            "--name=j",
            "--size=64k",
            "--write_lat_log=x",
            "--log_unix_epoch=1",
            "--log_alternate_epoch_clock_id=99",
        ],
        d.path(),
    );
    assert_ne!(r.code, 0);
    assert!(r.stderr.contains("unknown clock id 99"), "{}", r.stderr);
}

#[test]
fn window_both_and_issue_time_columns() {
    // fio 3.37 and 3.38 (not the installed 3.33): the layouts of fio-3.42-delta §5.4.
    let d = tempfile::tempdir().unwrap();
    let mut args: Vec<&str> = JOB.to_vec();
    args.extend([
        "--log_offset=1",
        "--log_issue_time=1",
        "--log_window_value=both",
        "--log_prio=1",
    ]);
    ok(&flexio_bin(), &args, d.path());
    let clat = std::fs::read_to_string(d.path().join("c_clat.1.log")).unwrap();
    let lat = std::fs::read_to_string(d.path().join("c_lat.1.log")).unwrap();
    let mut last_issue = 0;
    for (c, l) in clat.lines().zip(lat.lines()) {
        let f: Vec<&str> = c.split(", ").collect();
        assert_eq!(f.len(), 8, "{c}");
        // Per-I/O entries: the second value is 0; the issue time (ns) is within the
        // entry's millisecond and does not go backwards.
        assert_eq!(f[2], "0", "{c}");
        assert!(f[6].starts_with("0x"), "{c}");
        let t_ms: u64 = f[0].parse().unwrap();
        let issue: u64 = f[7].parse().unwrap();
        assert!(issue / 1_000_000 <= t_ms, "{c}");
        assert!(issue >= last_issue, "{c}");
        last_issue = issue;
        let g: Vec<&str> = l.split(", ").collect();
        assert_eq!(g.len(), 8, "{l}");
        assert_eq!(g[7], "0", "the lat log has no issue time: {l}");
    }
    // Windows: mean and maximum.
    let d = tempfile::tempdir().unwrap();
    let mut args: Vec<&str> = JOB.to_vec();
    args.extend([
        "--log_avg_msec=5",
        "--log_window_value=both",
        "--rate_iops=2000",
        "--size=256k",
    ]);
    ok(&flexio_bin(), &args, d.path());
    let clat = std::fs::read_to_string(d.path().join("c_clat.1.log")).unwrap();
    assert!(clat.lines().count() >= 3, "{clat}");
    for l in clat.lines() {
        let f: Vec<u64> = l.split(", ").map(|x| x.parse().unwrap()).collect();
        assert_eq!(f.len(), 6, "{l}");
        assert!(f[1] <= f[2] && f[2] > 0, "mean <= max: {l}");
    }
    let bw = std::fs::read_to_string(d.path().join("c_bw.1.log")).unwrap();
    for l in bw.lines() {
        let f: Vec<&str> = l.split(", ").collect();
        assert_eq!(f[1], f[2], "one rate per window: {l}");
    }
    // log_max_value is the old name (0/1 or the new words).
    let d = tempfile::tempdir().unwrap();
    let mut args: Vec<&str> = JOB.to_vec();
    args.extend([
        "--log_avg_msec=5",
        "--log_max_value=1",
        "--rate_iops=2000",
        "--size=128k",
    ]);
    ok(&flexio_bin(), &args, d.path());
    // fio's check: log_issue_time needs write_lat_log and log_offset.
    let r = flexio(
        &[
            "--name=j",
            "--size=64k",
            "--write_lat_log=x",
            "--log_issue_time=1",
        ],
        d.path(),
    );
    assert_ne!(r.code, 0);
    assert!(
        r.stderr
            .contains("log_issue_time option requires write_lat_log and log_offset options"),
        "{}",
        r.stderr
    );
}

/// The log files a job makes and their entry counts.
fn log_lines(dir: &Path) -> BTreeMap<String, usize> {
    names(dir)
        .into_iter()
        .map(|n| {
            let t = std::fs::read_to_string(dir.join(&n)).unwrap();
            (n, t.lines().count())
        })
        .collect()
}

/// disable_lat / disable_slat / disable_clat / disable_bw_measurement / gtod_reduce decide
/// which logs are made and what goes in them, as in fio 3.33: no file for a latency not
/// measured; disable_bw_measurement empties a per-I/O bw log and gtod_reduce a per-I/O
/// IOPS log, but neither stops the periodic bw/IOPS samples of the normal output (before,
/// flexio made every lat file, filled the clat log under disable_clat, kept per-I/O bw
/// entries and dropped the periodic samples under disable_bw_measurement).
#[test]
fn disabled_measurements_make_the_logs_fio_makes() {
    let n = 8usize;
    /// Extra options, and the log files (name, entries) they make.
    type Case<'a> = (&'a [&'a str], &'a [(&'a str, usize)]);
    let cases: &[Case] = &[
        (
            &["--write_lat_log=c", "--disable_slat=1"],
            &[("c_clat.1.log", n), ("c_lat.1.log", n)],
        ),
        (
            &["--write_lat_log=c", "--disable_lat=1", "--disable_clat=1"],
            &[("c_slat.1.log", n)],
        ),
        (
            &["--write_lat_log=c", "--disable_clat=1", "--log_offset=1"],
            &[("c_lat.1.log", n), ("c_slat.1.log", n)],
        ),
        (&["--write_lat_log=c", "--gtod_reduce=1"], &[]),
        (
            &[
                "--write_bw_log=c",
                "--write_iops_log=c",
                "--disable_bw_measurement=1",
            ],
            &[("c_bw.1.log", 0), ("c_iops.1.log", n)],
        ),
        (
            &["--write_bw_log=c", "--write_iops_log=c", "--gtod_reduce=1"],
            &[("c_bw.1.log", 0), ("c_iops.1.log", 0)],
        ),
    ];
    let fio = fio_bin();
    for (extra, want) in cases {
        let mut args = vec![
            "--name=j",
            "--ioengine=libaio",
            "--iodepth=2",
            "--rw=randread",
            "--size=256k",
            "--number_ios=8",
            "--output-format=terse",
        ];
        args.extend_from_slice(extra);
        let d = tempfile::tempdir().unwrap();
        oracle_run(&flexio_bin(), &args, d.path());
        let got = log_lines(d.path());
        let want: BTreeMap<String, usize> = want.iter().map(|(k, v)| (k.to_string(), *v)).collect();
        assert_eq!(got, want, "{extra:?}");
        if let Some(fio) = &fio {
            let d = tempfile::tempdir().unwrap();
            oracle_run(fio, &args, d.path());
            assert_eq!(log_lines(d.path()), want, "fio 3.33, {extra:?}");
        }
    }
    // The periodic samples stay: a 1.2 s run has bw and IOPS samples in both tools.
    let args = [
        "--name=j",
        "--ioengine=null",
        "--size=1g",
        "--time_based",
        "--runtime=1200ms",
        "--disable_bw_measurement=1",
        "--output-format=json",
    ];
    let d = tempfile::tempdir().unwrap();
    let r = oracle_run(&flexio_bin(), &args, d.path());
    let j = &json_of(&r.stdout)["jobs"][0]["read"];
    assert!(j["bw_samples"].as_u64().unwrap() >= 1, "{j}");
    assert!(j["iops_samples"].as_u64().unwrap() >= 1, "{j}");
    if let Some(fio) = &fio {
        let r = oracle_run(fio, &args, d.path());
        let j = &json_of(&r.stdout)["jobs"][0]["read"];
        assert!(j["bw_samples"].as_u64().unwrap() >= 1, "fio 3.33: {j}");
    }
}

/// A bw log averaged over log_avg_msec takes the bw samples as its entries, and without
/// bwavgtime the samples come every log_avg_msec (fio's add_job): a 1.4 s run with
/// `log_avg_msec=250` has 5 bw samples and 5 entries (250 ... 1250 ms) while IOPS keeps
/// its 500 ms (2 samples). Before, flexio sampled bw every 500 ms and wrote the log from
/// its own windows. fio 3.33 agrees where it is installed.
#[test]
fn an_averaged_bw_log_sets_the_bw_sampling() {
    let args = [
        "--name=j",
        "--ioengine=psync",
        "--rw=randread",
        "--size=1m",
        "--time_based",
        "--runtime=1400ms",
        "--write_bw_log=c",
        "--log_avg_msec=250",
        "--output-format=json",
    ];
    let look = |bin: &Path| {
        let d = tempfile::tempdir().unwrap();
        let r = oracle_run(bin, &args, d.path());
        let j = &json_of(&r.stdout)["jobs"][0]["read"];
        let log = std::fs::read_to_string(d.path().join("c_bw.1.log")).unwrap();
        let times: Vec<u64> = log
            .lines()
            .map(|l| l.split(", ").next().unwrap().parse().unwrap())
            .collect();
        (
            j["bw_samples"].as_u64().unwrap(),
            j["iops_samples"].as_u64().unwrap(),
            times,
        )
    };
    let (bw, iops, times) = look(&flexio_bin());
    assert_eq!((bw, iops, times.len()), (5, 2, 5), "{times:?}");
    for (k, t) in times.iter().enumerate() {
        let nominal = 250 * (k as u64 + 1);
        assert!(*t >= nominal && *t < nominal + 100, "{times:?}");
    }
    if let Some(fio) = fio_bin() {
        let (bw, iops, times) = look(&fio);
        assert_eq!((bw, iops, times.len()), (5, 2, 5), "fio 3.33: {times:?}");
    }
}
