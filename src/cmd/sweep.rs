//! `flexio sweep`: one job over the points of one or more axes (job options, and the
//! block-queue knobs of the job's own devices), repeats interleaved in a seeded shuffled
//! order, every knob restored; per point the figures with their spread, each point against
//! the baseline with `flexio compare`'s statistics, and the best point for `--metric`.
//! The runner (points, order, knobs and their restore journal) is `flexio_run::sweep`.

use super::args::{number, positive, Save};
use flexio_analysis::compare::{self, Metric, Options};
use flexio_analysis::model::{Ddir, RunResult};
use flexio_analysis::stats::{mean, variance};
use flexio_run::session::interrupt;
use flexio_run::sweep::{self, Axis, Device, Knobs, Point};
use flexio_run::{Quiet, VERSION};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::Instant;

/// A job over settings (job options, block-queue knobs), restored, with statistics
///
/// Runs the job at every point of the axes (their cartesian product), each point --repeat
/// times in a shuffled order, and compares every point with the baseline. The job is a job
/// file, or fio's command line after --.
#[derive(clap::Parser, Debug)]
#[command(
    name = "sweep",
    override_usage = "flexio sweep [OPTIONS] JOB.fio
       flexio sweep [OPTIONS] -- FIO-OPTIONS...   (a job given as fio's command line)
       flexio sweep --restore",
    after_help = "Knob values are journaled before they are written and restored at the end, on \
                  a failing job, on SIGINT and SIGTERM; after a crash, `flexio sweep --restore` \
                  (or the next sweep) restores them.\n\nExit status: 0 done, 1 bad arguments or \
                  a failed run, 130 interrupted."
)]
pub struct Args {
    /// The job file
    #[arg(value_name = "JOB.fio", value_hint = clap::ValueHint::FilePath)]
    job: Option<PathBuf>,
    /// The job as fio's command line (after --)
    #[arg(value_name = "FIO-OPTIONS", last = true)]
    fio_args: Vec<String>,
    /// An axis over a job option (bs, iodepth, rw, direct, ...)
    #[arg(long = "opt", value_name = "NAME=V1,V2,...", value_parser = opt_axis)]
    opts: Vec<Axis>,
    /// An axis over a block-queue knob of the job's devices: read_ahead_kb, scheduler,
    /// nr_requests, max_sectors_kb, rq_affinity, nomerges, wbt_lat_usec, or a tunable of the
    /// active scheduler (low_latency, read_expire, ...); on a dm or md device the queue's
    /// knobs are its slaves'; fs_read_ahead_kb: the readahead of the target's file system
    /// (its /sys/class/bdi entry; FUSE and NFS too)
    #[arg(long = "knob", value_name = "NAME=V1,V2,...", value_parser = knob_axis)]
    knobs: Vec<Axis>,
    /// The axes in the order given (--opt and --knob together)
    #[arg(skip)]
    axes: Vec<Axis>,
    /// Runs per point
    #[arg(long, value_name = "N", default_value_t = 3, value_parser = positive::<usize>)]
    repeat: usize,
    /// The shuffle's seed [default: from the clock; printed]
    #[arg(long, value_name = "S", value_parser = number::<u32>)]
    seed: Option<u32>,
    /// The point the others are compared with [default: the point of the current knob
    /// values and the first option values]
    #[arg(long, value_name = "'K=V K=V'")]
    baseline: Option<String>,
    /// bw, iops, mean, p50, p99 or p99.9
    #[arg(long, value_name = "M", default_value = "bw", value_parser = metric_named)]
    metric: Metric,
    /// Drop the page cache before every run (root)
    #[arg(long = "drop-caches")]
    drop_caches: bool,
    /// How long the job's disks must be quiet before their reads are counted, after each run,
    /// in ms, 0 to 10000 (readahead queued behind an IOPS cap belongs to the run; 0: no wait)
    #[arg(long = "settle", value_name = "MS", default_value_t = 300,
          value_parser = clap::value_parser!(u64).range(0..=10_000))]
    settle_ms: u64,
    /// The sweep as JSON (rewritten after every run while it lasts)
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// The sweep's page: the metric, p99 and read amplification over each axis, a heat map
    /// for two axes (as flexio report draws it)
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
    /// Keep every run's json+ result (and device reads) in DIR
    #[arg(long, value_name = "DIR", value_hint = clap::ValueHint::DirPath)]
    keep: Option<PathBuf>,
    /// With --keep DIR: reuse the runs an interrupted sweep finished there (same points and
    /// seed), run the rest
    #[arg(long)]
    resume: bool,
    // --save stores every run's result, one batch.
    #[command(flatten)]
    save: Save,
    /// Put back knob values a killed sweep left set, and exit
    #[arg(long)]
    restore: bool,
}

fn metric_named(s: &str) -> Result<Metric, String> {
    Metric::ALL
        .into_iter()
        .find(|m| m.name().eq_ignore_ascii_case(s))
        .ok_or_else(|| format!("'{s}' is not one of bw, iops, mean, p50, p99, p99.9"))
}

fn opt_axis(v: &str) -> Result<Axis, String> {
    sweep::parse_axis(v, false)
}

fn knob_axis(v: &str) -> Result<Axis, String> {
    sweep::parse_axis(v, true)
}

fn parse_args(args: &[String]) -> Result<Args, clap::Error> {
    super::args::try_parse(args, |mut a: Args, m| {
        let mut axes = super::args::indexed::<Axis>(m, "opts");
        axes.extend(super::args::indexed::<Axis>(m, "knobs"));
        axes.sort_by_key(|(i, _)| *i);
        a.axes = axes.into_iter().map(|(_, x)| x).collect();
        if !a.restore && a.job.is_none() == a.fio_args.is_empty() {
            return Err("give a job file, or fio options after --".into());
        }
        if !a.restore && a.axes.is_empty() {
            return Err("give at least one axis (--opt or --knob)".into());
        }
        a.save.check()?;
        super::args::resume_needs_keep(a.resume, &a.keep, "sweep")?;
        Ok(a)
    })
}

/// The `--keep` folder's record of a sweep: its points and seed, so that `--resume` goes on
/// with the same schedule, and each finished run's json+ result (`run-K.json`, written
/// atomically after the run) with its device reads (`run-K.dev`: requests and bytes).
struct Kept {
    dir: PathBuf,
}

impl Kept {
    fn plan_text(points: &[Point], repeat: usize, seed: u32) -> String {
        let mut t = format!("flexio sweep\nseed {seed}\nrepeat {repeat}\n");
        for p in points {
            t.push_str(&format!("point {}\n", p.label()));
        }
        t
    }

    /// The folder for a new sweep, or (`resume`) the one of an interrupted sweep with these
    /// points; the seed is the kept one when the command gave none.
    fn open(
        dir: &Path,
        resume: bool,
        points: &[Point],
        repeat: usize,
        seed: Option<u32>,
    ) -> Result<(Kept, Option<u32>), String> {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let plan = dir.join("sweep.plan");
        let kept = Kept {
            dir: dir.to_path_buf(),
        };
        if !resume {
            return Ok((kept, seed));
        }
        let text = std::fs::read_to_string(&plan)
            .map_err(|e| format!("--resume: {}: {e}", plan.display()))?;
        let kept_seed: u32 = text
            .lines()
            .find_map(|l| l.strip_prefix("seed "))
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| format!("--resume: {}: no seed", plan.display()))?;
        let seed = seed.unwrap_or(kept_seed);
        if text != Self::plan_text(points, repeat, seed) {
            return Err(format!(
                "--resume: the sweep kept in {} has other points, repeats or seed than this one",
                dir.display()
            ));
        }
        Ok((kept, Some(seed)))
    }

    fn write_plan(&self, points: &[Point], repeat: usize, seed: u32) -> Result<(), String> {
        let p = self.dir.join("sweep.plan");
        flexio_run::notes::write_atomic(&p, Self::plan_text(points, repeat, seed).as_bytes())
            .map_err(|e| format!("cannot write {}: {e}", p.display()))
    }

    fn paths(&self, k: usize) -> (PathBuf, PathBuf) {
        (
            self.dir.join(format!("run-{}.json", k + 1)),
            self.dir.join(format!("run-{}.dev", k + 1)),
        )
    }

    /// Run `k` as an earlier sweep left it, if it finished.
    fn load(&self, k: usize, p: &Point) -> Result<Option<(RunResult, Figures, String)>, String> {
        let (json, dev) = self.paths(k);
        let Ok(text) = std::fs::read_to_string(&json) else {
            return Ok(None);
        };
        let r = flexio_analysis::input::parse(&text, Path::new(&p.label()))
            .map_err(|e| format!("{}: {}", json.display(), e.0))?;
        let reads = std::fs::read_to_string(&dev).ok().and_then(|t| {
            let mut it = t.split_whitespace().map(|v| v.parse::<u64>().ok());
            Some((it.next()??, it.next()??))
        });
        let f = figures(&r, reads);
        Ok(Some((r, f, text)))
    }

    fn save(&self, k: usize, text: &str, reads: Option<(u64, u64)>) -> Result<(), String> {
        let (json, dev) = self.paths(k);
        if let Some((n, b)) = reads {
            flexio_run::notes::write_atomic(&dev, format!("{n} {b}\n").as_bytes())
                .map_err(|e| format!("cannot write {}: {e}", dev.display()))?;
        }
        flexio_run::notes::write_atomic(&json, text.as_bytes())
            .map_err(|e| format!("cannot write {}: {e}", json.display()))
    }
}

/// One run's figures (the job's first direction that moved data).
#[derive(Clone, Debug, Default)]
struct Figures {
    bw_mib: f64,
    iops: f64,
    clat_mean_us: f64,
    p50_us: f64,
    p99_us: f64,
    p999_us: f64,
    cpu_pct: f64,
    /// Bytes the devices read per byte the job read (None without reads).
    read_amp: Option<f64>,
    device_reads: Option<u64>,
    device_read_bytes: u64,
}

fn figures(r: &RunResult, dev_reads: Option<(u64, u64)>) -> Figures {
    let mut f = Figures::default();
    let Some(j) = r.jobs.first() else { return f };
    let d = j.dirs.iter().find(|d| d.io_bytes > 0).or(j.dirs.first());
    if let Some(d) = d {
        let (_, lat) = d.response();
        let us = |p: f64| lat.percentile(p).map_or(f64::NAN, |v| v as f64 / 1e3);
        f.bw_mib = d.bw_bytes / 1048576.0;
        f.iops = d.iops;
        f.clat_mean_us = lat.mean / 1e3;
        f.p50_us = us(50.0);
        f.p99_us = us(99.0);
        f.p999_us = us(99.9);
    }
    f.cpu_pct = j.usr_cpu + j.sys_cpu;
    let job_read: u64 = r
        .jobs
        .iter()
        .flat_map(|j| j.dirs.iter().filter(|d| d.ddir == Ddir::Read))
        .map(|d| d.io_bytes)
        .sum();
    // No disk under the job (tmpfs, FUSE): no device figures, not zeros.
    if let Some((n, bytes)) = dev_reads {
        f.device_reads = Some(n);
        f.device_read_bytes = bytes;
        f.read_amp = (job_read > 0).then(|| bytes as f64 / job_read as f64);
    }
    f
}

struct Job {
    text: Option<String>,
    args: Vec<String>,
}

impl Job {
    fn prepare(&self, opts: &[(String, String)]) -> Result<flexio_run::Prepared, String> {
        match &self.text {
            Some(t) => flexio_run::prepare_job_text(
                &sweep::with_options(t, opts),
                &["--output-format=json+"],
            ),
            None => {
                let mut a = vec!["--output-format=json+".to_string()];
                a.extend(self.args.iter().cloned());
                a.extend(opts.iter().map(|(k, v)| format!("--{k}={v}")));
                flexio_run::prepare(&a, &flexio_run::session::read_file)
            }
        }
    }
}

#[cfg(target_os = "rtems")]
fn drop_caches() -> Result<(), String> {
    Err("--drop-caches is not supported by flexio on RTEMS (no page cache to drop)".into())
}

#[cfg(not(target_os = "rtems"))]
fn drop_caches() -> Result<(), String> {
    // Dirty pages are not dropped: write them back first.
    flexio_engine::os::fs::sync();
    std::fs::write("/proc/sys/vm/drop_caches", "3")
        .map_err(|e| format!("--drop-caches: /proc/sys/vm/drop_caches: {e} (needs root)"))
}

pub fn run(args: &[String]) -> i32 {
    let a = match super::args::report_error(parse_args(args), 1) {
        Ok(a) => a,
        Err(code) => return code,
    };
    // What a killed sweep left set comes back first.
    match sweep::restore_pending() {
        Ok(lines) => {
            for l in lines {
                eprintln!("flexio sweep: {l} (left set by an earlier sweep)");
            }
        }
        Err(e) => {
            eprintln!("flexio sweep: {e}");
            return 1;
        }
    }
    if a.restore {
        return 0;
    }
    match sweep_run(&a) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("flexio sweep: {e}");
            1
        }
    }
}

fn sweep_run(a: &Args) -> Result<i32, String> {
    // SIGINT and SIGTERM set the interrupt flag from here on (not only once a run starts),
    // so that no signal ends the sweep before its knobs are restored.
    let _ = interrupt();
    let job = match &a.job {
        Some(p) => Job {
            text: Some(std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()))?),
            args: Vec::new(),
        },
        None => Job {
            text: None,
            args: a.fio_args.clone(),
        },
    };
    let points = sweep::cartesian(&a.axes);
    // The job's own targets: the knobs are set on their devices only.
    let first = points[0]
        .values
        .iter()
        .filter(|(k, _)| !a.axes.iter().any(|x| x.knob && &x.name == k))
        .cloned()
        .collect::<Vec<_>>();
    let plan = job.prepare(&first)?;
    // Engines without a disk (null, net, ...) have no device under their "files".
    let targets: Vec<PathBuf> = plan
        .plans()
        .iter()
        .filter(|t| !t.engine.caps.diskless)
        .flat_map(|t| t.files.iter().map(|f| f.path.clone()))
        .collect();
    let knob_axes: Vec<&Axis> = a.axes.iter().filter(|x| x.knob).collect();
    let knob_names: Vec<&str> = knob_axes.iter().map(|x| x.name.as_str()).collect();
    let devs = if knob_axes.is_empty() {
        sweep::devices_of(&targets, &[]).unwrap_or_default()
    } else {
        sweep::devices_of(&targets, &knob_names)?
    };
    // Current knob values, for the default baseline and the report; which device each
    // knob changes.
    let mut current: Vec<(String, String)> = Vec::new();
    let mut knob_devices: Vec<(String, Vec<String>)> = Vec::new();
    for x in &knob_axes {
        let mut on = Vec::new();
        for d in &devs {
            for (dev, file) in sweep::knob_files(d, &x.name)? {
                current.push((x.name.clone(), sweep::read_knob(&file)?));
                on.push(dev);
            }
        }
        eprintln!("flexio sweep: {} is set on {}", x.name, on.join(", "));
        knob_devices.push((x.name.clone(), on));
    }
    let baseline = pick_baseline(&points, &a.axes, a.baseline.as_deref(), &current)?;
    let (kept, kept_seed) = match &a.keep {
        Some(d) => {
            let (k, s) = Kept::open(d, a.resume, &points, a.repeat, a.seed)?;
            (Some(k), s)
        }
        None => (None, a.seed),
    };
    let seed = kept_seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos() ^ d.as_secs() as u32)
            .unwrap_or(1)
    });
    let order = sweep::schedule(points.len(), a.repeat, seed);
    if let Some(k) = &kept {
        k.write_plan(&points, a.repeat, seed)?;
    }
    eprintln!(
        "flexio sweep: {} points x {} repeats = {} runs, shuffled with --seed {seed}; devices: {}",
        points.len(),
        a.repeat,
        order.len(),
        if devs.is_empty() {
            "none".to_string()
        } else {
            devs.iter()
                .map(|d| d.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        }
    );
    let mut knobs = Knobs::new(sweep::journal_path());
    let mut runs: Vec<Vec<(RunResult, Figures)>> = vec![Vec::new(); points.len()];
    let mut to_save = Vec::new();
    let started = Instant::now();
    let mut failure = None;
    // Whether the disks were found idle after the last run (then the next needs no wait).
    let mut idle = false;
    for (k, &pi) in order.iter().enumerate() {
        let p = &points[pi];
        let left = if k == 0 {
            String::new()
        } else {
            let per = started.elapsed().as_secs_f64() / k as f64;
            format!(", about {:.0} s left", per * (order.len() - k) as f64)
        };
        eprintln!(
            "flexio sweep: run {}/{}: {}{left}",
            k + 1,
            order.len(),
            p.label()
        );
        let earlier = match (&kept, a.resume) {
            (Some(kd), true) => kd.load(k, p)?,
            _ => None,
        };
        let done = match earlier {
            Some(x) => {
                eprintln!("flexio sweep: run {}: finished before (--resume)", k + 1);
                Ok(x)
            }
            None => {
                one_run(a, &job, p, &devs, &mut knobs, &mut idle).and_then(|(r, f, text, reads)| {
                    if let Some(kd) = &kept {
                        kd.save(k, &text, reads)?;
                    }
                    Ok((r, f, text))
                })
            }
        };
        match done {
            Ok((r, f, text)) => {
                if a.save.label().is_some() {
                    to_save.push((format!("flexio sweep: {}", p.label()), text));
                }
                runs[pi].push((r, f))
            }
            Err(e) => {
                failure = Some(e);
                break;
            }
        }
        // The sweep so far, after every run: an interrupted sweep leaves what it measured.
        if let Some(path) = &a.json {
            let mut doc = summarise(a, &points, baseline, seed, &runs, &knob_devices);
            doc["flexio_sweep"]["complete"] = json!(false);
            doc["flexio_sweep"]["finished_runs"] = json!(k + 1);
            let text = serde_json::to_string_pretty(&doc).unwrap_or_default() + "\n";
            flexio_run::notes::write_atomic(path, text.as_bytes())
                .map_err(|e| format!("{}: {e}", path.display()))?;
        }
        if interrupt().0.load(Ordering::Relaxed) {
            failure = Some("interrupted".into());
            break;
        }
    }
    // Knobs come back whatever happened.
    let restored = knobs.restore();
    for l in restored.as_ref().map(|v| v.as_slice()).unwrap_or(&[]) {
        eprintln!("flexio sweep: {l}");
    }
    if let Err(e) = &restored {
        eprintln!("flexio sweep: {e}");
    }
    if let Some(e) = failure {
        let code = if e == "interrupted" { 130 } else { 1 };
        eprintln!("flexio sweep: stopped: {e}");
        return Ok(code);
    }
    let mut doc = summarise(a, &points, baseline, seed, &runs, &knob_devices);
    doc["flexio_sweep"]["complete"] = json!(true);
    cmd_out!("{}", text_table(&doc));
    if let Some(p) = &a.json {
        let text = serde_json::to_string_pretty(&doc).unwrap_or_default() + "\n";
        flexio_run::notes::write_atomic(p, text.as_bytes())
            .map_err(|e| format!("{}: {e}", p.display()))?;
    }
    if let Some(p) = &a.html {
        let page = flexio_analysis::sweep::from_value(&doc, p)
            .map_err(|e| e.0)
            .map(|sw| {
                flexio_analysis::report::render_with(
                    &[],
                    &[],
                    &[sw],
                    None,
                    &flexio_analysis::report::ReportOptions {
                        title: "flexio sweep".into(),
                        ..Default::default()
                    },
                )
            });
        page.and_then(|page| super::report::write_page(p, &page))
            .map_err(|e| format!("{}: {e}", p.display()))?;
    }
    let mut code = i32::from(restored.is_err());
    if let Some(label) = &a.save.label() {
        match super::save_batch(a.save.store.as_deref(), "sweep", label.as_deref(), to_save) {
            Ok(m) => eprintln!("flexio sweep: {m}"),
            Err(e) => {
                eprintln!("flexio sweep: the runs were not saved: {e}");
                code = 1;
            }
        }
    }
    Ok(code)
}

/// A finished run: its result, figures and json+ text, and the devices' reads during it
/// (requests, bytes) where they were measured.
type Done = (RunResult, Figures, String, Option<(u64, u64)>);

/// How long a run's device figures wait for the devices to go idle.
const SETTLE: std::time::Duration = std::time::Duration::from_secs(30);

/// Set the point's knobs, drop caches if asked, run the job in this process.
fn one_run(
    a: &Args,
    job: &Job,
    p: &Point,
    devs: &[Device],
    knobs: &mut Knobs,
    idle: &mut bool,
) -> Result<Done, String> {
    let mut opts = Vec::new();
    // The scheduler first: its tunables exist only once it is active.
    let mut kv: Vec<&(String, String)> = p.values.iter().collect();
    kv.sort_by_key(|(k, _)| k != "scheduler");
    for (k, v) in kv {
        if a.axes.iter().any(|x| x.knob && &x.name == k) {
            for d in devs {
                knobs.set(d, k, v)?;
            }
        } else {
            opts.push((k.clone(), v.clone()));
        }
    }
    // The device's reads are the run's: what was queued before the first run (or a run
    // that did not settle) is done before the caches are dropped and it starts, and what
    // it queued itself (readahead behind a cap) is counted after it ends.
    let unsettled = |when: &str| {
        eprintln!(
            "flexio sweep: {}: the devices were still busy {when} after {} s; device figures may be off",
            p.label(),
            SETTLE.as_secs()
        )
    };
    if !*idle && !sweep::settle(devs, a.settle_ms, SETTLE) {
        unsettled("before the run");
    }
    if a.drop_caches {
        drop_caches()?;
    }
    let prepared = job.prepare(&opts)?;
    let before = sweep::device_reads(devs);
    let (term, sigs) = interrupt().clone();
    let out = flexio_run::run_prepared(prepared, &Quiet, term, sigs);
    *idle = sweep::settle(devs, a.settle_ms, SETTLE);
    if !*idle {
        unsettled("after the run");
    }
    let after = sweep::device_reads(devs);
    let rep = out.report.ok_or_else(|| {
        format!(
            "{}: the job did not run (exit status {})",
            p.label(),
            out.code
        )
    })?;
    if out.code != 0 && !interrupt().0.load(Ordering::Relaxed) {
        return Err(format!(
            "{}: the job failed (exit status {})",
            p.label(),
            out.code
        ));
    }
    let text = flexio_output::json::report(&rep, true, VERSION);
    let r = flexio_analysis::input::parse(&text, Path::new(&p.label()))
        .map_err(|e| format!("{}: {}", p.label(), e.0))?;
    let disks = devs.iter().any(|d| !d.bdi);
    let reads = disks.then(|| (after.0 - before.0, after.1 - before.1));
    let f = figures(&r, reads);
    Ok((r, f, text, reads))
}

fn pick_baseline(
    points: &[Point],
    axes: &[Axis],
    asked: Option<&str>,
    current: &[(String, String)],
) -> Result<usize, String> {
    if let Some(s) = asked {
        let want: Vec<(String, String)> = s
            .split_whitespace()
            .filter_map(|kv| kv.split_once('='))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        return points
            .iter()
            .position(|p| want.iter().all(|w| p.values.contains(w)))
            .ok_or_else(|| format!("--baseline '{s}' is none of the points"));
    }
    // The current knob values, the first value of each option axis.
    Ok(points
        .iter()
        .position(|p| {
            p.values
                .iter()
                .all(|(k, v)| match axes.iter().find(|x| &x.name == k) {
                    Some(x) if x.knob => current.iter().any(|(ck, cv)| ck == k && cv == v),
                    Some(x) => x.values.first() == Some(v),
                    None => true,
                })
        })
        .unwrap_or(0))
}

fn spread(v: &[f64]) -> Value {
    let v: Vec<f64> = v.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return Value::Null;
    }
    json!({"mean": mean(&v), "sd": if v.len() > 1 { variance(&v).sqrt() } else { 0.0 }, "n": v.len()})
}

fn summarise(
    a: &Args,
    points: &[Point],
    baseline: usize,
    seed: u32,
    runs: &[Vec<(RunResult, Figures)>],
    knob_devices: &[(String, Vec<String>)],
) -> Value {
    let base: Vec<RunResult> = runs[baseline].iter().map(|r| r.0.clone()).collect();
    let mut out_points = Vec::new();
    let mut best: Option<(usize, f64)> = None;
    for (i, p) in points.iter().enumerate() {
        let figs: Vec<&Figures> = runs[i].iter().map(|r| &r.1).collect();
        let col = |f: &dyn Fn(&Figures) -> f64| figs.iter().map(|x| f(x)).collect::<Vec<_>>();
        let m = col(&|f| metric_value(a.metric, f));
        let mv = mean(&m);
        if mv.is_finite()
            && best.map_or(true, |(_, b)| {
                if a.metric.higher_is_better() {
                    mv > b
                } else {
                    mv < b
                }
            })
        {
            best = Some((i, mv));
        }
        let cmp = if i == baseline {
            Value::Null
        } else {
            let pr: Vec<RunResult> = runs[i].iter().map(|r| r.0.clone()).collect();
            let c = compare::compare(&base, &pr, &Options::default());
            c.dirs
                .first()
                .and_then(|d| d.rows.iter().find(|r| r.metric == a.metric).map(|r| (d, r)))
                .map_or(Value::Null, |(d, r)| {
                    json!({
                        "metric": a.metric.name(),
                        "baseline": r.a, "point": r.b,
                        "diff_pct": r.diff_pct,
                        "ci95_pct": r.ci_pct.map(|(l, h)| json!([l, h])),
                        "test": r.test, "p": r.p,
                        "significant": r.significant,
                        "better": r.significant && r.b_better,
                        "worse": r.significant && !r.b_better,
                        "direction": d.ddir.name(),
                        // A is the baseline, B this point: bimodal or drifting runs, the
                        // tail changes the runs are too few to see.
                        "warnings": d.warnings.iter()
                            .map(|w| w.replacen("A's", "the baseline's", 1).replacen("B's", "this point's", 1))
                            .collect::<Vec<_>>(),
                    })
                })
        };
        out_points.push(json!({
            "label": p.label(),
            "values": p.values.iter().map(|(k, v)| json!({"name": k, "value": v})).collect::<Vec<_>>(),
            "baseline": i == baseline,
            "runs": figs.len(),
            "bw_mib_s": spread(&col(&|f| f.bw_mib)),
            "iops": spread(&col(&|f| f.iops)),
            "lat_mean_us": spread(&col(&|f| f.clat_mean_us)),
            "lat_p50_us": spread(&col(&|f| f.p50_us)),
            "lat_p99_us": spread(&col(&|f| f.p99_us)),
            "lat_p99_9_us": spread(&col(&|f| f.p999_us)),
            "cpu_pct": spread(&col(&|f| f.cpu_pct)),
            "read_amplification": spread(&col(&|f| f.read_amp.unwrap_or(f64::NAN))),
            "device_reads": spread(&col(&|f| f.device_reads.map_or(f64::NAN, |n| n as f64))),
            "device_read_kib_per_request": spread(&col(&|f| match f.device_reads { Some(n) if n > 0 => f.device_read_bytes as f64 / 1024.0 / n as f64, _ => f64::NAN })),
            "vs_baseline": cmp,
        }));
    }
    let best_doc = best.map_or(Value::Null, |(i, v)| {
        let vs = &out_points[i]["vs_baseline"];
        json!({
            "label": points[i].label(),
            "value": v,
            "is_baseline": i == baseline,
            "significantly_better": vs["better"].as_bool().unwrap_or(false),
        })
    });
    json!({
        "flexio_sweep": {
            "version": VERSION,
            "metric": a.metric.name(),
            "repeats": a.repeat,
            "seed": seed,
            "settle_ms": a.settle_ms,
            "axes": a.axes.iter().map(|x| {
                let mut v = json!({"name": x.name, "knob": x.knob, "values": x.values});
                if let Some((_, on)) = knob_devices.iter().find(|(k, _)| *k == x.name) {
                    v["devices"] = json!(on);
                }
                v
            }).collect::<Vec<_>>(),
            "baseline": points[baseline].label(),
            "points": out_points,
            "best": best_doc,
        }
    })
}

fn metric_value(m: Metric, f: &Figures) -> f64 {
    match m {
        Metric::Bw => f.bw_mib,
        Metric::Iops => f.iops,
        Metric::LatMean => f.clat_mean_us,
        Metric::P50 => f.p50_us,
        Metric::P99 => f.p99_us,
        Metric::P999 => f.p999_us,
    }
}

fn text_table(doc: &Value) -> String {
    let s = &doc["flexio_sweep"];
    let pts = s["points"].as_array().cloned().unwrap_or_default();
    let w = pts
        .iter()
        .map(|p| p["label"].as_str().unwrap_or("").len())
        .max()
        .unwrap_or(5)
        .max(5);
    let ms = |v: &Value| match (v["mean"].as_f64(), v["sd"].as_f64()) {
        (Some(m), Some(sd)) => format!("{m:.1}±{sd:.1}"),
        _ => "-".into(),
    };
    let mut t = format!(
        "{:<w$}  {:>14} {:>16} {:>12} {:>12} {:>12} {:>12} {:>9} {:>9} {:>11}   vs baseline ({})\n",
        "point",
        "bw MiB/s",
        "IOPS",
        "lat mean us",
        "p50 us",
        "p99 us",
        "p99.9 us",
        "CPU %",
        "read amp",
        "dev KiB/rq",
        s["metric"].as_str().unwrap_or("")
    );
    for p in &pts {
        let vs = &p["vs_baseline"];
        let cmp = if p["baseline"].as_bool() == Some(true) {
            "baseline".to_string()
        } else if vs.is_null() {
            "-".into()
        } else {
            let ci = vs["ci95_pct"]
                .as_array()
                .map(|c| {
                    format!(
                        " [{:+.1}, {:+.1}]",
                        c[0].as_f64().unwrap_or(f64::NAN),
                        c[1].as_f64().unwrap_or(f64::NAN)
                    )
                })
                .unwrap_or_default();
            let verdict = if vs["better"].as_bool() == Some(true) {
                "better"
            } else if vs["worse"].as_bool() == Some(true) {
                "worse"
            } else {
                "no significant difference"
            };
            format!(
                "{:+.1}%{ci} {} p={:.3}: {verdict}",
                vs["diff_pct"].as_f64().unwrap_or(f64::NAN),
                vs["test"].as_str().unwrap_or(""),
                vs["p"].as_f64().unwrap_or(f64::NAN)
            )
        };
        let amp = match p["read_amplification"]["mean"].as_f64() {
            Some(v) => format!("{v:.2}"),
            None => "-".into(),
        };
        t.push_str(&format!(
            "{:<w$}  {:>14} {:>16} {:>12} {:>12} {:>12} {:>12} {:>9} {:>9} {:>11}   {cmp}\n",
            p["label"].as_str().unwrap_or(""),
            ms(&p["bw_mib_s"]),
            ms(&p["iops"]),
            ms(&p["lat_mean_us"]),
            ms(&p["lat_p50_us"]),
            ms(&p["lat_p99_us"]),
            ms(&p["lat_p99_9_us"]),
            ms(&p["cpu_pct"]),
            amp,
            match p["device_read_kib_per_request"]["mean"].as_f64() {
                Some(v) => format!("{v:.0}"),
                None => "-".into(),
            },
        ));
    }
    // What the comparisons must be read with, each once.
    let mut said: Vec<String> = Vec::new();
    for p in &pts {
        for w in p["vs_baseline"]["warnings"]
            .as_array()
            .into_iter()
            .flatten()
        {
            let w = w.as_str().unwrap_or("");
            let line = if w.starts_with("the baseline's") {
                format!("warning: {w}\n")
            } else {
                format!("warning: {}: {w}\n", p["label"].as_str().unwrap_or(""))
            };
            if !said.contains(&line) {
                t.push_str(&line);
                said.push(line);
            }
        }
    }
    let b = &s["best"];
    if !b.is_null() {
        let verdict = if b["is_baseline"].as_bool() == Some(true) {
            "it is the baseline".to_string()
        } else if b["significantly_better"].as_bool() == Some(true) {
            format!(
                "significantly better than the baseline ({})",
                s["baseline"].as_str().unwrap_or("")
            )
        } else {
            format!(
                "not significantly better than the baseline ({})",
                s["baseline"].as_str().unwrap_or("")
            )
        };
        t.push_str(&format!(
            "best {}: {} ({:.1}); {verdict}\n",
            s["metric"].as_str().unwrap_or(""),
            b["label"].as_str().unwrap_or(""),
            b["value"].as_f64().unwrap_or(f64::NAN)
        ));
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn arguments() {
        let a = parse_args(&s(&[
            "--opt",
            "bs=4k,8k",
            "--knob=read_ahead_kb=128,4096",
            "j.fio",
        ]))
        .unwrap();
        assert_eq!(a.axes.len(), 2);
        assert!(a.axes[1].knob);
        assert_eq!(a.repeat, 3);
        assert!(parse_args(&s(&["j.fio"])).is_err());
        assert!(parse_args(&s(&["--opt", "bs=4k"])).is_err());
        assert!(parse_args(&s(&["--opt", "bs=4k", "--repeat", "0", "j"])).is_err());
        assert!(parse_args(&s(&["--restore"])).unwrap().restore);
        let a = parse_args(&s(&[
            "--opt=rate_iops=1,2",
            "--",
            "--name=x",
            "--ioengine=null",
        ]))
        .unwrap();
        assert_eq!(a.fio_args, ["--name=x", "--ioengine=null"]);
        assert!(parse_args(&s(&["--metric", "p42", "--opt=a=1", "j"])).is_err());
        // --opt and --knob axes keep their order on the command line.
        let a = parse_args(&s(&[
            "--knob=nomerges=0,2",
            "--opt",
            "bs=4k,8k",
            "--knob",
            "nr_requests=4,8",
            "j",
        ]))
        .unwrap();
        let names: Vec<&str> = a.axes.iter().map(|x| x.name.as_str()).collect();
        assert_eq!(names, ["nomerges", "bs", "nr_requests"]);
        assert_eq!((a.settle_ms, a.metric), (300, Metric::Bw));
        for (bad, msg) in [
            (&["--opt=bs=4k", "--settle=20000", "j"][..], "10000"),
            (&["--opt=bs=4k", "j", "k"], "unexpected argument 'k'"),
            (
                &["--opt=bs=4k", "--resume", "j"],
                "--resume needs --keep DIR",
            ),
            (&["--opt=bs=4k", "--store=r.db", "j"], "give --save too"),
            (&["--opt=bs", "j"], "NAME=value"),
        ] {
            let e = parse_args(&s(bad)).unwrap_err().to_string();
            assert!(e.contains(msg), "{bad:?}: {e}");
        }
    }
}
