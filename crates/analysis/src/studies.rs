//! The studies' own JSON documents drawn as report sections: `flexio rt-study` (its cases
//! and tests as tables, one row per case, the cases' percentile curves, the warnings) and
//! `flexio writemodes` (its modes as a table and their MiB/s as bars, with the runs' range
//! when repeated). `flexio report` reads them beside run results; the studies' `--html`
//! pages put them on top of the report of their runs.

use crate::fmt::{esc, ns};
use crate::input::InputError;
use crate::svg::{self, Axis, Chart, Scale, Series};
use serde_json::Value;
use std::fmt::Write;
use std::path::Path;

/// A study document `flexio report` can draw.
#[derive(Clone, Debug)]
pub struct Study {
    pub label: String,
    pub doc: Value,
}

/// Whether a JSON document is one of the studies drawn here (`flexio compare
/// --output-format=json` included).
pub fn is_study(doc: &Value) -> bool {
    doc["study"] == "rt-study"
        || doc.get("flexio pts").is_some()
        || doc.get("flexio writemodes").is_some()
        || (doc["comparisons"].is_array() && doc.get("alpha").is_some())
}

/// Read a study document; `Ok(None)` when the file is JSON of another kind.
pub fn read(path: &Path) -> Result<Option<Study>, InputError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| InputError(format!("{}: {e}", path.display())))?;
    let Ok(doc) = serde_json::from_str::<Value>(&text) else {
        return Ok(None);
    };
    Ok(is_study(&doc).then(|| Study {
        label: path.display().to_string(),
        doc,
    }))
}

/// The study's section of a page.
pub fn html(s: &Study) -> String {
    if s.doc["study"] == "rt-study" {
        rt_study(&s.label, &s.doc)
    } else if s.doc.get("flexio pts").is_some() {
        crate::pts::html(&s.label, &s.doc)
    } else if s.doc["comparisons"].is_array() {
        comparison(&s.label, &s.doc)
    } else {
        writemodes(&s.label, &s.doc)
    }
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or(f64::NAN)
}

fn ns_cell(v: &Value) -> String {
    let x = f(v);
    if x.is_finite() {
        ns(x)
    } else {
        "-".into()
    }
}

fn p_cell(v: &Value) -> String {
    let x = f(v);
    if !x.is_finite() {
        "-".into()
    } else if x < 1e-300 {
        "<1e-300".into()
    } else if x < 0.001 {
        format!("{x:.1e}")
    } else {
        format!("{x:.3}")
    }
}

fn warnings(o: &mut String, doc: &Value) {
    for w in doc["warnings"].as_array().into_iter().flatten() {
        let _ = writeln!(o, "<p class=\"note\">{}</p>", esc(w.as_str().unwrap_or("")));
    }
}

fn rt_study(label: &str, doc: &Value) -> String {
    let mut o = String::new();
    let st = &doc["settings"];
    let _ = writeln!(
        o,
        "<section class=\"study\"><h2>rt-study: {}</h2><p class=\"method\">{} requests per run, {} runs per case, {} {} B {}, background {} x {} B{}{}</p>",
        esc(st["target"].as_str().unwrap_or(label)),
        st["requests"],
        st["repeat"],
        esc(st["pattern"].as_str().unwrap_or("")),
        st["bs"],
        esc(st["rw"].as_str().unwrap_or("")),
        esc(&st["background_jobs"].to_string()),
        st["background_bs"],
        st["scheduler"]
            .as_str()
            .map(|s| format!(", scheduler {}", esc(s)))
            .unwrap_or_default(),
        if doc["complete"] == false {
            " (<b>incomplete</b>: the study was interrupted)"
        } else {
            ""
        }
    );
    let cases = doc["cases"].as_array().cloned().unwrap_or_default();
    o.push_str("<div class=\"wrap\"><table class=\"study\"><tr><th>case</th><th>runs</th><th>n</th><th>mean</th><th>stdev</th><th>rms</th><th>p50</th><th>p99</th><th>p99.9</th><th>max</th><th>background</th></tr>\n");
    for c in &cases {
        let p = &c["percentiles_ns"];
        let bg = f(&c["background_bw_bytes"]);
        let _ = writeln!(
            o,
            "<tr><td><span class=\"sw\" style=\"background:{}\"></span>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            svg::color(cases.iter().position(|x| x == c).unwrap_or(0)),
            esc(c["case"].as_str().unwrap_or("")),
            c["runs"],
            c["n"],
            ns_cell(&c["mean_ns"]),
            ns_cell(&c["stdev_ns"]),
            ns_cell(&c["rms_ns"]),
            ns_cell(&p["50.000000"]),
            ns_cell(&p["99.000000"]),
            ns_cell(&p["99.900000"]),
            ns_cell(&c["max_ns"]),
            if bg > 0.0 {
                crate::fmt::bw(bg)
            } else {
                "-".into()
            }
        );
    }
    o.push_str("</table></div>\n");
    let tests = doc["tests"].as_array().cloned().unwrap_or_default();
    if !tests.is_empty() {
        o.push_str("<div class=\"wrap\"><table class=\"study\"><tr><th>test</th><th>A</th><th>B</th><th>mean</th><th>Cliff's d</th><th>p (middle)</th><th>p runs</th><th>p99</th><th>p (tail)</th><th>KS D</th><th>verdict</th></tr>\n");
        for t in &tests {
            let tail = t["tail_tests"].as_array().cloned().unwrap_or_default();
            let p99 = tail.iter().find(|x| x["percentile"] == 99.0);
            let ptail = tail
                .iter()
                .map(|x| f(&x["p_adjusted"]))
                .fold(f64::NAN, |m, v| if m.is_nan() || v < m { v } else { m });
            let cls = if t["significant"] == true {
                "worse"
            } else {
                ""
            };
            let _ = writeln!(
                o,
                "<tr class=\"{cls}\"><td>{}</td><td>{}</td><td>{}</td><td>x{}</td><td>{:+.2}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"v\">{}</td></tr>",
                esc(t["question"].as_str().unwrap_or("")),
                esc(t["a"].as_str().unwrap_or("")),
                esc(t["b"].as_str().unwrap_or("")),
                crate::fmt::sig3(f(&t["mean_ratio"])),
                f(&t["cliffs_delta"]),
                p_cell(&t["p_adjusted"]),
                p_cell(&t["p_runs_adjusted"]),
                p99.map(|x| format!("x{}", crate::fmt::sig3(f(&x["b_ns"]) / f(&x["a_ns"]))))
                    .unwrap_or_else(|| "-".into()),
                p_cell(&Value::from(ptail)),
                t["ks_test"]["d"]
                    .as_f64()
                    .map(|d| format!("{d:.2}"))
                    .unwrap_or_else(|| "-".into()),
                esc(t["verdict"].as_str().unwrap_or(""))
            );
        }
        o.push_str("</table></div>\n");
    }
    warnings(&mut o, doc);
    // The cases' percentile curves, from the percentiles the study kept.
    let series: Vec<Series> = cases
        .iter()
        .enumerate()
        .map(|(k, c)| Series {
            name: c["case"].as_str().unwrap_or("").to_string(),
            result: k,
            points: c["percentiles_ns"]
                .as_object()
                .map(|m| {
                    let mut v: Vec<(f64, f64)> = m
                        .iter()
                        .filter_map(|(p, x)| Some((p.parse::<f64>().ok()?, x.as_f64()?)))
                        .collect();
                    v.sort_by(|a, b| a.0.total_cmp(&b.0));
                    v
                })
                .unwrap_or_default(),
            ..Series::default()
        })
        .collect();
    let chart = Chart {
        title: "Foreground response time by percentile, per case".into(),
        x: Axis {
            scale: Scale::Nines,
            label: "percentile",
            fmt: |v| {
                let t = format!("{v:.3}");
                format!("p{}", t.trim_end_matches('0').trim_end_matches('.'))
            },
            binary: false,
        },
        y: Axis {
            scale: Scale::Log,
            label: "response time",
            fmt: ns,
            binary: false,
        },
        series,
    };
    if let Some(svg) = chart.render() {
        let _ = writeln!(o, "<div class=\"charts\">{svg}</div>");
    }
    o.push_str("</section>\n");
    o
}

/// A metric's value as the compare table prints it.
fn metric_cell(metric: &str, v: &Value) -> String {
    let x = f(v);
    if !x.is_finite() {
        return "-".into();
    }
    match metric {
        "IOPS" => crate::fmt::count(x),
        "bw" => crate::fmt::bw(x),
        _ => ns(x),
    }
}

/// One bar: its label, its value, and a range to draw as a whisker (repeated runs).
pub type Bar = (String, f64, Option<(f64, f64)>);

/// Horizontal bars on a log scale, one per item (label, value, optional range drawn as a
/// whisker); `None` when no value is positive.
pub fn bars(title: &str, unit: &str, items: &[Bar], fmt: fn(f64) -> String) -> Option<String> {
    let max = items.iter().map(|x| x.1).fold(0.0f64, f64::max);
    if max <= 0.0 || !max.is_finite() {
        return None;
    }
    let mut o = String::new();
    let longest = items.iter().map(|x| x.0.chars().count()).max().unwrap_or(4);
    let (w, row) = (640.0, 26.0);
    let left = (longest as f64 * 7.0 + 16.0).clamp(60.0, 220.0);
    let h = row * items.len() as f64 + 30.0;
    let lo = items
        .iter()
        .map(|x| x.1)
        .filter(|v| *v > 0.0)
        .fold(max, f64::min)
        .min(max / 10.0);
    let (l0, l1) = (
        (lo / 2.0).log10().floor(),
        max.log10().ceil().max((lo / 2.0).log10().floor() + 1.0),
    );
    let x = |v: f64| left + (v.max(1e-300).log10().max(l0) - l0) / (l1 - l0) * (w - left - 20.0);
    let _ = write!(
        o,
        "<svg class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {w} {h}\" width=\"{w}\" height=\"{h}\" role=\"img\" aria-label=\"{}\"><text x=\"{left}\" y=\"16\" class=\"ct\">{}</text>",
        esc(title),
        esc(title)
    );
    for e in (l0 as i32)..=(l1 as i32) {
        let v = 10f64.powi(e);
        let _ = write!(
            o,
            "<g class=\"grid\"><line x1=\"{0:.1}\" x2=\"{0:.1}\" y1=\"22\" y2=\"{1:.1}\"/></g><text x=\"{0:.1}\" y=\"{2:.1}\" text-anchor=\"middle\">{3}</text>",
            x(v),
            h - 14.0,
            h - 2.0,
            fmt(v)
        );
    }
    for (k, (label, v, range)) in items.iter().enumerate() {
        let y = 26.0 + row * k as f64;
        let _ = write!(
            o,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text><rect x=\"{left}\" y=\"{y:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{}\"><title>{} {} {unit}</title></rect>",
            left - 6.0,
            y + row * 0.6,
            esc(label),
            (x(*v) - left).max(1.0),
            row * 0.7,
            svg::color(k),
            esc(label),
            fmt(*v)
        );
        if let Some((a, b)) = range {
            let ym = y + row * 0.35;
            let _ = write!(
                o,
                "<line x1=\"{:.1}\" x2=\"{:.1}\" y1=\"{ym:.1}\" y2=\"{ym:.1}\" stroke=\"#222\" stroke-width=\"1.5\"/>",
                x(*a),
                x(*b)
            );
        }
    }
    o.push_str("</svg>");
    Some(o)
}

/// A job's operations (engines with several kinds, mdtree and cmdtime: `flexio.ops`): a
/// table of each kind's count, rates and latency, and two bar charts, the operations per
/// second and the p99 latency of each kind.
pub fn operations(label: &str, job: &crate::model::JobResult) -> Option<String> {
    if job.ops.is_empty() {
        return None;
    }
    let mut o = String::new();
    let _ = writeln!(
        o,
        "<section class=\"study\"><h2>Operations of job {} ({})</h2><div class=\"wrap\"><table class=\"study\"><tr><th>operation</th><th>count</th><th>ops/s</th><th>phase ops/s</th><th>mean</th><th>p50</th><th>p99</th><th>p99.9</th></tr>",
        esc(&job.name),
        esc(label)
    );
    let opt = |v: Option<f64>| v.map(ns).unwrap_or_else(|| "-".into());
    for x in &job.ops {
        let _ = writeln!(
            o,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&x.name),
            x.count,
            crate::fmt::count(x.ops_per_s),
            crate::fmt::count(x.phase_ops_per_s),
            if x.count > 0 { ns(x.mean_ns) } else { "-".into() },
            opt(x.p50_ns),
            opt(x.p99_ns),
            opt(x.p999_ns)
        );
    }
    o.push_str("</table></div>\n<div class=\"charts\">");
    let done: Vec<&crate::model::OpFigures> = job.ops.iter().filter(|x| x.count > 0).collect();
    let rate: Vec<Bar> = done
        .iter()
        .map(|x| (x.name.clone(), x.ops_per_s, None))
        .collect();
    if let Some(svg) = bars(
        "operations per second (time in the operation)",
        "ops/s",
        &rate,
        crate::fmt::count,
    ) {
        o.push_str(&svg);
    }
    let p99: Vec<Bar> = done
        .iter()
        .filter_map(|x| Some((x.name.clone(), x.p99_ns?, None)))
        .collect();
    if let Some(svg) = bars("p99 latency per operation", "ns", &p99, ns) {
        o.push_str(&svg);
    }
    o.push_str("</div></section>\n");
    Some(o)
}

/// `flexio compare --output-format=json`: per job and direction, the verdict, the rows,
/// the whole-distribution test and the warnings.
fn comparison(label: &str, doc: &Value) -> String {
    let mut o = String::new();
    let side = |k: &str| {
        doc[k]
            .as_array()
            .map(|v| {
                v.iter()
                    .filter_map(Value::as_str)
                    .collect::<Vec<_>>()
                    .join(", ")
            })
            .unwrap_or_default()
    };
    let _ = writeln!(
        o,
        "<section class=\"study\"><h2>Comparison: {}</h2><p class=\"sides\"><b>A</b>: {}<br><b>B</b>: {}</p>",
        esc(label),
        esc(&side("a")),
        esc(&side("b"))
    );
    for n in doc["notes"].as_array().into_iter().flatten() {
        let _ = writeln!(o, "<p class=\"note\">{}</p>", esc(n.as_str().unwrap_or("")));
    }
    for c in doc["comparisons"].as_array().into_iter().flatten() {
        let cls = match c["verdict"].as_str() {
            Some("faster") => "better",
            Some("slower") => "worse",
            Some("mixed") => "mixed",
            _ => "same",
        };
        let _ = writeln!(
            o,
            "<h3>A '{}' vs B '{}' ({}), {} vs {} result(s)</h3><p class=\"verdict {cls}\">{}</p>",
            esc(c["job_a"].as_str().unwrap_or("")),
            esc(c["job_b"].as_str().unwrap_or("")),
            esc(c["ddir"].as_str().unwrap_or("")),
            c["trials_a"],
            c["trials_b"],
            esc(c["headline"].as_str().unwrap_or(""))
        );
        o.push_str("<div class=\"wrap\"><table class=\"study\"><tr><th>metric</th><th>A</th><th>B</th><th>diff</th><th>95% CI</th><th>test</th><th>p (Holm)</th><th></th></tr>\n");
        for r in c["rows"].as_array().into_iter().flatten() {
            let m = r["metric"].as_str().unwrap_or("");
            let ci = r["ci_pct"]
                .as_array()
                .map(|v| format!("[{:+.1}%, {:+.1}%]", f(&v[0]), f(&v[1])))
                .unwrap_or_else(|| "-".into());
            let mark = match (r["significant"] == true, r["b_better"] == true) {
                (true, true) => "better",
                (true, false) => "worse",
                _ => "",
            };
            let _ = writeln!(
                o,
                "<tr class=\"{mark}\"><td>{}</td><td>{}</td><td>{}</td><td>{:+.1}%</td><td>{ci}</td><td>{}</td><td>{}</td><td>{mark}</td></tr>",
                esc(m),
                metric_cell(m, &r["a"]),
                metric_cell(m, &r["b"]),
                f(&r["diff_pct"]),
                esc(r["test"].as_str().unwrap_or("")),
                p_cell(&r["p_holm"])
            );
        }
        o.push_str("</table></div>\n");
        let k = &c["ks_test"];
        if k.is_object() {
            let _ = writeln!(
                o,
                "<p class=\"method\">Whole distribution: Kolmogorov-Smirnov D {:.3}, largest in {}, p {}{}</p>",
                f(&k["d"]),
                esc(k["part"].as_str().unwrap_or("")),
                p_cell(&k["p_holm"]),
                if k["significant"] == true { " (differs)" } else { "" }
            );
        }
        for w in c["warnings"].as_array().into_iter().flatten() {
            let _ = writeln!(o, "<p class=\"note\">{}</p>", esc(w.as_str().unwrap_or("")));
        }
    }
    o.push_str("</section>\n");
    o
}

fn writemodes(label: &str, doc: &Value) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "<section class=\"study\"><h2>writemodes: {}</h2><p class=\"method\">{}, {} B writes, {} MiB per mode, {} run(s) per mode{}</p>",
        esc(doc["file"].as_str().unwrap_or(label)),
        esc(doc["ioengine"].as_str().unwrap_or("")),
        doc["bs"],
        doc["size"].as_u64().unwrap_or(0) >> 20,
        doc["repeat"].as_u64().unwrap_or(1),
        if doc["complete"] == false {
            " (<b>incomplete</b>)"
        } else {
            ""
        }
    );
    let modes = doc["modes"].as_array().cloned().unwrap_or_default();
    o.push_str("<div class=\"wrap\"><table class=\"study\"><tr><th>mode</th><th>MiB/s</th><th>runs' MiB/s</th><th>IOPS</th><th>clat mean</th><th>clat p99</th><th>usr%</th><th>sys%</th><th>syncs</th><th>sync mean</th><th>device writes</th></tr>\n");
    for m in &modes {
        let runs: Vec<f64> = m["runs_mib_s"]
            .as_array()
            .map(|v| v.iter().filter_map(Value::as_f64).collect())
            .unwrap_or_default();
        let range = match (
            runs.iter().cloned().reduce(f64::min),
            runs.iter().cloned().reduce(f64::max),
        ) {
            (Some(lo), Some(hi)) if runs.len() > 1 => format!(
                "{lo:.1} to {hi:.1}{}",
                if m["noisy"] == true {
                    " (they disagree)"
                } else {
                    ""
                }
            ),
            _ => "-".into(),
        };
        let _ = writeln!(
            o,
            "<tr><td>{}</td><td>{:.1}</td><td>{range}</td><td>{:.0}</td><td>{}</td><td>{}</td><td>{:.1}</td><td>{:.1}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(m["mode"].as_str().unwrap_or("")),
            f(&m["mib_s"]),
            f(&m["iops"]),
            ns_cell(&m["clat_mean_ns"]),
            ns_cell(&m["clat_p99_ns"]),
            f(&m["usr_pct"]),
            f(&m["sys_pct"]),
            m["syncs"],
            if m["syncs"].as_u64().unwrap_or(0) > 0 {
                ns_cell(&m["sync_mean_ns"])
            } else {
                "-".into()
            },
            m["dev_write_ios"]
                .as_u64()
                .map(|n| n.to_string())
                .unwrap_or_else(|| "-".into())
        );
    }
    o.push_str("</table></div>\n");
    // MiB/s as horizontal bars on a log scale (the modes span three decades), each with
    // its runs' range as a whisker.
    let items: Vec<Bar> = modes
        .iter()
        .map(|m| {
            let runs: Vec<f64> = m["runs_mib_s"]
                .as_array()
                .map(|r| r.iter().filter_map(Value::as_f64).collect())
                .unwrap_or_default();
            let range = (runs.len() > 1).then(|| {
                runs.iter()
                    .fold((f64::MAX, 0.0f64), |(l, h), v| (l.min(*v), h.max(*v)))
            });
            (
                m["mode"].as_str().unwrap_or("").to_string(),
                f(&m["mib_s"]),
                range,
            )
        })
        .collect();
    if let Some(svg) = bars(
        "MiB/s by mode (log scale)",
        "MiB/s",
        &items,
        crate::fmt::sig3,
    ) {
        let _ = writeln!(o, "<div class=\"charts\">{svg}</div>");
    }
    o.push_str("</section>\n");
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn rt_study_section_has_one_row_per_case_and_a_chart() {
        let doc = json!({
            "study": "rt-study",
            "settings": {"target": "/dev/x", "requests": 100, "repeat": 2, "pattern": "random",
                          "bs": 4096, "rw": "read", "background_jobs": [0, 4], "background_bs": 65536},
            "cases": [
                {"case": "rt bg=0", "runs": 2, "n": 200, "mean_ns": 1000.0, "percentiles_ns": {"50.000000": 900.0, "99.000000": 2000.0, "99.900000": 3000.0}},
                {"case": "rt bg=4", "runs": 2, "n": 200, "mean_ns": 5000.0, "background_bw_bytes": 1e8, "percentiles_ns": {"50.000000": 950.0, "99.000000": 20000.0, "99.900000": 90000.0}}
            ],
            "tests": [{"question": "load", "a": "rt bg=0", "b": "rt bg=4", "mean_ratio": 5.0, "cliffs_delta": 0.05,
                       "p_adjusted": 0.3, "p_runs_adjusted": 0.5, "significant": true,
                       "tail_tests": [{"percentile": 99.0, "a_ns": 2000.0, "b_ns": 20000.0, "p_adjusted": 0.001}],
                       "ks_test": {"d": 0.05}, "verdict": "4 background jobs make the rt foreground slower in the tail"}],
            "warnings": ["2 runs per case: few"],
            "complete": true
        });
        assert!(is_study(&doc));
        let h = html(&Study {
            label: "x".into(),
            doc,
        });
        assert_eq!(h.matches("<tr><td><span class=\"sw\"").count(), 2, "{h}");
        assert!(h.contains("<svg"), "{h}");
        assert!(h.contains("x10.0"), "{h}");
        assert!(h.contains("slower in the tail"), "{h}");
        assert!(h.contains("2 runs per case: few"), "{h}");
    }

    #[test]
    fn writemodes_section_has_bars_and_ranges() {
        let doc = json!({
            "flexio writemodes": 1, "file": "/t/f", "ioengine": "psync", "bs": 4096, "size": 2097152,
            "repeat": 3, "complete": true,
            "modes": [
                {"mode": "buffered", "mib_s": 900.0, "runs_mib_s": [880.0, 900.0, 910.0], "iops": 230000.0, "syncs": 0},
                {"mode": "osync", "mib_s": 2.0, "runs_mib_s": [1.5, 2.0, 3.5], "noisy": true, "iops": 500.0, "syncs": 0}
            ]
        });
        assert!(is_study(&doc));
        let h = html(&Study {
            label: "x".into(),
            doc,
        });
        assert!(h.contains("880.0 to 910.0"), "{h}");
        assert!(h.contains("1.5 to 3.5 (they disagree)"), "{h}");
        assert_eq!(h.matches("<rect").count(), 2, "{h}");
        assert!(!is_study(&json!({"jobs": []})));
    }

    #[test]
    fn a_comparison_document_is_drawn() {
        let doc = json!({
            "a": ["a.json"], "b": ["b.json"], "alpha": 0.05, "notes": [],
            "comparisons": [{
                "job_a": "j", "job_b": "j", "ddir": "read", "trials_a": 3, "trials_b": 3,
                "headline": "B is slower: +49.0% mean latency (moved: mean, tail)",
                "verdict": "slower",
                "rows": [
                    {"metric": "IOPS", "a": 9220.0, "b": 9230.0, "diff_pct": 0.1, "ci_pct": [-0.1, 0.2], "test": "Welch t (log)", "p_holm": 1.0, "significant": false, "b_better": true},
                    {"metric": "p99", "a": 255000.0, "b": 2540000.0, "diff_pct": 896.0, "ci_pct": [849.7, 934.5], "test": "quantile bootstrap", "p_holm": 0.002, "significant": true, "b_better": false}
                ],
                "ks_test": {"d": 0.021, "part": "the tail", "p_holm": 0.0001, "significant": false},
                "warnings": ["with 3 runs per side, a change in p99.9 under 40% cannot be seen"]
            }]
        });
        assert!(is_study(&doc));
        let h = html(&Study {
            label: "cmp.json".into(),
            doc,
        });
        assert!(h.contains("B is slower: +49.0% mean latency"), "{h}");
        assert!(
            h.contains("<tr class=\"worse\"><td>p99</td><td>255us</td><td>2.54ms</td>"),
            "{h}"
        );
        assert!(h.contains("largest in the tail"), "{h}");
        assert!(h.contains("cannot be seen"), "{h}");
    }
}
