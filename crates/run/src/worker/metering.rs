//! Metering: what a job records on the way besides per-I/O statistics: bandwidth and IOPS
//! samples (bwavgtime / iopsavgtime), log files, the interval stream, steady-state samples,
//! and the deadlines of all of these (plus the progress publication). Each method checks
//! its own deadline; the loop calls them when [`Meter::next_event`] has passed.

use super::logs::{per_io_rate, IntervalLog, Logs};
use crate::plan::{MeterPlan, SsPlan};
use crate::progress::Progress;
use flexio_stats::ThreadStats;

/// Progress (status line, termination requests, snapshots) is looked at this often: the
/// status line's rates come from these counters, so a coarser step shows as jitter in them.
pub const PUBLISH_NS: u64 = 10_000_000;

pub struct Meter {
    sample: bool,
    bw_ms: u64,
    iops_ms: u64,
    /// [`MeterPlan::sample_slack_ms`], in ns.
    slack_ns: u64,
    /// The job's epoch (log times count from it).
    epoch_ns: u64,
    bw: Cadence,
    iops: Cadence,
    next_check_ns: u64,
    next_publish_ns: u64,
    pub logs: Option<Logs>,
    interval: Option<IntervalLog>,
    next_log_ns: u64,
    log_tick_ns: u64,
    ss: Option<SsPlan>,
    next_ss_ns: u64,
    ss_base: Option<(u64, [u64; 3], [u64; 3])>,
    /// The job's clat sum and count at the start of the steady-state interval.
    ss_clat: (u64, u64),
    /// Length of the latest I/O per direction (the histogram log's bs column).
    pub last_bs: [u64; 3],
}

/// One kind of periodic sample (bw or IOPS): the previous sample's time and counters, and
/// when the next is due. The due times stay on the interval's multiples from the start: a
/// sample taken early (fio's slack) or late does not move the ones after it (fio's helper
/// thread makes up for a late one), so log times do not drift.
#[derive(Clone, Copy, Debug, Default)]
struct Cadence {
    last_ns: u64,
    due_ns: u64,
    last: [u64; 3],
}

impl Cadence {
    fn starting(now: u64, interval_ms: u64) -> Self {
        Cadence {
            last_ns: now,
            due_ns: now + interval_ms * 1_000_000,
            last: [0; 3],
        }
    }
}

/// If a sample is due (less `slack` ns), call `add(dir, delta, spent_ms)` for every
/// direction whose counter moved since the last one, and set the next due time.
#[inline]
fn sample_due(
    now: u64,
    interval_ms: u64,
    slack: u64,
    c: &mut Cadence,
    cur: &[u64; 3],
    mut add: impl FnMut(usize, u64, u64),
) {
    if now + slack < c.due_ns {
        return;
    }
    let spent = (now - c.last_ns) / 1_000_000;
    if spent == 0 {
        return;
    }
    let interval = interval_ms * 1_000_000;
    c.due_ns += interval;
    if c.due_ns <= now {
        // Far behind (a stalled job): start the multiples over from now.
        c.due_ns = now + interval;
    }
    for (d, (last, &now_count)) in c.last.iter_mut().zip(cur).enumerate() {
        let delta = now_count - *last;
        if delta > 0 {
            add(d, delta, spent);
        }
        *last = now_count;
    }
    c.last_ns = now;
}

impl Meter {
    /// `job`/`thread` name the interval stream's records.
    pub fn new(p: &MeterPlan, job: &str, thread: u32) -> Self {
        let logs = p.logs.as_ref().map(Logs::new);
        let interval = p
            .interval_log
            .as_ref()
            .and_then(|(path, ms)| IntervalLog::new(path, *ms, job, thread).ok());
        Meter {
            sample: p.sample,
            bw_ms: p.bw_ms,
            iops_ms: p.iops_ms,
            slack_ns: p.sample_slack_ms * 1_000_000,
            epoch_ns: 0,
            bw: Cadence::default(),
            iops: Cadence::default(),
            next_check_ns: 0,
            next_publish_ns: 0,
            logs,
            interval,
            next_log_ns: u64::MAX,
            log_tick_ns: p.log_tick_ns,
            ss: p.ss,
            next_ss_ns: u64::MAX,
            ss_base: None,
            ss_clat: (0, 0),
            last_bs: [0; 3],
        }
    }

    fn check_interval_ns(&self) -> u64 {
        // Sample as early as fio's helper thread does (its slack).
        (self.bw_ms.min(self.iops_ms) * 1_000_000)
            .saturating_sub(self.slack_ns)
            .max(1_000_000)
    }

    /// The measured part starts (the job, or the end of ramp_time) at `now`.
    pub fn start(&mut self, now: u64) {
        if let Some(l) = &mut self.logs {
            l.start_epoch();
        }
        self.epoch_ns = now;
        self.bw = Cadence::starting(now, self.bw_ms);
        self.iops = Cadence::starting(now, self.iops_ms);
        self.next_check_ns = now + self.check_interval_ns();
        self.next_publish_ns = now;
        self.next_log_ns = if self.logs.is_some() || self.interval.is_some() {
            now + self.log_tick_ns
        } else {
            u64::MAX
        };
        self.ss_base = None;
        self.next_ss_ns = match self.ss {
            // fio: without ss_ramp the first interval starts with the job; with it, the
            // baseline is taken one check interval after ss_ramp has passed.
            Some(ss) if ss.ramp_us > 0 => now + (ss.ramp_us + ss.interval_us) * 1000,
            Some(_) => now,
            None => u64::MAX,
        };
    }

    /// ramp_time began: steady-state sampling waits for the measured part.
    pub fn ramp(&mut self) {
        self.next_ss_ns = u64::MAX;
    }

    /// Whether the job judges steady state (and is not in ramp).
    pub fn steady_state_on(&self) -> bool {
        self.next_ss_ns != u64::MAX
    }

    /// The earliest deadline.
    pub fn next_event(&self) -> u64 {
        self.next_check_ns
            .min(self.next_publish_ns)
            .min(self.next_log_ns)
            .min(self.next_ss_ns)
    }

    /// Steady state: close a check interval if one ended, and hand its IOPS and bytes/s to
    /// the main thread (fio's per-job `1000 * delta / ms`), with the completion latencies
    /// of the interval (`clat`: the job's running sum of clat ns and count).
    pub fn steady_state(
        &mut self,
        now: u64,
        bytes: &[u64; 3],
        ios: &[u64; 3],
        clat: (u64, u64),
        pr: &Progress,
    ) {
        let Some(ss) = self.ss else { return };
        if now < self.next_ss_ns {
            return;
        }
        if let Some((t0, b0, i0)) = self.ss_base {
            let ms = (now - t0) / 1_000_000;
            // One direction's (or all pooled) IOPS and bytes/s over the interval.
            let rate = |ios_d: u64, bytes_d: u64| {
                if ss.scaled_samples {
                    let iv_ms = ss.interval_us / 1000;
                    let div = iv_ms.saturating_mul(iv_ms) / 1000;
                    ms.saturating_mul(ios_d)
                        .checked_div(div)
                        .zip(ms.saturating_mul(bytes_d).checked_div(div))
                } else {
                    (ios_d * 1000)
                        .checked_div(ms)
                        .zip((bytes_d * 1000).checked_div(ms))
                }
            };
            let d = |k: usize| (ios[k].saturating_sub(i0[k]), bytes[k].saturating_sub(b0[k]));
            let all = rate((0..3).map(|k| d(k).0).sum(), (0..3).map(|k| d(k).1).sum());
            if let Some((iops, bw)) = all {
                let mut dirs = [(0, 0); 3];
                for (k, slot) in dirs.iter_mut().enumerate() {
                    *slot = rate(d(k).0, d(k).1).unwrap_or((0, 0));
                }
                if let Ok(mut v) = pr.ss_samples.lock() {
                    v.push(crate::progress::SsSample {
                        iops,
                        bw,
                        lat_sum: clat.0.saturating_sub(self.ss_clat.0),
                        lat_n: clat.1.saturating_sub(self.ss_clat.1),
                        dirs,
                    });
                }
            }
        }
        self.ss_base = Some((now, *bytes, *ios));
        self.ss_clat = clat;
        let iv = ss.interval_us * 1000;
        self.next_ss_ns = if self.next_ss_ns + iv > now {
            self.next_ss_ns + iv
        } else {
            now + iv
        };
    }

    /// Whether progress is due for publication (and the termination and snapshot requests
    /// for a look); advances the deadline.
    pub fn publish_due(&mut self, now: u64) -> bool {
        if now < self.next_publish_ns {
            return false;
        }
        self.next_publish_ns = now + PUBLISH_NS;
        true
    }

    /// Log ticks: averaged windows, histogram rows, interval records.
    pub fn logs_tick(
        &mut self,
        now: u64,
        epoch: u64,
        stats: &ThreadStats,
        totals: (&[u64; 3], &[u64; 3]),
    ) {
        if now < self.next_log_ns {
            return;
        }
        let ms = now.saturating_sub(epoch) / 1_000_000;
        let hists = [
            &stats.dirs[0].clat_hist,
            &stats.dirs[1].clat_hist,
            &stats.dirs[2].clat_hist,
        ];
        if let Some(l) = &mut self.logs {
            l.tick(ms, hists, &self.last_bs);
        }
        if let Some(iv) = &mut self.interval {
            let sched = [
                &stats.dirs[0].sched_hist,
                &stats.dirs[1].sched_hist,
                &stats.dirs[2].sched_hist,
            ];
            iv.emit(ms, totals, hists, sched, false);
        }
        // Ticks stay on multiples of the tick length, so intervals end on time.
        let t = self.log_tick_ns;
        self.next_log_ns = epoch + ((now - epoch) / t + 1) * t;
    }

    /// Whether a bw/IOPS check interval ended (the sample time, also used for the minimum
    /// rate check); advances the deadline.
    pub fn check_due(&mut self, now: u64) -> bool {
        if now < self.next_check_ns {
            return false;
        }
        self.next_check_ns = now + self.check_interval_ns();
        true
    }

    /// bw in KiB/s and IOPS over the time since the previous sample, for every direction
    /// that made progress (fio's calc_log_samples). With per-I/O bw/iops logs the samples
    /// are taken per I/O instead, as in fio; an averaged bw/iops log gets each sample as
    /// its entry, stamped with the sample's time (fio's __add_samples).
    pub fn sample(&mut self, now: u64, stats: &mut ThreadStats, bytes: &[u64; 3], ios: &[u64; 3]) {
        if !self.sample {
            return;
        }
        let (per_io_bw, per_io_iops) = self
            .logs
            .as_ref()
            .map(|l| (l.per_io_bw, l.per_io_iops))
            .unwrap_or((false, false));
        let dirs = &mut stats.dirs;
        let logs = &mut self.logs;
        let ms = now.saturating_sub(self.epoch_ns) / 1_000_000;
        if !per_io_bw {
            sample_due(
                now,
                self.bw_ms,
                self.slack_ns,
                &mut self.bw,
                bytes,
                |d, delta, spent| {
                    let v = delta * 1000 / spent / 1024;
                    dirs[d].bw.add(v);
                    if let Some(l) = logs.as_mut() {
                        l.rate_sample(false, ms, d as u8, v);
                    }
                },
            );
        }
        if !per_io_iops {
            sample_due(
                now,
                self.iops_ms,
                self.slack_ns,
                &mut self.iops,
                ios,
                |d, delta, spent| {
                    let v = delta * 1000 / spent;
                    dirs[d].iops.add(v);
                    if let Some(l) = logs.as_mut() {
                        l.rate_sample(true, ms, d as u8, v);
                    }
                },
            );
        }
        // The next check comes no later than the next sample of either kind is due (with
        // fio's slack): bw and IOPS intervals can differ (a bw log's log_avg_msec).
        let next = self
            .bw
            .due_ns
            .min(self.iops.due_ns)
            .saturating_sub(self.slack_ns);
        self.next_check_ns = self.next_check_ns.min(next.max(now + 1_000_000));
    }

    /// A completed I/O for the logs (and per-I/O bw/IOPS samples). Latencies in ns.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub fn io(
        &mut self,
        stats: &mut ThreadStats,
        time_ms: u64,
        (ddir, len, offset, prio): (u8, u64, u64, u16),
        lat: u64,
        clat: u64,
        slat: Option<u64>,
        issue_ns: u64,
    ) {
        let Some(l) = &mut self.logs else { return };
        l.io(time_ms, ddir, len, offset, prio, lat, clat, slat, issue_ns);
        let d = &mut stats.dirs[ddir as usize];
        if l.io_bw {
            d.bw.add(per_io_rate(len, clat));
        }
        if l.io_iops {
            d.iops.add(1);
        }
    }

    /// The job ends: the last interval records and everything logged is written. Returns
    /// error messages, if any.
    pub fn finish(
        &mut self,
        ms: u64,
        stats: &ThreadStats,
        totals: (&[u64; 3], &[u64; 3]),
    ) -> Vec<String> {
        if let Some(iv) = &mut self.interval {
            let hists = [
                &stats.dirs[0].clat_hist,
                &stats.dirs[1].clat_hist,
                &stats.dirs[2].clat_hist,
            ];
            let sched = [
                &stats.dirs[0].sched_hist,
                &stats.dirs[1].sched_hist,
                &stats.dirs[2].sched_hist,
            ];
            iv.emit(ms, totals, hists, sched, true);
        }
        self.logs.take().map(Logs::finish).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(bw_ms: u64) -> MeterPlan {
        MeterPlan {
            sample: true,
            bw_ms,
            iops_ms: bw_ms,
            sample_slack_ms: 1,
            logs: None,
            interval_log: None,
            ss: None,
            log_tick_ns: 100_000_000,
        }
    }

    #[test]
    fn bw_and_iops_samples_per_interval() {
        let mut m = Meter::new(&plan(500), "j", 1);
        let mut s = ThreadStats::new(Default::default());
        let ms = 1_000_000;
        m.start(0);
        assert_eq!(m.next_event(), 0, "progress is published at once");
        assert!(m.publish_due(0));
        assert_eq!(m.next_event(), PUBLISH_NS, "next publication");
        assert!(!m.check_due(400 * ms));
        assert!(m.check_due(499 * ms), "fio samples 1 ms early");
        // 1 MiB and 256 I/Os in the first 499 ms of reads.
        m.sample(499 * ms, &mut s, &[1 << 20, 0, 0], &[256, 0, 0]);
        assert_eq!(s.dirs[0].bw.samples, 1);
        assert_eq!(s.dirs[1].bw.samples, 0, "no writes, no sample");
        assert_eq!(s.dirs[0].iops.samples, 1);
        // Too early for the next one.
        m.sample(600 * ms, &mut s, &[2 << 20, 0, 0], &[512, 0, 0]);
        assert_eq!(s.dirs[0].bw.samples, 1);
    }

    #[test]
    fn fio_333_samples_on_the_interval_and_each_kind_on_its_own() {
        // fio 3.33: no early sample; a bw interval (1000 ms, a bw log's log_avg_msec) apart
        // from the IOPS one (500 ms) is sampled when it is due, not at the next IOPS check.
        let p = MeterPlan {
            bw_ms: 1000,
            sample_slack_ms: 0,
            ..plan(500)
        };
        let mut m = Meter::new(&p, "j", 1);
        let mut s = ThreadStats::new(Default::default());
        let ms = 1_000_000;
        m.start(0);
        assert!(!m.check_due(499 * ms));
        assert!(m.check_due(500 * ms));
        m.sample(500 * ms, &mut s, &[1 << 20, 0, 0], &[256, 0, 0]);
        assert_eq!((s.dirs[0].bw.samples, s.dirs[0].iops.samples), (0, 1));
        assert!(!m.check_due(999 * ms));
        assert!(m.check_due(1000 * ms));
        m.sample(1000 * ms, &mut s, &[2 << 20, 0, 0], &[512, 0, 0]);
        assert_eq!((s.dirs[0].bw.samples, s.dirs[0].iops.samples), (1, 2));
        // 2 MiB in the bw sample's 1000 ms.
        assert_eq!(s.dirs[0].bw.max, 2048);
    }

    #[test]
    fn averaged_bw_and_iops_logs_take_the_samples() {
        // fio: an averaged bw/IOPS log gets one entry per sample, at the sample's time.
        let d = tempfile::tempdir().unwrap();
        let p = MeterPlan {
            logs: Some(crate::plan::LogPlan {
                bw: Some(d.path().join("bw.log")),
                iops: Some(d.path().join("iops.log")),
                avg_ms: 100,
                ..Default::default()
            }),
            ..plan(100)
        };
        let mut m = Meter::new(&p, "j", 1);
        let mut s = ThreadStats::new(Default::default());
        let ms = 1_000_000;
        let t0 = 7 * ms;
        m.start(t0);
        m.sample(t0 + 101 * ms, &mut s, &[204800, 0, 0], &[50, 0, 0]);
        // No I/O in the second interval: no sample, no entry.
        m.sample(t0 + 201 * ms, &mut s, &[204800, 0, 0], &[50, 0, 0]);
        m.sample(t0 + 301 * ms, &mut s, &[409600, 0, 0], &[100, 0, 0]);
        assert_eq!((s.dirs[0].bw.samples, s.dirs[0].iops.samples), (2, 2));
        assert!(m.finish(302, &s, (&[0; 3], &[0; 3])).is_empty());
        let read = |f: &str| std::fs::read_to_string(d.path().join(f)).unwrap();
        // 204800 B in 101 ms = 1980 KiB/s, 50 I/Os = 495 IOPS; the third interval is 100 ms.
        assert_eq!(read("bw.log"), "101, 1980, 0, 0, 0\n301, 2000, 0, 0, 0\n");
        assert_eq!(read("iops.log"), "101, 495, 0, 0, 0\n301, 500, 0, 0, 0\n");
    }

    #[test]
    fn per_io_samples_count_every_io_even_at_clat_zero() {
        let d = tempfile::tempdir().unwrap();
        let p = MeterPlan {
            logs: Some(crate::plan::LogPlan {
                bw: Some(d.path().join("bw.log")),
                iops: Some(d.path().join("iops.log")),
                ..Default::default()
            }),
            ..plan(500)
        };
        let mut m = Meter::new(&p, "j", 1);
        let mut s = ThreadStats::new(Default::default());
        for clat in [0, 2000, 0] {
            m.io(&mut s, 1, (1, 4096, 0, 0), clat, clat, None, 0);
        }
        // fio's per-I/O samples: rate 0 for the I/Os with clat 0, none skipped.
        assert_eq!((s.dirs[1].bw.samples, s.dirs[1].iops.samples), (3, 3));
        assert_eq!(s.dirs[1].bw.min, 0);
        assert!(m.finish(1, &s, (&[0; 3], &[0; 3])).is_empty());
        let n = |f: &str| {
            std::fs::read_to_string(d.path().join(f))
                .unwrap()
                .lines()
                .count()
        };
        assert_eq!((n("bw.log"), n("iops.log")), (3, 3));
    }

    #[test]
    fn steady_state_samples_every_check_interval() {
        let p = MeterPlan {
            ss: Some(SsPlan {
                criterion: Default::default(),
                dur_us: 10_000_000,
                ramp_us: 0,
                interval_us: 1_000_000,
                scaled_samples: false,
                auto_ramp: false,
                departure: None,
                band_pct: 20.0,
                departure_window_us: 0,
                direction: Default::default(),
            }),
            ..plan(500)
        };
        let mut m = Meter::new(&p, "j", 1);
        let pr = Progress::default();
        let s = 1_000_000_000;
        m.start(0);
        assert!(m.steady_state_on());
        m.steady_state(0, &[0; 3], &[0; 3], (0, 0), &pr);
        m.steady_state(s / 2, &[10; 3], &[1; 3], (7, 1), &pr);
        m.steady_state(s, &[1000, 0, 0], &[100, 0, 0], (5000, 100), &pr);
        assert_eq!(
            *pr.ss_samples.lock().unwrap(),
            vec![crate::progress::SsSample {
                iops: 100,
                bw: 1000,
                lat_sum: 5000,
                lat_n: 100,
                dirs: [(100, 1000), (0, 0), (0, 0)],
            }]
        );
        m.ramp();
        assert!(!m.steady_state_on());
    }
}
