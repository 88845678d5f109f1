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

use super::compare::temp_dir_named;
use super::report::{take_value, write_page};
use flexio_analysis::logs::LogKind;
use flexio_analysis::model::Ddir;
use flexio_analysis::report::{self, ReportOptions};
use flexio_analysis::study::{self, Case};
use flexio_analysis::RunResult;
use flexio_job::value::parse_size;
use flexio_job::value::KbBase;
use flexio_run::VERSION;
use std::path::{Path, PathBuf};

const USAGE: &str = "usage: flexio rt-study [options] TARGET

The real-time interference study: a foreground job issues --requests requests in each
I/O priority class of --classes while each number of background jobs in --bg loads the
same TARGET (a file, created and filled when missing or short, or a block device, only
read unless --rw=write). Prints per case the foreground's response times (mean, stdev,
RMS, percentiles) and tests: does the response time change with background load, and do
the classes differ under load (Mann-Whitney U, Holm-adjusted)?

Foreground:
  --requests N        requests per case (default 4096)
  --bs SIZE           request size (default 4k)
  --pattern random|sequential   (default random)
  --rw read|write     direction (default read)
  --think USEC        sparse requests: think time between them (default 0: dense)
  --classes LIST      I/O priority classes: rt, be, idle (default rt,be)
  --prio N            priority level within the class, 0-7 (default 4)
  --engine NAME       foreground ioengine (default psync)
Background:
  --bg LIST           background job counts (default 0,1,4)
  --bg-bs SIZE        background request size (default 1m)
  --bg-rw read|write|randread|randwrite   (default read: sequential streams)
  --bg-engine NAME    (default libaio when built in, else psync)
  --bg-depth N        background iodepth (default 16)
  --cpuio N           also N CPU-burning jobs (ioengine=cpuio) in every loaded case
  --warmup MS         background head start before the foreground (default 1000)
Target and run:
  --size SIZE         region used (default: a block device's size; 1g for a new file)
  --direct 0|1        O_DIRECT (default 1; tmpfs needs 0)
  --max-case-seconds S  upper bound of one case (default 600)
  --repeat R          runs per case, interleaved round by round (default 3); the
                      tests then also compare the runs' medians (drift between runs)
  --no-warmup-run     skip the unrecorded run of the first case made before the study
  --alpha A           significance level (default 0.05)
Output:
  --json FILE         the study as JSON
  --html FILE         an HTML page: table, tests and the response-time curves
  --keep DIR          keep every case's job file, json+ result and logs in DIR
  --resume            with --keep DIR: reuse the runs an interrupted study finished there
                      (same settings), run the rest
  --save[=LABEL]      store every case's result in the results store (one batch)
  --store PATH        the results store (SQLite file or postgres://...)

Exit status: 0 done, 1 a case failed, 2 bad arguments.
";

#[derive(Debug, Clone, PartialEq)]
pub struct Args {
    pub target: PathBuf,
    pub requests: u64,
    pub bs: u64,
    pub random: bool,
    pub write: bool,
    pub think_us: u64,
    pub classes: Vec<String>,
    pub prio: u32,
    pub engine: String,
    pub bg: Vec<u32>,
    pub bg_bs: u64,
    pub bg_rw: String,
    pub bg_engine: Option<String>,
    pub bg_depth: u32,
    pub cpuio: u32,
    pub warmup_ms: u64,
    pub size: Option<u64>,
    pub direct: bool,
    pub max_case_s: u64,
    pub warmup_run: bool,
    pub repeat: u32,
    pub alpha: f64,
    pub json: Option<PathBuf>,
    pub html: Option<PathBuf>,
    pub keep: Option<PathBuf>,
    /// `--resume`: runs already finished in the `--keep` folder are read, not run again.
    pub resume: bool,
    /// `--save[=LABEL]`: every case's result into the results store, one batch.
    pub save: Option<Option<String>>,
    pub store: Option<String>,
}

impl Default for Args {
    fn default() -> Self {
        Args {
            target: PathBuf::new(),
            requests: 4096,
            bs: 4096,
            random: true,
            write: false,
            think_us: 0,
            classes: vec!["rt".into(), "be".into()],
            prio: 4,
            engine: "psync".into(),
            bg: vec![0, 1, 4],
            bg_bs: 1 << 20,
            bg_rw: "read".into(),
            bg_engine: None,
            bg_depth: 16,
            cpuio: 0,
            warmup_ms: 1000,
            size: None,
            direct: true,
            max_case_s: 600,
            warmup_run: true,
            repeat: 3,
            alpha: 0.05,
            json: None,
            html: None,
            keep: None,
            resume: false,
            save: None,
            store: None,
        }
    }
}

fn num<T: std::str::FromStr>(name: &str, v: &str) -> Result<T, String> {
    v.parse()
        .map_err(|_| format!("{name}: '{v}' is not a valid number"))
}

fn size(name: &str, v: &str) -> Result<u64, String> {
    match parse_size(v, KbBase::K1024) {
        Ok(0) => Err(format!("{name}: must be more than 0")),
        Ok(n) => Ok(n),
        Err(e) => Err(format!("{name}: {e}")),
    }
}

/// A job-file-safe engine name (letters, digits, `_`, `-`).
fn engine_name(name: &str, v: &str) -> Result<String, String> {
    if v.is_empty()
        || !v
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        return Err(format!("{name}: '{v}' is not an engine name"));
    }
    Ok(v.to_string())
}

pub fn parse_args(args: &[String]) -> Result<Args, String> {
    let mut a = Args::default();
    let mut target = None;
    let mut i = 0;
    while i < args.len() {
        macro_rules! val {
            ($($n:literal),+) => {
                take_value(args, &mut i, &[$($n),+])
            };
        }
        if let Some(v) = val!("--requests") {
            a.requests = num("--requests", &v?)?;
            if a.requests == 0 {
                return Err("--requests: must be more than 0".into());
            }
        } else if let Some(v) = val!("--bs") {
            a.bs = size("--bs", &v?)?;
        } else if let Some(v) = val!("--pattern") {
            a.random = match v?.as_str() {
                "random" | "rand" => true,
                "sequential" | "seq" => false,
                o => return Err(format!("--pattern: '{o}' is not random or sequential")),
            };
        } else if let Some(v) = val!("--rw") {
            a.write = match v?.as_str() {
                "read" => false,
                "write" => true,
                o => return Err(format!("--rw: '{o}' is not read or write")),
            };
        } else if let Some(v) = val!("--think") {
            a.think_us = num("--think", &v?)?;
        } else if let Some(v) = val!("--classes") {
            let v = v?;
            a.classes = Vec::new();
            for c in v.split(',') {
                if !matches!(c, "rt" | "be" | "idle") {
                    return Err(format!("--classes: '{c}' is not rt, be or idle"));
                }
                if !a.classes.iter().any(|x| x == c) {
                    a.classes.push(c.to_string());
                }
            }
        } else if let Some(v) = val!("--prio") {
            a.prio = num("--prio", &v?)?;
            if a.prio > 7 {
                return Err("--prio: the level is 0 (highest) to 7".into());
            }
        } else if let Some(v) = val!("--engine") {
            a.engine = engine_name("--engine", &v?)?;
        } else if let Some(v) = val!("--bg") {
            let v = v?;
            a.bg = Vec::new();
            for n in v.split(',') {
                let n: u32 = num("--bg", n)?;
                if n > 256 {
                    return Err(format!("--bg: {n} background jobs is more than 256"));
                }
                if !a.bg.contains(&n) {
                    a.bg.push(n);
                }
            }
        } else if let Some(v) = val!("--bg-bs") {
            a.bg_bs = size("--bg-bs", &v?)?;
        } else if let Some(v) = val!("--bg-rw") {
            let v = v?;
            if !matches!(v.as_str(), "read" | "write" | "randread" | "randwrite") {
                return Err(format!(
                    "--bg-rw: '{v}' is not read, write, randread or randwrite"
                ));
            }
            a.bg_rw = v;
        } else if let Some(v) = val!("--bg-engine") {
            a.bg_engine = Some(engine_name("--bg-engine", &v?)?);
        } else if let Some(v) = val!("--bg-depth") {
            a.bg_depth = num("--bg-depth", &v?)?;
            if a.bg_depth == 0 {
                return Err("--bg-depth: must be at least 1".into());
            }
        } else if let Some(v) = val!("--cpuio") {
            a.cpuio = num("--cpuio", &v?)?;
        } else if let Some(v) = val!("--warmup") {
            a.warmup_ms = num("--warmup", &v?)?;
        } else if let Some(v) = val!("--size") {
            a.size = Some(size("--size", &v?)?);
        } else if let Some(v) = val!("--direct") {
            a.direct = match v?.as_str() {
                "1" => true,
                "0" => false,
                o => return Err(format!("--direct: '{o}' is not 0 or 1")),
            };
        } else if let Some(v) = val!("--max-case-seconds") {
            a.max_case_s = num("--max-case-seconds", &v?)?;
            if a.max_case_s == 0 {
                return Err("--max-case-seconds: must be more than 0".into());
            }
        } else if let Some(v) = val!("--repeat") {
            a.repeat = num("--repeat", &v?)?;
            if a.repeat == 0 || a.repeat > 100 {
                return Err("--repeat: 1 to 100 runs per case".into());
            }
        } else if args[i] == "--resume" {
            a.resume = true;
        } else if args[i] == "--no-warmup-run" {
            a.warmup_run = false;
        } else if let Some(v) = val!("--alpha") {
            a.alpha = num("--alpha", &v?)?;
            if !(a.alpha > 0.0 && a.alpha < 1.0) {
                return Err("--alpha: must be between 0 and 1".into());
            }
        } else if let Some(v) = val!("--json") {
            a.json = Some(PathBuf::from(v?));
        } else if let Some(v) = val!("--html") {
            a.html = Some(PathBuf::from(v?));
        } else if let Some(v) = val!("--keep") {
            a.keep = Some(PathBuf::from(v?));
        } else if let Some(v) = val!("--store") {
            a.store = Some(v?);
        } else if let Some(save) = super::save_flag(&args[i]) {
            a.save = Some(save);
        } else if args[i].starts_with('-') && args[i] != "-" {
            return Err(format!("unknown option '{}'", args[i]));
        } else if target.is_some() {
            return Err(format!("one TARGET only; '{}' is a second", args[i]));
        } else {
            target = Some(PathBuf::from(&args[i]));
        }
        i += 1;
    }
    let t = target.ok_or("no TARGET: give a file or a block device")?;
    let s = t.to_string_lossy();
    if s.contains('\n') || s.is_empty() {
        return Err("TARGET: not a usable path".into());
    }
    a.target = t;
    if a.bg.is_empty() || a.classes.is_empty() {
        return Err("--bg and --classes need at least one value".into());
    }
    super::store_needs_save(&a.store, &a.save)?;
    if a.resume && a.keep.is_none() {
        return Err(
            "--resume needs --keep DIR: the folder the interrupted study kept its runs in".into(),
        );
    }
    Ok(a)
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
                if a.save.is_some() {
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
    let a = match super::args_of("rt-study", args, USAGE, parse_args) {
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
    if let Some(label) = &a.save {
        match super::save_batch(a.store.as_deref(), "rt-study", label.as_deref(), texts) {
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
