//! A job that ends within its ramp: fio counts every request's bytes as it always does and
//! zeroes them at the ramp's end, so a job whose I/O is done before that reports its bytes,
//! I/Os and runtime, without latencies or samples (those start with the ramp's end).

use crate::common;
use common::*;

/// Per direction: (KiB, I/Os, runtime ms, clat samples, bw samples).
fn dirs(stdout: &str) -> Vec<(u64, u64, u64, u64, u64)> {
    let j = &json_of(stdout)["jobs"][0];
    ["read", "write"]
        .iter()
        .map(|d| {
            let x = &j[*d];
            let n = |k: &str| x[k].as_u64().unwrap();
            (
                n("io_kbytes"),
                n("total_ios"),
                n("runtime"),
                x["clat_ns"]["N"].as_u64().unwrap(),
                n("bw_samples"),
            )
        })
        .collect()
}

#[test]
fn a_job_that_ends_within_its_ramp_reports_its_bytes_without_latencies() {
    let args = [
        "--name=j0",
        "--ioengine=psync",
        "--rw=randrw",
        "--bs=8k",
        "--size=1m",
        "--loops=3",
        "--ramp_time=5",
        "--output-format=json",
    ];
    let check = |what: &str, r: &Run| -> Vec<(u64, u64)> {
        assert_eq!(r.code, 0, "{what}: {}", r.stderr);
        let d = dirs(&r.stdout);
        // Three loops of 1 MiB, all of them within the ramp.
        assert_eq!(d[0].0 + d[1].0, 3 * 1024, "{what}: {d:?}");
        for (kib, ios, runtime, clat, bw) in &d {
            assert!(*kib > 0 && *ios == kib / 8 && *runtime > 0, "{what}: {d:?}");
            assert_eq!((*clat, *bw), (0, 0), "{what}: latencies in the ramp: {d:?}");
        }
        d.iter().map(|x| (x.0, x.1)).collect()
    };
    let dir = tempfile::tempdir().unwrap();
    check("flexio", &flexio(&args, dir.path()));
    if let Some((f, x)) = both(&args) {
        // The same seeds: the same split between the directions.
        assert_eq!(check("fio 3.33", &f), check("flexio --compat=3.33", &x));
    }
    // The normal output has the direction lines, as fio's.
    let normal: Vec<&str> = args[..args.len() - 1].to_vec();
    let r = flexio(&normal, dir.path());
    assert!(
        r.stdout.contains("  read: IOPS=") && r.stdout.contains("  write: IOPS="),
        "{}",
        r.stdout
    );
    assert!(!r.stdout.contains("clat ("), "{}", r.stdout);
}
