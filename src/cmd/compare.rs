//! `flexio compare`: is B faster than A, and is the difference real?
//!
//! * `flexio compare A.json B.json`: one result each.
//! * `flexio compare A1.json A2.json ... -- B1.json B2.json ...`: repeated trials.
//! * `flexio compare --trials N jobA.fio jobB.fio`: runs both configurations N times,
//!   interleaved A B A B (this flexio, `--output-format=json+`, results in a temporary
//!   folder unless `--keep DIR`), then compares them.

use super::args::{alpha, number, positive, Save};
use super::out::stdout;
use super::report::{label_distinctly, read_results, write_page};
use flexio_analysis::compare::{compare, Options};
use flexio_analysis::report::{self, ReportOptions};
use flexio_analysis::{compare_out, RunResult};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Is B faster than A, and is the difference real?
///
/// Compares B with A (flexio's or fio's JSON / json+ results) per job and direction: IOPS,
/// bandwidth, mean, p50, p99 and p99.9 latency, each with the difference, a 95% confidence
/// interval, a p-value (Holm-adjusted), an effect size and a verdict. With --trials it runs
/// jobA.fio and jobB.fio N times each, interleaved A B A B, and compares those runs.
#[derive(clap::Parser, Debug, Default, PartialEq)]
#[command(
    name = "compare",
    override_usage = "flexio compare [OPTIONS] A.json B.json
       flexio compare [OPTIONS] A1.json A2.json ... -- B1.json B2.json ...
       flexio compare [OPTIONS] --trials N jobA.fio jobB.fio",
    after_help = "Exit status: 0 done, 1 a regression beyond --fail-if-worse, 2 bad arguments or \
                  input, or the results were not saved."
)]
pub struct Args {
    /// A's results then B's (split by --, else one each), or with --trials the two job files
    #[arg(value_name = "RESULT", required = true, value_hint = clap::ValueHint::FilePath)]
    results: Vec<PathBuf>,
    /// The first `--` (its place among the arguments splits the results).
    #[arg(long = "b-side", hide = true)]
    b_side: bool,
    #[arg(skip)]
    pub a: Vec<PathBuf>,
    #[arg(skip)]
    pub b: Vec<PathBuf>,
    /// A text table (normal) or JSON
    #[arg(long = "output-format", value_name = "FORMAT", default_value = "normal",
          value_parser = ["normal", "json", "json+"])]
    output_format: String,
    #[arg(skip)]
    pub json: bool,
    /// Also write an HTML report (the comparison and the overlaid charts)
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Exit 1 when B is significantly worse than A by PCT% or more
    #[arg(long = "fail-if-worse", value_name = "PCT", value_parser = number::<f64>)]
    pub fail_if_worse: Option<f64>,
    /// Run jobA.fio and jobB.fio N times each, interleaved A B A B
    #[arg(long, value_name = "N", value_parser = positive::<usize>)]
    pub trials: Option<usize>,
    /// With --trials: keep the results in DIR
    #[arg(long, value_name = "DIR", value_hint = clap::ValueHint::DirPath)]
    pub keep: Option<PathBuf>,
    /// With --trials and --keep DIR: reuse the trials an interrupted comparison finished
    /// there, run the rest
    #[arg(long)]
    pub resume: bool,
    /// Significance level [default: 0.05]
    #[arg(long, value_name = "A", value_parser = alpha)]
    pub alpha: Option<f64>,
    /// Smallest difference that counts [default: 1% across trials, 5% for one result per
    /// side]
    #[arg(long = "min-effect", value_name = "PCT", value_parser = number::<f64>)]
    pub min_effect: Option<f64>,
    /// Bootstrap resamples, 100 to 1000000 [default: 2000]
    #[arg(long, value_name = "N", value_parser = resamples)]
    pub resamples: Option<usize>,
    /// Bootstrap seed [default: 1]
    #[arg(long, value_name = "N", value_parser = number::<u64>)]
    pub seed: Option<u64>,
    /// Ignore log files beside the results
    #[arg(long = "no-logs")]
    pub no_logs: bool,
    // --save stores both sides' results (labels LABEL/A and LABEL/B).
    #[command(flatten)]
    pub save: Save,
}

fn resamples(v: &str) -> Result<usize, String> {
    number::<usize>(v).map(|n| n.clamp(100, 1_000_000))
}

/// `flexio compare`'s arguments. The first `--` splits A's results from B's, wherever the
/// options are (clap would take every word after it as a result): it becomes `--b-side`.
pub fn parse_args(args: &[String]) -> Result<Args, clap::Error> {
    let mut words = args.to_vec();
    if let Some(w) = words.iter_mut().find(|a| *a == "--") {
        *w = "--b-side".into();
    }
    super::args::try_parse(&words, |mut a: Args, m| {
        if words.iter().any(|w| w == "--") {
            return Err("'--' given twice".into());
        }
        a.json = a.output_format != "normal";
        let mut pos: Vec<(usize, PathBuf)> = super::args::indexed(m, "results");
        let split = m.index_of("b_side").filter(|_| a.b_side);
        if a.trials.is_some() && (pos.len() != 2 || split.is_some()) {
            return Err("--trials takes two job files: jobA.fio jobB.fio".into());
        }
        let k = match split {
            Some(k) => pos.iter().take_while(|(i, _)| *i < k).count(),
            None if pos.len() == 2 => 1,
            None => {
                return Err(format!(
                    "give two results (A B), or A results -- B results; got {}",
                    pos.len()
                ))
            }
        };
        a.b = pos.split_off(k).into_iter().map(|p| p.1).collect();
        a.a = pos.into_iter().map(|p| p.1).collect();
        if a.a.is_empty() || a.b.is_empty() {
            return Err("a side has no result".into());
        }
        a.save.check()?;
        if a.resume && (a.trials.is_none() || a.keep.is_none()) {
            return Err("--resume needs --trials N and --keep DIR (the folder the interrupted trials were kept in)".into());
        }
        Ok(a)
    })
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
    let a = match super::args::report_error(parse_args(args), 2) {
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
    if let Some(label) = &a.save.label() {
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
            match super::save_batch(a.save.store.as_deref(), "compare", l.as_deref(), runs) {
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

    fn err(v: &[&str]) -> String {
        parse_args(&s(v)).unwrap_err().to_string()
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
        assert_eq!(a.b[2], PathBuf::from("b3"));
        // Options before and between the results (`--opt=value` counts twice for clap).
        let a = parse_args(&s(&[
            "--fail-if-worse=10",
            "--html",
            "x.html",
            "a1",
            "--seed=4",
            "a2",
            "a3",
            "--",
            "b1",
            "--alpha",
            "0.1",
            "b2",
        ]))
        .unwrap();
        assert_eq!(a.a, [PathBuf::from("a1"), "a2".into(), "a3".into()]);
        assert_eq!(a.b, [PathBuf::from("b1"), "b2".into()]);
        assert_eq!((a.seed, a.alpha), (Some(4), Some(0.1)));
        let a = parse_args(&s(&["--seed=3", "--", "b1", "--no-logs", "b2"])).unwrap_err();
        assert!(a.to_string().contains("a side has no result"), "{a}");
        let a = parse_args(&s(&["--trials", "3", "x.fio", "y.fio"])).unwrap();
        assert_eq!(a.trials, Some(3));
        assert!(err(&["a", "b", "c"]).contains("got 3"));
        assert!(err(&["a", "--"]).contains("a side has no result"));
        assert!(err(&["a", "--", "b", "--", "c"]).contains("'--' given twice"));
        assert!(err(&["--trials=0", "x", "y"]).contains("'0' is not a positive number"));
        assert!(err(&["--trials=2", "x", "--", "y"]).contains("two job files"));
        assert!(err(&["a", "b", "--alpha=2"]).contains("between 0 and 1"));
        assert!(err(&["a", "b", "--output-format=terse"])
            .contains("[possible values: normal, json, json+]"));
        assert!(err(&["a", "b", "--frobnicate"]).contains("unexpected argument '--frobnicate'"));
        assert!(err(&["a", "b", "--store=x.db"]).contains("give --save too"));
        assert!(err(&["a", "b", "--resume"]).contains("--resume needs --trials N"));
        assert_eq!(
            parse_args(&s(&["a", "b", "--resamples=5"]))
                .unwrap()
                .resamples,
            Some(100)
        );
    }
}
