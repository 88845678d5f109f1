//! Asynchronous engines, block devices, priorities and CPU placement, on loop devices the
//! tests create and remove themselves. Where the machine lacks something (root, loop
//! devices, io_uring) the test prints `SKIP: <reason>` and passes.

use crate::common;
use common::loopdev::LoopDev;
use common::*;
use serde_json::Value;

fn tmp() -> tempfile::TempDir {
    // On the machine's disk rather than tmpfs: O_DIRECT must work.
    let base = std::env::var("FLEXIO_TEST_DISK_DIR")
        .unwrap_or_else(|_| std::env::temp_dir().display().to_string());
    tempfile::Builder::new()
        .prefix("flexio-async")
        .tempdir_in(base)
        .unwrap()
}

fn io_uring_available() -> bool {
    let d = tmp();
    let r = flexio(
        &[
            "--name=p",
            "--ioengine=io_uring",
            "--filename=p",
            "--size=64k",
            "--output-format=json",
        ],
        d.path(),
    );
    if r.code != 0 {
        eprintln!(
            "SKIP: io_uring unavailable here: {}",
            r.stderr.lines().next().unwrap_or("")
        );
        return false;
    }
    true
}

/// Run a job and return its JSON, asserting success.
fn run_json(args: &[String], dir: &std::path::Path) -> Value {
    let mut a: Vec<&str> = args.iter().map(String::as_str).collect();
    a.push("--output-format=json");
    let r = flexio(&a, dir);
    assert_eq!(
        r.code, 0,
        "flexio {a:?} failed:\n{}\n{}",
        r.stdout, r.stderr
    );
    json_of(&r.stdout)
}

/// The engine matrix: every async engine, depth 1/16/128, buffered and O_DIRECT, reads and
/// writes, on a file and on a block device. Every run must move exactly the bytes asked for,
/// time every I/O, and keep the queue as deep as asked.
#[test]
fn async_engine_matrix_on_file_and_block_device() {
    let Some(lo) = LoopDev::new(64 << 20) else {
        return;
    };
    let uring = io_uring_available();
    let d = tmp();
    let file = d.path().join("f").display().to_string();
    for engine in ["io_uring", "libaio", "posixaio"] {
        if engine == "io_uring" && !uring {
            continue;
        }
        for depth in [1u32, 16, 128] {
            for direct in [0, 1] {
                for rw in ["randread", "randwrite"] {
                    for target in [file.as_str(), lo.path()] {
                        let args: Vec<String> = vec![
                            "--name=m".into(),
                            format!("--ioengine={engine}"),
                            format!("--iodepth={depth}"),
                            format!("--direct={direct}"),
                            format!("--rw={rw}"),
                            format!("--filename={target}"),
                            "--size=8M".into(),
                            "--bs=4k".into(),
                        ];
                        let j = run_json(&args, d.path());
                        let what =
                            format!("{engine} depth={depth} direct={direct} {rw} on {target}");
                        let dir = if rw == "randread" { "read" } else { "write" };
                        let r = &j["jobs"][0][dir];
                        assert_eq!(j["jobs"][0]["error"], 0, "{what}");
                        assert_eq!(r["io_bytes"], 8 << 20, "{what}");
                        assert_eq!(r["total_ios"], 2048, "{what}");
                        assert_eq!(r["clat_ns"]["N"], 2048, "{what}");
                        assert_eq!(r["slat_ns"]["N"], 2048, "{what}: async engines report slat");
                        // The queue is kept at the asked depth most of the time.
                        let lvl = &j["jobs"][0]["iodepth_level"];
                        let key = match depth {
                            1 => "1",
                            16 => "16",
                            _ => ">=64",
                        };
                        assert!(
                            lvl[key].as_f64().unwrap() > 50.0,
                            "{what}: depth distribution {lvl}"
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn io_uring_option_combinations() {
    let Some(lo) = LoopDev::new(32 << 20) else {
        return;
    };
    if !io_uring_available() {
        return;
    }
    let d = tmp();
    for fixed in [0, 1] {
        for reg in [0, 1] {
            for sqpoll in [0, 1] {
                for nonvec in [0, 1] {
                    let args: Vec<String> = vec![
                        "--name=u".into(),
                        "--ioengine=io_uring".into(),
                        "--iodepth=32".into(),
                        "--direct=1".into(),
                        "--rw=randrw".into(),
                        format!("--filename={}", lo.path()),
                        "--size=8M".into(),
                        format!("--fixedbufs={fixed}"),
                        format!("--registerfiles={reg}"),
                        format!("--sqthread_poll={sqpoll}"),
                        format!("--nonvectored={nonvec}"),
                        "--force_async=8".into(),
                    ];
                    let j = run_json(&args, d.path());
                    let job = &j["jobs"][0];
                    let what = format!("fixedbufs={fixed} registerfiles={reg} sqthread_poll={sqpoll} nonvectored={nonvec}");
                    let bytes = job["read"]["io_bytes"].as_u64().unwrap()
                        + job["write"]["io_bytes"].as_u64().unwrap();
                    assert_eq!(bytes, 8 << 20, "{what}");
                    // A kernel submission thread leaves nothing to measure as slat (as fio).
                    let slat_n = job["read"]["slat_ns"]["N"].as_u64().unwrap();
                    if sqpoll == 1 {
                        assert_eq!(slat_n, 0, "{what}");
                    } else {
                        assert!(slat_n > 0, "{what}");
                    }
                }
            }
        }
    }
}

/// Buffered reads from the page cache go to the kernel's worker threads, whose completions
/// wait for the job thread (the ring is set up with DEFER_TASKRUN where the kernel has it):
/// reaps that do not wait (`iodepth_batch_complete_min=0`) must still take them, and every
/// way of reaping ends with every I/O done and timed.
#[test]
fn io_uring_reaps_completions_held_for_the_job_thread() {
    if !io_uring_available() {
        return;
    }
    let d = tmp();
    std::fs::write(d.path().join("pc"), vec![7u8; 8 << 20]).unwrap();
    for (depth, min) in [(16, 0), (16, 1), (16, 16), (1, 0), (128, 0)] {
        let what = format!("iodepth={depth} iodepth_batch_complete_min={min}");
        let args = [
            "--name=pc".to_string(),
            "--ioengine=io_uring".into(),
            "--filename=pc".into(),
            "--rw=randread".into(),
            "--bs=4k".into(),
            "--size=8M".into(),
            "--invalidate=0".into(),
            format!("--iodepth={depth}"),
            format!("--iodepth_batch_complete_min={min}"),
            "--output-format=json".into(),
        ];
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        let r = run_bounded(&flexio_bin(), &a, d.path(), &[], 60);
        assert_eq!(r.code, 0, "{what}: {}", r.stderr);
        let j = json_of(&r.stdout);
        let rd = &j["jobs"][0]["read"];
        assert_eq!(rd["total_ios"], 2048, "{what}");
        assert_eq!(rd["clat_ns"]["N"], 2048, "{what}");
    }
}

/// posixaio's I/O is done by glibc's helper threads, which the whole process shares and
/// which outlive the job that started them: a later job (after a stonewall) and jobs
/// running side by side must find their own descriptors there, and each file must hold
/// its own job's data (verify).
#[test]
fn posixaio_jobs_after_and_beside_each_other_use_their_own_files() {
    let d = tmp();
    let jobs: &[&[&str]] = &[
        &[
            "--name=a",
            "--filename=fa",
            "--name=b",
            "--stonewall",
            "--filename=fb",
        ],
        &["--name=c", "--numjobs=3", "--offset_increment=512k"],
    ];
    for extra in jobs {
        let mut args = vec![
            "--ioengine=posixaio",
            "--iodepth=4",
            "--bs=4k",
            "--size=256k",
            "--rw=randwrite",
            "--verify=crc32c",
        ];
        args.extend_from_slice(extra);
        let r = flexio(&args, d.path());
        assert_eq!(r.code, 0, "{extra:?}: {}{}", r.stdout, r.stderr);
        assert!(!r.stderr.contains("error"), "{extra:?}: {}", r.stderr);
    }
}

#[test]
fn libaio_userspace_reap() {
    let Some(lo) = LoopDev::new(16 << 20) else {
        return;
    };
    let d = tmp();
    let args: Vec<String> = [
        "--name=a",
        "--ioengine=libaio",
        "--iodepth=16",
        "--direct=1",
        "--rw=randread",
        "--size=8M",
        "--userspace_reap",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain([format!("--filename={}", lo.path())])
    .collect();
    let j = run_json(&args, d.path());
    assert_eq!(j["jobs"][0]["read"]["io_bytes"], 8 << 20);
}

#[test]
fn block_device_size_alignment_and_disk_stats() {
    let Some(lo) = LoopDev::new(16 << 20) else {
        return;
    };
    let d = tmp();
    // Size comes from the device.
    let j = run_json(
        &[
            "--name=b".into(),
            "--ioengine=libaio".into(),
            format!("--filename={}", lo.path()),
            "--bs=64k".into(),
        ],
        d.path(),
    );
    assert_eq!(j["jobs"][0]["read"]["io_bytes"], 16 << 20);
    // The loop device and the disk under its backing file (when that is a disk).
    let names: Vec<&str> = j["disk_util"]
        .as_array()
        .map(|a| a.iter().map(|x| x["name"].as_str().unwrap()).collect())
        .unwrap_or_default();
    assert!(names.contains(&lo.name().as_str()), "disk_util {names:?}");
    // O_DIRECT alignment is checked before any I/O.
    let r = flexio(
        &[
            "--name=b",
            &format!("--filename={}", lo.path()),
            "--direct=1",
            "--bs=1000",
        ],
        d.path(),
    );
    assert_eq!(r.code, 1);
    assert!(
        r.stderr
            .contains("not a multiple of the logical block size 512"),
        "{}",
        r.stderr
    );
    // Region beyond the end of the device.
    let r = flexio(
        &[
            "--name=b",
            &format!("--filename={}", lo.path()),
            "--size=32M",
        ],
        d.path(),
    );
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("goes beyond its end"), "{}", r.stderr);
    // A job never unlinks a device node.
    let r = flexio(
        &[
            "--name=b",
            &format!("--filename={}", lo.path()),
            "--size=1M",
            "--unlink=1",
        ],
        d.path(),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(lo.dev.exists());
}

#[test]
fn writes_to_a_mounted_device_are_refused() {
    let Some(mut lo) = LoopDev::new(64 << 20) else {
        return;
    };
    if !lo.mount() {
        return;
    }
    let d = tmp();
    let dev = format!("--filename={}", lo.path());
    let r = flexio(&["--name=w", &dev, "--rw=write", "--size=1M"], d.path());
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("refusing to write") && r.stderr.contains("mounted file system"),
        "{}",
        r.stderr
    );
    // Reading a mounted device is fine.
    let r = flexio(&["--name=r", &dev, "--rw=read", "--size=1M"], d.path());
    assert_eq!(r.code, 0, "{}", r.stderr);
    // Explicit consent.
    let r = flexio(
        &[
            "--name=w",
            &dev,
            "--rw=write",
            "--size=64k",
            "--offset=32M",
            "--allow_mounted_write=1",
        ],
        d.path(),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    // --readonly refuses every write, consent or not.
    let r = flexio(
        &[
            "--readonly",
            "--name=w",
            &dev,
            "--rw=write",
            "--size=64k",
            "--allow_mounted_write=1",
        ],
        d.path(),
    );
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("--readonly"), "{}", r.stderr);
}

/// Find the job thread of a running flexio (thread name `flexio-N`).
fn job_thread(pid: u32, n: u32) -> Option<String> {
    for _ in 0..100 {
        if let Ok(rd) = std::fs::read_dir(format!("/proc/{pid}/task")) {
            for t in rd.flatten() {
                let comm = std::fs::read_to_string(t.path().join("comm")).unwrap_or_default();
                if comm.trim() == format!("flexio-{n}") {
                    return Some(t.file_name().to_string_lossy().into_owned());
                }
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    None
}

#[test]
fn priorities_nice_and_cpu_placement_are_applied() {
    if common::loopdev::unavailable().is_some() {
        eprintln!("SKIP: needs root to set the real-time I/O class");
        return;
    }
    let d = tmp();
    let child = spawn_flexio(
        &[
            "--name=p",
            "--ioengine=null",
            "--size=1G",
            "--time_based",
            "--runtime=3",
            "--prioclass=1",
            "--prio=3",
            "--nice=5",
            "--cpus_allowed=0-1",
            "--cpus_allowed_policy=split",
            "--numjobs=2",
            "--output-format=json",
        ],
        d.path(),
        &[],
    );
    let pid = child.id();
    std::thread::sleep(std::time::Duration::from_millis(700));
    for (n, cpu) in [(1u32, "0"), (2, "1")] {
        let tid = job_thread(pid, n).expect("job thread found");
        let status = std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/status")).unwrap();
        let allowed = status
            .lines()
            .find(|l| l.starts_with("Cpus_allowed_list:"))
            .unwrap();
        assert_eq!(
            allowed.split_whitespace().nth(1),
            Some(cpu),
            "thread {n}: {allowed}"
        );
        let stat = std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/stat")).unwrap();
        let after = &stat[stat.rfind(')').unwrap() + 2..];
        let nice: i32 = after.split_whitespace().nth(16).unwrap().parse().unwrap();
        assert_eq!(nice, 5, "thread {n}");
        let io = std::process::Command::new("ionice")
            .args(["-p", &tid])
            .output()
            .unwrap();
        let s = String::from_utf8_lossy(&io.stdout);
        assert!(
            s.contains("realtime: prio 3"),
            "thread {n}: ionice says {s}"
        );
    }
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn bad_cpu_sets_are_errors() {
    let d = tmp();
    let r = flexio(
        &[
            "--name=c",
            "--ioengine=null",
            "--size=1M",
            "--cpus_allowed=1000",
        ],
        d.path(),
    );
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("CPU 1000 is not available"),
        "{}",
        r.stderr
    );
    let r = flexio(
        &[
            "--name=c",
            "--ioengine=null",
            "--size=1M",
            "--cpus_allowed=4000",
        ],
        d.path(),
    );
    assert_eq!(r.code, 1);
    assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
    let r = flexio(
        &[
            "--name=c",
            "--ioengine=null",
            "--size=1M",
            "--cpus_allowed=3-1",
        ],
        d.path(),
    );
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("not a valid CPU range"), "{}", r.stderr);
}

/// A time_based job on null at a depth above 1 without latency measurement ends on time:
/// its commit completes each request, so the queue never fills, and the commit's clock
/// reading is the only time the loop sees (flexio ran on until killed).
#[test]
fn a_queue_that_never_fills_still_ends_on_time() {
    for extra in [
        &["--iodepth=2", "--disable_lat=1"][..],
        &["--iodepth=64", "--disable_lat=1", "--disable_slat=1"],
        &["--iodepth=8", "--gtod_reduce=1", "--iodepth_batch_submit=4"],
    ] {
        let mut a = vec![
            "--name=j",
            "--ioengine=null",
            "--rw=randwrite",
            "--bs=512",
            "--size=256k",
            "--time_based",
            "--runtime=300ms",
            "--output-format=json",
        ];
        a.extend_from_slice(extra);
        let d = tmp();
        let started = std::time::Instant::now();
        let r = run_bounded(&flexio_bin(), &a, d.path(), &[], 30);
        assert_eq!(r.code, 0, "{extra:?}: {}", r.stderr);
        let w = &json_of(&r.stdout)["jobs"][0]["write"];
        assert!(w["runtime"].as_u64().unwrap() < 2000, "{extra:?}: {w}");
        assert!(started.elapsed().as_secs() < 20, "{extra:?}");
    }
}
