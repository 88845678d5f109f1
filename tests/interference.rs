//! Interference under bfq: a 4 KiB random reader in the real-time I/O class against four
//! sequential 1 MiB readers, compared with the same run where it is best-effort. The
//! real-time reader must see clearly lower latency. Prints the numbers either way.

use crate::common;
use common::loopdev::LoopDev;
use common::*;

struct Fg {
    mean_us: f64,
    stdev_us: f64,
    p99_us: f64,
    bg_mib_s: u64,
}

fn run(dev: &str, class: u32, dir: &std::path::Path) -> Fg {
    let job = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/interference.fio"
    ))
    .unwrap();
    let jf = dir.join("interference.fio");
    std::fs::write(&jf, job.replace("runtime=10", "runtime=5")).unwrap();
    let class = class.to_string();
    let out = run_in_env(
        &flexio_bin(),
        &[jf.to_str().unwrap(), "--output-format=json"],
        dir,
        &[("DEV", dev), ("FG_CLASS", &class)],
    );
    assert!(out.code == 0, "{}", out.stderr);
    let j = json_of(&out.stdout);
    let fg = &j["jobs"][0]["read"]["clat_ns"];
    let bg: u64 = j["jobs"].as_array().unwrap()[1..]
        .iter()
        .map(|x| x["read"]["bw_bytes"].as_u64().unwrap())
        .sum();
    Fg {
        mean_us: fg["mean"].as_f64().unwrap() / 1000.0,
        stdev_us: fg["stddev"].as_f64().unwrap() / 1000.0,
        p99_us: fg["percentile"]["99.000000"].as_f64().unwrap() / 1000.0,
        bg_mib_s: bg >> 20,
    }
}

#[test]
fn real_time_class_beats_best_effort_under_bfq() {
    let Some(lo) = LoopDev::with_options(1 << 30, true) else {
        return;
    };
    if !lo.set_scheduler("bfq") {
        eprintln!("SKIP: the bfq scheduler is not available for {}", lo.name());
        return;
    }
    let d = tempfile::tempdir().unwrap();
    // Real data on the device (flexio writes it), so reads reach the disk.
    let fill = flexio(
        &[
            "--name=fill",
            &format!("--filename={}", lo.path()),
            "--rw=write",
            "--bs=1m",
            "--direct=1",
            "--size=1g",
        ],
        d.path(),
    );
    assert_eq!(fill.code, 0, "{}", fill.stderr);
    // A discarded warm-up pass, so both measured runs see the same cache state below the
    // loop device (the first pass after filling behaves differently on a caching host).
    let _ = run(lo.path(), 2, d.path());
    // The host below the loop device (its cache, other guests) adds noise: a pair of runs
    // is repeated, up to three times, until one shows the difference. A kernel that
    // ignores the real-time class fails all three.
    let mut seen = Vec::new();
    for _ in 0..3 {
        let rt = run(lo.path(), 1, d.path());
        let be = run(lo.path(), 2, d.path());
        eprintln!(
            "interference on {} (bfq): foreground clat real-time: mean {:.1} us, stdev {:.1} us, p99 {:.1} us (background {} MiB/s); \
             best-effort: mean {:.1} us, stdev {:.1} us, p99 {:.1} us (background {} MiB/s)",
            lo.name(),
            rt.mean_us,
            rt.stdev_us,
            rt.p99_us,
            rt.bg_mib_s,
            be.mean_us,
            be.stdev_us,
            be.p99_us,
            be.bg_mib_s
        );
        // Measured here over repeated runs: the real-time mean is 2-10x lower and its
        // standard deviation 13-80x lower; on a host whose cache answers most reads the
        // means come closer (1.38-1.45x in all three pairs of one CI run, the standard
        // deviation still 23-41x lower and the streams starved to a tenth); p99 varies
        // with the host's caching (1.2x to 60x) and is reported, not asserted.
        if rt.mean_us * 1.25 < be.mean_us && rt.stdev_us * 5.0 < be.stdev_us {
            return;
        }
        seen.push(format!(
            "real-time mean {:.1} us / stdev {:.1} us vs best-effort {:.1} us / {:.1} us",
            rt.mean_us, rt.stdev_us, be.mean_us, be.stdev_us
        ));
    }
    panic!(
        "the real-time class was not clearly better in any of three pairs of runs:\n{}",
        seen.join("\n")
    );
}
