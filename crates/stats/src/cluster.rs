//! The cluster aggregate: the results of many hosts (client/server) or ranks (MPI)
//! merged without loss.
//!
//! * **Latency** statistics and **histograms** are merged exactly: latency sums are added
//!   (`LatStat`), histograms bucket by bucket, so cluster percentiles are the
//!   percentiles of the pooled samples, not averages of per-host percentiles.
//! * **Bandwidth and IOPS** are summed over time windows in which the hosts' transfers
//!   are known: the bytes each host moved inside the window, added, divided by the
//!   window. Three windows are reported: `common` (every host running: the honest
//!   concurrent rate), `first_done` (from the first start until the first host finished,
//!   IOR's stonewall view) and `last_done` (until the last host finished: all bytes).
//! * **Per-host** start, end and runtime stay visible, with each host's lag behind the
//!   first finisher, so stragglers show.
//!
//! Bytes inside a window come from the host's progress points when it has any (straight
//! lines between points), otherwise from a constant rate over the host's run; the
//! aggregate says which ([`Cluster::estimated`]). Times are ns on one reference clock:
//! the caller corrects each host's clock offset first.

use crate::thread::ThreadStats;

/// Cumulative progress of a host at one moment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Progress {
    /// ns since the host's start.
    pub t_ns: u64,
    /// Bytes and I/Os completed so far: read, write, trim.
    pub bytes: [u64; 3],
    pub ios: [u64; 3],
}

/// One host's (or rank's) run.
#[derive(Clone, Debug, Default)]
pub struct HostRun {
    pub host: String,
    /// The caller's index of this host (its place in the caller's list, which may hold
    /// hosts without results): the summaries carry it back.
    pub index: usize,
    /// Start and end of its run, ns on the reference clock.
    pub start_ns: u64,
    pub end_ns: u64,
    /// `start_ns` was measured (a start message, a barrier), not derived from the end and
    /// the runtime.
    pub start_measured: bool,
    /// Its results, merged over its jobs (`ThreadStats::merge`).
    pub stats: ThreadStats,
    /// Optional progress points in time order (e.g. from status snapshots).
    pub progress: Vec<Progress>,
}

/// Transfers inside a time window, summed over the hosts.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Window {
    pub start_ns: u64,
    pub end_ns: u64,
    pub bytes: [u64; 3],
    pub ios: [u64; 3],
    /// bytes / window length (bytes/s, integer) and I/Os per second.
    pub bw_bytes: [u64; 3],
    pub iops: [f64; 3],
}

/// One host as the aggregate shows it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HostSummary {
    pub host: String,
    /// [`HostRun::index`].
    pub index: usize,
    /// [`HostRun::start_measured`].
    pub start_measured: bool,
    /// How many progress points placed its transfers inside the windows (0: a constant
    /// rate was assumed).
    pub progress_points: usize,
    pub start_ns: u64,
    pub end_ns: u64,
    /// end − start in ms (rounded up, as fio rounds runtimes).
    pub runtime_ms: u64,
    pub io_bytes: [u64; 3],
    pub total_ios: [u64; 3],
    /// The host's own bandwidth over its run (bytes/s).
    pub bw_bytes: [u64; 3],
    /// How long after the first host this one finished (ns): its straggle.
    pub behind_first_ns: u64,
}

/// The merged result of all hosts.
#[derive(Clone, Debug, Default)]
pub struct Cluster {
    /// Everything merged (histograms bucket by bucket, exact latency sums, bw/IOPS sample
    /// statistics summed as fio sums a reporting group's).
    pub stats: ThreadStats,
    pub hosts: Vec<HostSummary>,
    /// Every host running: from the last start to the first end; `None` when the runs do
    /// not overlap.
    pub common: Option<Window>,
    /// From the first start until the first host finished.
    pub first_done: Window,
    /// From the first start until the last host finished (all bytes).
    pub last_done: Window,
    /// Some host had no progress points: its share of a window assumes a constant rate.
    pub estimated: bool,
}

/// Cumulative (bytes, ios) of direction `d` at absolute time `t`, by the host's progress
/// points (with (start, 0) and (end, total) added), linear in between.
fn done_at(h: &HostRun, d: usize, t: u64) -> (u64, u64) {
    let total = (h.stats.dirs[d].io_bytes, h.stats.dirs[d].total_ios);
    if t <= h.start_ns {
        return (0, 0);
    }
    if t >= h.end_ns {
        return total;
    }
    let rel = t - h.start_ns;
    let mut prev = (0u64, 0u64, 0u64);
    let pts = h
        .progress
        .iter()
        .filter(|p| p.t_ns < h.end_ns - h.start_ns)
        .map(|p| (p.t_ns, p.bytes[d], p.ios[d]))
        .chain(std::iter::once((h.end_ns - h.start_ns, total.0, total.1)));
    for p in pts {
        if p.0 >= rel {
            let span = (p.0 - prev.0) as u128;
            if span == 0 {
                return (p.1, p.2);
            }
            let at = (rel - prev.0) as u128;
            let lerp =
                |a: u64, b: u64| (a as u128 + (b.saturating_sub(a) as u128 * at) / span) as u64;
            return (lerp(prev.1, p.1), lerp(prev.2, p.2));
        }
        prev = p;
    }
    total
}

fn window(hosts: &[HostRun], start: u64, end: u64) -> Window {
    let mut w = Window {
        start_ns: start,
        end_ns: end,
        ..Default::default()
    };
    for d in 0..3 {
        for h in hosts {
            let (b0, i0) = done_at(h, d, start);
            let (b1, i1) = done_at(h, d, end);
            w.bytes[d] += b1.saturating_sub(b0);
            w.ios[d] += i1.saturating_sub(i0);
        }
        let len = end.saturating_sub(start);
        if len > 0 {
            w.bw_bytes[d] = (w.bytes[d] as u128 * 1_000_000_000 / len as u128) as u64;
            w.iops[d] = w.ios[d] as f64 * 1e9 / len as f64;
        }
    }
    w
}

/// Merge the hosts' results.
pub fn merge(hosts: &[HostRun]) -> Cluster {
    let mut c = Cluster::default();
    if hosts.is_empty() {
        return c;
    }
    for (i, h) in hosts.iter().enumerate() {
        c.stats.merge(&h.stats, i == 0);
    }
    let first_start = hosts.iter().map(|h| h.start_ns).min().unwrap_or(0);
    let last_start = hosts.iter().map(|h| h.start_ns).max().unwrap_or(0);
    let first_end = hosts.iter().map(|h| h.end_ns).min().unwrap_or(0);
    let last_end = hosts.iter().map(|h| h.end_ns).max().unwrap_or(0);
    c.hosts = hosts
        .iter()
        .map(|h| {
            let run_ns = h.end_ns.saturating_sub(h.start_ns);
            let d = &h.stats.dirs;
            HostSummary {
                host: h.host.clone(),
                index: h.index,
                start_measured: h.start_measured,
                progress_points: h.progress.len(),
                start_ns: h.start_ns,
                end_ns: h.end_ns,
                runtime_ms: run_ns.div_ceil(1_000_000),
                io_bytes: [d[0].io_bytes, d[1].io_bytes, d[2].io_bytes],
                total_ios: [d[0].total_ios, d[1].total_ios, d[2].total_ios],
                bw_bytes: [0, 1, 2].map(|i| {
                    if run_ns == 0 {
                        0
                    } else {
                        (d[i].io_bytes as u128 * 1_000_000_000 / run_ns as u128) as u64
                    }
                }),
                behind_first_ns: h.end_ns.saturating_sub(first_end),
            }
        })
        .collect();
    c.common = (last_start < first_end).then(|| window(hosts, last_start, first_end));
    c.first_done = window(hosts, first_start, first_end);
    c.last_done = window(hosts, first_start, last_end);
    c.estimated = hosts.iter().any(|h| h.progress.is_empty());
    c
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::thread::StatsConfig;

    const S: u64 = 1_000_000_000;

    fn host(name: &str, start: u64, end: u64, bytes: u64) -> HostRun {
        let mut stats = ThreadStats::default();
        stats.dirs[0].io_bytes = bytes;
        stats.dirs[0].total_ios = bytes / 4096;
        HostRun {
            host: name.into(),
            start_ns: start,
            end_ns: end,
            stats,
            ..Default::default()
        }
    }

    #[test]
    fn merged_percentiles_equal_pooled_percentiles() {
        let cfg = StatsConfig {
            clat_hist: true,
            ..Default::default()
        };
        let mut pooled = ThreadStats::new(cfg);
        let mut hosts = Vec::new();
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for h in 0..4u64 {
            let mut t = ThreadStats::new(cfg);
            for i in 0..20_000u64 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                // Hosts with different latency ranges, some beyond fio's 17 s ceiling.
                let v = (x % (50_000 << (3 * h))) + if i % 997 == 0 { 30 * S } else { 0 };
                t.add_clat(0, v);
                pooled.add_clat(0, v);
            }
            t.dirs[0].total_ios = 20_000;
            hosts.push(HostRun {
                host: format!("h{h}"),
                index: h as usize,
                start_ns: 0,
                end_ns: S,
                stats: t,
                ..Default::default()
            });
        }
        let c = merge(&hosts);
        let list = [1.0, 10.0, 50.0, 90.0, 99.0, 99.5, 99.9, 99.99, 100.0];
        let n = pooled.dirs[0].clat.samples;
        assert_eq!(c.stats.dirs[0].clat.samples, n);
        assert_eq!(
            c.stats.dirs[0].clat_hist.percentiles(&list, n),
            pooled.dirs[0].clat_hist.percentiles(&list, n)
        );
        assert_eq!(c.stats.dirs[0].clat, pooled.dirs[0].clat);
        // Averaging the hosts' p99 would be far from the pooled p99.
        let p99 = |t: &ThreadStats| {
            t.dirs[0]
                .clat_hist
                .percentiles(&[99.0], t.dirs[0].clat.samples)[0]
                .1
        };
        let avg: u64 = hosts.iter().map(|h| p99(&h.stats)).sum::<u64>() / 4;
        assert_ne!(avg, p99(&c.stats));
    }

    #[test]
    fn windows_and_stragglers() {
        // A runs 0-10 s (100 MB), B 2-8 s (60 MB): constant rates.
        let hosts = [
            host("a", 0, 10 * S, 100_000_000),
            host("b", 2 * S, 8 * S, 60_000_000),
        ];
        let c = merge(&hosts);
        let common = c.common.clone().unwrap();
        assert_eq!((common.start_ns, common.end_ns), (2 * S, 8 * S));
        assert_eq!(common.bytes[0], 60_000_000 + 60_000_000);
        assert_eq!(common.bw_bytes[0], 20_000_000);
        assert_eq!(c.first_done.bytes[0], 80_000_000 + 60_000_000);
        assert_eq!(c.first_done.bw_bytes[0], 140_000_000 / 8);
        assert_eq!(c.last_done.bytes[0], 160_000_000);
        assert_eq!(c.last_done.bw_bytes[0], 16_000_000);
        assert_eq!(c.hosts[0].behind_first_ns, 2 * S);
        assert_eq!(c.hosts[1].behind_first_ns, 0);
        assert_eq!(c.hosts[1].runtime_ms, 6000);
        assert_eq!(c.hosts[0].bw_bytes[0], 10_000_000);
        assert!(c.estimated);
        assert_eq!(c.stats.dirs[0].io_bytes, 160_000_000);
    }

    #[test]
    fn progress_points_replace_the_constant_rate() {
        // A moved 90 MB in its first second, then 10 MB over 9 s.
        let mut a = host("a", 0, 10 * S, 100_000_000);
        a.progress = vec![Progress {
            t_ns: S,
            bytes: [90_000_000, 0, 0],
            ios: [90_000_000 / 4096, 0, 0],
        }];
        let mut b = host("b", 0, 2 * S, 10_000_000);
        b.progress = vec![Progress {
            t_ns: S,
            bytes: [5_000_000, 0, 0],
            ios: [0; 3],
        }];
        let c = merge(&[a, b]);
        assert_eq!(c.hosts[0].progress_points, 1);
        // First done at 2 s: A has 90 + 10/9 MB, B all 10 MB.
        assert_eq!(c.first_done.bytes[0], 90_000_000 + 1_111_111 + 10_000_000);
        assert!(!c.estimated);
        // Disjoint runs have no common window.
        let c = merge(&[host("a", 0, S, 1), host("b", 2 * S, 3 * S, 1)]);
        assert!(c.common.is_none());
        assert_eq!(merge(&[]).hosts.len(), 0);
    }
}
