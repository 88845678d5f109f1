//! The `mdtree` metadata workload end to end, on tmpfs, ext4 on a loop device and a FUSE
//! pass-through (tests/common/fstargets.rs): exact operation counts, the tree removed
//! afterwards, every operation in the JSON and the normal output, clear errors when the
//! file system is full or read-only. No timing is asserted (benchmarks are in bench/).

use crate::common;
use common::fstargets::{FsKind, FsTarget};
use common::{flexio, json_of};
use std::path::Path;

/// Every operation of the engine, in report order.
const KINDS: [&str; 15] = [
    "mkdir", "create", "write", "close", "dirfsync", "stat", "access", "chmod", "open", "readdir",
    "link", "symlink", "rename", "unlink", "rmdir",
];

/// Counts of one life cycle of a full tree with every optional operation.
fn expected(fanout: u64, depth: u32, per_dir: u64, write: bool) -> Vec<(&'static str, u64)> {
    let dirs: u64 = (0..=depth).map(|l| fanout.pow(l)).sum();
    let f = dirs * per_dir;
    let n = [
        dirs,
        f,
        if write { f } else { 0 },
        2 * f,
        dirs,
        f,
        f,
        f,
        f,
        dirs,
        f,
        f,
        f,
        3 * f,
        dirs,
    ];
    KINDS.iter().copied().zip(n).collect()
}

fn entries(p: &Path) -> Vec<String> {
    std::fs::read_dir(p)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

fn md_args<'a>(dir: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut a = vec!["--name=md", "--ioengine=mdtree", dir];
    a.extend_from_slice(extra);
    a
}

#[test]
fn life_cycle_counts_are_exact_on_each_file_system() {
    for kind in FsKind::ALL {
        let Some(t) = FsTarget::new(kind, 256 << 20) else {
            continue;
        };
        let dir = format!("--directory={}", t.path().display());
        let r = flexio(
            &md_args(
                &dir,
                &[
                    "--fanout=4",
                    "--tree_depth=2",
                    "--files_per_dir=8",
                    "--create_size=4k",
                    "--output-format=json",
                ],
            ),
            t.path(),
        );
        assert_eq!(r.code, 0, "{}: {}", kind.name(), r.stderr);
        let j = json_of(&r.stdout);
        let job = &j["jobs"][0];
        assert_eq!(job["error"], 0, "{}", kind.name());
        let ops = &job["flexio"]["ops"];
        let want = expected(4, 2, 8, true);
        let names: Vec<&str> = ops
            .as_object()
            .unwrap()
            .keys()
            .map(|k| k.as_str())
            .collect();
        assert_eq!(names, KINDS, "every operation, in order");
        let mut total = 0;
        for (name, n) in &want {
            let o = &ops[name];
            assert_eq!(o["count"], *n, "{}: {name}", kind.name());
            assert_eq!(o["lat_ns"]["N"], *n, "{}: {name}", kind.name());
            assert!(o["ops_per_s"].as_f64().unwrap() > 0.0, "{name}");
            let p = &o["lat_ns"]["percentile"];
            assert!(p["50.000000"].as_u64().unwrap() > 0, "{name}: {p}");
            assert!(o["lat_ns"]["mean"].as_f64().unwrap() >= o["lat_ns"]["min"].as_f64().unwrap());
            total += n;
        }
        // Every request is one operation: the job's own count agrees.
        assert_eq!(job["read"]["total_ios"], total, "{}", kind.name());
        assert_eq!(job["read"]["clat_ns"]["N"], total);
        assert!(
            entries(t.path()).iter().all(|e| !e.starts_with("mdtree.")),
            "{}: the tree is gone: {:?}",
            kind.name(),
            entries(t.path())
        );
    }
}

#[test]
fn normal_output_loops_and_clones() {
    let Some(t) = FsTarget::new(FsKind::Tmpfs, 64 << 20) else {
        return;
    };
    let dir = format!("--directory={}", t.path().display());
    let r = flexio(
        &md_args(
            &dir,
            &[
                "--fanout=2",
                "--tree_depth=1",
                "--files_per_dir=3",
                "--md_ops=stat:readdir",
                "--loops=2",
            ],
        ),
        t.path(),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("mdtree: "), "{}", r.stdout);
    let table: Vec<&str> = r
        .stdout
        .lines()
        .skip_while(|l| !l.starts_with("  per operation (flexio):"))
        .skip(2)
        .take_while(|l| l.starts_with("    ") && !l.trim().is_empty())
        .collect();
    let rows: Vec<(String, u64)> = table
        .iter()
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f[0].to_string(), f[1].parse().unwrap())
        })
        .collect();
    // Two life cycles (loops=2) of 3 directories and 9 files; left-out operations are not
    // listed.
    let want = [
        ("mkdir", 6),
        ("create", 18),
        ("close", 18),
        ("stat", 18),
        ("readdir", 6),
        ("unlink", 18),
        ("rmdir", 6),
    ];
    let want: Vec<(String, u64)> = want.iter().map(|(n, c)| (n.to_string(), *c)).collect();
    assert_eq!(rows, want, "{}", r.stdout);
    // Clones with group_reporting: one unit with the sum.
    let r = flexio(
        &md_args(
            &dir,
            &[
                "--fanout=2",
                "--tree_depth=1",
                "--files_per_dir=3",
                "--numjobs=2",
                "--group_reporting",
                "--output-format=json",
            ],
        ),
        t.path(),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let j = json_of(&r.stdout);
    assert_eq!(j["jobs"][0]["flexio"]["ops"]["create"]["count"], 18);
    assert_eq!(j["jobs"][0]["flexio"]["ops"]["unlink"]["count"], 54);
    assert!(entries(t.path()).is_empty(), "{:?}", entries(t.path()));
}

#[test]
fn a_full_file_system_is_a_clear_error_and_the_tree_goes() {
    let Some(t) = FsTarget::new(FsKind::Tmpfs, 1 << 20) else {
        return;
    };
    let dir = format!("--directory={}", t.path().display());
    let r = flexio(
        &md_args(
            &dir,
            &[
                "--fanout=2",
                "--tree_depth=1",
                "--files_per_dir=64",
                "--create_size=64k",
            ],
        ),
        t.path(),
    );
    assert_ne!(r.code, 0, "a full tmpfs fails the job");
    assert!(
        r.stderr.contains("write of ") && r.stderr.contains("No space left on device"),
        "{}",
        r.stderr
    );
    assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
    assert!(r.stdout.contains("err=28"), "{}", r.stdout);
    assert!(
        entries(t.path()).is_empty(),
        "what was made is removed: {:?}",
        entries(t.path())
    );
}

#[test]
fn a_read_only_target_is_a_clear_error() {
    let Some(t) = FsTarget::new(FsKind::Tmpfs, 16 << 20) else {
        return;
    };
    let ro = std::process::Command::new("mount")
        .args(["-o", "remount,ro"])
        .arg(t.path())
        .status()
        .unwrap();
    assert!(ro.success());
    let dir = format!("--directory={}", t.path().display());
    let r = flexio(&md_args(&dir, &[]), t.path());
    assert_ne!(r.code, 0);
    assert!(
        r.stderr.contains("mkdir of ") && r.stderr.contains("Read-only file system"),
        "{}",
        r.stderr
    );
    assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
    // flexio's own --readonly refuses before anything is touched.
    let d = tempfile::tempdir().unwrap();
    let dir = format!("--directory={}", d.path().display());
    let r = flexio(&md_args(&dir, &["--readonly"]), d.path());
    assert_ne!(r.code, 0);
    assert!(entries(d.path()).is_empty());
    // An existing tree of the same name is not touched.
    std::fs::create_dir(d.path().join("mdtree.md.0")).unwrap();
    std::fs::write(d.path().join("mdtree.md.0/keep"), b"x").unwrap();
    let r = flexio(&md_args(&dir, &[]), d.path());
    assert_ne!(r.code, 0);
    assert!(r.stderr.contains("File exists"), "{}", r.stderr);
    assert!(d.path().join("mdtree.md.0/keep").exists());
}

#[test]
fn bad_options_are_refused_before_running() {
    let d = tempfile::tempdir().unwrap();
    let dir = format!("--directory={}", d.path().display());
    for (extra, says) in [
        ("--md_ops=stat:nope", "nope"),
        ("--fanout=0", "fanout"),
        ("--filename=x", "filename is not used"),
        ("--tree_depth=20", "too large"),
    ] {
        let r = flexio(&md_args(&dir, &[extra]), d.path());
        assert_ne!(r.code, 0, "{extra}");
        assert!(r.stderr.contains(says), "{extra}: {}", r.stderr);
    }
    assert!(entries(d.path()).is_empty());
}

/// The run's report shows the operations: a table with one row per kind and the rate and
/// p99 charts, drawn by headless Chromium without console messages; with `loops=3` the
/// phase rates stay of the order of the operation rates (each loop's phase, not the span
/// of all loops).
#[test]
fn the_report_shows_each_operation() {
    let d = tempfile::tempdir().unwrap();
    let dir = format!("--directory={}", d.path().display());
    let page = d.path().join("md.html");
    let report = format!("--report={}", page.display());
    let mut args = md_args(&dir, &["--loops=3", "--output-format=json"]);
    args.push(&report);
    let r = flexio(&args, d.path());
    assert_eq!(r.code, 0, "{}", r.stderr);
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("Operations of job md"), "{html}");
    assert!(html.contains("operations per second (time in the operation)"));
    assert!(html.contains("p99 latency per operation"));
    assert!(html.contains("<tr><td>mkdir</td>"), "{html}");
    let v = json_of(&r.stdout);
    let ops = v["jobs"][0]["flexio"]["ops"].as_object().unwrap();
    let mkdir = &ops["mkdir"];
    let (rate, phase) = (
        mkdir["ops_per_s"].as_f64().unwrap(),
        mkdir["span_ops_per_s"].as_f64().unwrap(),
    );
    assert!(
        phase <= rate * 1.0001 && phase > rate / 20.0,
        "mkdir {rate} ops/s, phase {phase}"
    );
    if let Some(chrome) = common::chromium::find("the operations' charts") {
        let profile = tempfile::tempdir().unwrap();
        let (dom, console) = common::chromium::render(&chrome, &page, profile.path(), None);
        assert!(console.is_empty(), "console messages: {console:?}");
        assert!(dom.contains("p99 latency per operation"));
    }
}
