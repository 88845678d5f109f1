//! `flexio report` and `flexio compare` end to end: reports from flexio's and fio 3.33's own
//! JSON / json+ output (with logs), drawn by a real headless Chromium (every chart drawn, no
//! console message, a screenshot kept under target/test-artifacts/), comparisons of fio
//! results and of `--trials` runs, `--fail-if-worse`, and flexio's RMS / few-samples
//! additions to the normal and JSON output.

mod common;
use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// A small job writing every kind of log (per I/O with `avg_ms` 0, else averaged windows) and
/// a histogram log; json+ into `<name>.json`.
fn logged_run(dir: &Path, name: &str, bs: &str, avg_ms: u32) -> PathBuf {
    let out = format!("--output={name}.json");
    let r = flexio(
        &[
            "--output-format=json+",
            &out,
            &format!("--name={name}"),
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
    let p = ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.is_file());
    if p.is_none() {
        if std::env::var("FLEXIO_REQUIRE_CHROMIUM").as_deref() == Ok("1") {
            panic!("chromium is required (FLEXIO_REQUIRE_CHROMIUM=1) but not installed");
        }
        eprintln!("SKIP: chromium is not installed; report rendering not checked");
    }
    p
}

/// Load a page in headless Chromium: (DOM after scripts ran, console messages).
fn render(
    chrome: &Path,
    page: &Path,
    profile: &Path,
    shot: Option<&Path>,
) -> (String, Vec<String>) {
    let mut cmd = Command::new(chrome);
    cmd.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--enable-logging=stderr",
        "--v=0",
        "--virtual-time-budget=3000",
        "--window-size=1400,2200",
    ])
    .arg(format!("--user-data-dir={}", profile.display()));
    match shot {
        Some(s) => cmd.arg(format!("--screenshot={}", s.display())),
        None => cmd.arg("--dump-dom"),
    };
    let out = cmd
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("run chromium");
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    let console = err
        .lines()
        .filter(|l| l.contains(":CONSOLE"))
        .map(str::to_string)
        .collect();
    (String::from_utf8_lossy(&out.stdout).into_owned(), console)
}

fn artifacts() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target"));
    let d = target.join("test-artifacts");
    std::fs::create_dir_all(&d).unwrap();
    d
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
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        !html.contains("https://"),
        "the page must not need the network"
    );
    let charts_in_file = html.matches("<svg class=\"chart\"").count();
    let (dom, console) = render(&chrome, &page, profile.path(), None);
    assert!(console.is_empty(), "console messages: {console:?}");
    // Every chart is in the rendered DOM and has drawn curves.
    let charts: Vec<&str> = dom.split("<svg class=\"chart\"").skip(1).collect();
    assert_eq!(charts.len(), charts_in_file);
    // Two jobs (names differ), seven charts each (three over time, four distributions).
    assert_eq!(charts.len(), 14, "{html}");
    for c in &charts {
        let body = &c[..c.find("</svg>").unwrap()];
        assert!(body.contains("<path d=\"M"), "an empty chart: {body}");
    }
    assert!(!dom.contains("class=\"nodata\""));
    let shot = artifacts().join("report.png");
    let _ = std::fs::remove_file(&shot);
    let (_, console) = render(&chrome, &page, profile.path(), Some(&shot));
    assert!(console.is_empty(), "console messages: {console:?}");
    let size = std::fs::metadata(&shot).map(|m| m.len()).unwrap_or(0);
    assert!(
        size > 20_000,
        "screenshot {} has {size} bytes",
        shot.display()
    );
    std::fs::copy(&page, artifacts().join("report.html")).unwrap();
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
