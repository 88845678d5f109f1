//! flexio's results through fio's wire structures and back: what is exact, what is folded
//! (latencies beyond fio's 17 s ceiling), and cluster merging of results received from
//! several servers.

use flexio_remote::convert::{
    disk_report_of, disk_util_of, group_report_of, group_stats_of, io_of_lat, job_result_of,
    lat_of_io, run_report_of, thread_stat_of, wire_run_of,
};
use flexio_remote::ts::{ThreadStat, KIND_CLAT, PLAT_NR};
use flexio_remote::Payload;
use flexio_stats::cluster::{merge, HostRun};
use flexio_stats::hist::{idx_to_val, FIO_NR};
use flexio_stats::report::{build, DiskReport, ReportParams, Unified};
use flexio_stats::stat::LatStat;
use flexio_stats::steady::{Criterion, SteadyState};
use flexio_stats::thread::{StatsConfig, ThreadStats};
use flexio_stats::JobResult;

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fn params() -> ReportParams {
    ReportParams {
        kb_base: 1024,
        unit_base: 0,
        sig_figs: 4,
        percentile_list: flexio_remote::ts::DEFAULT_PERCENTILES.to_vec(),
        percentile_precision: 2,
        clat_percentiles: true,
        lat_percentiles: true,
        slat_percentiles: false,
        latency_depth: 4,
        continue_on_error: false,
        unified: Unified::None,
        nostats_engine: false,
        latency_target_ns: 0,
        latency_window_us: 0,
        latency_percentile: 100.0,
    }
}

/// A host's stats recorded through ThreadStats' own methods.
fn stats(seed: u64, n: u64, scale: u64) -> ThreadStats {
    let mut s = ThreadStats::new(StatsConfig {
        clat_hist: true,
        lat_hist: true,
        ..Default::default()
    });
    let mut r = Rng(seed);
    for i in 0..n {
        let d = (r.next() % 2) as usize;
        let v = 1_000 + r.next() % scale;
        s.add_slat(d, 300 + v / 100);
        s.add_clat(d, v);
        s.add_lat(d, v + 300 + v / 100);
        s.dirs[d].io_bytes += 4096;
        s.dirs[d].total_ios += 1;
        s.mark_depth(1 + i % 6, 1);
        s.mark_submit(1 + i % 3);
        s.mark_complete(1);
        if i % 100 == 0 {
            s.add_sync(50_000 + v);
            s.sync_total += 1;
            s.dirs[d].add_prio(if i % 200 == 0 { 0x2000 } else { 0x4001 }, v, true);
        }
    }
    for d in 0..2 {
        s.dirs[d].runtime_ms = 3000 + seed % 7;
        for k in 0..5 {
            s.dirs[d].bw.add(10_000 + k * 13 + seed);
            s.dirs[d].iops.add(2_500 + k);
        }
    }
    s.total_run_time_ms = 3001;
    s.usr_time_us = 123_456;
    s.sys_time_us = 654_321;
    s.ctx = 99;
    s
}

fn job(name: &str, s: ThreadStats) -> JobResult {
    JobResult {
        name: name.into(),
        groupid: 0,
        pid: 7,
        description: Some("described".into()),
        echo: vec![("bs".into(), "4k".into())],
        group_reporting: false,
        stats_enabled: true,
        params: params(),
        stats: s,
        steadystate: None,
    }
}

/// Through the TS bytes and back.
fn wire(j: &JobResult) -> (ThreadStat, JobResult) {
    let r = build(
        std::slice::from_ref(j),
        vec![],
        vec![],
        "v",
        (0, 0, String::new()),
        3,
    );
    let rs = group_stats_of(&r.groups[0]);
    let ts = thread_stat_of(j, 1, 1, &rs);
    let back = ThreadStat::decode(&ts.encode()).expect("decode");
    assert_eq!(back, ts);
    let jr = job_result_of(&back);
    (back, jr)
}

#[test]
fn thread_stats_survive_the_wire() {
    let j = job("a", stats(11, 20_000, 3_000_000));
    let (ts, back) = wire(&j);
    let (a, b) = (&j.stats, &back.stats);
    for d in 0..3 {
        let (x, y) = (&a.dirs[d], &b.dirs[d]);
        assert_eq!(x.io_bytes, y.io_bytes);
        assert_eq!(x.total_ios, y.total_ios);
        assert_eq!(x.runtime_ms, y.runtime_ms);
        for (p, q) in [(&x.clat, &y.clat), (&x.lat, &y.lat), (&x.slat, &y.slat)] {
            assert_eq!(
                (p.min, p.max, p.samples, p.sum),
                (q.min, q.max, q.samples, q.sum)
            );
            let (sp, sq) = (p.to_stat(), q.to_stat());
            assert_eq!(sp.mean, sq.mean);
            assert!((sp.stddev() - sq.stddev()).abs() <= 1e-9 * sp.stddev().max(1.0));
        }
        assert_eq!(x.clat_hist.counts(), y.clat_hist.counts());
        assert_eq!(x.lat_hist.counts(), y.lat_hist.counts());
        assert_eq!(x.bw, y.bw);
        assert_eq!(x.iops, y.iops);
        assert_eq!(x.prios.len(), y.prios.len());
        for (p, q) in x.prios.iter().zip(&y.prios) {
            assert_eq!(
                (p.ioprio, p.stat.samples, p.stat.sum),
                (q.ioprio, q.stat.samples, q.stat.sum)
            );
            assert_eq!(p.hist.counts(), q.hist.counts());
        }
    }
    assert_eq!(a.sync.sum, b.sync.sum);
    assert_eq!(a.sync_hist.counts(), b.sync_hist.counts());
    assert_eq!(a.depth_map, b.depth_map);
    assert_eq!(a.submit_map, b.submit_map);
    assert_eq!((a.lat_n, a.lat_u, a.lat_m), (b.lat_n, b.lat_u, b.lat_m));
    // CPU time travels in whole ms.
    assert_eq!((ts.usr_time, ts.sys_time), (123, 654));
    assert_eq!(b.usr_time_us, 123_000);
    // The same report, rendered: identical text.
    let ours = build(
        std::slice::from_ref(&j),
        vec![],
        vec![],
        "v",
        (0, 0, "t".into()),
        3,
    );
    let theirs = run_report_of(
        &[ts],
        &[group_stats_of(&ours.groups[0])],
        &[],
        "v",
        (0, 0, "t".into()),
        3,
    );
    assert_eq!(
        flexio_output::normal::report(&theirs),
        flexio_output::normal::report(&ours)
    );
}

#[test]
fn latencies_beyond_fios_ceiling_fold_into_its_last_bucket() {
    let mut s = ThreadStats::new(StatsConfig {
        clat_hist: true,
        ..Default::default()
    });
    for v in [1_000u64, 2_000, 30_000_000_000, 60_000_000_000] {
        s.add_clat(0, v);
    }
    s.dirs[0].total_ios = 4;
    let (ts, back) = wire(&job("slow", s.clone()));
    assert_eq!(ts.plat[KIND_CLAT][0][PLAT_NR - 1], 2);
    assert_eq!(back.stats.dirs[0].clat_hist.total(), 4);
    // Ranks stay right; the value shown for them is fio's last bucket (~17.1 s) while
    // min/max/mean keep the real figures.
    let p = back.stats.dirs[0]
        .clat_hist
        .percentiles(&[50.0, 75.0, 100.0], 4);
    assert_eq!(p[0].1, s.dirs[0].clat_hist.percentiles(&[50.0], 4)[0].1);
    assert_eq!(p[1].1, idx_to_val(FIO_NR - 1));
    assert!(p[1].1 > 17_000_000_000 && p[1].1 < 17_200_000_000);
    assert_eq!(back.stats.dirs[0].clat.max, 60_000_000_000);
    assert_eq!(back.stats.dirs[0].clat.sum, s.dirs[0].clat.sum);
}

#[test]
fn latency_sums_are_recovered_exactly() {
    let mut r = Rng(5);
    for _ in 0..2000 {
        let n = 1 + r.next() % 1_000_000;
        let mut l = LatStat::default();
        let avg = r.next() % 10_000_000_000;
        l.samples = n;
        l.sum = avg as u128 * n as u128 + (r.next() % n) as u128;
        l.min = avg / 2;
        l.max = avg * 2;
        l.sumsq = l.sum * l.sum / n as u128 + (r.next() % 1_000_000) as u128;
        if l.sum >= 1 << 52 {
            continue;
        }
        let back = lat_of_io(&io_of_lat(&l));
        assert_eq!(
            (back.sum, back.samples, back.min, back.max),
            (l.sum, n, l.min, l.max)
        );
        assert!(
            back.sumsq.abs_diff(l.sumsq) <= 1 + (l.sumsq - l.sum * l.sum / n as u128) / (1 << 50)
        );
    }
    assert_eq!(
        lat_of_io(&io_of_lat(&LatStat::default())),
        LatStat::default()
    );
}

#[test]
fn groups_disks_steady_state_and_mixed() {
    let j = job("g", stats(3, 1000, 100_000));
    let r = build(
        std::slice::from_ref(&j),
        vec![],
        vec![],
        "v",
        (0, 0, String::new()),
        3,
    );
    let g = &r.groups[0];
    let gs = group_stats_of(g);
    assert_eq!(gs.min_run[2], u64::MAX, "unused direction as fio leaves it");
    assert_eq!(gs.unit_base, 4);
    let back = group_report_of(&gs);
    assert_eq!(format!("{:?}", back.dirs), format!("{:?}", g.dirs));
    let d = DiskReport {
        name: "vdb".into(),
        read_ios: 5,
        write_ios: 6,
        util: 42.25,
        ..Default::default()
    };
    let du = disk_util_of(&d, 4000);
    assert_eq!(du.s.io_ticks, 1690);
    assert_eq!(format!("{:?}", disk_report_of(&du)), format!("{d:?}"));
    // A slave aggregate arrives as sums and a count (fio's client divides); a server sends
    // none, as fio's (which never sums its slaves).
    let mut from_fio = du.clone();
    from_fio.agg.ios = [7, 9];
    from_fio.agg.time_in_queue = 5;
    from_fio.slavecount = 2;
    from_fio.max_util = 61.5;
    let a = disk_report_of(&from_fio).aggr.expect("aggregate");
    assert_eq!(
        (a.slaves, a.ios, a.in_queue, a.max_util),
        (2, [7, 9], 5, 61.5)
    );
    assert_eq!((a.avg(a.ios[0]), a.avg(a.ios[1])), (3, 4));
    let master = DiskReport {
        aggr: Some(a),
        ..d.clone()
    };
    let sent = disk_util_of(&master, 4000);
    assert_eq!((sent.slavecount, sent.agg.ios), (0, [0, 0]));
    // Steady state: the window and verdict come back in order.
    let mut ss = SteadyState::new(
        Criterion {
            iops: true,
            lat: false,
            slope: true,
            limit: 0.5,
            pct: true,
        },
        4,
        4,
    );
    for v in [100, 101, 99, 100, 100] {
        ss.add(v, v * 4096);
    }
    let mut js = j.clone();
    js.steadystate = Some(ss.clone());
    let (_, back) = wire(&js);
    let b = back.steadystate.expect("steady state");
    assert_eq!(b.iops_data(), ss.iops_data());
    assert_eq!(b.bw_data(), ss.bw_data());
    assert_eq!(
        (b.attained, b.criterion, b.duration_s),
        (ss.attained, ss.criterion, 4)
    );
    // Mixed reporting: fio folds everything into direction 0.
    let mut jm = j.clone();
    jm.params.unified = Unified::Mixed;
    let (ts, _) = wire(&jm);
    assert_eq!(
        ts.io_bytes[0],
        j.stats.dirs[0].io_bytes + j.stats.dirs[1].io_bytes
    );
    assert_eq!(ts.io_bytes[1], 0);
    assert_eq!(ts.unified_rw_rep, 1);
}

#[test]
fn wire_run_follows_fios_message_plan() {
    let mut a = job("a", stats(1, 100, 1000));
    let mut b = job("b", stats(2, 100, 1000));
    let mut c = job("c", stats(3, 100, 1000));
    for x in [&mut a, &mut b] {
        x.group_reporting = true;
    }
    c.groupid = 2;
    let jobs = [a, b, c];
    let r = build(
        &jobs,
        vec![],
        vec![("ioengine".into(), "null".into())],
        "v",
        (0, 0, String::new()),
        1,
    );
    let w = wire_run_of(&jobs, &r, 1000);
    assert_eq!(w.global_opts.len(), 1);
    assert!(w.global_opts[0].global);
    assert_eq!(w.reports.len(), 2);
    assert_eq!(
        (w.reports[0].1.members, w.reports[0].1.thread_number),
        (2, 1)
    );
    assert_eq!(
        (w.reports[1].1.members, w.reports[1].1.thread_number),
        (1, 3)
    );
    assert_eq!(
        w.reports[1].0[0].groupid, 1,
        "JOB_OPT carries the report index"
    );
    // One GS per group id up to the highest, the empty one included.
    assert_eq!(
        w.groups.iter().map(|g| g.groupid).collect::<Vec<_>>(),
        [0, 1, 2]
    );
    assert_eq!(w.groups[1].iobytes, [0; 3]);
    assert_eq!(w.reports[1].1.rs, w.groups[2]);
}

#[test]
fn cluster_percentiles_from_received_results_equal_pooled_percentiles() {
    // Three servers with different latency ranges; their results travel as TS messages.
    let hosts: Vec<ThreadStats> = (0..3)
        .map(|h| stats(100 + h, 30_000, 200_000 << (3 * h)))
        .collect();
    let mut pooled = ThreadStats::default();
    for (i, h) in hosts.iter().enumerate() {
        pooled.merge(h, i == 0);
    }
    let received: Vec<HostRun> = hosts
        .iter()
        .enumerate()
        .map(|(i, h)| {
            let (_, jr) = wire(&job(&format!("h{i}"), h.clone()));
            HostRun {
                host: format!("host{i}"),
                index: i,
                start_ns: i as u64 * 1_000_000,
                end_ns: 3_000_000_000 + i as u64 * 5_000_000,
                stats: jr.stats,
                ..Default::default()
            }
        })
        .collect();
    let c = merge(&received);
    let list = flexio_remote::ts::DEFAULT_PERCENTILES;
    for d in 0..2 {
        let (x, y) = (&c.stats.dirs[d], &pooled.dirs[d]);
        assert_eq!(x.clat.samples, y.clat.samples);
        assert_eq!(x.clat.sum, y.clat.sum);
        assert_eq!(
            x.clat_hist.percentiles(&list, x.clat.samples),
            y.clat_hist.percentiles(&list, y.clat.samples),
            "direction {d}"
        );
        assert_eq!(x.lat_hist.counts(), y.lat_hist.counts());
    }
    assert_eq!(c.hosts.len(), 3);
    assert_eq!(c.hosts[2].behind_first_ns, 10_000_000);
    let total: u64 = hosts.iter().map(|h| h.dirs[0].io_bytes).sum();
    assert_eq!(c.last_done.bytes[0], total);
}
