//! Client/server mode end to end: flexio servers driven by flexio's client (2 and 4 hosts,
//! Unix sockets and TCP loopback), the "All clients" percentiles checked against the
//! pooled per-host histograms, interoperation with fio 3.33 both ways, and servers that
//! fail on purpose (unreachable, hung, killed mid-run, wrong protocol version).

mod common;

use common::{fio_bin, flexio_bin, json_of, run_bounded, shapes};
use serde_json::Value;
use std::io::{Read, Write};
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
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

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Start a server (`bin --server=addr`) in `dir`; wait until it accepts connections.
fn server(bin: &Path, addr: &str, dir: &Path) -> Server {
    let log = std::fs::File::create(
        dir.join(format!("server-{}.log", addr.replace(['/', ':', ','], "_"))),
    )
    .unwrap();
    let child = Command::new(bin)
        .arg(format!("--server={addr}"))
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(log.try_clone().unwrap())
        .stderr(log)
        .spawn()
        .expect("start server");
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
