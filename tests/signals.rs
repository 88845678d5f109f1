//! Interrupting runs: every engine family, at random points (file layout included). The
//! report is still written, as valid JSON, files the job was told to remove are removed,
//! and the exit status is fio's (128). SIGUSR1 prints the statistics so far.

use crate::common;
use common::*;

use std::time::{Duration, Instant};

/// A small deterministic generator for the interruption points (printed on failure).
fn lcg(s: &mut u64) -> u64 {
    *s = s
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    *s >> 33
}

fn engine_usable(engine: &str) -> bool {
    let d = tempfile::tempdir().unwrap();
    let r = flexio(
        &[
            "--name=p",
            "--ioengine",
            engine,
            "--size=64k",
            "--filename=p",
        ],
        d.path(),
    );
    if r.code != 0 {
        eprintln!("SKIP {engine}: {}", r.stderr.lines().next().unwrap_or(""));
    }
    r.code == 0
}

fn interrupt(engine: &str, delay_ms: u64, sig: i32, out_file: bool) {
    let d = tempfile::tempdir().unwrap();
    let mut args = vec![
        "--name=s",
        "--ioengine",
        engine,
        "--filename=victim",
        "--size=128m",
        "--bs=4k",
        "--rw=randrw",
        "--iodepth=8",
        "--unlink=1",
        "--runtime=30",
        "--time_based",
        "--output-format=json",
    ];
    if out_file {
        args.push("--output=res.json");
    }
    let child = spawn_flexio(&args, d.path(), &[]);
    let pid = child.id() as i32;
    // The random point is counted from the moment flexio handles the signal (its first
    // action in main): before that, as for any program, the default action applies.
    wait_for_handler(pid, sig);
    std::thread::sleep(Duration::from_millis(delay_ms));
    let t0 = Instant::now();
    send_signal(pid as u32, &sig.to_string());
    let out = child.wait_with_output().unwrap();
    let what = format!("{engine}, signal {sig} after {delay_ms} ms");
    assert!(
        t0.elapsed() < Duration::from_secs(10),
        "{what}: took {:?} to stop",
        t0.elapsed()
    );
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(128), "{what}: {stderr}");
    let text = if out_file {
        std::fs::read_to_string(d.path().join("res.json")).unwrap()
    } else {
        stdout
    };
    let v: serde_json::Value = serde_json::from_str(text.trim_start())
        .unwrap_or_else(|e| panic!("{what}: invalid JSON ({e}):\n{text}\n{stderr}"));
    assert!(v["jobs"].is_array(), "{what}");
    assert!(
        !d.path().join("victim").exists(),
        "{what}: the file the job was told to unlink is still there"
    );
    // No temporary result files are left either.
    let left: Vec<String> = std::fs::read_dir(d.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != "res.json")
        .collect();
    assert!(left.is_empty(), "{what}: left behind: {left:?}");
}

/// Wait until process `pid` catches signal `sig` (the SigCgt mask in /proc/PID/status).
fn wait_for_handler(pid: i32, sig: i32) {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(5) {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        let caught = status
            .lines()
            .find_map(|l| l.strip_prefix("SigCgt:"))
            .and_then(|m| u64::from_str_radix(m.trim(), 16).ok())
            .unwrap_or(0);
        if caught & (1 << (sig - 1)) != 0 {
            return;
        }
        std::thread::sleep(Duration::from_micros(200));
    }
    panic!("flexio (pid {pid}) did not install a handler for signal {sig} within 5 s");
}

#[test]
fn interrupted_runs_leave_valid_json_and_no_files() {
    let mut seed = std::env::var("FLEXIO_SIGNAL_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5eed_u64);
    eprintln!("signal test seed {seed} (set FLEXIO_SIGNAL_SEED to repeat)");
    for engine in [
        "psync", "sync", "pvsync2", "vsync", "mmap", "posixaio", "libaio", "io_uring", "null",
    ] {
        if !engine_usable(engine) {
            continue;
        }
        for k in 0..3 {
            // Early (during layout), mid-run, and anywhere in the first 1.5 s.
            let delay = match k {
                0 => lcg(&mut seed) % 40,
                1 => 300 + lcg(&mut seed) % 300,
                _ => lcg(&mut seed) % 1500,
            };
            let sig = if lcg(&mut seed) % 2 == 0 { 2 } else { 15 };
            interrupt(engine, delay, sig, k == 2);
        }
    }
}

#[test]
fn sigusr1_prints_the_statistics_so_far() {
    let d = tempfile::tempdir().unwrap();
    let child = spawn_flexio(
        &[
            "--name=u",
            "--ioengine=null",
            "--size=1g",
            "--runtime=2",
            "--time_based",
            "--output-format=json",
        ],
        d.path(),
        &[],
    );
    std::thread::sleep(Duration::from_millis(700));
    send_signal(child.id(), "USR1");
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    let mut docs = Vec::new();
    let mut rest = text.trim_start();
    while !rest.is_empty() {
        let mut it = serde_json::Deserializer::from_str(rest).into_iter::<serde_json::Value>();
        let v = it.next().unwrap().unwrap();
        rest = rest[it.byte_offset()..].trim_start();
        docs.push(v);
    }
    assert_eq!(
        docs.len(),
        2,
        "one report on SIGUSR1, one at the end:\n{text}"
    );
    let rt = |v: &serde_json::Value| v["jobs"][0]["read"]["runtime"].as_u64().unwrap();
    assert!(
        rt(&docs[0]) > 300 && rt(&docs[0]) < 1500,
        "{}",
        rt(&docs[0])
    );
    assert!(rt(&docs[1]) >= 2000);
}

/// Two SIGINTs back to back (as `timeout -s INT` sends them) are one interrupt: the run
/// stops promptly and still reports (exit status 128); only a repeat after
/// `signals::GRACE` would end it without a report (unit-tested in src/signals.rs).
#[test]
fn two_sigints_at_once_are_one_interrupt() {
    let d = tempfile::tempdir().unwrap();
    let child = spawn_flexio(
        &[
            "--name=t",
            "--ioengine=null",
            "--size=1g",
            "--runtime=60",
            "--time_based",
            "--output-format=json",
        ],
        d.path(),
        &[],
    );
    let pid = child.id() as i32;
    wait_for_handler(pid, 2);
    std::thread::sleep(Duration::from_millis(300));
    send_signal(pid as u32, "INT");
    send_signal(pid as u32, "INT");
    let t0 = Instant::now();
    let out = child.wait_with_output().unwrap();
    assert!(t0.elapsed() < Duration::from_secs(2));
    assert_eq!(
        out.status.code(),
        Some(128),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value =
        serde_json::from_str(String::from_utf8_lossy(&out.stdout).trim_start()).unwrap();
    assert!(v["jobs"][0]["read"]["io_bytes"].is_u64());
}
