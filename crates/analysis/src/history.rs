//! A metric over stored runs (`flexio history`): its trend (Theil-Sen slope, Mann-Kendall
//! test) and its change points (penalised optimal partitioning of the levels), as a table and as a self-contained HTML page with one chart per series.

use crate::fmt::esc;
use crate::stats;
use crate::svg::{Axis, Chart, Scale, Series as SvgSeries};
use std::fmt::Write;

/// One stored value.
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    pub run: i64,
    /// Seconds since the epoch.
    pub saved_at: i64,
    pub label: Option<String>,
    pub value: f64,
}

/// One job, direction and metric over runs, oldest first.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    pub job: String,
    pub ddir: String,
    pub metric: String,
    pub points: Vec<Point>,
}

/// A monotonic trend.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Trend {
    /// Theil-Sen slope, in percent of the median per run.
    pub slope_pct: f64,
    /// Mann-Kendall two-sided p-value (normal approximation, ties ignored).
    pub p: f64,
}

impl Trend {
    /// "rising", "falling" or "flat" at level `alpha`.
    pub fn word(&self, alpha: f64) -> &'static str {
        if self.p >= alpha || self.slope_pct == 0.0 {
            "flat"
        } else if self.slope_pct > 0.0 {
            "rising"
        } else {
            "falling"
        }
    }
}

/// The trend of `v` (at least 4 values).
pub fn trend(v: &[f64]) -> Option<Trend> {
    let n = v.len();
    if n < 4 {
        return None;
    }
    let mut slopes = Vec::with_capacity(n * (n - 1) / 2);
    let mut s = 0i64;
    for i in 0..n {
        for j in i + 1..n {
            slopes.push((v[j] - v[i]) / (j - i) as f64);
            s += match v[j].partial_cmp(&v[i]) {
                Some(std::cmp::Ordering::Greater) => 1,
                Some(std::cmp::Ordering::Less) => -1,
                _ => 0,
            };
        }
    }
    let med = stats::median(v);
    let slope = stats::median(&slopes);
    let nf = n as f64;
    let var = nf * (nf - 1.0) * (2.0 * nf + 5.0) / 18.0;
    let z = match s {
        0 => 0.0,
        s if s > 0 => (s as f64 - 1.0) / var.sqrt(),
        s => (s as f64 + 1.0) / var.sqrt(),
    };
    Some(Trend {
        slope_pct: if med != 0.0 {
            100.0 * slope / med.abs()
        } else {
            0.0
        },
        p: stats::normal_p(z),
    })
}

/// Where the level of `v` changes: indices of the first value of each new level.
///
/// A single odd run is first smoothed away (each value is replaced by the median of itself
/// and its two neighbours, which keeps steps where they are). Then optimal partitioning:
/// the segmentation (segments of at least `min_len` values) that
/// minimises the squared deviations from each segment's mean plus a penalty of
/// `3 σ² ln n` per change point, σ being the run-to-run noise estimated robustly from the
/// successive differences (their median absolute value), so that a single odd run or a
/// few steps do not inflate it. Neighbouring levels closer than `min_shift_pct` percent
/// are then merged: a change that small is not one worth reporting.
pub fn change_points(v: &[f64], min_shift_pct: f64, min_len: usize) -> Vec<usize> {
    let n = v.len();
    let min_len = min_len.max(1);
    if n < 2 * min_len || v.iter().any(|x| !x.is_finite()) {
        return Vec::new();
    }
    // The noise from the values as measured (smoothing would hide some of it).
    let diffs: Vec<f64> = v.windows(2).map(|w| (w[1] - w[0]).abs()).collect();
    let scale = stats::mean(&v.iter().map(|x| x.abs()).collect::<Vec<_>>());
    let sigma = (stats::median(&diffs) / (0.6745 * std::f64::consts::SQRT_2))
        .max(1e-9 * scale)
        .max(f64::MIN_POSITIVE);
    let mut smooth = v.to_vec();
    for (i, x) in smooth.iter_mut().enumerate() {
        // The ends take the median of the first or last three.
        let lo = i.saturating_sub(1).min(n.saturating_sub(3));
        *x = stats::median(&v[lo..(lo + 3).min(n)]);
    }
    let v = &smooth[..];
    let pen = 3.0 * sigma * sigma * (n as f64).ln().max(1.0);
    let (mut s1, mut s2) = (vec![0.0; n + 1], vec![0.0; n + 1]);
    for (i, x) in v.iter().enumerate() {
        s1[i + 1] = s1[i] + x;
        s2[i + 1] = s2[i] + x * x;
    }
    let cost = |i: usize, j: usize| {
        let (s, q, l) = (s1[j] - s1[i], s2[j] - s2[i], (j - i) as f64);
        (q - s * s / l).max(0.0)
    };
    let mut best = vec![f64::INFINITY; n + 1];
    let mut back = vec![0usize; n + 1];
    best[0] = -pen;
    for j in min_len..=n {
        for i in (0..=j - min_len).filter(|&i| i == 0 || i >= min_len) {
            if !best[i].is_finite() {
                continue;
            }
            let c = best[i] + cost(i, j) + pen;
            if c < best[j] {
                best[j] = c;
                back[j] = i;
            }
        }
    }
    let mut cuts = Vec::new();
    let mut j = n;
    while j > 0 {
        let i = back[j];
        if i > 0 {
            cuts.push(i);
        }
        j = i;
    }
    cuts.reverse();
    // Merge the closest neighbouring levels while they differ by less than min_shift_pct.
    loop {
        let mut bounds = vec![0];
        bounds.extend(&cuts);
        bounds.push(n);
        let means: Vec<f64> = bounds
            .windows(2)
            .map(|w| stats::mean(&v[w[0]..w[1]]))
            .collect();
        let closest = (0..cuts.len())
            .map(|k| {
                let (a, b) = (means[k], means[k + 1]);
                let rel = if a != 0.0 {
                    100.0 * ((b - a) / a).abs()
                } else {
                    f64::INFINITY
                };
                (k, rel)
            })
            .filter(|(_, rel)| *rel < min_shift_pct)
            .min_by(|x, y| x.1.total_cmp(&y.1));
        match closest {
            Some((k, _)) => {
                cuts.remove(k);
            }
            None => break,
        }
    }
    cuts
}

/// How a metric named as `flexio compare` names it (`IOPS`, `bw`, or a latency) is printed.
pub fn metric_fmt(metric: &str) -> fn(f64) -> String {
    match metric {
        "IOPS" => crate::fmt::count,
        "bw" => crate::fmt::bw,
        _ => crate::fmt::ns,
    }
}

/// The unit a metric is drawn in, and how to print it.
fn axis_for(metric: &str) -> (&'static str, fn(f64) -> String) {
    let unit = match metric {
        "IOPS" => "IOPS",
        "bw" => "bytes/s",
        _ => "latency",
    };
    (unit, metric_fmt(metric))
}

fn run_number(v: f64) -> String {
    format!("{v:.0}")
}

/// The HTML page of `series`: per series a chart of the metric by run, the change points
/// marked as the levels between them.
pub fn html(title: &str, series: &[Series], alpha: f64, min_shift_pct: f64) -> String {
    let mut body = String::new();
    let _ = writeln!(body, "<h1>{}</h1>", esc(title));
    if series.is_empty() {
        body.push_str("<p class=\"note\">No stored runs match.</p>\n");
    }
    for s in series {
        let v: Vec<f64> = s.points.iter().map(|p| p.value).collect();
        let cps = change_points(&v, min_shift_pct, 2);
        let (label, fmt) = axis_for(&s.metric);
        let points: Vec<(f64, f64)> = s.points.iter().map(|p| (p.run as f64, p.value)).collect();
        let mut svg_series = vec![SvgSeries {
            name: format!("{} {} {}", s.job, s.ddir, s.metric),
            result: 0,
            points,
            ..Default::default()
        }];
        // The level of each segment between change points.
        let mut bounds = vec![0];
        bounds.extend(&cps);
        bounds.push(v.len());
        for w in bounds.windows(2) {
            let seg = &s.points[w[0]..w[1]];
            if seg.is_empty() {
                continue;
            }
            let level = stats::mean(&v[w[0]..w[1]]);
            svg_series.push(SvgSeries {
                name: "level".into(),
                result: 1,
                points: vec![
                    (seg[0].run as f64, level),
                    (seg[seg.len() - 1].run as f64, level),
                ],
                dashed: true,
                ..Default::default()
            });
        }
        let chart = Chart {
            title: format!("{} {} {} by run", s.job, s.ddir, s.metric),
            x: Axis {
                scale: Scale::Linear,
                label: "run",
                fmt: run_number,
                binary: false,
            },
            y: Axis {
                scale: Scale::Linear,
                label,
                fmt,
                binary: s.metric == "bw",
            },
            series: svg_series,
        };
        let _ = writeln!(
            body,
            "<section class=\"series\"><h2>{} {} {}</h2>",
            esc(&s.job),
            esc(&s.ddir),
            esc(&s.metric)
        );
        if let Some(svg) = chart.render() {
            body.push_str(&svg);
        }
        let t = trend(&v);
        let _ = writeln!(
            body,
            "<p class=\"trend\">{} runs; trend: {}; change points: {}</p>",
            v.len(),
            match t {
                Some(t) => format!(
                    "{} ({:+.2}% per run, Mann-Kendall p {})",
                    t.word(alpha),
                    t.slope_pct,
                    crate::fmt::p(t.p)
                ),
                None => "needs 4 runs".into(),
            },
            if cps.is_empty() {
                "none".to_string()
            } else {
                cps.iter()
                    .map(|&i| format!("before run {}", s.points[i].run))
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        );
        body.push_str(
            "<table><tr><th>run</th><th>saved (UTC)</th><th>label</th><th>value</th></tr>\n",
        );
        for p in &s.points {
            let _ = writeln!(
                body,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                p.run,
                esc(&utc(p.saved_at)),
                esc(p.label.as_deref().unwrap_or("")),
                fmt(p.value)
            );
        }
        body.push_str("</table></section>\n");
    }
    crate::report::standalone(title, &body)
}

/// `YYYY-MM-DD HH:MM` of seconds since the epoch (UTC).
pub fn utc(secs: i64) -> String {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = if m <= 2 { y + 1 } else { y };
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}",
        rem / 3600,
        rem % 3600 / 60
    )
}

/// Seconds since the epoch of `YYYY-MM-DD` or `YYYY-MM-DD HH:MM` (UTC).
pub fn parse_utc(s: &str) -> Option<i64> {
    let s = s.trim();
    let (date, time) = match s.split_once([' ', 'T']) {
        Some((d, t)) => (d, Some(t)),
        None => (s, None),
    };
    let mut it = date.split('-');
    let y: i64 = it.next()?.parse().ok()?;
    let m: i64 = it.next()?.parse().ok()?;
    let d: i64 = it.next()?.parse().ok()?;
    if it.next().is_some() || !(1..=12).contains(&m) || !(1..=31).contains(&d) {
        return None;
    }
    let (hh, mm) = match time {
        Some(t) => {
            let mut p = t.split(':');
            let h: i64 = p.next()?.parse().ok()?;
            let mi: i64 = p.next().unwrap_or("0").parse().ok()?;
            (h, mi)
        }
        None => (0, 0),
    };
    let y2 = if m <= 2 { y - 1 } else { y };
    let era = y2.div_euclid(400);
    let yoe = y2 - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(days * 86_400 + hh * 3600 + mm * 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_is_one_change_point_and_noise_is_none() {
        let v = [
            100.0, 101.0, 99.0, 100.5, 99.5, 80.0, 81.0, 79.5, 80.5, 80.2,
        ];
        assert_eq!(change_points(&v, 2.0, 2), vec![5]);
        let flat = [100.0, 101.0, 99.0, 100.5, 99.5, 100.2, 99.8, 100.1];
        assert!(change_points(&flat, 2.0, 2).is_empty());
        // Two steps.
        let v2 = [
            10.0, 10.1, 9.9, 10.0, 20.0, 20.2, 19.9, 20.1, 5.0, 5.1, 4.9, 5.0,
        ];
        assert_eq!(change_points(&v2, 2.0, 2), vec![4, 8]);
        // One odd run is not a change of level.
        let odd = [100.0, 101.0, 99.0, 100.5, 60.0, 100.2, 99.8, 100.1, 99.9];
        assert!(
            change_points(&odd, 2.0, 2).is_empty(),
            "{:?}",
            change_points(&odd, 2.0, 2)
        );
        // Noisy runs with a cold first one: one change, where the setting changed.
        let noisy = [3.21, 4.55, 4.10, 4.55, 5.10, 5.81, 5.95];
        assert_eq!(change_points(&noisy, 5.0, 2), vec![4]);
        // A shift below the smallest that counts is not a change.
        let small = [100.0, 100.0, 100.0, 100.0, 101.0, 101.0, 101.0, 101.0];
        assert!(change_points(&small, 2.0, 2).is_empty());
    }

    #[test]
    fn trends() {
        let up: Vec<f64> = (0..10).map(|i| 100.0 + 2.0 * i as f64).collect();
        let t = trend(&up).unwrap();
        assert_eq!(t.word(0.05), "rising");
        assert!((t.slope_pct - 2.0 / 109.0 * 100.0).abs() < 0.01, "{t:?}");
        let down: Vec<f64> = up.iter().rev().copied().collect();
        assert_eq!(trend(&down).unwrap().word(0.05), "falling");
        let flat = [5.0, 6.0, 5.0, 6.0, 5.0, 6.0];
        assert_eq!(trend(&flat).unwrap().word(0.05), "flat");
        assert!(trend(&[1.0, 2.0]).is_none());
    }

    #[test]
    fn dates() {
        assert_eq!(utc(0), "1970-01-01 00:00");
        assert_eq!(utc(1_795_827_600), "2026-11-28 01:00");
        assert_eq!(parse_utc("2026-11-28 01:00"), Some(1_795_827_600));
        assert_eq!(parse_utc("2026-11-28"), Some(1_795_824_000));
        assert_eq!(parse_utc("2024-02-29"), Some(1_709_164_800));
        assert_eq!(parse_utc("2026-13-01"), None);
        assert_eq!(parse_utc("yesterday"), None);
    }
}
