//! The options around a job's I/O, against fio 3.33: `sync_file_range` (counts and the
//! exact calls), `write_hint` (the inode's hint afterwards), `ioscheduler` (sysfs of a loop
//! device this test creates), `lockmem` (VmLck while the job runs) and `mem`/`iomem`
//! (what /proc/<pid>/maps shows while the job runs, and a mapped file removed after).

use crate::common;
use common::loopdev::LoopDev;
use common::*;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// Number of sync samples in the JSON (fio counts sync_file_range there too).
fn sync_samples(r: &Run) -> u64 {
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    json_of(&r.stdout)["jobs"][0]["sync"]["lat_ns"]["N"]
        .as_u64()
        .unwrap_or(0)
}

#[test]
fn sync_file_range_counts_equal_fio() {
    for extra in [
        &["--sync_file_range=wait_before,write:8"][..],
        &["--sync_file_range=write"],
        &[
            "--sync_file_range=wait_after:5",
            "--ioengine=libaio",
            "--iodepth=4",
        ],
        &["--sync_file_range=write:8", "--fsync=3"],
    ] {
        let mut a = vec![
            "--name=s",
            "--filename=@D@/f",
            "--rw=randwrite",
            "--bs=4k",
            "--size=256k",
            "--output-format=json",
        ];
        a.extend_from_slice(extra);
        let Some((fio, ours)) = both(&a) else { return };
        let want = sync_samples(&fio);
        assert!(want > 0, "{extra:?}: fio issued no syncs");
        assert_eq!(sync_samples(&ours), want, "{extra:?}");
    }
    // io_uring: fio 3.33's count varies from run to run there (7, 11, 13 for the job
    // below); flexio issues one after every 8th write, as the synchronous engines do.
    let d = tempfile::tempdir().unwrap();
    let r = flexio(
        &[
            "--name=s",
            "--filename=f",
            "--rw=randwrite",
            "--bs=4k",
            "--size=256k",
            "--sync_file_range=write:8",
            "--ioengine=io_uring",
            "--iodepth=4",
            "--output-format=json",
        ],
        d.path(),
    );
    if !r.stderr.contains("io_uring") {
        assert_eq!(sync_samples(&r), 64 / 8 - 1);
    }
    let r = flexio(
        &[
            "--name=s",
            "--filename=f",
            "--size=64k",
            "--rw=write",
            "--ioengine=posixaio",
            "--sync_file_range=write:4",
        ],
        d.path(),
    );
    assert_eq!(r.code, 1);
    assert!(r
        .stderr
        .contains("not supported by flexio with ioengine=posixaio"));
}

/// The lines strace prints for system call `call` in a run of `bin` with `args` (flexio
/// as fio 3.33), each from just after `call(`.
fn traced(bin: &Path, dir: &Path, call: &str, args: &[&str]) -> Vec<String> {
    let out = Command::new("strace")
        .args(["-f", "-e", &format!("trace={call}")])
        .arg(bin)
        .args(args)
        .arg("--output=/dev/null")
        .current_dir(dir)
        .envs(ORACLE_COMPAT.iter().copied())
        .output()
        .unwrap();
    let open = format!("{call}(");
    String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter_map(|l| l.split_once(open.as_str()).map(|(_, c)| c.to_string()))
        .collect()
}

/// The sync_file_range(2) calls of a run, as strace shows them (descriptor left out).
fn sfr_calls(bin: &Path, dir: &Path) -> Vec<String> {
    let args = [
        "--name=s",
        "--filename=f",
        "--rw=randwrite",
        "--bs=4k",
        "--size=256k",
        "--sync_file_range=wait_after,write:7",
    ];
    traced(bin, dir, "sync_file_range", &args)
        .into_iter()
        .map(|c| {
            c.split_once(", ")
                .map_or(c.clone(), |(_, rest)| rest.to_string())
        })
        .collect()
}

#[test]
fn sync_file_range_calls_equal_fios() {
    let Some(fio) = fio_bin() else { return };
    if Command::new("strace").arg("-V").output().is_err() {
        eprintln!("SKIP: strace is not installed; the calls are not compared");
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let want = sfr_calls(&fio, d.path());
    let _ = std::fs::remove_file(d.path().join("f"));
    let got = sfr_calls(&flexio_bin(), d.path());
    assert!(want.len() > 4, "{want:?}");
    assert_eq!(got, want, "ranges and flags of each call");
}

/// end_fsync and fsync_on_close sync where fio syncs: at the end of every pass of io_size
/// beyond the files and of every loop (a file closed as done opened again for it), a
/// file closed as done synced as it closes, and the last close not syncing again.
#[test]
fn end_syncs_come_at_each_pass_and_loop_as_in_fio() {
    let Some(fio) = fio_bin() else { return };
    if Command::new("strace").arg("-V").output().is_err() {
        eprintln!("SKIP: strace is not installed; the calls are not compared");
        return;
    }
    let cases: &[&[&str]] = &[
        &[
            "--filename=f",
            "--rw=write",
            "--io_size=3M",
            "--end_fsync=1",
        ],
        &[
            "--filename=f",
            "--rw=write",
            "--io_size=3M",
            "--fsync_on_close=1",
        ],
        &[
            "--filename=f",
            "--rw=randwrite",
            "--io_size=3M",
            "--end_fsync=1",
        ],
        &[
            "--filename=f:g",
            "--rw=write",
            "--io_size=6M",
            "--end_fsync=1",
        ],
        &[
            "--filename=f:g",
            "--rw=write",
            "--loops=3",
            "--fsync_on_close=1",
        ],
        &[
            "--filename=f:g",
            "--rw=write",
            "--fsync_on_close=1",
            "--end_fsync=1",
        ],
        &[
            "--filename=f",
            "--rw=write",
            "--fsync_on_close=1",
            "--end_fsync=1",
        ],
    ];
    for c in cases {
        let mut counts = Vec::new();
        for bin in [&fio, &flexio_bin()] {
            let d = tempfile::tempdir().unwrap();
            std::fs::write(d.path().join("f"), vec![0u8; 1 << 20]).unwrap();
            std::fs::write(d.path().join("g"), vec![0u8; 512 << 10]).unwrap();
            let mut args = vec!["--name=s", "--bs=64k"];
            args.extend_from_slice(c);
            counts.push(traced(bin, d.path(), "fsync", &args).len());
        }
        assert!(counts[0] > 0, "{c:?}: fio made no fsync");
        assert_eq!(
            counts[1], counts[0],
            "{c:?}: fsync calls (fio, then flexio)"
        );
    }
}

/// unlink_each_loop: fio unlinks a job's files as each further loop (and each further pass
/// of io_size beyond them) starts, a write job makes them anew, and the last loop's files
/// stay unless `unlink` is set too. A 1 MiB file is there before each run, so a file made
/// anew shows in its size. The unlink(2) calls are counted where strace is installed.
#[test]
fn unlink_each_loop_unlinks_before_each_further_loop_as_in_fio() {
    let Some(fio) = fio_bin() else { return };
    let strace = Command::new("strace").arg("-V").output().is_ok();
    if !strace {
        eprintln!("SKIP (in part): strace is not installed; the unlink calls are not counted");
    }
    let cases: &[&[&str]] = &[
        &["--filename=f", "--rw=write"],
        &["--filename=f", "--rw=write", "--loops=3"],
        &["--filename=f", "--rw=randwrite", "--io_size=640k"],
        &["--nrfiles=2", "--rw=write", "--io_size=1m"],
        &["--filename=f", "--rw=write", "--loops=2", "--unlink=1"],
        &["--filename=f", "--rw=read", "--loops=2"],
        &[
            "--filename=f",
            "--rw=randwrite",
            "--loops=2",
            "--fsync_on_close=1",
        ],
        // A diskless engine's files are unlinked too: a missing one ends the job with
        // the unlink's error, an existing regular file goes.
        &["--filename=g", "--rw=read", "--loops=2", "--ioengine=null"],
        &["--filename=f", "--rw=read", "--loops=3", "--ioengine=null"],
        // io_size × loops spent within the first pass: the next loop still runs, empty,
        // after its unlink; a loop without I/O ends the job.
        &["--filename=f", "--rw=write", "--io_size=128k", "--loops=2"],
        &[
            "--filename=f",
            "--rw=read",
            "--io_size=64k",
            "--loops=3",
            "--ioengine=null",
        ],
    ];
    for c in cases {
        let mut seen = Vec::new();
        for bin in [&fio, &flexio_bin()] {
            let d = tempfile::tempdir().unwrap();
            std::fs::write(d.path().join("f"), vec![7u8; 1 << 20]).unwrap();
            let mut cmd = if strace {
                let mut t = Command::new("strace");
                t.args(["-f", "-e", "trace=unlink"]).arg(bin);
                t
            } else {
                Command::new(bin)
            };
            let out = cmd
                .args([
                    "--name=s",
                    "--bs=64k",
                    "--size=256k",
                    "--unlink_each_loop=1",
                ])
                .args(c.iter())
                .arg("--output=/dev/null")
                .current_dir(d.path())
                .envs(ORACLE_COMPAT.iter().copied())
                .output()
                .unwrap();
            let unlinks = String::from_utf8_lossy(&out.stderr)
                .lines()
                .filter(|l| l.contains("unlink(") && l.ends_with("= 0"))
                .count();
            let mut left: Vec<(String, u64)> = std::fs::read_dir(d.path())
                .unwrap()
                .map(|e| {
                    let e = e.unwrap();
                    let name = e.file_name().to_string_lossy().into_owned();
                    (name, e.metadata().unwrap().len())
                })
                .collect();
            left.sort();
            seen.push((out.status.code(), unlinks, left));
        }
        assert_eq!(
            seen[1], seen[0],
            "{c:?}: (exit code, unlinks, files left with their sizes): flexio, then fio"
        );
    }
}

#[test]
fn write_hint_is_set_on_the_inode_as_fio_does() {
    let Some(fio) = fio_bin() else { return };
    for (bin, env) in [(fio, &[][..]), (flexio_bin(), ORACLE_COMPAT)] {
        let d = tempfile::tempdir().unwrap();
        for (hint, want) in [("long", 4), ("short", 2)] {
            let r = run_in_env(
                &bin,
                &[
                    "--name=h",
                    "--filename=f",
                    "--rw=write",
                    "--size=64k",
                    &format!("--write_hint={hint}"),
                ],
                d.path(),
                env,
            );
            assert_eq!(r.code, 0, "{}: {}", bin.display(), r.stderr);
            let f = std::fs::File::open(d.path().join("f")).unwrap();
            let got = match flexio_engine::platform::get_write_hint(std::os::fd::AsFd::as_fd(&f)) {
                Ok(v) => v,
                Err(e) => {
                    eprintln!("SKIP: F_GET_RW_HINT refused ({e})");
                    return;
                }
            };
            assert_eq!(got, want, "{}: write_hint={hint}", bin.display());
        }
    }
}

#[test]
fn write_hint_with_direct_fails_like_fio_where_the_kernel_refuses() {
    let Some(fio) = fio_bin() else { return };
    let d = tempfile::tempdir().unwrap();
    let a = [
        "--name=h",
        "--filename=f",
        "--rw=write",
        "--size=64k",
        "--direct=1",
        "--write_hint=medium",
    ];
    let rf = run_in(&fio, &a, d.path());
    let rx = flexio_oracle(&a, d.path());
    let fio_failed =
        rf.code != 0 && format!("{}{}", rf.stdout, rf.stderr).contains("fcntl write hint");
    assert_eq!(rx.code != 0, fio_failed, "{}", rx.stderr);
    if fio_failed {
        assert!(rx.stderr.contains("F_SET_FILE_RW_HINT"), "{}", rx.stderr);
    }
}

fn scheduler(dev: &LoopDev) -> String {
    std::fs::read_to_string(format!("/sys/block/{}/queue/scheduler", dev.name()))
        .unwrap_or_default()
}

#[test]
fn ioscheduler_switches_the_loop_device_as_fio_does() {
    let Some(fio) = fio_bin() else { return };
    let Some(dev) = LoopDev::new(16 << 20) else {
        return;
    };
    let avail = scheduler(&dev);
    let Some(other) = ["mq-deadline", "kyber", "bfq", "none"]
        .into_iter()
        .find(|s| avail.contains(s) && !avail.contains(&format!("[{s}]")))
    else {
        eprintln!("SKIP: the loop device offers one scheduler only ({avail})");
        return;
    };
    let current = avail
        .split_whitespace()
        .find(|w| w.starts_with('['))
        .unwrap()
        .trim_matches(['[', ']'])
        .to_string();
    let d = tempfile::tempdir().unwrap();
    let job = |s: &str| {
        vec![
            "--name=q".to_string(),
            format!("--filename={}", dev.path()),
            "--rw=read".into(),
            "--size=1M".into(),
            format!("--ioscheduler={s}"),
        ]
    };
    for bin in [fio.clone(), flexio_bin()] {
        std::fs::write(
            format!("/sys/block/{}/queue/scheduler", dev.name()),
            &current,
        )
        .unwrap();
        let a = job(other);
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        let r = run_in_env(&bin, &a, d.path(), ORACLE_COMPAT);
        assert_eq!(r.code, 0, "{}: {}", bin.display(), r.stderr);
        assert!(
            scheduler(&dev).contains(&format!("[{other}]")),
            "{}: {}",
            bin.display(),
            scheduler(&dev)
        );
        let a = job("nosuchscheduler");
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        let r = run_in_env(&bin, &a, d.path(), ORACLE_COMPAT);
        assert_ne!(r.code, 0, "{}", bin.display());
        assert!(
            r.stderr
                .contains("unable to set io scheduler to nosuchscheduler"),
            "{}: {}",
            bin.display(),
            r.stderr
        );
    }
}

/// Processes whose command line holds `marker` (fio's job runs in a child of the same
/// command line).
fn pids_with(marker: &str) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .map(|c| String::from_utf8_lossy(&c).contains(marker))
                .unwrap_or(false)
        })
        .collect()
}

/// While a 2-second job runs (the first second passed), the text `look` returns for its
/// processes; then the run's result.
fn while_running(bin: &Path, dir: &Path, extra: &[&str], look: fn(u32) -> String) -> (String, Run) {
    let marker = format!("--name=sysio{}", std::process::id());
    let mut a = vec![
        marker.as_str(),
        "--filename=f",
        "--rw=read",
        "--bs=1m",
        "--size=1m",
        "--time_based",
        "--runtime=2",
        "--output-format=terse",
    ];
    a.extend_from_slice(extra);
    let child = spawn_in(bin, &a, dir, ORACLE_COMPAT);
    // Look several times while the 2 s job runs: a busy machine may start it late (fio
    // forks its job process after its own start-up).
    let mut seen = String::new();
    for _ in 0..8 {
        std::thread::sleep(Duration::from_millis(200));
        seen.extend(pids_with(&marker).into_iter().map(look));
    }
    (seen, collect(child))
}

fn maps(pid: u32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/maps")).unwrap_or_default()
}

fn status(pid: u32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default()
}

#[test]
fn lockmem_locks_memory_while_the_job_runs() {
    let Some(fio) = fio_bin() else { return };
    let _guard = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    for bin in [fio, flexio_bin()] {
        let d = tempfile::tempdir().unwrap();
        let (seen, r) = while_running(&bin, d.path(), &["--lockmem=8m"], status);
        assert_eq!(r.code, 0, "{}: {}", bin.display(), r.stderr);
        let locked: u64 = seen
            .lines()
            .filter_map(|l| l.strip_prefix("VmLck:"))
            .filter_map(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .max()
            .unwrap_or(0);
        assert!(locked >= 8192, "{}: VmLck {locked} kB", bin.display());
    }
}

#[test]
fn buffer_memory_types_are_what_fio_maps() {
    let Some(fio) = fio_bin() else { return };
    let _guard = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    for bin in [fio, flexio_bin()] {
        let d = tempfile::tempdir().unwrap();
        // A System V segment.
        let (seen, r) = while_running(&bin, d.path(), &["--mem=shm"], maps);
        assert_eq!(r.code, 0, "{}: {}", bin.display(), r.stderr);
        assert!(seen.contains("/SYSV"), "{}: {seen}", bin.display());
        // A mapped file, removed after the run (it did not exist before).
        let mf = d.path().join("bufs");
        let arg = format!("--mem=mmap:{}", mf.display());
        let (seen, r) = while_running(&bin, d.path(), &[&arg], maps);
        assert_eq!(r.code, 0, "{}: {}", bin.display(), r.stderr);
        assert!(
            seen.contains(&mf.display().to_string()),
            "{}: {seen}",
            bin.display()
        );
        assert!(!mf.exists(), "{}: the buffer file stayed", bin.display());
        // An existing file is kept.
        std::fs::write(&mf, b"keep").unwrap();
        let (_, r) = while_running(&bin, d.path(), &[&arg], maps);
        assert_eq!(r.code, 0, "{}: {}", bin.display(), r.stderr);
        assert!(
            mf.exists(),
            "{}: an existing buffer file went",
            bin.display()
        );
    }
    // flexio: mmapshared is a shared mapping (fio's documentation; fio 3.33 maps an
    // anonymous one private).
    let d = tempfile::tempdir().unwrap();
    let (seen, r) = while_running(&flexio_bin(), d.path(), &["--mem=mmapshared"], maps);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        seen.contains(" rw-s ") && seen.contains("/dev/zero"),
        "{seen}"
    );
}

#[test]
fn huge_page_memory_needs_huge_pages_in_both() {
    let Some(fio) = fio_bin() else { return };
    let free: u64 = std::fs::read_to_string("/proc/meminfo")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("HugePages_Free:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    let d = tempfile::tempdir().unwrap();
    for mem in ["shmhuge", "mmaphuge"] {
        let a = [
            "--name=h",
            "--filename=f",
            "--size=64k",
            "--rw=read",
            &format!("--mem={mem}"),
        ];
        let rf = run_in(&fio, &a, d.path());
        let rx = flexio_oracle(&a, d.path());
        let fio_ok = rf.code == 0 && !rf.stdout.contains("err=");
        assert_eq!(
            rx.code == 0,
            fio_ok,
            "{mem} ({free} free huge pages): {}",
            rx.stderr
        );
        if free == 0 {
            assert!(
                rx.stderr.contains("no huge pages available"),
                "{}",
                rx.stderr
            );
        }
    }
}

/// write_iolog logs a sync_file_range as fio does (`sync_file_range <last offset> 0`), and
/// such a trace replays.
#[test]
fn sync_file_range_in_iologs_as_fio() {
    let Some(fio) = fio_bin() else { return };
    let d = tempfile::tempdir().unwrap();
    let job = |log: &str| {
        vec![
            "--name=l".to_string(),
            "--filename=f".into(),
            "--rw=randwrite".into(),
            "--bs=4k".into(),
            "--size=64k".into(),
            "--sync_file_range=write:8".into(),
            format!("--write_iolog={log}"),
            "--output=/dev/null".into(),
        ]
    };
    let lines = |bin: &Path, log: &str| {
        let _ = std::fs::remove_file(d.path().join("f"));
        let a = job(log);
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        let r = run_in_env(bin, &a, d.path(), ORACLE_COMPAT);
        assert_eq!(r.code, 0, "{}: {}", bin.display(), r.stderr);
        std::fs::read_to_string(d.path().join(log))
            .unwrap()
            .lines()
            .skip(1)
            .map(|l| l.split_once(' ').map_or(l, |(_, rest)| rest).to_string())
            .collect::<Vec<_>>()
    };
    let want = lines(&fio, "fio.log");
    assert!(
        want.iter().any(|l| l.contains(" sync_file_range ")),
        "{want:?}"
    );
    assert_eq!(lines(&flexio_bin(), "flexio.log"), want);
    let r = flexio_oracle(
        &["--name=r", "--read_iolog=fio.log", "--output-format=json"],
        d.path(),
    );
    assert_eq!(sync_samples(&r), 1, "{}", r.stderr);
}

/// A random map too large for memory: fio's message and a failed job, or with
/// softrandommap fio's note and a job without the map. (fio 3.33 exits 0 after its
/// message, with no report for the job; flexio reports the job's error and exits 1.)
#[test]
fn softrandommap_runs_without_a_map_that_cannot_be_had() {
    let Some(fio) = fio_bin() else { return };
    let d = tempfile::tempdir().unwrap();
    let a = [
        "--name=m",
        "--ioengine=null",
        "--rw=randread",
        "--size=4000p",
        "--bs=512",
        "--number_ios=10",
    ];
    let lost = "failed allocating random map. If running a large number of jobs";
    let rf = run_in(&fio, &a, d.path());
    let rx = flexio_oracle(&a, d.path());
    assert!(
        format!("{}{}", rf.stdout, rf.stderr).contains(lost),
        "{}",
        rf.stderr
    );
    assert!(rx.stderr.contains(lost), "{}", rx.stderr);
    assert_eq!(rx.code, 1);
    let mut soft = a.to_vec();
    soft.push("--softrandommap=1");
    let without = "fio: file m.0.0 failed allocating random map. Running job without.";
    let rf = run_in(&fio, &soft, d.path());
    let rx = flexio_oracle(&soft, d.path());
    assert!(
        format!("{}{}", rf.stdout, rf.stderr).contains(without),
        "{}",
        rf.stderr
    );
    assert!(rx.stderr.contains(without), "{}", rx.stderr);
    assert_eq!(rx.code, 0, "{}", rx.stderr);
    assert!(
        rx.stdout.contains("issued rwts: total=10,0,0,0"),
        "{}",
        rx.stdout
    );
}
