//! `flexio rt-study TARGET`: the real-time interference study. A foreground job issues a
//! fixed number of requests (default 4096) of one size, random or sequential, dense (back
//! to back) or sparse (a think time between requests), in each I/O priority class asked
//! for, while 0, 1 and 4 (by default) background jobs load the same target. Each case is
//! one run of this flexio (a generated job file, `--output-format=json+`, the foreground's
//! per-I/O latency log); the study prints a table of mean, standard deviation, RMS and
//! percentiles of the response time per case, tests whether the foreground's response time
//! changes with background load and whether the classes differ under load
//! (`flexio_analysis::study`), and writes JSON and an HTML page with the sorted
//! response-time curves (the report's distribution charts) when asked.

use super::args::{alpha, engine_name, number, positive, size, Save};
use super::compare::temp_dir_named;
use super::report::write_page;
use flexio_analysis::logs::LogKind;
use flexio_analysis::model::Ddir;
use flexio_analysis::report::{self, ReportOptions};
use flexio_analysis::study::{self, Case};
use flexio_analysis::RunResult;
use flexio_run::VERSION;
use std::path::{Path, PathBuf};

/// The real-time interference study: foreground latency per I/O class under background load
///
/// A foreground job issues --requests requests in each I/O priority class of --classes while
/// each number of background jobs in --bg loads the same TARGET (a file, created and filled
/// when missing or short, or a block device, only read unless --rw=write). Prints per case
/// the foreground's response times (mean, stdev, RMS, percentiles) and tests: does the
/// response time change with background load, and do the classes differ under load
/// (Mann-Whitney U, Holm-adjusted)?
#[derive(clap::Parser, Debug, Clone, PartialEq)]
#[command(
    name = "rt-study",
    after_help = "Exit status: 0 done, 1 a case failed, 2 bad arguments."
)]
pub struct Args {
    /// A file (created and filled when missing or short) or a block device
    #[arg(value_name = "TARGET", value_parser = target, value_hint = clap::ValueHint::FilePath)]
    pub target: PathBuf,
    /// Requests per case
    #[arg(long, value_name = "N", default_value_t = 4096, value_parser = positive::<u64>,
          help_heading = "Foreground")]
    pub requests: u64,
    /// Request size
    #[arg(long, value_name = "SIZE", default_value = "4k", value_parser = size, allow_hyphen_values = true,
          help_heading = "Foreground")]
    pub bs: u64,
    /// random or sequential
    #[arg(long = "pattern", value_name = "PATTERN", default_value = "random",
          value_parser = pattern, action = clap::ArgAction::Set, help_heading = "Foreground")]
    pub random: bool,
    /// read or write
    #[arg(long = "rw", value_name = "DIR", default_value = "read", value_parser = direction, action = clap::ArgAction::Set,
          help_heading = "Foreground")]
    pub write: bool,
    /// Sparse requests: think time between them in µs (0: dense)
    #[arg(long = "think", value_name = "USEC", default_value_t = 0, value_parser = number::<u64>,
          help_heading = "Foreground")]
    pub think_us: u64,
    /// I/O priority classes: rt, be, idle
    #[arg(long, value_name = "LIST", default_value = "rt,be", value_parser = classes,
          help_heading = "Foreground")]
    pub classes: ::std::vec::Vec<String>,
    /// Priority level within the class, 0-7
    #[arg(long, value_name = "N", default_value_t = 4, value_parser = prio,
          help_heading = "Foreground")]
    pub prio: u32,
    /// Foreground ioengine
    #[arg(long, value_name = "NAME", default_value = "psync", value_parser = engine_name,
          help_heading = "Foreground")]
    pub engine: String,
    /// Background job counts
    #[arg(long, value_name = "LIST", default_value = "0,1,4", value_parser = bg_counts,
          help_heading = "Background")]
    pub bg: ::std::vec::Vec<u32>,
    /// Background request size
    #[arg(long = "bg-bs", value_name = "SIZE", default_value = "1m", value_parser = size, allow_hyphen_values = true,
          help_heading = "Background")]
    pub bg_bs: u64,
    /// Background direction (read: sequential streams)
    #[arg(long = "bg-rw", value_name = "RW", default_value = "read",
          value_parser = ["read", "write", "randread", "randwrite"], help_heading = "Background")]
    pub bg_rw: String,
    /// Background ioengine [default: libaio when built in, else psync]
    #[arg(long = "bg-engine", value_name = "NAME", value_parser = engine_name,
          help_heading = "Background")]
    pub bg_engine: Option<String>,
    /// Background iodepth
    #[arg(long = "bg-depth", value_name = "N", default_value_t = 16,
          value_parser = positive::<u32>, help_heading = "Background")]
    pub bg_depth: u32,
    /// Also N CPU-burning jobs (ioengine=cpuio) in every loaded case
    #[arg(long, value_name = "N", default_value_t = 0, value_parser = number::<u32>,
          help_heading = "Background")]
    pub cpuio: u32,
    /// Background head start before the foreground, in ms
    #[arg(long = "warmup", value_name = "MS", default_value_t = 1000,
          value_parser = number::<u64>, help_heading = "Background")]
    pub warmup_ms: u64,
    /// Region used [default: a block device's size; 1g for a new file]
    #[arg(long, value_name = "SIZE", value_parser = size, allow_hyphen_values = true, help_heading = "Target and run")]
    pub size: Option<u64>,
    /// O_DIRECT: 0 or 1 (tmpfs needs 0)
    #[arg(long, value_name = "0|1", default_value = "1", value_parser = zero_one, action = clap::ArgAction::Set,
          help_heading = "Target and run")]
    pub direct: bool,
    /// Upper bound of one case
    #[arg(long = "max-case-seconds", value_name = "S", default_value_t = 600,
          value_parser = positive::<u64>, help_heading = "Target and run")]
    pub max_case_s: u64,
    /// Runs per case, interleaved round by round; the tests then also compare the runs'
    /// medians (drift between runs)
    #[arg(long, value_name = "R", default_value_t = 3,
          value_parser = clap::value_parser!(u32).range(1..=100), help_heading = "Target and run")]
    pub repeat: u32,
    /// Skip the unrecorded run of the first case made before the study
    #[arg(long = "no-warmup-run", action = clap::ArgAction::SetFalse,
          help_heading = "Target and run")]
    pub warmup_run: bool,
    /// Significance level
    #[arg(long, value_name = "A", default_value_t = 0.05, value_parser = alpha,
          help_heading = "Target and run")]
    pub alpha: f64,
    /// The study as JSON
    #[arg(long, value_name = "FILE", help_heading = "Output")]
    pub json: Option<PathBuf>,
    /// An HTML page: table, tests and the response-time curves
    #[arg(long, value_name = "FILE", help_heading = "Output")]
    pub html: Option<PathBuf>,
    /// Keep every case's job file, json+ result and logs in DIR
    #[arg(long, value_name = "DIR", value_hint = clap::ValueHint::DirPath,
          help_heading = "Output")]
    pub keep: Option<PathBuf>,
    /// With --keep DIR: reuse the runs an interrupted study finished there (same settings),
    /// run the rest
    #[arg(long, help_heading = "Output")]
    pub resume: bool,
    // --save stores every case's result (one batch).
    #[command(flatten, next_help_heading = "Output")]
    pub save: Save,
}

fn target(v: &str) -> Result<PathBuf, String> {
    if v.contains('\n') || v.is_empty() {
        return Err("not a usable path".into());
    }
    Ok(PathBuf::from(v))
}

fn pattern(v: &str) -> Result<bool, String> {
    match v {
        "random" | "rand" => Ok(true),
        "sequential" | "seq" => Ok(false),
        o => Err(format!("'{o}' is not random or sequential")),
    }
}

fn direction(v: &str) -> Result<bool, String> {
    match v {
        "read" => Ok(false),
        "write" => Ok(true),
        o => Err(format!("'{o}' is not read or write")),
    }
}

fn zero_one(v: &str) -> Result<bool, String> {
    match v {
        "1" => Ok(true),
        "0" => Ok(false),
        o => Err(format!("'{o}' is not 0 or 1")),
    }
}

fn prio(v: &str) -> Result<u32, String> {
    match number(v)? {
        n @ 0..=7 => Ok(n),
        _ => Err("the level is 0 (highest) to 7".into()),
    }
}

/// Classes, each once, in the order given.
fn classes(v: &str) -> Result<Vec<String>, String> {
    let mut out: Vec<String> = Vec::new();
    for c in v.split(',') {
        if !matches!(c, "rt" | "be" | "idle") {
            return Err(format!("'{c}' is not rt, be or idle"));
        }
        if !out.iter().any(|x| x == c) {
            out.push(c.to_string());
        }
    }
    Ok(out)
}

/// Background job counts, each once, in the order given.
fn bg_counts(v: &str) -> Result<Vec<u32>, String> {
    let mut out = Vec::new();
    for n in v.split(',') {
        let n: u32 = number(n)?;
        if n > 256 {
            return Err(format!("{n} background jobs is more than 256"));
        }
        if !out.contains(&n) {
            out.push(n);
        }
    }
    Ok(out)
}

/// `flexio rt-study`'s arguments.
pub fn parse_args(args: &[String]) -> Result<Args, clap::Error> {
    super::args::try_parse(args, |a: Args, _| {
        a.save.check()?;
        super::args::resume_needs_keep(a.resume, &a.keep, "study")?;
        Ok(a)
    })
}

/// Whether the target is a block device.
fn is_block(p: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    std::fs::metadata(p)
        .map(|m| m.file_type().is_block_device())
        .unwrap_or(false)
}

/// A path as a job-file value (fio's `:` separates file names; `\:` keeps one).
fn job_path(p: &Path) -> String {
    p.to_string_lossy().replace(':', "\\:")
}

const FG: &str = "foreground";

/// The job file of one case.
fn case_job(
    a: &Args,
    class: &str,
    bg: u32,
    bg_engine: &str,
    region: Option<u64>,
    dir: &Path,
) -> String {
    let mut j = String::new();
    j.push_str("[global]\n");
    j.push_str(&format!("filename={}\n", job_path(&a.target)));
    j.push_str(&format!("direct={}\n", a.direct as u8));
    if let Some(r) = region {
        j.push_str(&format!("size={r}\n"));
    }
    j.push_str(&format!("\n[{FG}]\n"));
    let rw = match (a.random, a.write) {
        (true, false) => "randread",
        (true, true) => "randwrite",
        (false, false) => "read",
        (false, true) => "write",
    };
    j.push_str(&format!("rw={rw}\nbs={}\nioengine={}\n", a.bs, a.engine));
    let pc = match class {
        "rt" => 1,
        "idle" => 3,
        _ => 2,
    };
    j.push_str(&format!("prioclass={pc}\nprio={}\n", a.prio));
    j.push_str(&format!("number_ios={}\n", a.requests));
    if a.think_us > 0 {
        j.push_str(&format!("thinktime={}us\n", a.think_us));
    }
    if bg > 0 {
        j.push_str(&format!("startdelay={}ms\n", a.warmup_ms));
    }
    // The foreground ends the case: the background stops with it.
    j.push_str("exitall=1\n");
    j.push_str(&format!(
        "write_lat_log={}\nlog_avg_msec=0\n",
        job_path(&dir.join(FG))
    ));
    if bg > 0 {
        let share = 100.0 / bg as f64;
        j.push_str(&format!(
            "\n[background]\nrw={}\nbs={}\nioengine={bg_engine}\niodepth={}\nnumjobs={bg}\n\
             size={share:.4}%\noffset_increment={share:.4}%\ntime_based=1\nruntime={}\n",
            a.bg_rw, a.bg_bs, a.bg_depth, a.max_case_s
        ));
        if a.cpuio > 0 {
            j.push_str(&format!(
                "\n[cpu]\nioengine=cpuio\ncpuload=100\nnumjobs={}\ntime_based=1\nruntime={}\n",
                a.cpuio, a.max_case_s
            ));
        }
    }
    j
}

/// Run one generated job in this process (the run engine's in-process seam, as the sweep
/// and the matrix run theirs; nothing depends on the flexio binary file staying in place);
/// its JSON+ result is written to `dir/result.json` beside its logs, and the job file to
/// `dir/case.fio` for the record.
fn run_case(job: &str, dir: &Path) -> Result<PathBuf, String> {
    let jf = dir.join("case.fio");
    std::fs::write(&jf, job).map_err(|e| format!("cannot write {}: {e}", jf.display()))?;
    let rep = flexio_run::inproc::run_text(job, &["--output-format=json+"])?;
    let path = dir.join("result.json");
    let text = flexio_output::json::report(&rep, true, VERSION);
    flexio_run::notes::write_atomic(&path, text.as_bytes())
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(path)
}

/// With `--resume`: the result a run of this case left in `dir` (its result is written
/// atomically after the run, so one that exists is whole), if its job is this one; `None`
/// to run it. A run made with other settings is an error, not silently mixed in.
fn finished(a: &Args, job: &str, dir: &Path) -> Result<Option<PathBuf>, String> {
    let out = dir.join("result.json");
    if !a.resume || !out.is_file() {
        return Ok(None);
    }
    let kept = std::fs::read_to_string(dir.join("case.fio")).unwrap_or_default();
    if kept != job {
        return Err(format!(
            "{}: that run was made with other settings than this study's; resume with the same options, or use another --keep folder",
            dir.display()
        ));
    }
    Ok(Some(out))
}

/// Make a file target hold `size` bytes of data (reads of a hole measure nothing).
fn prepare_file(a: &Args, size: u64, dir: &Path) -> Result<(), String> {
    let have = std::fs::metadata(&a.target).map(|m| m.len()).unwrap_or(0);
    if have >= size {
        return Ok(());
    }
    eprintln!(
        "flexio rt-study: writing {} MiB of data to {}",
        size >> 20,
        a.target.display()
    );
    let job = format!(
        "[fill]\nfilename={}\nrw=write\nbs=1m\nsize={size}\ndirect=0\nend_fsync=1\n",
        job_path(&a.target)
    );
    run_case(&job, dir).map(|_| ())
}

/// The case's figures from its result and the foreground's latency log.
fn case_of(run: &RunResult, class: &str, bg: u32, write: bool) -> Result<Case, String> {
    let fg = run
        .jobs
        .iter()
        .find(|j| j.name == FG)
        .ok_or("the result has no foreground job")?;
    if fg.error != 0 {
        return Err(format!("the foreground job ended with error {}", fg.error));
    }
    let d = if write { Ddir::Write } else { Ddir::Read };
    let log = fg
        .logs
        .get(LogKind::Lat, d)
        .or_else(|| fg.logs.get(LogKind::Clat, d))
        .filter(|l| l.per_io && l.stat.samples > 0)
        .ok_or("the foreground's latency log is missing or empty")?;
    let bw: f64 = run
        .jobs
        .iter()
        .filter(|j| j.name == "background")
        .flat_map(|j| j.dirs.iter())
        .map(|x| x.bw_bytes)
        .sum();
    let s = &log.stat;
    Ok(Case::from_sums(
        class,
        bg,
        s.samples,
        s.sum,
        s.sumsq,
        s.min,
        s.max,
        log.bins(),
        bw,
    ))
}

/// What a study gives: its text, its JSON, the first round's runs (for the page) and,
/// with `--save`, every case's (name, json+ text).
type StudyOut = (
    String,
    serde_json::Value,
    Vec<RunResult>,
    Vec<(String, String)>,
);

fn study(a: &Args) -> Result<StudyOut, String> {
    let block = is_block(&a.target);
    if !block && a.target.exists() && !a.target.is_file() {
        return Err(format!(
            "{}: not a regular file or a block device",
            a.target.display()
        ));
    }
    let tmp;
    let root = match &a.keep {
        Some(d) => {
            std::fs::create_dir_all(d)
                .map_err(|e| format!("cannot create {}: {e}", d.display()))?;
            d.clone()
        }
        None => {
            tmp = temp_dir_named("flexio-rt-study")?;
            tmp.0.clone()
        }
    };
    // A relative target is relative to where flexio was started, not to the case folders.
    let mut a = a.clone();
    if a.target.is_relative() {
        let cwd = std::env::current_dir().map_err(|e| format!("no current directory: {e}"))?;
        a.target = cwd.join(&a.target);
    }
    let region = match (block, a.size) {
        (_, Some(s)) => Some(s),
        (true, None) => None,
        (false, None) => Some(
            std::fs::metadata(&a.target)
                .map(|m| m.len())
                .ok()
                .filter(|l| *l > 0)
                .unwrap_or(1 << 30),
        ),
    };
    if !block && !a.write {
        prepare_file(&a, region.unwrap_or(1 << 30), &root)?;
    }
    let bg_engine = a.bg_engine.clone().unwrap_or_else(|| {
        let built = flexio_engine::registry::ENGINES
            .iter()
            .any(|e| e.name == "libaio");
        if built { "libaio" } else { "psync" }.to_string()
    });
    let sched = flexio_run::diskstats::scheduler_of(&a.target).map(|(_, s)| s);
    if a.warmup_run && !a.resume {
        // The first run after the target was written (or idle) meets colder caches and
        // queues than the rest: one unrecorded run of the first case levels the field.
        let dir = root.join("warm-up");
        std::fs::create_dir_all(&dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        eprint!("flexio rt-study: warm-up run (not recorded) ... ");
        let job = case_job(&a, &a.classes[0], a.bg[0], &bg_engine, region, &dir);
        run_case(&job, &dir).inspect_err(|_| eprintln!("failed"))?;
        eprintln!("done");
    }
    let pattern = if a.random { "random" } else { "sequential" };
    let settings = serde_json::json!({
        "target": a.target.display().to_string(),
        "block_device": block,
        "scheduler": sched,
        "requests": a.requests,
        "bs": a.bs,
        "pattern": pattern,
        "rw": if a.write { "write" } else { "read" },
        "think_us": a.think_us,
        "classes": a.classes,
        "prio": a.prio,
        "engine": a.engine,
        "background_jobs": a.bg,
        "background_bs": a.bg_bs,
        "background_rw": a.bg_rw,
        "background_engine": bg_engine,
        "background_iodepth": a.bg_depth,
        "cpuio_jobs": a.cpuio,
        "warmup_ms": a.warmup_ms,
        "repeat": a.repeat,
        "direct": a.direct,
        "region": region,
        "flexio": env!("CARGO_PKG_VERSION"),
    });
    let mut cases: Vec<Case> = Vec::new();
    let mut done: Vec<String> = Vec::new();
    let mut runs = Vec::new();
    let mut texts = Vec::new();
    let total = a.bg.len() * a.classes.len() * a.repeat as usize;
    let mut k = 0;
    // Round by round, so that drift over the study's time spreads over every case.
    for round in 1..=a.repeat {
        let mut i = 0;
        for &bg in &a.bg {
            for class in &a.classes {
                k += 1;
                let name = if a.repeat > 1 {
                    format!("{class}-bg{bg}-run{round}")
                } else {
                    format!("{class}-bg{bg}")
                };
                let dir = root.join(&name);
                std::fs::create_dir_all(&dir)
                    .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
                eprint!(
                    "flexio rt-study: {k}/{total}: {class}, {bg} background jobs, run {round} ... "
                );
                let t = std::time::Instant::now();
                let job = case_job(&a, class, bg, &bg_engine, region, &dir);
                let out = match finished(&a, &job, &dir).inspect_err(|_| eprintln!("failed"))? {
                    Some(p) => {
                        eprintln!("finished before (--resume)");
                        p
                    }
                    None => {
                        let p = run_case(&job, &dir).inspect_err(|_| eprintln!("failed"))?;
                        eprintln!("{:.1} s", t.elapsed().as_secs_f64());
                        p
                    }
                };
                if a.save.label().is_some() {
                    let text = std::fs::read_to_string(&out)
                        .map_err(|e| format!("{name}: cannot read {}: {e}", out.display()))?;
                    texts.push((format!("flexio rt-study: {name}"), text));
                }
                let mut run =
                    flexio_analysis::read_with_logs(&out).map_err(|e| format!("{name}: {e}"))?;
                let c = case_of(&run, class, bg, a.write).map_err(|e| format!("{name}: {e}"))?;
                // The page shows every run's foreground: its curves.
                run.label = if a.repeat > 1 {
                    format!("{} run {round}", c.label())
                } else {
                    c.label()
                };
                run.jobs.retain(|j| j.name == FG);
                runs.push(run);
                if round == 1 {
                    cases.push(c);
                } else {
                    cases[i].absorb(c);
                }
                i += 1;
                done.push(name);
                // The study so far, after every run: an interrupted study leaves what it
                // measured (without the tests, which need every case).
                if let Some(p) = &a.json {
                    let mut partial = study::to_json(settings.clone(), &cases, &[], a.alpha);
                    partial["complete"] = serde_json::json!(false);
                    partial["finished_runs"] = serde_json::json!(done);
                    let s = serde_json::to_string_pretty(&partial).unwrap_or_default() + "\n";
                    flexio_run::notes::write_atomic(p, s.as_bytes())
                        .map_err(|e| format!("cannot write {}: {e}", p.display()))?;
                }
            }
        }
    }
    let tests = study::tests(&cases, a.alpha);
    let dir = if a.write { "writes" } else { "reads" };
    let spacing = if a.think_us > 0 {
        format!("sparse (think {} us)", a.think_us)
    } else {
        "dense".to_string()
    };
    let header = format!(
        "flexio rt-study: {}{}: {} runs of {} {pattern} {} B {dir} per case, {spacing}, direct={}, background {} x {} B {} ({bg_engine}, iodepth {}){}",
        a.target.display(),
        sched.as_deref().map(|s| format!(" (scheduler {s})")).unwrap_or_default(),
        a.repeat,
        a.requests,
        a.bs,
        a.direct as u8,
        a.bg.iter().map(|b| b.to_string()).collect::<Vec<_>>().join("/"),
        a.bg_bs,
        a.bg_rw,
        a.bg_depth,
        if a.cpuio > 0 { format!(", {} cpuio jobs", a.cpuio) } else { String::new() }
    );
    let text = study::text(&header, &cases, &tests, a.alpha);
    let mut json = study::to_json(settings, &cases, &tests, a.alpha);
    json["complete"] = serde_json::json!(true);
    Ok((text, json, runs, texts))
}

pub fn run(args: &[String]) -> i32 {
    let a = match super::args::report_error(parse_args(args), 2) {
        Ok(a) => a,
        Err(code) => return code,
    };
    let (text, json, runs, texts) = match study(&a) {
        Ok(x) => x,
        Err(e) => {
            eprintln!("flexio rt-study: {e}");
            return 1;
        }
    };
    cmd_out!("{text}");
    if let Some(p) = &a.json {
        let s = serde_json::to_string_pretty(&json).unwrap_or_default() + "\n";
        if let Err(e) = flexio_run::notes::write_atomic(p, s.as_bytes()) {
            eprintln!("flexio rt-study: cannot write {}: {e}", p.display());
            return 1;
        }
    }
    if let Some(p) = &a.html {
        let section = flexio_analysis::studies::html(&flexio_analysis::studies::Study {
            label: a.target.display().to_string(),
            doc: json.clone(),
        });
        let page = report::render(
            &runs,
            None,
            &ReportOptions {
                title: format!("flexio rt-study: {}", a.target.display()),
                sections: vec![section],
            },
        );
        if let Err(e) = write_page(p, &page) {
            eprintln!("flexio rt-study: {e}");
            return 1;
        }
    }
    if let Some(label) = &a.save.label() {
        match super::save_batch(a.save.store.as_deref(), "rt-study", label.as_deref(), texts) {
            Ok(m) => eprintln!("flexio rt-study: {m}"),
            Err(e) => {
                eprintln!("flexio rt-study: the results were not saved: {e}");
                return 1;
            }
        }
    }
    0
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
            "--requests",
            "100",
            "--bg=0,2",
            "--classes",
            "be",
            "f",
        ]))
        .unwrap();
        assert_eq!(a.requests, 100);
        assert_eq!(a.bg, vec![0, 2]);
        assert_eq!(a.classes, vec!["be"]);
        assert_eq!(a.target, PathBuf::from("f"));
        // The defaults the help promises.
        let d = parse_args(&s(&["f"])).unwrap();
        assert_eq!(
            (
                d.requests,
                d.bs,
                d.random,
                d.write,
                d.think_us,
                d.prio,
                d.engine.as_str()
            ),
            (4096, 4096, true, false, 0, 4, "psync")
        );
        assert_eq!(
            (d.classes, d.bg),
            (vec!["rt".to_string(), "be".into()], vec![0, 1, 4])
        );
        assert_eq!(
            (
                d.bg_bs,
                d.bg_rw.as_str(),
                d.bg_engine,
                d.bg_depth,
                d.cpuio,
                d.warmup_ms
            ),
            (1 << 20, "read", None, 16, 0, 1000)
        );
        assert_eq!(
            (
                d.size,
                d.direct,
                d.max_case_s,
                d.repeat,
                d.warmup_run,
                d.alpha
            ),
            (None, true, 600, 3, true, 0.05)
        );
        let a = parse_args(&s(&[
            "--pattern=seq",
            "--rw",
            "write",
            "--direct=0",
            "--no-warmup-run",
            "f",
        ]))
        .unwrap();
        assert_eq!(
            (a.random, a.write, a.direct, a.warmup_run),
            (false, true, false, false)
        );
        for bad in [
            &["--bg", "x", "f"][..],
            &["--classes", "rt,fast", "f"],
            &["--prio", "8", "f"],
            &["--requests", "0", "f"],
            &["--bogus", "f"],
            &["f", "g"],
            &[],
            &["--engine", "psync\nrw=write", "f"],
            &["--bs"],
            &["--repeat=0", "f"],
            &["--direct=2", "f"],
            &["--resume", "f"],
            &["--store=x.db", "f"],
            &["--bg-rw=trim", "f"],
        ] {
            assert!(parse_args(&s(bad)).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn the_job_of_a_loaded_case() {
        let a = parse_args(&s(&["--think", "500", "--cpuio", "1", "/dev/x:y"])).unwrap();
        let j = case_job(&a, "rt", 4, "libaio", None, Path::new("/r/rt-bg4"));
        assert!(j.contains("write_lat_log=/r/rt-bg4/foreground\n"), "{j}");
        assert!(j.contains("filename=/dev/x\\:y\n"), "{j}");
        assert!(
            j.contains("prioclass=1\nprio=4\nnumber_ios=4096\nthinktime=500us\n"),
            "{j}"
        );
        assert!(
            j.contains("numjobs=4\nsize=25.0000%\noffset_increment=25.0000%\n"),
            "{j}"
        );
        assert!(j.contains("[cpu]\nioengine=cpuio"), "{j}");
        let j0 = case_job(&a, "be", 0, "libaio", Some(1 << 20), Path::new("/r"));
        assert!(
            !j0.contains("[background]") && !j0.contains("startdelay"),
            "{j0}"
        );
        assert!(
            j0.contains("size=1048576\n") && j0.contains("prioclass=2\n"),
            "{j0}"
        );
    }
}
