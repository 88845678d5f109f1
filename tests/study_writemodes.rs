//! `flexio writemodes` on tmpfs, ext4 on a loop device and a FUSE pass-through: every mode
//! runs and writes everything, the syncing modes really sync (the fsync count of the job's
//! sync statistics, the syncer's fdatasyncs, and on ext4 the loop device's completed writes
//! for O_SYNC against buffered), CPU columns within 0-100 %, scratch file removed.

use crate::common;
use common::flexio;
use common::fstargets::{FsKind, FsTarget};
use serde_json::Value;

const SIZE: u64 = 2 << 20;
const BS: u64 = 4096;
const EVERY: u64 = 16;

#[test]
fn writemodes_on_each_study_file_system() {
    for kind in FsKind::ALL {
        let Some(t) = FsTarget::new(kind, 64 << 20) else {
            continue;
        };
        let what = kind.name();
        let out = tempfile::tempdir().unwrap();
        let json = out.path().join("w.json");
        let r = flexio(
            &[
                "writemodes",
                "--dir",
                t.path().to_str().unwrap(),
                "--size=2m",
                // O_SYNC on a busy shared disk can take long; every mode must finish.
                "--runtime=600s",
                "--bs=4k",
                "--every=16",
                "--bg-interval=1ms",
                "--json",
                json.to_str().unwrap(),
            ],
            out.path(),
        );
        assert_eq!(r.code, 0, "{what}: {}\n{}", r.stdout, r.stderr);
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        let modes = doc["modes"].as_array().unwrap();
        let names: Vec<&str> = modes.iter().map(|m| m["mode"].as_str().unwrap()).collect();
        assert_eq!(names, ["buffered", "bgsync", "osync", "fsync"], "{what}");
        for m in modes {
            let name = m["mode"].as_str().unwrap();
            assert_eq!(m["bytes"].as_u64(), Some(SIZE), "{what} {name}");
            assert_eq!(m["ios"].as_u64(), Some(SIZE / BS), "{what} {name}");
            assert!(m["mib_s"].as_f64().unwrap() > 0.0);
            let mib_s = SIZE as f64 / 1048576.0 / (m["runtime_ns"].as_u64().unwrap() as f64 / 1e9);
            assert!((m["mib_s"].as_f64().unwrap() - mib_s).abs() <= mib_s * 1e-3 + 0.001);
            // Percent of one CPU over the job's run time. getrusage splits CPU time into
            // usr and sys by timer ticks (up to 10 ms each reading at HZ=100), so a short
            // window allows that much on top of 100 %.
            let window = m["cpu_window_ns"].as_u64().unwrap() as f64;
            assert!(window > 0.0, "{what} {name}: no CPU window");
            let limit = 100.0 * (1.0 + 20e6 / window);
            let (usr, sys) = (
                m["usr_pct"].as_f64().unwrap(),
                m["sys_pct"].as_f64().unwrap(),
            );
            assert!(usr >= 0.0 && sys >= 0.0, "{what} {name}: {usr} {sys}");
            assert!(
                usr <= limit && sys <= limit && usr + sys <= limit,
                "{what} {name}: usr {usr} % + sys {sys} % over a {window} ns window"
            );
            let header = r.stdout.lines().nth(1).unwrap();
            let cols: Vec<&str> = header.split_whitespace().collect();
            assert_eq!(
                cols,
                [
                    "mode", "MiB", "MiB/s", "IOPS", "clat", "mean", "clat", "p99", "usr%", "sys%",
                    "syncs", "sync", "mean", "dev", "writes"
                ],
                "{header}"
            );
            assert!(m["clat_mean_ns"].as_f64().unwrap() > 0.0);
            // The table has the row.
            assert!(
                r.stdout.lines().any(|l| l.starts_with(name)),
                "{what}: {}",
                r.stdout
            );
        }
        let by = |n: &str| modes.iter().find(|m| m["mode"] == n).unwrap();
        // fsync every 16 writes: the job's sync statistics count them (fio issues the
        // fsync before the write that follows the 16th, so the last one may be missing).
        let fs = by("fsync")["syncs"].as_u64().unwrap();
        let n = SIZE / BS / EVERY;
        assert!(fs == n || fs == n - 1, "{what}: {fs} fsyncs, want {n}");
        assert_eq!(by("buffered")["syncs"].as_u64(), Some(0));
        assert_eq!(by("osync")["syncs"].as_u64(), Some(0));
        assert!(
            by("bgsync")["syncs"].as_u64().unwrap() >= 1,
            "{what}: the syncer never ran"
        );
        if kind == FsKind::Ext4Loop {
            // O_SYNC: every write reaches the device before it returns (and ext4 adds its
            // journal); buffered writes of 2 MiB stay in the page cache (the kernel starts
            // write-back after 30 s or above the dirty threshold of GiB).
            let dev = |n: &str| {
                by(n)["dev_write_ios"]
                    .as_u64()
                    .unwrap_or_else(|| panic!("no disk statistics for the loop device: {doc}"))
            };
            assert!(
                dev("osync") >= SIZE / BS,
                "osync: {} device writes",
                dev("osync")
            );
            assert!(
                dev("buffered") < SIZE / BS / 8,
                "buffered: {}",
                dev("buffered")
            );
            assert!(dev("fsync") >= n - 1, "fsync: {}", dev("fsync"));
        }
        let left: Vec<_> = std::fs::read_dir(t.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .filter(|n| n.to_string_lossy().starts_with("flexio-writemodes"))
            .collect();
        assert!(left.is_empty(), "{what}: {left:?}");
    }
}

#[test]
fn writemodes_rejects_bad_arguments_clearly() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().to_str().unwrap();
    for (args, msg) in [
        (vec!["--modes=turbo"], "unknown mode 'turbo'"),
        (vec!["--every=x"], "--every"),
        (vec!["--size=4k", "--bs=8k"], "larger than"),
        (vec!["--ioengine=nosuch", "--size=64k"], "nosuch"),
    ] {
        let mut v = vec!["writemodes", "--dir", dir];
        v.extend(args.iter().copied());
        let r = flexio(&v, d.path());
        assert_ne!(r.code, 0, "{args:?}");
        assert!(r.stderr.contains(msg), "{args:?}: {}", r.stderr);
        assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
    }
    assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0);
    let r = flexio(&["--help"], d.path());
    assert!(r.stdout.contains("flexio writemodes"), "{}", r.stdout);
}

/// Every mode (`--modes all`) three times on ext4 on a loop device: the medians and runs are
/// kept, O_DSYNC and O_DIRECT writes each reach the device, end_fsync's one fsync writes the
/// file out, and a back-to-back syncer (`--bg-interval=0`) syncs throughout the mode.
#[test]
fn every_mode_repeated_on_ext4() {
    let Some(t) = FsTarget::new(FsKind::Ext4Loop, 64 << 20) else {
        return;
    };
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("w.json");
    let r = flexio(
        &[
            "writemodes",
            "--dir",
            t.path().to_str().unwrap(),
            "--size=2m",
            "--runtime=600s",
            "--bs=4k",
            "--modes=all",
            "--repeat=3",
            "--bg-interval=0",
            "--json",
            json.to_str().unwrap(),
        ],
        out.path(),
    );
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let modes = doc["modes"].as_array().unwrap();
    let names: Vec<&str> = modes.iter().map(|m| m["mode"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "buffered",
            "bgsync",
            "osync",
            "dsync",
            "fsync",
            "end_fsync",
            "direct"
        ]
    );
    assert_eq!(doc["runs"].as_array().unwrap().len(), 3 * 7);
    for m in modes {
        assert_eq!(m["runs_mib_s"].as_array().unwrap().len(), 3, "{m}");
        assert_eq!(m["bytes"].as_u64(), Some(SIZE), "{m}");
    }
    assert!(r.stdout.contains("MiB/s range"), "{}", r.stdout);
    let by = |n: &str| modes.iter().find(|m| m["mode"] == n).unwrap();
    let dev = |n: &str| by(n)["dev_write_ios"].as_u64().unwrap();
    assert!(dev("dsync") >= SIZE / BS, "dsync: {}", dev("dsync"));
    assert!(dev("direct") >= SIZE / BS, "direct: {}", dev("direct"));
    assert!(dev("end_fsync") >= 1, "end_fsync wrote nothing out");
    assert!(
        dev("buffered") < SIZE / BS / 8,
        "buffered: {}",
        dev("buffered")
    );
    // Back to back, the syncer is in fdatasync for most of the mode, however short it is.
    let b = by("bgsync");
    let busy = b["syncs"].as_f64().unwrap() * b["sync_mean_ns"].as_f64().unwrap();
    assert!(
        b["syncs"].as_u64().unwrap() >= 1 && busy >= 0.5 * b["runtime_ns"].as_f64().unwrap(),
        "the syncer syncs throughout: {b}"
    );
}

/// `writemodes --html` and `flexio report` of its JSON render in headless Chromium: the
/// modes' table and bars, no console message.
#[test]
fn writemodes_page_renders_in_chromium() {
    let Some(chrome) = common::chromium::find("writemodes page rendering") else {
        return;
    };
    let d = tempfile::tempdir().unwrap();
    let (json, html) = (d.path().join("w.json"), d.path().join("w.html"));
    let r = flexio(
        &[
            "writemodes",
            "--dir",
            d.path().to_str().unwrap(),
            "--size=1m",
            "--modes=buffered,fsync",
            "--repeat=2",
            "--json",
            json.to_str().unwrap(),
            "--html",
            html.to_str().unwrap(),
        ],
        d.path(),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let from_report = d.path().join("r.html");
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
    for page in [html, from_report] {
        let profile = tempfile::tempdir().unwrap();
        let (dom, console) = common::chromium::render(&chrome, &page, profile.path(), None);
        assert!(console.is_empty(), "console messages: {console:?}");
        assert!(dom.contains("MiB/s by mode (log scale)"), "{dom}");
        assert_eq!(dom.matches("<rect").count(), 2, "one bar per mode");
        assert!(
            dom.contains(">buffered</td>") && dom.contains(">fsync</td>"),
            "{dom}"
        );
    }
}
