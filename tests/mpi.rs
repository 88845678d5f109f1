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

/// The pid of the flexio process of `rank` among mpirun's children (by the rank OpenMPI
/// gives it in its environment), waiting up to 20 s for it.
fn rank_pid(mpirun_pid: u32, rank: usize) -> u32 {
    let t = Instant::now();
    loop {
        let kids =
            std::fs::read_to_string(format!("/proc/{mpirun_pid}/task/{mpirun_pid}/children"))
                .unwrap_or_default();
        for k in kids
            .split_whitespace()
            .filter_map(|k| k.parse::<u32>().ok())
        {
            let cmd = std::fs::read_to_string(format!("/proc/{k}/cmdline")).unwrap_or_default();
            let env = std::fs::read(format!("/proc/{k}/environ")).unwrap_or_default();
            let want = format!("OMPI_COMM_WORLD_RANK={rank}");
            if cmd.contains("--mpi") && env.split(|b| *b == 0).any(|v| v == want.as_bytes()) {
                return k;
            }
        }
        assert!(
            t.elapsed() < Duration::from_secs(20),
            "rank {rank} never started"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// mpirun's output, or None (after killing it) when it does not end within `secs`.
fn wait_bounded(child: std::process::Child, secs: u64) -> Option<std::process::Output> {
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(Duration::from_secs(secs)) {
        Ok(o) => Some(o.unwrap()),
        Err(_) => {
            common::send_signal(pid, "KILL");
            None
        }
    }
}

fn spawn_mpi(mpirun: &Path, args: &[String], dir: &Path) -> std::process::Child {
    std::process::Command::new(mpirun)
        .args(args)
        .current_dir(dir)
        .env("TZ", "UTC")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
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
    let child = spawn_mpi(&mpirun, &mpi_args(2, &["l.fio"]), dir);
    let victim = rank_pid(child.id(), 1);
    std::thread::sleep(Duration::from_secs(1));
    common::send_signal(victim, "KILL");
    let t = Instant::now();
    let out = wait_bounded(child, 30).expect("mpirun did not end after a rank was killed");
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("rank 1 "), "names the rank: {err}");
}

/// mpirun arguments running `rest` on two ranks, each with its own environment
/// (an MPMD launch through env(1)).
fn mpi_args_env(envs: [&[&str]; 2], rest: &[&str]) -> Vec<String> {
    let mut a: Vec<String> = [
        "--allow-run-as-root",
        "--oversubscribe",
        "--mca",
        "btl",
        "self,vader,tcp",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for (i, env) in envs.iter().enumerate() {
        if i > 0 {
            a.push(":".into());
        }
        a.extend(["-np", "1", "env"].iter().map(|s| s.to_string()));
        a.extend(env.iter().map(|s| s.to_string()));
        a.push(flexio_bin().display().to_string());
        a.push("--mpi".into());
        a.extend(rest.iter().map(|s| s.to_string()));
    }
    a
}

/// A rank whose I/O fails at run time (its target is /dev/full: every write ENOSPC),
/// and one whose file cannot be created (its directory is a file): the run ends, rank 0
/// prints everything with the failing rank's error, names it, and the exit status says so.
#[test]
fn a_rank_failing_at_run_time_is_named_and_reported() {
    let Some(mpirun) = mpirun() else { return };
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    std::os::unix::fs::symlink("/dev/null", dir.join("t0")).unwrap();
    std::os::unix::fs::symlink("/dev/full", dir.join("t1")).unwrap();
    std::fs::write(
        dir.join("w.fio"),
        "[w]\nioengine=psync\nrw=write\nbs=4k\nsize=1m\nfilename=t${OMPI_COMM_WORLD_RANK}\n",
    )
    .unwrap();
    let t = Instant::now();
    let r = run_mpi(&mpirun, 2, &["--output-format=json", "w.fio"], dir, 60);
    assert!(t.elapsed() < Duration::from_secs(30));
    assert_ne!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("rank 1 (rank1@") && r.stderr.contains("ended with error"),
        "{}",
        r.stderr
    );
    let j = json_of(&r.stdout);
    let cs = j["client_stats"].as_array().unwrap();
    assert_eq!(cs.len(), 3, "{j}");
    assert_eq!(cs[0]["error"].as_u64(), Some(0));
    assert_eq!(cs[0]["write"]["io_bytes"].as_u64(), Some(1 << 20));
    assert_eq!(
        cs[1]["error"].as_u64(),
        Some(28),
        "ENOSPC on rank 1: {}",
        cs[1]
    );
    assert_eq!(cs[2]["jobname"], "All clients");
    let hosts = j["flexio"]["hosts"].as_array().unwrap();
    assert!(hosts[0].get("exit_error").is_none(), "{}", hosts[0]);
    assert!(hosts[1]["exit_error"].as_u64().unwrap() > 0, "{}", hosts[1]);
    // A file rank 1 cannot create.
    std::fs::create_dir(dir.join("d0")).unwrap();
    std::fs::write(dir.join("d1"), "").unwrap();
    std::fs::write(
        dir.join("o.fio"),
        "[o]\nioengine=psync\nrw=write\nbs=4k\nsize=1m\nfilename=d${OMPI_COMM_WORLD_RANK}/data\n",
    )
    .unwrap();
    let r = run_mpi(&mpirun, 2, &["--output-format=json", "o.fio"], dir, 60);
    assert_ne!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("rank 1 (rank1@"), "{}", r.stderr);
    let j = json_of(&r.stdout);
    assert_eq!(
        j["client_stats"][0]["write"]["io_bytes"].as_u64(),
        Some(1 << 20),
        "rank 0's results are kept: {j}"
    );
}

/// The barrier before each reporting group: rank 1's first group takes over a second
/// (1 ms think time per I/O), rank 0's none; both start the second group together (their
/// exec_prerun stamps a file as the group starts).
#[test]
fn groups_start_together_on_every_rank() {
    let Some(mpirun) = mpirun() else { return };
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    std::fs::write(
        dir.join("g.fio"),
        "[global]\nioengine=null\nrw=read\nbs=4k\n\
         [a]\nsize=5m\nthinktime=${OMPI_COMM_WORLD_RANK}000\n\
         [b]\nstonewall\nsize=1m\nexec_prerun=touch start.${OMPI_COMM_WORLD_RANK}\n",
    )
    .unwrap();
    let r = run_mpi(&mpirun, 2, &["--output-format=json", "g.fio"], dir, 120);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let j = json_of(&r.stdout);
    let slow = &j["client_stats"][2];
    assert_eq!(slow["jobname"], "a");
    assert!(slow["hostname"].as_str().unwrap().starts_with("rank1@"));
    assert!(
        slow["read"]["runtime"].as_u64().unwrap() > 1000,
        "rank 1's first group is slow: {slow}"
    );
    let stamp = |r: usize| {
        std::fs::metadata(dir.join(format!("start.{r}")))
            .unwrap()
            .modified()
            .unwrap()
    };
    let (s0, s1) = (stamp(0), stamp(1));
    let gap = s0
        .duration_since(s1)
        .or_else(|_| s1.duration_since(s0))
        .unwrap();
    assert!(
        gap < Duration::from_millis(300),
        "the second group starts {gap:?} apart on the two ranks"
    );
}

/// exitall (exit_what=all) on rank 0 only: rank 0 skips its later groups, rank 1 runs
/// them all; rank 0 still joins their barriers, so the run ends (no rank waits forever),
/// with and without --mpi-stonewall.
#[test]
fn a_rank_that_stops_early_does_not_hang_the_others() {
    let Some(mpirun) = mpirun() else { return };
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    std::fs::write(
        dir.join("x.fio"),
        "[global]\nioengine=null\nrw=read\nbs=4k\nsize=2m\n\
         [a]\nexitall\nexit_what=${EXIT_WHAT}\n[b]\nstonewall\n[c]\nstonewall\n",
    )
    .unwrap();
    for mode in ["--mpi", "--mpi-stonewall"] {
        let mut args = mpi_args_env(
            [&["EXIT_WHAT=all"], &["EXIT_WHAT=group"]],
            &["--output-format=json", "x.fio"],
        );
        for a in args.iter_mut().filter(|a| *a == "--mpi") {
            *a = mode.to_string();
        }
        let t = Instant::now();
        let out = wait_bounded(spawn_mpi(&mpirun, &args, dir), 60)
            .unwrap_or_else(|| panic!("{mode}: the ranks hung"));
        assert!(
            t.elapsed() < Duration::from_secs(30),
            "{mode}: {:?}",
            t.elapsed()
        );
        let (stdout, stderr) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        assert!(out.status.success(), "{mode}: {stdout}{stderr}");
        let j = json_of(&stdout);
        let ios = |host: &str, job: &str| -> u64 {
            j["client_stats"]
                .as_array()
                .unwrap()
                .iter()
                .find(|c| c["jobname"] == job && c["hostname"].as_str().unwrap().starts_with(host))
                .map(|c| c["read"]["total_ios"].as_u64().unwrap())
                .unwrap_or(0)
        };
        assert_eq!(ios("rank0@", "a"), 512, "{mode}: {j}");
        assert_eq!(ios("rank0@", "c"), 0, "{mode}: rank 0 skipped c");
        if mode == "--mpi" {
            assert_eq!(ios("rank1@", "c"), 512, "{mode}: rank 1 ran c: {j}");
        }
    }
}

/// A rank that stops answering (SIGSTOP) in the middle of the run: rank 0 gives up on it
/// after the liveness limit, names it, prints what it has marked partial (its own
/// results), and ends the job.
#[test]
fn a_hung_rank_is_given_up_on_and_the_rest_is_printed() {
    let Some(mpirun) = mpirun() else { return };
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    std::fs::write(
        dir.join("h.fio"),
        "[h]\nioengine=null\nrw=read\nbs=4k\nsize=1g\ntime_based\nruntime=30\nrate=10m\n",
    )
    .unwrap();
    let child = spawn_mpi(
        &mpirun,
        &mpi_args(2, &["--output-format=json", "h.fio"]),
        dir,
    );
    let victim = rank_pid(child.id(), 1);
    std::thread::sleep(Duration::from_secs(2));
    common::send_signal(victim, "STOP");
    let t = Instant::now();
    let out = wait_bounded(child, 60);
    // Let the stopped rank go (mpirun normally kills it already).
    let _ = std::process::Command::new("kill")
        .args(["-KILL", &victim.to_string()])
        .stderr(std::process::Stdio::null())
        .status();
    let out = out.expect("mpirun did not end after a rank hung");
    let took = t.elapsed();
    assert!(
        took < Duration::from_secs(20),
        "given up on after {took:?} (liveness 10 s)"
    );
    assert!(!out.status.success());
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(
        stderr.contains("rank 1 (rank1@") && stderr.contains("silent for 10 s"),
        "{stderr}"
    );
    assert!(stderr.contains("results shown are partial"), "{stderr}");
    let j = json_of(&stdout);
    assert_eq!(j["flexio"]["status"], "partial");
    let cs = j["client_stats"].as_array().unwrap();
    assert_eq!(cs.len(), 1, "rank 0's report only: {j}");
    assert!(cs[0]["hostname"].as_str().unwrap().starts_with("rank0@"));
    let runtime = cs[0]["read"]["runtime"].as_u64().unwrap();
    assert!(runtime < 25_000, "rank 0 was stopped early: {runtime} ms");
    assert_eq!(j["flexio"]["hosts"][1]["status"], "partial");
}

/// `--mpi-stonewall`: rank 0 finishes each group at once (no think time), rank 1 would take
/// seconds (1 ms think time per I/O); rank 0's end stops rank 1's group, in both groups.
/// Without the switch rank 1 does every I/O.
#[test]
fn stonewall_stops_every_rank_when_the_first_ends() {
    let Some(mpirun) = mpirun() else { return };
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    std::fs::write(
        dir.join("w.fio"),
        "[global]\nioengine=null\nrw=read\nbs=4k\nsize=8m\nthinktime=${OMPI_COMM_WORLD_RANK}000\n\
         [a]\n[b]\nstonewall\n",
    )
    .unwrap();
    let ios = |j: &Value, host: &str| -> Vec<u64> {
        j["client_stats"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["jobname"] != "All clients")
            .filter(|c| c["hostname"].as_str().is_some_and(|h| h.starts_with(host)))
            .map(|c| c["read"]["total_ios"].as_u64().unwrap())
            .collect()
    };
    let t = Instant::now();
    let r = run_mpi(
        &mpirun,
        2,
        &["--mpi-stonewall", "--output-format=json", "w.fio"],
        dir,
        120,
    );
    let took = t.elapsed();
    assert_eq!(r.code, 0, "stdout:\n{}\nstderr:\n{}", r.stdout, r.stderr);
    let j = json_of(&r.stdout);
    assert_eq!(ios(&j, "rank0"), vec![2048, 2048], "{j}");
    let slow = ios(&j, "rank1");
    assert_eq!(slow.len(), 2, "{j}");
    assert!(
        slow.iter().all(|n| *n < 1024),
        "rank 1 was stopped in both groups: {slow:?}"
    );
    assert!(took < Duration::from_secs(20), "{took:?}");
    // Without the switch each rank runs its groups to the end.
    let r = run_mpi(&mpirun, 2, &["--output-format=json", "w.fio"], dir, 120);
    assert_eq!(r.code, 0, "stdout:\n{}\nstderr:\n{}", r.stdout, r.stderr);
    assert_eq!(ios(&json_of(&r.stdout), "rank1"), vec![2048, 2048]);
}

/// `flexio report` and `flexio compare` read the MPI run's merged JSON: one job per rank
/// (job@rank<r>@<host>) and "All clients".
#[test]
fn report_and_compare_read_mpi_json() {
    let Some(mpirun) = mpirun() else { return };
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    std::fs::write(
        dir.join("r.fio"),
        "[r]\nioengine=null\nrw=read\nbs=4k\nsize=8m\n",
    )
    .unwrap();
    for out in ["one.json", "two.json"] {
        let r = run_mpi(
            &mpirun,
            2,
            &["--output-format=json", &format!("--output={out}"), "r.fio"],
            dir,
            120,
        );
        assert_eq!(r.code, 0, "stdout:\n{}\nstderr:\n{}", r.stdout, r.stderr);
    }
    let j: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("one.json")).unwrap()).unwrap();
    let names: Vec<String> = j["client_stats"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["jobname"] != "All clients")
        .map(|c| format!("r@{}", c["hostname"].as_str().unwrap()))
        .collect();
    assert_eq!(names.len(), 2);
    assert!(names[0].starts_with("r@rank0@") && names[1].starts_with("r@rank1@"));
    let r = common::run_in(
        &flexio_bin(),
        &["report", "one.json", "two.json", "-o", "r.html"],
        dir,
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let html = std::fs::read_to_string(dir.join("r.html")).unwrap();
    for n in names.iter().map(|s| s.as_str()).chain(["All clients"]) {
        assert!(html.contains(n), "the report shows {n}");
    }
    let r = common::run_in(&flexio_bin(), &["compare", "one.json", "two.json"], dir);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    for n in names.iter().map(|s| s.as_str()).chain(["All clients"]) {
        assert!(
            r.stdout.contains(&format!("\n{n} (read): 1 vs 1 result")),
            "compare pairs {n}: {}",
            r.stdout
        );
    }
}

/// Rank 1's clock 30 s ahead (the test-only FLEXIO_TEST_CLOCK_SKEW_MS): rank 0 measures
/// the offset, and moves rank 1's start and end stamps onto its own clock by it, so both
/// ranks' runs line up and the last-done window is the run's length; uncorrected, rank 1
/// would start 30 s after rank 0 and the runs would not overlap.
#[test]
fn a_skewed_rank_clock_is_measured_and_corrected() {
    let Some(mpirun) = mpirun() else { return };
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    std::fs::write(
        dir.join("s.fio"),
        "[s]\nioengine=null\nrw=read\nbs=4k\nsize=1g\ntime_based\nruntime=2\nrate=10m\n",
    )
    .unwrap();
    let args = mpi_args_env(
        [&[], &["FLEXIO_TEST_CLOCK_SKEW_MS=30000"]],
        &["--output-format=json,normal", "s.fio"],
    );
    let out = wait_bounded(spawn_mpi(&mpirun, &args, dir), 120).expect("mpirun hung");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{stdout}{stderr}");
    assert!(
        stdout.contains("windows placed by each rank's own clock, shifted onto rank 0's"),
        "{stdout}"
    );
    let j = json_of(&stdout[stdout.find("{\n").expect("JSON document")..]);
    let hosts = j["flexio"]["hosts"].as_array().unwrap();
    let off = hosts[1]["clock_offset_ns"].as_i64().unwrap() as f64 / 1e9;
    let err = hosts[1]["clock_offset_error_ns"].as_i64().unwrap() as f64 / 1e9;
    assert!((off - 30.0).abs() <= err + 0.05, "rank 1: {off} s ± {err}");
    let start = |i: usize| hosts[i]["start_ns"].as_u64().unwrap() as f64 / 1e9;
    assert!((start(0) - start(1)).abs() < 0.5, "{hosts:?}");
    let cl = &j["flexio"]["cluster"];
    assert_eq!(cl["time_base"], "rank_clocks");
    assert!(cl["common"].is_object(), "the runs overlap: {cl}");
    let w = &cl["last_done"];
    let len = (w["end_ns"].as_u64().unwrap() - w["start_ns"].as_u64().unwrap()) as f64 / 1e9;
    assert!((1.9..10.0).contains(&len), "last-done window {len} s");
}

/// A task the launcher counts among several while MPI sees it alone (an MPI library that
/// did not join srun's job) is refused: it would run alone under rank 0's file names.
/// Runs flexio directly (an MPI singleton) with srun's task count in its environment.
#[test]
fn a_task_mpi_does_not_see_as_part_of_the_job_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    std::fs::write(dir.join("r.fio"), "[r]\nioengine=null\nrw=read\nsize=1m\n").unwrap();
    let r = run_bounded(
        &flexio_bin(),
        &["--mpi", "r.fio"],
        dir,
        &[("SLURM_STEP_NUM_TASKS", "4"), ("SLURM_PROCID", "2")],
        60,
    );
    assert_ne!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stderr
            .contains("MPI sees 1 rank, but the launcher started 4 tasks (SLURM_STEP_NUM_TASKS=4)"),
        "{}",
        r.stderr
    );
    // Alone and told so, it runs.
    let r = run_bounded(&flexio_bin(), &["--mpi", "r.fio"], dir, &[], 60);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
}
