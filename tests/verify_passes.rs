//! A time-based job that writes and verifies: fio's write pass ends at `size` bytes
//! queued, so on an engine that queues (libaio, io_uring, null deeper than 1) the job
//! alternates a pass of writes and its read-back until its time is up; on an engine that
//! completes each request in the call (psync) nothing is counted as queued and the writes
//! take the whole runtime. fio prints its "read phase will never start" note for both. A
//! read-back stops when the runtime is up.

use crate::common;
use common::*;

/// (read KiB, write KiB, read runtime ms, write runtime ms) of the first job.
fn figures(stdout: &str) -> (u64, u64, u64, u64) {
    let j = &json_of(stdout)["jobs"][0];
    let n = |d: &str, k: &str| j[d][k].as_u64().unwrap();
    (
        n("read", "io_kbytes"),
        n("write", "io_kbytes"),
        n("read", "runtime"),
        n("write", "runtime"),
    )
}

fn job(engine: &[&'static str], rw: &'static str) -> Vec<&'static str> {
    let mut a = vec![
        "--name=j",
        "--filename=f",
        "--bs=4k",
        "--size=256k",
        "--verify=crc32c",
        "--time_based",
        "--runtime=400ms",
        "--output-format=json",
    ];
    a.push(rw);
    a.extend_from_slice(engine);
    a
}

/// What each tool did: reads back on an engine that queues, none on psync.
fn check(what: &str, r: &Run, queues: bool) {
    assert_eq!(r.code, 0, "{what}: {}", r.stderr);
    let (rk, wk, rt, wt) = figures(&r.stdout);
    assert!(wk > 0 && wt > 0, "{what}: no writes: {}", r.stdout);
    if queues {
        assert!(rk > 0 && rt > 0, "{what}: no read-back: {}", r.stdout);
        // Each read-back follows its pass of writes (the last cut short by the time).
        assert!(rk <= wk, "{what}: read {rk} KiB, write {wk} KiB");
    } else {
        assert_eq!(rk, 0, "{what}: a read-back on psync: {}", r.stdout);
    }
}

#[test]
fn time_based_verify_alternates_passes_on_an_engine_that_queues() {
    let cases: [(&[&'static str], &'static str, bool); 4] = [
        (&["--ioengine=null", "--iodepth=4"], "--rw=write", true),
        (&["--ioengine=null", "--iodepth=4"], "--rw=randwrite", true),
        (&["--ioengine=libaio", "--iodepth=2"], "--rw=write", true),
        (&["--ioengine=psync"], "--rw=randwrite", false),
    ];
    for (engine, rw, queues) in cases {
        let a = job(engine, rw);
        let what = format!("{engine:?} {rw}");
        let d = tempfile::tempdir().unwrap();
        check(&format!("flexio {what}"), &flexio(&a, d.path()), queues);
        if let Some((f, x)) = both(&a) {
            check(&format!("fio 3.33 {what}"), &f, queues);
            check(&format!("flexio --compat=3.33 {what}"), &x, queues);
        }
    }
}

/// A rate-limited time-based write job on an engine that completes in the call: fio's pass
/// can end on the rate's wait, but its read-back stops at once when the runtime is up, so
/// nothing is read back (flexio read back every block logged).
#[test]
fn a_read_back_stops_when_the_runtime_is_up() {
    let a = job(&["--ioengine=psync", "--rate=1m"], "--rw=write");
    let d = tempfile::tempdir().unwrap();
    check("flexio", &flexio(&a, d.path()), false);
    if let Some((f, x)) = both(&a) {
        check("fio 3.33", &f, false);
        check("flexio --compat=3.33", &x, false);
    }
}

/// The reads of logged blocks (verify_backlog's here, the read-back's too) are not in fio's
/// bw/IOPS samples: its sample counts leave them out. A rate-limited write job that reads
/// back every 16 blocks has write samples and no read ones (flexio sampled the reads).
#[test]
fn reads_of_logged_blocks_are_not_sampled() {
    let a = [
        "--name=j",
        "--ioengine=psync",
        "--filename=f",
        "--rw=write",
        "--bs=4k",
        "--size=1280k",
        "--rate=,1m",
        "--verify=crc32c",
        "--verify_backlog=16",
        "--output-format=json",
    ];
    let samples = |what: &str, r: &Run| {
        assert_eq!(r.code, 0, "{what}: {}", r.stderr);
        let j = &json_of(&r.stdout)["jobs"][0];
        let n = |d: &str, k: &str| j[d][k].as_u64().unwrap();
        assert_eq!(n("read", "io_kbytes"), 1280, "{what}: {}", r.stdout);
        assert_eq!(
            (n("read", "bw_samples"), n("read", "iops_samples")),
            (0, 0),
            "{what}: {}",
            r.stdout
        );
        assert!(n("write", "bw_samples") >= 1, "{what}: {}", r.stdout);
    };
    let d = tempfile::tempdir().unwrap();
    samples("flexio", &flexio(&a, d.path()));
    if let Some((f, x)) = both(&a) {
        samples("fio 3.33", &f);
        samples("flexio --compat=3.33", &x);
    }
}

/// A latency_target search that finds its depth ends the job's writes (fio's td->done), but
/// not its read-back, which fio runs before the job ends (flexio stopped the job at once).
#[test]
fn a_finished_latency_search_still_reads_back() {
    let a = job(
        &[
            "--ioengine=psync",
            "--latency_target=10ms",
            "--latency_window=100ms",
        ],
        "--rw=write",
    );
    let d = tempfile::tempdir().unwrap();
    let check = |what: &str, r: &Run| {
        assert_eq!(r.code, 0, "{what}: {}", r.stderr);
        let (rk, wk, _, wt) = figures(&r.stdout);
        // The search at depth 1 ends after its first window, well before the runtime.
        assert!(wk > 0 && wt < 300, "{what}: write {wk} KiB in {wt} ms");
        // Each block once, as last written.
        assert_eq!(rk, 256, "{what}: read-back: {}", r.stdout);
    };
    check("flexio", &flexio(&a, d.path()));
    if let Some((f, x)) = both(&a) {
        check("fio 3.33", &f);
        check("flexio --compat=3.33", &x);
    }
}
