//! flexio's steady-state additions (docs/steady-state.md): departures from steady state
//! found on a device whose speed steps down mid-run (flexio-faultfs `--slow-at`), none
//! on the same device without the step, and the options' errors.

use crate::common;

use common::faultfs::FaultFs;
use common::*;
use std::path::Path;

fn skip(why: &str) {
    assert!(
        std::env::var_os("FLEXIO_REQUIRE_FIO").is_none(),
        "required here: {why}"
    );
    eprintln!("SKIP: {why}");
}

/// A 16 s random-read run at 10,000 IOPS on the faultfs file with steady state on IOPS
/// (after a 2 s ss_ramp) and departures watched (outside ±40% for 4 s); the job's JSON.
fn run(fs: &FaultFs, dir: &Path, mode: &str) -> serde_json::Value {
    let out = dir.join(format!("{mode}.json"));
    let file = fs.data();
    let r = run_in(
        &flexio_bin(),
        &[
            "--name=watch",
            &format!("--filename={}", file.display()),
            "--size=64m",
            "--rw=randread",
            "--bs=4k",
            "--randseed=1234",
            "--time_based",
            "--runtime=16",
            "--ss=iops:30%",
            "--ss_dur=3",
            "--ss_ramp=2",
            &format!("--ss_departure={mode}"),
            // FUSE on two busy cores swings by half or more within seconds (23k-95k IOPS
            // beside other tests): a rate the device exceeds even then keeps the level
            // the job's own; the step (400 µs a request, at most 2,500 IOPS) is -75%.
            "--rate_iops=10000",
            // Wide and long enough that what noise is left stays inside.
            "--ss_band=40%",
            "--ss_departure_window=4",
            "--output-format=json",
            &format!("--output={}", out.display()),
        ],
        dir,
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    j["jobs"][0].clone()
}

#[test]
fn a_step_in_speed_is_found_within_a_window_and_a_steady_device_is_not_flagged() {
    let d = tempfile::tempdir().unwrap();
    // The step: 400 µs more per request from 8 s after the first I/O on.
    let Some(fs) = FaultFs::mount(&["--size", "64m", "--slow-at", "8:400"], skip) else {
        return;
    };
    let j = run(&fs, d.path(), "stop");
    let w = &j["flexio"]["steadystate"];
    assert_eq!(j["steadystate"]["attained"], 1, "{w}");
    let deps = w["departures"].as_array().unwrap();
    assert_eq!(deps.len(), 1, "{w}");
    let at = deps[0]["at_s"].as_f64().unwrap();
    let (from, to) = (
        deps[0]["from"].as_f64().unwrap(),
        deps[0]["to"].as_f64().unwrap(),
    );
    // Within one window (4 samples of 1 s) of the step at 8 s.
    assert!((4.0..=12.0).contains(&at), "departure at {at} s: {w}");
    assert!(to < from * 0.5, "{from} -> {to}");
    // ss_departure=stop ended the job soon after, before its 16 s.
    let ran = j["job_runtime"].as_u64().unwrap();
    assert!(ran < 15_000, "ran {ran} ms: {w}");
    drop(fs);

    // The same device without the step: attained, watched to the end, no departure.
    let Some(fs) = FaultFs::mount(&["--size", "64m"], skip) else {
        return;
    };
    let j = run(&fs, d.path(), "flag");
    let w = &j["flexio"]["steadystate"];
    assert_eq!(j["steadystate"]["attained"], 1, "{w}");
    assert_eq!(w["departures"].as_array().unwrap().len(), 0, "{w}");
    assert!(j["job_runtime"].as_u64().unwrap() >= 15_500);
    // 16 s less the 2 s ss_ramp (the last sample falls on the run's end or just after).
    let n = w["series"].as_array().unwrap().len();
    assert!((13..=14).contains(&n), "{w}");
    assert_eq!(w["offset_s"], 2.0);
}

#[test]
fn the_additions_need_steady_state_and_are_unknown_to_fio_3_33() {
    let d = tempfile::tempdir().unwrap();
    let base = ["--name=t", "--ioengine=null", "--size=1m"];
    type Env<'a> = &'a [(&'a str, &'a str)];
    let cases: &[(&[&str], Env, &str)] = &[
        (
            &["--ss_departure=flag"],
            &[],
            "ss_departure works on steady state: give ss_dur",
        ),
        (
            &["--ss_ramp=auto"],
            &[],
            "ss_ramp=auto works on steady state: give ss_dur",
        ),
        (
            &["--ss_dur=3", "--ss_band=150%"],
            &[],
            "between 0% and 100%",
        ),
        (&["--ss_dur=3", "--ss_departure=maybe"], &[], "flag"),
        (
            &["--ss_dur=3", "--ss_departure=flag"],
            ORACLE_COMPAT,
            "ss_departure",
        ),
        (&["--ss_dur=3", "--ss_ramp=auto"], ORACLE_COMPAT, "auto"),
    ];
    for (extra, env, want) in cases {
        let mut a: Vec<&str> = base.to_vec();
        a.extend_from_slice(extra);
        let r = run_bounded(&flexio_bin(), &a, d.path(), env, 30);
        assert_ne!(r.code, 0, "{extra:?} ran: {}", r.stdout);
        assert!(r.stderr.contains(want), "{extra:?}: {}", r.stderr);
    }
}
