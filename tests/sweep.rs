//! `flexio sweep`: the statistics find a real 10 % difference and no difference between
//! identical points; on a loop device the knobs it sets (read_ahead_kb, the scheduler)
//! are found restored in sysfs after a normal end, a failing job, SIGINT, and SIGKILL
//! followed by `flexio sweep --restore`.

use crate::common;

use common::loopdev::LoopDev;
use std::path::Path;
use std::time::{Duration, Instant};

fn sweep_json(args: &[&str], dir: &Path) -> serde_json::Value {
    let out = dir.join("sweep.json");
    let mut a: Vec<&str> = vec!["sweep", "--json", out.to_str().unwrap()];
    a.extend(args);
    let r = common::run_in_env(
        &common::flexio_bin(),
        &a,
        dir,
        &[("FLEXIO_STATE_DIR", dir.join("state").to_str().unwrap())],
    );
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("vs baseline"), "{}", r.stdout);
    serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap()
}

/// A sweep of a rate-limited null job over `rate_iops` values, 3 runs per point.
fn rate_sweep(values: &str, seed: &str, dir: &Path) -> serde_json::Value {
    let axis = format!("rate_iops={values}");
    sweep_json(
        &[
            "--opt",
            &axis,
            "--metric",
            "iops",
            "--repeat",
            "3",
            "--seed",
            seed,
            "--",
            "--name=x",
            "--ioengine=null",
            "--rw=read",
            "--bs=4k",
            "--size=1g",
            "--time_based",
            "--runtime=1",
        ],
        dir,
    )
}

#[test]
fn a_ten_percent_rate_difference_is_significant_with_its_sign() {
    let d = tempfile::tempdir().unwrap();
    let doc = rate_sweep("1000,1100", "1", d.path());
    let s = &doc["flexio_sweep"];
    assert_eq!(s["baseline"], "rate_iops=1000");
    let p = &s["points"][1];
    assert_eq!(p["label"], "rate_iops=1100");
    let vs = &p["vs_baseline"];
    assert_eq!(vs["significant"], true, "{vs}");
    assert_eq!(vs["better"], true, "{vs}");
    let diff = vs["diff_pct"].as_f64().unwrap();
    assert!((8.0..12.0).contains(&diff), "{diff}");
    assert_eq!(s["best"]["label"], "rate_iops=1100");
    assert_eq!(s["best"]["significantly_better"], true);
}

#[test]
fn identical_points_show_no_significant_difference() {
    let d = tempfile::tempdir().unwrap();
    // Two points that are the same job.
    let doc = rate_sweep("1000,1000", "2", d.path());
    let vs = &doc["flexio_sweep"]["points"][1]["vs_baseline"];
    assert_eq!(vs["significant"], false, "{vs}");
    assert_eq!(doc["flexio_sweep"]["best"]["significantly_better"], false);
}

struct Knobs {
    ra: String,
    sched: String,
}

fn sysfs(dev: &LoopDev, knob: &str) -> String {
    let s = std::fs::read_to_string(format!("/sys/block/{}/queue/{knob}", dev.name())).unwrap();
    let s = s.trim();
    if knob == "scheduler" {
        if let Some(w) = s.split_whitespace().find(|w| w.starts_with('[')) {
            return w.trim_matches(|c| c == '[' || c == ']').to_string();
        }
    }
    s.to_string()
}

fn knobs(dev: &LoopDev) -> Knobs {
    Knobs {
        ra: sysfs(dev, "read_ahead_kb"),
        sched: sysfs(dev, "scheduler"),
    }
}

/// A scheduler the device offers that is not the active one.
fn other_scheduler(dev: &LoopDev) -> Option<String> {
    let s = std::fs::read_to_string(format!("/sys/block/{}/queue/scheduler", dev.name())).ok()?;
    s.split_whitespace()
        .find(|w| !w.starts_with('['))
        .map(str::to_string)
}

/// The sweep's arguments on `dev`: read_ahead_kb and the scheduler changed at every point.
fn args_for(dev: &LoopDev, sched: &str, runtime: &str, extra: &[&str]) -> Vec<String> {
    let mut a: Vec<String> = vec![
        "sweep".into(),
        "--knob".into(),
        "read_ahead_kb=256,512".into(),
        "--knob".into(),
        format!("scheduler={sched}"),
        "--repeat".into(),
        "1".into(),
        "--".into(),
        "--name=r".into(),
        format!("--filename={}", dev.path()),
        "--rw=read".into(),
        "--bs=64k".into(),
        "--size=4m".into(),
        "--time_based".into(),
        format!("--runtime={runtime}"),
    ];
    a.extend(extra.iter().map(|s| s.to_string()));
    a
}

fn loop_with_other_scheduler() -> Option<(LoopDev, Knobs, String)> {
    let dev = LoopDev::new(16 << 20)?;
    let before = knobs(&dev);
    let Some(sched) = other_scheduler(&dev) else {
        eprintln!("SKIP: the loop device offers one scheduler only");
        return None;
    };
    assert!(before.ra != "256" && before.ra != "512", "{}", before.ra);
    Some((dev, before, sched))
}

fn assert_restored(dev: &LoopDev, before: &Knobs, state: &Path, when: &str) {
    let now = knobs(dev);
    assert_eq!(now.ra, before.ra, "read_ahead_kb after {when}");
    assert_eq!(now.sched, before.sched, "scheduler after {when}");
    assert!(
        !state.join("sweep-restore.tsv").exists(),
        "the restore journal is left after {when}"
    );
}

#[test]
fn knobs_are_restored_after_a_normal_end_and_after_a_failing_job() {
    let Some((dev, before, sched)) = loop_with_other_scheduler() else {
        return;
    };
    let d = tempfile::tempdir().unwrap();
    let state = d.path().join("state");
    let env = [("FLEXIO_STATE_DIR", state.to_str().unwrap())];
    let a = args_for(&dev, &sched, "1", &[]);
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    let r = common::run_in_env(&common::flexio_bin(), &a, d.path(), &env);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains(&format!(
            "{}: read_ahead_kb restored to {}",
            dev.name(),
            before.ra
        )),
        "{}",
        r.stderr
    );
    assert_restored(&dev, &before, &state, "a normal end");

    // A job that fails (verifying data that was never written): the sweep stops, the
    // knobs come back.
    let a = args_for(&dev, &sched, "1", &["--verify=crc32c", "--do_verify=1"]);
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    let r = common::run_in_env(&common::flexio_bin(), &a, d.path(), &env);
    assert_eq!(r.code, 1, "{}\n{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("the job failed"), "{}", r.stderr);
    assert_restored(&dev, &before, &state, "a failing job");
}

/// Start a long sweep and wait until its first knob is set and the job runs.
fn start_long(dev: &LoopDev, sched: &str, dir: &Path, state: &Path) -> std::process::Child {
    let a = args_for(dev, sched, "30", &[]);
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    let child = common::spawn_flexio(&a, dir, &[("FLEXIO_STATE_DIR", state.to_str().unwrap())]);
    let t0 = Instant::now();
    while !state.join("sweep-restore.tsv").exists() {
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "the sweep set no knob"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(500));
    child
}

#[test]
fn knobs_are_restored_after_sigint() {
    let Some((dev, before, sched)) = loop_with_other_scheduler() else {
        return;
    };
    let d = tempfile::tempdir().unwrap();
    let state = d.path().join("state");
    let child = start_long(&dev, &sched, d.path(), &state);
    let during = knobs(&dev);
    assert_ne!(during.ra, before.ra, "the sweep set read_ahead_kb");
    assert_eq!(during.sched, sched, "the sweep set the scheduler");
    common::send_signal(child.id(), "INT");
    let r = common::collect(child);
    assert_eq!(r.code, 130, "{}\n{}", r.stdout, r.stderr);
    assert_restored(&dev, &before, &state, "SIGINT");
}

#[test]
fn knobs_are_restored_by_sweep_restore_after_sigkill() {
    let Some((dev, before, sched)) = loop_with_other_scheduler() else {
        return;
    };
    let d = tempfile::tempdir().unwrap();
    let state = d.path().join("state");
    let mut child = start_long(&dev, &sched, d.path(), &state);
    common::send_signal(child.id(), "KILL");
    let _ = child.wait();
    // Killed: the values stay set and the journal says what they were.
    assert_ne!(knobs(&dev).ra, before.ra);
    assert!(state.join("sweep-restore.tsv").exists());
    let r = common::run_in_env(
        &common::flexio_bin(),
        &["sweep", "--restore"],
        d.path(),
        &[("FLEXIO_STATE_DIR", state.to_str().unwrap())],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("restored"), "{}", r.stderr);
    assert_restored(&dev, &before, &state, "SIGKILL and sweep --restore");
}

/// The file system's own readahead (`fs_read_ahead_kb`, its /sys/class/bdi entry) is a
/// knob on a FUSE mount, which has no block device: swept there, and restored. A tmpfs
/// has none, and says so.
#[test]
fn fs_readahead_is_swept_on_a_fuse_mount_and_restored() {
    use common::fstargets::{FsKind, FsTarget};
    use std::os::unix::fs::MetadataExt;
    let Some(fs) = FsTarget::new(FsKind::Fuse, 64 << 20) else {
        return;
    };
    let f = fs.path().join("ra.dat");
    std::fs::write(&f, vec![7u8; 4 << 20]).unwrap();
    let dev = std::fs::metadata(&f).unwrap().dev();
    let (major, minor) = (
        ((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff),
        (dev & 0xff) | ((dev >> 12) & !0xff),
    );
    let bdi = format!("/sys/class/bdi/{major}:{minor}");
    let ra = || std::fs::read_to_string(format!("{bdi}/read_ahead_kb")).unwrap();
    let Ok(before) = std::fs::read_to_string(format!("{bdi}/read_ahead_kb")) else {
        eprintln!("SKIP: {bdi}: the FUSE mount has no backing-device info here");
        return;
    };
    let d = tempfile::tempdir().unwrap();
    let fname = format!("--filename={}", f.display());
    let other = if before.trim() == "1024" {
        "2048"
    } else {
        "1024"
    };
    let axis = format!("fs_read_ahead_kb={},{other}", before.trim());
    let j = sweep_json(
        &[
            "--knob",
            &axis,
            "--repeat",
            "1",
            "--",
            "--name=r",
            &fname,
            "--rw=read",
            "--bs=64k",
            "--size=4m",
        ],
        d.path(),
    );
    let axes = &j["flexio_sweep"]["axes"][0];
    let on = axes["devices"][0].as_str().unwrap();
    assert!(on.starts_with("bdi ") && bdi.ends_with(&on[4..]), "{axes}");
    assert_eq!(ra(), before, "fs_read_ahead_kb restored");

    // tmpfs: no backing-device info, a clear error, nothing set.
    let t = FsTarget::new(FsKind::Tmpfs, 16 << 20);
    if let Some(t) = t {
        let fname = format!("--filename={}", t.path().join("x").display());
        let r = common::run_in_env(
            &common::flexio_bin(),
            &[
                "sweep",
                "--knob",
                "fs_read_ahead_kb=256,512",
                "--",
                "--name=r",
                &fname,
                "--rw=read",
                "--bs=4k",
                "--size=1m",
            ],
            d.path(),
            &[("FLEXIO_STATE_DIR", d.path().join("state").to_str().unwrap())],
        );
        assert_eq!(r.code, 1, "{}", r.stderr);
        assert!(r.stderr.contains("no backing-device info"), "{}", r.stderr);
    }
}

/// The sweep's page (`flexio report sweep.json`) in headless Chromium: a two-axis sweep
/// draws its heat map (one cell per point) and, per axis, the metric and p99 with a line
/// per value of the other axis, each line drawn; no console message; a screenshot kept.
#[test]
fn sweep_report_renders_in_headless_chromium() {
    let Some(chrome) = common::chromium::find("the sweep's report") else {
        return;
    };
    let d = tempfile::tempdir().unwrap();
    let j = sweep_json(
        &[
            "--opt",
            "bs=4k,64k",
            "--opt",
            "rate_iops=500,1000,2000",
            "--repeat",
            "2",
            "--seed",
            "5",
            "--",
            "--name=x",
            "--ioengine=null",
            "--rw=read",
            "--size=1g",
            "--time_based",
            "--runtime=300ms",
        ],
        d.path(),
    );
    assert_eq!(j["flexio_sweep"]["points"].as_array().unwrap().len(), 6);
    let page = d.path().join("sweep.html");
    let r = common::flexio(
        &[
            "report",
            d.path().join("sweep.json").to_str().unwrap(),
            "-o",
            page.to_str().unwrap(),
        ],
        d.path(),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        !html.contains("https://"),
        "the page must not need the network"
    );
    let profile = tempfile::tempdir().unwrap();
    let (dom, console) = common::chromium::render(&chrome, &page, profile.path(), None);
    assert!(console.is_empty(), "console messages: {console:?}");
    let maps: Vec<&str> = dom.split("<svg class=\"chart heatmap\"").skip(1).collect();
    assert_eq!(maps.len(), 1, "{html}");
    assert_eq!(maps[0].matches("class=\"hc\"").count(), 6, "{}", maps[0]);
    // bw and p99 over bs (3 lines: one per rate) and over rate_iops (2 lines: one per bs);
    // a null job reads nothing from a device: no read amplification chart.
    let charts: Vec<&str> = dom.split("<svg class=\"chart\"").skip(1).collect();
    assert_eq!(charts.len(), 4, "{html}");
    for (c, lines) in charts.iter().zip([3, 3, 2, 2]) {
        let body = &c[..c.find("</svg>").unwrap()];
        for k in 0..lines {
            let g = body
                .split(&format!("<g class=\"s{k}\">"))
                .nth(1)
                .unwrap_or_else(|| panic!("line {k} missing: {body}"));
            let g = &g[..g.find("</g>").unwrap()];
            assert!(
                g.contains("<path d=\"M") && g.contains("fill=\"none\""),
                "{body}"
            );
        }
    }
    assert!(dom.contains("<tr class=\"best\">"), "{html}");
    assert!(
        dom.contains(">rate_iops=2000</title>") || dom.contains("<title>rate_iops=2000</title>")
    );
    let shot = common::chromium::artifacts().join("sweep.png");
    let _ = std::fs::remove_file(&shot);
    let (_, console) = common::chromium::render(&chrome, &page, profile.path(), Some(&shot));
    assert!(console.is_empty(), "console messages: {console:?}");
    assert!(std::fs::metadata(&shot).map(|m| m.len()).unwrap_or(0) > 20_000);
    println!("screenshot: {}", shot.display());
}

/// A killed sweep resumes from `--keep DIR`: the finished runs are read, not run again, the
/// kept seed gives the same schedule, and its JSON was written after every run.
#[test]
fn a_killed_sweep_resumes_from_its_kept_runs() {
    let d = tempfile::tempdir().unwrap();
    let keep = d.path().join("kept");
    let json = d.path().join("sweep.json");
    let state = d.path().join("state");
    let args = |extra: &[&str]| -> Vec<String> {
        let mut v: Vec<String> = [
            "sweep", "--opt", "bs=4k,8k", "--repeat", "3", "--metric", "iops",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        v.push(format!("--keep={}", keep.display()));
        v.push(format!("--json={}", json.display()));
        v.extend(extra.iter().map(|s| s.to_string()));
        v.extend(
            [
                "--",
                "--name=x",
                "--ioengine=null",
                "--rw=read",
                "--size=1g",
                "--time_based",
                "--runtime=300ms",
            ]
            .iter()
            .map(|s| s.to_string()),
        );
        v
    };
    let first = args(&["--seed", "7"]);
    let a: Vec<&str> = first.iter().map(String::as_str).collect();
    let mut child = common::spawn_flexio(
        &a,
        d.path(),
        &[("FLEXIO_STATE_DIR", state.to_str().unwrap())],
    );
    let t = Instant::now();
    loop {
        let v: serde_json::Value = std::fs::read_to_string(&json)
            .ok()
            .and_then(|s| serde_json::from_str(&s).ok())
            .unwrap_or_default();
        if v["flexio_sweep"]["finished_runs"].as_u64().unwrap_or(0) >= 2 {
            assert_eq!(v["flexio_sweep"]["complete"], false);
            break;
        }
        assert!(t.elapsed() < Duration::from_secs(60), "no progress");
        std::thread::sleep(Duration::from_millis(10));
    }
    common::send_signal(child.id(), "KILL");
    let _ = child.wait();
    let mtime = |p: &Path| std::fs::metadata(p).unwrap().modified().unwrap();
    let run1 = keep.join("run-1.json");
    let before = mtime(&run1);
    // Other points: refused.
    let other: Vec<String> = args(&["--resume"])
        .into_iter()
        .map(|s| {
            if s == "bs=4k,8k" {
                "bs=4k,16k".into()
            } else {
                s
            }
        })
        .collect();
    let o: Vec<&str> = other.iter().map(String::as_str).collect();
    let r = common::run_in_env(
        &common::flexio_bin(),
        &o,
        d.path(),
        &[("FLEXIO_STATE_DIR", state.to_str().unwrap())],
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("has other points"), "{}", r.stderr);
    // The same sweep, without --seed: the kept one is used.
    let page = d.path().join("sweep.html");
    let html_arg = format!("--html={}", page.display());
    let resumed = args(&["--resume", &html_arg]);
    let a: Vec<&str> = resumed.iter().map(String::as_str).collect();
    let r = common::run_in_env(
        &common::flexio_bin(),
        &a,
        d.path(),
        &[("FLEXIO_STATE_DIR", state.to_str().unwrap())],
    );
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("shuffled with --seed 7"), "{}", r.stderr);
    assert!(
        r.stderr.matches("finished before (--resume)").count() >= 2,
        "{}",
        r.stderr
    );
    assert_eq!(mtime(&run1), before, "a finished run is not run again");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["flexio_sweep"]["complete"], true);
    for p in v["flexio_sweep"]["points"].as_array().unwrap() {
        assert_eq!(p["runs"], 3, "{p}");
    }
    for k in 1..=6 {
        assert!(keep.join(format!("run-{k}.json")).is_file());
    }
    // --html: the sweep's page, as flexio report draws it.
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("<svg"), "{html}");
}
