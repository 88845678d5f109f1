//! fio's log files from flexio: names, line layouts, and (for per-I/O logs) the very same
//! sequence of directions, block sizes and offsets as fio for the same job; and flexio's
//! per-interval JSON Lines stream.

use crate::common;
use common::*;
use std::collections::BTreeMap;
use std::path::Path;

/// Every file in `dir` with its content, except the data files.
fn logs(dir: &Path) -> BTreeMap<String, String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".log"))
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read_to_string(e.path()).unwrap(),
            )
        })
        .collect()
}

/// Run the same job in fio and flexio (fresh directories); their log files.
fn both_logs(args: &[&str]) -> Option<(BTreeMap<String, String>, BTreeMap<String, String>)> {
    let fio = fio_bin()?;
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let (d1, d2) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let r1 = run_in(&fio, args, d1.path());
    assert_eq!(r1.code, 0, "fio {args:?}: {}", r1.stderr);
    let r2 = flexio_oracle(args, d2.path());
    assert_eq!(r2.code, 0, "flexio {args:?}: {}", r2.stderr);
    Some((logs(d1.path()), logs(d2.path())))
}

/// Columns 3.. of a log (direction, block size, offset, priority): everything but the time
/// and the measured value.
fn io_columns(text: &str) -> Vec<String> {
    text.lines()
        .map(|l| l.splitn(3, ", ").nth(2).unwrap_or("").to_string())
        .collect()
}

#[test]
fn io_sequences_equal_fios() {
    // Directions, sizes and offsets of every I/O, from the per-I/O clat log with offsets.
    let cases: &[&[&str]] = &[
        &["--rw=randread"],
        &["--rw=randread", "--norandommap"],
        &["--rw=randrw", "--rwmixread=70"],
        &["--rw=randrw", "--rwmixread=10"],
        &["--rw=randread", "--bsrange=4k-64k"],
        &["--rw=read", "--bsrange=4k-64k"],
        &["--rw=randread", "--bsrange=3k-13k"],
        &["--rw=randread", "--bsrange=4k-64k", "--bs_unaligned"],
        &["--rw=randread", "--bssplit=4k/10:64k/50:16k/40"],
        &["--rw=randrw", "--bssplit=4k/50:8k:64k/20,16k"],
        &["--rw=randrw", "--bs=4k,16k"],
        &["--rw=randrw", "--bsrange=4k-16k,8k-32k", "--rwmixread=60"],
        &[
            "--rw=randread",
            "--bsrange=4k-64k",
            "--random_generator=tausworthe64",
        ],
        &[
            "--rw=randread",
            "--bsrange=4k-64k",
            "--random_generator=lfsr",
        ],
        &["--rw=randread:4", "--bsrange=4k-16k"],
        &["--rw=randread:3", "--rw_sequencer=identical"],
        // `:N` counts the job's I/Os over all files and directions; the others go on
        // from their file's last I/O of their direction.
        &["--rw=randrw:3"],
        &["--rw=randrw:3", "--rw_sequencer=identical"],
        &["--rw=randread:3", "--nrfiles=2"],
        &["--rw=randrw:4", "--percentage_random=50"],
        &[
            "--rw=randrw:3",
            "--bssplit=4k/50:16k/50",
            "--bs_unaligned=1",
        ],
        &["--rw=randread", "--percentage_random=30"],
        &[
            "--rw=randrw",
            "--bs_is_seq_rand=1",
            "--bs=4k,16k",
            "--percentage_random=50",
        ],
        &["--rw=randread", "--blockalign=2k"],
        &["--rw=randread", "--blockalign=2k", "--bsrange=2k-16k"],
        &["--rw=trimwrite", "--bssplit=4k/50:16k/50"],
        &["--rw=randtrim"],
        &["--rw=rw", "--bs=4k,64k"],
        &["--rw=randread", "--nrfiles=3", "--bsrange=4k-16k"],
        &[
            "--rw=randrw",
            "--nrfiles=4",
            "--file_service_type=random",
            "--bs=4k,8k",
        ],
        &["--rw=randread", "--randseed=1234", "--randrepeat=0"],
    ];
    for case in cases {
        let mut args = vec![
            "--name=s",
            "--ioengine=null",
            "--size=4m",
            "--write_lat_log=a",
            "--log_offset=1",
        ];
        args.extend_from_slice(case);
        let Some((f, x)) = both_logs(&args) else {
            return;
        };
        let (a, b) = (&f["a_clat.1.log"], &x["a_clat.1.log"]);
        let (ca, cb) = (io_columns(a), io_columns(b));
        let first = ca.iter().zip(&cb).position(|(p, q)| p != q);
        assert!(
            first.is_none() && ca.len() == cb.len(),
            "{case:?}: I/O {} differs (fio {} I/Os, flexio {}):\nfio:    {:?}\nflexio: {:?}",
            first.map(|i| i + 1).unwrap_or(ca.len().min(cb.len()) + 1),
            ca.len(),
            cb.len(),
            first.map(|i| &ca[i]),
            first.map(|i| &cb[i]),
        );
        assert!(ca.len() > 20, "{case:?}: only {} I/Os", ca.len());
    }
}

#[test]
fn log_files_are_named_and_laid_out_as_fios() {
    for extra in [
        &["--numjobs=2", "--log_prio=1", "--log_offset=1"][..],
        &["--per_job_logs=0", "--log_hist_coarseness=2"][..],
    ] {
        let mut args = vec![
            "--name=lg",
            "--ioengine=psync",
            "--filename=f",
            "--size=2m",
            "--bs=4k",
            "--rw=randrw",
            "--write_lat_log=a",
            "--write_bw_log=b",
            "--write_iops_log=c",
            "--write_hist_log=h",
            "--log_hist_msec=1",
        ];
        args.extend_from_slice(extra);
        let Some((f, x)) = both_logs(&args) else {
            return;
        };
        assert_eq!(
            f.keys().collect::<Vec<_>>(),
            x.keys().collect::<Vec<_>>(),
            "{extra:?}: log file names"
        );
        for (name, a) in &f {
            let b = &x[name];
            let fields = |t: &str| t.lines().map(|l| l.split(", ").count()).collect::<Vec<_>>();
            if name.contains("_hist") {
                // One line per interval; the number of bins per line is fio's.
                let (fa, fb) = (fields(a), fields(b));
                if let (Some(p), Some(q)) = (fa.first(), fb.first()) {
                    assert_eq!(p, q, "{extra:?}: {name}: fields per histogram line");
                }
                continue;
            }
            assert_eq!(
                a.lines().count(),
                b.lines().count(),
                "{extra:?}: {name}: one line per I/O"
            );
            assert_eq!(fields(a), fields(b), "{extra:?}: {name}: fields per line");
            assert_eq!(
                io_columns(a),
                io_columns(b),
                "{extra:?}: {name}: dir/bs/offset/prio"
            );
        }
    }
}

#[test]
fn averaged_logs_have_fios_layout() {
    let args = [
        "--name=lg",
        "--ioengine=null",
        "--size=1g",
        "--rate_iops=2000",
        "--runtime=2",
        "--time_based",
        "--write_lat_log=a",
        "--write_bw_log=b",
        "--write_iops_log=c",
        "--log_avg_msec=100",
    ];
    let Some((f, x)) = both_logs(&args) else {
        return;
    };
    assert_eq!(f.keys().collect::<Vec<_>>(), x.keys().collect::<Vec<_>>());
    for (name, a) in &f {
        let b = &x[name];
        let (na, nb) = (a.lines().count() as i64, b.lines().count() as i64);
        assert!((na - nb).abs() <= 2, "{name}: {na} vs {nb} windows");
        for l in b.lines() {
            let v: Vec<&str> = l.split(", ").collect();
            assert_eq!(v.len(), 5, "{name}: {l}");
            // Averaged windows carry direction 0, block size 0, priority 0.
            assert_eq!(&v[2..], &["0", "0", "0"], "{name}: {l}");
        }
        if name.starts_with("c_iops") {
            // 2000 IOPS, as a rate per second in every window.
            let vals: Vec<f64> = b
                .lines()
                .map(|l| l.split(", ").nth(1).unwrap().parse().unwrap())
                .collect();
            let mean = vals.iter().sum::<f64>() / vals.len() as f64;
            assert!((mean - 2000.0).abs() < 100.0, "{vals:?}");
        }
    }
}

#[test]
fn interval_stream_is_per_interval_and_adds_up() {
    let d = tempfile::tempdir().unwrap();
    let r = flexio(
        &[
            "--output-format=json",
            "--name=i",
            "--ioengine=null",
            "--size=1g",
            "--rw=randrw",
            "--rate_iops=1000",
            "--runtime=3",
            "--time_based",
            "--interval_log=iv.jsonl",
            "--interval_log_msec=500",
            "--null_stall=100ms@1500",
        ],
        d.path(),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let job = &json_of(&r.stdout)["jobs"][0];
    let text = std::fs::read_to_string(d.path().join("iv.jsonl")).unwrap();
    let recs: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    for dir in ["read", "write"] {
        let mine: Vec<&serde_json::Value> = recs.iter().filter(|r| r["ddir"] == dir).collect();
        assert!(mine.len() >= 6, "{dir}: {} records", mine.len());
        let ios: u64 = mine.iter().map(|r| r["ios"].as_u64().unwrap()).sum();
        assert_eq!(
            ios,
            job[dir]["total_ios"].as_u64().unwrap(),
            "{dir}: I/Os add up"
        );
        let mut prev_end = 0;
        for r in &mine {
            let (s, e) = (
                r["start_ms"].as_u64().unwrap(),
                r["end_ms"].as_u64().unwrap(),
            );
            assert_eq!(s, prev_end, "{dir}: intervals follow each other");
            prev_end = e;
            // The histogram is the interval's own (a delta), not cumulative.
            let n: u64 = r["hist_ns"]
                .as_object()
                .unwrap()
                .values()
                .map(|v| v.as_u64().unwrap())
                .sum();
            assert_eq!(n, r["ios"].as_u64().unwrap(), "{dir}: {r}");
            assert!(r["sched_lat_ns"]["p99"].is_u64(), "rate-limited: {r}");
        }
        // The stall shows in the schedule latency of exactly the interval it happened in.
        let stalled = mine
            .iter()
            .filter(|r| r["sched_lat_ns"]["p99.9"].as_u64().unwrap() > 50_000_000)
            .count();
        assert!(
            (1..=2).contains(&stalled),
            "{dir}: {stalled} stalled intervals"
        );
    }
}

/// Per-I/O logs longer than one batch (64 Ki samples) go through the job's writer thread:
/// every sample arrives, once, in order, also when two threads share one log file
/// (per_job_logs=0), and the offsets are the job's own sequence.
#[test]
fn long_per_io_logs_arrive_whole_and_in_order() {
    let d = tempfile::tempdir().unwrap();
    let r = run_in(
        &flexio_bin(),
        &[
            "--name=big",
            "--ioengine=null",
            "--rw=read",
            "--bs=4k",
            "--size=1g",
            "--number_ios=200000",
            "--write_lat_log=big",
            "--log_offset=1",
            "--numjobs=2",
            "--per_job_logs=0",
        ],
        d.path(),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let text = std::fs::read_to_string(d.path().join("big_clat.log")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 400_000);
    // Each thread reads the same sequential offsets 0, 4096, ...: per offset, two lines.
    let mut per_offset = BTreeMap::<u64, u32>::new();
    for l in &lines {
        let off: u64 = l.split(", ").nth(4).unwrap().trim().parse().unwrap();
        *per_offset.entry(off).or_default() += 1;
    }
    assert_eq!(per_offset.len(), 200_000);
    assert!(per_offset.values().all(|n| *n == 2));
    assert_eq!(*per_offset.keys().last().unwrap(), 199_999 * 4096);
    // With one thread the file is the job's sequence, in order.
    let d = tempfile::tempdir().unwrap();
    let r = run_in(
        &flexio_bin(),
        &[
            "--name=one",
            "--ioengine=null",
            "--rw=read",
            "--bs=4k",
            "--size=1g",
            "--number_ios=150000",
            "--write_lat_log=one",
            "--log_offset=1",
        ],
        d.path(),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let text = std::fs::read_to_string(d.path().join("one_lat.1.log")).unwrap();
    let offs: Vec<u64> = text
        .lines()
        .map(|l| l.split(", ").nth(4).unwrap().trim().parse().unwrap())
        .collect();
    assert_eq!(offs.len(), 150_000);
    assert!(offs.iter().enumerate().all(|(i, o)| *o == i as u64 * 4096));
}
