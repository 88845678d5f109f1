//! Issue 28's log items: per-I/O bandwidth and IOPS logs hold every I/O, trimwrite's trims
//! logged before their writes, syncs on the null engine, output into a closed pipe, and
//! `log_store_compressed` for every log kind (histogram, issue-time and two-value logs
//! included), inflated to what the plain run writes, and read by fio 3.33's
//! `--inflate-log` in fio 3.33's layout.

use crate::common;
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

/// The trims and writes of a `write_iolog` trace: (file, action, offset, length), without
/// the file actions (add, open, close).
fn iolog_ios(text: &str) -> Vec<(String, String, u64, u64)> {
    text.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() == 5 && matches!(f[2], "trim" | "write" | "read")).then(|| {
                (
                    f[1].to_string(),
                    f[2].to_string(),
                    f[3].parse().unwrap(),
                    f[4].parse().unwrap(),
                )
            })
        })
        .collect()
}

/// Columns 3.. of a per-I/O log (direction, block size, offset, priority).
fn io_columns(text: &str) -> Vec<String> {
    text.lines()
        .map(|l| l.splitn(3, ", ").nth(2).unwrap_or("").to_string())
        .collect()
}

/// trimwrite jobs whose trims and writes pair up differently: sizes that differ, several
/// files served in turn, random blocks drawn again (norandommap).
const TRIMWRITE_CASES: &[&[&str]] = &[
    &["--rw=trimwrite", "--bs=16k"],
    &["--rw=trimwrite", "--bsrange=4k-32k"],
    &["--rw=trimwrite", "--bs=4k,4k,8k"],
    &["--rw=trimwrite", "--bs=8k,8k,4k"],
    &["--rw=trimwrite", "--bs=4k", "--nrfiles=2"],
    &["--rw=trimwrite", "--bs=4k,4k,8k", "--nrfiles=3"],
    &["--rw=randtrimwrite", "--bs=16k"],
    &["--rw=randtrimwrite", "--bssplit=4k/50:16k/50"],
    &["--rw=randtrimwrite", "--bs=4k,4k,8k"],
    &["--rw=randtrimwrite", "--bs=4k", "--nrfiles=2"],
    &[
        "--rw=randtrimwrite",
        "--bs=4k",
        "--nrfiles=3",
        "--norandommap",
    ],
];

fn trimwrite_args<'a>(case: &[&'a str]) -> Vec<&'a str> {
    let mut a = vec![
        "--name=job",
        "--ioengine=null",
        "--filesize=256k",
        "--write_lat_log=t",
        "--write_bw_log=t",
        "--log_offset=1",
        "--write_iolog=io.txt",
    ];
    a.extend_from_slice(case);
    a
}

#[test]
fn trimwrite_logs_each_blocks_trim_before_its_write() {
    for case in TRIMWRITE_CASES {
        let d = tempfile::tempdir().unwrap();
        let r = flexio(&trimwrite_args(case), d.path());
        assert_eq!(r.code, 0, "{case:?}: {}", r.stderr);
        let ios = iolog_ios(&std::fs::read_to_string(d.path().join("io.txt")).unwrap());
        assert!(ios.len() >= 8, "{case:?}: {ios:?}");
        // Per file: every write lies inside a trim of that file that came before it. (Not
        // with trims smaller than the writes: there fio, and flexio with it, trims once and
        // then only writes, the write's start never meeting the trim's again; the
        // comparison with fio covers that case.)
        let small_trims = case.contains(&"--bs=8k,8k,4k");
        let mut trims: std::collections::HashMap<&str, Vec<(u64, u64)>> = Default::default();
        for (file, act, off, len) in &ios {
            let t = trims.entry(file).or_default();
            if act == "trim" {
                t.push((*off, off + len));
            } else if !small_trims {
                assert!(
                    t.iter().any(|(s, e)| *off >= *s && off + len <= *e),
                    "{case:?}: {file} write {off}+{len} before its block's trim: {ios:?}"
                );
            }
        }
        // Random: strictly trim, write, trim, write per file, the write on the trim's block.
        if case[0] == "--rw=randtrimwrite" {
            let mut last: std::collections::HashMap<&str, (&str, u64)> = Default::default();
            for (file, act, off, _) in &ios {
                let prev = last.insert(file, (act, *off));
                match (act.as_str(), prev) {
                    ("trim", None | Some(("write", _))) => {}
                    ("write", Some(("trim", t))) => assert_eq!(*off, t, "{case:?}: {file}"),
                    _ => panic!("{case:?}: {file}: {act} after {prev:?}"),
                }
            }
        }
        // The per-I/O logs hold the same I/Os in the same order (one file: the offsets).
        if !case.iter().any(|a| a.starts_with("--nrfiles")) {
            let want: Vec<String> = ios
                .iter()
                .map(|(_, a, o, l)| format!("{}, {l}, {o}, 0", if a == "trim" { 2 } else { 1 }))
                .collect();
            for log in ["t_clat.1.log", "t_lat.1.log", "t_bw.1.log"] {
                let text = std::fs::read_to_string(d.path().join(log)).unwrap();
                assert_eq!(io_columns(&text), want, "{case:?}: {log}");
            }
        }
    }
}

#[test]
fn trimwrite_logs_equal_fios() {
    let Some(fio) = fio_bin() else { return };
    for case in TRIMWRITE_CASES {
        let a = trimwrite_args(case);
        let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let (d1, d2) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let r1 = run_in(&fio, &a, d1.path());
        assert_eq!(r1.code, 0, "fio {a:?}: {}", r1.stderr);
        let r2 = flexio_oracle(&a, d2.path());
        assert_eq!(r2.code, 0, "flexio {a:?}: {}", r2.stderr);
        let read = |d: &Path, f: &str| std::fs::read_to_string(d.join(f)).unwrap();
        assert_eq!(
            iolog_ios(&read(d2.path(), "io.txt")),
            iolog_ios(&read(d1.path(), "io.txt")),
            "{case:?}: write_iolog (flexio left, fio right)"
        );
        for log in ["t_clat.1.log", "t_bw.1.log"] {
            assert_eq!(
                io_columns(&read(d2.path(), log)),
                io_columns(&read(d1.path(), log)),
                "{case:?}: {log} (flexio left, fio right)"
            );
        }
    }
}

#[test]
fn synchronous_trims_of_async_engines_have_no_slat_entry() {
    // libaio and io_uring complete a trim inside queue (BLKDISCARD): it has no submission
    // latency, and fio's slat log has no line for it; the writes have theirs.
    let Some(dev) = common::loopdev::LoopDev::new(8 << 20) else {
        return;
    };
    for engine in ["libaio", "io_uring"] {
        let d = tempfile::tempdir().unwrap();
        let a = [
            "--name=job",
            &format!("--filename={}", dev.path()),
            &format!("--ioengine={engine}"),
            "--size=256k",
            "--bs=16k",
            "--iodepth=4",
            "--direct=1",
            "--rw=trimwrite",
            "--write_lat_log=t",
            "--log_offset=1",
        ];
        let r = flexio(&a, d.path());
        if r.stderr.contains("not built into this flexio") {
            eprintln!("SKIP: {engine}: {}", r.stderr.trim());
            continue;
        }
        assert_eq!(r.code, 0, "{engine}: {}", r.stderr);
        let slat = std::fs::read_to_string(d.path().join("t_slat.1.log")).unwrap();
        let dirs: Vec<&str> = slat
            .lines()
            .map(|l| l.split(", ").nth(2).unwrap())
            .collect();
        assert_eq!(
            dirs,
            vec!["1"; 16],
            "{engine}: slat only for the 16 writes:\n{slat}"
        );
        let clat = std::fs::read_to_string(d.path().join("t_clat.1.log")).unwrap();
        assert_eq!(clat.lines().count(), 32, "{engine}");
    }
}

/// A null-engine write job with syncs (1024 writes of 4 KiB).
fn sync_job<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    let mut a = vec![
        "--name=job",
        "--ioengine=null",
        "--size=4M",
        "--bs=4k",
        "--rw=write",
    ];
    a.extend_from_slice(extra);
    a
}

/// (sync total_ios, sync latency samples, write total_ios, write short_ios, depth 1 share).
fn sync_counts(j: &serde_json::Value) -> (u64, u64, u64, u64, f64) {
    let job = &j["jobs"][0];
    (
        job["sync"]["total_ios"].as_u64().unwrap(),
        job["sync"]["lat_ns"]["N"].as_u64().unwrap(),
        job["write"]["total_ios"].as_u64().unwrap(),
        job["write"]["short_ios"].as_u64().unwrap(),
        job["iodepth_level"]["1"].as_f64().unwrap(),
    )
}

#[test]
fn the_null_engine_issues_and_counts_syncs() {
    let d = tempfile::tempdir().unwrap();
    // fsync every 32 writes: 31 syncs (none after the last write), timed, counted in the
    // depths (1055 requests at depth 1 of 1024 issued: 103.03%).
    for depth in ["1", "8"] {
        let r = flexio(
            &sync_job(&[
                "--fsync=32",
                "--output-format=json",
                &format!("--iodepth={depth}"),
            ]),
            d.path(),
        );
        assert_eq!(r.code, 0, "{}", r.stderr);
        let j = json_of(&r.stdout);
        let (syncs, n, writes, short, _) = sync_counts(&j);
        assert_eq!(
            (syncs, n, writes, short),
            (31, 31, 1024, 0),
            "iodepth={depth}"
        );
        let pct = &j["jobs"][0]["sync"]["lat_ns"]["percentile"];
        assert!(pct.as_object().is_some_and(|p| p.len() >= 10), "{pct}");
    }
    let r = flexio(&sync_job(&["--fsync=32"]), d.path());
    assert_eq!(r.code, 0, "{}", r.stderr);
    for want in [
        "  fsync/fdatasync/sync_file_range/syncfs:\n    sync (nsec): min=",
        "    sync percentiles (nsec):\n",
        "     issued rwts: total=0,1024,0,31 short=0,0,0,0",
    ] {
        assert!(r.stdout.contains(want), "{want:?} missing:\n{}", r.stdout);
    }
    // fdatasync and sync_file_range too (the newest fio counts all of them as syncs).
    for s in ["--fdatasync=32", "--sync_file_range=write:32"] {
        let r = flexio(&sync_job(&[s, "--output-format=json"]), d.path());
        assert_eq!(r.code, 0, "{s}: {}", r.stderr);
        assert_eq!(sync_counts(&json_of(&r.stdout)).0, 31, "{s}");
    }
}

#[test]
fn null_engine_syncs_equal_fios() {
    for extra in [
        &["--fsync=32"][..],
        &["--fdatasync=32"],
        &["--sync_file_range=write:32"],
        &["--fsync=1"],
        &["--fsync=32", "--end_fsync=1"],
        // fio 3.33: trimwrite's trim-or-write choice replaces every sync.
        &["--fdatasync=10", "--rw=trimwrite"],
    ] {
        let mut json = sync_job(extra);
        json.push("--output-format=json");
        let Some((f, x)) = both(&json) else { return };
        assert_eq!(f.code, 0, "fio {extra:?}: {}", f.stderr);
        assert_eq!(x.code, 0, "flexio {extra:?}: {}", x.stderr);
        assert_same_json_shape(&f.stdout, &x.stdout, &format!("{extra:?}"));
        assert_eq!(
            sync_counts(&json_of(&x.stdout)),
            sync_counts(&json_of(&f.stdout)),
            "{extra:?}: (syncs, sync samples, writes, short, depth 1) flexio left, fio right"
        );
        let Some((f, x)) = both(&sync_job(extra)) else {
            return;
        };
        assert_same_shape(&f.stdout, &x.stdout, &format!("{extra:?}"));
    }
}

/// Run flexio (or fio) with stdout a pipe whose reader reads `first` bytes (0: none) and
/// closes it, the rest of the output having nowhere to go. (signal, exit code, stderr).
fn closed_reader(
    bin: &Path,
    args: &[&str],
    dir: &Path,
    first: usize,
) -> (Option<i32>, i32, String) {
    use std::io::Read;
    use std::os::unix::process::ExitStatusExt;
    // A panic would print its backtrace: the test would see it.
    let env = [("RUST_BACKTRACE", "1")];
    let o = if first == 0 {
        // The reader gone before the first byte: gone before flexio starts (closing it
        // after the start would race a short output such as --help into the pipe).
        spawn_into_closed_pipe(bin, args, dir, &env)
            .wait_with_output()
            .unwrap()
    } else {
        let mut child = spawn_in(bin, args, dir, &env);
        let mut out = child.stdout.take().unwrap();
        let mut buf = vec![0u8; first];
        out.read_exact(&mut buf).unwrap();
        drop(out);
        child.wait_with_output().unwrap()
    };
    (
        o.status.signal(),
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn assert_quiet(stderr: &str, what: &str) {
    for bad in ["panicked", "backtrace", "Broken pipe", "cannot write"] {
        assert!(
            !stderr.contains(bad),
            "{what}: {bad:?} in stderr:\n{stderr}"
        );
    }
}

const SIGPIPE: i32 = 13;

#[test]
fn a_reader_that_goes_away_ends_flexio_as_sigpipe_ends_fio() {
    let d = tempfile::tempdir().unwrap();
    let bin = flexio_bin();
    let run = [
        "--name=j",
        "--ioengine=null",
        "--size=64m",
        "--bs=4k",
        "--rw=read",
    ];
    let with = |extra: &[&'static str]| -> Vec<&'static str> {
        run.iter().chain(extra).copied().collect()
    };
    // The reader gone before the first byte.
    let cases: Vec<Vec<&str>> = vec![
        vec!["--help"],
        vec!["--cmdhelp"],
        vec!["--cmdhelp=bs"],
        vec!["--enghelp"],
        vec!["--version"],
        with(&[]),
        with(&["--output-format=json"]),
        with(&["--output-format=terse"]),
        with(&["--debug=io"]),
    ];
    for args in &cases {
        let (sig, code, err) = closed_reader(&bin, args, d.path(), 0);
        assert_eq!(sig, Some(SIGPIPE), "{args:?}: exit {code}, stderr:\n{err}");
        assert_quiet(&err, &format!("{args:?}"));
    }
    // The reader gone after a few bytes: the next write ends flexio (normal output writes
    // its header lines first; --debug=io writes a line per I/O).
    for args in [with(&[]), with(&["--debug=io"])] {
        let (sig, code, err) = closed_reader(&bin, &args, d.path(), 8);
        assert_eq!(sig, Some(SIGPIPE), "{args:?}: exit {code}, stderr:\n{err}");
        assert_quiet(&err, &format!("{args:?}"));
    }
    // fio: the same signal.
    if let Some(fio) = fio_bin() {
        for args in [&["--help"][..], &["--cmdhelp"]] {
            let (sig, _, err) = closed_reader(&fio, args, d.path(), 0);
            assert_eq!(sig, Some(SIGPIPE), "fio {args:?}: {err}");
        }
    }
}

#[test]
fn subcommands_end_their_output_quietly_when_the_reader_goes() {
    let d = tempfile::tempdir().unwrap();
    for name in ["a.json", "b.json"] {
        let out = format!("--output={name}");
        let r = flexio(
            &[
                "--name=j",
                "--ioengine=null",
                "--size=16m",
                "--bs=4k",
                "--rw=read",
                "--output-format=json+",
                &out,
            ],
            d.path(),
        );
        assert_eq!(r.code, 0, "{}", r.stderr);
    }
    // Subcommands finish their work and keep their own exit status (compare's verdict)
    // when their reader has gone; nothing is printed about the pipe.
    for args in [
        &["compare", "a.json", "b.json"][..],
        &["compare", "--output-format=json", "a.json", "b.json"],
        &["report", "a.json", "-o", "-"],
    ] {
        let (sig, code, err) = closed_reader(&flexio_bin(), args, d.path(), 0);
        assert_eq!((sig, code), (None, 0), "{args:?}: stderr:\n{err}");
        assert_quiet(&err, &format!("{args:?}"));
    }
}

/// Lines of a log as fields.
fn fields(text: &str) -> Vec<Vec<String>> {
    text.lines()
        .map(|l| l.split(", ").map(str::to_string).collect())
        .collect()
}

/// Inflate `path` with `bin` (flexio under `env`), requiring success.
fn inflate(bin: &Path, path: &Path, env: &[(&str, &str)]) -> String {
    let arg = format!("--inflate-log={}", path.display());
    let dir = path.parent().unwrap();
    let r = run_in_env(bin, &[&arg], dir, env);
    assert_eq!(r.code, 0, "{} {arg}: {}", bin.display(), r.stderr);
    r.stdout
}

/// The log kinds of `write_lat_log`, `write_bw_log`, `write_iops_log` and `write_hist_log`.
const KINDS: [&str; 6] = ["lat", "slat", "clat", "bw", "iops", "clat_hist"];

/// A null-engine job of 1024 random 4 KiB I/Os at 20,000 IOPS (about 50 ms, for several
/// histogram intervals) with every log, plus `extra`.
fn every_log_job<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    let mut a = vec![
        "--name=x",
        "--ioengine=null",
        "--rw=randrw",
        "--bs=4k",
        "--size=4m",
        "--iodepth=4",
        "--write_lat_log=x",
        "--write_bw_log=x",
        "--write_iops_log=x",
        "--write_hist_log=x",
        "--log_hist_msec=1",
        "--log_hist_coarseness=2",
        "--rate_iops=20000",
        "--output-format=json",
    ];
    a.extend_from_slice(extra);
    a
}

/// Sum of the bin counts of a histogram log, checked to be some of the job's `ios`
/// completions (the last interval's, cut short by the job's end, are not written: fio
/// writes a histogram row only when an interval is over).
fn hist_total(rows: &[Vec<String>], ios: u64, what: &str) -> u64 {
    let n = rows
        .iter()
        .flat_map(|r| r[3..].iter())
        .map(|c| c.parse::<u64>().unwrap())
        .sum();
    assert!(n > ios / 2 && n <= ios, "{what}: {n} of {ios} completions");
    n
}

#[test]
fn compressed_logs_of_every_kind_inflate_like_the_plain_run() {
    // Per-I/O logs with every column of the newest fio, then windows with both values.
    let cases: &[&[&str]] = &[
        &[
            "--log_offset=1",
            "--log_prio=1",
            "--log_issue_time=1",
            "--log_window_value=both",
        ],
        &[
            "--log_avg_msec=2",
            "--log_window_value=both",
            "--log_offset=1",
        ],
    ];
    for extra in cases {
        let plain = tempfile::tempdir().unwrap();
        let packed = tempfile::tempdir().unwrap();
        let a = every_log_job(extra);
        let r = flexio(&a, plain.path());
        assert_eq!(r.code, 0, "{extra:?}: {}", r.stderr);
        let ios = json_of(&r.stdout)["jobs"][0]["read"]["total_ios"]
            .as_u64()
            .unwrap()
            + json_of(&r.stdout)["jobs"][0]["write"]["total_ios"]
                .as_u64()
                .unwrap();
        assert_eq!(ios, 1024);
        let mut z = a.clone();
        z.push("--log_store_compressed=1");
        let r = flexio(&z, packed.path());
        assert_eq!(r.code, 0, "{extra:?}: {}", r.stderr);
        let per_io = !extra.iter().any(|o| o.starts_with("--log_avg_msec"));
        for kind in KINDS {
            let text = std::fs::read_to_string(plain.path().join(format!("x_{kind}.1.log")))
                .unwrap_or_else(|e| panic!("{kind}: {e}"));
            let fz = packed.path().join(format!("x_{kind}.1.log.fz"));
            assert!(
                !packed.path().join(format!("x_{kind}.1.log")).exists(),
                "{kind}: only the .fz"
            );
            let back = inflate(&flexio_bin(), &fz, &[]);
            let (p, b) = (fields(&text), fields(&back));
            let what = format!("{extra:?} {kind}");
            // The same columns on every line of both.
            let widths = |rows: &[Vec<String>]| {
                rows.iter()
                    .map(Vec::len)
                    .collect::<std::collections::BTreeSet<_>>()
            };
            assert_eq!(widths(&p), widths(&b), "{what}");
            if kind == "clat_hist" {
                // 3 + 1856/4 columns; each completion counted once.
                assert_eq!(
                    widths(&b).into_iter().collect::<Vec<_>>(),
                    [3 + 464],
                    "{what}"
                );
                hist_total(&p, ios, &what);
                hist_total(&b, ios, &what);
                continue;
            }
            if per_io && kind != "slat" {
                // One line per I/O: the same blocks (block size, offset and priority
                // columns) in both, the second value 0. The rate limit makes the mix's
                // direction of each I/O depend on timing, so the two runs are compared as
                // sets of blocks (the random map gives each block once) and by lines.
                assert_eq!((p.len(), b.len()), (1024, 1024), "{what}");
                let blocks = |rows: &[Vec<String>]| {
                    let mut v: Vec<Vec<String>> = rows.iter().map(|r| r[4..7].to_vec()).collect();
                    v.sort();
                    v
                };
                assert_eq!(blocks(&p), blocks(&b), "{what}");
                assert!(b.iter().all(|r| r.len() == 8 && r[2] == "0"), "{what}");
                // The issue time: in the clat log only.
                let issue_set = b.iter().any(|r| r[7] != "0");
                assert_eq!(issue_set, kind == "clat", "{what}");
            } else if !per_io && kind != "slat" {
                // Windows: time, mean, max, ddir, bs 0, offset 0, prio.
                assert!(!b.is_empty(), "{what}");
                for r in &b {
                    let v: Vec<u64> = r.iter().map(|x| x.parse().unwrap()).collect();
                    assert_eq!((v.len(), v[4], v[5]), (7, 0, 0), "{what}: {r:?}");
                    assert!(v[1] <= v[2], "{what}: mean <= max: {r:?}");
                }
            }
        }
    }
}

#[test]
fn fio_inflates_flexios_compressed_logs_in_fio_333s_layout() {
    let Some(fio) = fio_bin() else { return };
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let cases: &[&[&str]] = &[
        &["--log_offset=1", "--log_prio=1"],
        &["--log_compression=8k"],
        &["--log_avg_msec=2", "--log_offset=1"],
    ];
    for extra in cases {
        let (d1, d2) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let mut a = every_log_job(extra);
        // (Writes only: a rate-limited randrw picks its directions differently in fio 3.33.)
        a.extend(["--log_store_compressed=1", "--rw=randwrite"]);
        // fio 3.33's own run and flexio's as fio 3.33.
        let Some(r1) = fio_compressing_logs(&fio, &a, d1.path()) else {
            continue;
        };
        assert_eq!(r1.code, 0, "fio {extra:?}: {}", r1.stderr);
        let r2 = flexio_oracle(&a, d2.path());
        assert_eq!(r2.code, 0, "flexio {extra:?}: {}", r2.stderr);
        let per_io = !extra.iter().any(|o| o.starts_with("--log_avg_msec"));
        for kind in ["lat", "clat", "bw", "iops"] {
            let what = format!("{extra:?} {kind}");
            let name = format!("x_{kind}.1.log.fz");
            let ours = d2.path().join(&name);
            // fio 3.33 inflates flexio's file to what flexio inflates it to.
            let by_fio = inflate(&fio, &ours, &[]);
            assert_eq!(
                by_fio,
                inflate(&flexio_bin(), &ours, ORACLE_COMPAT),
                "{what}"
            );
            assert_eq!(by_fio, inflate(&flexio_bin(), &ours, &[]), "{what}");
            // ...and to the same columns as fio's own file inflated.
            let fios = inflate(&fio, &d1.path().join(&name), &[]);
            let (f, x) = (fields(&fios), fields(&by_fio));
            assert!(!x.is_empty(), "{what}");
            assert_eq!(f[0].len(), x[0].len(), "{what}");
            if per_io {
                assert_eq!((f.len(), x.len()), (1024, 1024), "{what}");
                let cols = |r: &Vec<String>| r[2..].to_vec();
                assert!(f.iter().map(cols).eq(x.iter().map(cols)), "{what}");
            }
        }
        // The histogram log: fio 3.33 stores pointers there; flexio's is inflated by flexio.
        let hist = inflate(&flexio_bin(), &d2.path().join("x_clat_hist.1.log.fz"), &[]);
        hist_total(&fields(&hist), 1024, &format!("{extra:?}"));
    }
    // fio 3.33's compressed records hold one value: two cannot be stored as fio 3.33.
    let d = tempfile::tempdir().unwrap();
    let mut a = every_log_job(&["--log_avg_msec=2", "--log_window_value=both"]);
    a.push("--log_store_compressed=1");
    let r = flexio_oracle(&a, d.path());
    assert_ne!(r.code, 0);
    assert!(
        r.stderr.contains("log_window_value=both") && r.stderr.contains("--compat=3.33"),
        "{}",
        r.stderr
    );
}
