//! `flexio sweep` results: the JSON document (`flexio sweep --json`) read back, and its
//! section of the HTML report: the points against the baseline in a table, and per axis a
//! line per combination of the other axes' values, with the 95% confidence interval of
//! the mean over the repeats as a band (the sweep's metric, p99 latency, and the device's
//! read amplification where it was measured); a heat map of the metric when the sweep has
//! exactly two axes.

use crate::fmt::{self, esc};
use crate::input::InputError;
use crate::svg::{Axis, Chart, HeatMap, Scale, Series};
use serde_json::Value;
use std::fmt::Write;
use std::path::{Path, PathBuf};

/// A figure's mean, standard deviation and number of runs over a point's repeats.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Spread {
    pub mean: f64,
    pub sd: f64,
    pub n: u64,
}

impl Spread {
    fn of(v: &Value) -> Option<Spread> {
        Some(Spread {
            mean: v["mean"].as_f64()?,
            sd: v["sd"].as_f64().unwrap_or(0.0),
            n: v["n"].as_u64().unwrap_or(1),
        })
    }

    /// The 95% confidence interval of the mean (Student's t over the repeats); the mean
    /// alone for one run.
    pub fn ci95(&self) -> (f64, f64) {
        match crate::stats::t975((self.n as f64) - 1.0) {
            Some(t) if self.n >= 2 => {
                let h = t * self.sd / (self.n as f64).sqrt();
                (self.mean - h, self.mean + h)
            }
            _ => (self.mean, self.mean),
        }
    }
}

/// Which figure of a point a chart draws.
type Figure = fn(&SweepPoint) -> Option<Spread>;

/// One point of the sweep.
#[derive(Clone, Debug, PartialEq)]
pub struct SweepPoint {
    pub label: String,
    /// (axis, value), in axis order.
    pub values: Vec<(String, String)>,
    pub baseline: bool,
    /// The sweep's metric, p99 latency (µs) and read amplification.
    pub metric: Option<Spread>,
    pub p99_us: Option<Spread>,
    pub read_amp: Option<Spread>,
    /// Against the baseline: difference (%), its 95% CI, p, and the verdict.
    pub diff_pct: Option<f64>,
    pub ci95_pct: Option<(f64, f64)>,
    pub p: Option<f64>,
    pub verdict: String,
}

/// A whole sweep.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Sweep {
    pub path: PathBuf,
    pub label: String,
    /// The metric's name as the sweep printed it (bw, IOPS, mean, p50, p99, p99.9).
    pub metric: String,
    pub repeats: u64,
    pub seed: u64,
    /// (name, is a device knob, values, devices the knob was set on).
    pub axes: Vec<(String, bool, Vec<String>, Vec<String>)>,
    pub points: Vec<SweepPoint>,
    pub best: String,
    pub best_significant: bool,
}

/// Whether a JSON document is a `flexio sweep` result.
pub fn is_sweep(doc: &Value) -> bool {
    doc.get("flexio_sweep").is_some()
}

/// The JSON member of a point holding the figure a metric names.
fn metric_key(metric: &str) -> &'static str {
    match metric {
        "IOPS" | "iops" => "iops",
        "mean" => "lat_mean_us",
        "p50" => "lat_p50_us",
        "p99" => "lat_p99_us",
        "p99.9" => "lat_p99_9_us",
        _ => "bw_mib_s",
    }
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// Read a sweep document (see `flexio sweep --json`).
pub fn from_value(doc: &Value, path: &Path) -> Result<Sweep, InputError> {
    let s = doc
        .get("flexio_sweep")
        .ok_or_else(|| InputError("not a flexio sweep result".into()))?;
    let bad = |what: &str| InputError(format!("flexio sweep result: {what}"));
    let metric = s["metric"].as_str().unwrap_or("bw").to_string();
    let key = metric_key(&metric);
    let axes = s["axes"]
        .as_array()
        .ok_or_else(|| bad("no \"axes\" array"))?
        .iter()
        .map(|a| {
            Ok((
                a["name"]
                    .as_str()
                    .ok_or_else(|| bad("an axis without \"name\""))?
                    .to_string(),
                a["knob"].as_bool().unwrap_or(false),
                strings(&a["values"]),
                strings(&a["devices"]),
            ))
        })
        .collect::<Result<Vec<_>, InputError>>()?;
    let points = s["points"]
        .as_array()
        .ok_or_else(|| bad("no \"points\" array"))?
        .iter()
        .map(|p| {
            let values = p["values"]
                .as_array()
                .ok_or_else(|| bad("a point without \"values\""))?
                .iter()
                .map(|v| {
                    (
                        v["name"].as_str().unwrap_or("").to_string(),
                        v["value"].as_str().unwrap_or("").to_string(),
                    )
                })
                .collect();
            let vs = &p["vs_baseline"];
            let verdict = if p["baseline"].as_bool() == Some(true) {
                "baseline"
            } else if vs.is_null() {
                "-"
            } else if vs["better"].as_bool() == Some(true) {
                "better"
            } else if vs["worse"].as_bool() == Some(true) {
                "worse"
            } else {
                "no significant difference"
            };
            Ok(SweepPoint {
                label: p["label"]
                    .as_str()
                    .ok_or_else(|| bad("a point without \"label\""))?
                    .to_string(),
                values,
                baseline: p["baseline"].as_bool().unwrap_or(false),
                metric: Spread::of(&p[key]),
                p99_us: Spread::of(&p["lat_p99_us"]),
                read_amp: Spread::of(&p["read_amplification"]),
                diff_pct: vs["diff_pct"].as_f64(),
                ci95_pct: vs["ci95_pct"]
                    .as_array()
                    .and_then(|c| Some((c.first()?.as_f64()?, c.get(1)?.as_f64()?))),
                p: vs["p"].as_f64(),
                verdict: verdict.to_string(),
            })
        })
        .collect::<Result<Vec<_>, InputError>>()?;
    Ok(Sweep {
        path: path.to_path_buf(),
        label: path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| path.display().to_string()),
        metric,
        repeats: s["repeats"].as_u64().unwrap_or(0),
        seed: s["seed"].as_u64().unwrap_or(0),
        axes,
        points,
        best: s["best"]["label"].as_str().unwrap_or("").to_string(),
        best_significant: s["best"]["significantly_better"].as_bool().unwrap_or(false),
    })
}

/// Read a file that may be a sweep result: `Ok(None)` when it is valid JSON of another
/// kind.
pub fn read(path: &Path) -> Result<Option<Sweep>, InputError> {
    let bytes = std::fs::read(path)
        .map_err(|e| InputError(format!("cannot read {}: {e}", path.display())))?;
    let Ok(doc) = serde_json::from_slice::<Value>(&bytes) else {
        return Ok(None);
    };
    if !is_sweep(&doc) {
        return Ok(None);
    }
    from_value(&doc, path)
        .map(Some)
        .map_err(|e| InputError(format!("{}: {e}", path.display())))
}

/// A value as a number where it is one: a size as fio reads it (`64k`, `8m`), else a
/// plain number.
fn numeric(s: &str) -> Option<f64> {
    flexio_job::value::parse_size(s.trim(), flexio_job::value::KbBase::K1024)
        .ok()
        .map(|v| v as f64)
        .or_else(|| s.trim().parse::<f64>().ok())
}

/// Where an axis's values go on a chart's x axis: their numbers (on a log scale when they
/// span a factor of 8 or more), else their positions; the ticks are the values as given.
fn x_positions(values: &[String]) -> (Scale, Vec<f64>) {
    let nums: Option<Vec<f64>> = values.iter().map(|v| numeric(v)).collect();
    match nums {
        Some(n) if n.iter().all(|v| *v > 0.0) && n.len() > 1 => {
            let (lo, hi) = n
                .iter()
                .fold((f64::MAX, 0f64), |a, v| (a.0.min(*v), a.1.max(*v)));
            (
                if hi / lo >= 8.0 {
                    Scale::Log
                } else {
                    Scale::Linear
                },
                n,
            )
        }
        Some(n) if n.len() > 1 && n.windows(2).all(|w| w[0] < w[1]) => (Scale::Linear, n),
        _ => (Scale::Linear, (0..values.len()).map(|i| i as f64).collect()),
    }
}

fn number(v: f64) -> String {
    fmt::count(v)
}

fn unused(_: f64) -> String {
    String::new()
}

impl Sweep {
    fn value_of<'a>(&self, p: &'a SweepPoint, axis: usize) -> Option<&'a str> {
        let name = &self.axes[axis].0;
        p.values
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The chart of one figure over axis `ax`: a line (with its CI band) per combination
    /// of the other axes' values.
    fn chart(
        &self,
        ax: usize,
        title: &str,
        y_label: &'static str,
        figure: Figure,
    ) -> (Chart, Vec<(f64, String)>) {
        let values = &self.axes[ax].2;
        let (scale, xs) = x_positions(values);
        let mut lines: Vec<(String, Vec<&SweepPoint>)> = Vec::new();
        for p in &self.points {
            let rest: Vec<String> = (0..self.axes.len())
                .filter(|&i| i != ax)
                .filter_map(|i| {
                    self.value_of(p, i)
                        .map(|v| format!("{}={v}", self.axes[i].0))
                })
                .collect();
            let key = if rest.is_empty() {
                title.to_string()
            } else {
                rest.join(" ")
            };
            match lines.iter_mut().find(|l| l.0 == key) {
                Some(l) => l.1.push(p),
                None => lines.push((key, vec![p])),
            }
        }
        let series = lines
            .into_iter()
            .enumerate()
            .map(|(i, (name, pts))| {
                let mut xy: Vec<(f64, Spread)> = pts
                    .iter()
                    .filter_map(|p| {
                        let v = self.value_of(p, ax)?;
                        let k = values.iter().position(|x| x == v)?;
                        Some((xs[k], figure(p)?))
                    })
                    .filter(|(_, s)| s.mean.is_finite())
                    .collect();
                xy.sort_by(|a, b| a.0.total_cmp(&b.0));
                Series {
                    name,
                    result: i,
                    points: xy.iter().map(|(x, s)| (*x, s.mean)).collect(),
                    band: xy
                        .iter()
                        .map(|(x, s)| {
                            // Every figure drawn is positive: the interval is cut at 0.
                            let (lo, hi) = s.ci95();
                            (*x, lo.max(0.0), hi)
                        })
                        .collect(),
                    ..Default::default()
                }
            })
            .filter(|s| !s.points.is_empty())
            .collect();
        let ticks = xs.iter().copied().zip(values.iter().cloned()).collect();
        (
            Chart {
                title: format!("{title} by {}", self.axes[ax].0),
                x: Axis {
                    scale,
                    label: "",
                    fmt: unused,
                    binary: false,
                },
                y: Axis {
                    scale: Scale::Linear,
                    label: y_label,
                    fmt: number,
                    binary: false,
                },
                series,
            },
            ticks,
        )
    }

    /// The heat map of the metric over the first two axes (rows: the second axis).
    fn heatmap(&self) -> Option<HeatMap> {
        if self.axes.len() != 2 {
            return None;
        }
        let (a, b) = (&self.axes[0], &self.axes[1]);
        let values = b
            .2
            .iter()
            .map(|vb| {
                a.2.iter()
                    .map(|va| {
                        self.points
                            .iter()
                            .find(|p| {
                                self.value_of(p, 0) == Some(va) && self.value_of(p, 1) == Some(vb)
                            })
                            .and_then(|p| p.metric)
                            .map(|s| s.mean)
                    })
                    .collect()
            })
            .collect();
        Some(HeatMap {
            title: self.metric_title(),
            x_label: a.0.clone(),
            y_label: b.0.clone(),
            columns: a.2.clone(),
            rows: b.2.clone(),
            values,
            fmt: number,
        })
    }

    fn metric_title(&self) -> String {
        match metric_key(&self.metric) {
            "bw_mib_s" => "bandwidth (MiB/s)".into(),
            "iops" => "IOPS".into(),
            k => format!(
                "{} latency (µs)",
                k.trim_start_matches("lat_")
                    .trim_end_matches("_us")
                    .replace("p99_9", "p99.9")
            ),
        }
    }
}

/// The report's section of one sweep.
pub fn section_html(s: &Sweep) -> String {
    let mut o = String::new();
    let axes: Vec<String> = s
        .axes
        .iter()
        .map(|(n, knob, v, devs)| {
            let on = if *knob && !devs.is_empty() {
                format!(" (knob, set on {})", devs.join(", "))
            } else if *knob {
                " (knob)".into()
            } else {
                String::new()
            };
            format!("{n}{on}: {}", v.join(", "))
        })
        .collect();
    let _ = writeln!(
        o,
        "<h2>Sweep {}</h2><p class=\"method\">Axes: {}. {} points, {} runs each in a shuffled order (seed {}). Each point is compared with the baseline on {} with the statistics of <code>flexio compare</code>; bands are the 95% confidence interval of the mean over the repeats. Best: {} ({}).</p>",
        esc(&s.label),
        esc(&axes.join("; ")),
        s.points.len(),
        s.repeats,
        s.seed,
        esc(&s.metric),
        esc(&s.best),
        if s.best_significant {
            "significantly better than the baseline"
        } else {
            "not significantly better than the baseline"
        }
    );
    let mt = s.metric_title();
    let _ = writeln!(
        o,
        "<table class=\"sweep\"><tr><th>point</th><th>{}</th><th>p99 (µs)</th><th>read amp</th><th>vs baseline</th><th>95% CI</th><th>p</th><th>verdict</th></tr>",
        esc(&mt)
    );
    let ms = |v: &Option<Spread>| {
        v.map_or("-".to_string(), |s| {
            format!("{} ± {}", fmt::sig3(s.mean), fmt::sig3(s.sd))
        })
    };
    for p in &s.points {
        let best = if p.label == s.best {
            " class=\"best\""
        } else {
            ""
        };
        let _ = writeln!(
            o,
            "<tr{best}><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&p.label),
            ms(&p.metric),
            ms(&p.p99_us),
            p.read_amp.map_or("-".into(), |r| format!("{:.2}", r.mean)),
            p.diff_pct.map_or("-".into(), |d| format!("{d:+.1}%")),
            p.ci95_pct
                .map_or("-".into(), |(l, h)| format!("[{l:+.1}, {h:+.1}]")),
            p.p.map_or("-".into(), fmt::p),
            esc(&p.verdict)
        );
    }
    o.push_str("</table>\n<div class=\"charts\">");
    if let Some(h) = s.heatmap().and_then(|h| h.render()) {
        o.push_str(&h);
    }
    let figures: [(&str, &'static str, Figure); 3] = [
        ("", "", |p| p.metric),
        ("p99 latency", "p99 (µs)", |p| p.p99_us),
        ("read amplification", "device bytes / job bytes", |p| {
            p.read_amp
        }),
    ];
    for ax in 0..s.axes.len() {
        for (title, y, f) in figures {
            if !s
                .points
                .iter()
                .any(|p| f(p).is_some_and(|x| x.mean.is_finite()))
            {
                continue;
            }
            let title = if title.is_empty() { mt.as_str() } else { title };
            let (c, ticks) = s.chart(ax, title, y, f);
            if let Some(svg) = c.render_with_x_ticks(&ticks) {
                o.push_str(&svg);
            }
        }
    }
    o.push_str("</div>\n");
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc() -> Value {
        serde_json::from_str(
            r#"{"flexio_sweep": {"version": "x", "metric": "bw", "repeats": 3, "seed": 11,
            "axes": [{"name": "read_ahead_kb", "knob": true, "values": ["128", "4096"], "devices": ["loop0"]},
                     {"name": "bs", "knob": false, "values": ["64k", "8m"]}],
            "baseline": "read_ahead_kb=128 bs=64k",
            "points": [
              {"label": "read_ahead_kb=128 bs=64k", "values": [{"name": "read_ahead_kb", "value": "128"}, {"name": "bs", "value": "64k"}],
               "baseline": true, "runs": 3, "bw_mib_s": {"mean": 50.0, "sd": 1.0, "n": 3},
               "lat_p99_us": {"mean": 900.0, "sd": 10.0, "n": 3}, "read_amplification": {"mean": 1.0, "sd": 0.0, "n": 3},
               "vs_baseline": null},
              {"label": "read_ahead_kb=4096 bs=64k", "values": [{"name": "read_ahead_kb", "value": "4096"}, {"name": "bs", "value": "64k"}],
               "baseline": false, "runs": 3, "bw_mib_s": {"mean": 230.0, "sd": 3.0, "n": 3},
               "lat_p99_us": {"mean": 170.0, "sd": 10.0, "n": 3}, "read_amplification": {"mean": 1.08, "sd": 0.01, "n": 3},
               "vs_baseline": {"diff_pct": 360.0, "ci95_pct": [350.0, 370.0], "p": 0.0001, "better": true, "worse": false}},
              {"label": "read_ahead_kb=128 bs=8m", "values": [{"name": "read_ahead_kb", "value": "128"}, {"name": "bs", "value": "8m"}],
               "baseline": false, "runs": 3, "bw_mib_s": {"mean": 248.0, "sd": 3.0, "n": 3},
               "lat_p99_us": null, "read_amplification": null,
               "vs_baseline": {"diff_pct": 395.0, "ci95_pct": [388.0, 402.0], "p": 0.0001, "better": true, "worse": false}},
              {"label": "read_ahead_kb=4096 bs=8m", "values": [{"name": "read_ahead_kb", "value": "4096"}, {"name": "bs", "value": "8m"}],
               "baseline": false, "runs": 3, "bw_mib_s": {"mean": 232.0, "sd": 2.0, "n": 3},
               "lat_p99_us": null, "read_amplification": null,
               "vs_baseline": {"diff_pct": 363.0, "ci95_pct": [358.0, 367.0], "p": 0.0001, "better": true, "worse": false}}],
            "best": {"label": "read_ahead_kb=128 bs=8m", "value": 248.0, "is_baseline": false, "significantly_better": true}}}"#,
        )
        .unwrap()
    }

    #[test]
    fn reads_and_draws_a_two_axis_sweep() {
        let s = from_value(&doc(), Path::new("/r/ra.json")).unwrap();
        assert_eq!(s.label, "ra.json");
        assert_eq!(s.axes.len(), 2);
        assert_eq!(s.axes[0].3, ["loop0"]);
        assert_eq!(s.points[1].metric.unwrap().mean, 230.0);
        assert_eq!(s.points[1].verdict, "better");
        assert_eq!(s.points[0].verdict, "baseline");
        let h = section_html(&s);
        // A heat map of 4 cells; per axis the metric, p99 and read amplification charts.
        assert_eq!(h.matches("<svg class=\"chart heatmap\"").count(), 1);
        assert_eq!(h.matches("class=\"hc\"").count(), 4);
        assert_eq!(h.matches("<svg class=\"chart\"").count(), 6);
        // Lines per value of the other axis, each with its band; ticks are the values.
        assert!(h.contains("<title>bs=64k</title>"), "{h}");
        assert!(h.contains("<title>read_ahead_kb=4096</title>"));
        assert!(h.contains(">8m</text>") && h.contains(">4096</text>"));
        assert!(h.contains("fill-opacity=\"0.18\""));
        // The table marks the best point.
        assert!(h.contains("<tr class=\"best\"><td>read_ahead_kb=128 bs=8m</td>"));
        assert!(h.contains("[+388.0, +402.0]"));
        let bad: Value = serde_json::from_str(r#"{"flexio_sweep": {"axes": []}}"#).unwrap();
        assert!(from_value(&bad, Path::new("x"))
            .unwrap_err()
            .0
            .contains("points"));
        assert!(!is_sweep(&serde_json::json!({"jobs": []})));
    }

    #[test]
    fn axes_numbers_categories_and_intervals() {
        assert_eq!(numeric("64k"), Some(65536.0));
        assert_eq!(numeric("8M"), Some(8.0 * 1048576.0));
        assert_eq!(numeric("128"), Some(128.0));
        assert_eq!(numeric("mq-deadline"), None);
        let v = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(x_positions(&v(&["128", "8192"])).0, Scale::Log);
        assert_eq!(
            x_positions(&v(&["1", "2", "3"])),
            (Scale::Linear, vec![1.0, 2.0, 3.0])
        );
        assert_eq!(
            x_positions(&v(&["none", "bfq"])),
            (Scale::Linear, vec![0.0, 1.0])
        );
        let s = Spread {
            mean: 10.0,
            sd: 1.0,
            n: 3,
        };
        let (lo, hi) = s.ci95();
        assert!(
            (hi - 10.0 - 4.303 / 3f64.sqrt()).abs() < 1e-3
                && (10.0 - lo - (hi - 10.0)).abs() < 1e-9
        );
        let one = Spread {
            mean: 5.0,
            sd: 0.0,
            n: 1,
        };
        assert_eq!(one.ci95(), (5.0, 5.0));
    }
}
