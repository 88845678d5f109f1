//! The engines that move no data: `cpuio` (burns a share of a CPU) and `exec` (runs a
//! program as the job). Each runs end to end, and against fio 3.33 the same job gives the
//! same output layout and about the same number of requests.

use crate::common;
use common::*;
use std::time::{Duration, Instant};

fn json_ok(args: &[&str], dir: &std::path::Path) -> serde_json::Value {
    let r = flexio(args, dir);
    assert_eq!(r.code, 0, "{args:?}\n{}", r.stderr);
    json_of(&r.stdout)
}

#[test]
fn cpuio_burns_its_share_and_counts_no_bytes() {
    let d = tempfile::tempdir().unwrap();
    for mode in ["noop", "qsort"] {
        let cm = format!("--cpumode={mode}");
        let j = json_ok(
            &[
                "--name=c",
                "--ioengine=cpuio",
                "--cpuload=50",
                "--cpuchunks=20000",
                &cm,
                "--runtime=1",
                "--output-format=json",
            ],
            d.path(),
        );
        let job = &j["jobs"][0];
        let r = &job["read"];
        // 20 ms burn + 20 ms pause per request: about 25 in a second.
        let n = r["total_ios"].as_u64().unwrap();
        assert!((10..=26).contains(&n), "{mode}: {n} requests");
        assert_eq!(r["io_bytes"], 0, "no data moves");
        assert_eq!(r["clat_ns"]["N"], n, "every burn is a latency sample");
        let mean = r["clat_ns"]["mean"].as_f64().unwrap();
        // The burn ends by the engine's clock and is timed by the statistics clock (the
        // calibrated TSC): allow their calibration to differ by 1 %.
        assert!(
            mean >= 0.99 * 20e6,
            "{mode}: a request lasts its chunk ({mean} ns)"
        );
        assert!(job["job_runtime"].as_u64().unwrap() >= 1000);
    }
    // No file appears, and fio's line replaces the job header.
    assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0);
    let r = flexio(
        &[
            "--name=c",
            "--ioengine=cpuio",
            "--cpuload=90",
            "--runtime=200ms",
        ],
        d.path(),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout
            .contains("c (noop): ioengine=cpuio, cpuload=90, cpucycle=50000\n"),
        "{}",
        r.stdout
    );
    assert!(!r.stdout.contains("(g=0)"), "{}", r.stdout);
    // cpuload is mandatory.
    let r = flexio(&["--name=c", "--ioengine=cpuio", "--runtime=1"], d.path());
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("cpuload="), "{}", r.stderr);
}

#[test]
fn cpuio_exit_on_io_done_ends_with_the_io_jobs() {
    let d = tempfile::tempdir().unwrap();
    let t = Instant::now();
    let j = json_ok(
        &[
            "--name=c",
            "--ioengine=cpuio",
            "--cpuload=20",
            "--cpuchunks=10000",
            "--exit_on_io_done=1",
            "--runtime=30",
            "--name=n",
            "--ioengine=null",
            "--size=40M",
            "--rate=40m",
            "--output-format=json",
        ],
        d.path(),
    );
    assert!(
        t.elapsed() < Duration::from_secs(15),
        "cpuio waited for its runtime"
    );
    let c = &j["jobs"][0];
    assert_eq!(c["jobname"], "c");
    let rt = c["job_runtime"].as_u64().unwrap();
    assert!(
        (900..5000).contains(&rt),
        "cpuio ran {rt} ms beside a 1 s I/O job"
    );
    assert_eq!(c["error"], 0);
}

#[test]
fn cpuio_matches_fio() {
    let args = [
        "--name=c",
        "--ioengine=cpuio",
        "--cpuload=50",
        "--cpuchunks=20000",
        "--runtime=1",
    ];
    let Some((fio, fx)) = both(&args) else {
        return;
    };
    assert_eq!(fio.code, 0, "{}", fio.stderr);
    assert_eq!(fx.code, 0, "{}", fx.stderr);
    assert_same_shape(&fio.stdout, &fx.stdout, "cpuio normal output");
    let mut a = args.to_vec();
    a.push("--output-format=json");
    let (fio, fx) = both(&a).unwrap();
    let (jf, jx) = (json_of(&fio.stdout), json_of(&fx.stdout));
    let ios = |j: &serde_json::Value| j["jobs"][0]["read"]["total_ios"].as_u64().unwrap();
    let (nf, nx) = (ios(&jf), ios(&jx));
    assert!(nx.abs_diff(nf) <= 6, "fio {nf} requests, flexio {nx}");
    for j in [&jf, &jx] {
        assert_eq!(j["jobs"][0]["read"]["io_bytes"], 0);
        assert_eq!(j["jobs"][0]["read"]["bw"], 0);
    }
}

#[test]
fn exec_runs_the_program_for_the_job() {
    let d = tempfile::tempdir().unwrap();
    // %r and %n are replaced; output goes to <job>.stdout.
    let r = flexio(
        &[
            "--name=ej",
            "--ioengine=exec",
            "--program=echo",
            "--arguments=run %r s by %n",
            "--runtime=3",
        ],
        d.path(),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains(
            "ej : Saving output of echo run 3 s by ej : stdout=ej.stdout stderr=ej.stderr"
        ),
        "{}",
        r.stdout
    );
    let out = std::fs::read_to_string(d.path().join("ej.stdout")).unwrap();
    assert_eq!(out, "run 3 s by ej\n");
    assert!(d.path().join("ej.stderr").is_file());

    // A program outliving the runtime is stopped at its end; ten polls a second.
    let t = Instant::now();
    let j = json_ok(
        &[
            "--name=long",
            "--ioengine=exec",
            "--program=sleep",
            "--arguments=60",
            "--runtime=1",
            "--output-format=json",
        ],
        d.path(),
    );
    assert!(
        t.elapsed() < Duration::from_secs(10),
        "the program was not stopped"
    );
    let n = j["jobs"][0]["read"]["total_ios"].as_u64().unwrap();
    assert!((6..=11).contains(&n), "{n} polls in one second");
    assert_eq!(j["jobs"][0]["read"]["io_bytes"], 0);

    // A program that ends first ends the job.
    let t = Instant::now();
    let j = json_ok(
        &[
            "--name=short",
            "--ioengine=exec",
            "--program=sleep",
            "--arguments=0.3",
            "--runtime=20",
            "--std_redirect=0",
            "--output-format=json",
        ],
        d.path(),
    );
    assert!(t.elapsed() < Duration::from_secs(10));
    let rt = j["jobs"][0]["job_runtime"].as_u64().unwrap();
    assert!(
        (250..3000).contains(&rt),
        "job lasted {rt} ms for a 0.3 s program"
    );
    assert!(!d.path().join("short.stdout").exists(), "std_redirect=0");

    // A missing program is a clear error before anything runs.
    let r = flexio(
        &[
            "--name=x",
            "--ioengine=exec",
            "--program=/no/such/prog",
            "--runtime=1",
        ],
        d.path(),
    );
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("/no/such/prog"), "{}", r.stderr);
    let r = flexio(&["--name=x", "--ioengine=exec", "--runtime=1"], d.path());
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("no program is defined"), "{}", r.stderr);
}

#[test]
fn exec_matches_fio() {
    let args = [
        "--name=ex",
        "--ioengine=exec",
        "--program=sleep",
        "--arguments=30",
        "--runtime=1",
        "--grace_time=0",
        "--output-format=json",
    ];
    let Some((fio, fx)) = both(&args) else {
        return;
    };
    assert_eq!(fio.code, 0, "{}", fio.stderr);
    assert_eq!(fx.code, 0, "{}", fx.stderr);
    let (jf, jx) = (json_of(&fio.stdout), json_of(&fx.stdout));
    let ios = |j: &serde_json::Value| j["jobs"][0]["read"]["total_ios"].as_u64().unwrap();
    let (nf, nx) = (ios(&jf), ios(&jx));
    assert!(nx.abs_diff(nf) <= 3, "fio {nf} polls, flexio {nx}");
    // Each poll waits 50 ms in both: the latency lands in the 100 ms bucket.
    let share = |j: &serde_json::Value| j["jobs"][0]["latency_ms"]["100"].as_f64().unwrap();
    assert!(
        share(&jf) > 60.0 && share(&jx) > 60.0,
        "{} {}",
        share(&jf),
        share(&jx)
    );
    // The same program line, with the same output files.
    let banner = |s: &str| {
        s.lines()
            .filter(|l| l.starts_with("ex : "))
            .map(String::from)
            .collect::<Vec<_>>()
    };
    // (fio prints them into its JSON output; flexio keeps stdout JSON and notes on stderr.)
    assert_eq!(
        banner(&fio.stdout),
        banner(&format!("{}{}", fx.stdout, fx.stderr))
    );
}
