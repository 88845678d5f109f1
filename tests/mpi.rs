//! `mpirun -np N flexio --mpi JOB` (cargo feature `mpi`; OpenMPI from Debian, installed by
//! .ci/run): 2 and 4 ranks oversubscribed on this machine, per-rank files that do not
//! collide, a shared file split into per-rank segments, the "All clients" percentiles equal
//! to those of the pooled per-rank histograms, and ranks that fail on purpose.
#![cfg(feature = "mpi")]

mod common;

use common::{flexio_bin, json_of, run_bounded};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn mpirun() -> Option<PathBuf> {
    let found = std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p)
            .map(|d| d.join("mpirun"))
            .find(|f| f.is_file())
    });
    if found.is_none() {
        if std::env::var("FLEXIO_REQUIRE_FIO").as_deref() == Ok("1") {
            panic!("mpirun is required (FLEXIO_REQUIRE_FIO=1): install openmpi-bin");
        }
        eprintln!("SKIP: mpirun is not installed; MPI tests skipped");
    }
    found
}

fn mpi_args(n: usize, rest: &[&str]) -> Vec<String> {
    let mut a: Vec<String> = [
        "--allow-run-as-root",
        "--oversubscribe",
        "--mca",
        "btl",
        "self,vader,tcp",
        "-np",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    a.push(n.to_string());
    a.push(flexio_bin().display().to_string());
    a.push("--mpi".into());
    a.extend(rest.iter().map(|s| s.to_string()));
    a
}

fn run_mpi(mpirun: &Path, n: usize, rest: &[&str], dir: &Path, secs: u64) -> common::Run {
    let a = mpi_args(n, rest);
    let a: Vec<&str> = a.iter().map(|s| s.as_str()).collect();
    run_bounded(mpirun, &a, dir, &[], secs)
}

fn bins_of(dir: &Value) -> Vec<(u64, u64)> {
    let mut v: Vec<(u64, u64)> = dir["clat_ns"]["bins"]
        .as_object()
        .expect("json+ bins")
        .iter()
        .map(|(k, c)| (k.parse().unwrap(), c.as_u64().unwrap()))
        .collect();
    v.sort();
    v
}

/// fio's percentile rule: the first value whose cumulative count reaches p% of all.
fn percentile_of(bins: &[(u64, u64)], p: f64) -> u64 {
    let n: u64 = bins.iter().map(|b| b.1).sum();
    let mut sum = 0;
    for (v, c) in bins {
        sum += c;
        if sum as f64 >= p / 100.0 * n as f64 {
            return *v;
        }
    }
    bins.last().map(|b| b.0).unwrap_or(0)
}

fn ranks(n: usize) {
    let Some(mpirun) = mpirun() else { return };
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    std::fs::write(
        dir.join("r.fio"),
        "[r]\nioengine=psync\nrw=randrw\nbs=4k\nsize=2m\n",
    )
    .unwrap();
    let r = run_mpi(&mpirun, n, &["--output-format=json+", "r.fio"], dir, 120);
    assert_eq!(r.code, 0, "stdout:\n{}\nstderr:\n{}", r.stdout, r.stderr);
    // One file per rank, none shared.
    for k in 0..n {
        let f = dir.join(format!("r.0.0.rank{k}"));
        assert_eq!(
            std::fs::metadata(&f).map(|m| m.len()).ok(),
            Some(2 << 20),
            "{}",
            f.display()
        );
    }
    assert!(
        !dir.join("r.0.0").exists(),
        "no rank used the unsuffixed name"
    );
    let j = json_of(&r.stdout);
    let cs = j["client_stats"].as_array().unwrap();
    assert_eq!(cs.len(), n + 1, "{j}");
    let (hosts, all) = (&cs[..n], &cs[n]);
    assert_eq!(all["jobname"], "All clients");
    for dirn in ["read", "write"] {
        let bytes: u64 = hosts
            .iter()
            .map(|h| h[dirn]["io_bytes"].as_u64().unwrap())
            .sum();
        assert_eq!(all[dirn]["io_bytes"].as_u64(), Some(bytes));
        let mut pooled = std::collections::BTreeMap::<u64, u64>::new();
        for h in hosts {
            for (v, c) in bins_of(&h[dirn]) {
                *pooled.entry(v).or_default() += c;
            }
        }
        let pooled: Vec<(u64, u64)> = pooled.into_iter().collect();
        assert_eq!(bins_of(&all[dirn]), pooled);
        for (k, v) in all[dirn]["clat_ns"]["percentile"].as_object().unwrap() {
            assert_eq!(
                v.as_u64().unwrap(),
                percentile_of(&pooled, k.parse().unwrap()),
                "{dirn} p{k}"
            );
        }
    }
    let fh = j["flexio"]["hosts"].as_array().unwrap();
    assert_eq!(fh.len(), n);
    for (k, h) in fh.iter().enumerate() {
        assert!(
            h["name"]
                .as_str()
                .unwrap()
                .starts_with(&format!("rank{k}@")),
            "{h}"
        );
        assert!(h["clock_offset_ns"].is_i64(), "{h}");
    }
}

#[test]
fn two_ranks() {
    ranks(2);
}

#[test]
fn four_ranks() {
    ranks(4);
}

#[test]
fn shared_file_in_rank_segments() {
    let Some(mpirun) = mpirun() else { return };
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    std::fs::write(
        dir.join("s.fio"),
        "[s]\nioengine=psync\nrw=write\nbs=4k\nsize=1m\nfilename=shared.dat\nverify=crc32c\n",
    )
    .unwrap();
    let r = run_mpi(&mpirun, 4, &["--output-format=json", "s.fio"], dir, 120);
    assert_eq!(r.code, 0, "stdout:\n{}\nstderr:\n{}", r.stdout, r.stderr);
    assert_eq!(
        std::fs::metadata(dir.join("shared.dat")).unwrap().len(),
        4 << 20
    );
    let j = json_of(&r.stdout);
    let all = &j["client_stats"][4];
    assert_eq!(all["write"]["io_bytes"].as_u64(), Some(4 << 20));
    assert_eq!(
        all["error"].as_u64(),
        Some(0),
        "every rank verified its own segment"
    );
}

#[test]
fn a_rank_that_cannot_run_stops_all() {
    let Some(mpirun) = mpirun() else { return };
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    std::fs::create_dir(dir.join("d0")).unwrap();
    // Only rank 0's directory exists.
    std::fs::write(
        dir.join("b.fio"),
        "[b]\nioengine=psync\nrw=read\nsize=1m\ndirectory=d${OMPI_COMM_WORLD_RANK}\n",
    )
    .unwrap();
    let t = Instant::now();
    let r = run_mpi(&mpirun, 2, &["b.fio"], dir, 60);
    assert!(t.elapsed() < Duration::from_secs(30));
    assert_ne!(r.code, 0);
    assert!(r.stderr.contains("rank 1"), "names the rank: {}", r.stderr);
}

#[test]
fn a_killed_rank_ends_the_run() {
    let Some(mpirun) = mpirun() else { return };
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    std::fs::write(
        dir.join("l.fio"),
        "[l]\nioengine=null\nrw=read\nsize=1g\ntime_based\nruntime=60\n",
    )
    .unwrap();
    let args = mpi_args(2, &["l.fio"]);
    let child = std::process::Command::new(&mpirun)
        .args(&args)
        .current_dir(dir)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    // Wait for the ranks, then kill one of them.
    let t = Instant::now();
    let victim = loop {
        let kids =
            std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")).unwrap_or_default();
        let flexios: Vec<u32> = kids
            .split_whitespace()
            .filter_map(|k| k.parse().ok())
            .filter(|k: &u32| {
                std::fs::read_to_string(format!("/proc/{k}/cmdline"))
                    .is_ok_and(|c| c.contains("--mpi"))
            })
            .collect();
        if flexios.len() == 2 {
            break flexios[1];
        }
        assert!(t.elapsed() < Duration::from_secs(20), "ranks never started");
        std::thread::sleep(Duration::from_millis(100));
    };
    std::thread::sleep(Duration::from_secs(1));
    common::send_signal(victim, "KILL");
    let t = Instant::now();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let out = match rx.recv_timeout(Duration::from_secs(30)) {
        Ok(o) => o.unwrap(),
        Err(_) => {
            common::send_signal(pid, "KILL");
            panic!("mpirun did not end after a rank was killed");
        }
    };
    assert!(t.elapsed() < Duration::from_secs(30));
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("rank"), "names the rank: {err}");
}
