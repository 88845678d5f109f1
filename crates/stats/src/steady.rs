//! Steady-state detection (fio's `ss`, `ss_dur`): a rolling window of per-interval IOPS
//! and bandwidth samples, judged by the least-squares slope or by the maximum deviation
//! from the window mean, absolute or relative to the mean.
//!
//! The arithmetic follows fio 3.33 exactly, quirks included: x is the sample index (the
//! samples are assumed evenly spaced), and the mean that a relative slope is divided by is
//! the integer mean of the window.
//!
//! fio 3.42 adds the mean completion latency as a third metric (`lat`, `lat_slope`): each
//! interval's sample is the mean clat in ns of the I/Os completed in it (all directions
//! pooled; 0 when none completed), judged with the same maths.

use std::collections::VecDeque;

/// The criterion: metric, slope or deviation, limit, relative or absolute.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Criterion {
    /// IOPS (true) or bandwidth in bytes/s (false), unless `lat`.
    pub iops: bool,
    /// Mean completion latency in ns (fio 3.42).
    pub lat: bool,
    pub slope: bool,
    pub limit: f64,
    pub pct: bool,
}

impl Criterion {
    /// fio's `"ss"` string: `iops_slope:0.100000%`.
    pub fn text(&self) -> String {
        format!(
            "{}{}:{:.6}{}",
            self.metric(),
            if self.slope { "_slope" } else { "" },
            self.limit,
            if self.pct { "%" } else { "" }
        )
    }

    /// The metric's name: `iops`, `bw` or `lat`.
    pub fn metric(&self) -> &'static str {
        if self.lat {
            "lat"
        } else if self.iops {
            "iops"
        } else {
            "bw"
        }
    }
}

/// One job's (or reporting group's) steady-state window and verdict.
#[derive(Clone, Debug)]
pub struct SteadyState {
    pub crit: Criterion,
    /// ss_dur in seconds (JSON `duration`).
    pub duration_s: u64,
    /// Samples in a full window.
    pub window: usize,
    pub attained: bool,
    /// The latest evaluated criterion value, and the slope / maximum deviation behind it.
    pub criterion: f64,
    pub slope: f64,
    pub max_deviation: f64,
    /// The window, oldest first: IOPS and bytes/s per sample.
    iops: VecDeque<u64>,
    bw: VecDeque<u64>,
    /// Mean completion latency (ns) per sample (kept for every criterion, shown for the
    /// latency ones).
    lat: VecDeque<u64>,
    /// Samples taken in total, and when attained (its index, 1-based).
    pub samples: u64,
    /// flexio's additions (auto ramp, departures); inactive for fio's options alone.
    pub watch: crate::watch::Watch,
}

impl SteadyState {
    pub fn new(crit: Criterion, duration_s: u64, window: usize) -> Self {
        let window = window.max(1);
        SteadyState {
            crit,
            duration_s,
            window,
            attained: false,
            criterion: 0.0,
            slope: 0.0,
            max_deviation: 0.0,
            iops: VecDeque::with_capacity(window),
            bw: VecDeque::with_capacity(window),
            lat: VecDeque::with_capacity(window),
            samples: 0,
            watch: Default::default(),
        }
    }

    /// The window emptied (the samples so far were a warm-up), settings kept.
    pub fn restart(&mut self) {
        let watch = std::mem::take(&mut self.watch);
        *self = SteadyState::new(self.crit, self.duration_s, self.window);
        self.watch = watch;
    }

    /// The window's mean of the criterion's metric (over the samples in it).
    pub fn level(&self) -> f64 {
        let y = if self.crit.lat {
            &self.lat
        } else if self.crit.iops {
            &self.iops
        } else {
            &self.bw
        };
        y.iter().sum::<u64>() as f64 / y.len().max(1) as f64
    }

    /// A verdict rebuilt from its parts (e.g. read back from fio's JSON).
    #[allow(clippy::too_many_arguments)]
    pub fn from_parts(
        crit: Criterion,
        duration_s: u64,
        attained: bool,
        criterion: f64,
        slope: f64,
        max_deviation: f64,
        iops: Vec<u64>,
        bw: Vec<u64>,
    ) -> Self {
        let window = iops.len().max(1);
        SteadyState {
            crit,
            duration_s,
            window,
            attained,
            criterion,
            slope,
            max_deviation,
            samples: iops.len() as u64,
            lat: vec![0; iops.len()].into(),
            iops: iops.into(),
            bw: bw.into(),
            watch: Default::default(),
        }
    }

    /// Add one interval's IOPS and bytes/s (and the mean completion latency in ns of the
    /// I/Os of the interval); true when the criterion is met.
    pub fn add(&mut self, iops: u64, bw: u64) -> bool {
        self.add_sample(iops, bw, 0)
    }

    /// [`SteadyState::add`] with the interval's mean completion latency.
    pub fn add_sample(&mut self, iops: u64, bw: u64, lat_ns: u64) -> bool {
        if self.iops.len() == self.window {
            self.iops.pop_front();
            self.bw.pop_front();
            self.lat.pop_front();
        }
        self.iops.push_back(iops);
        self.bw.push_back(bw);
        self.lat.push_back(lat_ns);
        self.samples += 1;
        if self.iops.len() < self.window {
            return false;
        }
        let y = if self.crit.lat {
            &self.lat
        } else if self.crit.iops {
            &self.iops
        } else {
            &self.bw
        };
        let n = self.window as u64;
        let sum_y: u64 = y.iter().sum();
        let met = if self.crit.slope {
            let sum_x = n * (n - 1) / 2;
            let sum_x_sq = (n - 1) * n * (2 * n - 1) / 6;
            let sum_xy: u64 = y.iter().enumerate().map(|(i, v)| i as u64 * v).sum();
            let denom = sum_x_sq as f64 - (sum_x as f64 * sum_x as f64) / n as f64;
            self.slope = if denom == 0.0 {
                0.0
            } else {
                (sum_xy as f64 - sum_x as f64 * sum_y as f64 / n as f64) / denom
            };
            self.criterion = if self.crit.pct {
                // fio divides by the integer mean.
                100.0 * self.slope / (sum_y / n) as f64
            } else {
                self.slope
            };
            self.criterion.abs() < self.crit.limit
        } else {
            let mean = sum_y as f64 / n as f64;
            self.max_deviation = y
                .iter()
                .map(|v| (mean - *v as f64).abs())
                .fold(0.0, f64::max);
            self.criterion = if self.crit.pct {
                100.0 * self.max_deviation / mean
            } else {
                self.max_deviation
            };
            self.criterion < self.crit.limit
        };
        if met {
            self.attained = true;
        }
        met
    }

    /// The window's IOPS samples, oldest first, padded with zeros to the window length.
    pub fn iops_data(&self) -> Vec<u64> {
        padded(&self.iops, self.window)
    }

    pub fn bw_data(&self) -> Vec<u64> {
        padded(&self.bw, self.window)
    }

    /// Integer means over the window length (as fio: unfilled slots count as zero).
    pub fn iops_mean(&self) -> u64 {
        self.iops.iter().sum::<u64>() / self.window as u64
    }

    pub fn bw_mean(&self) -> u64 {
        self.bw.iter().sum::<u64>() / self.window as u64
    }

    /// The window's latency samples (ns), padded as the others.
    pub fn lat_data(&self) -> Vec<u64> {
        padded(&self.lat, self.window)
    }

    pub fn lat_mean(&self) -> u64 {
        self.lat.iter().sum::<u64>() / self.window as u64
    }
}

fn padded(v: &VecDeque<u64>, n: usize) -> Vec<u64> {
    let mut out: Vec<u64> = v.iter().copied().collect();
    out.resize(n, 0);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn crit(iops: bool, slope: bool, limit: f64, pct: bool) -> Criterion {
        Criterion {
            iops,
            lat: false,
            slope,
            limit,
            pct,
        }
    }

    #[test]
    fn slope_matches_least_squares() {
        let mut s = SteadyState::new(crit(true, true, 1.0, false), 5, 5);
        for v in [100, 110, 120, 130] {
            assert!(!s.add(v, 0), "not evaluated before the window is full");
        }
        // y = 100 + 10x: slope 10, above the limit of 1.
        assert!(!s.add(140, 0));
        assert!((s.slope - 10.0).abs() < 1e-9);
        // Relative: 100 * 10 / 120 = 8.33%.
        let mut r = SteadyState::new(crit(true, true, 10.0, true), 5, 5);
        for v in [100, 110, 120, 130, 140] {
            r.add(v, 0);
        }
        assert!((r.criterion - 100.0 * 10.0 / 120.0).abs() < 1e-9);
        assert!(r.attained);
    }

    #[test]
    fn rolling_window_and_deviation() {
        let mut s = SteadyState::new(crit(false, false, 5.0, true), 3, 3);
        assert!(!s.add(0, 1000));
        assert!(!s.add(0, 2000));
        // Window 1000, 2000, 1000: mean 1333.3, max deviation 666.7 = 50%.
        assert!(!s.add(0, 1000));
        assert!((s.criterion - 50.0).abs() < 1e-9);
        // Old samples leave the window: 1000, 1010, 1000 → 0.66%.
        s.add(0, 1010);
        assert!(!s.attained);
        assert!(s.add(0, 1000));
        assert_eq!(s.bw_data(), vec![1000, 1010, 1000]);
        assert_eq!(s.bw_mean(), 1003);
    }

    #[test]
    fn unfilled_window_pads_with_zeros() {
        let mut s = SteadyState::new(crit(true, true, 0.01, true), 4, 4);
        s.add(7, 70);
        assert_eq!(s.iops_data(), vec![7, 0, 0, 0]);
        assert_eq!(s.iops_mean(), 1);
        assert_eq!(crit(true, true, 0.1, true).text(), "iops_slope:0.100000%");
        assert_eq!(crit(false, false, 1e6, false).text(), "bw:1000000.000000");
    }

    #[test]
    fn latency_criteria() {
        let c = Criterion {
            lat: true,
            ..crit(false, true, 5.0, true)
        };
        assert_eq!(c.text(), "lat_slope:5.000000%");
        let mut s = SteadyState::new(c, 4, 2);
        // fio 3.42's example: lat_ns [374, 351]: slope -23, mean 362, -6.35%.
        assert!(!s.add_sample(1998, 8185857, 374));
        assert!(
            !s.add_sample(1999, 8187904, 351),
            "|-6.35%| is over 5%: not attained"
        );
        assert!((s.slope + 23.0).abs() < 1e-9);
        assert_eq!(s.lat_mean(), 362);
        assert!(
            (s.criterion - (-2300.0 / 362.0)).abs() < 1e-9,
            "{}",
            s.criterion
        );
        assert_eq!(s.lat_data(), vec![374, 351]);
        let d = Criterion {
            lat: true,
            ..crit(false, false, 1000.0, false)
        };
        assert_eq!(d.text(), "lat:1000.000000");
        let mut s = SteadyState::new(d, 2, 2);
        s.add_sample(1, 1, 1000);
        assert!(s.add_sample(1, 1, 1500), "max deviation 250 < 1000 ns");
    }
}
