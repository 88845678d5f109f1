//! `flexio matrix` (the iozone-style sweep) on tmpfs, ext4 on a loop device and a FUSE
//! pass-through: exact cell counts, KiB/s equal to bytes over time, every I/O of a cell
//! done, scratch files removed, clear errors for bad arguments, and the heat map of
//! `flexio report` rendered by headless Chromium.

use crate::common;
use common::flexio;
use common::fstargets::{FsKind, FsTarget};
use serde_json::Value;
use std::path::{Path, PathBuf};

const OPS: &[&str] = &[
    "write",
    "rewrite",
    "read",
    "reread",
    "randread",
    "bkwdread",
    "recrewrite",
    "strideread",
    "fwrite",
    "fread",
];

/// File sizes 64 KiB .. 1 MiB, records 4 .. 64 KiB (record <= file): 5+5+5+5+5 = 25 cells.
fn sweep(dir: &Path, json: &Path, extra: &[&str]) -> (Value, String) {
    let tests = OPS.join(",");
    let mut args = vec![
        "matrix",
        "--dir",
        dir.to_str().unwrap(),
        "--max-file=1m",
        "--max-record=64k",
        "--tests",
        &tests,
        "--json",
        json.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let r = flexio(&args, dir);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap();
    (doc, r.stdout)
}

fn check(doc: &Value, stdout: &str, what: &str) {
    let cells = doc["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 25 * OPS.len(), "{what}: cell count");
    assert_eq!(doc["complete"], true);
    for op in OPS {
        let n = cells.iter().filter(|c| c["operation"] == *op).count();
        assert_eq!(n, 25, "{what}: {op}");
        assert!(
            stdout.contains(&format!("({op}, ")),
            "{what}: no table of {op}"
        );
    }
    for c in cells {
        let (f, r) = (
            c["file_kib"].as_u64().unwrap(),
            c["record_kib"].as_u64().unwrap(),
        );
        assert!(r <= f && (64..=1024).contains(&f) && (4..=64).contains(&r));
        let bytes = c["bytes"].as_u64().unwrap();
        let ios = c["ios"].as_u64().unwrap();
        let ns = c["time_ns"].as_u64().unwrap();
        let kib_s = c["kib_s"].as_f64().unwrap();
        // Every operation moves the whole file once, one record per I/O.
        assert_eq!(bytes, f * 1024, "{what}: {c}");
        assert_eq!(ios, f / r, "{what}: {c}");
        assert!(ns > 0 && kib_s > 0.0, "{what}: {c}");
        let expect = bytes as f64 / 1024.0 / (ns as f64 / 1e9);
        assert!(
            (kib_s - expect).abs() <= expect * 1e-6 + 0.01,
            "{what}: {kib_s} KiB/s vs {expect} from bytes/time: {c}"
        );
        let lat = &c["lat"];
        assert_eq!(lat["n"].as_u64(), Some(ios), "{what}: {c}");
        assert!(lat["min_ns"].as_u64() <= lat["p99_ns"].as_u64());
        // The I/O time of a cell is at least its slowest record.
        assert!(lat["max_ns"].as_u64().unwrap() <= ns, "{what}: {c}");
        let stdio = c["operation"].as_str().unwrap().starts_with('f');
        assert_eq!(
            c["via"].as_str().unwrap(),
            if stdio {
                "stdio buffer"
            } else {
                "fio job (psync)"
            }
        );
        // The table shows the same number.
        let row = stdout
            .lines()
            .skip_while(|l| !l.contains(&format!("({}, ", c["operation"].as_str().unwrap())))
            .find(|l| l.split_whitespace().next() == Some(&f.to_string()))
            .unwrap();
        assert!(
            row.split_whitespace().skip(1).any(|v| (v
                .trim_end_matches(['!', '~'])
                .parse::<f64>()
                .unwrap()
                - kib_s)
                .abs()
                <= 1.0),
            "{what}: {kib_s:.0} not in row '{row}'"
        );
    }
}

fn leftovers(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let n = p.file_name().unwrap().to_string_lossy();
            n.starts_with("flexio-matrix")
        })
        .collect()
}

#[test]
fn matrix_sweeps_each_study_file_system() {
    for kind in FsKind::ALL {
        let Some(t) = FsTarget::new(kind, 64 << 20) else {
            continue;
        };
        let out = tempfile::tempdir().unwrap();
        let json = out.path().join("m.json");
        let (doc, stdout) = sweep(t.path(), &json, &[]);
        check(&doc, &stdout, kind.name());
        assert!(leftovers(t.path()).is_empty(), "{}", kind.name());
        if kind == FsKind::Ext4Loop {
            // O_DIRECT and timed fsync on a real block file system.
            let (doc, stdout) = sweep(t.path(), &json, &["--direct", "--fsync"]);
            check(&doc, &stdout, "ext4-loop --direct --fsync");
            assert_eq!(doc["direct"], true);
            let w = doc["cells"].as_array().unwrap();
            assert!(w
                .iter()
                .filter(|c| !c["operation"].as_str().unwrap().starts_with('f'))
                .all(|c| c["direct"] == true));
            assert!(leftovers(t.path()).is_empty());
        }
    }
}

/// `--repeat 3`: every cell three times (whole rounds), the median shown and kept with every
/// run's figure, and the flags' legend.
#[test]
fn matrix_repeats_every_cell() {
    let d = tempfile::tempdir().unwrap();
    let json = d.path().join("m.json");
    let page = d.path().join("m.html");
    let (doc, out) = sweep(
        d.path(),
        &json,
        &["--repeat", "3", "--html", page.to_str().unwrap()],
    );
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains("<svg class=\"chart heatmap\""),
        "the page has the heat maps"
    );
    assert!(
        html.contains("write: KiB/s by file size"),
        "one unit on the page"
    );
    check(&doc, &out, "--repeat 3");
    assert_eq!(doc["repeat"], 3);
    let runs = doc["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 3 * 25 * OPS.len());
    for k in 1..=3 {
        assert_eq!(
            runs.iter().filter(|r| r["round"] == k).count(),
            25 * OPS.len()
        );
    }
    for c in doc["cells"].as_array().unwrap() {
        let mut v: Vec<f64> = c["runs_kib_s"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect();
        assert_eq!(v.len(), 3, "{c}");
        v.sort_by(f64::total_cmp);
        assert!(
            (c["kib_s"].as_f64().unwrap() - v[1]).abs() <= 0.01,
            "the median: {c}"
        );
    }
    assert!(out.contains("each cell: the median of 3 runs"), "{out}");
    assert!(leftovers(d.path()).is_empty());
}

#[test]
fn matrix_rejects_bad_arguments_clearly() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().to_str().unwrap();
    for (args, msg) in [
        (vec!["--max-file=1.5m"], "fractional sizes"),
        (vec!["--tests=write,frob"], "unknown operation 'frob'"),
        (vec!["--min-record=2m", "--max-file=1m"], "no cell"),
        (vec!["--ioengine=nosuch", "--max-file=64k"], "nosuch"),
        (vec!["--bogus"], "unexpected argument '--bogus' found"),
    ] {
        let mut v = vec!["matrix", "--dir", dir];
        v.extend(args.iter().copied());
        let r = flexio(&v, d.path());
        assert_ne!(r.code, 0, "{args:?}");
        assert!(r.stderr.contains(msg), "{args:?}: {}", r.stderr);
        assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
    }
    assert!(leftovers(d.path()).is_empty());
    let r = flexio(&["matrix", "--dir", "/nonexistent/dir"], d.path());
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("no such directory"));
    let r = flexio(&["--help"], d.path());
    assert!(r.stdout.contains("flexio matrix"), "{}", r.stdout);
}

#[test]
fn matrix_heat_map_renders_in_headless_chromium() {
    let Some(chrome) = common::chromium::find("heat map rendering") else {
        return;
    };
    let d = tempfile::tempdir().unwrap();
    let json = d.path().join("m.json");
    let r = flexio(
        &[
            "matrix",
            "--dir",
            d.path().to_str().unwrap(),
            "--max-file=256k",
            "--max-record=16k",
            "--tests=0,1",
            "--json",
            json.to_str().unwrap(),
        ],
        d.path(),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let page = d.path().join("m.html");
    let r = flexio(
        &[
            "report",
            json.to_str().unwrap(),
            "-o",
            page.to_str().unwrap(),
        ],
        d.path(),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let html = std::fs::read_to_string(&page).unwrap();
    let profile = tempfile::tempdir().unwrap();
    let (dom, console) = common::chromium::render(&chrome, &page, profile.path(), None);
    assert!(console.is_empty(), "console messages: {console:?}");
    // Four operations, one heat map each; 3 file sizes x 3 records with record <= file:
    // 64k: 4,8,16; 128k: 4,8,16; 256k: 4,8,16 = 9 coloured cells per map.
    let maps: Vec<&str> = dom.split("<svg class=\"chart heatmap\"").skip(1).collect();
    assert_eq!(maps.len(), 4, "{html}");
    assert_eq!(
        maps.len(),
        html.matches("<svg class=\"chart heatmap\"").count()
    );
    for m in &maps {
        let body = &m[..m.find("</svg>").unwrap()];
        assert_eq!(body.matches("class=\"hc\"").count(), 9, "{body}");
    }
    assert!(dom.contains("write: KiB/s") && dom.contains("reread: KiB/s"));
}
