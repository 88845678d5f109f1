//! Live outputs (docs/live.md): the JSON Lines interval stream against the final JSON, a
//! SIGKILLed stream, a real Prometheus server scraping `--metrics-listen` every second, the
//! `--live` view driven in tmux, and the bad conditions (port in use, bad address, stuck and
//! frantic scrapers). Built with the cargo feature `live` (a default one).
#![cfg(feature = "live")]

use crate::common;

use common::*;
use serde_json::Value;
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

fn lines_of(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap();
    assert!(
        text.is_empty() || text.ends_with('\n'),
        "the stream ends in a partial line: {text:?}"
    );
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

/// One HTTP/1.0 GET: the status line's code and the body.
fn http_get(port: u16, path: &str) -> Option<(u32, String)> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
    write!(s, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").ok()?;
    let mut out = Vec::new();
    s.read_to_end(&mut out).ok()?;
    let text = String::from_utf8_lossy(&out).into_owned();
    let (head, body) = text.split_once("\r\n\r\n")?;
    let code = head.split_whitespace().nth(1)?.parse().ok()?;
    Some((code, body.to_string()))
}

#[test]
fn interval_stream_adds_up_to_the_final_result() {
    let d = tempfile::tempdir().unwrap();
    let r = flexio(
        &[
            "--name=mix",
            "--ioengine=psync",
            "--filename=data",
            // Reads from the page cache (the file just laid out), not the disk: the rate
            // limit, not a busy disk, sets the pace.
            "--invalidate=0",
            "--size=8m",
            "--bs=4k",
            "--rw=randrw",
            "--numjobs=2",
            "--time_based",
            "--runtime=2",
            "--rate_iops=3000,2000",
            "--interval=200ms",
            "--interval-stream=stream.jsonl",
            "--output-format=json+",
            "--output=result.json",
        ],
        d.path(),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let lines = lines_of(&d.path().join("stream.jsonl"));
    let result: Value =
        serde_json::from_str(&std::fs::read_to_string(d.path().join("result.json")).unwrap())
            .unwrap();
    let jobs = result["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 2);
    // Every line has exactly the members docs/schema/interval-stream.schema.json requires
    // (it allows no others).
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/schema/interval-stream.schema.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let keys = |v: &Value| -> Vec<String> {
        let mut k: Vec<String> = v
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_str().unwrap().to_string())
            .collect();
        k.sort();
        k
    };
    let top = keys(&schema["required"]);
    let lat = keys(&schema["properties"]["latency"]["required"]);
    for l in &lines {
        let mut have: Vec<String> = l.as_object().unwrap().keys().cloned().collect();
        have.sort();
        assert_eq!(have, top, "{l}");
        let mut have: Vec<String> = l["latency"].as_object().unwrap().keys().cloned().collect();
        have.sort();
        assert_eq!(have, lat, "{l}");
    }
    for (k, job) in jobs.iter().enumerate() {
        let thread = k as u64 + 1;
        for dir in ["read", "write"] {
            let mine: Vec<&Value> = lines
                .iter()
                .filter(|l| l["thread"] == thread && l["direction"] == dir)
                .collect();
            assert!(
                mine.len() >= 8,
                "2 s at 200 ms gives about 10 intervals, got {}",
                mine.len()
            );
            for l in &mine {
                assert_eq!(l["schema_version"], 1);
                assert_eq!(l["job"], "mix");
                assert!(l["interval_ms"].as_u64().unwrap() <= 1000, "{l}");
            }
            assert_eq!(
                mine.iter().filter(|l| l["last"] == true).count(),
                1,
                "one last interval per job and direction"
            );
            let sum = |key: &str| mine.iter().map(|l| l[key].as_u64().unwrap()).sum::<u64>();
            assert_eq!(
                sum("ios"),
                job[dir]["total_ios"].as_u64().unwrap(),
                "{dir} I/Os"
            );
            assert_eq!(
                sum("bytes"),
                job[dir]["io_bytes"].as_u64().unwrap(),
                "{dir} bytes"
            );
            // The interval histograms merge to the final json+ histogram exactly.
            let mut merged: BTreeMap<String, u64> = BTreeMap::new();
            for l in &mine {
                for (v, n) in l["latency"]["bins"].as_object().unwrap() {
                    *merged.entry(v.clone()).or_default() += n.as_u64().unwrap();
                }
            }
            let want: BTreeMap<String, u64> = job[dir]["clat_ns"]["bins"]
                .as_object()
                .unwrap()
                .iter()
                .map(|(k, v)| (k.clone(), v.as_u64().unwrap()))
                .collect();
            assert_eq!(merged, want, "{dir} histogram");
            // An interval in the middle runs at the rate the job asked for.
            let mid = mine[mine.len() / 2];
            let want_iops = if dir == "read" { 3000.0 } else { 2000.0 };
            let iops = mid["iops"].as_f64().unwrap();
            assert!(
                (iops - want_iops).abs() / want_iops < 0.25,
                "{dir} interval IOPS {iops} against rate {want_iops}"
            );
            let pct = mid["latency"]["percentiles"].as_object().unwrap();
            assert!(pct.contains_key("99.000000"), "{mid}");
        }
    }
}

#[test]
fn a_killed_run_leaves_only_complete_lines() {
    let d = tempfile::tempdir().unwrap();
    let mut child = spawn_flexio(
        &[
            "--name=k",
            "--ioengine=null",
            "--size=1g",
            "--bs=4k",
            "--rw=randread",
            "--numjobs=2",
            "--time_based",
            "--runtime=60",
            "--interval=10ms",
            "--interval-stream=s.jsonl",
        ],
        d.path(),
        &[],
    );
    let path = d.path().join("s.jsonl");
    let start = Instant::now();
    while std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0) < 64 * 1024 {
        assert!(start.elapsed() < Duration::from_secs(30), "no stream");
        std::thread::sleep(Duration::from_millis(20));
    }
    send_signal(child.id(), "KILL");
    let _ = child.wait();
    let lines = lines_of(&path);
    assert!(lines.len() > 20, "{} lines", lines.len());
    assert!(lines.iter().all(|l| l["last"] == false));
}

#[test]
fn bad_addresses_and_busy_ports_stop_before_any_io() {
    let d = tempfile::tempdir().unwrap();
    let busy = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = busy.local_addr().unwrap().port().to_string();
    let job = [
        "--name=j",
        "--ioengine=psync",
        "--filename=made",
        "--size=1m",
        "--rw=write",
    ];
    let with = |extra: &[&str]| {
        let mut a: Vec<&str> = job.to_vec();
        a.extend_from_slice(extra);
        run_bounded(&flexio_bin(), &a, d.path(), &[], 60)
    };
    let arg = format!("--metrics-listen={port}");
    let r = with(&[&arg]);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("cannot listen on 127.0.0.1:") && r.stderr.contains("in use"),
        "{}",
        r.stderr
    );
    assert!(!d.path().join("made").exists(), "no I/O before the error");
    let r = with(&["--metrics-listen=no-such-form"]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("is not [ADDR:]PORT"), "{}", r.stderr);
    let r = with(&["--interval-stream=/nonexistent-dir/s.jsonl"]);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("--interval-stream: cannot create"),
        "{}",
        r.stderr
    );
    let r = with(&["--interval=1ms", "--interval-stream=s"]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("at least 10ms"), "{}", r.stderr);
    assert!(!d.path().join("made").exists());
    // --live without a terminal: fio's status line instead, and the run goes on.
    let r = with(&["--live"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("--live needs a terminal"), "{}", r.stderr);
    assert!(r.stdout.contains("Run status group 0"), "{}", r.stdout);
    // Remote modes refuse them rather than ignore them.
    let r = with(&["--client=127.0.0.1", "--interval-stream=s"]);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("not supported by flexio with --client"),
        "{}",
        r.stderr
    );
}

#[test]
fn stuck_and_frantic_scrapers_do_not_hold_the_run() {
    let d = tempfile::tempdir().unwrap();
    let port = free_port();
    let listen = format!("--metrics-listen=127.0.0.1:{port}");
    let start = Instant::now();
    // Rate-limited, so the job thread leaves the CPU to the scrapers on a 2-core machine.
    let child = spawn_flexio(
        &[
            "--name=s",
            "--ioengine=null",
            "--size=1g",
            "--bs=4k",
            "--rw=read",
            "--rate_iops=50000",
            "--time_based",
            "--runtime=3",
            "--interval=100ms",
            &listen,
        ],
        d.path(),
        &[],
    );
    // Wait for the exporter.
    while http_get(port, "/metrics").is_none() {
        assert!(start.elapsed() < Duration::from_secs(20), "no exporter");
        std::thread::sleep(Duration::from_millis(20));
    }
    // Stuck: connections that send half a request, or nothing, and never read.
    let mut stuck = Vec::new();
    for k in 0..16 {
        let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
        if k % 2 == 0 {
            let _ = s.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n");
        }
        stuck.push(s);
    }
    // Frantic: scrapes back to back until the run has ended.
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let d2 = done.clone();
    let frantic = std::thread::spawn(move || {
        let mut n = 0u32;
        let mut seen = String::new();
        while !d2.load(std::sync::atomic::Ordering::Relaxed) {
            if let Some((200, body)) = http_get(port, "/metrics") {
                n += 1;
                seen = body;
            }
        }
        (n, seen)
    });
    let r = collect(child);
    let took = start.elapsed();
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    let (n, body) = frantic.join().unwrap();
    drop(stuck);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(took < Duration::from_secs(15), "the run took {took:?}");
    assert!(n >= 10, "only {n} scrapes answered while the run lasted");
    assert!(
        body.contains("flexio_ios_total{job=\"s\",thread=\"1\""),
        "{body}"
    );
    assert!(r
        .stderr
        .contains(&format!("metrics at http://127.0.0.1:{port}/metrics")));
    // After the run the port is free again.
    assert!(TcpListener::bind(("127.0.0.1", port)).is_ok());
}

fn have(tool: &str, require: &str) -> bool {
    // Spawning it is enough: it exists (tmux knows -V, prometheus --version).
    let found = Command::new(tool).arg("-V").output().is_ok();
    if !found {
        if std::env::var(require).as_deref() == Ok("1") {
            panic!("{tool} is required ({require}=1) but not installed");
        }
        eprintln!("SKIP: {tool} is not installed");
    }
    found
}

/// Prometheus' HTTP API: an instant query at `time` (Unix seconds), its single value.
fn prom_query(port: u16, query: &str, time: f64) -> Option<f64> {
    let enc: String = query
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect();
    let (code, body) = http_get(port, &format!("/api/v1/query?query={enc}&time={time:.3}"))?;
    assert_eq!(code, 200, "{query}: {body}");
    let v: Value = serde_json::from_str(&body).ok()?;
    let res = v["data"]["result"].as_array()?;
    assert!(res.len() <= 1, "{query}: {body}");
    res.first()?["value"][1].as_str()?.parse().ok()
}

#[test]
fn prometheus_scrapes_a_run_that_agrees_with_its_json() {
    if !have("prometheus", "FLEXIO_REQUIRE_PROMETHEUS") {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let (fport, pport) = (free_port(), free_port());
    std::fs::write(
        d.path().join("prometheus.yml"),
        format!(
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 900ms\nscrape_configs:\n  - job_name: flexio\n    honor_labels: true\n    static_configs:\n      - targets: ['127.0.0.1:{fport}']\n"
        ),
    )
    .unwrap();
    let mut prom = Command::new("prometheus")
        .current_dir(d.path())
        .args([
            "--config.file=prometheus.yml",
            "--storage.tsdb.path=tsdb",
            &format!("--web.listen-address=127.0.0.1:{pport}"),
        ])
        .stdout(std::fs::File::create(d.path().join("prom.log")).unwrap())
        .stderr(std::fs::File::create(d.path().join("prom.err")).unwrap())
        .spawn()
        .unwrap();
    struct Kill(std::process::Child);
    impl Drop for Kill {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let t = Instant::now();
    while !matches!(http_get(pport, "/-/ready"), Some((200, _))) {
        if t.elapsed() > Duration::from_secs(60) {
            let err = std::fs::read_to_string(d.path().join("prom.err")).unwrap_or_default();
            let _ = prom.kill();
            panic!("prometheus did not become ready: {err}");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let _prom = Kill(prom);
    let listen = format!("--metrics-listen=127.0.0.1:{fport}");
    let run_start = std::time::SystemTime::now();
    let r = flexio(
        &[
            "--name=scraped",
            "--ioengine=psync",
            "--filename=data",
            "--invalidate=0",
            "--size=16m",
            "--bs=4k",
            "--rw=randread",
            "--time_based",
            "--runtime=20",
            "--rate_iops=2000",
            &listen,
            "--output-format=json",
        ],
        d.path(),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let end = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    let start = run_start
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    let json = json_of(&r.stdout);
    let job = &json["jobs"][0]["read"];
    let iops = job["iops"].as_f64().unwrap();
    let p99_s = job["clat_ns"]["percentile"]["99.000000"].as_f64().unwrap() / 1e9;
    // The rate over 10 s of the run's second half (Prometheus's first scrape of a new
    // target may come a few seconds into the run).
    let sel = "{job=\"scraped\",direction=\"read\"}";
    let rate = prom_query(
        pport,
        &format!("rate(flexio_ios_total{sel}[10s])"),
        start + 17.0,
    )
    .expect("a rate from Prometheus");
    assert!(
        (rate - iops).abs() / iops < 0.02,
        "Prometheus rate {rate} against the JSON's {iops} IOPS"
    );
    // The last scrape's histogram: p99 within one bucket of the JSON's.
    let q = prom_query(
        pport,
        &format!("histogram_quantile(0.99, flexio_latency_seconds_bucket{sel})"),
        end,
    )
    .expect("a quantile from Prometheus");
    let bounds: Vec<f64> = {
        let r10 = [1.0, 1.25, 1.6, 2.0, 2.5, 3.15, 4.0, 5.0, 6.3, 8.0];
        (0..9)
            .flat_map(|e| r10.iter().map(move |r| r * 1e-7 * 10f64.powi(e)))
            .collect()
    };
    eprintln!(
        "Prometheus: rate {rate:.1}/s against {iops:.1} IOPS; p99 {q:.6} s against {p99_s:.6} s"
    );
    let k = bounds.partition_point(|b| *b < p99_s);
    let width = bounds[k.min(bounds.len() - 1)] - if k > 0 { bounds[k - 1] } else { 0.0 };
    assert!(
        (q - p99_s).abs() <= width * 1.0001,
        "histogram_quantile {q} s against the JSON's p99 {p99_s} s (bucket width {width})"
    );
    let total = prom_query(
        pport,
        &format!("max_over_time(flexio_ios_total{sel}[1m])"),
        end,
    )
    .expect("the I/O count");
    let want = job["total_ios"].as_f64().unwrap();
    assert!(
        total <= want && total >= want * 0.9,
        "last scraped count {total}, final {want}"
    );
}

#[test]
fn live_view_in_tmux_shows_the_jobs_and_quits_on_q() {
    if !have("tmux", "FLEXIO_REQUIRE_TMUX") {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let sock = d.path().join("tmux.sock");
    let tmux = |args: &[&str]| {
        Command::new("tmux")
            .arg("-S")
            .arg(&sock)
            .args(args)
            .output()
            .unwrap()
    };
    let cmd = format!(
        "cd '{}' && '{}' --name=first --ioengine=null --size=1g --bs=4k --rw=randread --time_based --runtime=120 --name=second --ioengine=psync --filename=data --size=4m --rw=randwrite --rate_iops=500 --time_based --runtime=120 --live; echo EXIT=$?; sleep 60",
        d.path().display(),
        flexio_bin().display()
    );
    let o = tmux(&[
        "new-session",
        "-d",
        "-s",
        "live",
        "-x",
        "140",
        "-y",
        "30",
        &cmd,
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    struct KillServer<'a>(&'a Path);
    impl Drop for KillServer<'_> {
        fn drop(&mut self) {
            let _ = Command::new("tmux")
                .arg("-S")
                .arg(self.0)
                .arg("kill-server")
                .output();
        }
    }
    let _guard = KillServer(&sock);
    let pane = || {
        String::from_utf8_lossy(&tmux(&["capture-pane", "-p", "-S", "-300", "-t", "live"]).stdout)
            .into_owned()
    };
    let t = Instant::now();
    let mut screen = String::new();
    while t.elapsed() < Duration::from_secs(30) {
        screen = pane();
        if screen.contains("first (thread 1)")
            && screen.contains("second (thread 2)")
            && screen.contains("p99 ")
            && screen.contains("IOPS")
            && !screen.contains("p99 --")
        {
            break;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(screen.contains("flexio --live"), "{screen}");
    assert!(
        screen.contains("first (thread 1)") && screen.contains("second (thread 2)"),
        "{screen}"
    );
    assert!(
        !screen.contains("p99 --"),
        "a sample has reached the view: {screen}"
    );
    let quit_at = Instant::now();
    tmux(&["send-keys", "-t", "live", "q"]);
    let mut after = String::new();
    while quit_at.elapsed() < Duration::from_secs(20) {
        after = pane();
        if after.contains("EXIT=") {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(after.contains("EXIT=0"), "q ends the run cleanly: {after}");
    assert!(
        after.contains("Run status group 0"),
        "the final report follows: {after}"
    );
    assert!(
        !after.contains("flexio --live"),
        "the view is gone: {after}"
    );
}
