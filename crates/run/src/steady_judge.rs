//! Steady-state detection across a run: the job threads hand over one (IOPS, bytes/s)
//! sample per check interval; the main thread sums them per reporting group (or per job
//! without group_reporting), judges the window and asks the members to stop once the
//! criterion is met (fio's `steadystate_check`).

use crate::plan::ThreadPlan;
use crate::progress::Progress;
use flexio_job::options::SsDirection;
use flexio_stats::steady::{Criterion, SteadyState};
use flexio_stats::watch::{OnDeparture, Watch};
use std::sync::atomic::Ordering;

/// One steady-state unit: a job, or a reporting group's members.
pub struct SsUnit {
    pub members: Vec<usize>,
    pub state: SteadyState,
    /// Index of the next sample to take from every member.
    next: usize,
    /// `ss_ramp=auto`: the samples (IOPS, bytes/s, mean clat ns) until the warm-up's end
    /// is found, to judge the ones after it.
    kept: Vec<(u64, u64, u64)>,
    /// The verdict was told (when the unit stopped its members).
    pub told: bool,
    /// flexio's `ss_direction`.
    direction: SsDirection,
    /// `ss_direction=each`: a window per direction that has done I/O.
    each: Vec<(usize, SteadyState)>,
}

/// The steady-state units among `members` (plan indices) of a stonewall segment.
pub fn units(plans: &[ThreadPlan], members: &[usize]) -> Vec<SsUnit> {
    let mut out: Vec<SsUnit> = Vec::new();
    for &i in members {
        let Some(ss) = plans[i].meter.ss else {
            continue;
        };
        if plans[i].control.group_reporting {
            if let Some(u) = out.iter_mut().find(|u| {
                let f = &plans[u.members[0]];
                f.control.group_reporting && f.groupid == plans[i].groupid
            }) {
                u.members.push(i);
                continue;
            }
        }
        let crit = Criterion {
            iops: ss.criterion.iops,
            lat: ss.criterion.lat,
            slope: ss.criterion.slope,
            limit: ss.criterion.limit,
            pct: ss.criterion.pct,
        };
        let iv = ss.interval_us.max(1);
        let window = (ss.dur_us / iv).max(1) as usize;
        let mut state = SteadyState::new(crit, ss.dur_us / 1_000_000, window);
        let dep_us = if ss.departure_window_us > 0 {
            ss.departure_window_us
        } else {
            ss.dur_us
        };
        state.watch = Watch::new(
            ss.auto_ramp,
            ss.departure,
            ss.band_pct,
            (dep_us / iv).max(1) as usize,
            iv as f64 / 1e6,
        );
        state.watch.offset_s = ss.ramp_us as f64 / 1e6;
        out.push(SsUnit {
            members: vec![i],
            state,
            next: 0,
            kept: Vec::new(),
            told: false,
            direction: ss.direction,
            each: Vec::new(),
        });
    }
    out
}

impl SsUnit {
    /// Take every sample that all still-running members have produced; true when the
    /// criterion was met by one of them (the members have then been asked to stop).
    pub fn poll(&mut self, progress: &[Progress], finished: impl Fn(usize) -> bool) -> bool {
        let watching = self.state.watch.on_departure.is_some();
        if self.state.attained && !watching {
            return false;
        }
        loop {
            let (mut iops, mut bw, mut any) = (0u64, 0u64, false);
            let (mut lat_sum, mut lat_n) = (0u64, 0u64);
            let mut dirs = [(0u64, 0u64); 3];
            for &m in &self.members {
                let Ok(v) = progress[m].ss_samples.lock() else {
                    continue;
                };
                match v.get(self.next) {
                    Some(s) => {
                        iops += s.iops;
                        bw += s.bw;
                        lat_sum = lat_sum.wrapping_add(s.lat_sum);
                        lat_n += s.lat_n;
                        for (d, x) in dirs.iter_mut().zip(s.dirs) {
                            d.0 += x.0;
                            d.1 += x.1;
                        }
                        any = true;
                    }
                    // A member still running owes this sample: wait for it.
                    None if !finished(m) => return false,
                    None => {}
                }
            }
            if !any {
                return false;
            }
            self.next += 1;
            crate::debug_log!(
                crate::debug::Cat::Steadystate,
                "steadystate: sample {}: iops={iops}, bw={bw}, lat_sum={lat_sum}, lat_n={lat_n}",
                self.next
            );
            // The mean completion latency of the interval's I/Os, all members pooled.
            let lat = lat_sum.checked_div(lat_n).unwrap_or(0);
            if self.take(iops, bw, lat, &dirs) {
                for &m in &self.members {
                    progress[m].ss_stop.store(true, Ordering::Relaxed);
                }
                return true;
            }
        }
    }

    /// One sample of the unit (all members summed): pooled IOPS and bytes/s, the mean
    /// completion latency, and each direction's IOPS and bytes/s. True when the members
    /// should stop.
    fn take(&mut self, iops: u64, bw: u64, lat: u64, dirs: &[(u64, u64); 3]) -> bool {
        let (iops, bw) = match self.direction {
            SsDirection::One(k) => dirs[k],
            _ => (iops, bw),
        };
        // ss_direction=each: fio's window still shows the pooled samples, and it is
        // attained when every direction's own window is.
        let each = (self.direction == SsDirection::Each).then(|| self.each_met(dirs, lat));
        self.sample(iops, bw, lat, each)
    }

    /// `ss_direction=each`: feed every direction's window; whether all that have done I/O
    /// meet the criterion now.
    fn each_met(&mut self, dirs: &[(u64, u64); 3], lat: u64) -> bool {
        for (k, (iops, _)) in dirs.iter().enumerate() {
            if *iops > 0 && !self.each.iter().any(|(d, _)| *d == k) {
                let st = &self.state;
                self.each
                    .push((k, SteadyState::new(st.crit, st.duration_s, st.window)));
            }
        }
        let mut all = !self.each.is_empty();
        for (k, st) in &mut self.each {
            let (iops, bw) = dirs[*k];
            all &= st.add_sample(iops, bw, lat) && st.criterion.is_finite();
        }
        all
    }

    /// Judge one sample; true when the job should stop now (steady state attained without
    /// a departure watch, or a departure with `ss_departure=stop`).
    fn sample(&mut self, iops: u64, bw: u64, lat: u64, each: Option<bool>) -> bool {
        let st = &mut self.state;
        if !st.watch.active() {
            let met = Self::add(st, iops, bw, lat, each);
            if met {
                crate::debug_log!(crate::debug::Cat::Steadystate, "steadystate: attained");
            }
            return met;
        }
        let c = st.crit;
        let metric = if c.lat {
            lat
        } else if c.iops {
            iops
        } else {
            bw
        } as f64;
        let found = st.watch.push(metric);
        if st.watch.auto_ramp {
            match (st.watch.ramp, found) {
                (None, _) => {
                    self.kept.push((iops, bw, lat));
                    return false;
                }
                (Some(d), Some(_)) => {
                    // The warm-up is over: judge the samples after it, this one included.
                    crate::debug_log!(
                        crate::debug::Cat::Steadystate,
                        "steadystate: MSER-5: the first {d} samples were the warm-up"
                    );
                    self.kept.push((iops, bw, lat));
                    st.restart();
                    let after = std::mem::take(&mut self.kept);
                    for (i, b, l) in after.into_iter().skip(d) {
                        if Self::judge(st, i, b, l, false, None) {
                            return true;
                        }
                    }
                    return false;
                }
                (Some(_), None) => {}
            }
        }
        Self::judge(st, iops, bw, lat, true, each)
    }

    /// A sample into fio's window; with `each`, attainment is every direction's verdict.
    fn add(st: &mut SteadyState, iops: u64, bw: u64, lat: u64, each: Option<bool>) -> bool {
        let was = st.attained;
        let met = st.add_sample(iops, bw, lat);
        match each {
            Some(e) => {
                st.attained = was || e;
                e
            }
            None => met,
        }
    }

    /// One sample into the window and the watch (whose series already has it when
    /// `pushed`).
    fn judge(
        st: &mut SteadyState,
        iops: u64,
        bw: u64,
        lat: u64,
        pushed: bool,
        each: Option<bool>,
    ) -> bool {
        let was = st.attained;
        let met = Self::add(st, iops, bw, lat, each);
        let watching = st.watch.on_departure;
        if met && !was {
            crate::debug_log!(crate::debug::Cat::Steadystate, "steadystate: attained");
            if watching.is_none() {
                return true;
            }
            let level = st.level();
            st.watch.attained(level);
            return false;
        }
        if was && pushed {
            if let Some(d) = st.watch.check() {
                crate::debug_log!(
                    crate::debug::Cat::Steadystate,
                    "steadystate: left the steady band at {:.1} s: {:.0} -> {:.0}",
                    d.at_s,
                    d.from,
                    d.to
                );
                return watching == Some(OnDeparture::Stop);
            }
        }
        false
    }

    /// An account of the verdict for the notes (a line, or several with flexio's
    /// additions).
    pub fn verdict(&self, name: &str) -> String {
        let s = &self.state;
        let w = &s.watch;
        let what = format!(
            "{}{}",
            s.crit.metric(),
            if s.crit.slope { " slope" } else { " mean dev" }
        );
        let pct = if s.crit.pct { "%" } else { "" };
        let mut lines = Vec::new();
        if w.auto_ramp {
            lines.push(match w.ramp {
                Some(d) => format!(
                    "flexio: {name}: steady-state ramp found by MSER-5: the first {d} samples ({:.1} s) were the warm-up",
                    d as f64 * w.interval_s
                ),
                None => format!(
                    "flexio: {name}: steady-state ramp not found by MSER-5 in {} samples (the warm-up may still be going on; MSER-5 decides once the steady part outweighs it)",
                    w.series.len()
                ),
            });
        }
        if s.attained {
            let how = if w.on_departure.is_some() {
                "; watching for departures"
            } else {
                "; stopping early"
            };
            lines.push(format!(
                "flexio: {name}: steady state attained after {} samples ({what}={:.3}{pct}, limit {}{pct}){how}",
                w.attained_at
                    .unwrap_or(s.samples as usize + w.ramp.unwrap_or(0)),
                s.criterion,
                s.crit.limit
            ));
        } else if (s.samples as usize) < s.window {
            lines.push(format!(
                "flexio: {name}: steady state not attained: the job ended after {} of the {} samples a window needs",
                s.samples, s.window
            ));
        } else {
            lines.push(format!(
                "flexio: {name}: steady state not attained ({what}={:.3}{pct} at the end, limit {}{pct})",
                s.criterion, s.crit.limit
            ));
        }
        for d in &w.departures {
            lines.push(format!(
                "flexio: {name}: left steady state at {:.1} s: {} {:.0} -> {:.0} ({:+.1}%, outside the ±{}% band for {} samples){}",
                d.at_s,
                s.crit.metric(),
                d.from,
                d.to,
                100.0 * (d.to - d.from) / d.from.max(f64::MIN_POSITIVE),
                w.band_pct,
                w.window,
                if w.on_departure == Some(OnDeparture::Stop) {
                    "; stopping"
                } else {
                    ""
                }
            ));
        }
        if s.attained && w.on_departure.is_some() && w.departures.is_empty() {
            lines.push(format!(
                "flexio: {name}: no departure from steady state (±{}% band, {} samples)",
                w.band_pct, w.window
            ));
        }
        lines.join("\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(auto_ramp: bool, departure: Option<OnDeparture>) -> SsUnit {
        let crit = Criterion {
            iops: true,
            lat: false,
            slope: false,
            limit: 10.0,
            pct: true,
        };
        let mut state = SteadyState::new(crit, 5, 5);
        state.watch = Watch::new(auto_ramp, departure, 20.0, 3, 1.0);
        SsUnit {
            members: Vec::new(),
            state,
            next: 0,
            kept: Vec::new(),
            told: false,
            direction: SsDirection::All,
            each: Vec::new(),
        }
    }

    #[test]
    fn auto_ramp_judges_only_the_samples_after_the_warm_up() {
        let mut u = unit(true, None);
        // 20 samples of a slow warm-up, then a level with ±2% wobble.
        let mut stopped_at = None;
        for i in 0..200u64 {
            let v = if i < 20 {
                100 + i
            } else {
                1000 + (i * 7) % 40 - 20
            };
            if u.sample(v, v * 4096, 0, None) {
                stopped_at = Some(i);
                break;
            }
        }
        let w = &u.state.watch;
        assert_eq!(w.ramp, Some(20), "{:?}", w.series);
        let at = stopped_at.expect("attained") as usize;
        // Decided after the steady part outweighed the warm-up, then attained at once
        // (the samples after the cut already fill the window).
        assert!((55..=70).contains(&at), "stopped at {at}");
        assert!(
            u.state.attained && u.state.criterion < 10.0,
            "{}",
            u.state.criterion
        );
        let v = u.verdict("j");
        assert!(
            v.contains("the first 20 samples (20.0 s) were the warm-up"),
            "{v}"
        );
        assert!(v.contains("stopping early"), "{v}");
    }

    #[test]
    fn directions_judged_alone_or_each_in_its_own_window() {
        // Reads steady at 1000, writes climbing 100 → 190: pooled, the climb is 8% of
        // the total (met at 10%); the writes alone are not steady.
        let series = |i: u64| {
            [
                (1000, 1000 * 4096),
                (100 + 10 * i, (100 + 10 * i) * 4096),
                (0, 0),
            ]
        };
        let run = |dir: SsDirection| {
            let mut u = unit(false, None);
            u.direction = dir;
            (0..10u64)
                .position(|i| {
                    let d = series(i);
                    u.take(d[0].0 + d[1].0, (d[0].0 + d[1].0) * 4096, 0, &d)
                })
                .map(|i| (i, u.state.iops_data()))
        };
        let (at, _) = run(SsDirection::All).expect("pooled: attained");
        assert_eq!(at, 4, "the first full window");
        let (at, data) = run(SsDirection::One(0)).expect("reads: attained");
        assert_eq!((at, data), (4, vec![1000; 5]), "the reads' own samples");
        assert_eq!(run(SsDirection::One(1)), None, "writes climb 40% a window");
        assert_eq!(
            run(SsDirection::Each),
            None,
            "each: the writes hold it back"
        );
        // Each direction steady: attained, with fio's window showing the pooled samples.
        let mut u = unit(false, None);
        u.direction = SsDirection::Each;
        let d = [(1000, 4_096_000), (500, 2_048_000), (0, 0)];
        let at = (0..10).position(|_| u.take(1500, 6_144_000, 0, &d));
        assert_eq!(at, Some(4));
        assert_eq!(u.state.iops_data(), vec![1500; 5]);
        assert_eq!(u.each.len(), 2, "no window for the trims, which did no I/O");
    }

    #[test]
    fn a_watched_unit_keeps_running_and_stops_on_a_departure_when_asked() {
        for (mode, stops) in [(OnDeparture::Flag, false), (OnDeparture::Stop, true)] {
            let mut u = unit(false, Some(mode));
            let mut stopped = false;
            for i in 0..40u64 {
                let v = if i < 20 { 1000 } else { 300 };
                stopped = u.sample(v, v, 0, None);
                if stopped {
                    assert_eq!(i, 22, "the third sample outside the band");
                    break;
                }
            }
            assert_eq!(stopped, stops);
            let w = &u.state.watch;
            assert_eq!(w.departures.len(), 1);
            assert_eq!(w.departures[0].sample, 20);
            assert_eq!(w.attained_level, Some(1000.0));
            let v = u.verdict("j");
            assert!(
                v.contains("left steady state at 20.0 s: iops 1000 -> 300 (-70.0%"),
                "{v}"
            );
        }
    }
}
