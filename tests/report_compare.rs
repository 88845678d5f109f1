//! `flexio report` and `flexio compare` end to end: reports from flexio's and fio 3.33's own
//! JSON / json+ output (with logs) and from committed fio 3.33 fixtures; a report, a
//! `compare --html` page and a report of fio's own json+ output drawn by a real headless
//! Chromium (every chart drawn with both results' curves overlaid, no "no data" box, no
//! console message, screenshots kept under target/test-artifacts/); comparisons of fio
//! results and of `--trials` runs, `--fail-if-worse`, and flexio's RMS / few-samples
//! additions to the normal and JSON output.

use crate::common;
use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// A small job named `job` writing every kind of log (per I/O with `avg_ms` 0, else averaged
/// windows) and a histogram log, all with the prefix `name`; json+ into `<name>.json`. Runs
/// made with different prefixes share the job name, so a report overlays their curves.
fn logged_run(dir: &Path, name: &str, bs: &str, avg_ms: u32) -> PathBuf {
    let out = format!("--output={name}.json");
    let r = flexio(
        &[
            "--output-format=json+",
            &out,
            "--name=job",
            "--ioengine=null",
            "--rw=randread",
            &format!("--bs={bs}"),
            "--size=64m",
            "--time_based",
            "--runtime=1200ms",
            "--rate_iops=20000",
            &format!("--write_lat_log={name}"),
            &format!("--write_bw_log={name}"),
            &format!("--write_iops_log={name}"),
            &format!("--write_hist_log={name}"),
            "--log_hist_msec=100",
            &format!("--log_avg_msec={avg_ms}"),
        ],
        dir,
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    dir.join(format!("{name}.json"))
}

/// Chromium, or None (printing SKIP) unless FLEXIO_REQUIRE_CHROMIUM=1.
fn chromium() -> Option<PathBuf> {
    common::chromium::find("report rendering")
}

use common::chromium::{artifacts, render};

/// Check one page in Chromium: no console message, every chart of the file in the rendered
/// DOM (`charts` of them), each with a drawn curve (a stroked path, not only a band) of every
/// one of `results` results, so overlaid curves are really drawn; no "no data" box. Then a
/// screenshot under target/test-artifacts/, whose path is printed.
fn check_page(
    chrome: &Path,
    page: &Path,
    profile: &Path,
    charts: usize,
    results: usize,
    name: &str,
) {
    let html = std::fs::read_to_string(page).unwrap();
    assert!(
        !html.contains("https://"),
        "{name}: the page must not need the network"
    );
    let charts_in_file = html.matches("<svg class=\"chart\"").count();
    let (dom, console) = render(chrome, page, profile, None);
    assert!(console.is_empty(), "{name}: console messages: {console:?}");
    let drawn: Vec<&str> = dom.split("<svg class=\"chart\"").skip(1).collect();
    assert_eq!(
        drawn.len(),
        charts_in_file,
        "{name}: charts lost in the DOM"
    );
    assert_eq!(drawn.len(), charts, "{name}: {html}");
    for c in &drawn {
        let body = &c[..c.find("</svg>").unwrap()];
        let title = body
            .split("class=\"ct\"")
            .nth(1)
            .and_then(|t| t.split(['>', '<']).nth(1))
            .unwrap_or("?");
        for k in 0..results {
            let curve = body.split(&format!("<g class=\"s{k}\">")).skip(1).any(|g| {
                let g = &g[..g.find("</g>").unwrap_or(g.len())];
                g.contains("<path d=\"M") && g.contains("fill=\"none\"")
            });
            assert!(
                curve,
                "{name}: chart '{title}' has no curve of result {k}: {body}"
            );
        }
    }
    assert!(
        !dom.contains("class=\"nodata\""),
        "{name}: a chart without data"
    );
    let shot = artifacts().join(format!("{name}.png"));
    let _ = std::fs::remove_file(&shot);
    let (_, console) = render(chrome, page, profile, Some(&shot));
    assert!(console.is_empty(), "{name}: console messages: {console:?}");
    let size = std::fs::metadata(&shot).map(|m| m.len()).unwrap_or(0);
    assert!(
        size > 20_000,
        "screenshot {} has {size} bytes",
        shot.display()
    );
    std::fs::copy(page, artifacts().join(format!("{name}.html"))).unwrap();
    println!("screenshot: {}", shot.display());
}

/// A run of fio 3.33 itself, json+ with per-I/O latency, bandwidth, IOPS and histogram logs
/// under the prefix `name`; the job is named `job` as in [`logged_run`].
fn fio_logged_run(fio: &Path, dir: &Path, name: &str, bs: &str) -> PathBuf {
    let args = [
        "--output-format=json+".to_string(),
        format!("--output={name}.json"),
        "--name=job".into(),
        "--ioengine=null".into(),
        "--rw=randread".into(),
        format!("--bs={bs}"),
        "--size=64m".into(),
        "--time_based".into(),
        "--runtime=1200ms".into(),
        "--rate_iops=5000".into(),
        format!("--write_lat_log={name}"),
        format!("--write_bw_log={name}"),
        format!("--write_iops_log={name}"),
        format!("--write_hist_log={name}"),
        "--log_hist_msec=100".into(),
        "--log_avg_msec=0".into(),
    ];
    let r = run_in(
        fio,
        &args.iter().map(String::as_str).collect::<Vec<_>>(),
        dir,
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    dir.join(format!("{name}.json"))
}

#[test]
fn report_renders_in_headless_chromium() {
    let Some(chrome) = chromium() else { return };
    let d = tempfile::tempdir().unwrap();
    let profile = tempfile::tempdir().unwrap();
    // The harness must see console messages, or "no console error" proves nothing.
    let probe = write(
        d.path(),
        "probe.html",
        "<!DOCTYPE html><html><body><script>console.error('probe-error')</script></body></html>",
    );
    let (_, console) = render(&chrome, &probe, profile.path(), None);
    assert!(
        console.iter().any(|l| l.contains("probe-error")),
        "chromium's console log is not captured: {console:?}"
    );

    // Two results of the same job: one section, seven charts (three over time, four
    // distributions), each with both results' curves.
    let a = logged_run(d.path(), "cfga", "4k", 0);
    let b = logged_run(d.path(), "cfgb", "8k", 100);
    let page = d.path().join("report.html");
    let r = flexio(
        &[
            "report",
            a.to_str().unwrap(),
            b.to_str().unwrap(),
            "-o",
            page.to_str().unwrap(),
        ],
        d.path(),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    check_page(&chrome, &page, profile.path(), 7, 2, "report");

    // The comparison page of the same two results: the table on top, the same charts.
    let cmp = d.path().join("compare.html");
    let r = flexio(
        &[
            "compare",
            a.to_str().unwrap(),
            b.to_str().unwrap(),
            "--html",
            cmp.to_str().unwrap(),
        ],
        d.path(),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    // A's per-I/O bandwidth and IOPS logs made its rate samples per I/O: not tested.
    assert!(
        r.stdout
            .contains("(IOPS: A's samples are one per I/O (write_iops_log with log_avg_msec=0)"),
        "{}",
        r.stdout
    );
    assert!(std::fs::read_to_string(&cmp)
        .unwrap()
        .contains("<table class=\"cmp\">"));
    check_page(&chrome, &cmp, profile.path(), 7, 2, "compare");

    // fio 3.33's own json+ output and logs, two runs of the same job overlaid.
    let Some(fio) = fio_bin() else { return };
    let fd = tempfile::tempdir().unwrap();
    let fa = fio_logged_run(&fio, fd.path(), "fioa", "4k");
    let fb = fio_logged_run(&fio, fd.path(), "fiob", "8k");
    let page = fd.path().join("fio.html");
    let r = flexio(
        &[
            "report",
            fa.to_str().unwrap(),
            fb.to_str().unwrap(),
            "-o",
            page.to_str().unwrap(),
        ],
        fd.path(),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("fio-3.33"), "not fio's output");
    check_page(&chrome, &page, profile.path(), 7, 2, "report-fio");
}

/// fio 3.33's own JSON and json+ output (with its logs): report and compare read them.
#[test]
fn report_and_compare_read_fio_output() {
    let Some(fio) = fio_bin() else { return };
    let d = tempfile::tempdir().unwrap();
    let job = |name: &str, fmt: &str, extra: &[&str]| {
        let mut args = vec![
            format!("--name={name}"),
            "--ioengine=null".into(),
            "--rw=randread".into(),
            "--bs=4k".into(),
            "--size=256m".into(),
            "--time_based".into(),
            "--runtime=1500ms".into(),
            format!("--output-format={fmt}"),
            format!("--output={name}.json"),
        ];
        args.extend(extra.iter().map(|s| s.to_string()));
        let r = run_in(
            &fio,
            &args.iter().map(String::as_str).collect::<Vec<_>>(),
            d.path(),
        );
        assert_eq!(r.code, 0, "{}", r.stderr);
        d.path().join(format!("{name}.json"))
    };
    let plain = job("plain", "json", &[]);
    let plus = job(
        "plus",
        "json+",
        &[
            "--write_lat_log=plus",
            "--log_avg_msec=0",
            "--rate_iops=5000",
        ],
    );
    let plus2 = job("plus2", "json+", &[]);
    let page = d.path().join("fio.html");
    let r = flexio(
        &[
            "report",
            plain.to_str().unwrap(),
            plus.to_str().unwrap(),
            "-o",
            page.to_str().unwrap(),
        ],
        d.path(),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("fio-3.33"));
    assert!(
        html.contains("Latency over time"),
        "fio's latency log is used"
    );
    assert!(html.contains("clat (log)"));
    assert!(html.contains("RMS"));
    // json vs json+, one result each: IOPS from fio's samples, no distribution test (plain
    // JSON has no bins).
    let r = flexio(
        &[
            "compare",
            plain.to_str().unwrap(),
            plus2.to_str().unwrap(),
            "--output-format=json",
        ],
        d.path(),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let j: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert!(
        j["notes"][0].as_str().unwrap().contains("by position"),
        "{}",
        r.stdout
    );
    let c = &j["comparisons"][0];
    assert_eq!(c["ddir"], "read");
    assert_eq!(c["rows"][0]["metric"], "IOPS");
    assert!(c["rows"][0]["p"].is_number(), "{}", r.stdout);
    // json+ vs json+: the latency distributions are compared too.
    let r = flexio(
        &["compare", plus2.to_str().unwrap(), plus2.to_str().unwrap()],
        d.path(),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("distribution: Mann-Whitney U"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("verdict: no significant difference"),
        "{}",
        r.stdout
    );
}

/// fio 3.33's JSON and json+ output, committed unedited (tests/fixtures/capture-fio-json.sh):
/// report and compare read fio's own output even where fio is not installed.
#[test]
fn fio_json_fixtures_are_read() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let d = tempfile::tempdir().unwrap();
    let copy = |name: &str| {
        let to = d.path().join(name);
        std::fs::copy(fixtures.join(name), &to).unwrap();
        let doc: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&to).unwrap()).unwrap();
        assert_eq!(doc["fio version"], "fio-3.33");
        (to, doc["jobs"][0]["read"].clone())
    };
    let (plain, pj) = copy("fio-3.33-null.json");
    let (plus, xj) = copy("fio-3.33-null-plus.json");
    assert!(pj["clat_ns"]["bins"].is_null() && xj["clat_ns"]["bins"].is_object());

    let page = d.path().join("fio.html");
    let r = flexio(
        &[
            "report",
            plain.to_str().unwrap(),
            plus.to_str().unwrap(),
            "-o",
            page.to_str().unwrap(),
        ],
        d.path(),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("fio-3.33"));
    // Each result's clat row carries fio's own count.
    for (name, j) in [
        ("fio-3.33-null.json", &pj),
        ("fio-3.33-null-plus.json", &xj),
    ] {
        let row = format!(
            "<tr><td>{name}</td><td>clat</td><td>{}</td>",
            j["clat_ns"]["N"]
        );
        assert!(html.contains(&row), "no {row} in the report");
    }
    assert!(html.contains("fio-3.33-null-plus.json: distribution from json+ clat bins"));
    // The percentile curve has both results (plain JSON gives its reported percentiles);
    // the json+ bins draw the histogram.
    let chart = |title: &str| {
        let start = html
            .find(&format!(">{title}<"))
            .unwrap_or_else(|| panic!("no chart {title}"));
        let end = start + html[start..].find("</svg>").unwrap();
        html[start..end].to_string()
    };
    let pct = chart("Latency percentiles");
    assert!(pct.contains("<g class=\"s0\">") && pct.contains("<g class=\"s1\">"));
    assert!(chart("Latency histogram").contains("<path d=\"M"));

    // json vs json+: matched by name; IOPS are fio's numbers, tested on fio's samples; no
    // distribution test (plain JSON has no bins).
    let r = flexio(
        &[
            "compare",
            plain.to_str().unwrap(),
            plus.to_str().unwrap(),
            "--output-format=json",
        ],
        d.path(),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let j: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(j["notes"].as_array().unwrap().len(), 0, "{}", r.stdout);
    let c = &j["comparisons"][0];
    assert_eq!(
        (&c["job_a"], &c["job_b"]),
        (&"nullread".into(), &"nullread".into())
    );
    assert_eq!(c["rows"][0]["metric"], "IOPS");
    assert_eq!(c["rows"][0]["a"], pj["iops"]);
    assert_eq!(c["rows"][0]["b"], xj["iops"]);
    assert_eq!(c["rows"][0]["test"], "Welch t (samples)", "{}", r.stdout);
    assert!(c["distribution_source"].is_null());
    // json+ against itself: the distributions are compared, and are the same.
    let r = flexio(
        &["compare", plus.to_str().unwrap(), plus.to_str().unwrap()],
        d.path(),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let want = format!(
        "distribution: Mann-Whitney U on the binned clat of {0} vs {0} I/Os",
        xj["clat_ns"]["N"]
    );
    assert!(r.stdout.contains(&want), "{}", r.stdout);
    assert!(r.stdout.contains("verdict: no significant difference"));

    // A reader that has gone (`| head`) ends the output, not the command.
    let mut child = Command::new(flexio_bin())
        .args(["compare", plain.to_str().unwrap(), plus.to_str().unwrap()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(out.status.code(), Some(0), "{err}");
}

#[test]
fn compare_trials_and_fail_if_worse() {
    let d = tempfile::tempdir().unwrap();
    let common =
        "[global]\nioengine=null\nrw=randread\nbs=4k\nsize=64m\ntime_based\nruntime=600ms\n";
    let a = write(d.path(), "a.fio", &format!("{common}[fast]\n"));
    let b = write(
        d.path(),
        "b.fio",
        // Reads through the page cache: lower IOPS and higher latency than the null
        // engine on every metric, so the verdict cannot be mixed on a busy machine.
        &format!("{common}[slow]\nioengine=psync\nsize=16m\n"),
    );
    let keep = d.path().join("kept");
    let r = flexio(
        &[
            "compare",
            "--trials",
            "3",
            "--keep",
            keep.to_str().unwrap(),
            "--fail-if-worse",
            "10",
            a.to_str().unwrap(),
            b.to_str().unwrap(),
        ],
        d.path(),
    );
    assert_eq!(
        r.code, 1,
        "a regression exits 1\n{}\n{}",
        r.stdout, r.stderr
    );
    assert!(r.stderr.contains("trial 3/3 B"), "{}", r.stderr);
    assert!(
        r.stderr.contains("regression: job 'slow' read IOPS"),
        "{}",
        r.stderr
    );
    assert!(r.stdout.contains("3 vs 3 trials"), "{}", r.stdout);
    assert!(r.stdout.contains("B is slower: -"), "{}", r.stdout);
    // Interleaved A B A B: the kept results, in order of their modification times.
    let mut files: Vec<(std::time::SystemTime, String)> = std::fs::read_dir(&keep)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (
                e.metadata().unwrap().modified().unwrap(),
                e.file_name().to_string_lossy().into_owned(),
            )
        })
        .collect();
    files.sort();
    let names: Vec<&str> = files.iter().map(|f| f.1.as_str()).collect();
    assert_eq!(
        names,
        ["a-1.json", "b-1.json", "a-2.json", "b-2.json", "a-3.json", "b-3.json"]
    );
    // The other way round B is faster: no regression, exit 0; and the HTML report.
    let ka: Vec<String> = (1..=3)
        .map(|i| keep.join(format!("a-{i}.json")).display().to_string())
        .collect();
    let kb: Vec<String> = (1..=3)
        .map(|i| keep.join(format!("b-{i}.json")).display().to_string())
        .collect();
    let html = d.path().join("cmp.html");
    let mut args: Vec<&str> = vec![
        "compare",
        "--fail-if-worse=10",
        "--html",
        html.to_str().unwrap(),
    ];
    args.extend(kb.iter().map(String::as_str));
    args.push("--");
    args.extend(ka.iter().map(String::as_str));
    let r = flexio(&args, d.path());
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("B is faster: +"), "{}", r.stdout);
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("Comparison: B vs A") && page.contains("verdict better"));
    // Bad input: a clear error and exit 2.
    let r = flexio(&["compare", "nonexistent.json", "b.json"], d.path());
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("nonexistent.json"), "{}", r.stderr);
    let r = flexio(&["report"], d.path());
    assert_eq!(r.code, 2);
    let help = flexio(&["--help"], d.path());
    assert!(help.stdout.contains("flexio report") && help.stdout.contains("flexio compare"));
}

#[test]
fn rms_and_few_samples_in_normal_and_json_output() {
    let d = tempfile::tempdir().unwrap();
    // 256 I/Os: p99.9 rests on too few samples.
    let small = [
        "--name=s",
        "--ioengine=null",
        "--rw=randread",
        "--bs=4k",
        "--size=1m",
    ];
    let r = flexio(&small, d.path());
    assert_eq!(r.code, 0);
    let rms_line = r
        .stdout
        .lines()
        .find(|l| l.starts_with("    rms: clat="))
        .unwrap();
    assert!(rms_line.contains("lat="), "{rms_line}");
    let few = r
        .stdout
        .lines()
        .find(|l| l.starts_with("    few samples: clat "))
        .unwrap_or_else(|| panic!("{}", r.stdout));
    assert!(
        few.contains("99.90th") && few.contains("from 256 samples"),
        "{few}"
    );
    assert!(
        !few.contains("99.00th"),
        "256 samples are enough for p99: {few}"
    );
    // JSON: under the job's flexio object, equal to sqrt(mean^2 + var (n-1)/n).
    let mut args = small.to_vec();
    args.push("--output-format=json");
    let r = flexio(&args, d.path());
    let j: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let job = &j["jobs"][0];
    let clat = &job["read"]["clat_ns"];
    let (mean, sd, n) = (
        clat["mean"].as_f64().unwrap(),
        clat["stddev"].as_f64().unwrap(),
        clat["N"].as_f64().unwrap(),
    );
    let rms = job["flexio"]["read"]["rms_ns"]["clat"].as_f64().unwrap();
    let want = (mean * mean + sd * sd * (n - 1.0) / n).sqrt();
    assert!((rms - want).abs() <= 1e-3 * want + 0.01, "{rms} vs {want}");
    let few = &job["flexio"]["read"]["few_samples"]["clat"];
    assert_eq!(few[0], "99.900000", "{few}");
    // Enough samples: no few-samples line.
    let big = [
        "--name=b",
        "--ioengine=null",
        "--rw=randread",
        "--bs=4k",
        "--size=64m",
    ];
    let r = flexio(&big, d.path());
    assert!(!r.stdout.contains("few samples"), "{}", r.stdout);
    assert!(r.stdout.contains("    rms: clat="));
}

#[test]
fn report_switch_on_a_run_writes_the_page_with_its_logs() {
    let d = tempfile::tempdir().unwrap();
    let r = flexio(
        &[
            "--report=run.html",
            "--name=r",
            "--ioengine=null",
            "--rw=randread",
            "--size=16m",
            "--time_based",
            "--runtime=600ms",
            "--rate_iops=5000",
            "--write_lat_log=r",
            "--write_bw_log=r",
            "--log_avg_msec=100",
        ],
        d.path(),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr.contains("wrote the run's report to run.html"),
        "{}",
        r.stderr
    );
    // The normal output is fio's, untouched by the report.
    assert!(r.stdout.contains("Run status group 0"), "{}", r.stdout);
    let page = std::fs::read_to_string(d.path().join("run.html")).unwrap();
    assert!(page.starts_with("<!DOCTYPE html>") || page.starts_with("<!doctype html>"));
    assert!(page.matches("<svg").count() >= 4, "too few charts");
    // The logs beside the run gave time series.
    assert!(
        page.contains(">Bandwidth over time<"),
        "no bandwidth series"
    );
    assert!(page.contains(">Latency over time<"), "no latency series");
    // An unwritable report path is an error that names it, after the run's output.
    let r = flexio(
        &[
            "--report=/nonexistent-dir/x.html",
            "--name=r",
            "--ioengine=null",
            "--size=1m",
        ],
        d.path(),
    );
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("/nonexistent-dir/x.html"), "{}", r.stderr);
}

/// Compressed logs (`log_store_compressed=1`), flexio's and fio 3.33's: the report inflates
/// and draws them like text logs; one that cannot be inflated is named and left out.
#[test]
fn report_draws_compressed_logs() {
    let d = tempfile::tempdir().unwrap();
    let args = |tool_logs: &str| {
        vec![
            "--name=z".to_string(),
            "--ioengine=null".into(),
            "--rw=randread".into(),
            "--size=16m".into(),
            "--time_based".into(),
            "--runtime=600ms".into(),
            "--rate_iops=5000".into(),
            "--log_store_compressed=1".into(),
            format!("--write_lat_log={tool_logs}"),
            format!("--write_bw_log={tool_logs}"),
            "--log_avg_msec=100".into(),
            "--output-format=json+".into(),
            format!("--output={tool_logs}.json"),
        ]
    };
    let a = args("fx");
    let r = flexio(&a.iter().map(String::as_str).collect::<Vec<_>>(), d.path());
    assert_eq!(r.code, 0, "{}", r.stderr);
    let fz: Vec<_> = std::fs::read_dir(d.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".log.fz"))
        .collect();
    assert!(fz.iter().any(|n| n.starts_with("fx_clat")), "{fz:?}");
    assert!(!fz.iter().any(|n| n.ends_with(".log")), "{fz:?}");
    let page = |json: &str| {
        let out = d.path().join(format!("{json}.html"));
        let r = flexio(&["report", json, "-o", out.to_str().unwrap()], d.path());
        assert_eq!(r.code, 0, "{}", r.stderr);
        (std::fs::read_to_string(out).unwrap(), r.stderr)
    };
    let (html, _) = page("fx.json");
    assert!(html.contains(">Latency over time<"), "no latency series");
    assert!(
        html.contains(">Bandwidth over time<"),
        "no bandwidth series"
    );
    assert!(!html.contains("not drawn"), "every compressed log was read");
    // A damaged one: named, not drawn, the others still are.
    let bad = d.path().join("fx_bw.1.log.fz");
    assert!(bad.exists(), "{fz:?}");
    std::fs::write(&bad, b"not a compressed log").unwrap();
    let (html, err) = page("fx.json");
    let said = format!("{html}{err}");
    assert!(
        said.contains("fx_bw.1.log.fz could not be inflated"),
        "{said}"
    );
    assert!(html.contains("1 compressed (.log.fz) not drawn"), "{html}");
    assert!(
        html.contains(">Latency over time<"),
        "the latency log is still drawn"
    );
    // fio 3.33's compressed logs (fio can hang on this job: fio_compressing_logs).
    let Some(fio) = fio_bin() else { return };
    let a = args("fo");
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    let Some(r) = fio_compressing_logs(&fio, &a, d.path()) else {
        return;
    };
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(d.path().join("fo_clat.1.log.fz").exists());
    let (html, err) = page("fo.json");
    assert!(html.contains("fio-3.33"));
    assert!(html.contains(">Latency over time<"), "{err}");
    assert!(html.contains(">Bandwidth over time<"), "{err}");
    assert!(!html.contains("not drawn"), "{err}");
}

/// `compare --trials` runs this flexio through /proc/self/exe: replacing the binary's file
/// mid-comparison changes nothing; `--resume` reuses the trials a killed comparison kept.
#[test]
fn trials_survive_a_replaced_binary_and_resume() {
    let d = tempfile::tempdir().unwrap();
    let job = "[global]\nioengine=null\nrw=randread\nbs=4k\nsize=64m\ntime_based\nruntime=400ms\n";
    let a = write(d.path(), "a.fio", &format!("{job}[x]\n"));
    let b = write(d.path(), "b.fio", &format!("{job}[x]\nbs=8k\n"));
    let bin = d.path().join("flexio-copy");
    std::fs::copy(flexio_bin(), &bin).unwrap();
    let keep = d.path().join("kept");
    let args = [
        "compare",
        "--trials",
        "3",
        "--keep",
        keep.to_str().unwrap(),
        a.to_str().unwrap(),
        b.to_str().unwrap(),
    ];
    let child = spawn_copied(&bin, &args, d.path());
    let t = std::time::Instant::now();
    while !keep.join("a-1.json").is_file() {
        assert!(t.elapsed().as_secs() < 60, "no first trial");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let new = d.path().join("flexio-new");
    std::fs::write(&new, b"#!/bin/sh\nexit 3\n").unwrap();
    std::fs::rename(&new, &bin).unwrap();
    let r = collect(child);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("3 vs 3 trials"), "{}", r.stdout);
    // As if killed after five trials: the last is gone; --resume runs only that one.
    std::fs::remove_file(keep.join("b-3.json")).unwrap();
    let mut resumed = args.to_vec();
    resumed.insert(1, "--resume");
    let r = flexio(&resumed, d.path());
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        r.stderr.matches("finished before (--resume)").count(),
        5,
        "{}",
        r.stderr
    );
    assert!(keep.join("b-3.json").is_file());
    assert!(r.stdout.contains("3 vs 3 trials"), "{}", r.stdout);
    let r = flexio(&["compare", "--resume", "x.json", "y.json"], d.path());
    assert_eq!(r.code, 2);
    assert!(
        r.stderr
            .contains("--resume needs --trials N and --keep DIR"),
        "{}",
        r.stderr
    );
}

/// `flexio report` draws a comparison's JSON (`compare --output-format=json`) as a section:
/// the verdict, the rows, the warnings.
#[test]
fn report_reads_a_comparison() {
    let d = tempfile::tempdir().unwrap();
    let job = "[global]\nioengine=null\nrw=randread\nbs=4k\nsize=64m\ntime_based\nruntime=300ms\n";
    let a = write(d.path(), "a.fio", &format!("{job}[x]\n"));
    let b = write(d.path(), "b.fio", &format!("{job}[x]\nbs=8k\n"));
    let r = flexio(
        &[
            "compare",
            "--trials",
            "2",
            "--output-format=json",
            a.to_str().unwrap(),
            b.to_str().unwrap(),
        ],
        d.path(),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let cmp = d.path().join("cmp.json");
    std::fs::write(&cmp, &r.stdout).unwrap();
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let headline = v["comparisons"][0]["headline"]
        .as_str()
        .unwrap()
        .to_string();
    let page = d.path().join("cmp.html");
    let r = flexio(
        &[
            "report",
            cmp.to_str().unwrap(),
            "-o",
            page.to_str().unwrap(),
        ],
        d.path(),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("<h2>Comparison: "), "{html}");
    assert!(
        html.contains(&flexio_analysis::fmt::esc(&headline)),
        "{headline}: {html}"
    );
    assert!(html.contains("<td>IOPS</td>"), "{html}");
}
