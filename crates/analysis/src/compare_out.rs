//! A comparison as text (fio-like layout), JSON and an HTML section.

use crate::compare::{Comparison, DirComparison, Metric, Row, Verdict};
use crate::fmt::{self, esc};
use serde_json::{json, Value};
use std::fmt::Write;

fn value(m: Metric, v: f64) -> String {
    match m {
        Metric::Iops => fmt::count(v),
        Metric::Bw => fmt::bw(v),
        _ => fmt::ns(v),
    }
}

fn label(d: &DirComparison) -> String {
    if d.job_a == d.job_b {
        format!("{} ({})", d.job_a, d.ddir.name())
    } else {
        format!("A '{}' vs B '{}' ({})", d.job_a, d.job_b, d.ddir.name())
    }
}

fn method(d: &DirComparison) -> String {
    if d.trials_a >= 2 && d.trials_b >= 2 {
        format!(
            "{} vs {} trials: one value per trial, bootstrap 95% CI of the difference of means",
            d.trials_a, d.trials_b
        )
    } else {
        let src = d
            .dist_source
            .as_deref()
            .map(|s| format!("; latency distributions from {s}"))
            .unwrap_or_default();
        format!(
            "{} vs {} result(s): within-run variation only (repeat runs with --trials for run-to-run variation){src}",
            d.trials_a, d.trials_b
        )
    }
}

fn row_cells(r: &Row, lat_kind: &str) -> [String; 7] {
    let name = if r.metric.is_latency() {
        format!("{lat_kind} {}", r.metric.name())
    } else {
        r.metric.name().to_string()
    };
    let ci = r
        .ci_pct
        .map(|(lo, hi)| format!("[{}, {}]", fmt::pct(lo), fmt::pct(hi)))
        .unwrap_or_else(|| "-".into());
    let p = r
        .p_adj
        .map(|p| fmt::p(p).trim_start_matches("= ").to_string())
        .unwrap_or_else(|| "-".into());
    let eff = r
        .effect
        .map(|(n, v)| format!("{n}={v:+.2}"))
        .unwrap_or_else(|| "-".into());
    let mark = if r.significant {
        if r.b_better {
            "better"
        } else {
            "worse"
        }
    } else {
        ""
    };
    [
        name,
        value(r.metric, r.a),
        value(r.metric, r.b),
        fmt::pct(r.diff_pct),
        ci,
        p,
        format!("{eff:>9}  {mark}"),
    ]
}

/// The comparison as text.
pub fn text(c: &Comparison) -> String {
    let mut o = String::new();
    let side = |v: &[String]| {
        let n = v.len();
        format!(
            "{} ({n} result{})",
            v.join(", "),
            if n == 1 { "" } else { "s" }
        )
    };
    let _ = writeln!(o, "A: {}", side(&c.a));
    let _ = writeln!(o, "B: {}", side(&c.b));
    for n in &c.notes {
        let _ = writeln!(o, "note: {n}");
    }
    for d in &c.dirs {
        let _ = writeln!(o, "\n{}: {}", label(d), method(d));
        let _ = writeln!(
            o,
            "  {:<11} {:>10} {:>10} {:>8}  {:<18} {:>7}  {:>9}",
            "metric", "A", "B", "diff", "95% CI", "p(Holm)", "effect"
        );
        for r in &d.rows {
            let c = row_cells(r, d.lat_kind);
            let _ = writeln!(
                o,
                "  {:<11} {:>10} {:>10} {:>8}  {:<18} {:>7}  {}",
                c[0], c[1], c[2], c[3], c[4], c[5], c[6]
            );
            if let Some(n) = &r.note {
                let _ = writeln!(o, "    ({}: {n})", r.metric.name());
            }
        }
        if let Some(t) = &d.dist {
            let _ = writeln!(
                o,
                "  distribution: Mann-Whitney U on the binned {} of {} vs {} I/Os: p {}, Cliff's delta={:+.3} (P(B slower)={:.3}){}",
                d.lat_kind,
                t.n_a,
                t.n_b,
                fmt::p(t.p_adj),
                t.cliffs_delta,
                t.prob_superiority,
                if t.significant { "  differs" } else { "" }
            );
        }
        if let Some(t) = &d.ks {
            let _ = writeln!(
                o,
                "  distribution: Kolmogorov-Smirnov on the pooled {}: D={:.3} (largest at {}, {}), p {}{}{}",
                d.lat_kind,
                t.ks.d,
                fmt::ns(t.ks.at as f64),
                t.part,
                fmt::p(t.p_adj),
                t.p_runs
                    .map(|p| format!(", across runs p {}", fmt::p(p)))
                    .unwrap_or_default(),
                if t.significant { "  differs" } else { "" }
            );
        }
        let _ = writeln!(
            o,
            "  verdict: {} (alpha 0.05 after Holm, |diff| >= {}%)",
            d.headline, d.min_effect_pct
        );
        for w in &d.warnings {
            let _ = writeln!(o, "  warning: {w}");
        }
    }
    if c.dirs.is_empty() {
        let _ = writeln!(o, "\nno job and direction in common: nothing compared");
    }
    o
}

fn verdict_name(v: Verdict) -> &'static str {
    match v {
        Verdict::Faster => "faster",
        Verdict::Slower => "slower",
        Verdict::Mixed => "mixed",
        Verdict::NoDifference => "no significant difference",
    }
}

fn num(v: f64) -> Value {
    if v.is_finite() {
        json!(v)
    } else {
        Value::Null
    }
}

/// The comparison as JSON.
pub fn to_json(c: &Comparison) -> Value {
    let dirs: Vec<Value> = c
        .dirs
        .iter()
        .map(|d| {
            let rows: Vec<Value> = d
                .rows
                .iter()
                .map(|r| {
                    json!({
                        "metric": r.metric.name(),
                        "a": num(r.a),
                        "b": num(r.b),
                        "diff_pct": num(r.diff_pct),
                        "ci_pct": r.ci_pct.map(|(lo, hi)| json!([num(lo), num(hi)])),
                        "ci_method": r.ci_method,
                        "test": r.test,
                        "p": r.p.map(num),
                        "p_holm": r.p_adj.map(num),
                        "effect": r.effect.map(|(n, v)| json!({"name": n, "value": num(v)})),
                        "significant": r.significant,
                        "b_better": r.b_better,
                        "note": r.note,
                        "detectable_pct": r.detectable_pct.map(num),
                    })
                })
                .collect();
            json!({
                "job_a": d.job_a,
                "job_b": d.job_b,
                "ddir": d.ddir.name(),
                "trials_a": d.trials_a,
                "trials_b": d.trials_b,
                "latency": d.lat_kind,
                "distribution_source": d.dist_source,
                "min_effect_pct": d.min_effect_pct,
                "rows": rows,
                "distribution_test": d.dist.as_ref().map(|t| json!({
                    "test": "Mann-Whitney U (binned)",
                    "p": num(t.p),
                    "p_holm": num(t.p_adj),
                    "cliffs_delta": num(t.cliffs_delta),
                    "prob_b_greater": num(t.prob_superiority),
                    "n_a": t.n_a,
                    "n_b": t.n_b,
                    "significant": t.significant,
                })),
                "ks_test": d.ks.as_ref().map(|t| json!({
                    "test": "two-sample Kolmogorov-Smirnov (pooled, binned)",
                    "d": num(t.ks.d),
                    "at_ns": t.ks.at,
                    "part": t.part,
                    "p": num(t.ks.p),
                    "p_holm": num(t.p_adj),
                    "p_runs": t.p_runs.map(num),
                    "significant": t.significant,
                })),
                "verdict": verdict_name(d.verdict),
                "headline": d.headline,
                "warnings": d.warnings,
            })
        })
        .collect();
    json!({
        "a": c.a,
        "b": c.b,
        "alpha": c.options.alpha,
        "bootstrap_resamples": c.options.reps,
        "seed": c.options.seed,
        "notes": c.notes,
        "comparisons": dirs,
    })
}

/// The comparison as pretty-printed JSON text.
pub fn json_text(c: &Comparison) -> String {
    serde_json::to_string_pretty(&to_json(c)).unwrap_or_default()
}

/// The comparison as an HTML section (styles in the report's sheet).
pub fn html(c: &Comparison) -> String {
    let mut o = String::from("<section class=\"compare\"><h2>Comparison: B vs A</h2>\n");
    let _ = writeln!(
        o,
        "<p class=\"sides\"><b>A</b>: {}<br><b>B</b>: {}</p>",
        esc(&c.a.join(", ")),
        esc(&c.b.join(", "))
    );
    for n in &c.notes {
        let _ = writeln!(o, "<p class=\"note\">{}</p>", esc(n));
    }
    for d in &c.dirs {
        let cls = match d.verdict {
            Verdict::Faster => "better",
            Verdict::Slower => "worse",
            Verdict::Mixed => "mixed",
            Verdict::NoDifference => "same",
        };
        let _ = writeln!(
            o,
            "<h3>{}</h3><p class=\"method\">{}</p><p class=\"verdict {cls}\">{}</p>",
            esc(&label(d)),
            esc(&method(d)),
            esc(&d.headline)
        );
        o.push_str("<table class=\"cmp\"><tr><th>metric</th><th>A</th><th>B</th><th>diff</th><th>95% CI</th><th>test</th><th>p (Holm)</th><th>effect</th><th></th></tr>\n");
        for r in &d.rows {
            let c = row_cells(r, d.lat_kind);
            let cls = match (r.significant, r.b_better) {
                (true, true) => "better",
                (true, false) => "worse",
                _ => "",
            };
            let eff = r
                .effect
                .map(|(n, v)| format!("{n}={v:+.2}"))
                .unwrap_or_else(|| "-".into());
            let _ = writeln!(
                o,
                "<tr class=\"{cls}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(&c[0]),
                esc(&c[1]),
                esc(&c[2]),
                esc(&c[3]),
                esc(&c[4]),
                esc(r.test),
                esc(&c[5]),
                esc(&eff),
                esc(r.note.as_deref().unwrap_or(cls))
            );
        }
        o.push_str("</table>\n");
        if let Some(t) = &d.dist {
            let _ = writeln!(
                o,
                "<p class=\"method\">Latency distributions ({} vs {} I/Os): Mann-Whitney U p {}, Cliff's delta {:+.3}{}</p>",
                t.n_a,
                t.n_b,
                esc(&fmt::p(t.p_adj)),
                t.cliffs_delta,
                if t.significant { " (differs)" } else { " (negligible or not significant)" }
            );
        }
        if let Some(t) = &d.ks {
            let _ = writeln!(
                o,
                "<p class=\"method\">Whole distribution: Kolmogorov-Smirnov D {:.3}, largest at {} ({}), p {}{}{}</p>",
                t.ks.d,
                esc(&fmt::ns(t.ks.at as f64)),
                t.part,
                esc(&fmt::p(t.p_adj)),
                t.p_runs
                    .map(|p| format!(", across runs p {}", esc(&fmt::p(p))))
                    .unwrap_or_default(),
                if t.significant { " (differs)" } else { "" }
            );
        }
        for w in &d.warnings {
            let _ = writeln!(o, "<p class=\"note\">{}</p>", esc(w));
        }
    }
    o.push_str("</section>\n");
    o
}
