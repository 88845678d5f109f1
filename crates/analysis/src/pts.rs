//! The SNIA Solid State Storage Performance Test Specification's pieces that are pure
//! (`flexio pts`, docs/studies/pts.md): its test matrices, its steady-state rule, and its
//! document drawn as a report section.
//!
//! **The steady-state rule** (PTS, "Steady State"): over a measurement window of 5
//! consecutive rounds of the tracking variable,
//! * the data excursion, max − min, is at most 20% of the window's average, and
//! * the slope excursion, the least-squares line's rise over the window (|slope| × 4
//!   rounds), is at most 10% of the average.
//!
//! The first window (the latest 5 rounds, judged after every round) that meets both is
//! steady state; at most 25 rounds are run.

use crate::fmt::esc;
use crate::svg::{Axis, Chart, Scale, Series};
use serde_json::Value;
use std::fmt::Write;

/// Rounds in the measurement window.
pub const WINDOW: usize = 5;
/// Data excursion and slope excursion limits, as fractions of the window's average.
pub const DATA_EXCURSION: f64 = 0.20;
pub const SLOPE_EXCURSION: f64 = 0.10;
/// Rounds at most (the PTS's limit).
pub const MAX_ROUNDS: usize = 25;

/// A measurement window judged by the rule.
#[derive(Clone, Debug, PartialEq)]
pub struct Window {
    /// Rounds, 1-based, inclusive.
    pub first: usize,
    pub last: usize,
    pub average: f64,
    /// max − min, and the fitted line's rise over the window, as % of the average.
    pub range_pct: f64,
    pub slope_pct: f64,
    pub steady: bool,
}

/// The latest window of `track` (one value per round), once there are 5 rounds.
pub fn judge(track: &[f64]) -> Option<Window> {
    let n = track.len();
    if n < WINDOW {
        return None;
    }
    let y = &track[n - WINDOW..];
    let k = WINDOW as f64;
    let avg = y.iter().sum::<f64>() / k;
    let (lo, hi) = y
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), v| {
            (l.min(*v), h.max(*v))
        });
    let xm = (k - 1.0) / 2.0;
    let (mut sxy, mut sxx) = (0.0, 0.0);
    for (i, v) in y.iter().enumerate() {
        let dx = i as f64 - xm;
        sxy += dx * (v - avg);
        sxx += dx * dx;
    }
    let slope = sxy / sxx;
    let pct = |v: f64| {
        if avg != 0.0 {
            100.0 * v / avg.abs()
        } else {
            f64::INFINITY
        }
    };
    let range_pct = pct(hi - lo);
    let slope_pct = pct(slope.abs() * (k - 1.0));
    Some(Window {
        first: n - WINDOW + 1,
        last: n,
        average: avg,
        range_pct,
        slope_pct,
        steady: range_pct <= 100.0 * DATA_EXCURSION && slope_pct <= 100.0 * SLOPE_EXCURSION,
    })
}

/// One of the PTS's tests: its cells (read % of the mix, block size), access pattern,
/// the tracking cell and what is measured.
#[derive(Clone, Debug)]
pub struct TestDef {
    pub name: &'static str,
    /// Read percentages, in the PTS's order.
    pub mixes: Vec<u32>,
    /// Block sizes in bytes, in the PTS's order.
    pub sizes: Vec<u64>,
    pub sequential: bool,
    /// Outstanding I/Os (per job) and jobs.
    pub iodepth: u32,
    pub numjobs: u32,
    /// The tracking variable's cell (read %, bytes).
    pub track: (u32, u64),
    /// `iops`, `mbps` or `mean_lat_us`.
    pub metric: &'static str,
}

impl TestDef {
    pub fn of(name: &str) -> Option<TestDef> {
        let k = 1024u64;
        Some(match name {
            "iops" => TestDef {
                name: "iops",
                mixes: vec![100, 95, 65, 50, 35, 5, 0],
                sizes: vec![1024 * k, 128 * k, 64 * k, 32 * k, 16 * k, 8 * k, 4 * k, 512],
                sequential: false,
                iodepth: 32,
                numjobs: 1,
                track: (0, 4 * k),
                metric: "iops",
            },
            "throughput" => TestDef {
                name: "throughput",
                mixes: vec![100, 0],
                sizes: vec![1024 * k, 128 * k],
                sequential: true,
                iodepth: 32,
                numjobs: 1,
                track: (0, 1024 * k),
                metric: "mbps",
            },
            "latency" => TestDef {
                name: "latency",
                mixes: vec![100, 65, 0],
                sizes: vec![8 * k, 4 * k, 512],
                sequential: false,
                iodepth: 1,
                numjobs: 1,
                track: (0, 4 * k),
                metric: "mean_lat_us",
            },
            _ => return None,
        })
    }

    /// The metric's words.
    pub fn metric_name(&self) -> &'static str {
        match self.metric {
            "iops" => "IOPS",
            "mbps" => "MB/s",
            _ => "mean latency (µs)",
        }
    }
}

/// A mix as the PTS writes it: `65/35` (read/write).
pub fn mix_name(read_pct: u32) -> String {
    format!("{read_pct}/{}", 100 - read_pct)
}

/// A block size as the PTS writes it: `0.5 KiB`, `4 KiB`, `1024 KiB`.
pub fn bs_name(b: u64) -> String {
    if b % 1024 == 0 {
        format!("{} KiB", b / 1024)
    } else {
        format!("{} KiB", b as f64 / 1024.0)
    }
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or(f64::NAN)
}

/// A figure in the tables: whole above 100, two decimals below, `-` when there is none.
pub fn fmt_value(v: f64) -> String {
    if !v.is_finite() {
        "-".into()
    } else if v >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}

fn count_axis(v: f64) -> String {
    crate::fmt::sig3(v)
}

fn round_axis(v: f64) -> String {
    format!("{v:.0}")
}

/// `flexio pts`'s JSON document as a report section: the verdict, the convergence of the
/// tracking variable round by round (the measurement window marked), every cell's
/// rounds, and the table of the window's averages.
pub fn html(label: &str, doc: &Value) -> String {
    let mut o = String::new();
    let test = doc["test"].as_str().unwrap_or("?");
    let metric = doc["metric_name"].as_str().unwrap_or("");
    let _ = writeln!(
        o,
        "<section class=\"study\"><h2>PTS {} test: {}</h2><p class=\"method\">{} ({} bytes); {}</p>",
        esc(test),
        esc(doc["target"].as_str().unwrap_or(label)),
        esc(doc["target"].as_str().unwrap_or("")),
        doc["capacity"],
        esc(doc["verdict"].as_str().unwrap_or(""))
    );
    for d in doc["deviations"].as_array().into_iter().flatten() {
        let _ = writeln!(
            o,
            "<p class=\"note\">Not as the PTS specifies: {}</p>",
            esc(d.as_str().unwrap_or(""))
        );
    }
    let rounds = doc["rounds"].as_array().cloned().unwrap_or_default();
    let track: Vec<(f64, f64)> = rounds
        .iter()
        .map(|r| (f(&r["round"]), f(&r["tracking"])))
        .collect();
    let mut marks = Vec::new();
    let w = &doc["steady_state"];
    if let (Some(a), Some(b)) = (w["first_round"].as_f64(), w["last_round"].as_f64()) {
        marks.push((a, "window".to_string()));
        marks.push((b, "".to_string()));
    }
    let chart = Chart {
        title: format!(
            "Steady-state convergence: {} (tracking variable)",
            esc(doc["tracking"].as_str().unwrap_or(""))
        ),
        x: Axis {
            scale: Scale::Linear,
            label: "round",
            fmt: round_axis,
            binary: false,
        },
        y: Axis {
            scale: Scale::Linear,
            label: "tracking variable",
            fmt: count_axis,
            binary: false,
        },
        series: vec![Series {
            name: doc["tracking"].as_str().unwrap_or("").to_string(),
            result: 0,
            points: track,
            ..Default::default()
        }],
    };
    if let Some(svg) = chart.render_marked(&marks) {
        o.push_str("<div class=\"charts\">");
        o.push_str(&svg);
        o.push_str("</div>\n");
    }
    // The window's table: rows block sizes, columns mixes.
    let table = &doc["table"];
    let mixes: Vec<String> = table["mixes"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|m| m.as_str().unwrap_or("").to_string())
        .collect();
    let _ = write!(
        o,
        "<h3>{} (average of the measurement window)</h3><div class=\"wrap\"><table class=\"study\"><tr><th>block size</th>",
        esc(metric)
    );
    for m in &mixes {
        let _ = write!(o, "<th>{}</th>", esc(m));
    }
    o.push_str("</tr>\n");
    for row in table["rows"].as_array().into_iter().flatten() {
        let _ = write!(o, "<tr><td>{}</td>", esc(row["bs"].as_str().unwrap_or("")));
        for v in row["values"].as_array().into_iter().flatten() {
            let _ = write!(o, "<td>{}</td>", fmt_value(f(v)));
        }
        o.push_str("</tr>\n");
    }
    o.push_str("</table></div></section>\n");
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rule_against_hand_computed_rounds() {
        // Rounds 1-5: 100, 90, 80, 70, 60: average 80, range 40 = 50%: not steady.
        let r = judge(&[100.0, 90.0, 80.0, 70.0, 60.0]).unwrap();
        assert_eq!((r.first, r.last), (1, 5));
        assert!((r.average - 80.0).abs() < 1e-9);
        assert!((r.range_pct - 50.0).abs() < 1e-9);
        // Slope -10 per round: the line falls 40 over the window, 50% of 80.
        assert!((r.slope_pct - 50.0).abs() < 1e-9);
        assert!(!r.steady);
        // 1000, 1050, 980, 1020, 1010: average 1012, range 70 = 6.92%; slope: x - 2 =
        // -2..2, Σ dx·(y - avg) = -2·-12 + -1·38 + 0 + 1·8 + 2·-2 = -10, Σ dx² = 10,
        // slope -1, rise 4 = 0.395%: steady.
        let r = judge(&[500.0, 1000.0, 1050.0, 980.0, 1020.0, 1010.0]).unwrap();
        assert_eq!((r.first, r.last), (2, 6));
        assert!((r.average - 1012.0).abs() < 1e-9);
        assert!((r.range_pct - 100.0 * 70.0 / 1012.0).abs() < 1e-9);
        assert!((r.slope_pct - 100.0 * 4.0 / 1012.0).abs() < 1e-9);
        assert!(r.steady);
        // Range within 20% but a steady climb: 900, 925, 950, 975, 1000 — range 100 =
        // 10.5%, rise 100 = 10.5% > 10%: not steady by the slope alone.
        let r = judge(&[900.0, 925.0, 950.0, 975.0, 1000.0]).unwrap();
        assert!(
            r.range_pct < 20.0 && r.slope_pct > 10.0 && !r.steady,
            "{r:?}"
        );
        assert_eq!(judge(&[1.0; 4]), None);
    }

    #[test]
    fn the_tests_follow_the_pts_matrices() {
        let t = TestDef::of("iops").unwrap();
        assert_eq!(t.mixes.len() * t.sizes.len(), 56);
        assert_eq!(t.track, (0, 4096));
        assert_eq!(mix_name(65), "65/35");
        assert_eq!(bs_name(512), "0.5 KiB");
        assert_eq!(bs_name(1 << 20), "1024 KiB");
        assert!(TestDef::of("latency").unwrap().iodepth == 1);
        assert!(TestDef::of("nope").is_none());
    }
}
