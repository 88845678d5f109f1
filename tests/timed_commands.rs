//! The `cmdtime` engine: a command timed run after run with flexio's statistics, its
//! untimed commands around each run, clear failures, and examples/mount-time.fio against
//! file systems on loop devices the test makes (and removes). No timing is asserted beyond
//! "a 20 ms sleep takes at least 20 ms".

use crate::common;
use common::loopdev::LoopDev;
use common::{flexio, json_of, run_in_env};
use std::process::Command;

fn ct(extra: &[&str], dir: &std::path::Path) -> common::Run {
    let mut a = vec!["--name=t", "--ioengine=cmdtime", "--output-format=json"];
    a.extend_from_slice(extra);
    flexio(&a, dir)
}

#[test]
fn n_runs_are_n_operations() {
    let d = tempfile::tempdir().unwrap();
    let r = ct(&["--cmd=true", "--number_ios=7"], d.path());
    assert_eq!(r.code, 0, "{}", r.stderr);
    let j = json_of(&r.stdout);
    let job = &j["jobs"][0];
    assert_eq!(job["read"]["total_ios"], 7);
    assert_eq!(job["read"]["clat_ns"]["N"], 7);
    let op = &job["flexio"]["ops"]["cmd"];
    assert_eq!(op["count"], 7);
    assert_eq!(op["lat_ns"]["N"], 7);
    assert!(op["lat_ns"]["percentile"]["99.000000"].as_u64().unwrap() > 0);
}

#[test]
fn a_sleep_is_timed_whole() {
    let d = tempfile::tempdir().unwrap();
    let r = ct(&["--cmd=sleep 0.02", "--number_ios=3"], d.path());
    assert_eq!(r.code, 0, "{}", r.stderr);
    let j = json_of(&r.stdout);
    let job = &j["jobs"][0];
    let mean = job["flexio"]["ops"]["cmd"]["lat_ns"]["mean"]
        .as_f64()
        .unwrap();
    assert!(mean >= 20e6, "mean {mean} ns");
    assert!(job["read"]["clat_ns"]["min"].as_u64().unwrap() >= 20_000_000);
    // The normal output's table.
    let r = flexio(
        &[
            "--name=t",
            "--ioengine=cmdtime",
            "--cmd=sleep 0.02",
            "--number_ios=2",
        ],
        d.path(),
    );
    let row = r
        .stdout
        .lines()
        .find(|l| l.trim_start().starts_with("cmd "))
        .unwrap_or_else(|| panic!("{}", r.stdout));
    assert_eq!(row.split_whitespace().nth(1), Some("2"), "{row}");
    assert!(row.contains("ms"), "{row}");
}

#[test]
fn untimed_commands_run_around_each_run() {
    let d = tempfile::tempdir().unwrap();
    let log = d.path().join("log");
    let l = log.display();
    let (c, b, a) = (
        format!("--cmd=echo run >> {l}"),
        format!("--cmd_before=echo before >> {l}"),
        format!("--cmd_after=echo after >> {l}"),
    );
    let r = ct(&[&c, &b, &a, "--cmd_shell=1", "--number_ios=2"], d.path());
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        std::fs::read_to_string(&log).unwrap(),
        "before\nrun\nafter\nbefore\nrun\nafter\n"
    );
    assert_eq!(
        json_of(&r.stdout)["jobs"][0]["flexio"]["ops"]["cmd"]["count"],
        2
    );
}

#[test]
fn failures_are_clear_errors() {
    let d = tempfile::tempdir().unwrap();
    let r = ct(&["--cmd=false", "--number_ios=3"], d.path());
    assert_ne!(r.code, 0);
    assert!(
        r.stderr.contains("cmd 'false' (exit status 1) failed"),
        "{}",
        r.stderr
    );
    // EIO: the command failed.
    assert_eq!(json_of(&r.stdout)["jobs"][0]["error"], 5);
    let r = ct(
        &[
            "--cmd=echo no such mount >&2; exit 32",
            "--cmd_shell=1",
            "--number_ios=3",
        ],
        d.path(),
    );
    assert!(
        r.stderr.contains("(exit status 32: no such mount)"),
        "{}",
        r.stderr
    );
    // With continue_on_error the failed runs are counted and the job goes on.
    let r = ct(
        &["--cmd=false", "--number_ios=3", "--continue_on_error=all"],
        d.path(),
    );
    let j = json_of(&r.stdout);
    assert_eq!(j["jobs"][0]["total_err"], 3, "{}", r.stdout);
    // An untimed command that fails ends the job.
    let r = ct(
        &["--cmd=true", "--cmd_after=false", "--number_ios=3"],
        d.path(),
    );
    assert_ne!(r.code, 0);
    assert!(
        r.stderr
            .contains("cmd_after 'false' (exit status 1) failed"),
        "{}",
        r.stderr
    );
    for (args, says) in [
        (vec!["--cmd=true"], "number_ios"),
        (vec!["--number_ios=2"], "no cmd"),
        (
            vec!["--cmd=no-such-program-here", "--number_ios=2"],
            "not an executable",
        ),
    ] {
        let r = ct(&args, d.path());
        assert_ne!(r.code, 0, "{args:?}");
        assert!(r.stderr.contains(says), "{args:?}: {}", r.stderr);
        assert!(!r.stderr.contains("panicked"));
    }
}

/// A loop device with a fresh file system of `fstype`, or why not.
fn fs_dev(fstype: &str) -> Result<LoopDev, String> {
    let mkfs = format!("mkfs.{fstype}");
    if Command::new(&mkfs).arg("-V").output().is_err() {
        return Err(format!("{mkfs} is not installed"));
    }
    // xfs needs 300 MiB at least; the backing file is sparse.
    let l = LoopDev::new(320 << 20).ok_or("no loop device")?;
    let force = if fstype == "ext4" { "-F" } else { "-f" };
    let ok = Command::new(&mkfs)
        .args(["-q", force])
        .arg(&l.dev)
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    if !ok {
        return Err(format!("{mkfs} failed"));
    }
    Ok(l)
}

#[test]
fn the_mount_time_example_times_each_file_system() {
    if let Some(why) = common::loopdev::unavailable() {
        eprintln!("SKIP: mount-time example: {why}");
        return;
    }
    let require = std::env::var("FLEXIO_REQUIRE_FS").as_deref() == Ok("1");
    let example = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/mount-time.fio");
    let d = tempfile::tempdir().unwrap();
    let mnt = d.path().join("mnt");
    std::fs::create_dir(&mnt).unwrap();
    let mut devs = Vec::new();
    let mut env: Vec<(String, String)> = vec![("MNT".into(), mnt.display().to_string())];
    let mut sections = Vec::new();
    for fs in ["ext4", "xfs", "btrfs"] {
        let var = format!("{}_DEV", fs.to_uppercase());
        match fs_dev(fs) {
            Ok(l) => {
                env.push((var, l.path().to_string()));
                sections.push(fs);
                devs.push(l);
            }
            Err(why) => {
                assert!(!require, "{fs}: {why} (FLEXIO_REQUIRE_FS=1)");
                eprintln!("SKIP: mount-time example: {fs}: {why}");
                env.push((var, "/dev/null".into()));
            }
        }
    }
    if sections.is_empty() {
        return;
    }
    let mut args: Vec<String> = vec!["--output-format=json".into()];
    if sections.len() < 3 {
        args.extend(sections.iter().map(|s| format!("--section={s}")));
    }
    args.push(example.display().to_string());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let r = run_in_env(&common::flexio_bin(), &args, d.path(), &env);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let j = json_of(&r.stdout);
    let jobs = j["jobs"].as_array().unwrap();
    let names: Vec<&str> = jobs
        .iter()
        .map(|x| x["jobname"].as_str().unwrap())
        .collect();
    assert_eq!(names, sections);
    for job in jobs {
        let op = &job["flexio"]["ops"]["cmd"];
        assert_eq!(op["count"], 20, "{}", job["jobname"]);
        assert!(op["lat_ns"]["mean"].as_f64().unwrap() > 0.0);
    }
    // Every run was unmounted again.
    let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap();
    assert!(!mounts.contains(mnt.to_str().unwrap()), "{mounts}");
    drop(devs);
}

#[test]
fn untimed_work_is_the_engines_not_flexios() {
    // A slow untimed command is the engine's time in the self-measurement: no warning that
    // the job was bound by flexio itself.
    let d = tempfile::tempdir().unwrap();
    let r = ct(
        &["--cmd=true", "--cmd_after=sleep 0.05", "--number_ios=4"],
        d.path(),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!r.stderr.contains("spent in flexio itself"), "{}", r.stderr);
    let tool = &json_of(&r.stdout)["jobs"][0]["flexio"]["tool"];
    assert!(tool["engine_pct"].as_f64().unwrap() > 50.0, "{tool}");
}
