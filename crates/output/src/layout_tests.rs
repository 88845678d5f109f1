//! The two layouts of the normal and JSON output, byte for byte, on reports built from
//! known numbers: fio 3.33's (`Layout::Fio333`) and the newest fio's (the default), with
//! the lines the 3.42 delta reference gives as verified where it gives one.

use crate::{json, normal};
use flexio_stats::report::{
    build, DiskReport, JobResult, Layout, ReportParams, RunReport, Unified,
};
use flexio_stats::{StatsConfig, ThreadStats};

fn params() -> ReportParams {
    ReportParams {
        kb_base: 1024,
        unit_base: 0,
        sig_figs: 4,
        percentile_list: vec![50.0, 99.0],
        percentile_precision: 2,
        clat_percentiles: false,
        lat_percentiles: false,
        slat_percentiles: false,
        latency_depth: 1,
        continue_on_error: false,
        unified: Unified::None,
        nostats_engine: false,
        latency_target_ns: 0,
        latency_window_us: 0,
        latency_percentile: 100.0,
    }
}

fn job(stats: ThreadStats, params: ReportParams, echo: &[(&str, &str)]) -> JobResult {
    JobResult {
        name: "j".into(),
        groupid: 0,
        pid: 42,
        description: None,
        echo: echo
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        group_reporting: false,
        stats_enabled: true,
        params,
        stats,
        steadystate: None,
    }
}

fn report(jobs: &[JobResult], disks: Vec<DiskReport>, globals: &[(&str, &str)]) -> RunReport {
    let g = globals
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    build(
        jobs,
        disks,
        g,
        "fio-3.42",
        (0, 0, "Thu Jan  1 00:00:00 1970".into()),
        1,
    )
}

fn in_layout(r: &RunReport, l: Layout) -> RunReport {
    let mut r = r.clone();
    r.set_layout(l);
    r
}

/// A sequential write of 4 MiB in 380 ms with fdatasync every 16 writes (63 issued), a
/// latency target of 10 ms over 1 s, and a disk.
fn write_job_report() -> RunReport {
    let mut s = ThreadStats::new(StatsConfig::default());
    s.dirs[1].io_bytes = 4 << 20;
    s.dirs[1].total_ios = 1024;
    s.dirs[1].runtime_ms = 380;
    for _ in 0..1024 {
        s.add_clat(1, 4000);
        s.add_lat(1, 4000);
        s.mark_latency(4000);
    }
    for _ in 0..63 {
        s.add_sync(200_000);
    }
    s.sync_total = 63;
    s.sync_kinds = [0, 63, 0];
    s.job_start_ms = 1_700_000_000_123;
    let p = ReportParams {
        latency_target_ns: 10_000_000,
        latency_window_us: 1_000_000,
        ..params()
    };
    let disk = DiskReport {
        name: "vda".into(),
        read_ios: 0,
        write_ios: 189,
        read_sectors: 0,
        write_sectors: 8568,
        read_merges: 0,
        write_merges: 0,
        read_ticks: 0,
        write_ticks: 15,
        in_queue: 18,
        util: 4.13,
        aggr: None,
    };
    report(
        &[job(
            s,
            p,
            &[("name", "j"), ("time_based", ""), ("rw", "write")],
        )],
        vec![disk],
        &[("group_reporting", "")],
    )
}

fn has_line(text: &str, line: &str) -> bool {
    text.lines().any(|l| l == line)
}

#[test]
fn normal_output_in_both_layouts() {
    let r = write_job_report();
    let new = normal::report(&in_layout(&r, Layout::Latest));
    let old = normal::report(&in_layout(&r, Layout::Fio333));
    for (text, lines) in [
        (
            &new,
            [
                "  write: IOPS=2694, BW=10.5MiB/s (11.0MB/s)(4096KiB/380msec)",
                "  fsync/fdatasync/sync_file_range/syncfs:",
                "     issued rwts: total=0,1024,0,63 short=0,0,0,0 dropped=0,0,0,0",
                // delta §5.1, verified: `target=10.00ms, window=1000.00ms`.
                "     latency   : target=10.00ms, window=1000.00ms, percentile=100.00%, depth=1",
                "  vda: ios=0/189, sectors=0/8568, merge=0/0, ticks=0/15, in_queue=18, util=4.13%",
            ],
        ),
        (
            &old,
            [
                "  write: IOPS=2694, BW=10.5MiB/s (11.0MB/s)(4096KiB/380msec); 0 zone resets",
                "  fsync/fdatasync/sync_file_range:",
                // fio 3.33's fdatasync count lands in short= (captured: short=63,0,0,0).
                "     issued rwts: total=0,1024,0,0 short=63,0,0,0 dropped=0,0,0,0",
                "     latency   : target=10000000, window=1000000, percentile=100.00%, depth=1",
                "  vda: ios=0/189, merge=0/0, ticks=0/15, in_queue=18, util=4.13%",
            ],
        ),
    ] {
        for l in lines {
            assert!(has_line(text, l), "missing {l:?} in\n{text}");
        }
    }
    // Everything else is the same text.
    assert_eq!(new.lines().count(), old.lines().count());
    let sync = "    sync (nsec): min=200000, max=200000, avg=200000.00, stdev= 0.00";
    assert!(has_line(&new, sync) && has_line(&old, sync), "{new}");
}

#[test]
fn default_latency_target_line() {
    let mut s = ThreadStats::new(StatsConfig::default());
    s.dirs[0].io_bytes = 4096;
    s.dirs[0].total_ios = 1;
    s.dirs[0].runtime_ms = 1;
    let r = report(&[job(s, params(), &[])], vec![], &[]);
    let new = normal::report(&r);
    // delta §5.1: `target=0.00ns, window=0.00ns` by default.
    assert!(has_line(
        &new,
        "     latency   : target=0.00ns, window=0.00ns, percentile=100.00%, depth=1"
    ));
    assert!(has_line(
        &normal::report(&in_layout(&r, Layout::Fio333)),
        "     latency   : target=0, window=0, percentile=100.00%, depth=1"
    ));
    for (ns, want) in [
        (1999.0, "1999.00ns"),
        (2000.0, "2.00us"),
        (1_999_999.0, "2000.00us"),
        (2e6, "2.00ms"),
        (2e9, "2.00s"),
    ] {
        assert_eq!(normal::target_time(ns), want);
    }
}

#[test]
fn unified_both_mixed_line() {
    let mut s = ThreadStats::new(StatsConfig::default());
    for (d, ios) in [(0, 132u64), (1, 124)] {
        s.dirs[d].io_bytes = ios * 4096;
        s.dirs[d].total_ios = ios;
        s.dirs[d].runtime_ms = 1;
        s.add_clat(d, 30);
    }
    let p = ReportParams {
        unified: Unified::Both,
        ..params()
    };
    let r = report(&[job(s, p, &[])], vec![], &[]);
    // delta §5.1, verified: the newest fio's numbers without the rate unit; fio 3.33's
    // zeros (captured from fio 3.33).
    assert!(has_line(
        &normal::report(&r),
        "  mixed: IOPS=256k, BW=1000Mi (1049M)(1024KiB/1msec)"
    ));
    let old = normal::report(&in_layout(&r, Layout::Fio333));
    assert!(
        has_line(&old, "  mixed: IOPS=0, BW=0 (0)(0B/1msec)"),
        "{old}"
    );
    // The group line: the slowest and fastest direction (fio 3.33, captured).
    assert!(has_line(&old, "  MIXED: bw=1000MiB/s (1049MB/s), 484MiB/s-516MiB/s (508MB/s-541MB/s), io=1024KiB (1049kB), run=1-1msec"), "{old}");
}

fn prio_report() -> RunReport {
    let mut s = ThreadStats::new(StatsConfig {
        clat_hist: true,
        ..Default::default()
    });
    s.dirs[0].io_bytes = 8192;
    s.dirs[0].total_ios = 2;
    s.dirs[0].runtime_ms = 1;
    s.add_clat(0, 1000);
    s.add_clat(0, 3000);
    // RT level 3, and best effort level 4 with hint 5.
    s.dirs[0].add_prio((1 << 13) | 3, 1000, true);
    s.dirs[0].add_prio((2 << 13) | (5 << 3) | 4, 3000, true);
    let p = ReportParams {
        clat_percentiles: true,
        ..params()
    };
    report(&[job(s, p, &[])], vec![], &[])
}

#[test]
fn priority_lines_and_keys() {
    let r = prio_report();
    let new = normal::report(&r);
    let old = normal::report(&in_layout(&r, Layout::Fio333));
    assert!(
        new.contains("\n    clat prio 1/3/0 (nsec): min=1000, "),
        "{new}"
    );
    assert!(
        new.contains("\n    clat prio 2/4/5 (nsec): min=3000, "),
        "{new}"
    );
    assert!(new.contains("\n    clat prio 2/4/5 (50.00% of IOs) percentiles (nsec):\n"));
    assert!(
        old.contains("\n    clat prio 1/3 (nsec): min=1000, "),
        "{old}"
    );
    assert!(old.contains("\n    clat prio 2/4 (50.00% of IOs) percentiles (nsec):\n"));
    let j = json::report(&r, false, "t");
    assert!(
        j.contains("\"prioclass\" : 2,\n            \"prio\" : 4,\n            \"priohint\" : 5,\n            \"clat_ns\" : {"),
        "{j}"
    );
    let j = json::report(&in_layout(&r, Layout::Fio333), false, "t");
    assert!(
        j.contains("\"prioclass\" : 2,\n            \"prio\" : 4,\n            \"clat_ns\" : {"),
        "{j}"
    );
}

#[test]
fn json_in_both_layouts() {
    let r = write_job_report();
    let new = json::report(&r, false, "t");
    let old = json::report(&in_layout(&r, Layout::Fio333), false, "t");
    for want in [
        "  \"global options\" : {\n    \"group_reporting\" : \"\"\n  },\n",
        "      \"groupid\" : 0,\n      \"job_start\" : 1700000000123,\n      \"error\" : 0,\n",
        // delta §5.2, verified: value-less flags keep their empty value.
        "        \"time_based\" : \"\",\n",
        "      \"latency_target\" : 10000000,\n      \"latency_target_ns\" : 10000000,\n      \"latency_percentile\" : 100.000000,\n      \"latency_window\" : 1000000,\n      \"latency_window_us\" : 1000000,\n      \"flexio\"",
        "      \"write_ios\" : 189,\n      \"read_sectors\" : 0,\n      \"write_sectors\" : 8568,\n      \"read_merges\" : 0,\n",
        "        \"total_ios\" : 63,\n",
    ] {
        assert!(new.contains(want), "missing {want:?} in\n{new}");
    }
    for (want, absent) in [
        ("      \"groupid\" : 0,\n      \"error\" : 0,\n", "job_start"),
        (
            "      \"latency_target\" : 10000000,\n      \"latency_percentile\" : 100.000000,\n      \"latency_window\" : 1000000,\n      \"flexio\"",
            "_sectors",
        ),
        ("      \"write_ios\" : 189,\n      \"read_merges\" : 0,\n", "time_based"),
        ("      \"job options\" : {\n        \"name\" : \"j\",\n        \"rw\" : \"write\"\n      },\n", "global options"),
    ] {
        assert!(old.contains(want), "missing {want:?} in\n{old}");
        assert!(!old.contains(absent), "{absent} in\n{old}");
    }
    // fio 3.33 counted the fdatasyncs as read short I/Os.
    assert!(old.contains("\"short_ios\" : 63,"), "{old}");
    assert!(!new.contains("\"short_ios\" : 63,"), "{new}");
}

#[test]
fn zone_resets_only_for_zbd_jobs() {
    let r = write_job_report();
    assert!(!json::report(&r, false, "t").contains("zone_resets"));
    let mut z = r.clone();
    z.jobs[0].zone_resets = Some(3);
    z.jobs[0].dirs[0] = z.jobs[0].dirs[1].clone();
    let new = normal::report(&z);
    // The newest fio: on every direction line of a zbd job; fio 3.33 on write lines.
    assert!(has_line(
        &new,
        "  read: IOPS=2694, BW=10.5MiB/s (11.0MB/s)(4096KiB/380msec); 3 zone resets"
    ));
    assert!(has_line(
        &new,
        "  write: IOPS=2694, BW=10.5MiB/s (11.0MB/s)(4096KiB/380msec); 3 zone resets"
    ));
    let old = normal::report(&in_layout(&z, Layout::Fio333));
    assert!(has_line(
        &old,
        "  read: IOPS=2694, BW=10.5MiB/s (11.0MB/s)(4096KiB/380msec)"
    ));
    assert!(has_line(
        &old,
        "  write: IOPS=2694, BW=10.5MiB/s (11.0MB/s)(4096KiB/380msec); 3 zone resets"
    ));
    let j = json::report(&z, false, "t");
    assert!(
        j.contains("      \"zone_resets\" : 3,\n      \"flexio\" : {"),
        "{j}"
    );
}

#[test]
fn log_lines_of_the_newest_fio() {
    use crate::logs::{sample_line, sample_line_ext};
    let mut s = String::new();
    // log_prio=1 carries the hint too: class << 13 | hint << 3 | level.
    sample_line(&mut s, 7, 99, 0, 4096, None, (2 << 13) | (5 << 3) | 3, true);
    // The time is a full u64.
    sample_line(&mut s, 5_000_000_000_000, 1, 1, 4096, None, 0, false);
    // delta §5.4, verified: windowed clat and bw lines with log_window_value=both.
    sample_line_ext(
        &mut s,
        500,
        (54, Some(62938)),
        0,
        0,
        Some(0),
        (0, false),
        None,
    );
    sample_line_ext(
        &mut s,
        500,
        (7168328, Some(7168328)),
        0,
        0,
        Some(0),
        (0, false),
        None,
    );
    // The aggregate bandwidth log of --bandwidth-log (verified: `601, 11718489, 0, 0, 0`).
    sample_line(&mut s, 601, 11718489, 0, 0, None, 0, false);
    assert_eq!(
        s,
        "7, 99, 0, 4096, 0x402b\n5000000000000, 1, 1, 4096, 0\n500, 54, 62938, 0, 0, 0, 0\n500, 7168328, 7168328, 0, 0, 0, 0\n601, 11718489, 0, 0, 0\n"
    );
}

/// A device-mapper disk over two slaves: fio's extra indentation and aggregate (per-slave
/// averages rounded down, the busiest slave's util) in each layout and format.
#[test]
fn disk_with_slaves_in_both_layouts() {
    let mut r = write_job_report();
    let slave = r.disks[0].clone();
    let master = DiskReport {
        name: "dm-0".into(),
        aggr: Some(flexio_stats::report::DiskAggr {
            slaves: 2,
            ios: [3, 379],
            sectors: [24, 17137],
            merges: [0, 5],
            ticks: [1, 31],
            in_queue: 37,
            max_util: 4.13,
        }),
        ..slave.clone()
    };
    r.disks = vec![master, slave];
    let new = normal::report(&r);
    let old = normal::report(&in_layout(&r, Layout::Fio333));
    assert!(new.ends_with(
        "\nDisk stats (read/write):\n    dm-0: ios=0/189, sectors=0/8568, merge=0/0, ticks=0/15, in_queue=18, util=4.13%, aggrios=1/189, aggsectors=12/8568, aggrmerge=0/2, aggrticks=0/15, aggrin_queue=18, aggrutil=4.13%\n  vda: ios=0/189, sectors=0/8568, merge=0/0, ticks=0/15, in_queue=18, util=4.13%\n"
    ), "{new}");
    assert!(old.ends_with(
        "\nDisk stats (read/write):\n    dm-0: ios=0/189, merge=0/0, ticks=0/15, in_queue=18, util=4.13%, aggrios=1/189, aggrmerge=0/2, aggrticks=0/15, aggrin_queue=18, aggrutil=4.13%\n  vda: ios=0/189, merge=0/0, ticks=0/15, in_queue=18, util=4.13%\n"
    ), "{old}");
    let jn = json::report(&r, false, "t");
    let jo = json::report(&in_layout(&r, Layout::Fio333), false, "t");
    assert!(jn.contains(
        "      \"util\" : 4.130000,\n      \"aggr_read_ios\" : 1,\n      \"aggr_write_ios\" : 189,\n      \"aggr_read_sectors\" : 12,\n      \"aggr_write_sectors\" : 8568,\n      \"aggr_read_merges\" : 0,\n      \"aggr_write_merge\" : 2,\n      \"aggr_read_ticks\" : 0,\n      \"aggr_write_ticks\" : 15,\n      \"aggr_in_queue\" : 18,\n      \"aggr_util\" : 4.130000\n    },\n    {\n      \"name\" : \"vda\",\n"
    ), "{jn}");
    assert!(jo.contains(
        "      \"util\" : 4.130000,\n      \"aggr_read_ios\" : 1,\n      \"aggr_write_ios\" : 189,\n      \"aggr_read_merges\" : 0,\n      \"aggr_write_merge\" : 2,\n"
    ), "{jo}");
    assert_eq!(jn.matches("aggr_").count(), 10);
    assert_eq!(jo.matches("aggr_").count(), 8);
    let mut t = String::new();
    crate::terse::disks(&mut t, &r.disks);
    assert_eq!(
        t,
        ";dm-0;0;189;0;0;0;15;18;4.13%;slaves;1;189;0;2;0;15;18;4.13%;vda;0;189;0;0;0;15;18;4.13%"
    );
}
