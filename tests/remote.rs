//! Client/server mode end to end: flexio servers driven by flexio's client (2 and 4 hosts,
//! Unix sockets and TCP loopback), the "All clients" percentiles checked against the
//! pooled per-host histograms, interoperation with fio 3.33 both ways, and servers that
//! fail on purpose (unreachable, hung, killed mid-run, wrong protocol version).

use crate::common;

use common::{fio_bin, flexio_bin, free_port, json_of, run_bounded, shapes};
use serde_json::Value;
use std::io::{Read, Write};
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::process::Child;
use std::time::{Duration, Instant};

/// A server process killed when the test ends.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn wait_for(p: &Path) {
    let t = Instant::now();
    while !p.exists() {
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "{} never appeared",
            p.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Start a server (`bin --server=addr`) in `dir`; wait until it accepts connections.
fn server(bin: &Path, addr: &str, dir: &Path) -> Server {
    server_env(bin, addr, dir, &[])
}

/// [`server`] with extra environment variables.
fn server_env(bin: &Path, addr: &str, dir: &Path, env: &[(&str, &str)]) -> Server {
    let log = dir.join(format!("server-{}.log", addr.replace(['/', ':', ','], "_")));
    let child = common::spawn_logged_env(bin, &[&format!("--server={addr}")], dir, &log, env);
    if let Some(p) = addr.strip_prefix("sock:") {
        let t = Instant::now();
        while std::os::unix::net::UnixStream::connect(p).is_err() {
            assert!(
                t.elapsed() < Duration::from_secs(10),
                "server on {p} never listened"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    } else {
        let a = addr.trim_start_matches("ip:").replace(',', ":");
        let t = Instant::now();
        while std::net::TcpStream::connect(&a).is_err() {
            assert!(
                t.elapsed() < Duration::from_secs(10),
                "server on {a} never listened"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    Server(child)
}

fn sock(dir: &Path, name: &str) -> String {
    format!("sock:{}", dir.join(name).display())
}

/// fio's percentile rule on a histogram of (value, count): the first value whose
/// cumulative count reaches p% of all samples.
fn percentile_of(bins: &[(u64, u64)], p: f64) -> u64 {
    let n: u64 = bins.iter().map(|b| b.1).sum();
    let mut sum = 0;
    for (v, c) in bins {
        sum += c;
        if sum as f64 >= p / 100.0 * n as f64 {
            return *v;
        }
    }
    bins.last().map(|b| b.0).unwrap_or(0)
}

fn bins_of(dir: &Value) -> Vec<(u64, u64)> {
    let mut v: Vec<(u64, u64)> = dir["clat_ns"]["bins"]
        .as_object()
        .expect("json+ bins")
        .iter()
        .map(|(k, c)| (k.parse().unwrap(), c.as_u64().unwrap()))
        .collect();
    v.sort();
    v
}

const FAST: &str = "[fast]\nioengine=null\nrw=randread\nbs=4k\nsize=16m\n";

fn slow_job(dir: &Path) -> String {
    let f = dir.join("data");
    std::fs::write(&f, vec![7u8; 1 << 20]).unwrap();
    format!(
        "[slow]\nioengine=psync\nrw=randread\nbs=4k\nsize=1m\nloops=4\nfilename={}\n",
        f.display()
    )
}

/// n flexio servers (the first on TCP loopback, the others on Unix sockets), odd and even
/// hosts running different jobs so the pooled histogram differs from each host's.
fn cluster_run(n: usize) {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    std::fs::write(dir.join("fast.fio"), FAST).unwrap();
    std::fs::write(dir.join("slow.fio"), slow_job(dir)).unwrap();
    let mut servers = Vec::new();
    let mut args = vec!["--output-format=json+,normal".to_string()];
    for i in 0..n {
        let addr = if i == 0 {
            format!("ip:127.0.0.1,{}", free_port())
        } else {
            sock(dir, &format!("s{i}"))
        };
        servers.push(server(&flexio_bin(), &addr, dir));
        args.push(format!("--client={addr}"));
        args.push(if i % 2 == 0 { "fast.fio" } else { "slow.fio" }.into());
    }
    let a: Vec<&str> = args.iter().map(|s| s.as_str()).collect();
    let r = run_bounded(&flexio_bin(), &a, dir, &[], 120);
    assert_eq!(r.code, 0, "stdout:\n{}\nstderr:\n{}", r.stdout, r.stderr);
    // Normal output: one block per server, then the aggregate and the cluster summary.
    assert_eq!(
        r.stdout.matches("Run status group 0 (all jobs):").count(),
        n,
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains(&format!(
            "All clients: (groupid=0, jobs={n}): err= 0: pid=0:"
        )),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("Cluster (flexio):"), "{}", r.stdout);
    assert_eq!(r.stdout.matches("clock offset ").count(), n, "{}", r.stdout);
    let j = json_of(&r.stdout[r.stdout.find("{\n").expect("JSON document")..]);
    let cs = j["client_stats"].as_array().unwrap();
    assert_eq!(cs.len(), n + 1);
    let all = &cs[n];
    assert_eq!(all["jobname"], "All clients");
    let hosts = &cs[..n];
    for (i, h) in hosts.iter().enumerate() {
        assert_eq!(h["jobname"], if i % 2 == 0 { "fast" } else { "slow" });
        assert!(h["hostname"].as_str().is_some_and(|s| !s.is_empty()));
    }
    // Totals are sums; the latency histogram is the bucket-wise sum of the hosts'.
    let ios: u64 = hosts
        .iter()
        .map(|h| h["read"]["total_ios"].as_u64().unwrap())
        .sum();
    assert_eq!(all["read"]["total_ios"].as_u64().unwrap(), ios);
    let mut pooled = std::collections::BTreeMap::<u64, u64>::new();
    for h in hosts {
        for (v, c) in bins_of(&h["read"]) {
            *pooled.entry(v).or_default() += c;
        }
    }
    let pooled: Vec<(u64, u64)> = pooled.into_iter().collect();
    assert_eq!(
        bins_of(&all["read"]),
        pooled,
        "All clients histogram = pooled histograms"
    );
    let pct = all["read"]["clat_ns"]["percentile"]
        .as_object()
        .expect("percentiles");
    assert!(pct.len() >= 10);
    let mut differs_from_a_host = false;
    for (k, v) in pct {
        let p: f64 = k.parse().unwrap();
        let want = percentile_of(&pooled, p);
        assert_eq!(
            v.as_u64().unwrap(),
            want,
            "All clients p{k}: pooled histogram says {want}"
        );
        differs_from_a_host |= hosts
            .iter()
            .any(|h| h["read"]["clat_ns"]["percentile"][k].as_u64() != Some(want));
    }
    assert!(
        differs_from_a_host,
        "the hosts' histograms should differ for this test to mean something"
    );
    let mins: Vec<u64> = hosts
        .iter()
        .map(|h| h["read"]["clat_ns"]["min"].as_u64().unwrap())
        .collect();
    assert_eq!(
        all["read"]["clat_ns"]["min"].as_u64(),
        mins.iter().min().copied()
    );
    // Per-host detail.
    let fx = &j["flexio"];
    assert_eq!(fx["status"], "complete");
    let fh = fx["hosts"].as_array().unwrap();
    assert_eq!(fh.len(), n);
    for h in fh {
        assert_eq!(h["status"], "ok");
        assert!(h["clock_offset_ns"].is_i64(), "{h}");
        assert!(h["runtime_ms"].is_u64(), "{h}");
    }
    assert!(
        fx["cluster"]["last_done"]["read"]["io_bytes"]
            .as_u64()
            .unwrap()
            > 0
    );
    drop(servers);
}

#[test]
fn two_flexio_servers_merge_exactly() {
    cluster_run(2);
}

#[test]
fn four_flexio_servers_merge_exactly() {
    cluster_run(4);
}

#[test]
fn host_list_file_and_unbound_job_file() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    std::fs::write(dir.join("fast.fio"), FAST).unwrap();
    let (a, b) = (sock(dir, "a"), sock(dir, "b"));
    let _s = [
        server(&flexio_bin(), &a, dir),
        server(&flexio_bin(), &b, dir),
    ];
    std::fs::write(dir.join("hosts"), format!("{a}\n{b}\n")).unwrap();
    let r = run_bounded(
        &flexio_bin(),
        &["--client=hosts", "fast.fio", "--output-format=json"],
        dir,
        &[],
        60,
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let j = json_of(&r.stdout);
    let cs = j["client_stats"].as_array().unwrap();
    assert_eq!(cs.len(), 3, "both hosts got the job file: {j}");
    assert_eq!(cs[2]["read"]["io_bytes"].as_u64(), Some(32 << 20));
}

/// fio's client output with the "hostname=" probe line (which names the server program)
/// left out, as shapes.
fn client_shapes(out: &str) -> Vec<String> {
    let kept: String = out
        .lines()
        .filter(|l| !l.starts_with("hostname="))
        .map(|l| format!("{l}\n"))
        .collect();
    shapes(&kept)
}

#[test]
fn fio_client_drives_a_flexio_server() {
    let Some(fio) = fio_bin() else { return };
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    std::fs::write(dir.join("fast.fio"), FAST).unwrap();
    let (f, x) = (sock(dir, "fio"), sock(dir, "flexio"));
    let _s = [server(&fio, &f, dir), server(&flexio_bin(), &x, dir)];
    let by_fio = run_bounded(
        &fio,
        &["--eta=never", &format!("--client={f}"), "fast.fio"],
        dir,
        &[],
        60,
    );
    let by_flexio = run_bounded(
        &fio,
        &["--eta=never", &format!("--client={x}"), "fast.fio"],
        dir,
        &[],
        60,
    );
    assert_eq!(
        by_flexio.code, 0,
        "{}{}",
        by_flexio.stdout, by_flexio.stderr
    );
    assert!(
        by_flexio.stdout.contains("fio=flexio-"),
        "{}",
        by_flexio.stdout
    );
    assert_eq!(
        client_shapes(&by_fio.stdout),
        client_shapes(&by_flexio.stdout),
        "fio's client prints a flexio server's run as a fio server's\n--- fio server\n{}\n--- flexio server\n{}",
        by_fio.stdout,
        by_flexio.stdout
    );
    // JSON through fio's client.
    let r = run_bounded(
        &fio,
        &[&format!("--client={x}"), "--output-format=json", "fast.fio"],
        dir,
        &[],
        60,
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let j = json_of(&r.stdout);
    let job = &j["client_stats"][0];
    assert_eq!(job["jobname"], "fast");
    assert_eq!(job["read"]["total_ios"].as_u64(), Some(4096));
    assert_eq!(job["job options"]["size"], "16m");
}

#[test]
fn flexio_client_drives_fio_servers() {
    let Some(fio) = fio_bin() else { return };
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    std::fs::write(dir.join("fast.fio"), FAST).unwrap();
    let (a, b) = (sock(dir, "a"), format!("ip:127.0.0.1,{}", free_port()));
    let _s = [server(&fio, &a, dir), server(&fio, &b, dir)];
    std::fs::write(dir.join("hosts"), format!("{a}\n{b}\n")).unwrap();
    let r = run_bounded(&flexio_bin(), &["--client=hosts", "fast.fio"], dir, &[], 60);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert_eq!(r.stdout.matches("fio=fio-3.33").count(), 2, "{}", r.stdout);
    // Each server's block reads as fio's own client shows it.
    let by_fio = run_bounded(
        &fio,
        &["--eta=never", "--client=hosts", "fast.fio"],
        dir,
        &[],
        60,
    );
    // The first server's block: its job and group lines (server TEXT lines, whose
    // interleaving depends on timing, left out).
    let block = |s: &str| -> Vec<String> {
        let i = s.find("fast: (groupid=").expect("a job block");
        let g = i + s[i..].find("Run status group").expect("a group line");
        let e = g + s[g..].find("\n   READ").expect("a READ line");
        let e = e + 1 + s[e + 1..].find('\n').unwrap_or(s.len() - e - 1);
        let kept: String = s[i..e]
            .lines()
            .filter(|l| !l.starts_with('<'))
            .map(|l| format!("{l}\n"))
            .collect();
        client_shapes(&kept)
    };
    assert_eq!(
        block(&by_fio.stdout),
        block(&r.stdout),
        "--- fio\n{}\n--- flexio\n{}",
        by_fio.stdout,
        r.stdout
    );
    let r = run_bounded(
        &flexio_bin(),
        &["--client=hosts", "fast.fio", "--output-format=json"],
        dir,
        &[],
        60,
    );
    let j = json_of(&r.stdout);
    let cs = j["client_stats"].as_array().unwrap();
    assert_eq!(cs.len(), 3);
    assert_eq!(cs[2]["jobname"], "All clients");
    assert_eq!(cs[2]["read"]["total_ios"].as_u64(), Some(8192));
}

/// A long job on a live flexio server, with `bad` as the second host: the run must end
/// within `limit` naming the bad host, keep the live host's (partial) results, and fail.
fn fails_fast(bad: &str, dir: &Path, limit: Duration, expect: &str, live_results: bool) {
    std::fs::write(
        dir.join("long.fio"),
        "[long]\nioengine=null\nrw=read\nbs=4k\nsize=1g\ntime_based\nruntime=60\n",
    )
    .unwrap();
    let good = sock(dir, "good");
    let _s = server(&flexio_bin(), &good, dir);
    std::fs::write(dir.join("hosts"), format!("{good}\n{bad}\n")).unwrap();
    let t = Instant::now();
    let r = run_bounded(
        &flexio_bin(),
        &["--client=hosts", "long.fio", "--output-format=json"],
        dir,
        &[],
        60,
    );
    let took = t.elapsed();
    assert!(
        took < limit,
        "the run took {took:?} (limit {limit:?})\n{}",
        r.stderr
    );
    assert_ne!(r.code, 0);
    assert!(
        r.stderr.contains(bad.trim_start_matches("sock:")) || r.stderr.contains(bad),
        "names the host: {}",
        r.stderr
    );
    assert!(
        r.stderr.contains(expect),
        "says why ({expect}): {}",
        r.stderr
    );
    assert!(
        r.stderr.contains("results shown are partial"),
        "{}",
        r.stderr
    );
    let j = json_of(&r.stdout);
    assert_eq!(j["flexio"]["status"], "partial");
    let cs = j["client_stats"].as_array().unwrap();
    if !live_results {
        // Stopped before its run began: nothing ran, so nothing to report.
        return;
    }
    // The live host stopped early and still reported.
    assert_eq!(cs[0]["jobname"], "long");
    assert!(cs[0]["read"]["runtime"].as_u64().unwrap() < 30_000);
}

#[test]
fn unreachable_server_ends_the_run() {
    let d = tempfile::tempdir().unwrap();
    let bad = sock(d.path(), "nobody-listens");
    fails_fast(
        &bad,
        d.path(),
        Duration::from_secs(15),
        "cannot connect",
        false,
    );
}

/// A "server" that accepts and then says nothing.
fn mute_server(path: PathBuf) -> std::thread::JoinHandle<()> {
    let l = UnixListener::bind(&path).unwrap();
    std::thread::spawn(move || {
        if let Ok((mut s, _)) = l.accept() {
            let mut b = [0u8; 4096];
            let t = Instant::now();
            s.set_read_timeout(Some(Duration::from_millis(100)))
                .unwrap();
            while t.elapsed() < Duration::from_secs(20) {
                if let Ok(0) = s.read(&mut b) {
                    break;
                }
            }
        }
    })
}

#[test]
fn hung_server_ends_the_run() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("mute");
    let _h = mute_server(p.clone());
    fails_fast(
        &format!("sock:{}", p.display()),
        d.path(),
        Duration::from_secs(20),
        "no answer for 5 s",
        true,
    );
}

#[test]
fn wrong_protocol_version_is_named() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("v120");
    let l = UnixListener::bind(&p).unwrap();
    let _h = std::thread::spawn(move || {
        if let Ok((mut s, _)) = l.accept() {
            // A QUIT frame as fio 3.42 (protocol 120) would send it.
            let mut h = flexio_remote::frame::Header::new(1, 0, 0, &[]);
            h.version = 120;
            h.cmd_crc = flexio_remote::crc::crc16(&h.to_bytes()[..20]);
            let _ = s.write_all(&h.to_bytes());
            std::thread::sleep(Duration::from_secs(3));
        }
    });
    fails_fast(
        &format!("sock:{}", p.display()),
        d.path(),
        Duration::from_secs(15),
        "peer speaks version 120 (fio 3.42), flexio speaks version 97",
        false,
    );
}

#[test]
fn server_killed_mid_run_ends_the_run() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    let victim = sock(dir, "victim");
    let mut s = server(&flexio_bin(), &victim, dir);
    let pid = s.0.id();
    let killer = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_secs(2));
        common::send_signal(pid, "KILL");
    });
    fails_fast(&victim, dir, Duration::from_secs(15), "disconnected", true);
    killer.join().unwrap();
    let _ = s.0.wait();
}

#[test]
fn daemonized_server_writes_and_removes_its_pid_file() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    let addr = sock(dir, "daemon");
    let pidfile = dir.join("flexio.pid");
    let r = run_bounded(
        &flexio_bin(),
        &[
            &format!("--server={addr}"),
            &format!("--daemonize={}", pidfile.display()),
        ],
        dir,
        &[],
        20,
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let pid: u32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    wait_for(&dir.join("daemon"));
    std::fs::write(dir.join("fast.fio"), FAST).unwrap();
    let c = run_bounded(
        &flexio_bin(),
        &[&format!("--client={addr}"), "fast.fio"],
        dir,
        &[],
        60,
    );
    assert_eq!(c.code, 0, "{}{}", c.stdout, c.stderr);
    // A second daemon on the same pid file refuses to start.
    let again = run_bounded(
        &flexio_bin(),
        &[
            &format!("--server={}", sock(dir, "d2")),
            &format!("--daemonize={}", pidfile.display()),
        ],
        dir,
        &[],
        20,
    );
    assert_ne!(again.code, 0);
    assert!(
        again.stderr.contains("names a running process"),
        "{}",
        again.stderr
    );
    common::send_signal(pid, "TERM");
    let t = Instant::now();
    while pidfile.exists() {
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "pid file left behind"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn bad_invocations_are_refused() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    let r = run_bounded(&flexio_bin(), &["--server", "--client=x"], dir, &[], 20);
    assert_ne!(r.code, 0);
    assert!(
        r.stderr.contains("can't be both client and server"),
        "{}",
        r.stderr
    );
    let r = run_bounded(
        &flexio_bin(),
        &["--client=sock:/nonexistent", "--name=x", "--ioengine=null"],
        dir,
        &[],
        20,
    );
    assert_ne!(r.code, 0);
    assert!(r.stderr.contains("not sent to servers"), "{}", r.stderr);
    let r = run_bounded(&flexio_bin(), &["--server=ip:127.0.0.1,0"], dir, &[], 20);
    assert_ne!(r.code, 0);
    assert!(r.stderr.contains("bad server port"), "{}", r.stderr);
}

/// A client that speaks another protocol version (fio 3.42's 120): the flexio server says
/// why on its stderr and to the client (a TEXT framed in version 97, then QUIT), naming
/// both versions, and serves the next client as usual.
#[test]
fn server_names_both_versions_to_a_client_of_another_version() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    let addr = sock(dir, "v");
    let _s = server(&flexio_bin(), &addr, dir);
    let path = addr.trim_start_matches("sock:");
    let mut c = std::os::unix::net::UnixStream::connect(path).unwrap();
    let probe = flexio_remote::Message::Probe(flexio_remote::msg::Probe {
        flags: 0,
        server: "sock".into(),
    });
    let mut frames = probe.to_frames(7);
    // Version 120 in the header, its CRC recomputed.
    frames[0..2].copy_from_slice(&120u16.to_le_bytes());
    let crc = flexio_remote::crc::crc16(&frames[..20]);
    frames[20..22].copy_from_slice(&crc.to_le_bytes());
    c.write_all(&frames).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut got = Vec::new();
    let _ = c.read_to_end(&mut got);
    let mut dec = flexio_remote::Decoder::default();
    dec.push(&got);
    let mut texts = String::new();
    let mut quit = false;
    while let Ok(Some(raw)) = dec.next_message() {
        match flexio_remote::Message::decode(&raw, flexio_remote::Sender::Server) {
            Ok(flexio_remote::Message::Text(t)) => texts.push_str(&t.text),
            Ok(flexio_remote::Message::Quit) => quit = true,
            _ => {}
        }
    }
    let want = "the peer speaks version 120 (fio 3.42), flexio speaks version 97 (fio 3.32/3.33)";
    assert!(texts.contains(want), "to the client: {texts:?}");
    assert!(quit, "the server ends the session with QUIT");
    let log = std::fs::read_to_string(
        dir.join(format!("server-{}.log", addr.replace(['/', ':', ','], "_"))),
    )
    .unwrap();
    assert!(log.contains(want), "on the server's stderr: {log}");
    // The server still serves a client of its own version.
    std::fs::write(dir.join("fast.fio"), FAST).unwrap();
    let r = run_bounded(
        &flexio_bin(),
        &[&format!("--client={addr}"), "fast.fio"],
        dir,
        &[],
        60,
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
}

/// A 5 s job at a fixed rate (10 MiB/s): long enough for ETA replies past fio's first 3 s
/// (when the ETA becomes known), light on the CPU.
const PACED: &str =
    "[paced]\nioengine=null\nrw=read\nbs=4k\nsize=1g\ntime_based\nruntime=5\nrate=10m\n";

/// fio's status line with a known ETA (`Jobs: 1 (f=1)...: [R(1)][60.0%][r=...][r=... IOPS][eta 00m:02s]`).
fn eta_lines(text: &str, jobs: usize) -> Vec<String> {
    let re = regex::Regex::new(&format!(
        r"Jobs: {jobs} \(f={jobs}\)[^:]*: \[R\({jobs}\)\]\[\d+\.\d%\]\[r=[^\]]+\]\[r=[^\]]+ IOPS\]\[eta \d\dm:\d\ds\]"
    ))
    .unwrap();
    re.find_iter(text).map(|m| m.as_str().to_string()).collect()
}

#[test]
fn fio_client_shows_a_flexio_servers_eta() {
    let Some(fio) = fio_bin() else { return };
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    std::fs::write(dir.join("paced.fio"), PACED).unwrap();
    let x = sock(dir, "flexio");
    let _s = server(&flexio_bin(), &x, dir);
    let r = run_bounded(
        &fio,
        &["--eta=always", &format!("--client={x}"), "paced.fio"],
        dir,
        &[],
        60,
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let lines = eta_lines(&r.stdout, 1);
    assert!(
        lines.len() >= 2,
        "fio's client shows the server's progress: {}",
        r.stdout
    );
    for bad in ["unable to find matching tag", "timeout", "error", "bad"] {
        assert!(
            !r.stderr.contains(bad) && !r.stdout.contains(bad),
            "{bad}: {}{}",
            r.stdout,
            r.stderr
        );
    }
}

/// The MiB/s of a status line's `[r=...]` part.
fn read_mib_s(line: &str) -> f64 {
    let r = &line[line.find("[r=").unwrap() + 3..];
    let v = &r[..r.find(']').unwrap()];
    let (num, unit) = v.split_at(v.find(|c: char| c.is_alphabetic()).unwrap());
    let n: f64 = num.parse().unwrap();
    match unit {
        "KiB/s" => n / 1024.0,
        "MiB/s" => n,
        "GiB/s" => n * 1024.0,
        _ => panic!("unit {unit} in {line}"),
    }
}

#[test]
fn flexio_client_shows_the_summed_status_line() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    std::fs::write(dir.join("paced.fio"), PACED).unwrap();
    let (a, b) = (sock(dir, "a"), sock(dir, "b"));
    let _s = [
        server(&flexio_bin(), &a, dir),
        server(&flexio_bin(), &b, dir),
    ];
    std::fs::write(dir.join("hosts"), format!("{a}\n{b}\n")).unwrap();
    let r = run_bounded(
        &flexio_bin(),
        &[
            "--client=hosts",
            "--eta=always",
            "--eta-newline=1",
            "paced.fio",
        ],
        dir,
        &[],
        60,
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    // Both servers' jobs, states and rates in one line, a line a second (--eta-newline).
    assert!(
        r.stderr.matches("Jobs: 2 (f=2)").count() >= 3,
        "{:?}",
        r.stderr
    );
    let lines = eta_lines(&r.stderr, 2);
    assert!(!lines.is_empty(), "status lines on stderr: {:?}", r.stderr);
    assert!(
        lines.iter().any(|l| read_mib_s(l) > 10.5),
        "the rates are summed (each server is capped at 10 MiB/s): {lines:?}"
    );
    assert!(!r.stdout.contains("Jobs: "), "{}", r.stdout);
    // --eta=never: no status line.
    let r = run_bounded(
        &flexio_bin(),
        &["--client=hosts", "--eta=never", "paced.fio"],
        dir,
        &[],
        60,
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(!r.stderr.contains("Jobs: "), "{}", r.stderr);
}

/// Host A reads fast (20 MiB/s) for 2 s, then slowly (2 MiB/s) for 2 s; host B reads
/// slowly for 2 s. The first-done window (until B ends, ~2 s) holds A's fast phase: the
/// ETA replies place it there, where a constant rate over A's 4 s would put half of A's
/// bytes. Each host starts at its first SERVER_START.
#[test]
fn windows_follow_the_eta_progress() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    let base = "ioengine=null\nrw=read\nbs=4k\nsize=1g\ntime_based\nruntime=2\n";
    std::fs::write(
        dir.join("a.fio"),
        format!("[fast]\n{base}rate=20m\n[slow]\nstonewall\n{base}rate=2m\n"),
    )
    .unwrap();
    std::fs::write(dir.join("b.fio"), format!("[slow]\n{base}rate=2m\n")).unwrap();
    let (a, b) = (sock(dir, "a"), sock(dir, "b"));
    let _s = [
        server(&flexio_bin(), &a, dir),
        server(&flexio_bin(), &b, dir),
    ];
    let r = run_bounded(
        &flexio_bin(),
        &[
            &format!("--client={a}"),
            "a.fio",
            &format!("--client={b}"),
            "b.fio",
            "--output-format=json,normal",
        ],
        dir,
        &[],
        60,
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stdout.contains("start measured, transfers measured ("),
        "{}",
        r.stdout
    );
    let j = json_of(&r.stdout[r.stdout.find("{\n").expect("JSON document")..]);
    let cs = j["client_stats"].as_array().unwrap();
    let bytes = |i: usize| cs[i]["read"]["io_bytes"].as_u64().unwrap() as f64;
    let (a_fast, a_slow, b_slow) = (bytes(0), bytes(1), bytes(2));
    // fio's JSON names each server by its address (here the socket's path).
    let path = |s: &str| s.trim_start_matches("sock:").to_string();
    assert_eq!(cs[1]["hostname"], path(&a).as_str());
    assert_eq!(cs[2]["hostname"], path(&b).as_str());
    let fx = &j["flexio"];
    for h in fx["hosts"].as_array().unwrap() {
        assert_eq!(h["start_measured"], 1, "{h}");
        assert!(h["progress_points"].as_u64().unwrap() >= 1, "{h}");
    }
    let cl = &fx["cluster"];
    assert_eq!(cl["rate_estimated"], 0);
    assert_eq!(cl["time_base"], "arrival");
    let first = cl["first_done"]["read"]["io_bytes"].as_u64().unwrap() as f64;
    let constant = (a_fast + a_slow) / 2.0 + b_slow;
    assert!(
        first > 0.8 * (a_fast + b_slow) && first > constant * 1.2,
        "first-done window: {first} bytes; A's fast phase + B = {}, constant-rate guess = {constant}",
        a_fast + b_slow
    );
    let last = cl["last_done"]["read"]["io_bytes"].as_u64().unwrap() as f64;
    assert_eq!(last, a_fast + a_slow + b_slow);
}

/// A host without results listed first (it never answers, so it fails after 5 s, when the
/// live host has long finished): the live host's cluster detail stays with it.
#[test]
fn a_dead_first_host_keeps_the_hosts_json_in_place() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    std::fs::write(
        dir.join("two.fio"),
        "[a]\nioengine=null\nrw=read\nbs=4k\nsize=8m\n[b]\nioengine=null\nrw=write\nbs=4k\nsize=4m\n",
    )
    .unwrap();
    let mute = dir.join("mute");
    let _h = mute_server(mute.clone());
    let good = sock(dir, "good");
    let _s = server(&flexio_bin(), &good, dir);
    std::fs::write(
        dir.join("hosts"),
        format!("sock:{}\n{good}\n", mute.display()),
    )
    .unwrap();
    let r = run_bounded(
        &flexio_bin(),
        &["--client=hosts", "two.fio", "--output-format=json,normal"],
        dir,
        &[],
        60,
    );
    assert_ne!(r.code, 0);
    let j = json_of(&r.stdout[r.stdout.find("{\n").expect("JSON document")..]);
    let hosts = j["flexio"]["hosts"].as_array().unwrap();
    assert_eq!(hosts.len(), 2);
    assert_eq!(hosts[0]["status"], "partial");
    assert_eq!(hosts[0]["reports"], 0);
    assert!(
        hosts[0].get("runtime_ms").is_none(),
        "no cluster detail for a host without results: {}",
        hosts[0]
    );
    assert_eq!(hosts[1]["status"], "ok");
    assert_eq!(hosts[1]["address"], good.as_str());
    assert_eq!(
        hosts[1]["io_bytes"],
        serde_json::json!([8 << 20, 4 << 20, 0]),
        "{}",
        hosts[1]
    );
    // The text summary names the live host only, by its address.
    let cl = &r.stdout[r.stdout.find("Cluster (flexio)").expect("cluster block")..];
    let cl = &cl[..cl.find("{\n").unwrap_or(cl.len())];
    assert!(cl.contains(&format!("({good})")), "{cl}");
    assert!(!cl.contains("mute"), "{cl}");
}

/// `--remote-config`: the servers open the job file themselves (LOAD_FILE). The path is
/// relative and names different files on the client's side and the servers' side (the
/// servers' working directory), so the results show which one ran: the servers' (8 MiB,
/// 2048 reads), not the client's (4 MiB). A fio 3.33 server on TCP loopback and a flexio
/// server, driven by flexio's client; and fio's client sending LOAD_FILE to flexio's server.
#[test]
fn remote_config_is_opened_by_the_servers() {
    let Some(fio) = fio_bin() else { return };
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    let srv = dir.join("srv");
    std::fs::create_dir(&srv).unwrap();
    let job = |size: &str| format!("[rc]\nioengine=null\nrw=read\nbs=4k\nsize={size}\n");
    std::fs::write(srv.join("rc.fio"), job("8m")).unwrap();
    std::fs::write(dir.join("rc.fio"), job("4m")).unwrap();
    let f = format!("ip:127.0.0.1,{}", free_port());
    let x = sock(dir, "flexio");
    let _s = [server(&fio, &f, &srv), server(&flexio_bin(), &x, &srv)];
    let r = run_bounded(
        &flexio_bin(),
        &[
            &format!("--client={f}"),
            "--remote-config=rc.fio",
            &format!("--client={x}"),
            "--remote-config=rc.fio",
            "--output-format=json",
        ],
        dir,
        &[],
        60,
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let j = json_of(&r.stdout);
    let cs = j["client_stats"].as_array().unwrap();
    assert_eq!(cs.len(), 3, "{j}");
    for c in &cs[..2] {
        assert_eq!(c["jobname"], "rc");
        assert_eq!(c["read"]["total_ios"].as_u64(), Some(2048), "{c}");
    }
    assert_eq!(
        cs[0]["hostname"], "127.0.0.1",
        "fio's JSON names the address"
    );
    assert_eq!(cs[2]["jobname"], "All clients");
    assert_eq!(cs[2]["read"]["io_bytes"].as_u64(), Some(16 << 20));
    let fh = j["flexio"]["hosts"].as_array().unwrap();
    assert!(
        fh[0]["name"].as_str().is_some() && fh.iter().all(|h| h["status"] == "ok"),
        "{j}"
    );
    // fio's client, LOAD_FILE to flexio's server.
    let r = run_bounded(
        &fio,
        &[
            &format!("--client={x}"),
            "--remote-config=rc.fio",
            "--output-format=json",
        ],
        dir,
        &[],
        60,
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let j = json_of(&r.stdout);
    assert_eq!(
        j["client_stats"][0]["read"]["total_ios"].as_u64(),
        Some(2048)
    );
    // A path the server cannot open: an error naming it, no run.
    let r = run_bounded(
        &flexio_bin(),
        &[&format!("--client={x}"), "--remote-config=missing.fio"],
        dir,
        &[],
        60,
    );
    assert_ne!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(
        format!("{}{}", r.stdout, r.stderr).contains("missing.fio"),
        "{}{}",
        r.stdout,
        r.stderr
    );
}

/// The "All clients" job block of a client's normal output (up to the next line that is
/// not indented: flexio's Cluster section, or the end).
fn all_clients_block(out: &str) -> String {
    let i = out.find("All clients: (").expect("an All clients block");
    let mut block = String::new();
    for (n, l) in out[i..].lines().enumerate() {
        if n > 0 && !l.starts_with(' ') {
            break;
        }
        block.push_str(l);
        block.push('\n');
    }
    block
}

/// fio 3.33's client driving two flexio servers prints and writes an "All clients"
/// aggregate as it does for two fio servers: the same line structure, the sums right, and
/// its JSON parses.
#[test]
fn fio_client_aggregates_two_flexio_servers() {
    let Some(fio) = fio_bin() else { return };
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    std::fs::write(dir.join("fast.fio"), FAST).unwrap();
    let (x1, x2, f1, f2) = (
        sock(dir, "x1"),
        sock(dir, "x2"),
        sock(dir, "f1"),
        sock(dir, "f2"),
    );
    let _s = [
        server(&flexio_bin(), &x1, dir),
        server(&flexio_bin(), &x2, dir),
        server(&fio, &f1, dir),
        server(&fio, &f2, dir),
    ];
    std::fs::write(dir.join("flexios"), format!("{x1}\n{x2}\n")).unwrap();
    std::fs::write(dir.join("fios"), format!("{f1}\n{f2}\n")).unwrap();
    let run = |hosts: &str, json: bool| {
        let mut a = vec!["--eta=never", hosts, "fast.fio"];
        if json {
            a.push("--output-format=json");
        }
        let r = run_bounded(&fio, &a, dir, &[], 60);
        assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
        r.stdout
    };
    let on_flexio = run("--client=flexios", false);
    let on_fio = run("--client=fios", false);
    let (bx, bf) = (all_clients_block(&on_flexio), all_clients_block(&on_fio));
    assert!(
        bx.starts_with("All clients: (groupid=0, jobs=2): err= 0: pid=0: "),
        "{bx}"
    );
    assert!(
        bx.contains("issued rwts: total=8192,0,0,0 short=0,0,0,0 dropped=0,0,0,0"),
        "{bx}"
    );
    assert_eq!(
        client_shapes(&bx),
        client_shapes(&bf),
        "--- fio's client on flexio servers\n{bx}--- on fio servers\n{bf}"
    );
    let j = json_of(&run("--client=flexios", true));
    let cs = j["client_stats"].as_array().unwrap();
    assert_eq!(cs.len(), 3, "{j}");
    assert_eq!(cs[2]["jobname"], "All clients");
    assert_eq!(cs[2]["read"]["total_ios"].as_u64(), Some(8192));
    assert_eq!(cs[2]["read"]["io_bytes"].as_u64(), Some(32 << 20));
    assert_eq!(
        cs[2]["read"]["io_bytes"].as_u64(),
        Some(
            cs[0]["read"]["io_bytes"].as_u64().unwrap()
                + cs[1]["read"]["io_bytes"].as_u64().unwrap()
        )
    );
}

/// flexio's "All clients" block and fio 3.33's, both clients on the same two fio servers:
/// line for line the same structure, except flexio's percentiles of the pooled histograms
/// (their header and rows), which fio does not print for the aggregate.
#[test]
fn all_clients_block_is_laid_out_as_fios() {
    let Some(fio) = fio_bin() else { return };
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    std::fs::write(dir.join("fast.fio"), FAST).unwrap();
    let (f1, f2) = (sock(dir, "f1"), sock(dir, "f2"));
    let _s = [server(&fio, &f1, dir), server(&fio, &f2, dir)];
    std::fs::write(dir.join("fios"), format!("{f1}\n{f2}\n")).unwrap();
    let by_fio = run_bounded(
        &fio,
        &["--eta=never", "--client=fios", "fast.fio"],
        dir,
        &[],
        60,
    );
    assert_eq!(by_fio.code, 0, "{}{}", by_fio.stdout, by_fio.stderr);
    let by_flexio = run_bounded(&flexio_bin(), &["--client=fios", "fast.fio"], dir, &[], 60);
    assert_eq!(
        by_flexio.code, 0,
        "{}{}",
        by_flexio.stdout, by_flexio.stderr
    );
    let (bf, bx) = (
        all_clients_block(&by_fio.stdout),
        all_clients_block(&by_flexio.stdout),
    );
    let flexio_only = |s: &String| s == "PCT_ROW" || s.starts_with("    clat percentiles");
    let xs: Vec<String> = client_shapes(&bx)
        .into_iter()
        .filter(|s| !flexio_only(s))
        .collect();
    assert!(
        client_shapes(&bx).iter().any(flexio_only),
        "flexio shows the pooled percentiles: {bx}"
    );
    assert_eq!(
        client_shapes(&bf),
        xs,
        "--- fio's client\n{bf}--- flexio's client\n{bx}"
    );
}

/// `flexio report` and `flexio compare` read a client's merged JSON: one job per host's
/// report, named job@host (fio's JSON hostname: the server's address), and "All clients".
#[test]
fn report_and_compare_read_client_json() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    std::fs::write(dir.join("fast.fio"), FAST).unwrap();
    let (a, b) = (sock(dir, "a"), sock(dir, "b"));
    let _s = [
        server(&flexio_bin(), &a, dir),
        server(&flexio_bin(), &b, dir),
    ];
    std::fs::write(dir.join("hosts"), format!("{a}\n{b}\n")).unwrap();
    for out in ["one.json", "two.json"] {
        let r = run_bounded(
            &flexio_bin(),
            &[
                "--client=hosts",
                "fast.fio",
                "--output-format=json+",
                &format!("--output={out}"),
            ],
            dir,
            &[],
            60,
        );
        assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    }
    let names: Vec<String> = [&a, &b]
        .iter()
        .map(|s| format!("fast@{}", s.trim_start_matches("sock:")))
        .collect();
    let r = run_bounded(
        &flexio_bin(),
        &["report", "one.json", "two.json", "-o", "r.html"],
        dir,
        &[],
        60,
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let html = std::fs::read_to_string(dir.join("r.html")).unwrap();
    for n in names.iter().map(|s| s.as_str()).chain(["All clients"]) {
        assert!(html.contains(n), "the report shows {n}");
    }
    let r = run_bounded(
        &flexio_bin(),
        &["compare", "one.json", "two.json"],
        dir,
        &[],
        60,
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    for n in names.iter().map(|s| s.as_str()).chain(["All clients"]) {
        assert!(
            r.stdout.contains(&format!("\n{n} (read): 1 vs 1 result")),
            "compare pairs {n}: {}",
            r.stdout
        );
    }
}

/// A server whose clock is 30 s ahead (the test-only FLEXIO_TEST_CLOCK_SKEW_MS shifts the
/// stamps of its TEXT messages) beside one on time: the client measures each offset (+30 s
/// and 0, within their uncertainty), and the windows, placed by when messages arrived,
/// are not moved by it: both hosts start together and the last-done window is the run's
/// length, not 30 s longer.
#[test]
fn a_skewed_server_clock_is_measured_and_does_not_move_the_windows() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    std::fs::write(
        dir.join("paced.fio"),
        PACED.replace("runtime=5", "runtime=2"),
    )
    .unwrap();
    let (a, b) = (sock(dir, "ahead"), sock(dir, "ontime"));
    let _s = [
        server_env(
            &flexio_bin(),
            &a,
            dir,
            &[("FLEXIO_TEST_CLOCK_SKEW_MS", "30000")],
        ),
        server(&flexio_bin(), &b, dir),
    ];
    std::fs::write(dir.join("hosts"), format!("{a}\n{b}\n")).unwrap();
    let r = run_bounded(
        &flexio_bin(),
        &["--client=hosts", "paced.fio", "--output-format=json,normal"],
        dir,
        &[],
        60,
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let j = json_of(&r.stdout[r.stdout.find("{\n").expect("JSON document")..]);
    let hosts = j["flexio"]["hosts"].as_array().unwrap();
    let off = |i: usize| {
        (
            hosts[i]["clock_offset_ns"].as_i64().unwrap() as f64 / 1e9,
            hosts[i]["clock_offset_error_ns"].as_i64().unwrap() as f64 / 1e9,
        )
    };
    let ((o0, e0), (o1, e1)) = (off(0), off(1));
    assert!((o0 - 30.0).abs() <= e0 + 0.05, "ahead: {o0} s ± {e0}");
    assert!(o1.abs() <= e1 + 0.05, "on time: {o1} s ± {e1}");
    assert!(r.stdout.contains("clock offset +30"), "{}", r.stdout);
    let start = |i: usize| hosts[i]["start_ns"].as_u64().unwrap() as f64 / 1e9;
    assert!((start(0) - start(1)).abs() < 1.0, "{hosts:?}");
    let w = &j["flexio"]["cluster"]["last_done"];
    let len = (w["end_ns"].as_u64().unwrap() - w["start_ns"].as_u64().unwrap()) as f64 / 1e9;
    assert!((1.9..10.0).contains(&len), "last-done window {len} s");
    assert!(j["flexio"]["cluster"]["common"].is_object());
}

/// A job file with a global section and two jobs: each job's own options apart from it.
const WITH_GLOBAL: &str = "[global]\nioengine=null\nbs=8k\nsize=4m\nthread\nramp_time=0\n\
                           iodepth_batch=1\n\n[a]\nrw=read\n\n[b]\nrw=randread\nbs=4k\n";

/// Option name and value pairs, in their order.
type Options = Vec<(String, String)>;

/// The client's JSON "global options" and each job's "job options", in their order.
fn client_options(out: &str) -> (Options, Vec<Options>) {
    let j = json_of(out);
    let pairs = |v: &Value| -> Options {
        v.as_object()
            .map(|m| {
                m.iter()
                    .map(|(k, v)| (k.clone(), v.as_str().unwrap_or("?").to_string()))
                    .collect()
            })
            .unwrap_or_default()
    };
    let jobs = j["client_stats"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["jobname"] != "All clients")
        .map(|c| pairs(&c["job options"]))
        .collect();
    (pairs(&j["global options"]), jobs)
}

/// Issue 28, item 18: whichever client and server (flexio or fio 3.33), the client's JSON
/// has the job file's global section as "global options" and each job's own lines as its
/// "job options", as fio's client prints them (flag options such as `thread` have no
/// value in fio 3.33's protocol and are left out, as fio leaves them out).
#[test]
fn client_json_keeps_the_global_section() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    std::fs::write(dir.join("g.fio"), WITH_GLOBAL).unwrap();
    let x = sock(dir, "flexio");
    let _flexio = server(&flexio_bin(), &x, dir);
    let run = |client: &Path, addr: &str| {
        let r = run_bounded(
            client,
            &[&format!("--client={addr}"), "--output-format=json", "g.fio"],
            dir,
            &[],
            60,
        );
        assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
        client_options(&r.stdout)
    };
    let own = run(&flexio_bin(), &x);
    let s = |v: &[(&str, &str)]| -> Options {
        v.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    };
    assert_eq!(
        own.0,
        s(&[
            ("ioengine", "null"),
            ("bs", "8k"),
            ("size", "4m"),
            ("ramp_time", "0"),
            ("iodepth_batch", "1"),
        ]),
        "global options"
    );
    assert_eq!(
        own.1,
        vec![s(&[("rw", "read")]), s(&[("rw", "randread"), ("bs", "4k")])],
        "job options"
    );
    let Some(fio) = fio_bin() else { return };
    let f = sock(dir, "fio");
    let _fio = server(&fio, &f, dir);
    assert_eq!(run(&fio, &f), own, "fio client, fio server");
    assert_eq!(run(&fio, &x), own, "fio client, flexio server");
    assert_eq!(run(&flexio_bin(), &f), own, "flexio client, fio server");
}
