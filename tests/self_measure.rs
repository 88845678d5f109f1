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

// The tool share against the truth. Time spent on the target outside an engine call
// (opening and closing files under an `openfiles` cap, fsync, cache drops and unlinks
// between loops, the end_fsync) is the target's, not flexio's: the share flexio reports as
// its own must match what a bare loop of the same system calls says flexio added.
//
// System-call bound jobs on tmpfs: the reference loop runs in this process, alternating
// with flexio runs, and both are taken in CPU time (the loop's thread CPU clock, the job's
// user + system time), which other programs on a shared machine do not inflate. flexio's
// share is of the job's wall time, and where the time a busy machine keeps the job off the
// CPU lands (inside a system call or in flexio's code) is not known: the honest share lies
// between flexio's extra CPU time over the job's wall time and over the job's CPU time.
//
// Device-bound jobs (ext4 on a loop device, flushed): a bare loop spends all its time in
// the calls, and flexio's own microseconds per request against milliseconds of flushing
// leave it a share of nearly nothing.
//
// The tests compare shares, never speeds.

/// The job's reported tool share (percent), its wall time and its CPU time in ns.
fn share_of(j: &serde_json::Value) -> (f64, f64, f64) {
    let job = &j["jobs"][0];
    let t = &job["flexio"]["tool"];
    let tool = t["tool_pct"]
        .as_f64()
        .unwrap_or_else(|| panic!("no tool share: {}", job["flexio"]));
    let ios: f64 = ["read", "write", "trim"]
        .iter()
        .map(|d| job[d]["total_ios"].as_f64().unwrap())
        .sum();
    let wall = job["job_runtime"].as_f64().unwrap() * 1e6;
    (tool, wall, t["cpu_ns_per_io"].as_f64().unwrap() * ios)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

/// This thread's CPU time in ns.
fn thread_cpu_ns() -> f64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    t.tv_sec as f64 * 1e9 + t.tv_nsec as f64
}

/// A page-aligned slice of `len` bytes of `raw` (flexio's buffers are page aligned; the
/// kernel copies an unaligned one at another speed).
fn aligned(raw: &mut [u8], len: usize) -> &mut [u8] {
    let skip = raw.as_ptr().align_offset(4096);
    &mut raw[skip..skip + len]
}

/// Percentage points between the reported and the honest share still called "the same".
/// The honest band counts the whole process's CPU (start-up, planning, the main and status
/// threads) against the job's share, so it sits a few points above on short runs (20,000
/// unlinks: 2.9 reported against 8.3 to 8.7 once in CI); the bug this guards against
/// reported 66 % and 100 %.
const SHARE_SLACK: f64 = 7.5;

/// `rounds` alternating runs of the bare loop and of flexio; asserts that the median
/// share flexio reports is not above the honest band (medians of its two ends) by more
/// than [`SHARE_SLACK`].
fn assert_share(
    what: &str,
    rounds: usize,
    mut prepare: impl FnMut(),
    mut bare: impl FnMut(),
    mut run: impl FnMut() -> serde_json::Value,
) {
    // One measurement at a time: the bare loop's CPU and flexio's are compared, and the
    // other tests of this file running beside them on two CPUs moved the honest band
    // further (22.7 to 25.4 % once in CI for 20,000 unlinks, 13 to 20 % serialized).
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let (mut reported, mut low, mut high) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..rounds {
        prepare();
        let t0 = thread_cpu_ns();
        bare();
        let ref_ns = thread_cpu_ns() - t0;
        prepare();
        let (tool, wall, cpu) = share_of(&run());
        let extra = (cpu - ref_ns).max(0.0);
        reported.push(tool);
        low.push(100.0 * extra / wall.max(cpu));
        high.push(100.0 * extra / cpu);
    }
    let (r, lo, hi) = (median(reported.clone()), median(low), median(high));
    eprintln!(
        "{what}: tool share reported {reported:.1?}, median {r:.1}; honest {lo:.1} to {hi:.1}"
    );
    // Over the band is the bug this guards against (66 % and 100 % reported for jobs whose
    // time was the kernel's). Under it is not asserted: on the CI machine the bare loop of
    // unlinks or opens ran 13 to 25 % faster in thread CPU than flexio's job thread, while
    // a profile of that thread put flexio's own code at about 7 % of it; the rest is the
    // kernel's deferred work (RCU frees, memcg uncharges) landing on one thread or the
    // other, which this comparison cannot tell apart from the tool's.
    assert!(
        r <= hi + SHARE_SLACK,
        "{what}: flexio says {r:.1}% of the run was its own; the bare loop of the same calls \
         says {lo:.1}% to {hi:.1}%"
    );
}

fn json_run(args: &[String], dir: &std::path::Path) -> serde_json::Value {
    let mut a: Vec<&str> = vec!["--output-format=json"];
    a.extend(args.iter().map(String::as_str));
    let r = flexio(&a, dir);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!r.stderr.contains("bound by the tool"), "{}", r.stderr);
    json_of(&r.stdout)
}

#[test]
fn openfiles_cap_opens_and_closes_are_the_targets_time() {
    // 2,000 files of 4 KiB, read round robin with at most 64 open: every read opens a file
    // (open, two fadvise calls) and closes the longest-open one.
    let Some(fs) = fstargets::FsTarget::new(fstargets::FsKind::Tmpfs, 64 << 20) else {
        return;
    };
    let d = fs.path();
    let n = 2000;
    let base = vec![
        "--name=m".to_string(),
        format!("--directory={}", d.display()),
        format!("--nrfiles={n}"),
        "--filesize=4k".into(),
        "--bs=4k".into(),
    ];
    let mut lay = base.clone();
    lay.push("--create_only=1".into());
    json_run(&lay, d);
    let ios = 20 * n;
    let mut args = base.clone();
    args.extend([
        "--rw=randread".into(),
        "--openfiles=64".into(),
        format!("--number_ios={ios}"),
        "--loops=1000".into(),
    ]);
    let paths: Vec<_> = (0..n).map(|i| d.join(format!("m.0.{i}"))).collect();
    assert_share(
        "openfiles=64 over 2,000 files",
        5,
        || {},
        || {
            use rustix::fs::{fadvise, Advice};
            let mut raw = vec![0u8; 2 * 4096];
            let buf = aligned(&mut raw, 4096);
            let len = std::num::NonZeroU64::new(4096);
            let mut ring = std::collections::VecDeque::with_capacity(64);
            for k in 0..ios {
                if ring.len() == 64 {
                    drop(ring.pop_front());
                }
                let f = std::fs::File::open(&paths[k % n]).unwrap();
                let _ = fadvise(&f, 0, len, Advice::DontNeed);
                let _ = fadvise(&f, 0, len, Advice::Random);
                rustix::io::pread(&f, &mut *buf, 0).unwrap();
                ring.push_back(f);
            }
        },
        || json_run(&args, d),
    );
}

#[test]
fn filedelete_unlinks_are_the_targets_time() {
    let Some(fs) = fstargets::FsTarget::new(fstargets::FsKind::Tmpfs, 256 << 20) else {
        return;
    };
    let d = fs.path();
    let n = 20_000;
    let paths: Vec<_> = (0..n).map(|i| d.join(format!("m.0.{i}"))).collect();
    let args = vec![
        "--name=m".to_string(),
        "--ioengine=filedelete".into(),
        format!("--directory={}", d.display()),
        format!("--nrfiles={n}"),
        "--filesize=4k".into(),
    ];
    assert_share(
        "filedelete of 20,000 files",
        5,
        || {
            // Laid out as flexio would (4 KiB of data each): freeing the data is part of
            // the unlink.
            let data = [0x5au8; 4096];
            for p in &paths {
                std::fs::write(p, data).unwrap();
            }
        },
        || {
            for p in &paths {
                rustix::fs::unlink(p).unwrap();
            }
        },
        || json_run(&args, d),
    );
    assert!(!paths[0].exists());
}

/// A device-bound job on ext4 over a loop device (its file in the file system's root):
/// its tool share, which must be nearly nothing, and its JSON.
fn device_bound_share(args: &[&str]) -> Option<(f64, serde_json::Value)> {
    let fs = fstargets::FsTarget::new(fstargets::FsKind::Ext4Loop, 512 << 20)?;
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let d = fs.path();
    let mut a: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    a.push(format!("--filename={}", d.join("f").display()));
    let j = json_run(&a, d);
    let tool = share_of(&j).0;
    eprintln!("{}: {}", args.join(" "), j["jobs"][0]["flexio"]["tool"]);
    assert!(tool <= 3.0, "{}", j["jobs"][0]["flexio"]["tool"]);
    Some((tool, j))
}

#[test]
fn end_fsync_is_the_targets_time() {
    device_bound_share(&[
        "--name=m",
        "--size=200m",
        "--bs=1m",
        "--rw=write",
        "--end_fsync=1",
    ]);
}

#[test]
fn fsync_every_write_is_the_targets_time() {
    let Some((_, j)) = device_bound_share(&[
        "--name=m",
        "--size=2m",
        "--bs=4k",
        "--rw=write",
        "--fsync=1",
    ]) else {
        return;
    };
    // A sync after every write (fio leaves out the one after the last).
    let writes = j["jobs"][0]["write"]["total_ios"].as_u64().unwrap();
    let syncs = j["jobs"][0]["sync"]["total_ios"].as_u64().unwrap();
    assert!(
        syncs + 1 >= writes && writes > 0,
        "{writes} writes, {syncs} syncs"
    );
}

#[test]
fn steps_between_loops_are_the_targets_time() {
    // 300 loops of one 4 KiB write: between loops the fsync of fsync_on_close, the cache
    // drop and the unlink of unlink_each_loop are inside the measured run.
    device_bound_share(&[
        "--name=m",
        "--size=4k",
        "--bs=4k",
        "--rw=write",
        "--loops=300",
        "--fsync_on_close=1",
        "--unlink_each_loop=1",
    ]);
}
