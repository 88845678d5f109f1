//! Steady-state detection across a run: the job threads hand over one (IOPS, bytes/s)
//! sample per check interval; the main thread sums them per reporting group (or per job
//! without group_reporting), judges the window and asks the members to stop once the
//! criterion is met (fio's `steadystate_check`).

use crate::plan::ThreadPlan;
use crate::progress::Progress;
use flexio_stats::steady::{Criterion, SteadyState};
use std::sync::atomic::Ordering;

/// One steady-state unit: a job, or a reporting group's members.
pub struct SsUnit {
    pub members: Vec<usize>,
    pub state: SteadyState,
    /// Index of the next sample to take from every member.
    next: usize,
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
        let window = (ss.dur_us / ss.interval_us.max(1)).max(1) as usize;
        out.push(SsUnit {
            members: vec![i],
            state: SteadyState::new(crit, ss.dur_us / 1_000_000, window),
            next: 0,
        });
    }
    out
}

impl SsUnit {
    /// Take every sample that all still-running members have produced; true when the
    /// criterion was met by one of them (the members have then been asked to stop).
    pub fn poll(&mut self, progress: &[Progress], finished: impl Fn(usize) -> bool) -> bool {
        if self.state.attained {
            return false;
        }
        loop {
            let (mut iops, mut bw, mut any) = (0u64, 0u64, false);
            let (mut lat_sum, mut lat_n) = (0u64, 0u64);
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
            if self.state.add_sample(iops, bw, lat) {
                crate::debug_log!(crate::debug::Cat::Steadystate, "steadystate: attained");
                for &m in &self.members {
                    progress[m].ss_stop.store(true, Ordering::Relaxed);
                }
                return true;
            }
        }
    }

    /// A one-line account of the verdict for the notes.
    pub fn verdict(&self, name: &str) -> String {
        let s = &self.state;
        let what = format!(
            "{}{}",
            s.crit.metric(),
            if s.crit.slope { " slope" } else { " mean dev" }
        );
        let pct = if s.crit.pct { "%" } else { "" };
        if s.attained {
            format!(
                "flexio: {name}: steady state attained after {} samples ({what}={:.3}{pct}, limit {}{pct}); stopping early",
                s.samples, s.criterion, s.crit.limit
            )
        } else if (s.samples as usize) < s.window {
            format!(
                "flexio: {name}: steady state not attained: the job ended after {} of the {} samples a window needs",
                s.samples, s.window
            )
        } else {
            format!(
                "flexio: {name}: steady state not attained ({what}={:.3}{pct} at the end, limit {}{pct})",
                s.criterion, s.crit.limit
            )
        }
    }
}
