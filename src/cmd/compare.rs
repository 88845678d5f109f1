//! `flexio compare`: is B faster than A, and is the difference real?
//!
//! * `flexio compare A.json B.json`: one result each.
//! * `flexio compare A1.json A2.json ... -- B1.json B2.json ...`: repeated trials.
//! * `flexio compare --trials N jobA.fio jobB.fio`: runs both configurations N times,
//!   interleaved A B A B (this flexio, `--output-format=json+`, results in a temporary
//!   folder unless `--keep DIR`), then compares them.

use super::out::stdout;
use super::report::{label_distinctly, read_results, take_value, write_page};
use flexio_analysis::compare::{compare, Options};
use flexio_analysis::report::{self, ReportOptions};
use flexio_analysis::{compare_out, RunResult};
use std::path::{Path, PathBuf};
use std::time::Instant;

const USAGE: &str = "usage: flexio compare [options] A.json B.json
       flexio compare [options] A1.json A2.json ... -- B1.json B2.json ...
       flexio compare [options] --trials N jobA.fio jobB.fio

Compares B with A (flexio's or fio's JSON / json+ results) per job and direction:
IOPS, bandwidth, mean, p50, p99 and p99.9 latency, each with the difference, a 95%
confidence interval, a p-value (Holm-adjusted), an effect size and a verdict.

  --output-format=normal|json   text table (default) or JSON
  --html FILE                   also write an HTML report (comparison and overlaid charts)
  --fail-if-worse PCT           exit 1 when B is significantly worse than A by PCT% or more
  --trials N                    run jobA.fio and jobB.fio N times each, interleaved A B A B
  --keep DIR                    with --trials: keep the results in DIR
  --resume                      with --trials and --keep DIR: reuse the trials an
                                interrupted comparison finished there, run the rest
  --alpha A                     significance level (default 0.05)
  --min-effect PCT              smallest difference that counts (default 1% across trials,
                                5% for one result per side)
  --resamples N                 bootstrap resamples (default 2000)
  --seed N                      bootstrap seed (default 1)
  --no-logs                     ignore log files beside the results
  --save[=LABEL]                store both sides' results in the results store (labels
                                LABEL/A and LABEL/B; flexio history, diff)
  --store PATH|postgres://...   the results store (default $XDG_DATA_HOME/flexio/results.db)

Exit status: 0 done, 1 a regression beyond --fail-if-worse, 2 bad arguments or input, or
the results were not saved.
";

/// Parsed `flexio compare` arguments.
#[derive(Debug, Default, PartialEq)]
pub struct Args {
    pub a: Vec<PathBuf>,
    pub b: Vec<PathBuf>,
    pub json: bool,
    pub html: Option<PathBuf>,
    pub fail_if_worse: Option<f64>,
    pub trials: Option<usize>,
    pub keep: Option<PathBuf>,
    /// `--resume`: trials already in the `--keep` folder are read, not run again.
    pub resume: bool,
    pub alpha: Option<f64>,
    pub min_effect: Option<f64>,
    pub resamples: Option<usize>,
    pub seed: Option<u64>,
    pub no_logs: bool,
    /// `--save[=LABEL]`: both sides' results into the results store (labels LABEL/A, LABEL/B).
    pub save: Option<Option<String>>,
    pub store: Option<String>,
}

/// A number as the subcommands take it (a trailing `%` allowed).
pub(crate) fn number<T: std::str::FromStr>(v: String, what: &str) -> Result<T, String> {
    v.trim()
        .trim_end_matches('%')
        .parse()
        .map_err(|_| format!("{what}: '{v}' is not a valid number"))
}

pub fn parse_args(args: &[String]) -> Result<Args, String> {
    let mut a = Args::default();
    let mut pos: Vec<PathBuf> = Vec::new();
    let mut split: Option<usize> = None;
    let mut i = 0;
    while i < args.len() {
        let arg = &args[i];
        if let Some(v) = take_value(args, &mut i, &["--output-format"]) {
            a.json = match v?.as_str() {
                "json" | "json+" => true,
                "normal" => false,
                other => return Err(format!("--output-format: '{other}' is not normal or json")),
            };
        } else if let Some(v) = take_value(args, &mut i, &["--html"]) {
            a.html = Some(PathBuf::from(v?));
        } else if let Some(v) = take_value(args, &mut i, &["--fail-if-worse"]) {
            a.fail_if_worse = Some(number(v?, "--fail-if-worse")?);
        } else if let Some(v) = take_value(args, &mut i, &["--trials"]) {
            let n: usize = number(v?, "--trials")?;
            if n == 0 {
                return Err("--trials needs at least 1".into());
            }
            a.trials = Some(n);
        } else if let Some(v) = take_value(args, &mut i, &["--keep"]) {
            a.keep = Some(PathBuf::from(v?));
        } else if let Some(v) = take_value(args, &mut i, &["--alpha"]) {
            let x: f64 = number(v?, "--alpha")?;
            if !(x > 0.0 && x < 1.0) {
                return Err("--alpha must be between 0 and 1".into());
            }
            a.alpha = Some(x);
        } else if let Some(v) = take_value(args, &mut i, &["--min-effect"]) {
            a.min_effect = Some(number(v?, "--min-effect")?);
        } else if let Some(v) = take_value(args, &mut i, &["--resamples"]) {
            a.resamples = Some(number::<usize>(v?, "--resamples")?.clamp(100, 1_000_000));
        } else if let Some(v) = take_value(args, &mut i, &["--seed"]) {
            a.seed = Some(number(v?, "--seed")?);
        } else if arg == "--resume" {
            a.resume = true;
        } else if arg == "--no-logs" {
            a.no_logs = true;
        } else if let Some(v) = take_value(args, &mut i, &["--store"]) {
            a.store = Some(v?);
        } else if let Some(save) = super::save_flag(arg) {
            a.save = Some(save);
        } else if arg == "--" {
            if split.is_some() {
                return Err("'--' given twice".into());
            }
            split = Some(pos.len());
        } else if arg.starts_with('-') && arg.len() > 1 {
            return Err(format!("unknown option '{arg}'"));
        } else {
            pos.push(PathBuf::from(arg));
        }
        i += 1;
    }
    if a.trials.is_some() && (pos.len() != 2 || split.is_some()) {
        return Err("--trials takes two job files: jobA.fio jobB.fio".into());
    }
    match split {
        Some(k) => {
            a.b = pos.split_off(k);
            a.a = pos;
        }
        None if pos.len() == 2 => {
            a.b = pos.split_off(1);
            a.a = pos;
        }
        None => {
            return Err(format!(
                "give two results (A B), or A results -- B results; got {}",
                pos.len()
            ))
        }
    }
    if a.a.is_empty() || a.b.is_empty() {
        return Err("a side has no result".into());
    }
    super::store_needs_save(&a.store, &a.save)?;
    if a.resume && (a.trials.is_none() || a.keep.is_none()) {
        return Err("--resume needs --trials N and --keep DIR (the folder the interrupted trials were kept in)".into());
    }
    Ok(a)
}

/// This flexio, to run again: `/proc/self/exe` where there is one (the binary this process
/// runs, even if its file was replaced or removed since: a rebuild during a comparison does
/// not change or break its trials), else the path it was started from.
pub(crate) fn self_exe() -> Result<PathBuf, String> {
    let p = Path::new("/proc/self/exe");
    if p.exists() {
        return Ok(p.to_path_buf());
    }
    std::env::current_exe().map_err(|e| format!("cannot find flexio itself: {e}"))
}

/// Run one configuration once: this flexio, JSON+ into `out`. Returns the seconds taken.
fn run_trial(job: &Path, out: &Path) -> Result<f64, String> {
    use std::os::unix::process::CommandExt;
    let exe = self_exe()?;
    let t = Instant::now();
    let o = std::process::Command::new(exe)
        .arg0("flexio")
        .arg("--output-format=json+")
        .arg(format!("--output={}", out.display()))
        .arg(job)
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| format!("cannot run flexio: {e}"))?;
    if !o.status.success() || !out.exists() {
        return Err(format!(
            "the run of {} failed ({}):\n{}",
            job.display(),
            o.status,
            String::from_utf8_lossy(&o.stderr)
        ));
    }
    Ok(t.elapsed().as_secs_f64())
}

/// Run A and B `n` times each, interleaved, into `dir`; returns the result paths per side.
fn run_trials(
    n: usize,
    job_a: &Path,
    job_b: &Path,
    dir: &Path,
    resume: bool,
) -> Result<(Vec<PathBuf>, Vec<PathBuf>), String> {
    for j in [job_a, job_b] {
        if !j.is_file() {
            return Err(format!("{}: no such job file", j.display()));
        }
    }
    let (mut ra, mut rb) = (Vec::new(), Vec::new());
    for i in 1..=n {
        for (side, job, list) in [("A", job_a, &mut ra), ("B", job_b, &mut rb)] {
            let out = dir.join(format!("{}-{i}.json", side.to_lowercase()));
            eprint!(
                "flexio compare: trial {i}/{n} {side} ({}) ... ",
                job.display()
            );
            // flexio writes --output atomically: a result that is there is whole.
            if resume && out.is_file() {
                eprintln!("finished before (--resume)");
            } else {
                let secs = run_trial(job, &out).inspect_err(|_| eprintln!("failed"))?;
                eprintln!("{secs:.1} s");
            }
            list.push(out);
        }
    }
    Ok((ra, rb))
}

fn options(a: &Args) -> Options {
    let d = Options::default();
    Options {
        alpha: a.alpha.unwrap_or(d.alpha),
        min_effect_pct: a.min_effect,
        reps: a.resamples.unwrap_or(d.reps),
        seed: a.seed.unwrap_or(d.seed),
    }
}

fn label_sides(a: &mut [RunResult], b: &mut [RunResult]) {
    for (side, runs) in [("A", a), ("B", b)] {
        let n = runs.len();
        for (i, r) in runs.iter_mut().enumerate() {
            r.label = if n == 1 {
                format!("{side}: {}", r.label)
            } else {
                format!("{side}{}: {}", i + 1, r.label)
            };
        }
    }
}

pub fn run(args: &[String]) -> i32 {
    let a = match super::args_of("compare", args, USAGE, parse_args) {
        Ok(a) => a,
        Err(code) => return code,
    };
    // --trials: run first, then compare the results.
    let tmp;
    let (pa, pb) = if let Some(n) = a.trials {
        let dir = match &a.keep {
            Some(d) => {
                if let Err(e) = std::fs::create_dir_all(d) {
                    eprintln!("flexio compare: cannot create {}: {e}", d.display());
                    return 2;
                }
                d.clone()
            }
            None => match tempfile_dir() {
                Ok(d) => {
                    tmp = d;
                    tmp.0.clone()
                }
                Err(e) => {
                    eprintln!("flexio compare: {e}");
                    return 2;
                }
            },
        };
        match run_trials(n, &a.a[0], &a.b[0], &dir, a.resume) {
            Ok(x) => x,
            Err(e) => {
                eprintln!("flexio compare: {e}");
                return 2;
            }
        }
    } else {
        (a.a.clone(), a.b.clone())
    };
    let (mut ra, mut rb) = match (read_results(&pa, !a.no_logs), read_results(&pb, !a.no_logs)) {
        (Ok(x), Ok(y)) => (x, y),
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("flexio compare: {e}");
            return 2;
        }
    };
    let mut saved_ok = true;
    if let Some(label) = &a.save {
        for (side, paths) in [("A", &pa), ("B", &pb)] {
            let mut runs = Vec::new();
            for p in paths {
                match std::fs::read_to_string(p) {
                    Ok(t) => runs.push((format!("flexio compare {side}: {}", p.display()), t)),
                    Err(e) => {
                        eprintln!("flexio compare: cannot read {}: {e}", p.display());
                        saved_ok = false;
                    }
                }
            }
            let l = label.as_ref().map(|l| format!("{l}/{side}"));
            match super::save_batch(a.store.as_deref(), "compare", l.as_deref(), runs) {
                Ok(m) => eprintln!("flexio compare: {side}: {m}"),
                Err(e) => {
                    eprintln!("flexio compare: {side} was not saved: {e}");
                    saved_ok = false;
                }
            }
        }
    }
    let cmp = compare(&ra, &rb, &options(&a));
    if a.json {
        stdout(&format!("{}\n", compare_out::json_text(&cmp)));
    } else {
        stdout(&compare_out::text(&cmp));
    }
    if let Some(html) = &a.html {
        label_sides(&mut ra, &mut rb);
        let mut all: Vec<RunResult> = ra.into_iter().chain(rb).collect();
        label_distinctly(&mut all);
        let page = report::render(
            &all,
            Some(&cmp),
            &ReportOptions {
                title: "flexio compare".into(),
                ..ReportOptions::default()
            },
        );
        if let Err(e) = write_page(html, &page) {
            eprintln!("flexio compare: {e}");
            return 2;
        }
    }
    if let Some(pct) = a.fail_if_worse {
        let reg = cmp.regressions(pct);
        if !reg.is_empty() {
            for (job, d, m, diff) in &reg {
                eprintln!(
                    "flexio compare: regression: job '{job}' {} {}: {diff:+.1}% (worse than {pct}%)",
                    d.name(),
                    m.name()
                );
            }
            return 1;
        }
    }
    if saved_ok {
        0
    } else {
        2
    }
}

/// A temporary folder removed when dropped.
pub(crate) struct TempDir(pub(crate) PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn tempfile_dir() -> Result<TempDir, String> {
    temp_dir_named("flexio-compare")
}

/// A new folder `<prefix>-<pid>-<k>` under the system's temporary directory.
pub(crate) fn temp_dir_named(prefix: &str) -> Result<TempDir, String> {
    let base = std::env::temp_dir();
    for k in 0..100u32 {
        let p = base.join(format!("{prefix}-{}-{k}", std::process::id()));
        match std::fs::create_dir(&p) {
            Ok(()) => return Ok(TempDir(p)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(format!("cannot create a temporary folder: {e}")),
        }
    }
    Err("cannot create a temporary folder".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn arguments() {
        let a = parse_args(&s(&["a.json", "b.json", "--fail-if-worse", "5%"])).unwrap();
        assert_eq!(a.a, vec![PathBuf::from("a.json")]);
        assert_eq!(a.b, vec![PathBuf::from("b.json")]);
        assert_eq!(a.fail_if_worse, Some(5.0));
        let a = parse_args(&s(&[
            "a1",
            "a2",
            "--",
            "b1",
            "b2",
            "b3",
            "--output-format=json",
        ]))
        .unwrap();
        assert_eq!((a.a.len(), a.b.len(), a.json), (2, 3, true));
        let a = parse_args(&s(&["--trials", "3", "x.fio", "y.fio"])).unwrap();
        assert_eq!(a.trials, Some(3));
        assert!(parse_args(&s(&["a", "b", "c"])).is_err());
        assert!(parse_args(&s(&["a", "--"])).is_err());
        assert!(parse_args(&s(&["--trials=0", "x", "y"])).is_err());
        assert!(parse_args(&s(&["--trials=2", "x", "--", "y"])).is_err());
        assert!(parse_args(&s(&["a", "b", "--alpha=2"])).is_err());
        assert!(parse_args(&s(&["a", "b", "--output-format=terse"])).is_err());
        assert!(parse_args(&s(&["a", "b", "--frobnicate"])).is_err());
    }
}
