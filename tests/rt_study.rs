//! `flexio rt-study`: the interference study runs on tmpfs, ext4 on a loop device, a FUSE
//! pass-through and a raw loop device under bfq; every case has exactly the requested
//! number of foreground requests, the tests cover both questions, JSON and the HTML page
//! are written, and bad input is a clear error.

use crate::common;
use common::fstargets::{FsKind, FsTarget};
use common::loopdev::LoopDev;
use common::*;
use std::path::Path;

fn study(dir: &Path, target: &Path, extra: &[&str]) -> (Run, serde_json::Value) {
    let json = dir.join("study.json");
    let html = dir.join("study.html");
    let mut args = vec![
        "rt-study",
        "--requests",
        "256",
        "--bg",
        "0,1",
        "--bg-bs",
        "64k",
        "--bg-depth",
        "4",
        "--warmup",
        "200",
        "--repeat",
        "2",
    ];
    args.extend_from_slice(extra);
    let (j, h) = (
        format!("--json={}", json.display()),
        format!("--html={}", html.display()),
    );
    args.push(&j);
    args.push(&h);
    let t = target.to_str().unwrap();
    args.push(t);
    let r = run_bounded(&flexio_bin(), &args, dir, &[], 300);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap())
        .expect("the study's JSON parses");
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("<svg"), "the page has charts");
    for c in ["rt bg=0", "be bg=1"] {
        assert!(page.contains(c), "the page names case {c}");
    }
    (r, v)
}

fn check_cases(v: &serde_json::Value, n: u64) {
    let cases = v["cases"].as_array().unwrap();
    let labels: Vec<&str> = cases.iter().map(|c| c["case"].as_str().unwrap()).collect();
    assert_eq!(labels, ["rt bg=0", "be bg=0", "rt bg=1", "be bg=1"]);
    for c in cases {
        assert_eq!(c["n"], n, "{c}");
        assert_eq!(c["runs"], 2, "{c}");
        assert_eq!(c["run_medians_ns"].as_array().unwrap().len(), 2, "{c}");
        let (min, max) = (c["min_ns"].as_f64().unwrap(), c["max_ns"].as_f64().unwrap());
        let mean = c["mean_ns"].as_f64().unwrap();
        assert!(min > 0.0 && min <= mean && mean <= max, "{c}");
        let rms = c["rms_ns"].as_f64().unwrap();
        assert!(rms >= mean, "RMS is at least the mean: {c}");
        let p = &c["percentiles_ns"];
        let p50 = p["50.000000"].as_f64().unwrap();
        let p99 = p["99.000000"].as_f64().unwrap();
        assert!(min <= p50 && p50 <= p99 && p99 <= max, "{c}");
        let loaded = c["background_jobs"].as_u64().unwrap() > 0;
        assert_eq!(
            c["background_bw_bytes"].as_f64().unwrap() > 0.0,
            loaded,
            "background bandwidth only with background jobs: {c}"
        );
    }
    // Load: rt 0→1, be 0→1; class: be→rt at 0 and at 1.
    let tests = v["tests"].as_array().unwrap();
    let q: Vec<(&str, &str, &str)> = tests
        .iter()
        .map(|t| {
            (
                t["question"].as_str().unwrap(),
                t["a"].as_str().unwrap(),
                t["b"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        q,
        [
            ("load", "rt bg=0", "rt bg=1"),
            ("load", "be bg=0", "be bg=1"),
            ("class", "be bg=0", "rt bg=0"),
            ("class", "be bg=1", "rt bg=1"),
        ]
    );
    for t in tests {
        let (p, adj) = (
            t["p_mann_whitney"].as_f64().unwrap(),
            t["p_adjusted"].as_f64().unwrap(),
        );
        assert!((0.0..=1.0).contains(&p) && adj >= p && adj <= 1.0, "{t}");
        let runs_adj = t["p_runs_adjusted"]
            .as_f64()
            .expect("two runs: a run-level test");
        // The middle: both the per-request and the run-level test, and a shift that is not
        // negligible; the study's verdict: the middle, the tail or the whole distribution.
        let delta = t["cliffs_delta"].as_f64().unwrap().abs();
        let middle = adj < 0.05 && runs_adj < 0.05 && delta >= 0.147;
        assert_eq!(t["middle_significant"], middle, "{t}");
        let tail = t["tail_tests"]
            .as_array()
            .unwrap()
            .iter()
            .any(|x| x["significant"] == true);
        let ks = t["ks_test"]["significant"] == true;
        assert_eq!(t["significant"], middle || tail || ks, "{t}");
        assert_eq!(t["tail_tests"].as_array().unwrap().len(), 2, "{t}");
    }
}

#[test]
fn the_study_runs_on_each_file_system() {
    for kind in FsKind::ALL {
        let Some(fs) = FsTarget::new(kind, 96 << 20) else {
            continue;
        };
        let d = tempfile::tempdir().unwrap();
        // O_DIRECT where the file system has it (ext4), the page cache elsewhere.
        let direct = if kind == FsKind::Ext4Loop { "1" } else { "0" };
        let target = fs.path().join("rt.dat");
        let (r, v) = study(
            d.path(),
            &target,
            &["--size", "32m", "--direct", direct, "--keep", "cases"],
        );
        eprintln!("{}:\n{}", kind.name(), r.stdout);
        check_cases(&v, 512);
        assert_eq!(v["settings"]["direct"], direct == "1");
        // The table: a header, a row per case, the tests.
        assert!(r.stdout.contains("rt bg=1"), "{}", r.stdout);
        assert!(r.stdout.contains("Mann-Whitney U"), "{}", r.stdout);
        // --keep leaves each case's job, result and foreground latency log.
        for case in ["rt-bg0-run1", "be-bg1-run2"] {
            let c = d.path().join("cases").join(case);
            for f in ["case.fio", "result.json", "foreground_lat.1.log"] {
                assert!(c.join(f).exists(), "{} lacks {f}", c.display());
            }
        }
        let job = std::fs::read_to_string(d.path().join("cases/be-bg1-run1/case.fio")).unwrap();
        assert!(
            job.contains("prioclass=2") && job.contains("numjobs=1"),
            "{job}"
        );
    }
}

#[test]
fn the_study_on_a_loop_device_under_bfq_reads_only() {
    let Some(lo) = LoopDev::with_options(256 << 20, true) else {
        return;
    };
    if !lo.set_scheduler("bfq") {
        eprintln!("SKIP: the bfq scheduler is not available for {}", lo.name());
        return;
    }
    // Data on the device so reads reach the backing file.
    let d = tempfile::tempdir().unwrap();
    let fill = flexio(
        &[
            "--name=fill",
            &format!("--filename={}", lo.path()),
            "--rw=write",
            "--bs=1m",
            "--direct=1",
        ],
        d.path(),
    );
    assert_eq!(fill.code, 0, "{}", fill.stderr);
    let before = std::fs::read(&lo.backing).unwrap();
    let (r, v) = study(d.path(), &lo.dev, &["--bg-engine", "psync"]);
    eprintln!("{}", r.stdout);
    check_cases(&v, 512);
    assert_eq!(v["settings"]["block_device"], true);
    assert_eq!(v["settings"]["scheduler"], "bfq");
    assert!(r.stdout.contains("(scheduler bfq)"), "{}", r.stdout);
    assert!(
        std::fs::read(&lo.backing).unwrap() == before,
        "a read study must not modify the device"
    );
}

#[test]
fn bad_input_is_a_clear_error() {
    let d = tempfile::tempdir().unwrap();
    for (args, want) in [
        (
            &["rt-study"][..],
            "the following required arguments were not provided:\n  <TARGET>",
        ),
        (
            &["rt-study", "--bg", "1,x", "f"],
            "invalid value '1,x' for '--bg <LIST>': 'x' is not a valid number",
        ),
        (
            &["rt-study", "--classes", "rt,fast", "f"],
            "'fast' is not rt, be or idle",
        ),
        (&["rt-study", "--prio", "9", "f"], "0 (highest) to 7"),
        (
            &["rt-study", "--frobnicate", "f"],
            "unexpected argument '--frobnicate' found",
        ),
        (&["rt-study", "--bs", "-4k", "f"], "--bs"),
    ] {
        let r = flexio(args, d.path());
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
        assert!(r.stderr.contains(want), "{args:?}: {}", r.stderr);
        assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
    }
    // A directory is neither a file nor a device.
    let r = flexio(&["rt-study", d.path().to_str().unwrap()], d.path());
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("not a regular file or a block device"),
        "{}",
        r.stderr
    );
    // A case that cannot run (O_DIRECT on tmpfs may be refused; an unknown engine always
    // is) names the failure.
    let r = flexio(
        &[
            "rt-study",
            "--engine",
            "nosuchengine",
            "--size",
            "1m",
            "--direct",
            "0",
            "t.dat",
        ],
        d.path(),
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("nosuchengine"), "{}", r.stderr);
    // `flexio --help` lists the subcommand.
    let h = flexio(&["--help"], d.path());
    assert!(h.stdout.contains("rt-study"), "{}", h.stdout);
}

/// The study runs its cases in its own process: the flexio binary file can be replaced
/// (a rebuild) or removed while the study runs, and every case still runs.
/// The study's arguments for the robustness tests: two background loads, three runs per
/// case, on a file in `dir` (page cache, no O_DIRECT), keeping the runs in `dir/kept`.
fn robust_args(dir: &Path) -> Vec<String> {
    [
        "rt-study",
        "--requests",
        "2048",
        "--bg",
        "0,1",
        "--classes",
        "be",
        "--bg-bs",
        "64k",
        "--warmup",
        "100",
        "--repeat",
        "3",
        "--direct",
        "0",
        "--size",
        "16m",
        "--no-warmup-run",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain([
        format!("--keep={}", dir.join("kept").display()),
        format!("--json={}", dir.join("study.json").display()),
        dir.join("target.dat").display().to_string(),
    ])
    .collect()
}

fn wait_for(p: &Path, child: &mut std::process::Child) {
    let t = std::time::Instant::now();
    while !p.is_file() {
        if let Ok(Some(s)) = child.try_wait() {
            panic!("the study ended ({s}) before {} appeared", p.display());
        }
        assert!(
            t.elapsed().as_secs() < 120,
            "{} never appeared",
            p.display()
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// The study runs in the flexio process: its binary's file replaced after the first run
/// (as a rebuild replaces target/release/flexio) changes nothing.
#[test]
fn a_study_survives_its_binary_being_replaced() {
    let d = tempfile::tempdir().unwrap();
    // A copy of flexio runs the study; the copy's file is replaced while it runs, as a
    // rebuild replaces target/release/flexio.
    let bin = d.path().join("flexio-copy");
    std::fs::copy(flexio_bin(), &bin).unwrap();
    let args = robust_args(d.path());
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut child = spawn_copied(&bin, &a, d.path());
    wait_for(&d.path().join("kept/be-bg0-run1/result.json"), &mut child);
    let new = d.path().join("flexio-new");
    std::fs::write(&new, b"#!/bin/sh\necho replaced >&2\nexit 3\n").unwrap();
    std::fs::rename(&new, &bin).unwrap();
    let r = collect(child);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.path().join("study.json")).unwrap())
            .unwrap();
    assert_eq!(v["complete"], true);
    assert_eq!(v["cases"].as_array().unwrap().len(), 2);
    assert!(v["cases"]
        .as_array()
        .unwrap()
        .iter()
        .all(|c| c["runs"] == 3));
}

#[test]
fn a_killed_study_resumes() {
    let d = tempfile::tempdir().unwrap();
    let args = robust_args(d.path());
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut child = spawn_flexio(&a, d.path(), &[]);
    let first = d.path().join("kept/be-bg1-run1/result.json");
    wait_for(&first, &mut child);
    // The study's JSON is rewritten after each run: wait until it has the second.
    let t = std::time::Instant::now();
    loop {
        let v: serde_json::Value = std::fs::read_to_string(d.path().join("study.json"))
            .ok()
            .and_then(|s| serde_json::from_str(&s).ok())
            .unwrap_or_default();
        if v["finished_runs"].as_array().is_some_and(|r| r.len() >= 2) {
            break;
        }
        assert!(
            t.elapsed().as_secs() < 60,
            "the JSON never had two runs: {v}"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    send_signal(child.id(), "KILL");
    let _ = child.wait();
    // What it measured until then is in the JSON already.
    let partial: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.path().join("study.json")).unwrap())
            .unwrap();
    assert_eq!(partial["complete"], false, "{partial}");
    let finished = partial["finished_runs"].as_array().unwrap().len();
    assert!(finished >= 2, "{partial}");
    let mtime = |p: &Path| std::fs::metadata(p).unwrap().modified().unwrap();
    let before = mtime(&first);
    // Another option than the study's: refused, nothing mixed.
    let mut other = args.clone();
    other[2] = "1024".into();
    let o: Vec<&str> = other.iter().map(String::as_str).collect();
    let mut with_resume = o.clone();
    with_resume.insert(1, "--resume");
    let r = run_bounded(&flexio_bin(), &with_resume, d.path(), &[], 300);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("made with other settings"),
        "{}",
        r.stderr
    );
    // The same study resumed: the finished runs are read, the rest run.
    let mut resumed = a.clone();
    resumed.insert(1, "--resume");
    let r = run_bounded(&flexio_bin(), &resumed, d.path(), &[], 300);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stderr.matches("finished before (--resume)").count() >= finished,
        "{}",
        r.stderr
    );
    assert_eq!(mtime(&first), before, "a finished run is not run again");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.path().join("study.json")).unwrap())
            .unwrap();
    assert_eq!(v["complete"], true);
    for c in v["cases"].as_array().unwrap() {
        assert_eq!(c["runs"], 3, "{c}");
        assert_eq!(c["n"], 3 * 2048, "{c}");
    }
    // --resume without --keep is a clear error.
    let r = flexio(&["rt-study", "--resume", "x.dat"], d.path());
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("--resume needs --keep DIR"),
        "{}",
        r.stderr
    );
}

/// The study's page and `flexio report` of its JSON render in headless Chromium: the cases
/// as a table with one row per case, the tests, the percentile chart, no console message.
#[test]
fn the_study_page_renders_in_chromium() {
    let Some(chrome) = common::chromium::find("rt-study page rendering") else {
        return;
    };
    let d = tempfile::tempdir().unwrap();
    let target = d.path().join("t.dat");
    let (_, v) = study(d.path(), &target, &["--size", "16m", "--direct", "0"]);
    let json = d.path().join("study.json");
    let from_report = d.path().join("report.html");
    let r = flexio(
        &[
            "report",
            json.to_str().unwrap(),
            "-o",
            from_report.to_str().unwrap(),
        ],
        d.path(),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    for page in [d.path().join("study.html"), from_report] {
        let profile = tempfile::tempdir().unwrap();
        let (dom, console) = common::chromium::render(&chrome, &page, profile.path(), None);
        assert!(
            console.is_empty(),
            "{}: console messages: {console:?}",
            page.display()
        );
        let table = dom
            .split("<table class=\"study\">")
            .nth(1)
            .expect("the cases table");
        let table = &table[..table.find("</table>").unwrap()];
        assert_eq!(
            table.matches("<tr><td>").count(),
            v["cases"].as_array().unwrap().len(),
            "one row per case: {table}"
        );
        assert!(dom.contains("Foreground response time by percentile, per case"));
        assert!(
            !dom.contains("<pre class=\"study\">"),
            "no clipped text block"
        );
    }
    let page = std::fs::read_to_string(d.path().join("study.html")).unwrap();
    // Every run of every case is on the page (2 runs x 4 cases).
    for c in ["rt bg=0 run 1", "rt bg=0 run 2", "be bg=1 run 2"] {
        assert!(page.contains(c), "the page has {c}");
    }
}
