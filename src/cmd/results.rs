//! Results that last: `--save` on a run, and the subcommands over the results store
//! (crates/store): `flexio import`, `flexio history`, `flexio check`, `flexio diff` and
//! `flexio rerun`.

use super::args::{alpha, args_of, as_is, number};
use super::out::stdout;
use super::report::write_page;
use flexio_analysis::compare::{compare, Metric, Options, Row};
use flexio_analysis::history::{self, Point, Series};
use flexio_analysis::{flatten, fmt, RunResult};
use flexio_store::{Filter, NewRun, Store, StoredRun};
use serde_json::Value;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Open the store `spec` (or the default one), saying so on failure.
fn open(spec: Option<&str>, who: &str) -> Result<Store, i32> {
    Store::open(spec).map_err(|e| {
        eprintln!("flexio {who}: {e}");
        2
    })
}

// ---------------------------------------------------------------------------------------
// flexio import

/// `--store`, as the subcommands over the results store take it.
#[derive(clap::Args, Debug, Clone, Default, PartialEq)]
pub struct StoreArg {
    /// The results store: a SQLite file or postgres://... (default
    /// $XDG_DATA_HOME/flexio/results.db)
    #[arg(long, value_name = "PATH|URL")]
    pub store: Option<String>,
}

/// Store existing results (fio's or flexio's JSON) in the results store
///
/// Stores existing results (fio's or flexio's JSON or json+ output files) in the results
/// store, as one batch: their text, provenance where flexio recorded it, summary metrics and
/// latency histograms. Nothing is stored when one file is not a result.
#[derive(clap::Parser, Debug)]
#[command(
    name = "import",
    after_help = "Exit status: 0 stored, 2 bad arguments or input."
)]
pub struct Import {
    #[command(flatten)]
    store: StoreArg,
    /// The batch's label
    #[arg(long, value_name = "LABEL")]
    label: Option<String>,
    /// Result files (fio's or flexio's JSON or json+ output)
    #[arg(value_name = "RESULT.json", required = true, value_hint = clap::ValueHint::FilePath)]
    files: Vec<PathBuf>,
}

pub fn import(args: &[String]) -> i32 {
    let Import {
        store: StoreArg { store },
        label,
        files,
    } = match args_of(args, 2, as_is) {
        Ok(a) => a,
        Err(code) => return code,
    };
    let mut runs = Vec::new();
    for f in &files {
        match std::fs::read_to_string(f) {
            Ok(text) => runs.push(NewRun {
                source: f.display().to_string(),
                result: text,
            }),
            Err(e) => {
                eprintln!("flexio import: cannot read {}: {e}", f.display());
                return 2;
            }
        }
    }
    let mut s = match open(store.as_deref(), "import") {
        Ok(s) => s,
        Err(c) => return c,
    };
    match s.save("import", label.as_deref(), &runs) {
        Ok(ids) => {
            cmd_outln!(
                "flexio import: stored {} result(s) as run(s) {} in {}",
                ids.len(),
                ids.iter()
                    .map(|i| i.to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
                s.location()
            );
            0
        }
        Err(e) => {
            eprintln!("flexio import: {e}");
            2
        }
    }
}

// ---------------------------------------------------------------------------------------
// flexio history

/// A metric of the stored runs over time: trend and change points
///
/// A metric of the stored runs over time, per job and direction: each run's value, its
/// change from the run before, the trend (Theil-Sen slope, Mann-Kendall test) and the
/// change points (where the level moved, penalised optimal partitioning).
#[derive(clap::Parser, Debug)]
#[command(
    name = "history",
    after_help = "Exit status: 0 done, 2 bad arguments or a store error."
)]
pub struct History {
    #[command(flatten)]
    store: StoreArg,
    /// Only runs saved with this label
    #[arg(long, value_name = "LABEL")]
    label: Option<String>,
    /// Only this job
    #[arg(long, value_name = "NAME")]
    job: Option<String>,
    /// IOPS, bw, mean, p50, p99 or p99.9
    #[arg(long, value_name = "M", default_value = "IOPS", value_parser = metric)]
    metric: &'static str,
    /// Runs saved since YYYY-MM-DD[ HH:MM] (UTC)
    #[arg(long, value_name = "DATE", value_parser = since)]
    since: Option<i64>,
    /// Smallest change of level reported, in %
    #[arg(long = "min-shift", value_name = "PCT", default_value = "5%", value_parser = number::<f64>)]
    min_shift: f64,
    /// Also draw the series as an HTML page
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
    /// List the stored runs instead (id, time, label, kind, source)
    #[arg(long)]
    runs: bool,
}

fn metric(v: &str) -> Result<&'static str, String> {
    metric_name(v).ok_or_else(|| format!("'{v}' is not IOPS, bw, mean, p50, p99 or p99.9"))
}

fn since(v: &str) -> Result<i64, String> {
    history::parse_utc(v)
        .ok_or_else(|| format!("'{v}' is not a date (YYYY-MM-DD or YYYY-MM-DD HH:MM, UTC)"))
}

fn metric_name(m: &str) -> Option<&'static str> {
    let m = m.trim();
    Metric::ALL
        .iter()
        .map(|x| x.name())
        .find(|n| n.eq_ignore_ascii_case(m))
        .or(match m.to_ascii_lowercase().as_str() {
            "lat" | "latency" => Some("mean"),
            "bandwidth" => Some("bw"),
            _ => None,
        })
}

pub fn history(args: &[String]) -> i32 {
    let History {
        store: StoreArg { store },
        label,
        job,
        metric,
        since,
        min_shift,
        html,
        runs: runs_only,
    } = match args_of(args, 2, as_is) {
        Ok(a) => a,
        Err(code) => return code,
    };
    let f = Filter { label, job, since };
    let mut s = match open(store.as_deref(), "history") {
        Ok(s) => s,
        Err(c) => return c,
    };
    if runs_only {
        return match s.list(&f) {
            Ok(list) => {
                let mut o = format!(
                    "{:>5}  {:<16}  {:<14}  {:<8}  {:<14}  {:<16}  source\n",
                    "run", "saved (UTC)", "label", "kind", "producer", "kernel"
                );
                for r in &list {
                    let _ = writeln!(
                        o,
                        "{:>5}  {:<16}  {:<14}  {:<8}  {:<14}  {:<16}  {}",
                        r.id,
                        history::utc(r.saved_at),
                        r.label.as_deref().unwrap_or("-"),
                        r.kind,
                        r.producer,
                        r.kernel.as_deref().unwrap_or("-"),
                        r.source
                    );
                }
                let _ = writeln!(o, "{} run(s) in {}", list.len(), s.location());
                stdout(&o);
                0
            }
            Err(e) => {
                eprintln!("flexio history: {e}");
                2
            }
        };
    }
    let points = match s.metric(&f, metric) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("flexio history: {e}");
            return 2;
        }
    };
    let kernels: Vec<(i64, String)> = s
        .list(&f)
        .map(|l| {
            l.into_iter()
                .map(|r| (r.id, r.kernel.unwrap_or_default()))
                .collect()
        })
        .unwrap_or_default();
    let mut series: Vec<Series> = Vec::new();
    for p in points {
        let pt = Point {
            run: p.run,
            saved_at: p.saved_at,
            label: p.label.clone(),
            value: p.value,
        };
        match series
            .iter_mut()
            .find(|x| x.job == p.job && x.ddir == p.ddir)
        {
            Some(x) => x.points.push(pt),
            None => series.push(Series {
                job: p.job,
                ddir: p.ddir,
                metric: p.metric,
                points: vec![pt],
            }),
        }
    }
    stdout(&history_text(&series, &kernels, min_shift, s.location()));
    if let Some(h) = html {
        let page = history::html(
            &format!("flexio history: {metric}"),
            &series,
            0.05,
            min_shift,
        );
        if let Err(e) = write_page(&h, &page) {
            eprintln!("flexio history: {e}");
            return 2;
        }
        eprintln!("flexio history: wrote {}", h.display());
    }
    0
}

fn history_text(series: &[Series], kernels: &[(i64, String)], min_shift: f64, loc: &str) -> String {
    let mut o = String::new();
    if series.is_empty() {
        let _ = writeln!(o, "no stored runs match (store {loc})");
        return o;
    }
    for s in series {
        let v: Vec<f64> = s.points.iter().map(|p| p.value).collect();
        let cps = history::change_points(&v, min_shift, 2);
        let trend = history::trend(&v)
            .map(|t| {
                format!(
                    "{} ({:+.2}%/run, p {})",
                    t.word(0.05),
                    t.slope_pct,
                    fmt::p(t.p)
                )
            })
            .unwrap_or_else(|| "needs 4 runs".into());
        let _ = writeln!(
            o,
            "job '{}' {} {}: {} runs; trend: {trend}; change points: {}",
            s.job,
            s.ddir,
            s.metric,
            v.len(),
            if cps.is_empty() {
                "none".to_string()
            } else {
                cps.iter()
                    .map(|&i| format!("before run {}", s.points[i].run))
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        );
        let f = history::metric_fmt(&s.metric);
        let _ = writeln!(
            o,
            "  {:>5}  {:<16}  {:<14}  {:<16}  {:>10}  {:>8}",
            "run", "saved (UTC)", "label", "kernel", s.metric, "change"
        );
        for (k, p) in s.points.iter().enumerate() {
            let change = if k == 0 {
                String::new()
            } else {
                fmt::pct(flexio_analysis::stats::rel_pct(
                    s.points[k - 1].value,
                    p.value,
                ))
            };
            let kernel = kernels
                .iter()
                .find(|(id, _)| *id == p.run)
                .map(|(_, k)| k.as_str())
                .filter(|k| !k.is_empty())
                .unwrap_or("-");
            let _ = writeln!(
                o,
                "  {:>5}  {:<16}  {:<14}  {:<16}  {:>10}  {:>8}{}",
                p.run,
                history::utc(p.saved_at),
                p.label.as_deref().unwrap_or("-"),
                kernel,
                f(p.value),
                change,
                if cps.contains(&k) {
                    "  <- level changed"
                } else {
                    ""
                }
            );
        }
        o.push('\n');
    }
    o
}

// ---------------------------------------------------------------------------------------
// flexio check

/// CI regression check: a job's runs against a stored baseline
///
/// Runs JOB.fio N times in this process and compares the runs with the newest batch of runs
/// stored under LABEL, with flexio compare's statistics (per job, direction and metric: the
/// difference, its 95% confidence interval, a Holm-adjusted p-value). A regression is a
/// significant change for the worse by at least --max-regression. Prints a Markdown summary
/// (also appended to $GITHUB_STEP_SUMMARY when set) and writes JUnit XML with --junit.
#[derive(clap::Parser, Debug, Default)]
#[command(
    name = "check",
    after_help = "Exit status: 0 no regression, 1 a regression, 2 bad arguments, no baseline, \
                  a failed run."
)]
pub struct Check {
    /// The stored runs to compare with
    #[arg(long, value_name = "LABEL", required = true)]
    baseline: String,
    #[command(flatten)]
    store: StoreArg,
    /// Runs of the job (at least 2)
    #[arg(long, value_name = "N", default_value_t = 5, value_parser = trials)]
    trials: usize,
    /// Smallest regression that fails the check, in %
    #[arg(long = "max-regression", value_name = "PCT", default_value = "5%",
          value_parser = |v: &str| number::<f64>(v).map(f64::abs))]
    max_regression: f64,
    /// Metrics checked: IOPS,bw,mean,p50,p99,p99.9 [default: all]
    #[arg(long = "metrics", value_name = "LIST", value_parser = metric_list)]
    metrics_arg: Option<::std::vec::Vec<&'static str>>,
    /// The metrics checked (from --metrics)
    #[arg(skip)]
    metrics: Vec<&'static str>,
    /// Significance level
    #[arg(long, value_name = "A", default_value_t = 0.05, value_parser = alpha)]
    alpha: f64,
    /// The statistics' bootstrap seed
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = number::<u64>)]
    seed: u64,
    /// Write JUnit XML (one test case per job, direction, metric)
    #[arg(long, value_name = "FILE")]
    junit: Option<PathBuf>,
    /// Also write the Markdown summary to FILE
    #[arg(long, value_name = "FILE")]
    markdown: Option<PathBuf>,
    /// On a pass (or with no baseline yet), store the runs as the new baseline under LABEL
    #[arg(long = "update-baseline")]
    update: bool,
    /// Store the runs whatever the verdict (kind 'check')
    #[arg(long, value_name = "LABEL", require_equals = true)]
    save: Option<Option<String>>,
    /// The job file
    #[arg(value_name = "JOB.fio", value_hint = clap::ValueHint::FilePath)]
    job: PathBuf,
}

fn trials(v: &str) -> Result<usize, String> {
    match number(v)? {
        n @ 2.. => Ok(n),
        _ => Err("needs at least 2".into()),
    }
}

fn metric_list(v: &str) -> Result<Vec<&'static str>, String> {
    v.split(',').map(metric).collect()
}

fn check_args(args: &[String]) -> Result<Check, clap::Error> {
    super::args::try_parse(args, |mut a: Check, _| {
        a.save = a.save.map(|l| l.filter(|l| !l.is_empty()));
        a.metrics = a
            .metrics_arg
            .take()
            .unwrap_or_else(|| Metric::ALL.iter().map(|m| m.name()).collect());
        Ok(a)
    })
}

/// Run the job text `text` once in this process: its json+ result.
fn run_once(text: &str) -> Result<String, String> {
    let rep = flexio_run::inproc::run_text(text, &["--output-format=json+"])?;
    Ok(flexio_output::json::report(
        &rep,
        true,
        flexio_run::session::VERSION,
    ))
}

/// One checked metric.
struct Checked<'a> {
    job: &'a str,
    ddir: &'static str,
    row: &'a Row,
    regression: bool,
}

pub fn check(args: &[String]) -> i32 {
    let a = match super::args::report_error(check_args(args), 2) {
        Ok(a) => a,
        Err(code) => return code,
    };
    let text = match std::fs::read_to_string(&a.job) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("flexio check: cannot read {}: {e}", a.job.display());
            return 2;
        }
    };
    let mut store = match open(a.store.store.as_deref(), "check") {
        Ok(s) => s,
        Err(c) => return c,
    };
    let baseline = match store.latest_batch(&a.baseline) {
        Ok(b) => Some(b),
        Err(e) if e.kind == flexio_store::ErrorKind::NotFound && a.update => None,
        Err(e) => {
            eprintln!(
                "flexio check: {e} (make one with: flexio check --baseline {} --update-baseline {})",
                a.baseline,
                a.job.display()
            );
            return 2;
        }
    };
    let mut results = Vec::new();
    for k in 1..=a.trials {
        eprint!("flexio check: run {k}/{} ... ", a.trials);
        match run_once(&text) {
            Ok(j) => {
                eprintln!("done");
                results.push(j);
            }
            Err(e) => {
                eprintln!("failed");
                eprintln!("flexio check: {}: {e}", a.job.display());
                return 2;
            }
        }
    }
    let source = a.job.display().to_string();
    let new_runs: Vec<NewRun> = results
        .iter()
        .map(|r| NewRun {
            source: source.clone(),
            result: r.clone(),
        })
        .collect();
    let mut code = 0;
    if let Some(label) = &a.save {
        if let Err(e) = store.save("check", label.as_deref(), &new_runs) {
            eprintln!("flexio check: the runs were not saved: {e}");
            code = 2;
        }
    }
    let Some(baseline) = baseline else {
        return match store.save("check", Some(&a.baseline), &new_runs) {
            Ok(ids) => {
                stdout(&format!(
                    "## flexio check: baseline '{}' created\n\n{} runs of `{}` stored as runs {}..{} in {}.\n",
                    a.baseline,
                    ids.len(),
                    source,
                    ids.first().unwrap_or(&0),
                    ids.last().unwrap_or(&0),
                    store.location()
                ));
                code
            }
            Err(e) => {
                eprintln!("flexio check: {e}");
                2
            }
        };
    };
    let parse = |text: &str, name: &str| {
        flexio_analysis::input::parse(text, Path::new(name)).map_err(|e| e.0)
    };
    let base: Result<Vec<RunResult>, String> = baseline
        .iter()
        .map(|r| parse(&r.result, &format!("run {}", r.info.id)))
        .collect();
    let cand: Result<Vec<RunResult>, String> = results
        .iter()
        .enumerate()
        .map(|(k, r)| parse(r, &format!("trial {}", k + 1)))
        .collect();
    let (base, cand) = match (base, cand) {
        (Ok(b), Ok(c)) => (b, c),
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("flexio check: {e}");
            return 2;
        }
    };
    let cmp = compare(
        &base,
        &cand,
        &Options {
            alpha: a.alpha,
            min_effect_pct: None,
            reps: 2000,
            seed: a.seed,
        },
    );
    let mut checked = Vec::new();
    for d in &cmp.dirs {
        for r in &d.rows {
            if !a.metrics.contains(&r.metric.name()) {
                continue;
            }
            checked.push(Checked {
                job: &d.job_b,
                ddir: d.ddir.name(),
                row: r,
                regression: r.significant && !r.b_better && r.diff_pct.abs() >= a.max_regression,
            });
        }
    }
    let failed = checked.iter().any(|c| c.regression);
    let md = markdown(&a, &baseline, &checked, &cmp.notes, failed);
    stdout(&md);
    if let Some(p) = &a.markdown {
        if let Err(e) = flexio_run::notes::write_atomic(p, md.as_bytes()) {
            eprintln!("flexio check: cannot write {}: {e}", p.display());
            code = 2;
        }
    }
    if let Some(p) = std::env::var_os("GITHUB_STEP_SUMMARY").filter(|p| !p.is_empty()) {
        use std::io::Write;
        let appended = std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(&p)
            .and_then(|mut f| f.write_all(md.as_bytes()));
        if let Err(e) = appended {
            eprintln!("flexio check: cannot append to GITHUB_STEP_SUMMARY: {e}");
        }
    }
    if let Some(p) = &a.junit {
        let xml = junit(&a, &checked);
        if let Err(e) = flexio_run::notes::write_atomic(p, xml.as_bytes()) {
            eprintln!("flexio check: cannot write {}: {e}", p.display());
            code = 2;
        }
    }
    if checked.is_empty() {
        eprintln!("flexio check: no job and direction matched the baseline's");
        return 2;
    }
    if a.update && !failed {
        match store.save("check", Some(&a.baseline), &new_runs) {
            Ok(_) => eprintln!("flexio check: baseline '{}' updated", a.baseline),
            Err(e) => {
                eprintln!("flexio check: the baseline was not updated: {e}");
                code = 2;
            }
        }
    }
    if failed {
        1
    } else {
        code
    }
}

fn markdown(
    a: &Check,
    baseline: &[StoredRun],
    checked: &[Checked],
    notes: &[String],
    failed: bool,
) -> String {
    let mut o = String::new();
    let regressions = checked.iter().filter(|c| c.regression).count();
    let _ = writeln!(
        o,
        "## flexio check: {} `{}` against baseline '{}'\n",
        if failed { "FAIL" } else { "PASS" },
        a.job.display(),
        a.baseline
    );
    let saved = baseline
        .first()
        .map(|r| history::utc(r.info.saved_at))
        .unwrap_or_default();
    let _ = writeln!(
        o,
        "{} run(s) against the baseline's {} (runs {}..{}, saved {saved} UTC). A regression is a change for the worse by at least {}% that is significant at {} (Holm-adjusted). {}\n",
        a.trials,
        baseline.len(),
        baseline.first().map(|r| r.info.id).unwrap_or(0),
        baseline.last().map(|r| r.info.id).unwrap_or(0),
        a.max_regression,
        a.alpha,
        if failed {
            format!("**{regressions} regression(s).**")
        } else {
            "No regression.".to_string()
        }
    );
    o.push_str(
        "| job | dir | metric | baseline | candidate | change | 95% CI | p (adj.) | verdict |\n",
    );
    o.push_str("|---|---|---|---:|---:|---:|---|---:|---|\n");
    for c in checked {
        let r = c.row;
        let f = history::metric_fmt(r.metric.name());
        let verdict = if c.regression {
            "**regression**".to_string()
        } else if r.significant && r.b_better {
            "better".to_string()
        } else if r.significant {
            format!("worse, within {}%", a.max_regression)
        } else {
            "no significant change".to_string()
        };
        let _ = writeln!(
            o,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            c.job,
            c.ddir,
            r.metric.name(),
            f(r.a),
            f(r.b),
            fmt::pct(r.diff_pct),
            r.ci_pct
                .map(|(l, h)| format!("[{l:+.1}%, {h:+.1}%]"))
                .unwrap_or_else(|| "-".into()),
            r.p_adj
                .map(|p| fmt::p(p).trim_start_matches("= ").to_string())
                .unwrap_or_else(|| "-".into()),
            verdict
        );
    }
    for n in notes {
        let _ = writeln!(o, "\n> {n}");
    }
    o
}

fn xml_esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn junit(a: &Check, checked: &[Checked]) -> String {
    let failures = checked.iter().filter(|c| c.regression).count();
    let mut o = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        o,
        "<testsuites name=\"flexio check\" tests=\"{}\" failures=\"{failures}\">",
        checked.len()
    );
    let _ = writeln!(
        o,
        "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failures}\" errors=\"0\">",
        xml_esc(&format!("{} vs {}", a.job.display(), a.baseline)),
        checked.len()
    );
    for c in checked {
        let r = c.row;
        let _ = write!(
            o,
            "    <testcase classname=\"{}\" name=\"{}\"",
            xml_esc(&format!("{}.{}", c.job, c.ddir)),
            xml_esc(r.metric.name())
        );
        let detail = format!(
            "baseline {} candidate {} change {} p(adj) {}",
            r.a,
            r.b,
            fmt::pct(r.diff_pct),
            r.p_adj.map(fmt::p).unwrap_or_else(|| "-".into())
        );
        if c.regression {
            let _ = writeln!(
                o,
                ">\n      <failure type=\"regression\" message=\"{}\">{}</failure>\n    </testcase>",
                xml_esc(&format!(
                    "{} {}: significant regression beyond {}%",
                    r.metric.name(),
                    fmt::pct(r.diff_pct),
                    a.max_regression
                )),
                xml_esc(&detail)
            );
        } else {
            let _ = writeln!(
                o,
                ">\n      <system-out>{}</system-out>\n    </testcase>",
                xml_esc(&detail)
            );
        }
    }
    o.push_str("  </testsuite>\n</testsuites>\n");
    o
}

// ---------------------------------------------------------------------------------------
// flexio diff

/// Two results side by side: metrics, provenance and resolved jobs
///
/// Two results side by side: each job's metrics with the change from A to B, then what
/// differs in their provenance (kernel, device settings, file system, tool) and in their
/// resolved jobs (every option, defaults included). A run is a stored run's id or a result
/// file (fio's or flexio's JSON).
#[derive(clap::Parser, Debug)]
#[command(
    name = "diff",
    after_help = "Exit status: 0 done, 2 bad arguments or input."
)]
pub struct Diff {
    #[command(flatten)]
    store: StoreArg,
    /// A stored run's id or a result file
    #[arg(value_name = "RUN_A", value_hint = clap::ValueHint::FilePath)]
    a: String,
    /// A stored run's id or a result file
    #[arg(value_name = "RUN_B", value_hint = clap::ValueHint::FilePath)]
    b: String,
}

/// A stored run's id or a result file: its text and a name.
fn load_result(
    store: &mut Option<Store>,
    spec: Option<&str>,
    what: &str,
) -> Result<(String, String), String> {
    if let Ok(id) = what.parse::<i64>() {
        if store.is_none() {
            *store = Some(Store::open(spec).map_err(|e| e.to_string())?);
        }
        let s = store.as_mut().ok_or("no store")?;
        let r = s.get(id).map_err(|e| e.to_string())?;
        let name = format!(
            "run {id}{}",
            r.info.label.map(|l| format!(" ({l})")).unwrap_or_default()
        );
        return Ok((r.result, name));
    }
    let text = std::fs::read_to_string(what).map_err(|e| format!("cannot read {what}: {e}"))?;
    Ok((text, what.to_string()))
}

/// Each job's every option: the defaults, then global options, then its own, then its seed.
fn resolved_jobs(run: &RunResult, doc: &Value) -> Vec<(String, Vec<(String, String)>)> {
    let job = doc.pointer("/flexio/provenance/job");
    let Some(job) = job else {
        // fio's JSON: the options each job echoes (global ones included).
        return run
            .jobs
            .iter()
            .map(|j| {
                let mut o = run.global_options.clone();
                o.extend(j.options.iter().cloned());
                (j.name.clone(), o)
            })
            .collect();
    };
    let pairs = |v: Option<&Value>| -> Vec<(String, String)> {
        v.and_then(Value::as_object)
            .map(|m| {
                m.iter()
                    .map(|(k, v)| {
                        (
                            k.clone(),
                            v.as_str()
                                .map(String::from)
                                .unwrap_or_else(|| v.to_string()),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default()
    };
    let defaults = pairs(job.get("defaults"));
    let global = pairs(job.get("global"));
    let mut out = Vec::new();
    for j in job["jobs"].as_array().into_iter().flatten() {
        let mut all: Vec<(String, String)> = Vec::new();
        let mut set = |k: &str, v: &str| match all.iter_mut().find(|(x, _)| x == k) {
            Some(e) => e.1 = v.to_string(),
            None => all.push((k.to_string(), v.to_string())),
        };
        for (k, v) in defaults
            .iter()
            .chain(&global)
            .chain(&pairs(j.get("options")))
        {
            set(k, v);
        }
        if let Some(s) = j.get("randseed") {
            set("randseed", &s.to_string());
        }
        out.push((j["name"].as_str().unwrap_or("").to_string(), all));
    }
    out
}

pub fn diff(args: &[String]) -> i32 {
    let Diff {
        store: StoreArg { store: spec },
        a,
        b,
    } = match args_of(args, 2, as_is) {
        Ok(a) => a,
        Err(code) => return code,
    };
    let which = [a, b];
    let mut store = None;
    let mut sides = Vec::new();
    for w in &which {
        match load_result(&mut store, spec.as_deref(), w) {
            Ok(x) => sides.push(x),
            Err(e) => {
                eprintln!("flexio diff: {e}");
                return 2;
            }
        }
    }
    let mut parsed = Vec::new();
    for (text, name) in &sides {
        let doc = match flexio_analysis::input::last_document(text) {
            Ok(d) => d,
            Err(e) => {
                eprintln!("flexio diff: {name}: {}", e.0);
                return 2;
            }
        };
        match flexio_analysis::input::from_value(&doc, Path::new(name)) {
            Ok(r) => parsed.push((r, doc)),
            Err(e) => {
                eprintln!("flexio diff: {name}: {}", e.0);
                return 2;
            }
        }
    }
    stdout(&diff_text(&sides[0].1, &sides[1].1, &parsed[0], &parsed[1]));
    0
}

/// An option's value for display: an empty one (a bare flag, or no default) as `""`.
fn shown(v: &str) -> &str {
    if v.is_empty() {
        "\"\""
    } else {
        v
    }
}

fn diff_text(na: &str, nb: &str, a: &(RunResult, Value), b: &(RunResult, Value)) -> String {
    let mut o = format!("A: {na}\nB: {nb}\n\nMetrics\n");
    let (ma, mb) = (
        flexio_store::metrics_of(&a.0),
        flexio_store::metrics_of(&b.0),
    );
    let _ = writeln!(
        o,
        "  {:<16} {:<6} {:<6} {:>12} {:>12} {:>9}",
        "job", "dir", "metric", "A", "B", "change"
    );
    for x in &ma {
        let f = history::metric_fmt(&x.metric);
        let y = mb
            .iter()
            .find(|y| y.job == x.job && y.ddir == x.ddir && y.metric == x.metric);
        let _ = writeln!(
            o,
            "  {:<16} {:<6} {:<6} {:>12} {:>12} {:>9}",
            x.job,
            x.ddir,
            x.metric,
            f(x.value),
            y.map(|y| f(y.value)).unwrap_or_else(|| "-".into()),
            y.map(|y| fmt::pct(flexio_analysis::stats::rel_pct(x.value, y.value)))
                .unwrap_or_default()
        );
    }
    for y in &mb {
        if !ma
            .iter()
            .any(|x| x.job == y.job && x.ddir == y.ddir && x.metric == y.metric)
        {
            let f = history::metric_fmt(&y.metric);
            let _ = writeln!(
                o,
                "  {:<16} {:<6} {:<6} {:>12} {:>12}",
                y.job,
                y.ddir,
                y.metric,
                "-",
                f(y.value)
            );
        }
    }
    o.push_str("\nProvenance (what differs)\n");
    let strip = |v: &Value| {
        let mut p = v
            .pointer("/flexio/provenance")
            .cloned()
            .unwrap_or(Value::Null);
        if let Some(m) = p.as_object_mut() {
            m.remove("job");
        }
        p
    };
    let (pa, pb) = (strip(&a.1), strip(&b.1));
    if pa.is_null() || pb.is_null() {
        let _ = writeln!(
            o,
            "  {} has no provenance (not written by flexio)",
            if pa.is_null() { "A" } else { "B" }
        );
    } else {
        let d = flatten::differences(&pa, &pb);
        if d.is_empty() {
            o.push_str("  nothing\n");
        }
        for (k, x, y) in d {
            let _ = writeln!(
                o,
                "  {k}: {} -> {}",
                x.as_deref().unwrap_or("(none)"),
                y.as_deref().unwrap_or("(none)")
            );
        }
    }
    o.push_str("\nJob (what differs, defaults included)\n");
    let (ja, jb) = (resolved_jobs(&a.0, &a.1), resolved_jobs(&b.0, &b.1));
    let mut any = false;
    for (k, (name, oa)) in ja.iter().enumerate() {
        let Some((_, ob)) = jb.iter().find(|(n, _)| n == name).or_else(|| jb.get(k)) else {
            let _ = writeln!(o, "  job '{name}': only in A");
            any = true;
            continue;
        };
        for (key, va) in oa {
            let vb = ob.iter().find(|(x, _)| x == key).map(|(_, v)| v.as_str());
            if vb != Some(va.as_str()) {
                any = true;
                let _ = writeln!(
                    o,
                    "  {name}: {key}: {} -> {}",
                    shown(va),
                    vb.map(shown).unwrap_or("(none)")
                );
            }
        }
        for (key, vb) in ob {
            if !oa.iter().any(|(x, _)| x == key) {
                any = true;
                let _ = writeln!(o, "  {name}: {key}: (none) -> {}", shown(vb));
            }
        }
    }
    if !any {
        o.push_str("  nothing\n");
    }
    o
}

// ---------------------------------------------------------------------------------------
// flexio rerun

/// A stored run's exact job and seeds again
///
/// Runs a stored run's exact resolved job again: the options it was given, in global scope
/// and per job, with the random seeds it used (a job with randrepeat=0 gets the seed it
/// drew), under the same --compat. Warns where the host, a target's file system or device,
/// the tool or the cgroup limits differ from the stored provenance.
#[derive(clap::Parser, Debug)]
#[command(
    name = "rerun",
    after_help = "Exit status: the run's, or 2 bad arguments or no such run."
)]
pub struct Rerun {
    #[command(flatten)]
    store: StoreArg,
    /// Change an option in every job (e.g. --set write_iolog=again.log)
    #[arg(long, value_name = "KEY=VALUE", value_parser = key_value)]
    set: Vec<(String, String)>,
    /// The stored run's id
    #[arg(value_name = "RUN_ID", value_parser = run_id)]
    id: i64,
    /// flexio options for the new run (--output-format, --output, --save, ...)
    #[arg(value_name = "FLEXIO-OPTIONS", allow_hyphen_values = true)]
    rest: Vec<String>,
}

fn key_value(v: &str) -> Result<(String, String), String> {
    v.split_once('=')
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .ok_or_else(|| "--set takes KEY=VALUE".into())
}

/// clap gives every word from the first of flexio's options on to `rest`: a `--set` or
/// `--store` among them is still rerun's own.
fn rerun_check(mut a: Rerun, _: &clap::ArgMatches) -> Result<Rerun, String> {
    let mut words = std::mem::take(&mut a.rest).into_iter();
    while let Some(w) = words.next() {
        let (name, value) = match w.split_once('=') {
            Some((n, v)) => (n, Some(v.to_string())),
            None => (w.as_str(), None),
        };
        if name != "--set" && name != "--store" {
            a.rest.push(w);
            continue;
        }
        let v = value
            .or_else(|| words.next())
            .ok_or_else(|| format!("{name} needs a value"))?;
        if name == "--set" {
            a.set.push(key_value(&v)?);
        } else {
            a.store.store = Some(v);
        }
    }
    Ok(a)
}

fn run_id(v: &str) -> Result<i64, String> {
    v.parse()
        .map_err(|_| format!("'{v}' is not a stored run's id"))
}

/// The job file text that reproduces a stored run, from its provenance's resolved job.
pub fn job_text(doc: &Value, sets: &[(String, String)]) -> Result<String, String> {
    let job = doc
        .pointer("/flexio/provenance/job")
        .ok_or("the result has no resolved job (flexio.provenance.job): it was not written by a flexio that records one")?;
    let line = |k: &str, v: &Value| -> String {
        let v = v
            .as_str()
            .map(String::from)
            .unwrap_or_else(|| v.to_string());
        if v.is_empty() {
            format!("{k}\n")
        } else {
            format!("{k}={v}\n")
        }
    };
    let mut t = String::from("; flexio rerun: the resolved job of a stored run\n[global]\n");
    for (k, v) in job["global"].as_object().into_iter().flatten() {
        t.push_str(&line(k, v));
    }
    let jobs = job["jobs"]
        .as_array()
        .ok_or("the resolved job lists no jobs")?;
    for j in jobs {
        let name = j["name"].as_str().unwrap_or("job");
        if name.contains([']', '\n']) {
            return Err(format!("job name '{name}' cannot be written as a section"));
        }
        let _ = writeln!(t, "\n[{name}]");
        for (k, v) in j["options"].as_object().into_iter().flatten() {
            t.push_str(&line(k, v));
        }
        if let Some(s) = j.get("randseed") {
            t.push_str(&line("randseed", s));
        }
        for (k, v) in sets {
            t.push_str(&line(k, &Value::String(v.clone())));
        }
    }
    Ok(t)
}

/// `flexio rerun`'s entry in the subcommand table: the run itself goes through flexio's
/// command line ([`rerun_argv`], called by `app::run`), so this only answers `--help` and
/// bad arguments.
pub fn rerun(args: &[String]) -> i32 {
    match rerun_argv(args) {
        Ok(_) => {
            eprintln!("flexio rerun: internal: the rerun is started by flexio's command line");
            2
        }
        Err(code) => code,
    }
}

/// The command line that runs a stored run again (a job file written into a temporary
/// folder, which must live until the run ends), or the exit status when it cannot.
pub(crate) fn rerun_argv(args: &[String]) -> Result<(Vec<String>, super::compare::TempDir), i32> {
    let a = args_of(args, 2, rerun_check)?;
    rerun_argv_inner(a).map_err(|(code, msg)| {
        if !msg.is_empty() {
            eprintln!("{msg}");
        }
        code
    })
}

fn rerun_argv_inner(a: Rerun) -> Result<(Vec<String>, super::compare::TempDir), (i32, String)> {
    let Rerun {
        store: StoreArg { store: spec },
        set: sets,
        id,
        rest,
    } = a;
    let fail = |m: String| (2, format!("flexio rerun: {m}"));
    let mut s = Store::open(spec.as_deref()).map_err(|e| fail(e.to_string()))?;
    let stored = s.get(id).map_err(|e| fail(e.to_string()))?;
    drop(s);
    let doc = flexio_analysis::input::last_document(&stored.result)
        .map_err(|e| fail(format!("run {id}: {}", e.0)))?;
    let text = job_text(&doc, &sets).map_err(|e| fail(format!("run {id}: {e}")))?;
    let prov = doc
        .pointer("/flexio/provenance")
        .cloned()
        .unwrap_or(Value::Null);
    let compat = prov
        .pointer("/tool/compat")
        .and_then(Value::as_str)
        .unwrap_or("latest")
        .to_string();
    // Today's provenance of the same targets, to warn where it differs.
    let targets: Vec<PathBuf> = prov["targets"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["path"].as_str().map(PathBuf::from))
        .collect();
    let now: Vec<(String, flexio_stats::report::Fact)> =
        flexio_run::provenance::collect(&targets, &compat);
    // Through the printer that wrote the stored provenance, so both read back alike.
    let now: Value = serde_json::from_str(&flexio_output::json::fact_text(
        &flexio_stats::report::Fact::Obj(now),
    ))
    .unwrap_or(Value::Null);
    let mut then = prov.clone();
    if let Some(m) = then.as_object_mut() {
        m.remove("job");
        // How many files a target entry stood for is the job's, not the machine's: today's
        // look goes by the entries' paths, one each.
        if let Some(list) = m.get_mut("targets").and_then(Value::as_array_mut) {
            for t in list {
                if let Some(t) = t.as_object_mut() {
                    t.remove("files");
                }
            }
        }
    }
    for (k, x, y) in flatten::differences(&then, &now) {
        eprintln!(
            "flexio rerun: warning: {k} was {}, now {}",
            x.as_deref().unwrap_or("(not recorded)"),
            y.as_deref().unwrap_or("(not readable)")
        );
    }
    let dir = super::compare::temp_dir_named("flexio-rerun").map_err(fail)?;
    let job = dir.0.join(format!("run-{id}.fio"));
    std::fs::write(&job, &text)
        .map_err(|e| fail(format!("cannot write {}: {e}", job.display())))?;
    eprintln!("flexio rerun: running run {id}'s resolved job again");
    let mut argv = vec![format!("--compat={compat}")];
    argv.extend(rest);
    argv.push(job.display().to_string());
    Ok((argv, dir))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn check_arguments() {
        let a = check_args(&s(&[
            "--baseline",
            "b",
            "j.fio",
            "--trials=3",
            "--max-regression",
            "10%",
            "--metrics",
            "iops,bw",
        ]))
        .unwrap();
        assert_eq!(
            (a.baseline.as_str(), a.trials, a.max_regression),
            ("b", 3, 10.0)
        );
        assert_eq!(a.metrics, vec!["IOPS", "bw"]);
        assert!(check_args(&s(&["j.fio"])).is_err());
        assert!(check_args(&s(&["--baseline=b"])).is_err());
        assert!(check_args(&s(&["--baseline=b", "j", "--trials=1"])).is_err());
        assert!(check_args(&s(&["--baseline=b", "j", "--metrics=p42"])).is_err());
    }

    #[test]
    fn rerun_arguments() {
        let r = |v: &[&str]| super::super::args::try_parse(&s(v), rerun_check);
        // --set and --store before or after the id; flexio's own options after it.
        let a = r(&[
            "--store=x.db",
            "7",
            "--set",
            "a=b",
            "--output-format=terse",
            "--set=c=d=e",
        ])
        .unwrap();
        assert_eq!((a.store.store.as_deref(), a.id), (Some("x.db"), 7));
        assert_eq!(
            a.set,
            [("a".into(), "b".into()), ("c".into(), "d=e".into())]
        );
        assert_eq!(a.rest, ["--output-format=terse"]);
        let a = r(&["--set=k=v", "3", "--output=o.json", "--save=x"]).unwrap();
        assert_eq!((a.id, a.rest.len()), (3, 2));
        let e = r(&["x"]).unwrap_err().to_string();
        assert!(e.contains("'x' is not a stored run's id"), "{e}");
        let e = r(&["--set", "k", "3"]).unwrap_err().to_string();
        assert!(e.contains("--set takes KEY=VALUE"), "{e}");
        assert!(r(&[]).unwrap_err().to_string().contains("<RUN_ID>"));
        let e = r(&["3", "--output-format=json", "--set"])
            .unwrap_err()
            .to_string();
        assert!(e.contains("--set needs a value"), "{e}");
        let a = r(&["3", "--output-format=json", "--store", "y.db"]).unwrap();
        assert_eq!((a.store.store.as_deref(), a.rest.len()), (Some("y.db"), 1));
    }

    #[test]
    fn a_resolved_job_becomes_a_job_file() {
        let doc = serde_json::json!({"flexio": {"provenance": {"job": {
            "global": {"ioengine": "null", "time_based": ""},
            "jobs": [{"name": "a", "options": {"rw": "randread", "randrepeat": "0"}, "randseed": 42, "seed_drawn": true}],
            "defaults": {"bs": "4096"}
        }}}});
        let t = job_text(&doc, &[("write_iolog".into(), "x.log".into())]).unwrap();
        assert_eq!(
            t,
            "; flexio rerun: the resolved job of a stored run\n[global]\nioengine=null\ntime_based\n\n[a]\nrw=randread\nrandrepeat=0\nrandseed=42\nwrite_iolog=x.log\n"
        );
        assert!(job_text(&serde_json::json!({}), &[]).is_err());
    }
}
