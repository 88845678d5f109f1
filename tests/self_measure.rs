//! flexio measures itself: the clock it uses (and its cost), and how much of each job's
//! time was its own; a job bound by the tool rather than the target is flagged.

mod common;
use common::*;

fn run_json(args: &[&str]) -> (serde_json::Value, Run) {
    let d = tempfile::tempdir().unwrap();
    let mut a = vec!["--output-format=json"];
    a.extend_from_slice(args);
    let r = flexio(&a, d.path());
    assert_eq!(r.code, 0, "{}", r.stderr);
    (json_of(&r.stdout), r)
}

#[test]
fn clocksource_is_chosen_and_reported() {
    for (opt, name) in [
        ("--clocksource=clock_gettime", "clock_gettime"),
        ("--clocksource=gettimeofday", "gettimeofday"),
    ] {
        let (j, _) = run_json(&["--name=c", "--ioengine=null", "--size=64m", opt]);
        let c = &j["flexio"]["clock"];
        assert_eq!(c["source"], name, "{c}");
        let read = c["read_ns"].as_f64().unwrap();
        assert!(read > 0.0 && read < 5000.0, "{c}");
        let res = c["resolution_ns"].as_u64().unwrap();
        if name == "gettimeofday" {
            assert_eq!(res, 1000, "microsecond clock: {c}");
        } else {
            assert!(res < 1000, "{c}");
        }
        // Latencies are still measured.
        assert!(j["jobs"][0]["read"]["clat_ns"]["N"].as_u64().unwrap() > 0);
    }
    // The default: the TSC where the machine vouches for it, else clock_gettime; asking for
    // the TSC where it is not usable falls back with a note.
    let (j, r) = run_json(&[
        "--name=c",
        "--ioengine=null",
        "--size=64m",
        "--clocksource=cpu",
    ]);
    let src = j["flexio"]["clock"]["source"].as_str().unwrap().to_string();
    assert!(src == "cpu" || src == "clock_gettime", "{src}");
    assert_eq!(
        src == "clock_gettime",
        r.stderr
            .contains("clocksource=cpu: the TSC cannot be trusted here"),
        "{}",
        r.stderr
    );
    let d = tempfile::tempdir().unwrap();
    let bad = flexio(
        &["--name=c", "--ioengine=null", "--clocksource=tsc"],
        d.path(),
    );
    assert_eq!(bad.code, 1);
    assert!(
        bad.stderr
            .contains("valid values: gettimeofday, clock_gettime, cpu"),
        "{}",
        bad.stderr
    );
}

#[test]
fn tool_share_is_reported_and_a_tool_bound_job_is_flagged() {
    // Reads of a cached file: the kernel does most of the work.
    let (j, r) = run_json(&[
        "--name=k",
        "--filename=f",
        "--size=32m",
        "--rw=randread",
        "--runtime=1",
        "--time_based",
    ]);
    let t = &j["jobs"][0]["flexio"]["tool"];
    let sum = t["engine_pct"].as_f64().unwrap()
        + t["wait_pct"].as_f64().unwrap()
        + t["tool_pct"].as_f64().unwrap();
    assert!((sum - 100.0).abs() < 0.01, "{t}");
    assert!(t["engine_pct"].as_f64().unwrap() > 50.0, "{t}");
    assert!(t["cpu_ns_per_io"].as_f64().unwrap() > 0.0, "{t}");
    assert!(!r.stderr.contains("bound by the tool"), "{}", r.stderr);
    // 1 MiB writes of freshly generated random data (refill_buffers) into the page cache:
    // generating the data costs more than writing it.
    let (j, r) = run_json(&[
        "--name=b",
        "--filename=f",
        "--size=64m",
        "--bs=1m",
        "--rw=write",
        "--refill_buffers",
        "--runtime=1",
        "--time_based",
    ]);
    let t = &j["jobs"][0]["flexio"]["tool"];
    assert!(t["tool_pct"].as_f64().unwrap() > 50.0, "{t}");
    assert!(
        r.stderr.contains("b: ")
            && r.stderr
                .contains("its results are bound by the tool, not the target"),
        "{}",
        r.stderr
    );
    // Deliberate waits are not the tool's: a rate-limited job is not flagged.
    let (j, r) = run_json(&[
        "--name=w",
        "--ioengine=psync",
        "--filename=f",
        "--size=8m",
        "--rate_iops=200",
        "--runtime=1",
        "--time_based",
    ]);
    let t = &j["jobs"][0]["flexio"]["tool"];
    assert!(t["wait_pct"].as_f64().unwrap() > 80.0, "{t}");
    assert!(!r.stderr.contains("bound by the tool"), "{}", r.stderr);
}
