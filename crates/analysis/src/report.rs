//! The self-contained HTML report: one page, inline SVG, a few lines of script for the
//! result toggles, no network. Per job and direction: time series, latency distribution
//! views, a statistics table (mean, standard deviation, RMS, min, max, percentiles, with
//! percentiles that rest on too few samples marked), the job's options, CPU and disk stats.
//! Several results overlay their curves, one colour each.

use crate::charts::{self, Entry};
use crate::compare::Comparison;
use crate::fmt::{self, esc};
use crate::matrix::Matrix;
use crate::model::{min_samples_for, too_few_for, Ddir, Lat, RunResult};
use crate::svg;
use std::fmt::Write;

/// Percentile columns of the statistics table.
pub const TABLE_PERCENTILES: [f64; 6] = [50.0, 90.0, 95.0, 99.0, 99.9, 99.99];

const STYLE: &str = r#"
body{font:14px/1.4 system-ui,sans-serif;margin:0 auto;max-width:1340px;padding:12px 20px;color:#222}
.wrap{overflow-x:auto;max-width:100%}table.study td{white-space:nowrap}table.study td.v{white-space:normal;text-align:left;min-width:24em}
table.study tr.worse td{background:#fdf0ee}
h1{font-size:22px}h2{font-size:18px;border-bottom:1px solid #ccc;margin-top:28px}h3{font-size:15px}
.charts{display:flex;flex-wrap:wrap;gap:8px}.chart{background:#fff;border:1px solid #e3e3e3}
.chart .ct{font-weight:600;font-size:13px}.chart text{font-size:10.5px;fill:#333}
.chart .grid line{stroke:#eee}.chart .frame{fill:none;stroke:#999}.chart .al{font-size:11px;fill:#555}
table{border-collapse:collapse;margin:6px 0}td,th{border:1px solid #ddd;padding:2px 7px;text-align:right}
th{background:#f4f4f4}td:first-child,th:first-child{text-align:left}
.few{color:#b35900;font-style:italic}.note{color:#8a5a00}.method{color:#555}
.verdict{font-weight:600}.better{color:#1b7a1b}.worse{color:#b22222}.mixed{color:#8a5a00}
tr.better td{background:#eef8ee}tr.worse td{background:#fbeeee}
.legend label{margin-right:14px;cursor:pointer}.sw{display:inline-block;width:12px;height:12px;margin-right:4px;vertical-align:-1px}
.nodata{color:#777;font-style:italic;border:1px dashed #ccc;padding:8px;width:600px}
details{margin:4px 0}
"#;

const SCRIPT: &str = r#"
document.querySelectorAll('.legend input').forEach(function(cb){
  cb.addEventListener('change',function(){
    document.body.classList.toggle('hide'+cb.dataset.k,!cb.checked);
  });
});
"#;

/// Settings of a report.
#[derive(Clone, Debug)]
pub struct ReportOptions {
    pub title: String,
    /// Sections drawn above the results' own (a study's tables and charts:
    /// [`crate::studies::html`]).
    pub sections: Vec<String>,
}

impl Default for ReportOptions {
    fn default() -> Self {
        ReportOptions {
            title: "flexio report".into(),
            sections: Vec::new(),
        }
    }
}

fn lat_row(o: &mut String, label: &str, name: &str, l: &Lat, rms: f64, pct: &[(f64, Option<u64>)]) {
    let _ = write!(
        o,
        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>",
        esc(label),
        esc(name),
        l.n,
        fmt::ns(l.mean),
        fmt::ns(l.stddev),
        fmt::ns(rms),
        fmt::ns(l.min as f64),
        fmt::ns(l.max as f64)
    );
    for (p, v) in pct {
        match v {
            Some(v) if too_few_for(*p, l.n) => {
                let _ = write!(
                    o,
                    "<td class=\"few\" title=\"from {} samples (fewer than {}): this is the maximum, not a tail estimate\">{}*</td>",
                    l.n,
                    min_samples_for(*p),
                    fmt::ns(*v as f64)
                );
            }
            Some(v) => {
                let _ = write!(o, "<td>{}</td>", fmt::ns(*v as f64));
            }
            None => o.push_str("<td>-</td>"),
        }
    }
    o.push_str("</tr>\n");
}

fn percentiles_of(l: &Lat) -> Vec<(f64, Option<u64>)> {
    TABLE_PERCENTILES
        .iter()
        .map(|p| {
            let v = l.percentile(*p).or_else(|| {
                (!l.bins.is_empty()).then(|| crate::stats::bins_percentile(&l.bins, *p) as u64)
            });
            (*p, v)
        })
        .collect()
}

fn stats_table(o: &mut String, entries: &[Entry]) {
    o.push_str("<table class=\"stats\"><tr><th>result</th><th>latency</th><th>N</th><th>mean</th><th>stdev</th><th>RMS</th><th>min</th><th>max</th>");
    for p in TABLE_PERCENTILES {
        let _ = write!(o, "<th>p{p}</th>");
    }
    o.push_str("</tr>\n");
    let mut few = false;
    for e in entries {
        for (name, l) in [
            ("slat", &e.dir.slat),
            ("clat", &e.dir.clat),
            ("lat", &e.dir.lat),
        ] {
            if l.n > 0 {
                lat_row(o, e.label, name, l, l.rms(), &percentiles_of(l));
                few |= TABLE_PERCENTILES.iter().any(|p| too_few_for(*p, l.n));
            }
        }
        if let Some(s) = &e.dir.sched_lat {
            lat_row(o, e.label, "sched_lat", s, s.rms(), &percentiles_of(s));
        }
        // Exact statistics of the latency logs.
        for l in e.job.logs.series.iter().filter(|l| {
            l.kind.is_latency() && l.per_io && l.ddir == e.dir.ddir && l.stat.samples > 0
        }) {
            let s = l.stat.to_stat();
            let n = s.samples;
            let rms = (l.stat.sumsq as f64 / n as f64).sqrt();
            let hist = flexio_stats::Hist::from_counts(l.hist.clone().unwrap_or_default());
            let pv = hist.percentiles(&TABLE_PERCENTILES, n);
            let lat = Lat {
                min: s.min,
                max: s.max,
                mean: s.mean,
                stddev: s.stddev(),
                n,
                ..Default::default()
            };
            let pct: Vec<(f64, Option<u64>)> = TABLE_PERCENTILES
                .iter()
                .map(|p| (*p, pv.iter().find(|x| x.0 == *p).map(|x| x.1)))
                .collect();
            lat_row(
                o,
                e.label,
                &format!("{} (log)", l.kind.suffix()),
                &lat,
                rms,
                &pct,
            );
            few |= TABLE_PERCENTILES.iter().any(|p| too_few_for(*p, n));
        }
    }
    o.push_str("</table>\n");
    if few {
        o.push_str("<p class=\"few\">* rests on too few samples: percentile p needs at least 1/(1 - p/100) samples (p99.9: 1000), otherwise it is the maximum.</p>\n");
    }
}

fn throughput_table(o: &mut String, entries: &[Entry]) {
    o.push_str("<table><tr><th>result</th><th>IOPS</th><th>bandwidth</th><th>I/Os</th><th>runtime</th><th>bw samples min / mean / max (stdev)</th><th>usr / sys CPU</th><th>ctx</th><th>majf / minf</th></tr>\n");
    for e in entries {
        let b = &e.dir.bw_samples;
        let _ = writeln!(
            o,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{} ms</td><td>{}</td><td>{:.2}% / {:.2}%</td><td>{}</td><td>{} / {}</td></tr>",
            esc(e.label),
            fmt::count(e.dir.iops),
            fmt::bw(e.dir.bw_bytes),
            e.dir.total_ios,
            e.dir.runtime_ms,
            if b.n > 0 {
                format!(
                    "{}{} / {} / {} ({}), {} samples",
                    if e.job.per_io_samples(false) {
                        "per I/O: "
                    } else {
                        ""
                    },
                    fmt::bw(b.min * 1024.0),
                    fmt::bw(b.mean * 1024.0),
                    fmt::bw(b.max * 1024.0),
                    fmt::bw(b.stddev * 1024.0),
                    b.n
                )
            } else {
                "-".into()
            },
            e.job.usr_cpu,
            e.job.sys_cpu,
            e.job.ctx,
            e.job.majf,
            e.job.minf
        );
    }
    o.push_str("</table>\n");
}

fn options_block(o: &mut String, entries: &[Entry]) {
    for e in entries {
        let _ = write!(
            o,
            "<details><summary>Job options of {} ({} options)</summary><table>",
            esc(e.label),
            e.job.options.len()
        );
        for (k, v) in &e.job.options {
            let _ = write!(o, "<tr><td>{}</td><td>{}</td></tr>", esc(k), esc(v));
        }
        o.push_str("</table></details>\n");
    }
}

fn chart_or_note(o: &mut String, c: &svg::Chart, hint: &str) {
    chart_marked(o, c, &[], hint)
}

fn chart_marked(o: &mut String, c: &svg::Chart, marks: &[(f64, String)], hint: &str) {
    match c.render_marked(marks) {
        Some(s) => o.push_str(&s),
        None => {
            let _ = write!(
                o,
                "<div class=\"nodata\">{}: no data ({})</div>",
                esc(&c.title),
                esc(hint)
            );
        }
    }
}

/// A page with flexio's report style around `body` (HTML).
pub fn standalone(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width\"><title>{}</title><style>{STYLE}</style></head><body>{body}<p class=\"method\">Made by flexio {}.</p></body></html>\n",
        esc(title),
        env!("CARGO_PKG_VERSION")
    )
}

/// A result's provenance (`flexio.provenance`) as a table of dotted keys and values; the
/// defaults of the resolved job are left to the JSON (hundreds of rows).
fn provenance_block(o: &mut String, r: &RunResult) {
    let Some(p) = &r.provenance else { return };
    let mut rows = Vec::new();
    crate::flatten::flatten(p, "", &mut rows);
    rows.retain(|(k, _)| !k.starts_with("job.defaults."));
    let _ = write!(
        o,
        "<details class=\"provenance\"><summary>Provenance of {} ({} facts)</summary><table>",
        esc(&r.label),
        rows.len()
    );
    for (k, v) in &rows {
        let _ = write!(o, "<tr><td>{}</td><td>{}</td></tr>", esc(k), esc(v));
    }
    o.push_str("</table></details>\n");
}

/// Render the report of `runs`, with a comparison section first when given.
pub fn render(runs: &[RunResult], comparison: Option<&Comparison>, opts: &ReportOptions) -> String {
    render_with(runs, &[], &[], comparison, opts)
}

/// [`render`] with `flexio matrix` sweeps too (their heat maps after the runs' sections).
pub fn render_with(
    runs: &[RunResult],
    matrices: &[Matrix],
    sweeps: &[crate::sweep::Sweep],
    comparison: Option<&Comparison>,
    opts: &ReportOptions,
) -> String {
    let mut o = String::with_capacity(1 << 20);
    let _ = write!(
        o,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width\"><title>{}</title><style>{STYLE}",
        esc(&opts.title)
    );
    for k in 0..runs.len() {
        let _ = write!(o, ".hide{k} .s{k}{{display:none}}");
    }
    let _ = writeln!(o, "</style></head><body><h1>{}</h1>", esc(&opts.title));
    // A study's own tables and charts come first: they are what the page is about.
    for sec in &opts.sections {
        o.push_str(sec);
    }
    if !runs.is_empty() {
        // Results and their colours (click to hide a result's curves).
        o.push_str("<div class=\"legend\">");
        for (k, r) in runs.iter().enumerate() {
            let _ = write!(
                o,
                "<label><input type=\"checkbox\" data-k=\"{k}\" checked><span class=\"sw\" style=\"background:{}\"></span>{}</label>",
                svg::color(k),
                esc(&r.label)
            );
        }
        o.push_str("</div>\n<table><tr><th>result</th><th>file</th><th>produced by</th><th>time</th><th>jobs</th><th>log files</th></tr>\n");
        for r in runs {
            let logs: usize = r.jobs.iter().map(|j| j.logs.files.len()).sum();
            let lines: u64 = r.jobs.iter().map(|j| j.logs.lines).sum();
            let fz: usize = r.jobs.iter().map(|j| j.logs.compressed.len()).sum();
            let fz = if fz > 0 {
                format!("; {fz} compressed (.log.fz) not drawn: <code>flexio --inflate-log</code> turns them into text")
            } else {
                String::new()
            };
            let _ = writeln!(
                o,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{logs} ({lines} lines){fz}</td></tr>",
                esc(&r.label),
                esc(&r.path.display().to_string()),
                esc(&r.producer),
                esc(&r.time),
                r.jobs.len()
            );
        }
        o.push_str("</table>\n");
    }
    for r in runs {
        provenance_block(&mut o, r);
    }
    for r in runs {
        for w in &r.warnings {
            let _ = writeln!(o, "<p class=\"note\">{}: {}</p>", esc(&r.label), esc(w));
        }
    }
    if let Some(c) = comparison {
        o.push_str(&crate::compare_out::html(c));
    }
    // Engines with several kinds of operation (mdtree, cmdtime): their operations.
    for r in runs {
        for j in &r.jobs {
            if let Some(sec) = crate::studies::operations(&r.label, j) {
                o.push_str(&sec);
            }
        }
    }
    // Sections: every job key and direction, in order of first appearance.
    let mut sections: Vec<(String, Ddir)> = Vec::new();
    for r in runs {
        for (key, i) in crate::compare::job_keys(r) {
            for d in &r.jobs[i].dirs {
                if !sections.iter().any(|s| s.0 == key && s.1 == d.ddir) {
                    sections.push((key.clone(), d.ddir));
                }
            }
        }
    }
    for (key, ddir) in &sections {
        let entries: Vec<Entry> = runs
            .iter()
            .enumerate()
            .filter_map(|(k, r)| {
                let (_, i) = crate::compare::job_keys(r)
                    .into_iter()
                    .find(|(x, _)| x == key)?;
                let job = &r.jobs[i];
                let dir = job.dir(*ddir)?;
                Some(Entry {
                    result: k,
                    label: &r.label,
                    job,
                    dir,
                })
            })
            .collect();
        let _ = writeln!(o, "<h2>{} ({})</h2>", esc(key), ddir.name());
        let log_hint = "no log files beside the result: run with write_bw_log, write_iops_log, write_lat_log or write_hist_log";
        let dist_hint = "no histogram: use --output-format=json+ or write_lat_log";
        let any_logs = entries.iter().any(charts::has_logs);
        o.push_str("<div class=\"charts\">");
        if any_logs {
            let marks = charts::departure_marks(&entries);
            chart_marked(&mut o, &charts::bandwidth(&entries), &marks, log_hint);
            chart_marked(&mut o, &charts::iops(&entries), &marks, log_hint);
            chart_or_note(&mut o, &charts::latency_time(&entries), log_hint);
        }
        if let Some((c, marks)) = charts::steady(&entries) {
            chart_marked(&mut o, &c, &marks, "no steady-state samples");
        }
        for c in charts::distribution_charts(&entries) {
            chart_or_note(&mut o, &c, dist_hint);
        }
        o.push_str("</div>\n");
        if !any_logs {
            let _ = writeln!(o, "<p class=\"method\">Over-time charts: {log_hint}.</p>");
        }
        for e in &entries {
            if let Some(d) = charts::distribution(e.job, e.dir) {
                let _ = writeln!(
                    o,
                    "<p class=\"method\">{}: distribution from {}</p>",
                    esc(e.label),
                    esc(&d.source)
                );
            }
        }
        o.push_str("<h3>Latency statistics</h3>\n");
        stats_table(&mut o, &entries);
        o.push_str("<h3>Throughput and CPU</h3>\n");
        throughput_table(&mut o, &entries);
        options_block(&mut o, &entries);
    }
    for m in matrices {
        o.push_str(&crate::matrix::section_html(m));
    }
    for s in sweeps {
        o.push_str(&crate::sweep::section_html(s));
    }
    if runs.iter().any(|r| !r.disks.is_empty()) {
        o.push_str("<h2>Disk utilisation</h2><table><tr><th>result</th><th>disk</th><th>read I/Os</th><th>write I/Os</th><th>read merges</th><th>write merges</th><th>read ticks</th><th>write ticks</th><th>in queue</th><th>util</th></tr>\n");
        for r in runs {
            for d in &r.disks {
                let _ = writeln!(
                    o,
                    "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.2}%</td></tr>",
                    esc(&r.label),
                    esc(&d.name),
                    d.read_ios,
                    d.write_ios,
                    d.read_merges,
                    d.write_merges,
                    d.read_ticks,
                    d.write_ticks,
                    d.in_queue,
                    d.util
                );
            }
        }
        o.push_str("</table>\n");
    }
    let _ = writeln!(
        o,
        "<p class=\"method\">Made by flexio {} from {} result(s). Statistics are exact (from the results and every log line); curves over time are downsampled to at most {} points per series, min/max kept as bands.</p><script>{SCRIPT}</script></body></html>",
        env!("CARGO_PKG_VERSION"),
        runs.len() + matrices.len() + sweeps.len(),
        charts::MAX_POINTS
    );
    o
}

#[cfg(test)]
#[path = "report_tests.rs"]
mod tests;
