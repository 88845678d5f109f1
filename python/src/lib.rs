//! flexio's Python package: the extension module `flexio._flexio`, which the pure Python
//! layer (`python/flexio/`) wraps into result objects. Three entry points:
//!
//! * [`run`]: a job (a fio job file or its text, keyword options overriding every job's)
//!   loaded, planned and run by the run engine (`flexio-run`) with the GIL released; the
//!   report rendered as flexio's json+ and read back by `flexio-analysis`, so a run and a
//!   loaded result are one model; the log files the jobs wrote read line by line.
//! * [`load`]: fio's or flexio's JSON / json+ result file read by `flexio-analysis`, with
//!   the log files beside it.
//! * [`compare`]: `flexio compare`'s comparison of two sets of results, as its JSON.
//!
//! Everything crosses into Python as plain dicts, lists, strings and numbers.

use flexio_analysis::compare::{self, Options as CompareOptions};
use flexio_analysis::logs::{hist_bin_ns, parse_name, LogKind};
use flexio_analysis::model::{DirResult, JobResult, Lat, RunResult, Samples};
use flexio_analysis::{compare_out, input};
use flexio_job::jobfile::{parse_job_file, RawOpt, RawSection};
use flexio_job::Origin;
use flexio_run::plan::ThreadPlan;
use flexio_run::report::JobResult as ThreadResult;
use flexio_run::session::{read_file, JOB_TEXT};
use flexio_run::{Outcome, Prepared, Quiet};
use pyo3::exceptions::{PyFileNotFoundError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

pyo3::create_exception!(
    flexio,
    JobError,
    pyo3::exceptions::PyValueError,
    "A job that flexio cannot run as written: its message names the job file and line (or the keyword argument)."
);
pyo3::create_exception!(
    flexio,
    RunError,
    pyo3::exceptions::PyRuntimeError,
    "A run that failed: a job ended with an error, or the run could not start."
);
pyo3::create_exception!(
    flexio,
    ResultError,
    pyo3::exceptions::PyValueError,
    "A file that holds no fio or flexio JSON result."
);

/// Where keyword options come from in error messages (`keyword arguments:2: 'bs=x': ...`).
const KEYWORDS: &str = "keyword arguments";

/// Switches of the command line that make no sense for a run inside Python.
fn refused_switch(sw: &flexio_job::Switches) -> Option<&'static str> {
    let r = &sw.remote;
    [
        (sw.output.is_some(), "--output"),
        (sw.parse_only, "--parse-only"),
        (sw.showcmd, "--showcmd"),
        (sw.version, "--version"),
        (sw.help, "--help"),
        (sw.cmdhelp.is_some(), "--cmdhelp"),
        (sw.enghelp.is_some(), "--enghelp"),
        (sw.merge_blktrace_only, "--merge-blktrace-only"),
        (sw.inflate_log.is_some(), "--inflate-log"),
        (sw.report.is_some(), "--report"),
        (sw.save.is_some() || sw.store.is_some(), "--save/--store"),
        (sw.live.any(), "--metrics-listen/--interval-stream/--live"),
        (r.server.is_some(), "--server"),
        (!r.clients.is_empty(), "--client"),
        (r.mpi || r.mpi_stonewall, "--mpi"),
    ]
    .into_iter()
    .find(|(on, _)| *on)
    .map(|(_, name)| name)
}

/// The job's sections: the job file (or text) as fio reads it, then every job section
/// given the keyword options after its own lines (so they override them); without a job,
/// one job section of the keyword options (named by `name=`, else `flexio`).
fn sections(
    job: Option<&str>,
    is_text: bool,
    options: &[(String, Option<String>)],
    warnings: &mut Vec<String>,
) -> Result<Vec<RawSection>, String> {
    let mut secs = match job {
        None => vec![RawSection {
            name: options
                .iter()
                .find(|(k, _)| k == "name")
                .and_then(|(_, v)| v.clone())
                .unwrap_or_else(|| "flexio".into()),
            origin: Origin::Builtin,
            global: false,
            opts: Vec::new(),
        }],
        Some(text) if is_text => {
            let read = |p: &Path| {
                if p == Path::new(JOB_TEXT) {
                    Ok(text.as_bytes().to_vec())
                } else {
                    read_file(p)
                }
            };
            parse_job_file(Path::new(JOB_TEXT), JOB_TEXT, &read, warnings)
                .map_err(|e| e.to_string())?
        }
        Some(path) => parse_job_file(Path::new(path), path, &read_file, warnings)
            .map_err(|e| e.to_string())?,
    };
    let opts: Vec<RawOpt> = options
        .iter()
        .enumerate()
        .map(|(i, (k, v))| RawOpt {
            origin: Origin::File {
                path: KEYWORDS.into(),
                line: i + 1,
            },
            key: k.clone(),
            value: v.clone(),
            substitute: false,
            raw: match v {
                Some(v) => format!("{k}={v}"),
                None => k.clone(),
            },
        })
        .collect();
    for s in secs.iter_mut().filter(|s| !s.global) {
        s.opts.extend(opts.iter().cloned());
    }
    Ok(secs)
}

/// Load and plan: the command-line switches `args`, then the job's sections.
fn prepare(
    job: Option<&str>,
    is_text: bool,
    options: &[(String, Option<String>)],
    args: &[String],
) -> Result<(Prepared, Vec<String>), String> {
    let mut argv = vec!["--output-format=json+".to_string()];
    argv.extend(args.iter().cloned());
    let mut cli = flexio_job::cli::parse_args(&argv, &flexio_engine::CATALOG)
        .map_err(|e| format!("args: {e}"))?;
    if let Some(s) = refused_switch(&cli.switches) {
        return Err(format!(
            "args: {s} is not for a run inside Python (use the flexio command)"
        ));
    }
    if let Some((_, f)) = cli.job_files.first() {
        return Err(format!(
            "args: '{f}': give the job file as run()'s first argument"
        ));
    }
    let mut warnings = Vec::new();
    let mut secs = sections(job, is_text, options, &mut warnings)?;
    let only = &cli.switches.sections;
    if !only.is_empty() {
        secs.retain(|s| s.global || only.contains(&s.name));
    }
    cli.sections.extend(secs);
    let mut p = flexio_run::prepare_cli(cli, &read_file).map_err(|e| match job {
        // The job made of the keyword options is named after them, not "built-in job".
        None => match e.strip_prefix("built-in job: ") {
            Some(rest) => format!("{KEYWORDS}: {rest}"),
            None => e,
        },
        Some(_) => e,
    })?;
    warnings.append(&mut p.set.warnings);
    if p.cli.switches.warnings_fatal && !warnings.is_empty() {
        return Err(format!(
            "warnings are fatal (--warnings-fatal): {}",
            warnings.join("; ")
        ));
    }
    Ok((p, warnings))
}

/// Run with the GIL released: the run goes on a thread of its own while this one waits
/// for it, looking at Python's signals ten times a second. Ctrl-C stops the run as SIGINT
/// stops `flexio` (the jobs end, the report of what ran is built), then raises
/// `KeyboardInterrupt`. Concurrent runs (from several Python threads) run one after the
/// other.
fn run_released(py: Python<'_>, p: Prepared) -> PyResult<Outcome> {
    // Runs of one process take turns: the engines share a few process-wide facts
    // (`flexio_engine::IO_JOBS_PENDING`, flow counters), as the flexio command runs one
    // job set at a time.
    static TURN: Mutex<()> = Mutex::new(());
    let stop = Arc::new(AtomicBool::new(false));
    let (tx, rx) = mpsc::channel();
    let flag = stop.clone();
    std::thread::Builder::new()
        .name("flexio-run".into())
        .spawn(move || {
            let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
            let out =
                flexio_run::run_prepared(p, &Quiet, flag, flexio_run::signals::Signals::default());
            let _ = tx.send(out);
        })
        .map_err(|e| RunError::new_err(format!("cannot start the run: {e}")))?;
    let mut interrupt: Option<PyErr> = None;
    let mut rx = rx;
    loop {
        let (got, back) = py.detach(move || (rx.recv_timeout(Duration::from_millis(100)), rx));
        rx = back;
        match got {
            Ok(out) => {
                return match interrupt {
                    Some(e) => Err(e),
                    None => Ok(out),
                }
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if interrupt.is_none() {
                    if let Err(e) = py.check_signals() {
                        stop.store(true, Ordering::Relaxed);
                        interrupt = Some(e);
                    }
                }
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                return Err(RunError::new_err(
                    "the run ended without a result (a flexio bug: please report it)",
                ))
            }
        }
    }
}

/// What the logs need of a plan thread once it has run.
struct PlanThread {
    name: String,
    groupid: u32,
    logs: Vec<LogFile>,
}

impl PlanThread {
    fn of(t: &ThreadPlan) -> PlanThread {
        PlanThread {
            name: t.name.clone(),
            groupid: t.groupid,
            logs: plan_logs(t),
        }
    }

    /// The logs the thread wrote (files never written, or empty, are left out).
    fn written(&self) -> impl Iterator<Item = &LogFile> {
        self.logs
            .iter()
            .filter(|f| f.path.metadata().is_ok_and(|m| m.len() > 0))
    }
}

/// The plan threads behind each job of the report, in report order: the threads merged
/// as the report merges them (`group_reporting`), `None` where the results cannot be
/// matched to the plans.
fn threads_per_job(plans: &[PlanThread], results: &[ThreadResult]) -> Option<Vec<Vec<usize>>> {
    let mut units: Vec<Vec<usize>> = Vec::new();
    let mut last: Option<(u32, bool)> = None;
    let mut next = 0;
    for r in results {
        let i = next
            + plans[next..]
                .iter()
                .position(|t| t.name == r.name && t.groupid == r.groupid)?;
        next = i + 1;
        if !r.stats_enabled {
            continue;
        }
        let join = matches!(last, Some((g, gr)) if r.group_reporting && gr && g == r.groupid);
        if join {
            units.last_mut()?.push(i);
        } else {
            units.push(vec![i]);
        }
        last = Some((r.groupid, r.group_reporting));
    }
    Some(units)
}

/// The columns of a sample log line besides time, value, ddir, bs and prio.
#[derive(Clone, Copy, Debug, Default)]
struct Layout {
    /// `log_window_value=both`: a second value after the first.
    value1: bool,
    /// `log_offset=1`: the offset after bs.
    offset: bool,
    /// `log_issue_time=1` (clat and slat logs): the issue time last.
    issue: bool,
}

/// A sample log (lat, clat, slat, bw or iops) read line by line into columns.
#[derive(Default)]
struct LogColumns {
    time_ms: Vec<u64>,
    value: Vec<u64>,
    value1: Vec<u64>,
    ddir: Vec<u64>,
    bs: Vec<u64>,
    offset: Vec<u64>,
    prio: Vec<u64>,
    issue_time_ns: Vec<u64>,
    bad: u64,
}

fn number(s: &str) -> Option<u64> {
    let s = s.trim();
    match s.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => s.parse().ok(),
    }
}

/// A log file's text: its lines, or a compressed log's (`log_store_compressed`, `.log.fz`)
/// inflated as `flexio --inflate-log` inflates it, its records read in layout `fz`.
fn log_text(path: &Path, fz: Option<flexio_run::logz::Layout>) -> std::io::Result<String> {
    match fz {
        Some(l) => flexio_run::logz::inflate_file(path, l).map_err(std::io::Error::other),
        // Valid UTF-8 (every log flexio or fio writes) is taken as it is, not copied: a
        // per-I/O log can be hundreds of MB.
        None => Ok(String::from_utf8(std::fs::read(path)?)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())),
    }
}

fn read_sample_log(
    path: &Path,
    lay: Layout,
    fz: Option<flexio_run::logz::Layout>,
) -> std::io::Result<LogColumns> {
    let text = log_text(path, fz)?;
    let want = 5 + usize::from(lay.value1) + usize::from(lay.offset) + usize::from(lay.issue);
    let mut c = LogColumns::default();
    let mut f: Vec<u64> = Vec::with_capacity(want);
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        f.clear();
        f.extend(line.split(',').map_while(number));
        if f.len() != want || line.split(',').count() != want {
            c.bad += 1;
            continue;
        }
        let mut it = f.iter().copied();
        let mut next = || it.next().unwrap_or(0);
        c.time_ms.push(next());
        c.value.push(next());
        if lay.value1 {
            c.value1.push(next());
        }
        c.ddir.push(next());
        c.bs.push(next());
        if lay.offset {
            c.offset.push(next());
        }
        c.prio.push(next());
        if lay.issue {
            c.issue_time_ns.push(next());
        }
    }
    Ok(c)
}

/// A histogram log (`write_hist_log`) as columns: per line its time, direction, block size
/// and bin counts; every line has the first line's number of bins.
#[derive(Default)]
struct HistColumns {
    time_ms: Vec<u64>,
    ddir: Vec<u64>,
    bs: Vec<u64>,
    bins: Vec<Vec<u64>>,
    bad: u64,
}

fn read_hist_log(
    path: &Path,
    fz: Option<flexio_run::logz::Layout>,
) -> std::io::Result<HistColumns> {
    let text = log_text(path, fz)?;
    let mut c = HistColumns::default();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let f: Option<Vec<u64>> = line.split(',').map(number).collect();
        let Some(f) = f.filter(|f| f.len() > 3) else {
            c.bad += 1;
            continue;
        };
        let k = f.len() - 3;
        let first = c.bins.first().map_or(k, Vec::len);
        if k != first || hist_bin_ns(k).is_none() {
            c.bad += 1;
            continue;
        }
        c.time_ms.push(f[0]);
        c.ddir.push(f[1]);
        c.bs.push(f[2]);
        c.bins.push(f[3..].to_vec());
    }
    Ok(c)
}

/// A log file read: a sample log's columns or a histogram log's.
enum ReadLog {
    Samples(LogColumns),
    Hist(HistColumns),
}

/// A histogram log as a Python dict's `columns` and `bin_ns`.
fn hist_to_py<'py>(py: Python<'py>, c: HistColumns, d: &Bound<'py, PyDict>) -> PyResult<()> {
    let cols = PyDict::new(py);
    let bin_ns = c.bins.first().and_then(|b| hist_bin_ns(b.len()));
    cols.set_item("time_ms", c.time_ms)?;
    cols.set_item("ddir", c.ddir)?;
    cols.set_item("bs", c.bs)?;
    cols.set_item("bins", c.bins)?;
    d.set_item("columns", cols)?;
    d.set_item("bin_ns", bin_ns)?;
    Ok(())
}

/// One log file found for a job.
#[derive(Clone)]
struct LogFile {
    path: PathBuf,
    kind: LogKind,
    thread: Option<u32>,
    layout: Layout,
    /// A compressed log (`.log.fz`) and the record layout to read it in.
    fz: Option<flexio_run::logz::Layout>,
}

/// The logs of one job as Python dicts: `kind`, `thread`, `path`, `columns` (name → list).
fn logs_to_py<'py>(
    py: Python<'py>,
    files: &[LogFile],
    warnings: &mut Vec<String>,
) -> PyResult<Bound<'py, PyList>> {
    let out = PyList::empty(py);
    for f in files {
        let read = py.detach(|| {
            if f.kind == LogKind::ClatHist {
                read_hist_log(&f.path, f.fz).map(ReadLog::Hist)
            } else {
                read_sample_log(&f.path, f.layout, f.fz).map(ReadLog::Samples)
            }
        });
        let read = match read {
            Ok(r) => r,
            Err(e) => {
                warnings.push(format!("cannot read the log {}: {e}", f.path.display()));
                continue;
            }
        };
        let (bad, layout) = match &read {
            ReadLog::Hist(c) => (c.bad, "a histogram log's layout"),
            ReadLog::Samples(c) => (c.bad, "the expected layout"),
        };
        if bad > 0 {
            warnings.push(format!(
                "{}: {bad} line(s) not in {layout} were skipped",
                f.path.display(),
            ));
        }
        let d = PyDict::new(py);
        d.set_item("kind", f.kind.suffix())?;
        d.set_item("thread", f.thread)?;
        d.set_item("path", f.path.display().to_string())?;
        match read {
            ReadLog::Hist(c) => hist_to_py(py, c, &d)?,
            ReadLog::Samples(c) => {
                let cols = PyDict::new(py);
                cols.set_item("time_ms", c.time_ms)?;
                cols.set_item("value", c.value)?;
                if f.layout.value1 {
                    cols.set_item("value1", c.value1)?;
                }
                cols.set_item("ddir", c.ddir)?;
                cols.set_item("bs", c.bs)?;
                if f.layout.offset {
                    cols.set_item("offset", c.offset)?;
                }
                cols.set_item("prio", c.prio)?;
                if f.layout.issue {
                    cols.set_item("issue_time_ns", c.issue_time_ns)?;
                }
                d.set_item("columns", cols)?;
            }
        }
        out.append(d)?;
    }
    Ok(out)
}

/// The logs a plan thread writes (sample and histogram logs).
fn plan_logs(t: &ThreadPlan) -> Vec<LogFile> {
    let Some(l) = &t.meter.logs else {
        return Vec::new();
    };
    let mut v = Vec::new();
    let mut add = |p: &PathBuf, kind: LogKind| {
        let lat = matches!(kind, LogKind::Clat | LogKind::Slat);
        let compressed = p.extension().is_some_and(|e| e == "fz");
        v.push(LogFile {
            path: p.clone(),
            kind,
            thread: Some(t.thread_number),
            fz: compressed.then_some(l.layout),
            layout: Layout {
                value1: l.both_values,
                offset: l.offset,
                issue: lat && l.issue_time,
            },
        });
    };
    if let Some([lat, slat, clat]) = &l.lat {
        add(lat, LogKind::Lat);
        add(slat, LogKind::Slat);
        add(clat, LogKind::Clat);
    }
    if let Some(p) = &l.bw {
        add(p, LogKind::Bw);
    }
    if let Some(p) = &l.iops {
        add(p, LogKind::Iops);
    }
    if let Some(p) = &l.hist {
        add(p, LogKind::ClatHist);
    }
    v
}

/// Whether a job's option (its own or inherited) is on.
fn option_on(j: &JobResult, k: &str) -> bool {
    j.option(k).is_some_and(|v| {
        let v = v.trim();
        v.is_empty() || (v != "0" && !v.eq_ignore_ascii_case("false"))
    })
}

/// The sample, histogram and compressed logs `flexio_analysis::logs::attach` found beside a
/// result for a job, with the layout its options give them; compressed records are read in
/// `fz`'s layout first (fio 3.33's for a fio 3.33 result).
fn found_logs(j: &JobResult, fz: flexio_run::logz::Layout) -> Vec<LogFile> {
    let both = j
        .option("log_window_value")
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("both"));
    let offset = option_on(j, "log_offset");
    let issue = option_on(j, "log_issue_time");
    let plain = j.logs.files.iter().map(|p| (p, None));
    let compressed = j.logs.compressed.iter().map(|(p, _)| (p, Some(fz)));
    let mut v: Vec<LogFile> = plain
        .chain(compressed)
        .filter_map(|(p, fz)| {
            let name = p.file_name()?.to_string_lossy();
            let (_, kind, thread) = parse_name(name.strip_suffix(".fz").unwrap_or(&name))?;
            Some(LogFile {
                path: p.clone(),
                kind,
                thread,
                fz,
                layout: Layout {
                    value1: both,
                    offset,
                    issue: issue && matches!(kind, LogKind::Clat | LogKind::Slat),
                },
            })
        })
        .collect();
    v.sort_by_key(|a| (a.thread, a.kind));
    v
}

// ---- the model as plain values

fn lat_value(l: &Lat) -> Value {
    json!({
        "min": l.min,
        "max": l.max,
        "mean": l.mean,
        "stddev": l.stddev,
        "n": l.n,
        "percentiles": l.percentiles,
        "bins": l.bins,
    })
}

fn samples_value(s: &Samples) -> Value {
    json!({"min": s.min, "max": s.max, "mean": s.mean, "stddev": s.stddev, "n": s.n})
}

fn dir_value(d: &DirResult) -> Value {
    json!({
        "name": d.ddir.name(),
        "io_bytes": d.io_bytes,
        "bw_bytes": d.bw_bytes,
        "iops": d.iops,
        "runtime_ms": d.runtime_ms,
        "total_ios": d.total_ios,
        "slat": lat_value(&d.slat),
        "clat": lat_value(&d.clat),
        "lat": lat_value(&d.lat),
        "sched_lat": d.sched_lat.as_ref().map(lat_value),
        "bw_samples": samples_value(&d.bw_samples),
        "iops_samples": samples_value(&d.iops_samples),
    })
}

fn job_value(j: &JobResult) -> Value {
    json!({
        "name": j.name,
        "groupid": j.groupid,
        "error": j.error,
        "options": j.options,
        "directions": j.dirs.iter().map(dir_value).collect::<Vec<_>>(),
        "sync": j.sync.as_ref().map(|s| json!({"total_ios": s.total_ios, "lat": lat_value(&s.lat)})),
        "job_runtime_ms": j.job_runtime_ms,
        "usr_cpu": j.usr_cpu,
        "sys_cpu": j.sys_cpu,
        "ctx": j.ctx,
        "majf": j.majf,
        "minf": j.minf,
        "ops": j.ops.iter().map(|o| json!({
            "name": o.name,
            "count": o.count,
            "ops_per_s": o.ops_per_s,
            "phase_ops_per_s": o.phase_ops_per_s,
            "mean_ns": o.mean_ns,
            "p50_ns": o.p50_ns,
            "p99_ns": o.p99_ns,
            "p999_ns": o.p999_ns,
        })).collect::<Vec<_>>(),
    })
}

fn run_value(r: &RunResult) -> Value {
    json!({
        "producer": r.producer,
        "time": r.time,
        "global_options": r.global_options,
        "jobs": r.jobs.iter().map(job_value).collect::<Vec<_>>(),
        "disks": r.disks.iter().map(|d| json!({
            "name": d.name,
            "read_ios": d.read_ios,
            "write_ios": d.write_ios,
            "read_merges": d.read_merges,
            "write_merges": d.write_merges,
            "read_ticks": d.read_ticks,
            "write_ticks": d.write_ticks,
            "in_queue": d.in_queue,
            "util": d.util,
        })).collect::<Vec<_>>(),
        "warnings": r.warnings,
    })
}

/// A JSON value as Python objects (objects keep their order).
fn to_py<'py>(py: Python<'py>, v: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => pyo3::types::PyBool::new(py, *b).to_owned().into_any(),
        Value::Number(n) => {
            if let Some(u) = n.as_u64() {
                u.into_pyobject(py)?.into_any()
            } else if let Some(i) = n.as_i64() {
                i.into_pyobject(py)?.into_any()
            } else {
                n.as_f64().unwrap_or(f64::NAN).into_pyobject(py)?.into_any()
            }
        }
        Value::String(s) => PyString::new(py, s).into_any(),
        Value::Array(a) => {
            let l = PyList::empty(py);
            for x in a {
                l.append(to_py(py, x)?)?;
            }
            l.into_any()
        }
        Value::Object(o) => {
            let d = PyDict::new(py);
            for (k, x) in o {
                d.set_item(k, to_py(py, x)?)?;
            }
            d.into_any()
        }
    })
}

/// The result as Python: the model's values, each job's `logs` added.
fn result_to_py<'py>(
    py: Python<'py>,
    r: &RunResult,
    logs: Vec<Vec<LogFile>>,
    warnings: &mut Vec<String>,
) -> PyResult<Bound<'py, PyDict>> {
    let d = to_py(py, &run_value(r))?.cast_into::<PyDict>()?;
    let jobs = d.get_item("jobs")?.expect("jobs").cast_into::<PyList>()?;
    for (j, files) in jobs.iter().zip(logs) {
        j.set_item("logs", logs_to_py(py, &files, warnings)?)?;
    }
    Ok(d)
}

/// Run a job: `job` is a job file's path, or its text with `is_text`; `options` are fio
/// options (name, value or `None` for a bare flag) that every job section gets after its
/// own lines; `args` are command-line switches (`--compat=3.33`, `--readonly`, ...);
/// `logs` reads the log files the jobs wrote. Returns a dict: `result` (the model),
/// `json` (the json+ document flexio prints), `code` (flexio's exit status), `failed`
/// (the failed jobs' messages), `warnings`.
#[pyfunction]
#[pyo3(signature = (job, is_text, options, args, logs=true))]
fn run<'py>(
    py: Python<'py>,
    job: Option<String>,
    is_text: bool,
    options: Vec<(String, Option<String>)>,
    args: Vec<String>,
    logs: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let (prepared, mut warnings) = py
        .detach(|| prepare(job.as_deref(), is_text, &options, &args))
        .map_err(JobError::new_err)?;
    let plans: Vec<PlanThread> = prepared.plans().iter().map(PlanThread::of).collect();
    let out = run_released(py, prepared)?;
    let Some(report) = out.report.as_ref() else {
        return Err(RunError::new_err(format!(
            "the run did not start (exit status {})",
            out.code
        )));
    };
    let mut text = flexio_output::json::report(report, true, flexio_run::VERSION);
    if let Some(x) = &out.extras {
        text = x.decorate(text, true, false);
    }
    let label = match (&job, is_text) {
        (Some(p), false) => p.clone(),
        _ => JOB_TEXT.to_string(),
    };
    let parsed = input::parse(&text, Path::new(&label))
        .map_err(|e| RunError::new_err(format!("flexio's own JSON could not be read: {e}")))?;
    let per_job: Vec<Vec<LogFile>> = if logs {
        match threads_per_job(&plans, &out.results).filter(|u| u.len() == parsed.jobs.len()) {
            Some(units) => units
                .iter()
                .map(|ts| {
                    ts.iter()
                        .flat_map(|&i| plans[i].written().cloned())
                        .collect()
                })
                .collect(),
            // Matched by name where the threads cannot be told apart.
            None => parsed
                .jobs
                .iter()
                .map(|j| {
                    plans
                        .iter()
                        .filter(|t| t.name == j.name)
                        .flat_map(|t| t.written().cloned())
                        .collect()
                })
                .collect(),
        }
    } else {
        parsed.jobs.iter().map(|_| Vec::new()).collect()
    };
    let failed: Vec<String> = report
        .jobs
        .iter()
        .filter(|j| j.error != 0)
        .map(|j| format!("job '{}': {} (error {})", j.name, j.verror, j.error))
        .collect();
    let result = result_to_py(py, &parsed, per_job, &mut warnings)?;
    let d = PyDict::new(py);
    d.set_item("result", result)?;
    d.set_item("json", text)?;
    d.set_item("code", out.code)?;
    d.set_item("failed", failed)?;
    d.set_item("warnings", warnings)?;
    Ok(d)
}

/// Read a result file (fio's or flexio's JSON / json+; notes before it and several
/// documents allowed, the last one counts) and, with `logs`, the log files beside it.
/// Returns a dict: `result`, `json` (the file's text), `warnings`.
#[pyfunction]
#[pyo3(signature = (path, logs=true))]
fn load<'py>(py: Python<'py>, path: PathBuf, logs: bool) -> PyResult<Bound<'py, PyDict>> {
    let bytes = std::fs::read(&path).map_err(|e| {
        let msg = format!("cannot read {}: {e}", path.display());
        if e.kind() == std::io::ErrorKind::NotFound {
            PyFileNotFoundError::new_err(msg)
        } else {
            pyo3::exceptions::PyOSError::new_err(msg)
        }
    })?;
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let mut run = py
        .detach(|| {
            let mut r = input::parse(&text, &path)?;
            if logs {
                flexio_analysis::logs::attach(&mut r);
            }
            Ok::<_, input::InputError>(r)
        })
        .map_err(|e| ResultError::new_err(format!("{}: {e}", path.display())))?;
    let fz = flexio_run::logz::Layout::of_producer(&run.producer);
    let per_job: Vec<Vec<LogFile>> = run.jobs.iter().map(|j| found_logs(j, fz)).collect();
    let mut warnings = std::mem::take(&mut run.warnings);
    let result = result_to_py(py, &run, per_job, &mut warnings)?;
    let d = PyDict::new(py);
    d.set_item("result", result)?;
    d.set_item("json", text)?;
    d.set_item("warnings", warnings)?;
    Ok(d)
}

/// One side's results: `("path", PATH, "")` read from a file (with its logs when `logs`),
/// or `("text", JSON, LABEL)` a result's JSON text.
fn side(items: &[(String, String, String)], logs: bool) -> Result<Vec<RunResult>, String> {
    let mut runs = Vec::new();
    for (kind, v, label) in items {
        let r = if kind == "path" {
            let p = Path::new(v);
            if logs {
                input::read_with_logs(p)
            } else {
                input::read(p)
            }
        } else {
            input::parse(v, Path::new(label))
                .map_err(|e| input::InputError(format!("{label}: {e}")))
        };
        runs.push(r.map_err(|e| e.to_string())?);
    }
    Ok(runs)
}

/// `flexio compare` of results A and B (one or more each: several are trials). Returns
/// `(comparison, text)`: the comparison as `flexio compare --output-format=json` writes
/// it, and as its text table.
#[pyfunction]
#[pyo3(signature = (a, b, alpha=0.05, min_effect=None, resamples=2000, seed=1, logs=true))]
#[allow(clippy::too_many_arguments)]
fn compare_results<'py>(
    py: Python<'py>,
    a: Vec<(String, String, String)>,
    b: Vec<(String, String, String)>,
    alpha: f64,
    min_effect: Option<f64>,
    resamples: usize,
    seed: u64,
    logs: bool,
) -> PyResult<(Bound<'py, PyAny>, String)> {
    if !(alpha > 0.0 && alpha < 1.0) {
        return Err(PyValueError::new_err("alpha must be between 0 and 1"));
    }
    if a.is_empty() || b.is_empty() {
        return Err(PyValueError::new_err("a side has no result"));
    }
    let o = CompareOptions {
        alpha,
        min_effect_pct: min_effect,
        reps: resamples.clamp(100, 1_000_000),
        seed,
    };
    let (v, text) = py
        .detach(|| {
            let (ra, rb) = (side(&a, logs)?, side(&b, logs)?);
            let c = compare::compare(&ra, &rb, &o);
            Ok::<_, String>((compare_out::to_json(&c), compare_out::text(&c)))
        })
        .map_err(ResultError::new_err)?;
    Ok((to_py(py, &v)?, text))
}

#[pymodule]
fn _flexio(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(load, m)?)?;
    m.add_function(wrap_pyfunction!(compare_results, m)?)?;
    m.add("JobError", m.py().get_type::<JobError>())?;
    m.add("RunError", m.py().get_type::<RunError>())?;
    m.add("ResultError", m.py().get_type::<ResultError>())?;
    m.add("VERSION", flexio_run::VERSION)?;
    Ok(())
}
