//! `fio --client` (fio 3.33) connects to a small fake server built on flexio's codec. The
//! server decodes everything the client sends (probe, job line, job file, run, ETA
//! requests) and answers with a result built by construction: a flexio `ThreadStats`
//! filled through its recording methods, converted to fio's thread stats. fio's client
//! must print a normal report (and a JSON one) whose numbers are the ones sent: the same
//! lines and values flexio's own formatters print for that result.

mod common;

use common::{fio, Guard};
use flexio_remote::convert::{wire_run_of, WireRun};
use flexio_remote::msg::{Eta, ProbeReply, Start, Stop, Text, CLIENT_TYPE_CLI, LOG_INFO};
use flexio_remote::pack::{AddJob, OptionsPack, Value};
use flexio_remote::{Conn, Message, Sender};
use flexio_stats::report::{build, DiskReport, ReportParams, RunReport, Unified};
use flexio_stats::thread::{StatsConfig, ThreadStats};
use flexio_stats::JobResult;
use std::net::TcpListener;
use std::process::Command;
use std::time::{Duration, Instant};

const JOB: &str = "[remote]\nioengine=null\nrw=randrw\nrwmixread=70\nbs=4k\nsize=40m\n";

/// A job's results as a flexio job thread would record them: 7000 reads and 3000 writes
/// with latencies spread from 20 µs to about 5 ms, bandwidth and IOPS samples, CPU use.
fn job_result() -> JobResult {
    let mut s = ThreadStats::new(StatsConfig {
        clat_hist: true,
        ..Default::default()
    });
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    for i in 0..10_000u64 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let d = if i % 10 < 7 { 0 } else { 1 };
        let clat = 20_000 + x % 1_000_000 + if i % 50 == 0 { 4_000_000 } else { 0 };
        s.add_clat(d, clat);
        s.add_lat(d, clat + 700);
        s.dirs[d].io_bytes += 4096;
        s.dirs[d].total_ios += 1;
        s.mark_depth(1, 1);
        s.mark_submit(1);
        s.mark_complete(1);
    }
    for (d, run, bws) in [
        (0usize, 2000u64, [13_900u64, 14_100, 14_050, 13_950]),
        (1, 1990, [6_000, 6_010, 5_990, 6_002]),
    ] {
        s.dirs[d].runtime_ms = run;
        for b in bws {
            s.dirs[d].bw.add(b);
            s.dirs[d].iops.add(b / 4);
        }
    }
    s.total_run_time_ms = 2001;
    s.usr_time_us = 250_000;
    s.sys_time_us = 810_000;
    s.ctx = 12_345;
    s.minf = 40;
    JobResult {
        name: "remote".into(),
        groupid: 0,
        pid: 4242,
        description: None,
        echo: vec![("rw".into(), "randrw".into())],
        group_reporting: false,
        stats_enabled: true,
        params: ReportParams {
            kb_base: 1024,
            unit_base: 0,
            sig_figs: 4,
            percentile_list: flexio_remote::ts::DEFAULT_PERCENTILES.to_vec(),
            percentile_precision: 2,
            clat_percentiles: true,
            lat_percentiles: false,
            slat_percentiles: false,
            latency_depth: 1,
            continue_on_error: false,
            unified: Unified::None,
            nostats_engine: false,
            latency_target_ns: 0,
            latency_window_us: 0,
            latency_percentile: 100.0,
        },
        stats: s,
        steadystate: None,
    }
}

fn report_of(job: &JobResult) -> RunReport {
    let disks = vec![DiskReport {
        name: "fakedisk".into(),
        read_ios: 7000,
        write_ios: 3000,
        read_merges: 1,
        write_merges: 2,
        read_ticks: 1500,
        write_ticks: 900,
        in_queue: 2400,
        util: 87.5,
        ..Default::default()
    }];
    // fio's client (fio 3.33) prints fio 3.33's layout.
    let mut r = build(
        std::slice::from_ref(job),
        disks,
        vec![("ioengine".into(), "null".into())],
        "fio-3.33",
        (0, 0, "Thu Jan  1 00:00:00 1970".into()),
        2,
    );
    r.set_layout(flexio_stats::report::Layout::Fio333);
    r
}

/// What the fake server received.
#[derive(Default, Debug)]
struct Received {
    probe: bool,
    joblines: Vec<Vec<String>>,
    jobs: Vec<String>,
    run: bool,
    eta_requests: usize,
}

/// Serve one fio client: answer the probe, take the job, run "it" and send `run`.
fn serve(listener: TcpListener, run: WireRun) -> Received {
    listener.set_nonblocking(true).unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    let stream = loop {
        match listener.accept() {
            Ok((s, _)) => break s,
            Err(_) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => panic!("no client connected: {e}"),
        }
    };
    stream.set_nonblocking(false).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    stream
        .set_write_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut c = Conn::new(stream, Sender::Server);
    let mut got = Received::default();
    // Everything up to RUN (the client does not wait for answers in between).
    while !got.run {
        let (tag, m) = c.recv().expect("a client message");
        match m {
            Message::Probe(p) => {
                assert_eq!(p.server, "127.0.0.1");
                got.probe = true;
                let reply = ProbeReply {
                    hostname: "flexio-fake".into(),
                    bigendian: 0,
                    fio_version: "flexio-0.1".into(),
                    os: 1,
                    arch: 1,
                    bpp: 8,
                    cpus: 2,
                    flags: 0,
                };
                c.send(&Message::ProbeReply(reply), tag).unwrap();
            }
            Message::JobLine(l) => {
                assert_eq!(l.client_type as u32, CLIENT_TYPE_CLI);
                got.joblines.push(l.args);
                c.send(
                    &Message::Start(Start {
                        jobs: 0,
                        stat_outputs: 0,
                    }),
                    0,
                )
                .unwrap();
            }
            Message::Job(j) => {
                got.jobs.push(j.text);
                let mut pack = OptionsPack::default();
                pack.set("name", Value::Str("remote".into())).unwrap();
                pack.set("ioengine", Value::Str("null".into())).unwrap();
                c.send(
                    &Message::AddJob(Box::new(AddJob {
                        thread_number: 1,
                        groupid: 0,
                        pack,
                    })),
                    0,
                )
                .unwrap();
                c.send(
                    &Message::Start(Start {
                        jobs: 1,
                        stat_outputs: 1,
                    }),
                    0,
                )
                .unwrap();
            }
            Message::Run => got.run = true,
            m => panic!("unexpected before RUN: {m:?}"),
        }
    }
    let text = |t: &str| {
        Message::Text(Text {
            level: LOG_INFO,
            log_sec: 0,
            log_usec: 0,
            text: t.into(),
        })
    };
    c.send(&text("Starting 1 process\n"), 0).unwrap();
    c.send(&Message::ServerStart, 0).unwrap();
    // Running: answer the client's ETA requests (it polls about once a second) until one
    // has been answered, for at most 5 s.
    let started = Instant::now();
    c.stream
        .set_read_timeout(Some(Duration::from_millis(100)))
        .unwrap();
    while started.elapsed() < Duration::from_secs(5)
        && (got.eta_requests == 0 || started.elapsed() < Duration::from_millis(300))
    {
        match c.recv() {
            Ok((tag, Message::SendEta)) => {
                got.eta_requests += 1;
                let eta = Eta {
                    nr_running: 1,
                    rate: [14_000, 6_000, 0],
                    iops: [3_500, 1_500, 0],
                    elapsed_sec: 1,
                    eta_sec: 1,
                    is_pow2: 1,
                    unit_base: 4,
                    sig_figs: 4,
                    nr_threads: 1,
                    run_str: "m(1)".into(),
                    ..Default::default()
                };
                c.send(&Message::Eta(eta), tag).unwrap();
            }
            Ok((_, m)) => panic!("unexpected while running: {m:?}"),
            Err(flexio_remote::Error::Timeout { .. }) => {}
            Err(e) => panic!("{e}"),
        }
    }
    for o in &run.global_opts {
        c.send(&Message::JobOpt(o.clone()), 0).unwrap();
    }
    for (opts, ts) in &run.reports {
        for o in opts {
            c.send(&Message::JobOpt(o.clone()), 0).unwrap();
        }
        c.send(&Message::Ts(Box::new(ts.clone())), 0).unwrap();
    }
    for g in &run.groups {
        c.send(&Message::Gs(g.clone()), 0).unwrap();
    }
    for d in &run.disks {
        c.send(&Message::Du(d.clone()), 0).unwrap();
    }
    c.send(
        &Message::Stop(Stop {
            error: 0,
            signal: 0,
        }),
        0,
    )
    .unwrap();
    c.send(&Message::Quit, 0).unwrap();
    // The client closes after QUIT.
    c.stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    loop {
        match c.recv() {
            Ok((_, Message::SendEta)) => {}
            Ok((_, m)) => panic!("unexpected after QUIT: {m:?}"),
            Err(flexio_remote::Error::Closed) => break,
            Err(e) => panic!("waiting for the client to close: {e}"),
        }
    }
    got
}

/// Run `fio --client` against the fake server; returns its stdout and what the server got.
fn run_client(extra: &[&str]) -> Option<(String, Received, JobResult, RunReport)> {
    let fio = fio()?;
    let dir = tempfile::tempdir().unwrap();
    let jobfile = dir.path().join("remote.fio");
    std::fs::write(&jobfile, JOB).unwrap();
    let job = job_result();
    let report = report_of(&job);
    let run = wire_run_of(std::slice::from_ref(&job), &report, 2000);
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = std::thread::spawn(move || serve(listener, run));
    let mut cmd = Command::new(fio);
    cmd.arg(format!("--client=ip:127.0.0.1,{port}"))
        .args(extra)
        .arg(&jobfile)
        .current_dir(dir.path());
    let out = Guard::spawn(&mut cmd).wait(Duration::from_secs(30));
    let got = server.join().expect("fake server");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "fio --client failed: {}\nstdout:\n{stdout}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    Some((stdout, got, job, report))
}

#[test]
fn fio_client_prints_the_converted_result() {
    let Some((stdout, got, _job, report)) = run_client(&[]) else {
        return;
    };
    assert!(got.probe && got.run);
    assert_eq!(got.jobs, [JOB]);
    assert!(got.joblines.is_empty(), "{:?}", got.joblines);
    assert!(got.eta_requests >= 1, "the client polls ETA while running");
    assert!(
        stdout
            .contains("hostname=flexio-fake, be=0, 64-bit, os=Linux, arch=x86-64, fio=flexio-0.1"),
        "{stdout}"
    );
    assert!(
        stdout.contains("<flexio-fake> Starting 1 process"),
        "{stdout}"
    );
    assert!(
        stdout.contains("remote: (groupid=0, jobs=1): err= 0: pid=4242"),
        "{stdout}"
    );
    // Every line of flexio's own rendering of the job (after its header), of the group
    // and of the disk appears in fio's output: same numbers, same layout.
    let ours = flexio_output::normal::report(&report);
    let mut checked = 0;
    // (flexio's own "rms:" and "few samples:" lines are its additions: fio has none.)
    for line in ours.lines().skip(2).filter(|l| {
        let t = l.trim_start();
        !t.is_empty() && !t.starts_with("rms:") && !t.starts_with("few samples:")
    }) {
        assert!(
            stdout.lines().any(|f| f.trim_end() == line.trim_end()),
            "line missing from fio's output:\n{line}\n--- fio printed ---\n{stdout}\n--- flexio prints ---\n{ours}"
        );
        checked += 1;
    }
    assert!(checked > 20, "{checked} lines compared");
    for key in [
        "clat percentiles (usec):",
        "50.00th=[",
        "Run status group 0",
        "fakedisk: ios=7000/3000",
    ] {
        assert!(stdout.contains(key), "{key} missing:\n{stdout}");
    }
}

fn num(v: &serde_json::Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

#[test]
fn fio_client_json_matches_flexio_json() {
    let Some((stdout, got, _job, report)) = run_client(&["--output-format=json"]) else {
        return;
    };
    // The option after --client is forwarded as a job line.
    assert_eq!(
        got.joblines,
        [vec!["fio".to_string(), "--output-format=json".into()]]
    );
    let start = stdout.find('{').expect("a JSON document");
    let fio: serde_json::Value = serde_json::from_str(&stdout[start..]).expect("fio's JSON");
    let ours: serde_json::Value =
        serde_json::from_str(&flexio_output::json::report(&report, false, "test")).unwrap();
    let f = &fio["client_stats"][0];
    let o = &ours["jobs"][0];
    assert_eq!(f["jobname"], "remote");
    // JSON names the server by the address it was reached at.
    assert_eq!(f["hostname"], "127.0.0.1");
    assert_eq!(f["job options"]["rw"], "randrw");
    assert_eq!(fio["global options"]["ioengine"], "null");
    let mut compared = 0;
    for dir in ["read", "write"] {
        for key in [
            "io_bytes",
            "io_kbytes",
            "bw_bytes",
            "bw",
            "iops",
            "runtime",
            "total_ios",
            "short_ios",
            "drop_ios",
            "bw_min",
            "bw_max",
            "bw_agg",
            "bw_mean",
            "bw_dev",
            "bw_samples",
            "iops_min",
            "iops_max",
            "iops_mean",
            "iops_stddev",
            "iops_samples",
        ] {
            let (a, b) = (num(&f[dir][key]), num(&o[dir][key]));
            assert!(
                (a - b).abs() <= 1e-6 * a.abs().max(1.0),
                "{dir}.{key}: fio {a}, flexio {b}"
            );
            compared += 1;
        }
        for lat in ["clat_ns", "lat_ns"] {
            for key in ["min", "max", "mean", "stddev", "N"] {
                let (a, b) = (num(&f[dir][lat][key]), num(&o[dir][lat][key]));
                assert!(
                    (a - b).abs() <= 1e-6 * a.abs().max(1.0),
                    "{dir}.{lat}.{key}: fio {a}, flexio {b}"
                );
                compared += 1;
            }
        }
        let fp = f[dir]["clat_ns"]["percentile"]
            .as_object()
            .expect("percentiles");
        let op = o[dir]["clat_ns"]["percentile"]
            .as_object()
            .expect("percentiles");
        assert_eq!(fp.len(), 17);
        assert_eq!(fp, op, "{dir} clat percentiles");
        compared += fp.len();
    }
    for key in ["usr_cpu", "sys_cpu", "ctx", "majf", "minf"] {
        assert!((num(&f[key]) - num(&o[key])).abs() < 1e-6, "{key}");
    }
    for key in ["iodepth_level", "latency_us", "latency_ms"] {
        assert_eq!(f[key], o[key], "{key}");
    }
    let d = &fio["disk_util"][0];
    assert_eq!(
        (d["name"].as_str(), num(&d["util"])),
        (Some("fakedisk"), 87.5)
    );
    assert!(compared > 80);
}
