//! cgroup / cgroup_weight / cgroup_nodelete: the job thread runs in a blkio cgroup (cgroup
//! v1, as fio 3.33), created if need be and removed afterwards unless cgroup_nodelete; a
//! program the job starts sees that cgroup, as under fio 3.33. A weight the kernel does not
//! offer (no blkio.weight without CFQ) fails the job with fio's error. With a cgroup v2
//! hierarchy first (fio takes the first blkio or unified mount; a private mount namespace
//! arranges it here), the process joins through cgroup.procs, and a weight is refused with
//! fio's message, both against fio 3.33.

use crate::common;
use common::*;
use std::path::{Path, PathBuf};

fn blkio() -> Option<PathBuf> {
    let m = std::fs::read_to_string("/proc/mounts").unwrap_or_default();
    let found = m.lines().find_map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        (f.len() >= 4 && f[2] == "cgroup" && f[3].split(',').any(|o| o == "blkio"))
            .then(|| PathBuf::from(f[1]))
    });
    if found.is_none() || !rustix::process::geteuid().is_root() {
        eprintln!("SKIP: needs root and a mounted cgroup v1 blkio hierarchy");
        return None;
    }
    found
}

/// The blkio line of /proc/self/cgroup of a program the job starts, and the job's error.
fn seen(bin: &Path, dir: &Path, name: &str, extra: &[&str]) -> (String, i64) {
    let show = dir.join("cg.sh");
    std::fs::write(&show, "#!/bin/sh\ngrep blkio /proc/self/cgroup\n").unwrap();
    std::fs::set_permissions(&show, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let prog = format!("--program={}", show.display());
    let cg = format!("--cgroup={name}");
    let mut args = vec![
        "--name=c",
        "--ioengine=exec",
        prog.as_str(),
        "--std_redirect=0",
        "--runtime=1",
        cg.as_str(),
        "--output-format=json",
    ];
    args.extend_from_slice(extra);
    let r = run_bounded(bin, &args, dir, &[], 60);
    let line = r
        .stdout
        .lines()
        .find(|l| l.contains(":blkio:"))
        .map(|l| l.split_once(':').map_or(l, |x| x.1).to_string())
        .unwrap_or_default();
    let j = json_of(&r.stdout);
    (line, j["jobs"][0]["error"].as_i64().unwrap_or(-1))
}

#[test]
fn jobs_run_in_their_cgroup_as_under_fio() {
    let Some(root) = blkio() else { return };
    let d = tempfile::tempdir().unwrap();
    let mut tools = vec![("flexio", flexio_bin())];
    if let Some(f) = fio_bin() {
        tools.push(("fio", f));
    }
    for (tool, bin) in &tools {
        let name = format!("flexio-test-{tool}-{}", std::process::id());
        let dir = root.join(&name);
        let (line, err) = seen(bin, d.path(), &name, &[]);
        assert_eq!(
            (line.as_str(), err),
            (format!("blkio:/{name}").as_str(), 0),
            "{tool}"
        );
        assert!(!dir.exists(), "{tool}: the cgroup it made is removed");
        let (line, err) = seen(bin, d.path(), &name, &["--cgroup_nodelete=1"]);
        assert_eq!(
            (line.as_str(), err),
            (format!("blkio:/{name}").as_str(), 0),
            "{tool}"
        );
        assert!(dir.exists(), "{tool}: cgroup_nodelete keeps it");
        // An existing cgroup is joined and left in place.
        let (_, err) = seen(bin, d.path(), &name, &[]);
        assert_eq!(err, 0);
        assert!(dir.exists(), "{tool}: a cgroup it did not make stays");
        std::fs::remove_dir(&dir).unwrap();
    }
}

#[test]
fn a_weight_the_kernel_lacks_fails_as_fio() {
    let Some(root) = blkio() else { return };
    let d = tempfile::tempdir().unwrap();
    let name = format!("flexio-weight-{}", std::process::id());
    let has_weight = root.join("blkio.weight").exists();
    let run = |bin: &Path| {
        let cg = format!("--cgroup={name}");
        let r = run_bounded(
            bin,
            &[
                "--name=w",
                "--ioengine=null",
                "--size=1m",
                cg.as_str(),
                "--cgroup_weight=500",
                "--output-format=json",
            ],
            d.path(),
            &[],
            60,
        );
        (json_of(&r.stdout)["jobs"][0]["error"].as_i64(), r.stderr)
    };
    let (err, stderr) = run(&flexio_bin());
    if has_weight {
        assert_eq!(err, Some(0), "{stderr}");
    } else {
        assert_eq!(err, Some(13), "{stderr}");
        assert!(stderr.contains("func=cgroup open weight"), "{stderr}");
    }
    if let Some(f) = fio_bin() {
        assert_eq!(run(&f).0, err, "the same outcome as fio");
    }
    assert!(!root.join(&name).exists());
}

/// How to run a command so that the first cgroup hierarchy fio looks for is a cgroup v2
/// one: directly where it already is; else inside a private mount namespace in which the
/// v1 blkio mounts are unmounted (and a cgroup2 hierarchy mounted in a temporary directory
/// if the system has none mounted). `None` (with a visible SKIP) when that cannot be done.
fn v2_prefix(tmp: &Path) -> Option<Vec<String>> {
    if !rustix::process::geteuid().is_root() {
        eprintln!("SKIP: cgroup v2 tests need root");
        return None;
    }
    let m = std::fs::read_to_string("/proc/mounts").unwrap_or_default();
    let mut v1 = Vec::new();
    let mut first_v2 = None;
    let mut any_v2 = false;
    for l in m.lines() {
        let f: Vec<&str> = l.split_whitespace().collect();
        if f.len() < 4 {
            continue;
        }
        if f[2] == "cgroup" && f[3].split(',').any(|o| o == "blkio") {
            v1.push(f[1].to_string());
        } else if f[2] == "cgroup2" {
            any_v2 = true;
            if v1.is_empty() && first_v2.is_none() {
                first_v2 = Some(f[1].to_string());
            }
        }
    }
    if first_v2.is_some() {
        return Some(Vec::new());
    }
    if std::process::Command::new("unshare")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("SKIP: cgroup v2 is not the first hierarchy and unshare(1) is missing");
        return None;
    }
    let mut script = String::new();
    for d in &v1 {
        script.push_str(&format!("umount '{d}' && "));
    }
    if !any_v2 {
        let d = tmp.join("cg2");
        std::fs::create_dir_all(&d).unwrap();
        script.push_str(&format!("mount -t cgroup2 none '{}' && ", d.display()));
    }
    script.push_str("exec \"$@\"");
    Some(
        ["unshare", "-m", "sh", "-c", &script, "sh"]
            .iter()
            .map(|s| s.to_string())
            .collect(),
    )
}

/// The mount point of the cgroup v2 hierarchy a command run with `prefix` sees.
fn v2_mount(prefix: &[String], dir: &Path) -> PathBuf {
    let mut a: Vec<&str> = prefix.iter().map(String::as_str).collect();
    a.extend(["cat", "/proc/mounts"]);
    let r = run_bounded(Path::new(a[0]), &a[1..], dir, &[], 30);
    let line = r
        .stdout
        .lines()
        .find(|l| l.split_whitespace().nth(2) == Some("cgroup2"))
        .expect("a cgroup2 mount");
    PathBuf::from(line.split_whitespace().nth(1).unwrap())
}

/// Run `bin args` with `prefix`.
fn run_v2(prefix: &[String], bin: &Path, args: &[&str], dir: &Path) -> Run {
    let b = bin.display().to_string();
    let mut a: Vec<&str> = prefix.iter().map(String::as_str).collect();
    a.push(&b);
    a.extend_from_slice(args);
    run_bounded(Path::new(a[0]), &a[1..], dir, &[], 60)
}

/// cgroup v2, as fio 3.33 handles it: the job's process joins `<mount>/<name>` through
/// cgroup.procs (a program the job starts is in it), the cgroup is removed afterwards
/// unless cgroup_nodelete; cgroup_weight is refused with fio's message and the job ends at
/// once without I/O and without error.
#[test]
fn cgroup_v2_as_fio() {
    let d = tempfile::tempdir().unwrap();
    let Some(prefix) = v2_prefix(d.path()) else {
        return;
    };
    let mnt = v2_mount(&prefix, d.path());
    let show = d.path().join("cg.sh");
    std::fs::write(&show, "#!/bin/sh\ngrep '^0::' /proc/self/cgroup\n").unwrap();
    std::fs::set_permissions(&show, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let prog = format!("--program={}", show.display());
    let mut tools = vec![("flexio", flexio_bin())];
    if let Some(f) = fio_bin() {
        tools.push(("fio", f));
    }
    for (tool, bin) in &tools {
        let name = format!("flexio-v2-{tool}-{}", std::process::id());
        let cg = format!("--cgroup={name}");
        let base = [
            "--name=c",
            "--ioengine=exec",
            prog.as_str(),
            "--std_redirect=0",
            "--runtime=1",
            cg.as_str(),
            "--output-format=json",
        ];
        let r = run_v2(&prefix, bin, &base, d.path());
        let line = r.stdout.lines().find(|l| l.starts_with("0::"));
        assert_eq!(
            line,
            Some(format!("0::/{name}").as_str()),
            "{tool}: {}",
            r.stderr
        );
        assert_eq!(json_of(&r.stdout)["jobs"][0]["error"], 0, "{tool}");
        // Where the cgroup would be, seen from inside the namespace.
        let exists = |p: &Path| {
            let mut a: Vec<&str> = prefix.iter().map(String::as_str).collect();
            let s = p.display().to_string();
            a.extend(["test", "-d", &s]);
            run_bounded(Path::new(a[0]), &a[1..], d.path(), &[], 30).code == 0
        };
        assert!(
            !exists(&mnt.join(&name)),
            "{tool}: the cgroup it made is removed"
        );
        let mut keep = base.to_vec();
        keep.push("--cgroup_nodelete=1");
        let r = run_v2(&prefix, bin, &keep, d.path());
        assert_eq!(json_of(&r.stdout)["jobs"][0]["error"], 0, "{tool}");
        assert!(exists(&mnt.join(&name)), "{tool}: cgroup_nodelete keeps it");
        let mut a: Vec<&str> = prefix.iter().map(String::as_str).collect();
        let s = mnt.join(&name).display().to_string();
        a.extend(["rmdir", &s]);
        assert_eq!(
            run_bounded(Path::new(a[0]), &a[1..], d.path(), &[], 30).code,
            0
        );
        // A weight: fio's message, no I/O, no error, exit 0.
        let r = run_v2(
            &prefix,
            bin,
            &[
                "--name=w",
                "--ioengine=null",
                "--size=1m",
                cg.as_str(),
                "--cgroup_weight=500",
                "--output-format=json",
            ],
            d.path(),
        );
        assert_eq!(r.code, 0, "{tool}: {}", r.stderr);
        assert!(
            r.stderr
                .contains("fio: cgroup weit doesn't work with cgroup2"),
            "{tool}: {}",
            r.stderr
        );
        let j = json_of(&r.stdout);
        assert_eq!(j["jobs"][0]["error"], 0, "{tool}");
        assert_eq!(j["jobs"][0]["read"]["io_bytes"], 0, "{tool}");
        assert!(!exists(&mnt.join(&name)), "{tool}");
    }
}

/// flexio's jobs are threads of one process and cgroup v2 holds whole processes: jobs
/// running at the same time in one v2 cgroup share it; a job naming another one while the
/// process is in the first is refused with the reason (EBUSY), and the others run. c joins
/// only after its start delay, as fio starts a delayed job only then (flexio once joined
/// at thread start, and c won the race on a loaded CI machine).
#[test]
fn cgroup_v2_jobs_running_together() {
    let d = tempfile::tempdir().unwrap();
    let Some(prefix) = v2_prefix(d.path()) else {
        return;
    };
    let n = std::process::id();
    let job = d.path().join("j.fio");
    std::fs::write(
        &job,
        format!(
            "[global]\nioengine=null\nsize=1g\ntime_based\nruntime=2\n\
             [a]\ncgroup=flexio-v2a-{n}\n[b]\ncgroup=flexio-v2a-{n}\n[c]\ncgroup=flexio-v2c-{n}\nstartdelay=1\n"
        ),
    )
    .unwrap();
    let j = job.display().to_string();
    let r = run_v2(
        &prefix,
        &flexio_bin(),
        &["--output-format=json", &j],
        d.path(),
    );
    let v = json_of(&r.stdout);
    assert_eq!(v["jobs"][0]["error"], 0, "{}", r.stderr);
    assert_eq!(v["jobs"][1]["error"], 0, "{}", r.stderr);
    assert_eq!(v["jobs"][2]["error"], libc::EBUSY, "{}", r.stderr);
    assert!(
        r.stderr.contains("cgroup v2 holds whole processes"),
        "{}",
        r.stderr
    );
}
